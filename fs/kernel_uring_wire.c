// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kernel_uring_wire.c -- FUSE over io_uring on the wire
 * (kernel_uring_wire.h): an entry's traffic packed and unpacked, the
 * queue count, the module parameter, the kick, the test faults.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_inc.h"
#include "kernel_uring_wire.h"
#include "log.h"
#include "banned.h"

int kernel_uring_nqueues(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "re");
	unsigned a, b, n = 0;
	int c;

	/* "0-3", "0", "0-3,8-11": the kernel's num_possible_cpus() */
	if (!f)
		return -errno;
	for (;;) {
		if (fscanf(f, "%u", &a) != 1)
			break;
		b = a;
		c = fgetc(f);
		if (c == '-') {
			if (fscanf(f, "%u", &b) != 1)
				break;
			c = fgetc(f);
		}
		if (b >= a)
			n += b - a + 1;
		if (c != ',')
			break;
	}
	fclose(f);
	return n > 0 ? (int)n : -EINVAL;
}

bool kernel_uring_enabled(void)
{
	FILE *f = fopen("/sys/module/fuse/parameters/enable_uring", "re");
	int c;

	if (!f)
		return false;
	c = fgetc(f);
	fclose(f);
	return c == 'Y' || c == 'y' || c == '1';
}

/* Digits at [@p, @end) into *@ret (at most 10^9): false if not. */
static bool parse_num(const char *p, const char *end, unsigned long *ret)
{
	unsigned long v = 0;

	if (p == end)
		return false;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || v > 1000000000UL)
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	*ret = v;
	return true;
}

int kernel_uring_parse_faults(const char *s, struct kernel_uring_faults *ret)
{
	struct kernel_uring_faults f = { 0 };

	while (s && *s) {
		const char *comma = strchr(s, ',');
		const char *end = comma ? comma : s + strlen(s);
		const char *eq = memchr(s, '=', (size_t)(end - s));
		const char *colon = eq ? memchr(eq, ':', (size_t)(end - eq)) : NULL;
		unsigned long v = 0, op = 0;
		struct kernel_uring_fault_at *at = NULL;
		size_t k;

		if (!eq)
			return -EINVAL;
		k = (size_t)(eq - s);
		if (k == 5 && !strncmp(s, "again", 5)) {
			if (colon || !parse_num(eq + 1, end, &v) || v > 1000000)
				return -EINVAL;
			f.again = (unsigned)v;
		} else {
			if (k == 4 && !strncmp(s, "lose", 4))
				at = &f.lose;
			else if (k == 9 && !strncmp(s, "badcommit", 9))
				at = &f.badcommit;
			if (!at || !colon || !parse_num(eq + 1, colon, &op) ||
			    !parse_num(colon + 1, end, &v) || !op || op >= 64 || !v)
				return -EINVAL;
			at->opcode = (unsigned)op;
			at->nth = v;
		}
		if (comma && !comma[1])
			return -EINVAL; /* a trailing comma */
		s = comma ? comma + 1 : NULL;
	}
	*ret = f;
	return 0;
}

ssize_t kernel_uring_pack_reply(void *header, char *payload, size_t cap,
				const struct iovec *iov, int count)
{
	struct ur_header *h = header;
	struct fuse_out_header oh;
	size_t total = 0, n = 0;

	if (count < 1 || iov[0].iov_len < sizeof(oh))
		return -EINVAL;
	memcpy(&oh, iov[0].iov_base, sizeof(oh));
	for (int i = 1; i < count; i++)
		n += iov[i].iov_len;
	if (n > cap) {
		/* cannot happen: max_read/max_write bound every reply */
		log_err("a reply of %zu bytes does not fit the ring's %zu-byte payload; it fails with EIO",
			n, cap);
		oh.error = -EIO;
	}
	/* an error carries no arguments (the kernel copies none) */
	if (oh.error)
		n = 0;
	for (int i = 1; i < count && n; i++) {
		memcpy(payload + total, iov[i].iov_base, iov[i].iov_len);
		total += iov[i].iov_len;
	}
	oh.len = (uint32_t)(sizeof(oh) + n);
	memcpy(h->in_out, &oh, sizeof(oh));
	h->ent.payload_sz = (uint32_t)n;
	return (ssize_t)(sizeof(oh) + n);
}

