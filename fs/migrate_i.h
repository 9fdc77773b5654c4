/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * migrate_i.h -- what migrate.c (the decisions and the moves) shares
 * with migrate_scan.c (what a pass looks at, and the look): the
 * candidate vectors of a pass and the room checks, in bytes.  Only
 * those two files include it.
 *
 * Locking: a struct scan belongs to the one thread running the pass; the
 * functions take the locks they need (track.h, the inodes' i_dlock)
 * and are called with none held.
 */
#ifndef TIERFS_MIGRATE_I_H
#define TIERFS_MIGRATE_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fs.h"
#include "tier.h"
#include "track.h"
#include "macro.h"

struct cand {
	struct tfs_inode *inode; /* NULL: moved, gone, or not a victim */
	uint64_t idx;
	uint64_t bytes;	   /* tier bytes the extent holds (tier_held()) */
	uint32_t slot;
	uint32_t heat;
	uint32_t stamp;	   /* tick of the last access */
	uint32_t allowed;  /* tiers the file's policy allows */
	int8_t home;	   /* tier by pin or split, or -1 */
	uint8_t tier;
	bool promote;	   /* the policy lets it move up */
	bool placed;	   /* EXTENT_F_PLACED: an admin put it there */
	bool done;	   /* moved by this pass */
};

struct cand_vec {
	struct cand *v;
	size_t n, cap;
};

struct scan {
	struct tfs_inode **pinned; /* inodes with candidates, one pin each */
	size_t npinned, cpinned;
	struct cand_vec cold[TIER_MAX_CONF]; /* demotable extents, per tier */
	struct cand_vec hot;		     /* promotion candidates */
	struct cand_vec misplaced;	     /* away from home or allowed */
	bool need_cold[TIER_MAX_CONF];	     /* cold[t] collected */
	bool lend[TIER_MAX_CONF];	     /* tier t lends, walked for it */
	uint32_t draining;		     /* fs->draining at the start */
	uint32_t now;			     /* tick of the pass */
	uint32_t hot_min;		     /* heat_hot_min() */
	struct track_visits vis;	     /* what step 2 looked at */
	uint64_t vis_inodes, vis_extents;    /* for the stats */
};

/*
 * Does tier @t lend (--page-cache only, migrate.c): a memory tier with a
 * slower tier below, that holds data only until the page cache has it?
 */
static inline bool lends(const struct tierfs *fs, unsigned t)
{
	return fs->lending & (1u << t);
}

/* @pct percent of tier @t's configured size, in bytes. */
static inline uint64_t wm_bytes(const struct tier *t, int pct)
{
	return tier_limit_bytes(t) * (uint64_t)pct / 100;
}

/* Has tier @t room for an extent holding @bytes (a free slot and the
 * units)? */
static inline bool room_for(struct tier *t, uint64_t bytes)
{
	return tier_avail_bytes(t) >= MAX(bytes, tier_unit(t));
}

/* Could anything leave tier @t downwards: a slower tier, not draining,
 * with any room?  (If not, its cold extents need no look.) */
static inline bool room_below(struct tierfs *fs, unsigned t, uint32_t draining)
{
	for (unsigned u = t + 1; u < fs->ntiers; u++)
		if (!(draining & (1u << u)) &&
		    tier_avail_bytes(fs->tiers[u]) > 0)
			return true;
	return false;
}

/* Can hot @c move up into tier @u without an exchange? */
static inline bool room_up(struct tierfs *fs, const struct cand *c, unsigned u)
{
	struct tier *tu = fs->tiers[u];

	return tier_used_bytes(tu) + c->bytes <= wm_bytes(tu, fs->opt.high_wm);
}

/*
 * scan_collect() - steps 1-3 of a pass (migrate.c): what to look at (the
 * inodes with data on the tiers in bit mask @walk, whole, and the
 * tracker's notes), the look at each under its shared data lock, and
 * the exchange victims the hot candidates need.  s->draining, s->now,
 * s->hot_min and s->need_cold[] are set by the caller.  Inodes with
 * candidates are pinned in s->pinned.
 * Return: 0, or -ENOMEM (the next pass then looks at everything).
 */
int scan_collect(struct tierfs *fs, struct scan *s, uint32_t walk);
/* Forget every candidate of @inode (its pins are the caller's). */
void scan_forget(struct scan *s, const struct tfs_inode *inode);
/* Unpin and free everything of @s; @s is empty afterwards. */
void scan_release(struct tierfs *fs, struct scan *s);
/* Note again, for the next pass, the hot and misplaced candidates that
 * did not move. */
void scan_requeue(struct tierfs *fs, struct scan *s);

#endif /* TIERFS_MIGRATE_I_H */
