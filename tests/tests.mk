# tests/: QEMU suites -- each boots the real ISO (always -accel tcg), picks
# menu entries through isolinux/GRUB on the serial console and works at the
# shell prompt.  The machine, console and runner are tests/qemu.py; each
# suite is one script beside it.  One log per test in
# $(BUILD)/test-logs/<test>.log.
#
#   make check-boot                           every test of a suite
#   make check-boot TESTS='bios_cd uefi_usb'  a selection (tests/boottest.py --list)
#   make check-boot TIMEOUT_FACTOR=3          slower machine: longer waits

ISO ?= $(BUILD)/rescue.iso
TEST_LOGS := $(BUILD)/test-logs
TESTS ?=

# $(call qemu-suite,NAME,SCRIPT): `make check-NAME` runs tests/SCRIPT on
# the ISO and writes $(TEST_LOGS)/NAME.summary; `make check` runs it too.
define qemu-suite
CHECK_SUITES += $(1)
.PHONY: check-$(1)
check-$(1): $$(ISO) | deps
	$$(call msg,CHECK,$(1) tests on $$(ISO) (logs in $$(TEST_LOGS)))
	$$(Q)mkdir -p '$$(TEST_LOGS)'
	$$(Q)'$$(TOP)/tests/$(2)' --iso '$$(ISO)' --logdir '$$(TEST_LOGS)' \
		--summary '$$(TEST_LOGS)/$(1).summary' $$(TESTS)
endef

# make check-build: the build's promises about the ISO (reproducible in
# another directory, checksum, rebuilds on deleted files, modes, host
# boot loaders), in a scratch copy of the tree with this build's kernel.
CHECK_SUITES += build
.PHONY: check-build
check-build: $(ISO) $(ISO).sha256 | deps
	$(call msg,CHECK,build tests in $(BUILD)/test-build (log in $(TEST_LOGS)/build.log))
	$(Q)SOURCE_DATE_EPOCH='$(SOURCE_DATE_EPOCH)' KERNEL_EPOCH='$(KERNEL_EPOCH)' \
		'$(TOP)/tests/build.sh' '$(BUILD)' '$(BUILD)/test-build' '$(TEST_LOGS)'

# make check-cache: the build cache (scripts/cache.mk) -- a fresh clone in
# another directory takes its kernel from the cache, compiles nothing and
# gives the same ISO; an unusable or full cache warns and builds without it.
# make check-cache-cold adds a clone with new kernel inputs compiled through
# ccache, and one built with no cache at all (two kernel builds, 15 to 30
# minutes: not part of make check).
CHECK_SUITES += cache
.PHONY: check-cache check-cache-cold
check-cache check-cache-cold: $(ISO) | deps
	$(call msg,CHECK,cache tests in $(BUILD)/test-cache (log in $(TEST_LOGS)/cache.log))
	$(Q)SOURCE_DATE_EPOCH='$(SOURCE_DATE_EPOCH)' KERNEL_EPOCH='$(KERNEL_EPOCH)' \
		CACHE_COLD=$(if $(filter check-cache-cold,$@),1,0) \
		'$(TOP)/tests/cache.sh' '$(BUILD)' '$(BUILD)/test-cache' '$(TEST_LOGS)'

$(eval $(call qemu-suite,boot,boottest.py))
$(eval $(call qemu-suite,storage,storage.py))
$(eval $(call qemu-suite,secureboot,secureboot.py))
$(eval $(call qemu-suite,enter,enter.py))
$(eval $(call qemu-suite,enter-crypt,enter_crypt.py))
$(eval $(call qemu-suite,boot-installed,boot_installed.py))
$(eval $(call qemu-suite,media,media.py))
$(eval $(call qemu-suite,drivers,drivers.py))
# make check-quick: the smoke set for the loop while you work, about five
# minutes: the real ISO booted from a BIOS CD and from a UEFI USB stick to
# the prompt, the rescue.check entry, and the C unit tests.  make check
# stays the full set.
CHECK_QUICK_TESTS := bios_cd uefi_usb smoke_check
.PHONY: check-quick
check-quick:
	$(Q)$(MAKE) --no-print-directory check CHECK_SUITES='boot rescue-init rescue-enter' \
		TESTS='$(CHECK_QUICK_TESTS)'

# Each suite's budget in seconds for make check on a 2-core machine: the
# last warm .ci/run's time with room (README, "Tests").  Past it, make
# check warns and names the suite's slowest tests (tests/budget); the
# budgets keep .ci/run within its time.  With a cold cache, enter and
# enter-crypt build their Debian 12 disks and go past theirs.
SUITE_BUDGET_enter := 900
SUITE_BUDGET_enter-crypt := 450
SUITE_BUDGET_boot := 330
SUITE_BUDGET_storage := 300
SUITE_BUDGET_boot-installed := 200
SUITE_BUDGET_secureboot := 300
SUITE_BUDGET_cache := 240
SUITE_BUDGET_build := 360
SUITE_BUDGET_kconfig := 200
SUITE_BUDGET_media := 210
SUITE_BUDGET_drivers := 120
SUITE_BUDGET_rescue-init := 30
SUITE_BUDGET_rescue-enter := 30

include $(TOP)/tests/control.mk
