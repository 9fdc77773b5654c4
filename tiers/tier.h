/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tier.h -- one storage tier (RAM, PMem, file) behind one interface:
 * what fs/ may call.  What a back end implements, and the helpers it
 * gets, are tier_ops.h's; the module's own files share tier_i.h
 * (tier.c: kinds, create, capacity; tier_io.c: data wrappers,
 * checksums, holes; tier_units.c: slots and units; tier_medium.c: the
 * medium's free space, tier_errno(); tier_backing.c: backing
 * directories).
 *
 * A tier is an array of equal-sized slots, one extent each, and a
 * capacity counted in allocation units.  This module owns slot
 * allocation and space accounting.
 *
 * Space follows the data (issue 12).  A slot is address space, not
 * space: an extent holds only the units (TIER_UNIT_MIN, 4 KiB, or
 * extent_size / TIER_UNITS_MAX when that is larger) that were written
 * or preallocated in it, marked in a per-slot bitmap, and the tier's
 * capacity is size / unit units.  So a 4 KiB file in a 1 MiB extent
 * holds 4 KiB, the tail and holes of a sparse extent hold nothing, and
 * the extent grows unit by unit as it is written (tier_charge()), never
 * moving within the tier.  Why not power-of-two slots of growing size:
 * that needs a copy at every doubling and a buddy allocator that can
 * fragment; sparse address space needs neither, because the media
 * below already allocate lazily -- anonymous memory by the page, a
 * sparse file by the block.  The price is address space: a sparse back
 * end (ops->sparse: RAM, file) gets a slot per unit of capacity, so
 * that a tier can be full of one-unit extents (t->vslots, at most
 * TIER_VIRT_MAX bytes of address space -- 4 TiB, under ext4's largest
 * file -- or what open could map, halving down to nslots; a tier of
 * 64 GiB with 1 MiB extents can then hold 4M extents, 16 KiB each on
 * average when it is full of them); the PMem back end,
 * which reserves its whole slab at open, gets one slot per extent of
 * capacity (vslots == nslots), so there small extents save no space.
 *
 * Accounting is exact: a unit is either free or held by exactly one
 * extent, so "used" returns to zero when every file is gone.  A back
 * end (tier_ram.c, tier_pmem.c, tier_file.c) only moves bytes to and
 * from a slot and gives back or reserves the space of a byte range; it
 * never allocates.
 *
 * What this is not: placement.  Which tier a new extent goes to is
 * decided in fs/ (policy), which takes a slot with tier_slot_get() on its
 * choice and charges the units it writes (tier_charge());
 * tier_slot_alloc(), a slot charged whole, is for the unit tests and
 * the back ends' own checks.
 *
 * Invariants:
 *  - a freshly allocated slot reads as zeros (back ends discard a slot
 *    when it is freed and start out zeroed);
 *  - slot numbers are < t->vslots;
 *  - a write goes only to units its slot holds (tier_charge() first);
 *  - every function returns 0 (or a byte count) on success and -errno on
 *    failure and logs nothing, except where a "cannot happen" check
 *    fires: NEVER() (fs/util/never.h) logs one error line per site, the
 *    first time, and the call fails with -EIO;
 *  - a back end's error is what a program may get: the wrappers pass it
 *    through tier_errno() (issue 16), so that a dead network tier's
 *    ENOTCONN, ESTALE, ... reach fs/ -- and the program -- as EIO, and
 *    the raw errno is kept for the log (tier_last_error()).
 *
 * Threads: the data functions (tier_read/tier_write/...) may be called
 * from many threads at once on distinct or identical slots; callers
 * serialise conflicting access to one slot themselves (the owning
 * inode's lock).  Slot allocation takes t->alloc_lock internally.
 */
#ifndef TIERFS_TIER_H
#define TIERFS_TIER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/stat.h>

#include "tier_watch.h" /* struct tier_watch_stats */

enum tier_kind {
	TIER_RAM,
	TIER_PMEM,
	TIER_FILE,
	_TIER_KIND_MAX,
	_TIER_KIND_INVALID = -1,
};

#define TIER_NAME_MAX 32 /* longest tier name, without the NUL */
#define TIER_MAX 8	/* tiers one mount may have */

struct tier;
struct tier_ops; /* tier_ops.h: what a back end implements */

/* The classes of back end calls the fault hook can fail (struct tier,
 * fault_ops; tests/unit/faulty_tier.h). */
enum tier_fault_op {
	TIER_FAULT_IO = 1u << 0,      /* read and write */
	TIER_FAULT_DISCARD = 1u << 1, /* discard, discard_run, discard_vec */
	TIER_FAULT_RESERVE = 1u << 2,
	TIER_FAULT_SYNC = 1u << 3,
};

/* The capabilities a back end declares (struct tier_ops, @caps). */
enum tier_cap {
	/* its storage lives under a directory, t->path: tier_create()
	 * requires one, and the space it shares with other tiers on that
	 * filesystem is checked (tier_check_shared_space()) */
	TIER_CAP_PATH = 1u << 0,
	/* its data can be changed or lost behind our back (a medium, a
	 * file someone else can write): every TIER_CSUM_BLOCK carries a
	 * checksum, verified on read */
	TIER_CAP_CSUM = 1u << 1,
	/* its storage is this process's anonymous memory: counted against
	 * the machine's RAM at mount (options_check_memory()) */
	TIER_CAP_MEMORY = 1u << 2,
};


/*
 * Per-tier counters.  Updated with relaxed atomics: each is a count on
 * its own, nobody needs two of them to agree at one instant, and a
 * reader sees each value torn-free.
 */
struct tier_stats {
	uint64_t read_bytes;
	uint64_t read_ops;
	uint64_t write_bytes;
	uint64_t write_ops;
	uint64_t io_errors;	/* failed back end calls, leaked slots */
	uint64_t csum_errors;	/* blocks whose checksum did not match */
	/* maintained by fs/ (placement and the migrator): */
	uint64_t promotions;	/* extents moved onto this tier from below */
	uint64_t promote_bytes;
	uint64_t demotions;	/* extents moved off this tier downwards */
	uint64_t demote_bytes;
	uint64_t spills;	/* new extents that found this tier full */
};

/*
 * Checksums.  Extents on PMem and file tiers carry one XXH3 checksum
 * (the low 32 bits of XXH3-64) per TIER_CSUM_BLOCK bytes, kept in memory
 * by slot.  Why per block and not per extent: a small write then costs
 * a read-modify-write of one 64 KiB block, not of a whole extent, while
 * the table stays small (64 bytes per 1 MiB extent, 256 MiB for 4 TiB).
 * tier_write() keeps them current, tier_read() verifies every block it
 * touches and fails with -EBADMSG (counted in csum_errors) on a mismatch,
 * so wrong data is never returned; callers tell the client EIO and the
 * log "checksum mismatch".  RAM needs none: nothing below us can
 * change it.
 */
#define TIER_CSUM_BLOCK_SHIFT 16
#define TIER_CSUM_BLOCK (1u << TIER_CSUM_BLOCK_SHIFT)

/* Allocation units and address space; see the top of this file. */
#define TIER_UNIT_MIN 4096u		/* smallest allocation unit */
#define TIER_UNITS_MAX 256u		/* most units per slot (bitmap) */
#define TIER_VIRT_MAX ((uint64_t)4 << 40) /* most address space, bytes */
#define TIER_CHUNK_SHIFT 10		/* slots per lazily made table chunk */
#define TIER_CHUNK_SLOTS (1u << TIER_CHUNK_SHIFT)

struct tier {
	/* Immutable after tier_create(). */
	char name[TIER_NAME_MAX + 1];
	enum tier_kind kind;
	char *path;		  /* backing directory; NULL for RAM */
	uint64_t size;		  /* configured size in bytes */
	uint32_t extent_size;	  /* bytes per slot, a power of two */
	unsigned extent_shift;	  /* log2(extent_size) */
	uint32_t nslots;	  /* size / extent_size: capacity in extents */
	uint32_t vslots;	  /* slots of address space, >= nslots;
				   * set before ->open, which may lower it */
	unsigned unit_shift;	  /* log2 of the allocation unit */
	uint32_t units_per_slot;  /* extent_size >> unit_shift */
	unsigned held_words;	  /* 64-bit bitmap words per slot */
	unsigned held_stride;	  /* words per slot in a chunk of @held:
				   * held_words, and one more (the reserved
				   * prefix, tier_charge()) with
				   * ops->reserve_ahead */
	uint64_t cap_units;	  /* size >> unit_shift */
	unsigned index;		  /* position in the stack, 0 = fastest */
	const struct tier_ops *ops;
	void *priv;		  /* back end state, owned by ops */

	/*
	 * Slot allocator.  Free slots are a LIFO stack of numbers that were
	 * used before, plus a high-water mark below which every slot has
	 * been handed out once: alloc pops the stack, else takes hwm++.
	 */
	pthread_mutex_t alloc_lock; /* protects the fields below */
	uint32_t *free_stack;	    /* alloc_lock; capacity vslots */
	uint32_t nfree_stack;	    /* alloc_lock */
	uint32_t hwm;		    /* alloc_lock */
	uint32_t nused;		    /* alloc_lock; slots taken; read racily */
	uint64_t used_units;	    /* alloc_lock; units held; read racily */
	/*
	 * The units the tier may hold now: cap_units, unless the memory
	 * follower (fs/memwatch.c) lowered it because the machine or the
	 * daemon's cgroup is short of memory.  Relaxed atomic, written by
	 * tier_set_limit() only.  New units are refused past it (a charge
	 * fails with -ENOSPC, so placement spills to the next tier) and the
	 * watermarks are taken against it; units already held stay.
	 */
	uint64_t limit_units;
	/*
	 * Which units each slot holds: held_words words per slot (at a
	 * stride of held_stride), in chunks of TIER_CHUNK_SLOTS slots allocated when a slot of the
	 * chunk first holds a unit (a tier costs no bitmap memory until
	 * data arrives).  The chunk table has one pointer per chunk.  A
	 * slot's words change only under alloc_lock by the slot's owner;
	 * the owner may read them without the lock.
	 */
	uint64_t **held;
	uint32_t nleaked;	    /* alloc_lock; slots lost to failed
				     * discards, neither used nor free */

	struct tier_stats stats; /* relaxed atomics, see above */
	/*
	 * True while the medium under the tier is full below the tier's
	 * configured size: set when a slot's reserve fails with ENOSPC,
	 * cleared once statvfs() shows more room than there was then (at
	 * most TIER_STATVFS_MS after it came back) or by the next reserve
	 * that succeeds.  Relaxed atomic; read with tier_medium_full().
	 * On a dev_shared tier, while it is set, tier_free_slots() is 0
	 * and tier_slot_get() and tier_charge() fail at once with -ENOSPC,
	 * so that placement and the migrator stop trying (and stop
	 * counting io_errors) until space returns.  A tier that is not
	 * dev_shared has no statvfs() to tell when space returned: there
	 * it only records the failure, and every charge tries the medium
	 * again (the next reserve that succeeds clears it).
	 */
	bool medium_full;

	/*
	 * Space of the filesystem under the tier.  @dev_shared: the back
	 * end takes blocks from that filesystem as slots are allocated (the
	 * sparse file tier; a pmem tier reserves all of them at open), so
	 * its free space is the smaller of the free slots and what
	 * statvfs() says is free there; set by ->open, immutable after.
	 * @dev: st_dev of the backing directory (tiers on one filesystem
	 * share its free space); immutable after tier_create().  The rest
	 * are relaxed atomics: @dev_avail, bytes free there at
	 * @dev_checked_ms (CLOCK_MONOTONIC, 0: never), and @full_avail,
	 * what was free when the medium filled.
	 */
	bool dev_shared;
	dev_t dev;
	uint64_t dev_avail;
	int64_t dev_checked_ms;
	uint64_t full_avail;

	/*
	 * Set by ->open for tier_create()'s caller to log: stale private
	 * directories of dead mounts that open removed from @path, and the
	 * bytes of backing data that freed.  Immutable after tier_create().
	 */
	unsigned swept_dirs;
	uint64_t swept_bytes;

	/*
	 * Block checksums, csum_per_slot per slot, in chunks of
	 * TIER_CHUNK_SLOTS slots allocated as data arrives (a missing chunk
	 * means every block of its slots is all zeros: csum_zero); NULL
	 * when the kind needs none.  A chunk pointer is installed once with
	 * an atomic compare-and-swap and never changes until tier_free().
	 * An entry is read and written only by whoever holds the slot's
	 * owner (the inode's data lock), like the slot's data.
	 */
	uint32_t **csum;
	unsigned csum_shift;	 /* log2 of the block size */
	unsigned csum_per_slot;	 /* blocks per slot */
	uint32_t csum_zero;	 /* checksum of an all-zero block */

	/*
	 * Test hook (tests/unit/faulty_tier.c): when non-zero, the Nth
	 * following back end call of a class in @fault_ops (enum
	 * tier_fault_op; 0 means TIER_FAULT_IO) fails with @fault_errno,
	 * counting down.  Relaxed atomics; zero in production.
	 */
	int fault_countdown;
	int fault_errno;
	unsigned fault_ops;

	/*
	 * Native files (issue 33, below): the units their backing files
	 * hold, counted with the slots' units against the tier's limit:
	 * tracked from fs/'s accounts (tier_native_account()), or read
	 * from the back end (@native_used: the RAM tier's tmpfs, which the
	 * kernel writes behind our back) each time.  Relaxed atomic.
	 */
	uint64_t native_units;
	uint64_t native_acct; /* bytes fs/ accounted (no @native_used) */

	/*
	 * The calls inside the back end, bounded and timed (issue 32,
	 * tier_watch.h); NULL for a tier held in memory.  Owned by
	 * tier_watch.c.
	 */
	struct tier_watch *watch;

	/*
	 * The back end's own -errno of its latest failed call, before
	 * tier_errno() mapped it (-ENOTCONN when the filesystem under a
	 * file tier lost its server), 0 before any: for the log line that
	 * says why a tier failed.  Relaxed atomic; two failures racing
	 * leave one of them, which is as good for the log.
	 */
	int last_err;
};

/**
 * tier_kind_parse() - "ram", "pmem" or "file" to enum tier_kind
 * Return: the kind, or _TIER_KIND_INVALID.
 */
enum tier_kind tier_kind_parse(const char *s);
const char *tier_kind_name(enum tier_kind kind);
/* The TIER_CAP_* flags the back end of @kind declares; 0 for an unknown
 * kind or one this build lacks (pmem with -Dpmem=disabled). */
unsigned tier_kind_caps(enum tier_kind kind);

/**
 * tier_create() - make a tier and open its back end
 * @name:        tier name (1..TIER_NAME_MAX chars of [A-Za-z0-9_-])
 * @kind:        back end
 * @path:        backing directory (ignored for TIER_RAM; may be NULL)
 * @size:        capacity in bytes
 * @extent_size: slot size, a power of two >= 4096
 * @ret_tier:    on success, the tier; the caller frees it with tier_free()
 *
 * For TIER_PMEM and TIER_FILE the back end creates a private (0700)
 * directory under @path that tier_free() removes again; the backing data
 * itself is an unlinked file (tier_backing_open()), freed by the kernel
 * when the process ends however it ends.  Stale directories of dead
 * mounts in @path are removed first (tier_sweep_stale(); t->swept_*).
 *
 * Return: 0; -EINVAL for a bad name, kind or a size below one extent;
 * -EFBIG for more than 2^32 slots;
 * -EOPNOTSUPP for a kind this build lacks; or the back end's -errno
 * (-ENOENT missing path, -EACCES unwritable, -ENOSPC size beyond the
 * free space there, ...).
 */
int tier_create(const char *name, enum tier_kind kind, const char *path,
		uint64_t size, uint32_t extent_size, struct tier **ret_tier);

/**
 * tier_free() - close the back end, remove backing data, free @t
 * Accepts NULL.  Return: NULL.
 */
struct tier *tier_free(struct tier *t);

/**
 * tier_bulk_begin(), tier_bulk_end() - the calling thread's reads and
 * writes in between are a bulk copy between tiers (the migrator's):
 * data leaving one tier for another, which nobody reads again from the
 * copy being read, or soon from the one being written.  A back end that
 * can keep such I/O out of the medium's page cache does (the file tier:
 * O_DIRECT for requests aligned to 4 KiB), so a promotion leaves no
 * third copy of what it moves into RAM, and a demotion frees memory
 * instead of filling the page cache with what it demotes.  Also a
 * program's reads and writes under --page-cache only, whose bytes the
 * mount's page cache holds (fs/data_i.h).  A request aligned in the file
 * but not in memory goes through one of the tier's aligned pool
 * buffers (tier_file.c).  A hint only: data and errors are the same either way.
 * Does not nest.
 * tier_bulk() (tier_ops.h) says whether the calling thread is inside.
 */
void tier_bulk_begin(void);
void tier_bulk_end(void);

/**
 * tier_slot_get() - take a free slot that holds no unit yet
 * The caller then charges what it writes (tier_charge()).
 * Return: 0 and *ret_slot; -ENOSPC when no slot is free, no unit is
 * free, or the medium is known to be full.
 */
int tier_slot_get(struct tier *t, uint32_t *ret_slot);

/**
 * tier_slot_alloc() - tier_slot_get() and tier_charge() of the whole
 * slot: a slot holding a full extent, its space reserved on the medium
 * Return: 0 and *ret_slot; -ENOSPC when no slot or not an extent's
 * worth of units is free, or the medium has no room left for it (then
 * tier_medium_full() tells which); or the back end's -errno.
 */
int tier_slot_alloc(struct tier *t, uint32_t *ret_slot);

/* The allocation unit in bytes. */
static inline uint64_t tier_unit(const struct tier *t)
{
	return (uint64_t)1 << t->unit_shift;
}

/**
 * tier_uncharged() - bytes that tier_charge() of [@off, @off+@len) of
 * @slot would add: the units touching the range that @slot does not
 * hold yet.  Caller owns the slot.
 */
uint64_t tier_uncharged(struct tier *t, uint32_t slot, uint64_t off,
			uint64_t len);

/**
 * tier_charge() - make @slot hold every unit touching [@off, @off+@len)
 * The new units count against the tier's capacity and are reserved on
 * the medium (ops->reserve); they read as zeros.  Caller owns the slot.
 * Return: 0 and *@ret_added (may be NULL) = bytes newly held; -ENOSPC
 * when the tier has fewer free units than needed or the medium is full
 * (tier_medium_full()); -ENOMEM; or the back end's -errno.  On failure
 * nothing changed.
 */
int tier_charge(struct tier *t, uint32_t slot, uint64_t off, uint64_t len,
		uint64_t *ret_added);

/**
 * tier_punch() - make [@off, @off+@len) of @slot read as zeros, giving
 * back the units wholly inside it (discarded on the medium, no longer
 * counted) and writing zeros over the held part of units it covers only
 * in part.  Caller owns the slot.
 * Return: 0 and *@ret_freed (may be NULL) = bytes given back, or a
 * tier's -errno (-EBADMSG: a block around the range failed its
 * checksum) with the slot's units as they were (zeros written before
 * the failure stay).
 */
int tier_punch(struct tier *t, uint32_t slot, uint64_t off, uint64_t len,
	       uint64_t *ret_freed);

/* Bytes @slot holds (units x unit size).  Caller owns the slot. */
uint64_t tier_held(struct tier *t, uint32_t slot);

/**
 * tier_held_next() - the first run of held units of @slot at or after
 * byte @from: true and [*ret_off, *ret_off + *ret_len), or false when
 * there is none.  Caller owns the slot.
 */
bool tier_held_next(struct tier *t, uint32_t slot, uint64_t from,
		    uint64_t *ret_off, uint64_t *ret_len);

/* True while the medium is full below the tier's configured size: the
 * tier's free count promises room that is not there. */
static inline bool tier_medium_full(const struct tier *t)
{
	return __atomic_load_n(&t->medium_full, __ATOMIC_RELAXED);
}

/**
 * tier_slot_free() - discard @slot's data, give back every unit it
 * holds and return it to the free pool
 * The slot reads as zeros when next allocated.  If the back end cannot
 * discard, the units the slot holds are zeroed by writing (the others
 * read as zeros already); if that fails too the slot is leaked (counted
 * in stats.io_errors) rather than handed out dirty.
 */
void tier_slot_free(struct tier *t, uint32_t slot);

/**
 * tier_slot_free_run() - tier_slot_free() of slots @first..@first+@n-1,
 * with one discard of the whole run where the back end has @discard_run
 * (one hole punch on a file tier), and alloc_lock taken once.
 */
void tier_slot_free_run(struct tier *t, uint32_t first, uint32_t n);

/**
 * tier_slot_free_many() - tier_slot_free() of the @n slots @slots,
 * sorted ascending and distinct: where the back end has @discard_vec,
 * what each slot holds is discarded in one call (a RAM tier's many small
 * slots with one TLB flush, not one each); else runs of consecutive
 * slots go through tier_slot_free_run().  alloc_lock is taken once.
 */
void tier_slot_free_many(struct tier *t, const uint32_t *slots, unsigned n);

/*
 * Slots in use and slots free; racy snapshots, for stats and statfs.
 * Free slots are the configured ones not in use, capped for a
 * dev_shared tier by the free space of the filesystem under it (a
 * statvfs() cached for TIER_STATVFS_MS), and 0 while
 * tier_medium_full().
 */
#define TIER_STATVFS_MS 200
uint32_t tier_used_slots(const struct tier *t);
uint32_t tier_free_slots(struct tier *t);

/*
 * The same in bytes: what the tier's extents hold (to the allocation
 * unit) and what is free for new data, capped as tier_free_slots() is.
 * Watermarks, statfs and stats use these: an extent does not always
 * hold extent_size bytes.
 */
uint64_t tier_used_bytes(struct tier *t);
uint64_t tier_avail_bytes(struct tier *t);

/*
 * The bytes the tier may hold now (struct tier, limit_units): its
 * configured size unless tier_set_limit() lowered it.  The migrator's
 * watermarks are percentages of this.
 */
static inline uint64_t tier_limit_bytes(const struct tier *t)
{
	return __atomic_load_n(&t->limit_units, __ATOMIC_RELAXED)
	       << t->unit_shift;
}

/*
 * tier_set_limit() - let @t hold at most @bytes from now on (rounded
 * down to the allocation unit, capped by the configured size).  Lowering
 * it below what the tier holds frees nothing by itself: new units are
 * refused, and the migrator demotes down to the new watermarks.
 */
void tier_set_limit(struct tier *t, uint64_t bytes);

/**
 * tier_free_bytes() - free bytes of the tiers in @mask of @tiers[0..n-1]
 * As the sum of tier_free_slots() * extent size, except that tiers on
 * one filesystem share its free space: a group of dev_shared tiers with
 * one st_dev counts at most what that filesystem has free, once.
 */
uint64_t tier_free_bytes(struct tier *const *tiers, unsigned n,
			 uint32_t mask);

/**
 * tier_check_shared_space() - do the dev_shared tiers on each filesystem
 * fit in it together?  Each tier's own size was checked at its open;
 * this checks the sum per filesystem (st_dev) against what is free there
 * now, after every tier reserved what it reserves at open.
 * Return: 0, or -ENOSPC with one line naming the tiers, the sum and the
 * free space in @why (@len bytes).
 */
int tier_check_shared_space(struct tier *const *tiers, unsigned n, char *why,
			    size_t len);

/**
 * tier_path_within() - is @path @dir itself or below it?
 * Compares by inode (st_dev, st_ino) each of @path's ancestors, after
 * resolving symbolic links where @path exists, lexically where it does
 * not.  For the rule that no tier lies at or under the mount point.
 * Return: true if so; false if not or @dir cannot be looked at.
 */
bool tier_path_within(const char *path, const char *dir);

/**
 * tier_errno() - the errno a program gets for a back end's failure @err
 * (a -errno).  The one place where a tier's errno becomes one a program
 * can act on (issue 16, item 7): -ENOSPC stays (no room); -EDQUOT, the
 * quota of the filesystem under a file tier (Lustre, NFS), becomes
 * -ENOSPC, a full medium for tierfs and never a tierfs quota; -ENOMEM
 * stays (the daemon's memory, not the tier's data); -EIO stays; every
 * other errno -- ENOTCONN, ECONNABORTED, ESTALE, EHOSTDOWN, ENXIO,
 * ENODEV, EROFS, EFBIG, EBADMSG (a checksum mismatch), ... -- means the
 * tier could not give or keep the data, and becomes -EIO.
 * Return: the mapped -errno; 0 or a positive value unchanged.
 */
int tier_errno(int err);

/**
 * tier_last_error() - the back end's own -errno of @t's latest failed
 * call, before tier_errno() (0: none yet), for a log line; racy.
 */
int tier_last_error(const struct tier *t);

/*
 * Data wrappers: bounds asserts, counters and the fault hook live here
 * (SQLite's sqlite3OsRead shape).  Returns as the matching ops method,
 * except that a back end's -errno is mapped by tier_errno() (and
 * counted in io_errors); a checksum mismatch is -EBADMSG, which the
 * caller logs as such before it maps it.  A tier_read() that fails
 * never leaves the bytes that failed their checksum in @buf: the range
 * holds zeros then, or what it held before.
 */
ssize_t tier_read(struct tier *t, uint32_t slot, uint64_t off, void *buf,
		  size_t len);
ssize_t tier_write(struct tier *t, uint32_t slot, uint64_t off,
		   const void *buf, size_t len);
/*
 * tier_write_new() - tier_write() into a range of @slot that nobody has
 * written since the slot was taken (tier_slot_get()), so that it reads
 * as zeros: the migrator's copy into its new slot.  The checksum of a
 * block the range covers in part is updated without reading back the
 * pieces it overwrites whole (their old content is known: zeros), which
 * is a read per small file saved on a drain to a file tier.  Calling it
 * for a range that was written makes those blocks read -EBADMSG.
 */
ssize_t tier_write_new(struct tier *t, uint32_t slot, uint64_t off,
		       const void *buf, size_t len);
/**
 * tier_write_fd() - tier_write() of @len bytes read from the pipe @fd
 * straight into the tier's memory: one copy, where the tier lends its
 * memory as for tier_read_direct() (RAM) and keeps no checksums.
 * Return: @len; -EOPNOTSUPP, having read nothing, where the tier cannot
 * (read the bytes into memory and use tier_write()); -EIO when @fd
 * failed or ended early: part of the bytes was read, the range holds a
 * mix of old and new bytes, and @fd's position is unknown.
 */
ssize_t tier_write_fd(struct tier *t, uint32_t slot, uint64_t off, int fd,
		      size_t len);
/**
 * tier_write_direct() - the address to write @len bytes at @off of
 * @slot into directly, where the tier lends its memory as for
 * tier_read_direct() (RAM) and keeps no checksums; NULL otherwise (use
 * tier_write()).  Counted as a write of @len bytes.  For a copy into a
 * slot nobody else sees yet (the migrator's destination): the caller
 * fills the range itself, e.g. by reading the source straight into it,
 * which saves a copy through a buffer.  The range must be held
 * (tier_charge()).  Caller owns the slot.
 */
void *tier_write_direct(struct tier *t, uint32_t slot, uint64_t off,
			size_t len);
/* Zero @len bytes at @off of @slot, all held (writes zeros: one write,
 * all or nothing, up to 1 GiB; in 64 KiB steps beyond). */
int tier_zero(struct tier *t, uint32_t slot, uint64_t off, size_t len);
/* Flush written data to the medium.  Return: 0 or a tier_errno(). */
int tier_sync(struct tier *t);

/**
 * tier_read_direct() - zero-copy read: the address of @len bytes at @off
 * of @slot, counted like a tier_read(), or NULL when the tier cannot
 * lend its memory (then use tier_read()).  The caller must keep the slot
 * from being freed or rewritten until it is done with the bytes.
 */
const void *tier_read_direct(struct tier *t, uint32_t slot, uint64_t off,
			     size_t len);

/*
 * The watch (issue 32, tier_watch.h): the calls inside a tier's back
 * end are bounded (16 at once, 8 of one user) and timed.  A tier with
 * calls inside and none back for its timeout is stalled: its data fails
 * with EIO (the back end's cause: -ETIMEDOUT) until a call comes back.
 * Tiers held in memory have no watch: never stalled, no counts.
 */
/* @t fails its data once it answered nothing for @ms (0: never). */
void tier_set_timeout(struct tier *t, uint32_t ms);
/* Is @t stalled now?  A snapshot; false for a tier without a watch. */
bool tier_stalled(struct tier *t);
void tier_get_watch_stats(struct tier *t, struct tier_watch_stats *ret);

/*
 * Native files (issue 33, fs/native.h): a file that lives whole on one
 * tier may keep its bytes in a backing file of its own there, at the
 * file's own offsets, which the kernel reads and writes itself (FUSE
 * passthrough).  A tier whose back end can hold them hands out new,
 * empty, nameless backing files (the kernel frees one with its last
 * descriptor, however the daemon ends): the RAM tier in a tmpfs of its
 * own, of the tier's size and attached nowhere (full: ENOSPC at the
 * write(2) itself), the file tier in its private directory.  Their bytes
 * count against the tier's size with the slots' (tier_used_bytes()).
 */
bool tier_can_native(const struct tier *t);

/**
 * tier_native_new() - a new, empty backing file on @t
 * Return: its descriptor (O_RDWR, close-on-exec), or -errno (-EOPNOTSUPP
 * for a tier that holds none, -ENOSPC when the tier is full).
 */
int tier_native_new(struct tier *t);

/*
 * tier_native_account() - a native file on @t now holds @delta bytes
 * more (less, when negative): for a tier whose back end does not see
 * them (no @native_used), fs/ tells it what their backing files hold
 * (st_blocks).  On the RAM tier it does nothing (the back end counts).
 */
void tier_native_account(struct tier *t, int64_t delta);

/* fstat() of backing file @fd of @t, bounded as the tier's calls are
 * (tier_watch.h).  Return: 0, -ETIMEDOUT (stalled), or -errno. */
int tier_native_stat(struct tier *t, int fd, struct stat *ret);

/* The bytes @t's native files hold now (tier_native_units()).  */
uint64_t tier_native_bytes(struct tier *t);

static inline bool tier_has_csum(const struct tier *t)
{
	return t->csum != NULL;
}

#endif /* TIERFS_TIER_H */
