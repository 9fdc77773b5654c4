/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * heat.h -- how hot an extent is.
 *
 * Heat counts *passes* over an extent, not requests: a pass ends where
 * the extent goes HEAT_PASS_GAP ticks without an access, so one
 * sequential read (eight 128 KiB requests on a 1 MiB extent) adds one
 * HEAT_UNIT however slowly it runs, and a region re-read in passes -- the
 * shape of integral and RWF files -- gains one unit per pass.  An extent
 * accessed without a gap for long (random requests that never pause) is
 * one pass that keeps going: it gains a unit per HEAT_STREAM_TICKS of it,
 * so it still becomes hot, only later than one read in passes.  (The gap
 * was once counted from a pass's first access, so a read slower than
 * 0.3 s per extent -- a loaded machine, a sanitizer build -- counted as
 * several passes and promoted data read once.)  Writes that take units
 * an extent did not hold are not touches after its first access
 * (write_extents(), data.c): new data is one pass however many
 * writeback bursts bring it.
 *
 * The stamp is the tick of the last access.  Heat halves every half-life
 * (a mount option) without anyone touching the extent: the decayed value
 * is computed from the stored heat and the age of its stamp whenever it
 * is needed.
 *
 * Ticks are tenths of a second since the mount (32 bits: 13 years).
 * Pure functions; no locks.
 */
#ifndef TIERFS_HEAT_H
#define TIERFS_HEAT_H

#include <stdint.h>

#include "extent_map.h"

#define HEAT_TICKS_PER_SEC 10
#define HEAT_PASS_GAP 3	   /* ticks: closer accesses are one pass */
#define HEAT_UNIT 16	   /* heat of one pass */
#define HEAT_STREAM_TICKS 16 /* ticks of a pass without a gap: one unit */
#define HEAT_MAX 0xffff

/**
 * heat_decay() - @heat after @age ticks with a half-life of @half ticks
 * Exact halvings per whole half-life, linear in between.
 */
static inline uint32_t heat_decay(uint32_t heat, uint32_t age, uint32_t half)
{
	uint32_t n, rem;

	if (half == 0)
		return heat;
	n = age / half;
	if (n >= 16)
		return 0;
	heat >>= n;
	rem = age % half;
	/* between halvings: lose up to half of what is left, linearly */
	return heat - (uint32_t)(((uint64_t)heat * rem) / (2 * (uint64_t)half));
}

/*
 * Ticks from @stamp to @now.  A caller's @now may be older than a stamp
 * another thread has just written (it read the clock before a lock or a
 * scan): that is age 0, never an unsigned wrap to "ancient".  Ticks wrap
 * after 2^31 (6.8 years), far beyond any heat.
 */
static inline uint32_t heat_age(uint32_t now, uint32_t stamp)
{
	int32_t d = (int32_t)(now - stamp);

	return d > 0 ? (uint32_t)d : 0;
}

/*
 * The heat from which an extent is hot: @passes passes (the
 * promote_passes option), less an eighth for the decay between them.
 * The migrator's threshold, and the tracker's (track_touch()).
 */
static inline uint32_t heat_hot_min(uint32_t passes)
{
	uint32_t h = passes * HEAT_UNIT;

	return h - h / 8;
}

/* The heat of @e at tick @now. */
static inline uint32_t heat_of(const struct extent *e, uint32_t now,
			       uint32_t half)
{
	uint32_t h = __atomic_load_n(&e->heat, __ATOMIC_RELAXED);
	uint32_t s = __atomic_load_n(&e->stamp, __ATOMIC_RELAXED);

	return heat_decay(h, heat_age(now, s), half);
}

/*
 * Count an access to @e at tick @now.  Callers hold the inode's data
 * lock (shared is enough: see struct extent).  Stores nothing for a
 * second access in the same tick, so the stamp equals @now afterwards
 * exactly when this or another touch of tick @now changed the heat.
 */
static inline void heat_touch(struct extent *e, uint32_t now, uint32_t half)
{
	uint32_t s = __atomic_load_n(&e->stamp, __ATOMIC_RELAXED);
	uint32_t h = __atomic_load_n(&e->heat, __ATOMIC_RELAXED);
	uint32_t age = heat_age(now, s);

	if (h && age == 0)
		return; /* the same tick (or a stale @now: never backwards) */
	if (h && age < HEAT_PASS_GAP)
		/* the same pass, going on: a unit per HEAT_STREAM_TICKS */
		h += age * HEAT_UNIT / HEAT_STREAM_TICKS;
	else
		h = heat_decay(h, age, half) + HEAT_UNIT;
	if (h > HEAT_MAX)
		h = HEAT_MAX;
	__atomic_store_n(&e->heat, (uint16_t)h, __ATOMIC_RELAXED);
	__atomic_store_n(&e->stamp, now, __ATOMIC_RELAXED);
}

#endif /* TIERFS_HEAT_H */
