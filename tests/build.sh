#!/bin/bash
# The build's promises about the ISO (make check-build).
#
#   build.sh BUILD SCRATCH LOGDIR
#
# Runs in a copy of the source tree (the checkout is never touched) with its
# own O= directory, seeded with BUILD's kernel, stamps and settings (mtimes
# kept, so make sees the kernel as built: no second kernel build). The
# caller exports SOURCE_DATE_EPOCH and KERNEL_EPOCH as the top make has
# them. There, `make iso`:
# 1. builds an ISO byte-identical to BUILD's, later and in another
#    directory (reproducibility: no path or time leaks into it);
# 2. writes the checksum again when it was deleted;
# 3. writes it again when the ISO is newer than it (a build interrupted
#    between the ISO and its checksum);
# 4. rebuilds the ISO when a file under image/rootfs is deleted, and the
#    file is gone from the ISO;
# 5. rebuilds it when a file's mode changes, and the ISO has the new mode;
# 6. rebuilds it when a host boot loader file changes (a package update);
# 7. does nothing the second time (no-op make);
# 8. stores busybox, which every boot runs, as it is, and the other
#    programs zisofs-compressed.
set -uo pipefail

build=$(realpath "$1") scratch=$2 logdir=$3
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/lib.sh
. "$top/tests/lib.sh"
suite_init build "$logdir"
export_epochs

rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(realpath "$scratch")
src=$scratch/src out=$scratch/build iso=$scratch/build/rescue.iso

make_iso() { run make --no-print-directory -C "$src" O="$out" "$@" iso; }
inode() { stat -c %i "$1" 2>/dev/null; }
# on_iso PATH: the ISO's `ls -l`-style line for PATH, empty when absent.
on_iso() {
	xorriso -indev "$iso" -lsdl "$1" 2>/dev/null | grep -v '^$' | tail -n 1
}

# stored PATH: "BYTES SIZE", the bytes PATH's data takes on BUILD's ISO
# (whole 2 KiB blocks) and the file's size.
stored() {
	xorriso -indev "$build/rescue.iso" -find "$1" -exec report_lba -- 2>/dev/null |
		awk -F' *, *' '/^File data lba:/ { print $3 * 2048, $4 }'
}

# The source tree, then BUILD's kernel products, stamps and settings, mtimes
# kept.
copy_source "$top" "$src" || { fail "copy the source tree to $src"; finish; }
mkdir -p "$out"
(cd "$build" && find . -maxdepth 1 -type f ! -name '*.iso*' -print0 |
	tar --null -T - -cf - stamps kernel-products) | tar -xpf - -C "$out" ||
	{ fail "seed $out with $build's kernel"; finish; }

# 1. Reproducible in another directory, at another time.
make_iso
if [ -f "$iso" ] && cmp -s "$iso" "$build/rescue.iso"; then
	pass "an ISO built later in $out is byte-identical to $build/rescue.iso"
else
	run cmp "$iso" "$build/rescue.iso"
	fail "the ISO built in $out differs from $build/rescue.iso (or was not built)"
fi
check "no kernel was built in the scratch tree" test ! -e "$out/linux-src"

# 2. A deleted checksum is made again.
rm -f "$iso.sha256"
make_iso
check "a deleted rescue.iso.sha256 is made again and matches" \
	run sh -c "cd '$out' && sha256sum -c rescue.iso.sha256"

# 3. An ISO newer than its checksum (an interrupted build) gets a new one.
cp "$iso" "$iso.orig"
printf 'x' | dd of="$iso" bs=1 seek=40000 conv=notrunc status=none
touch "$iso"
make_iso
check "a checksum older than the ISO is made again and matches" \
	run sh -c "cd '$out' && sha256sum -c rescue.iso.sha256"
mv -f "$iso.orig" "$iso"
touch "$iso"
make_iso

# 4. Deleting a file under image/rootfs rebuilds the ISO without it.
victim=$(cd "$src/image/rootfs" && find . -type f | LC_ALL=C sort | head -n 1)
victim=${victim#.}
before=$(inode "$iso")
run rm "$src/image/rootfs$victim"
make_iso
if [ "$(inode "$iso")" != "$before" ] && [ -z "$(on_iso "$victim")" ]; then
	pass "deleting image/rootfs$victim rebuilds the ISO without it"
else
	fail "deleting image/rootfs$victim: ISO not rebuilt, or $victim still on it ($(on_iso "$victim"))"
fi
cp -p "$top/image/rootfs$victim" "$src/image/rootfs$victim"

# 5. A mode change rebuilds the ISO with the new mode.
run chmod 0644 "$src/image/rootfs$victim"
make_iso
before=$(inode "$iso")
run chmod 0755 "$src/image/rootfs$victim"
make_iso
line=$(on_iso "$victim")
echo "ISO: $line" >>"$log"
if [ "$(inode "$iso")" != "$before" ] && [ "${line:0:10}" = "-rwxr-xr-x" ]; then
	pass "chmod +x image/rootfs$victim rebuilds the ISO with mode 0755"
else
	fail "chmod +x image/rootfs$victim: ISO not rebuilt or mode not 0755 ($line)"
fi

# 6. A changed host boot loader file (isolinux's hybrid MBR) rebuilds it.
loaders=$scratch/isolinux
run cp -rp /usr/lib/ISOLINUX "$loaders"
make_iso ISOLINUX_DIR="$loaders"
before=$(inode "$iso")
run touch "$loaders/isohdpfx.bin"
make_iso ISOLINUX_DIR="$loaders"
check "an updated isohdpfx.bin on the host rebuilds the ISO" \
	test "$(inode "$iso")" != "$before"

# 7. Nothing to do the second time.
before=$(inode "$iso")
make_iso ISOLINUX_DIR="$loaders"
check "a second make iso rebuilds nothing" test "$(inode "$iso")" = "$before"

# 8. busybox is read from the disc as it is (inflating it under TCG took
# most of the time from init to the prompt); e2fsck, like the tools, is
# zisofs-compressed.
read -r bb_bytes bb_size <<<"$(stored /bin/busybox)"
read -r fsck_bytes fsck_size <<<"$(stored /sbin/e2fsck)"
echo "busybox: $bb_bytes bytes on the ISO for $bb_size; e2fsck: $fsck_bytes for $fsck_size" >>"$log"
if [ "${bb_bytes:-0}" -ge "${bb_size:-1}" ] && [ "${fsck_bytes:-0}" -gt 0 ] &&
	[ "$fsck_bytes" -lt "$fsck_size" ]; then
	pass "busybox is stored uncompressed, e2fsck zisofs-compressed"
else
	fail "busybox takes ${bb_bytes:-?} bytes on the ISO for ${bb_size:-?} (want uncompressed), e2fsck ${fsck_bytes:-?} for ${fsck_size:-?} (want compressed)"
fi

finish
