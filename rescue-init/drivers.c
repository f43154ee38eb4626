// SPDX-License-Identifier: GPL-2.0
/*
 * Drivers for the devices present at boot and for those plugged in
 * later.  Every device in sysfs names
 * the driver it wants in its modalias file ("pci:v00001000d00000060...");
 * kmod's modprobe maps those names to modules through depmod's
 * modules.alias (`modprobe -R`, which knows an alias that no module
 * claims is not news) and then loads those modules with their
 * dependencies (`modprobe -a -b`, whose errors, a refused signature say,
 * reach the console in its own words).  The kernel
 * checks each module's signature and refuses any other.  Nodes still
 * come from devtmpfs as each driver registers its devices: nothing here
 * creates one.
 *
 * kmod's modprobe, not libkmod linked in: Debian builds libkmod for
 * glibc only, and modprobe already does what a loader must (aliases,
 * dependencies, softdeps, blacklists and options from modprobe.d).
 *
 * All of it runs in a child of PID 1, so the prompt never waits for it;
 * the child says on the console what it loaded.  It listens to the
 * kernel's uevents (a netlink socket, opened before sysfs is read, so
 * that no device falls between the two) and loads the modules for each
 * device added later: a USB stick, NIC or keyboard plugged in works with
 * nothing typed.  Events the socket had to drop (ENOBUFS) mean sysfs is
 * read again.  The same events tell net.c which wired interfaces come
 * and go, for their DHCP clients.
 *
 * Disk controllers and NICs left without a driver are named: by the
 * banner when no driver here claims them, by the loader after coldplug
 * when one claims them but did not take them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drivers.h"
#include "net.h"
#include "util.h"

/* From <linux/netlink.h>, which musl's compiler does not see. */
#define NETLINK_KOBJECT_UEVENT	15
struct sockaddr_nl {
	sa_family_t nl_family;
	unsigned short nl_pad;
	uint32_t nl_pid;	/* the sender: 0 for the kernel */
	uint32_t nl_groups;
};

#define MODPROBE	"/sbin/modprobe"
#define MAX_WORDS	2048
#define WORD_BYTES	(128 * 1024)
#define SYSFS_DEPTH	32	/* /sys/devices is rarely deeper than 16 */
#define UEVENT_BYTES	8192	/* one uevent: the kernel caps it at 2 KiB */
#define UEVENT_RCVBUF	(4 << 20)	/* a hub's worth of events, queued */
#define BATCH_MS	200	/* one USB device: several events at once */
#define LOADER_NICE	10	/* the shell's prompt comes first */

/*
 * A list of words, each kept once, in one buffer: the modaliases (many
 * devices share one: CPUs, ACPI ones), then the modules they resolve to.
 * Room is left at the front of argv for modprobe's own arguments.
 */
#define ARGV_HEAD	4
struct words {
	char text[WORD_BYTES];
	size_t used;
	char *argv[ARGV_HEAD + MAX_WORDS + 1];
	int n;
};

static void clear_words(struct words *w)
{
	w->n = 0;
	w->used = 0;
}

static int has_word(const struct words *w, const char *s, size_t n)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (!strncmp(w->argv[ARGV_HEAD + i], s, n) &&
		    !w->argv[ARGV_HEAD + i][n])
			return 1;
	return 0;
}

static void add_word(struct words *w, const char *s, size_t n)
{
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\0'))
		n--;
	if (!n || w->n >= MAX_WORDS || w->used + n + 1 > WORD_BYTES ||
	    has_word(w, s, n))
		return;
	w->argv[ARGV_HEAD + w->n++] = memcpy(w->text + w->used, s, n);
	w->text[w->used + n] = '\0';
	w->used += n + 1;
}

