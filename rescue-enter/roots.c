// SPDX-License-Identifier: GPL-2.0
/*
 * Block devices and installed roots, found from sysfs and superblocks;
 * see roots.h.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../rescue-init/parse.h"
#include "readonly.h"
#include "roots.h"

#define SYS_BLOCK	"/sys/class/block"

/* A small sysfs file into buf (NUL-terminated, trailing newline cut). */
static int read_sys(const char *dev, const char *attr, char *buf, size_t size)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), SYS_BLOCK "/%s/%s", dev, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

static int dir_has_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)))
		found = e->d_name[0] != '.';
	closedir(d);
	return found;
}

static ssize_t read_dev(const char *path, unsigned char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, size, 0);
	close(fd);
	return n;
}

/* A partition's disk: the parent directory of its sysfs device. */
static int parent_disk(const char *name, char *disk, size_t size)
{
	char link[512], *slash;
	char path[256];
	ssize_t n;

	snprintf(path, sizeof(path), SYS_BLOCK "/%s", name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = '\0';
	slash = strrchr(link, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	slash = strrchr(link, '/');
	snprintf(disk, size, "%s", slash ? slash + 1 : link);
	return 0;
}

static void probe_dev(struct blkdev *d, unsigned char *buf)
{
	char partno[16], disk[32], path[64];
	ssize_t n;

	n = read_dev(d->path, buf, PROBE_SIZE);
	if (n > 0)
		probe_superblock(buf, (size_t)n, &d->id);
	if (read_sys(d->name, "partition", partno, sizeof(partno)) == 0 &&
	    parent_disk(d->name, disk, sizeof(disk)) == 0) {
		snprintf(path, sizeof(path), "/dev/%s", disk);
		n = read_dev(path, buf, PROBE_SIZE);
		if (n > 0)
			probe_partition(buf, (size_t)n, (unsigned)atoi(partno),
					d->partuuid, sizeof(d->partuuid),
					d->partlabel, sizeof(d->partlabel));
	}
}

/* Where each device is mounted now, from /proc/self/mountinfo. */
static void note_mounts(struct devlist *l)
{
	static char info[65536];
	struct mnt_entry e;
	size_t pos = 0, i, len;
	int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	n = read(fd, info, sizeof(info));
	close(fd);
	if (n <= 0)
		return;
	len = (size_t)n;
	while (mountinfo_next(info, len, &pos, &e) >= 0) {
		for (i = 0; i < l->n; i++) {
			struct blkdev *d = &l->dev[i];

			if (makedev(e.major, e.minor) == d->devno &&
			    !d->mounted_at[0])
				snprintf(d->mounted_at, sizeof(d->mounted_at),
					 "%s", e.mountpoint);
		}
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct blkdev *)a)->name,
		      ((const struct blkdev *)b)->name);
}

int devs_scan(struct devlist *l)
{
	DIR *dir = opendir(SYS_BLOCK);
	struct dirent *e;
	unsigned char *buf = malloc(PROBE_SIZE);
	size_t cap = 0;

	l->dev = NULL;
	l->n = 0;
	if (!dir || !buf) {
		if (dir)
			closedir(dir);
		free(buf);
		return -1;
	}
	while ((e = readdir(dir))) {
		struct blkdev *d;
		char val[64], path[256];
		unsigned int maj, min;
		unsigned long long sectors;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(d->name))
			continue;
		if (read_sys(e->d_name, "size", val, sizeof(val)) ||
		    sscanf(val, "%llu", &sectors) != 1 || sectors == 0)
			continue;	/* empty loop devices and CD drives */
		if (read_sys(e->d_name, "dev", val, sizeof(val)) ||
		    sscanf(val, "%u:%u", &maj, &min) != 2)
			continue;
		if (l->n == cap) {
			struct blkdev *nd;

			cap = cap ? cap * 2 : 16;
			nd = realloc(l->dev, cap * sizeof(*nd));
			if (!nd)
				break;
			l->dev = nd;
		}
		d = &l->dev[l->n++];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s", e->d_name);
		snprintf(d->path, sizeof(d->path), "/dev/%s", e->d_name);
		d->devno = makedev(maj, min);
		d->size = (uint64_t)sectors * 512;
		read_sys(d->name, "dm/name", d->dm_name, sizeof(d->dm_name));
		snprintf(path, sizeof(path), SYS_BLOCK "/%s/holders", d->name);
		d->in_use = dir_has_entries(path);
		probe_dev(d, buf);
	}
	closedir(dir);
	free(buf);
	if (l->n)
		qsort(l->dev, l->n, sizeof(*l->dev), by_name);
	note_mounts(l);
	return 0;
}

