#!/bin/bash
# Prepare the kernel source tree: Debian's linux-source tarball, extracted,
# then the patches/ series applied with zero fuzz.
#
#   linux-source.sh extract TARBALL DIR   extract TARBALL into DIR (replaced)
#   linux-source.sh patch TARBALL DIR PATCH...
#                                         apply the series to a pristine DIR;
#                                         a DIR that was patched before is
#                                         extracted anew first
#
# Files a patch touches get a fresh mtime so that an out-of-tree build sees
# them change, also when a later series no longer touches them (their
# pristine copies carry the tarball's old mtime).
set -euo pipefail

PATCHED_LIST=.rescue-patched-files

die() { echo "error: $*" >&2; exit 1; }

extract() {
	local tarball=$1 dir=$2
	[ -f "$tarball" ] || die "$tarball is missing: it comes from the Debian package linux-source-6.1 (apt-get install linux-source)"
	rm -rf "$dir.new"
	mkdir -p "$dir.new"
	tar -xf "$tarball" -C "$dir.new" --strip-components=1 ||
		die "cannot extract $tarball"
	rm -rf "$dir"
	mv "$dir.new" "$dir"
}

# Paths (relative to the tree) that a patch file modifies.
patched_files() {
	sed -n 's|^+++ b/||p' "$@" | sort -u
}

apply_one() {
	local dir=$1 p=$2 out
	# Dry run first so a patch that does not apply leaves no half-applied
	# files behind; --fuzz=0: context must match exactly.
	if ! out=$(patch -d "$dir" -p1 -N --fuzz=0 --dry-run <"$p" 2>&1); then
		echo "error: patch $(basename "$p") does not apply cleanly to the kernel tree:" >&2
		echo "$out" | sed 's/^/  /' >&2
		echo "  (fix or refresh $(basename "$p"); the series is applied with zero fuzz)" >&2
		return 1
	fi
	patch -d "$dir" -p1 -N --fuzz=0 --no-backup-if-mismatch -s <"$p" ||
		die "patch $(basename "$p") failed after a clean dry run"
}

series() {
	local tarball=$1 dir=$2 p old=
	shift 2
	if [ -e "$dir/$PATCHED_LIST" ]; then
		old=$(cat "$dir/$PATCHED_LIST")
		extract "$tarball" "$dir"
	fi
	# Written before the first patch: a tree with this file is never
	# taken as pristine again, and the list survives a failed run.
	{ [ -z "$old" ] || echo "$old"; [ $# -eq 0 ] || patched_files "$@"; } |
		sort -u >"$dir/$PATCHED_LIST"
	for p in "$@"; do
		apply_one "$dir" "$p" || exit 1
		echo "  PATCH     $(basename "$p")"
	done
	(cd "$dir" && xargs -r touch -c -- <"$PATCHED_LIST")
}

case ${1:-} in
extract) shift; extract "$@" ;;
patch) shift; series "$@" ;;
*) die "usage: $0 extract TARBALL DIR | patch TARBALL DIR PATCH..." ;;
esac
