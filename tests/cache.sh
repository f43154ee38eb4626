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
# 0. The cache's entries: a hit builds nothing, a fixture changed by hand
#    or cut off is built again, old and surplus entries are pruned; a
#    changed kernel entry is not restored.
# 1. A fresh clone elsewhere takes its kernel's products from the cache:
#    it extracts and compiles nothing, and its ISO is byte-identical to
#    BUILD's.  How long its `make` took is in the log (the budget is 4
#    minutes).
# 2. A cache that cannot be made: a warning that names it, the ISO made
#    again without the cache, the same.
# 3. A full cache (less free space than RESCUE_CACHE_MIN_FREE): the same.
# Only with CACHE_COLD=1 (make check-cache-cold: two kernel builds):
# 4. A config fragment with one more comment (a new key, the same objects):
#    a clone elsewhere compiles its kernel through ccache, with at most 2%
#    misses, and gives the same ISO.
# 5. A clone with RESCUE_CACHE= (no cache at all: cold) gives the same ISO
#    as BUILD's (warm).
set -uo pipefail

build=$(realpath "$1") scratch=$2 logdir=$3
top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/lib.sh
. "$top/tests/lib.sh"
suite_init cache "$logdir"
export_epochs

rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(realpath "$scratch")
want=$(sha256sum <"$build/rescue.iso" | cut -d' ' -f1)

# 0. The cache's entries (scripts/cache_entry.py; the test fixtures and the
# kernel's products): each of its unit tests, on small entries in a scratch
# cache.
entries_out=$scratch/cache-entries.out
python3 "$top/tests/cache_entry_test.py" "$scratch/cache-entries" >"$entries_out" 2>&1
cat "$entries_out" >>"$log"
while read -r name verdict; do
	case $verdict in
	ok) pass "cache entries: $name" ;;
	*) fail "cache entries: $name ($verdict)" ;;
	esac
done < <(sed -n 's/^\(test_[a-z_]*\) (.*) \.\.\. \(.*\)$/\1 \2/p' "$entries_out")
grep -q '^OK$' "$entries_out" || fail "cache entries: the unit tests did not all run and pass"

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
# timed_make NAME VAR=VALUE...: make_in, its exit status in $status and its
# seconds in $seconds and the log.
timed_make() {
	local t
	t=$(date +%s)
	make_in "$@"
	status=$? seconds=$(($(date +%s) - t))
	echo "$1 clone: make iso exit $status after $seconds s" | tee -a "$log"
}

# 1. A fresh clone in another directory, warm cache: the kernel's products
# come from the cache; no tree is extracted, nothing compiled.
clone warm || { fail "copy the source tree"; finish; }
timed_make warm
out=$scratch/warm/make.out
if [ "$status" = 0 ] && grep -q '^  KERNEL    from the cache: ' "$out" &&
	[ ! -e "$scratch/warm/build/linux-src" ] && [ ! -e "$(stats warm)" ]; then
	pass "a fresh clone elsewhere took its kernel from the cache, extracted and compiled nothing (make in $seconds s)"
else
	fail "a fresh clone elsewhere: make exit $status; want its kernel from the cache, no linux-src, no compiler run ($(grep -m1 '^  KERNEL' "$out"))"
fi
got=$(iso_of warm)
check "its ISO is byte-identical to $build/rescue.iso (sha256 ${want:0:16}...)" \
	test "$got" = "$want"

# cache_refused NAME WHY VAR=VALUE...: with the cache made unusable by
# VAR=VALUE, `make iso` (the ISO made again) must warn WHY, take nothing
# from the cache and give the same ISO.
cache_refused() {
	local name=$1 why=$2 out
	shift 2
	rm -f "$scratch/warm/build/rescue.iso"
	if ! make_in warm "$@"; then
		fail "$name: make failed instead of building without the cache"
		return
	fi
	out=$scratch/warm/make.out
	if ! grep -q "^warning: RESCUE_CACHE=.* $why" "$out"; then
		fail "$name: no warning \"$why\" in make's output"
	elif grep -q 'from the cache' "$out"; then
		fail "$name: something was taken from the cache"
	elif [ "$(iso_of warm)" != "$want" ]; then
		fail "$name: the ISO differs from $build/rescue.iso"
	else
		pass "$name: a warning ($(grep -m1 '^warning: RESCUE_CACHE' "$out")), the ISO made without the cache, the same"
	fi
}

# 2. A cache directory that cannot be made (not even root can mkdir in
# /proc).
cache_refused "an unusable cache" "cannot be made" RESCUE_CACHE=/proc/rescue-iso-cache

# 3. A full cache: less free space than the build needs.
free=$(df -Pm "$cache" | awk 'NR == 2 { print $4 }')
RESCUE_CACHE_MIN_FREE=$((free + 1024)) cache_refused "a full cache" "is full" \
	RESCUE_CACHE="$cache"

if [ "${CACHE_COLD:-0}" = 1 ]; then
	# 4. New kernel inputs that change no object (a comment added to a
	# config fragment): a new key, so a clone elsewhere builds the kernel,
	# and its compiler calls hit ccache.  tools/build passes objtool's
	# object path to the preprocessor as -Wp,-MT,/abs/path, which ccache
	# hashes as given: those 22 files miss in every new directory.
	clone comment || { fail "copy the source tree"; finish; }
	first=$(ls "$scratch/comment/src/configs/"*.config | head -n1)
	echo "# a comment: a new kernel key, the same objects" >>"$first"
	timed_make comment
	cp "$(stats comment)" "$scratch/comment.ccache-stats.log" 2>>"$log"
	hits=$(($(count "$(stats comment)" direct_cache_hit) + $(count "$(stats comment)" preprocessed_cache_hit)))
	misses=$(count "$(stats comment)" cache_miss)
	echo "ccache missed: $(missed "$(stats comment)" | tr '\n' ' ')" >>"$log"
	if [ "$status" = 0 ] && [ "$hits" -gt 1000 ] && [ "${misses:-0}" -le $((hits / 50)) ] &&
		[ "$(iso_of comment)" = "$want" ]; then
		pass "new kernel inputs, the same objects: a clone elsewhere compiled through ccache ($hits hits, $misses misses, make in $seconds s), the same ISO"
	else
		fail "new kernel inputs, the same objects: make exit $status, $hits ccache hits, ${misses:-?} misses (want at most 2%), or another ISO"
	fi

	# 5. Cold: no cache at all, a whole kernel build.
	clone cold || { fail "copy the source tree"; finish; }
	timed_make cold RESCUE_CACHE=
	check "a clone built with no cache (RESCUE_CACHE=) gives the same ISO" \
		test "$status" = 0 -a "$(iso_of cold)" = "$want"
fi

# The clones hold a kernel tree each (about 3 GB): gone when all passed.
[ "$failed" -gt 0 ] || rm -rf "$scratch"
finish
