/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What is on a block device, read from its first bytes without udev or
 * blkid: a filesystem, swap, or a closed container (LUKS, an LVM physical
 * volume, an md RAID member), with its UUID and label; and a partition's
 * PARTUUID and PARTLABEL from the disk's MBR or GPT.  Pure functions over
 * buffers the caller read, so they are unit-tested and fuzzed on the
 * host.  Offsets are those of the on-disk formats, as in util-linux's
 * libblkid.
 */
#ifndef RESCUE_PROBE_H
#define RESCUE_PROBE_H

#include <stddef.h>
#include <stdint.h>

/* How much of a device probe_superblock wants: btrfs sits at 64 KiB. */
#define PROBE_SIZE	(68 * 1024)
#define PROBE_ID_MAX	64

struct probe {
	char type[24];		/* blkid's TYPE name: ext4, vfat, crypto_LUKS */
	char uuid[PROBE_ID_MAX];
	char label[PROBE_ID_MAX];
};

/* 1 if something was recognised (p filled), 0 if not. */
int probe_superblock(const unsigned char *buf, size_t len, struct probe *p);

/* Containers that must be opened before their contents can be seen. */
int probe_is_container(const char *type);

/*
 * PARTUUID and PARTLABEL of partition `partno` (1-based) from the start
 * of its disk (`len` bytes from offset 0, at least 34 sectors of 512 for
 * GPT).  MBR: "<disk id>-<NN>", no label.  Returns 1 if found.
 */
int probe_partition(const unsigned char *disk, size_t len, unsigned int partno,
		    char *partuuid, size_t usize, char *partlabel, size_t lsize);

#endif
