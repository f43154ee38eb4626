# image/: the hybrid rescue ISO -- kernel + rescue-init + busybox +
# e2fsck on an ISO9660 root filesystem, bootable from BIOS and UEFI, from
# CD and from disk/USB stick.  No initramfs.  image/build-iso.sh does the
# work; this fragment tracks the inputs.

ISO := $(BUILD)/rescue.iso
IMAGE_SRC := $(TOP)/image
IMAGE_WORK := $(BUILD)/image
RESCUE_INIT ?= $(BUILD)/rescue-init/rescue-init

# Programs from Debian packages (busybox-static, e2fsck-static) and boot
# loaders (isolinux, syslinux-common; shim-signed, shim-helpers-amd64-signed,
# grub-efi-amd64-signed).
BUSYBOX ?= /bin/busybox
E2FSCK ?= /sbin/e2fsck.static
HOST_FILES += $(BUSYBOX) $(E2FSCK)
ISOLINUX_DIR ?= /usr/lib/ISOLINUX
SYSLINUX_BIOS_DIR ?= /usr/lib/syslinux/modules/bios
SHIM ?= /usr/lib/shim/shimx64.efi.signed
MOKMANAGER_EFI ?= /usr/lib/shim/mmx64.efi.signed
GRUB_EFI ?= /usr/lib/grub/x86_64-efi-signed/gcdx64.efi.signed

# The programs from Debian packages (image/stage-tools.sh); the ISO is
# rebuilt when an installed package changes.
TOOLS_LIST ?= $(IMAGE_SRC)/tools.list
# Debian packages whose /lib/firmware files the ISO carries, for drivers
# that load firmware (docs/drivers.md).
FIRMWARE_PACKAGES ?= firmware-linux-free
DPKG_STATUS := /var/lib/dpkg/status

