# bootmenu.sh: the entries of menu.txt in isolinux's and in GRUB's words.
# Sourced by build-iso.sh, which sets KERNEL_ON_ISO, CMDLINE, KVER, WORK
# and MOKMANAGER (its path on the ESP, beside GRUB) and has die().
#
#   menu_isolinux MENU   isolinux.cfg's LABEL blocks and the DEFAULT line
#   menu_grub MENU       grub.cfg's menuentry blocks and the default
# Both write to stdout; build-iso.sh puts the text where its template says
# @ENTRIES@.

# menu_read MENU: one line per entry, "id<TAB>key<TAB>kind<TAB>title<TAB>args",
# checked: known kind, one-letter hotkey, no id or hotkey twice.
menu_read() {
	local id key kind title args ids=' ' keys=' e c ' n=0
	while IFS='|' read -r id key kind title args; do
		id=$(echo $id) key=$(echo $key) kind=$(echo $kind)
		title=$(echo "$title" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
		args=$(echo $args)
		case $id in '' | '#'*) continue ;; esac
		n=$((n + 1))
		case $kind in
		linux | hd | reboot | poweroff | mokmanager) ;;
		*) die "$1:$id: unknown kind '$kind' (linux, hd, reboot, poweroff, mokmanager)" ;;
		esac
		case $key in
		[a-z0-9]) ;;
		*) die "$1:$id: the hotkey must be one lower-case letter or digit, not '$key'" ;;
		esac
		case $ids in *" $id "*) die "$1: entry '$id' is defined twice" ;; esac
		case $keys in *" $key "*) die "$1:$id: hotkey '$key' is taken (by another entry, or by GRUB for e/c)" ;; esac
		[ -n "$title" ] || die "$1:$id: no title"
		case $title$args in *[\'\"\\]*) die "$1:$id: no quotes or backslashes in titles and arguments" ;; esac
		case $title in *"$key"* | *"${key^^}"*) ;;
		*) die "$1:$id: the hotkey '$key' is not in the title '$title'" ;;
		esac
		[ "$kind" = linux ] || [ -z "$args" ] || die "$1:$id: kernel arguments on a '$kind' entry"
		ids="$ids$id " keys="$keys$key "
		printf '%s\t%s\t%s\t%s\t%s\n' "$id" "$key" "$kind" "$title" "$args"
	done <"$1"
	[ "$n" -gt 0 ] || die "$1: no menu entries"
}

# The kernel command line of a linux entry: the common one plus its own.
entry_cmdline() { echo "$CMDLINE${1:+ $1}"; }

menu_isolinux() {
	local id key kind title args first=1 label prev=linux

	menu_read "$1" >"$WORK/menu.tsv"
	while IFS=$'\t' read -r id key kind title args; do
		# isolinux shows the hotkey as the letter after '^'.
		label=$(echo "$title" | sed -e "s/[$key${key^^}]/^&/")
		[ "$kind" = linux ] || [ "$prev" != linux ] || printf 'MENU SEPARATOR\n\n'
		prev=$kind
		case $kind in
		mokmanager) continue ;;	# a UEFI program; BIOS has no Secure Boot
		esac
		[ -z "$first" ] || printf 'DEFAULT %s\n\n' "$id"
		printf 'LABEL %s\n\tMENU LABEL %s\n' "$id" "$label"
		[ -z "$first" ] || printf '\tMENU DEFAULT\n'
		first=
		case $kind in
		linux)
			printf '\tKERNEL %s\n\tAPPEND %s\n' "$KERNEL_ON_ISO" "$(entry_cmdline "$args")" ;;
		# chain.c32 rather than LOCALBOOT 0x80, which from a CD under
		# SeaBIOS only reports "Boot failed".  Booted from a USB stick,
		# hd0 is the stick.
		hd)	printf '\tCOM32 chain.c32\n\tAPPEND hd0\n' ;;
		reboot)	printf '\tCOM32 reboot.c32\n' ;;
		poweroff) printf '\tCOM32 poweroff.c32\n' ;;
		esac
		printf '\n'
	done <"$WORK/menu.tsv"
}

menu_grub() {
	local id key kind title args first=1

	menu_read "$1" >"$WORK/menu.tsv"
	while IFS=$'\t' read -r id key kind title args; do
		[ -z "$first" ] || printf 'set default=%s\n\n' "$id"
		first=
		printf "menuentry '%s' --hotkey=%s --id=%s {\n" "$title" "$key" "$id"
		case $kind in
		linux)
			printf "\techo 'Loading Linux %s ...'\n\tlinux %s %s\n" \
				"$KVER" "$KERNEL_ON_ISO" "$(entry_cmdline "$args")" ;;
		# Leave GRUB and return to the firmware, which boots the next
		# entry of its boot order: the installed system's loader.
		hd)	printf '\texit\n' ;;
		# Through shim's loader, which checks MokManager's signature
		# against the Debian key built into shim.
		mokmanager) printf '\tchainloader %s/%s\n' '$esp_dir' "${MOKMANAGER##*/}" ;;
		reboot)	printf '\treboot\n' ;;
		poweroff) printf '\thalt\n' ;;
		esac
		printf '}\n\n'
	done <"$WORK/menu.tsv"
}
