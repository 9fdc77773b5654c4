// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * data.c -- regular file data over the extent map and the tiers: read,
 * write, truncate, fallocate, copy_file_range, lseek and the per-file
 * counts.  The rest of the data module (data.h) is in data_extent.c
 * (placing, dropping and zeroing one extent, the tier failure log, the
 * release of a file's slots), data_lost.c (byte ranges whose writeback
 * failed) and data_move.c (the move of one extent to another tier);
 * what they share is declared in data_i.h.
 *
 * Invariant: every byte of an extent that lies at or beyond i_size reads
 * as zero.  Writes past EOF land in fresh (zeroed) slots, truncation
 * zeroes the tail of the extent it cuts and frees the ones after it, so
 * growing a file again never exposes old data.
 *
 * Placement: a new extent goes to the first tier with a free slot in the
 * order its policy gives (policy_place_order(), via extent_place()); when
 * every allowed tier is full the write fails with ENOSPC.  A
 * failing write leaves earlier data as it was: an extent allocated for
 * it is given back, and a short count is returned for what was stored.
 *
 * Locking: callers hold no lock; each function takes the inode's
 * i_dlock (shared for reads, exclusive for changes) and i_lock only for
 * the attribute updates at the end.
 *
 * Return: a byte count or 0, or -errno as data.h says (-EIO for a lost
 * range or a checksum mismatch, -ENOSPC, -EFBIG, a tier's -errno).
 *
 * Longer than 700 lines for a reason: the request paths of file data
 * (read, write, truncate, fallocate, copy_file_range, lseek) share the
 * extent walk and the locking rules above; one extent's placement,
 * lost ranges and moves are already data_extent.c, data_lost.c and
 * data_move.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "data.h"
#include "data_i.h"
#include "fdio.h"
#include "fs.h"
#include "inode.h"
#include "log.h"
#include "native.h"
#include "never.h"
#include "placement.h"
#include "quota.h" /* the I/O counters of the job report (issue 19) */
#include "heat.h"
#include "testhook.h"
#include "tier.h"
#include "track.h"
#include "macro.h"
#include "banned.h"

/*
 * Take @inode's data lock for a request (issue 32).  A writer whose
 * tier stopped answering holds the lock until the medium answers, maybe
 * never: a request that waits for it waits in slices, and once it has
 * waited the tier timeout while some tier of the mount is stalled
 * (tier_stalled()), it gives up with EIO instead of holding its thread
 * for ever.  With --tier-timeout 0, as before, it waits.
 * Return: 0 (locked), or -EIO (not locked).
 */
int data_lock(struct tierfs *fs, struct tfs_inode *inode, bool excl)
{
	uint64_t limit = (uint64_t)fs->opt.tier_timeout * 1000;
	uint64_t slice = MIN(MAX(limit / 4, (uint64_t)100), (uint64_t)1000);
	uint64_t waited = 0;
	int r;

	r = excl ? pthread_rwlock_trywrlock(&inode->i_dlock)
		 : pthread_rwlock_tryrdlock(&inode->i_dlock);
	if (r == 0)
		return 0;
	if (!limit) {
		if (excl)
			pthread_rwlock_wrlock(&inode->i_dlock);
		else
			pthread_rwlock_rdlock(&inode->i_dlock);
		return 0;
	}
	for (;;) {
		struct timespec ts;

		/* the realtime clock: what the timed rwlock calls take
		 * (a jump only makes one slice longer or shorter) */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)(slice / 1000);
		ts.tv_nsec += (long)(slice % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		r = excl ? pthread_rwlock_timedwrlock(&inode->i_dlock, &ts)
			 : pthread_rwlock_timedrdlock(&inode->i_dlock, &ts);
		if (r == 0)
			return 0;
		if (NEVER(r != ETIMEDOUT))
			return -EIO;
		waited += slice;
		if (waited < limit)
			continue;
		for (unsigned t = 0; t < fs->ntiers; t++)
			if (tier_stalled(fs->tiers[t]))
				return -EIO;
	}
}

static ssize_t do_read(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		       size_t len, uint64_t off)
{
	uint32_t now = tierfs_tick(fs);
	uint64_t below = 0; /* bytes from tiers below tier 0 */
	size_t done = 0;
	ssize_t r = 0;

	r = data_lock(fs, inode, false);
	if (r < 0)
		return r;
	/* before the size check: a lost append lies beyond i_size */
	if (inode->i_wb && lost_overlaps(inode, off, len)) {
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
			track_touch(fs, inode, idx, e, now);
			r = tier_read(fs->tiers[e->tier], e->slot, eoff,
				      buf + done, n);
			if (r < 0) {
				r = tier_fail(fs, e->tier, inode, pos, "read",
					      (int)r);
				break;
			}
			if (e->tier)
				below += n;
		}
		done += n;
		r = 0;
	}
	if (r == 0)
		quota_io_read(inode_quota(inode), done, below);
	pthread_rwlock_unlock(&inode->i_dlock);
	return r < 0 ? r : (ssize_t)done;
}

