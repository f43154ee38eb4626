// SPDX-License-Identifier: GPL-2.0
/*
 * Parsers for rescue-init: pure functions over (pointer, length) buffers.
 *
 * The kernel command line is typed by whoever sits at the boot menu, so
 * every word is bounded, validated and either accepted whole or rejected
 * with a reason; nothing is copied before its length has been checked.
 */
#include <limits.h>
#include <string.h>

#include "parse.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int is_space(char c)
{
	/* NUL too: a buffer with embedded NULs must not end a word early
	 * in one place and not in another. */
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	       c == '\v' || c == '\f' || c == '\0';
}

static int word_is(const char *w, size_t wl, const char *s)
{
	size_t sl = strlen(s);

	return wl == sl && memcmp(w, s, sl) == 0;
}

/* ---------------------------------------------------------------- cmdline */

void opts_init(struct rescue_opts *o)
{
	memset(o, 0, sizeof(*o));
	memcpy(o->shell, DEFAULT_SHELL, sizeof(DEFAULT_SHELL));
}

static const char *shell_path_error(const char *v, size_t vl)
{
	size_t i;

	if (vl == 0)
		return "empty value";
	if (vl >= SHELL_MAX)
		return "value too long";
	if (v[0] != '/')
		return "not an absolute path";
	for (i = 0; i < vl; i++) {
		unsigned char c = v[i];

		if (c < 0x20 || c == 0x7f || c == '"')
			return "control character or quote in path";
	}
	return NULL;
}

static const char *term_name_error(const char *v, size_t vl)
{
	size_t i;

	if (vl == 0)
		return "empty value";
	if (vl >= TERM_MAX)
		return "value too long";
	for (i = 0; i < vl; i++) {
		char c = v[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.' || c == '+'))
			return "not a terminal type name";
	}
	return NULL;
}

/* rescue.boot=auto or a device (/dev/sda2, sda2, UUID=..., LABEL=...):
 * rescue-boot says whether it names an installed root; here only its
 * shape is checked. */
static const char *boot_device_error(const char *v, size_t vl)
{
	size_t i;

	if (vl == 0)
		return "empty value";
	if (vl >= BOOT_MAX)
		return "value too long";
	for (i = 0; i < vl; i++) {
		unsigned char c = v[i];

		if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\')
			return "not a device name";
	}
	return NULL;
}

/* rescue.check alone means yes; an explicit value must be a boolean. */
static int parse_bool(const char *v, size_t vl, int has_val)
{
	static const char *const yes[] = { "1", "y", "yes", "on", "true" };
	static const char *const no[] = { "0", "n", "no", "off", "false" };
	size_t i;

	if (!has_val)
		return 1;
	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (word_is(v, vl, yes[i]))
			return 1;
		if (word_is(v, vl, no[i]))
			return 0;
	}
	return -1;
}

/* Strip one pair of double quotes the way the kernel's next_arg() does. */
static void unquote(const char **s, size_t *l)
{
	if (*l && (*s)[0] == '"') {
		(*s)++;
		(*l)--;
		if (*l && (*s)[*l - 1] == '"')
			(*l)--;
	}
}

static const char *apply_word(const char *w, size_t wl, struct rescue_opts *o)
{
	const char *key = w, *v = NULL, *eq, *why;
	size_t kl = wl, vl = 0;
	int b;

	unquote(&key, &kl);
	eq = memchr(key, '=', kl);
	if (eq) {
		v = eq + 1;
		vl = kl - (size_t)(v - key);
		kl = (size_t)(eq - key);
		unquote(&v, &vl);
	}
	/* The kernel's console log level, set by the person at the boot
	 * prompt: init must not override it. */
	if ((eq && word_is(key, kl, "loglevel")) ||
	    (!eq && (word_is(key, kl, "quiet") || word_is(key, kl, "debug"))))
		o->kernel_loglevel = 1;
	if (kl < 7 || memcmp(key, "rescue.", 7) != 0)
		return NULL;	/* not ours: the kernel's or another's */

	if (word_is(key, kl, "rescue.shell")) {
		if (!eq)
			return "needs a value: rescue.shell=/path/to/program";
		why = shell_path_error(v, vl);
		if (why)
			return why;
		memcpy(o->shell, v, vl);
		o->shell[vl] = '\0';
	} else if (word_is(key, kl, "rescue.term")) {
		if (!eq)
			return "needs a value: rescue.term=NAME";
		why = term_name_error(v, vl);
		if (why)
			return why;
		memcpy(o->term, v, vl);
		o->term[vl] = '\0';
	} else if (word_is(key, kl, "rescue.boot")) {
		if (!eq)
			return "needs a value: rescue.boot=auto or rescue.boot=DEVICE";
		why = boot_device_error(v, vl);
		if (why)
			return why;
		memcpy(o->boot, v, vl);
		o->boot[vl] = '\0';
	} else if (word_is(key, kl, "rescue.check")) {
		b = parse_bool(v, vl, eq != NULL);
		if (b < 0)
			return "value is not one of 1 0 yes no on off";
		o->check = b;
	} else if (word_is(key, kl, "rescue.net")) {
		b = parse_bool(v, vl, eq != NULL);
		if (b < 0)
			return "value is not one of 1 0 yes no on off";
		o->no_net = !b;
	} else {
		return "unknown rescue option";
	}
	return NULL;
}

