// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier_units.c -- the slot and unit allocator of a tier: which slots are in use,
 * which units of each slot hold data (a bitmap per slot), charging new
 * units against the capacity and reserving them on the medium, giving
 * them back (free, and the units wholly inside a hole that tier_io.c's
 * tier_punch() zeroed).  See tier.h, tier_charge() and friends.  It
 * reaches the back end only through tier_i.h's be_*() (discard,
 * reserve, the raw zeros of a failed discard) and tier_medium.c's free
 * space, never through tier_io.c, which is above it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "config.h"
#include "fdio.h"
#include "tier.h"
#include "tier_ops.h"
#include "tier_i.h"
#include "never.h"
#include "macro.h"
#include "banned.h"


static void slot_put_back(struct tier *t, uint32_t slot);

/* ---- units: the bitmap of what each slot holds ---- */

/* @slot's bitmap words, or NULL while its chunk was never needed.  The
 * chunk pointer is published with release order under alloc_lock. */
static uint64_t *held_words_of(const struct tier *t, uint32_t slot)
{
	uint64_t *c = __atomic_load_n(&t->held[slot >> TIER_CHUNK_SHIFT],
				      __ATOMIC_ACQUIRE);

	if (!c)
		return NULL;
	return c + (size_t)(slot & (TIER_CHUNK_SLOTS - 1)) * t->held_stride;
}

/* The same, making the chunk.  Called with alloc_lock held.  NULL: no
 * memory. */
static uint64_t *held_words_make(struct tier *t, uint32_t slot)
{
	size_t c = slot >> TIER_CHUNK_SHIFT;

	if (!t->held[c]) {
		uint64_t *w = calloc((size_t)TIER_CHUNK_SLOTS * t->held_stride,
				     sizeof(*w));

		if (!w)
			return NULL;
		__atomic_store_n(&t->held[c], w, __ATOMIC_RELEASE);
	}
	return held_words_of(t, slot);
}

static uint64_t word_get(const uint64_t *w, uint32_t i)
{
	return __atomic_load_n(&w[i], __ATOMIC_RELAXED);
}

/* The bits of units [u0, u1) that fall in word @i (u0 < u1, and the
 * word overlaps the range). */
static uint64_t word_mask(uint32_t i, uint32_t u0, uint32_t u1)
{
	uint32_t lo = MAX(u0, i * 64), hi = MIN(u1, i * 64 + 64);
	uint64_t m = ~UINT64_C(0) << (lo % 64);

	if (hi % 64)
		m &= ~(~UINT64_C(0) << (hi % 64));
	return m;
}

/*
 * The first unit in [u, end) whose bit is @on in @w (NULL: nothing
 * held), a word at a time.  Return: that unit, or @end when there is
 * none.
 */
static uint32_t bit_find(const uint64_t *w, uint32_t u, uint32_t end, bool on)
{
	if (!w)
		return on ? end : u;
	while (u < end) {
		uint32_t i = u / 64;
		uint64_t v = word_get(w, i);

		v = (on ? v : ~v) & word_mask(i, u, end);
		if (v)
			return MIN(i * 64 + (uint32_t)__builtin_ctzll(v), end);
		u = i * 64 + 64;
	}
	return end;
}

/*
 * Set (@on) or clear the bits of units [u0, u1) of @w, a word at a
 * time.  Called with alloc_lock held (the only writer; readers load
 * words racily).  Return: how many bits changed; *@ret_first and
 * *@ret_last (may be NULL) the lowest and highest unit that changed,
 * untouched when none did.
 */
static uint32_t bits_put(uint64_t *w, uint32_t u0, uint32_t u1, bool on,
			 uint32_t *ret_first, uint32_t *ret_last)
{
	uint32_t n = 0;

	for (uint32_t i = u0 / 64; u0 < u1 && i <= (u1 - 1) / 64; i++) {
		uint64_t v = word_get(w, i), m = word_mask(i, u0, u1);
		uint64_t ch = (on ? ~v : v) & m;

		if (!ch)
			continue;
		if (ret_first && n == 0)
			*ret_first = i * 64 + (uint32_t)__builtin_ctzll(ch);
		if (ret_last)
			*ret_last = i * 64 + 63 - (uint32_t)__builtin_clzll(ch);
		n += (uint32_t)__builtin_popcountll(ch);
		__atomic_store_n(&w[i], v ^ ch, __ATOMIC_RELAXED);
	}
	return n;
}