/*
 * A native file (native.h) keeps its bytes in a backing file, not in
 * extents: each entry point below hands it to native.c.  The kernel
 * reads and writes it itself while it is open; what comes here is the
 * daemon's own work (tierctl, the migrator, copy_file_range, fallocate,
 * truncate) and an open whose passthrough reply could not be sent.
 */
ssize_t data_read(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		  size_t len, uint64_t off)
{
	bool bulk;
	ssize_t r;

	if (native_of(inode))
		return native_read(fs, inode, buf, len, off);
	bulk = data_bulk_begin(fs);
	r = do_read(fs, inode, buf, len, off);

	data_bulk_end(bulk);
	return r;
}

static int do_read_begin(struct tierfs *fs, struct tfs_inode *inode,
			 char *buf, size_t len, uint64_t off,
			 struct iovec *iov, unsigned maxiov, unsigned *ret_niov)
{
	uint32_t now = tierfs_tick(fs);
	uint64_t below = 0; /* bytes from tiers below tier 0 */
	size_t done = 0;
	unsigned n = 0;
	int r = 0;

	r = data_lock(fs, inode, false);
	if (r < 0)
		return r;
	if (inode->i_wb && lost_overlaps(inode, off, len)) {
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
			track_touch(fs, inode, pos >> fs->extent_shift, e, now);
			p = tier_read_direct(fs->tiers[e->tier], e->slot, eoff,
					     k);
			if (!p) {
				ssize_t rr = tier_read(fs->tiers[e->tier],
						       e->slot, eoff,
						       buf + done, k);

				if (rr < 0) {
					r = tier_fail(fs, e->tier, inode, pos,
						      "read", (int)rr);
					break;
				}
				p = buf + done;
			}
			if (e->tier)
				below += k;
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
	quota_io_read(inode_quota(inode), done, below);
	*ret_niov = n;
	return 0;
}

int data_read_begin(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		    size_t len, uint64_t off, struct iovec *iov,
		    unsigned maxiov, unsigned *ret_niov)
{
	bool bulk;
	int r;

	if (native_of(inode)) {
		/* into @buf, and the lock data_read_end() drops */
		ssize_t n = native_read(fs, inode, buf, len, off);

		if (n < 0)
			return (int)n;
		iov[0] = (struct iovec){ buf, (size_t)n };
		*ret_niov = 1;
		pthread_rwlock_rdlock(&inode->i_dlock);
		return 0;
	}
	bulk = data_bulk_begin(fs);
	r = do_read_begin(fs, inode, buf, len, off, iov, maxiov, ret_niov);

	data_bulk_end(bulk);
	return r;
}

void data_read_end(struct tfs_inode *inode)
{
	pthread_rwlock_unlock(&inode->i_dlock);
}

/*
 * A write in progress (write_extents()): write-through writes stop at
 * the first failure and return a short count; a writeback goes on and
 * records what it could not store.
 */
struct wstate {
	bool all;	     /* writeback: store what can be, record the rest */
	int err;	     /* the first failure's -errno, or 0 */
	uint64_t seq;	     /* its number (wb_failed()), 0 until taken */
	bool first;	     /* it opens an episode */
	uint64_t lost;	     /* bytes not stored */
	uint64_t stored_end; /* file offset past the last byte stored */
	uint64_t stored;     /* bytes stored (quota_io_write()) */
};

/*
 * The source of a write (struct data_src, data.h).  Pieces are taken in
 * order; a pipe's piece is read either straight into tier memory
 * (src_write()) or into the bounce buffer (src_piece()), once.
 *
 * The bounce buffer is per thread, grown to the largest piece seen (at
 * most the largest WRITE, 1 MiB) and freed when the thread exits.
 */
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;
static __thread char *t_bounce;
static __thread size_t t_bounce_cap;

static void bounce_key_make(void)
{
	if (pthread_key_create(&bounce_key, free) != 0)
		log_err("cannot make a key for the per-thread write buffers; they stay allocated when threads exit");
}

static char *bounce_get(size_t n)
{
	char *p;

	if (n <= t_bounce_cap)
		return t_bounce;
	pthread_once(&bounce_once, bounce_key_make);
	p = realloc(t_bounce, n);
	if (!p)
		return NULL;
	t_bounce = p;
	t_bounce_cap = n;
	(void)pthread_setspecific(bounce_key, p);
	return p;
}

/*
 * The @n bytes of the write at @at, in memory: the caller's buffer, or
 * the pipe's next piece read into the bounce buffer (once: the same
 * piece asked for again is still there).
 * Return: the bytes, or NULL with @src->broken set when the pipe failed
 * or no bounce buffer could be had (the pipe is then given up, so that
 * nothing reads it out of order).
 */
static const char *src_piece(struct data_src *src, size_t at, size_t n)
{
	char *b;

	if (src->mem)
		return src->mem + at;
	if (src->cur_at == at)
		return src->bounce;
	if (src->broken || NEVER(src->next != at))
		goto broken;
	b = bounce_get(n);
	if (!b || read_exact(src->fd, b, n) < 0)
		goto broken;
	src->next = at + n;
	src->cur_at = at;
	src->bounce = b;
	return b;
broken:
	src->broken = true;
	return NULL;
}

/*
 * tier_write() of the write's @n bytes at @at to @slot of @t at @off:
 * from a pipe straight into the tier's memory where it lends it.
 * Return: as tier_write(); -EIO with @src->broken set when the source
 * failed (the tier is not to blame).
 */
static ssize_t src_write(struct data_src *src, struct tier *t, uint32_t slot,
			 uint64_t off, size_t at, size_t n)
{
	const char *p;

	if (src->fd >= 0 && !src->mem && src->cur_at != at && !src->broken &&
	    src->next == at) {
		ssize_t r = tier_write_fd(t, slot, off, src->fd, n);

		if (r != -EOPNOTSUPP) {
			if (r < 0)
				src->broken = true;
			else
				src->next = at + n;
			return r;
		}
	}
	p = src_piece(src, at, n);
	if (!p)
		return -EIO;
	return tier_write(t, slot, off, p, n);
}

/* The piece at @at is done with: a pipe's bytes that nothing took are
 * read and dropped, so that the next piece starts where it should. */
static void src_skip(struct data_src *src, size_t at, size_t n)
{
	if (!src->mem && !src->broken && src->next < at + n)
		(void)src_piece(src, at, n);
}

/* At the end of a write: empty the pipe of what was not taken. */
static void src_drain(struct data_src *src, size_t len)
{
	while (!src->mem && !src->broken && src->next < len) {
		size_t n = MIN(len - src->next, (size_t)1 << 20);

		(void)src_piece(src, src->next, n);
	}
}

/* [@off, @end) was not stored: -errno @err.  i_dlock exclusive. */
static void w_fail(struct tierfs *fs, struct tfs_inode *inode,
		   struct wstate *w, uint64_t off, uint64_t end, int err)
{
	if (!w->err)
		w->err = err;
	if (!w->all)
		return;
	if (!w->seq)
		w->first = wb_failed(fs, inode, err, 0, &w->seq);
	w->lost += end - off;
	if (lost_add(inode, off, end, w->seq) < 0)
		log_err("cannot record a failed writeback of inode %llu at offset %llu: out of memory; its bytes may read back as older data",
			(unsigned long long)inode->i_ino,
			(unsigned long long)off);
}

/* [@off, @end) was stored.  i_dlock exclusive. */
static void w_stored(struct tfs_inode *inode, struct wstate *w, uint64_t off,
		     uint64_t end)
{
	if (inode->i_wb)
		lost_clear(inode, off, end);
	w->stored_end = MAX(w->stored_end, end);
	w->stored += end - off;
}

/*
 * Extent @idx (present) could not get the units it lacks for
 * [@eoff, @eoff+@n): write the parts that fall in units it holds (an
 * overwrite needs no room), and fail the rest with @err.  Write-through
 * stops at the first unheld byte, so that its short count means what it
 * says.  Return: the bytes stored from @eoff on without a gap.
 */
static size_t write_held(struct tierfs *fs, struct tfs_inode *inode,
			 uint64_t idx, const char *buf, uint64_t eoff,
			 size_t n, int err, struct wstate *w)
{
	struct extent *e = extent_map_lookup(&inode->i_map, idx);
	uint64_t base = idx << fs->extent_shift;
	uint64_t pos = eoff, end = eoff + n, o, l;
	size_t prefix = 0;
	bool gap = false;

	while (e && pos < end) {
		uint64_t a, z;
		ssize_t wr;

		if (!tier_held_next(fs->tiers[e->tier], e->slot, pos, &o,
				    &l) ||
		    o >= end)
			break;
		a = MAX(o, pos);
		z = MIN(o + l, end);
		if (a > pos) {
			w_fail(fs, inode, w, base + pos, base + a, err);
			gap = true;
			if (!w->all)
				return prefix;
		}
		e->wgen = ++inode->i_wgen;
		wr = tier_write(fs->tiers[e->tier], e->slot, a,
				buf + (a - eoff), (size_t)(z - a));
		if (wr < 0) {
			w_fail(fs, inode, w, base + a, base + z,
			       tier_fail(fs, e->tier, inode, base + a, "write",
					 (int)wr));
			gap = true;
			if (!w->all)
				return prefix;
		} else {
			w_stored(inode, w, base + a, base + z);
			if (!gap)
				prefix = (size_t)(z - eoff);
		}
		pos = z;
	}
	if (pos < end)
		w_fail(fs, inode, w, base + pos, base + end, err);
	return prefix;
}

/*
 * The loop of data_write() and data_writeback(): [@off, @off+@len) one
 * extent at a time.  i_dlock exclusive.
 * Return: the bytes stored from @off on without a gap (the write-through
 * count); w->err and the lost ranges say the rest.
 */
static size_t write_extents(struct tierfs *fs, struct tfs_inode *inode,
			    const struct policy *pol, struct data_src *src,
			    size_t len, uint64_t off, struct wstate *w)
{
	uint32_t now = tierfs_tick(fs);
	size_t done = 0, pos_done = 0;
	bool gap = false;

	while (pos_done < len) {
		uint64_t pos = off + pos_done;
		uint64_t idx = pos >> fs->extent_shift;
		uint64_t eoff = pos & ext_mask(fs);
		size_t n = (size_t)MIN(len - pos_done, fs->extent_size - eoff);
		struct extent *e = extent_map_lookup(&inode->i_map, idx);
		unsigned failed = 0; /* tiers that failed this fresh extent */
		int werr = 0;	     /* and the last such failure */
		bool grows = true;   /* the write takes units the extent lacks */
		int r = 0;
		ssize_t wr;

		if (e) {
			grows = tier_uncharged(fs->tiers[e->tier], e->slot,
					       eoff, n) != 0;
			/* the units it lacks, here or on a tier with room */
			r = extent_grow(fs, inode, idx, pol, eoff, n);
			if (r < 0) {
				const char *p = src_piece(src, pos_done, n);
				size_t k;

				if (!p)
					goto src_failed;
				k = write_held(fs, inode, idx, p, eoff, n, r,
					       w);

				if (!gap)
					done += k;
				gap = true;
				if (!w->all)
					break;
				goto next;
			}
			e = extent_map_lookup(&inode->i_map, idx);
			e->wgen = ++inode->i_wgen;
			wr = src_write(src, fs->tiers[e->tier], e->slot, eoff,
				       pos_done, n);
			if (wr < 0 && src->broken)
				goto src_failed;
			if (wr < 0) {
				w_fail(fs, inode, w, pos, pos + n,
				       tier_fail(fs, e->tier, inode, pos,
						 "write", (int)wr));
				gap = true;
				if (!w->all)
					break;
				goto next;
			}
		} else {
			if (idx > EXTENT_MAP_MAX_INDEX) {
				w_fail(fs, inode, w, pos, off + len, -EFBIG);
				break;
			}
			/*
			 * A fresh extent whose tier fails (a device full below
			 * its configured size, an I/O error) is given back and
			 * placed on the next tier instead: spill, not fail.
			 */
			for (;;) {
				e = extent_place(fs, inode, idx, failed, pol,
						 eoff, n, &r);
				if (!e)
					break;
				wr = src_write(src, fs->tiers[e->tier],
					       e->slot, eoff, pos_done, n);
				if (wr >= 0)
					break;
				if (src->broken) {
					extent_drop(fs, inode, idx);
					goto src_failed;
				}
				werr = tier_fail(fs, e->tier, inode, pos,
						 "write", (int)wr);
				failed |= 1u << e->tier;
				extent_drop(fs, inode, idx);
				e = NULL;
			}
			if (!e) {
				/* no tier left: report what the last one said */
				if (r == -ENOSPC && werr)
					r = werr;
				w_fail(fs, inode, w, pos, pos + n, r);
				gap = true;
				if (!w->all)
					break;
				goto next;
			}
		}
		/*
		 * New data is one pass however it arrives: the kernel writes
		 * a file back in bursts, in requests served in any order, and
		 * two bursts into one extent a moment apart are not a re-use
		 * of its data.  So a write that takes units the extent did
		 * not hold counts only as the extent's first access (it has
		 * no heat yet); a write over held units is a pass.
		 */
		if (!grows || !__atomic_load_n(&e->heat, __ATOMIC_RELAXED)) {
			heat_touch(e, now, fs->half_life_ticks);
			track_touch(fs, inode, idx, e, now);
		}
		w_stored(inode, w, pos, pos + n);
		if (!gap)
			done += n;
next:
		src_skip(src, pos_done, n);
		if (src->broken) {
			/* skipped bytes that could not be read: not lost,
			 * they were never to be stored */
			break;
		}
		pos_done += n;
	}
	src_drain(src, len);
	return done;

src_failed:
	/* the pipe failed: nothing from here on can be had */
	log_err("a write to inode %llu at offset %llu could not be read from its request pipe; it fails with EIO",
		(unsigned long long)inode->i_ino, (unsigned long long)off);
	w_fail(fs, inode, w, off + pos_done, off + len, -EIO);
	return done;
}

/*
 * After a write: the size grows to what was stored past it (a lost
 * append leaves the size where the stored data ends), and the times
 * move.  i_dlock exclusive.
 */
static void write_done(struct tfs_inode *inode, const struct wstate *w)
{
	if (!w->stored_end)
		return;
	if (w->stored_end > inode->i_size && inode->i_wb)
		lost_clear_reported_tail(inode, inode->i_size);
	pthread_mutex_lock(&inode->i_lock);
	if (w->stored_end > inode->i_size)
		inode->i_size = w->stored_end;
	inode_touch(inode, true, true);
	pthread_mutex_unlock(&inode->i_lock);
}

/* A write of @src's @len bytes to native @inode at @off: as
 * data_write_src().  Return: bytes written, or -errno. */
static ssize_t native_write_src(struct tierfs *fs, struct tfs_inode *inode,
				struct data_src *src, size_t len,
				uint64_t off)
{
	const char *p;
	ssize_t r;

	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off) {
		src_drain(src, len);
		return -EFBIG;
	}
	p = src_piece(src, 0, len);
	if (!p)
		return -EIO;
	r = native_write(fs, inode, p, len, off);
	src_drain(src, len);
	return r;
}