void devs_free(struct devlist *l)
{
	free(l->dev);
	l->dev = NULL;
	l->n = 0;
}

const struct blkdev *devs_resolve(const struct devlist *l, const char *spec,
				  const char **why)
{
	char value[FSTAB_FIELD_MAX];
	enum spec_kind kind = spec_parse(spec, value, sizeof(value));
	const struct blkdev *found = NULL;
	struct stat st;
	size_t i;

	for (i = 0; i < l->n && !found; i++) {
		const struct blkdev *d = &l->dev[i];

		switch (kind) {
		case SPEC_UUID:
			if (d->id.uuid[0] && strcasecmp(d->id.uuid, value) == 0)
				found = d;
			break;
		case SPEC_LABEL:
			if (d->id.label[0] && strcmp(d->id.label, value) == 0)
				found = d;
			break;
		case SPEC_PARTUUID:
			if (d->partuuid[0] && strcasecmp(d->partuuid, value) == 0)
				found = d;
			break;
		case SPEC_PARTLABEL:
			if (d->partlabel[0] && strcmp(d->partlabel, value) == 0)
				found = d;
			break;
		case SPEC_PATH:
			/* /dev/mapper/NAME and /dev/VG/LV exist only when
			 * udev or lvm made them: match the dm name too. */
			if (strcmp(d->path, value) == 0 ||
			    (d->dm_name[0] && strncmp(value, "/dev/mapper/", 12) == 0 &&
			     strcmp(value + 12, d->dm_name) == 0))
				found = d;
			break;
		case SPEC_UNKNOWN:
			break;
		}
	}
	if (!found && kind == SPEC_PATH && stat(value, &st) == 0 &&
	    S_ISBLK(st.st_mode)) {
		for (i = 0; i < l->n && !found; i++)
			if (l->dev[i].devno == st.st_rdev)
				found = &l->dev[i];
	}
	if (!found)
		*why = kind == SPEC_UNKNOWN ?
		       "a name only udev knows; use UUID=, LABEL= or /dev/..." :
		       "no such device";
	return found;
}

const struct blkdev *devs_named(const struct devlist *l, const char *arg,
				const char **why)
{
	char path[300];

	if (!strchr(arg, '/') && !strchr(arg, '='))
		snprintf(path, sizeof(path), "/dev/%s", arg);
	else
		snprintf(path, sizeof(path), "%s", arg);
	return devs_resolve(l, path, why);
}

int in_rescue_system(void)
{
	char buf[64] = "";
	int fd = open(RESCUE_RELEASE_FILE, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) < 0)
			buf[0] = '\0';
		close(fd);
	}
	return strncmp(buf, "rescue-iso ", 11) == 0;
}

void luks_name(const struct blkdev *d, char *buf, size_t size)
{
	snprintf(buf, size, "%s_crypt", d->name);
}

const char *dev_open_hint(const struct blkdev *d, char *cmd, size_t size)
{
	char name[64];

	if (d->in_use || !probe_is_container(d->id.type))
		return NULL;
	if (strcmp(d->id.type, "crypto_LUKS") == 0) {
		luks_name(d, name, sizeof(name));
		snprintf(cmd, size, "cryptsetup open %s %s", d->path, name);
	} else if (strcmp(d->id.type, "LVM2_member") == 0)
		snprintf(cmd, size, "vgchange -ay");
	else
		snprintf(cmd, size, "mdadm --assemble --scan");
	return d->id.type;
}

size_t devs_list_closed(const struct devlist *l, const char *prog)
{
	char cmd[160];
	size_t i, n = 0;

	for (i = 0; i < l->n; i++) {
		const char *type = dev_open_hint(&l->dev[i], cmd, sizeof(cmd));

		if (!type)
			continue;
		if (n++ == 0)
			fprintf(stderr, "%s: closed devices; open them, then run "
				"%s again:\n", prog, prog);
		fprintf(stderr, "  %-16s %-18s %s\n", l->dev[i].path, type, cmd);
	}
	return n;
}

