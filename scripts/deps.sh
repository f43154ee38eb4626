#!/bin/sh
# Check that the Debian packages listed in $1 are installed. As root, install
# the missing ones; otherwise stop and say which they are and how to get them.
set -eu

list=$1
pkgs=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list")

missing=
for p in $pkgs; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case $status in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "error: missing Debian packages:$missing" >&2
	echo "  install them with: sudo apt-get install$missing" >&2
	echo "  (or run make as root, which installs them)" >&2
	exit 1
fi

echo "  DEPS      installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q || {
	echo "error: apt-get update failed; cannot install:$missing" >&2
	exit 1
}
# shellcheck disable=SC2086
apt-get install -y -q $missing || {
	echo "error: apt-get install failed for:$missing" >&2
	exit 1
}
