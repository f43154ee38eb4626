// SPDX-License-Identifier: GPL-2.0
/*
 * rescue-enter [--ro] [DEVICE]: enter an installed Linux system from the
 * rescue shell, with a shell of its own, chrooted, to repair it with its
 * own tools (grub-install, update-initramfs, passwd).
 *
 *   find      roots.c: every block device's superblock, read-only; a root
 *             has /etc/os-release and /etc/fstab.  One is entered, several
 *             are listed and the user names one.
 *   mount     the root (read-write unless --ro), then from its fstab
 *             /usr, /var, /boot and /boot/efi; proc, sysfs, a fresh
 *             devtmpfs on its /dev, devpts, tmpfs on /dev/shm and /run,
 *             efivarfs under UEFI; resolv.conf when there is one.
 *   run       the target's root shell, chrooted, prompt naming the target.
 *   leave     every mount that succeeded is on a list (arch-chroot's
 *             track_mount); they are unmounted in reverse order, a busy one
 *             is reported and the rest still unmounted, then sync.
 *
 * Signals that would end us (INT, TERM, HUP, QUIT) stay blocked from the
 * first mount to the last unmount and are read with sigtimedwait, so an
 * interrupted enter unmounts what it mounted before it exits.  SIGKILL
 * cannot be caught: after `kill -9` of rescue-enter itself, `umount -R`
 * the directory it named.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "readonly.h"
#include "roots.h"

#define BASE_DIR	"/run/rescue-enter"
#define PROBE_DIR	BASE_DIR "/probe"
#define RELEASE_FILE	RESCUE_RELEASE_FILE
#define MAX_ROOTS	16
#define MAX_MOUNTS	32
#define TARGET_PATH	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *prog = "rescue-enter";

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ------------------------------------------------------- tracked mounts */

/* What we mounted, in order; a --ro mount of a device holds the device
 * read-only (readonly.h) until it is unmounted. */
static struct tracked {
	char dir[512];
	struct ro_guard guard;
} mounts[MAX_MOUNTS];
static size_t n_mounts;
/* A directory we made in the kernel's devtmpfs: removed once the mount
 * on it is gone, before the devtmpfs itself is unmounted. */
static char made_dir[512];
static sigset_t stop_sigs;	/* the signals that ask us to stop */

/* A signal that asks us to stop, if one came: checked between steps. */
static int interrupted(void)
{
	sigset_t pending;
	int sig;

	sigpending(&pending);
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&stop_sigs, sig) && sigismember(&pending, sig))
			return sig;
	return 0;
}

/*
 * mount(2) -- with ro, ro_mount() of the block device src, which holds the
 * device read-only until teardown() unmounts it -- and on success onto
 * the list that teardown() undoes.
 */
static int track_mount(const char *src, const char *dir, const char *type,
		       unsigned long flags, const char *data, int ro)
{
	struct tracked *m = &mounts[n_mounts];

	if (n_mounts == MAX_MOUNTS) {
		errno = ENOSPC;
		return -1;
	}
	*m = (struct tracked){ .guard = RO_GUARD_INIT };
	if (ro ? ro_mount(src, dir, type, flags, data, &m->guard) :
		 mount(src, dir, type, flags, data))
		return -1;
	snprintf(m->dir, sizeof(m->dir), "%s", dir);
	n_mounts++;
	return 0;
}

/*
 * Unmount the list in reverse.  What stays mounted (busy) is reported
 * with the command that finishes the job; returns how many stayed.
 */
static int teardown(void)
{
	char rest[1024] = "";
	int left = 0;

	sync();
	while (n_mounts > 0) {
		struct tracked *m = &mounts[--n_mounts];
		const char *dir = m->dir;

		if (umount2(dir, UMOUNT_NOFOLLOW) == 0) {
			say("unmounted %s", dir);
			ro_guard_end(&m->guard);
			if (strcmp(dir, made_dir) == 0)
				rmdir(dir);
			continue;
		}
		if (errno == EBUSY)
			say("%s is busy, left mounted (`fuser -m %s` names who uses it)",
			    dir, dir);
		else
			say("umount %s: %s; left mounted", dir, strerror(errno));
		if (m->guard.fd >= 0 && !m->guard.was_ro)
			say("its device stays read-only; after the umount: "
			    "blockdev --setrw <device>");
		left++;
		if (strlen(rest) + strlen(dir) + 2 < sizeof(rest))
			snprintf(rest + strlen(rest), sizeof(rest) - strlen(rest),
				 " %s", dir);
	}
	sync();
	if (left)
		say("%d mount(s) left; once nothing uses them: umount%s", left, rest);
	return left;
}

