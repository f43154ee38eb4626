#!/bin/sh
# cache.sh DIR: print DIR when it can serve as the build cache (RESCUE_CACHE),
# nothing when it cannot.  A cache that cannot be used is never an error:
# the build goes on without it, and a warning says why and what to do.
#
# Usable means: DIR exists or can be made, is writable by this user, and its
# file system has at least RESCUE_CACHE_MIN_FREE MiB free (default 1024, the
# size of one kernel's compiler cache with room to spare); below that the
# cache counts as full.  An empty DIR means the cache is off: no output, no
# warning.
set -u

dir=${1:-}
min_free=${RESCUE_CACHE_MIN_FREE:-1024}
[ -n "$dir" ] || exit 0

off() {
	echo "warning: RESCUE_CACHE=$dir $*; building without the cache" >&2
	echo "  (set RESCUE_CACHE=<another directory>, or RESCUE_CACHE= to turn the cache off)" >&2
	exit 0
}

case $dir in
/*) ;;
*) off "is not an absolute path" ;;
esac
err=$(mkdir -p "$dir" 2>&1) || off "cannot be made: ${err#mkdir: }"
[ -d "$dir" ] || off "is not a directory"
probe=$(mktemp "$dir/.write-test.XXXXXX" 2>/dev/null) || off "is not writable by $(id -un)"
rm -f "$probe"
free=$(df -Pm "$dir" 2>/dev/null | awk 'NR == 2 { print $4 }')
case $free in
'' | *[!0-9]*) off "has a file system whose free space df cannot tell" ;;
esac
[ "$free" -ge "$min_free" ] ||
	off "is full: $free MiB free, less than RESCUE_CACHE_MIN_FREE=$min_free MiB"
printf '%s\n' "$dir"
