// SPDX-License-Identifier: GPL-2.0
/*
 * Superblock and partition-table probing; see probe.h.
 */
#include <stdio.h>
#include <string.h>

#include "probe.h"
#include "../rescue-init/disksig.h"

static uint16_t le16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int has(const unsigned char *buf, size_t len, size_t off,
	       const char *magic, size_t mlen)
{
	return off + mlen <= len && memcmp(buf + off, magic, mlen) == 0;
}

/* A 16-byte UUID in the usual 8-4-4-4-12 form; all zeros is no UUID. */
static void fmt_uuid(const unsigned char *u, char *out)
{
	static const unsigned char zero[16];

	if (memcmp(u, zero, 16) == 0) {
		out[0] = '\0';
		return;
	}
	snprintf(out, PROBE_ID_MAX,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* A label field: printable bytes up to the first NUL, trailing blanks cut. */
static void fmt_label(const unsigned char *s, size_t n, char *out)
{
	size_t i, o = 0;

	for (i = 0; i < n && s[i] && o + 1 < PROBE_ID_MAX; i++)
		out[o++] = (s[i] >= 0x20 && s[i] < 0x7f) ? (char)s[i] : '?';
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

static void set_type(struct probe *p, const char *type)
{
	snprintf(p->type, sizeof(p->type), "%s", type);
}

/* ext2/3/4: the superblock at 1024, magic 0xEF53 at +0x38. */
static int probe_ext(const unsigned char *b, size_t len, struct probe *p)
{
	const unsigned char *sb = b + 1024;
	uint32_t compat, incompat, ro_compat;

	if (len < 1024 + 0x100 || le16(sb + 0x38) != 0xEF53)
		return 0;
	compat = le32(sb + 0x5c);
	incompat = le32(sb + 0x60);
	ro_compat = le32(sb + 0x64);
	if (incompat & 0x0200 /* FLEX_BG */ || incompat & 0x0040 /* EXTENTS */ ||
	    incompat & 0x0080 /* 64BIT */ || ro_compat & 0x0008 /* HUGE_FILE */)
		set_type(p, "ext4");
	else if (compat & 0x0004 /* HAS_JOURNAL */)
		set_type(p, "ext3");
	else
		set_type(p, "ext2");
	if (incompat & 0x0008 /* JOURNAL_DEV */)
		set_type(p, "jbd");
	fmt_uuid(sb + 0x68, p->uuid);
	fmt_label(sb + 0x78, 16, p->label);
	return 1;
}

static int probe_xfs(const unsigned char *b, size_t len, struct probe *p)
{
	if (!has(b, len, 0, "XFSB", 4) || len < 120)
		return 0;
	set_type(p, "xfs");
	fmt_uuid(b + 32, p->uuid);
	fmt_label(b + 108, 12, p->label);
	return 1;
}

static int probe_btrfs(const unsigned char *b, size_t len, struct probe *p)
{
	const size_t sb = 65536;

	if (!has(b, len, sb + 0x40, "_BHRfS_M", 8) || len < sb + 0x12b + 256)
		return 0;
	set_type(p, "btrfs");
	fmt_uuid(b + sb + 0x20, p->uuid);
	fmt_label(b + sb + 0x12b, 256, p->label);
	return 1;
}

/* Swap: "SWAPSPACE2" ends the first page (4 KiB on x86); UUID and label
 * in the header at 1024. */
static int probe_swap(const unsigned char *b, size_t len, struct probe *p)
{
	if (!has(b, len, 4096 - 10, "SWAPSPACE2", 10) &&
	    !has(b, len, 4096 - 10, "SWAP-SPACE", 10))
		return 0;
	set_type(p, "swap");
	fmt_uuid(b + 1024 + 12, p->uuid);
	fmt_label(b + 1024 + 28, 16, p->label);
	return 1;
}

/* LUKS1 and LUKS2 both keep the UUID as text at 0xa8; LUKS2 has a
 * label at 0x18. */
static int probe_luks(const unsigned char *b, size_t len, struct probe *p)
{
	int version = luks_version(b, len);

	if (!version || len < 0xa8 + 40)
		return 0;
	set_type(p, "crypto_LUKS");
	fmt_label(b + 0xa8, 40, p->uuid);
	if (version == 2)
		fmt_label(b + 0x18, 48, p->label);
	return 1;
}

/* LVM2: a valid label; the PV's UUID opens its pv_header. */
static int probe_lvm(const unsigned char *b, size_t len, struct probe *p)
{
	const unsigned char *l = lvm_label_sector(b, len);
	size_t uuid, i, o = 0;

	if (!l)
		return 0;
	set_type(p, "LVM2_member");
	uuid = (size_t)(l - b) + le32(l + 20);
	if (le32(l + 20) > len || uuid + 32 > len)
		return 1;
	/* 32 characters, shown as LVM does: 6-4-4-4-4-4-6 */
	for (i = 0; i < 32; i++) {
		unsigned char c = b[uuid + i];

		if (i == 6 || i == 10 || i == 14 || i == 18 || i == 22 ||
		    i == 26)
			p->uuid[o++] = '-';
		p->uuid[o++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	p->uuid[o] = '\0';
	return 1;
}

/* md RAID member, superblock 1.1 (at 0) or 1.2 (at 4 KiB): the ones in
 * the first bytes of the device (0.90 and 1.0 sit near its end). */
static int probe_md(const unsigned char *b, size_t len, struct probe *p)
{
	static const size_t offs[] = { 0, 4096 };
	struct disk_sig sig;
	size_t i;

	for (i = 0; i < 2; i++) {
		const unsigned char *sb = b + offs[i];

		if (len < offs[i] + 0x40 ||
		    !md_super(sb, len - offs[i], offs[i], 0, &sig))
			continue;
		set_type(p, "linux_raid_member");
		fmt_uuid(sb + 0x10, p->uuid);
		fmt_label(sb + 0x20, 32, p->label);
		return 1;
	}
	return 0;
}

/* FAT: a boot sector with a FAT BPB; the volume id as XXXX-XXXX. */
static int probe_fat(const unsigned char *b, size_t len, struct probe *p)
{
	const unsigned char *id, *label;

	if (len < 512 || b[510] != 0x55 || b[511] != 0xaa)
		return 0;
	if (has(b, len, 0x52, "FAT32   ", 8)) {
		id = b + 0x43;
		label = b + 0x47;
	} else if (has(b, len, 0x36, "FAT1", 4)) {
		id = b + 0x27;
		label = b + 0x2b;
	} else {
		return 0;
	}
	/* bytes per sector: a power of two from 512 to 4096 */
	if (le16(b + 11) < 512 || le16(b + 11) > 4096 ||
	    (le16(b + 11) & (le16(b + 11) - 1)))
		return 0;
	set_type(p, "vfat");
	snprintf(p->uuid, sizeof(p->uuid), "%04X-%04X", le16(id + 2), le16(id));
	fmt_label(label, 11, p->label);
	if (strcmp(p->label, "NO NAME") == 0)
		p->label[0] = '\0';
	return 1;
}

static int probe_iso(const unsigned char *b, size_t len, struct probe *p)
{
	if (!has(b, len, 0x8001, "CD001", 5) || len < 0x8000 + 72)
		return 0;
	set_type(p, "iso9660");
	fmt_label(b + 0x8028, 32, p->label);
	return 1;
}

int probe_superblock(const unsigned char *buf, size_t len, struct probe *p)
{
	/* Containers and swap first: their headers sit where a stale
	 * filesystem superblock may still be found. */
	static int (*const probes[])(const unsigned char *, size_t,
				     struct probe *) = {
		probe_luks, probe_lvm, probe_md, probe_swap, probe_xfs,
		probe_btrfs, probe_ext, probe_iso, probe_fat,
	};
	size_t i;

	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		memset(p, 0, sizeof(*p));
		if (probes[i](buf, len, p))
			return 1;
	}
	memset(p, 0, sizeof(*p));
	return 0;
}

int probe_is_container(const char *type)
{
	return strcmp(type, "crypto_LUKS") == 0 ||
	       strcmp(type, "LVM2_member") == 0 ||
	       strcmp(type, "linux_raid_member") == 0;
}

/* A GPT partition entry's name: UTF-16LE; non-ASCII shown as '?'. */
static void utf16_name(const unsigned char *s, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < 36 && o + 1 < size; i++) {
		uint16_t c = le16(s + 2 * i);

		if (c == 0)
			break;
		out[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	out[o] = '\0';
}

/* A GUID as stored by GPT: the first three fields little endian. */
static void fmt_guid(const unsigned char *g, char *out, size_t size)
{
	snprintf(out, size,
		 "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 le32(g), le16(g + 4), le16(g + 6), g[8], g[9], g[10], g[11],
		 g[12], g[13], g[14], g[15]);
}

int probe_partition(const unsigned char *disk, size_t len, unsigned int partno,
		    char *partuuid, size_t usize, char *partlabel, size_t lsize)
{
	static const unsigned char zero[16];

	if (usize == 0 || lsize == 0 || partno == 0 || len < 512 ||
	    disk[510] != 0x55 || disk[511] != 0xaa)
		return 0;
	partuuid[0] = partlabel[0] = '\0';
	/* A protective MBR (type 0xee) means GPT, whose header is LBA 1. */
	if (disk[446 + 4] == 0xee) {
		const unsigned char *h = disk + 512, *e;
		uint64_t lba;
		uint32_t n, esize;
		uint64_t off;

		if (len < 1024 || memcmp(h, "EFI PART", 8) != 0)
			return 0;
		lba = le64(h + 72);
		n = le32(h + 80);
		esize = le32(h + 84);
		if (partno > n || esize < 128 || esize > 4096 || lba > len / 512)
			return 0;
		off = lba * 512 + (uint64_t)(partno - 1) * esize;
		if (off + 128 > len)
			return 0;
		e = disk + off;
		if (memcmp(e, zero, 16) == 0)
			return 0;	/* unused entry */
		fmt_guid(e + 16, partuuid, usize);
		utf16_name(e + 56, partlabel, lsize);
		return 1;
	}
	if (le32(disk + 440) == 0)
		return 0;	/* no disk signature, no PARTUUID */
	snprintf(partuuid, usize, "%08x-%02x", le32(disk + 440), partno);
	return 1;
}
