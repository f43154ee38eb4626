// SPDX-License-Identifier: GPL-2.0
/*
 * rescue-boot [DEVICE]: boot the installed Linux system with the rescue
 * kernel, its own init and udev on top of the kernel's devtmpfs.
 *
 * Two ways in, one program:
 *
 *   as PID 1   rescue-init execs it when the kernel command line has
 *              rescue.boot=auto|DEVICE, or when a shell asked (below).
 *              It finds the root the way rescue-enter does (roots.c);
 *              while the open devices hold none, it opens what is
 *              closed one layer at a time, as a person would at the
 *              shell (cryptsetup open, asking the passphrase on the
 *              console; vgchange -ay; mdadm --assemble --scan), and
 *              looks again.  It mounts the root read-only with the
 *              options its fstab gives /, moves /dev (the kernel's
 *              devtmpfs), /proc, /sys and /run into it, pivots into it
 *              and execs its /sbin/init, which
 *              stays PID 1.  Whatever it cannot do is said on the console
 *              and it execs rescue-init again (RESCUE_BOOT_FAILED in the
 *              environment stops a loop): PID 1 never exits.
 *   in a shell the same search, without opening anything (the person
 *              at the prompt does that, and is told how), to report
 *              what is wrong while the shell is still there; then a
 *              question, and on "y" a request file and a signal to
 *              PID 1, which stops the shells and execs this program as
 *              PID 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../rescue-init/parse.h"
#include "roots.h"

#define BOOT_DIR	"/tmp/rescue-boot"	/* not under /run: it moves */
#define PROBE_DIR	BOOT_DIR "/probe"
#define ROOT_DIR	BOOT_DIR "/root"
#define RESCUE_INIT	"/sbin/init"
#define TARGET_INIT	"/sbin/init"
#define MAX_ROOTS	16
#define PROG		"rescue-boot"
#define OPEN_ROUNDS	8	/* layers: md, LUKS, LVM, LUKS in an LV... */
#define MAX_TRIED	64

/* What moves from the rescue system into the target, as an initramfs
 * hands them over: the kernel's devtmpfs with devpts and /dev/shm on it. */
