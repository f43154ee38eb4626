// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for parse.c (the kernel command line, mountinfo, the
 * active-console list, the small helpers) and disksig.c (LUKS, md and
 * LVM2 headers, built here field by field as the formats lay them out).  Built twice by
 * `make check-rescue-init`: plain, and with ASan+UBSan so an overflow in
 * a parser is a failure even when the result happens to look right.
 *
 * Output: one "PASS name" or "FAIL name: why" per test, then
 * "N passed, N failed"; the exit status is 1 if anything failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disksig.h"
#include "parse.h"
#include "unit-test.h"

static char *garbage(size_t n, const char *alphabet)
{
	char *p = malloc(n + 1);
	size_t i, al = alphabet ? strlen(alphabet) : 0;

	for (i = 0; i < n; i++)
		p[i] = al ? alphabet[rnd() % al] : (char)rnd();
	p[n] = '\0';
	return p;
}

/* Exact-size heap copy: ASan sees any read past len. */
static char *dup_exact(const char *s, size_t len)
{
	char *p = malloc(len ? len : 1);

	memcpy(p, s, len);
	return p;
}

/* ---------------------------------------------------------------- cmdline */

static int warnings;
static char last_why[128];

static void count_warn(void *ctx, const char *word, size_t wlen,
		       const char *why)
{
	(void)ctx;
	(void)word;
	(void)wlen;
	warnings++;
	snprintf(last_why, sizeof(last_why), "%s", why);
}

static int parse(const char *s, size_t len, struct rescue_opts *o)
{
	char *b = dup_exact(s, len);
	int bad;

	warnings = 0;
	last_why[0] = '\0';
	opts_init(o);
	bad = parse_cmdline(b, len, o, count_warn, NULL);
	free(b);
	return bad;
}

static int parse_str(const char *s, struct rescue_opts *o)
{
	return parse(s, strlen(s), o);
}

static int opts_sane(const struct rescue_opts *o)
{
	return memchr(o->shell, '\0', SHELL_MAX) && o->shell[0] == '/' &&
	       memchr(o->term, '\0', TERM_MAX) &&
	       (o->check == 0 || o->check == 1);
}

static void t_cmdline_empty(void)
{
	struct rescue_opts o;

	EXPECT(parse("", 0, &o) == 0);
	EXPECT(STR_EQ(o.shell, DEFAULT_SHELL) && !o.check && !o.term[0]);
	EXPECT(parse_str("   \t\n  ", &o) == 0 && STR_EQ(o.shell, "/bin/sh"));
	EXPECT(parse_cmdline(NULL, 0, &o, NULL, NULL) == 0);
}

static void t_cmdline_typical(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("BOOT_IMAGE=/boot/bzImage root=PARTUUID=1234abcd-01,"
			 "/dev/sr0 rootfstype=iso9660 ro rootwait "
			 "console=tty0 console=ttyS0,115200 rescue.check "
			 "rescue.shell=/bin/ash\n", &o) == 0);
	EXPECT(STR_EQ(o.shell, "/bin/ash") && o.check == 1);
	EXPECT(warnings == 0);
	EXPECT(o.kernel_loglevel == 0);
}

/* The person at the boot prompt sets the kernel's console level. */
static void t_cmdline_loglevel(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("ro loglevel=7 rootwait", &o) == 0);
	EXPECT(o.kernel_loglevel == 1);
	EXPECT(parse_str("quiet", &o) == 0 && o.kernel_loglevel == 1);
	EXPECT(parse_str("console=ttyS0 debug", &o) == 0 &&
	       o.kernel_loglevel == 1);
	/* Not the words themselves: */
	EXPECT(parse_str("quietly debug=1 loglevel xloglevel=3 "
			 "rescue.debug", &o) == 1 && o.kernel_loglevel == 0);
}

static void t_cmdline_shell_rejects(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("rescue.shell=", &o) == 1 && warnings == 1);
	EXPECT(STR_EQ(o.shell, "/bin/sh") && STR_EQ(last_why, "empty value"));
	EXPECT(parse_str("rescue.shell", &o) == 1 && STR_EQ(o.shell, "/bin/sh"));
	EXPECT(parse_str("rescue.shell=bin/sh", &o) == 1);
	EXPECT(STR_EQ(o.shell, "/bin/sh"));
	EXPECT(parse_str("rescue.shell=/bin/a\x01", &o) == 1);
	EXPECT(parse_str("rescue.shell=\"\"", &o) == 1);
	EXPECT(STR_EQ(o.shell, "/bin/sh"));
}

static void t_cmdline_shell_length(void)
{
	struct rescue_opts o;
	char w[13 + 5001];

	memcpy(w, "rescue.shell=", 13);
	memset(w + 13, 'a', 5000);
	w[13] = '/';
	w[13 + 5000] = '\0';
	EXPECT(parse_str(w, &o) == 1 && STR_EQ(last_why, "value too long"));
	EXPECT(STR_EQ(o.shell, "/bin/sh"));
	w[13 + SHELL_MAX] = '\0';		/* 256 chars: one too many */
	EXPECT(parse_str(w, &o) == 1 && STR_EQ(o.shell, "/bin/sh"));
	w[13 + SHELL_MAX - 1] = '\0';		/* 255 chars: fits */
	EXPECT(parse_str(w, &o) == 0 && strlen(o.shell) == SHELL_MAX - 1);
}

