/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tier.h -- one storage tier (RAM, PMem, file) behind one interface.
 *
 * A tier is a fixed array of equal-sized slots, one extent each.  This
 * module owns slot allocation and space accounting (exact: a slot is
 * either free or held by exactly one extent, so "used" returns to zero
 * when every file is gone and the allocator cannot fragment).  A back end
 * (tier_ram.c, tier_pmem.c, tier_file.c) only moves bytes to and from a
 * slot; it never allocates.
 *
 * What this is not: placement.  Which tier a new extent goes to is
 * decided in fs/ (policy), which calls tier_slot_alloc() on its choice.
 *
 * Invariants:
 *  - a freshly allocated slot reads as zeros (back ends discard a slot
 *    when it is freed and start out zeroed);
 *  - slot numbers are < t->nslots;
 *  - every function returns 0 (or a byte count) on success and -errno on
 *    failure, and logs nothing above debug level.
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

/*
 * struct tier_ops - what a back end implements.
 *
 * @version:  TIER_OPS_VERSION; tier_create() refuses other values.
 * @open:     create the backing storage for t->nslots slots of
 *            t->extent_size bytes at t->path (NULL for RAM); returns 0 or
 *            -errno.  May set t->priv.  Must leave the storage zeroed.
 *            On failure it releases what it made itself: @close is not
 *            called for a tier whose @open failed.
 * @close:    release everything @open made and remove the backing data.
 * @read:     read @len bytes at byte @off of @slot into @buf; returns
 *            @len or -errno (a back end loops over short transfers).
 * @write:    write @len bytes from @buf at byte @off of @slot; returns
 *            @len or -errno.  Nothing is durable before @sync, which is
 *            fine: this is scratch.
 * @discard:  make all of @slot read as zeros and give its backing space
 *            back where the medium allows; returns 0 or -errno.
 * @sync:     flush written data to the medium; returns 0 or -errno.
 * @reserve:  optional: make sure writes into @slot, just allocated, will
 *            not fail for want of space on the medium; returns 0 or
 *            -errno (-ENOSPC: the medium is full below the tier's size,
 *            and tier_slot_alloc() fails with it).
 * @direct:   optional: the address of byte @off of @slot when the tier
 *            lives in this process's memory and needs no checksum, so a
 *            reader may hand it to the kernel without a copy; NULL
 *            otherwise.  The address stays valid while the slot is held.
 */
struct tier_ops {
	unsigned version;
	const char *kind_name;
	int (*open)(struct tier *t);
	void (*close)(struct tier *t);
	ssize_t (*read)(struct tier *t, uint32_t slot, uint64_t off,
			void *buf, size_t len);
	ssize_t (*write)(struct tier *t, uint32_t slot, uint64_t off,
			 const void *buf, size_t len);
	int (*discard)(struct tier *t, uint32_t slot);
	int (*sync)(struct tier *t);
	int (*reserve)(struct tier *t, uint32_t slot);
	void *(*direct)(struct tier *t, uint32_t slot, uint64_t off);
};

#define TIER_OPS_VERSION 1

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
 * touches and fails with -EIO (counted in csum_errors) on a mismatch, so
 * wrong data is never returned.  RAM needs none: nothing below us can
 * change it.
 */
#define TIER_CSUM_BLOCK_SHIFT 16
#define TIER_CSUM_BLOCK (1u << TIER_CSUM_BLOCK_SHIFT)

struct tier {
	/* Immutable after tier_create(). */
	char name[TIER_NAME_MAX + 1];
	enum tier_kind kind;
	char *path;		  /* backing directory; NULL for RAM */
	uint64_t size;		  /* configured size in bytes */
	uint32_t extent_size;	  /* bytes per slot, a power of two */
	unsigned extent_shift;	  /* log2(extent_size) */
	uint32_t nslots;	  /* size / extent_size */
	unsigned index;		  /* position in the stack, 0 = fastest */
	const struct tier_ops *ops;
	void *priv;		  /* back end state, owned by ops */

	/*
	 * Slot allocator.  Free slots are a LIFO stack of numbers that were
	 * used before, plus a high-water mark below which every slot has
	 * been handed out once: alloc pops the stack, else takes hwm++.
	 */
	pthread_mutex_t alloc_lock; /* protects the fields below */
	uint32_t *free_stack;	    /* alloc_lock; capacity nslots */
	uint32_t nfree_stack;	    /* alloc_lock */
	uint32_t hwm;		    /* alloc_lock */
	uint32_t nused;		    /* alloc_lock; read racily by stats */
	uint32_t nleaked;	    /* alloc_lock; slots lost to failed
				     * discards, neither used nor free */

