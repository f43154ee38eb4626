#!/bin/bash
# stage-tools.sh LIST STAGE WORK [FILE...]: put the programs LIST names
# into the staged root filesystem STAGE, each copied from its installed
# Debian package with its shared-library closure, and write the manifest of
# every Debian package whose files the ISO holds (LIST's, their libraries'
# and FILE..., the host files build-iso.sh staged itself).
#
# The closure is what the dynamic loader would load: the ELF interpreter
# (PT_INTERP) and every DT_NEEDED library, recursively, each found as
# ld.so finds it -- ld.so.cache first, then the default directories -- and
# each copied once, to that same path (initramfs-tools' copy_exec, dracut's
# inst_binary).  A program that is not installed stops the build with its
# name and its package.
#
# Also writes /etc/tools.aliases: busybox's shell runs its own applets
# ahead of PATH (FEATURE_SH_STANDALONE), so every applet that has a full
# program here gets an alias to that program; /etc/shrc reads it.  And
# WORK/tools.files, the ISO paths of the files (not links) it staged, from
# which build-iso.sh reports what they take on the ISO.
set -e -o pipefail
umask 022
export LC_ALL=C

LIST=${1:?LIST} STAGE=${2:?STAGE} WORK=${3:?WORK}
shift 3
EXTRA_FILES=("$@")

MULTIARCH=x86_64-linux-gnu
# glibc's own search path after the cache, as Debian builds it.
DEFAULT_LIB_DIRS=("/lib/$MULTIARCH" "/usr/lib/$MULTIARCH" /lib /usr/lib)
MANIFEST=/usr/share/rescue/packages
ALIASES=/etc/tools.aliases
# The ISO's PATH, in order.
ISO_PATH_DIRS=(/sbin /bin /usr/sbin /usr/bin)

# Errors stop the build with one line saying what to do (build-iso.sh
# names the step that failed).
die() { echo "stage-tools.sh: $*" >&2; exit 1; }

declare -A STAGED=()	# ISO path -> host file it came from
declare -A LIB_CACHE=()	# soname -> path, from ld.so.cache
declare -A INTERP_SONAME=()	# the interpreter's soname: always loaded
HOST_FILES=()		# every host file copied, for the manifest

# ---------------------------------------------------------------------------
# The list.

# read_list: "PATH PACKAGE" lines on stdout; the list must be sorted.
read_list() {
	local body
	body=$(grep -v -e '^#' -e '^[[:space:]]*$' "$LIST") ||
		die "$LIST names no program"
	printf '%s\n' "$body" | sort -c 2>/dev/null ||
		die "$LIST is not sorted; run: LC_ALL=C sort it (comments first)"
	printf '%s\n' "$body"
}

# check_program PATH [PACKAGE]: its package, checked to be installed and
# to own PATH.
check_program() {
	local path=$1 pkg=$2 status
	if [ -z "$pkg" ]; then
		pkg=$(dpkg-query -S "$path" 2>/dev/null | sed -n '1s/: .*//p' || true)
		[ -n "$pkg" ] || die "$path: no installed package has it; name its package in $LIST"
	fi
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = "install ok installed" ] ||
		die "$path: package $pkg is not installed (apt-get install $pkg, and keep it in scripts/packages.txt)"
	dpkg-query -L "$pkg" | grep -xF "$path" >/dev/null ||
		die "$path: package $pkg does not ship it (see dpkg -L $pkg)"
	[ -f "$path" ] && [ -x "$path" ] ||
		die "$path: missing although $pkg is installed; reinstall $pkg"
	echo "$pkg"
}

# ---------------------------------------------------------------------------
# Files into the stage.

# is_busybox_link ISO_PATH: the staged path is one of busybox's applet links.
is_busybox_link() {
	[ -L "$STAGE$1" ] && [ "$(readlink "$STAGE$1")" = /bin/busybox ]
}

# make_room ISO_PATH: a busybox applet link there gives way to the full
# program; anything else staged there is a conflict.
make_room() {
	if is_busybox_link "$1"; then
		rm -f "$STAGE$1"
	elif [ -e "$STAGE$1" ] || [ -L "$STAGE$1" ]; then
		die "$1 is already on the ISO (not from busybox); drop it from $LIST"
	fi
}