static void t_cmdline_quotes(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("rescue.shell=\"/bin/my shell\" ro", &o) == 0);
	EXPECT(STR_EQ(o.shell, "/bin/my shell"));
	EXPECT(parse_str("\"rescue.shell=/bin/ash\"", &o) == 0);
	EXPECT(STR_EQ(o.shell, "/bin/ash"));
	EXPECT(parse_str("rescue.shell=\"/bin/ash", &o) == 0);
	EXPECT(STR_EQ(o.shell, "/bin/ash"));
	/* An unterminated quote swallows the rest, like the kernel. */
	EXPECT(parse_str("foo=\"a b rescue.check", &o) == 0 && !o.check);
	EXPECT(parse_str("\"", &o) == 0 && parse_str("\"\"", &o) == 0);
}

static void t_cmdline_check_values(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("rescue.check=1", &o) == 0 && o.check == 1);
	EXPECT(parse_str("rescue.check=yes", &o) == 0 && o.check == 1);
	EXPECT(parse_str("rescue.check rescue.check=0", &o) == 0 && !o.check);
	EXPECT(parse_str("rescue.check=off", &o) == 0 && !o.check);
	EXPECT(parse_str("rescue.check=maybe", &o) == 1 && !o.check);
	EXPECT(parse_str("rescue.check=", &o) == 1 && !o.check);
	EXPECT(parse_str("rescue.checkX", &o) == 1 && !o.check);
	EXPECT(STR_EQ(last_why, "unknown rescue option"));
}

static void t_cmdline_net(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("quiet", &o) == 0 && !o.no_net);
	EXPECT(parse_str("rescue.net=off", &o) == 0 && o.no_net);
	EXPECT(parse_str("rescue.net=0", &o) == 0 && o.no_net);
	EXPECT(parse_str("rescue.net=off rescue.net", &o) == 0 && !o.no_net);
	EXPECT(parse_str("rescue.net=on", &o) == 0 && !o.no_net);
	EXPECT(parse_str("rescue.net=eth0", &o) == 1 && !o.no_net);
	EXPECT(STR_EQ(last_why, "value is not one of 1 0 yes no on off"));
}

static void t_cmdline_term(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("rescue.term=xterm-256color", &o) == 0);
	EXPECT(STR_EQ(o.term, "xterm-256color"));
	EXPECT(parse_str("rescue.term=a/b", &o) == 1 && !o.term[0]);
	EXPECT(parse_str("rescue.term=", &o) == 1 && !o.term[0]);
	EXPECT(parse_str("rescue.term=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			 &o) == 1 && !o.term[0]);
}

static void t_cmdline_boot(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("ro", &o) == 0 && !o.boot[0]);
	EXPECT(parse_str("rescue.boot=auto", &o) == 0 && STR_EQ(o.boot, "auto"));
	EXPECT(parse_str("rescue.boot=/dev/vda1", &o) == 0 &&
	       STR_EQ(o.boot, "/dev/vda1"));
	EXPECT(parse_str("\"rescue.boot=UUID=8d0c5d3c-12aa\"", &o) == 0 &&
	       STR_EQ(o.boot, "UUID=8d0c5d3c-12aa"));
	EXPECT(parse_str("rescue.boot", &o) == 1 && !o.boot[0]);
	EXPECT(parse_str("rescue.boot=", &o) == 1 && !o.boot[0]);
	EXPECT(parse_str("\"rescue.boot=a b\"", &o) == 1 && !o.boot[0]);
	EXPECT(STR_EQ(last_why, "not a device name"));
	EXPECT(parse_str("rescue.boot=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &o) == 1 &&
	       !o.boot[0]);
	EXPECT(parse_str("rescue.boot=/dev/vda1 rescue.boot=auto", &o) == 0 &&
	       STR_EQ(o.boot, "auto"));
}

static void t_cmdline_unknown(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("foo bar=baz quiet init=/sbin/init --", &o) == 0);
	EXPECT(warnings == 0);
	EXPECT(parse_str("rescue. rescue.foo=1 rescue.Shell=/x", &o) == 3);
	EXPECT(STR_EQ(o.shell, "/bin/sh"));
	EXPECT(parse_str("rescue", &o) == 0 && parse_str("rescue=", &o) == 0);
}

static void t_cmdline_last_wins(void)
{
	struct rescue_opts o;

	EXPECT(parse_str("rescue.shell=/a rescue.shell=/b", &o) == 0);
	EXPECT(STR_EQ(o.shell, "/b"));
	EXPECT(parse_str("rescue.shell=/a rescue.shell=", &o) == 1);
	EXPECT(STR_EQ(o.shell, "/a"));
}

static void t_cmdline_truncated(void)
{
	static const char s[] = "rescue.shell=/bin/ashXXXX rescue.check";
	struct rescue_opts o;

	/* Only len bytes count: nothing past it may be read or used. */
	EXPECT(parse(s, 21, &o) == 0 && STR_EQ(o.shell, "/bin/ash"));
	EXPECT(!o.check);
	EXPECT(parse(s, 9, &o) == 1 && STR_EQ(o.shell, "/bin/sh"));
	EXPECT(parse(s, 13, &o) == 1 && STR_EQ(last_why, "empty value"));
}

static void t_cmdline_nul_bytes(void)
{
	static const char s[] = "rescue.check\0rescue.shell=/x\0\0";
	struct rescue_opts o;

	EXPECT(parse(s, sizeof(s) - 1, &o) == 0);
	EXPECT(o.check && STR_EQ(o.shell, "/x"));
	/* NUL ends a word even inside quotes: what follows is a new word. */
	EXPECT(parse("rescue.shell=\"/a\0b\"", 19, &o) == 0);
	EXPECT(STR_EQ(o.shell, "/a"));
}

