/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsers for the files rescue-enter reads from an installed system:
 * /etc/fstab, /etc/os-release, /etc/passwd, and the mount options and
 * device names inside fstab.  Pure functions over (pointer, length)
 * buffers: no NUL termination assumed, no allocation, no file system, so
 * the same code runs in rescue-enter, the host unit tests and libFuzzer.
 * The files come from a disk that may be damaged: every field is bounded.
 */
#ifndef RESCUE_ETCPARSE_H
#define RESCUE_ETCPARSE_H

#include <stddef.h>

#define FSTAB_FIELD_MAX	256	/* one decoded fstab field, with the NUL */
#define OSR_VALUE_MAX	128	/* one os-release value, with the NUL */

/* One fstab(5) line; octal escapes (\040 for a space) decoded. */
struct fstab_entry {
	char spec[FSTAB_FIELD_MAX];	/* UUID=..., /dev/sda1, server:/x */
	char file[FSTAB_FIELD_MAX];	/* mount point */
	char type[FSTAB_FIELD_MAX];	/* ext4, vfat, swap, auto, ... */
	char opts[FSTAB_FIELD_MAX];	/* "defaults" when absent */
	unsigned int line;		/* 1-based line number */
};

/*
 * The next entry from *pos on: 1 with *e filled, 0 for a malformed line
 * (e->line says which; the caller reports it and goes on), -1 at the end.
 * Comments and blank lines are skipped.
 */
int fstab_next(const char *buf, size_t len, size_t *pos, unsigned int *line,
	       struct fstab_entry *e);

/* Is `name` one of the comma-separated options (exactly, or name=...)? */
int opt_has(const char *opts, const char *name);

/*
 * fstab options -> mount(2) flags and the filesystem's own data string.
 * Options that only mount(8) understands (defaults, auto, nofail, user,
 * _netdev, x-*, comment=...) are dropped.  Returns 0, or -1 when `data`
 * does not fit.
 */
int mount_opts(const char *opts, unsigned long *flags, char *data,
	       size_t size);

/* Filesystems that need the network, which the rescue system lacks. */
int fstype_is_network(const char *type);

/* How an fstab spec names its device (see spec_parse). */
enum spec_kind {
	SPEC_PATH,	/* a path: /dev/sda1, /dev/mapper/vg-root */
	SPEC_UUID,
	SPEC_LABEL,
	SPEC_PARTUUID,
	SPEC_PARTLABEL,
	SPEC_UNKNOWN,	/* /dev/disk/by-id/..., by-path: needs udev's data */
};

/*
 * UUID=x, LABEL=x, PARTUUID=x, PARTLABEL=x (quotes removed), and their
 * udev symlinks /dev/disk/by-{uuid,label,partuuid,partlabel}/x (udev's
 * \x2f style escapes decoded), into a kind and a value.
 */
enum spec_kind spec_parse(const char *spec, char *value, size_t size);

/*
 * The value of KEY in an os-release(5) file, shell quoting removed
 * ("...", '...', backslash escapes).  1 if found (the last assignment
 * wins), 0 if not.  Values are cut to size - 1 bytes.
 */
int osrelease_get(const char *buf, size_t len, const char *key, char *value,
		  size_t size);

/* root's login shell from passwd(5) contents: 1 if found, else 0. */
int passwd_shell(const char *buf, size_t len, const char *user, char *shell,
		 size_t size);

#endif