ssize_t data_write(struct tierfs *fs, struct tfs_inode *inode,
		   const char *buf, size_t len, uint64_t off)
{
	struct data_src src = DATA_SRC_MEM(buf);

	return data_write_src(fs, inode, &src, len, off);
}

ssize_t data_write_src(struct tierfs *fs, struct tfs_inode *inode,
		       struct data_src *src, size_t len, uint64_t off)
{
	struct wstate w = { .all = false };
	struct policy pol;
	size_t done;
	bool bulk;

	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off) {
		src_drain(src, len);
		return -EFBIG;
	}
	if (native_of(inode))
		return native_write_src(fs, inode, src, len, off);
	/* before the data lock: resolving takes ns_lock, which comes first */
	policy_get(fs, inode, &pol);
	if (data_lock(fs, inode, true) < 0) {
		src_drain(src, len);
		return -EIO;
	}
	/* a short write-through stores nothing past its count */
	bulk = data_bulk_begin(fs);
	done = write_extents(fs, inode, &pol, src, len, off, &w);
	data_bulk_end(bulk);
	write_done(inode, &w);
	quota_io_write(inode_quota(inode), w.stored);
	pthread_rwlock_unlock(&inode->i_dlock);
	return done > 0 ? (ssize_t)done : w.err;
}