/* ----------------------------------------------------------- the target */

struct target {
	const struct blkdev *dev;
	struct root root;
	char dir[256];		/* where its root is mounted */
	int ro;
};

/* dir + path, for a path inside the target. */
static void in_target(const struct target *t, const char *path, char *out,
		      size_t size)
{
	snprintf(out, size, "%s%s", t->dir, path);
}

static int is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The fstab entries worth mounting for a repair, parents first. */
static const char *const wanted[] = { "/usr", "/var", "/boot", "/boot/efi" };

static void mount_fstab_entry(struct target *t, const struct devlist *l,
			      const struct fstab_entry *e)
{
	char dir[512], data[FSTAB_FIELD_MAX + 32];
	const struct blkdev *d;
	const char *why, *type;
	unsigned long flags;

	d = devs_resolve(l, e->spec, &why);
	if (!d) {
		say("fstab line %u: %s %s: %s; skipped", e->line, e->file,
		    e->spec, why);
		return;
	}
	type = strcmp(e->type, "auto") == 0 ? d->id.type : e->type;
	/* Room left for ro_mount_data() (at most 18 bytes) and a comma. */
	if (mount_opts(e->opts, &flags, data, sizeof(data) - 24)) {
		say("fstab line %u: %s: options too long; skipped", e->line, e->file);
		return;
	}
	in_target(t, e->file, dir, sizeof(dir));
	if (!is_dir(dir)) {
		say("fstab line %u: %s is not a directory in the target; skipped",
		    e->line, e->file);
		return;
	}
	if (d->mounted_at[0]) {
		say("fstab line %u: %s: %s is already mounted at %s; skipped",
		    e->line, e->file, d->path, d->mounted_at);
		return;
	}
	if (track_mount(d->path, dir, type, flags, data, t->ro)) {
		say("fstab line %u: mount %s (%s) on %s: %s; skipped", e->line,
		    d->path, type, e->file, strerror(errno));
		return;
	}
	say("mounted %s (%s) on %s", d->path, type, e->file);
}

/*
 * An entry the installed system will mount at boot whose device is not
 * here: systemd waits for it, then stops in emergency mode.  Say so now,
 * while the user is here to fix fstab.
 */
static void check_fstab_device(const struct devlist *l,
			       const struct fstab_entry *e)
{
	char value[FSTAB_FIELD_MAX];
	const char *why;

	if (opt_has(e->opts, "nofail") || opt_has(e->opts, "bind") ||
	    spec_parse(e->spec, value, sizeof(value)) == SPEC_UNKNOWN)
		return;
	if (spec_parse(e->spec, value, sizeof(value)) == SPEC_PATH &&
	    strncmp(value, "/dev/", 5) != 0)
		return;		/* tmpfs, proc, a bind source: not a device */
	if (!devs_resolve(l, e->spec, &why))
		say("fstab line %u: %s %s: %s: the installed system will wait "
		    "for it at boot, then stop in emergency mode", e->line,
		    e->file, e->spec, why);
}

/* /usr, /var, /boot, /boot/efi from the target's own fstab. */
static void mount_fstab(struct target *t, const struct devlist *l)
{
	static char text[65536];
	struct fstab_entry e, last;
	size_t i, pos;
	unsigned int line;
	ssize_t n;
	int r, found;

	n = read_in_root(t->dir, "/etc/fstab", text, sizeof(text));
	if (n < 0) {
		say("cannot read the target's /etc/fstab: %s", strerror(errno));
		return;
	}
	/* Report what is skipped on purpose, once per entry. */
	for (pos = 0, line = 0; (r = fstab_next(text, (size_t)n, &pos, &line, &e)) >= 0;) {
		if (r == 0)
			say("fstab line %u: not an fstab entry; ignored", e.line);
		else if (strcmp(e.type, "swap") == 0)
			say("fstab line %u: swap %s: skipped", e.line, e.spec);
		else if (fstype_is_network(e.type))
			say("fstab line %u: %s is a network filesystem (%s): skipped",
			    e.line, e.file, e.type);
		else if (opt_has(e.opts, "noauto"))
			say("fstab line %u: %s is noauto: skipped", e.line, e.file);
		else
			check_fstab_device(l, &e);
	}
	for (i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
		found = 0;
		for (pos = 0, line = 0; (r = fstab_next(text, (size_t)n, &pos, &line, &e)) >= 0;) {
			if (r == 1 && strcmp(e.file, wanted[i]) == 0) {
				last = e;	/* mount(8): the last one wins */
				found = 1;
			}
		}
		if (!found || strcmp(last.type, "swap") == 0 ||
		    fstype_is_network(last.type) || opt_has(last.opts, "noauto"))
			continue;
		mount_fstab_entry(t, l, &last);
		if (interrupted())
			return;
	}
}

