/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel_uring_wire.h -- what FUSE over io_uring looks like on the wire,
 * and the small questions kernel_uring.c asks of the kernel: the
 * structures and constants of include/uapi/linux/fuse.h 7.42+ (Debian
 * 12's headers predate them), the pure halves of an entry's traffic
 * (a reply packed into an entry, a request unpacked from one), the
 * queue count, the module parameter, the kick of a queue, and the test
 * faults' syntax.  Pure or self-contained: the unit test
 * (tests/unit/test_kernel.c) calls them directly.
 */
#ifndef TIERFS_KERNEL_URING_WIRE_H
#define TIERFS_KERNEL_URING_WIRE_H

#include <linux/fuse.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct iovec;

/* sizeof(struct fuse_uring_req_header), the entry's first iovec. */
#define KERNEL_URING_HEADER_SIZE 288
/* Room the entry keeps before @payload for the request's headers. */
#define KERNEL_URING_PREFIX (40 + 128)

#define UR_IN_OUT_HEADER_SZ 128 /* FUSE_URING_IN_OUT_HEADER_SZ */
#define UR_OP_IN_OUT_SZ 128	/* FUSE_URING_OP_IN_OUT_SZ */

enum {
	UR_CMD_REGISTER = 1,	     /* FUSE_IO_URING_CMD_REGISTER */
	UR_CMD_COMMIT_AND_FETCH = 2, /* FUSE_IO_URING_CMD_COMMIT_AND_FETCH */
};

/* struct fuse_uring_ent_in_out */
struct ur_ent_in_out {
	uint64_t flags;
	uint64_t commit_id; /* echo in the commit */
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
};

/* struct fuse_uring_req_header: the entry's first iovec */
struct ur_header {
	char in_out[UR_IN_OUT_HEADER_SZ]; /* fuse_in_header / fuse_out_header */
	char op_in[UR_OP_IN_OUT_SZ];	  /* the opcode's own header */
	struct ur_ent_in_out ent;
};

/* struct fuse_uring_cmd_req: in the SQE's 80-byte command area */
struct ur_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

_Static_assert(sizeof(struct ur_ent_in_out) == 32, "fuse_uring_ent_in_out");
_Static_assert(sizeof(struct ur_header) == 288, "fuse_uring_req_header");
_Static_assert(sizeof(struct ur_cmd_req) == 24, "fuse_uring_cmd_req");
_Static_assert(sizeof(struct ur_header) == KERNEL_URING_HEADER_SIZE,
	       "the header size");
_Static_assert(KERNEL_URING_PREFIX ==
		       sizeof(struct fuse_in_header) + UR_OP_IN_OUT_SZ,
	       "the prefix");


/* Is FUSE over io_uring switched on (module parameter enable_uring)? */
bool kernel_uring_enabled(void);

/* Queues the kernel makes: its possible CPUs.  Return: >0 or -errno. */
int kernel_uring_nqueues(void);

/*
 * The kicker (kernel_uring_wire.c says why): a process of its own that,
 * for each queue number written to its pipe, asks the mount at
 * @mountpoint for its root's attributes from that CPU, so that a newly
 * registered entry of the queue takes the requests that waited.
 * kernel_uring_kicker_start(): 0, *@ret_fd (the pipe's write end,
 * non-blocking) and *@ret_pid; or -errno.  kernel_uring_kick(): write
 * @qid, dropped when the pipe is full or gone (logged at debug level).
 * kernel_uring_kicker_stop(): close the pipe (the kicker ends when its
 * last kick is done) and reap it if it ended.
 */
int kernel_uring_kicker_start(const char *mountpoint, int *ret_fd,
			      pid_t *ret_pid);
void kernel_uring_kick(int fd, unsigned qid);
void kernel_uring_kicker_stop(int fd, pid_t pid);

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
 *   lose=OP:K    the reply of the K-th request of opcode OP (a number
 *                of include/uapi/linux/fuse.h: 23 for LISTXATTR) fails
 *                to submit every time: the entry is lost, its caller
 *                waits until the connection ends;
 *   badcommit=OP:K  the reply of that request names a request the
 *                kernel does not have: it fails the command, and the
 *                thread sees the error in its completion.
 * K counts requests of that opcode served over the rings from the
 * start, so that a test picks one of its own.  Unknown or malformed
 * items: -EINVAL.  Production never sets the variable.
 */
struct kernel_uring_fault_at {
	unsigned opcode; /* 0: none */
	unsigned long nth;
};
struct kernel_uring_faults {
	unsigned again;
	struct kernel_uring_fault_at lose, badcommit;
};
int kernel_uring_parse_faults(const char *s, struct kernel_uring_faults *ret);

#endif /* TIERFS_KERNEL_URING_WIRE_H */