int data_writeback(struct tierfs *fs, struct tfs_inode *inode,
		   const char *buf, size_t len, uint64_t off,
		   uint64_t *ret_lost, bool *ret_first)
{
	struct data_src src = DATA_SRC_MEM(buf);

	return data_writeback_src(fs, inode, &src, len, off, ret_lost,
				  ret_first);
}

int data_writeback_src(struct tierfs *fs, struct tfs_inode *inode,
		       struct data_src *src, size_t len, uint64_t off,
		       uint64_t *ret_lost, bool *ret_first)
{
	struct wstate w = { .all = true };
	struct policy pol;
	bool bulk;

	*ret_lost = 0;
	*ret_first = false;
	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off) {
		/* the kernel never sends one; nothing to record it in */
		*ret_lost = len;
		*ret_first = true;
		src_drain(src, len);
		return -EFBIG;
	}
	if (native_of(inode)) {
		ssize_t r = native_write_src(fs, inode, src, len, off);

		*ret_lost = r < 0 ? len : len - (size_t)r;
		*ret_first = *ret_lost > 0;
		return r < 0 ? (int)r : *ret_lost ? -EIO : 0;
	}
	policy_get(fs, inode, &pol);
	pthread_rwlock_wrlock(&inode->i_dlock);
	bulk = data_bulk_begin(fs);
	(void)write_extents(fs, inode, &pol, src, len, off, &w);
	data_bulk_end(bulk);
	write_done(inode, &w);
	if (w.err && inode->i_wb)
		inode->i_wb->fail_bytes += w.lost;
	quota_io_write(inode_quota(inode), w.stored);
	if (w.err)
		quota_io_wb_error(inode_quota(inode), w.lost);
	pthread_rwlock_unlock(&inode->i_dlock);
	*ret_lost = w.lost;
	*ret_first = w.first;
	return w.err;
}

