// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for rescue-enter's parsers: fstab, mount options,
 * device names, os-release, passwd, superblocks and partition tables.
 * Built plain and with ASan+UBSan by `make check-rescue-enter`.
 * Output: "PASS name" or "FAIL name: why" per test, then the totals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "etcparse.h"
#include "probe.h"
#include "../rescue-init/disksig.h"
#include "../rescue-init/unit-test.h"

/* A buffer of exactly n bytes, so ASan catches a read past its end. */
static char *dup_exact(const char *s, size_t n)
{
	char *p = malloc(n ? n : 1);

	memcpy(p, s, n);
	return p;
}

/* ------------------------------------------------------------------ fstab */

static const char debian_fstab[] =
	"# /etc/fstab: static file system information.\n"
	"#\n"
	"# <file system> <mount point>   <type>  <options>       <dump>  <pass>\n"
	"UUID=8d0c5d3c-12aa-4c7e-9b51-0d7e1f0a1e01 /               ext4    errors=remount-ro 0       1\n"
	"UUID=1E0C-E5B0  /boot/efi       vfat    umask=0077      0       1\n"
	"UUID=8d0c5d3c-12aa-4c7e-9b51-0d7e1f0a1e02 none            swap    sw              0       0\n"
	"/dev/sr0        /media/cdrom0   udf,iso9660 user,noauto     0       0\n";

static void t_fstab_debian(void)
{
	char *b = dup_exact(debian_fstab, strlen(debian_fstab));
	struct fstab_entry e;
	size_t pos = 0;
	unsigned int line = 0;

	EXPECT(fstab_next(b, strlen(debian_fstab), &pos, &line, &e) == 1);
	EXPECT(STR_EQ(e.spec, "UUID=8d0c5d3c-12aa-4c7e-9b51-0d7e1f0a1e01"));
	EXPECT(STR_EQ(e.file, "/") && STR_EQ(e.type, "ext4"));
	EXPECT(STR_EQ(e.opts, "errors=remount-ro") && e.line == 4);
	EXPECT(fstab_next(b, strlen(debian_fstab), &pos, &line, &e) == 1);
	EXPECT(STR_EQ(e.file, "/boot/efi") && STR_EQ(e.opts, "umask=0077"));
	EXPECT(fstab_next(b, strlen(debian_fstab), &pos, &line, &e) == 1);
	EXPECT(STR_EQ(e.type, "swap") && STR_EQ(e.file, "none"));
	EXPECT(fstab_next(b, strlen(debian_fstab), &pos, &line, &e) == 1);
	EXPECT(opt_has(e.opts, "noauto") && e.line == 7);
	EXPECT(fstab_next(b, strlen(debian_fstab), &pos, &line, &e) == -1);
	free(b);
}

static void t_fstab_escapes_and_defaults(void)
{
	const char t[] = "LABEL=My\\040Disk /mnt/my\\040disk ext4\n"
			 "\t /dev/sdb1\t/srv xfs defaults,noatime 0 2";
	struct fstab_entry e;
	size_t pos = 0;
	unsigned int line = 0;

	EXPECT(fstab_next(t, sizeof(t) - 1, &pos, &line, &e) == 1);
	EXPECT(STR_EQ(e.spec, "LABEL=My Disk") && STR_EQ(e.file, "/mnt/my disk"));
	EXPECT(STR_EQ(e.opts, "defaults"));
	EXPECT(fstab_next(t, sizeof(t) - 1, &pos, &line, &e) == 1);
	EXPECT(STR_EQ(e.file, "/srv") && e.line == 2 && opt_has(e.opts, "noatime"));
	EXPECT(fstab_next(t, sizeof(t) - 1, &pos, &line, &e) == -1);
}