/* The kernel's file systems a chrooted system expects. */
static void mount_api(struct target *t)
{
	static const struct {
		const char *dir, *type, *src;
		unsigned long flags;
		const char *data;
	} api[] = {
		{ "/proc", "proc", "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV, "" },
		{ "/sys", "sysfs", "sys", MS_NOSUID | MS_NOEXEC | MS_NODEV, "" },
		/* A second mount of the kernel's devtmpfs: the same nodes as
		 * the rescue system's /dev, no copy and no bind mount. */
		{ "/dev", "devtmpfs", "udev", MS_NOSUID, "mode=0755" },
		{ "/dev/pts", "devpts", "devpts", MS_NOSUID | MS_NOEXEC,
		  "gid=5,mode=0620,ptmxmode=0666" },
		{ "/dev/shm", "tmpfs", "shm", MS_NOSUID | MS_NODEV, "mode=1777" },
		{ "/run", "tmpfs", "run", MS_NOSUID | MS_NODEV, "mode=0755" },
	};
	char dir[512];
	size_t i;

	for (i = 0; i < sizeof(api) / sizeof(api[0]); i++) {
		in_target(t, api[i].dir, dir, sizeof(dir));
		if (!is_dir(dir)) {
			/* /dev/pts and /dev/shm live in the new devtmpfs. */
			if (strncmp(api[i].dir, "/dev/", 5) != 0 || mkdir(dir, 0755)) {
				say("the target has no %s directory; %s not mounted",
				    api[i].dir, api[i].type);
				continue;
			}
		}
		if (track_mount(api[i].src, dir, api[i].type, api[i].flags,
				api[i].data, 0))
			say("mount %s on %s: %s", api[i].type, api[i].dir,
			    strerror(errno));
	}
	/* UEFI: grub-install and efibootmgr read and write EFI variables. */
	if (is_dir("/sys/firmware/efi")) {
		in_target(t, "/sys/firmware/efi/efivars", dir, sizeof(dir));
		if (track_mount("efivarfs", dir, "efivarfs",
				MS_NOSUID | MS_NOEXEC | MS_NODEV, "", 0))
			say("UEFI, but efivarfs does not mount (%s): EFI variables "
			    "cannot be changed; use grub-install --removable or "
			    "--no-nvram", strerror(errno));
	}
}

/* A name as udev writes it in a link: odd bytes as \xNN. */
static void udev_escape(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (; *in && o + 5 < size; in++) {
		unsigned char c = (unsigned char)*in;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("#+-.:=@_", c))
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
	}
	out[o] = '\0';
}


/*
 * /dev/disk/by-{uuid,label,partuuid,partlabel}, which udev makes and the
 * target's tools expect (grub-mkconfig writes root=UUID=... only when
 * /dev/disk/by-uuid/<uuid> exists).  Made from our own probe, on a tmpfs
 * over the target's /dev/disk that goes away on exit: the kernel's
 * devtmpfs keeps at most an empty /dev/disk while entered.
 */
