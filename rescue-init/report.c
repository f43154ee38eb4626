// SPDX-License-Identifier: GPL-2.0
/*
 * rescue-init's reports: the walk over /dev that says where it came
 * from, the block device list and the banner, and the rescue.check
 * report a test can parse.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "drivers.h"
#include "report.h"
#include "util.h"

#define WALK_DEPTH	8

struct walk {
	unsigned int blk, chr;
	dev_t want;		/* block node to look for, 0: none */
	int found_depth;
	char found[128];
	char path[256];
};

/* ------------------------------------------------------------- /dev walk */

static void walk_dir(int dfd, struct walk *w, size_t plen, int depth)
{
	struct dirbuf d = { .fd = dfd };
	struct dirent *de;
	struct stat st;
	size_t nl;
	int fd;

	while ((de = next_dirent(&d))) {
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		nl = strlen(de->d_name);
		/* Paths are only needed for the node we look for; a name
		 * too long to record is still counted. */
		if (plen + 1 + nl < sizeof(w->path)) {
			w->path[plen] = '/';
			memcpy(w->path + plen + 1, de->d_name, nl + 1);
		} else {
			nl = (size_t)-1;
		}
		if (S_ISCHR(st.st_mode)) {
			w->chr++;
		} else if (S_ISBLK(st.st_mode)) {
			w->blk++;
			if (w->want && st.st_rdev == w->want &&
			    nl != (size_t)-1 && depth < w->found_depth &&
			    plen + 1 + nl < sizeof(w->found)) {
				memcpy(w->found, w->path, plen + 2 + nl);
				w->found_depth = depth;
			}
		} else if (S_ISDIR(st.st_mode) && depth < WALK_DEPTH &&
			   nl != (size_t)-1) {
			fd = openat(dfd, de->d_name, O_RDONLY |
				    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0)
				walk_dir(fd, w, plen + 1 + nl, depth + 1);
		}
		w->path[plen] = '\0';
	}
	close(dfd);
}

/* Count block and char nodes under /dev; optionally find a block dev_t. */
static void walk_dev(struct walk *w, dev_t want)
{
	int fd;

	memset(w, 0, sizeof(*w));
	w->want = want;
	w->found_depth = WALK_DEPTH + 1;
	memcpy(w->path, "/dev", 5);
	fd = open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		say_err("open", "/dev");
		return;
	}
	walk_dir(fd, w, 4, 0);
}

/* What is mounted on /dev now: 1 and *e when something is. */
static int dev_mount(struct mnt_entry *e)
{
	struct mountinfo mi = read_mountinfo();

	return mountinfo_find(mi.text, mi.len, "/dev", e);
}

static void explain_no_devtmpfs(int is_mount, const char *fstype)
{
	char what[64];

	if (is_mount)
		rsnprintf(what, sizeof(what), "it is a %s mount", fstype);
	else
		rsnprintf(what, sizeof(what), "it is not a mount point");
	say("WARNING: /dev is not devtmpfs (%s): the kernel did not mount "
	    "devtmpfs there (booted with devtmpfs.mount=0, or a kernel "
	    "without CONFIG_DEVTMPFS_MOUNT)", what);
	say("WARNING: without it /dev has no device nodes (no disks, no "
	    "ttys); mounting devtmpfs on /dev now so the rescue system "
	    "still works");
}

/* The one line that says where /dev came from. */
void report_dev(const struct dev_origin *d)
{
	if (!d->mounted)
		say("WARNING: /dev has no devtmpfs");
	else
		say("%s: %u nodes (%u block, %u char)", d->by_kernel ?
		    "/dev is devtmpfs, mounted by the kernel" :
		    "mounted devtmpfs on /dev itself", d->blk + d->chr,
		    d->blk, d->chr);
}