static void t_cmdline_garbage(void)
{
	struct rescue_opts o;
	char *g;
	int i;

	for (i = 0; i < 20; i++) {
		g = garbage(100000, NULL);
		parse(g, 100000, &o);
		free(g);
		EXPECT(opts_sane(&o));
		g = garbage(50000, "rescue.shl=ckm/\" \t01");
		parse(g, 50000, &o);
		free(g);
		EXPECT(opts_sane(&o));
	}
}

static void t_cmdline_huge(void)
{
	size_t n = 4 << 20;
	struct rescue_opts o;
	char *g = malloc(n);

	memset(g, 'x', n);
	memcpy(g, "rescue.shell=/", 14);
	EXPECT(parse(g, n, &o) == 1 && STR_EQ(o.shell, "/bin/sh"));
	memset(g, '"', n);
	EXPECT(parse(g, n, &o) == 0 && opts_sane(&o));
	free(g);
}

/* -------------------------------------------------------------- mountinfo */

static const char mi_real[] =
	"22 1 11:0 / / ro,relatime shared:1 - iso9660 /dev/sr0 ro,nojoliet\n"
	"23 22 0:5 / /dev rw,nosuid,relatime shared:2 - devtmpfs devtmpfs "
	"rw,size=113940k,nr_inodes=28485,mode=755\n"
	"24 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
	"25 23 0:22 / /dev/pts rw,nosuid,noexec,relatime - devpts devpts "
	"rw,gid=5,mode=620,ptmxmode=666\n"
	"30 22 8:1 /sub /mnt/my\\040disk rw,relatime master:3 unbindable - "
	"ext4 /dev/sda1 rw\n";

static void t_mountinfo_typical(void)
{
	struct mnt_entry e;
	size_t pos = 0, len = sizeof(mi_real) - 1;
	int n = 0, r;

	while ((r = mountinfo_next(mi_real, len, &pos, &e)) >= 0) {
		EXPECT(r == 1);
		n++;
	}
	EXPECT(n == 5 && pos == len);
	EXPECT(mountinfo_find(mi_real, len, "/", &e));
	EXPECT(e.major == 11 && e.minor == 0 && STR_EQ(e.fstype, "iso9660"));
	EXPECT(STR_EQ(e.source, "/dev/sr0") && e.id == 22 && e.parent == 1);
	EXPECT(mountinfo_find(mi_real, len, "/dev", &e));
	EXPECT(STR_EQ(e.fstype, "devtmpfs"));
	EXPECT(mountinfo_find(mi_real, len, "/mnt/my disk", &e));
	EXPECT(STR_EQ(e.fstype, "ext4") && e.major == 8 && e.minor == 1);
	EXPECT(!mountinfo_find(mi_real, len, "/sys", &e));
	EXPECT(!mountinfo_find(mi_real, len, "/mnt/my\\040disk", &e));
}

static void t_mountinfo_stacked(void)
{
	static const char s[] =
		"1 0 0:1 / / rw - rootfs rootfs rw\n"
		"2 1 0:5 / /dev rw - devtmpfs devtmpfs rw\n"
		"3 1 0:6 / /dev rw - tmpfs tmpfs rw\n";
	struct mnt_entry e;

	/* The last mount on a path is the visible one. */
	EXPECT(mountinfo_find(s, sizeof(s) - 1, "/dev", &e));
	EXPECT(STR_EQ(e.fstype, "tmpfs") && e.id == 3);
}

static void t_mountinfo_empty(void)
{
	struct mnt_entry e;
	size_t pos = 0;

	EXPECT(mountinfo_next("", 0, &pos, &e) == -1);
	EXPECT(!mountinfo_find("", 0, "/", &e));
	EXPECT(!mountinfo_find(NULL, 0, "/", &e));
	pos = 0;
	EXPECT(mountinfo_next("\n", 1, &pos, &e) == 0 && pos == 1);
	EXPECT(mountinfo_next("\n", 1, &pos, &e) == -1);
}

static void t_mountinfo_truncated(void)
{
	static const char whole[] = "22 1 11:0 / / ro - iso9660 /dev/sr0 ro";
	size_t len = strlen(whole), cut;
	struct mnt_entry e;
	char *b;
	int r;

	/* Complete without the final newline: fine. */
	b = dup_exact(whole, len);
	EXPECT(mountinfo_find(b, len, "/", &e) && STR_EQ(e.source, "/dev/sr0"));
	free(b);
	/* Cut anywhere before the source: malformed, never a match. */
	for (cut = 0; cut < len - 12; cut++) {
		size_t pos = 0;

		b = dup_exact(whole, cut);
		r = mountinfo_next(b, cut, &pos, &e);
		free(b);
		EXPECT(r <= 0);
	}
}

static void t_mountinfo_malformed(void)
{
	static const char *const bad[] = {
		"22 1 11:0 / / ro iso9660 /dev/sr0 ro",		/* no - */
		"x 1 11:0 / / ro - iso9660 /dev/sr0 ro",
		"22 1 110 / / ro - iso9660 /dev/sr0 ro",	/* no : */
		"22 1 :0 / / ro - iso9660 /dev/sr0 ro",
		"22 1 11: / / ro - iso9660 /dev/sr0 ro",
		"22 1 99999999999:0 / / ro - iso9660 /dev/sr0 ro",
		"4294967296 1 1:0 / / ro - iso9660 /dev/sr0 ro",
		"22 1 11:0 / /a\\000b ro - iso9660 /dev/sr0 ro",
		"22 1 11:0 / / ro - -",
		"22 1 11:0 / / ro -",
		"- - - - - - -",
	};
	struct mnt_entry e;
	size_t i, pos;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pos = 0;
		EXPECT(mountinfo_next(bad[i], strlen(bad[i]), &pos, &e) == 0);
		EXPECT(e.mountpoint[0] == '\0');
	}
	pos = 0;
	EXPECT(mountinfo_next("4294967295 0 1:2 / /x ro - t s o", 32, &pos,
			      &e) == 1 && e.id == 4294967295u);
}

