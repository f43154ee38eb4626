#!/bin/bash
# The build cache's promises (make check-cache; scripts/cache.mk).
#
#   cache.sh BUILD SCRATCH LOGDIR
#
# Each clone is a copy of the working tree in a directory of its own under
# SCRATCH (never the checkout), built with its own O=; the caller exports
# SOURCE_DATE_EPOCH and KERNEL_EPOCH as the top make has them, and
# RESCUE_CACHE.  BUILD's ISO was built by `make` with that cache, so the
# cache holds every object of its kernel.
# 0. The test fixtures' cache: a hit builds nothing, a fixture changed by
#    hand or cut off is built again, old and surplus entries are pruned.
# 1. A fresh clone elsewhere builds its kernel from the cache alone: no
#    compiler cache miss, and an ISO byte-identical to BUILD's (cold when
#    BUILD's kernel was built with an empty cache: cold equals warm).
#    How long its `make` took is in the log (the budget is 4 minutes).
# 2. A cache that cannot be made: a warning that names it, a kernel rebuilt
#    without the cache, and the same ISO.
# 3. A full cache (less free space than RESCUE_CACHE_MIN_FREE): the same.
# 4. Only with CACHE_COLD=1 (make check-cache-cold, a full kernel build):
#    a clone with RESCUE_CACHE= (no cache at all) gives the same ISO.
set -uo pipefail

build=$(realpath "$1") scratch=$2 logdir=$3
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/lib.sh
. "$top/tests/lib.sh"
suite_init cache "$logdir"
: "${SOURCE_DATE_EPOCH:?}" "${KERNEL_EPOCH:?}"
export SOURCE_DATE_EPOCH KERNEL_EPOCH

rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(realpath "$scratch")
want=$(sha256sum <"$build/rescue.iso" | cut -d' ' -f1)

# 0. The test fixtures' cache (tests/fixture_cache.py): each of its unit
# tests, on small fixtures in a scratch cache.
fixtures_out=$scratch/fixture-cache.out
python3 "$top/tests/fixture_cache_test.py" "$scratch/fixture-cache" >"$fixtures_out" 2>&1
cat "$fixtures_out" >>"$log"
while read -r name verdict; do
	case $verdict in
	ok) pass "fixture cache: $name" ;;
	*) fail "fixture cache: $name ($verdict)" ;;
	esac
done < <(sed -n 's/^\(test_[a-z_]*\) (.*) \.\.\. \(.*\)$/\1 \2/p' "$fixtures_out")
grep -q '^OK$' "$fixtures_out" || fail "fixture cache: the unit tests did not all run and pass"

cache=${RESCUE_CACHE:-}
if [ -z "$cache" ]; then
	echo "cache: RESCUE_CACHE is empty (no usable build cache): no build cache to test" | tee -a "$log"
	finish
fi

# clone NAME: a fresh copy of the source tree in SCRATCH/NAME/src.
clone() { copy_source "$top" "$scratch/$1/src"; }
# make_in NAME VAR=VALUE...: `make iso` in that clone, its output in
# SCRATCH/NAME/make.out and the log.
make_in() {
	local name=$1 status
	shift
	echo "\$ make -C $scratch/$name/src O=$scratch/$name/build $* iso" >>"$log"
	# As a user would type it: not as a sub-make of this make check, whose
	# verdict on the cache would be taken over.
	env -u RESCUE_CACHE_CHECKED -u RESCUE_CACHE_USABLE -u MAKEFLAGS -u MAKELEVEL \
		make --no-print-directory -C "$scratch/$name/src" O="$scratch/$name/build" "$@" iso \
		>"$scratch/$name/make.out" 2>&1
	status=$?
	cat "$scratch/$name/make.out" >>"$log"
	return $status
}
iso_of() { sha256sum <"$scratch/$1/build/rescue.iso" 2>/dev/null | cut -d' ' -f1; }
# The clone's last kernel build's ccache stats log (scripts/kernel.mk).
stats() { echo "$scratch/$1/build/kernel/ccache-stats.log"; }
# count STATS WORD: how many WORD lines the ccache stats log STATS has.
count() { grep -cx "$2" "$1" 2>/dev/null; }
# missed STATS: the files that ccache missed.
missed() { awk '/^# /{ f = $2 } /^cache_miss$/{ print f }' "$1"; }