# put_file ISO_PATH HOST_PATH MODE: HOST_PATH's content (symlinks
# followed) at ISO_PATH, once.
put_file() {
	local iso=$1 host=$2 mode=$3
	[ -z "${STAGED[$iso]}" ] || return 0
	make_room "$iso"
	install -D -m "$mode" "$(readlink -f "$host")" "$STAGE$iso"
	STAGED[$iso]=$host
	HOST_FILES+=("$host")
}

# put_links PROGRAM PACKAGE: the package's other names for PROGRAM
# (symlinks resolving to the same file), as symlinks on the ISO.
put_links() {
	local prog=$1 pkg=$2 real link target
	real=$(readlink -f "$prog")
	while read -r link; do
		[ -L "$link" ] && [ "$link" != "$prog" ] || continue
		[ "$(readlink -f "$link")" = "$real" ] || continue
		case $link in */bin/* | */sbin/*) ;; *) continue ;; esac
		[ -z "${STAGED[$link]}" ] || continue
		# Same directory: a relative link, as Debian has it.
		if [ "${link%/*}" = "${prog%/*}" ]; then
			target=${prog##*/}
		else
			target=$prog
		fi
		make_room "$link"
		install -d -m 0755 "$STAGE${link%/*}"
		ln -s "$target" "$STAGE$link"
		STAGED[$link]=$prog
	done < <(dpkg-query -L "$pkg" | sort)
}

# ---------------------------------------------------------------------------
# Shared libraries, found as ld.so finds them.

load_ld_cache() {
	local soname path
	# "	libc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6";
	# the first entry for a name wins, as in the loader.
	while read -r soname path; do
		[ -n "${LIB_CACHE[$soname]}" ] || LIB_CACHE[$soname]=$path
	done < <(ldconfig -p | sed -n 's/^[[:space:]]*\([^ ]*\) (libc6,x86-64[^)]*) => \(.*\)$/\1 \2/p')
}

# find_lib SONAME NEEDED_BY: the path the loader would open.
find_lib() {
	local soname=$1 dir
	if [ -n "${LIB_CACHE[$soname]}" ] && [ -e "${LIB_CACHE[$soname]}" ]; then
		echo "${LIB_CACHE[$soname]}"
		return
	fi
	for dir in "${DEFAULT_LIB_DIRS[@]}"; do
		[ ! -e "$dir/$soname" ] || { echo "$dir/$soname"; return; }
	done
	die "$2 needs $soname, which is neither in ld.so.cache nor in ${DEFAULT_LIB_DIRS[*]}; install the package that has it"
}

# elf_deps FILE: its interpreter and DT_NEEDED names, one a line
# ("interp PATH" / "needed SONAME"); a RUNPATH/RPATH stops the build, as
# those are not searched here.
elf_deps() {
	local file=$1 dyn
	dyn=$(readelf -d -W "$file" 2>/dev/null) || die "$file: not an ELF file readelf can read"
	if grep -qE '\((RUNPATH|RPATH)\)' <<<"$dyn"; then
		die "$file has an RPATH/RUNPATH, which stage-tools.sh does not follow"
	fi
	readelf -l -W "$file" |
		sed -n 's/.*\[Requesting program interpreter: \(.*\)\]$/interp \1/p'
	sed -n 's/.*(NEEDED).*\[\(.*\)\]$/needed \1/p' <<<"$dyn"
}

soname_of() {
	readelf -d -W "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p'
}

# put_closure FILE: FILE's interpreter and libraries, recursively, once.
put_closure() {
	local queue=("$1") file deps kind name path
	while [ ${#queue[@]} -gt 0 ]; do
		file=${queue[0]}
		queue=("${queue[@]:1}")
		deps=$(elf_deps "$file")
		while read -r kind name; do
			[ -n "$kind" ] || continue
			case $kind in
			interp)
				path=$name
				INTERP_SONAME[$(soname_of "$path")]=1 ;;
			needed)
				# libc needs the interpreter by soname; the loader
				# has it already and does not search for it.
				[ -z "${INTERP_SONAME[$name]}" ] || continue
				path=$(find_lib "$name" "$file") ;;
			esac
			[ -z "${STAGED[$path]}" ] || continue
			put_file "$path" "$path" 0755
			queue+=("$path")
		done <<<"$deps"
	done
}

