// SPDX-License-Identifier: GPL-2.0
/*
 * rescue-init: /sbin/init of the rescue ISO.  This file is PID 1 itself:
 * signals, the shells it supervises, and the shutdown.
 *
 * The shape is Rich Felker's minimal init: PID 1 blocks signals and only
 * reaps; children restore the mask, start a session and exec.  Added on
 * top is only what a rescue system needs: the pseudo file systems on a
 * read-only root, drivers for the devices present and plugged in later
 * (drivers.c), a report on where /dev came from (report.c), a shell
 * with job control on the console's real tty (toybox oneit), respawning
 * with a limit, and an orderly shutdown on the signals busybox's halt,
 * poweroff and reboot send.
 *
 * /dev belongs to the kernel: devtmpfs, mounted before init runs.  This
 * program never creates a device node.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "drivers.h"
#include "report.h"
#include "util.h"

#define MAX_CONSOLES	4
#define RESPAWN_LIMIT	5	/* deaths ...                         */
#define RESPAWN_WINDOW	10	/* ... within this many seconds: stop */
#define RESPAWN_PAUSE	60	/* then try again after this long     */
#define TERM_GRACE_MS	2000	/* shutdown: TERM, wait, then KILL    */
#define QUIET_LOGLEVEL	5	/* console shows warnings and worse   */
#define DRIVERS_WAIT_MS	30000	/* rescue.boot= waits for the drivers */
#define DRIVERS_MIN_LIFE 10	/* the loader died sooner: not restarted */

enum how { HOW_REBOOT, HOW_HALT, HOW_POWEROFF };

/* One console and the shell on it. */
struct slot {
	char tty[TTY_NAME_MAX];
	pid_t pid;
	int is_main;		/* behind /dev/console: gets init's messages */
	int starts;
	unsigned int deaths;
	long death_at[RESPAWN_LIMIT];
	long retry_at;		/* 0: not stopped */
};

static struct rescue_opts opts;
static struct dev_origin dev_origin;
static struct slot slots[MAX_CONSOLES];
static int nslots;
static pid_t drivers_pid;	/* the module loader, restarted if it dies */
static long drivers_since;
static sigset_t waitset;

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
		if (dup2(i, i) == i)	/* open already */
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
	static char cmdline[4096];	/* x86 allows 2048 */
	ssize_t n;

	opts_init(&opts);
	n = read_file("/proc/cmdline", cmdline, sizeof(cmdline), 1);
	if (n < 0)
		return;
	parse_cmdline(cmdline, (size_t)n, &opts, warn_word, NULL);
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
	struct mountinfo mi = read_mountinfo();
	struct mnt_entry e;

	if (mountinfo_find(mi.text, mi.len, m->dir, &e) &&
	    !strcmp(e.fstype, m->type))
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
	char path[40];
	int fd;

	rsnprintf(path, sizeof(path), "/dev/%s", tty);
	fd = open(path, O_RDWR | O_NOCTTY);
	if (fd < 0) {
		say_err("open", path);
		return -1;
	}
	/* 1: take it even if an orphan of the last shell's session still
	 * holds it; we are root, and the console is ours. */
	if (ioctl(fd, TIOCSCTTY, 1) < 0)
		say_err("ioctl TIOCSCTTY", path);
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
	if (s->starts == 1) {
		if (!s->is_main)
			report_dev(&dev_origin);
		banner(opts.shell, s->tty);
	}
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
	char names[MAX_CONSOLES][TTY_NAME_MAX], active[256], path[40];
	ssize_t n;
	int i, k = 0, fd;

	n = read_file("/sys/class/tty/console/active", active, sizeof(active),
		      1);
	if (n >= 0)
		k = console_list(active, (size_t)n, names, MAX_CONSOLES);
	if (k == 0) {
		say("no console tty found; shell on /dev/console, without "
		    "job control");
		memcpy(names[0], "console", 8);
		k = 1;
	}
	for (i = 0; i < k; i++) {
		rsnprintf(path, sizeof(path), "/dev/%s", names[i]);
		fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0 && i < k - 1) {
			say_err("open", path);	/* skip a dead secondary */
			continue;
		}
		if (fd >= 0)
			close(fd);
		memcpy(slots[nslots].tty, names[i], TTY_NAME_MAX);
		slots[nslots].is_main = i == k - 1;
		nslots++;
	}
}

