// SPDX-License-Identifier: GPL-2.0
/*
 * rescue-init: /sbin/init of the rescue ISO.
 *
 * The shape is Rich Felker's minimal init: PID 1 blocks signals and only
 * reaps; children restore the mask, start a session and exec.  Added on
 * top is only what a rescue system needs: the pseudo file systems on a
 * read-only root, a report on where /dev came from, a shell with job
 * control on the console's real tty (toybox oneit), respawning with a
 * limit, and an orderly shutdown on the signals busybox's halt, poweroff
 * and reboot send.
 *
 * /dev belongs to the kernel: devtmpfs, mounted before init runs.  This
 * program never creates a device node.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "parse.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define MAX_CONSOLES	4
#define RESPAWN_LIMIT	5	/* deaths ...                         */
#define RESPAWN_WINDOW	10	/* ... within this many seconds: stop */
#define RESPAWN_PAUSE	60	/* then try again after this long     */
#define TERM_GRACE_MS	2000	/* shutdown: TERM, wait, then KILL    */
#define WALK_DEPTH	8
#define MAX_BLOCK	128

enum how { HOW_REBOOT, HOW_HALT, HOW_POWEROFF };

struct devinfo {
	int by_kernel;		/* devtmpfs on /dev before we touched it */
	int mounted;		/* devtmpfs on /dev now, by whoever */
	unsigned int blk, chr;
};

struct walk {
	unsigned int blk, chr;
	dev_t want;		/* block node to look for, 0: none */
	int found_depth;
	char found[128];
	char path[256];
};

struct slot {
	char tty[TTY_NAME_MAX];
	pid_t pid;
	int is_main;
	int starts;
	unsigned int deaths;
	long death_at[RESPAWN_LIMIT];
	long retry_at;		/* 0: not stopped */
};

static struct rescue_opts opts;
static struct devinfo dev;	/* how /dev was obtained, for every banner */
static struct slot slots[MAX_CONSOLES];
static int nslots;
static sigset_t waitset;
static char big[65536];		/* mountinfo, one reader at a time */

/* ---------------------------------------------------------------- output */

static void vsay(const char *prefix, const char *fmt, va_list ap)
{
	char buf[600];
	size_t n, p = strlen(prefix);

	memcpy(buf, prefix, p);
	n = p + (size_t)rfmt(buf + p, sizeof(buf) - p - 1, fmt, ap);
	buf[n++] = '\n';
	/* One write per line, so lines from init and its children on the
	 * same console do not interleave mid-line. */
	if (write(1, buf, n) < 0)
		return;
}

__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("rescue-init: ", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2)))
static void check_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("rescue-check: ", fmt, ap);
	va_end(ap);
}

/* "rescue-init: mount(/run): No such file or directory" */
static void say_err(const char *call, const char *arg)
{
	int e = errno;

	say("%s(%s): %s", call, arg, strerror(e));
	errno = e;
}

static long now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Read a whole (small) file into buf, NUL terminated; length or -1.
 * With report set, a failure is printed naming open or read.
 */
static ssize_t read_file(const char *path, char *buf, size_t size,
			 int report)
{
	ssize_t r, ret = -1;
	size_t n = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (report)
			say_err("open", path);
		return -1;
	}
	while (n + 1 < size) {
		r = read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			if (report)
				say_err("read", path);
			goto out_close;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	ret = (ssize_t)n;
out_close:
	close(fd);
	return ret;
}

static ssize_t read_mountinfo(void)
{
	ssize_t n = read_file("/proc/self/mountinfo", big, sizeof(big), 1);

	if (n < 0) {
		big[0] = '\0';
		return 0;
	}
	return n;
}

/*
 * Directory reading straight from getdents(): opendir() would pull in
 * musl's malloc, a sixth of the size budget, for two loops.
 */
struct dirbuf {
	int fd, pos, len;
	char buf[2048] __attribute__((aligned(8)));
};

static struct dirent *next_dirent(struct dirbuf *db)
{
	struct dirent *de;