static void mount_disk_links(struct target *t, const struct devlist *l)
{
	static const char *const kinds[] = {
		"by-uuid", "by-label", "by-partuuid", "by-partlabel",
	};
	char dir[512], link[768], name[200];
	size_t i, k;

	in_target(t, "/dev/disk", dir, sizeof(dir));
	if (!is_dir(dir)) {
		if (mkdir(dir, 0755))
			return;
		snprintf(made_dir, sizeof(made_dir), "%s", dir);
	}
	if (track_mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755", 0)) {
		say("mount tmpfs on /dev/disk: %s", strerror(errno));
		return;
	}
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		snprintf(link, sizeof(link), "%s/%s", dir, kinds[k]);
		mkdir(link, 0755);
	}
	for (i = 0; i < l->n; i++) {
		const struct blkdev *d = &l->dev[i];
		const char *vals[] = { d->id.uuid, d->id.label, d->partuuid,
				       d->partlabel };

		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			char target[64];

			if (!vals[k][0])
				continue;
			udev_escape(vals[k], name, sizeof(name));
			snprintf(link, sizeof(link), "%s/%s/%s", dir, kinds[k], name);
			snprintf(target, sizeof(target), "../../%s", d->name);
			if (symlink(target, link) && errno != EEXIST)
				say("symlink %s: %s", link, strerror(errno));
		}
	}
}

/*
 * The rescue system's resolv.conf (udhcpc writes it), made visible where
 * the target reads its own: a symlink into /run gets a file in our fresh
 * /run tmpfs; a plain file is covered by a bind mount.  The target's disk
 * is not written.
 */
static void share_resolv_conf(struct target *t)
{
	char host[4096], path[512], link[256], abs[512];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, host, sizeof(host)) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;		/* no network configured here: nothing to share */
	in_target(t, "/etc/resolv.conf", path, sizeof(path));
	if (lstat(path, &st))
		return;
	if (S_ISREG(st.st_mode)) {
		if (track_mount("/etc/resolv.conf", path, NULL, MS_BIND, NULL, 0))
			say("bind mount resolv.conf: %s", strerror(errno));
		return;
	}
	if (!S_ISLNK(st.st_mode) ||
	    (n = readlink(path, link, sizeof(link) - 1)) <= 0)
		return;
	link[n] = '\0';
	/* Relative links are relative to /etc. */
	snprintf(abs, sizeof(abs), "%s%s", link[0] == '/' ? "" : "/etc/", link);
	if (strncmp(abs, "/run/", 5) && strncmp(abs, "/etc/../run/", 12))
		return;
	in_target(t, strstr(abs, "/run/"), path, sizeof(path));
	for (char *s = path + strlen(t->dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, host, (size_t)n) < 0)
			say("write %s: %s", path, strerror(errno));
		close(fd);
	}
}

/* A name safe inside PS1: letters, digits, '.', '_', '-'. */
static void safe_name(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (; *in && o + 1 < size; in++)
		out[o++] = (strchr("._-", *in) ||
			    (*in >= 'a' && *in <= 'z') || (*in >= 'A' && *in <= 'Z') ||
			    (*in >= '0' && *in <= '9')) ? *in : '_';
	out[o] = '\0';
}

/* The child: chroot, the target's root shell, our environment. */
static void run_shell(const struct target *t)
{
	char text[16384], shell[256] = "/bin/sh", tag[64], name[64];
	char ps1[200], pc[260], env_term[80], env_shell[280], env_in[200];
	const char *term = getenv("TERM");
	char *argv[3], *envp[12];
	ssize_t n;
	int e = 0;

	n = read_in_root(t->dir, "/etc/passwd", text, sizeof(text));
	if (n > 0)
		passwd_shell(text, (size_t)n, "root", shell, sizeof(shell));
	if (chroot(t->dir) || chdir("/")) {
		say("chroot %s: %s", t->dir, strerror(errno));
		_exit(127);
	}
	if (access(shell, X_OK)) {
		say("root's shell %s is not there; using /bin/sh", shell);
		snprintf(shell, sizeof(shell), "/bin/sh");
	}
	safe_name(t->root.tag, tag, sizeof(tag));
	safe_name(t->dev->dm_name[0] ? t->dev->dm_name : t->dev->name, name,
		  sizeof(name));
	snprintf(ps1, sizeof(ps1), "PS1=[chroot %s %s%s] \\w# ", tag, name,
		 t->ro ? " ro" : "");
	/* bash's /etc/bash.bashrc sets its own PS1 after reading ours;
	 * PROMPT_COMMAND runs after it, before every prompt. */
	snprintf(pc, sizeof(pc), "PROMPT_COMMAND=PS1='%s'", ps1 + 4);
	snprintf(env_term, sizeof(env_term), "TERM=%s", term ? term : "vt100");
	snprintf(env_shell, sizeof(env_shell), "SHELL=%s", shell);
	snprintf(env_in, sizeof(env_in), "RESCUE_ENTER=%s %s", tag, t->dev->path);
	envp[e++] = "HOME=/root";
	envp[e++] = "PATH=" TARGET_PATH;
	envp[e++] = "USER=root";
	envp[e++] = "LOGNAME=root";
	envp[e++] = env_term;
	envp[e++] = env_shell;
	envp[e++] = env_in;
	envp[e++] = ps1;
	envp[e++] = pc;
	envp[e] = NULL;
	argv[0] = strrchr(shell, '/') ? strrchr(shell, '/') + 1 : shell;
	argv[1] = "-i";
	argv[2] = NULL;
	execve(shell, argv, envp);
	say("exec %s: %s", shell, strerror(errno));
	_exit(127);
}