static void t_mountinfo_long_fields(void)
{
	char line[2048], *p = line;
	struct mnt_entry e;
	size_t pos = 0;

	p += sprintf(p, "5 1 0:1 / /");
	memset(p, 'm', 300);
	p += 300;
	p += sprintf(p, " rw - tmpfs tmpfs rw\n");
	EXPECT(mountinfo_next(line, strlen(line), &pos, &e) == 0);
	/* Source too long: cut short, the line still counts. */
	p = line;
	p += sprintf(p, "5 1 0:1 / /t rw - tmpfs ");
	memset(p, 's', 500);
	p += 500;
	p += sprintf(p, " rw");
	pos = 0;
	EXPECT(mountinfo_next(line, strlen(line), &pos, &e) == 1);
	EXPECT(strlen(e.source) == MNT_SRC_MAX - 1 && STR_EQ(e.mountpoint, "/t"));
	/* fstype too long: rejected. */
	pos = 0;
	EXPECT(mountinfo_next("5 1 0:1 / /t rw - "
			      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa s o",
			      62, &pos, &e) == 0);
	/* A mount point of exactly MNT_PATH_MAX - 1 bytes fits. */
	p = line;
	p += sprintf(p, "5 1 0:1 / /");
	memset(p, 'm', MNT_PATH_MAX - 2);
	p += MNT_PATH_MAX - 2;
	p += sprintf(p, " rw - tmpfs tmpfs rw\n");
	pos = 0;
	EXPECT(mountinfo_next(line, strlen(line), &pos, &e) == 1);
	EXPECT(strlen(e.mountpoint) == MNT_PATH_MAX - 1);
}

static void t_mountinfo_escapes(void)
{
	static const char s[] =
		"1 0 0:1 / /a\\011b\\012c\\134d\\04 rw - t s o\n";
	struct mnt_entry e;
	size_t pos = 0;

	EXPECT(mountinfo_next(s, sizeof(s) - 1, &pos, &e) == 1);
	EXPECT(STR_EQ(e.mountpoint, "/a\tb\nc\\d\\04"));
	pos = 0;
	EXPECT(mountinfo_next("1 0 0:1 / /a\\", 13, &pos, &e) == 0);
}

static void t_mountinfo_garbage(void)
{
	struct mnt_entry e;
	size_t pos;
	char *g;
	int i, lines;

	for (i = 0; i < 20; i++) {
		g = garbage(65536, i & 1 ? NULL : "0123456789 :-/\\\nabc");
		pos = 0;
		lines = 0;
		while (mountinfo_next(g, 65536, &pos, &e) >= 0) {
			EXPECT(memchr(e.mountpoint, '\0', MNT_PATH_MAX));
			EXPECT(memchr(e.fstype, '\0', MNT_TYPE_MAX));
			EXPECT(memchr(e.source, '\0', MNT_SRC_MAX));
			EXPECT(++lines <= 65536);
		}
		EXPECT(pos == 65536);
		mountinfo_find(g, 65536, "/dev", &e);
		free(g);
	}
}

/* ---------------------------------------------------------------- console */

static int consoles(const char *s, size_t len, char names[][TTY_NAME_MAX],
		    int max)
{
	char *b = dup_exact(s, len);
	int n = console_list(b, len, names, max);

	free(b);
	return n;
}

static void t_console_typical(void)
{
	char n[4][TTY_NAME_MAX];

	EXPECT(consoles("tty0 ttyS0\n", 11, n, 4) == 2);
	EXPECT(STR_EQ(n[0], "tty0") && STR_EQ(n[1], "ttyS0"));
	EXPECT(consoles("ttyS0", 5, n, 4) == 1 && STR_EQ(n[0], "ttyS0"));
	EXPECT(consoles("  hvc0\t\n", 8, n, 4) == 1 && STR_EQ(n[0], "hvc0"));
}

static void t_console_empty(void)
{
	char n[4][TTY_NAME_MAX];

	EXPECT(consoles("", 0, n, 4) == 0);
	EXPECT(consoles("\n", 1, n, 4) == 0);
	EXPECT(consoles("   ", 3, n, 4) == 0);
	EXPECT(console_list(NULL, 0, n, 4) == 0);
	EXPECT(consoles("ttyS0", 5, n, 0) == 0);
}

static void t_console_rejects(void)
{
	char n[4][TTY_NAME_MAX];
	char longname[64];

	EXPECT(consoles("../etc/passwd ttyS0", 19, n, 4) == 1);
	EXPECT(STR_EQ(n[0], "ttyS0"));
	EXPECT(consoles(". .. a/b tty\x01 ttyS1", 20, n, 4) == 1);
	EXPECT(STR_EQ(n[0], "ttyS1"));
	EXPECT(consoles("ttyS0 ttyS0 ttyS0", 17, n, 4) == 1);
	memset(longname, 'a', sizeof(longname));
	EXPECT(consoles(longname, sizeof(longname), n, 4) == 0);
	EXPECT(consoles(longname, TTY_NAME_MAX - 1, n, 4) == 1);
	EXPECT(strlen(n[0]) == TTY_NAME_MAX - 1);
}

