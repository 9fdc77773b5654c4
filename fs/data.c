// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * data.c -- regular file data over the extent map and the tiers.
 *
 * Invariant: every byte of an extent that lies at or beyond i_size reads
 * as zero.  Writes past EOF land in fresh (zeroed) slots, truncation
 * zeroes the tail of the extent it cuts and frees the ones after it, so
 * growing a file again never exposes old data.
 *
 * Placement: a new extent goes to the first tier with a free slot in the
 * order its policy gives (policy_place_order()); when every allowed tier
 * is full the write fails with ENOSPC.  A
 * failing write leaves earlier data as it was: an extent allocated for
 * it is given back, and a short count is returned for what was stored.
 *
 * Locking: callers hold no lock; each function takes the inode's
 * i_dlock (shared for reads, exclusive for changes) and i_lock only for
 * the attribute updates at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tierfs.h"
#include "heat.h"
#include "tier.h"
#include "macro.h"
#include "log.h"
#include "banned.h"

static inline uint64_t ext_mask(const struct tierfs *fs)
{
	return (uint64_t)fs->extent_size - 1;
}

/* Lost ranges an inode keeps before merging them into one. */
#define LOST_RANGES_MAX 32

/* Does [@off, @off+@len) meet a lost range?  Called with i_dlock held. */
static bool lost_overlaps(const struct tfs_inode *inode, uint64_t off,
			  uint64_t len)
{
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;

	for (uint32_t i = 0; i < inode->i_nlost; i++) {
		const struct byte_range *b = &inode->i_lost[i];

		if (b->start >= end)
			break;
		if (b->end > off)
			return true;
	}
	return false;
}

/*
 * Forget the lost bytes in [@off, @end): they were stored again, or cut
 * or punched away.  Splitting a range needs memory; without it the range
 * stays whole, and reads of it go on failing (safe, never wrong data).
 * Called with i_dlock exclusive.
 */
static void lost_clear(struct tfs_inode *inode, uint64_t off, uint64_t end)
{
	uint32_t i = 0;

	while (i < inode->i_nlost) {
		struct byte_range *b = &inode->i_lost[i];

		if (b->end <= off) {
			i++;
			continue;
		}
		if (b->start >= end)
			break;
		if (b->start >= off && b->end <= end) {
			memmove(b, b + 1,
				(inode->i_nlost - i - 1) * sizeof(*b));
			inode->i_nlost--;
			continue;
		}
		if (b->start < off && b->end > end) {
			struct byte_range *n;

			n = realloc(inode->i_lost,
				    (inode->i_nlost + 1) * sizeof(*n));
			if (!n)
				return;
			inode->i_lost = n;
			b = &n[i];
			memmove(b + 1, b, (inode->i_nlost - i) * sizeof(*b));
			inode->i_nlost++;
			b[0].end = off;
			b[1].start = end;
			return;
		}
		if (b->start < off)
			b->end = off;
		else
			b->start = end;
		i++;
	}
	if (inode->i_nlost == 0) {
		free(inode->i_lost);
		inode->i_lost = NULL;
	}
}

int data_mark_lost(struct tierfs *fs, struct tfs_inode *inode, uint64_t off,
		   uint64_t len)
{
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	struct byte_range *n;
	uint32_t k = 0;

	(void)fs;
	if (len == 0)
		return 0;
	pthread_rwlock_wrlock(&inode->i_dlock);
	n = malloc((inode->i_nlost + 1) * sizeof(*n));
	if (!n) {
		pthread_rwlock_unlock(&inode->i_dlock);
		return -ENOMEM;
	}
	/* ranges before, the new one merged with what it meets, after */
	for (uint32_t i = 0; i < inode->i_nlost; i++) {
		const struct byte_range *b = &inode->i_lost[i];

		if (b->end < off) {
			n[k++] = *b;
		} else if (b->start > end) {
			break;
		} else {
			off = MIN(off, b->start);
			end = MAX(end, b->end);
		}
	}
	n[k++] = (struct byte_range){ off, end };
	for (uint32_t i = 0; i < inode->i_nlost; i++)
		if (inode->i_lost[i].start > end)
			n[k++] = inode->i_lost[i];
	if (k > LOST_RANGES_MAX) {
		n[0].end = n[k - 1].end;
		k = 1;
	}
	free(inode->i_lost);
	inode->i_lost = n;
	inode->i_nlost = k;
	pthread_rwlock_unlock(&inode->i_dlock);
	return 0;
}

