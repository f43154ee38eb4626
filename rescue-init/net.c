// SPDX-License-Identifier: GPL-2.0
/*
 * Wired networks come up with nothing typed, as a person at a broken
 * machine expects: each Ethernet interface that sits on a device gets
 * busybox's udhcpc, at boot and when it is plugged in.  Not the loopback,
 * not wireless (no firmware, no WPA here), not the bridges, bonds and
 * VLANs a person makes (no device under them).  rescue.net=off leaves
 * every interface down.
 *
 * udhcpc stays in the foreground (-f) and keeps its lease; with no DHCP
 * server it goes on asking, quietly.  Its own chatter goes to /dev/null;
 * the ISO's udhcpc script prints one line on the console when an
 * interface gets an address ("rescue-init: net: eth0 is 10.0.2.15/24
 * via ...", RESCUE_NET=auto in its environment says who asked).
 * Its pid file (/run/udhcpc.NAME.pid) tells a loader started again that
 * an interface has its client already.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net.h"
#include "util.h"

#define UDHCPC		"/sbin/udhcpc"
#define IFNAME_MAX	16	/* IFNAMSIZ, with the NUL */
#define MAX_NICS	32
#define ARPHRD_ETHER	1	/* /sys/class/net/NAME/type of Ethernet */

static struct nic {
	char name[IFNAME_MAX];
	pid_t pid;
} nics[MAX_NICS];

/* The kernel's own rule for interface names (dev_valid_name). */
static int valid_name(const char *name)
{
	size_t n = strlen(name);

	return n && n < IFNAME_MAX && strcmp(name, ".") && strcmp(name, "..") &&
	       !strpbrk(name, "/: \t\n");
}

/* The number in a one-line file, or 0. */
static unsigned int file_number(const char *path)
{
	char text[16];
	unsigned int n;

	if (read_file(path, text, sizeof(text), 0) <= 0 ||
	    parse_uint(text, strcspn(text, "\n"), &n) < 0)
		return 0;
	return n;
}

/* An Ethernet interface on a device, and not a wireless one. */
static int wired(const char *name)
{
	char path[64];

	rsnprintf(path, sizeof(path), "/sys/class/net/%s/type", name);
	if (file_number(path) != ARPHRD_ETHER)
		return 0;
	rsnprintf(path, sizeof(path), "/sys/class/net/%s/device", name);
	if (access(path, F_OK) < 0)
		return 0;
	rsnprintf(path, sizeof(path), "/sys/class/net/%s/wireless", name);
	return access(path, F_OK) < 0;
}

static void pid_file(const char *name, char *path, size_t size)
{
	rsnprintf(path, size, "/run/udhcpc.%s.pid", name);
}

/* The pid of a udhcpc for NAME that an earlier loader started and that
 * still runs, or 0. */
static pid_t earlier_client(const char *name)
{
	char path[64], comm[16];
	unsigned int pid;

	pid_file(name, path, sizeof(path));
	pid = file_number(path);
	if (pid <= 1)
		return 0;
	rsnprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (read_file(path, comm, sizeof(comm), 0) <= 0 ||
	    strncmp(comm, "udhcpc\n", 7))
		return 0;
	return (pid_t)pid;
}

/* Clients that ended (an interface gone): their slots are free. */
static void reap_clients(void)
{
	int i;

	for (i = 0; i < MAX_NICS; i++)
		if (nics[i].pid > 0 && waitpid(nics[i].pid, NULL, WNOHANG) != 0)
			nics[i].pid = 0;
}

static struct nic *find_nic(const char *name)
{
	int i;

	for (i = 0; i < MAX_NICS; i++)
		if (nics[i].pid > 0 && !strcmp(nics[i].name, name))
			return &nics[i];
	return NULL;
}

static pid_t start_client(const char *name)
{
	static char *envp[] = { "PATH=/sbin:/bin:/usr/sbin:/usr/bin",
				"RESCUE_NET=auto", NULL };
	char pidf[64], *argv[] = { "udhcpc", "-f", "-i", (char *)name, "-p",
				   pidf, NULL };
	pid_t pid;
	int null;

	pid_file(name, pidf, sizeof(pidf));
	pid = fork();
	if (pid < 0)
		say_err("fork", UDHCPC);
	if (pid == 0) {
		/* Its own session: a shell's job control never reaches it. */
		setsid();
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0 && (dup2(null, 0) < 0 || dup2(null, 2) < 0))
			_exit(127);
		execve(UDHCPC, argv, envp);
		_exit(127);
	}
	return pid;
}

void net_up(const char *name)
{
	int i;

	reap_clients();
	if (!valid_name(name) || !wired(name) || find_nic(name) ||
	    earlier_client(name))
		return;
	for (i = 0; i < MAX_NICS && nics[i].pid > 0; i++)
		;
	if (i == MAX_NICS) {
		say("net: %s: more than %d interfaces; udhcpc -i %s by hand",
		    name, MAX_NICS, name);
		return;
	}
	nics[i].pid = start_client(name);
	if (nics[i].pid > 0)
		memcpy(nics[i].name, name, strlen(name) + 1);
	else
		nics[i].pid = 0;
}

void net_down(const char *name)
{
	struct nic *nic;
	pid_t pid;

	reap_clients();
	nic = find_nic(name);
	if (nic) {
		kill(nic->pid, SIGTERM);
		waitpid(nic->pid, NULL, 0);
		nic->pid = 0;
	} else if (valid_name(name) && (pid = earlier_client(name)) > 0) {
		/* Its pid file would keep the next NAME from its client. */
		kill(pid, SIGTERM);
	}
}

void net_up_all(void)
{
	struct dirbuf d;
	struct dirent *de;

	d.fd = open("/sys/class/net", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d.fd < 0)
		return;
	d.pos = d.len = 0;
	while ((de = next_dirent(&d)))
		if (de->d_name[0] != '.')
			net_up(de->d_name);
	close(d.fd);
}