/*
 * Split like the kernel does (whitespace outside double quotes) and apply
 * the rescue.* words.  Later words override earlier ones, as for kernel
 * parameters.  Returns the number of words rejected.
 */
int parse_cmdline(const char *buf, size_t len, struct rescue_opts *o,
		  opt_warn_fn warn, void *ctx)
{
	size_t i = 0, start;
	const char *why;
	int quoted, bad = 0;

	while (i < len) {
		while (i < len && is_space(buf[i]))
			i++;
		if (i >= len)
			break;
		start = i;
		quoted = 0;
		for (; i < len && buf[i] != '\0' &&
		       (quoted || !is_space(buf[i])); i++)
			if (buf[i] == '"')
				quoted = !quoted;
		why = apply_word(buf + start, i - start, o);
		if (why) {
			bad++;
			if (warn)
				warn(ctx, buf + start, i - start, why);
		}
	}
	return bad;
}

/* -------------------------------------------------------------- mountinfo */

static int next_field(const char *s, size_t l, size_t *p, const char **f,
		      size_t *fl)
{
	while (*p < l && s[*p] == ' ')
		(*p)++;
	if (*p >= l)
		return 0;
	*f = s + *p;
	while (*p < l && s[*p] != ' ')
		(*p)++;
	*fl = (size_t)(s + *p - *f);
	return 1;
}

int parse_uint(const char *s, size_t l, unsigned int *val)
{
	unsigned long long v = 0;
	size_t i;

	if (l == 0 || l > 10)
		return -1;
	for (i = 0; i < l; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > UINT_MAX)
		return -1;
	*val = (unsigned int)v;
	return 0;
}

static int octal3(const char *s)
{
	if (s[0] < '0' || s[0] > '3' || s[1] < '0' || s[1] > '7' ||
	    s[2] < '0' || s[2] > '7')
		return -1;
	return (s[0] - '0') * 64 + (s[1] - '0') * 8 + (s[2] - '0');
}

