#!/bin/bash
# build-iso.sh: assemble the hybrid rescue ISO.
#
# Stage a directory, then ONE xorriso call whose options sit in named
# arrays per boot mode:
#   BIOS CD        isolinux El Torito image            (bios_cd)
#   BIOS disk/USB  isohybrid MBR, ISO = partition 1    (bios_disk)
#   UEFI disk/USB  FAT EFI system partition = MBR partition 2, type 0xef,
#                  holding a standalone GRUB           (uefi_disk)
#   UEFI CD        the same FAT image as El Torito EFI image (uefi_cd)
# There is no initramfs: the kernel mounts this ISO as root and devtmpfs
# on its empty /dev.
#
# Inputs come from the environment (image/image.mk sets them all):
#   ISO                  final path; written as $ISO.tmp, renamed at the end
#   WORK                 scratch directory (staging tree, EFI image, logs)
#   IMAGE_SRC            this directory (templates, rootfs/)
#   KERNEL KERNEL_RELEASE_FILE RESCUE_INIT BUSYBOX E2FSCK
#   ISOLINUX_DIR SYSLINUX_BIOS_DIR GRUB_EFI_DIR  boot loader files
#   SOURCE_DATE_EPOCH    every date, the disk id and the volume UUID
#   V=1                  show the commands
set -eE -o pipefail
umask 022
export LC_ALL=C TZ=UTC

: "${ISO:?}" "${WORK:?}" "${IMAGE_SRC:?}" "${KERNEL:?}" "${KERNEL_RELEASE_FILE:?}"
: "${RESCUE_INIT:?}" "${BUSYBOX:?}" "${E2FSCK:?}" "${SOURCE_DATE_EPOCH:?}"
: "${ISOLINUX_DIR:=/usr/lib/ISOLINUX}"
: "${SYSLINUX_BIOS_DIR:=/usr/lib/syslinux/modules/bios}"
: "${GRUB_EFI_DIR:=/usr/lib/grub/x86_64-efi}"

STAGE=$WORK/staging
TMP_ISO=$ISO.tmp
KERNEL_ON_ISO=/boot/vmlinuz

die() { echo "build-iso.sh: $*" >&2; exit 1; }

# run CMD...: a tool call, echoed with V=1.
run() {
	[ "$V" != 1 ] || echo "  + $*" >&2
	"$@"
}

# A failed or interrupted build leaves no partial ISO; the previous one,
# if any, stays until the new one is complete.
cleanup() { rm -f "$TMP_ISO" "$ISO.sha256.tmp"; }
trap cleanup EXIT
trap 'echo "build-iso.sh: line $LINENO failed: $BASH_COMMAND" >&2' ERR

# ---------------------------------------------------------------------------
# Values derived from SOURCE_DATE_EPOCH.

case $SOURCE_DATE_EPOCH in
'' | *[!0-9]*) die "SOURCE_DATE_EPOCH='$SOURCE_DATE_EPOCH' is not a number of seconds" ;;
esac

# The MBR disk signature, which the kernel shows as PARTUUID=<DISKID>-NN:
# 8 hex digits of sha256("rescue-iso:$SOURCE_DATE_EPOCH"), never 00000000
# (a zero signature means "none" to the kernel and to firmware).
disk_id() {
	local h i id
	h=$(printf 'rescue-iso:%s' "$SOURCE_DATE_EPOCH" | sha256sum | cut -c1-64)
	for i in 0 8 16 24 32 40 48 56; do
		id=${h:$i:8}
		[ "$id" = 00000000 ] || { echo "$id"; return; }
	done
	echo 00000001
}

