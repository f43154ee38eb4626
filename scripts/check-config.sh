#!/bin/bash
# check-config.sh SRCDIR DOTCONFIG FRAGMENT...
#
# Fail when
#  - a fragment names a symbol that the kernel in SRCDIR does not have
#    (a typo), in a "=" line or in a "# CONFIG_X is not set" line;
#  - a symbol did not end up with the value asked for in DOTCONFIG
#    (merge_config.sh only warns; a symbol whose dependencies are missing
#    is silently dropped by Kconfig).  When several fragments set one
#    symbol, the last one wins, as it does in the cat that feeds
#    alldefconfig, and only that one is checked;
#  - a fragment names DEVTMPFS* (they must come from the patched Kconfig
#    defaults), or CONFIG_DEVTMPFS / CONFIG_DEVTMPFS_MOUNT are not y.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 SRCDIR DOTCONFIG FRAGMENT..." >&2; exit 2; }
srcdir=$1 dotconfig=$2
shift 2
errors=0

err() {
	echo "error: $*" >&2
	errors=$((errors + 1))
}

# The value DOTCONFIG gives a symbol: its value, or "n" when it is
# "is not set" or absent (absent: its dependencies are not met).
actual() {
	local v
	v=$(sed -n "s/^$1=//p" "$dotconfig")
	echo "${v:-n}"
}

# Every symbol the x86 kernel's Kconfig files define (other architectures'
# directories are left out: their symbols do not exist on x86).
declare -A known=()
while read -r sym; do
	known[CONFIG_$sym]=1
done < <(find "$srcdir" \( -path "$srcdir/arch/*" ! -path "$srcdir/arch/Kconfig" \
		! -path "$srcdir/arch/x86" ! -path "$srcdir/arch/x86/*" \) -prune \
		-o -name 'Kconfig*' -type f -print0 |
	xargs -0 cat |
	sed -n 's/^[[:space:]]*\(menu\)\{0,1\}config[[:space:]]\{1,\}\([A-Za-z0-9_]\{1,\}\).*/\2/p')
[ ${#known[@]} -gt 0 ] || { echo "error: no Kconfig symbols found under $srcdir" >&2; exit 1; }

# The last line for each symbol wins; $order keeps first-seen order.
declare -A want=() where=()
order=()
for frag in "$@"; do
	lineno=0
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		case $line in
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}; value=n ;;
		CONFIG_*=*)
			sym=${line%%=*}; value=${line#*=} ;;
		*) continue ;;
		esac
		at="$(basename "$frag"):$lineno"
		case $sym in
		CONFIG_DEVTMPFS*)
			err "$at names $sym: DEVTMPFS must come from the patched Kconfig default, not from a fragment"
			continue ;;
		esac
		if [ -z "${known[$sym]:-}" ]; then
			err "$at names $sym, which this kernel does not have (a typo? see the Kconfig files under $srcdir)"
			continue
		fi
		[ -n "${where[$sym]:-}" ] || order+=("$sym")
		want[$sym]=$value
		where[$sym]=$at
	done <"$frag"
done

for sym in "${order[@]}"; do
	got=$(actual "$sym")
	if [ "$got" != "${want[$sym]}" ]; then
		err "${where[$sym]} asks for $sym=${want[$sym]} but the config has $sym=$got (a missing dependency; see its Kconfig entry)"
	fi
done

for sym in CONFIG_DEVTMPFS CONFIG_DEVTMPFS_MOUNT; do
	got=$(actual "$sym")
	[ "$got" = y ] ||
		err "$sym=$got, expected y from the patched Kconfig default (is patches/0001 applied?)"
done

if [ $errors -ne 0 ]; then
	echo "error: kernel config check failed ($errors problem(s)) for $dotconfig" >&2
	exit 1
fi
