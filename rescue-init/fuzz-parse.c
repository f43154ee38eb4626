// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer targets for parse.c and disksig.c, chosen at compile time:
 * -DFUZZ_cmdline, -DFUZZ_mountinfo, -DFUZZ_console or -DFUZZ_disksig.  Besides the
 * sanitizers' checks, each target asserts what the init relies on:
 * results are NUL terminated inside their buffers and a shell path stays
 * absolute.  The input is copied to an exact-size buffer so any read past
 * its end is caught.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "disksig.h"
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

/* The input as a disk's first bytes (LUKS, LVM label), as a superblock
 * read from each md place on a 64 MiB device, as an mda_header and as
 * metadata text.  Names stay terminated, text stays inside its area. */
static __attribute__((unused)) void fuzz_disksig(const char *buf, size_t len)
{
	const unsigned char *b = (const unsigned char *)buf;
	const uint64_t dev = 64ULL << 20, mda = 4096, mda_size = (1 << 20) - 4096;
	uint64_t at[4], start, size, text_at, text_len;
	struct disk_sig sig;
	int i, n, v = luks_version(b, len);

	CHECK(v >= 0 && v <= 2);
	n = md_super_offsets(dev, at);
	for (i = 0; i < n; i++) {
		memset(&sig, 0, sizeof(sig));
		if (md_super(b, len, at[i], dev, &sig))
			CHECK(sig.kind == SIG_MD &&
			      memchr(sig.name, '\0', sizeof(sig.name)));
	}
	if (lvm_label(b, len, &start, &size))
		CHECK(!size || start || size);
	if (lvm_mda(b, len, mda, mda_size, &text_at, &text_len) == 1)
		CHECK(text_at >= mda + LVM_MDA_BYTES && text_len > 0 &&
		      text_at + text_len <= mda + mda_size);
	memset(&sig, 0, sizeof(sig));
	if (lvm_vg_name(buf, len, &sig))
		CHECK(sig.name[0] && strlen(sig.name) < 128);
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
#elif defined(FUZZ_disksig)
	fuzz_disksig(buf, size);
#else
#error "define FUZZ_cmdline, FUZZ_mountinfo, FUZZ_console or FUZZ_disksig"
#endif
	free(buf);
	return 0;
}
