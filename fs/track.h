/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * track.h -- what the migrator has to look at, kept up to date by the
 * data paths so that a pass costs what changed, not what exists -- with
 * one exception: a bump of fs->policy_gen (a policy attribute set or
 * removed, a directory renamed or given to another owner) sends the next
 * pass over every inode with data.  An unlink, link or rename of a file,
 * the common operations, only note that file (track_policy_note()).
 *
 * Per mount, the tracker keeps:
 *  - the inodes with data: for each tier t, the set S_t of inodes with
 *    at least one extent on t, with the count per inode.  A pass that
 *    must demote from t, drain t or find exchange victims on t walks
 *    S_t, never the inode table: empty files cost nothing;
 *  - a queue of extents to look at ("notes"): extents on a slower tier
 *    that have just become hot (track_touch(), from the read and write
 *    paths), extents placed away from their policy's home, and every
 *    extent that moved.  The migrator takes the whole queue at the start
 *    of a pass and puts back what it could not settle (a hot extent with
 *    no room above it, a misplaced one with no room at home);
 *  - the inodes to look at whole: an inode that just got its first
 *    extent (its policy may have changed between the writer's look-up
 *    and the placement), and, when fs->policy_gen moved since the last
 *    pass, every inode with data whose policy's fingerprint changed.
 * Heat decays by arithmetic on a stamp (heat.h): an extent only gets
 * hotter when it is touched, so nothing needs a look while nothing
 * happens, and an idle pass reads a few counters and stops.
 *
 * What it is not: the decisions (migrate.c), the extents themselves
 * (extent_map.h).  The queue is a hint: an entry names an inode by
 * pointer and is checked against the inode set when used, so an entry of
 * a freed inode is dropped, and one whose memory now holds another
 * inode costs one look at that inode.  When the queue is full (or memory
 * runs out) the next pass looks at every inode with data instead.
 *
 * Locking: one mutex (track_mu in track.c) guards every mount's tracker:
 * the inode sets, the counts, the queue, the fingerprints.  Order:
 *   inode->i_dlock -> track_mu -> fs->itab_lock
 * The hooks are called with the inode's i_dlock held as each says; the
 * migrator takes track_mu with no other lock, and itab_lock inside it
 * only to pin one bounded batch (track_pin()).  Memory of an inode in the
 * sets stays valid while track_mu is held: inode_free() removes it
 * (data_release() -> track_release()) before freeing it.
 *
 * Return: the hooks cannot fail (an allocation failure makes the next
 * pass look at everything); track_collect() returns 0 or -ENOMEM.
 */
#ifndef TIERFS_TRACK_H
#define TIERFS_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tierfs;
struct tfs_inode;
struct extent;
struct policy;

/* Most queued extents; past it the queue overflows (see above). */
#define TRACK_QUEUE_MAX (1u << 20)
/* Most inodes pinned under one hold of itab_lock. */
#define TRACK_PIN_BATCH 256u

/* ---- hooks of the data paths ------------------------------------- */

/* Extent @idx of @inode was inserted on @tier, placed by @pol (stale is
 * fine).  i_dlock exclusive. */
void track_add(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
	       unsigned tier, const struct policy *pol);
/* Extent @idx moved from tier @from to @to.  i_dlock exclusive. */
void track_move(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		unsigned from, unsigned to);
/* The extents with index in [@first, @last] are about to be removed
 * (call it before removing them: it counts them).  i_dlock exclusive. */
void track_drop(struct tierfs *fs, struct tfs_inode *inode, uint64_t first,
		uint64_t last);
/* @inode is being freed: out of every set.  No lock needed (nobody else
 * reaches the inode); takes track_mu. */
void track_release(struct tierfs *fs, struct tfs_inode *inode);
/*
 * Extent @idx (@e) of @inode was just touched at tick @now (after
 * heat_touch()): if it is on a slower tier and that touch made it hot,
 * note it for the next pass.  Costs two loads when it is not; takes
 * track_mu at most once a tick per hot extent on a slower tier, until
 * the migrator moves it up.  i_dlock held (shared is enough).
 */
void track_touch(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		 const struct extent *e, uint32_t now);
/* Note extent @idx of @inode for the next pass, whatever it is.  Any
 * lock or none. */
void track_note(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx);
/* @inode's effective policy may have changed (policy_changed_inode()):
 * if it has data, the next pass looks at all of it, as at an inode new to
 * data.  Any lock but track_mu, or none. */
void track_policy_note(struct tierfs *fs, struct tfs_inode *inode);

/* ---- for the migrator -------------------------------------------- */

/* What to look at in an inode (ordered: a larger mode covers a smaller). */
enum track_mode {
	TRACK_IDX,	/* extent @idx only */
	TRACK_POLICY,	/* its policy; every extent if that changed */
	TRACK_WHOLE,	/* every extent */
};

struct track_visit {
	struct tfs_inode *inode;
	uint64_t idx;	/* TRACK_IDX */
	uint8_t mode;	/* enum track_mode */
};

struct track_visits {
	struct track_visit *v;
	size_t n, cap;
};

/*
 * track_collect() - what a pass looks at, appended to @out, then sorted
 * by inode (and mode, largest first, then index):
 *  - each inode of S_t for every tier t in bit mask @walk (TRACK_WHOLE);
 *  - with @take: the queue and the new inodes (which are emptied), and,
 *    when fs->policy_gen moved since the last such call, every inode
 *    with data (TRACK_POLICY; TRACK_WHOLE after the queue overflowed).
 * Return: 0, or -ENOMEM (then @take's queue is kept as an overflow: the
 * next pass looks at everything).
 */
int track_collect(struct tierfs *fs, uint32_t walk, bool take,
		  struct track_visits *out);
/* Is anything queued, new, or the policy generation moved?  (A pass with
 * no tier to walk and none of these has nothing to do.) */
bool track_pending(struct tierfs *fs);
/*
 * track_pin() - pin (inode_pin()) each of @v[0..@n), @n <= TRACK_PIN_BATCH,
 * that still has data and is still on the inode table; @ok[i] says
 * which.  One hold of track_mu and itab_lock for the batch.
 * Return: how many were pinned.  The caller unpins them.
 */
size_t track_pin(struct tierfs *fs, struct tfs_inode *const *v, size_t n,
		 bool *ok);
/* The fingerprint of the policy @inode's extents were last all looked
 * at under (0: never), and setting it (i_dlock held, shared is enough,
 * so that a placement cannot fall between the look and the set). */
uint64_t track_fp(struct tierfs *fs, struct tfs_inode *inode);
void track_set_fp(struct tierfs *fs, struct tfs_inode *inode, uint64_t fp);
/* A fingerprint of what in @pol the migrator acts on (never 0). */
uint64_t track_policy_fp(const struct policy *pol);
/* Notes were lost (out of memory): the next pass looks at everything. */
void track_lost(struct tierfs *fs);
/* Put extents back in the queue: @v[i].inode, @v[i].idx. */
void track_requeue(struct tierfs *fs, const struct track_visit *v, size_t n);

/* Counts, racy snapshots for stats and tests: inodes with data, extents
 * counted, extents queued; and the inodes with data on tier @t. */
void track_counts(struct tierfs *fs, uint64_t *ret_inodes,
		  uint64_t *ret_extents, uint64_t *ret_queued);
uint64_t track_inodes_on(struct tierfs *fs, unsigned t);

#endif /* TIERFS_TRACK_H */
