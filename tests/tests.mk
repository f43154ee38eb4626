# tests/: boot tests -- QEMU (always -accel tcg) boots the real ISO, picks
# menu entries through isolinux/GRUB on the serial console and works at
# the shell prompt.  One log per test in $(BUILD)/test-logs/<test>.log.
#
#   make check-boot                        every test
#   make check-boot TESTS='bios_cd uefi_usb'  a selection (boottest.py --list)
#   make check-boot TIMEOUT_FACTOR=3       slower machine: longer waits

CHECK_SUITES += boot

ISO ?= $(BUILD)/rescue.iso
BOOTTEST := $(TOP)/tests/boottest.py
TEST_LOGS := $(BUILD)/test-logs
TESTS ?=

.PHONY: check-boot
check-boot: $(ISO) | deps
	$(call msg,CHECK,boot tests on $(ISO) (logs in $(TEST_LOGS)))
	$(Q)mkdir -p '$(TEST_LOGS)'
	$(Q)'$(BOOTTEST)' --iso '$(ISO)' --logdir '$(TEST_LOGS)' \
		--summary '$(TEST_LOGS)/boot.summary' $(TESTS)