	do {
		if (db->pos >= db->len) {
			db->len = getdents(db->fd, (struct dirent *)db->buf,
					   sizeof(db->buf));
			db->pos = 0;
			if (db->len <= 0)
				return NULL;
		}
		de = (struct dirent *)(db->buf + db->pos);
		db->pos += de->d_reclen;
	} while (de->d_name[0] == '.' && (!de->d_name[1] ||
		 (de->d_name[1] == '.' && !de->d_name[2])));
	return de;
}

/* --------------------------------------------------------------- console */

/*
 * The kernel normally hands init fds 0-2 on /dev/console.  If it could
 * not (no console node where it looked), open one ourselves: every later
 * message goes to fd 1.  Returns -1 if still not possible.
 */
static int ensure_std_fds(void)
{
	int fd, i;

	for (i = 0; i < 3; i++) {
		if (fcntl(i, F_GETFD) >= 0)
			continue;
		fd = open("/dev/console", O_RDWR | O_NOCTTY);
		if (fd < 0)
			fd = open("/dev/null", O_RDWR);
		if (fd < 0)
			return -1;
		if (fd != i) {
			dup2(fd, i);
			close(fd);
		}
	}
	return 0;
}

static void warn_word(void *ctx, const char *word, size_t wlen,
		      const char *why)
{
	char shown[68];
	size_t i, n = wlen < 64 ? wlen : 64;

	(void)ctx;
	/* The word is whatever was typed at the boot prompt: show a bounded,
	 * printable excerpt only. */
	for (i = 0; i < n; i++) {
		unsigned char c = word[i];

		shown[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
	}
	memcpy(shown + n, wlen > n ? "..." : "", wlen > n ? 4 : 1);
	say("kernel command line: ignoring '%s': %s", shown, why);
}

static void read_options(void)
{
	ssize_t n;

	opts_init(&opts);
	n = read_file("/proc/cmdline", big, sizeof(big), 1);
	if (n < 0)
		return;
	parse_cmdline(big, (size_t)n, &opts, warn_word, NULL);
}

/* ---------------------------------------------------------------- mounts */

struct mnt_spec {
	const char *src, *dir, *type, *data;
	unsigned long flags;
	int mkdir;		/* directory lives in devtmpfs */
};

static const struct mnt_spec pseudo_mounts[] = {
	{ "sysfs", "/sys", "sysfs", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC, 0 },
	/* gid 5 is "tty" by convention; ptmxmode so non-root ptys work */
	{ "devpts", "/dev/pts", "devpts", "gid=5,mode=0620,ptmxmode=0666",
	  MS_NOSUID | MS_NOEXEC, 1 },
	{ "tmpfs", "/dev/shm", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV, 1 },
	{ "tmpfs", "/tmp", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV, 0 },
	{ "tmpfs", "/run", "tmpfs", "mode=0755", MS_NOSUID | MS_NODEV, 0 },
};

static int mount_one(const struct mnt_spec *m)
{
	struct mnt_entry e;
	size_t n = (size_t)read_mountinfo();

	if (mountinfo_find(big, n, m->dir, &e) && !strcmp(e.fstype, m->type))
		return 0;	/* already there, e.g. from the kernel */
	if (m->mkdir && mkdir(m->dir, 0755) < 0 && errno != EEXIST)
		say_err("mkdir", m->dir);
	if (mount(m->src, m->dir, m->type, m->flags, m->data) < 0) {
		say_err("mount", m->dir);
		return -1;
	}
	return 0;
}

static void mount_proc(void)
{
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0 && errno != EBUSY)
		say_err("mount", "/proc");
}

static void mount_pseudo(void)
{
	size_t i;

	/* A failed mount costs one feature (ptys, a writable /tmp), not
	 * the shell: report it and go on. */
	for (i = 0; i < ARRAY_SIZE(pseudo_mounts); i++)
		mount_one(&pseudo_mounts[i]);
}

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

