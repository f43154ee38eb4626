# make check-control: issue 14's unpatched control.  The two boots of
# tests/boot_installed.py that start a kernel with QEMU's -kernel
# (installed_kernel_root, installed_initramfs), run again on kernels built
# from the unpatched linux-source tarball with the same configs/ fragments:
#
#   unpatched           exactly what the fragments give without patches/:
#                       DEVTMPFS and DEVTMPFS_MOUNT unset (Kconfig's defaults)
#   unpatched-devtmpfs  the 2010 status quo that Sievers' "default y" changed:
#                       DEVTMPFS=y, DEVTMPFS_MOUNT unset
#                       (tests/control-devtmpfs.config on top)
#
# Not part of make check: two more kernel builds.  Each starts from a
# copy of a built kernel's output directory (CONTROL_SEED, default the
# ISO's kernel, when it holds objects); kbuild then recompiles what the
# unpatched sources (the files patches/ touches, made newer) and the
# DEVTMPFS settings change: for unpatched-devtmpfs a few files, for
# unpatched everything that includes <linux/device.h> (its #ifdef
# CONFIG_DEVTMPFS), two thirds of the kernel.  Without a seed, each is a
# full build.  Here, not in scripts/kernel.mk: a change to that file is a
# new kernel for the ISO.

CONTROL_SRC := $(BUILD)/linux-src-unpatched
CONTROL_SEED ?= $(KERNEL_OUT)
CONTROL_DEVTMPFS_CONFIG := $(TOP)/tests/control-devtmpfs.config
CONTROL_NAMES := kernel-unpatched kernel-unpatched-devtmpfs
CONTROL_KERNELS := $(foreach n,$(CONTROL_NAMES),$(BUILD)/$(n)/arch/x86/boot/bzImage)
# $(call control-kmake,OUT): kbuild on the unpatched tree, output in OUT.
control-kmake = $(KBUILD_REPRO) $(MAKE) --no-print-directory -C '$(CONTROL_SRC)' \
	O='$(1)' $(if $(filter 1,$(V)),V=1)

# $(call control-seed,OUT): OUT afresh, a copy of CONTROL_SEED if that
# holds a build.  The seed's paths (its source tree, its own directory) in
# kbuild's command and dependency files become ours, so that kbuild
# compares like with like; the files the patches change get a new mtime
# here, so that everything built from their patched versions is rebuilt.
define control-seed
	$(Q)rm -rf '$(1)'
	$(Q)if [ -f '$(CONTROL_SEED)/vmlinux.o' ]; then \
		printf '  %-9s %s\n' SEED '$(1) from $(CONTROL_SEED)'; \
		seed_src=$$(readlink '$(CONTROL_SEED)/source') && \
		cp -a '$(CONTROL_SEED)' '$(1)' && \
		grep -rlI -e "$$seed_src" -e '$(CONTROL_SEED)' '$(1)' | \
			xargs -r sed -i -e "s|$$seed_src|$(CONTROL_SRC)|g" \
				-e 's|$(CONTROL_SEED)|$(1)|g' && \
		rm -f '$(1)/source' && \
		sed -n 's|^+++ b/||p' $(PATCHES) | sort -u | \
			(cd '$(CONTROL_SRC)' && xargs touch) || exit 1; \
	fi
endef

