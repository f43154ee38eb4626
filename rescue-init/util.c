// SPDX-License-Identifier: GPL-2.0
/*
 * Small helpers for rescue-init: console messages, file reads, a
 * directory reader and clocks.  Nothing here knows about PID 1's duties.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* ---------------------------------------------------------------- output */

#define CONSOLE_WAIT_MS	500	/* a moving 115200 baud line drains in less */

/*
 * Init's messages go to fd 1, the console the kernel opened for it.  That
 * open file is init's alone (every shell opens its tty afresh), so it is
 * made non-blocking: PID 1 must go on reaping and must still hear
 * poweroff when the tty is stopped (Ctrl-S, Scroll Lock) with its buffer
 * full, or another writer sleeps in it holding the tty's write lock.
 */
void console_never_blocks(void)
{
	int on = 1;

	ioctl(1, FIONBIO, &on);	/* O_NONBLOCK, without musl's fcntl() */
}

/*
 * A slow but moving console gets every line: a full buffer is waited
 * on, briefly.  A console that does not move within CONSOLE_WAIT_MS is
 * marked stuck, and from then on lines are dropped at once until one
 * goes through whole again.
 */
static void write_console(const char *buf, size_t n)
{
	static int stuck;
	struct pollfd p = { .fd = 1, .events = POLLOUT };
	ssize_t w;

	while (n) {
		w = write(1, buf, n);
		if (w > 0) {
			buf += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN)
			return;
		if (stuck || poll(&p, 1, CONSOLE_WAIT_MS) <= 0) {
			stuck = 1;
			return;
		}
	}
	stuck = 0;
}

static void vsay(const char *prefix, const char *fmt, va_list ap)
{
	char buf[600];
	size_t n, p = strlen(prefix);

	memcpy(buf, prefix, p);
	n = p + (size_t)rfmt(buf + p, sizeof(buf) - p - 1, fmt, ap);
	buf[n++] = '\n';
	/* One write per line, so lines from init and its children on the
	 * same console do not interleave mid-line. */
	write_console(buf, n);
}

void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("rescue-init: ", fmt, ap);
	va_end(ap);
}

void check_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("rescue-check: ", fmt, ap);
	va_end(ap);
}

/* "rescue-init: mount(/run): No such file or directory" */
void say_err(const char *call, const char *arg)
{
	int e = errno;

	say("%s(%s): %s", call, arg, strerror(e));
	errno = e;
}

/* ---------------------------------------------------------------- clocks */

long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long now_s(void)
{
	return now_ms() / 1000;
}

/* ----------------------------------------------------------------- files */

/*
 * Read a whole (small) file into buf, NUL terminated; length or -1.
 * With report set, a failure is printed naming open or read.
 */
ssize_t read_file(const char *path, char *buf, size_t size, int report)
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

/*
 * One buffer, one reader at a time: every caller is done with the text
 * before it reads mountinfo again.  128 KiB holds over a thousand mounts;
 * unmount_all() copes with more by reading again.
 */
struct mountinfo read_mountinfo(void)
{
	static char text[128 * 1024];
	ssize_t n = read_file("/proc/self/mountinfo", text, sizeof(text), 1);
	struct mountinfo mi = { text, n > 0 ? (size_t)n : 0 };

	text[mi.len] = '\0';
	return mi;
}

/* ----------------------------------------------------------- directories */

struct dirent *next_dirent(struct dirbuf *db)
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
