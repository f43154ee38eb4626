#!/bin/bash
# Kernel config and patch-series tests (make check-kconfig).
#
#   kconfig.sh TARBALL PATCHED_SRC SCRATCH LOGDIR PATCHDIR CONFIGDIR
#
# 1. the patched tree + our fragments gives DEVTMPFS=y, DEVTMPFS_MOUNT=y,
#    though no fragment names them;
# 2. the same alldefconfig on the unpatched tarball leaves both unset;
# 3. the series applies with zero fuzz, and a broken copy of a patch stops
#    the apply step with the patch's name;
# 4. the fragment check fails on a symbol that cannot be set, on one that
#    does not exist (in a "=y" and in an "is not set" line), and on a
#    fragment that names DEVTMPFS; when two fragments set one symbol, the
#    last one wins and only it is checked;
# 5. make redoes the steps whose inputs went away: deleting or renaming a
#    patch re-extracts and re-patches the tree (on a small tarball), and
#    deleting a fragment redoes the config.
set -uo pipefail

tarball=$1 src=$2 scratch=$3 logdir=$4 patchdir=$5 configdir=$6
top=$(cd "$(dirname "$0")/.." && pwd)
linux_source=$top/scripts/linux-source.sh
check_config=$top/scripts/check-config.sh
log=$logdir/kconfig.log
passed=0 failed=0

mkdir -p "$logdir"
rm -rf "$scratch"
mkdir -p "$scratch"
: >"$log"

pass() { passed=$((passed + 1)); echo "PASS kconfig: $1" | tee -a "$log"; }
fail() { failed=$((failed + 1)); echo "FAIL kconfig: $1 (log: $log)" | tee -a "$log"; }
run() { echo "\$ $*" >>"$log"; "$@" >>"$log" 2>&1; }

# alldefconfig SRC OUT FRAGMENT...: configure SRC into OUT from fragments.
alldefconfig() {
	local s=$1 out=$2
	shift 2
	mkdir -p "$out"
	cat "$@" >"$out/fragments.config"
	run make -s -C "$s" O="$out" alldefconfig \
		KCONFIG_ALLCONFIG="$out/fragments.config"
}

# value SYMBOL DOTCONFIG: y/m/string, or n when unset or absent.
value() {
	local v
	v=$(sed -n "s/^$1=//p" "$2")
	echo "${v:-n}"
}

# devtmpfs_of NAME: d and m become DEVTMPFS and DEVTMPFS_MOUNT of
# $scratch/NAME/.config.
devtmpfs_of() {
	d=$(value CONFIG_DEVTMPFS "$scratch/$1/.config")
	m=$(value CONFIG_DEVTMPFS_MOUNT "$scratch/$1/.config")
	echo "$1: DEVTMPFS=$d DEVTMPFS_MOUNT=$m" >>"$log"
}

# rejects PATTERN DOTCONFIG FRAGMENT...: the config check fails and says
# PATTERN; rc is its exit status, out what it said.
rejects() {
	local pattern=$1
	shift
	out=$("$check_config" "$src" "$@" 2>&1)
	rc=$?
	echo "$out" >>"$log"
	[ $rc -ne 0 ] && grep -q "$pattern" <<<"$out"
}