/* Units [*u0, *u1) touching bytes [off, off+len) of a slot. */
static void unit_span(const struct tier *t, uint64_t off, uint64_t len,
		      uint32_t *u0, uint32_t *u1)
{
	*u0 = (uint32_t)(off >> t->unit_shift);
	*u1 = (uint32_t)((off + len + tier_unit(t) - 1) >> t->unit_shift);
}

/* Units of [u0, u1) that @w (NULL: holds nothing) does not hold. */
static uint32_t count_missing(const uint64_t *w, uint32_t u0, uint32_t u1)
{
	uint32_t n = 0;

	if (!w || u0 >= u1)
		return u0 < u1 ? u1 - u0 : 0;
	for (uint32_t i = u0 / 64; i <= (u1 - 1) / 64; i++)
		n += (uint32_t)__builtin_popcountll(~word_get(w, i) &
						    word_mask(i, u0, u1));
	return n;
}

static uint32_t count_held(const struct tier *t, const uint64_t *w)
{
	uint32_t n = 0;

	for (unsigned i = 0; w && i < t->held_words; i++)
		n += (uint32_t)__builtin_popcountll(
			__atomic_load_n(&w[i], __ATOMIC_RELAXED));
	return n;
}

bool tier_range_ok(const struct tier *t, uint32_t slot, uint64_t off,
		     uint64_t len)
{
	return slot < t->vslots && off <= t->extent_size &&
	       len <= t->extent_size - off;
}

uint64_t tier_uncharged(struct tier *t, uint32_t slot, uint64_t off,
			uint64_t len)
{
	uint32_t u0, u1;

	if (NEVER(!tier_range_ok(t, slot, off, len)) || len == 0)
		return 0;
	unit_span(t, off, len, &u0, &u1);
	return (uint64_t)count_missing(held_words_of(t, slot), u0, u1)
	       << t->unit_shift;
}

uint64_t tier_held(struct tier *t, uint32_t slot)
{
	if (NEVER(slot >= t->vslots))
		return 0;
	return (uint64_t)count_held(t, held_words_of(t, slot)) << t->unit_shift;
}

bool tier_held_next(struct tier *t, uint32_t slot, uint64_t from,
		    uint64_t *ret_off, uint64_t *ret_len)
{
	const uint64_t *w = slot < t->vslots ? held_words_of(t, slot) : NULL;
	uint32_t u = (uint32_t)(from >> t->unit_shift), e;

	if (!w || u >= t->units_per_slot)
		return false;
	u = bit_find(w, u, t->units_per_slot, true);
	if (u >= t->units_per_slot)
		return false;
	e = bit_find(w, u, t->units_per_slot, false);
	*ret_off = (uint64_t)u << t->unit_shift;
	*ret_len = (uint64_t)(e - u) << t->unit_shift;
	return true;
}

/* Is every unit touching [off, off+len) of @slot held?  For the writes'
 * "cannot happen" check. */
bool tier_range_held(const struct tier *t, uint32_t slot, uint64_t off,
		       uint64_t len)
{
	uint32_t u0, u1;

	if (len == 0)
		return true;
	unit_span(t, off, len, &u0, &u1);
	return count_missing(held_words_of(t, slot), u0, u1) == 0;
}

/* The medium filled below the tier's size: remember what statvfs()
 * called free then, and say so until space comes back. */