/* The kernel escapes space, tab, newline and backslash as \ooo. */
static int unescape(const char *s, size_t l, char *out, size_t size)
{
	size_t i, n = 0;
	int c;

	for (i = 0; i < l; i++) {
		c = (unsigned char)s[i];
		if (c == '\\' && l - i >= 4 && (c = octal3(s + i + 1)) >= 0)
			i += 3;
		else
			c = (unsigned char)s[i];
		if (c == 0 || n + 1 >= size)
			return -1;	/* a cut path could match another */
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return 0;
}

static int copy_field(const char *s, size_t l, char *out, size_t size,
		      int may_cut)
{
	if (l >= size) {
		if (!may_cut)
			return -1;
		l = size - 1;
	}
	memcpy(out, s, l);
	out[l] = '\0';
	return memchr(out, '\0', l) ? -1 : 0;
}

static int parse_devnum(const char *f, size_t fl, struct mnt_entry *e)
{
	const char *colon = memchr(f, ':', fl);

	if (!colon)
		return -1;
	if (parse_uint(f, (size_t)(colon - f), &e->major) ||
	    parse_uint(colon + 1, fl - (size_t)(colon + 1 - f), &e->minor))
		return -1;
	return 0;
}

static int parse_mnt_line(const char *s, size_t l, struct mnt_entry *e)
{
	const char *f;
	size_t fl, p = 0;

	if (!next_field(s, l, &p, &f, &fl) || parse_uint(f, fl, &e->id) ||
	    !next_field(s, l, &p, &f, &fl) || parse_uint(f, fl, &e->parent) ||
	    !next_field(s, l, &p, &f, &fl) || parse_devnum(f, fl, e) ||
	    !next_field(s, l, &p, &f, &fl) ||		/* root */
	    !next_field(s, l, &p, &f, &fl) ||
	    unescape(f, fl, e->mountpoint, sizeof(e->mountpoint)) ||
	    !next_field(s, l, &p, &f, &fl))		/* options */
		return -1;
	/* Optional fields (shared:N, master:N ...) end at a lone "-". */
	do {
		if (!next_field(s, l, &p, &f, &fl))
			return -1;
	} while (!word_is(f, fl, "-"));
	if (!next_field(s, l, &p, &f, &fl) ||
	    copy_field(f, fl, e->fstype, sizeof(e->fstype), 0) ||
	    !next_field(s, l, &p, &f, &fl) ||
	    copy_field(f, fl, e->source, sizeof(e->source), 1))
		return -1;
	return 0;
}

/*
 * Parse the line at *pos and move *pos past it.  Returns 1 for a good
 * line, 0 for a malformed one (skipped; e is cleared) and -1 at the end.
 */
int mountinfo_next(const char *buf, size_t len, size_t *pos,
		   struct mnt_entry *e)
{
	const char *s, *nl;
	size_t l;

	if (*pos >= len)
		return -1;
	s = buf + *pos;
	nl = memchr(s, '\n', len - *pos);
	l = nl ? (size_t)(nl - s) : len - *pos;
	*pos += l + (nl ? 1 : 0);
	memset(e, 0, sizeof(*e));
	if (parse_mnt_line(s, l, e)) {
		memset(e, 0, sizeof(*e));
		return 0;
	}
	return 1;
}

/* The last entry for a mount point is the one on top, the visible one. */
int mountinfo_find(const char *buf, size_t len, const char *mountpoint,
		   struct mnt_entry *e)
{
	struct mnt_entry cur;
	size_t pos = 0;
	int r, found = 0;

	while ((r = mountinfo_next(buf, len, &pos, &cur)) >= 0) {
		if (r == 1 && strcmp(cur.mountpoint, mountpoint) == 0) {
			*e = cur;
			found = 1;
		}
	}
	return found;
}

/* ---------------------------------------------------------------- console */

static int tty_name_ok(const char *s, size_t l)
{
	size_t i;

	if (l == 0 || l >= TTY_NAME_MAX || word_is(s, l, ".") ||
	    word_is(s, l, ".."))
		return 0;
	for (i = 0; i < l; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		      c == '.'))
			return 0;
	}
	return 1;
}

/*
 * /sys/class/tty/console/active lists the consoles, the one behind
 * /dev/console last ("tty0 ttyS0").  Names that could escape /dev or do
 * not fit are dropped, as are repeats.  Returns how many were stored.
 */
int console_list(const char *buf, size_t len, char names[][TTY_NAME_MAX],
		 int max)
{
	size_t i = 0, start;
	int j, n = 0, dup;

	while (i < len && n < max) {
		while (i < len && is_space(buf[i]))
			i++;
		start = i;
		while (i < len && !is_space(buf[i]))
			i++;
		if (!tty_name_ok(buf + start, i - start))
			continue;
		for (dup = 0, j = 0; j < n; j++)
			dup |= word_is(buf + start, i - start, names[j]);
		if (dup)
			continue;
		memcpy(names[n], buf + start, i - start);
		names[n][i - start] = '\0';
		n++;
	}
	return n;
}

/* ------------------------------------------------------------ small bits */