fragments=("$configdir"/*.config)
patches=("$patchdir"/*.patch)

# --- 1 ---------------------------------------------------------------------
t=patched-defaults
if grep -n DEVTMPFS "${fragments[@]}" >>"$log"; then
	fail "$t: a fragment names DEVTMPFS"
elif ! alldefconfig "$src" "$scratch/patched" "${fragments[@]}"; then
	fail "$t: alldefconfig failed on the patched tree"
else
	devtmpfs_of patched
	if [ "$d" = y ] && [ "$m" = y ] &&
		run "$check_config" "$src" "$scratch/patched/.config" "${fragments[@]}"; then
		pass "$t: DEVTMPFS=y DEVTMPFS_MOUNT=y, no fragment names them"
	else
		fail "$t: DEVTMPFS=$d DEVTMPFS_MOUNT=$m, or the fragment check failed"
	fi
fi

# --- 2 ---------------------------------------------------------------------
t=vanilla-defaults
vanilla=$scratch/vanilla-src
if ! run "$linux_source" extract "$tarball" "$vanilla"; then
	fail "$t: cannot extract $tarball"
elif ! alldefconfig "$vanilla" "$scratch/vanilla" "${fragments[@]}"; then
	fail "$t: alldefconfig failed on the unpatched tree"
else
	devtmpfs_of vanilla
	if [ "$d" = n ] && [ "$m" = n ]; then
		pass "$t: without the patches both stay unset"
	else
		fail "$t: without the patches DEVTMPFS=$d DEVTMPFS_MOUNT=$m"
	fi
fi

# --- 3 ---------------------------------------------------------------------
# A scratch tree holding only the files the series touches.
small_tree() {
	local dir=$1 f
	rm -rf "$dir"
	mkdir -p "$dir"
	sed -n 's|^+++ b/|linux-source-6.1/|p' "${patches[@]}" | sort -u >"$dir.files"
	tar -xf "$tarball" -C "$dir" --strip-components=1 -T "$dir.files"
}

t=series-applies
small_tree "$scratch/apply-ok"
if run "$linux_source" patch "$tarball" "$scratch/apply-ok" "${patches[@]}"; then
	pass "$t: ${#patches[@]} patches apply with zero fuzz"
else
	fail "$t: the series does not apply with zero fuzz"
fi

t=broken-patch-named
victim=${patches[-1]}
name=$(basename "$victim")
mkdir -p "$scratch/broken-patches"
cp "${patches[@]}" "$scratch/broken-patches/"
# Change the first context line of the first hunk: the patch then no longer
# matches the tree and --fuzz=0 must refuse it.
awk 'done == 0 && hunk && /^ / { sub(/^ /, " BROKEN "); done = 1 }
	/^@@/ { hunk = 1 } { print }' "$victim" >"$scratch/broken-patches/$name"
target=$(sed -n 's|^+++ b/||p' "$victim" | head -n1)
small_tree "$scratch/apply-broken"
out=$("$linux_source" patch "$tarball" "$scratch/apply-broken" \
	"$scratch"/broken-patches/*.patch 2>&1)
rc=$?
echo "$out" >>"$log"
if cmp -s "$victim" "$scratch/broken-patches/$name"; then
	fail "$t: could not break a copy of $name"
elif [ $rc -ne 0 ] && grep -q "error: patch $name" <<<"$out" &&
	grep -q "$target" <<<"$out"; then
	pass "$t: a broken $name stops the apply step, naming it and $target"
else
	fail "$t: broken $name: exit $rc, output does not name the patch and $target"
fi

# --- 4 ---------------------------------------------------------------------
t=unsettable-symbol
bad=$scratch/99-unsettable.config
# HDA audio needs CONFIG_SND, which no fragment enables: Kconfig drops it.
echo "CONFIG_SND_HDA_INTEL=y" >"$bad"
if ! alldefconfig "$src" "$scratch/unsettable" "${fragments[@]}" "$bad"; then
	fail "$t: alldefconfig failed"
else
	if rejects '99-unsettable.config:1 asks for CONFIG_SND_HDA_INTEL=y' \
		"$scratch/unsettable/.config" "${fragments[@]}" "$bad"; then
		pass "$t: the check fails and names 99-unsettable.config:1 CONFIG_SND_HDA_INTEL"
	else
		fail "$t: exit $rc; the check did not reject CONFIG_SND_HDA_INTEL=y"
	fi
fi

t=fragment-names-devtmpfs
bad=$scratch/99-devtmpfs.config
echo "CONFIG_DEVTMPFS_MOUNT=y" >"$bad"
if rejects '99-devtmpfs.config:1 names CONFIG_DEVTMPFS_MOUNT' \
	"$scratch/patched/.config" "${fragments[@]}" "$bad"; then
	pass "$t: a fragment naming DEVTMPFS_MOUNT is rejected"
else
	fail "$t: exit $rc; a fragment naming DEVTMPFS_MOUNT was accepted"
fi

t=unknown-symbol-not-set
bad=$scratch/99-unknown.config
printf '# CONFIG_NO_SUCH_SYMBOL_RESCUE is not set\nCONFIG_EXT4_FS_TYPO=y\n' >"$bad"
if rejects '99-unknown.config:1 names CONFIG_NO_SUCH_SYMBOL_RESCUE, which this kernel does not have' \
	"$scratch/patched/.config" "${fragments[@]}" "$bad" &&
	grep -q '99-unknown.config:2 names CONFIG_EXT4_FS_TYPO, which' <<<"$out"; then
	pass "$t: an unknown symbol is an error in an 'is not set' line and in a '=y' line"
else
	fail "$t: exit $rc; an unknown symbol was accepted"
fi

t=last-fragment-wins
# 00-base.config sets CONFIG_SYSVIPC=y; a later fragment turns it off.
over=$scratch/99-override.config
echo "# CONFIG_SYSVIPC is not set" >"$over"
if ! grep -qx 'CONFIG_SYSVIPC=y' "${fragments[@]}"; then
	fail "$t: no fragment sets CONFIG_SYSVIPC=y any more; pick another symbol"
elif ! alldefconfig "$src" "$scratch/override" "${fragments[@]}" "$over"; then
	fail "$t: alldefconfig failed"
elif [ "$(value CONFIG_SYSVIPC "$scratch/override/.config")" != n ]; then
	fail "$t: alldefconfig did not take the later fragment's CONFIG_SYSVIPC=n"
elif run "$check_config" "$src" "$scratch/override/.config" "${fragments[@]}" "$over"; then
	pass "$t: SYSVIPC=y then 'is not set' in a later fragment: the later one is checked"
else
	fail "$t: the check holds the overridden CONFIG_SYSVIPC=y against the config"
fi

# --- 5 ---------------------------------------------------------------------
# mk TARGET VAR=VALUE...: the project's make on a scratch output directory,
# as a user would run it (not as a sub-make of this check), output in $out.
mk() {
	echo "\$ make $*" >>"$log"
	out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$top" "$@" 2>&1)
	rc=$?
	echo "$out" >>"$log"
	return $rc
}

t=patch-deleted-repatches
# A tarball of only the files the series touches, so that re-extracting
# takes a moment.
small_tree "$scratch/mkp-src"
small=$scratch/small.tar.xz
tar -C "$scratch/mkp-src" --transform 's|^\.|linux-source-6.1|' -cJf "$small" .
mkp=$scratch/mkp
mkdir -p "$mkp/patches"
cp "${patches[@]}" "$mkp/patches/"
last=$(basename "${patches[-1]}")
first=$(basename "${patches[0]}")
victim=$(sed -n 's|^+++ b/||p' "${patches[-1]}" | head -n1)
vars=(O="$mkp/out" LINUX_TARBALL="$small" PATCH_DIR="$mkp/patches")
if ! mk "${vars[@]}" "$mkp/out/stamps/linux-patched"; then
	fail "$t: make could not patch the small tree"
elif cmp -s "$mkp/out/linux-src/$victim" "$scratch/mkp-src/$victim"; then
	fail "$t: $victim is not patched after the first make"
else
	rm "$mkp/patches/$last"
	if ! mk "${vars[@]}" "$mkp/out/stamps/linux-patched"; then
		fail "$t: make failed after deleting $last"
	elif ! cmp -s "$mkp/out/linux-src/$victim" "$scratch/mkp-src/$victim"; then
		fail "$t: after deleting $last, $victim still carries it"
	else
		mv "$mkp/patches/$first" "$mkp/patches/renamed-$first"
		if mk "${vars[@]}" "$mkp/out/stamps/linux-patched" &&
			grep -q "PATCH     renamed-$first" <<<"$out"; then
			pass "$t: deleting $last restores a pristine $victim; renaming $first re-patches"
		else
			fail "$t: renaming $first did not re-patch the tree (exit $rc)"
		fi
	fi
fi

t=fragment-deleted-reconfigures
# The real patched tree, configured into a scratch directory; -o: never
# re-extract or re-patch that tree from here.
mkc=$scratch/mkc
mkdir -p "$mkc/configs" "$mkc/out/stamps"
cp "${fragments[@]}" "$mkc/configs/"
# Off by default, no fragment sets it, settable with EXPERT.
echo "CONFIG_TTY_PRINTK=y" >"$mkc/configs/99-extra.config"
touch "$mkc/out/stamps/linux-patched"
vars=(O="$mkc/out" LINUX_SRC="$src" CONFIG_DIR="$mkc/configs"
	-o "$mkc/out/stamps/linux-patched")
target=$mkc/out/stamps/kernel-configured
if ! mk "${vars[@]}" "$target" ||
	[ "$(value CONFIG_TTY_PRINTK "$mkc/out/kernel/.config")" != y ]; then
	fail "$t: the first config did not take 99-extra.config (exit $rc)"
elif ! mk "${vars[@]}" "$target" || grep -q CONFIG <<<"$out"; then
	fail "$t: a second make with nothing changed configured again"
else
	rm "$mkc/configs/99-extra.config"
	if ! mk "${vars[@]}" "$target"; then
		fail "$t: make failed after deleting 99-extra.config"
	elif [ "$(value CONFIG_TTY_PRINTK "$mkc/out/kernel/.config")" != n ]; then
		fail "$t: after deleting 99-extra.config the config still has CONFIG_TTY_PRINTK=y"
	else
		pass "$t: deleting a fragment redoes the config; nothing changed, nothing done"
	fi
fi

rm -rf "$vanilla" "$mkc/out/kernel" "$mkp"
echo "$passed passed, $failed failed" | tee "$logdir/kconfig.summary"
[ $failed -eq 0 ]
