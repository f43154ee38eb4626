// SPDX-License-Identifier: GPL-2.0
/*
 * Parsers for an installed system's /etc files; see etcparse.h.
 */
#include <string.h>
#include <sys/mount.h>

#include "etcparse.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Copy at most size - 1 bytes and terminate; 0 if all of it fit. */
static int copy_cut(char *dst, size_t size, const char *src, size_t n)
{
	int cut = n >= size;

	if (size == 0)
		return -1;
	if (cut)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
	return cut ? -1 : 0;
}

/* ------------------------------------------------------------------ fstab */

static int is_odigit(char c)
{
	return c >= '0' && c <= '7';
}

/*
 * One fstab field, decoding \NNN octal escapes as getmntent(3) does.
 * An embedded NUL (\000, or a NUL byte in the file) is refused: it would
 * cut the path short.  -1 if the field is empty, too long or has a NUL.
 */
static int fstab_field(const char *s, size_t l, char *out)
{
	size_t i, o = 0;

	if (l == 0)
		return -1;
	for (i = 0; i < l; i++) {
		char c = s[i];

		if (c == '\\' && i + 3 < l && is_odigit(s[i + 1]) &&
		    is_odigit(s[i + 2]) && is_odigit(s[i + 3])) {
			c = (char)(((s[i + 1] - '0') << 6) |
				   ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
			i += 3;
		}
		if (c == '\0' || o + 1 >= FSTAB_FIELD_MAX)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int fstab_next(const char *buf, size_t len, size_t *pos, unsigned int *line,
	       struct fstab_entry *e)
{
	while (*pos < len) {
		const char *s = buf + *pos, *nl = memchr(s, '\n', len - *pos);
		size_t l = nl ? (size_t)(nl - s) : len - *pos, i = 0, n = 0;
		const char *f[6];
		size_t fl[6];

		*pos += l + (nl ? 1 : 0);
		(*line)++;
		memset(e, 0, sizeof(*e));
		e->line = *line;
		while (i < l) {
			while (i < l && is_blank(s[i]))
				i++;
			if (i == l || (n == 0 && s[i] == '#'))
				break;
			if (n == ARRAY_SIZE(f))
				return 0;	/* more than six fields */
			f[n] = s + i;
			while (i < l && !is_blank(s[i]))
				i++;
			fl[n] = (size_t)(s + i - f[n]);
			n++;
		}
		if (n == 0)
			continue;	/* blank or comment */
		/* mount(8) needs spec, file and type; options default. */
		if (n < 3 || fstab_field(f[0], fl[0], e->spec) ||
		    fstab_field(f[1], fl[1], e->file) ||
		    fstab_field(f[2], fl[2], e->type) ||
		    (n >= 4 && fstab_field(f[3], fl[3], e->opts)))
			return 0;
		if (n < 4)
			memcpy(e->opts, "defaults", sizeof("defaults"));
		return 1;
	}
	return -1;
}

int opt_has(const char *opts, const char *name)
{
	size_t nl = strlen(name);
	const char *p = opts;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t l = end ? (size_t)(end - p) : strlen(p);

		if (l >= nl && memcmp(p, name, nl) == 0 &&
		    (l == nl || p[nl] == '='))
			return 1;
		p += l + (end ? 1 : 0);
	}
	return 0;
}

/* Options mount(8) turns into flags (set) or clears (clear). */
static const struct {
	const char *name;
	unsigned long set, clear;
} flag_opts[] = {
	{ "ro", MS_RDONLY, 0 },		{ "rw", 0, MS_RDONLY },
	{ "nosuid", MS_NOSUID, 0 },	{ "suid", 0, MS_NOSUID },
	{ "nodev", MS_NODEV, 0 },	{ "dev", 0, MS_NODEV },
	{ "noexec", MS_NOEXEC, 0 },	{ "exec", 0, MS_NOEXEC },
	{ "sync", MS_SYNCHRONOUS, 0 },	{ "async", 0, MS_SYNCHRONOUS },
	{ "dirsync", MS_DIRSYNC, 0 },
	{ "noatime", MS_NOATIME, 0 },	{ "atime", 0, MS_NOATIME },
	{ "nodiratime", MS_NODIRATIME, 0 }, { "diratime", 0, MS_NODIRATIME },
	{ "relatime", MS_RELATIME, 0 },	{ "norelatime", 0, MS_RELATIME },
	{ "strictatime", MS_STRICTATIME, 0 },
	{ "lazytime", MS_LAZYTIME, 0 },	{ "nolazytime", 0, MS_LAZYTIME },
	{ "mand", MS_MANDLOCK, 0 },	{ "nomand", 0, MS_MANDLOCK },
	{ "silent", MS_SILENT, 0 },	{ "loud", 0, MS_SILENT },
};

/* Options for mount(8) itself or for other programs, never the kernel. */
static int opt_userspace(const char *o, size_t l)
{
	static const char *const words[] = {
		"defaults", "auto", "noauto", "user", "nouser", "users",
		"owner", "group", "nofail", "_netdev", "bind", "rbind",
	};
	static const char *const prefixes[] = {
		"x-", "comment=", "user=", "helper=", "uhelper=",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(words); i++)
		if (l == strlen(words[i]) && memcmp(o, words[i], l) == 0)
			return 1;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (l >= strlen(prefixes[i]) &&
		    memcmp(o, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

int mount_opts(const char *opts, unsigned long *flags, char *data,
	       size_t size)
{
	const char *p = opts;
	size_t used = 0, i;

	*flags = 0;
	if (size == 0)
		return -1;
	data[0] = '\0';
	while (*p) {
		const char *end = strchr(p, ',');
		size_t l = end ? (size_t)(end - p) : strlen(p);
		int known = 0;

		for (i = 0; i < ARRAY_SIZE(flag_opts); i++) {
			if (l == strlen(flag_opts[i].name) &&
			    memcmp(p, flag_opts[i].name, l) == 0) {
				*flags = (*flags | flag_opts[i].set) &
					 ~flag_opts[i].clear;
				known = 1;
			}
		}
		if (!known && l > 0 && !opt_userspace(p, l)) {
			if (used + (used ? 1 : 0) + l + 1 > size)
				return -1;
			if (used)
				data[used++] = ',';
			memcpy(data + used, p, l);
			used += l;
			data[used] = '\0';
		}
		p += l + (end ? 1 : 0);
	}
	return 0;
}

int fstype_is_network(const char *type)
{
	static const char *const net[] = {
		"nfs", "nfs4", "cifs", "smb3", "smbfs", "ncpfs", "9p",
		"ceph", "glusterfs", "afs", "davfs", "sshfs", "gfs2",
		"ocfs2", "lustre",
	};
	size_t i;

	if (strncmp(type, "fuse.", 5) == 0 || strcmp(type, "fuse") == 0)
		return 1;
	for (i = 0; i < ARRAY_SIZE(net); i++)
		if (strcmp(type, net[i]) == 0)
			return 1;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* udev's link names escape '/' and odd bytes as \xNN. */
static int unescape_udev(const char *s, char *out, size_t size)
{
	size_t o = 0;

	while (*s) {
		char c = *s++;

		if (c == '\\' && s[0] == 'x' && hexval(s[1]) >= 0 &&
		    hexval(s[2]) >= 0) {
			c = (char)(hexval(s[1]) << 4 | hexval(s[2]));
			s += 3;
		}
		if (c == '\0' || o + 1 >= size)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

enum spec_kind spec_parse(const char *spec, char *value, size_t size)
{
	static const struct {
		const char *tag, *link;
		enum spec_kind kind;
	} kinds[] = {
		{ "UUID=", "/dev/disk/by-uuid/", SPEC_UUID },
		{ "LABEL=", "/dev/disk/by-label/", SPEC_LABEL },
		{ "PARTUUID=", "/dev/disk/by-partuuid/", SPEC_PARTUUID },
		{ "PARTLABEL=", "/dev/disk/by-partlabel/", SPEC_PARTLABEL },
	};
	size_t i, l;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		const char *v;

		if (strncmp(spec, kinds[i].tag, strlen(kinds[i].tag)) == 0) {
			v = spec + strlen(kinds[i].tag);
			l = strlen(v);
			/* mount(8) accepts UUID="x" as well. */
			if (l >= 2 && (v[0] == '"' || v[0] == '\'') &&
			    v[l - 1] == v[0]) {
				v++;
				l -= 2;
			}
			if (l == 0 || copy_cut(value, size, v, l))
				return SPEC_UNKNOWN;
			return kinds[i].kind;
		}
		if (strncmp(spec, kinds[i].link, strlen(kinds[i].link)) == 0) {
			v = spec + strlen(kinds[i].link);
			if (!*v || strchr(v, '/') || unescape_udev(v, value, size))
				return SPEC_UNKNOWN;
			return kinds[i].kind;
		}
	}
	if (strncmp(spec, "/dev/disk/", 10) == 0 || spec[0] != '/' ||
	    copy_cut(value, size, spec, strlen(spec)))
		return SPEC_UNKNOWN;
	return SPEC_PATH;
}

/* ------------------------------------------------------------- os-release */

/*
 * An os-release value: "double quoted" (backslash escapes \" \\ \$ \`),
 * 'single quoted', or bare (backslash escapes any byte).  Text after the
 * closing quote is appended, as sh would.
 */
static void unquote(const char *s, size_t l, char *out, size_t size)
{
	size_t i = 0, o = 0;
	char q = 0;

	while (i < l) {
		char c = s[i++];

		if (q == 0 && (c == '"' || c == '\'')) {
			q = c;
			continue;
		}
		if (q && c == q) {
			q = 0;
			continue;
		}
		if (c == '\\' && q != '\'' && i < l &&
		    (q == 0 || strchr("\"\\$`", s[i]))) {
			c = s[i++];
		}
		if (q == 0 && (c == ' ' || c == '\t' || c == '#') &&
		    (i < 2 || s[i - 2] != '\\'))
			break;		/* an unquoted blank ends the value */
		if (c == '\0' || o + 1 >= size)
			break;
		out[o++] = c;
	}
	out[o] = '\0';
}

int osrelease_get(const char *buf, size_t len, const char *key, char *value,
		  size_t size)
{
	size_t pos = 0, kl = strlen(key);
	int found = 0;

	if (size == 0)
		return 0;
	while (pos < len) {
		const char *s = buf + pos, *nl = memchr(s, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - s) : len - pos, i = 0;

		pos += l + (nl ? 1 : 0);
		while (i < l && is_blank(s[i]))
			i++;
		if (l - i > kl && memcmp(s + i, key, kl) == 0 &&
		    s[i + kl] == '=') {
			i += kl + 1;
			unquote(s + i, l - i, value, size);
			found = 1;
		}
	}
	return found;
}

/* ----------------------------------------------------------------- passwd */

int passwd_shell(const char *buf, size_t len, const char *user, char *shell,
		 size_t size)
{
	size_t pos = 0, ul = strlen(user);

	while (pos < len) {
		const char *s = buf + pos, *nl = memchr(s, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - s) : len - pos, i, field = 0;
		const char *f = s;

		pos += l + (nl ? 1 : 0);
		if (l <= ul || memcmp(s, user, ul) != 0 || s[ul] != ':')
			continue;
		/* name:passwd:uid:gid:gecos:home:shell -- the 7th field */
		for (i = 0; i < l; i++) {
			if (s[i] == ':' && ++field == 6)
				f = s + i + 1;
		}
		if (field != 6)
			continue;
		l = (size_t)(s + l - f);
		while (l > 0 && (f[l - 1] == '\r' || is_blank(f[l - 1])))
			l--;
		if (l == 0 || memchr(f, '\0', l) || copy_cut(shell, size, f, l))
			continue;
		return 1;
	}
	return 0;
}
