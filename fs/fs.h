/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fs.h -- the mount: struct tierfs (the tier stack, the root, the inode
 * table, the kernel features in force), the one struct every module of
 * the daemon includes.  Its setup and teardown are mount.h's, its
 * counters as text stats.h's.  Everything below ops.c returns 0 (or a count) on success
 * and -errno on failure, and never calls fuse_reply_*.
 *
 * Lock order (outermost first):
 *
 *   fs->ns_lock  ->  inode->i_dlock  ->  inode->i_lock  ->  fs->itab_lock
 *                ->  tier->alloc_lock
 *
 * - fs->ns_lock (rwlock) guards the namespace: every directory's entries,
 *   every dir's d_parent, and the link between names and inodes.  Lookup
 *   and readdir take it shared; create, link, unlink, rename take it
 *   exclusive (namespace.c).  Data I/O never takes it, so files are read
 *   and written in parallel.
 * - inode->i_dlock (rwlock) guards a regular file's extent map and data;
 *   reads take it shared, writes/truncate/fallocate exclusive (data*.c).
 * - inode->i_lock (mutex) guards attributes (mode, uid, gid, times, rdev)
 *   and xattrs.  i_size is written with i_dlock exclusive *and* i_lock
 *   held, so either lock alone is enough to read it.
 * - fs->itab_lock (mutex) guards the list of live inodes and every
 *   inode's lifetime counts (i_nlink, i_nlookup, i_nref).  An inode is
 *   freed by whoever drops the last of them to zero, under this lock, so
 *   exactly one thread frees it (inode.h).
 * - Never hold any of these while calling fuse_reply_*(): the reply may
 *   be the kernel's last reference (passthrough_hp's rule).  The one
 *   exception, the zero-copy read, is explained in ops.c.
 *
 * The modules of the daemon form a DAG, checked in CI (fs/README.md
 * "Layout of the source", tests/modgraph.py): fs.h is at the bottom,
 * below inode.h, so it holds struct tfs_inode by pointer only, and no
 * code lives in an fs.c that could call up.
 */
#ifndef TIERFS_FS_H
#define TIERFS_FS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "heat.h"
#include "options.h"
#include "policy.h"

struct tier;
struct migrator;
struct stat;
struct memwatch;
struct throttle;
struct tfs_inode;

/* What a lending tier (fs->lending) holds at most: new data goes to the
 * next tier beyond it, as the kernel writes it back (data_extent.c), an
 * admin's move into it stops there (ctl_action.c), and the migrator
 * hands down what is placed there beyond it (migrate.c).  The mount's
 * value is fs->lend_cap. */
#define TIERFS_LEND_CAP (64u << 20)

/* Largest request we ask the kernel for (max_write, readahead). */
#define TIERFS_MAX_IO (1u << 20)

/* Threads the /dev/fuse loop may grow to (main.c); the io_uring queues
 * have their own bound (kernel_uring.c). */
#define TIERFS_MAX_THREADS 256

struct tierfs {
	/* Immutable after tierfs_create(). */
	struct tierfs_options opt;
	struct tier *tiers[TIER_MAX_CONF];
	unsigned ntiers;
	uint32_t extent_size;
	unsigned extent_shift;
	struct tfs_inode *root;
	/*
	 * Frees what an inode holds in the modules above inode.c (its data,
	 * attributes, quota reference); inode_free() calls it first.  Set by
	 * the composition root (mount.c), as the kernel's super_operations
	 * evict_inode is by a filesystem: inode.c stays below the modules
	 * whose contents it frees.  NULL: nothing above to free.
	 */
	void (*evict)(struct tierfs *fs, struct tfs_inode *inode);
	/*
	 * Puts a native file's size, blocks and times, as its backing file
	 * has them now, into @st (native.h): inode_fill_stat() calls it for
	 * every regular file with native state, so that no reply carries a
	 * size older than the kernel's own writes (the kernel takes the
	 * attributes of every LOOKUP and READDIRPLUS entry).  i_lock held.
	 * Set by mount.c; NULL: no native files.
	 */
	void (*stat_native)(struct tfs_inode *inode, struct stat *st);
	/*
	 * Set by tierfs_free() when no request can come any more and the
	 * tiers are gone: what is left of each inode is freed without
	 * giving its extents back one by one (data_release()).
	 */
	bool unmounting;
	struct timespec start;	   /* CLOCK_MONOTONIC at mount; for ticks */
	/*
	 * --test-clock (opt.test_clock, tests only): the time since the
	 * mount in ns that the heat ticks and the migrator's schedule read
	 * instead of CLOCK_MONOTONIC.  It stands still until root's
	 * user.tierfs.ctl.clock moves it on (ctl_clock()); a release add
	 * there, acquire loads here (tierfs_test_ns()).  0 and unused
	 * without the option.
	 */
	uint64_t test_clock_ns;
	uint32_t half_life_ticks;  /* heat half-life */
	/*
	 * NULL when migration is off.  Read by every worker (a policy change
	 * kicks it, the stats, the throttle): only through tierfs_mig(), an
	 * acquire load.  migrator_start() publishes it with a release store
	 * before the first request it could serve; migrator_stop() stores
	 * NULL after the join, at DESTROY or at the end of the mount, when
	 * no request is in flight any more (the kernel sends DESTROY last):
	 * that ordering, not a lock, keeps a reader from a freed migrator.
	 */
	struct migrator *mig;
	/*
	 * Immutable pointer: the migration bandwidth limiter of the mount
	 * (migrate_throttle()), shared by the migrator thread and tierctl's
	 * moves, with or without a migrator; made and freed by mount.c.
	 * NULL for a struct tierfs not made by tierfs_create(): no limit.
	 */
	struct throttle *mig_thr;
	/*
	 * The memory follower (memwatch.h) or NULL; published and cleared
	 * as @mig is (memwatch_start() at INIT, memwatch_stop() at DESTROY),
	 * read by the stats with an acquire load.
	 */
	struct memwatch *mw;

