// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * data_extent.c -- one extent of file data, for the rest of the data
 * module (data_i.h): placing a new extent on the first tier with room
 * (extent_place()), dropping extents and giving their slots back in
 * runs (extent_drop(), drop_from(), data_release()), zeroing part of an
 * extent in one tier write (zero_in_extent()), and the rate-limited log
 * line of a failing tier (tier_fail()).
 *
 * Locking: no function here takes a lock; the callers hold the inode's
 * i_dlock exclusive (tier_fail() needs no lock; data_release() runs on
 * an inode nobody else can reach).  Tier slot allocation takes the
 * tier's alloc_lock inside tier.c.
 *
 * Return: 0 or -errno (-ENOSPC, -EDQUOT, -ENOMEM, -EIO: a tier's errno
 * is mapped by tier_errno(), in tier.c's wrappers and in tier_fail(),
 * which also turns a checksum mismatch into -EIO); extent_place()
 * returns NULL and sets *ret_err instead.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "data.h"
#include "data_i.h"
#include "fs.h"
#include "inode.h"
#include "quota.h"
#include "track.h"
#include "tier.h"
#include "macro.h"
#include "log.h"
#include "never.h"
#include "banned.h"

/* The tier bytes @inode's extents hold change by @delta (i_bytes). */
static void bytes_add(struct tfs_inode *inode, int64_t delta)
{
	__atomic_add_fetch(&inode->i_bytes, (uint64_t)delta, __ATOMIC_RELAXED);
}

/* Bytes of the units of tier @t that touch [@off, @off+@len) of an
 * extent: what a fresh slot must hold for them. */
static uint64_t unit_span_bytes(const struct tier *t, uint64_t off,
				uint64_t len)
{
	uint64_t unit = tier_unit(t);

	return len ? ALIGN_UP(off + len, unit) - ALIGN_DOWN(off, unit) : 0;
}

/*
 * Take a fresh slot on tier @t holding the units of [@eoff, @eoff+@len)
 * plus @extra bytes of quota (an extent's held bytes that come along
 * when it moves), charging @inode's quotas.  i_dlock exclusive.
 * Return: 0 and *ret_slot; -EDQUOT; -ENOSPC (the tier, the medium or a
 * quota's cap on it is full); -ENOMEM; or -EIO (the tier failed to
 * reserve the space: logged through tier_fail()).  On failure nothing
 * is held.
 */
static int slot_take(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		     uint64_t idx, uint64_t eoff, uint64_t len, uint64_t extra,
		     uint32_t *ret_slot)
{
	struct tier *tt = fs->tiers[t];
	uint64_t need = unit_span_bytes(tt, eoff, len) + extra;
	/* a relocation's charge is given back in part at once: not a peak */
	int r = extra ? quota_charge_relocating(fs, inode, t, need)
		      : quota_charge(fs, inode, t, need);

	if (r < 0)
		return r;
	r = tier_slot_get(tt, ret_slot);
	if (r == 0) {
		r = tier_charge(tt, *ret_slot, eoff, len, NULL);
		if (r < 0)
			tier_slot_free(tt, *ret_slot);
	}
	if (r < 0) {
		quota_uncharge(fs, inode, t, need);
		/* a full medium, or a failing one (a dead network tier's
		 * reserve): logged, and the caller spills past it */
		if ((r == -ENOSPC && tier_medium_full(tt)) ||
		    (r != -ENOSPC && r != -ENOMEM))
			r = tier_fail(fs, t, inode,
				      (idx << fs->extent_shift) + eoff,
				      "placement", r);
	}
	return r;
}

/*
 * Allocate a slot for extent @idx of @inode on the first tier with room
 * for the units of [@eoff, @eoff+@len) and insert it.  Called with
 * i_dlock exclusive.  The quotas above the file are charged here, where
 * the space is taken (quota.h): a tier whose cap in some quota is
 * reached is skipped as if it were full, a quota whose total is reached
 * fails the placement with EDQUOT.
 * Return: the new entry, or NULL with *ret_err = -ENOSPC, -EDQUOT,
 * -ENOMEM or -EIO (tiers that failed to reserve are logged and skipped,
 * so a dead tier is spilled past; -EIO when the last one failed).
 */