/*
 * Allocate a slot for extent @idx of @inode on the first tier with room
 * and insert it.  Called with i_dlock exclusive.
 * Return: the new entry, or NULL with *ret_err = -ENOSPC or -ENOMEM.
 */
static struct extent *extent_place(struct tierfs *fs, struct tfs_inode *inode,
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
		r = tier_slot_alloc(fs->tiers[t], &e.slot);
		if (r == 0) {
			e.tier = (uint8_t)t;
			break;
		}
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
		*ret_err = r;
		return NULL;
	}
	return extent_map_lookup(&inode->i_map, idx);
}

/*
 * Log a tier failure, at most once per tier every TIER_WARN_INTERVAL
 * seconds: a failing device must not flood the log, and one line is
 * enough to tell the administrator which tier and why.
 */
#define TIER_WARN_INTERVAL 10

static void tier_warn(struct tierfs *fs, unsigned t, const char *what, int err)
{
	int64_t now = (int64_t)now_ts().tv_sec;
	int64_t last = __atomic_load_n(&fs->tier_warned[t], __ATOMIC_RELAXED);

	if (now - last < TIER_WARN_INTERVAL)
		return;
	if (!__atomic_compare_exchange_n(&fs->tier_warned[t], &last, now, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return; /* another thread logs it */
	log_err("%s error on tier '%s': %s", what, fs->tiers[t]->name,
		strerror(-err));
}

/* Remove extent @idx and give its slot back.  Called with i_dlock
 * exclusive. */
static void extent_drop(struct tierfs *fs, struct tfs_inode *inode,
			uint64_t idx)
{
	struct extent old;

	if (extent_map_remove(&inode->i_map, idx, &old) == 0)
		tier_slot_free(fs->tiers[old.tier], old.slot);
}

ssize_t data_read(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		  size_t len, uint64_t off)
{
	uint32_t now = tierfs_tick(fs);
	size_t done = 0;
	ssize_t r = 0;

	pthread_rwlock_rdlock(&inode->i_dlock);
	/* before the size check: a lost append lies beyond i_size */
	if (inode->i_nlost && lost_overlaps(inode, off, len)) {
		pthread_rwlock_unlock(&inode->i_dlock);
		return -EIO;
	}
	if (off >= inode->i_size) {
		len = 0;
	} else if (len > inode->i_size - off) {
		len = (size_t)(inode->i_size - off);
	}
	while (done < len) {
		uint64_t pos = off + done;
		uint64_t idx = pos >> fs->extent_shift;
		uint64_t eoff = pos & ext_mask(fs);
		size_t n = (size_t)MIN(len - done, fs->extent_size - eoff);
		struct extent *e = extent_map_lookup(&inode->i_map, idx);

		if (!e) {
			memset(buf + done, 0, n);
		} else {
			heat_touch(e, now, fs->half_life_ticks);
			r = tier_read(fs->tiers[e->tier], e->slot, eoff,
				      buf + done, n);
			if (r < 0) {
				tier_warn(fs, e->tier, "read", (int)r);
				break;
			}
		}
		done += n;
		r = 0;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return r < 0 ? r : (ssize_t)done;
}

int data_read_begin(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		    size_t len, uint64_t off, struct iovec *iov,
		    unsigned maxiov, unsigned *ret_niov)
{
	uint32_t now = tierfs_tick(fs);
	size_t done = 0;
	unsigned n = 0;
	int r = 0;

	pthread_rwlock_rdlock(&inode->i_dlock);
	if (inode->i_nlost && lost_overlaps(inode, off, len)) {
		pthread_rwlock_unlock(&inode->i_dlock);
		return -EIO;
	}
	if (off >= inode->i_size)
		len = 0;
	else if (len > inode->i_size - off)
		len = (size_t)(inode->i_size - off);
	while (done < len) {
		uint64_t pos = off + done;
		uint64_t eoff = pos & ext_mask(fs);
		size_t k = (size_t)MIN(len - done, fs->extent_size - eoff);
		struct extent *e = extent_map_lookup(&inode->i_map,
						     pos >> fs->extent_shift);
		const void *p = NULL;

		if (n == maxiov) {
			r = -E2BIG;
			break;
		}
		if (!e) {
			memset(buf + done, 0, k);
			p = buf + done;
		} else {
			heat_touch(e, now, fs->half_life_ticks);
			p = tier_read_direct(fs->tiers[e->tier], e->slot, eoff,
					     k);
			if (!p) {
				ssize_t rr = tier_read(fs->tiers[e->tier],
						       e->slot, eoff,
						       buf + done, k);

				if (rr < 0) {
					tier_warn(fs, e->tier, "read", (int)rr);
					r = (int)rr;
					break;
				}
				p = buf + done;
			}
		}
		/* merge with the previous piece when they touch */
		if (n > 0 && (const char *)iov[n - 1].iov_base +
					     iov[n - 1].iov_len == p)
			iov[n - 1].iov_len += k;
		else
			iov[n++] = (struct iovec){ (void *)p, k };
		done += k;
	}
	if (r < 0) {
		pthread_rwlock_unlock(&inode->i_dlock);
		return r;
	}
	*ret_niov = n;
	return 0;
}

void data_read_end(struct tfs_inode *inode)
{
	pthread_rwlock_unlock(&inode->i_dlock);
}

ssize_t data_write(struct tierfs *fs, struct tfs_inode *inode,
		   const char *buf, size_t len, uint64_t off)
{
	uint32_t now = tierfs_tick(fs);
	struct policy pol;
	size_t done = 0;
	int r = 0;

	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EFBIG;
	/* before the data lock: resolving takes ns_lock, which comes first */
	policy_get(fs, inode, &pol);
	pthread_rwlock_wrlock(&inode->i_dlock);
	while (done < len) {
		uint64_t pos = off + done;
		uint64_t idx = pos >> fs->extent_shift;
		uint64_t eoff = pos & ext_mask(fs);
		size_t n = (size_t)MIN(len - done, fs->extent_size - eoff);
		struct extent *e = extent_map_lookup(&inode->i_map, idx);
		unsigned failed = 0; /* tiers that failed this fresh extent */
		int werr = 0;	     /* and the last such failure */
		ssize_t w;

		if (e) {
			e->wgen = ++inode->i_wgen;
			w = tier_write(fs->tiers[e->tier], e->slot, eoff,
				       buf + done, n);
			if (w < 0) {
				r = (int)w;
				tier_warn(fs, e->tier, "write", r);
				break;
			}
		} else {
			if (idx > EXTENT_MAP_MAX_INDEX) {
				r = -EFBIG;
				break;
			}
			/*
			 * A fresh extent whose tier fails (a device full below
			 * its configured size, an I/O error) is given back and
			 * placed on the next tier instead: spill, not fail.
			 */
			for (;;) {
				e = extent_place(fs, inode, idx, failed, &pol,
						 &r);
				if (!e)
					break;
				w = tier_write(fs->tiers[e->tier], e->slot,
					       eoff, buf + done, n);
				if (w >= 0)
					break;
				tier_warn(fs, e->tier, "write", (int)w);
				failed |= 1u << e->tier;
				extent_drop(fs, inode, idx);
				e = NULL;
				werr = (int)w;
			}
			if (!e) {
				/* no tier left: report what the last one said */
				if (r == -ENOSPC && werr)
					r = werr;
				break;
			}
		}
		heat_touch(e, now, fs->half_life_ticks);
		done += n;
	}
	if (done > 0) {
		if (inode->i_nlost)
			lost_clear(inode, off, off + done);
		pthread_mutex_lock(&inode->i_lock);
		if (off + done > inode->i_size)
			inode->i_size = off + done;
		inode_touch(inode, true, true);
		pthread_mutex_unlock(&inode->i_lock);
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return done > 0 ? (ssize_t)done : r;
}

/* Free every extent with index >= @first.  Called with i_dlock
 * exclusive. */
static void drop_from(struct tierfs *fs, struct tfs_inode *inode,
		      uint64_t first, uint64_t last)
{
	uint64_t idx;

	while (extent_map_next(&inode->i_map, first, &idx) && idx <= last) {
		extent_drop(fs, inode, idx);
		if (idx == EXTENT_MAP_MAX_INDEX)
			break;
		first = idx + 1;
	}
}

/* Zero [off, off+len) inside extent @idx if it is present.  Called with
 * i_dlock exclusive. */
static int zero_in_extent(struct tierfs *fs, struct tfs_inode *inode,
			  uint64_t idx, uint64_t off, uint64_t len)
{
	struct extent *e = extent_map_lookup(&inode->i_map, idx);

	if (!e || len == 0)
		return 0;
	e->wgen = ++inode->i_wgen;
	return tier_zero(fs->tiers[e->tier], e->slot, off, (size_t)len);
}

int data_truncate(struct tierfs *fs, struct tfs_inode *inode, uint64_t size)
{
	int r = 0;

	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	pthread_rwlock_wrlock(&inode->i_dlock);
	if (size < inode->i_size) {
		uint64_t eoff = size & ext_mask(fs);
		uint64_t idx = size >> fs->extent_shift;

		if (eoff) {
			r = zero_in_extent(fs, inode, idx, eoff,
					   fs->extent_size - eoff);
			idx++;
		}
		if (r == 0)
			drop_from(fs, inode, idx, EXTENT_MAP_MAX_INDEX);
	} else {
		/*
		 * Growing: extents preallocated past EOF (KEEP_SIZE) are
		 * already zero, so there is nothing to clear.
		 */
	}
	if (r == 0 && inode->i_nlost)
		lost_clear(inode, size, UINT64_MAX); /* past EOF: gone */
	if (r == 0) {
		pthread_mutex_lock(&inode->i_lock);
		inode->i_size = size;
		inode_touch(inode, true, true);
		pthread_mutex_unlock(&inode->i_lock);
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return r;
}

/* Allocate every hole in [first, last]; on failure give back what this
 * call allocated so that a failed fallocate changes nothing.  Called with
 * i_dlock exclusive. */
static int alloc_range(struct tierfs *fs, struct tfs_inode *inode,
		       uint64_t first, uint64_t last, const struct policy *pol)
{
	int r = 0;
	uint64_t idx;

	for (idx = first; idx <= last; idx++) {
		if (extent_map_lookup(&inode->i_map, idx))
			continue;
		if (!extent_place(fs, inode, idx, 0, pol, &r))
			break;
		/* mark ours so that a rollback knows what to undo */
		extent_map_lookup(&inode->i_map, idx)->flags |= EXTENT_F_NEW;
	}
	for (uint64_t i = first; i <= last && i <= idx; i++) {
		struct extent *e = extent_map_lookup(&inode->i_map, i);

		if (!e || !(e->flags & EXTENT_F_NEW))
			continue;
		if (r < 0)
			extent_drop(fs, inode, i);
		else
			e->flags &= (uint8_t)~EXTENT_F_NEW;
		if (i == last)
			break;
	}
	return r;
}

static int punch(struct tierfs *fs, struct tfs_inode *inode, uint64_t off,
		 uint64_t end)
{
	uint64_t first = off >> fs->extent_shift;
	uint64_t last = (end - 1) >> fs->extent_shift;
	uint64_t mask = ext_mask(fs);
	int r;

	if (first == last) {
		if ((off & mask) == 0 && ((end & mask) == 0))
			drop_from(fs, inode, first, first);
		else
			return zero_in_extent(fs, inode, first, off & mask,
					      end - off);
		return 0;
	}
	/* partial head and tail extents are zeroed, whole ones freed */
	if (off & mask) {
		r = zero_in_extent(fs, inode, first, off & mask,
				   fs->extent_size - (off & mask));
		if (r < 0)
			return r;
		first++;
	}
	if (end & mask) {
		r = zero_in_extent(fs, inode, last, 0, end & mask);
		if (r < 0)
			return r;
		if (last == 0)
			return 0;
		last--;
	}
	if (first <= last)
		drop_from(fs, inode, first, last);
	return 0;
}

/* Zero [@off, @end) in place, keeping every extent's slot (they are all
 * there: the caller allocated them).  Called with i_dlock exclusive. */
static int zero_range(struct tierfs *fs, struct tfs_inode *inode,
		      uint64_t off, uint64_t end)
{
	while (off < end) {
		uint64_t eoff = off & ext_mask(fs);
		uint64_t n = MIN(end - off, fs->extent_size - eoff);
		int r = zero_in_extent(fs, inode, off >> fs->extent_shift,
				       eoff, n);

		if (r < 0)
			return r;
		off += n;
	}
	return 0;
}

int data_fallocate(struct tierfs *fs, struct tfs_inode *inode, int mode,
		   uint64_t off, uint64_t len)
{
	struct policy pol;
	uint64_t end;
	int r = 0;

	if (len == 0)
		return -EINVAL;
	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return -EFBIG;
	end = off + len;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE |
		     FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	if ((end - 1) >> fs->extent_shift > EXTENT_MAP_MAX_INDEX)
		return -EFBIG;

	policy_get(fs, inode, &pol);
	pthread_rwlock_wrlock(&inode->i_dlock);
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		r = punch(fs, inode, off, end);
	} else {
		/*
		 * The space first, all of it or none (alloc_range() rolls
		 * back): a zero-range that fails for room changes nothing.
		 */
		r = alloc_range(fs, inode, off >> fs->extent_shift,
				(end - 1) >> fs->extent_shift, &pol);
		if (r == 0 && (mode & FALLOC_FL_ZERO_RANGE))
			r = zero_range(fs, inode, off, end);
	}
	if (r == 0 && inode->i_nlost &&
	    (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
		lost_clear(inode, off, end); /* zeros now, as asked */
	if (r == 0) {
		pthread_mutex_lock(&inode->i_lock);
		if (!(mode & FALLOC_FL_KEEP_SIZE) && end > inode->i_size)
			inode->i_size = end;
		if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
			inode_touch(inode, true, true);
		else
			inode_touch(inode, false, true);
		pthread_mutex_unlock(&inode->i_lock);
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return r;
}

/*
 * If [@off, @off+@len) of @inode lies in one hole inside the file, set
 * *ret_len to how much of it (up to EOF) and return true.
 */
static bool hole_at(struct tierfs *fs, struct tfs_inode *inode, uint64_t off,
		    size_t len, size_t *ret_len)
{
	bool hole = false;

	pthread_rwlock_rdlock(&inode->i_dlock);
	if (off < inode->i_size &&
	    !extent_map_lookup(&inode->i_map, off >> fs->extent_shift) &&
	    !(inode->i_nlost && lost_overlaps(inode, off, len))) {
		hole = true;
		*ret_len = (size_t)MIN((uint64_t)len, inode->i_size - off);
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return hole;
}

/* Make [@off, @off+@len) of @inode read as zeros without taking space:
 * punch it, and grow the file to its end if it is shorter. */
static int zero_hole(struct tierfs *fs, struct tfs_inode *inode,
		     uint64_t off, size_t len)
{
	uint64_t size;
	int r;

	r = data_fallocate(fs, inode,
			   FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
			   len);
	if (r < 0)
		return r;
	pthread_rwlock_rdlock(&inode->i_dlock);
	size = inode->i_size;
	pthread_rwlock_unlock(&inode->i_dlock);
	return off + len > size ? data_truncate(fs, inode, off + len) : 0;
}

ssize_t data_copy(struct tierfs *fs, struct tfs_inode *in, uint64_t off_in,
		  struct tfs_inode *out, uint64_t off_out, size_t len)
{
	size_t chunk = fs->extent_size;
	size_t done = 0;
	ssize_t r = 0;
	char *buf = malloc(chunk);

	if (!buf)
		return -ENOMEM;
	/* one lock at a time, so two copies in opposite directions cannot
	 * deadlock */
	while (done < len) {
		uint64_t pos = off_in + done;
		/* one source extent at a time, so a hole is seen whole */
		size_t n = (size_t)MIN((uint64_t)(len - done),
				       fs->extent_size - (pos & ext_mask(fs)));
		size_t h;

		if (hole_at(fs, in, pos, n, &h)) {
			/* a hole copies as a hole: no space for zeros */
			r = zero_hole(fs, out, off_out + done, h);
			if (r < 0)
				break;
			done += h;
			continue;
		}
		r = data_read(fs, in, buf, n, pos);
		if (r <= 0)
			break;
		n = (size_t)r;
		r = data_write(fs, out, buf, n, off_out + done);
		if (r < 0)
			break;
		done += (size_t)r;
		if ((size_t)r < n)
			break;
	}
	free(buf);
	return done > 0 ? (ssize_t)done : r;
}

int data_lseek(struct tierfs *fs, struct tfs_inode *inode, uint64_t off,
	       int whence, uint64_t *ret_off)
{
	uint64_t idx, size, res = 0;
	int r = 0;

	pthread_rwlock_rdlock(&inode->i_dlock);
	size = inode->i_size;
	if (off >= size) {
		r = -ENXIO;
		goto out;
	}
	if (whence == SEEK_DATA) {
		if (!extent_map_next(&inode->i_map, off >> fs->extent_shift,
				     &idx)) {
			r = -ENXIO;
			goto out;
		}
		res = MAX(off, idx << fs->extent_shift);
		if (res >= size)
			r = -ENXIO;
	} else {
		/* next hole: the first index with no extent */
		idx = off >> fs->extent_shift;
		while (idx << fs->extent_shift < size &&
		       extent_map_lookup(&inode->i_map, idx))
			idx++;
		res = MIN(size, MAX(off, idx << fs->extent_shift));
	}
out:
	pthread_rwlock_unlock(&inode->i_dlock);
	if (r == 0)
		*ret_off = res; /* never written on failure */
	return r;
}

void data_layout(struct tierfs *fs, struct tfs_inode *inode,
		 uint64_t bytes[TIER_MAX_CONF])
{
	const struct extent *e;
	uint64_t idx;

	memset(bytes, 0, sizeof(uint64_t) * TIER_MAX_CONF);
	extent_for_each(&inode->i_map, e, idx)
		bytes[e->tier] += fs->extent_size;
}

static void release_one(const struct extent *e, uint64_t idx, void *arg)
{
	struct tierfs *fs = arg;

	tier_slot_free(fs->tiers[e->tier], e->slot);
}

void data_release(struct tierfs *fs, struct tfs_inode *inode)
{
	extent_map_release(&inode->i_map, release_one, fs);
	free(inode->i_lost);
	inode->i_lost = NULL;
	inode->i_nlost = 0;
}

uint64_t data_blocks(struct tierfs *fs, struct tfs_inode *inode)
{
	/* benign race: a torn-free 64-bit load of a count */
	uint64_t n = __atomic_load_n(&inode->i_map.nr_extents,
				     __ATOMIC_RELAXED);

	return n * (fs->extent_size / 512);
}

int data_migrate_extent(struct tierfs *fs, struct tfs_inode *inode,
			uint64_t idx, unsigned src, uint32_t src_slot,
			unsigned dst)
{
	struct tier *st = fs->tiers[src], *dt = fs->tiers[dst];
	struct extent *e;
	uint32_t gen, dslot;
	char *buf;
	ssize_t r;

	buf = malloc(fs->extent_size);
	if (!buf)
		return -ENOMEM;

	/* 1. copy out under the shared lock: readers go on, writers wait */
	pthread_rwlock_rdlock(&inode->i_dlock);
	e = extent_map_lookup(&inode->i_map, idx);
	if (!e || e->tier != src || e->slot != src_slot) {
		pthread_rwlock_unlock(&inode->i_dlock);
		r = -EAGAIN;
		goto out_free;
	}
	gen = e->wgen;
	/* verifies the source's checksums: corruption is never copied */
	r = tier_read(st, src_slot, 0, buf, fs->extent_size);
	pthread_rwlock_unlock(&inode->i_dlock);
	if (r < 0) {
		tier_warn(fs, src, "migration read", (int)r);
		goto out_free;
	}

	/* 2. write the copy with no lock held */
	r = tier_slot_alloc(dt, &dslot);
	if (r < 0)
		goto out_free;
	r = tier_write(dt, dslot, 0, buf, fs->extent_size);
	if (r < 0) {
		tier_warn(fs, dst, "migration write", (int)r);
		goto out_free_dst;
	}

	/* 3. switch atomically, unless a writer changed the extent since */
	pthread_rwlock_wrlock(&inode->i_dlock);
	e = extent_map_lookup(&inode->i_map, idx);
	if (e && e->tier == src && e->slot == src_slot && e->wgen == gen) {
		e->tier = (uint8_t)dst;
		e->slot = dslot;
		r = 0;
	} else {
		r = -EAGAIN;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	if (r < 0)
		goto out_free_dst;
	tier_slot_free(st, src_slot);
	free(buf);
	return 0;

out_free_dst:
	tier_slot_free(dt, dslot);
out_free:
	free(buf);
	return (int)r;
}