	/*
	 * Bumped (relaxed atomic) by a change that can alter the effective
	 * policy of many inodes: a policy attribute set or removed, a
	 * directory renamed or given another owner (policy_changed()).
	 * Cached policies older than it are resolved again (a walk up to
	 * the nearest policy), and the migrator's next pass looks at every
	 * inode with data (track.c).  A change that alters one inode's
	 * policy only -- a file's link, unlink or rename, an empty
	 * directory's removal, the common operations -- does not bump it:
	 * policy_changed_inode() clears that inode's cache and notes it for
	 * the migrator alone.
	 */
	uint64_t policy_gen;
	uint32_t draining;	/* relaxed atomic; bit per tier taking no data */
	/*
	 * --page-cache only (migrate.c): bit per tier that lends, a memory
	 * tier with a slower tier below that holds data only until the page
	 * cache has it, and at most lend_cap bytes of it (TIERFS_LEND_CAP;
	 * unit tests lower it).  Both immutable after mount.
	 */
	uint32_t lending;
	uint64_t lend_cap;
	struct tier_names names; /* immutable; tier names for policies */

	/*
	 * Last time each tier's failure of each kind was logged (relaxed
	 * atomic): an I/O error, a checksum mismatch and a full medium each
	 * get their own line, so that a burst of one cannot hide another.
	 */
	int64_t tier_warned[TIER_MAX_CONF][3];

	/*
	 * Kernel features (kernel.c).  kern_* and the two flags after them
	 * are written while INIT is processed, before the kernel sends any
	 * other request, and are read-only afterwards.
	 */
	uint64_t kern_offered;	   /* capability flags INIT offered */
	uint64_t kern_added;	   /* flags we added to the INIT reply */
	uint64_t kern_init_unique; /* the INIT request, until its reply */
	bool kern_init_pending;	   /* acquire/release atomic: every reply
				    * reads it (kernel_io_writev()) */
	bool killpriv_v2;	   /* we clear suid/sgid on write, truncate,
				    * chown (the kernel accepted it) */
	bool writeback;		   /* the kernel's writeback cache is on */
	bool passthrough;	   /* the kernel took FUSE passthrough: files
				    * may be native (native.h, issue 33) */
	uint64_t dirty_max;	   /* immutable; the dirty limit to set: what
				    * was asked, capped by the kernel's dirty
				    * threshold (mount.c dirty_max_choose()) */
	uint64_t dirty_asked;	   /* immutable; --dirty-max, or the default */
	uint64_t dirty_reserve;	   /* relaxed atomic; the limit in force */
	uint64_t wb_errors;	   /* relaxed atomic; failed writebacks */
	uint64_t wb_seq;	   /* relaxed atomic; numbers failed writebacks (data_lost.c) */
	uint64_t xattr_bytes;	   /* relaxed atomic; charged by user.* xattrs
				    * (xattr.h), at most opt.max_xattr_bytes */
	uint64_t ctl_computed;	   /* relaxed atomic; computed attribute
				    * values made (a size probe too), the
				    * stats text excepted (ctl.c) */
	pthread_t bdi_thread;	   /* kernel_init() to kernel_stop() */
	bool bdi_thread_live;

	pthread_rwlock_t ns_lock; /* see the lock order above */

	pthread_mutex_t itab_lock; /* list of inodes and lifetime counts */
	struct tfs_inode *inodes;  /* immutable pointer to the list head, an
				    * inode of which only i_prev/i_next are
				    * used (itab_lock) */
	uint64_t ninodes;	   /* atomic; inode units (inode.h: inodes,
				    * extra names, symlink targets), at most
				    * opt.max_inodes (inode_charge()) */
	uint64_t next_ino;	   /* itab_lock */
};

/* The running migrator or NULL (see struct tierfs, mig). */
static inline struct migrator *tierfs_mig(const struct tierfs *fs)
{
	return __atomic_load_n(&fs->mig, __ATOMIC_ACQUIRE);
}

/* The test clock's time since the mount in ns (--test-clock only). */
static inline uint64_t tierfs_test_ns(const struct tierfs *fs)
{
	return __atomic_load_n(&fs->test_clock_ns, __ATOMIC_ACQUIRE);
}

/*
 * Heat ticks (tenths of a second) since the mount; see heat.h.  With
 * --test-clock, of the test's clock (one branch on an immutable option
 * otherwise).
 */
static inline uint32_t tierfs_tick(const struct tierfs *fs)
{
	struct timespec now;

	if (fs->opt.test_clock)
		return (uint32_t)(tierfs_test_ns(fs) /
				  (1000000000 / HEAT_TICKS_PER_SEC));
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint32_t)((now.tv_sec - fs->start.tv_sec) * HEAT_TICKS_PER_SEC +
			  (now.tv_nsec - fs->start.tv_nsec) /
				  (1000000000 / HEAT_TICKS_PER_SEC));
}
#endif /* TIERFS_FS_H */