static int dev_is_devtmpfs(void)
{
	struct mnt_entry e;
	size_t n = (size_t)read_mountinfo();

	return mountinfo_find(big, n, "/dev", &e) &&
	       !strcmp(e.fstype, "devtmpfs");
}

static void explain_no_devtmpfs(void)
{
	struct mnt_entry e;
	size_t n = (size_t)read_mountinfo();
	char what[64];

	if (mountinfo_find(big, n, "/dev", &e))
		rsnprintf(what, sizeof(what), "it is a %s mount", e.fstype);
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
static void report_dev(const struct devinfo *d)
{
	if (!d->mounted)
		say("WARNING: /dev has no devtmpfs");
	else
		say("%s: %u nodes (%u block, %u char)", d->by_kernel ?
		    "/dev is devtmpfs, mounted by the kernel" :
		    "mounted devtmpfs on /dev itself", d->blk + d->chr,
		    d->blk, d->chr);
}

/* Step 4: where /dev came from, and make sure there is one. */
static void setup_dev(struct devinfo *d)
{
	struct walk w;

	memset(d, 0, sizeof(*d));
	d->by_kernel = d->mounted = dev_is_devtmpfs();
	if (!d->by_kernel) {
		explain_no_devtmpfs();
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

static int is_partition(const char *name)
{
	char path[96];

	rsnprintf(path, sizeof(path), "/sys/class/block/%s/partition", name);
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
static int block_names(char names[][TTY_NAME_MAX], int max)
{
	static struct dirbuf d;
	char tmp[TTY_NAME_MAX];
	struct dirent *de;
	int n = 0, i;

	d.pos = d.len = 0;
	d.fd = open("/sys/class/block", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.fd < 0) {
		say_err("open", "/sys/class/block");
		return 0;
	}
	while (n < max && (de = next_dirent(&d))) {
		if (de->d_name[0] == '.' ||
		    strlen(de->d_name) >= TTY_NAME_MAX)
			continue;
		strcpy(tmp, de->d_name);
		for (i = n; i > 0 && strcmp(names[i - 1], tmp) > 0; i--)
			memcpy(names[i], names[i - 1], TTY_NAME_MAX);
		memcpy(names[i], tmp, TTY_NAME_MAX);
		n++;
	}
	close(d.fd);
	return n;
}

/* Disks and partitions; empty loop devices only as a count. */
static void list_block(int check)
{
	static char names[MAX_BLOCK][TTY_NAME_MAX];
	int i, n, empty_loops = 0;
	char size[32];
	uint64_t bytes;

	n = block_names(names, MAX_BLOCK);
	for (i = 0; i < n; i++) {
		bytes = block_bytes(names[i]);
		if (!bytes && !strncmp(names[i], "loop", 4)) {
			empty_loops++;
			continue;
		}
		if (check) {
			check_say("disk %s %llu", names[i],
				  (unsigned long long)bytes);
			continue;
		}
		format_size(bytes, size, sizeof(size));
		say("%s %s %s", is_partition(names[i]) ? "part" : "disk",
		    names[i], bytes ? size : "(no medium)");
	}
	if (empty_loops && !check)
		say("%d unused loop devices not shown", empty_loops);
	if (!n && !check)
		say("no block devices found");
}

/* Init's own messages go to the main console only; a person at another
 * console (the screen, when the main one is a serial port) still gets
 * the /dev report with the banner. */
static void banner(const struct slot *s)
{
	struct utsname u;

	if (uname(&u) < 0)
		memcpy(u.release, "(unknown)", 10);
	if (!s->is_main)
		report_dev(&dev);
	say("rescue system, Linux %s (%s), shell %s on %s", u.release,
	    u.machine, opts.shell, s->tty);
	list_block(0);
	say("first steps: fdisk -l   mount /dev/sda1 /mnt   e2fsck -f /dev/sda1");
	say("             udhcpc -i eth0   dmesg   poweroff | reboot | halt");
}

/* ----------------------------------------------------------------- shell */

/* Undo what a killed full-screen program may have left on the tty. */
static void sane_tty(int fd)
{
	struct termios t;

	if (tcgetattr(fd, &t) < 0)
		return;
	t.c_iflag |= ICRNL | IXON;
	t.c_iflag &= ~(unsigned)(INLCR | IGNCR);
	t.c_oflag |= OPOST | ONLCR;
	t.c_lflag |= ISIG | ICANON | ECHO | ECHOE | ECHOK | IEXTEN;
	tcsetattr(fd, TCSANOW, &t);
}

/* setsid, then make the tty our controlling terminal: job control. */
static int take_tty(const char *tty)
{
	char dev[40];
	int fd;

	rsnprintf(dev, sizeof(dev), "/dev/%s", tty);
	fd = open(dev, O_RDWR | O_NOCTTY);
	if (fd < 0) {
		say_err("open", dev);
		return -1;
	}
	/* 1: take it even if an orphan of the last shell's session still
	 * holds it; we are root, and the console is ours. */
	if (ioctl(fd, TIOCSCTTY, 1) < 0)
		say_err("ioctl TIOCSCTTY", dev);
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
	sane_tty(0);
	return 0;
}

static int is_vt(const char *tty)
{
	return !strncmp(tty, "tty", 3) && tty[3] >= '0' && tty[3] <= '9';
}

static void __attribute__((noreturn)) exec_shell(struct slot *s)
{
	char term[8 + TERM_MAX], shell[8 + SHELL_MAX];
	const char *base = strrchr(opts.shell, '/');
	char *argv[] = { (char *)(base ? base + 1 : opts.shell), NULL };
	char *envp[] = {
		"PATH=/sbin:/bin:/usr/sbin:/usr/bin", "HOME=/root",
		"PS1=rescue:\\w# ", "USER=root", "LOGNAME=root", term, shell,
		/* / is read-only: history goes to tmpfs */
		"HISTFILE=/tmp/.ash_history",
		/* aliases and settings of interactive shells */
		"ENV=/etc/shrc", NULL
	};
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0)
		say_err("setsid", s->tty);
	if (take_tty(s->tty) < 0 && (!s->is_main || take_tty("console") < 0))
		_exit(126);
	rsnprintf(term, sizeof(term), "TERM=%s", opts.term[0] ? opts.term :
		  is_vt(s->tty) ? "linux" : "vt100");
	rsnprintf(shell, sizeof(shell), "SHELL=%s", opts.shell);
	if (s->starts == 1)
		banner(s);
	execve(opts.shell, argv, envp);
	say_err("execve", opts.shell);
	_exit(127);
}

static void spawn(struct slot *s)
{
	pid_t pid;

	s->starts++;
	pid = fork();
	if (pid < 0) {
		say_err("fork", s->tty);
		s->retry_at = now_s() + 1;
		return;
	}
	if (pid == 0)
		exec_shell(s);
	s->pid = pid;
	s->retry_at = 0;
}

/* Returns 1 when the slot has died too often and must rest. */
static int too_many_deaths(struct slot *s, long *span)
{
	long now = now_s(), oldest;

	s->death_at[s->deaths++ % RESPAWN_LIMIT] = now;
	if (s->deaths < RESPAWN_LIMIT)
		return 0;
	oldest = s->death_at[s->deaths % RESPAWN_LIMIT];
	*span = now - oldest;
	return *span < RESPAWN_WINDOW;
}

static void shell_died(struct slot *s, int status)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) :
		   WIFSIGNALED(status) ? 128 + WTERMSIG(status) : status;
	const char *on = s->is_main ? "" : " on ";
	const char *tty = s->is_main ? "" : s->tty;
	long span = 0;

	s->pid = 0;
	if (too_many_deaths(s, &span)) {
		say("shell%s%s died %d times in %ld s; not respawning",
		    on, tty, RESPAWN_LIMIT, span ? span : 1);
		say("last exit status %d; trying again in %d s, at once on "
		    "SIGHUP (kill -HUP 1); Ctrl-Alt-Del reboots", code,
		    RESPAWN_PAUSE);
		s->retry_at = now_s() + RESPAWN_PAUSE;
		s->deaths = 0;
		return;
	}
	say("shell%s%s exited (status %d), starting a new one", on, tty,
	    code);
}

/* The last active console is /dev/console; shells go on all of them. */
static void setup_slots(void)
{
	char names[MAX_CONSOLES][TTY_NAME_MAX], dev[40];
	ssize_t n;
	int i, k = 0, fd;

	n = read_file("/sys/class/tty/console/active", big, sizeof(big), 1);
	if (n >= 0)
		k = console_list(big, (size_t)n, names, MAX_CONSOLES);
	if (k == 0) {
		say("no console tty found; shell on /dev/console, without "
		    "job control");
		memcpy(names[0], "console", 8);
		k = 1;
	}
	for (i = 0; i < k; i++) {
		rsnprintf(dev, sizeof(dev), "/dev/%s", names[i]);
		fd = open(dev, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && i < k - 1) {
			say_err("open", dev);	/* skip a dead secondary */
			continue;
		}
		if (fd >= 0)
			close(fd);
		memcpy(slots[nslots].tty, names[i], TTY_NAME_MAX);
		slots[nslots].is_main = i == k - 1;
		nslots++;
	}
}

static void check_shell(void)
{
	if (access(opts.shell, X_OK) == 0)
		return;
	say_err("access", opts.shell);
	if (strcmp(opts.shell, DEFAULT_SHELL)) {
		say("rescue.shell=%s is not usable; using %s", opts.shell,
		    DEFAULT_SHELL);
		memcpy(opts.shell, DEFAULT_SHELL, sizeof(DEFAULT_SHELL));
	}
}

/* -------------------------------------------------------------- shutdown */

static void reap(void)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		for (i = 0; i < nslots; i++)
			if (slots[i].pid == pid)
				shell_died(&slots[i], status);
}

