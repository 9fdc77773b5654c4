// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ctl_action.c -- the control channel's actions (ctl.h, ctl_proto.h):
 * user.tierfs.ctl.migrate moves a file's extents to a tier now,
 * user.tierfs.ctl.drain empties a tier (through the migrator, or in the
 * request with --no-migrate), and, on a --test-clock mount only,
 * user.tierfs.ctl.clock moves the test clock on.
 *
 * Every move goes through the migrator's bandwidth limiter and the
 * copy/switch protocol of data_move.c, so a racing writer is never lost:
 * a move that finds the extent changed tries again (MIGRATE_RETRIES).
 * Values are untrusted bytes: anything malformed is -EINVAL before any
 * change.  Locks: none held on entry; the inode is pinned by the caller's
 * request.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "inode.h"
#include "data.h"
#include "ctl.h"
#include "ctl_proto.h"
#include "migrate.h"
#include "native.h"
#include "tier.h"
#include "macro.h"
#include "banned.h"

#define CTL_VALUE_MAX 256 /* longest action value we accept */
#define MIGRATE_RETRIES 16 /* per extent, when writers keep racing */

/* Copy an untrusted value into a C string; -EINVAL if it cannot be one. */
static int ctl_string(const char *value, size_t len, char *buf, size_t size)
{
	if (len && (value[len - 1] == '\n' || value[len - 1] == '\0'))
		len--;
	if (len >= size)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
			return -EINVAL;
	memcpy(buf, value, len);
	buf[len] = '\0';
	return 0;
}

/* Every run of digits in @s (digits and spaces) is at most UINT64_MAX. */
static bool numbers_fit_u64(const char *s)
{
	while (*s) {
		uint64_t v = 0;

		for (; *s >= '0' && *s <= '9'; s++) {
			unsigned d = (unsigned)(*s - '0');

			if (v > (UINT64_MAX - d) / 10)
				return false;
			v = v * 10 + d;
		}
		if (*s)
			s++; /* a space */
	}
	return true;
}

static int tier_by_name(struct tierfs *fs, const char *name)
{
	for (unsigned i = 0; i < fs->ntiers; i++)
		if (!strcmp(fs->tiers[i]->name, name))
			return (int)i;
	return -1;
}

/*
 * An admin's move is a placement.  A move down forgets the heat the
 * extent had before it (its writes, the reads that made it hot), which
 * would have the migrator bring it straight back up: only reads after
 * the move count, so it stays where it was put until it is read again
 * in passes.  A move up keeps its heat, so that the extent is not the
 * first to be demoted.  Either way the extent is marked EXTENT_F_PLACED,
 * so that a lending tier (--page-cache only, migrate.c) does not hand it
 * straight back down after its 1 s of age; the watermarks still apply,
 * and the next move of the extent clears the mark (data_move.c).  The
 * flag wants the data lock exclusive (extent_map.h).  Such a tier takes
 * a move only up to its cap (move_one()).
 */
static void settle_moved(struct tfs_inode *inode, uint64_t idx, unsigned src,
			 unsigned dst)
{
	struct extent *e;

	pthread_rwlock_wrlock(&inode->i_dlock);
	e = extent_map_lookup(&inode->i_map, idx);
	if (e && e->tier == dst) {
		e->flags |= EXTENT_F_PLACED;
		/* tiers are fastest first */
		if (dst > src)
			__atomic_store_n(&e->heat, 0, __ATOMIC_RELAXED);
	}
	pthread_rwlock_unlock(&inode->i_dlock);
}

/*
 * Move extent @idx of @inode to @dst, retrying while writers race.
 *
 * A lending tier (--page-cache only) takes an extent only while it
 * holds no more than fs->lend_cap with it, as it takes new data
 * (extent_place()): what it holds is the second copy of what the page
 * cache has, and the cap is what the mode promises, whoever asks -- any
 * owner of a file may move it (issue 32).  Beyond the cap the move is
 * -ENOSPC, as for a full tier (a drain then tries the next tier).  Two
 * moves at once may both pass the check; the migrator hands down what
 * an admin placed beyond the cap (migrate.c, demote_pass()).
 * Return: 0, -ENOSPC, -EBUSY (writers kept racing) or a move's -errno.
 */
