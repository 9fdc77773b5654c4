// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier.c -- tier registry, slot allocator and the thin data wrappers
 * around struct tier_ops.  See tier.h for the contracts.
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
#include "never.h"
#include "macro.h"
#include "banned.h"

static const char *const kind_names[_TIER_KIND_MAX] = {
	[TIER_RAM] = "ram",
	[TIER_PMEM] = "pmem",
	[TIER_FILE] = "file",
};

enum tier_kind tier_kind_parse(const char *s)
{
	for (int k = 0; k < _TIER_KIND_MAX; k++)
		if (s && !strcmp(s, kind_names[k]))
			return k;
	return _TIER_KIND_INVALID;
}

const char *tier_kind_name(enum tier_kind kind)
{
	if (kind < 0 || kind >= _TIER_KIND_MAX)
		return "invalid";
	return kind_names[kind];
}

static const struct tier_ops *kind_ops(enum tier_kind kind)
{
	switch (kind) {
	case TIER_RAM:
		return &tier_ram_ops;
	case TIER_PMEM:
#if HAVE_PMEM
		return &tier_pmem_ops;
#else
		return NULL; /* built with -Dpmem=disabled */
#endif
	case TIER_FILE:
		return &tier_file_ops;
	default:
		return NULL;
	}
}

unsigned tier_kind_caps(enum tier_kind kind)
{
	const struct tier_ops *ops = kind_ops(kind);

	return ops ? ops->caps : 0;
}

/*
 * Returns the injected -errno when the test hook fires for a call of
 * class @op (enum tier_fault_op), else 0.  Calls of other classes do not
 * count down.
 */
static int fault_check(struct tier *t, unsigned op)
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

/* The back end's discard, reserve and sync, through the fault hook. */
static int be_discard(struct tier *t, uint32_t slot, uint64_t off,
		      uint64_t len)
{
	int r = fault_check(t, TIER_FAULT_DISCARD);

	return r ? r : t->ops->discard(t, slot, off, len);
}

static int be_discard_run(struct tier *t, uint32_t first, uint32_t n)
{
	int r = fault_check(t, TIER_FAULT_DISCARD);

	return r ? r : t->ops->discard_run(t, first, n);
}

static int be_reserve(struct tier *t, uint32_t slot, uint64_t off,
		      uint64_t len)
{
	int r = fault_check(t, TIER_FAULT_RESERVE);

	return r ? r : t->ops->reserve(t, slot, off, len);
}

static bool name_is_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > TIER_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/*
 * Checksums.  A block of 1 << csum_shift bytes (64 KiB, or the extent if
 * that is smaller) has one 32-bit sum: the XOR of the 32-bit XXH3 of each
 * of its CSUM_PIECE-byte pieces, each hashed with its index in the block
 * as the seed (so that two pieces swapped, or two equal pieces, do not
 * cancel out).  XOR undoes itself, so a write into part of a block moves
 * the sum by the old and the new hash of the pieces it touches and reads
 * back only those pieces -- 4 KiB for a 4 KiB write -- instead of the
 * whole block (issue 18: each 4 KiB write to a file tier read back and
 * hashed 64 KiB twice, and ran at a third of the directory's speed).
 *
 * The price: a piece read back cannot be verified on its own, only a
 * whole block can.  If it was corrupt on the medium, its wrong hash goes
 * into the new sum, which then fits neither the old nor the new content:
 * the block reads EIO from then on, as it did before the write.  Damage
 * is never blessed with a fitting sum (but for a 2^-32 collision); what
 * changes is that the write itself no longer fails with it.
 */
#define CSUM_PIECE 4096u

static uint32_t piece_hash(const void *buf, size_t len, size_t idx)
{
	return (uint32_t)XXH3_64bits_withSeed(buf, len, (XXH64_hash_t)idx);
}

static uint32_t block_hash(const void *buf, size_t len)
{
	size_t p = MIN(len, (size_t)CSUM_PIECE);
	uint32_t h = 0;

	for (size_t i = 0; i < len; i += p)
		h ^= piece_hash((const char *)buf + i, p, i / p);
	return h;
}

static size_t nchunks(const struct tier *t)
{
	return ((size_t)t->vslots + TIER_CHUNK_SLOTS - 1) >> TIER_CHUNK_SHIFT;
}

/*
 * The checksum chunk table: one pointer per TIER_CHUNK_SLOTS slots, the
 * chunks themselves made as data arrives (csum_chunk()); every block
 * starts as all zeros.
 */
static int csum_setup(struct tier *t)
{
	void *zero;

	t->csum_shift = MIN(TIER_CSUM_BLOCK_SHIFT, t->extent_shift);
	t->csum_per_slot = t->extent_size >> t->csum_shift;
	t->csum = calloc(nchunks(t), sizeof(*t->csum));
	zero = calloc(1, (size_t)1 << t->csum_shift);
	if (!t->csum || !zero) {
		free(zero);
		return -ENOMEM;
	}
	t->csum_zero = block_hash(zero, (size_t)1 << t->csum_shift);
	free(zero);
	return 0;
}

/* Units, slots of address space and the bitmap's shape of a new tier. */
static void units_setup(struct tier *t, uint64_t size)
{
	uint64_t v = t->nslots;

	t->unit_shift = MAX((unsigned)__builtin_ctz(TIER_UNIT_MIN),
			    t->extent_shift -
				    (unsigned)__builtin_ctz(TIER_UNITS_MAX));
	t->units_per_slot = t->extent_size >> t->unit_shift;
	t->held_words = DIV_ROUND_UP(t->units_per_slot, 64u);
	t->held_stride = t->held_words + (t->ops->reserve_ahead ? 1u : 0u);
	t->cap_units = size >> t->unit_shift;
	if (t->ops->sparse) {
		v = MIN(t->cap_units, TIER_VIRT_MAX >> t->extent_shift);
		v = MIN(v, (uint64_t)UINT32_MAX);
		v = MAX(v, (uint64_t)t->nslots);
	}
	t->vslots = (uint32_t)v;
}