static const char *const moved[] = { "/dev", "/proc", "/sys", "/run" };
#define NMOVED	(sizeof(moved) / sizeof(moved[0]))

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("rescue-boot: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* --------------------------------------------------------- the root */

/*
 * The name to mount a device by, which the target's findmnt and systemd
 * then show: /dev/mapper/vg-root, as LVM and cryptsetup made it, rather
 * than /dev/dm-1.
 */
static const char *mount_source(const struct blkdev *d)
{
	static char path[160];
	struct stat st;

	if (!d->dm_name[0])
		return d->path;
	snprintf(path, sizeof(path), "/dev/mapper/%s", d->dm_name);
	if (stat(path, &st) || !S_ISBLK(st.st_mode) || st.st_rdev != d->devno)
		return d->path;
	return path;
}

static void list_roots(const struct root *roots, size_t n)
{
	const char *name;
	size_t i;

	for (i = 0; i < n; i++) {
		name = mount_source(roots[i].dev);
		fprintf(stderr, "  %-16s %-6s %-34s rescue.boot=%s\n", name,
			roots[i].dev->id.type, roots[i].pretty_name, name);
	}
}

/*
 * The root that `arg` names ("auto": the only one there is).  0 with *out
 * filled; 1 when the open devices hold none yet (*why says so: opening a
 * closed device may bring it); -1 after saying why on the console
 * (several roots, or the device named holds none).
 */
static int find_root(const struct devlist *l, const char *arg,
		     struct root *out, const char **why)
{
	static struct root roots[MAX_ROOTS];
	static char msg[BOOT_MAX + 64];
	const struct blkdev *d;
	size_t n;

	if (strcmp(arg, "auto") != 0) {
		d = devs_named(l, arg, why);
		if (!d) {
			snprintf(msg, sizeof(msg), "%s: %s", arg, *why);
			*why = msg;
			return 1;
		}
		if (root_check(d, PROBE_DIR, out, why) != 1) {
			say("%s is not an installed Linux root: %s", d->path, *why);
			devs_list_closed(l, PROG);
			return -1;
		}
		return 0;
	}
	n = roots_find(l, PROBE_DIR, roots, MAX_ROOTS);
	if (n == 1) {
		*out = roots[0];
		return 0;
	}
	if (n == 0) {
		*why = "no installed Linux root found (one has /etc/os-release "
		       "and /etc/fstab)";
		return 1;
	}
	say("%zu installed Linux roots found; choose one with "
	    "rescue.boot=DEVICE at the boot prompt, or rescue-boot "
	    "DEVICE from the shell:", n);
	list_roots(roots, n);
	return -1;
}

/* ------------------------------------------------------------ mounting */

static int is_dir_in(const char *root, const char *dir)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", root, dir);
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * Mount the root at ROOT_DIR read-only, with the options its own fstab
 * gives / (errors=remount-ro on Debian), as its init expects to find it
 * before it remounts it read-write.  A first plain read-only mount reads
 * the fstab.
 */
static int mount_root(const struct root *r)
{
	const struct blkdev *d = r->dev;
	const char *src = mount_source(d);
	static char fstab[65536];
	char data[FSTAB_FIELD_MAX] = "";
	struct fstab_entry e;
	unsigned long flags = 0;
	unsigned int line = 0;
	size_t pos = 0;
	ssize_t n;
	int found = 0, k;

	mkdir(ROOT_DIR, 0755);
	if (mount(src, ROOT_DIR, d->id.type, MS_RDONLY, "")) {
		say("mount %s (%s) read-only: %s", src, d->id.type,
		    strerror(errno));
		return -1;
	}
	n = read_in_root(ROOT_DIR, "/etc/fstab", fstab, sizeof(fstab));
	while (n > 0 && !found &&
	       (k = fstab_next(fstab, (size_t)n, &pos, &line, &e)) >= 0)
		found = k == 1 && strcmp(e.file, "/") == 0;
	if (!found) {
		say("mounted %s (%s) read-only; its fstab has no line for /",
		    src, d->id.type);
		return 0;
	}
	if (mount_opts(e.opts, &flags, data, sizeof(data)) ||
	    umount2(ROOT_DIR, 0) ||
	    mount(src, ROOT_DIR, d->id.type, flags | MS_RDONLY, data)) {
		say("the fstab options for / (%s) do not mount (%s); plain "
		    "read-only instead", e.opts, strerror(errno));
		umount2(ROOT_DIR, 0);
		if (mount(src, ROOT_DIR, d->id.type, MS_RDONLY, "")) {
			say("mount %s (%s) read-only: %s", src,
			    d->id.type, strerror(errno));
			return -1;
		}
		return 0;
	}
	say("mounted %s (%s) read-only, with its fstab options for /: %s",
	    src, d->id.type, e.opts);
	return 0;
}

/*
 * Is the target's /sbin/init something we can exec?  Looked at from a
 * child chrooted into it, so that absolute symlinks (/sbin/init ->
 * /lib/systemd/systemd) and a merged /usr resolve inside the target.
 */
static int target_init_ok(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (chroot(ROOT_DIR) || chdir("/"))
			_exit(100);
		_exit(access(TARGET_INIT, X_OK) ? errno : 0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -EIO;
	return -WEXITSTATUS(status);
}

static int check_target(const struct root *r)
{
	size_t i;
	int err = target_init_ok();

	if (err) {
		say("%s on %s has no %s to start (%s)", r->pretty_name,
		    mount_source(r->dev), TARGET_INIT,
		    err == -100 ? "chroot failed" : strerror(-err));
		return -1;
	}
	for (i = 0; i < NMOVED; i++)
		if (!is_dir_in(ROOT_DIR, moved[i])) {
			say("%s on %s has no %s directory to move %s onto",
			    r->pretty_name, mount_source(r->dev), moved[i], moved[i]);
			return -1;
		}
	return 0;
}

/*
 * What an initramfs's udev would have left in the udev database for the
 * device-mapper devices opened without udev (here, or at the shell).
 * The target's udev coldplugs them with "add" events, and 55-dm.rules
 * hides a dm device whose database lacks DM_UDEV_PRIMARY_SOURCE_FLAG as
 * one libdevmapper has not finished: no /dev/disk/by-* links and
 * SYSTEMD_READY=0, so systemd waits 90 s for a swap LV, then gives up.
 * That flag is what the rules import; /run moves into the target.
 */
static void udev_db_for_dm(const struct devlist *l)
{
	static const char entry[] = "E:DM_UDEV_PRIMARY_SOURCE_FLAG=1\n"
				    "E:DM_UDEV_RULES_VSN=2\nV:1\n";
	char path[64];
	size_t i;
	int fd;

	mkdir("/run/udev", 0755);
	mkdir("/run/udev/data", 0755);
	for (i = 0; i < l->n; i++) {
		const struct blkdev *d = &l->dev[i];

		if (!d->dm_name[0])
			continue;
		snprintf(path, sizeof(path), "/run/udev/data/b%u:%u",
			 major(d->devno), minor(d->devno));
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno == EEXIST)
			continue;	/* a udev of ours knew it */
		if (fd < 0 || write(fd, entry, sizeof(entry) - 1) !=
			      (ssize_t)(sizeof(entry) - 1))
			say("write %s: %s; the installed system's udev may "
			    "hide %s", path, strerror(errno), d->dm_name);
		if (fd >= 0)
			close(fd);
	}
}

/* The first n of moved[] back from the target into the rescue system. */
static void move_back(size_t n)
{
	char src[512];

	while (n-- > 0) {
		snprintf(src, sizeof(src), ROOT_DIR "%s", moved[n]);
		mount(src, moved[n], NULL, MS_MOVE, NULL);
	}
}

/* Move /dev, /proc, /sys, /run under ROOT_DIR; all or none. */
static int move_api(void)
{
	char dst[512];
	size_t done;

	for (done = 0; done < NMOVED; done++) {
		snprintf(dst, sizeof(dst), ROOT_DIR "%s", moved[done]);
		if (mount(moved[done], dst, NULL, MS_MOVE, NULL))
			break;
	}
	if (done == NMOVED)
		return 0;
	say("move %s into the target: %s", moved[done], strerror(errno));
	move_back(done);
	return -1;
}

/* ---------------------------------------------- opening what is closed */

/* fd becomes fds 0-2 (and is closed unless it is one of them). */
static void stdio_on(int fd)
{
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

/*
 * In a child: the console's own tty (the last one in
 * /sys/class/tty/console/active) as its controlling terminal on fds 0-2,
 * so that Ctrl-C at a passphrase prompt gives up.  /dev/console itself
 * can never be one.  Failing that, fds 0-2 stay on /dev/console.
 */
static void console_tty(void)
{
	char names[4][TTY_NAME_MAX], active[256], path[48];
	ssize_t n = -1;
	int fd, k = 0;

	fd = open("/sys/class/tty/console/active", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, active, sizeof(active) - 1);
		close(fd);
	}
	if (n > 0)
		k = console_list(active, (size_t)n, names, 4);
	if (k == 0)
		return;
	snprintf(path, sizeof(path), "/dev/%s", names[k - 1]);
	fd = open(path, O_RDWR);
	if (fd < 0 || ioctl(fd, TIOCSCTTY, 0)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	stdio_on(fd);
}

/*
 * Run a program on the console and wait for it, however long a person
 * takes to type.  The child gets the signals rescue-init blocked back and
 * a session of its own.  Its exit status, 128 + a signal, or -1.
 */
static int run(char *const argv[])
{
	static char *envp[] = { "PATH=/sbin:/bin:/usr/sbin:/usr/bin",
				"HOME=/", "TERM=linux", NULL };
	sigset_t none;
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		say("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		console_tty();
		execve(argv[0], argv, envp);
		say("execve %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			say("waitpid %s: %s", argv[0], strerror(errno));
			return -1;
		}
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       128 + WTERMSIG(status);
}

static int open_luks(const struct blkdev *d)
{
	char name[64];
	char *argv[] = { "/sbin/cryptsetup", "open", (char *)d->path, name,
			 NULL };
	int st;

	luks_name(d, name, sizeof(name));
	say("%s is encrypted (LUKS); its passphrase opens it as "
	    "/dev/mapper/%s (Ctrl-C gives up)", d->path, name);
	st = run(argv);
	if (st)
		say("cryptsetup open %s %s failed (status %d); it stays "
		    "closed", d->path, name, st);
	return st;
}

static int activate(const char *what, char *const argv[])
{
	int st;

	say("%s: %s %s", what, argv[0], argv[1]);
	st = run(argv);
	if (st)
		say("%s %s failed (status %d)", argv[0], argv[1], st);
	return st;
}

/*
 * Open one layer of what is closed, as a person at the shell would:
 * each LUKS device with its passphrase asked on the console, then every
 * LVM volume group once physical volumes are visible, and md arrays
 * once their members are.  Each device is tried once, whatever the
 * outcome.  Returns how many commands succeeded: 0, nothing more to try.
 */
static int open_layer(const struct devlist *l)
{
	static char *vgchange[] = { "/sbin/vgchange", "-ay", NULL };
	static char *mdadm[] = { "/sbin/mdadm", "--assemble", "--scan", NULL };
	static dev_t tried[MAX_TRIED];
	static size_t ntried;
	int pvs = 0, members = 0, opened = 0;
	char cmd[160];
	size_t i, j;

	for (i = 0; i < l->n; i++) {
		const struct blkdev *d = &l->dev[i];

		if (!dev_open_hint(d, cmd, sizeof(cmd)))
			continue;
		for (j = 0; j < ntried && tried[j] != d->devno; j++)
			;
		if (j < ntried || ntried == MAX_TRIED)
			continue;
		tried[ntried++] = d->devno;
		if (strcmp(d->id.type, "crypto_LUKS") == 0)
			opened += open_luks(d) == 0;
		else if (strcmp(d->id.type, "LVM2_member") == 0)
			pvs++;
		else
			members++;
	}
	if (members)
		opened += activate("assembling md arrays", mdadm) == 0;
	if (pvs)
		opened += activate("activating LVM volume groups", vgchange) == 0;
	return opened;
}

/*
 * find_root(), and while the open devices hold no root, open one more
 * layer and look again.  Nothing is opened when the root is there
 * already.  0 with *r filled (its device in *l), or -1 after saying why.
 */
static int find_or_open(const char *arg, struct devlist *l, struct root *r)
{
	const char *why = "";
	int round, k;

	for (round = 0;; round++) {
		if (devs_scan(l)) {
			say("cannot list block devices: %s", strerror(errno));
			return -1;
		}
		k = find_root(l, arg, r, &why);
		if (k <= 0)
			return k;
		if (round == OPEN_ROUNDS || open_layer(l) == 0)
			break;
		devs_free(l);
	}
	say("%s", why);
	devs_list_closed(l, PROG);
	return -1;
}

/* ---------------------------------------------------------- as PID 1 */

/* Nothing else is possible: stay alive and reap, so the kernel lives. */
static void __attribute__((noreturn)) park(void)
{
	for (;;) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		sleep(60);
	}
}

static void __attribute__((noreturn)) back_to_rescue(void)
{
	char *argv[] = { "init", NULL };
	char *envp[] = { "RESCUE_BOOT_FAILED=1", NULL };

	umount2(ROOT_DIR, 0);
	say("back to the rescue shell");
	execve(RESCUE_INIT, argv, envp);
	say("execve %s: %s; nothing left to run", RESCUE_INIT, strerror(errno));
	park();
}

/* fds 0-2 on the console again, blocking (rescue-init's output was not). */
static void console_fds(void)
{
	int fd = open("/dev/console", O_RDWR | O_NOCTTY);

	if (fd >= 0)
		stdio_on(fd);
}

static void __attribute__((noreturn)) boot_pid1(const char *arg)
{
	char *argv[] = { TARGET_INIT, NULL };
	char *envp[] = { "HOME=/", "TERM=linux", NULL };
	struct root r;
	struct devlist l;
	sigset_t none;
	int old_root;

	console_fds();
	say("looking for the installed root: %s", arg);
	mkdir(BOOT_DIR, 0700);
	if (find_or_open(arg, &l, &r) || mount_root(&r))
		back_to_rescue();
	if (check_target(&r))
		back_to_rescue();
	udev_db_for_dm(&l);
	if (move_api())
		back_to_rescue();
	/* Kept to climb back out if the exec fails after the pivot. */
	old_root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (chdir(ROOT_DIR) || syscall(SYS_pivot_root, ".", ".") ||
	    umount2(".", MNT_DETACH) || chroot(".") || chdir("/")) {
		/* Before anything was detached: what moved goes back. */
		say("switching to the root: %s", strerror(errno));
		if (fchdir(old_root) == 0 && chroot(".") == 0 &&
		    chdir("/") == 0)
			move_back(NMOVED);
		back_to_rescue();
	}
	console_fds();
	say("starting %s on %s: %s", r.pretty_name, mount_source(r.dev),
	    TARGET_INIT);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(TARGET_INIT, argv, envp);
	say("execve %s: %s", TARGET_INIT, strerror(errno));
	if (old_root >= 0 && fchdir(old_root) == 0 && chroot(".") == 0 &&
	    chdir("/") == 0)
		back_to_rescue();
	park();
}

/* -------------------------------------------------------- from a shell */

static int ask(const struct root *r)
{
	char line[16];

	fprintf(stderr, "Boot %s on %s with the rescue kernel? Every rescue "
		"shell is stopped. [y/N] ", r->pretty_name, mount_source(r->dev));
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return line[0] == 'y' || line[0] == 'Y';
}

static int request(const char *arg)
{
	const char *why;
	struct devlist l;
	struct root r;
	FILE *f;
	int ret = 1;

	if (!in_rescue_system()) {
		say("not running in the rescue system (no %s from the rescue "
		    "ISO); boot the rescue ISO to use it", RESCUE_RELEASE_FILE);
		return 1;
	}
	if (geteuid() != 0) {
		say("must run as root");
		return 1;
	}
	mkdir(BOOT_DIR, 0700);
	if (devs_scan(&l)) {
		say("cannot list block devices: %s", strerror(errno));
		return 1;
	}
	switch (find_root(&l, arg, &r, &why)) {
	case 1:		/* opening is for the person at this shell */
		say("%s", why);
		devs_list_closed(&l, PROG);
		/* fall through */
	case -1:
		goto out;
	}
	if (r.dev->mounted_at[0]) {
		say("%s is mounted at %s; unmount it first", r.dev->path,
		    r.dev->mounted_at);
		goto out;
	}
	if (!ask(&r)) {
		say("nothing done");
		goto out;
	}
	f = fopen(RESCUE_BOOT_REQUEST ".tmp", "w");
	if (!f || fprintf(f, "%s", mount_source(r.dev)) < 0 || fclose(f) ||
	    rename(RESCUE_BOOT_REQUEST ".tmp", RESCUE_BOOT_REQUEST)) {
		say("write %s: %s", RESCUE_BOOT_REQUEST, strerror(errno));
		goto out;
	}
	say("handing PID 1 over: the shells stop now");
	if (kill(1, RESCUE_BOOT_SIGNAL)) {
		say("signal PID 1: %s", strerror(errno));
		unlink(RESCUE_BOOT_REQUEST);
		goto out;
	}
	ret = 0;
out:
	devs_free(&l);
	return ret;
}

int main(int argc, char **argv)
{
	const char *arg = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: rescue-boot [DEVICE]\n"
			       "Boot the installed Linux system on DEVICE (/dev/sda2, sda2,\n"
			       "UUID=..., LABEL=..., /dev/mapper/VG-LV; without it, the only\n"
			       "one there is) with the rescue kernel: its own /sbin/init\n"
			       "becomes PID 1.  Open LUKS and LVM devices first.\n");
			return 0;
		}
		if (argv[i][0] == '-' || arg) {
			fprintf(stderr, "usage: rescue-boot [DEVICE]\n");
			return 2;
		}
		arg = argv[i];
	}
	if (getpid() == 1)
		boot_pid1(arg ? arg : "auto");
	return request(arg ? arg : "auto");
}
