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
 * Return: 0 or -errno (-ENOSPC, -ENOMEM, a tier's -errno; tier_fail()
 * turns a checksum mismatch into -EIO); extent_place() returns NULL and
 * sets *ret_err instead.
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
#include "tier.h"
#include "macro.h"
#include "log.h"
#include "banned.h"

/*
 * Allocate a slot for extent @idx of @inode on the first tier with room
 * and insert it.  Called with i_dlock exclusive.  The quotas above the
 * file are charged here, where the slot is taken (quota.h): a tier whose
 * cap in some quota is reached is skipped as if it were full, a quota
 * whose total is reached fails the placement with EDQUOT.
 * Return: the new entry, or NULL with *ret_err = -ENOSPC, -EDQUOT or
 * -ENOMEM.
 */
struct extent *extent_place(struct tierfs *fs, struct tfs_inode *inode,
			    uint64_t idx, unsigned skip,
			    const struct policy *pol, int *ret_err)
{
	uint8_t order[TIER_MAX_CONF];
	unsigned n = policy_place_order(pol, idx << fs->extent_shift, order);
	uint32_t draining = __atomic_load_n(&fs->draining, __ATOMIC_RELAXED);
	struct extent e = { 0 };
	int r = -ENOSPC;

	for (unsigned i = 0; i < n; i++) {
		unsigned t = order[i];

		if ((skip | draining) & (1u << t))
			continue;
		r = quota_charge(fs, inode, t);
		if (r == -EDQUOT)
			break; /* no tier helps */
		if (r == 0) {
			r = tier_slot_alloc(fs->tiers[t], &e.slot);
			if (r == 0) {
				e.tier = (uint8_t)t;
				break;
			}
			quota_uncharge(fs, inode, t, 1);
			if (r == -ENOSPC && tier_medium_full(fs->tiers[t]))
				tier_fail(fs, t, inode,
					  idx << fs->extent_shift, "placement",
					  r);
		}
		/* a tier cap in a quota spills as a full tier does */
		__atomic_add_fetch(&fs->tiers[t]->stats.spills, 1,
				   __ATOMIC_RELAXED);
	}
	if (r < 0) {
		*ret_err = r;
		return NULL;
	}
	e.wgen = ++inode->i_wgen;
	e.stamp = tierfs_tick(fs);
	r = extent_map_insert(&inode->i_map, idx, &e);
	if (r < 0) {
		tier_slot_free(fs->tiers[e.tier], e.slot);
		quota_uncharge(fs, inode, e.tier, 1);
		*ret_err = r;
		return NULL;
	}
	return extent_map_lookup(&inode->i_map, idx);
}

/*
 * Log a tier failure, at most once per tier and kind (I/O error, checksum
 * mismatch, full medium) every TIER_WARN_INTERVAL
 * seconds: a failing device must not flood the log, and one line is
 * enough to tell the administrator which tier, which file, where and
 * why.  The line names the inode and the byte offset in the file; not
 * the path, which would need ns_lock, and ns_lock comes before the data
 * lock the callers hold (`tierctl` and `find -inum` give the name).
 *
 * Return: the errno the client gets: -EIO for a checksum mismatch
 * (tier_read's -EBADMSG: the data read back is not what was written),
 * else @err.
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
	char fields[160];

	if (now - last < TIER_WARN_INTERVAL)
		goto out;
	if (!__atomic_compare_exchange_n(warned, &last, now, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		goto out; /* another thread logs it */
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
			   "%s error on tier '%s': inode %llu at offset %llu: %s",
			   what, fs->tiers[t]->name,
			   (unsigned long long)inode->i_ino,
			   (unsigned long long)off, strerror(-err));
out:
	return csum ? -EIO : err;
}

/* Remove extent @idx and give its slot back.  Called with i_dlock
 * exclusive. */
void extent_drop(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx)
{
	struct extent old;

	if (extent_map_remove(&inode->i_map, idx, &old) == 0) {
		tier_slot_free(fs->tiers[old.tier], old.slot);
		quota_uncharge(fs, inode, old.tier, 1);
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
	uint64_t freed[TIER_MAX_CONF]; /* slots given back, for the quota */
};

static void batch_add(struct tierfs *fs, struct slot_batch *b, unsigned t,
		      uint32_t slot)
{
	b->freed[t]++;
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

	while (extent_map_next(&inode->i_map, first, &idx) && idx <= last) {
		if (extent_map_remove(&inode->i_map, idx, &old) == 0)
			batch_add(fs, &b, old.tier, old.slot);
		if (idx == EXTENT_MAP_MAX_INDEX)
			break;
		first = idx + 1;
	}
	batch_flush(fs, inode, &b);
}

/*
 * Zeros as many as the largest extent holds, in one read-only mapping
 * that costs no memory (every page is the kernel's zero page), or NULL
 * if it cannot be mapped.  Zeroing part of an extent with one tier write
 * from it makes the zeroing all or nothing: a truncate whose zeroing
 * fails leaves the file as it was, where tier_zero()'s 64 KiB steps
 * could fail half-way and leave zeros inside the size it kept.
 */
#define ZEROS_MAX ((size_t)1 << 30) /* largest extent size */

static const char *zeros_map;
static pthread_once_t zeros_once = PTHREAD_ONCE_INIT;

static void zeros_init(void)
{
	void *p = mmap(NULL, ZEROS_MAX, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	zeros_map = p == MAP_FAILED ? NULL : p;
}

static const char *zeros_get(void)
{
	pthread_once(&zeros_once, zeros_init);
	return zeros_map;
}

/* Zero [off, off+len) inside extent @idx if it is present, in one tier
 * write where it can (see zeros_get()).  Called with i_dlock exclusive. */
int zero_in_extent(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		   uint64_t off, uint64_t len)
{
	struct extent *e = extent_map_lookup(&inode->i_map, idx);
	const char *zeros;
	int r;

	if (!e || len == 0)
		return 0;
	e->wgen = ++inode->i_wgen;
	zeros = zeros_get();
	if (zeros && len <= ZEROS_MAX) {
		ssize_t w = tier_write(fs->tiers[e->tier], e->slot, off, zeros,
				       (size_t)len);

		r = w < 0 ? (int)w : 0;
	} else {
		r = tier_zero(fs->tiers[e->tier], e->slot, off, (size_t)len);
	}
	if (r < 0)
		r = tier_fail(fs, e->tier, inode, (idx << fs->extent_shift) + off,
			      "zeroing", r);
	return r;
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

	extent_map_release(&inode->i_map, release_one, &c);
	batch_flush(fs, inode, &c.b);
	free(inode->i_lost);
	inode->i_lost = NULL;
	inode->i_nlost = 0;
}
