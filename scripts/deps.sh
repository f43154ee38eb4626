#!/bin/sh
# Check that the Debian packages listed in $1 are installed. As root, install
# the missing ones; otherwise stop and say which they are and how to get them.
set -eu

list=$1
pkgs=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list")

# One dpkg-query for the whole list (one per package took most of a
# no-op make); a package dpkg does not know is simply not printed.
# shellcheck disable=SC2086
installed=" $(dpkg-query -W -f='${Package} ${Status}\n' $pkgs 2>/dev/null |
	awk '$NF == "installed" { printf "%s ", $1 }' || true)"
missing=
for p in $pkgs; do
	case $installed in
	*" $p "*) ;;
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
# The .deb files are kept in the build cache (scripts/cache.mk), so that a
# fresh root on this machine (.ci/run) installs them without a download.
# A cache apt cannot use is left out, never a failed install.
install() {
	# shellcheck disable=SC2086
	apt-get install -y -q "$@" $missing
}
debs=${RESCUE_CACHE:+$RESCUE_CACHE/debs}
if [ -n "$debs" ] && mkdir -p "$debs/partial" 2>/dev/null; then
	install -o Dir::Cache::Archives="$debs/" -o APT::Sandbox::User=root && exit 0
	echo "warning: apt-get install with the package cache $debs failed; trying without it" >&2
fi
install || {
	echo "error: apt-get install failed for:$missing" >&2
	exit 1
}