static int move_one(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		    unsigned dst)
{
	for (int tries = 0; tries < MIGRATE_RETRIES; tries++) {
		struct extent *e;
		unsigned src;
		uint32_t slot;
		uint64_t held;
		int r;

		pthread_rwlock_rdlock(&inode->i_dlock);
		e = extent_map_lookup(&inode->i_map, idx);
		if (!e || e->tier == dst) {
			bool there = e != NULL;

			pthread_rwlock_unlock(&inode->i_dlock);
			if (there) /* placed there now, as a move would be */
				settle_moved(inode, idx, dst, dst);
			return 0; /* gone or already there */
		}
		src = e->tier;
		slot = e->slot;
		held = tier_held(fs->tiers[src], slot);
		pthread_rwlock_unlock(&inode->i_dlock);
		if ((fs->lending & (1u << dst)) &&
		    tier_used_bytes(fs->tiers[dst]) +
				    MAX(held, tier_unit(fs->tiers[dst])) >
			    fs->lend_cap)
			return -ENOSPC;
		/* the mount's bandwidth limit covers this move too, for the
		 * bytes the extent holds */
		migrate_throttle(fs, MAX(held, (uint64_t)1));
		r = data_migrate_extent(fs, inode, idx, src, slot, dst);
		if (r != -EAGAIN) {
			if (r == 0) {
				migrate_count_move(fs, src, dst, held);
				settle_moved(inode, idx, src, dst);
			}
			return r;
		}
	}
	return -EBUSY;
}

int ctl_migrate(struct tierfs *fs, struct tfs_inode *inode, const char *value,
		size_t len)
{
	char buf[CTL_VALUE_MAX], name[TIER_NAME_MAX + 2];
	unsigned long long start = 0, length = UINT64_MAX;
	uint64_t first, last, idx;
	int dst, n, used = 0;

	if (inode->i_type != S_IFREG)
		return -EINVAL;
	if (ctl_string(value, len, buf, sizeof(buf)) < 0)
		return -EINVAL;
	n = sscanf(buf, "%33s %llu %llu%n", name, &start, &length, &used);
	if (n == 1) {
		if (strlen(name) != strlen(buf))
			return -EINVAL;
	} else if (n != 3 || (size_t)used != strlen(buf) || length == 0) {
		return -EINVAL;
	} else {
		/* %llu takes a sign ("-1" would be 2^64-1): digits only */
		const char *p = buf + strlen(name);

		for (; *p; p++)
			if (*p != ' ' && (*p < '0' || *p > '9'))
				return -EINVAL;
		/* and saturates at 2^64-1: "ram 18446744073709551616 1"
		 * would be taken as "from 2^64-1" */
		if (!numbers_fit_u64(buf + strlen(name)))
			return -EINVAL;
	}
	dst = tier_by_name(fs, name);
	if (dst < 0)
		return -EINVAL;
	if (__atomic_load_n(&fs->draining, __ATOMIC_RELAXED) & (1u << dst))
		return -ENOSPC;
	/* a native file moves whole; while open, -EBUSY: at its close */
	if (native_of(inode))
		return native_move(fs, inode, (unsigned)dst);
	first = start >> fs->extent_shift;
	last = length == UINT64_MAX || start + length < start
		       ? EXTENT_MAP_MAX_INDEX
		       : (start + length - 1) >> fs->extent_shift;

	for (idx = first; idx <= last; idx++) {
		const struct extent *e;
		int r;

		pthread_rwlock_rdlock(&inode->i_dlock);
		e = extent_map_next(&inode->i_map, idx, &idx);
		pthread_rwlock_unlock(&inode->i_dlock);
		if (!e || idx > last)
			break;
		r = move_one(fs, inode, idx, (unsigned)dst);
		if (r < 0)
			return r;
		if (idx == EXTENT_MAP_MAX_INDEX)
			break;
	}
	return 0;
}

/* Move every extent of @inode off tier @t: slower tiers first. */
static int drain_inode(struct tierfs *fs, struct tfs_inode *inode, unsigned t)
{
	struct native *nat = native_of(inode);
	uint64_t idx = 0;

	if (nat) {
		/* whole, to the first tier of the drain order that takes
		 * it; an open one at its close (-EBUSY: not an error) */
		int r = -ENOSPC;

		if (nat->tier != t)
			return 0;
		for (unsigned k = 1; k < fs->ntiers && r == -ENOSPC; k++) {
			unsigned u = migrate_drain_order(t, k, fs->ntiers);

			if (u != t && u < fs->ntiers &&
			    tier_can_native(fs->tiers[u]))
				r = native_move(fs, inode, u);
		}
		return r == -EBUSY ? 0 : r;
	}

	for (;;) {
		const struct extent *e;
		int r = -ENOSPC;

		pthread_rwlock_rdlock(&inode->i_dlock);
		do {
			e = extent_map_next(&inode->i_map, idx, &idx);
		} while (e && e->tier != t && idx++ < EXTENT_MAP_MAX_INDEX);
		pthread_rwlock_unlock(&inode->i_dlock);
		if (!e || e->tier != t)
			return 0;
		for (unsigned k = 1; k < fs->ntiers && r == -ENOSPC; k++) {
			unsigned u = migrate_drain_order(t, k, fs->ntiers);

			if (u == t || u >= fs->ntiers ||
			    tier_free_slots(fs->tiers[u]) == 0)
				continue;
			r = move_one(fs, inode, idx, u);
		}
		if (r < 0)
			return r;
		if (idx == EXTENT_MAP_MAX_INDEX)
			return 0;
		idx++;
	}
}

