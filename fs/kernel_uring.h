/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel_uring.h -- FUSE over io_uring (Linux 6.14+), the transport
 * libfuse 3.14 does not know: its queues, their threads and ring
 * entries.  kernel.c starts it once the INIT reply is written and
 * routes every reply of a request that came over a ring back here;
 * kernel_uring.c says how it works.  It calls nothing of kernel.c:
 * what both transports note of a request is kernel_req.h's.
 */
#ifndef TIERFS_KERNEL_URING_H
#define TIERFS_KERNEL_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fuse_session;
struct iovec;
struct tierfs;

/* Is FUSE over io_uring switched on (module parameter enable_uring)? */
bool kernel_uring_enabled(void);

/* Queues the kernel makes: its possible CPUs.  Return: >0 or -errno. */
int kernel_uring_nqueues(void);

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
void kernel_uring_get_stats(struct kernel_uring_stats *ret);

#endif /* TIERFS_KERNEL_URING_H */
