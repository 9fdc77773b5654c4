/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tsan.h -- telling ThreadSanitizer about an ordering that the kernel
 * provides and that it cannot see, because the threads meet only in a
 * system call.  Outside a -fsanitize=thread build the macros are empty.
 *
 * TSAN_RELEASE(p) before the system call that publishes, TSAN_ACQUIRE(p)
 * after the one that observes, on the same address @p (any object; only
 * its address counts).  Every access before the release then happens
 * before every access after the acquire, as the kernel guarantees; an
 * access after the release stays unordered, so a real race there is
 * still reported.  Used in two places:
 * - fs/kernel.c, fs/kernel_uring.c: a reply written to the kernel (over
 *   /dev/fuse or an io_uring entry) happens before every request the
 *   kernel sends after it (a FORGET that frees the inode the reply was
 *   about can come on another thread and transport);
 * - tiers/uring.c: a ring unmapped by an exiting thread happens before
 *   a new ring that the kernel maps at the same address for another.
 */
#ifndef TIERFS_TSAN_H
#define TIERFS_TSAN_H

#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define TSAN_ACQUIRE(p) __tsan_acquire((void *)(p))
#define TSAN_RELEASE(p) __tsan_release((void *)(p))
#else
#define TSAN_ACQUIRE(p) ((void)(p))
#define TSAN_RELEASE(p) ((void)(p))
#endif

#endif /* TIERFS_TSAN_H */
