// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for parse.c: the kernel command line, mountinfo, the
 * active-console list and the small helpers.  Built twice by
 * `make check-rescue-init`: plain, and with ASan+UBSan so an overflow in
 * a parser is a failure even when the result happens to look right.
 *
 * Output: one "PASS name" or "FAIL name: why" per test, then
 * "N passed, N failed"; the exit status is 1 if anything failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

static int passed, failed, cur_failed;
static const char *cur;

#define EXPECT(cond) do {						\
	if (!(cond)) {							\
		printf("FAIL %s: line %d: %s\n", cur, __LINE__, #cond);	\
		cur_failed = 1;						\
		return;							\
	}								\
} while (0)

#define STR_EQ(a, b)	(strcmp((a), (b)) == 0)

static void run(const char *name, void (*fn)(void))
{
	cur = name;
	cur_failed = 0;
	fn();
	if (cur_failed) {
		failed++;
	} else {
		passed++;
		printf("PASS %s\n", name);
	}
}

/* Deterministic garbage: the same bytes on every run and every host. */
static unsigned int rng = 12345;

static unsigned char rnd(void)
{
	rng = rng * 1103515245u + 12345u;
	return (unsigned char)(rng >> 16);
}

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

int main(void)
{
	run("cmdline_empty", t_cmdline_empty);
	run("cmdline_typical", t_cmdline_typical);
	run("cmdline_shell_rejects", t_cmdline_shell_rejects);
	run("cmdline_shell_length", t_cmdline_shell_length);
	run("cmdline_quotes", t_cmdline_quotes);
	run("cmdline_check_values", t_cmdline_check_values);
	run("cmdline_term", t_cmdline_term);
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
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
