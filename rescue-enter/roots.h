/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding installed Linux systems without udev, read-only.
 *
 * devs_scan() lists every block device the kernel knows (/sys/class/block:
 * disks, partitions, open LUKS mappings and active LVs as dm-N, md arrays)
 * and reads each one's superblock (probe.h).  devs_resolve() turns an
 * fstab name (UUID=, LABEL=, PARTUUID=, PARTLABEL=, /dev/disk/by-*,
 * /dev/mapper/x, /dev/sdX) into one of those devices.  roots_find() names
 * the ones that hold an installed system: a filesystem with /etc/os-release
 * and /etc/fstab, looked at through a read-only mount that replays no
 * journal.
 *
 * Shared by rescue-enter and rescue-boot (booting the installed root with
 * the rescue kernel).
 */
#ifndef RESCUE_ROOTS_H
#define RESCUE_ROOTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "etcparse.h"
#include "probe.h"

struct blkdev {
	char name[32];		/* kernel name: sda1, nvme0n1p2, dm-0, md0 */
	char path[48];		/* its devtmpfs node: /dev/sda1 */
	char dm_name[128];	/* device-mapper name (vg-root, sda2_crypt) */
	dev_t devno;
	uint64_t size;		/* bytes */
	int in_use;		/* a holder (dm, md) sits on top of it */
	char mounted_at[256];	/* where it is mounted now, or "" */
	struct probe id;	/* id.type "" when nothing was recognised */
	char partuuid[48], partlabel[48];
};

struct devlist {
	struct blkdev *dev;
	size_t n;
};

/* 0, or -1 with errno when /sys/class/block cannot be read. */
int devs_scan(struct devlist *l);
void devs_free(struct devlist *l);

/*
 * The device an fstab spec names, or NULL with *why saying what failed
 * ("no device with UUID=...", "needs udev").
 */
const struct blkdev *devs_resolve(const struct devlist *l, const char *spec,
				  const char **why);

/*
 * A device as a person names it (/dev/sda1, sda1, UUID=..., LABEL=...),
 * or NULL with *why saying what failed.
 */
const struct blkdev *devs_named(const struct devlist *l, const char *arg,
				const char **why);

/*
 * The name a LUKS device is opened as: its kernel name and "_crypt"
 * (sda5_crypt), the name Debian's installer puts in crypttab, so that
 * the installed system finds it active already.
 */
void luks_name(const struct blkdev *d, char *buf, size_t size);

/* A closed container's type and the command that opens it, or NULL. */
const char *dev_open_hint(const struct blkdev *d, char *cmd, size_t size);

/*
 * The closed LUKS, LVM and md devices, each with the command that opens
 * it, on stderr under "PROG: closed devices; open them, then run PROG
 * again:".  Returns how many.
 */
size_t devs_list_closed(const struct devlist *l, const char *prog);

struct root {
	const struct blkdev *dev;
	char pretty_name[OSR_VALUE_MAX];	/* "Debian GNU/Linux 12 (bookworm)" */
	char tag[OSR_VALUE_MAX];		/* ID-VERSION_ID: "debian-12" */
};

/*
 * Is d an installed system's root?  Mounts it read-only at probe_dir
 * (unless it is mounted already), with the device itself read-only
 * meanwhile (readonly.h), looks, unmounts.  1 yes (r filled),
 * 0 no (*why says why), -1 could not look (*why says why).
 */
int root_check(const struct blkdev *d, const char *probe_dir, struct root *r,
	       const char **why);

/* Every root among l's devices, up to max; returns how many. */
size_t roots_find(const struct devlist *l, const char *probe_dir,
		  struct root *out, size_t max);

/*
 * A file of an installed system, opened with every symlink resolved
 * inside root (an absolute link must not lead into the rescue system).
 * Reads at most size - 1 bytes and NUL-terminates; returns the length or
 * -1 with errno.
 */
ssize_t read_in_root(const char *root, const char *path, char *buf,
		     size_t size);

/* Are we running in the rescue system (its /boot/release)? */
#define RESCUE_RELEASE_FILE	"/boot/release"	/* written by image/build-iso.sh */
int in_rescue_system(void);

#endif
