/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel_i.h -- the /dev/fuse hooks of kernel.c, shared only with its
 * unit test (tests/unit/test_kernel.c), which feeds them requests and
 * replies through a pipe.
 */
#ifndef TIERFS_KERNEL_I_H
#define TIERFS_KERNEL_I_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct iovec;

/* read() one request from @fd and note what libfuse 3.14 drops; @userdata
 * is the struct tierfs.  Returns what read() returned, errno intact. */
ssize_t kernel_io_read(int fd, void *buf, size_t len, void *userdata);
/* writev() one reply to @fd, adding the chosen flags if it is INIT's. */
ssize_t kernel_io_writev(int fd, struct iovec *iov, int count,
			 void *userdata);

/* Note what the request in @buf (@len bytes, as /dev/fuse gives it)
 * says that libfuse 3.14 drops (kernel_req_kill_suidgid(), INIT's
 * offer).  From both transports, on the thread that handles it. */
void kernel_note_request(struct tierfs *fs, const void *buf, size_t len);

/* The address replies and requests meet at for ThreadSanitizer
 * (util/tsan.h): released before every reply, acquired after every
 * request, on both transports. */
extern char kernel_tsan_sync;

/* kernel_uring.c */
struct tierfs;
struct fuse_session;
/* Queues the kernel makes: its possible CPUs.  Return: >0 or -errno. */
int kernel_uring_nqueues(void);
/* Start the io_uring queues on @fd (after the INIT reply); @max_payload
 * is the kernel's largest payload.  Return: 0 or -errno (logged; the
 * kernel stays on /dev/fuse). */
int kernel_uring_start(struct tierfs *fs, struct fuse_session *se, int fd,
		       size_t max_payload);
/* If the calling thread handles a request of a ring entry and @iov is
 * its reply, commit it there: true and *@ret (what writev() would
 * return); false otherwise (the reply goes to /dev/fuse). */
bool kernel_uring_reply(const struct iovec *iov, int count, ssize_t *ret);
/* End the queues' threads and free them (any thread but theirs). */
void kernel_uring_stop(void);

/* The pure halves of a ring entry's traffic, for the unit test. */
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

#endif /* TIERFS_KERNEL_I_H */
