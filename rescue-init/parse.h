/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsers for rescue-init: pure functions over byte buffers.
 *
 * Everything here takes a pointer and a length, never assumes NUL
 * termination, never allocates and never touches the file system, so the
 * same code is linked into the init, the host unit tests and the libFuzzer
 * targets.  Input comes from /proc/cmdline (anything the boot loader user
 * typed), /proc/self/mountinfo and /sys/class/tty/console/active.
 */
#ifndef RESCUE_PARSE_H
#define RESCUE_PARSE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define DEFAULT_SHELL	"/bin/sh"
#define SHELL_MAX	256	/* rescue.shell= value, with the NUL */
#define TERM_MAX	32	/* rescue.term= value, with the NUL */
#define BOOT_MAX	128	/* rescue.boot= value, with the NUL */
#define TTY_NAME_MAX	32	/* one name in console/active, with the NUL */
#define MNT_PATH_MAX	256	/* mount point kept from mountinfo */
#define MNT_TYPE_MAX	32
#define MNT_SRC_MAX	64

/* rescue-boot in a shell asks PID 1 to hand over: it writes the device to
 * this file, then sends this signal (signal.h's SIGRTMIN). */
#define RESCUE_BOOT_REQUEST	"/run/rescue-boot.request"
#define RESCUE_BOOT_SIGNAL	(SIGRTMIN + 2)
#define RESCUE_BOOT		"/sbin/rescue-boot"

/* Options read from the kernel command line; defaults from opts_init(). */
struct rescue_opts {
	char shell[SHELL_MAX];
	char term[TERM_MAX];	/* empty: choose from the tty name */
	int check;		/* rescue.check: smoke test, then power off */
	char boot[BOOT_MAX];	/* rescue.boot=: "auto" or a device; "": off */
	int kernel_loglevel;	/* loglevel=, quiet or debug: leave it be */
	int no_net;		/* rescue.net=off: no DHCP by itself */
};

/*
 * Called once per rejected or unknown rescue.* word.  word/wlen is the raw
 * word (it may be huge and is not NUL terminated), why says what is wrong.
 */
typedef void (*opt_warn_fn)(void *ctx, const char *word, size_t wlen,
			    const char *why);

void opts_init(struct rescue_opts *o);
int parse_cmdline(const char *buf, size_t len, struct rescue_opts *o,
		  opt_warn_fn warn, void *ctx);

/* One line of /proc/self/mountinfo (see proc(5)). */
struct mnt_entry {
	unsigned int id, parent, major, minor;
	char mountpoint[MNT_PATH_MAX];	/* octal escapes decoded */
	char fstype[MNT_TYPE_MAX];
	char source[MNT_SRC_MAX];	/* may be cut short; display only */
};

int mountinfo_next(const char *buf, size_t len, size_t *pos,
		   struct mnt_entry *e);
int mountinfo_find(const char *buf, size_t len, const char *mountpoint,
		   struct mnt_entry *e);

int console_list(const char *buf, size_t len, char names[][TTY_NAME_MAX],
		 int max);

int parse_u64(const char *buf, size_t len, uint64_t *val);
void format_size(uint64_t bytes, char *out, size_t size);

int rfmt(char *out, size_t size, const char *fmt, va_list ap);
int rsnprintf(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The decimal number s[0..l) (digits only, fits 32 bits): 0, or -1. */
int parse_uint(const char *s, size_t l, unsigned int *val);

#endif
