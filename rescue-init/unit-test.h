/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The small harness of the host unit tests (rescue-init's and
 * rescue-enter's test-parse.c): EXPECT() ends the current test with
 * "FAIL name: line N: condition", run() prints "PASS name" otherwise and
 * counts both, rnd() gives deterministic garbage -- the same bytes on
 * every run and every host, put_le32/64() write on-disk fields. One test program includes it once.
 */
#ifndef RESCUE_UNIT_TEST_H
#define RESCUE_UNIT_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

static inline void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static inline void put_le64(unsigned char *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline void run(const char *name, void (*fn)(void))
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

static unsigned int rng = 12345;

static inline unsigned char rnd(void)
{
	rng = rng * 1103515245u + 12345u;
	return (unsigned char)(rng >> 16);
}

#endif