int data_truncate(struct tierfs *fs, struct tfs_inode *inode, uint64_t size)
{
	int r = 0;

	if (size > (uint64_t)INT64_MAX)
		return -EFBIG;
	if (native_of(inode))
		return native_truncate(fs, inode, size);
	r = data_lock(fs, inode, true);
	if (r < 0)
		return r;
	if (size < inode->i_size) {
		uint64_t eoff = size & ext_mask(fs);
		uint64_t idx = size >> fs->extent_shift;

		if (eoff) {
			r = punch_in_extent(fs, inode, idx, eoff,
					    fs->extent_size - eoff);
			idx++;
		}
		if (r == 0)
			drop_from(fs, inode, idx, EXTENT_MAP_MAX_INDEX);
	} else if (inode->i_wb) {
		/*
		 * Growing: extents preallocated past EOF (KEEP_SIZE) are
		 * already zero, so there is nothing to clear -- but a lost
		 * append the program was told of is a hole now.
		 */
		lost_clear_reported_tail(inode, inode->i_size);
	}
	if (r == 0 && inode->i_wb)
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

/*
 * Bytes that alloc_range() of [off, end) would add: the units present
 * extents lack in the range, and the whole units of the holes.  Called
 * with i_dlock held.
 */
static uint64_t alloc_need(struct tierfs *fs, struct tfs_inode *inode,
			   uint64_t off, uint64_t end)
{
	uint64_t first = off >> fs->extent_shift;
	uint64_t last = (end - 1) >> fs->extent_shift;
	uint64_t unit = tier_unit(fs->tiers[0]), need = 0;

	for (uint64_t idx = first; idx <= last; idx++) {
		uint64_t a = idx == first ? off & ext_mask(fs) : 0;
		uint64_t z = idx == last ? ((end - 1) & ext_mask(fs)) + 1
					 : fs->extent_size;
		struct extent *e = extent_map_lookup(&inode->i_map, idx);

		if (e)
			need += tier_uncharged(fs->tiers[e->tier], e->slot, a,
					       z - a);
		else
			need += ALIGN_UP(z, unit) - ALIGN_DOWN(a, unit);
	}
	return need;
}

/*
 * Allocate every unit of [off, end): holes get extents, present extents
 * the units they lack.  On failure the extents this call made are given
 * back; units it added to extents that were there stay (they read as
 * zeros, and count in st_blocks, as after a fallocate that succeeded in
 * part).  The caller first compares alloc_need() with the room, so that
 * happens only when others took the room in the meantime.  Called with
 * i_dlock exclusive.
 */
static int alloc_range(struct tierfs *fs, struct tfs_inode *inode,
		       uint64_t off, uint64_t end, const struct policy *pol)
{
	uint64_t first = off >> fs->extent_shift;
	uint64_t last = (end - 1) >> fs->extent_shift;
	int r = 0;
	uint64_t idx;

	for (idx = first; idx <= last; idx++) {
		uint64_t a = idx == first ? off & ext_mask(fs) : 0;
		uint64_t z = idx == last ? ((end - 1) & ext_mask(fs)) + 1
					 : fs->extent_size;

		if (extent_map_lookup(&inode->i_map, idx)) {
			r = extent_grow(fs, inode, idx, pol, a, z - a);
			if (r < 0)
				break;
			continue;
		}
		if (!extent_place(fs, inode, idx, 0, pol, a, z - a, &r))
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
			return punch_in_extent(fs, inode, first, off & mask,
					       end - off);
		return 0;
	}
	/* partial head and tail extents give back the units inside the
	 * range, whole ones are freed */
	if (off & mask) {
		r = punch_in_extent(fs, inode, first, off & mask,
				    fs->extent_size - (off & mask));
		if (r < 0)
			return r;
		first++;
	}
	if (end & mask) {
		r = punch_in_extent(fs, inode, last, 0, end & mask);
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
	if (native_of(inode))
		return native_fallocate(fs, inode, mode, off, len);
	if ((end - 1) >> fs->extent_shift > EXTENT_MAP_MAX_INDEX)
		return -EFBIG;

	policy_get(fs, inode, &pol);
	r = data_lock(fs, inode, true);
	if (r < 0)
		return r;
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		r = punch(fs, inode, off, end);
	} else {
		/*
		 * The space first, all of it or none (alloc_range() rolls
		 * back): a zero-range that fails for room changes nothing.
		 */
		if (alloc_need(fs, inode, off, end) >
		    tier_free_bytes(fs->tiers, fs->ntiers, pol.allowed))
			r = -ENOSPC; /* as tmpfs: not enough for all of it */
		else
			r = alloc_range(fs, inode, off, end, &pol);
		if (r == 0 && (mode & FALLOC_FL_ZERO_RANGE))
			r = zero_range(fs, inode, off, end);
	}
	if (r == 0 && inode->i_wb &&
	    (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
		lost_clear(inode, off, end); /* zeros now, as asked */
	if (r == 0 && inode->i_wb && !(mode & FALLOC_FL_KEEP_SIZE) &&
	    end > inode->i_size)
		lost_clear_reported_tail(inode, inode->i_size);
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
	    !(inode->i_wb && lost_overlaps(inode, off, len))) {
		hole = true;
		*ret_len = (size_t)MIN((uint64_t)len, inode->i_size - off);
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return hole;
}

/* Grow @inode to @size if it is shorter, as a truncate would; never
 * shrink it.  The size is compared under the lock that changes it, so a
 * write that extended the file past @size meanwhile is kept. */
static void grow_to(struct tfs_inode *inode, uint64_t size)
{
	pthread_rwlock_wrlock(&inode->i_dlock);
	if (size > inode->i_size) {
		if (inode->i_wb)
			lost_clear_reported_tail(inode, inode->i_size);
		pthread_mutex_lock(&inode->i_lock);
		inode->i_size = size;
		inode_touch(inode, true, true);
		pthread_mutex_unlock(&inode->i_lock);
	}
	pthread_rwlock_unlock(&inode->i_dlock);
}

/* Make [@off, @off+@len) of @inode read as zeros without taking space:
 * punch it, and grow the file to its end if it is shorter. */
static int zero_hole(struct tierfs *fs, struct tfs_inode *inode,
		     uint64_t off, size_t len)
{
	int r;

	r = data_fallocate(fs, inode,
			   FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
			   len);
	if (r < 0)
		return r;
	testhook(TESTHOOK_COPY_HOLE, inode, off >> fs->extent_shift);
	grow_to(inode, off + len);
	return 0;
}

ssize_t data_copy(struct tierfs *fs, struct tfs_inode *in, uint64_t off_in,
		  struct tfs_inode *out, uint64_t off_out, size_t len)
{
	/* a bounded buffer, whatever the extent size */
	size_t chunk = MIN((size_t)fs->extent_size, (size_t)TIERFS_MAX_IO);
	size_t done = 0;
	ssize_t r = 0;
	bool native = native_of(in) || native_of(out);
	char *buf;

	if (native_of(in) && native_of(out))
		return native_copy(fs, in, off_in, out, off_out, len);
	buf = malloc(chunk);
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

		/* between a native file and a tiered one: bytes, holes too */
		if (!native && hole_at(fs, in, pos, n, &h)) {
			/* a hole copies as a hole: no space for zeros */
			r = zero_hole(fs, out, off_out + done, h);
			if (r < 0)
				break;
			done += h;
			continue;
		}
		n = MIN(n, chunk);
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

/* The first held byte of extent @e at or after @from within it, or
 * false.  i_dlock held. */
static bool extent_data_at(struct tierfs *fs, const struct extent *e,
			   uint64_t from, uint64_t *ret)
{
	uint64_t o, l;

	if (!tier_held_next(fs->tiers[e->tier], e->slot, from, &o, &l))
		return false;
	*ret = MAX(from, o);
	return true;
}

/* The first unheld byte of extent @e at or after @from within it (the
 * extent size when it holds everything from there).  i_dlock held. */
static uint64_t extent_hole_at(struct tierfs *fs, const struct extent *e,
			       uint64_t from)
{
	uint64_t o, l;

	if (!tier_held_next(fs->tiers[e->tier], e->slot, from, &o, &l) ||
	    o > from)
		return from;
	return o + l;
}

/*
 * Holes and data to the allocation unit (tier.h): a held unit is data,
 * even one that only fallocate made (as on tmpfs); a missing extent or
 * unit is a hole.
 */
int data_lseek(struct tierfs *fs, struct tfs_inode *inode, uint64_t off,
	       int whence, uint64_t *ret_off)
{
	uint64_t idx, size, res = 0, from = off & ext_mask(fs);
	const struct extent *e;
	int r;

	if (native_of(inode))
		return native_lseek(fs, inode, off, whence, ret_off);
	r = data_lock(fs, inode, false);
	if (r < 0)
		return r;
	size = inode->i_size;
	if (off >= size) {
		r = -ENXIO;
		goto out;
	}
	idx = off >> fs->extent_shift;
	if (whence == SEEK_DATA) {
		for (;;) {
			uint64_t at, next;

			if (!extent_map_next(&inode->i_map, idx, &next)) {
				r = -ENXIO;
				goto out;
			}
			if (next != idx)
				from = 0;
			e = extent_map_lookup(&inode->i_map, next);
			if (extent_data_at(fs, e, from, &at)) {
				res = (next << fs->extent_shift) + at;
				break;
			}
			idx = next + 1;
			if (idx << fs->extent_shift >= size) {
				r = -ENXIO;
				goto out;
			}
		}
		if (res >= size)
			r = -ENXIO;
	} else {
		/* the first byte no extent holds; EOF ends the last hole */
		for (;;) {
			uint64_t h;

			e = extent_map_lookup(&inode->i_map, idx);
			h = e ? extent_hole_at(fs, e, from) : from;
			if (h < fs->extent_size) {
				res = (idx << fs->extent_shift) + h;
				break;
			}
			idx++;
			from = 0;
			if (idx << fs->extent_shift >= size) {
				res = size;
				break;
			}
		}
		res = MIN(size, res);
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
	const uint64_t *tb = inode_tier_bytes(inode);

	/* a native file's too, as of its last native_sync() */
	memset(bytes, 0, sizeof(uint64_t) * TIER_MAX_CONF);
	for (unsigned t = 0; t < fs->ntiers; t++)
		bytes[t] = __atomic_load_n(&tb[t], __ATOMIC_RELAXED);
}


uint64_t data_blocks(struct tierfs *fs, struct tfs_inode *inode)
{
	/* benign race: a torn-free 64-bit load of a count */
	return __atomic_load_n(&inode->i_bytes, __ATOMIC_RELAXED) / 512;
}
