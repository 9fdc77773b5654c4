/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gate.h -- fair shares of the daemon's request threads for the requests
 * that hold one long (issue 32): a directory's layout (a walk of its
 * tree), verify (a re-read of a file), migrate (a move of its data).
 *
 * Every request holds a thread, or on io_uring a ring entry of its
 * CPU's queue, until its reply; the kernel queues what finds none, first
 * come first served.  So a user who keeps many long requests running on
 * one queue -- 40 layout loops pinned to one CPU -- would hold every
 * entry of it, and everyone else's requests from that CPU would wait.
 * A request that would wait here for its turn would still hold its
 * entry; so nothing waits: a long request that finds no share left is
 * refused at once with EAGAIN ("try again"), and its thread is free
 * again in microseconds.  tierctl retries (tools/ctl.c); a program that
 * reads the attribute itself sees EAGAIN.
 *
 * The shares, for a principal (fs/util/owner.h: a user, whose
 * subordinate uids count as that user; root is one like any other) and
 * the queue the request came on (kernel_req_queue(): the /dev/fuse pool
 * of TIERFS_MAX_THREADS threads, or one CPU's ring queue of
 * kernel_uring_queue_max() entries):
 *   - at most GATE_USER_MAX long requests of one principal at once, all
 *     queues together;
 *   - at most half of a queue's threads in long requests at once, every
 *     principal together, so that the other half serves the short ones;
 *   - of that half, each principal with long requests running on the
 *     queue gets an equal part (at least one): a new principal always
 *     finds room once the ones there shrink to their parts.
 * Internal callers (no principal: OWNER_NONE) pass.
 *
 * Locking: gate.lock guards the table; taken alone, never under another
 * lock.  The table is sized so that it cannot fill (every running
 * request has a slot, and their number is bounded by the queues' halves).
 */
#ifndef TIERFS_GATE_H
#define TIERFS_GATE_H

#include <stdint.h>

#define GATE_USER_MAX 4

/* A long request's ticket: what gate_leave() needs. */
struct gate_ticket {
	uint32_t owner; /* OWNER_NONE: passed without a ticket */
	int queue;
};

/*
 * gate_enter() - may the long request of @owner (OWNER_NONE: internal)
 * that came on @queue (kernel_req.h's numbering) run now?
 * Return: 0 and *@ret (give it to gate_leave()); -EAGAIN (nothing to
 * undo).
 */
int gate_enter(uint32_t owner, int queue, struct gate_ticket *ret);
void gate_leave(const struct gate_ticket *t);

/* For tests: the long requests running now (all queues), and the number
 * of principals with some. */
void gate_counts(unsigned *ret_running, unsigned *ret_owners);

#endif /* TIERFS_GATE_H */