static void t_console_many(void)
{
	static const char s[] = "a b c d e f g h";
	char n[4][TTY_NAME_MAX];

	EXPECT(consoles(s, sizeof(s) - 1, n, 4) == 4 && STR_EQ(n[3], "d"));
	/* Cut mid-name: the fragment is a name too; it is what was read. */
	EXPECT(consoles("tty0 tty", 8, n, 4) == 2 && STR_EQ(n[1], "tty"));
}

static void t_console_garbage(void)
{
	char n[4][TTY_NAME_MAX];
	char *g;
	int i, k, j;

	for (i = 0; i < 50; i++) {
		g = garbage(4096, i & 1 ? NULL : "tyS0 \n./");
		k = consoles(g, 4096, n, 4);
		free(g);
		EXPECT(k >= 0 && k <= 4);
		for (j = 0; j < k; j++)
			EXPECT(memchr(n[j], '\0', TTY_NAME_MAX) &&
			       !strchr(n[j], '/') && n[j][0]);
	}
}

/* ------------------------------------------------------------ small bits */

static void t_parse_u64(void)
{
	uint64_t v;

	EXPECT(parse_u64("12345\n", 6, &v) == 0 && v == 12345);
	EXPECT(parse_u64("0", 1, &v) == 0 && v == 0);
	EXPECT(parse_u64("18446744073709551615", 20, &v) == 0 &&
	       v == UINT64_MAX);
	EXPECT(parse_u64("18446744073709551616", 20, &v) == -1);
	EXPECT(parse_u64("99999999999999999999999", 23, &v) == -1);
	EXPECT(parse_u64("", 0, &v) == -1);
	EXPECT(parse_u64("\n", 1, &v) == -1);
	EXPECT(parse_u64("abc", 3, &v) == -1);
	EXPECT(parse_u64("12 34", 5, &v) == -1);
	EXPECT(parse_u64("12\0", 3, &v) == -1);
	EXPECT(parse_u64("-1", 2, &v) == -1);
}

static void t_format_size(void)
{
	char b[32];

	format_size(0, b, sizeof(b));
	EXPECT(STR_EQ(b, "0 B"));
	format_size(512, b, sizeof(b));
	EXPECT(STR_EQ(b, "512 B"));
	format_size(1024, b, sizeof(b));
	EXPECT(STR_EQ(b, "1.0 KiB"));
	format_size(1536, b, sizeof(b));
	EXPECT(STR_EQ(b, "1.5 KiB"));
	format_size(64ULL << 20, b, sizeof(b));
	EXPECT(STR_EQ(b, "64.0 MiB"));
	format_size((1ULL << 30) - 1, b, sizeof(b));
	EXPECT(STR_EQ(b, "1023.9 MiB"));
	format_size(500107862016ULL, b, sizeof(b));
	EXPECT(STR_EQ(b, "465.7 GiB"));
	format_size(UINT64_MAX, b, sizeof(b));
	EXPECT(STR_EQ(b, "15.9 EiB"));
	format_size(64ULL << 20, b, 4);
	EXPECT(STR_EQ(b, "64."));
}

static const char *volatile bad_fmt = "%s|%q|%";

static void t_rfmt(void)
{
	char b[64];

	EXPECT(rsnprintf(b, sizeof(b), "%s %d %u %x", "a", -42, 42u, 255u) == 11);
	EXPECT(STR_EQ(b, "a -42 42 ff"));
	rsnprintf(b, sizeof(b), "%lld %llu %ld %zu", -9223372036854775807LL - 1,
		  18446744073709551615ULL, -1L, (size_t)7);
	EXPECT(STR_EQ(b, "-9223372036854775808 18446744073709551615 -1 7"));
	rsnprintf(b, sizeof(b), "[%.*s][%-4s][%4s][%.2s][%c%%]", 3, "abcdef",
		  "ab", "ab", "xyz", 'q');
	EXPECT(STR_EQ(b, "[abc][ab  ][  ab][xy][q%]"));
	EXPECT(rsnprintf(b, 5, "%s", "abcdefgh") == 4 && STR_EQ(b, "abcd"));
	EXPECT(rsnprintf(b, 1, "%s", "abc") == 0 && b[0] == '\0');
	b[0] = 'z';
	EXPECT(rsnprintf(b, 0, "%s", "abc") == 0 && b[0] == 'z');
	/* Unsupported conversions are printed, not guessed (not a literal,
	 * so that -Wformat lets the test through). */
	rsnprintf(b, sizeof(b), bad_fmt, (char *)NULL);
	EXPECT(STR_EQ(b, "(null)|%q|%"));
}

/* -------------------------------------------------------------- disksig */

#define DEV_BYTES	(64ULL << 20)

/* An md 1.x superblock as mdadm writes it (checked once against
 * `mdadm --examine`: "Checksum : ... - correct"). */