/* Reap until no child is left or ms have passed. */
static void drain_children(long ms)
{
	long end = now_ms() + ms, left;
	struct timespec ts;
	sigset_t chld;
	pid_t pid;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (pid < 0 && errno == ECHILD)
			return;
		left = end - now_ms();
		if (left <= 0)
			return;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		sigtimedwait(&chld, NULL, &ts);
	}
}

/* Nothing left to do but reap whatever still turns up. */
static void park(void)
{
	struct timespec ts = { 3600, 0 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigtimedwait(&chld, NULL, &ts);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static int is_pseudo(const char *type)
{
	static const char *const pseudo[] = {
		"proc", "sysfs", "devtmpfs", "devpts", "tmpfs", "cgroup2",
		"debugfs", "securityfs", "pstore", "efivarfs", "bpf",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pseudo); i++)
		if (!strcmp(type, pseudo[i]))
			return 1;
	return 0;
}

/*
 * Newest mount first.  What cannot be unmounted (the console holds /dev)
 * is remounted read-only if it has a disk behind it; RAM file systems
 * have nothing to flush.
 */
static void unmount_all(void)
{
	static struct mnt_entry list[64];
	size_t pos = 0, len = (size_t)read_mountinfo();
	int n = 0, r;

	while (n < 64 && (r = mountinfo_next(big, len, &pos, &list[n])) >= 0)
		n += r;
	while (n-- > 0) {
		if (!strcmp(list[n].mountpoint, "/"))
			continue;
		if (umount2(list[n].mountpoint, 0) == 0 ||
		    is_pseudo(list[n].fstype))
			continue;
		if (mount(NULL, list[n].mountpoint, NULL,
			  MS_REMOUNT | MS_RDONLY, NULL) < 0)
			say_err("remount read-only", list[n].mountpoint);
	}
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY, NULL) < 0)
		say_err("remount read-only", "/");
}