static void t_fstab_malformed(void)
{
	const char t[] = "/dev/sda1 /\n"		/* two fields */
			 "a b c d e f g\n"		/* seven */
			 "x\\000y /z ext4\n"		/* a NUL escape */
			 "/dev/sda2 /ok ext4\n";
	struct fstab_entry e;
	size_t pos = 0;
	unsigned int line = 0;

	EXPECT(fstab_next(t, sizeof(t) - 1, &pos, &line, &e) == 0 && e.line == 1);
	EXPECT(fstab_next(t, sizeof(t) - 1, &pos, &line, &e) == 0 && e.line == 2);
	EXPECT(fstab_next(t, sizeof(t) - 1, &pos, &line, &e) == 0 && e.line == 3);
	EXPECT(fstab_next(t, sizeof(t) - 1, &pos, &line, &e) == 1 && STR_EQ(e.file, "/ok"));
}

static void t_fstab_huge_and_garbage(void)
{
	size_t n = 100000, i, pos = 0;
	char *b = malloc(n);
	struct fstab_entry e;
	unsigned int line = 0;
	int r, entries = 0;

	memset(b, 'a', n);	/* one huge field: rejected, not copied */
	EXPECT(fstab_next(b, n, &pos, &line, &e) == 0 && pos == n);
	for (i = 0; i < n; i++)
		b[i] = (char)rnd();
	pos = 0;
	while ((r = fstab_next(b, n, &pos, &line, &e)) >= 0) {
		EXPECT(pos <= n);
		if (r == 1) {
			entries++;
			EXPECT(strlen(e.spec) < FSTAB_FIELD_MAX && e.file[0]);
		}
	}
	free(b);
}

static void t_mount_opts(void)
{
	unsigned long f;
	char data[64];

	EXPECT(mount_opts("defaults", &f, data, sizeof(data)) == 0 && f == 0 && !data[0]);
	EXPECT(mount_opts("errors=remount-ro", &f, data, sizeof(data)) == 0);
	EXPECT(f == 0 && STR_EQ(data, "errors=remount-ro"));
	EXPECT(mount_opts("rw,nosuid,nodev,noatime,umask=0077,x-systemd.automount,nofail",
			  &f, data, sizeof(data)) == 0);
	EXPECT(f == (MS_NOSUID | MS_NODEV | MS_NOATIME) && STR_EQ(data, "umask=0077"));
	EXPECT(mount_opts("ro,rw", &f, data, sizeof(data)) == 0 && !(f & MS_RDONLY));
	EXPECT(mount_opts("a=1,b=2,c=3", &f, data, 6) == -1);
}

static void t_network_and_spec(void)
{
	char v[64];

	EXPECT(fstype_is_network("nfs4") && fstype_is_network("fuse.sshfs"));
	EXPECT(!fstype_is_network("ext4") && !fstype_is_network("vfat"));
	EXPECT(spec_parse("UUID=abc-1", v, sizeof(v)) == SPEC_UUID && STR_EQ(v, "abc-1"));
	EXPECT(spec_parse("UUID=\"abc\"", v, sizeof(v)) == SPEC_UUID && STR_EQ(v, "abc"));
	EXPECT(spec_parse("LABEL=root", v, sizeof(v)) == SPEC_LABEL && STR_EQ(v, "root"));
	EXPECT(spec_parse("PARTUUID=1e0c6f7a-01", v, sizeof(v)) == SPEC_PARTUUID);
	EXPECT(spec_parse("PARTLABEL=EFI", v, sizeof(v)) == SPEC_PARTLABEL);
	EXPECT(spec_parse("/dev/disk/by-uuid/1E0C-E5B0", v, sizeof(v)) == SPEC_UUID &&
	       STR_EQ(v, "1E0C-E5B0"));
	EXPECT(spec_parse("/dev/disk/by-label/a\\x2fb", v, sizeof(v)) == SPEC_LABEL &&
	       STR_EQ(v, "a/b"));
	EXPECT(spec_parse("/dev/disk/by-id/ata-QEMU_HARDDISK_QM00001-part1", v,
			  sizeof(v)) == SPEC_UNKNOWN);
	EXPECT(spec_parse("/dev/sda1", v, sizeof(v)) == SPEC_PATH && STR_EQ(v, "/dev/sda1"));
	EXPECT(spec_parse("server:/export", v, sizeof(v)) == SPEC_UNKNOWN);
	EXPECT(spec_parse("UUID=", v, sizeof(v)) == SPEC_UNKNOWN);
	EXPECT(spec_parse("LABEL=0123456789", v, 5) == SPEC_UNKNOWN);
}

