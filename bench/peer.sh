#!/bin/bash
# peer.sh DIR: prepare the benchmark's peer, Debian's stock kernel with the
# initramfs that initramfs-tools generates for it, in the scratch directory
# DIR (normally $(BUILD)/bench/peer).  Leaves DIR/vmlinuz, DIR/initrd.img,
# DIR/version and DIR/stamp; with the stamp present it does nothing.
#
# Nothing is installed on this machine and its /boot and /lib/modules are
# never touched: apt only *downloads* the packages (into DIR/debs, resolving
# dependencies against an empty package database), they are unpacked with
# dpkg-deb into DIR/root, and mkinitramfs runs chrooted there, against the
# modules of the unpacked kernel, exactly as on a Debian system that has the
# packages installed.  No mount, no module load: the chroot gets no /proc,
# only /dev/null and /dev/zero nodes.
set -euo pipefail

# The packages, named in this one place.
#  PEER_PACKAGES: what a Debian user has: the stock kernel and initramfs-tools
#                 (which pulls klibc-utils, kmod, udev) with its recommends
#                 busybox and zstd (the default COMPRESS in bookworm).
#  CHROOT_PACKAGES: the essential tools mkinitramfs and its hooks run with
#                 (Essential: yes packages are never named as dependencies).
PEER_PACKAGES="linux-image-amd64 initramfs-tools busybox zstd"
CHROOT_PACKAGES="base-files base-passwd bash dash coreutils diffutils findutils
	grep gzip sed tar mawk util-linux libc-bin dpkg debianutils cpio"

dir=${1:?usage: peer.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ -e "$dir/stamp" ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "peer.sh: must run as root (chroot, mknod in $dir; nothing outside it)" >&2
	exit 1
fi
log=$dir/peer.log
: >"$log"
say() { printf '  %-9s %s\n' PEER "$*"; }
fail() { echo "peer.sh: $*; see $log" >&2; exit 1; }

# 1. Download the dependency closure as if onto an empty system.
debs=$dir/debs
mkdir -p "$debs/partial" "$dir/apt-state"
: >"$dir/apt-state/status"
say "downloading $PEER_PACKAGES (+ a chroot's essentials) into $debs"
download() {
	# shellcheck disable=SC2086
	apt-get -q -y --download-only --no-install-recommends \
		-o Dir::State::status="$dir/apt-state/status" \
		-o Dir::State::extended_states="$dir/apt-state/extended_states" \
		-o Dir::Cache::archives="$debs" \
		-o Debug::NoLocking=1 \
		install $PEER_PACKAGES $CHROOT_PACKAGES >>"$log" 2>&1
}
# A stale package list names versions the mirror no longer has: update once.
download || { apt-get update -q >>"$log" 2>&1 && download; } ||
	fail "apt-get --download-only failed"

# 2. Unpack into a merged-/usr root, as Debian 12 systems are.
root=$dir/root
rm -rf "$root"
mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/usr/lib64" \
	"$root/dev" "$root/proc" "$root/tmp" "$root/var/tmp" "$root/etc"
for d in bin sbin lib lib64; do
	ln -s "usr/$d" "$root/$d"
done
set -- "$debs"/*.deb
say "unpacking $# packages into $root"
for deb in "$debs"/*.deb; do
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -C "$root" --keep-directory-symlink --no-same-owner \
			--warning=no-timestamp -f - ||
		fail "unpacking $deb failed"
done
chmod 1777 "$root/tmp" "$root/var/tmp"
mknod -m 666 "$root/dev/null" c 1 3
mknod -m 666 "$root/dev/zero" c 1 5
# Maintainer scripts do not run; do by hand what ours need from them.
[ -e "$root/etc/fstab" ] || echo '# empty' >"$root/etc/fstab"
ln -sf /bin/dash "$root/bin/sh"

# 3. The kernel version comes from the unpacked image, not from the host.
version=$(for f in "$root"/boot/vmlinuz-*; do echo "${f##*/vmlinuz-}"; done | sort -V | tail -1)
[ -e "$root/boot/vmlinuz-$version" ] || fail "no vmlinuz-* in the linux-image package"

# 4. depmod and mkinitramfs inside the chroot (as the packages' postinst do).
in_root() {
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		chroot "$root" "$@"
}
say "depmod $version"
in_root /sbin/depmod -a "$version" >>"$log" 2>&1 || fail "depmod failed"
say "mkinitramfs -o /boot/initrd.img-$version (chrooted)"
in_root /usr/sbin/mkinitramfs -o "/boot/initrd.img-$version" "$version" >>"$log" 2>&1 ||
	fail "mkinitramfs failed"

# How big the initramfs is once the kernel has unpacked it into memory.
in_root /bin/sh -c "zstdcat /boot/initrd.img-$version 2>/dev/null || gzip -dc /boot/initrd.img-$version" |
	wc -c >"$dir/initrd-unpacked-bytes"
cp "$root/boot/vmlinuz-$version" "$dir/vmlinuz"
cp "$root/boot/initrd.img-$version" "$dir/initrd.img"
printf '%s\n' "$version" >"$dir/version"
# The versions of what went in, for the results.
for p in linux-image-$version initramfs-tools-core busybox udev klibc-utils; do
	set -- "$debs/${p}_"*.deb
	f=$1
	if [ -e "$f" ]; then
		printf '%s %s\n' "$p" "$(dpkg-deb -f "$f" Version)"
	fi
done >"$dir/packages"
# The unpacked tree (about 500 MB) is no longer needed; the debs stay.
rm -rf "$root"
touch "$dir/stamp"
say "peer ready: Debian $version, vmlinuz $(stat -c %s "$dir/vmlinuz") B, initrd.img $(stat -c %s "$dir/initrd.img") B"