struct extent *extent_place(struct tierfs *fs, struct tfs_inode *inode,
			    uint64_t idx, unsigned skip,
			    const struct policy *pol, uint64_t eoff,
			    uint64_t len, int *ret_err)
{
	uint8_t order[TIER_MAX_CONF];
	unsigned n = policy_place_order(pol, idx << fs->extent_shift, order);
	uint32_t draining = __atomic_load_n(&fs->draining, __ATOMIC_RELAXED);
	struct extent e = { 0 };
	int r = -ENOSPC;

	/*
	 * A lending tier (--page-cache only) is a write buffer of
	 * fs->lend_cap bytes: beyond it new data goes to the next tier (the
	 * page cache holds it too: not a spill), unless the extent's home
	 * is that tier or no other tier takes it (@capped: the second
	 * round, those tiers only).
	 */
	uint32_t lend = fs->lending, capped = 0;
	int home = lend ? policy_home(pol, idx << fs->extent_shift) : -1;

	for (unsigned i = 0; i < n; i++) {
		unsigned t = order[i];

		if ((skip | draining) & (1u << t))
			continue;
		if ((lend & (1u << t)) && (int)t != home &&
		    tier_used_bytes(fs->tiers[t]) >= fs->lend_cap) {
			capped |= 1u << t;
			continue;
		}
		r = slot_take(fs, inode, t, idx, eoff, len, 0, &e.slot);
		if (r == -EDQUOT)
			break; /* no tier helps */
		if (r == 0) {
			e.tier = (uint8_t)t;
			break;
		}
		/* a tier cap in a quota spills as a full tier does */
		__atomic_add_fetch(&fs->tiers[t]->stats.spills, 1,
				   __ATOMIC_RELAXED);
	}
	for (unsigned i = 0; i < n && r < 0 && r != -EDQUOT && capped; i++) {
		unsigned t = order[i];

		if (!(capped & (1u << t)))
			continue;
		r = slot_take(fs, inode, t, idx, eoff, len, 0, &e.slot);
		if (r == 0)
			e.tier = (uint8_t)t;
		else if (r == -EDQUOT)
			break;
	}
	if (r < 0) {
		*ret_err = r;
		return NULL;
	}
	e.wgen = ++inode->i_wgen;
	e.stamp = tierfs_tick(fs);
	r = extent_map_insert(&inode->i_map, idx, &e);
	if (r < 0) {
		uint64_t held = tier_held(fs->tiers[e.tier], e.slot);

		tier_slot_free(fs->tiers[e.tier], e.slot);
		quota_uncharge(fs, inode, e.tier, held);
		*ret_err = r;
		return NULL;
	}
	bytes_add(inode, (int64_t)tier_held(fs->tiers[e.tier], e.slot));
	if (e.tier) /* the job report (issue 19) */
		quota_io_spill(inode_quota(inode),
			       tier_held(fs->tiers[e.tier], e.slot));
	track_add(fs, inode, idx, e.tier, pol);
	return extent_map_lookup(&inode->i_map, idx);
}

/*
 * Copy the held units of (@st, @sslot) into the fresh slot (@dt,
 * @dslot), charging them there.  i_dlock exclusive.  Return: 0, -ENOMEM,
 * -ENOSPC or a tier's -errno (logged: reads as "relocation read").
 */
