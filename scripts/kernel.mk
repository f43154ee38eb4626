# The kernel: Debian's linux-source tarball, extracted under $(BUILD),
# patched with patches/, configured from configs/, built out of tree.
#
# Stamps: linux-extracted -> linux-patched -> kernel-configured -> bzImage.
# The lists of patches and of fragments are files too, rewritten only when
# they change, so that deleting or renaming a patch re-extracts and
# re-patches the tree and deleting a fragment redoes the config: a
# dependency on the files alone would only see the ones still there.

LINUX_TARBALL ?= /usr/src/linux-source-6.1.tar.xz
HOST_FILES += $(LINUX_TARBALL)
LINUX_SRC ?= $(BUILD)/linux-src
KERNEL_OUT := $(BUILD)/kernel
KERNEL_IMAGE := $(KERNEL_OUT)/arch/x86/boot/bzImage
KERNEL_RELEASE_FILE := $(KERNEL_OUT)/include/config/kernel.release
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

$(BUILD)/kernel.settings: FORCE
	$(call write-if-changed,$@,$(KBUILD_REPRO))

# Quiet: kbuild's one-line steps become a progress line every
# $(KERNEL_PROGRESS) s; warnings and errors pass through as they come.
KERNEL_PROGRESS ?= 15
# The kernel's built-in initramfs (usr/: an empty /dev, /dev/console and
# /root) carries KBUILD_BUILD_TIMESTAMP in its cpio headers, and kbuild does
# not rebuild it when only the timestamp changes: without the rm, a kernel
# rebuilt after a new commit keeps the old time and differs from a clean
# build of that commit.
$(KERNEL_IMAGE): $(STAMPS)/kernel-configured $(BUILD)/kernel.settings
	$(call msg,KERNEL,building bzImage with $(KERNEL_JOBS) jobs)
	$(Q)rm -f '$(KERNEL_OUT)/usr/initramfs_data.cpio' '$(KERNEL_CCACHE_LOG)'
ifeq ($(V),1)
	$(Q)$(KMAKE) -j$(KERNEL_JOBS) bzImage
else
	$(Q)set -o pipefail; $(KMAKE) -j$(KERNEL_JOBS) bzImage 2>&1 | \
		'$(TOP)/scripts/kbuild-progress' $(KERNEL_PROGRESS)
endif
	$(Q)touch $@
	@printf '  %-9s %s: %s bytes, release %s\n' KERNEL '$@' \
		"$$(stat -c %s '$@')" "$$(cat '$(KERNEL_RELEASE_FILE)')"
	$(Q)'$(TOP)/scripts/ccache-summary' '$(KERNEL_CCACHE_LOG)' '$(RESCUE_CACHE)'

$(KERNEL_RELEASE_FILE): $(KERNEL_IMAGE) ;

# make check-kconfig: the patch, not the config, turns devtmpfs on.
CHECK_SUITES += kconfig
.PHONY: check-kconfig
check-kconfig: $(STAMPS)/linux-patched
	$(Q)'$(TOP)/tests/kconfig.sh' '$(LINUX_TARBALL)' '$(LINUX_SRC)' \
		'$(BUILD)/test-kconfig' '$(BUILD)/test-logs' \
		'$(PATCH_DIR)' '$(CONFIG_DIR)'
