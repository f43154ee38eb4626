// SPDX-License-Identifier: GPL-2.0
/*
 * LUKS, md and LVM2 signatures from raw bytes.  Every field is read
 * little- or big-endian explicitly, every offset taken from the disk is
 * checked against the buffer before use, and a checksum is verified
 * where the format has one in the bytes we hold, so stale or random
 * data is not reported as a stack.
 */
#include <string.h>

#include "disksig.h"
#include "parse.h"

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* ------------------------------------------------------------------ LUKS */

/* LUKS1 and LUKS2 start alike: "LUKS\xba\xbe", then a big-endian version. */
int luks_version(const unsigned char *b, size_t len)
{
	unsigned int v;

	if (len < 8 || memcmp(b, "LUKS\xba\xbe", 6))
		return 0;
	v = (unsigned int)b[6] << 8 | b[7];
	return v == 1 || v == 2 ? (int)v : 0;
}

/* -------------------------------------------------------------------- md */

#define MD_MAGIC	0xa92b4efcu
#define MD_090_RESERVED	(64 * 1024)	/* 0.90: last 64 KiB-aligned 64 KiB */

static uint64_t md_090_offset(uint64_t dev_bytes)
{
	return (dev_bytes & ~(uint64_t)(MD_090_RESERVED - 1)) -
	       MD_090_RESERVED;
}

int md_super_offsets(uint64_t dev_bytes, uint64_t out[4])
{
	int n = 0;

	out[n++] = 0;				/* 1.1 */
	if (dev_bytes >= 8192 + MD_SB_BYTES)
		out[n++] = 4096;		/* 1.2 */
	if (dev_bytes >= 3 * 8192)		/* 1.0: 8 KiB from the end, */
		out[n++] = (dev_bytes - 8192) & ~(uint64_t)4095; /* 4K aligned */
	if (dev_bytes >= 2 * MD_090_RESERVED)
		out[n++] = md_090_offset(dev_bytes);
	return n;
}

/* The 1.x checksum: 32-bit words summed into 64 bits, folded once. */
static uint32_t md1_csum(const unsigned char *b, size_t size)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i + 4 <= size; i += 4)
		if (i != 216)			/* sb_csum itself counts 0 */
			sum += le32(b + i);
	if (size & 2)
		sum += (uint32_t)b[i] | (uint32_t)b[i + 1] << 8;
	return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

/* The array's name on the host that made it: set_name without its
 * "homehost:" part, a number N as mdN, a word as md/WORD (mdadm's
 * /dev/md/WORD).  Anything but plain printable bytes shows as '?'. */
static void md_name(const unsigned char *set_name, char *out)
{
	const unsigned char *s = set_name, *colon, *nul = memchr(s, 0, 32);
	size_t n = nul ? (size_t)(nul - s) : 32, i, digits = 0;

	colon = memchr(s, ':', n);
	if (colon) {
		n -= (size_t)(colon + 1 - s);
		s = colon + 1;
	}
	for (i = 0; i < n; i++)
		digits += s[i] >= '0' && s[i] <= '9';
	*out = '\0';
	if (!n)
		return;
	*out++ = 'm';
	*out++ = 'd';
	if (digits != n)
		*out++ = '/';
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		*out++ = c > ' ' && c < 0x7f && c != '/' ? (char)c : '?';
	}
	*out = '\0';
}

/*
 * An md superblock read from at_bytes of a device of dev_bytes: 0.90
 * counts only where 0.90 puts it, 1.x only where its own super_offset
 * says it is and with a good checksum.  0.90 is in host order; we are
 * x86, and so was every machine that wrote one we can read here.
 */
int md_super(const unsigned char *b, size_t len, uint64_t at_bytes,
	     uint64_t dev_bytes, struct disk_sig *sig)
{
	uint32_t max_dev;

	if (len < 256 || le32(b) != MD_MAGIC)
		return 0;
	if (le32(b + 4) == 0) {
		if (le32(b + 8) != 90 || dev_bytes < 2 * MD_090_RESERVED ||
		    at_bytes != md_090_offset(dev_bytes))
			return 0;
		sig->kind = SIG_MD;
		rsnprintf(sig->name, sizeof(sig->name), "md%u", le32(b + 44));
		return 1;
	}
	max_dev = le32(b + 220);
	if (le32(b + 4) != 1 || le64(b + 144) != at_bytes / 512 ||
	    max_dev > (len - 256) / 2 ||
	    md1_csum(b, 256 + 2 * (size_t)max_dev) != le32(b + 216))
		return 0;
	sig->kind = SIG_MD;
	md_name(b + 32, sig->name);
	return 1;
}

