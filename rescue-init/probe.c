// SPDX-License-Identifier: GPL-2.0
/*
 * The banner's stack lines: which block devices hold LUKS, an md member
 * or an LVM PV, and the command that opens each.  Nothing is activated
 * or assembled, and every device is opened O_RDONLY: a rescue system
 * must not touch a disk before the user asks.
 *
 * A disk that does not answer (a dying drive, a USB bridge retrying)
 * can leave a read in the kernel for minutes, and no signal ends it.  So
 * the reads happen in a process of their own that sends one record per
 * device down a pipe; the banner stops listening after PROBE_BUDGET_MS,
 * names the device that was being read, and lets the shell start.  The
 * stuck reader is orphaned to PID 1, which reaps it whenever its read
 * ends (it dies on the closed pipe).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "disksig.h"
#include "report.h"
#include "util.h"

#define PROBE_BUDGET_MS	5000

/*
 * Reads are O_DIRECT, through an aligned bounce buffer.  A buffered read
 * of a dead disk leaves locked page-cache pages behind: a killed reader
 * then waits for them in its last close(), holding the disk's
 * open_mutex, and sync() at shutdown waits behind that mutex.
 */
static int read_at(int fd, uint64_t off, void *buf, size_t len)
{
	static unsigned char bounce[2 * 4096] __attribute__((aligned(4096)));
	uint64_t start = off & ~(uint64_t)4095;
	size_t span;

	if (len > 4096 || off > UINT64_MAX - 8192)
		return -1;
	span = (size_t)(((off + len + 4095) & ~(uint64_t)4095) - start);
	if (pread(fd, bounce, span, (off_t)start) != (ssize_t)span)
		return -1;
	memcpy(buf, bounce + (off - start), len);
	return 0;
}

static void probe_lvm(int fd, const unsigned char *label, struct disk_sig *sig)
{
	static unsigned char mda[LVM_MDA_BYTES];
	static char text[LVM_NAME_BYTES];
	uint64_t start, size, at, len;

	if (!lvm_label(label, LVM_LABEL_BYTES, &start, &size))
		return;
	sig->kind = SIG_LVM;
	if (!size || read_at(fd, start, mda, sizeof(mda)) ||
	    lvm_mda(mda, sizeof(mda), start, size, &at, &len) != 1)
		return;
	if (len > sizeof(text))
		len = sizeof(text);
	if (read_at(fd, at, text, (size_t)len) ||
	    !lvm_vg_name(text, (size_t)len, sig))
		sig->name[0] = '\0';
}

/* First match wins: LUKS and the LVM label at the start, then md's four
 * places.  The end of a disk with partitions belongs to its last
 * partition, so only partitions and bare disks are probed. */
static void probe_one(const struct block *b, struct disk_sig *sig)
{
	static unsigned char buf[MD_SB_BYTES];
	char path[8 + BLOCK_NAME_MAX];
	uint64_t at[4];
	int fd, i, n;

	memset(sig, 0, sizeof(*sig));
	if (!b->bytes || b->has_parts)
		return;
	rsnprintf(path, sizeof(path), "/dev/%s", b->name);
	fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = md_super_offsets(b->bytes, at);
	for (i = 0; i < n && !sig->kind; i++) {
		if (read_at(fd, at[i], buf, sizeof(buf)))
			continue;
		if (i == 0) {
			sig->luks_version = (unsigned int)luks_version(buf,
							sizeof(buf));
			if (sig->luks_version) {
				sig->kind = SIG_LUKS;
				break;
			}
			probe_lvm(fd, buf, sig);
		}
		if (!sig->kind)
			md_super(buf, sizeof(buf), at[i], b->bytes, sig);
	}
	close(fd);
}

static void say_stack(const char *dev, const struct disk_sig *sig)
{
	const char *name = sig->name;

	if (sig->kind == SIG_LUKS)
		say("%s: LUKS%u (cryptsetup open /dev/%s NAME)", dev,
		    sig->luks_version, dev);
	else if (sig->kind == SIG_MD)
		say("%s: md member of %s (mdadm --assemble --scan)", dev,
		    name[0] ? name : "an unnamed array");
	else if (sig->kind == SIG_LVM && name[0])
		say("%s: LVM PV of %s (vgchange -ay %s)", dev, name, name);
	else if (sig->kind == SIG_LVM)
		say("%s: LVM PV, no VG name on it (pvs; vgchange -ay)", dev);
}

/* The reader: one record per device, in order, then exit. */
static void __attribute__((noreturn)) probe_all(const struct block *blk,
						int n, int out)
{
	struct disk_sig sig;
	int i;

	for (i = 0; i < n; i++) {
		probe_one(&blk[i], &sig);
		if (write(out, &sig, sizeof(sig)) != (ssize_t)sizeof(sig))
			_exit(1);
	}
	_exit(0);
}

/* Start the reader as a grandchild, so that PID 1 adopts it. */
static int start_reader(const struct block *blk, int n)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds) < 0) {	/* both ends closed before the exec */
		say_err("pipe", "probe");
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (fork() == 0)
			probe_all(blk, n, fds[1]);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0) {
		say_err("fork", "probe");
		close(fds[0]);
		return -1;
	}
	waitpid(pid, NULL, 0);
	return fds[0];
}

void report_stacks(const struct block *blk, int n)
{
	long deadline = now_ms() + PROBE_BUDGET_MS, left;
	struct pollfd pfd = { .events = POLLIN };
	struct disk_sig sig;
	int done = 0;
	ssize_t r;

	pfd.fd = start_reader(blk, n);
	if (pfd.fd < 0)
		return;
	while (done < n) {
		left = deadline - now_ms();
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
			say("%s did not answer within %d s: not probed for "
			    "LUKS, md or LVM (nor what follows it)",
			    blk[done].name, PROBE_BUDGET_MS / 1000);
			break;
		}
		r = read(pfd.fd, &sig, sizeof(sig));
		if (r != (ssize_t)sizeof(sig))
			break;
		say_stack(blk[done++].name, &sig);
	}
	close(pfd.fd);
}
