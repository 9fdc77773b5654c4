// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dioaio.c -- an asynchronous O_DIRECT write and buffered readers of the
 * same range (xfstests generic/451's case): after the write completes,
 * no buffered read may return the old bytes.
 *
 *     dioaio FILE ROUNDS
 *
 * FILE must exist with at least 1 MiB.  Each round: two readers (a
 * buffered fd of this process and a forked child with its own fd) read
 * the first 1 MiB, so the page cache holds it; an io_uring O_DIRECT
 * write of a new pattern (seed = round) over it is submitted and
 * completed; then both readers read it again, buffered, and must see the
 * new pattern.  Prints "OK ROUNDS" or "STALE round R reader N at OFF"
 * (exit 1); "ERR what ERRNO" (exit 1) for a failed call; 2 on usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define LEN (1 << 20)

static int fail(const char *what, int err)
{
	printf("ERR %s %s\n", what, t_errname(err));
	return 1;
}

/* Read [0, LEN) buffered through @fd and compare with seed @seed.
 * Return: -1 when it matches, else the first wrong offset (or -2 on a
 * read error, errno set). */
static long check(int fd, unsigned char *buf, uint64_t seed)
{
	size_t done = 0;

	while (done < LEN) {
		ssize_t r = pread(fd, buf + done, LEN - done, (off_t)done);

		if (r < 0)
			return -2;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	if (done < LEN)
		return (long)done;
	return (long)t_pat_check(buf, 0, LEN, seed);
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	unsigned char *dbuf, *rbuf;
	int rounds, dfd, rfd, r;

	if (argc != 3)
		return 2;
	rounds = atoi(argv[2]);
	if (posix_memalign((void **)&dbuf, 4096, LEN) ||
	    !(rbuf = malloc(LEN)))
		return fail("alloc", ENOMEM);
	dfd = open(argv[1], O_RDWR | O_DIRECT);
	rfd = open(argv[1], O_RDONLY);
	if (dfd < 0 || rfd < 0)
		return fail("open", errno);
	r = io_uring_queue_init(4, &ring, 0);
	if (r < 0)
		return fail("io_uring_queue_init", -r);
	for (int round = 1; round <= rounds; round++) {
		struct io_uring_sqe *sqe;
		struct io_uring_cqe *cqe;
		long bad;
		pid_t pid;
		int st;

		/* both readers cache the old bytes (seed round - 1, or
		 * whatever the file held) */
		(void)check(rfd, rbuf, 0);
		pid = fork();
		if (pid == 0) {
			int cfd = open(argv[1], O_RDONLY);

			(void)check(cfd, rbuf, 0);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return fail("fork", errno);
		t_pat_fill(dbuf, 0, LEN, (uint64_t)round);
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_write(sqe, dfd, dbuf, LEN, 0);
		r = io_uring_submit(&ring);
		if (r != 1)
			return fail("io_uring_submit", r < 0 ? -r : EIO);
		r = io_uring_wait_cqe(&ring, &cqe);
		if (r < 0)
			return fail("io_uring_wait_cqe", -r);
		if (cqe->res != LEN)
			return fail("direct write", cqe->res < 0 ? -cqe->res : EIO);
		io_uring_cqe_seen(&ring, cqe);
		bad = check(rfd, rbuf, (uint64_t)round);
		if (bad == -2)
			return fail("read", errno);
		if (bad >= 0) {
			printf("STALE round %d reader 1 at %ld\n", round, bad);
			return 1;
		}
		pid = fork();
		if (pid == 0) {
			int cfd = open(argv[1], O_RDONLY);

			_exit(check(cfd, rbuf, (uint64_t)round) == -1 ? 0 : 1);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return fail("fork", errno);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("STALE round %d reader 2\n", round);
			return 1;
		}
	}
	printf("OK %d\n", rounds);
	return 0;
}