# 1. A fresh clone in another directory, warm cache.
clone warm || { fail "copy the source tree"; finish; }
t=$(date +%s)
make_in warm
status=$? seconds=$(($(date +%s) - t))
echo "warm clone: make iso exit $status after $seconds s" | tee -a "$log"
warm_stats=$scratch/warm.ccache-stats.log
cp "$(stats warm)" "$warm_stats" 2>>"$log"
hits=$(($(count "$warm_stats" direct_cache_hit) + $(count "$warm_stats" preprocessed_cache_hit)))
misses=$(count "$warm_stats" cache_miss)
if [ "$status" = 0 ] && [ "$hits" -gt 1000 ] && [ "$misses" = 0 ]; then
	pass "a fresh clone elsewhere compiled its kernel from the cache ($hits hits, 0 misses, make in $seconds s)"
else
	echo "ccache missed: $(missed "$warm_stats" | tr '\n' ' ')" >>"$log"
	fail "a fresh clone elsewhere: make exit $status, $hits ccache hits, ${misses:-?} misses (want 0)"
fi
got=$(iso_of warm)
check "its ISO is byte-identical to $build/rescue.iso (sha256 ${want:0:16}...)" \
	test "$got" = "$want"

# rebuild_without NAME WHY VAR=VALUE...: after a change to the kernel's
# settings stamp (the bzImage is relinked, its built-in cpio compiled),
# `make iso` with the cache made unusable by VAR=VALUE must warn WHY, build
# without the cache and give the same ISO.
rebuild_without() {
	local name=$1 why=$2 out
	shift 2
	touch "$scratch/warm/build/stamps/kernel-configured"
	if ! make_in warm "$@"; then
		fail "$name: make failed instead of building without the cache"
		return
	fi
	out=$scratch/warm/make.out
	if ! grep -q "^warning: RESCUE_CACHE=.* $why" "$out"; then
		fail "$name: no warning \"$why\" in make's output"
	elif ! grep -q '^  CCACHE    off' "$out" || [ -e "$(stats warm)" ]; then
		fail "$name: the kernel was not rebuilt, or was rebuilt through the cache"
	elif [ "$(iso_of warm)" != "$want" ]; then
		fail "$name: the ISO differs from $build/rescue.iso"
	else
		pass "$name: a warning ($(grep -m1 '^warning: RESCUE_CACHE' "$out")), the kernel rebuilt without the cache, the same ISO"
	fi
}

# 2. A cache directory that cannot be made (not even root can mkdir in
# /proc).
rebuild_without "an unusable cache" "cannot be made" RESCUE_CACHE=/proc/rescue-iso-cache

# 3. A full cache: less free space than the build needs.
free=$(df -Pm "$cache" | awk 'NR == 2 { print $4 }')
RESCUE_CACHE_MIN_FREE=$((free + 1024)) rebuild_without "a full cache" "is full" \
	RESCUE_CACHE="$cache"

# 4. Cold: no cache at all, a whole kernel build.
if [ "${CACHE_COLD:-0}" = 1 ]; then
	clone cold || { fail "copy the source tree"; finish; }
	t=$(date +%s)
	make_in cold RESCUE_CACHE=
	status=$?
	echo "cold clone: make iso exit $status after $(($(date +%s) - t)) s" | tee -a "$log"
	check "a clone built with no cache (RESCUE_CACHE=) gives the same ISO" \
		test "$status" = 0 -a "$(iso_of cold)" = "$want"
fi

# The clones hold a kernel tree each (about 3 GB): gone when all passed.
[ "$failed" -gt 0 ] || rm -rf "$scratch"
finish