DISKID=$(disk_id)
KVER=$(cat "$KERNEL_RELEASE_FILE")
[ -n "$KVER" ] || die "$KERNEL_RELEASE_FILE is empty"
# YYYYMMDDhhmmsscc as xorriso wants it; also the ISO volume "UUID"
# (GRUB's --fs-uuid, blkid's UUID) since that is the volume date.
ISO_DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S00)
MARKER=/boot/grub/rescue-$DISKID.id
CMDLINE="root=PARTUUID=$DISKID-01,/dev/sr0 rootfstype=iso9660 rootmarker=$MARKER ro rootwait console=tty0 console=ttyS0,115200"

# fill TEMPLATE OUTPUT: replace the @PLACEHOLDERS@; any left over is a bug.
fill() {
	sed -e "s|@DISKID@|$DISKID|g" -e "s|@KVER@|$KVER|g" \
	    -e "s|@KERNEL@|$KERNEL_ON_ISO|g" -e "s|@CMDLINE@|$CMDLINE|g" \
	    -e "s|@MARKER@|$MARKER|g" "$1" >"$2"
	if grep -n '@[A-Z_]*@' "$2" >&2; then
		die "$1: unknown placeholder"
	fi
}

# ---------------------------------------------------------------------------
# The root filesystem: init, busybox and its applets, e2fsck, /etc.