/* Every modalias under dirfd; symlinks (subsystem, driver) not followed. */
static void collect(struct words *aliases, int dirfd, int depth)
{
	/* One sysfs attribute: at most a page.  An input device's alias
	 * lists every key it has and can run past 512 bytes.  Shared by every
	 * level: add_word copies it before the walk goes deeper. */
	static char buf[4096];
	struct dirbuf d;
	struct dirent *de;
	ssize_t n;
	int fd;

	d.fd = dirfd;
	d.pos = d.len = 0;
	while ((de = next_dirent(&d))) {
		if (de->d_type == DT_DIR && depth < SYSFS_DEPTH) {
			fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY |
				    O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0) {
				collect(aliases, fd, depth + 1);
				close(fd);
			}
		} else if (de->d_type == DT_REG &&
			   !strcmp(de->d_name, "modalias")) {
			fd = openat(dirfd, "modalias", O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			n = read(fd, buf, sizeof(buf));
			close(fd);
			if (n > 0)
				add_word(aliases, buf, (size_t)n);
		}
	}
}

/*
 * Starts modprobe OPTION -a [-q] WORD...; with out_fd >= 0 its standard
 * output goes there.  Its pid, or -1.
 */
static pid_t start_modprobe(struct words *w, const char *option, int quiet,
			    int out_fd)
{
	static char *envp[] = { "PATH=/sbin:/bin:/usr/sbin:/usr/bin", NULL };
	char **argv = w->argv + ARGV_HEAD;
	pid_t pid;

	w->argv[ARGV_HEAD + w->n] = NULL;
	if (quiet)
		*--argv = "-q";
	*--argv = "-a";		/* every word is a module or an alias */
	*--argv = (char *)option;
	*--argv = "modprobe";
	pid = fork();
	if (pid < 0)
		say_err("fork", MODPROBE);
	if (pid == 0) {
		if (out_fd >= 0 && dup2(out_fd, 1) < 0)
			_exit(127);
		execve(MODPROBE, argv, envp);
		say_err("execve", MODPROBE);
		_exit(127);
	}
	return pid;
}

/*
 * The modules that the aliases name (built-in ones too), one a line from
 * `modprobe -R`; an alias that no module claims is not news (-q).
 */
