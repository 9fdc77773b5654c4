/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel_uring.h -- FUSE over io_uring (Linux 6.14+), the transport
 * libfuse 3.14 does not know: its queues, their threads and ring
 * entries.  kernel.c starts it once the INIT reply is written and
 * routes every reply of a request that came over a ring back here;
 * kernel_uring.c says how it works inside.  It calls nothing of
 * kernel.c: what both transports note of a request is kernel_req.h's.
 *
 * How it comes up.  INIT still comes over /dev/fuse.  When the kernel
 * offers FUSE_OVER_IO_URING (module parameter enable_uring=1) and the
 * transport option allows it, kernel_init() adds the flag to the INIT
 * reply, and once that reply is written (kernel_io_writev()) the queues
 * start: one per possible CPU, as the kernel numbers them, each served
 * by threads pinned to that CPU, UR_THREADS_START of them at first.
 * Every thread owns an io_uring of its own (SQE128) and one ring entry:
 * a header buffer (struct ur_header) and a payload buffer of the
 * kernel's maximum payload (what it asks for: it refuses a smaller one),
 * registered with FUSE_IO_URING_CMD_REGISTER.  Once every queue has an
 * entry the kernel sends requests there instead of /dev/fuse -- to the
 * queue of the CPU the caller runs on -- and the libfuse loop on
 * /dev/fuse is left with what the kernel still sends there (FORGET,
 * INTERRUPT) and with notifications we send.
 */
#ifndef TIERFS_KERNEL_URING_H
#define TIERFS_KERNEL_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel_uring_wire.h" /* kernel_uring_enabled(), ... */

struct fuse_session;
struct iovec;
struct tierfs;

/*
 * kernel_uring_start() - start the queues on the /dev/fuse @fd, after
 * the INIT reply; @max_payload is the kernel's largest payload (each
 * entry's buffer).  Return: 0 or -errno (logged; the kernel stays on
 * /dev/fuse, which it uses until every queue has an entry).
 */
int kernel_uring_start(struct tierfs *fs, struct fuse_session *se, int fd,
		       size_t max_payload);

/*
 * kernel_uring_reply() - if the calling thread handles a request of a
 * ring entry and @iov is its reply, commit it there: true and *@ret
 * (what writev() would return: the bytes, or -errno); false otherwise
 * (the reply goes to /dev/fuse).
 */
bool kernel_uring_reply(const struct iovec *iov, int count, ssize_t *ret);

/*
 * kernel_uring_stop() - end the queues' threads and free them: every
 * thread finishes the request it handles (its reply committed), then
 * leaves; a waiting one is woken.  From any thread but theirs (one of
 * theirs calling it does nothing); idempotent.  After it, no thread of
 * this module touches the mount or the /dev/fuse fd: call it before
 * either goes (issue 32).
 */
void kernel_uring_stop(void);

/* What the stats show of the queues: the transport in force ("uring"
 * once every queue has an entry the kernel took, else "dev"), and the
 * figures below. */
struct kernel_uring_stats {
	uint64_t requests;     /* served over the rings so far */
	uint64_t retries;      /* commits submitted again (EAGAIN, ...) */
	unsigned threads;      /* live threads, each with one entry */
	unsigned registered;   /* entries the kernel holds for us */
	unsigned busy;	       /* entries handling a request now */
	unsigned lost;	       /* entries whose reply could not be sent */
	unsigned gone;	       /* threads that ended before the stop */
	uint64_t buffer_bytes; /* the live entries' buffers */
};
const char *kernel_uring_transport(void);
/* The most threads (ring entries) one queue has. */
unsigned kernel_uring_queue_max(void);
void kernel_uring_get_stats(struct kernel_uring_stats *ret);

#endif /* TIERFS_KERNEL_URING_H */
