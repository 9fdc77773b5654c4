// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier_io.c -- the data wrappers around struct tier_ops: bounds and held
 * checks, counters, the fault hook, checksums per block (verified on
 * read, kept on write), zeroing and punching holes, the zero-copy
 * paths and sync.  See tier.h, tier_read() and friends.  Below it in
 * the module: tier_units.c (the held-units checks of every write, and
 * giving back a hole's units) and tier_medium.c (tier_errno()).
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

/*
 * The checksum chunk table: one pointer per TIER_CHUNK_SLOTS slots, the
 * chunks themselves made as data arrives (csum_chunk()); every block
 * starts as all zeros.
 */
int tier_csum_setup(struct tier *t)
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
		r = tier_watch_enter(t->watch, true);
	if (r == 0) {
		r = t->ops->read(t, slot, off, buf, len);
		tier_watch_leave(t->watch);
	}
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

	if (NEVER(!tier_range_ok(t, slot, off, len)))
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
		if (r == -EBADMSG && aligned)
			/* read straight into @buf: damage must not reach a
			 * caller that ignores the error */
			memset(buf, 0, len);
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
			const char *buf, size_t len, bool fresh,
			uint32_t *ret_sums)
{
	static const char zeros[CSUM_PIECE];
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
		if (fresh && s == ra && e == rz) {
			/* whole pieces over zeros (tier_write_new()): the old
			 * ones need no read, their hash is that of zeros */
			sum = csum_get(t, slot, b);
			for (uint64_t q = s; q < e; q += ps)
				sum ^= piece_hash(zeros, ps, (q - b) / ps) ^
				       piece_hash(buf + (q - off), ps,
						  (q - b) / ps);
			ret_sums[n] = sum;
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

static ssize_t write_csummed(struct tier *t, uint32_t slot, uint64_t off,
			     const void *buf, size_t len, bool fresh)
{
	uint32_t sums_small[32];
	uint32_t *sums = sums_small, *table = NULL;
	unsigned nb = 0;
	ssize_t r;

	if (NEVER(!tier_range_ok(t, slot, off, len)) ||
	    NEVER(!tier_range_held(t, slot, off, len)))
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
		r = csum_compute(t, slot, off, buf, len, fresh, sums);
		if (r < 0)
			goto out;
	}
	r = be_write(t, slot, off, buf, len);
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

ssize_t tier_write(struct tier *t, uint32_t slot, uint64_t off,
		   const void *buf, size_t len)
{
	return write_csummed(t, slot, off, buf, len, false);
}

ssize_t tier_write_new(struct tier *t, uint32_t slot, uint64_t off,
		       const void *buf, size_t len)
{
	return write_csummed(t, slot, off, buf, len, true);
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
 * Punching a hole is the data path's: the zeros over the units the range
 * covers only in part go through tier_write(), which keeps their
 * checksums; then tier_units_give_back() returns the units wholly
 * inside to the allocator.
 */
int tier_punch(struct tier *t, uint32_t slot, uint64_t off, uint64_t len,
	       uint64_t *ret_freed)
{
	uint64_t end = off + len, from = ALIGN_DOWN(off, tier_unit(t)), ro, rl;
	uint64_t freed;
	int r;

	if (ret_freed)
		*ret_freed = 0;
	if (NEVER(!tier_range_ok(t, slot, off, len)))
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
	freed = tier_units_give_back(t, slot, off, len);
	if (ret_freed)
		*ret_freed = freed;
	return 0;
}

ssize_t tier_write_fd(struct tier *t, uint32_t slot, uint64_t off, int fd,
		      size_t len)
{
	char *p;

	if (NEVER(!tier_range_ok(t, slot, off, len)) ||
	    NEVER(!tier_range_held(t, slot, off, len)))
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

void *tier_write_direct(struct tier *t, uint32_t slot, uint64_t off,
			size_t len)
{
	void *p;

	if (NEVER(!tier_range_ok(t, slot, off, len)) ||
	    NEVER(!tier_range_held(t, slot, off, len)))
		return NULL;
	if (!t->ops->direct || t->csum ||
	    __atomic_load_n(&t->fault_countdown, __ATOMIC_RELAXED))
		return NULL;
	p = t->ops->direct(t, slot, off);
	if (p) {
		__atomic_add_fetch(&t->stats.write_ops, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->stats.write_bytes, len,
				   __ATOMIC_RELAXED);
	}
	return p;
}

const void *tier_read_direct(struct tier *t, uint32_t slot, uint64_t off,
			     size_t len)
{
	void *p;

	if (NEVER(!tier_range_ok(t, slot, off, len)))
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