/*
 * reboot(2) ends with do_exit() in the caller when the machine does not
 * go down (no ACPI power off, a halt): in PID 1 that is "Attempted to
 * kill init".  So, like oneit, a child makes the call.
 */
static void __attribute__((noreturn)) final_reboot(enum how how)
{
	static const int cmd[] = { RB_AUTOBOOT, RB_HALT_SYSTEM, RB_POWER_OFF };
	pid_t pid;

	for (;;) {
		pid = fork();
		if (pid == 0) {
			reboot(cmd[how]);
			say_err("reboot", how == HOW_REBOOT ? "RB_AUTOBOOT" :
				how == HOW_HALT ? "RB_HALT_SYSTEM" :
				"RB_POWER_OFF");
			_exit(1);
		}
		if (pid > 0)
			break;
		say_err("fork", "reboot");
		sleep(1);
	}
	drain_children(60000);
	say("the system is halted; it is safe to switch off");
	for (;;)
		park();
}

static void __attribute__((noreturn)) shutdown_system(enum how how)
{
	static const char *const name[] = { "reboot", "halt", "poweroff" };

	say("shutting down: %s", name[how]);
	/* HUP because interactive shells ignore TERM but leave on HUP, so
	 * the grace period usually ends at once; CONT because a stopped job
	 * would sit on its TERM until the KILL. */
	kill(-1, SIGTERM);
	kill(-1, SIGHUP);
	kill(-1, SIGCONT);
	drain_children(TERM_GRACE_MS);
	kill(-1, SIGKILL);
	drain_children(1000);
	sync();
	unmount_all();
	sync();
	final_reboot(how);
}