/* Run the shell; returns its wait status, or -1.  TERM or HUP sent to
 * us hang the shell up; we go on waiting for it to end. */
static int shell_session(const struct target *t)
{
	struct timespec tick = { 1, 0 };
	sigset_t wait_set = stop_sigs;
	int status;
	pid_t pid, r;

	/* Blocked, SIGCHLD is queued for sigtimedwait instead of dropped. */
	sigaddset(&wait_set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &wait_set, NULL);
	pid = fork();
	if (pid < 0) {
		say("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		sigprocmask(SIG_UNBLOCK, &wait_set, NULL);
		run_shell(t);
	}
	for (;;) {
		int sig = sigtimedwait(&wait_set, NULL, &tick);

		/* An interactive shell ignores TERM; a hangup ends it. */
		if (sig == SIGTERM || sig == SIGHUP)
			kill(pid, SIGHUP);
		/* INT and QUIT were typed at the terminal: the shell's. */
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* ------------------------------------------------------- finding roots */

static void list_roots(const struct root *roots, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct blkdev *d = roots[i].dev;

		fprintf(stderr, "  %-16s %-6s %s", d->path, d->id.type,
			roots[i].pretty_name);
		if (d->dm_name[0])
			fprintf(stderr, "  (%s)", d->dm_name);
		fputc('\n', stderr);
	}
}

/* A device named on the command line or at the prompt: /dev/sda1, sda1,
 * UUID=..., LABEL=... */
static const struct blkdev *named_device(const struct devlist *l,
					 const char *arg)
{
	const struct blkdev *d;
	const char *why;

	d = devs_named(l, arg, &why);
	if (!d)
		say("%s: %s", arg, why);
	return d;
}

/* Several roots: the user names one. */
static const struct root *ask_root(const struct devlist *l,
				   const struct root *roots, size_t n)
{
	char line[300];
	const struct blkdev *d;
	size_t i;

	if (!isatty(STDIN_FILENO)) {
		say("several installed systems; name one: rescue-enter DEVICE");
		return NULL;
	}
	fprintf(stderr, "Which one? Type its device (%s): ", roots[0].dev->name);
	if (!fgets(line, sizeof(line), stdin))
		return NULL;
	line[strcspn(line, "\r\n")] = '\0';
	d = line[0] ? named_device(l, line) : NULL;
	for (i = 0; d && i < n; i++)
		if (roots[i].dev == d)
			return &roots[i];
	if (d)
		say("%s is not one of them", line);
	return NULL;
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rescue-enter [--ro | --rw] [DEVICE]\n"
		"       rescue-enter --list\n"
		"Enter an installed Linux system: mount it (and its /boot, /boot/efi,\n"
		"/usr, /var), run its root shell chrooted; `exit` unmounts it all.\n"
		"DEVICE: /dev/sda2, sda2, UUID=..., LABEL=...; without it the\n"
		"installed systems are looked for (looking never writes).\n"
		"--ro mounts everything read-only, the devices too: nothing is written.\n"
		"--rw (the default) mounts read-write: a crashed filesystem's journal\n"
		"or log is replayed.  --list only lists what it finds.\n");
}

static int enter(struct target *t, const struct devlist *l)
{
	int status, left, sig;

	snprintf(t->dir, sizeof(t->dir), BASE_DIR "/%s", t->dev->name);
	mkdir(BASE_DIR, 0700);
	if (mkdir(t->dir, 0755) && errno != EEXIST) {
		say("mkdir %s: %s", t->dir, strerror(errno));
		return 1;
	}
	if (track_mount(t->dev->path, t->dir, t->dev->id.type, 0, "", t->ro)) {
		say("mount %s (%s) on %s: %s", t->dev->path, t->dev->id.type,
		    t->dir, strerror(errno));
		rmdir(t->dir);
		return 1;
	}
	say("mounted %s (%s) on %s%s", t->dev->path, t->dev->id.type, t->dir,
	    t->ro ? ", read-only" : "");
	status = -1;
	if (!interrupted())
		mount_fstab(t, l);
	if (!interrupted()) {
		mount_api(t);
		mount_disk_links(t, l);
		share_resolv_conf(t);
	}
	if ((sig = interrupted()) == 0) {
		say("entering %s on %s; `exit` leaves and unmounts",
		    t->root.pretty_name, t->dev->path);
		status = shell_session(t);
	} else {
		say("interrupted (%s) before the shell started", strsignal(sig));
	}
	left = teardown();
	if (left)
		return 1;
	rmdir(t->dir);
	if (status == -1)
		return 1;
	if (WIFSIGNALED(status)) {
		say("left %s: its shell was killed by %s; all unmounted",
		    t->root.tag, strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
	say("left %s; all unmounted", t->root.tag);
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	static struct root roots[MAX_ROOTS];
	struct target t = { 0 };
	struct devlist l;
	const char *arg = NULL, *why;
	const struct root *chosen = NULL;
	int i, list_only = 0, r, ret = 1;
	size_t n;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--ro") == 0) {
			t.ro = 1;
		} else if (strcmp(argv[i], "--rw") == 0) {
			t.ro = 0;
		} else if (strcmp(argv[i], "--list") == 0) {
			list_only = 1;
		} else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' || arg) {
			usage(stderr);
			return 2;
		} else {
			arg = argv[i];
		}
	}
	if (getenv("RESCUE_ENTER")) {
		say("already inside %s; `exit` leaves it first", getenv("RESCUE_ENTER"));
		return 1;
	}
	if (!in_rescue_system()) {
		say("not running in the rescue system (no %s from the rescue ISO); "
		    "boot the rescue ISO to use it", RELEASE_FILE);
		return 1;
	}
	if (geteuid() != 0) {
		say("must run as root");
		return 1;
	}
	stop_signal_set(&stop_sigs);
	mkdir(BASE_DIR, 0700);
	if (devs_scan(&l)) {
		say("cannot list block devices in /sys/class/block: %s", strerror(errno));
		return 1;
	}
	if (arg) {
		t.dev = named_device(&l, arg);
		if (!t.dev)
			goto out;
		r = root_check(t.dev, PROBE_DIR, &t.root, &why);
		if (r != 1) {
			say("%s is not a Linux root: %s", t.dev->path, why);
			if (probe_is_container(t.dev->id.type))
				devs_list_closed(&l, prog);
			goto out;
		}
		chosen = &t.root;
	} else {
		n = roots_find(&l, PROBE_DIR, roots, MAX_ROOTS);
		if (n == 0) {
			say("no installed Linux system found (a root has /etc/os-release and /etc/fstab)");
			devs_list_closed(&l, prog);
			goto out;
		}
		say("found %zu installed Linux system%s:", n, n == 1 ? "" : "s");
		list_roots(roots, n);
		devs_list_closed(&l, prog);
		if (list_only) {
			ret = 0;
			goto out;
		}
		chosen = n == 1 ? &roots[0] : ask_root(&l, roots, n);
		if (!chosen)
			goto out;
	}
	t.root = *chosen;
	t.dev = chosen->dev;
	if (list_only) {
		list_roots(&t.root, 1);
		ret = 0;
		goto out;
	}
	if (t.dev->mounted_at[0]) {
		if (strncmp(t.dev->mounted_at, BASE_DIR "/", strlen(BASE_DIR) + 1) == 0)
			say("%s is already entered (at %s), from another shell; leave it there first",
			    t.dev->path, t.dev->mounted_at);
		else
			say("%s is mounted at %s; unmount it first", t.dev->path,
			    t.dev->mounted_at);
		goto out;
	}
	sigprocmask(SIG_BLOCK, &stop_sigs, NULL);
	ret = enter(&t, &l);
out:
	devs_free(&l);
	return ret;
}
