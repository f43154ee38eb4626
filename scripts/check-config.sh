#!/bin/bash
# check-config.sh DOTCONFIG FRAGMENT...
#
# Fail when any symbol a fragment asks for did not end up with the asked
# value in DOTCONFIG (merge_config.sh only warns; a symbol whose dependencies
# are missing is silently dropped by Kconfig), when a fragment names
# DEVTMPFS* (they must come from the patched Kconfig defaults), or when
# CONFIG_DEVTMPFS / CONFIG_DEVTMPFS_MOUNT are not y.
set -euo pipefail

dotconfig=$1
shift
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

for frag in "$@"; do
	lineno=0
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		case $line in
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}; want=n ;;
		CONFIG_*=*)
			sym=${line%%=*}; want=${line#*=} ;;
		*) continue ;;
		esac
		where="$(basename "$frag"):$lineno"
		case $sym in
		CONFIG_DEVTMPFS*)
			err "$where names $sym: DEVTMPFS must come from the patched Kconfig default, not from a fragment"
			continue ;;
		esac
		got=$(actual "$sym")
		if [ "$got" != "$want" ]; then
			err "$where asks for $sym=$want but the config has $sym=$got (missing dependency, or no such symbol in this kernel; see its Kconfig entry)"
		fi
	done <"$frag"
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
