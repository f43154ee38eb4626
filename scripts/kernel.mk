# The kernel: Debian's linux-source tarball, extracted under $(BUILD),
# patched with patches/, configured from configs/, built out of tree.
#
# Stamps: linux-extracted -> linux-patched -> kernel-configured ->
# kernel-compiled.  What the rest of the build uses are the kernel's
# products (KERNEL_PRODUCTS: bzImage, .config, kernel.release, System.map,
# and the signed modules installed by depmod, as one tar),
# copied out of kbuild's tree into KERNEL_PRODUCTS_DIR, in the same layout,
# and kept in the build cache under a key of everything they are made from
# (scripts/kernel-key): a fresh clone whose inputs match takes them from
# there and extracts and compiles nothing.
# The lists of patches and of fragments are files too, rewritten only when
# they change, so that deleting or renaming a patch re-extracts and
# re-patches the tree and deleting a fragment redoes the config: a
# dependency on the files alone would only see the ones still there.

LINUX_TARBALL ?= /usr/src/linux-source-6.1.tar.xz
HOST_FILES += $(LINUX_TARBALL)
LINUX_SRC ?= $(BUILD)/linux-src
KERNEL_OUT := $(BUILD)/kernel
KERNEL_PRODUCTS := arch/x86/boot/bzImage include/config/kernel.release .config System.map \
	rescue-modules.tar
KERNEL_PRODUCTS_DIR := $(BUILD)/kernel-products
KERNEL_IMAGE := $(KERNEL_PRODUCTS_DIR)/arch/x86/boot/bzImage
KERNEL_RELEASE_FILE := $(KERNEL_PRODUCTS_DIR)/include/config/kernel.release
KERNEL_CONFIG_FILE := $(KERNEL_PRODUCTS_DIR)/.config
# lib/modules/RELEASE as modules_install and depmod leave it (without its
# build and source links), for the ISO's root.
KERNEL_MODULES_TAR := $(KERNEL_PRODUCTS_DIR)/rescue-modules.tar
KERNEL_MODULES_ROOT := $(KERNEL_OUT)/modules-root
KERNEL_JOBS ?= $(shell nproc)
STAMPS := $(BUILD)/stamps