int tier_create(const char *name, enum tier_kind kind, const char *path,
		uint64_t size, uint32_t extent_size, struct tier **ret_tier)
{
	const struct tier_ops *ops;
	struct tier *t;
	uint64_t nslots;
	int r;

	if (!name_is_valid(name) || kind < 0 || kind >= _TIER_KIND_MAX)
		return -EINVAL;
	if (!is_power_of_2(extent_size) || extent_size < 4096)
		return -EINVAL;
	ops = kind_ops(kind);
	if (!ops)
		return -EOPNOTSUPP;
	if (ops->version != TIER_OPS_VERSION)
		return -EINVAL;
	nslots = size / extent_size;
	if (nslots == 0)
		return -EINVAL;
	if (nslots > UINT32_MAX)
		return -EFBIG;
	if ((ops->caps & TIER_CAP_PATH) && (!path || !*path))
		return -EINVAL;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	memcpy(t->name, name, strlen(name) + 1);
	t->kind = kind;
	t->size = size;
	t->extent_size = extent_size;
	t->extent_shift = (unsigned)__builtin_ctz(extent_size);
	t->nslots = (uint32_t)nslots;
	t->ops = ops;
	units_setup(t, size);
	pthread_mutex_init(&t->alloc_lock, NULL);
	if (ops->caps & TIER_CAP_PATH) {
		t->path = strdup(path);
		if (!t->path) {
			r = -ENOMEM;
			goto err_free;
		}
	}
	r = ops->open(t);
	if (r < 0) {
		t->ops = NULL; /* open cleaned up after itself */
		goto err_free;
	}
	/* sized for the slots open settled on */
	t->held = calloc(nchunks(t), sizeof(*t->held));
	if (!t->held) {
		r = -ENOMEM;
		goto err_free;
	}
	if (ops->caps & TIER_CAP_CSUM) {
		r = csum_setup(t);
		if (r < 0)
			goto err_free;
	}
	if (ops->caps & TIER_CAP_PATH) {
		struct stat st;

		/* the filesystem whose free space the tier shares */
		if (stat(t->path, &st) == 0)
			t->dev = st.st_dev;
		else
			t->dev_shared = false; /* cannot group it: cap alone */
	}
	*ret_tier = t;
	return 0;

err_free:
	/* t->ops is NULL when open failed (it cleaned up itself); else
	 * tier_free() closes what open made */
	tier_free(t);
	return r;
}

struct tier *tier_free(struct tier *t)
{
	if (!t)
		return NULL;
	if (t->ops)
		t->ops->close(t);
	pthread_mutex_destroy(&t->alloc_lock);
	for (size_t c = 0; (t->held || t->csum) && c < nchunks(t); c++) {
		if (t->held)
			free(t->held[c]);
		if (t->csum)
			free(t->csum[c]);
	}
	free(t->held);
	free(t->csum);
	free(t->free_stack);
	free(t->path);
	free(t);
	return NULL;
}

static void slot_put_back(struct tier *t, uint32_t slot);

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Bytes free on the filesystem under @t: statvfs() of its path, at most
 * once per TIER_STATVFS_MS unless @fresh (statfs is called often; on a
 * network filesystem a statvfs() is a round trip).  Racing refreshes
 * are harmless: each stores a true value.  When statvfs() fails (the
 * path was removed behind our back) the tier is not capped.
 */
static uint64_t dev_avail(struct tier *t, bool fresh)
{
	int64_t now = now_ms();
	int64_t last = __atomic_load_n(&t->dev_checked_ms, __ATOMIC_RELAXED);
	struct statvfs vfs;
	uint64_t avail;

	if (!fresh && last && now - last < TIER_STATVFS_MS)
		return __atomic_load_n(&t->dev_avail, __ATOMIC_RELAXED);
	if (statvfs(t->path, &vfs) < 0)
		avail = UINT64_MAX;
	else if (__builtin_mul_overflow((uint64_t)vfs.f_bavail,
					(uint64_t)vfs.f_frsize, &avail))
		avail = UINT64_MAX;
	__atomic_store_n(&t->dev_avail, avail, __ATOMIC_RELAXED);
	__atomic_store_n(&t->dev_checked_ms, now ? now : 1, __ATOMIC_RELAXED);
	return avail;
}

/*
 * While the medium is full: has space come back?  Yes once statvfs()
 * shows at least an extent more free than when it filled (the free
 * space the filesystem reported then was not enough for a reserve).
 * Clears medium_full when so.
 */
static bool medium_space_back(struct tier *t, bool fresh)
{
	uint64_t avail = dev_avail(t, fresh);
	uint64_t then = __atomic_load_n(&t->full_avail, __ATOMIC_RELAXED);

	if (avail < then || avail - then < t->extent_size)
		return false;
	__atomic_store_n(&t->medium_full, false, __ATOMIC_RELAXED);
	return true;
}

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

static bool range_ok(const struct tier *t, uint32_t slot, uint64_t off,
		     uint64_t len)
{
	return slot < t->vslots && off <= t->extent_size &&
	       len <= t->extent_size - off;
}

