// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier_pmem.c -- the PMem tier: slots in one file on a DAX filesystem,
 * mapped with libpmem and accessed with loads and stores.
 *
 * Layout: open makes a private directory PATH/tierfs-NAME-XXXXXX (0700)
 * holding a lock file (tier_private_dir_create()) and, unlinked, the
 * slab (0600) of nslots * extent_size bytes (tier_backing_open()), and
 * maps all of it with pmem_map_file() through /proc/self/fd/N: libpmem
 * wants a path, and that one names the unlinked file without giving it
 * a name anyone else sees.  Slot N is the range starting at
 * N * extent_size of the mapping.  The kernel frees the slab when the
 * last of our fd and mapping goes, so a killed daemon leaves no data
 * behind (see tier_file.c).  Close unmaps and removes the directory.
 *
 * Persistence: pmem_is_pmem() is asked once, at open.  On real pmem a
 * write is pmem_memcpy_nodrain() then pmem_drain() (non-temporal stores,
 * one fence).  On anything else -- a non-DAX filesystem, where libpmem
 * falls back to msync() -- a write is memcpy(), and pmem_msync() of the
 * whole mapping happens at ->sync (see PMEM_MSYNC_ON_WRITE for why not at
 * every write).  Reads are memcpy().
 *
 * Space: open reserves the whole file with fallocate() where the
 * filesystem allows, so that a store into the mapping never needs a new
 * block.  Without that, a store into a hole on a filesystem that others
 * filled up raises SIGBUS.  A freed slot is punched out (it then reads
 * as zeros) and reserved again; where punching is not supported it is
 * overwritten with zeros instead.
 *
 * Faults: every access to the mapping runs under a SIGBUS guard, so
 * that a slab file truncated behind our back, a hole that cannot be
 * filled, or a media error (poisoned pmem) fails that one call with
 * -EIO instead of killing the daemon.  See guard_*() below.
 *
 * Threads: struct pmem_priv is immutable after open except for the
 * no_punch flag; callers serialise access to one slot (tier.h), and
 * distinct slots are distinct bytes of the mapping.
 *
 * NEEDSWORK: a devdax device (/dev/daxX.Y) as @path, which DESIGN.md
 * names, is refused with -ENOTDIR: it would need its whole length
 * mapped with no private directory, and memset instead of punching.
 */
#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h> /* madvise */
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "config.h"
#include "tier.h"
#include "tier_ops.h"
#include "macro.h"
#include "banned.h"

/*
 * Whether a write to a non-pmem mapping is followed by pmem_msync() of
 * the written pages.  Scratch data needs no durability before ->sync
 * (tier.h), which syncs the whole mapping anyway.  Measured on ext4 over
 * virtio, 1 MiB through ->write: about 120 MiB/s with it, 2 GiB/s
 * without.  On, it would bound the dirty page cache a non-DAX pmem tier
 * builds up; but that tier is an emulation (real pmem never takes this
 * path), its data is scratch that nobody reads after unmount, and the
 * kernel's writeback bounds dirty pages anyway.  So: off.
 */
#define PMEM_MSYNC_ON_WRITE 0

struct pmem_priv {
	char *base;    /* the mapping; immutable after open */
	size_t len;    /* bytes mapped; immutable after open */
	int fd;	       /* the slab, for fallocate(); immutable after open */
	bool is_pmem;  /* pmem_is_pmem() at open; immutable after open */
	bool reserved; /* blocks allocated at open; immutable after open */
	/*
	 * Set once punching a hole failed with EOPNOTSUPP.  Relaxed atomic:
	 * a thread that misses it makes one more failing call, harmlessly.
	 */
	bool no_punch;
	int lock_fd; /* the private directory's lock; immutable after open */
	char *dir;   /* private directory; immutable after open */
};