static void medium_filled(struct tier *t)
{
	if (t->dev_shared) {
		(void)tier_dev_avail(t, true);
		__atomic_store_n(&t->full_avail,
				 __atomic_load_n(&t->dev_avail,
						 __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->medium_full, true, __ATOMIC_RELAXED);
}


/*
 * Reserving ahead, for a back end whose reserve is a system call
 * (ops->reserve_ahead: the file tier's fallocate()).  An extent filled
 * front to back in small writes (direct I/O, --page-cache drop) would
 * make one reserve per write, 256 for a 1 MiB extent of 4 KiB units.
 * Instead each slot keeps a reserved prefix, units [0, P) whose space
 * the medium has promised (the word after its bitmap).  The first
 * charge at unit 0 reserves just its units and makes them the prefix.
 * A charge that then reaches past P from inside it or from its end
 * reserves [P, A) with A = max(the charge's end, twice the units the
 * slot then holds), at most the slot: 8 reserves fill a 1 MiB extent of
 * 4 KiB writes, a 4 KiB file reserves 4 KiB, and the space reserved but
 * not held is never more than what the slot holds (so a file tier's
 * blocks exceed its data by at most its partly written extents' data).
 * A charge beyond P (a hole first) reserves just its own units and
 * leaves P.  Giving units back lowers P
 * to where they start (units_release(), units_drop()).  A reserve ahead
 * that fails is retried for the charge's own units, so reserving ahead
 * never turns into an error.  All of it under alloc_lock by the slot's
 * owner, like the bitmap.
 */
static uint32_t *resv_word(const struct tier *t, uint64_t *w)
{
	return t->ops->reserve_ahead ? (uint32_t *)&w[t->held_words] : NULL;
}

/* Lower @slot's reserved prefix to @u (units from @u on given back).
 * Called with alloc_lock held. */
static void resv_lower(struct tier *t, uint64_t *w, uint32_t u)
{
	uint32_t *p = w ? resv_word(t, w) : NULL;

	if (p && *p > u)
		*p = u;
}

int tier_charge(struct tier *t, uint32_t slot, uint64_t off, uint64_t len,
		uint64_t *ret_added)
{
	uint64_t old[DIV_ROUND_UP(TIER_UNITS_MAX, 64)];
	uint32_t u0, u1, n, first = UINT32_MAX, last = 0;
	uint32_t rfirst = 0, rend = 0, *resv = NULL;
	uint64_t *w, native;
	int r = 0;

	if (ret_added)
		*ret_added = 0;
	if (NEVER(!tier_range_ok(t, slot, off, len)))
		return -EIO;
	if (len == 0)
		return 0;
	unit_span(t, off, len, &u0, &u1);
	w = held_words_of(t, slot);
	if (w && count_missing(w, u0, u1) == 0)
		return 0; /* the common overwrite: nothing to take */
	/* a full medium: nothing new (and no failed reserve to count)
	 * until statvfs() shows that space came back */
	if (t->dev_shared && tier_medium_full(t) && !tier_medium_space_back(t, true))
		return -ENOSPC;

	/* the native files' units count too (before the lock: it may ask
	 * the back end) */
	native = tier_native_units(t);
	pthread_mutex_lock(&t->alloc_lock);
	w = held_words_make(t, slot);
	if (!w) {
		pthread_mutex_unlock(&t->alloc_lock);
		return -ENOMEM;
	}
	n = count_missing(w, u0, u1);
	if (t->used_units + native + n >
	    __atomic_load_n(&t->limit_units, __ATOMIC_RELAXED)) {
		pthread_mutex_unlock(&t->alloc_lock);
		return -ENOSPC;
	}
	memcpy(old, w, t->held_words * sizeof(*w));
	(void)bits_put(w, u0, u1, true, &first, &last);
	__atomic_add_fetch(&t->used_units, n, __ATOMIC_RELAXED);
	if (n) {
		/* the span of the new units: reserving a held unit again in
		 * between is harmless */
		rfirst = first;
		rend = last + 1;
		resv = resv_word(t, w);
		if (resv && rend <= *resv) {
			rend = 0; /* inside the reserved prefix already */
		} else if (resv && *resv && rfirst <= *resv) {
			rfirst = *resv; /* growing: ahead */
			rend = MAX(rend, 2 * count_held(t, w));
			rend = MIN(rend, t->units_per_slot);
		} else if (!resv || rfirst > 0) {
			resv = NULL; /* a hole first: just these units */
		} /* else the slot's first units: just these, as its prefix */
	}
	pthread_mutex_unlock(&t->alloc_lock);

	if (rend && t->ops->reserve) {
		r = be_reserve(t, slot, (uint64_t)rfirst << t->unit_shift,
				    (uint64_t)(rend - rfirst) << t->unit_shift);
		if (r < 0 && resv && rend > last + 1) {
			/* only the ahead part may be what did not fit */
			rend = last + 1;
			r = be_reserve(t, slot,
					    (uint64_t)rfirst << t->unit_shift,
					    (uint64_t)(rend - rfirst)
						    << t->unit_shift);
		}
		if (r < 0) {
			/* the medium failed below the configured size */
			__atomic_add_fetch(&t->stats.io_errors, 1,
					   __ATOMIC_RELAXED);
			r = backend_err(t, r);
			pthread_mutex_lock(&t->alloc_lock);
			for (unsigned i = 0; i < t->held_words; i++)
				__atomic_store_n(&w[i], old[i],
						 __ATOMIC_RELAXED);
			__atomic_sub_fetch(&t->used_units, n, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&t->alloc_lock);
			if (r == -ENOSPC)
				medium_filled(t);
			return r;
		}
		if (resv) {
			pthread_mutex_lock(&t->alloc_lock);
			*resv = MAX(*resv, rend);
			pthread_mutex_unlock(&t->alloc_lock);
		}
		__atomic_store_n(&t->medium_full, false, __ATOMIC_RELAXED);
	}
	if (ret_added)
		*ret_added = (uint64_t)n << t->unit_shift;
	return 0;
}

/* ---- slots ---- */

int tier_slot_get(struct tier *t, uint32_t *ret_slot)
{
	uint32_t slot = 0;
	uint64_t native;
	int r = 0;

	if (t->dev_shared && tier_medium_full(t) && !tier_medium_space_back(t, true))
		return -ENOSPC;
	native = tier_native_units(t);
	pthread_mutex_lock(&t->alloc_lock);
	/*
	 * nused and used_units are written atomically (under the lock)
	 * because the stats read them without the lock.
	 */
	if (t->used_units + native >=
	    __atomic_load_n(&t->limit_units, __ATOMIC_RELAXED))
		r = -ENOSPC;
	else if (t->nfree_stack > 0)
		slot = t->free_stack[--t->nfree_stack];
	else if (t->hwm < t->vslots)
		slot = t->hwm++;
	else
		r = -ENOSPC;
	if (r == 0)
		__atomic_add_fetch(&t->nused, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->alloc_lock);
	if (r == 0)
		*ret_slot = slot;
	return r;
}

int tier_slot_alloc(struct tier *t, uint32_t *ret_slot)
{
	uint32_t slot;
	int r = tier_slot_get(t, &slot);

	if (r < 0)
		return r;
	r = tier_charge(t, slot, 0, t->extent_size, NULL);
	if (r < 0) {
		slot_put_back(t, slot);
		return r;
	}
	*ret_slot = slot;
	return 0;
}

/*
 * The free stack grows on demand so that a huge, mostly idle tier costs
 * no memory for it.  Called with alloc_lock held.
 */
static int free_stack_push(struct tier *t, uint32_t slot)
{
	if (!t->free_stack) {
		/* at most every slot is free at once: allocate that once */
		t->free_stack = malloc(sizeof(uint32_t) * (size_t)t->vslots);
		if (!t->free_stack)
			return -ENOMEM;
	}
	if (NEVER(t->nfree_stack >= t->vslots))
		return -EIO; /* the caller leaks the slot: never hands it out twice */
	t->free_stack[t->nfree_stack++] = slot;
	return 0;
}

/* The checksums of @slot's blocks back to "all zeros".  Caller owns the
 * slot. */
static void csum_reset(struct tier *t, uint32_t slot)
{
	uint32_t *c;

	if (!t->csum)
		return;
	c = __atomic_load_n(&t->csum[slot >> TIER_CHUNK_SHIFT],
			    __ATOMIC_ACQUIRE);
	if (!c)
		return;
	c += (size_t)(slot & (TIER_CHUNK_SLOTS - 1)) * t->csum_per_slot;
	for (unsigned b = 0; b < t->csum_per_slot; b++)
		c[b] = t->csum_zero;
}

/* Forget every unit @slot holds.  Called with alloc_lock held. */
static void units_drop(struct tier *t, uint32_t slot)
{
	uint64_t *w = held_words_of(t, slot);
	uint32_t n = count_held(t, w);

	for (unsigned i = 0; w && i < t->held_words; i++)
		__atomic_store_n(&w[i], 0, __ATOMIC_RELAXED);
	resv_lower(t, w, 0);
	if (!NEVER(t->used_units < n))
		__atomic_sub_fetch(&t->used_units, n, __ATOMIC_RELAXED);
}

/*
 * The bytes of @slot that may hold anything: up to the end of its last
 * held unit, or of its reserved prefix where that reaches further.  A
 * unit past it was never written or was given back (units_release()),
 * so a free discards [0, span) only: a 4 KiB file's RAM slot is one
 * page to unmap, not 256 page-table entries to walk, and a slot that
 * holds nothing makes no call at all.  Caller owns the slot.
 */
static uint64_t slot_span(const struct tier *t, uint32_t slot)
{
	uint64_t *w = held_words_of(t, slot);
	uint32_t end = 0, *resv;

	if (!w)
		return 0;
	for (unsigned i = t->held_words; i-- > 0;) {
		uint64_t v = word_get(w, i);

		if (v) {
			end = i * 64 + 64 - (uint32_t)__builtin_clzll(v);
			break;
		}
	}
	resv = resv_word(t, w);
	if (resv)
		end = MAX(end, __atomic_load_n(resv, __ATOMIC_RELAXED));
	return (uint64_t)MIN(end, t->units_per_slot) << t->unit_shift;
}

/*
 * Zeros written over [off, off+len) of @slot straight through the back
 * end, without the held-units check and checksums: for a slot being
 * given back whose discard failed; the caller resets the checksums.
 * Return: 0 or the back end's -errno.
 */
static int zero_raw(struct tier *t, uint32_t slot, uint64_t off, uint64_t len)
{
	static const char zeros[65536];

	while (len > 0) {
		size_t n = (size_t)MIN(len, (uint64_t)sizeof(zeros));
		ssize_t r = be_write(t, slot, off, zeros, n);

		if (r < 0)
			return (int)r;
		__atomic_add_fetch(&t->stats.write_ops, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->stats.write_bytes, n, __ATOMIC_RELAXED);
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Zeros written over what @slot holds, for a slot whose discard failed:
 * a unit it does not hold reads as zeros already (never written, or
 * given back by a discard that worked; see units_release()), and
 * writing zeros there would only make a sparse medium allocate blocks
 * for them -- a 4 KiB file's slot cost a 1 MiB write.  Caller owns the
 * slot.  Return: 0, or the first write's -errno.
 */
static int zero_held(struct tier *t, uint32_t slot)
{
	uint64_t from = 0, off, len;

	while (tier_held_next(t, slot, from, &off, &len)) {
		int r = zero_raw(t, slot, off, len);

		if (r < 0)
			return r;
		from = off + len;
	}
	return 0;
}

void tier_slot_free(struct tier *t, uint32_t slot)
{
	uint64_t end;
	int r;

	if (NEVER(slot >= t->vslots))
		return;
	end = slot_span(t, slot);
	r = end ? be_discard(t, slot, 0, end) : 0;
	if (r < 0)
		r = zero_held(t, slot);
	if (r == 0)
		csum_reset(t, slot);
	pthread_mutex_lock(&t->alloc_lock);
	if (r == 0)
		units_drop(t, slot);
	/* else its units stay counted: that space holds old data and is
	 * lost with the slot */
	if (!NEVER(t->nused == 0))
		__atomic_sub_fetch(&t->nused, 1, __ATOMIC_RELAXED);
	if (r < 0 || free_stack_push(t, slot) < 0) {
		/* leaked: never hand out a slot that may hold old data, and
		 * never count it as free space either */
		__atomic_add_fetch(&t->stats.io_errors, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->nleaked, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&t->alloc_lock);
}

/*
 * The bookkeeping of freeing @n slots whose data is discarded already:
 * @slots[i], or @first + i where @slots is NULL.  Checksums reset,
 * units and slots uncounted under one alloc_lock, pushed highest first
 * so that allocation hands them out lowest first; a push that fails
 * leaks its slot (counted).
 */
static void slots_release(struct tier *t, uint32_t first,
			  const uint32_t *slots, uint32_t n)
{
	uint32_t leaked = 0;

#define SLOT(i) (slots ? slots[i] : first + (i))
	for (uint32_t i = 0; i < n; i++)
		csum_reset(t, SLOT(i));
	pthread_mutex_lock(&t->alloc_lock);
	for (uint32_t i = 0; i < n; i++)
		units_drop(t, SLOT(i));
	if (!NEVER(t->nused < n))
		__atomic_sub_fetch(&t->nused, n, __ATOMIC_RELAXED);
	for (uint32_t i = n; i-- > 0;)
		if (free_stack_push(t, SLOT(i)) < 0)
			leaked++;
#undef SLOT
	if (leaked) {
		__atomic_add_fetch(&t->stats.io_errors, leaked, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->nleaked, leaked, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&t->alloc_lock);
}

void tier_slot_free_run(struct tier *t, uint32_t first, uint32_t n)
{
	if (NEVER(first >= t->vslots || n > t->vslots - first))
		return;
	if (n == 1 || !t->ops->discard_run ||
	    be_discard_run(t, first, n) < 0) {
		/* slot by slot, last first: the free stack then hands the
		 * run out lowest first, as below */
		for (uint32_t i = n; i-- > 0;)
			tier_slot_free(t, first + i);
		return;
	}
	slots_release(t, first, NULL, n);
}

void tier_slot_free_many(struct tier *t, const uint32_t *slots, unsigned n)
{
	uint32_t vs[TIER_DISCARD_VEC_MAX];
	uint64_t vl[TIER_DISCARD_VEC_MAX];
	unsigned i, k, m;

	if (n > TIER_DISCARD_VEC_MAX) {
		for (i = 0; i < n; i += TIER_DISCARD_VEC_MAX)
			tier_slot_free_many(t, slots + i,
					    MIN(n - i, TIER_DISCARD_VEC_MAX));
		return;
	}
	for (i = 0; i < n; i++)
		if (NEVER(slots[i] >= t->vslots ||
			  (i && slots[i] <= slots[i - 1])))
			return;
	if (n < 2 || !t->ops->discard_vec)
		goto runs;
	/* what each slot holds, in one call; slots that hold nothing need
	 * no discard */
	for (i = 0, m = 0; i < n; i++) {
		uint64_t end = slot_span(t, slots[i]);

		if (end) {
			vs[m] = slots[i];
			vl[m++] = end;
		}
	}
	if (m && be_discard_vec(t, vs, vl, m) < 0)
		goto runs; /* slot by slot, each with its own fallbacks */
	slots_release(t, 0, slots, n);
	return;

runs:
	/* highest run first, as slots_release() pushes */
	for (k = n; k > 0; k = i) {
		for (i = k - 1; i > 0 && slots[i - 1] + 1 == slots[i]; i--)
			;
		tier_slot_free_run(t, slots[i], k - i);
	}
}

/* Undo tier_slot_get() of a slot that holds nothing. */
static void slot_put_back(struct tier *t, uint32_t slot)
{
	pthread_mutex_lock(&t->alloc_lock);
	__atomic_sub_fetch(&t->nused, 1, __ATOMIC_RELAXED);
	if (free_stack_push(t, slot) < 0)
		__atomic_add_fetch(&t->nleaked, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->alloc_lock);
}

uint32_t tier_used_slots(const struct tier *t)
{
	return __atomic_load_n(&t->nused, __ATOMIC_RELAXED);
}

/*
 * Give back held units [u0, u1) of @slot, which read as zeros already
 * (so their checksum blocks are right as they are): the discard, then
 * the bitmap.  A discard that fails keeps the units held: they hold
 * zeros, only their space is not given back.  Return: bytes given back.
 */
static uint64_t units_release(struct tier *t, uint32_t slot, uint32_t u0,
			      uint32_t u1)
{
	uint64_t *w;

	if (be_discard(t, slot, (uint64_t)u0 << t->unit_shift,
			    (uint64_t)(u1 - u0) << t->unit_shift) < 0)
		return 0;
	pthread_mutex_lock(&t->alloc_lock);
	w = held_words_of(t, slot);
	(void)bits_put(w, u0, u1, false, NULL, NULL);
	resv_lower(t, w, u0);
	__atomic_sub_fetch(&t->used_units, u1 - u0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->alloc_lock);
	return (uint64_t)(u1 - u0) << t->unit_shift;
}

uint64_t tier_units_give_back(struct tier *t, uint32_t slot, uint64_t off,
			      uint64_t len)
{
	uint64_t unit = tier_unit(t), end = off + len;
	uint64_t a = ALIGN_UP(off, unit), z = ALIGN_DOWN(end, unit);
	uint64_t freed = 0;
	const uint64_t *w;

	if (NEVER(!tier_range_ok(t, slot, off, len)))
		return 0;
	w = held_words_of(t, slot);
	for (uint32_t u = (uint32_t)(a >> t->unit_shift),
		      ue = a < z ? (uint32_t)(z >> t->unit_shift) : 0;
	     w && u < ue;) {
		uint32_t e;

		u = bit_find(w, u, ue, true);
		if (u >= ue)
			break;
		e = bit_find(w, u, ue, false);
		freed += units_release(t, slot, u, e);
		u = e;
	}
	return freed;
}
