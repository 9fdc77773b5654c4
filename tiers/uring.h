/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uring.h -- positional reads and writes through io_uring, with one ring
 * per thread.
 *
 * This is the I/O engine of the file tier (tier_file.c).  A caller hands
 * in one request -- fd, buffer, length, offset -- and gets back the whole
 * length or -errno, as with a pread()/pwrite() loop.  Inside, a request
 * of at most URING_SYNC_MAX is just that loop, on the calling thread; a
 * larger one is split into SQEs of up to URING_CHUNK that are submitted
 * in one batch and reaped together, so the device sees more than one
 * request in flight; short transfers are resubmitted for the rest.
 *
 * It is not an asynchronous API: every call waits for its own
 * completions before returning, so the caller's buffer is free again on
 * return, whatever the result.
 *
 * Thread and ring ownership (part of the contract):
 *  - every thread gets its own io_uring, created lazily by its first
 *    call here and never shared: no lock guards a ring, because only its
 *    owning thread ever touches it (the ring is set up with
 *    IORING_SETUP_SINGLE_ISSUER where the kernel has it, which makes the
 *    kernel enforce this);
 *  - a ring is freed when its thread exits (pthread key destructor), or
 *    earlier by uring_thread_exit(); the main thread's ring lives until
 *    process exit unless it calls uring_thread_exit();
 *  - after fork() the child drops the ring it inherited from the forking
 *    thread (pthread_atfork) and makes a fresh one on first use; rings
 *    of the parent's other threads are unreachable in the child and stay
 *    mapped until it exits or execs (their fds are close-on-exec);
 *  - rings are not tied to a file descriptor, so one ring serves every
 *    tier and file a thread touches.
 *
 * If the kernel refuses io_uring altogether (ENOSYS, or EPERM from a
 * seccomp filter or kernel.io_uring_disabled), the calls fall back to a
 * pread()/pwrite() loop for the rest of the process: slower, but the
 * same contract.
 *
 * Buffers: plain buffered I/O needs no alignment.  An fd opened with
 * O_DIRECT needs @buf, @len and @off aligned to the device's logical
 * block size (statx STATX_DIOALIGN); this module passes them through
 * unchanged and returns the kernel's -EINVAL otherwise.
 */
#ifndef TIERFS_URING_H
#define TIERFS_URING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Largest transfer one SQE carries.  256 KiB keeps four requests in
 * flight for a 1 MiB extent, yet each request is large enough that the
 * per-SQE cost stays small next to the copy.
 */
#define URING_CHUNK (256u * 1024)

/*
 * Submission queue entries per ring: the most SQEs one thread has in
 * flight (URING_DEPTH * URING_CHUNK = 16 MiB); a larger request is
 * worked through as a sliding window.
 */
#define URING_DEPTH 64u
/*
 * Requests of at most this much go straight to pread()/pwrite() on the
 * calling thread: one SQE brings no parallelism, and a buffered write
 * that ext4 cannot do without blocking would go to an io-wq worker
 * thread and back (issue 18: 4K random writes to a file tier ran at a
 * third of the directory's speed).
 */
#define URING_SYNC_MAX (64u * 1024)

/**
 * uring_pread() - read @len bytes at @off of @fd into @buf
 *
 * Return: @len on success; -errno from the kernel (cqe->res) as is;
 * -EIO if end of file is reached before @len bytes (a caller that
 * sized the file itself sees that only when someone truncated it); or
 * -errno from ring setup.  On error @buf holds an unspecified mix of
 * old and new bytes.
 */
ssize_t uring_pread(int fd, void *buf, size_t len, uint64_t off);

/**
 * uring_pwrite() - write @len bytes from @buf at @off of @fd
 *
 * Return: @len on success, or -errno (as uring_pread()).  On error an
 * unspecified part of the range may have been written.
 */
ssize_t uring_pwrite(int fd, const void *buf, size_t len, uint64_t off);

/**
 * uring_thread_exit() - free the calling thread's ring now
 *
 * Optional: a thread's ring is freed when it exits anyway.  The next
 * uring_pread()/uring_pwrite() on this thread makes a new one.
 */
void uring_thread_exit(void);

/**
 * uring_live_rings() - number of rings currently set up, all threads
 *
 * A racy snapshot, for tests and statistics.
 */
unsigned uring_live_rings(void);

/**
 * uring_set_sync_fallback() - force (or stop forcing) the pread()/
 * pwrite() fallback, as if the kernel lacked io_uring
 *
 * For tests of the fallback path; production code never calls it.
 * Affects calls that start after it returns, in every thread.
 */
void uring_set_sync_fallback(bool on);

#endif /* TIERFS_URING_H */
