// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer targets for rescue-enter's parsers, one per build:
 * -DFUZZ_fstab (fstab lines, their options and device names),
 * -DFUZZ_osrelease (os-release and passwd), -DFUZZ_probe (superblocks and
 * partition tables).  Besides the sanitizers, each asserts that results
 * are NUL terminated inside their buffers.  The input is copied to an
 * exact-size buffer so any read past its end is caught.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "etcparse.h"
#include "probe.h"

#define CHECK(c)	do { if (!(c)) __builtin_trap(); } while (0)

static __attribute__((unused)) void fuzz_fstab(const char *buf, size_t len)
{
	struct fstab_entry e;
	size_t pos = 0, last = 0;
	unsigned int line = 0;
	unsigned long flags;
	char data[FSTAB_FIELD_MAX], v[FSTAB_FIELD_MAX];

	while (fstab_next(buf, len, &pos, &line, &e) >= 0) {
		CHECK(pos > last && pos <= len);
		last = pos;
		CHECK(memchr(e.spec, 0, sizeof(e.spec)) && memchr(e.opts, 0, sizeof(e.opts)));
		if (mount_opts(e.opts, &flags, data, sizeof(data)) == 0)
			CHECK(strlen(data) < sizeof(data));
		if (spec_parse(e.spec, v, sizeof(v)) != SPEC_UNKNOWN)
			CHECK(strlen(v) < sizeof(v));
		opt_has(e.opts, "noauto");
		fstype_is_network(e.type);
	}
}

static __attribute__((unused)) void fuzz_osrelease(const char *buf, size_t len)
{
	char v[OSR_VALUE_MAX], s[64];

	if (osrelease_get(buf, len, "PRETTY_NAME", v, sizeof(v)))
		CHECK(strlen(v) < sizeof(v));
	osrelease_get(buf, len, "ID", v, 8);
	if (passwd_shell(buf, len, "root", s, sizeof(s)))
		CHECK(s[0] && strlen(s) < sizeof(s));
}

static __attribute__((unused)) void fuzz_probe(const char *buf, size_t len)
{
	const unsigned char *b = (const unsigned char *)buf;
	struct probe p;
	char u[48], l[48];
	unsigned int n;

	if (probe_superblock(b, len, &p))
		CHECK(p.type[0] && memchr(p.uuid, 0, sizeof(p.uuid)) &&
		      memchr(p.label, 0, sizeof(p.label)));
	for (n = 1; n <= 4; n++)
		if (probe_partition(b, len, n, u, sizeof(u), l, sizeof(l)))
			CHECK(memchr(u, 0, sizeof(u)) && memchr(l, 0, sizeof(l)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);

	memcpy(buf, data, size);
#if defined(FUZZ_fstab)
	fuzz_fstab(buf, size);
#elif defined(FUZZ_osrelease)
	fuzz_osrelease(buf, size);
#elif defined(FUZZ_probe)
	fuzz_probe(buf, size);
#else
#error "define FUZZ_fstab, FUZZ_osrelease or FUZZ_probe"
#endif
	free(buf);
	return 0;
}
