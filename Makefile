# Rescue-system builder: Debian's linux-source + patches/ + configs/ +
# rescue-init/ + busybox -> one hybrid ISO whose /dev comes from the kernel.
#
# Quiet by default, full commands with V=1; output directory with O=.
# Every step leaves a stamp so that a no-op `make` does nothing.

.DEFAULT_GOAL := all
SHELL := /bin/bash
.DELETE_ON_ERROR:
.SUFFIXES:

TOP := $(CURDIR)
O ?= $(TOP)/build
BUILD := $(abspath $(O))

ifeq ($(V),1)
Q :=
else
Q := @
endif
export V

# Everything time-stamped derives from SOURCE_DATE_EPOCH: by default the
# time of the last commit, so two builds of one commit are identical.
SOURCE_DATE_EPOCH_ORIGIN := $(origin SOURCE_DATE_EPOCH)
SOURCE_DATE_EPOCH ?= $(shell git -C '$(TOP)' log -1 --format=%ct 2>/dev/null)
ifeq ($(SOURCE_DATE_EPOCH),)
$(error SOURCE_DATE_EPOCH is unset and there is no git commit to take it from; run inside the git checkout or set SOURCE_DATE_EPOCH=<seconds>)
endif
export SOURCE_DATE_EPOCH

# Timeout multiplier for the boot tests on slow machines.
TIMEOUT_FACTOR ?= 1
export TIMEOUT_FACTOR

# $(call msg,TAG,what): one quiet line per step, Kbuild style.
msg = @printf '  %-9s %s\n' '$(1)' '$(2)'

.PHONY: all
all: iso

# $(call write-if-changed,FILE,TEXT): FILE holds TEXT; its mtime changes only
# when TEXT does, so a target that depends on FILE rebuilds when its settings
# change (Kbuild's if_changed idea). The rule must depend on FORCE.
write-if-changed = @mkdir -p '$(dir $(1))'; \
	printf '%s\n' '$(call squote,$(2))' | cmp -s - '$(1)' || \
	printf '%s\n' '$(call squote,$(2))' >'$(1)'
# $(call squote,TEXT): TEXT made safe inside a single-quoted shell word.
squote = $(subst ','\'',$(1))
.PHONY: FORCE
FORCE:

# ---------------------------------------------------------------------------
# Debian packages: as root, missing ones are installed; otherwise the build
# stops and names them.
.PHONY: deps
deps:
	$(Q)'$(TOP)/scripts/deps.sh' '$(TOP)/scripts/packages.txt'

include $(TOP)/scripts/cache.mk
include $(TOP)/scripts/signing-key.mk
include $(TOP)/scripts/kernel.mk
include $(TOP)/rescue-init/rescue-init.mk
include $(TOP)/rescue-enter/rescue-enter.mk
include $(TOP)/image/image.mk
include $(TOP)/tests/tests.mk
include $(TOP)/bench/bench.mk

# Files from Debian packages that rules depend on (the kernel tarball,
# busybox, ...; each .mk adds its own to HOST_FILES). On a bare machine they
# are not there yet: this rule makes `deps` install their packages first,
# instead of make stopping with "No rule to make target".
$(sort $(HOST_FILES)): | deps
	$(Q)test -e '$@' || { echo "error: $@ is missing; it should come from a package in scripts/packages.txt" >&2; exit 1; }

# ---------------------------------------------------------------------------
# make check: every suite runs even when an earlier one failed; each writes
# $(BUILD)/test-logs/<suite>.summary ("N passed, N failed") and the total
# is printed last.
#
# A QEMU machine under TCG keeps one core busy, so CHECK_JOBS suites run
# side by side (default 2, one per core; CHECK_JOBS=1: one after another).
# make's own job slots hand out the suites in CHECK_ORDER, the longest
# first (times from the README's last full run), so that no core idles
# while a long suite runs alone at the end; suites not named there follow.
# enter-crypt comes after two short suites: by then enter has made its
# fixtures' host stages, which hold the shared .deb cache's lock.
# Suites that share a cached fixture (enter, enter-crypt and
# boot-installed: the Debian 12 disks) wait for each other's build of it
# on a lock, never build it twice.  Each suite's output is kept in
# test-logs/<suite>.out and printed in one piece when it ends.
CHECK_JOBS ?= 2
CHECK_ORDER := enter boot storage enter-crypt boot-installed secureboot kconfig build cache \
	media rescue-enter rescue-init