/* A decimal number as in sysfs: digits, then optional white space. */
int parse_u64(const char *buf, size_t len, uint64_t *val)
{
	uint64_t v = 0;
	size_t i = 0;

	for (; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		unsigned int d = (unsigned int)(buf[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (i == 0)
		return -1;
	for (; i < len; i++)
		if (!is_space(buf[i]) || buf[i] == '\0')
			return -1;
	*val = v;
	return 0;
}

/* "512 B", "64.0 MiB": one decimal, truncated, integer maths only. */
void format_size(uint64_t bytes, char *out, size_t size)
{
	static const char units[] = "KMGTPE";
	unsigned int u = 0, frac;
	uint64_t whole;

	if (bytes < 1024) {
		rsnprintf(out, size, "%u B", (unsigned int)bytes);
		return;
	}
	while (u + 1 < sizeof(units) - 1 && bytes >> (10 * (u + 2)))
		u++;
	whole = bytes >> (10 * (u + 1));
	frac = (unsigned int)(((bytes & ((1ULL << (10 * (u + 1))) - 1)) >>
			       (10 * u)) * 10 >> 10);
	rsnprintf(out, size, "%llu.%u %ciB", (unsigned long long)whole, frac,
		  units[u]);
}

/* ---------------------------------------------------------------- format */

/*
 * A vsnprintf for what rescue-init prints: %s %c %d %u %x with l/ll/z,
 * '-', a width and a precision (digits or *).  musl's vfprintf would pull
 * in floating point and double the size of the binary.
 */
struct sink {
	char *p;
	size_t left;
	int n;
};

static void put(struct sink *s, char c)
{
	if (s->left > 1) {
		*s->p++ = c;
		s->left--;
		s->n++;
	}
}

static void put_padded(struct sink *s, const char *str, size_t l, int width,
		       int left)
{
	int pad = width > (int)l ? width - (int)l : 0;

	while (!left && pad-- > 0)
		put(s, ' ');
	while (l--)
		put(s, *str++);
	while (left && pad-- > 0)
		put(s, ' ');
}

static size_t utoa(unsigned long long v, unsigned int base, char *end)
{
	char *p = end;

	do {
		*--p = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	return (size_t)(end - p);
}

static void put_num(struct sink *s, va_list *ap, char conv, int lng,
		    int width, int left)
{
	unsigned long long v;
	char buf[24];
	size_t l;
	int neg = 0;

	if (conv == 'd' || conv == 'i') {
		long long sv = lng == 2 ? va_arg(*ap, long long) :
			       lng == 1 ? va_arg(*ap, long) : va_arg(*ap, int);

		neg = sv < 0;
		v = (unsigned long long)sv;
		if (neg)
			v = 0ULL - v;
	} else {
		v = lng == 2 ? va_arg(*ap, unsigned long long) :
		    lng == 1 ? va_arg(*ap, unsigned long) :
			       va_arg(*ap, unsigned int);
	}
	l = utoa(v, conv == 'x' ? 16 : 10, buf + sizeof(buf));
	if (neg)
		buf[sizeof(buf) - ++l] = '-';
	put_padded(s, buf + sizeof(buf) - l, l, width, left);
}

static int read_int(const char **f, va_list *ap)
{
	int v = 0;

	if (**f == '*') {
		(*f)++;
		return va_arg(*ap, int);
	}
	while (**f >= '0' && **f <= '9' && v < 10000)
		v = v * 10 + (*(*f)++ - '0');
	return v;
}

static void put_conv(struct sink *s, const char **f, va_list *ap)
{
	int left = 0, width, prec = -1, lng = 0;
	const char *str;
	size_t l;
	char c;

	if (**f == '-') {
		left = 1;
		(*f)++;
	}
	width = read_int(f, ap);
	if (**f == '.') {
		(*f)++;
		prec = read_int(f, ap);
	}
	while (**f == 'l' || **f == 'z') {
		lng += **f == 'z' ? 1 + (sizeof(size_t) > sizeof(long)) : 1;
		(*f)++;
	}
	c = **f;
	if (c)
		(*f)++;
	switch (c) {
	case 's':
		str = va_arg(*ap, const char *);
		if (!str)
			str = "(null)";
		for (l = 0; (prec < 0 || (int)l < prec) && str[l]; l++)
			;
		put_padded(s, str, l, width, left);
		break;
	case 'c':
		c = (char)va_arg(*ap, int);
		put_padded(s, &c, 1, width, left);
		break;
	case 'd': case 'i': case 'u': case 'x':
		put_num(s, ap, c, lng > 2 ? 2 : lng, width, left);
		break;
	case '%':
		put(s, '%');
		break;
	default:	/* unsupported: show it rather than guess */
		put(s, '%');
		if (c)
			put(s, c);
	}
}

int rfmt(char *out, size_t size, const char *fmt, va_list ap)
{
	struct sink s = { out, size, 0 };
	va_list aq;

	va_copy(aq, ap);
	while (*fmt) {
		if (*fmt != '%') {
			put(&s, *fmt++);
			continue;
		}
		fmt++;
		put_conv(&s, &fmt, &aq);
	}
	va_end(aq);
	if (size)
		*s.p = '\0';
	return s.n;
}

int rsnprintf(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = rfmt(out, size, fmt, ap);
	va_end(ap);
	return n;
}