static void md1_build(unsigned char *b, uint64_t at, const char *name,
		      uint32_t max_dev)
{
	uint64_t sum = 0;
	uint32_t i;

	memset(b, 0, MD_SB_BYTES);
	put_le32(b, 0xa92b4efc);
	put_le32(b + 4, 1);
	memset(b + 16, 0x11, 16);
	memcpy(b + 32, name, strlen(name));
	put_le32(b + 72, 1);			/* raid1 */
	put_le32(b + 92, 2);			/* raid_disks */
	put_le64(b + 144, at / 512);		/* super_offset */
	put_le32(b + 220, max_dev);
	for (i = 0; i < max_dev && 256 + 2 * i + 2 <= MD_SB_BYTES; i++) {
		b[256 + 2 * i] = i < 2 ? (unsigned char)i : 0xff;
		b[257 + 2 * i] = i < 2 ? 0 : 0xff;
	}
	for (i = 0; i < 256 + 2 * max_dev && i + 4 <= MD_SB_BYTES; i += 4)
		sum += (uint32_t)b[i] | (uint32_t)b[i + 1] << 8 |
		       (uint32_t)b[i + 2] << 16 | (uint32_t)b[i + 3] << 24;
	put_le32(b + 216, (uint32_t)((sum & 0xffffffff) + (sum >> 32)));
}

static void t_luks(void)
{
	unsigned char b[16] = "LUKS\xba\xbe\0\2";

	EXPECT(luks_version(b, sizeof(b)) == 2);
	b[7] = 1;
	EXPECT(luks_version(b, sizeof(b)) == 1);
	EXPECT(luks_version(b, 7) == 0);
	b[7] = 3;
	EXPECT(luks_version(b, sizeof(b)) == 0);
	b[6] = 1;
	b[7] = 1;
	EXPECT(luks_version(b, sizeof(b)) == 0);	/* 257 */
	memcpy(b, "SKUL\xba\xbe\0\2", 8);		/* LUKS2's 2nd header */
	EXPECT(luks_version(b, sizeof(b)) == 0);
}

static void t_md_offsets(void)
{
	uint64_t at[4];

	EXPECT(md_super_offsets(DEV_BYTES, at) == 4);
	EXPECT(at[0] == 0 && at[1] == 4096);
	EXPECT(at[2] == DEV_BYTES - 8192);		/* 1.0 */
	EXPECT(at[3] == DEV_BYTES - 65536);		/* 0.90 */
	/* Not a multiple of 4 KiB / 64 KiB: rounded down, as md does. */
	EXPECT(md_super_offsets(DEV_BYTES + 5000, at) == 4);
	EXPECT(at[2] == DEV_BYTES - 4096 && at[3] == DEV_BYTES - 65536);
	EXPECT(md_super_offsets(10000, at) == 1 && at[0] == 0);
	EXPECT(md_super_offsets(0, at) == 1);
}

static void t_md1(void)
{
	static unsigned char b[MD_SB_BYTES];
	struct disk_sig s;

	md1_build(b, 4096, "rescue:0", 128);		/* 1.2 */
	memset(&s, 0, sizeof(s));
	EXPECT(md_super(b, sizeof(b), 4096, DEV_BYTES, &s) == 1);
	EXPECT(s.kind == SIG_MD && STR_EQ(s.name, "md0"));
	/* The same bytes anywhere else are a stale copy, not a member. */
	EXPECT(md_super(b, sizeof(b), 0, DEV_BYTES, &s) == 0);
	md1_build(b, 0, "data", 128);			/* 1.1 */
	EXPECT(md_super(b, sizeof(b), 0, DEV_BYTES, &s) == 1);
	EXPECT(STR_EQ(s.name, "md/data"));
	md1_build(b, DEV_BYTES - 8192, "otherhost:home", 384);	/* 1.0 */
	EXPECT(md_super(b, sizeof(b), DEV_BYTES - 8192, DEV_BYTES, &s) == 1);
	EXPECT(STR_EQ(s.name, "md/home"));
	md1_build(b, 4096, "", 128);
	EXPECT(md_super(b, sizeof(b), 4096, DEV_BYTES, &s) == 1);
	EXPECT(STR_EQ(s.name, ""));
	md1_build(b, 4096, "host:", 128);
	EXPECT(md_super(b, sizeof(b), 4096, DEV_BYTES, &s) == 1);
	EXPECT(STR_EQ(s.name, ""));
	md1_build(b, 4096, "a/b c\x01", 128);
	EXPECT(md_super(b, sizeof(b), 4096, DEV_BYTES, &s) == 1);
	EXPECT(STR_EQ(s.name, "md/a?b?c?"));
	md1_build(b, 4096, "0123456789abcdef0123456789abcdef", 128);
	EXPECT(md_super(b, sizeof(b), 4096, DEV_BYTES, &s) == 1);
	EXPECT(STR_EQ(s.name, "md/0123456789abcdef0123456789abcdef"));
}

static void t_md1_rejects(void)
{
	static unsigned char b[MD_SB_BYTES];
	struct disk_sig s;

	md1_build(b, 4096, "rescue:0", 128);
	b[40] ^= 1;					/* checksum */
	EXPECT(md_super(b, sizeof(b), 4096, DEV_BYTES, &s) == 0);
	md1_build(b, 4096, "rescue:0", 128);
	put_le32(b + 4, 2);				/* major version */
	EXPECT(md_super(b, sizeof(b), 4096, DEV_BYTES, &s) == 0);
	md1_build(b, 4096, "rescue:0", 2000);		/* roles past 4 KiB */
	EXPECT(md_super(b, sizeof(b), 4096, DEV_BYTES, &s) == 0);
	md1_build(b, 4096, "rescue:0", 0xffffffffu);
	EXPECT(md_super(b, sizeof(b), 4096, DEV_BYTES, &s) == 0);
	md1_build(b, 4096, "rescue:0", 128);
	EXPECT(md_super(b, 255, 4096, DEV_BYTES, &s) == 0);
	EXPECT(md_super(b, 300, 4096, DEV_BYTES, &s) == 0);	/* roles cut */
}

