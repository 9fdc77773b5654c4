/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel_uring_i.h -- the pure halves of a ring entry's traffic and the
 * test faults of kernel_uring.c, shared only with its unit test
 * (tests/unit/test_kernel.c).
 */
#ifndef TIERFS_KERNEL_URING_I_H
#define TIERFS_KERNEL_URING_I_H

#include <stddef.h>
#include <sys/types.h>

struct iovec;

/* sizeof(struct fuse_uring_req_header), the entry's first iovec. */
#define KERNEL_URING_HEADER_SIZE 288
/* Room the entry keeps before @payload for the request's headers. */
#define KERNEL_URING_PREFIX (40 + 128)
/*
 * A reply as libfuse writes it (@iov[0] the out-header, the rest the
 * arguments) into an entry's @header and @payload (@cap bytes): the
 * out-header's length, the payload size, no arguments with an error.
 * Return: the reply's length, or -EINVAL (no out-header).
 */
ssize_t kernel_uring_pack_reply(void *header, char *payload, size_t cap,
				const struct iovec *iov, int count);
/*
 * The request the kernel put in an entry, laid out as /dev/fuse gives
 * it: in-header and opcode header copied in front of @payload (which
 * must have KERNEL_URING_PREFIX bytes before it), *@ret_start its start.
 * Return: its length, or -EPROTO for sizes that do not add up.
 */
ssize_t kernel_uring_unpack_request(const void *header, char *payload,
				    size_t cap, char **ret_start);

/*
 * Test faults (issue 32), from TIERFS_TEST_URING_FAULTS at
 * kernel_uring_start(), a comma-separated list:
 *   again=N      N tries to submit fail with EAGAIN, EINTR or EBUSY
 *                in turn before the kernel sees them, the first two
 *                of each submit (the retry must get it through);
 *   lose=K       the reply of the K-th request fails to submit every
 *                time: the entry is lost, its caller waits until the
 *                connection ends;
 *   badcommit=K  the reply of the K-th request names a request the
 *                kernel does not have: it fails the command, and the
 *                thread sees the error in its completion.
 * K counts requests served over the rings from the start.  Unknown or
 * malformed items: -EINVAL.  Production never sets the variable.
 */
struct kernel_uring_faults {
	unsigned again;
	unsigned long lose;
	unsigned long badcommit;
};
int kernel_uring_parse_faults(const char *s, struct kernel_uring_faults *ret);

#endif /* TIERFS_KERNEL_URING_I_H */