/* Where /dev came from, and make sure there is one. */
void setup_dev(struct dev_origin *d)
{
	struct mnt_entry e;
	struct walk w;
	int is_mount = dev_mount(&e);

	memset(d, 0, sizeof(*d));
	d->by_kernel = d->mounted = is_mount && !strcmp(e.fstype, "devtmpfs");
	if (!d->by_kernel) {
		explain_no_devtmpfs(is_mount, e.fstype);
		if (mount("devtmpfs", "/dev", "devtmpfs", MS_NOSUID,
			  "mode=0755") < 0) {
			say_err("mount", "/dev");
			say("WARNING: no devtmpfs: there will be no disks "
			    "and no console tty; is CONFIG_DEVTMPFS missing?");
			return;
		}
		d->mounted = 1;
	}
	walk_dev(&w, 0);
	d->blk = w.blk;
	d->chr = w.chr;
	report_dev(d);
}

/* ----------------------------------------------------------- block list */

static int sys_block_has(const char *name, const char *what)
{
	char path[96];

	rsnprintf(path, sizeof(path), "/sys/class/block/%s/%s", name, what);
	return access(path, F_OK) == 0;
}

static uint64_t block_bytes(const char *name)
{
	char path[96], buf[32];
	uint64_t sectors;
	ssize_t n;

	rsnprintf(path, sizeof(path), "/sys/class/block/%s/size", name);
	n = read_file(path, buf, sizeof(buf), 0);
	if (n <= 0 || parse_u64(buf, (size_t)n, &sectors) ||
	    sectors > UINT64_MAX / 512)
		return 0;
	return sectors * 512;	/* sysfs counts 512-byte sectors, always */
}

/* Sorted names from /sys/class/block: stable output for people and tests. */
static int block_names(struct block *blk, int max)
{
	static struct dirbuf d;
	struct block tmp;
	struct dirent *de;
	int n = 0, i;

	d.pos = d.len = 0;
	d.fd = open("/sys/class/block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.fd < 0) {
		say_err("open", "/sys/class/block");
		return 0;
	}
	memset(&tmp, 0, sizeof(tmp));
	while (n < max && (de = next_dirent(&d))) {
		size_t l = strlen(de->d_name);

		if (l >= BLOCK_NAME_MAX)
			continue;
		memcpy(tmp.name, de->d_name, l + 1);
		for (i = n; i > 0 && strcmp(blk[i - 1].name, tmp.name) > 0; i--)
			blk[i] = blk[i - 1];
		blk[i] = tmp;
		n++;
	}
	close(d.fd);
	return n;
}

/* The block devices with their sizes; empty loop devices are dropped
 * and only counted. */
static int list_blocks(struct block *blk, int max, int *empty_loops)
{
	int i, j, n = block_names(blk, max), kept = 0;

	*empty_loops = 0;
	for (i = 0; i < n; i++) {
		blk[kept] = blk[i];
		blk[kept].bytes = block_bytes(blk[i].name);
		if (!blk[kept].bytes && !strncmp(blk[i].name, "loop", 4)) {
			(*empty_loops)++;
			continue;
		}
		blk[kept].is_part = sys_block_has(blk[i].name, "partition");
		kept++;
	}
	for (i = 0; i < kept; i++)
		for (j = 0; j < kept; j++)
			if (blk[j].is_part && !blk[i].is_part &&
			    sys_block_has(blk[i].name, blk[j].name))
				blk[i].has_parts = 1;
	return kept;
}

/*
 * Init's own messages go to the main console only; a person at another
 * console (the screen, when the main one is a serial port) gets the
 * /dev report with the banner, printed by that console's shell process
 * before it execs.
 */
