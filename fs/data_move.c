// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * data_move.c -- the move of one extent to another tier
 * (data_migrate_extent(), data.h) for the migrator and ctl, and the
 * test hook points of its copy/switch protocol (testhook.h).  Deciding
 * what to move is migrate.c's.
 *
 * Locking: the caller holds no lock and pins the inode.  The copy is
 * made in chunks of at most TIERFS_MAX_IO (through one buffer no larger
 * than that or than what the extent holds, or straight into the new
 * slot where the destination lends its memory): each chunk is read
 * under i_dlock shared, only while the extent's place and write
 * generation are unchanged, and written with no lock held; the copy is
 * switched in under i_dlock exclusive only if the write generation is
 * still unchanged.  At each test hook point no lock is held
 * (TESTHOOK_MOVE_COPIED comes after the first chunk, with the
 * destination slot taken).
 *
 * Batches (data_move_batch_begin()/_end()): the slots a thread's moves
 * leave behind on a draining tier are given back together, each tier's
 * in one tier_slot_free_many() (a RAM tier's scattered small extents in
 * one process_madvise() with one TLB flush instead of a madvise and a
 * flush each: 13% of a small-file drain's CPU on this project's VMs,
 * 2026-12-06; elsewhere a run of consecutive slots in one discard), at
 * most DEFER_BYTES or DEFER_MAX of them at a time.  Only a
 * draining tier's: nothing is placed there, so its free space steers no
 * decision of the pass; a tier's slots freed by demotion or exchange are
 * given back at once, since the watermarks and the exchanges read them.
 *
 * Return: 0; -EAGAIN when the extent changed or moved meanwhile;
 * -ENOSPC when the destination is full; -ENOMEM; -EIO (checksum or
 * device) or a tier's -errno, logged once through tier_fail().
 */
#include <errno.h>
#include <stdlib.h>

#include "data.h"
#include "data_i.h"
#include "fs.h"
#include "inode.h"
#include "quota.h"
#include "testhook.h"
#include "tier.h"
#include "track.h"
#include "macro.h"
#include "banned.h"

/* Source slots given back at the end of a batch (see the top).  Owned
 * by the thread; no lock. */
#define DEFER_MAX 256
#define DEFER_BYTES (1u << 20)

struct deferred {
	uint8_t tier;
	uint32_t slot;
};

static __thread struct {
	bool on;
	unsigned n;
	uint64_t bytes;
	struct tierfs *fs;
	struct deferred v[DEFER_MAX];
} batch;

