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

# $(call qemu-suite,NAME,SCRIPT[,ENV]): `make check-NAME` runs tests/SCRIPT
# on the ISO, with the environment assignments ENV, and writes
# $(TEST_LOGS)/NAME.summary.
define qemu-suite
CHECK_SUITES += $(1)
.PHONY: check-$(1)
check-$(1): $$(ISO) | deps
	$$(call msg,CHECK,$(1) tests on $$(ISO) (logs in $$(TEST_LOGS)))
	$$(Q)mkdir -p '$$(TEST_LOGS)'
	$$(Q)$(3) '$$(TOP)/tests/$(2)' --iso '$$(ISO)' --logdir '$$(TEST_LOGS)' \
		--summary '$$(TEST_LOGS)/$(1).summary' $$(TESTS)
endef

$(eval $(call qemu-suite,boot,boottest.py))

# The media suite also makes other builds of the ISO (another
# SOURCE_DATE_EPOCH, so another disk id and marker) from the very inputs
# of $(ISO), with image/build-iso.sh.
ISO_INPUTS_ENV := IMAGE_SRC='$(IMAGE_SRC)' KERNEL='$(KERNEL_IMAGE)' \
	KERNEL_RELEASE_FILE='$(KERNEL_RELEASE_FILE)' RESCUE_INIT='$(RESCUE_INIT)' \
	BUSYBOX='$(BUSYBOX)' E2FSCK='$(E2FSCK)' ISOLINUX_DIR='$(ISOLINUX_DIR)' \
	SYSLINUX_BIOS_DIR='$(SYSLINUX_BIOS_DIR)' GRUB_EFI_DIR='$(GRUB_EFI_DIR)'
$(eval $(call qemu-suite,media,media.py,$(ISO_INPUTS_ENV)))
