/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Looking at a disk without writing to it.
 *
 * MS_RDONLY alone does not promise that.  ext4 deletes orphan inodes on a
 * read-only mount (ext4_orphan_cleanup() clears SB_RDONLY for it) unless
 * the *block device* is read-only, and with "noload" it does so without
 * the journal; a crashed machine's disk has exactly those.  So a look
 * sets the block device read-only (BLKROSET) for as long as its mount
 * lives, mounts with the filesystem's own "replay nothing" option, and
 * puts the device's flag back afterwards to what it was.
 */
#ifndef RESCUE_READONLY_H
#define RESCUE_READONLY_H

#include <signal.h>

/* A block device held read-only; RO_GUARD_INIT holds nothing. */
struct ro_guard {
	int fd;			/* the device, open while it is held */
	int was_ro;		/* its BLKROGET before we set it */
};
#define RO_GUARD_INIT	{ -1, 0 }

/*
 * Set the block device at path read-only until ro_guard_end(): 0, or -1
 * with errno (nothing changed; a caller that only looks must then not
 * mount it).  A path that is not a block device is refused (ENOTBLK).
 */
int ro_guard_begin(struct ro_guard *g, const char *path);

/* Put the device's flag back as it was; nothing if g holds nothing. */
void ro_guard_end(struct ro_guard *g);

/* mount(2) data that keeps a read-only mount from replaying a journal or
 * log.  "" for filesystems that need nothing. */
const char *ro_mount_data(const char *fstype);

/*
 * Mount the block device dev on dir to look at it: the device held
 * read-only by g (which the caller ends after the unmount), MS_RDONLY |
 * flags, data followed by ro_mount_data(type).  0, or -1 with errno and
 * g holding nothing.
 */
int ro_mount(const char *dev, const char *dir, const char *type,
	     unsigned long flags, const char *data, struct ro_guard *g);

/*
 * The signals that ask us to stop (INT, TERM, HUP, QUIT): a look holds
 * them off while its mount and the device's read-only flag are in place,
 * so that Ctrl-C can leave neither behind; they take effect when the look
 * is over.
 */
void stop_signal_set(sigset_t *set);
/* Block them; *old is the mask to give look_end(). */
void look_begin(sigset_t *old);
void look_end(const sigset_t *old);

#endif
