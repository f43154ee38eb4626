/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by rescue-init's files: messages on the console,
 * whole-file reads, a directory reader without malloc, clocks.
 */
#ifndef RESCUE_UTIL_H
#define RESCUE_UTIL_H

#include <dirent.h>
#include <stdarg.h>
#include <sys/types.h>

#include "parse.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

void console_never_blocks(void);
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void check_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void say_err(const char *call, const char *arg);

long now_s(void);
long now_ms(void);

ssize_t read_file(const char *path, char *buf, size_t size, int report);

/* /proc/self/mountinfo, read whole into one static buffer. */
struct mountinfo {
	const char *text;
	size_t len;
};
struct mountinfo read_mountinfo(void);

/*
 * Directory reading straight from getdents(): opendir() would pull in
 * musl's malloc, a sixth of the size budget, for a few loops.
 */
struct dirbuf {
	int fd, pos, len;
	char buf[2048] __attribute__((aligned(8)));
};
struct dirent *next_dirent(struct dirbuf *db);

#endif