IMAGE_INPUTS := $(sort $(shell find '$(IMAGE_SRC)' -type f ! -name '*~' ! -name '.*'))
# Boot loader files from the host's packages: an update of any of them
# rebuilds the ISO (a whole directory, so that no list of the files
# build-iso.sh takes is kept twice).
IMAGE_HOST_FILES := $(BUSYBOX) $(E2FSCK) $(sort $(wildcard $(ISOLINUX_DIR)/* \
	$(SYSLINUX_BIOS_DIR)/*.c32)) $(SHIM) $(MOKMANAGER_EFI) $(GRUB_EFI)

# What the ISO depends on beyond file dates: the values build-iso.sh gets
# (SOURCE_DATE_EPOCH gives dates and the disk id; the key pair signs),
# and the shape of image/ -- every path with its type and mode -- so that
# deleting, adding or chmod-ing a file there rebuilds the ISO. Each file
# changes only when its text does (Kbuild's if_changed).
IMAGE_ENV = ISO='$(ISO)' WORK='$(IMAGE_WORK)' IMAGE_SRC='$(IMAGE_SRC)' \
	KERNEL='$(KERNEL_IMAGE)' KERNEL_RELEASE_FILE='$(KERNEL_RELEASE_FILE)' \
	KERNEL_MODULES_TAR='$(KERNEL_MODULES_TAR)' \
	RESCUE_INIT='$(RESCUE_INIT)' RESCUE_ENTER='$(RESCUE_ENTER)' \
	RESCUE_BOOT='$(RESCUE_BOOT)' BUSYBOX='$(BUSYBOX)' E2FSCK='$(E2FSCK)' \
	ISOLINUX_DIR='$(ISOLINUX_DIR)' SYSLINUX_BIOS_DIR='$(SYSLINUX_BIOS_DIR)' \
	SHIM='$(SHIM)' MOKMANAGER_EFI='$(MOKMANAGER_EFI)' GRUB_EFI='$(GRUB_EFI)' \
	SIGN_KEY='$(SIGN_KEY)' SIGN_CERT='$(SIGN_CERT)' TOOLS_LIST='$(TOOLS_LIST)' \
	FIRMWARE_PACKAGES='$(FIRMWARE_PACKAGES)' \
	SOURCE_DATE_EPOCH='$(SOURCE_DATE_EPOCH)'
# Exported, so that a test suite can build another ISO from the same
# inputs with build-iso.sh, giving its own ISO, WORK and key pair.
export BUILD_ISO = $(IMAGE_ENV)
IMAGE_SETTINGS := $(IMAGE_WORK)/settings
$(IMAGE_SETTINGS): FORCE
	$(call write-if-changed,$@,$(IMAGE_ENV))
IMAGE_TREE := $(IMAGE_WORK)/tree
$(IMAGE_TREE): FORCE
	$(call write-if-changed,$@,$(shell cd '$(IMAGE_SRC)' && find . ! -name '*~' -printf '%p %y %m;' | LC_ALL=C sort))

.PHONY: iso
iso: $(ISO) $(ISO).sha256

# build-iso.sh writes $(ISO).tmp and renames it only when it is complete;
# .DELETE_ON_ERROR does not touch the old ISO since the target itself is
# not modified by a failed run.
$(ISO): $(KERNEL_IMAGE) $(KERNEL_RELEASE_FILE) $(KERNEL_MODULES_TAR) $(RESCUE_INIT) $(RESCUE_ENTER) $(RESCUE_BOOT) \
		$(IMAGE_HOST_FILES) \
		$(IMAGE_INPUTS) $(TOOLS_LIST) $(DPKG_STATUS) $(IMAGE_SETTINGS) $(IMAGE_TREE) \
		$(SIGN_KEY) $(SIGN_CERT) | deps
	$(call msg,MKISO,$@)
	$(Q)$(IMAGE_ENV) '$(IMAGE_SRC)/build-iso.sh'

# The checksum is made from the ISO on disk, so it is redone whenever it
# is missing or older than the ISO (an interrupted build included).
$(ISO).sha256: $(ISO)
	$(Q)cd '$(@D)' && sha256sum '$(<F)' >'$(@F).tmp' && mv -f '$(@F).tmp' '$(@F)'

# ---------------------------------------------------------------------------
# make run / run-uefi: boot the ISO in QEMU with the serial console on the
# terminal (Ctrl-A X quits, Ctrl-A C toggles the QEMU monitor).
# RUN_MEDIUM=cd (default), disk (raw IDE disk) or usb (USB stick on xHCI).
RUN_MEDIUM ?= cd
QEMU ?= qemu-system-x86_64
QEMU_MEM ?= 512
OVMF_CODE ?= /usr/share/OVMF/OVMF_CODE_4M.fd
OVMF_VARS ?= /usr/share/OVMF/OVMF_VARS_4M.fd
OVMF_VARS_COPY := $(IMAGE_WORK)/OVMF_VARS_4M.fd

QEMU_MEDIUM_cd := -drive file='$(ISO)',media=cdrom,if=ide,readonly=on -boot order=d
QEMU_MEDIUM_disk := -drive file='$(ISO)',format=raw,if=ide,snapshot=on
QEMU_MEDIUM_usb := -device qemu-xhci \
	-drive if=none,id=stick,file='$(ISO)',format=raw,snapshot=on \
	-device usb-storage,drive=stick,bootindex=0
QEMU_MEDIUM = $(or $(QEMU_MEDIUM_$(RUN_MEDIUM)),$(error RUN_MEDIUM must be cd, disk or usb))
QEMU_RUN = $(QEMU) -accel tcg -m $(QEMU_MEM) -nographic \
	-nic user,model=virtio-net-pci $(QEMU_MEDIUM)

.PHONY: run run-uefi
run: $(ISO) | deps
	$(call msg,QEMU,BIOS $(RUN_MEDIUM): $(ISO) (Ctrl-A X quits))
	$(Q)$(QEMU_RUN)

run-uefi: $(ISO) | deps
	$(call msg,QEMU,UEFI $(RUN_MEDIUM): $(ISO) (Ctrl-A X quits))
	$(Q)mkdir -p '$(IMAGE_WORK)' && cp '$(OVMF_VARS)' '$(OVMF_VARS_COPY)'
	$(Q)$(QEMU_RUN) \
		-drive if=pflash,format=raw,readonly=on,file='$(OVMF_CODE)' \
		-drive if=pflash,format=raw,file='$(OVMF_VARS_COPY)'