/* rescue.shell= names a program that must exist at boot, else /bin/sh. */
static void choose_shell(void)
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

/* Hot-plug must go on: a module loader that died is started again,
 * unless it died young (it would only die again). */
static void start_drivers(void)
{
	drivers_pid = drivers_start(1, !opts.no_net);
	drivers_since = now_s();
}

static void drivers_died(int status)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) :
		   WIFSIGNALED(status) ? 128 + WTERMSIG(status) : status;

	drivers_pid = 0;
	if (now_s() - drivers_since < DRIVERS_MIN_LIFE) {
		say("drivers: the module loader ended (status %d); devices "
		    "plugged in now need modprobe by hand", code);
		return;
	}
	say("drivers: the module loader ended (status %d); starting it "
	    "again", code);
	start_drivers();
}

static void reap(void)
{
	int status, i;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == drivers_pid)
			drivers_died(status);
		for (i = 0; i < nslots; i++)
			if (slots[i].pid == pid)
				shell_died(&slots[i], status);
	}
}

/*
 * Reap until no child is left or ms have passed.  With want > 0, return
 * as soon as that child ends, with its status in *status.
 */
static int drain_children(long ms, pid_t want, int *status)
{
	long end = now_ms() + ms, left;
	struct timespec ts;
	sigset_t chld;
	pid_t pid;
	int st;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
			if (pid == want) {
				*status = st;
				return 1;
			}
		if (pid < 0 && errno == ECHILD)
			return 0;
		left = end - now_ms();
		if (left <= 0)
			return 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		sigtimedwait(&chld, NULL, &ts);
	}
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
 * One pass over mountinfo, newest mount first (the text is walked from
 * its end), so that mounts on top go before the ones under them.  With
 * remount set, what is still there and has a disk behind it (the console
 * holds /dev) is remounted read-only.  / is done last, by the caller;
 * /proc stays, since every pass reads mountinfo from it.  Returns how
 * many were unmounted.
 */
static int unmount_pass(int remount)
{
	struct mountinfo mi = read_mountinfo();
	size_t end = mi.len, start, pos;
	struct mnt_entry e;
	int gone = 0;

	while (end > 0) {
		start = end - 1;	/* end is just past a line's '\n' */
		while (start > 0 && mi.text[start - 1] != '\n')
			start--;
		pos = start;
		end = start;
		if (mountinfo_next(mi.text, mi.len, &pos, &e) != 1 ||
		    !strcmp(e.mountpoint, "/") ||
		    !strcmp(e.mountpoint, "/proc"))
			continue;
		if (!remount) {
			gone += umount2(e.mountpoint, 0) == 0;
		} else if (!is_pseudo(e.fstype) &&
			   mount(NULL, e.mountpoint, NULL,
				 MS_REMOUNT | MS_RDONLY, NULL) < 0) {
			say_err("remount read-only", e.mountpoint);
		}
	}
	return gone;
}

/*
 * Unmount everything, however many there are: passes go on while one
 * frees something, so mounts past what one read of mountinfo holds are
 * reached too.  Then what is left is made read-only.
 */
static void unmount_all(void)
{
	while (unmount_pass(0) > 0)
		;
	unmount_pass(1);
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY, NULL) < 0)
		say_err("remount read-only", "/");
}

