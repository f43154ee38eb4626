// SPDX-License-Identifier: GPL-2.0
/*
 * Drivers for the devices present at boot.  Every device in sysfs names
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
 * the child says on the console what it loaded.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coldplug.h"
#include "util.h"

#define MODPROBE	"/sbin/modprobe"
#define MAX_WORDS	2048
#define WORD_BYTES	(128 * 1024)
#define SYSFS_DEPTH	32	/* /sys/devices is rarely deeper than 16 */

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
	struct dirbuf d;
	struct dirent *de;
	char buf[512];
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

/* The names in /proc/modules, ", "-separated; how many there are. */
static int loaded_modules(char *out, size_t size)
{
	static char text[64 * 1024];
	ssize_t len = read_file("/proc/modules", text, sizeof(text), 0);
	size_t o = 0, w;
	char *line = text, *end;
	int count = 0;

	out[0] = '\0';
	while (len > 0 && *line) {
		end = strchr(line, '\n');
		w = strcspn(line, " \n");
		if (o + w + 3 < size) {
			if (o) {
				memcpy(out + o, ", ", 2);
				o += 2;
			}
			memcpy(out + o, line, w);
			o += w;
			out[o] = '\0';
		}
		count++;
		if (!end)
			break;
		line = end + 1;
	}
	return count;
}

static void __attribute__((noreturn)) coldplug(void)
{
	static struct words aliases, modules;
	char names[480];
	long start = now_ms();
	sigset_t none;
	int fd, count;

	/* PID 1's mask is not ours: shutdown's TERM must end us at once. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (access(MODPROBE, X_OK) < 0) {
		say_err("access", MODPROBE);
		say("drivers: no module is loaded; the built-in drivers work");
		_exit(1);
	}
	fd = open("/sys/devices", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		say_err("open", "/sys/devices");
		_exit(1);
	}
	collect(&aliases, fd, 0);
	close(fd);
	if (aliases.n)
		resolve(&aliases, &modules);
	if (!modules.n)
		_exit(0);
	load(&modules);
	/* Built-in ones resolve too (sr_mod): nothing new is no news. */
	count = loaded_modules(names, sizeof(names));
	if (count)
		say("drivers: loaded %d modules in %ld ms: %s", count,
		    now_ms() - start, names);
	_exit(0);
}

pid_t coldplug_start(void)
{
	pid_t pid = fork();

	if (pid < 0)
		say_err("fork", "coldplug");
	if (pid == 0)
		coldplug();
	return pid;
}
