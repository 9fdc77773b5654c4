/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * migrate.h -- the background migrator: keeps every tier below its high
 * watermark by demoting the coldest extents, and promotes hot extents
 * into faster tiers.  It decides; data_migrate_extent() (data_move.c) moves.
 */
#ifndef TIERFS_MIGRATE_H
#define TIERFS_MIGRATE_H

#include <stdbool.h>
#include <stdint.h>

struct tierfs;
struct migrator;

/*
 * Counters of the migrator as a whole (per-tier ones live in tier_stats).
 * What a pass costs is what it visits: the inodes and extents the
 * tracker named (track.h), never the whole inode table.
 */
struct migrate_stats {
	uint64_t passes;    /* passes done, idle ones included */
	uint64_t idle_passes; /* passes that had nothing to look at */
	uint64_t moved;	    /* extents moved */
	uint64_t retries;   /* moves abandoned because a writer raced */
	uint64_t failures;  /* moves that failed (I/O, checksum) */
	uint64_t drain_stuck; /* extents the last pass found no room for,
			       * off a draining tier */
	uint64_t visited_inodes;  /* inodes passes looked at (each at
				   * most once per pass) */
	uint64_t visited_extents; /* extents passes looked at */
	/* bytes moved under --migrate-bw (by the migrator and by control
	 * actions alike), and the time the limit gave them (bytes / bw) */
	uint64_t throttled_bytes;
	uint64_t throttled_ns;
	/* extents (and their bytes) a RAM tier handed down because the
	 * page cache holds them (--page-cache only, migrate.c) */
	uint64_t lent;
	uint64_t lent_bytes;
	/* now, from the tracker (also without a migrator thread): */
	uint64_t tracked_inodes;  /* inodes with data */
	uint64_t tracked_extents; /* their extents */
	uint64_t queued;	  /* extents noted for the next pass */
};

/**
 * migrator_start() - start the migrator thread for @fs
 * Return: 0 (fs->mig set) or -errno.
 */
int migrator_start(struct tierfs *fs);

/* Stop and join the thread, free it; accepts a NULL fs->mig. */
void migrator_stop(struct tierfs *fs);

/* Ask the migrator thread for a pass sooner than its next interval;
 * returns at once.  Kicks coalesce: the pass starts MIGRATE_KICK_GAP_MS
 * (250 ms) after the end of the last one at the soonest, or as long
 * after it as that one took, however many kicks came meanwhile.  Does
 * nothing without a migrator. */
void migrator_kick(struct tierfs *fs);
/* The same, but the pass starts now (or when the one under way ends):
 * for root's tierctl drain, which waits for nothing else and is not a
 * loop a user can drive. */
void migrator_kick_now(struct tierfs *fs);
/*
 * --test-clock only (options.h): the test's clock has moved on (struct
 * tierfs, test_clock_ns).  Wakes the thread and returns once every pass
 * that the new time made due has ended: one when the clock moved at
 * least MIGRATE_INTERVAL_MS (500 ms) past the end of the last pass, or
 * the kick gap after a kick, however far it moved (a pass takes no test
 * time), none otherwise.  Takes mig->lock; call with no lock held, from
 * a request (as migrator_kick(): none is in flight when the migrator
 * stops).  Does nothing without a migrator thread or the option.
 */
void migrator_clock_moved(struct tierfs *fs);

/*
 * The @k-th tier (1 .. @ntiers - 1) an extent draining off tier @t tries:
 * the slower ones first, nearest first (t+1, t+2, ...), then the faster
 * ones, nearest first (t-1, t-2, ...).  One order for the migrator's
 * drain and for a drain without one (ctl_action.c).
 */
static inline unsigned migrate_drain_order(unsigned t, unsigned k,
					   unsigned ntiers)
{
	return t + k < ntiers ? t + k : ntiers - 1 - k;
}

/**
 * migrate_throttle() - wait for the bandwidth of moving @bytes
 * Every move of the mount -- the migrator's, tierctl migrate's, a drain's
 * -- calls this before it copies, so together they keep under
 * opt.migrate_bw bytes per second (0: no limit, no wait): each call
 * reserves the next @bytes/bw seconds of the mount's migration time and
 * sleeps until they have passed.  Thread-safe; call with no lock held.
 * Unmounting (migrator_stop()) ends every wait at once.
 */
void migrate_throttle(struct tierfs *fs, uint64_t bytes);
/*
 * migrate_count_move() - count a move of @bytes (what the extent held)
 * from tier @src to @dst: a promotion of the faster tier @dst or a
 * demotion of @src, in the tiers' stats.  The migrator and tierctl
 * migrate share it.  Relaxed atomics; any thread.
 */
void migrate_count_move(struct tierfs *fs, unsigned src, unsigned dst,
			uint64_t bytes);

/**
 * migrator_run_pass() - one scan-and-move pass in the calling thread, for
 * tests: deterministic (no thread, no interval), with the mount's policy,
 * watermarks and bandwidth limit.
 * @ret_stats: the counters of this pass alone (passes = 1); may be NULL
 * Return: 0, or -EBUSY when the migrator thread runs (fs->mig set): two
 * passes at once would each move what the other is moving.
 */
int migrator_run_pass(struct tierfs *fs, struct migrate_stats *ret_stats);

/* The counters; without a migrator thread only the tracker's. */
void migrator_get_stats(struct tierfs *fs, struct migrate_stats *ret);

#endif /* TIERFS_MIGRATE_H */