/* ------------------------------------------------------------- os-release */

static void t_osrelease_debian(void)
{
	const char t[] =
		"PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"
		"NAME=\"Debian GNU/Linux\"\n"
		"VERSION_ID=\"12\"\n"
		"ID=debian\n"
		"HOME_URL=\"https://www.debian.org/\"\n";
	char *b = dup_exact(t, sizeof(t) - 1);
	char v[OSR_VALUE_MAX];

	EXPECT(osrelease_get(b, sizeof(t) - 1, "PRETTY_NAME", v, sizeof(v)) &&
	       STR_EQ(v, "Debian GNU/Linux 12 (bookworm)"));
	EXPECT(osrelease_get(b, sizeof(t) - 1, "ID", v, sizeof(v)) && STR_EQ(v, "debian"));
	EXPECT(osrelease_get(b, sizeof(t) - 1, "VERSION_ID", v, sizeof(v)) && STR_EQ(v, "12"));
	EXPECT(!osrelease_get(b, sizeof(t) - 1, "VERSION_CODENAME", v, sizeof(v)));
	EXPECT(!osrelease_get(b, sizeof(t) - 1, "NAM", v, sizeof(v)));
	free(b);
}

static void t_osrelease_quoting(void)
{
	const char t[] = "A='single \"x\" $y'\nB=\"a \\\"q\\\" \\$ \\\\\"\nC=bare # c\n"
			 "D=x\nD=last\n  E=\"unterminated\nF=a\\ b\n";
	char v[OSR_VALUE_MAX];

	EXPECT(osrelease_get(t, sizeof(t) - 1, "A", v, sizeof(v)) &&
	       STR_EQ(v, "single \"x\" $y"));
	EXPECT(osrelease_get(t, sizeof(t) - 1, "B", v, sizeof(v)) &&
	       STR_EQ(v, "a \"q\" $ \\"));
	EXPECT(osrelease_get(t, sizeof(t) - 1, "C", v, sizeof(v)) && STR_EQ(v, "bare"));
	EXPECT(osrelease_get(t, sizeof(t) - 1, "D", v, sizeof(v)) && STR_EQ(v, "last"));
	EXPECT(osrelease_get(t, sizeof(t) - 1, "E", v, sizeof(v)) &&
	       STR_EQ(v, "unterminated"));
	EXPECT(osrelease_get(t, sizeof(t) - 1, "F", v, sizeof(v)) && STR_EQ(v, "a b"));
	EXPECT(osrelease_get(t, sizeof(t) - 1, "A", v, 4) && STR_EQ(v, "sin"));
}

static void t_passwd(void)
{
	const char t[] = "rootx:x:0:0::/:/bin/false\nroot:x:0:0:root:/root:/bin/bash\n"
			 "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin";
	char s[64];

	EXPECT(passwd_shell(t, sizeof(t) - 1, "root", s, sizeof(s)) && STR_EQ(s, "/bin/bash"));
	EXPECT(passwd_shell(t, sizeof(t) - 1, "daemon", s, sizeof(s)) &&
	       STR_EQ(s, "/usr/sbin/nologin"));
	EXPECT(!passwd_shell(t, sizeof(t) - 1, "nobody", s, sizeof(s)));
	EXPECT(!passwd_shell("root:x:0:0:root:/root:\n", 23, "root", s, sizeof(s)));
	EXPECT(!passwd_shell("root:x:0\n", 9, "root", s, sizeof(s)));
}

/* ------------------------------------------------------------ superblocks */

static unsigned char img[PROBE_SIZE];