/*
 * Move every regular file's extents off tier @t, for a drain without a
 * migrator.  The inode table is walked DRAIN_BATCH inodes per hold of
 * itab_lock, which every create and forget takes too (migrate.c's rule:
 * never a walk of the whole table under it): each batch pins its
 * regular files and the last inode it looked at, which holds the place
 * in the list for the next batch, then drops the lock before moving
 * anything.  Inodes made meanwhile go in at the head and are not
 * visited; they are placed off the draining tier anyway.  Returns 0 or
 * the first error of a move (the rest are not tried).
 */
#define DRAIN_BATCH 256

static int drain_all(struct tierfs *fs, unsigned t)
{
	struct tfs_inode *batch[DRAIN_BATCH], *cursor = NULL;
	int r = 0;

	do {
		struct tfs_inode *from, *last = NULL;
		size_t n = 0, seen = 0;

		pthread_mutex_lock(&fs->itab_lock);
		from = cursor ? cursor : fs->inodes;
		for (struct tfs_inode *i = from->i_next;
		     i != fs->inodes && seen < DRAIN_BATCH; i = i->i_next) {
			seen++;
			last = i;
			if (i->i_type != S_IFREG)
				continue;
			i->i_nref++;
			batch[n++] = i;
		}
		if (last)
			last->i_nref++; /* the place to go on from */
		pthread_mutex_unlock(&fs->itab_lock);
		if (cursor)
			inode_unpin(fs, cursor);
		cursor = last;
		for (size_t k = 0; k < n; k++) {
			if (r == 0)
				r = drain_inode(fs, batch[k], t);
			inode_unpin(fs, batch[k]);
		}
	} while (cursor && r == 0);
	if (cursor)
		inode_unpin(fs, cursor);
	return r;
}

int ctl_drain(struct tierfs *fs, const char *value, size_t len)
{
	char name[CTL_VALUE_MAX];
	int t;

	if (ctl_string(value, len, name, sizeof(name)) < 0)
		return -EINVAL;
	if (!strcmp(name, "") || !strcmp(name, "-")) {
		__atomic_store_n(&fs->draining, 0, __ATOMIC_RELAXED);
		return 0;
	}
	t = tier_by_name(fs, name);
	if (t < 0)
		return -EINVAL;
	if (fs->ntiers < 2)
		return -ENOSPC;
	__atomic_or_fetch(&fs->draining, 1u << t, __ATOMIC_RELAXED);
	if (tierfs_mig(fs)) {
		/*
		 * The migrator empties the tier in the background: this
		 * request must not hold the kernel's lock on the mount root
		 * for minutes.  Progress and a stuck drain show in the stats
		 * (used, draining=, drain_stuck=).  Root asked: no gap.
		 */
		migrator_kick_now(fs);
		return 0;
	}
	/* no migrator (--no-migrate): move everything now, in this request */
	return drain_all(fs, (unsigned)t);
}

int ctl_clock(struct tierfs *fs, const char *value, size_t len)
{
	char buf[CTL_VALUE_MAX];
	uint64_t ms = 0;

	if (!fs->opt.test_clock)
		return -EINVAL;
	if (ctl_string(value, len, buf, sizeof(buf)) < 0 || !buf[0])
		return -EINVAL;
	for (const char *p = buf; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		ms = ms * 10 + (uint64_t)(*p - '0');
		if (ms > TIERFS_TEST_CLOCK_MAX_MS)
			return -EINVAL;
	}
	/* release: a request that reads the clock after this one's reply
	 * sees the new time (tierfs_test_ns()) */
	__atomic_add_fetch(&fs->test_clock_ns, ms * 1000000u,
			   __ATOMIC_RELEASE);
	migrator_clock_moved(fs);
	return 0;
}