static int copy_held(struct tierfs *fs, struct tfs_inode *inode,
		     uint64_t idx, unsigned src, uint32_t sslot, unsigned dst,
		     uint32_t dslot)
{
	size_t chunk = MIN((size_t)fs->extent_size, (size_t)TIERFS_MAX_IO);
	struct tier *st = fs->tiers[src], *dt = fs->tiers[dst];
	uint64_t off = 0, roff, rlen;
	char *buf = NULL;
	int r = 0;

	while (r == 0 && tier_held_next(st, sslot, off, &roff, &rlen)) {
		r = tier_charge(dt, dslot, roff, rlen, NULL);
		if (!buf && r == 0) {
			buf = malloc(chunk);
			if (!buf)
				r = -ENOMEM;
		}
		for (uint64_t o = roff; r == 0 && o < roff + rlen; o += chunk) {
			size_t n = (size_t)MIN((uint64_t)chunk, roff + rlen - o);
			ssize_t w = tier_read(st, sslot, o, buf, n);

			if (w < 0) {
				r = tier_fail(fs, src, inode,
					      (idx << fs->extent_shift) + o,
					      "relocation read", (int)w);
				break;
			}
			w = tier_write(dt, dslot, o, buf, n);
			if (w < 0)
				r = tier_fail(fs, dst, inode,
					      (idx << fs->extent_shift) + o,
					      "relocation write", (int)w);
		}
		off = roff + rlen;
	}
	free(buf);
	return r;
}

/*
 * Move extent @idx, whose tier has no room for it to grow, to the first
 * other tier of @pol's order that has room for what it holds plus the
 * units of [@eoff, @eoff+@len), which it then holds too.  The extent
 * keeps its heat; the copy is made under i_dlock exclusive (held by the
 * caller), so nobody sees it half done.
 * Return: 0; -ENOSPC when no tier has room; -EDQUOT; -ENOMEM; or a
 * tier's -errno.  On failure the extent is as it was.
 */
static int extent_relocate(struct tierfs *fs, struct tfs_inode *inode,
			   uint64_t idx, const struct policy *pol,
			   uint64_t eoff, uint64_t len)
{
	struct extent *e = extent_map_lookup(&inode->i_map, idx);
	uint8_t order[TIER_MAX_CONF];
	unsigned n = policy_place_order(pol, idx << fs->extent_shift, order);
	uint32_t draining = __atomic_load_n(&fs->draining, __ATOMIC_RELAXED);
	unsigned src = e->tier;
	uint32_t sslot = e->slot, dslot;
	uint64_t held = tier_held(fs->tiers[src], sslot);
	int r = -ENOSPC;

	__atomic_add_fetch(&fs->tiers[src]->stats.spills, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < n; i++) {
		unsigned t = order[i];

		if (t == src || (draining & (1u << t)))
			continue;
		r = slot_take(fs, inode, t, idx, eoff, len, held, &dslot);
		if (r == -EDQUOT)
			return r;
		if (r < 0)
			continue;
		r = copy_held(fs, inode, idx, src, sslot, t, dslot);
		if (r == 0) {
			uint64_t now = tier_held(fs->tiers[t], dslot);

			/* the quota took span + held; the slot holds less
			 * where the two overlap */
			quota_uncharge(fs, inode, t,
				       unit_span_bytes(fs->tiers[t], eoff,
						       len) +
					       held - now);
			quota_uncharge(fs, inode, src, held);
			tier_slot_free(fs->tiers[src], sslot);
			e->tier = (uint8_t)t;
			e->slot = dslot;
			e->flags &= (uint8_t)~EXTENT_F_PLACED;
			e->wgen = ++inode->i_wgen;
			track_move(fs, inode, idx, src, t);
			bytes_add(inode, (int64_t)(now - held));
			quota_settle(fs, inode);
			/* the job report (issue 19): what it brought down
			 * from tier 0 spilled too */
			if (t)
				quota_io_spill(inode_quota(inode),
					       src ? now - held : now);
			return 0;
		}
		quota_uncharge(fs, inode, t,
			       unit_span_bytes(fs->tiers[t], eoff, len) + held);
		tier_slot_free(fs->tiers[t], dslot);
		if (r != -ENOSPC)
			return r;
	}
	return r;
}