stage_rootfs() {
	local d applet target

	rm -rf "$STAGE"
	mkdir -p "$STAGE"
	# Empty mount points.  /dev stays empty: the kernel mounts devtmpfs
	# on it before it starts /sbin/init.
	for d in dev proc sys tmp run mnt root bin sbin usr/bin usr/sbin \
	         etc boot; do
		install -d -m 0755 "$STAGE/$d"
	done
	chmod 0700 "$STAGE/root"
	chmod 1777 "$STAGE/tmp"

	install -m 0755 "$RESCUE_INIT" "$STAGE/sbin/init"
	install -m 0755 "$BUSYBOX" "$STAGE/bin/busybox"
	install -m 0755 "$E2FSCK" "$STAGE/sbin/e2fsck"
	for target in fsck.ext2 fsck.ext3 fsck.ext4; do
		ln -s e2fsck "$STAGE/sbin/$target"
	done

	# One symlink per applet at the path busybox itself lists; paths
	# that already exist (/sbin/init, /sbin/e2fsck) keep the real program.
	"$BUSYBOX" --list-full >"$WORK/applets"
	while read -r applet; do
		case $applet in
		'' | /* | *..*) die "odd busybox applet path '$applet'" ;;
		linuxrc) continue ;;	# an initrd's init; there is none
		esac
		target=$STAGE/$applet
		[ ! -e "$target" ] && [ ! -L "$target" ] || continue
		install -d -m 0755 "${target%/*}"
		ln -s /bin/busybox "$target"
	done <"$WORK/applets"

	# /etc and /usr/share from image/rootfs; modes normalised (git keeps
	# only the x bit), owners are set to root by xorriso.
	(cd "$IMAGE_SRC/rootfs" && find . -mindepth 1 | sort) | while read -r f; do
		if [ -d "$IMAGE_SRC/rootfs/$f" ]; then
			install -d -m 0755 "$STAGE/$f"
		elif [ -x "$IMAGE_SRC/rootfs/$f" ]; then
			install -m 0755 "$IMAGE_SRC/rootfs/$f" "$STAGE/$f"
		else
			install -m 0644 "$IMAGE_SRC/rootfs/$f" "$STAGE/$f"
		fi
	done
	# /etc is read-only on the ISO: what must change points into tmpfs
	# or procfs.
	ln -s /run/resolv.conf "$STAGE/etc/resolv.conf"
	ln -s /proc/self/mounts "$STAGE/etc/mtab"
	install -d -m 0755 "$STAGE/var"
	ln -s /run "$STAGE/var/run"
	# Debian builds busybox with the udhcpc script in /etc/udhcpc/;
	# upstream's default is /usr/share/udhcpc/.  Serve both.
	install -d -m 0755 "$STAGE/etc/udhcpc"
	ln -s /usr/share/udhcpc/default.script "$STAGE/etc/udhcpc/default.script"

	install -m 0644 "$KERNEL" "$STAGE$KERNEL_ON_ISO"
	printf 'rescue-iso disk id %s, Linux %s\n' "$DISKID" "$KVER" \
		>"$STAGE/boot/release"
}

# ---------------------------------------------------------------------------
# Boot modes.  Each stages its files and sets its xorriso options.

# BIOS CD: isolinux as no-emulation El Torito boot image, menu.c32 on VGA
# and serial.
bios_cd() {
	local dir=$STAGE/boot/isolinux m

	install -d -m 0755 "$dir"
	install -m 0644 "$ISOLINUX_DIR/isolinux.bin" "$dir/"
	for m in ldlinux menu libutil libcom32 chain reboot poweroff; do
		install -m 0644 "$SYSLINUX_BIOS_DIR/$m.c32" "$dir/"
	done
	fill "$IMAGE_SRC/isolinux.cfg.in" "$dir/isolinux.cfg"

	OPTS_BIOS_CD=(
		-b boot/isolinux/isolinux.bin -c boot/isolinux/boot.cat
		-no-emul-boot -boot-load-size 4 -boot-info-table
	)
}

# BIOS disk/USB stick: the ISO written raw.  isohdpfx.bin jumps into
# isolinux.bin; partition 1 (the ISO9660 filesystem, whose PARTUUID is
# <DISKID>-01) starts at 2 KiB block 16 so that it is mountable from
# there.
bios_disk() {
	OPTS_BIOS_DISK=(
		-isohybrid-mbr "$ISOLINUX_DIR/isohdpfx.bin"
		-partition_offset 16
		-partition_cyl_align off
	)
}

# UEFI disk/USB stick: a FAT EFI system partition as MBR partition 2
# (type 0xef) holding /EFI/BOOT/BOOTX64.EFI, a standalone GRUB with only
# the modules it needs and grub-early.cfg embedded.  The menu itself is
# /boot/grub/grub.cfg on the ISO.
GRUB_MODULES=(
	normal configfile echo minicmd         # menu, configfile, exit
	search search_fs_file iso9660          # find the ISO (whole disk or CD)
	serial terminal                        # menu on VGA and serial
	efi_gop linux reboot halt              # the menu entries
)

uefi_disk() {
	local efi=$WORK/BOOTX64.EFI img=$WORK/efi.img kib

	install -d -m 0755 "$STAGE/boot/grub"
	fill "$IMAGE_SRC/grub.cfg.in" "$STAGE/boot/grub/grub.cfg"
	printf 'rescue-iso %s\n' "$DISKID" >"$STAGE$MARKER"
	# GRUB runs the embedded config with its rescue parser, which takes
	# '#' for a command: embed it without comments.
	fill "$IMAGE_SRC/grub-early.cfg.in" "$WORK/grub-early.cfg.full"
	sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' \
		"$WORK/grub-early.cfg.full" >"$WORK/grub-early.cfg"

	rm -f "$efi" "$img"
	run grub-mkimage --format=x86_64-efi --directory="$GRUB_EFI_DIR" \
		--prefix=/boot/grub --config="$WORK/grub-early.cfg" \
		--output="$efi" "${GRUB_MODULES[@]}"

	# FAT12 just big enough for the loader (FATs, root directory and two
	# directories take < 32 KiB); no random volume id or dates
	# (--invariant, -i; mtools takes SOURCE_DATE_EPOCH).
	kib=$(( ($(stat -c %s "$efi") + 1023) / 1024 + 48 ))
	kib=$(( (kib + 15) / 16 * 16 ))
	run mkfs.fat -C --invariant -i "$DISKID" -n RESCUE_EFI -F 12 \
		"$img" "$kib" >/dev/null
	export MTOOLSRC=/dev/null MTOOLS_SKIP_CHECK=1
	run mmd -i "$img" ::/EFI ::/EFI/BOOT
	run mcopy -i "$img" "$efi" ::/EFI/BOOT/BOOTX64.EFI

	OPTS_UEFI_DISK=(-append_partition 2 0xef "$img")
}

# UEFI CD: the same FAT image, referenced (not copied) as El Torito EFI
# boot image.  OVMF also boots this one from a USB stick.
uefi_cd() {
	OPTS_UEFI_CD=(
		-eltorito-alt-boot
		-e --interval:appended_partition_2:all::
		-no-emul-boot
	)
}

# ---------------------------------------------------------------------------

# Dates of the staged tree, so that the ISO's file dates are the epoch.
normalise_tree() {
	find "$STAGE" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
}

# The one xorriso call.  After the mkisofs option list (ended by --), the
# native commands zisofs-compress the programs: the kernel reads them
# through CONFIG_ZISOFS, while the kernel image and the boot loaders'
# files under /boot stay uncompressed for isolinux and GRUB.
make_iso() {
	local log=$WORK/xorriso.log

	rm -f "$TMP_ISO"
	if ! run xorriso -report_about SORRY -abort_on FAILURE \
		-as mkisofs \
		-o "$TMP_ISO" \
		-R -uid 0 -gid 0 \
		-V RESCUE -volset RESCUE -A "rescue-iso $DISKID" \
		-p rescue-iso -publisher rescue-iso -sysid LINUX \
		--modification-date="$ISO_DATE" \
		--set_all_file_dates "$ISO_DATE" \
		"${OPTS_BIOS_CD[@]}" \
		"${OPTS_BIOS_DISK[@]}" \
		"${OPTS_UEFI_DISK[@]}" \
		"${OPTS_UEFI_CD[@]}" \
		"$STAGE" \
		-- \
		-zisofs level=9:block_size=128k \
		-set_filter_r --zisofs /bin /sbin -- \
		>"$log" 2>&1; then
		cat "$log" >&2
		die "xorriso failed"
	fi
	[ "$V" != 1 ] || cat "$log" >&2

	# The MBR disk signature (bytes 440..443, little endian) becomes
	# DISKID; xorriso derives its own from the date.
	printf "\\x${DISKID:6:2}\\x${DISKID:4:2}\\x${DISKID:2:2}\\x${DISKID:0:2}" |
		dd of="$TMP_ISO" bs=1 seek=440 count=4 conv=notrunc status=none
	[ "$(od -An -tx4 -j440 -N4 "$TMP_ISO" | tr -d ' ')" = "$DISKID" ] ||
		die "disk signature not written"
}

finish() {
	local sum size mib aim

	sum=$(sha256sum "$TMP_ISO" | cut -d' ' -f1)
	printf '%s  %s\n' "$sum" "${ISO##*/}" >"$ISO.sha256.tmp"
	size=$(stat -c %s "$TMP_ISO")
	mv -f "$TMP_ISO" "$ISO"
	mv -f "$ISO.sha256.tmp" "$ISO.sha256"

	mib=$(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1048576 }')
	if [ "$size" -le $((8 * 1048576)) ]; then
		aim="within the 8 MiB aim"
	else
		aim="over the 8 MiB aim by $(( (size - 8 * 1048576 + 1023) / 1024 )) KiB"
	fi
	printf '  %-9s %s\n' ISO "$ISO" \
		'' "size    $size bytes, $mib MiB ($aim; kernel $(stat -c %s "$KERNEL") bytes)" \
		'' "sha256  $sum" \
		'' "kernel  $KVER" \
		'' "disk id $DISKID (root=PARTUUID=$DISKID-01,/dev/sr0)" \
		'' "boot    BIOS CD, BIOS disk/USB (isolinux); UEFI CD, UEFI disk/USB (GRUB)"
}

mkdir -p "$WORK"
stage_rootfs
bios_cd
bios_disk
uefi_disk
uefi_cd
normalise_tree
make_iso
finish
