// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier_ram.c -- the RAM tier: slots in process memory.
 *
 * The whole tier is one anonymous private mapping reserved at open with
 * MAP_NORESERVE, so a large tier costs address space, not memory, until
 * it is written.  Freeing a slot returns its pages to the kernel with
 * MADV_DONTNEED (a slot's released units too; only the part of the slot
 * that holds anything, tier_units.c's slot_span(); many slots at once
 * through process_madvise(), ram_discard_vec()), after which they read
 * as zeros: used memory follows the data actually stored, and a new
 * slot needs no clearing.
 *
 * Native files (issue 33, tier.h): a tmpfs of the tier's own, of the
 * tier's size, made on the first one (fsopen(), fsmount(): attached to
 * no directory, so that no other process sees it, and gone with the
 * daemon), holds their backing files, nameless (O_TMPFILE).  Its size
 * bounds what the kernel writes into them: a write past it fails with
 * ENOSPC in the writer's own write(2).  What they hold is what the
 * tmpfs says is used (ram_native_used()).  The pages are the kernel's
 * page cache of those files: charged to the memory cgroup of whoever
 * writes them first (the daemon, or a job writing natively).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tier.h"
#include "tier_ops.h"
#include "macro.h"
#include "banned.h"

struct ram_priv {
	char *base;  /* immutable after open */
	size_t len;  /* immutable after open */
	pthread_mutex_t nlock; /* guards making the native tmpfs */
	int native_fd;	       /* the tmpfs's root: -1 until made (nlock
				* to make; read with an acquire load) */
};

static int ram_open(struct tier *t)
{
	struct ram_priv *p;
	size_t len = (size_t)t->vslots << t->extent_shift;
	void *base;

	base = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	while (base == MAP_FAILED && t->vslots > t->nslots) {
		/*
		 * No address space for all the slots (strict overcommit, a
		 * sanitizer's layout): half as many, down to one per
		 * extent of capacity; fewer small extents fit then.
		 */
		t->vslots = MAX(t->vslots / 2, t->nslots);
		len = (size_t)t->vslots << t->extent_shift;
		base = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			    0);
	}
	if (base == MAP_FAILED)
		return -errno;
	/* users' data stays out of core dumps (best effort: a kernel
	 * without MADV_DONTDUMP just dumps it) */
	(void)madvise(base, len, MADV_DONTDUMP);
	p = malloc(sizeof(*p));
	if (!p) {
		munmap(base, len);
		return -ENOMEM;
	}
	p->base = base;
	p->len = len;
	pthread_mutex_init(&p->nlock, NULL);
	p->native_fd = -1;
	t->priv = p;
	return 0;
}

static void ram_close(struct tier *t)
{
	struct ram_priv *p = t->priv;

	if (!p)
		return;
	munmap(p->base, p->len);
	if (p->native_fd >= 0)
		close(p->native_fd); /* the tmpfs goes with its last file */
	pthread_mutex_destroy(&p->nlock);
	free(p);
	t->priv = NULL;
}

/* The native tmpfs, made on first use.  Return: its root's descriptor,
 * or -errno (-EPERM where this process may not make a mount). */
static int native_root(struct tier *t)
{
	struct ram_priv *p = t->priv;
	char size[32];
	int fsfd, mfd, e = 0;

	mfd = __atomic_load_n(&p->native_fd, __ATOMIC_ACQUIRE);
	if (mfd >= 0)
		return mfd;
	pthread_mutex_lock(&p->nlock);
	mfd = p->native_fd;
	if (mfd >= 0)
		goto out;
	fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		e = -errno;
		goto out;
	}
	snprintf(size, sizeof(size), "%llu", (unsigned long long)t->size);
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		e = -errno;
		close(fsfd);
		goto out;
	}
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC,
		      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (mfd < 0)
		e = -errno;
	close(fsfd);
	if (mfd >= 0)
		__atomic_store_n(&p->native_fd, mfd, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&p->nlock);
	return mfd >= 0 ? mfd : e;
}