static void t_probe_ext4(void)
{
	static const unsigned char uuid[16] = {
		0x8d, 0x0c, 0x5d, 0x3c, 0x12, 0xaa, 0x4c, 0x7e,
		0x9b, 0x51, 0x0d, 0x7e, 0x1f, 0x0a, 0x1e, 0x01 };
	struct probe p;

	memset(img, 0, sizeof(img));
	img[1024 + 0x38] = 0x53;
	img[1024 + 0x39] = 0xef;
	img[1024 + 0x60] = 0x40 | 0x02;		/* EXTENTS | FILETYPE */
	memcpy(img + 1024 + 0x68, uuid, 16);
	memcpy(img + 1024 + 0x78, "rootfs", 6);
	EXPECT(probe_superblock(img, sizeof(img), &p) == 1);
	EXPECT(STR_EQ(p.type, "ext4") && STR_EQ(p.label, "rootfs"));
	EXPECT(STR_EQ(p.uuid, "8d0c5d3c-12aa-4c7e-9b51-0d7e1f0a1e01"));
	EXPECT(probe_superblock(img, 1024 + 0x60, &p) == 0);	/* truncated */
}

static void t_probe_swap_fat_luks_lvm(void)
{
	struct probe p;

	memset(img, 0, sizeof(img));
	memcpy(img + 4096 - 10, "SWAPSPACE2", 10);
	img[1024 + 12] = 0xab;
	EXPECT(probe_superblock(img, sizeof(img), &p) && STR_EQ(p.type, "swap"));
	EXPECT(strncmp(p.uuid, "ab000000-", 9) == 0);

	memset(img, 0, sizeof(img));	/* mkfs.fat -F 32 -i 1E0CE5B0 */
	img[11] = 0x00; img[12] = 0x02;
	memcpy(img + 0x52, "FAT32   ", 8);
	img[0x43] = 0xb0; img[0x44] = 0xe5; img[0x45] = 0x0c; img[0x46] = 0x1e;
	memcpy(img + 0x47, "NO NAME    ", 11);
	img[510] = 0x55; img[511] = 0xaa;
	EXPECT(probe_superblock(img, sizeof(img), &p) && STR_EQ(p.type, "vfat"));
	EXPECT(STR_EQ(p.uuid, "1E0C-E5B0") && STR_EQ(p.label, ""));

	memset(img, 0, sizeof(img));	/* the version is big-endian */
	memcpy(img, "LUKS\xba\xbe\x00\x02", 8);
	memcpy(img + 0x18, "cryptroot", 9);
	memcpy(img + 0xa8, "5f1a0cde-0000-4000-8000-000000000001", 36);
	EXPECT(probe_superblock(img, sizeof(img), &p) && STR_EQ(p.type, "crypto_LUKS"));
	EXPECT(STR_EQ(p.uuid, "5f1a0cde-0000-4000-8000-000000000001"));
	EXPECT(STR_EQ(p.label, "cryptroot"));
	EXPECT(probe_is_container(p.type));
	img[7] = 0x01;			/* LUKS1: no label field */
	EXPECT(probe_superblock(img, sizeof(img), &p) && STR_EQ(p.label, ""));
	img[7] = 0x03;			/* no such version */
	EXPECT(probe_superblock(img, sizeof(img), &p) == 0);

	memset(img, 0, sizeof(img));	/* pvcreate: the label in sector 1 */
	memcpy(img + 512, "LABELONE", 8);
	img[512 + 8] = 1;
	img[512 + 20] = 32;		/* offset of the pv_header */
	memcpy(img + 512 + 24, "LVM2 001", 8);
	memcpy(img + 512 + 32, "abcdefghijklmnopqrstuvwxyz012345", 32);
	put_le32(img + 512 + 16, lvm_crc(img + 512 + 20, 512 - 20));
	EXPECT(probe_superblock(img, sizeof(img), &p) && STR_EQ(p.type, "LVM2_member"));
	EXPECT(STR_EQ(p.uuid, "abcdef-ghij-klmn-opqr-stuv-wxyz-012345"));
	img[512 + 40] ^= 1;		/* a stale label: its CRC is wrong */
	EXPECT(probe_superblock(img, sizeof(img), &p) == 0);

	memset(img, 0, sizeof(img));
	EXPECT(probe_superblock(img, sizeof(img), &p) == 0 && !p.type[0]);
}