/* Nothing left to do but reap whatever still turns up. */
static void __attribute__((noreturn)) park(void)
{
	struct timespec ts = { 3600, 0 };
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		sigtimedwait(&chld, NULL, &ts);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

/*
 * reboot(2) ends with do_exit() in the caller when the machine does not
 * go down (no ACPI power off, a halt): in PID 1 that is "Attempted to
 * kill init".  So, like oneit, a child makes the call, and says with
 * its exit status whether the call itself failed.
 */
static void __attribute__((noreturn)) final_reboot(enum how how)
{
	static const int cmd[] = { RB_AUTOBOOT, RB_HALT_SYSTEM, RB_POWER_OFF };
	static const char *const cmd_name[] = {
		"RB_AUTOBOOT", "RB_HALT_SYSTEM", "RB_POWER_OFF",
	};
	int status = 0;
	pid_t pid;

	for (;;) {
		pid = fork();
		if (pid == 0) {
			reboot(cmd[how]);
			say_err("reboot", cmd_name[how]);
			_exit(1);
		}
		if (pid > 0)
			break;
		say_err("fork", "reboot");
		sleep(1);
	}
	if (drain_children(60000, pid, &status) && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 1)
		say("the machine did not go down: file systems are unmounted "
		    "or read-only, but it is still running");
	else
		say("the system is halted; it is safe to switch off");
	park();
}

/* Every process but us gone: the shells and whatever they started. */
static void stop_all(void)
{
	int i;

	/* HUP because interactive shells ignore TERM but leave on HUP, so
	 * the grace period usually ends at once; CONT because a stopped job
	 * would sit on its TERM until the KILL. */
	kill(-1, SIGTERM);
	kill(-1, SIGHUP);
	kill(-1, SIGCONT);
	drain_children(TERM_GRACE_MS, 0, NULL);
	kill(-1, SIGKILL);
	drain_children(1000, 0, NULL);
	for (i = 0; i < nslots; i++)
		slots[i].pid = 0;
	drivers_pid = 0;
}

static void __attribute__((noreturn)) shutdown_system(enum how how)
{
	static const char *const name[] = { "reboot", "halt", "poweroff" };

	say("shutting down: %s", name[how]);
	stop_all();
	sync();
	unmount_all();
	sync();
	final_reboot(how);
}

/* ------------------------------------------------------------ rescue-boot */

/*
 * Hand PID 1 to rescue-boot, which boots the installed system on `dev`
 * ("auto": the only one) or, failing that, execs us again with
 * RESCUE_BOOT_FAILED set and its reason on the console.
 */
static void hand_over(const char *dev)
{
	char *argv[] = { "rescue-boot", (char *)dev, NULL };
	char *envp[] = { NULL };

	execve(RESCUE_BOOT, argv, envp);
	say_err("execve", RESCUE_BOOT);
}

/* `rescue-boot DEVICE` in a shell wrote the device and signalled us. */
static void boot_request(void)
{
	char dev[BOOT_MAX];

	if (read_file(RESCUE_BOOT_REQUEST, dev, sizeof(dev), 1) <= 0)
		return;
	unlink(RESCUE_BOOT_REQUEST);
	say("rescue-boot %s", dev);
	stop_all();
	hand_over(dev);
	start_drivers();	/* still here: the shells come back, and so must it */
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
	sigaddset(&waitset, RESCUE_BOOT_SIGNAL);
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
		default:
			if (sig == RESCUE_BOOT_SIGNAL)
				boot_request();
		}
		reap();
	}
}

int main(void)
{
	int have_fds, status;
	pid_t pid;

	have_fds = ensure_std_fds() == 0;
	console_never_blocks();
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
	setup_dev(&dev_origin);
	if (!have_fds && ensure_std_fds() == 0)	/* now /dev/console exists */
		console_never_blocks();
	mount_pseudo();
	if (opts.check) {
		drivers_start(0, 0);
		run_check(&dev_origin);
		shutdown_system(HOW_POWEROFF);
	}
	if (opts.boot[0] && !getenv("RESCUE_BOOT_FAILED")) {
		/* The installed system's disk may need a module; its own
		 * udev takes over hot-plug. */
		pid = drivers_start(0, 0);
		if (pid > 0 && !drain_children(DRIVERS_WAIT_MS, pid, &status))
			say("drivers still loading after %d s; booting anyway",
			    DRIVERS_WAIT_MS / 1000);
		hand_over(opts.boot);
	}
	start_drivers();
	choose_shell();
	/* Kernel chatter (info, notice) would land in the middle of the
	 * prompt; warnings and worse still show, the rest is in dmesg.
	 * Unless the person at the boot prompt chose a level. */
	if (!opts.kernel_loglevel && klogctl(8, NULL, QUIET_LOGLEVEL) < 0)
		say_err("klogctl", "console level 5");
	setup_slots();
	supervise();
}
