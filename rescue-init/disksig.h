/* SPDX-License-Identifier: GPL-2.0 */
/*
 * On-disk signatures of the stacks a rescue user has to open by hand:
 * LUKS1/LUKS2, md RAID superblocks (0.90 and 1.x) and LVM2 physical
 * volumes.  Pure functions over byte buffers, like parse.c: the init
 * reads the bytes (read-only), these say what they are, and the same
 * code runs in the host unit tests and the fuzzer.
 *
 * Formats: cryptsetup's LUKS1 spec and LUKS2 on-disk format; the
 * kernel's include/uapi/linux/raid/md_p.h; LVM2's lib/format_text
 * (label_header, pv_header, mda_header, raw_locn).
 */
#ifndef RESCUE_DISKSIG_H
#define RESCUE_DISKSIG_H

#include <stddef.h>
#include <stdint.h>

#define SIG_NAME_MAX	132	/* "md/" + a 32-byte md name, or a VG name */
#define MD_SB_BYTES	4096	/* what md_super() wants to see */
#define LVM_LABEL_BYTES	2048	/* the first four sectors */
#define LVM_MDA_BYTES	512	/* one mda_header */
#define LVM_NAME_BYTES	256	/* metadata text enough for the VG name */

enum sig_kind { SIG_NONE, SIG_LUKS, SIG_MD, SIG_LVM };

struct disk_sig {
	int kind;
	unsigned int luks_version;	/* 1 or 2 */
	char name[SIG_NAME_MAX];	/* md array or VG; "": not known */
};

int luks_version(const unsigned char *b, size_t len);

/* Byte offsets where an md superblock may sit on a device of this size:
 * 1.1 at 0, 1.2 at 4 KiB, then 1.0 and 0.90 near the end.  Returns how
 * many of out[4] are set (the end ones only when the device is big
 * enough to hold them). */
int md_super_offsets(uint64_t dev_bytes, uint64_t out[4]);
int md_super(const unsigned char *b, size_t len, uint64_t at_bytes,
	     uint64_t dev_bytes, struct disk_sig *sig);

uint32_t lvm_crc(const unsigned char *b, size_t len);
const unsigned char *lvm_label_sector(const unsigned char *b, size_t len);
int lvm_label(const unsigned char *b, size_t len, uint64_t *mda_start,
	      uint64_t *mda_size);
int lvm_mda(const unsigned char *b, size_t len, uint64_t mda_start,
	    uint64_t mda_size, uint64_t *text_at, uint64_t *text_len);
int lvm_vg_name(const char *text, size_t len, struct disk_sig *sig);

#endif
