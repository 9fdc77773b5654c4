/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tier_watch.h -- the calls inside one tier's back end, bounded and
 * timed (issue 32): a tier whose medium stops answering (a frozen
 * filesystem, a dead NFS server) must not take the daemon's threads,
 * one user's or everyone's.
 *
 * A thread in a read or write of a hung medium cannot be taken out of
 * it: the kernel waits there uninterruptibly, and nothing user space
 * does gives the thread back before the medium answers.  So what can be
 * bounded is how many threads go in, and how long the others wait:
 *   - at most TIER_WATCH_MAX calls are inside one tier's back end at
 *     once, at most TIER_WATCH_PER_OWNER of them for one principal
 *     (fs/util/owner.h: the user a request is for; internal work, the
 *     migrator's, counts as one principal of its own), so that a tier
 *     that stops answering holds at most TIER_WATCH_MAX threads for
 *     ever, and one user at most TIER_WATCH_PER_OWNER of them;
 *   - a call past those bounds waits for its turn, on a condition
 *     variable, not in the medium;
 *   - the tier is stalled while calls are inside it and none has come
 *     back for its timeout (tier_set_timeout(); 0: never): then the
 *     waiting calls and every new one fail at once with -ETIMEDOUT
 *     (tier_errno(): EIO for the program), and the first call that
 *     comes back ends the stall.
 * Only tiers whose storage is not this process's memory are watched:
 * memory cannot hang (the RAM tier calls straight through).
 *
 * Who calls: tier_io.c's and tier_i.h's wrappers around the back end's
 * read, write, reserve and discard (a discard waits for its turn but is
 * not failed by a stall: a slot whose space cannot be given back would
 * be lost to the tier for good).  Nothing here logs (tiers/ never does):
 * fs/ logs a failure with its cause, "Connection timed out".
 *
 * What fs/ may call (the timeout, the stall, the counts) is tier.h's,
 * which tier.c hands on here; this module knows no struct tier.
 *
 * Locking: each watch has its own mutex, innermost of all (taken under
 * any lock the caller holds, never around another), held only to count;
 * never across a back-end call.
 */
#ifndef TIERFS_TIER_WATCH_H
#define TIERFS_TIER_WATCH_H

#include <stdbool.h>
#include <stdint.h>

struct tier_watch;

#define TIER_WATCH_MAX 16
#define TIER_WATCH_PER_OWNER 8

/* What the stats show of a watch. */
struct tier_watch_stats {
	unsigned inside;   /* calls inside the back end now */
	unsigned waiting;  /* calls waiting for their turn now */
	bool stalled;	   /* no call came back for the timeout */
	uint64_t stalls;   /* times it stalled */
	uint64_t refused;  /* calls failed because it was stalled */
};

/* Every function takes a NULL watch (a tier held in memory): then
 * nothing is counted or waited for, and nothing is ever stalled. */

/* A new watch, or NULL (no memory). */
struct tier_watch *tier_watch_new(void);
/* Free @w; no call may be inside.  Accepts NULL. */
void tier_watch_free(struct tier_watch *w);

/* The calls fail once the medium answered nothing for @ms (0: never). */
void tier_watch_set_timeout(struct tier_watch *w, uint32_t ms);

/*
 * tier_watch_enter() - a call of the back end by the calling thread's
 * principal is about to start: wait for its turn.
 * @may_refuse: false for a call a stall must not fail (discards).
 * Return: 0 (then call tier_watch_leave() when it is back), or
 * -ETIMEDOUT: the tier is stalled, the call must not be made.
 */
int tier_watch_enter(struct tier_watch *w, bool may_refuse);
void tier_watch_leave(struct tier_watch *w);

/* Stalled now?  A snapshot. */
bool tier_watch_stalled(struct tier_watch *w);
void tier_watch_get_stats(struct tier_watch *w, struct tier_watch_stats *ret);

#endif /* TIERFS_TIER_WATCH_H */