# ---------------------------------------------------------------------------
# Manifest: "PACKAGE VERSION" for every package owning a copied host file.

# Names dpkg may know a file by on a merged-/usr system (/sbin/x is
# /usr/sbin/x) and through symlinks.
spellings() {
	local p
	for p in "$1" "$(readlink -f "$1")"; do
		echo "$p"
		case $p in
		/usr/*) echo "${p#/usr}" ;;
		*) echo "/usr$p" ;;
		esac
	done
}

write_manifest() {
	local f out pkgs missing=()
	declare -A owner=()

	# One dpkg-query call for all spellings; unknown ones only miss.
	out=$(for f in "${HOST_FILES[@]}" "${EXTRA_FILES[@]}"; do spellings "$f"; done |
		sort -u | xargs -r dpkg-query -S 2>/dev/null | grep -v '^diversion ' || true)
	while IFS= read -r line; do
		# "libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6"
		owner[${line##*: }]=${line%%: *}
	done <<<"$out"

	# Every copied program and library comes from a package; the other
	# files may be the builder's own (a GRUB built here): say so.
	pkgs=$(for f in "${HOST_FILES[@]}" "${EXTRA_FILES[@]}"; do
		local p found=
		for p in $(spellings "$f"); do
			[ -z "${owner[$p]}" ] || { found=${owner[$p]}; break; }
		done
		[ -n "$found" ] || { echo "MISSING $f"; continue; }
		echo "${found%%:*}"
	done | sort -u)
	for f in $(sed -n 's/^MISSING //p' <<<"$pkgs"); do
		printf '%s\n' "${HOST_FILES[@]}" | grep -xF "$f" >/dev/null &&
			die "no Debian package owns $f"
		printf '  %-9s %s\n' TOOLS "not from a Debian package, not in the manifest: $f"
	done
	pkgs=$(grep -v '^MISSING ' <<<"$pkgs" || true)
	install -d -m 0755 "$STAGE${MANIFEST%/*}"
	# shellcheck disable=SC2086
	dpkg-query -W -f='${Package} ${Version}\n' $pkgs | sort >"$STAGE$MANIFEST"
	cp "$STAGE$MANIFEST" "$WORK/packages"
}

# ---------------------------------------------------------------------------

# write_aliases: "alias NAME=PATH" for each busybox applet that a full
# program on the ISO's PATH shadows.
write_aliases() {
	local applet dir
	{
		echo "# Generated by image/stage-tools.sh: busybox's shell runs its applets"
		echo "# ahead of PATH; these names run the full programs instead."
		"$STAGE/bin/busybox" --list | sort | while read -r applet; do
			[ "$applet" != busybox ] || continue
			for dir in "${ISO_PATH_DIRS[@]}"; do
				[ -e "$STAGE$dir/$applet" ] || [ -L "$STAGE$dir/$applet" ] || continue
				is_busybox_link "$dir/$applet" && break
				echo "alias $applet=$dir/$applet"
				break
			done
		done
	} >"$STAGE$ALIASES"
}

main() {
	local list path pkg nprog=0 kib

	list=$(read_list)
	load_ld_cache
	while read -r path pkg; do
		pkg=$(check_program "$path" "$pkg")
		put_file "$path" "$path" 0755
		put_links "$path" "$pkg"
		put_closure "$path"
		nprog=$((nprog + 1))
	done <<<"$list"
	write_aliases
	write_manifest

	for path in "${!STAGED[@]}"; do
		[ -L "$STAGE$path" ] || echo "$path"
	done | sort >"$WORK/tools.files"
	kib=$(sed "s|^|$STAGE|" "$WORK/tools.files" | xargs -d '\n' stat -c %s |
		awk '{ s += $1 } END { printf "%d", (s + 1023) / 1024 }')
	printf '  %-9s %s\n' TOOLS "$nprog programs from $LIST, ${#STAGED[@]} files, $kib KiB before zisofs" \
		'' "manifest $MANIFEST on the ISO ($(wc -l <"$STAGE$MANIFEST") packages), copy in $WORK/packages"
}

main