/* ------------------------------------------------------------------ */
/*
 * SIGBUS guard.
 *
 * A load or store to a file mapping raises SIGBUS when the page cannot
 * be provided: beyond end of file, no space to fill a hole, a media
 * error.  guarded() records a jump buffer in a thread-local before it
 * touches the mapping; the handler, finding one, jumps back and the call
 * returns -EIO.  A SIGBUS with no jump buffer set is not ours and goes
 * to whatever handler was installed before (default: the process dies,
 * as it would have without us).
 *
 * The handler is installed once, on the first pmem tier open (a
 * SIGBUS handler installed later by someone else must chain to it), with
 * SA_NODEFER so that jumping out of it leaves SIGBUS unblocked and no
 * signal mask needs saving (sigsetjmp(env, 0): no system call per I/O;
 * the fault path restores the thread's mask in case an interposed
 * sigaction() changed it, as TSan's does).
 * A thread that has SIGBUS blocked would be killed outright by a fault
 * (libfuse 3 blocks only SIGTERM, SIGINT, SIGHUP and SIGQUIT in its
 * workers, but libfuse 2 and some forks block every signal, and so may
 * a daemon), so each thread unblocks SIGBUS before its first guarded
 * access.  SIGBUS is only ever synchronous in practice, so that changes
 * nothing else.
 */

/* Where the handler jumps; this thread's, NULL outside guarded(). */
static __thread sigjmp_buf *guard_jmp;
/* This thread has SIGBUS unblocked. */
static __thread bool guard_thread_ready;
/* This thread's signal mask outside guarded() (SIGBUS unblocked). */
static __thread sigset_t guard_mask;

static pthread_once_t guard_once = PTHREAD_ONCE_INIT;
static int guard_once_err;	   /* written once, inside guard_once */
static struct sigaction guard_old; /* written once, inside guard_once */

static void guard_handler(int sig, siginfo_t *si, void *uctx)
{
	sigjmp_buf *jb = guard_jmp;
	struct sigaction dfl;

	if (jb) {
		guard_jmp = NULL;
		siglongjmp(*jb, 1);
	}
	/* not ours: hand it on as if we had never been installed */
	if (guard_old.sa_flags & SA_SIGINFO) {
		guard_old.sa_sigaction(sig, si, uctx);
		return;
	}
	if (guard_old.sa_handler != SIG_DFL &&
	    guard_old.sa_handler != SIG_IGN) {
		guard_old.sa_handler(sig);
		return;
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	(void)sigaction(SIGBUS, &dfl, NULL);
	/* a fault repeats on return and now kills; a sent signal must be
	 * raised again */
	if (si->si_code <= 0)
		(void)raise(sig);
}

static void guard_init_once(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &guard_old) < 0)
		guard_once_err = errno;
}

static int guard_install(void)
{
	(void)pthread_once(&guard_once, guard_init_once);
	return -guard_once_err;
}

static void guard_thread_init(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGBUS);
	if (pthread_sigmask(SIG_UNBLOCK, &set, &guard_mask) != 0)
		sigemptyset(&guard_mask);
	sigdelset(&guard_mask, SIGBUS);
	guard_thread_ready = true;
}

enum guard_op {
	GUARD_READ,  /* @buf <- @pm */
	GUARD_WRITE, /* @pm <- @buf, made persistent */
	GUARD_ZERO,  /* @pm <- zeros, made persistent */
};

/* msync() wants a page-aligned start; pmem_msync() aligns too. */
static int msync_range(char *pm, size_t len)
{
	static size_t pagesize;
	size_t pg = __atomic_load_n(&pagesize, __ATOMIC_RELAXED);
	uintptr_t start, end;

	if (!pg) {
		pg = (size_t)sysconf(_SC_PAGESIZE);
		__atomic_store_n(&pagesize, pg, __ATOMIC_RELAXED);
	}
	start = ALIGN_DOWN((uintptr_t)pm, pg);
	end = ALIGN_UP((uintptr_t)pm + len, pg);
	if (pmem_msync((void *)start, end - start) < 0)
		return -errno;
	return 0;
}

/*
 * Do @op on @len bytes of the mapping at @pm.  Return: 0, -EIO when the
 * access raised SIGBUS, or -errno from pmem_msync().  Nothing here may
 * take a lock or allocate: the handler may jump out of the middle.
 */