static int ram_native_new(struct tier *t)
{
	int root = native_root(t);
	int fd;

	if (root < 0)
		return root;
	fd = openat(root, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

static int64_t ram_native_used(struct tier *t)
{
	struct ram_priv *p = t->priv;
	int root = __atomic_load_n(&p->native_fd, __ATOMIC_ACQUIRE);
	struct statfs sfs;

	if (root < 0)
		return 0;
	if (fstatfs(root, &sfs) < 0)
		return -errno;
	return (int64_t)((sfs.f_blocks - sfs.f_bfree) * (uint64_t)sfs.f_bsize);
}

static inline char *slot_addr(struct tier *t, uint32_t slot, uint64_t off)
{
	struct ram_priv *p = t->priv;

	return p->base + ((size_t)slot << t->extent_shift) + off;
}

static ssize_t ram_read(struct tier *t, uint32_t slot, uint64_t off, void *buf,
			size_t len)
{
	memcpy(buf, slot_addr(t, slot, off), len);
	return (ssize_t)len;
}

/*
 * New units of at least this much are faulted in when they are charged
 * (ram_reserve()) with one madvise(MADV_POPULATE_WRITE): one call
 * instead of a page fault per 4 KiB (each an exception, costly in a VM).
 * Only the new units are populated, so a small file in a large extent
 * still holds little, and an overwrite of units the slot holds (their
 * pages are present) makes no call at all -- it used to cost a walk of
 * the page tables on every write of 64 KiB or more.
 */
#define POPULATE_MIN (64u << 10)

/* Set when the kernel has no MADV_POPULATE_WRITE (before 5.14); relaxed
 * atomic: a racing thread makes one more failing call, harmlessly. */
static bool no_populate;

static void populate(char *addr, size_t len)
{
	uintptr_t start = ((uintptr_t)addr + 4095) & ~(uintptr_t)4095;
	uintptr_t end = ((uintptr_t)addr + len) & ~(uintptr_t)4095;

	if (end <= start || __atomic_load_n(&no_populate, __ATOMIC_RELAXED))
		return;
	if (madvise((void *)start, end - start, MADV_POPULATE_WRITE) < 0 &&
	    errno == EINVAL)
		__atomic_store_n(&no_populate, true, __ATOMIC_RELAXED);
	/* other failures (ENOMEM) leave it to the faults of memcpy() */
}

static ssize_t ram_write(struct tier *t, uint32_t slot, uint64_t off,
			 const void *buf, size_t len)
{
	memcpy(slot_addr(t, slot, off), buf, len);
	return (ssize_t)len;
}

/* New units [@off, @off+@len) of @slot: fault their pages in now, in
 * one call, before the write that follows.  Never fails: without the
 * call the write's own page faults do the same. */
static int ram_reserve(struct tier *t, uint32_t slot, uint64_t off,
		       uint64_t len)
{
	if (len >= POPULATE_MIN)
		populate(slot_addr(t, slot, off), (size_t)len);
	return 0;
}

static int ram_discard(struct tier *t, uint32_t slot, uint64_t off,
		       uint64_t len)
{
	if (madvise(slot_addr(t, slot, off), (size_t)len, MADV_DONTNEED) < 0)
		return -errno;
	return 0;
}

/* Slots @first .. @first+@n-1 in one call (and one TLB flush). */
static int ram_discard_run(struct tier *t, uint32_t first, uint32_t n)
{
	if (madvise(slot_addr(t, first, 0), (size_t)n << t->extent_shift,
		    MADV_DONTNEED) < 0)
		return -errno;
	return 0;
}

/*
 * Set when process_madvise() cannot discard our own memory (a kernel
 * before 6.13 takes only MADV_COLD, MADV_PAGEOUT and MADV_WILLNEED
 * there): from then on every discard_vec fails at once and the caller
 * discards slot by slot.  Relaxed atomic, like no_populate.
 */
static bool no_vec;

/*
 * Each slot's range in one process_madvise(MADV_DONTNEED): the kernel
 * zaps them all and flushes the TLB once (6.16 and later; before, once
 * per range, which is no worse than a madvise each).  The pidfd is
 * opened per call, so a daemon that forked after open needs nothing
 * redone; two system calls more per batch.
 */
static int ram_discard_vec(struct tier *t, const uint32_t *slots,
			   const uint64_t *lens, unsigned n)
{
	struct iovec v[TIER_DISCARD_VEC_MAX];
	size_t total = 0;
	ssize_t r;
	int pfd, err;

	if (n > ARRAY_SIZE(v) || __atomic_load_n(&no_vec, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	for (unsigned i = 0; i < n; i++) {
		v[i].iov_base = slot_addr(t, slots[i], 0);
		v[i].iov_len = (size_t)lens[i];
		total += (size_t)lens[i];
	}
	pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pfd < 0) {
		err = errno;
		if (err == ENOSYS)
			__atomic_store_n(&no_vec, true, __ATOMIC_RELAXED);
		return -err;
	}
	r = syscall(SYS_process_madvise, pfd, v, (size_t)n, MADV_DONTNEED, 0u);
	err = errno;
	(void)close(pfd);
	if (r < 0 && (err == EINVAL || err == ENOSYS || err == EPERM)) {
		__atomic_store_n(&no_vec, true, __ATOMIC_RELAXED);
		return -EOPNOTSUPP;
	}
	if (r < 0)
		return -err;
	/* fewer bytes: the kernel stopped at a range; the caller redoes
	 * them all one by one */
	return (size_t)r == total ? 0 : -EIO;
}

static void *ram_direct(struct tier *t, uint32_t slot, uint64_t off)
{
	return slot_addr(t, slot, off);
}

const struct tier_ops tier_ram_ops = {
	.direct = ram_direct,
	.version = TIER_OPS_VERSION,
	.kind_name = "ram",
	.caps = TIER_CAP_MEMORY,
	.sparse = true,
	.open = ram_open,
	.close = ram_close,
	.read = ram_read,
	.write = ram_write,
	.reserve = ram_reserve,
	.discard = ram_discard,
	.discard_run = ram_discard_run,
	.discard_vec = ram_discard_vec,
	.native_new = ram_native_new,
	.native_used = ram_native_used,
};
