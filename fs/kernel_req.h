/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel_req.h -- what a FUSE request says that libfuse 3.14 drops, as
 * both transports (kernel.c's /dev/fuse hooks, kernel_uring.c's ring
 * entries) note it for the thread that handles the request: the
 * per-request flags (kill suid/sgid), INIT's offer, the counts per
 * opcode, the requester (fs/util/owner.h) and the queue the request
 * came on.  Below both transports, so that neither calls the other for
 * it.
 *
 * Threads: a request is read (or taken from its ring entry) and handled
 * on one thread, so everything per request is thread-local, set by
 * kernel_note_request() and read by the handler.
 */
#ifndef TIERFS_KERNEL_REQ_H
#define TIERFS_KERNEL_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/ioctl.h>

struct iovec;
struct tierfs;

/* Capability flags of the FUSE protocol (kernel include/uapi/linux/fuse.h;
 * Debian 12's headers stop at 7.38, so the newer ones are defined here). */
#define KFUSE_WRITEBACK_CACHE (UINT64_C(1) << 16)
#define KFUSE_HANDLE_KILLPRIV_V2 (UINT64_C(1) << 28)
#define KFUSE_INIT_EXT (UINT64_C(1) << 30)
#define KFUSE_DIRECT_IO_ALLOW_MMAP (UINT64_C(1) << 36) /* 7.39, Linux 6.6 */
#define KFUSE_PASSTHROUGH (UINT64_C(1) << 37)	     /* 7.40, Linux 6.9 */
#define KFUSE_OVER_IO_URING (UINT64_C(1) << 41)    /* 7.42, Linux 6.14 */
/* The INIT reply's max_stack_depth (7.40): the word after flags2. */
#define KFUSE_INIT_STACK_DEPTH_OFF 36
/* fuse_open_out's open_flags: the kernel reads and writes the file
 * through the backing file named by backing_id, the word after them */
#define KFOPEN_PASSTHROUGH (1u << 7)
/* The backing-file ioctls of /dev/fuse (7.40). */
struct kfuse_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define KFUSE_DEV_IOC_BACKING_OPEN _IOW(229, 1, struct kfuse_backing_map)
#define KFUSE_DEV_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)


/* The /dev/fuse pool's queue number (kernel_req_queue()); a ring queue
 * is its CPU's number, 0 and up. */
#define KERNEL_QUEUE_DEV (-1)

/*
 * kernel_note_request() - note what the request in @buf (@len bytes, as
 * /dev/fuse gives it: the in-header first) says that libfuse 3.14
 * drops, for the thread that handles it: the kill-suid/sgid flag of a
 * WRITE or SETATTR, INIT's offered flags (into @fs), the opcode's
 * count, and the requester's uid (owner_set_uid()).  @queue: the queue
 * it came on (KERNEL_QUEUE_DEV or a ring queue).  A @len too short for
 * a header clears the flags and the requester.
 */
void kernel_note_request(struct tierfs *fs, const void *buf, size_t len,
			 int queue);

/* Did the request being handled on this thread ask us to clear suid/sgid
 * (FUSE_WRITE_KILL_SUIDGID on a write, FATTR_KILL_SUIDGID on a setattr)? */
bool kernel_req_kill_suidgid(void);

/* The queue the request this thread handles came on: KERNEL_QUEUE_DEV,
 * or a ring queue's number. */
int kernel_req_queue(void);

/*
 * kernel_req_set_passthrough() - the OPEN or CREATE this thread handles
 * opens its file natively: its reply (kernel_req_patch_reply()) carries
 * FOPEN_PASSTHROUGH and backing file @backing_id (> 0), which the
 * kernel then reads and writes itself.  0: not (the default of every
 * request).
 */
void kernel_req_set_passthrough(int backing_id);
/*
 * kernel_req_patch_reply() - from the transports, with every reply
 * before it goes: a successful OPEN or CREATE reply of the request this
 * thread handles gets what kernel_req_set_passthrough() asked for
 * (libfuse 3.14 cannot say it).  Other replies pass unchanged.
 */
void kernel_req_patch_reply(struct iovec *iov, int count);

/* The stats line "requests OP=COUNT ..." (opcodes seen so far, both
 * transports) into @buf.  Return: its length, or -ENOSPC. */
int kernel_request_counts(char *buf, size_t len);

/* The address replies and requests meet at for ThreadSanitizer
 * (util/tsan.h): released before every reply, acquired after every
 * request, on both transports. */
extern char kernel_tsan_sync;

#endif /* TIERFS_KERNEL_REQ_H */
