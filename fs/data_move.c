// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * data_move.c -- the move of one extent to another tier
 * (data_migrate_extent(), data.h) for the migrator and ctl, and the
 * test hook points of its copy/switch protocol (testhook.h).  Deciding
 * what to move is migrate.c's.
 *
 * Locking: the caller holds no lock and pins the inode.  The copy is
 * made in chunks of at most TIERFS_MAX_IO (one buffer of that size,
 * whatever the extent size): each chunk is read under i_dlock shared,
 * only while the extent's place and write generation are unchanged, and
 * written with no lock held; the copy is switched in under i_dlock
 * exclusive only if the write generation is still unchanged.  At each
 * test hook point no lock is held (TESTHOOK_MOVE_COPIED comes after the
 * first chunk, before a destination slot is taken).
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
	char *buf;
	int more;
	ssize_t r;

	/* page aligned, so that a file tier can copy it direct (tier.h,
	 * tier_bulk_begin()) */
	if (posix_memalign((void **)&buf, 4096, chunk))
		return -ENOMEM;
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
			track_move(fs, inode, idx, src, dst);
		}
	} else {
		r = -EAGAIN;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	testhook(TESTHOOK_MOVE_SWITCHED, inode, idx);
	if (r < 0)
		goto out_free_dst;
	tier_slot_free(st, src_slot);
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
