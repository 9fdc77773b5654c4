// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier_medium.c -- the medium under a tier, as the rest of the tier
 * module sees it: the free space its filesystem reports (statvfs(),
 * cached for TIER_STATVFS_MS), whether a full medium has room again,
 * and what a failure of the back end gives a program (tier_errno(),
 * tier_last_error()).  The lowest file of the module: tier.c (capacity),
 * tier_units.c (charging units) and tier_io.c (the data wrappers) call
 * it, and it calls none of them.  Declared in tier.h (what fs/ may call)
 * and tier_i.h (what the module shares).
 *
 * Locking: none; the cached figures are single words stored and loaded
 * atomically, and a racing refresh stores a true value too.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/statvfs.h>
#include <time.h>

#include "tier.h"
#include "tier_ops.h"
#include "tier_i.h"
#include "banned.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The units @t's native files hold (tier.h "Native files"): what fs/
 * accounted, or where the back end sees them all (@native_used: the RAM
 * tier's tmpfs, which the kernel writes behind our back), what it says
 * now -- an fstatfs() of a memory filesystem, and none before the first
 * native file, so a statfs right after the write(2) that filled it sees
 * it full.  A back end that fails to say keeps the last figure.
 */
uint64_t tier_native_units(struct tier *t)
{
	uint64_t cur = __atomic_load_n(&t->native_units, __ATOMIC_RELAXED);
	uint64_t now;
	int64_t used;

	if (!t->ops->native_used)
		return cur;
	used = t->ops->native_used(t);
	if (used < 0)
		return cur;
	now = ((uint64_t)used + tier_unit(t) - 1) >> t->unit_shift;
	/* stored only when it moved: every allocation reads it, and a
	 * store each time would bounce the line between CPUs */
	if (now != cur)
		__atomic_store_n(&t->native_units, now, __ATOMIC_RELAXED);
	return now;
}

/*
 * Bytes free on the filesystem under @t: statvfs() of its path, at most
 * once per TIER_STATVFS_MS unless @fresh (statfs is called often; on a
 * network filesystem a statvfs() is a round trip).  Racing refreshes
 * are harmless: each stores a true value.  When statvfs() fails (the
 * path was removed behind our back) the tier is not capped.
 */
uint64_t tier_dev_avail(struct tier *t, bool fresh)
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
bool tier_medium_space_back(struct tier *t, bool fresh)
{
	uint64_t avail = tier_dev_avail(t, fresh);
	uint64_t then = __atomic_load_n(&t->full_avail, __ATOMIC_RELAXED);

	if (avail < then || avail - then < t->extent_size)
		return false;
	__atomic_store_n(&t->medium_full, false, __ATOMIC_RELAXED);
	return true;
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