void banner(const char *shell, const char *tty)
{
	static struct block blk[MAX_BLOCK];
	int i, n, empty_loops;
	struct utsname u;
	char size[32];

	if (uname(&u) < 0)
		memcpy(u.release, "(unknown)", 10);
	say("rescue system, Linux %s (%s), shell %s on %s", u.release,
	    u.machine, shell, tty);
	n = list_blocks(blk, MAX_BLOCK, &empty_loops);
	for (i = 0; i < n; i++) {
		format_size(blk[i].bytes, size, sizeof(size));
		say("%s %s %s", blk[i].is_part ? "part" : "disk", blk[i].name,
		    blk[i].bytes ? size : "(no medium)");
	}
	if (empty_loops)
		say("%d unused loop devices not shown", empty_loops);
	if (!n)
		say("no block devices found");
	report_stacks(blk, n);
	drivers_report_missing();
	say("first steps: fdisk -l   mount /dev/sda1 /mnt   e2fsck -f /dev/sda1");
	say("             udhcpc -i eth0   dmesg   poweroff | reboot | halt");
}

/* ----------------------------------------------------------- smoke test */

static void add_failure(char *fail, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_failure(char *fail, size_t size, const char *fmt, ...)
{
	size_t l = strlen(fail);
	va_list ap;

	if (l && l + 2 < size) {
		memcpy(fail + l, "; ", 3);
		l += 2;
	}
	va_start(ap, fmt);
	rfmt(fail + l, size - l, fmt, ap);
	va_end(ap);
}

static void check_node(const char *path, int want_blk, char *fail,
		       size_t size)
{
	struct stat st;
	int ok = stat(path, &st) == 0 &&
		 (want_blk ? S_ISBLK(st.st_mode) : S_ISCHR(st.st_mode));

	if (ok) {
		check_say("node %s %s %u:%u", path, want_blk ? "block" : "char",
			  major(st.st_rdev), minor(st.st_rdev));
		return;
	}
	check_say("node %s missing", path);
	add_failure(fail, size, "%s missing", path);
}

static void check_boot_node(char *fail, size_t size)
{
	struct mountinfo mi = read_mountinfo();
	struct mnt_entry root;
	struct walk w;

	if (!mountinfo_find(mi.text, mi.len, "/", &root)) {
		check_say("root unknown");
		add_failure(fail, size, "no / in mountinfo");
		return;
	}
	check_say("root %u:%u %s %s", root.major, root.minor, root.fstype,
		  root.source);
	walk_dev(&w, makedev(root.major, root.minor));
	if (w.found[0]) {
		check_say("boot-device %s", w.found);
		check_node(w.found, 1, fail, size);
		return;
	}
	check_say("boot-device missing");
	add_failure(fail, size, "no node for boot device %u:%u", root.major,
		    root.minor);
}

static void list_mounts(void)
{
	struct mountinfo mi = read_mountinfo();
	struct mnt_entry e;
	size_t pos = 0;

	while (mountinfo_next(mi.text, mi.len, &pos, &e) >= 0)
		if (e.mountpoint[0])
			check_say("mount %s %s %s", e.mountpoint, e.fstype,
				  e.source);
}

/* rescue.check: a report a test can parse; 0 for PASS. */
int run_check(const struct dev_origin *d)
{
	static const char *const nodes[] = {
		"/dev/console", "/dev/null", "/dev/zero", "/dev/tty",
	};
	static struct block blk[MAX_BLOCK];
	char fail[512] = "";
	int i, n, empty_loops;

	check_say("dev %s", d->by_kernel ? "devtmpfs kernel" :
		  d->mounted ? "devtmpfs rescue-init" : "none");
	check_say("nodes %u block %u char %u", d->blk + d->chr, d->blk,
		  d->chr);
	if (!d->by_kernel)
		add_failure(fail, sizeof(fail), "/dev not mounted by the kernel");
	for (i = 0; i < (int)ARRAY_SIZE(nodes); i++)
		check_node(nodes[i], 0, fail, sizeof(fail));
	check_boot_node(fail, sizeof(fail));
	n = list_blocks(blk, MAX_BLOCK, &empty_loops);
	for (i = 0; i < n; i++)
		check_say("disk %s %llu", blk[i].name,
			  (unsigned long long)blk[i].bytes);
	list_mounts();
	if (fail[0])
		check_say("FAIL %s", fail);
	else
		check_say("PASS");
	return fail[0] != 0;
}