PATCH_DIR ?= $(TOP)/patches
CONFIG_DIR ?= $(TOP)/configs
PATCHES := $(sort $(wildcard $(PATCH_DIR)/*.patch))
CONFIG_FRAGMENTS := $(sort $(wildcard $(CONFIG_DIR)/*.config))
PATCH_LIST := $(STAMPS)/patches.list
CONFIG_LIST := $(STAMPS)/configs.list
LINUX_SOURCE_SH := $(TOP)/scripts/linux-source.sh
CHECK_CONFIG_SH := $(TOP)/scripts/check-config.sh

# Reproducible kernel: no build user, host, time or counter of this machine.
# Its timestamp is SOURCE_DATE_EPOCH when one is given, otherwise the time of
# the last commit that changed a kernel input, so that a commit elsewhere
# (rescue-init, image) neither rebuilds the kernel nor makes it differ from
# a clean build of the same commit.
KERNEL_INPUTS := patches configs scripts/kernel.mk scripts/linux-source.sh
# Worked out once, by the top-level make, and passed down: in a sub-make
# SOURCE_DATE_EPOCH always comes from the environment.
ifeq ($(origin KERNEL_EPOCH),undefined)
ifneq ($(filter environment command,$(SOURCE_DATE_EPOCH_ORIGIN)),)
KERNEL_EPOCH := $(SOURCE_DATE_EPOCH)
else
KERNEL_EPOCH := $(shell git -C '$(TOP)' log -1 --format=%ct -- $(KERNEL_INPUTS) 2>/dev/null)
KERNEL_EPOCH := $(or $(KERNEL_EPOCH),$(SOURCE_DATE_EPOCH))
endif
endif
export KERNEL_EPOCH
KERNEL_SRC_FROM_OUT := $(shell realpath -m --relative-to='$(KERNEL_OUT)' '$(LINUX_SRC)')
KBUILD_REPRO := \
	KBUILD_BUILD_TIMESTAMP="$(shell LC_ALL=C date -u -d @$(KERNEL_EPOCH))" \
	KBUILD_BUILD_USER=rescue KBUILD_BUILD_HOST=rescue-iso \
	KBUILD_BUILD_VERSION=1 KCPPFLAGS='-fmacro-prefix-map=$(KERNEL_SRC_FROM_OUT)/='
# The compiler cache (scripts/cache.mk): gcc through ccache's masquerade
# directory, so that kbuild's command lines are the same with the cache or
# without it (turning it on or off rebuilds nothing).  Kbuild passes
# absolute paths under $(BUILD); with it as ccache's base_dir, ccache makes
# them relative to the kernel's output tree, for its hash and for the
# compiler, so a clone in another directory hits the entries an earlier
# clone stored.  The compiler then sees ../linux-src/kernel/fork.c where
# kbuild wrote /abs/build/linux-src/kernel/fork.c, and kbuild's own
# -fmacro-prefix-map no longer takes the source tree out of __FILE__: the
# same map for the relative path (in KBUILD_REPRO, so also without the
# cache, where it matches nothing) keeps the kernel's strings, and so the
# ISO, the same warm, cold or without the cache.  arch/x86/boot and the
# host tools (objtool, fixdep) compile with -g, for which ccache hashes the
# working directory: hash_dir off (CCACHE_NOHASHDIR) lets a clone elsewhere
# hit those too; their debug info then names the first clone's directory,
# and none of it reaches the bzImage (objcopy -O binary).  Each build's
# hits and misses go to $(KERNEL_CCACHE_LOG).
KERNEL_CCACHE_LOG := $(KERNEL_OUT)/ccache-stats.log
KERNEL_CCACHE = $(if $(RESCUE_CACHE),PATH='$(CCACHE_PATH)':"$$PATH" \
	CCACHE_DIR='$(RESCUE_CACHE)/ccache' CCACHE_BASEDIR='$(BUILD)' CCACHE_NOHASHDIR=1 \
	CCACHE_MAXSIZE='$(RESCUE_CCACHE_SIZE)' CCACHE_STATSLOG='$(KERNEL_CCACHE_LOG)')
KMAKE = $(KBUILD_REPRO) $(KERNEL_CCACHE) $(MAKE) --no-print-directory -C '$(LINUX_SRC)' \
	O='$(KERNEL_OUT)' $(if $(filter 1,$(V)),V=1)

.PHONY: kernel
kernel: $(KERNEL_IMAGE)

$(STAMPS)/linux-extracted: $(LINUX_TARBALL) $(LINUX_SOURCE_SH) | deps
	$(call msg,EXTRACT,$(LINUX_TARBALL))
	$(Q)'$(LINUX_SOURCE_SH)' extract '$(LINUX_TARBALL)' '$(LINUX_SRC)'
	$(Q)mkdir -p $(@D) && touch $@

# Names only: the same series in another checkout is the same series.
$(PATCH_LIST): FORCE
	$(call write-if-changed,$@,$(notdir $(PATCHES)))
$(CONFIG_LIST): FORCE
	$(call write-if-changed,$@,$(notdir $(CONFIG_FRAGMENTS)))

$(STAMPS)/linux-patched: $(STAMPS)/linux-extracted $(PATCHES) $(PATCH_LIST)
	$(Q)'$(LINUX_SOURCE_SH)' patch '$(LINUX_TARBALL)' '$(LINUX_SRC)' $(PATCHES)
	$(Q)touch $@

# alldefconfig: every symbol the fragments do not name takes its Kconfig
# default -- which is how DEVTMPFS and DEVTMPFS_MOUNT get switched on.
$(STAMPS)/kernel-configured: $(STAMPS)/linux-patched $(CONFIG_FRAGMENTS) $(CONFIG_LIST) \
		$(CHECK_CONFIG_SH)
	$(call msg,CONFIG,$(KERNEL_OUT)/.config from configs/*.config)
	$(Q)mkdir -p '$(KERNEL_OUT)'
	$(Q)cat $(CONFIG_FRAGMENTS) >'$(KERNEL_OUT)/fragments.config'
	$(Q)$(KMAKE) -s alldefconfig KCONFIG_ALLCONFIG='$(KERNEL_OUT)/fragments.config'
	$(Q)'$(CHECK_CONFIG_SH)' '$(LINUX_SRC)' '$(KERNEL_OUT)/.config' $(CONFIG_FRAGMENTS)
	$(Q)touch $@

# The key pair that signs the modules, in the one PEM file kbuild takes
# (CONFIG_MODULE_SIG_KEY, a name relative to its build directory): kbuild
# puts the certificate into the kernel and signs each module at
# modules_install.  Private to this user, outside the repository, and
# never among the products.
KERNEL_SIGNING_PEM := $(KERNEL_OUT)/$(shell sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$$/\1/p' \
	$(CONFIG_FRAGMENTS) | tail -n1)
$(KERNEL_SIGNING_PEM): $(SIGN_KEY) $(SIGN_CERT)
	$(Q)mkdir -p '$(@D)' && (umask 077 && cat '$(SIGN_KEY)' '$(SIGN_CERT)' >'$@.tmp') && \
		mv -f '$@.tmp' '$@'

$(BUILD)/kernel.settings: FORCE
	$(call write-if-changed,$@,$(KBUILD_REPRO))

# What the products are made from (scripts/kernel-key), rewritten only when
# it changes (suites of make check that run side by side each work it out:
# each through a file of its own); its sha256 is the cache entry's key.  The tarball's own
# sha256 is worked out again only when the tarball changes.
KERNEL_KEY := $(STAMPS)/kernel.key
KERNEL_KEY_FILES := $(PATCHES) $(CONFIG_FRAGMENTS) $(TOP)/scripts/kernel.mk \
	$(LINUX_SOURCE_SH) $(CHECK_CONFIG_SH) $(TOP)/scripts/kernel-key
$(STAMPS)/linux-tarball.sha256: $(LINUX_TARBALL)
	$(Q)mkdir -p $(@D) && sha256sum <'$<' | cut -d' ' -f1 >'$@'
$(KERNEL_KEY): $(STAMPS)/linux-tarball.sha256 $(BUILD)/kernel.settings $(SIGN_CERT) FORCE
	$(Q)new='$@'.$$$$; '$(TOP)/scripts/kernel-key' $(STAMPS)/linux-tarball.sha256 \
		'$(BUILD)/kernel.settings' '$(SIGN_CERT)' $(KERNEL_KEY_FILES) >"$$new" && \
	if cmp -s "$$new" '$@'; then rm "$$new"; else mv "$$new" '$@'; fi

# The products from the cache (RESCUE_CACHE/kernel/kernel-KEY,
# scripts/cache_entry.py, checked against its SHA256SUMS), else from
# kbuild (a sub-make: only then are the tree extracted, patched and
# configured), then stored there.  Entries unused for RESCUE_CACHE_MAX_AGE
# days, or past KERNEL_CACHE_GB in all, are pruned.
KERNEL_CACHE_GB ?= 1
CACHE_ENTRY := $(TOP)/scripts/cache_entry.py
kernel-cache = python3 '$(CACHE_ENTRY)' $(1) '$(RESCUE_CACHE)/kernel' kernel \
	"$$(sha256sum <'$(KERNEL_KEY)' | cut -c1-16)"
$(KERNEL_IMAGE): $(KERNEL_KEY)
	$(Q)rm -rf '$(KERNEL_PRODUCTS_DIR)'
ifneq ($(RESCUE_CACHE),)
	$(Q)if why=$$($(call kernel-cache,restore) '$(KERNEL_PRODUCTS_DIR)' $(KERNEL_PRODUCTS)); then \
		printf '  %-9s %s\n' KERNEL "from the cache: $$why"; \
	else \
		printf '  %-9s %s\n' KERNEL "not in the cache ($$why): building it"; \
		$(MAKE) --no-print-directory -C '$(TOP)' kernel-compiled && \
		$(call kernel-products,$(KERNEL_OUT),$(KERNEL_PRODUCTS_DIR)) && \
		$(call kernel-cache,store) $(KERNEL_CACHE_GB) '$(KERNEL_PRODUCTS_DIR)' \
			$(KERNEL_PRODUCTS); \
	fi
else
	$(Q)$(MAKE) --no-print-directory -C '$(TOP)' kernel-compiled
	$(Q)$(call kernel-products,$(KERNEL_OUT),$(KERNEL_PRODUCTS_DIR))
endif
	$(Q)touch '$@'
	@printf '  %-9s %s: %s bytes, release %s\n' KERNEL '$@' \
		"$$(stat -c %s '$@')" "$$(cat '$(KERNEL_RELEASE_FILE)')"
# $(call kernel-products,FROM,TO): copy the products from kbuild's tree.
kernel-products = (cd '$(1)' && tar -cf - $(KERNEL_PRODUCTS)) | \
	(mkdir -p '$(2)' && tar -xf - -C '$(2)')
$(KERNEL_CONFIG_FILE) $(KERNEL_MODULES_TAR): $(KERNEL_IMAGE) ;

# Quiet: kbuild's one-line steps become a progress line every
# $(KERNEL_PROGRESS) s; warnings and errors pass through as they come.
KERNEL_PROGRESS ?= 15
# The kernel's built-in initramfs (usr/: an empty /dev, /dev/console and
# /root) carries KBUILD_BUILD_TIMESTAMP in its cpio headers, and kbuild does
# not rebuild it when only the timestamp changes: without the rm, a kernel
# rebuilt after a new commit keeps the old time and differs from a clean
# build of that commit.  kbuild runs whenever the key changes (a new
# toolchain, say), and itself decides what that rebuilds.
.PHONY: kernel-compiled
kernel-compiled: $(STAMPS)/kernel-compiled
$(STAMPS)/kernel-compiled: $(STAMPS)/kernel-configured $(KERNEL_KEY) $(KERNEL_SIGNING_PEM)
	$(call msg,KERNEL,building bzImage and modules with $(KERNEL_JOBS) jobs)
	$(Q)rm -f '$(KERNEL_OUT)/usr/initramfs_data.cpio' '$(KERNEL_CCACHE_LOG)'
ifeq ($(V),1)
	$(Q)$(KMAKE) -j$(KERNEL_JOBS) bzImage modules
else
	$(Q)set -o pipefail; $(KMAKE) -j$(KERNEL_JOBS) bzImage modules 2>&1 | \
		'$(TOP)/scripts/kbuild-progress' $(KERNEL_PROGRESS)
endif
	$(Q)'$(TOP)/scripts/ccache-summary' '$(KERNEL_CCACHE_LOG)' '$(RESCUE_CACHE)'
	$(call msg,MODULES,signing and installing them: $(KERNEL_OUT)/rescue-modules.tar)
	$(Q)rm -rf '$(KERNEL_MODULES_ROOT)'
	$(Q)$(KMAKE) -s INSTALL_MOD_PATH='$(KERNEL_MODULES_ROOT)' INSTALL_MOD_STRIP=1 \
		modules_install
	$(Q)rm -f '$(KERNEL_MODULES_ROOT)'/lib/modules/*/build '$(KERNEL_MODULES_ROOT)'/lib/modules/*/source
	$(Q)tar -C '$(KERNEL_MODULES_ROOT)' --sort=name --mtime=@$(KERNEL_EPOCH) \
		--owner=0 --group=0 --numeric-owner --format=gnu \
		-cf '$(KERNEL_OUT)/rescue-modules.tar' lib
	$(Q)touch $@

$(KERNEL_RELEASE_FILE): $(KERNEL_IMAGE) ;

# make check-kconfig: the patch, not the config, turns devtmpfs on.
CHECK_SUITES += kconfig
.PHONY: check-kconfig
check-kconfig: $(STAMPS)/linux-patched
	$(Q)'$(TOP)/tests/kconfig.sh' '$(LINUX_TARBALL)' '$(LINUX_SRC)' \
		'$(BUILD)/test-kconfig' '$(BUILD)/test-logs' \
		'$(PATCH_DIR)' '$(CONFIG_DIR)'
