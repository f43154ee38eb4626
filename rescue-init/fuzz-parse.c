// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer targets for parse.c, one per parser, chosen at compile time:
 * -DFUZZ_cmdline, -DFUZZ_mountinfo or -DFUZZ_console.  Besides the
 * sanitizers' checks, each target asserts what the init relies on:
 * results are NUL terminated inside their buffers and a shell path stays
 * absolute.  The input is copied to an exact-size buffer so any read past
 * its end is caught.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

#define CHECK(c)	do { if (!(c)) __builtin_trap(); } while (0)

static void ignore_warn(void *ctx, const char *word, size_t wlen,
			const char *why)
{
	(void)ctx;
	CHECK(wlen > 0 && word && why);
}

static __attribute__((unused)) void fuzz_cmdline(const char *buf, size_t len)
{
	struct rescue_opts o;

	opts_init(&o);
	parse_cmdline(buf, len, &o, ignore_warn, NULL);
	CHECK(memchr(o.shell, '\0', sizeof(o.shell)) && o.shell[0] == '/');
	CHECK(memchr(o.term, '\0', sizeof(o.term)));
	CHECK(o.check == 0 || o.check == 1);
}

static __attribute__((unused)) void fuzz_mountinfo(const char *buf, size_t len)
{
	struct mnt_entry e;
	size_t pos = 0, last = 0;

	while (mountinfo_next(buf, len, &pos, &e) >= 0) {
		CHECK(pos > last && pos <= len);
		last = pos;
		CHECK(memchr(e.mountpoint, '\0', sizeof(e.mountpoint)));
		CHECK(memchr(e.fstype, '\0', sizeof(e.fstype)));
		CHECK(memchr(e.source, '\0', sizeof(e.source)));
	}
	mountinfo_find(buf, len, "/dev", &e);
	mountinfo_find(buf, len, "/", &e);
}

static __attribute__((unused)) void fuzz_console(const char *buf, size_t len)
{
	char names[4][TTY_NAME_MAX];
	int i, n = console_list(buf, len, names, 4);

	CHECK(n >= 0 && n <= 4);
	for (i = 0; i < n; i++)
		CHECK(names[i][0] && memchr(names[i], '\0', TTY_NAME_MAX) &&
		      !strchr(names[i], '/'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);

	memcpy(buf, data, size);
#if defined(FUZZ_cmdline)
	fuzz_cmdline(buf, size);
#elif defined(FUZZ_mountinfo)
	fuzz_mountinfo(buf, size);
#elif defined(FUZZ_console)
	fuzz_console(buf, size);
#else
#error "define FUZZ_cmdline, FUZZ_mountinfo or FUZZ_console"
#endif
	free(buf);
	return 0;
}