static int guarded(const struct pmem_priv *p, enum guard_op op, char *pm,
		   void *buf, size_t len)
{
	sigjmp_buf jb;
	int r = 0;

	if (unlikely(!guard_thread_ready))
		guard_thread_init();
	if (sigsetjmp(jb, 0)) {
		/*
		 * The handler cleared guard_jmp.  SA_NODEFER and the empty
		 * sa_mask should have left the mask as it was, but an
		 * interposed sigaction() may change both: TSan's runs every
		 * handler with all signals blocked, glibc's internal
		 * SIGCANCEL included, so that after this jump a blocked
		 * SIGBUS would kill on the next fault and libfuse's
		 * pthread_cancel() of the worker at unmount would hang.
		 * Restore the mask (glibc never blocks its internal signals
		 * through pthread_sigmask).  Only this error path pays.
		 */
		(void)pthread_sigmask(SIG_SETMASK, &guard_mask, NULL);
		return -EIO;
	}
	guard_jmp = &jb;
	/* the store must be visible to the handler before any access */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	switch (op) {
	case GUARD_READ:
		memcpy(buf, pm, len);
		break;
	case GUARD_WRITE:
		if (p->is_pmem) {
			pmem_memcpy_nodrain(pm, buf, len);
			pmem_drain();
		} else {
			memcpy(pm, buf, len);
			if (PMEM_MSYNC_ON_WRITE)
				r = msync_range(pm, len);
		}
		break;
	case GUARD_ZERO:
		if (p->is_pmem) {
			pmem_memset_persist(pm, 0, len);
		} else {
			memset(pm, 0, len);
			r = msync_range(pm, len);
		}
		break;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	guard_jmp = NULL;
	return r;
}

/* ------------------------------------------------------------------ */
/*
 * Path checks and the private directory.
 *
 * NEEDSWORK: the same as in tier_file.c; move both to one shared helper
 * (tiers/tier_dir.c) once that file may be added.
 */


/* ------------------------------------------------------------------ */

static inline char *slot_addr(const struct tier *t, uint32_t slot, uint64_t off)
{
	const struct pmem_priv *p = t->priv;

	return p->base + ((size_t)slot << t->extent_shift) + off;
}

/* Undo what pmem_open() did, however far it got.  Accepts NULL. */
static void pmem_priv_free(struct pmem_priv *p)
{
	if (!p)
		return;
	if (p->base)
		(void)pmem_unmap(p->base, p->len);
	if (p->fd >= 0)
		(void)close(p->fd);
	/* may be gone already if someone removed it: fine */
	tier_private_dir_remove(p->dir, p->lock_fd);
	free(p->dir);
	free(p);
}

/*
 * Create the slab file of @len bytes and reserve its blocks.  Where the
 * filesystem has no fallocate() the file stays sparse (p->reserved
 * false) and the SIGBUS guard is what stands between a full filesystem
 * and a crash.
 */
static int slab_create(struct pmem_priv *p, uint64_t len)
{
	int r;

	p->fd = tier_backing_open(p->dir);
	if (p->fd < 0)
		return p->fd;
	if (ftruncate(p->fd, (off_t)len) < 0)
		return -errno;
	do {
		r = fallocate(p->fd, 0, 0, (off_t)len);
	} while (r < 0 && errno == EINTR);
	if (r == 0) {
		p->reserved = true;
		return 0;
	}
	if (errno == EOPNOTSUPP || errno == ENOSYS)
		return 0;
	return -errno; /* ENOSPC: someone took the space since the check */
}

static int pmem_open(struct tier *t)
{
	uint64_t len = (uint64_t)t->vslots << t->extent_shift;
	struct pmem_priv *p;
	size_t mapped = 0;
	char self[64];
	int is_pmem = 0, r;

	if (len > SIZE_MAX)
		return -EFBIG;
	r = guard_install();
	if (r < 0)
		return r;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fd = -1;
	r = tier_backing_prepare(t, &p->dir, &p->lock_fd);
	if (r < 0)
		goto err_free;
	r = slab_create(p, len);
	if (r < 0)
		goto err_free;
	/*
	 * No flags and length 0: map the whole existing file.  The magic
	 * link reopens the unlinked slab (needs /proc, as libfuse does).
	 */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", p->fd);
	p->base = pmem_map_file(self, 0, 0, 0, &mapped, &is_pmem);
	if (!p->base) {
		r = -errno;
		goto err_free;
	}
	p->len = mapped;
	/* issue 11: users' data stays out of core dumps (best effort) */
	(void)madvise(p->base, mapped, MADV_DONTDUMP);
	if (mapped != len) {
		r = -EIO; /* someone changed the file under us */
		goto err_free;
	}
	p->is_pmem = is_pmem;
	t->priv = p;
	/* an unreserved (sparse) slab takes blocks as it goes, as a file
	 * tier's does */
	t->dev_shared = !p->reserved;
	return 0;

err_free:
	pmem_priv_free(p);
	return r;
}

static void pmem_close(struct tier *t)
{
	pmem_priv_free(t->priv);
	t->priv = NULL;
}

static ssize_t pmem_read(struct tier *t, uint32_t slot, uint64_t off, void *buf,
			 size_t len)
{
	int r = guarded(t->priv, GUARD_READ, slot_addr(t, slot, off), buf, len);

	return r < 0 ? r : (ssize_t)len;
}

static ssize_t pmem_write(struct tier *t, uint32_t slot, uint64_t off,
			  const void *buf, size_t len)
{
	/* GUARD_WRITE only reads @buf; the cast serves one shared helper */
	int r = guarded(t->priv, GUARD_WRITE, slot_addr(t, slot, off),
			(void *)buf, len);

	return r < 0 ? r : (ssize_t)len;
}

/* Punch [@at, @at+@len) of the slot out; 0 or -errno (-EOPNOTSUPP:
 * cannot here). */
static int slot_punch(struct tier *t, uint32_t slot, uint64_t at,
		      uint64_t len)
{
	struct pmem_priv *p = t->priv;
	off_t off = (off_t)(((uint64_t)slot << t->extent_shift) + at);
	int r;

	if (__atomic_load_n(&p->no_punch, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	do {
		r = fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      off, (off_t)len);
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		r = -errno;
		if (r == -EOPNOTSUPP || r == -ENOSYS) {
			__atomic_store_n(&p->no_punch, true, __ATOMIC_RELAXED);
			r = -EOPNOTSUPP;
		}
		return r;
	}
	/*
	 * Reserve the blocks again, so that a later store cannot hit a
	 * full filesystem.  Best effort: if it fails the slot is a hole,
	 * which reads as zeros all the same.
	 */
	if (p->reserved)
		(void)fallocate(p->fd, FALLOC_FL_KEEP_SIZE, off, (off_t)len);
	return 0;
}

static int pmem_discard(struct tier *t, uint32_t slot, uint64_t off,
			uint64_t len)
{
	if (slot_punch(t, slot, off, len) == 0)
		return 0;
	/* no hole punching here (or it failed): zero by storing */
	return guarded(t->priv, GUARD_ZERO, slot_addr(t, slot, off), NULL,
		       (size_t)len);
}

static int pmem_sync(struct tier *t)
{
	struct pmem_priv *p = t->priv;

	/* on pmem every write was drained already */
	if (p->is_pmem)
		return 0;
	if (pmem_msync(p->base, p->len) < 0)
		return -errno;
	return 0;
}

const struct tier_ops tier_pmem_ops = {
	.version = TIER_OPS_VERSION,
	.kind_name = "pmem",
	.caps = TIER_CAP_PATH | TIER_CAP_CSUM,
	.open = pmem_open,
	.close = pmem_close,
	.read = pmem_read,
	.write = pmem_write,
	.discard = pmem_discard,
	.sync = pmem_sync,
};
