# The key pair that signs what the machine's firmware and kernel trust:
# the kernel for Secure Boot (image/build-iso.sh), and the kernel's
# modules (scripts/kernel.mk), whose certificate the kernel carries.
# By default one pair per builder, made once outside the repository;
# SIGN_KEY= SIGN_CERT= name another (for example a key in the machine's
# own db).
SIGN_DIR := $(or $(XDG_CONFIG_HOME),$(HOME)/.config)/rescue-iso
ifneq ($(filter undefined,$(origin SIGN_KEY)),$(filter undefined,$(origin SIGN_CERT)))
$(error name both SIGN_KEY= (PEM private key) and SIGN_CERT= (its PEM certificate), or neither)
endif
SIGN_KEY_DEFAULT := $(if $(filter undefined,$(origin SIGN_KEY)),create)
SIGN_KEY ?= $(SIGN_DIR)/signing-key.pem
SIGN_CERT ?= $(SIGN_DIR)/signing-cert.pem
override SIGN_KEY := $(abspath $(SIGN_KEY))
override SIGN_CERT := $(abspath $(SIGN_CERT))

# The signing key pair: made when it is the default one and missing; a
# pair named with SIGN_KEY= must exist.
$(SIGN_KEY) $(SIGN_CERT) &: | deps
	$(Q)'$(TOP)/image/signing-key.sh' '$(SIGN_KEY)' '$(SIGN_CERT)' $(SIGN_KEY_DEFAULT)