/* ----------------------------------------------------------- smoke test */

static void check_node(const char *path, int want_blk, char *fail,
		       size_t size)
{
	struct stat st;
	int ok = stat(path, &st) == 0 &&
		 (want_blk ? S_ISBLK(st.st_mode) : S_ISCHR(st.st_mode));
	size_t l = strlen(fail);

	if (ok) {
		check_say("node %s %s %u:%u", path, want_blk ? "block" : "char",
			  major(st.st_rdev), minor(st.st_rdev));
		return;
	}
	check_say("node %s missing", path);
	rsnprintf(fail + l, size - l, "%s%s missing", l ? "; " : "", path);
}

static void check_boot_node(char *fail, size_t size)
{
	struct mnt_entry root;
	struct walk w;
	size_t l, len = (size_t)read_mountinfo();

	if (!mountinfo_find(big, len, "/", &root)) {
		check_say("root unknown");
		l = strlen(fail);
		rsnprintf(fail + l, size - l, "%sno / in mountinfo",
			  l ? "; " : "");
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
	l = strlen(fail);
	rsnprintf(fail + l, size - l, "%sno node for boot device %u:%u",
		  l ? "; " : "", root.major, root.minor);
}

static void list_mounts(void)
{
	struct mnt_entry e;
	size_t pos = 0, len = (size_t)read_mountinfo();

	while (mountinfo_next(big, len, &pos, &e) >= 0)
		if (e.mountpoint[0])
			check_say("mount %s %s %s", e.mountpoint, e.fstype,
				  e.source);
}

/* rescue.check: a report a test can parse, then power off. */
static void __attribute__((noreturn)) run_check(const struct devinfo *d)
{
	static const char *const nodes[] = {
		"/dev/console", "/dev/null", "/dev/zero", "/dev/tty",
	};
	char fail[512] = "";
	size_t i;

	check_say("dev %s", d->by_kernel ? "devtmpfs kernel" :
		  d->mounted ? "devtmpfs rescue-init" : "none");
	check_say("nodes %u block %u char %u", d->blk + d->chr, d->blk,
		  d->chr);
	if (!d->by_kernel)
		memcpy(fail, "/dev not mounted by the kernel", 31);
	for (i = 0; i < ARRAY_SIZE(nodes); i++)
		check_node(nodes[i], 0, fail, sizeof(fail));
	check_boot_node(fail, sizeof(fail));
	list_block(1);
	list_mounts();
	if (fail[0])
		check_say("FAIL %s", fail);
	else
		check_say("PASS");
	shutdown_system(HOW_POWEROFF);
}

/* ------------------------------------------------------------------ main */

/*
 * Everything but the fault signals is blocked and read synchronously
 * with sigtimedwait().  A fault in PID 1 must stay deadly (blocked, the
 * kernel kills us anyway, and a loop on a bad instruction would hang).
 * Signals PID 1 does not wait for stay pending and are otherwise ignored.
 */
static void block_signals(void)
{
	static const int faults[] = {
		SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP,
	};
	sigset_t all;
	size_t i;

	sigfillset(&all);
	for (i = 0; i < ARRAY_SIZE(faults); i++)
		sigdelset(&all, faults[i]);
	sigprocmask(SIG_SETMASK, &all, NULL);
	sigemptyset(&waitset);
	sigaddset(&waitset, SIGCHLD);
	sigaddset(&waitset, SIGTERM);	/* busybox reboot */
	sigaddset(&waitset, SIGUSR1);	/* busybox halt */
	sigaddset(&waitset, SIGUSR2);	/* busybox poweroff */
	sigaddset(&waitset, SIGINT);	/* Ctrl-Alt-Del */
	sigaddset(&waitset, SIGHUP);	/* retry a resting shell now */
}

static void start_shells(long *sleep_s)
{
	long now = now_s();
	int i;

	for (i = 0; i < nslots; i++) {
		struct slot *s = &slots[i];

		if (s->pid)
			continue;
		if (s->retry_at && s->retry_at > now) {
			if (s->retry_at - now < *sleep_s)
				*sleep_s = s->retry_at - now;
			continue;
		}
		if (s->retry_at)
			say("trying the shell on %s again", s->tty);
		spawn(s);
	}
}

static void __attribute__((noreturn)) supervise(void)
{
	struct timespec ts;
	long sleep_s;
	int sig, i;

	for (;;) {
		sleep_s = 30;	/* safety net: merged SIGCHLDs, clock */
		start_shells(&sleep_s);
		ts.tv_sec = sleep_s > 0 ? sleep_s : 1;
		ts.tv_nsec = 0;
		sig = sigtimedwait(&waitset, NULL, &ts);
		switch (sig) {
		case SIGTERM:
			shutdown_system(HOW_REBOOT);
		case SIGINT:
			shutdown_system(HOW_REBOOT);
		case SIGUSR1:
			shutdown_system(HOW_HALT);
		case SIGUSR2:
			shutdown_system(HOW_POWEROFF);
		case SIGHUP:
			for (i = 0; i < nslots; i++)
				if (!slots[i].pid && slots[i].retry_at) {
					say("SIGHUP: trying the shell on %s "
					    "again", slots[i].tty);
					slots[i].retry_at = 0;
				}
			break;
		}
		reap();
	}
}

int main(void)
{
	int have_fds;

	have_fds = ensure_std_fds() == 0;
	umask(022);
	if (chdir("/") < 0)
		say_err("chdir", "/");
	block_signals();
	if (getpid() != 1)
		say("WARNING: not PID 1 (pid %d); orphans will not be ours",
		    (int)getpid());
	/* Ctrl-Alt-Del becomes SIGINT to us instead of an instant reset. */
	if (reboot(RB_DISABLE_CAD) < 0)
		say_err("reboot", "RB_DISABLE_CAD");
	mount_proc();
	read_options();
	setup_dev(&dev);
	if (!have_fds)
		ensure_std_fds();	/* now that /dev/console exists */
	mount_pseudo();
	if (opts.check)
		run_check(&dev);
	check_shell();
	/* Kernel chatter (info, notice) would land in the middle of the
	 * prompt; warnings and worse still show, the rest is in dmesg. */
	if (klogctl(8, NULL, 5) < 0)
		say_err("klogctl", "console level 5");
	setup_slots();
	supervise();
}