CHECK_RUNS := $(filter $(CHECK_SUITES),$(CHECK_ORDER)) $(filter-out $(CHECK_ORDER),$(CHECK_SUITES))
.PHONY: check
check: all
	$(Q)mkdir -p '$(BUILD)/test-logs'; rm -f '$(BUILD)'/test-logs/*.summary
	$(Q)start=$$(date +%s); \
	$(MAKE) --no-print-directory -j$(CHECK_JOBS) $(addprefix check-run-,$(CHECK_RUNS)); \
	'$(TOP)/tests/summarize' '$(BUILD)/test-logs' $$(( $$(date +%s) - start )) $(CHECK_SUITES)

# One suite of make check: a failure is in its summary, not make's status.
.PHONY: $(addprefix check-run-,$(CHECK_SUITES))
# A suite past its budget (SUITE_BUDGET_<suite> in tests/tests.mk) gets a
# warning that names its slowest tests (tests/budget).
$(addprefix check-run-,$(CHECK_SUITES)): check-run-%:
	$(Q)t=$$(date +%s); \
	$(MAKE) --no-print-directory check-$* >'$(BUILD)'/test-logs/$*.out 2>&1 || true; \
	flock '$(BUILD)'/test-logs/.print sh -c \
		'printf "\n=== suite %s (%s s)\n" "$$1" "$$2"; cat "$$3"; "$$4" "$$1" "$$2" "$$5" "$$3"' \
		sh '$*' $$(( $$(date +%s) - t )) '$(BUILD)'/test-logs/$*.out \
		'$(TOP)/tests/budget' '$(SUITE_BUDGET_$*)'

# The README's pictures: QEMU screendumps of the VGA screen.
.PHONY: screenshots
screenshots: $(ISO) | deps
	$(Q)'$(TOP)/docs/screenshots.py' '$(ISO)' '$(TOP)/docs' '$(TEST_LOGS)'

.PHONY: clean distclean
clean:
	$(call msg,CLEAN,$(BUILD) except the extracted kernel tree)
	$(Q)rm -rf '$(BUILD)/rescue-init' '$(BUILD)/image' '$(BUILD)/test-logs' '$(BUILD)'/*.iso '$(BUILD)'/*.iso.sha256
distclean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf '$(BUILD)'

.PHONY: help
help:
	@echo 'Build:'
	@echo '  make             install missing Debian packages (as root), build $(ISO)'
	@echo '  make kernel      configure and build the kernel only ($(KERNEL_IMAGE))'
	@echo '  make rescue-init build the static PID 1 only'
	@echo '  make rescue-enter build the command that enters an installed system'
	@echo '  make iso         assemble the hybrid ISO'
	@echo 'Test:'
	@echo '  make check       build what is missing, then run every test suite'
	@echo '                   ($(CHECK_SUITES)); logs in $(BUILD)/test-logs'
	@echo '                   (CHECK_JOBS=1: suites one after another; default 2 side by side)'
	@echo '  make check-quick the smoke set while you work (85 s here): BIOS CD and UEFI USB'
	@echo '                   to the prompt, rescue.check, the C unit tests'
	@echo '  make check-<suite>  run one suite'
	@echo '  make check-cache-cold  check-cache plus a clone compiled through ccache and one built'
	@echo '                   with no cache (two kernel builds)'
	@echo '  make fuzz        short bounded libFuzzer run on the init'"'"'s parsers'
	@echo '  make bench       boot time, memory and size against Debian'"'"'s initramfs shell'
	@echo '                   (BENCH_RUNS=1 BENCH_MEM_LO=0: one boot each, no memory bisection)'
	@echo '  make bench-build clean and no-op build times, the slowest kernel directories (long)'
	@echo '  make check-control  issue 14'"'"'s control: Debian 12 booted by two kernels from the'
	@echo '                   unpatched tree (two more kernel builds; not part of make check)'
	@echo 'Try it:'
	@echo '  make run         boot the ISO in QEMU (BIOS, serial console; Ctrl-A X quits)'
	@echo '  make run-uefi    the same under OVMF'
	@echo '                   (RUN_MEDIUM=cd|disk|usb, default cd)'
	@echo '  make screenshots redo docs/boot-menu.png, docs/rescue-shell.png, docs/mokmanager.png'
	@echo 'Housekeeping:'
	@echo '  make clean       remove everything but the extracted kernel tree and kernel build'
	@echo '  make distclean   remove $(BUILD)'
	@echo 'Cache (kept between builds, shared by every clone on the machine):'
	@echo '  RESCUE_CACHE=dir  the kernel (its products by input key, and ccache), the .debs,'
	@echo '                   the test fixtures'
	@echo '                   (default /var/cache/rescue-iso as root, ~/.cache/rescue-iso'
	@echo '                   otherwise; now: $(or $(RESCUE_CACHE),none)); RESCUE_CACHE= builds without it'
	@echo '  RESCUE_CCACHE_SIZE=2G  the compiler cache'"'"'s size limit (ccache evicts past it)'
	@echo '  KERNEL_CACHE_GB=1 RESCUE_FIXTURE_MAX_GB=40 RESCUE_CACHE_MAX_AGE=30 (days): the'
	@echo '                   kernels'"'"' and the fixtures'"'"' limits; past them the least recently used go'
	@echo '  clearing it: rm -rf $(or $(RESCUE_CACHE),<the cache>) (the next build is cold)'
	@echo 'Variables: V=1 (show commands), O=dir (output, default build/),'
	@echo '  SOURCE_DATE_EPOCH (default: last commit time), TIMEOUT_FACTOR (boot tests),'
	@echo '  SIGN_KEY= SIGN_CERT= (Secure Boot key pair, PEM; default $(SIGN_DIR)/),'
	@echo '  FIRMWARE_PACKAGES="firmware-linux-free" (Debian packages whose /lib/firmware the ISO carries),'
	@echo '  TESTS="bios_cd uefi_usb" (a selection for check-boot), FUZZ_TIME (seconds per parser)'
