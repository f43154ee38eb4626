/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What rescue-init tells the person at the console: where /dev came
 * from, the block devices and the stacks on them, and the rescue.check
 * report for tests.  Only reads; never creates a device node.
 */
#ifndef RESCUE_REPORT_H
#define RESCUE_REPORT_H

#include <stdint.h>

#define BLOCK_NAME_MAX	32	/* a name in /sys/class/block, with the NUL */
#define MAX_BLOCK	128

/* How /dev was obtained, for every banner. */
struct dev_origin {
	int by_kernel;		/* devtmpfs on /dev before we touched it */
	int mounted;		/* devtmpfs on /dev now, by whoever */
	unsigned int blk, chr;
};

struct block {
	char name[BLOCK_NAME_MAX];
	uint64_t bytes;		/* 0: no medium */
	int is_part;
	int has_parts;		/* a disk whose partitions are listed too */
};

void setup_dev(struct dev_origin *d);
void report_dev(const struct dev_origin *d);
void banner(const char *shell, const char *tty);
void report_stacks(const struct block *blk, int n);
int run_check(const struct dev_origin *d);

#endif
