// SPDX-License-Identifier: GPL-2.0
/*
 * Looking at a disk without writing to it; see readonly.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "readonly.h"

int ro_guard_begin(struct ro_guard *g, const char *path)
{
	struct stat st;
	int on = 1, err;

	g->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (g->fd < 0)
		return -1;
	if (fstat(g->fd, &st) == 0 && !S_ISBLK(st.st_mode)) {
		errno = ENOTBLK;
	} else if (ioctl(g->fd, BLKROGET, &g->was_ro) == 0 &&
		   (g->was_ro || ioctl(g->fd, BLKROSET, &on) == 0)) {
		return 0;
	}
	err = errno;
	close(g->fd);
	g->fd = -1;
	errno = err;
	return -1;
}

void ro_guard_end(struct ro_guard *g)
{
	int off = 0;

	if (g->fd < 0)
		return;
	if (!g->was_ro)
		ioctl(g->fd, BLKROSET, &off);
	close(g->fd);
	g->fd = -1;
}

const char *ro_mount_data(const char *fstype)
{
	if (strcmp(fstype, "ext3") == 0 || strcmp(fstype, "ext4") == 0)
		return "noload";
	if (strcmp(fstype, "xfs") == 0)
		return "norecovery";
	if (strcmp(fstype, "btrfs") == 0)
		return "rescue=nologreplay";
	return "";
}

int ro_mount(const char *dev, const char *dir, const char *type,
	     unsigned long flags, const char *data, struct ro_guard *g)
{
	const char *extra = ro_mount_data(type);
	char all[512];
	int err;

	if ((size_t)snprintf(all, sizeof(all), "%s%s%s", data,
			     *data && *extra ? "," : "", extra) >= sizeof(all)) {
		errno = E2BIG;
		return -1;
	}
	if (ro_guard_begin(g, dev))
		return -1;
	if (mount(dev, dir, type, flags | MS_RDONLY, all) == 0)
		return 0;
	err = errno;
	ro_guard_end(g);
	errno = err;
	return -1;
}

void stop_signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGQUIT);
}

void look_begin(sigset_t *old)
{
	sigset_t stop;

	stop_signal_set(&stop);
	sigprocmask(SIG_BLOCK, &stop, old);
}

void look_end(const sigset_t *old)
{
	sigprocmask(SIG_SETMASK, old, NULL);
}