	struct tier_stats stats; /* relaxed atomics, see above */

	/*
	 * Block checksums, csum_per_slot per slot; NULL when the kind needs
	 * none.  An entry is read and written only by whoever holds the
	 * slot's owner (the inode's data lock), like the slot's data.
	 */
	uint32_t *csum;
	unsigned csum_shift;	 /* log2 of the block size */
	unsigned csum_per_slot;	 /* blocks per slot */
	uint32_t csum_zero;	 /* checksum of an all-zero block */

	/*
	 * Test hook (tests/unit/faulty_tier.c): when non-zero, the Nth
	 * following data call (counting down) fails with @fault_errno.
	 * Relaxed atomic; zero in production.
	 */
	int fault_countdown;
	int fault_errno;
};

/**
 * tier_kind_parse() - "ram", "pmem" or "file" to enum tier_kind
 * Return: the kind, or _TIER_KIND_INVALID.
 */
enum tier_kind tier_kind_parse(const char *s);
const char *tier_kind_name(enum tier_kind kind);

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
 * directory under @path that tier_free() removes again.
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
 * tier_slot_alloc() - take a free slot, its space reserved on the medium
 * Return: 0 and *ret_slot; -ENOSPC when every slot is in use or the
 * medium has no room left for it; or the back end's -errno.
 */
int tier_slot_alloc(struct tier *t, uint32_t *ret_slot);

/**
 * tier_slot_free() - discard @slot's data and return it to the free pool
 * The slot reads as zeros when next allocated.  If the back end cannot
 * discard, the slot is zeroed by writing; if that fails too the slot is
 * leaked (counted in stats.io_errors) rather than handed out dirty.
 */
void tier_slot_free(struct tier *t, uint32_t slot);

/* Slots in use and slots free; racy snapshots, for stats and statfs. */
uint32_t tier_used_slots(const struct tier *t);
uint32_t tier_free_slots(const struct tier *t);

/*
 * Data wrappers: bounds asserts, counters and the fault hook live here
 * (SQLite's sqlite3OsRead shape).  Returns as the matching ops method.
 */
ssize_t tier_read(struct tier *t, uint32_t slot, uint64_t off, void *buf,
		  size_t len);
ssize_t tier_write(struct tier *t, uint32_t slot, uint64_t off,
		   const void *buf, size_t len);
/* Zero @len bytes at @off of @slot (writes zeros; used for partial
 * truncates and hole punches inside an extent). */
int tier_zero(struct tier *t, uint32_t slot, uint64_t off, size_t len);
int tier_sync(struct tier *t);

/**
 * tier_read_direct() - zero-copy read: the address of @len bytes at @off
 * of @slot, counted like a tier_read(), or NULL when the tier cannot
 * lend its memory (then use tier_read()).  The caller must keep the slot
 * from being freed or rewritten until it is done with the bytes.
 */
const void *tier_read_direct(struct tier *t, uint32_t slot, uint64_t off,
			     size_t len);

/**
 * tier_verify_slot() - read @slot back and check every block's checksum
 * Return: 0, -EIO for a mismatch (counted), or the back end's -errno.
 * For scrubbing; the caller holds the slot's owner as for tier_read().
 */
int tier_verify_slot(struct tier *t, uint32_t slot);

static inline bool tier_has_csum(const struct tier *t)
{
	return t->csum != NULL;
}

/*
 * Helpers for back ends that keep their data under a directory (pmem,
 * file).  Each returns 0 or -errno.
 *
 * tier_path_check() - @path is a directory that access() says we may
 * write: -ENOENT, -ENOTDIR, -EACCES or -EROFS otherwise.
 * tier_space_check() - the filesystem holding @path has @size bytes
 * free: -ENOSPC otherwise.
 * tier_private_dir_create() - make @path/tierfs-@name-XXXXXX, mode 0700
 * whatever the umask.  This is also the real create test (access() says
 * yes to root on /proc, or on NFS with root squashing; such refusals,
 * EPERM or ENOENT, become -EACCES).  On success the caller owns *ret_dir
 * and frees it with free().
 */
int tier_path_check(const char *path);
int tier_space_check(const char *path, uint64_t size);
int tier_private_dir_create(const char *path, const char *name,
			    char **ret_dir);

/* Back ends, one per kind (NULL where this build lacks one). */
extern const struct tier_ops tier_ram_ops;
extern const struct tier_ops tier_pmem_ops;
extern const struct tier_ops tier_file_ops;

#endif /* TIERFS_TIER_H */