/* ------------------------------------------------------------------- LVM */

#define LVM_CRC_INIT	0xf597a6cfu
#define LVM_MDA_MAGIC	" LVM2 x[5A%r0N*>"

/* LVM2's calc_crc(): CRC-32 (0xedb88320) from its own seed, no final xor. */
uint32_t lvm_crc(const unsigned char *b, size_t len)
{
	uint32_t crc = LVM_CRC_INIT;
	int k;

	while (len--) {
		crc ^= *b++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return crc;
}

/*
 * The label is in one of the first four sectors: "LABELONE", its own
 * sector number, a CRC of the rest of the sector, "LVM2 001".  Returns
 * that sector, or NULL when there is no valid label.
 */
const unsigned char *lvm_label_sector(const unsigned char *b, size_t len)
{
	const unsigned char *p;
	size_t s;

	for (s = 0; s < 4 && (s + 1) * 512 <= len; s++) {
		p = b + s * 512;
		if (!memcmp(p, "LABELONE", 8) && le64(p + 8) == s &&
		    !memcmp(p + 24, "LVM2 001", 8) &&
		    le32(p + 16) == lvm_crc(p + 20, 512 - 20))
			return p;
	}
	return NULL;
}

/*
 * The label's pv_header lists the data areas, then the metadata areas,
 * each list ending with a zero pair.  Returns 1 for a PV; *mda_size 0
 * when it has no metadata area (pvcreate --metadatacopies 0).
 */
int lvm_label(const unsigned char *b, size_t len, uint64_t *mda_start,
	      uint64_t *mda_size)
{
	const unsigned char *p = lvm_label_sector(b, len);
	size_t at;
	int list = 0;

	if (!p)
		return 0;
	*mda_start = *mda_size = 0;
	/* pv_header: uuid[32], device_size, then the lists. */
	at = (size_t)(p - b) + le32(p + 20);
	if (le32(p + 20) > len || at + 40 > len)
		return 1;
	for (at += 40; at + 16 <= len && list < 2; at += 16) {
		if (!le64(b + at) && !le64(b + at + 8)) {
			list++;
		} else if (list == 1) {
			*mda_start = le64(b + at);
			*mda_size = le64(b + at + 8);
			break;
		}
	}
	return 1;
}

/*
 * The mda_header at the start of a metadata area: checksum, magic,
 * version 1, its own offset and size, then raw_locn slots; the first
 * points at the current metadata text, relative to the area.  Returns 1
 * with the text's place on the device (up to where the circular buffer
 * wraps), 0 when the area holds no metadata, -1 when it is not valid.
 */
int lvm_mda(const unsigned char *b, size_t len, uint64_t mda_start,
	    uint64_t mda_size, uint64_t *text_at, uint64_t *text_len)
{
	uint64_t off, size;

	if (len < LVM_MDA_BYTES || le32(b) != lvm_crc(b + 4, 512 - 4) ||
	    memcmp(b + 4, LVM_MDA_MAGIC, 16) || le32(b + 20) != 1 ||
	    le64(b + 24) != mda_start || le64(b + 32) != mda_size)
		return -1;
	off = le64(b + 40);
	size = le64(b + 48);
	if (!off || !size)
		return 0;
	if (off < LVM_MDA_BYTES || off >= mda_size ||
	    mda_start > UINT64_MAX - off)
		return -1;
	*text_at = mda_start + off;
	*text_len = size < mda_size - off ? size : mda_size - off;
	return 1;
}

static int vg_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '+' ||
	       c == '-';
}

/* The metadata text starts with the VG: "vg0 {\nid = ...". */
int lvm_vg_name(const char *text, size_t len, struct disk_sig *sig)
{
	size_t i = 0, n;

	while (i < len && (text[i] == ' ' || text[i] == '\n'))
		i++;
	for (n = 0; i + n < len && vg_char(text[i + n]); n++)
		;
	if (!n || n >= 128 || i + n >= len)
		return 0;
	memcpy(sig->name, text + i, n);
	sig->name[n] = '\0';
	for (i += n; i < len && text[i] == ' '; i++)
		;
	return i < len && text[i] == '{';
}