/*
 * Make extent @idx of @inode hold the units of [@eoff, @eoff+@len):
 * charge those it lacks on its tier, or move it where there is room
 * (extent_relocate()) when its tier or a quota's cap on it is full.
 * i_dlock exclusive.  Return: 0 (the entry may have moved: look it up
 * again), -ENOSPC, -EDQUOT, -ENOMEM or a tier's -errno.
 */
int extent_grow(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		const struct policy *pol, uint64_t eoff, uint64_t len)
{
	struct extent *e = extent_map_lookup(&inode->i_map, idx);
	struct tier *tt;
	uint64_t need;
	int r;

	if (NEVER(!e))
		return -EIO;
	tt = fs->tiers[e->tier];
	need = tier_uncharged(tt, e->slot, eoff, len);
	if (need == 0)
		return 0;
	r = quota_charge(fs, inode, e->tier, need);
	if (r == -EDQUOT)
		return r;
	if (r == 0) {
		r = tier_charge(tt, e->slot, eoff, len, NULL);
		if (r == 0) {
			/* a change of what the extent holds: a migrator's
			 * copy made before it is stale */
			e->wgen = ++inode->i_wgen;
			bytes_add(inode, (int64_t)need);
			if (e->tier) /* the job report (issue 19) */
				quota_io_spill(inode_quota(inode), need);
			return 0;
		}
		quota_uncharge(fs, inode, e->tier, need);
		if (r != -ENOSPC)
			return tier_fail(fs, e->tier, inode,
					 (idx << fs->extent_shift) + eoff,
					 "allocation", r);
		if (tier_medium_full(tt))
			tier_fail(fs, e->tier, inode,
				  (idx << fs->extent_shift) + eoff,
				  "allocation", r);
	}
	return extent_relocate(fs, inode, idx, pol, eoff, len);
}

/*
 * Log a tier failure, at most once per tier and kind (I/O error, checksum
 * mismatch, full medium) every TIER_WARN_INTERVAL
 * seconds: a failing device must not flood the log, and one line is
 * enough to tell the administrator which tier, which file, where and
 * why.  The line names the inode and the byte offset in the file; not
 * the path, which would need ns_lock, and ns_lock comes before the data
 * lock the callers hold (`tierctl` and `find -inum` give the name).
 * For an error tier.c mapped to EIO (tier_errno()), the line gives the
 * back end's own errno (tier_last_error()): "Transport endpoint is not
 * connected" tells the admin that the network filesystem under the tier
 * lost its server, where the program only gets EIO.
 *
 * Return: the errno the client gets, tier_errno(@err): -EIO for a
 * checksum mismatch (tier_read's -EBADMSG: the data read back is not
 * what was written) and for any error that means nothing to a program
 * (issue 16: a dead network tier's ENOTCONN, ESTALE, ...), else @err
 * (-ENOSPC, -ENOMEM, -EIO).  Every tier errno that reaches a FUSE reply
 * passes through here or through tier.c's wrappers, which map it the
 * same way.
 */
#define TIER_WARN_INTERVAL 10

