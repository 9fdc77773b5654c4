/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memwatch.h -- the memory follower: RAM tiers that give memory back
 * while the machine or the daemon's cgroup is short of it (issue 18).
 *
 * A RAM tier's pages are anonymous memory of the daemon: without swap
 * the kernel cannot reclaim them, so on a node where jobs' own memory
 * grows, a full RAM tier would push the jobs (or the daemon, and every
 * user's scratch with it) towards the OOM killer, while the page cache
 * copies the kernel can drop go first.  The follower samples, four times
 * a second, what is left before the tightest of these:
 *   - the system: MemAvailable (/proc/meminfo);
 *   - each cgroup from the daemon's own up to the root that has a limit
 *     (v2: memory.high or memory.max; v1, where the memory controller
 *     is mounted there: memory.limit_in_bytes): that limit less the
 *     cgroup's use (memory.current, memory.usage_in_bytes) and less its
 *     file LRU pages (reclaimable page cache: the kernel takes those
 *     back before it throttles or kills);
 * and, on cgroup v2, the memory pressure stall of the daemon's own
 * cgroup (memory.pressure, "full avg10"; not read when the daemon sits
 * in the root cgroup, whose pressure is every job's; v1 has no
 * per-cgroup pressure).
 *
 * Each source keeps a reserve free: --memory-reserve, or by default
 * 1/16 of the source's size (MemTotal, the cgroup's limit), at least
 * MEMWATCH_RESERVE_MIN.  When a source has less than its reserve left,
 * the RAM tiers' limit (tier_set_limit()) goes down by the shortfall
 * from what they hold, and the migrator, whose watermarks are taken
 * against the limit, demotes the coldest extents to the next tier;
 * new data spills there.  A stall (full avg10 >= MEMWATCH_PSI_FULL) while
 * some source is within twice its reserve takes another 1/16 of what the
 * tier holds, at most once a second.  When every source has more than
 * twice its reserve left, and has had for MEMWATCH_CALM_MS, the limit
 * grows by half of the excess, up to the configured size.  No data is
 * moved by the follower itself and none is lost: it only sets limits.
 *
 * With --no-migrate nothing demotes: a lowered limit then only sends new
 * data to the next tier.
 *
 * Only RAM tiers with a slower tier below them follow: a lone RAM tier
 * has nowhere to put its data, and refusing writes because a job grew
 * would surprise more than the memory it holds.
 *
 * Locking: mw->lock guards the stop flag and the stats; the thread holds
 * it only to read and update those, never while it reads /proc or sets
 * limits (relaxed atomics of the tiers).
 */
#ifndef TIERFS_MEMWATCH_H
#define TIERFS_MEMWATCH_H

#include <stdbool.h>
#include <stdint.h>

struct tierfs;

#define MEMWATCH_PERIOD_MS 250
#define MEMWATCH_CALM_MS 2000	/* spare memory this long before growing */
#define MEMWATCH_PSI_FULL 5.0	/* percent of "full avg10": a stall */
#define MEMWATCH_PSI_GAP_MS 1000 /* at most one stall step per this */
#define MEMWATCH_RESERVE_DIV 16
#define MEMWATCH_RESERVE_MIN (UINT64_C(64) << 20)

/*
 * One sample of the sources, reduced to what the decision needs.
 * @short_by: the largest shortfall of a source below its reserve (<= 0:
 * none is short); @spare: the smallest excess of a source over twice its
 * reserve (what may be taken back; INT64_MAX when no source is known);
 * @psi_full10: the own cgroup's "full avg10" in percent, < 0 unknown.
 */
struct mem_sample {
	int64_t short_by;
	int64_t spare;
	double psi_full10;
};

/* What one RAM tier's follower remembers between samples. */
struct memwatch_tier {
	int64_t calm_since_ms; /* spare memory since; 0: not now */
	int64_t last_psi_ms;   /* the last stall step */
};

/**
 * memwatch_decide() - the limit tier memory should have after sample @s
 * @size:  the tier's configured size
 * @used:  bytes it holds now
 * @limit: its limit now
 * @now_ms: a monotonic clock, for the calm and stall timers in @st
 * Pure but for @st; unit-tested.  Return: the new limit, <= @size.
 */
uint64_t memwatch_decide(struct memwatch_tier *st, uint64_t size,
			 uint64_t used, uint64_t limit,
			 const struct mem_sample *s, int64_t now_ms);

/**
 * memwatch_sample() - read the sources into @ret
 * @meminfo, @proc_cgroup, @mountinfo: the files to read (/proc/... on a
 * mount; tests give their own); @reserve: --memory-reserve, 0 for each
 * source's default.  A file that cannot be read counts as no limit.
 */
void memwatch_sample(const char *meminfo, const char *proc_cgroup,
		     const char *mountinfo, uint64_t reserve,
		     struct mem_sample *ret);

/* Counters for the stats (tierctl stats, "memory" line). */
struct memwatch_stats {
	bool running;
	uint64_t shrinks, grows; /* limit changes down and up */
	int64_t short_by, spare; /* the last sample */
	double psi_full10;
	uint64_t samples;
};

/**
 * memwatch_start() - start the follower thread if @fs has a RAM tier with
 * a slower tier below it and --no-memory-follow was not given.
 * Return: 0 (running or not needed) or -errno (nothing started).
 */
int memwatch_start(struct tierfs *fs);
/* Stop and join the thread; the limits go back to the configured sizes.
 * Accepts a mount whose follower never started. */
void memwatch_stop(struct tierfs *fs);
void memwatch_get_stats(struct tierfs *fs, struct memwatch_stats *ret);

#endif /* TIERFS_MEMWATCH_H */