uint64_t tier_uncharged(struct tier *t, uint32_t slot, uint64_t off,
			uint64_t len)
{
	uint32_t u0, u1;

	if (NEVER(!range_ok(t, slot, off, len)) || len == 0)
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
static bool range_held(const struct tier *t, uint32_t slot, uint64_t off,
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
		(void)dev_avail(t, true);
		__atomic_store_n(&t->full_avail,
				 __atomic_load_n(&t->dev_avail,
						 __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&t->medium_full, true, __ATOMIC_RELAXED);
}

static int backend_err(struct tier *t, int err);

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
	uint64_t *w;
	int r = 0;

	if (ret_added)
		*ret_added = 0;
	if (NEVER(!range_ok(t, slot, off, len)))
		return -EIO;
	if (len == 0)
		return 0;
	unit_span(t, off, len, &u0, &u1);
	w = held_words_of(t, slot);
	if (w && count_missing(w, u0, u1) == 0)
		return 0; /* the common overwrite: nothing to take */
	/* a full medium: nothing new (and no failed reserve to count)
	 * until statvfs() shows that space came back */
	if (t->dev_shared && tier_medium_full(t) && !medium_space_back(t, true))
		return -ENOSPC;

	pthread_mutex_lock(&t->alloc_lock);
	w = held_words_make(t, slot);
	if (!w) {
		pthread_mutex_unlock(&t->alloc_lock);
		return -ENOMEM;
	}
	n = count_missing(w, u0, u1);
	if (t->used_units + n > t->cap_units) {
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
	int r = 0;

	if (t->dev_shared && tier_medium_full(t) && !medium_space_back(t, true))
		return -ENOSPC;
	pthread_mutex_lock(&t->alloc_lock);
	/*
	 * nused and used_units are written atomically (under the lock)
	 * because the stats read them without the lock.
	 */
	if (t->used_units >= t->cap_units)
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

static int slot_zero_raw(struct tier *t, uint32_t slot, uint64_t off,
			 uint64_t len);

void tier_slot_free(struct tier *t, uint32_t slot)
{
	int r;

	if (NEVER(slot >= t->vslots))
		return;
	r = be_discard(t, slot, 0, t->extent_size);
	if (r < 0)
		r = slot_zero_raw(t, slot, 0, t->extent_size);
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

void tier_slot_free_run(struct tier *t, uint32_t first, uint32_t n)
{
	uint32_t leaked = 0;

	if (NEVER(first >= t->vslots || n > t->vslots - first))
		return;
	if (n == 1 || !t->ops->discard_run ||
	    be_discard_run(t, first, n) < 0) {
		for (uint32_t i = 0; i < n; i++)
			tier_slot_free(t, first + i);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		csum_reset(t, first + i);
	pthread_mutex_lock(&t->alloc_lock);
	for (uint32_t i = 0; i < n; i++)
		units_drop(t, first + i);
	if (!NEVER(t->nused < n))
		__atomic_sub_fetch(&t->nused, n, __ATOMIC_RELAXED);
	/* last first, so that allocation hands the run out in order */
	for (uint32_t i = n; i-- > 0;)
		if (free_stack_push(t, first + i) < 0)
			leaked++;
	if (leaked) {
		__atomic_add_fetch(&t->stats.io_errors, leaked, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->nleaked, leaked, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&t->alloc_lock);
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

/* Free units, and whether a new extent could get a slot at all. */
static uint64_t cfg_free_units(const struct tier *t)
{
	uint64_t used = __atomic_load_n(&t->used_units, __ATOMIC_RELAXED);
	uint32_t taken = tier_used_slots(t) +
			 __atomic_load_n(&t->nleaked, __ATOMIC_RELAXED);

	if (taken >= t->vslots || used >= t->cap_units)
		return 0;
	return t->cap_units - used;
}

uint64_t tier_used_bytes(const struct tier *t)
{
	return __atomic_load_n(&t->used_units, __ATOMIC_RELAXED)
	       << t->unit_shift;
}

uint64_t tier_avail_bytes(struct tier *t)
{
	uint64_t n = cfg_free_units(t) << t->unit_shift;

	if (!t->dev_shared)
		return n;
	if (tier_medium_full(t) && !medium_space_back(t, false))
		return 0;
	return MIN(n, ALIGN_DOWN(dev_avail(t, false), tier_unit(t)));
}

uint32_t tier_free_slots(struct tier *t)
{
	uint32_t slots = t->vslots - MIN(t->vslots,
					 tier_used_slots(t) +
						 __atomic_load_n(&t->nleaked,
								 __ATOMIC_RELAXED));
	uint64_t whole = tier_avail_bytes(t) >> t->extent_shift;

	return whole < slots ? (uint32_t)whole : slots;
}

uint64_t tier_free_bytes(struct tier *const *tiers, unsigned n, uint32_t mask)
{
	uint64_t free[TIER_MAX] = { 0 };
	uint64_t sum = 0;
	bool done[TIER_MAX] = { false };

	n = MIN(n, (unsigned)TIER_MAX);
	for (unsigned i = 0; i < n; i++)
		if (mask & (1u << i))
			free[i] = tier_avail_bytes(tiers[i]);
	for (unsigned i = 0; i < n; i++) {
		uint64_t group, cap;

		if (!(mask & (1u << i)) || done[i])
			continue;
		if (!tiers[i]->dev_shared) {
			sum += free[i];
			continue;
		}
		/* every dev_shared tier on this filesystem, counted once */
		group = free[i];
		cap = __atomic_load_n(&tiers[i]->dev_avail, __ATOMIC_RELAXED);
		for (unsigned j = i + 1; j < n; j++) {
			if (!(mask & (1u << j)) || !tiers[j]->dev_shared ||
			    tiers[j]->dev != tiers[i]->dev)
				continue;
			done[j] = true;
			group += free[j];
		}
		cap = ALIGN_DOWN(cap, tier_unit(tiers[i]));
		sum += MIN(group, cap);
	}
	return sum;
}

/* @v in a short human form (powers of 1024, as sizes are given). */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	while (d >= 1024 && u < (int)sizeof(units) - 2) {
		d /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu bytes", (unsigned long long)v);
	else
		snprintf(buf, len, "%.1f%c", d, units[u]);
}

int tier_check_shared_space(struct tier *const *tiers, unsigned n, char *why,
			    size_t len)
{
	n = MIN(n, (unsigned)TIER_MAX);
	for (unsigned i = 0; i < n; i++) {
		uint64_t sum = tiers[i]->size, avail;
		unsigned count = 1;
		char names[TIER_MAX * (TIER_NAME_MAX + 4) + 1];
		char s1[32], s2[32];
		size_t at;
		bool first = true;

		if (!tiers[i]->dev_shared)
			continue;
		for (unsigned j = 0; j < i; j++)
			if (tiers[j]->dev_shared && tiers[j]->dev == tiers[i]->dev)
				first = false;
		if (!first)
			continue; /* its group was checked with its first */
		for (unsigned j = i + 1; j < n; j++)
			if (tiers[j]->dev_shared &&
			    tiers[j]->dev == tiers[i]->dev) {
				sum += tiers[j]->size;
				count++;
			}
		avail = dev_avail(tiers[i], true);
		if (count < 2 || sum <= avail)
			continue;
		at = (size_t)snprintf(names, sizeof(names), "'%s'",
				      tiers[i]->name);
		for (unsigned j = i + 1; j < n && at < sizeof(names); j++)
			if (tiers[j]->dev_shared &&
			    tiers[j]->dev == tiers[i]->dev)
				at += (size_t)snprintf(names + at,
						       sizeof(names) - at,
						       ", '%s'", tiers[j]->name);
		fmt_size(s1, sizeof(s1), sum);
		fmt_size(s2, sizeof(s2), avail);
		snprintf(why, len,
			 "tiers %s are on one filesystem (%s) and together need %s, but it has %s free",
			 names, tiers[i]->path, s1, s2);
		return -ENOSPC;
	}
	return 0;
}

/* stat() @p and compare with (@dev, @ino). */
static bool same_inode(const char *p, dev_t dev, ino_t ino)
{
	struct stat st;

	return stat(p, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

bool tier_path_within(const char *path, const char *dir)
{
	struct stat d;
	char *p, *slash;
	bool within = false;

	if (!path || !dir || stat(dir, &d) < 0)
		return false;
	p = realpath(path, NULL);
	if (!p)
		p = strdup(path); /* missing: its parents still tell */
	if (!p)
		return false;
	for (;;) {
		if (same_inode(*p ? p : "/", d.st_dev, d.st_ino)) {
			within = true;
			break;
		}
		/* up one component; "a//b/" and a relative path alike */
		slash = strrchr(p, '/');
		while (slash && slash > p && slash[1] == '\0') {
			*slash = '\0';
			slash = strrchr(p, '/');
		}
		if (!slash || !*p || !strcmp(p, "/"))
			break;
		if (slash == p)
			slash[1] = '\0'; /* "/x" -> "/" */
		else
			*slash = '\0';
	}
	free(p);
	return within;
}

int tier_errno(int err)
{
	switch (err) {
	case -ENOSPC:
	case -ENOMEM:
	case -EIO:
		return err;
	case -EDQUOT:
		return -ENOSPC;
	default:
		return err < 0 ? -EIO : err;
	}
}

int tier_last_error(const struct tier *t)
{
	return __atomic_load_n(&t->last_err, __ATOMIC_RELAXED);
}

/*
 * A back end call of @t failed with @err: remember the raw errno for the
 * log and return what fs/ (and the program) get.  The caller counts it.
 */
static int backend_err(struct tier *t, int err)
{
	__atomic_store_n(&t->last_err, err, __ATOMIC_RELAXED);
	return tier_errno(err);
}

/* tier_bulk_begin() (tier.h): per thread, read by the back ends */
static __thread bool bulk_io;

void tier_bulk_begin(void)
{
	bulk_io = true;
}

void tier_bulk_end(void)
{
	bulk_io = false;
}

bool tier_bulk(void)
{
	return bulk_io;
}

static ssize_t raw_read(struct tier *t, uint32_t slot, uint64_t off,
			void *buf, size_t len)
{
	ssize_t r = fault_check(t, TIER_FAULT_IO);

	if (r == 0)
		r = t->ops->read(t, slot, off, buf, len);
	if (r < 0) {
		__atomic_add_fetch(&t->stats.io_errors, 1, __ATOMIC_RELAXED);
		r = backend_err(t, (int)r);
	}
	return r;
}

static ssize_t raw_write(struct tier *t, uint32_t slot, uint64_t off,
			 const void *buf, size_t len)
{
	ssize_t r = fault_check(t, TIER_FAULT_IO);

	if (r == 0)
		r = t->ops->write(t, slot, off, buf, len);
	if (r < 0) {
		__atomic_add_fetch(&t->stats.io_errors, 1, __ATOMIC_RELAXED);
		r = backend_err(t, (int)r);
	}
	return r;
}

/* @slot's checksum entries, or NULL while its chunk was never needed
 * (then every block of it is all zeros). */
static uint32_t *csum_slot(const struct tier *t, uint32_t slot)
{
	uint32_t *c = __atomic_load_n(&t->csum[slot >> TIER_CHUNK_SHIFT],
				      __ATOMIC_ACQUIRE);

	if (!c)
		return NULL;
	return c + (size_t)(slot & (TIER_CHUNK_SLOTS - 1)) * t->csum_per_slot;
}

/* The same, making the chunk (every entry csum_zero) if need be; the
 * first of racing makers installs its chunk, the others free theirs.
 * NULL: no memory. */
static uint32_t *csum_slot_make(struct tier *t, uint32_t slot)
{
	size_t n = (size_t)TIER_CHUNK_SLOTS * t->csum_per_slot;
	uint32_t *c = csum_slot(t, slot), *mine, *none = NULL;

	if (c)
		return c;
	mine = malloc(n * sizeof(*mine));
	if (!mine)
		return NULL;
	for (size_t i = 0; i < n; i++)
		mine[i] = t->csum_zero;
	if (!__atomic_compare_exchange_n(&t->csum[slot >> TIER_CHUNK_SHIFT],
					 &none, mine, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		free(mine);
	return csum_slot(t, slot);
}

static inline uint32_t csum_get(const struct tier *t, uint32_t slot,
				uint64_t off)
{
	const uint32_t *c = csum_slot(t, slot);

	return c ? c[off >> t->csum_shift] : t->csum_zero;
}

/*
 * Per-thread bounce buffer for reads that do not cover whole checksum
 * blocks; owned by its thread, grown on demand, freed at thread exit.
 */
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

struct bounce {
	size_t size;
	char data[];
};

static void bounce_key_init(void)
{
	(void)pthread_key_create(&bounce_key, free);
}

static char *bounce_get(size_t size)
{
	struct bounce *b;

	pthread_once(&bounce_once, bounce_key_init);
	b = pthread_getspecific(bounce_key);
	if (b && b->size >= size)
		return b->data;
	free(b);
	b = malloc(sizeof(*b) + size);
	if (b)
		b->size = size;
	(void)pthread_setspecific(bounce_key, b);
	return b ? b->data : NULL;
}

/* Check blocks [off, off+len) of @slot held in @buf (block aligned). */
static int csum_check(struct tier *t, uint32_t slot, uint64_t off,
		      const char *buf, size_t len)
{
	size_t bs = (size_t)1 << t->csum_shift;

	for (size_t i = 0; i < len; i += bs) {
		if (block_hash(buf + i, bs) != csum_get(t, slot, off + i)) {
			__atomic_add_fetch(&t->stats.csum_errors, 1,
					   __ATOMIC_RELAXED);
			return -EBADMSG;
		}
	}
	return 0;
}

ssize_t tier_read(struct tier *t, uint32_t slot, uint64_t off, void *buf,
		  size_t len)
{
	ssize_t r;

	if (NEVER(!range_ok(t, slot, off, len)))
		return -EIO;
	if (t->csum) {
		/* read whole blocks, verify them, hand out the range asked */
		size_t bs = (size_t)1 << t->csum_shift;
		uint64_t a = ALIGN_DOWN(off, (uint64_t)bs);
		uint64_t z = ALIGN_UP(off + len, (uint64_t)bs);
		bool aligned = a == off && z == off + len;
		char *tmp = aligned ? buf : bounce_get((size_t)(z - a));

		if (!tmp)
			return -ENOMEM;
		r = raw_read(t, slot, a, tmp, (size_t)(z - a));
		if (r >= 0)
			r = csum_check(t, slot, a, tmp, (size_t)(z - a));
		if (r < 0)
			return r;
		if (!aligned)
			memcpy(buf, tmp + (off - a), len);
		r = (ssize_t)len;
	} else {
		r = raw_read(t, slot, off, buf, len);
		if (r < 0)
			return r;
	}
	__atomic_add_fetch(&t->stats.read_ops, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->stats.read_bytes, (uint64_t)r, __ATOMIC_RELAXED);
	return r;
}

/*
 * New checksums for a write of @len bytes at @off: whole blocks are
 * hashed from @buf; the sum of a partly covered block moves by the old
 * and the new hash of each piece the write touches (see CSUM_PIECE):
 * those pieces, and only those, are read back and patched.  Fills
 * @ret_sums (one per touched block) without changing the table, so that
 * a failed write leaves the old checksums in place.  Return: 0, -ENOMEM,
 * or the -errno of the read-back.
 */
static int csum_compute(struct tier *t, uint32_t slot, uint64_t off,
			const char *buf, size_t len, uint32_t *ret_sums)
{
	size_t bs = (size_t)1 << t->csum_shift;
	size_t ps = MIN(bs, (size_t)CSUM_PIECE);
	uint64_t a = ALIGN_DOWN(off, (uint64_t)bs);
	unsigned n = 0;

	for (uint64_t b = a; b < off + len; b += bs, n++) {
		uint64_t s = MAX(b, off), e = MIN(b + bs, off + len);
		uint64_t ra = ALIGN_DOWN(s, (uint64_t)ps);
		uint64_t rz = ALIGN_UP(e, (uint64_t)ps);
		uint32_t sum;
		char *blk;
		ssize_t r;

		if (s == b && e == b + bs) {
			ret_sums[n] = block_hash(buf + (b - off), bs);
			continue;
		}
		blk = bounce_get((size_t)(rz - ra));
		if (!blk)
			return -ENOMEM;
		r = raw_read(t, slot, ra, blk, (size_t)(rz - ra));
		if (r < 0)
			return (int)r;
		sum = csum_get(t, slot, b);
		for (uint64_t q = ra; q < rz; q += ps)
			sum ^= piece_hash(blk + (q - ra), ps, (q - b) / ps);
		memcpy(blk + (s - ra), buf + (s - off), (size_t)(e - s));
		for (uint64_t q = ra; q < rz; q += ps)
			sum ^= piece_hash(blk + (q - ra), ps, (q - b) / ps);
		ret_sums[n] = sum;
	}
	return 0;
}

ssize_t tier_write(struct tier *t, uint32_t slot, uint64_t off,
		   const void *buf, size_t len)
{
	uint32_t sums_small[32];
	uint32_t *sums = sums_small, *table = NULL;
	unsigned nb = 0;
	ssize_t r;

	if (NEVER(!range_ok(t, slot, off, len)) ||
	    NEVER(!range_held(t, slot, off, len)))
		return -EIO;
	if (t->csum && len > 0) {
		size_t bs = (size_t)1 << t->csum_shift;

		table = csum_slot_make(t, slot);
		if (!table)
			return -ENOMEM;

		nb = (unsigned)((ALIGN_UP(off + len, (uint64_t)bs) -
				 ALIGN_DOWN(off, (uint64_t)bs)) >>
				t->csum_shift);
		if (nb > ARRAY_SIZE(sums_small)) {
			sums = malloc(nb * sizeof(*sums));
			if (!sums)
				return -ENOMEM;
		}
		r = csum_compute(t, slot, off, buf, len, sums);
		if (r < 0)
			goto out;
	}
	r = raw_write(t, slot, off, buf, len);
	if (r < 0)
		goto out;
	for (unsigned i = 0; i < nb; i++)
		table[(off >> t->csum_shift) + i] = sums[i];
	__atomic_add_fetch(&t->stats.write_ops, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->stats.write_bytes, (uint64_t)r,
			   __ATOMIC_RELAXED);
out:
	if (sums != sums_small)
		free(sums);
	return r;
}

/*
 * Zeros written over [off, off+len) of @slot without the held-units
 * check and checksums: for a slot (or units) being given back whose
 * discard failed; the caller resets the checksums.  Return: 0 or the
 * back end's -errno.
 */
static int slot_zero_raw(struct tier *t, uint32_t slot, uint64_t off,
			 uint64_t len)
{
	static const char zeros[65536];

	while (len > 0) {
		size_t n = (size_t)MIN(len, (uint64_t)sizeof(zeros));
		ssize_t r = raw_write(t, slot, off, zeros, n);

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
 * Zeros for one write of up to an extent: a read-only anonymous mapping
 * that costs no memory (every page is the kernel's zero page).  NULL if
 * it cannot be mapped; callers then write 64 KiB at a time.
 */
#define ZEROS_MAX ((size_t)1 << 30) /* the largest extent size */

static const char *zeros_map;
static pthread_once_t zeros_once = PTHREAD_ONCE_INIT;

static void zeros_init(void)
{
	void *p = mmap(NULL, ZEROS_MAX, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	zeros_map = p == MAP_FAILED ? NULL : p;
}

/* Zeros over [off, off+len) of @slot, all held: one tier_write() where
 * the zero mapping exists, so a failure changes nothing. */
int tier_zero(struct tier *t, uint32_t slot, uint64_t off, size_t len)
{
	static const char zeros[65536];

	pthread_once(&zeros_once, zeros_init);
	if (zeros_map && len <= ZEROS_MAX) {
		ssize_t w = tier_write(t, slot, off, zeros_map, len);

		return w < 0 ? (int)w : 0;
	}
	while (len > 0) {
		size_t n = MIN(len, sizeof(zeros));
		ssize_t r = tier_write(t, slot, off, zeros, n);

		if (r < 0)
			return (int)r;
		off += n;
		len -= n;
	}
	return 0;
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

int tier_punch(struct tier *t, uint32_t slot, uint64_t off, uint64_t len,
	       uint64_t *ret_freed)
{
	uint64_t unit = tier_unit(t), end = off + len;
	uint64_t a = ALIGN_UP(off, unit), z = ALIGN_DOWN(end, unit);
	uint64_t freed = 0, from = ALIGN_DOWN(off, unit), ro, rl;
	const uint64_t *w;
	int r;

	if (ret_freed)
		*ret_freed = 0;
	if (NEVER(!range_ok(t, slot, off, len)))
		return -EIO;
	/*
	 * First the zeros, over what the slot holds in the range: one
	 * write per run of held units (a sequentially written extent has
	 * one), so that a failure leaves the data as it was.  Then the
	 * space of the units wholly inside goes back; that cannot lose
	 * data any more, and where it fails the units just stay held.
	 */
	while (from < end && tier_held_next(t, slot, from, &ro, &rl) &&
	       ro < end) {
		uint64_t s = MAX(ro, off), e = MIN(ro + rl, end);

		r = tier_zero(t, slot, s, (size_t)(e - s));
		if (r < 0)
			return r;
		from = ro + rl;
	}
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
	if (ret_freed)
		*ret_freed = freed;
	return 0;
}

ssize_t tier_write_fd(struct tier *t, uint32_t slot, uint64_t off, int fd,
		      size_t len)
{
	char *p;

	if (NEVER(!range_ok(t, slot, off, len)) ||
	    NEVER(!range_held(t, slot, off, len)))
		return -EIO;
	if (!t->ops->direct || t->csum ||
	    __atomic_load_n(&t->fault_countdown, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	p = t->ops->direct(t, slot, off);
	if (!p)
		return -EOPNOTSUPP;
	if (read_exact(fd, p, len) < 0)
		return -EIO;
	__atomic_add_fetch(&t->stats.write_ops, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->stats.write_bytes, len, __ATOMIC_RELAXED);
	return (ssize_t)len;
}

const void *tier_read_direct(struct tier *t, uint32_t slot, uint64_t off,
			     size_t len)
{
	void *p;

	if (NEVER(!range_ok(t, slot, off, len)))
		return NULL;
	if (!t->ops->direct || t->csum ||
	    __atomic_load_n(&t->fault_countdown, __ATOMIC_RELAXED))
		return NULL;
	p = t->ops->direct(t, slot, off);
	if (p) {
		__atomic_add_fetch(&t->stats.read_ops, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->stats.read_bytes, len, __ATOMIC_RELAXED);
	}
	return p;
}

int tier_sync(struct tier *t)
{
	int r = fault_check(t, TIER_FAULT_SYNC);

	if (r == 0 && t->ops->sync)
		r = t->ops->sync(t);

	if (r < 0) {
		__atomic_add_fetch(&t->stats.io_errors, 1, __ATOMIC_RELAXED);
		r = backend_err(t, r);
	}
	return r;
}

int tier_path_check(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(path, W_OK | X_OK) < 0)
		return -errno; /* EACCES, or EROFS on a read-only mount */
	return 0;
}

int tier_space_check(const char *path, uint64_t size)
{
	struct statvfs vfs;
	uint64_t avail;

	if (statvfs(path, &vfs) < 0)
		return -errno;
	if (__builtin_mul_overflow((uint64_t)vfs.f_bavail,
				   (uint64_t)vfs.f_frsize, &avail))
		avail = UINT64_MAX;
	if (size > avail)
		return -ENOSPC;
	return 0;
}

#define LOCK_NAME "lock"
/*
 * The slab's name where it has one: the fallback of tier_backing_open()
 * (unlinked at once where the filesystem allows, kept where it does not)
 * and the named slab of an older tierfs.
 */
#define SLAB_NAME "slab"

/*
 * Tries of tier_private_dir_create(): a sweep by another mount on the
 * same path removes an empty tierfs-* directory (sweep_one()), so one
 * that vanishes between mkdtemp() and the creation of its lock file
 * (-ENOENT) is made again under a fresh name.  Three sweeps hitting
 * that window of a few system calls in a row do not happen.
 */
#define PRIVATE_DIR_TRIES 3

static int private_dir_create_once(const char *path, const char *name,
				   char **ret_dir, int *ret_lock_fd);

int tier_private_dir_create(const char *path, const char *name,
			    char **ret_dir, int *ret_lock_fd)
{
	int i, r = -ENOENT;

	for (i = 0; i < PRIVATE_DIR_TRIES && r == -ENOENT; i++)
		r = private_dir_create_once(path, name, ret_dir, ret_lock_fd);
	return r;
}

static int private_dir_create_once(const char *path, const char *name,
				   char **ret_dir, int *ret_lock_fd)
{
	char *dir, *lock = NULL;
	int fd = -1, r;

	if (asprintf(&dir, "%s/tierfs-%s-XXXXXX", path, name) < 0)
		return -ENOMEM;
	if (!mkdtemp(dir)) {
		r = -errno;
		free(dir);
		if (r == -EPERM || r == -ENOENT)
			r = -EACCES;
		return r;
	}
	/* mkdtemp() honours the umask; the mode must not depend on it */
	if (chmod(dir, 0700) < 0) {
		r = -errno;
		goto err;
	}
	if (asprintf(&lock, "%s/" LOCK_NAME, dir) < 0) {
		lock = NULL;
		r = -ENOMEM;
		goto err;
	}
	fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0 || fchmod(fd, 0600) < 0) {
		r = -errno;
		goto err;
	}
	/*
	 * Held until the fd is closed, by exit or by the kernel when the
	 * process dies.  A filesystem without flock() (ENOLCK, EOPNOTSUPP:
	 * NFS mounted nolock, some parallel filesystems) makes a directory
	 * that no sweep removes, which is the safe way to be wrong.
	 */
	while (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EINTR)
		;
	free(lock);
	*ret_dir = dir;
	*ret_lock_fd = fd;
	return 0;

err:
	if (fd >= 0)
		(void)close(fd);
	if (lock)
		(void)unlink(lock);
	free(lock);
	(void)rmdir(dir);
	free(dir);
	return r;
}

/*
 * How long tier_private_dir_remove() waits for its directory to empty:
 * on a FUSE filesystem (sshfs) a file unlinked while open is renamed to
 * .fuse_hiddenXXXX and removed only when the FUSE daemon there handles
 * the release of its last fd, which the kernel sends after close()
 * returns; on NFS the silly-renamed .nfsXXXX goes just as late.  Polled
 * every PRIVATE_DIR_POLL_US; a directory still not empty after that (a
 * server that went away, a file somebody else put there) is left for
 * the next mount's sweep.
 */
#define PRIVATE_DIR_WAIT_US 2000000
#define PRIVATE_DIR_POLL_US 5000

void tier_private_dir_remove(char *dir, int lock_fd)
{
	char *file;
	int waited;

	/*
	 * The lock goes first, then the names.  Unlinking "lock" while it
	 * is open would, on sshfs, only rename it to a .fuse_hidden file
	 * that outlives the rmdir below and leave an empty directory
	 * behind at every unmount.  A sweep by another mount that takes
	 * the lock in between removes what we were about to remove: each
	 * unlink or rmdir here may then fail with ENOENT, which is fine.
	 */
	if (lock_fd >= 0)
		(void)close(lock_fd);
	if (!dir)
		return;
	if (asprintf(&file, "%s/" LOCK_NAME, dir) >= 0) {
		(void)unlink(file);
		free(file);
	}
	/* the named slab of tier_backing_open(), where there is one */
	if (asprintf(&file, "%s/" SLAB_NAME, dir) >= 0) {
		(void)unlink(file);
		free(file);
	}
	for (waited = 0; rmdir(dir) < 0 && waited < PRIVATE_DIR_WAIT_US;
	     waited += PRIVATE_DIR_POLL_US) {
		if (errno != ENOTEMPTY && errno != EEXIST && errno != EBUSY)
			break; /* gone already (ENOENT), or not ours to wait for */
		(void)usleep(PRIVATE_DIR_POLL_US);
	}
}

/*
 * Can this filesystem use @fd, a file just unlinked while open?  Most can
 * (the inode lives on while open; NFS and FUSE's high-level library keep
 * it under a hidden name).  The GlusterFS FUSE client cannot: it answers
 * a setattr on such a file (fchmod, the call we make anyway) with
 * ESTALE, so a tier there could not even be set up.  Asked with the
 * calls a slab needs that go by the inode rather than by the open
 * handle (fchmod, fstat); reads, writes, ftruncate and fallocate carry
 * the handle.  Returns 0 or the -errno of the first call that failed.
 */
static int unlinked_usable(int fd)
{
	struct stat st;

	if (fchmod(fd, 0600) < 0 || fstat(fd, &st) < 0)
		return -errno;
	return 0;
}

/* Create @dir/SLAB_NAME, mode 0600 whatever the umask.  fd or -errno. */
static int slab_create_named(const char *name)
{
	int fd, r;

	fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	/* open() honours the umask */
	if (fchmod(fd, 0600) < 0) {
		r = -errno;
		(void)close(fd);
		(void)unlink(name);
		return r;
	}
	return fd;
}

/*
 * Three ways to get the slab, best first:
 *  1. O_TMPFILE: a file that never has a name.
 *  2. Where the filesystem lacks O_TMPFILE (EOPNOTSUPP, EISDIR, EINVAL,
 *     ENOENT: older kernels, NFS, FUSE), a named file, unlinked before
 *     it holds a byte, if the filesystem can still use it then
 *     (unlinked_usable()).
 *  3. Where it cannot (GlusterFS), the named file is made again and
 *     KEPT: @dir/slab lives as long as the private directory.  A clean
 *     unmount removes it (tier_private_dir_remove()); after a kill or a
 *     crash the next mount's sweep does, since its lock is free
 *     (tier_sweep_stale()) -- the data of a dead mount stays on the
 *     filesystem until then, which is the price of mounting there at
 *     all.  The mode (0600, in a 0700 directory) keeps it private.
 * Error paths: an error of O_TMPFILE other than "not supported", or of
 * creating, unlinking or re-creating the named file, is returned as is
 * and nothing is left behind (an unlink that failed is tried once more;
 * a named slab whose fchmod failed is unlinked).
 */
int tier_backing_prepare(struct tier *t, char **ret_dir, int *ret_lock_fd)
{
	int r = tier_path_check(t->path);

	*ret_dir = NULL;
	*ret_lock_fd = -1;
	if (r < 0)
		return r;
	r = tier_private_dir_create(t->path, t->name, ret_dir, ret_lock_fd);
	if (r < 0) {
		*ret_dir = NULL;
		*ret_lock_fd = -1;
		return r;
	}
	tier_sweep_stale(t->path, &t->swept_dirs, &t->swept_bytes);
	/* f_bavail: the space an unprivileged user may fill */
	r = tier_space_check(t->path, t->size);
	if (r < 0) {
		tier_private_dir_remove(*ret_dir, *ret_lock_fd);
		free(*ret_dir);
		*ret_dir = NULL;
		*ret_lock_fd = -1;
	}
	return r;
}

int tier_backing_open(const char *dir)
{
	char *name;
	int fd, r;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0) {
		/* open() honours the umask */
		if (fchmod(fd, 0600) < 0) {
			r = -errno;
			(void)close(fd);
			return r;
		}
		return fd;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL &&
	    errno != ENOENT)
		return -errno;
	if (asprintf(&name, "%s/" SLAB_NAME, dir) < 0)
		return -ENOMEM;
	fd = slab_create_named(name);
	if (fd < 0)
		goto out;
	if (unlink(name) < 0) {
		r = -errno;
		(void)unlink(name);
		(void)close(fd);
		fd = r;
		goto out;
	}
	if (unlinked_usable(fd) == 0)
		goto out;
	/* way 3: this filesystem loses an unlinked file; keep a name */
	(void)close(fd);
	fd = slab_create_named(name);
out:
	free(name);
	return fd;
}

/* The name an open, unlinked slab is kept under by NFS or FUSE. */
static bool is_hidden_slab(const char *name)
{
	return !strncmp(name, ".nfs", 4) || !strncmp(name, ".fuse_hidden", 12);
}

/*
 * Is @dir (an open directory, name @name in @path) a dead mount's private
 * directory?  Then remove it and add the bytes freed to *ret_bytes.
 */
static bool sweep_one(int dfd, const char *name, uint64_t *ret_bytes)
{
	int fd, lfd = -1;
	bool has_lock = false, has_slab = false, other = false, dead = false;
	bool has_nfs = false, empty = true;
	uint64_t bytes = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || (st.st_uid != geteuid() && geteuid() != 0)) {
		(void)close(fd);
		return false;
	}
	d = fdopendir(fd);
	if (!d) {
		(void)close(fd);
		return false;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			other = true;
		else if (!strcmp(de->d_name, LOCK_NAME))
			has_lock = true;
		else if (!strcmp(de->d_name, SLAB_NAME)) {
			has_slab = true;
			bytes += (uint64_t)st.st_blocks * 512;
		} else if (is_hidden_slab(de->d_name)) {
			/* on NFS an unlinked file still open when its node
			 * died stays as a silly-renamed .nfsXXXX: our slab;
			 * on a FUSE filesystem (sshfs) it is a .fuse_hiddenN
			 * until that filesystem's daemon sees the release */
			has_nfs = true;
			bytes += (uint64_t)st.st_blocks * 512;
		} else
			other = true;
		empty = false;
	}
	if (empty && !other) {
		/*
		 * A directory with nothing in it: what a tierfs left whose
		 * unmount could not remove it (before its lock file was
		 * unlinked the other way round; a server that went away
		 * mid-unmount), or a mount being set up right now, between
		 * mkdtemp() and the creation of its lock.  rmdir() is atomic
		 * about emptiness, and that mount makes a fresh directory
		 * when its lock cannot be created (PRIVATE_DIR_TRIES).
		 */
		dead = unlinkat(dfd, name, AT_REMOVEDIR) == 0;
		goto out;
	}
	if (other || (!has_lock && !has_slab))
		goto out; /* not ours */
	if (has_lock) {
		lfd = openat(fd, LOCK_NAME, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		dead = lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) == 0;
	} else {
		/*
		 * An older tierfs's directory has no lock to ask.  Removing
		 * it is safe even if that daemon still runs: its open fd or
		 * mapping keeps the data until it exits, and then the kernel
		 * frees it instead of leaving it behind.
		 */
		dead = true;
	}
	if (!dead)
		goto out;
	if (has_slab && unlinkat(fd, SLAB_NAME, 0) < 0)
		bytes = 0;
	if (has_nfs) {
		rewinddir(d);
		while ((de = readdir(d)))
			if (is_hidden_slab(de->d_name))
				(void)unlinkat(fd, de->d_name, 0);
	}
	if (has_lock) {
		/*
		 * Closed before the unlink, as in tier_private_dir_remove():
		 * on sshfs an open file's unlink is a rename to .fuse_hidden,
		 * which would keep the directory from going.  A mount never
		 * reuses a directory, so once dead it stays dead unlocked.
		 */
		(void)close(lfd);
		lfd = -1;
		(void)unlinkat(fd, LOCK_NAME, 0);
	}
	dead = unlinkat(dfd, name, AT_REMOVEDIR) == 0 || bytes > 0;
	if (dead)
		*ret_bytes += bytes;
out:
	if (lfd >= 0)
		(void)close(lfd);
	closedir(d);
	return dead;
}

void tier_sweep_stale(const char *path, unsigned *ret_dirs,
		      uint64_t *ret_bytes)
{
	struct dirent *de;
	DIR *d = opendir(path);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		/* tierfs-NAME-XXXXXX */
		if (n < sizeof("tierfs-x-XXXXXX") - 1 ||
		    strncmp(de->d_name, "tierfs-", 7) ||
		    de->d_name[n - 7] != '-' ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (sweep_one(dirfd(d), de->d_name, ret_bytes))
			(*ret_dirs)++;
	}
	closedir(d);
}