ssize_t kernel_uring_unpack_request(const void *header, char *payload,
				    size_t cap, char **ret_start)
{
	const struct ur_header *h = header;
	struct fuse_in_header ih;
	uint32_t n = h->ent.payload_sz;
	size_t oplen;

	memcpy(&ih, h->in_out, sizeof(ih));
	if (n > cap || ih.len < sizeof(ih) + n ||
	    ih.len - sizeof(ih) - n > UR_OP_IN_OUT_SZ)
		return -EPROTO;
	oplen = ih.len - sizeof(ih) - n;
	/* in front of the payload, in the room reserved there */
	*ret_start = payload - oplen - sizeof(ih);
	memcpy(*ret_start, &ih, sizeof(ih));
	memcpy(*ret_start + sizeof(ih), h->op_in, oplen);
	return ih.len;
}

/*
 * The kick.  The kernel hands a newly registered entry only the requests
 * that come after it: what it queued while the queue had no idle entry
 * waits until some entry of that queue commits.  If every other entry
 * of the queue is held by a hung tier (a frozen or dead filesystem),
 * nothing commits, and a CREATE waiting there holds its directory's
 * lock, so that every user who lists or creates in that directory
 * stalls behind it while the new entry sits idle (test 195 caught
 * this, 1 run in about 20 on a loaded machine).  So once a grown entry
 * is registered, something on the queue's CPU -- the kernel picks the
 * queue by the caller's CPU -- asks the mount for its root's attributes
 * with AT_STATX_FORCE_SYNC, which is always a GETATTR: it finds an
 * idle entry, and that entry's COMMIT_AND_FETCH takes what waited.
 *
 * That something is a process of its own, the kicker, forked when the
 * queues start and holding no file of the daemon's but the read end of
 * its pipe: a thread of the daemon waiting for its own mount would keep
 * the daemon from ending when it is killed (the kernel ends the
 * connection, and with it that wait, only once the process has closed
 * /dev/fuse, which it does last; test 190's kill -9 hung so).  The
 * kicker reads queue numbers from the pipe and ends at its end of file,
 * or with the daemon (PR_SET_PDEATHSIG).  After the fork it makes only
 * system calls that are safe in the child of a threaded process.
 */
int kernel_uring_kicker_start(const char *mountpoint, int *ret_fd,
			      pid_t *ret_pid)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	char *path = strdup(mountpoint);
	int p[2];
	pid_t pid;

	if (!path)
		return -ENOMEM;
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(path);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		free(path);
		return e;
	}
	if (pid == 0) {
		unsigned qid;

		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* not "tierfs": ps, pgrep and the tests tell it apart */
		(void)prctl(PR_SET_NAME, "tierfs-kick");
		(void)sigaction(SIGTERM, &dfl, NULL);
		(void)sigaction(SIGINT, &dfl, NULL);
		(void)sigaction(SIGHUP, &dfl, NULL);
		if (dup2(p[0], 0) < 0)
			_exit(1);
		(void)syscall(SYS_close_range, 1U, ~0U, 0U);
		while (read(0, &qid, sizeof(qid)) == (ssize_t)sizeof(qid)) {
			cpu_set_t cpus;
			struct statx stx;

			CPU_ZERO(&cpus);
			if (qid < CPU_SETSIZE)
				CPU_SET(qid, &cpus);
			if (sched_setaffinity(0, sizeof(cpus), &cpus) == 0)
				(void)statx(AT_FDCWD, path, AT_STATX_FORCE_SYNC,
					    STATX_TYPE, &stx);
		}
		_exit(0);
	}
	free(path);
	close(p[0]);
	/* a kick that does not fit is dropped, never waited for */
	(void)fcntl(p[1], F_SETFL, O_NONBLOCK);
	*ret_fd = p[1];
	*ret_pid = pid;
	return 0;
}

void kernel_uring_kick(int fd, unsigned qid)
{
	if (fd >= 0 && write(fd, &qid, sizeof(qid)) != (ssize_t)sizeof(qid))
		log_debug("cannot kick FUSE io_uring queue %u: %s", qid,
			  strerror(errno));
}

void kernel_uring_kicker_stop(int fd, pid_t pid)
{
	if (fd >= 0)
		close(fd);
	/* reaped if it ended; if it still waits for the mount, the end of
	 * the connection ends it, and init reaps it */
	if (pid > 0)
		(void)waitpid(pid, NULL, WNOHANG);
}