static int deferred_cmp(const void *a, const void *b)
{
	const struct deferred *x = a, *y = b;

	if (x->tier != y->tier)
		return x->tier < y->tier ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* Give back every deferred slot, each tier's in one call. */
static void batch_flush(void)
{
	unsigned i = 0;

	if (batch.n > 1)
		qsort(batch.v, batch.n, sizeof(batch.v[0]), deferred_cmp);
	while (i < batch.n) {
		uint32_t slots[DEFER_MAX];
		unsigned j = i;

		for (; j < batch.n && batch.v[j].tier == batch.v[i].tier; j++)
			slots[j - i] = batch.v[j].slot;
		tier_slot_free_many(batch.fs->tiers[batch.v[i].tier], slots,
				    j - i);
		i = j;
	}
	batch.n = 0;
	batch.bytes = 0;
}

/* The source slot of a finished move: given back now, or with the batch. */
static void source_free(struct tierfs *fs, unsigned src, uint32_t slot)
{
	struct tier *st = fs->tiers[src];

	/* only a draining tier's: nothing is placed on it, so its free
	 * space steers no decision (watermarks, exchanges) of the pass */
	if (!batch.on || batch.fs != fs ||
	    !(__atomic_load_n(&fs->draining, __ATOMIC_RELAXED) & (1u << src))) {
		tier_slot_free(st, slot);
		return;
	}
	batch.v[batch.n].tier = (uint8_t)src;
	batch.v[batch.n].slot = slot;
	batch.n++;
	batch.bytes += tier_held(st, slot);
	if (batch.n == DEFER_MAX || batch.bytes >= DEFER_BYTES)
		batch_flush();
}

void data_move_batch_begin(struct tierfs *fs)
{
	batch.on = true;
	batch.fs = fs;
	batch.n = 0;
	batch.bytes = 0;
}

void data_move_batch_end(void)
{
	if (batch.on)
		batch_flush();
	batch.on = false;
	batch.fs = NULL;
}

/* NULL in production; see testhook.h */
void (*testhook_fn)(enum testhook_point point, struct tfs_inode *inode,
		   uint64_t idx);

/*
 * Read bytes [@off, @off+@len) of extent @idx into @buf under the shared
 * data lock, if the extent is still at (@src, @slot) with write
 * generation @gen.  Return: 0, -EAGAIN when it changed, or the source
 * tier's -errno (logged).
 */
static int copy_chunk(struct tierfs *fs, struct tfs_inode *inode,
		      uint64_t idx, unsigned src, uint32_t slot, uint32_t gen,
		      uint64_t off, char *buf, size_t len)
{
	const struct extent *e;
	ssize_t r;

	pthread_rwlock_rdlock(&inode->i_dlock);
	e = extent_map_lookup(&inode->i_map, idx);
	if (!e || e->tier != src || e->slot != slot || e->wgen != gen) {
		pthread_rwlock_unlock(&inode->i_dlock);
		return -EAGAIN;
	}
	/* verifies the source's checksums: corruption is never copied */
	r = tier_read(fs->tiers[src], slot, off, buf, len);
	pthread_rwlock_unlock(&inode->i_dlock);
	if (r < 0)
		return tier_fail(fs, src, inode, (idx << fs->extent_shift) + off,
				 "migration read", (int)r);
	return 0;
}

/*
 * The next run of units the source holds at or after @from, under the
 * shared lock, if the extent is unchanged.  Return: 1 and the run, 0
 * when there is none, -EAGAIN when the extent changed.
 */
static int next_run(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		    unsigned src, uint32_t slot, uint32_t gen, uint64_t from,
		    uint64_t *ret_off, uint64_t *ret_len)
{
	const struct extent *e;
	int r;

	pthread_rwlock_rdlock(&inode->i_dlock);
	e = extent_map_lookup(&inode->i_map, idx);
	if (!e || e->tier != src || e->slot != slot || e->wgen != gen)
		r = -EAGAIN;
	else
		r = tier_held_next(fs->tiers[src], slot, from, ret_off,
				   ret_len);
	pthread_rwlock_unlock(&inode->i_dlock);
	return r;
}

int data_migrate_extent(struct tierfs *fs, struct tfs_inode *inode,
			uint64_t idx, unsigned src, uint32_t src_slot,
			unsigned dst)
{
	/* the buffer is bounded whatever the extent size: the extent is
	 * copied in chunks of at most TIERFS_MAX_IO */
	size_t chunk = MIN((size_t)fs->extent_size, (size_t)TIERFS_MAX_IO);
	struct tier *st = fs->tiers[src], *dt = fs->tiers[dst];
	struct extent *e;
	uint32_t gen, dslot = 0;
	bool have_dst = false, hooked = false;
	uint64_t off = 0, roff = 0, rlen = 0;
	size_t n = 0;
	char *buf = NULL;
	int more;
	ssize_t r;

	tier_bulk_begin();

	/* 1. note the write generation; take the destination slot */
	pthread_rwlock_rdlock(&inode->i_dlock);
	e = extent_map_lookup(&inode->i_map, idx);
	if (!e || e->tier != src || e->slot != src_slot) {
		pthread_rwlock_unlock(&inode->i_dlock);
		r = -EAGAIN;
		goto out_free;
	}
	gen = e->wgen;
	/* the buffer no larger than what the extent holds now (a 4 KiB file
	 * moves through 4 KiB, not a 1 MiB mmap made and unmapped per move:
	 * 26% of a small-file drain); if it grows meanwhile, the copy just
	 * takes more chunks */
	chunk = (size_t)MIN((uint64_t)chunk,
			    MAX(ALIGN_UP(tier_held(st, src_slot), (uint64_t)4096),
				(uint64_t)4096));
	pthread_rwlock_unlock(&inode->i_dlock);
	more = next_run(fs, inode, idx, src, src_slot, gen, 0, &roff, &rlen);
	if (more < 0) {
		r = more;
		goto out_free;
	}
	r = tier_slot_get(dt, &dslot);
	if (r < 0)
		goto out_free;
	have_dst = true;

	/*
	 * 2. copy chunk by chunk, each read under the shared lock, only
	 * while the extent is unchanged (same place, same write
	 * generation), so the copy is of one version of the extent or the
	 * move gives up: readers go on, writers wait for one chunk at most.
	 * Only the units the extent holds are copied (tier.h).  Where the
	 * destination lends its memory (RAM: tier_write_direct()) the
	 * source is read straight into the new slot, which nobody sees
	 * before the switch; else through @buf, written with no lock held.
	 */
	for (off = roff; more;) {
		char *to;

		n = (size_t)MIN((uint64_t)chunk, roff + rlen - off);
		r = tier_charge(dt, dslot, off, n, NULL);
		if (r < 0) {
			r = tier_fail(fs, dst, inode,
				      (idx << fs->extent_shift) + off,
				      "migration write", (int)r);
			goto out_free_dst;
		}
		to = tier_write_direct(dt, dslot, off, n);
		/* made when first needed, page aligned so that a file tier
		 * can copy it direct (tier.h, tier_bulk_begin()) */
		if (!to && !buf && posix_memalign((void **)&buf, 4096, chunk)) {
			buf = NULL;
			r = -ENOMEM;
			goto out_free_dst;
		}
		r = copy_chunk(fs, inode, idx, src, src_slot, gen, off,
			       to ? to : buf, n);
		if (r < 0)
			goto out_free_dst;
		if (!hooked) {
			testhook(TESTHOOK_MOVE_COPIED, inode, idx);
			hooked = true;
		}
		if (!to) /* a new slot: each chunk over zeros, once */
			r = tier_write_new(dt, dslot, off, buf, n);
		if (r < 0) {
			r = tier_fail(fs, dst, inode,
				      (idx << fs->extent_shift) + off,
				      "migration write", (int)r);
			goto out_free_dst;
		}
		off += n;
		if (off >= roff + rlen) {
			more = next_run(fs, inode, idx, src, src_slot, gen, off,
					&roff, &rlen);
			if (more < 0) {
				r = more;
				goto out_free_dst;
			}
			off = roff;
		}
	}
	if (!hooked) /* nothing held: nothing copied */
		testhook(TESTHOOK_MOVE_COPIED, inode, idx);
	testhook(TESTHOOK_MOVE_WRITTEN, inode, idx);

	/* 3. switch atomically, unless a writer changed the extent since */
	pthread_rwlock_wrlock(&inode->i_dlock);
	e = extent_map_lookup(&inode->i_map, idx);
	if (e && e->tier == src && e->slot == src_slot && e->wgen == gen) {
		/* quota.h (issue 11): -ENOSPC when a quota's cap on @dst
		 * is reached; the usage per tier moves with the extent */
		r = quota_move(fs, inode, src, dst, tier_held(st, src_slot));
		if (r == 0) {
			e->tier = (uint8_t)dst;
			e->slot = dslot;
			/* an admin's placement ends with any move; the
			 * caller that made it sets the flag again */
			e->flags &= (uint8_t)~EXTENT_F_PLACED;
			track_move(fs, inode, idx, src, dst);
		}
	} else {
		r = -EAGAIN;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	testhook(TESTHOOK_MOVE_SWITCHED, inode, idx);
	if (r < 0)
		goto out_free_dst;
	source_free(fs, src, src_slot);
	tier_bulk_end();
	free(buf);
	return 0;

out_free_dst:
	if (have_dst)
		tier_slot_free(dt, dslot);
out_free:
	tier_bulk_end();
	free(buf);
	return (int)r;
}
