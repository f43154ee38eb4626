#!/bin/bash
# signing-key.sh KEY CERT [create]: the key pair that signs the kernel
# for Secure Boot.  With "create" (make passes it for the default
# location only), a missing pair is made once: an RSA-2048 key and a
# self-signed certificate valid for 100 years, private to this user and
# never inside the repository.  A pair the user named must already exist.
set -e -o pipefail
umask 077

key=$1 cert=$2 create=$3
die() { echo "signing-key.sh: $*" >&2; exit 1; }

if [ -e "$key" ] && [ -e "$cert" ]; then
	exit 0
fi
if [ "$create" != create ]; then
	[ -e "$key" ] || die "SIGN_KEY=$key does not exist (a PEM RSA private key)"
	die "SIGN_CERT=$cert does not exist (the PEM certificate of SIGN_KEY)"
fi
if [ -e "$key" ] || [ -e "$cert" ]; then
	die "only one of $key and $cert exists; move it away, or name both with SIGN_KEY= SIGN_CERT="
fi

mkdir -p "$(dirname "$key")" "$(dirname "$cert")"
openssl req -new -x509 -newkey rsa:2048 -nodes -sha256 -days 36500 \
	-subj "/CN=rescue-iso kernel signing key ($(id -un)@$(hostname))/" \
	-keyout "$key.tmp" -out "$cert.tmp" 2>/dev/null ||
	die "openssl could not make a key pair in $(dirname "$key")"
chmod 0644 "$cert.tmp"
mv "$key.tmp" "$key"
mv "$cert.tmp" "$cert"
printf '  %-9s %s\n' KEY "made a new Secure Boot signing key: $key" \
	'' "certificate: $cert (keep both; every build you make is signed with them)"