static void t_md090(void)
{
	static unsigned char b[MD_SB_BYTES];
	struct disk_sig s;

	memset(b, 0, sizeof(b));
	put_le32(b, 0xa92b4efc);
	put_le32(b + 8, 90);
	put_le32(b + 44, 3);				/* md_minor */
	EXPECT(md_super(b, sizeof(b), DEV_BYTES - 65536, DEV_BYTES, &s) == 1);
	EXPECT(s.kind == SIG_MD && STR_EQ(s.name, "md3"));
	EXPECT(md_super(b, sizeof(b), 0, DEV_BYTES, &s) == 0);
	EXPECT(md_super(b, sizeof(b), DEV_BYTES - 8192, DEV_BYTES, &s) == 0);
	EXPECT(md_super(b, sizeof(b), 0, 65536, &s) == 0);	/* too small */
	put_le32(b + 8, 91);
	EXPECT(md_super(b, sizeof(b), DEV_BYTES - 65536, DEV_BYTES, &s) == 0);
}

/* A PV label as pvcreate writes it (checked once with blkid -p and
 * pvck --dump headers, which verify the CRC). */
static void lvm_label_build(unsigned char *b, size_t sector, int mda)
{
	unsigned char *p = b + 512 * sector;

	memset(b, 0, LVM_LABEL_BYTES);
	memcpy(p, "LABELONE", 8);
	put_le64(p + 8, sector);
	put_le32(p + 20, 32);
	memcpy(p + 24, "LVM2 001", 8);
	memset(p + 32, 'u', 32);			/* pv uuid */
	put_le64(p + 64, DEV_BYTES);
	put_le64(p + 72, 1 << 20);				/* data area */
	if (mda) {					/* after a 0 pair */
		put_le64(p + 104, 4096);
		put_le64(p + 112, (1 << 20) - 4096);
	}
	put_le32(p + 16, lvm_crc(p + 20, 512 - 20));
}

static void mda_build(unsigned char *b, uint64_t off, uint64_t size)
{
	memset(b, 0, LVM_MDA_BYTES);
	memcpy(b + 4, " LVM2 x[5A%r0N*>", 16);
	put_le32(b + 20, 1);
	put_le64(b + 24, 4096);
	put_le64(b + 32, (1 << 20) - 4096);
	put_le64(b + 40, off);
	put_le64(b + 48, size);
	put_le32(b, lvm_crc(b + 4, 512 - 4));
}

/* The label tests/ondisk.py writes, whose CRC `pvck --dump headers` and
 * `blkid -p` accept: label_header.crc 0x79e258ad. */
static void t_lvm_crc(void)
{
	unsigned char sec[512];

	memset(sec, 0, sizeof(sec));
	memcpy(sec, "LABELONE", 8);
	put_le64(sec + 8, 1);
	put_le32(sec + 20, 32);
	memcpy(sec + 24, "LVM2 001", 8);
	memcpy(sec + 32, "RescuePVuuid0000000000000000abcd", 32);
	put_le64(sec + 64, DEV_BYTES);
	put_le64(sec + 72, 1 << 20);
	put_le64(sec + 104, 4096);
	put_le64(sec + 112, (1 << 20) - 4096);
	put_le32(sec + 136, 2);
	EXPECT(lvm_crc(sec + 20, 512 - 20) == 0x79e258adu);
	EXPECT(lvm_crc(sec, 0) == 0xf597a6cfu);		/* the seed */
}

static void t_lvm_label(void)
{
	static unsigned char b[LVM_LABEL_BYTES];
	uint64_t start = 1, size = 1;
	size_t sector;

	for (sector = 0; sector < 4; sector++) {
		lvm_label_build(b, sector, 1);
		EXPECT(lvm_label(b, sizeof(b), &start, &size) == 1);
		EXPECT(start == 4096 && size == (1 << 20) - 4096);
	}
	lvm_label_build(b, 1, 0);
	EXPECT(lvm_label(b, sizeof(b), &start, &size) == 1 && size == 0);
	lvm_label_build(b, 1, 1);
	EXPECT(lvm_label(b, 1023, &start, &size) == 0);	/* sector cut */
	EXPECT(lvm_label(b, 1024, &start, &size) == 1);
	b[600] ^= 1;					/* crc */
	EXPECT(lvm_label(b, sizeof(b), &start, &size) == 0);
	lvm_label_build(b, 1, 1);
	put_le64(b + 512 + 8, 2);				/* wrong sector */
	put_le32(b + 512 + 16, lvm_crc(b + 512 + 20, 512 - 20));
	EXPECT(lvm_label(b, sizeof(b), &start, &size) == 0);
	lvm_label_build(b, 1, 1);
	put_le32(b + 512 + 20, 0xfffffff0u);		/* pv_header offset */
	put_le32(b + 512 + 16, lvm_crc(b + 512 + 20, 512 - 20));
	EXPECT(lvm_label(b, sizeof(b), &start, &size) == 1 && size == 0);
}

