/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tier_i.h -- what the files of the tier module share, and nobody
 * else: tier.c (the kinds, create and free, capacity), tier_io.c (the
 * data wrappers around struct tier_ops, checksums, punching holes),
 * tier_units.c (the slot and unit allocator), tier_medium.c (the free
 * space of the medium, tier_errno()) and tier_backing.c (the backing
 * directories of the kinds with TIER_CAP_PATH).  Back ends and fs/ use
 * tier.h only.
 *
 * The files call one way, each only those after it:
 *     tier.c -> tier_io.c -> tier_units.c -> tier_medium.c
 * (tests/modgraph.py checks it from the objects).  The inline helpers
 * below reach the back end through t->ops and nothing else.
 */
#ifndef TIERFS_TIER_I_H
#define TIERFS_TIER_I_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "tier.h"
#include "tier_watch.h"
#include "macro.h"

/*
 * Returns the injected -errno when the test hook fires for a call of
 * class @op (enum tier_fault_op), else 0.  Calls of other classes do not
 * count down.
 */
static inline int fault_check(struct tier *t, unsigned op)
{
	int n = __atomic_load_n(&t->fault_countdown, __ATOMIC_RELAXED);
	unsigned ops;

	if (likely(n <= 0))
		return 0;
	ops = __atomic_load_n(&t->fault_ops, __ATOMIC_RELAXED);
	if (!((ops ? ops : TIER_FAULT_IO) & op))
		return 0;
	/* count down without ever passing zero, whatever other threads do */
	while (unlikely(n > 0)) {
		if (__atomic_compare_exchange_n(&t->fault_countdown, &n, n - 1,
						false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return n == 1 ? (t->fault_errno ? -t->fault_errno : -EIO)
				      : 0;
	}
	return 0;
}

/*
 * The back end's discard, reserve and sync, through the fault hook and
 * the watch (tier_watch.h): a discard waits for its turn whatever
 * happens (a slot whose space is not given back is lost to the tier); a
 * reserve of a stalled tier fails with -ETIMEDOUT without a call.
 */
static inline int be_discard(struct tier *t, uint32_t slot, uint64_t off,
		      uint64_t len)
{
	int r = fault_check(t, TIER_FAULT_DISCARD);

	if (r)
		return r;
	(void)tier_watch_enter(t->watch, false);
	r = t->ops->discard(t, slot, off, len);
	tier_watch_leave(t->watch);
	return r;
}

static inline int be_discard_run(struct tier *t, uint32_t first, uint32_t n)
{
	int r = fault_check(t, TIER_FAULT_DISCARD);

	if (r)
		return r;
	(void)tier_watch_enter(t->watch, false);
	r = t->ops->discard_run(t, first, n);
	tier_watch_leave(t->watch);
	return r;
}

static inline int be_discard_vec(struct tier *t, const uint32_t *slots,
				 const uint64_t *lens, unsigned n)
{
	int r = fault_check(t, TIER_FAULT_DISCARD);

	if (r)
		return r;
	(void)tier_watch_enter(t->watch, false);
	r = t->ops->discard_vec(t, slots, lens, n);
	tier_watch_leave(t->watch);
	return r;
}

static inline int be_reserve(struct tier *t, uint32_t slot, uint64_t off,
		      uint64_t len)
{
	int r = fault_check(t, TIER_FAULT_RESERVE);

	if (r)
		return r;
	r = tier_watch_enter(t->watch, true);
	if (r < 0)
		return r;
	r = t->ops->reserve(t, slot, off, len);
	tier_watch_leave(t->watch);
	return r;
}

static inline size_t nchunks(const struct tier *t)
{
	return ((size_t)t->vslots + TIER_CHUNK_SLOTS - 1) >> TIER_CHUNK_SHIFT;
}

/*
 * A back end call of @t failed with @err: remember the raw errno for the
 * log and return what fs/ (and the program) get.  The caller counts it.
 */
static inline int backend_err(struct tier *t, int err)
{
	__atomic_store_n(&t->last_err, err, __ATOMIC_RELAXED);
	return tier_errno(err);
}

/* The back end's write, through the fault hook; a failure is counted
 * in io_errors and mapped by tier_errno().  No bounds, held-units or
 * checksum work: the callers (tier_io.c's writes, the raw zeros of
 * tier_units.c) do what they need of that. */
static inline ssize_t be_write(struct tier *t, uint32_t slot, uint64_t off,
			       const void *buf, size_t len)
{
	ssize_t r = fault_check(t, TIER_FAULT_IO);

	if (r == 0)
		r = tier_watch_enter(t->watch, true);
	if (r == 0) {
		r = t->ops->write(t, slot, off, buf, len);
		tier_watch_leave(t->watch);
	}
	if (r < 0) {
		__atomic_add_fetch(&t->stats.io_errors, 1, __ATOMIC_RELAXED);
		r = backend_err(t, (int)r);
	}
	return r;
}

/* tier_io.c: the checksum table of a new tier with TIER_CAP_CSUM;
 * 0 or -ENOMEM. */
int tier_csum_setup(struct tier *t);
/* tier_medium.c: bytes free on the filesystem under @t (statvfs,
 * cached for TIER_STATVFS_MS unless @fresh); and whether a full medium
 * has room again (clears medium_full when so). */
uint64_t tier_dev_avail(struct tier *t, bool fresh);
/* tier_medium.c: the units @t's native files hold (tier.h), refreshed
 * from the back end at most every TIER_STATVFS_MS unless @fresh. */
uint64_t tier_native_units(struct tier *t);
bool tier_medium_space_back(struct tier *t, bool fresh);
/* tier_units.c: @off/@len inside @slot; and every unit of it held. */
bool tier_range_ok(const struct tier *t, uint32_t slot, uint64_t off,
		   uint64_t len);
bool tier_range_held(const struct tier *t, uint32_t slot, uint64_t off,
		     uint64_t len);
/* tier_units.c: give back the units of @slot wholly inside [@off,
 * @off+@len) that it holds, which read as zeros already (tier_punch()
 * wrote zeros over the rest of their range, or they were never
 * written); a discard that fails keeps its units held.  Caller owns the
 * slot.  Return: bytes given back. */
uint64_t tier_units_give_back(struct tier *t, uint32_t slot, uint64_t off,
			      uint64_t len);

#endif /* TIERFS_TIER_I_H */