static void t_probe_garbage(void)
{
	struct probe p;
	size_t i, n;

	for (n = 0; n < 200; n++) {
		size_t len = (size_t)rnd() * 300;

		for (i = 0; i < sizeof(img); i++)
			img[i] = rnd();
		/* plant magics at random so the parsers get past them */
		if (n % 3 == 0)
			memcpy(img, "LUKS\xba\xbe", 6);
		if (n % 5 == 0)
			memcpy(img + 65536 + 0x40, "_BHRfS_M", 8);
		if (len > sizeof(img))
			len = sizeof(img);
		if (probe_superblock(img, len, &p)) {
			EXPECT(memchr(p.type, 0, sizeof(p.type)) && p.type[0]);
			EXPECT(memchr(p.uuid, 0, sizeof(p.uuid)));
			EXPECT(memchr(p.label, 0, sizeof(p.label)));
		}
	}
}

static void t_partitions(void)
{
	char u[48], l[48];

	memset(img, 0, sizeof(img));
	img[510] = 0x55; img[511] = 0xaa;
	img[440] = 0x7a; img[441] = 0x6f; img[442] = 0x0c; img[443] = 0x1e;
	EXPECT(probe_partition(img, sizeof(img), 5, u, sizeof(u), l, sizeof(l)));
	EXPECT(STR_EQ(u, "1e0c6f7a-05") && STR_EQ(l, ""));

	/* GPT: protective MBR, header at LBA 1, entries at LBA 2. */
	img[446 + 4] = 0xee;
	memcpy(img + 512, "EFI PART", 8);
	img[512 + 72] = 2;			/* entries LBA */
	img[512 + 80] = 128;			/* entries */
	img[512 + 84] = 128;			/* entry size */
	{
		unsigned char *e = img + 1024 + 128;	/* partition 2 */
		static const unsigned char guid[16] = {
			0x7a, 0x6f, 0x0c, 0x1e, 0x00, 0x00, 0x00, 0x40,
			0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02 };

		e[0] = 1;			/* type GUID not zero: in use */
		memcpy(e + 16, guid, 16);
		e[56] = 'r'; e[58] = 'o'; e[60] = 'o'; e[62] = 't';
	}
	EXPECT(probe_partition(img, sizeof(img), 2, u, sizeof(u), l, sizeof(l)));
	EXPECT(STR_EQ(u, "1e0c6f7a-0000-4000-8000-000000000002") && STR_EQ(l, "root"));
	EXPECT(!probe_partition(img, sizeof(img), 1, u, sizeof(u), l, sizeof(l)));
	EXPECT(!probe_partition(img, sizeof(img), 129, u, sizeof(u), l, sizeof(l)));
	EXPECT(!probe_partition(img, 1000, 2, u, sizeof(u), l, sizeof(l)));
	img[512 + 84] = 0;			/* a broken entry size */
	EXPECT(!probe_partition(img, sizeof(img), 2, u, sizeof(u), l, sizeof(l)));
}

int main(void)
{
	run("fstab/debian-installer", t_fstab_debian);
	run("fstab/escapes-defaults", t_fstab_escapes_and_defaults);
	run("fstab/malformed", t_fstab_malformed);
	run("fstab/huge-garbage", t_fstab_huge_and_garbage);
	run("fstab/mount-options", t_mount_opts);
	run("fstab/network-and-names", t_network_and_spec);
	run("os-release/debian", t_osrelease_debian);
	run("os-release/quoting", t_osrelease_quoting);
	run("passwd/shell", t_passwd);
	run("probe/ext4", t_probe_ext4);
	run("probe/swap-fat-luks-lvm", t_probe_swap_fat_luks_lvm);
	run("probe/garbage", t_probe_garbage);
	run("probe/partitions", t_partitions);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