static void t_lvm_mda(void)
{
	static unsigned char b[LVM_MDA_BYTES];
	const uint64_t size = (1 << 20) - 4096;
	uint64_t at = 0, len = 0;

	mda_build(b, 512, 700);
	EXPECT(lvm_mda(b, sizeof(b), 4096, size, &at, &len) == 1);
	EXPECT(at == 4096 + 512 && len == 700);
	EXPECT(lvm_mda(b, sizeof(b), 8192, size, &at, &len) == -1);
	EXPECT(lvm_mda(b, sizeof(b), 4096, size + 1, &at, &len) == -1);
	EXPECT(lvm_mda(b, 511, 4096, size, &at, &len) == -1);
	mda_build(b, size - 100, 700);			/* wraps: first part */
	EXPECT(lvm_mda(b, sizeof(b), 4096, size, &at, &len) == 1 && len == 100);
	mda_build(b, 0, 0);				/* PV in no VG */
	EXPECT(lvm_mda(b, sizeof(b), 4096, size, &at, &len) == 0);
	mda_build(b, size, 10);
	EXPECT(lvm_mda(b, sizeof(b), 4096, size, &at, &len) == -1);
	mda_build(b, 100, 10);				/* inside the header */
	EXPECT(lvm_mda(b, sizeof(b), 4096, size, &at, &len) == -1);
	mda_build(b, 512, 700);
	b[300] ^= 1;
	EXPECT(lvm_mda(b, sizeof(b), 4096, size, &at, &len) == -1);
}

static void t_lvm_vg_name(void)
{
	struct disk_sig s;
	char longname[300];

	EXPECT(lvm_vg_name("vg0 {\nid = \"x\"\n", 15, &s) == 1);
	EXPECT(STR_EQ(s.name, "vg0"));
	EXPECT(lvm_vg_name("\nmy_vg-1.x+ {", 13, &s) == 1);
	EXPECT(STR_EQ(s.name, "my_vg-1.x+"));
	EXPECT(lvm_vg_name("vg0 {", 4, &s) == 0);	/* cut */
	EXPECT(lvm_vg_name("vg0", 3, &s) == 0);
	EXPECT(lvm_vg_name("{", 1, &s) == 0);
	EXPECT(lvm_vg_name("vg0 = 1", 7, &s) == 0);
	EXPECT(lvm_vg_name("", 0, &s) == 0);
	memset(longname, 'v', sizeof(longname));
	longname[200] = '{';
	EXPECT(lvm_vg_name(longname, sizeof(longname), &s) == 0);
	longname[127] = ' ';
	longname[128] = '{';
	EXPECT(lvm_vg_name(longname, sizeof(longname), &s) == 1);
	EXPECT(strlen(s.name) == 127);
}

static void t_disksig_garbage(void)
{
	struct disk_sig s;
	uint64_t a, b2, at[4];
	char *g;
	int i, n;

	for (i = 0; i < 200; i++) {
		g = garbage(MD_SB_BYTES, i & 1 ? NULL : "LVM2 001LABELONE\0");
		if (i % 3 == 0)
			memcpy(g, "\xfc\x4e\x2b\xa9\1\0\0\0", 8);
		memset(&s, 0, sizeof(s));
		luks_version((unsigned char *)g, MD_SB_BYTES);
		n = md_super_offsets((uint64_t)rnd() << (rnd() % 40), at);
		EXPECT(n >= 1 && n <= 4);
		md_super((unsigned char *)g, MD_SB_BYTES, at[n - 1],
			 (uint64_t)rnd() << 20, &s);
		lvm_label((unsigned char *)g, LVM_LABEL_BYTES, &a, &b2);
		lvm_mda((unsigned char *)g, LVM_MDA_BYTES, 4096, 1 << 20, &a,
			&b2);
		lvm_vg_name(g, LVM_NAME_BYTES, &s);
		EXPECT(memchr(s.name, '\0', sizeof(s.name)));
		free(g);
	}
}

int main(void)
{
	run("cmdline_empty", t_cmdline_empty);
	run("cmdline_typical", t_cmdline_typical);
	run("cmdline_loglevel", t_cmdline_loglevel);
	run("cmdline_shell_rejects", t_cmdline_shell_rejects);
	run("cmdline_shell_length", t_cmdline_shell_length);
	run("cmdline_quotes", t_cmdline_quotes);
	run("cmdline_check_values", t_cmdline_check_values);
	run("cmdline_net", t_cmdline_net);
	run("cmdline_term", t_cmdline_term);
	run("cmdline_boot", t_cmdline_boot);
	run("cmdline_unknown", t_cmdline_unknown);
	run("cmdline_last_wins", t_cmdline_last_wins);
	run("cmdline_truncated", t_cmdline_truncated);
	run("cmdline_nul_bytes", t_cmdline_nul_bytes);
	run("cmdline_garbage", t_cmdline_garbage);
	run("cmdline_huge", t_cmdline_huge);
	run("mountinfo_typical", t_mountinfo_typical);
	run("mountinfo_stacked", t_mountinfo_stacked);
	run("mountinfo_empty", t_mountinfo_empty);
	run("mountinfo_truncated", t_mountinfo_truncated);
	run("mountinfo_malformed", t_mountinfo_malformed);
	run("mountinfo_long_fields", t_mountinfo_long_fields);
	run("mountinfo_escapes", t_mountinfo_escapes);
	run("mountinfo_garbage", t_mountinfo_garbage);
	run("console_typical", t_console_typical);
	run("console_empty", t_console_empty);
	run("console_rejects", t_console_rejects);
	run("console_many", t_console_many);
	run("console_garbage", t_console_garbage);
	run("parse_u64", t_parse_u64);
	run("format_size", t_format_size);
	run("rfmt", t_rfmt);
	run("luks", t_luks);
	run("md_offsets", t_md_offsets);
	run("md1", t_md1);
	run("md1_rejects", t_md1_rejects);
	run("md090", t_md090);
	run("lvm_crc", t_lvm_crc);
	run("lvm_label", t_lvm_label);
	run("lvm_mda", t_lvm_mda);
	run("lvm_vg_name", t_lvm_vg_name);
	run("disksig_garbage", t_disksig_garbage);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