static void resolve(struct words *aliases, struct words *modules)
{
	char buf[1024], *line, *nl;
	size_t have = 0;
	ssize_t r;
	pid_t pid;
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0) {
		say_err("pipe2", "modprobe -R");
		return;
	}
	pid = start_modprobe(aliases, "-R", 1, p[1]);
	close(p[1]);
	while (pid > 0 && (r = read(p[0], buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)r;
		buf[have] = '\0';
		line = buf;
		while ((nl = strchr(line, '\n'))) {
			add_word(modules, line, (size_t)(nl - line));
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)	/* no module name is that long */
			have = 0;
	}
	close(p[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* Loads the modules, their dependencies with them; its errors (a refused
 * signature, say) go to the console as modprobe words them. */
static void load(struct words *modules)
{
	pid_t pid = start_modprobe(modules, "-b", 0, -1);

	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* The modules in /proc/modules, by name. */
static void loaded_modules(struct words *names)
{
	static char text[64 * 1024];
	ssize_t len = read_file("/proc/modules", text, sizeof(text), 0);
	char *line = text, *end;

	clear_words(names);
	while (len > 0 && *line) {
		end = strchr(line, '\n');
		add_word(names, line, strcspn(line, " \n"));
		if (!end)
			break;
		line = end + 1;
	}
}

/*
 * Resolves the aliases, loads their modules and says which modules are
 * new since, as `why` puts it ("for the devices present").
 */
static void load_for(struct words *aliases, const char *why)
{
	static struct words modules, before, after;
	char names[400];
	long start = now_ms();
	size_t o = 0, l;
	int i, count = 0;

	/* Most uevents name no alias (a loop device, a mount): no batch. */
	if (!aliases->n)
		return;
	clear_words(&modules);
	resolve(aliases, &modules);
	if (!modules.n)
		return;
	loaded_modules(&before);
	load(&modules);
	loaded_modules(&after);
	names[0] = '\0';
	for (i = 0; i < after.n; i++) {
		const char *name = after.argv[ARGV_HEAD + i];

		if (has_word(&before, name, strlen(name)))
			continue;
		count++;
		l = strlen(name);
		if (o + l + 3 >= sizeof(names))
			continue;
		if (o) {
			memcpy(names + o, ", ", 2);
			o += 2;
		}
		memcpy(names + o, name, l + 1);
		o += l;
	}
	/* Built-in ones resolve too (sr_mod): nothing new is no news. */
	if (count)
		say("drivers: loaded %d modules %s in %ld ms: %s", count, why,
		    now_ms() - start, names);
}

/* Every device's modalias, from sysfs. */
static void coldplug(void)
{
	static struct words aliases;
	int fd;

	clear_words(&aliases);
	fd = open("/sys/devices", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		say_err("open", "/sys/devices");
		return;
	}
	collect(&aliases, fd, 0);
	close(fd);
	load_for(&aliases, "for the devices present");
}

/*
 * What a rescue needs a driver for: disk controllers and NICs on PCI
 * (class 01, 02), and USB mass storage interfaces (08).  USB NICs are
 * left out: most are vendor-specific (class ff), and CDC's class 02
 * holds modems too.
 */
static const char *needs_driver(const char *bus, const char *class_text)
{
	if (!strcmp(bus, "pci")) {
		if (!strncmp(class_text, "0x01", 4))
			return "disk controller";
		if (!strncmp(class_text, "0x02", 4))
			return "network controller";
	} else {
		if (!strncmp(class_text, "08", 2))
			return "USB storage interface";
	}
	return NULL;
}

/* A device's sysfs file NAME, its first line, in buf ("" if none);
 * whether it could be read. */
static int device_attr(const char *bus, const char *dev, const char *name,
		       char *buf, size_t size)
{
	char path[160];
	ssize_t n;

	rsnprintf(path, sizeof(path), "/sys/bus/%s/devices/%s/%s", bus, dev,
		  name);
	n = read_file(path, buf, size, 0);
	if (n <= 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return n > 0;
}

/* Whether a driver of this system, built in or a module, claims the
 * modalias: modprobe -R's verdict, so that the two never disagree. */
static int driver_claims(const char *modalias)
{
	static struct words alias;
	int status = 1, out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pid_t pid;

	clear_words(&alias);
	add_word(&alias, modalias, strlen(modalias));
	pid = alias.n ? start_modprobe(&alias, "-R", 1, out) : -1;
	if (out >= 0)
		close(out);
	if (pid > 0 && waitpid(pid, &status, 0) < 0)
		status = 1;
	return pid > 0 && status == 0;
}

/*
 * Names the disk controllers and NICs that have no driver bound: the
 * disks and networks behind them are out of reach, and the IDs tell the
 * user what to look for.  With claimed 0, those no driver here claims
 * (the banner: their modules are not on the ISO); with claimed 1, those
 * whose driver is here but did not take them (after coldplug).
 */
static void report_unbound(const char *bus, const char *class_file,
			   const char *id_a, const char *id_b, int claimed)
{
	char path[160], class_text[16], a[16], b[16], modalias[256];
	struct dirbuf d;
	struct dirent *de;
	const char *what, *bus_name = strcmp(bus, "pci") ? "USB" : "PCI";

	rsnprintf(path, sizeof(path), "/sys/bus/%s/devices", bus);
	d.fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.fd < 0)
		return;
	d.pos = d.len = 0;
	while ((de = next_dirent(&d))) {
		if (!device_attr(bus, de->d_name, class_file, class_text,
				 sizeof(class_text)) ||
		    !(what = needs_driver(bus, class_text)))
			continue;
		rsnprintf(path, sizeof(path), "/sys/bus/%s/devices/%s/driver",
			  bus, de->d_name);
		if (access(path, F_OK) == 0)
			continue;
		device_attr(bus, de->d_name, "modalias", modalias,
			    sizeof(modalias));
		if (driver_claims(modalias) != claimed)
			continue;
		device_attr(bus, de->d_name, id_a, a, sizeof(a));
		device_attr(bus, de->d_name, id_b, b, sizeof(b));
		if (a[0] == '0' && a[1] == 'x')
			memmove(a, a + 2, strlen(a + 2) + 1);
		if (b[0] == '0' && b[1] == 'x')
			memmove(b, b + 2, strlen(b + 2) + 1);
		if (claimed)
			say("drivers: no driver took the %s on %s %s [%s:%s], "
			    "although one claims it: see dmesg", what,
			    bus_name, de->d_name, a, b);
		else
			say("no driver for the %s on %s %s [%s:%s]: what is "
			    "behind it is out of reach", what, bus_name,
			    de->d_name, a, b);
	}
	close(d.fd);
}

static void report_all_unbound(int claimed)
{
	report_unbound("pci", "class", "vendor", "device", claimed);
	report_unbound("usb", "bInterfaceClass", "../idVendor", "../idProduct",
		       claimed);
}

void drivers_report_missing(void)
{
	report_all_unbound(0);
}

/* The kernel's uevents; -1 (said) when there is no such socket. */
static int uevent_socket(void)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd, size = UEVENT_RCVBUF;

	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
		    NETLINK_KOBJECT_UEVENT);
	if (fd < 0) {
		say_err("socket", "NETLINK_KOBJECT_UEVENT");
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		say_err("bind", "NETLINK_KOBJECT_UEVENT");
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One uevent: "ACTION@DEVPATH", then "KEY=VALUE" strings.  The alias of
 * a device the kernel added goes to the list.  Returns 0, or -1 when
 * events were lost (ENOBUFS) or the socket failed.
 */
static int read_uevent(int fd, struct words *aliases, int dhcp)
{
	static char buf[UEVENT_BYTES];
	struct sockaddr_nl from;
	struct iovec iov = { buf, sizeof(buf) - 1 };
	struct msghdr msg = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	const char *p, *end, *alias = NULL, *iface = NULL;
	int add = 0, remove = 0, net = 0;
	ssize_t n;

	n = recvmsg(fd, &msg, MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	/* Only the kernel's own: any root process may send on the group. */
	if (from.nl_pid != 0 || (msg.msg_flags & MSG_TRUNC))
		return 0;
	buf[n] = '\0';
	end = buf + n;
	for (p = buf; p < end; p += strlen(p) + 1) {
		if (!strcmp(p, "ACTION=add"))
			add = 1;
		else if (!strcmp(p, "ACTION=remove"))
			remove = 1;
		else if (!strcmp(p, "SUBSYSTEM=net"))
			net = 1;
		else if (!strncmp(p, "MODALIAS=", 9))
			alias = p + 9;
		else if (!strncmp(p, "INTERFACE=", 10))
			iface = p + 10;
	}
	if (add && alias)
		add_word(aliases, alias, strlen(alias));
	if (dhcp && net && iface && add)
		net_up(iface);
	if (dhcp && net && iface && remove)
		net_down(iface);
	return 0;
}

/* Devices added from now on, in batches; with dhcp, the wired
 * interfaces that come and go too.  Never returns. */
static void __attribute__((noreturn)) follow(int fd, int dhcp)
{
	static struct words aliases;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int lost;

	for (;;) {
		clear_words(&aliases);
		lost = 0;
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			_exit(1);
		/* The rest of this device's events, and its children's. */
		do
			lost |= read_uevent(fd, &aliases, dhcp);
		while (poll(&p, 1, BATCH_MS) > 0);
		if (lost) {
			say("drivers: uevents were lost; reading sysfs again");
			coldplug();
			if (dhcp)
				net_up_all();
			continue;
		}
		load_for(&aliases, "for a new device");
	}
}

/* The child's life: coldplug, then, with keep_following, hot-plug. */
static void __attribute__((noreturn)) drivers(int keep_following, int dhcp)
{
	sigset_t none;
	int fd = -1;

	/* PID 1's mask is not ours: shutdown's TERM must end us at once. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* On one CPU, reading sysfs and inflating modprobe from the ISO
	 * competes with the shell's start: the prompt goes first. */
	setpriority(PRIO_PROCESS, 0, LOADER_NICE);
	if (access(MODPROBE, X_OK) < 0) {
		say_err("access", MODPROBE);
		say("drivers: no module is loaded; the built-in drivers work");
		_exit(1);
	}
	if (keep_following)
		fd = uevent_socket();
	/* The NICs with built-in drivers are there already; those that
	 * coldplug's modules make come as uevents. */
	if (dhcp && fd >= 0)
		net_up_all();
	coldplug();
	report_all_unbound(1);
	if (fd < 0)
		_exit(0);
	follow(fd, dhcp);
}

pid_t drivers_start(int keep_following, int dhcp)
{
	pid_t pid = fork();

	if (pid < 0)
		say_err("fork", "drivers");
	if (pid == 0)
		drivers(keep_following, dhcp);
	return pid;
}