/* Filesystems an installed root can be on, which the probe can mount. */
static int root_fstype(const char *type)
{
	static const char *const ok[] = { "ext2", "ext3", "ext4", "xfs", "btrfs" };
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcmp(type, ok[i]) == 0)
			return 1;
	return 0;
}

/* openat2(2) with RESOLVE_IN_ROOT: "/" in a symlink means `root`. */
struct open_how_ {
	uint64_t flags, mode, resolve;
};
#define RESOLVE_IN_ROOT_	0x10
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

ssize_t read_in_root(const char *root, const char *path, char *buf,
		     size_t size)
{
	struct open_how_ how = { O_RDONLY | O_CLOEXEC, 0, RESOLVE_IN_ROOT_ };
	int dfd, fd, err;
	ssize_t n, total = 0;

	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	while (*path == '/')
		path++;
	fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	err = errno;
	close(dfd);
	if (fd < 0) {
		errno = err;
		return -1;
	}
	while ((size_t)total + 1 < size &&
	       (n = read(fd, buf + total, size - 1 - (size_t)total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return total;
}

static void fill_root(const char *dir, struct root *r)
{
	static char text[8192];
	char id[64] = "linux", ver[64] = "";
	ssize_t n;

	snprintf(r->pretty_name, sizeof(r->pretty_name), "Linux");
	n = read_in_root(dir, "/etc/os-release", text, sizeof(text));
	if (n < 0)	/* os-release(5): the fallback location */
		n = read_in_root(dir, "/usr/lib/os-release", text, sizeof(text));
	if (n > 0) {
		osrelease_get(text, (size_t)n, "PRETTY_NAME", r->pretty_name,
			      sizeof(r->pretty_name));
		osrelease_get(text, (size_t)n, "ID", id, sizeof(id));
		osrelease_get(text, (size_t)n, "VERSION_ID", ver, sizeof(ver));
	}
	snprintf(r->tag, sizeof(r->tag), "%s%s%s", id, ver[0] ? "-" : "", ver);
}

int root_check(const struct blkdev *d, const char *probe_dir, struct root *r,
	       const char **why)
{
	const char *dir = d->mounted_at[0] ? d->mounted_at : probe_dir;
	struct ro_guard guard = RO_GUARD_INIT;
	sigset_t old;
	char path[512];
	struct stat st;
	int is_root;

	memset(r, 0, sizeof(*r));
	r->dev = d;
	if (!root_fstype(d->id.type)) {
		*why = d->id.type[0] ? "not a filesystem a Linux root is on" :
				       "no filesystem found";
		return 0;
	}
	if (strcmp(dir, "/") == 0) {
		*why = "the running rescue system";
		return 0;
	}
	look_begin(&old);
	if (!d->mounted_at[0]) {
		mkdir(probe_dir, 0700);
		if (ro_mount(d->path, probe_dir, d->id.type,
			     MS_NOSUID | MS_NODEV | MS_NOEXEC, "", &guard)) {
			*why = strerror(errno);
			look_end(&old);
			return -1;
		}
	}
	/* os-release may be a symlink into a separate /usr: lstat. */
	snprintf(path, sizeof(path), "%s/etc/os-release", dir);
	is_root = lstat(path, &st) == 0;
	snprintf(path, sizeof(path), "%s/etc/fstab", dir);
	is_root = is_root && lstat(path, &st) == 0;
	if (is_root)
		fill_root(dir, r);
	else
		*why = "no /etc/os-release and /etc/fstab";
	if (!d->mounted_at[0] && umount2(probe_dir, 0)) {
		/* Still mounted: the device stays read-only with it. */
		*why = strerror(errno);
		look_end(&old);
		return -1;
	}
	ro_guard_end(&guard);
	look_end(&old);
	return is_root;
}

size_t roots_find(const struct devlist *l, const char *probe_dir,
		  struct root *out, size_t max)
{
	size_t i, n = 0;
	const char *why;

	for (i = 0; i < l->n && n < max; i++) {
		if (l->dev[i].in_use || !root_fstype(l->dev[i].id.type))
			continue;
		if (root_check(&l->dev[i], probe_dir, &out[n], &why) == 1)
			n++;
	}
	return n;
}