int tier_fail(struct tierfs *fs, unsigned t, struct tfs_inode *inode,
	      uint64_t off, const char *what, int err)
{
	bool csum = err == -EBADMSG;
	bool full = err == -ENOSPC && tier_medium_full(fs->tiers[t]);
	int64_t *warned = &fs->tier_warned[t][csum ? 1 : full ? 2 : 0];
	int64_t now = (int64_t)now_ts().tv_sec;
	int64_t last = __atomic_load_n(warned, __ATOMIC_RELAXED);
	int ret = tier_errno(err), cause = err;
	char fields[160];

	if (now - last < TIER_WARN_INTERVAL)
		goto out;
	if (!__atomic_compare_exchange_n(warned, &last, now, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		goto out; /* another thread logs it */
	if (err == -EIO && tier_last_error(fs->tiers[t]) < 0)
		cause = tier_last_error(fs->tiers[t]);
	snprintf(fields, sizeof(fields),
		 "TIERFS_TIER=%s\nTIERFS_INODE=%llu\nTIERFS_OFFSET=%llu",
		 fs->tiers[t]->name, (unsigned long long)inode->i_ino,
		 (unsigned long long)off);
	if (full)
		log_fields(LOG_LVL_ERR, fields,
			   "the filesystem under tier '%s' (%s) is full below the tier's configured size: %s of inode %llu at offset %llu goes to the next tier",
			   fs->tiers[t]->name,
			   fs->tiers[t]->path ? fs->tiers[t]->path : "-", what,
			   (unsigned long long)inode->i_ino,
			   (unsigned long long)off);
	else if (csum)
		log_fields(LOG_LVL_ERR, fields,
			   "checksum mismatch on tier '%s': %s of inode %llu at offset %llu read back other data than was written; the read fails with EIO",
			   fs->tiers[t]->name, what,
			   (unsigned long long)inode->i_ino,
			   (unsigned long long)off);
	else
		log_fields(LOG_LVL_ERR, fields,
			   "%s error on tier '%s': inode %llu at offset %llu: %s%s",
			   what, fs->tiers[t]->name,
			   (unsigned long long)inode->i_ino,
			   (unsigned long long)off, strerror(-cause),
			   cause != ret && ret == -EIO ? " (the program gets EIO)"
						       : "");
out:
	return ret;
}

/* Remove extent @idx and give its slot back.  Called with i_dlock
 * exclusive. */
void extent_drop(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx)
{
	struct extent old;

	track_drop(fs, inode, idx, idx);
	if (extent_map_remove(&inode->i_map, idx, &old) == 0) {
		uint64_t held = tier_held(fs->tiers[old.tier], old.slot);

		tier_slot_free(fs->tiers[old.tier], old.slot);
		quota_uncharge(fs, inode, old.tier, held);
		bytes_add(inode, -(int64_t)held);
	}
}

/*
 * Slots given back in bulk (truncate, punch, release of a file): gathered
 * per tier, then sorted and handed back one run of consecutive slots at a
 * time, so that a tier can give a run's space back with one call instead
 * of one per extent -- a 1 GiB file of 64 KiB extents is 16384 hole
 * punches otherwise.  Without memory to gather, a slot is freed at once.
 */
struct slot_batch {
	uint32_t *slots[TIER_MAX_CONF];
	uint32_t n[TIER_MAX_CONF], cap[TIER_MAX_CONF];
	uint64_t freed[TIER_MAX_CONF]; /* bytes given back, for the quota */
};

static void batch_add(struct tierfs *fs, struct slot_batch *b, unsigned t,
		      uint32_t slot)
{
	b->freed[t] += tier_held(fs->tiers[t], slot);
	if (b->n[t] == b->cap[t]) {
		uint32_t ncap = b->cap[t] ? b->cap[t] * 2 : 64;
		uint32_t *v = realloc(b->slots[t], ncap * sizeof(*v));

		if (!v) {
			tier_slot_free(fs->tiers[t], slot);
			return;
		}
		b->slots[t] = v;
		b->cap[t] = ncap;
	}
	b->slots[t][b->n[t]++] = slot;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Give back slots @first .. @first+@n-1 of @t: one tier call, so a file
 * tier punches the run's backing range once instead of per slot. */
static void slots_free_run(struct tier *t, uint32_t first, uint32_t n)
{
	tier_slot_free_run(t, first, n);
}

/* Free what @b gathered for @inode's extents and empty it; the quotas
 * above @inode give the slots back too. */
static void batch_flush(struct tierfs *fs, struct tfs_inode *inode,
			struct slot_batch *b)
{
	for (unsigned t = 0; t < fs->ntiers; t++) {
		uint32_t *v = b->slots[t];
		uint32_t n = b->n[t];

		quota_uncharge(fs, inode, t, b->freed[t]);
		bytes_add(inode, -(int64_t)b->freed[t]);
		b->freed[t] = 0;

		if (n > 1)
			qsort(v, n, sizeof(*v), cmp_u32);
		for (uint32_t i = 0; i < n;) {
			uint32_t k = 1;

			while (i + k < n && v[i + k] == v[i] + k)
				k++;
			slots_free_run(fs->tiers[t], v[i], k);
			i += k;
		}
		free(v);
		b->slots[t] = NULL;
		b->n[t] = b->cap[t] = 0;
	}
}

/* Free every extent with index in [@first, @last].  Called with i_dlock
 * exclusive. */
void drop_from(struct tierfs *fs, struct tfs_inode *inode, uint64_t first,
	       uint64_t last)
{
	struct slot_batch b = { 0 };
	struct extent old;
	uint64_t idx;

	track_drop(fs, inode, first, last);
	while (extent_map_next(&inode->i_map, first, &idx) && idx <= last) {
		if (extent_map_remove(&inode->i_map, idx, &old) == 0)
			batch_add(fs, &b, old.tier, old.slot);
		if (idx == EXTENT_MAP_MAX_INDEX)
			break;
		first = idx + 1;
	}
	batch_flush(fs, inode, &b);
}

/* Zero [off, off+len) inside extent @idx if it is present, in one tier
 * write (tier_zero()); the extent holds every unit of
 * the range (fallocate's zero-range allocated them).  Called with
 * i_dlock exclusive. */
int zero_in_extent(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		   uint64_t off, uint64_t len)
{
	struct extent *e = extent_map_lookup(&inode->i_map, idx);
	int r;

	if (!e || len == 0)
		return 0;
	e->wgen = ++inode->i_wgen;
	/* one write: a failure changes nothing */
	r = tier_zero(fs->tiers[e->tier], e->slot, off, (size_t)len);
	if (r < 0)
		r = tier_fail(fs, e->tier, inode, (idx << fs->extent_shift) + off,
			      "zeroing", r);
	return r;
}

/*
 * Make [off, off+len) inside extent @idx read as zeros, giving back the
 * units wholly inside it (tier_punch()), and drop the extent when it no
 * longer holds anything.  Called with i_dlock exclusive.
 * Return: 0 or a tier's -errno (logged).
 */
int punch_in_extent(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		    uint64_t off, uint64_t len)
{
	struct extent *e = extent_map_lookup(&inode->i_map, idx);
	struct tier *tt;
	uint64_t freed;
	int r;

	if (!e || len == 0)
		return 0;
	tt = fs->tiers[e->tier];
	e->wgen = ++inode->i_wgen;
	r = tier_punch(tt, e->slot, off, len, &freed);
	if (freed) {
		quota_uncharge(fs, inode, e->tier, freed);
		bytes_add(inode, -(int64_t)freed);
	}
	if (r < 0)
		return tier_fail(fs, e->tier, inode,
				 (idx << fs->extent_shift) + off, "zeroing", r);
	if (tier_held(tt, e->slot) == 0)
		extent_drop(fs, inode, idx);
	return 0;
}

struct release_ctx {
	struct tierfs *fs;
	struct slot_batch b;
};

static void release_one(const struct extent *e, uint64_t idx, void *arg)
{
	struct release_ctx *c = arg;

	batch_add(c->fs, &c->b, e->tier, e->slot);
}

void data_release(struct tierfs *fs, struct tfs_inode *inode)
{
	struct release_ctx c = { .fs = fs };

	track_release(fs, inode);
	if (fs->unmounting) {
		/* the tiers are gone, with everything they held */
		extent_map_release(&inode->i_map, NULL, NULL);
		data_wb_free(inode);
		return;
	}
	extent_map_release(&inode->i_map, release_one, &c);
	batch_flush(fs, inode, &c.b);
	data_wb_free(inode);
}