# $(call control-build,OUT,EXTRA FRAGMENT...): configure OUT from configs/
# (and the extras) with alldefconfig as scripts/kernel.mk does, and build
# its bzImage.  Its .config may differ from the ISO kernel's only in
# DEVTMPFS lines: otherwise the control would test something else too.
define control-build
	$(call msg,CONFIG,$(1)/.config: configs/*.config $(notdir $(2)), unpatched tree)
	$(Q)mkdir -p '$(1)'
	$(Q)cat $(CONFIG_FRAGMENTS) $(2) >'$(1)/fragments.config'
	$(Q)$(call control-kmake,$(1)) -s alldefconfig KCONFIG_ALLCONFIG='$(1)/fragments.config'
	$(Q)other=$$(diff '$(KERNEL_OUT)/.config' '$(1)/.config' | grep '^[<>]' | \
		grep -v '^[<>] \(# \)\{0,1\}CONFIG_DEVTMPFS'); \
		[ -z "$$other" ] || { echo "error: $(1)/.config differs from \
		$(KERNEL_OUT)/.config in more than DEVTMPFS:"; echo "$$other"; exit 1; } >&2
	$(call msg,KERNEL,$(1): bzImage with $(KERNEL_JOBS) jobs)
	$(Q)set -o pipefail; start=$$(date +%s); \
		$(call control-kmake,$(1)) -j$(KERNEL_JOBS) bzImage 2>&1 | \
		'$(TOP)/scripts/kbuild-progress' $(KERNEL_PROGRESS); \
		printf '  %-9s %s: %s bytes, built in %s s; %s\n' KERNEL '$(1)' \
		"$$(stat -c %s '$(1)/arch/x86/boot/bzImage')" $$(( $$(date +%s) - start )) \
		"$$(grep -E '^(# )?CONFIG_DEVTMPFS(_MOUNT)?[= ]' '$(1)/.config' | tr '\n' ' ')"
	$(Q)touch '$(1)/arch/x86/boot/bzImage'
endef

$(STAMPS)/linux-unpatched-extracted: $(LINUX_TARBALL) $(LINUX_SOURCE_SH) | deps
	$(call msg,EXTRACT,$(LINUX_TARBALL) into $(CONTROL_SRC), no patches)
	$(Q)'$(LINUX_SOURCE_SH)' extract '$(LINUX_TARBALL)' '$(CONTROL_SRC)'
	$(Q)mkdir -p $(@D) && touch $@

CONTROL_INPUTS := $(STAMPS)/linux-unpatched-extracted $(CONFIG_FRAGMENTS) $(CONFIG_LIST) \
	$(STAMPS)/kernel-configured $(BUILD)/kernel.settings
$(BUILD)/kernel-unpatched/arch/x86/boot/bzImage: $(CONTROL_INPUTS)
	$(call control-seed,$(BUILD)/kernel-unpatched)
	$(call control-build,$(BUILD)/kernel-unpatched)
$(BUILD)/kernel-unpatched-devtmpfs/arch/x86/boot/bzImage: $(CONTROL_INPUTS) \
		$(CONTROL_DEVTMPFS_CONFIG)
	$(call control-seed,$(BUILD)/kernel-unpatched-devtmpfs)
	$(call control-build,$(BUILD)/kernel-unpatched-devtmpfs,$(CONTROL_DEVTMPFS_CONFIG))

.PHONY: control-kernels check-control
control-kernels: $(CONTROL_KERNELS)

# One boot_installed.py run per kernel, logs in $(TEST_LOGS)/control-NAME/.
check-control: $(CONTROL_KERNELS) $(ISO) | deps
	$(Q)start=$$(date +%s); for n in $(CONTROL_NAMES); do \
		printf '  %-9s %s\n' CHECK "control-$$n: $(BUILD)/$$n (logs in $(TEST_LOGS)/control-$$n)"; \
		rm -f '$(TEST_LOGS)'/control-$$n.summary; mkdir -p '$(TEST_LOGS)'/control-$$n; \
		'$(TOP)/tests/boot_installed.py' --iso '$(ISO)' \
			--kernel '$(BUILD)'/$$n/arch/x86/boot/bzImage \
			--logdir '$(TEST_LOGS)'/control-$$n --summary '$(TEST_LOGS)'/control-$$n.summary \
			installed_kernel_root installed_initramfs; \
	done; '$(TOP)/tests/summarize' '$(TEST_LOGS)' $$(( $$(date +%s) - start )) \
		$(addprefix control-,$(CONTROL_NAMES))
