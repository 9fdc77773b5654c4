// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * data_lost.c -- what the kernel's writeback failed to store, per file:
 * the lost byte ranges (so that a read meeting one fails with EIO until
 * the bytes are written, cut or punched again) and the error itself,
 * which the daemon, not the kernel, hands to the program (data.h,
 * "Writeback errors").
 *
 * Why the daemon keeps the error: the kernel can carry only ENOSPC or
 * EIO to close(2) (its legacy AS_ENOSPC/AS_EIO mapping flags; close
 * checks them before it sends FLUSH), so a quota overrun would read as
 * a disk fault.  tierfs answers the failed writeback WRITE with success
 * and reports the error itself: from FLUSH (close) and FSYNC with the
 * errno that really happened, once per open file as the kernel's errseq
 * does, and from the getattr that the kernel sends before the next
 * write(2) on that file (ops.c).
 *
 * State: struct wb_state (data.h), allocated at a file's first failed
 * writeback and kept until the inode is freed.  Every failure takes a
 * new number from the mount-wide fs->wb_seq, so an open file's "seen up
 * to" number never needs the state to exist when it is taken.
 *
 * Locking: inode->i_wb and every field of it are guarded by the inode's
 * i_dlock; i_wb is also published with a release store, so a reader may
 * test it for NULL without the lock (data_wb_*() do) -- it never goes
 * back to NULL while the inode lives.  lost_overlaps() is called with
 * i_dlock held (shared is enough), lost_add() and lost_clear() with it
 * exclusive; data_wb_*() take it themselves.
 *
 * Return: lost_add() returns 0 or -ENOMEM (nothing recorded: the caller
 * still reports the error); lost_clear() cannot fail: without memory to
 * split a range it keeps the range whole (reads of it go on failing,
 * never wrong data).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "data_i.h"
#include "fs.h"
#include "inode.h"
#include "log.h"
#include "macro.h"
#include "banned.h"

/*
 * Lost ranges one file keeps exactly (24 bytes each: 1.5 MiB at most).
 * Past it the two ranges with the smallest gap between them are merged,
 * so the bytes stored between them read as EIO too: never wrong data,
 * but an acknowledged byte could be among them, so the log says so.
 * Reaching it takes 65536 separate failed runs in one file.
 */
#define LOST_RANGES_MAX 65536

/* Room for one more range.  i_dlock exclusive.  Return: 0 or -ENOMEM. */
static int lost_reserve(struct wb_state *wb)
{
	struct byte_range *n;
	uint32_t cap;

	if (wb->nlost < wb->caplost)
		return 0;
	cap = wb->caplost ? 2 * wb->caplost : 4;
	n = realloc(wb->lost, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	wb->lost = n;
	wb->caplost = cap;
	return 0;
}

/* The first range that ends at or after @off (nlost if none). */
static uint32_t lost_find(const struct wb_state *wb, uint64_t off)
{
	uint32_t lo = 0, hi = wb->nlost;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (wb->lost[mid].end < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Does [@off, @off+@len) meet a lost range?  Called with i_dlock held. */
bool lost_overlaps(const struct tfs_inode *inode, uint64_t off, uint64_t len)
{
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	const struct wb_state *wb = inode->i_wb;

	if (!wb)
		return false;
	for (uint32_t i = lost_find(wb, off); i < wb->nlost; i++) {
		const struct byte_range *b = &wb->lost[i];

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
void lost_clear(struct tfs_inode *inode, uint64_t off, uint64_t end)
{
	struct wb_state *wb = inode->i_wb;
	uint32_t i;

	if (!wb)
		return;
	i = lost_find(wb, off);
	while (i < wb->nlost) {
		struct byte_range *b = &wb->lost[i];

		if (b->end <= off) {
			i++;
			continue;
		}
		if (b->start >= end)
			break;
		if (b->start >= off && b->end <= end) {
			memmove(b, b + 1, (wb->nlost - i - 1) * sizeof(*b));
			wb->nlost--;
			continue;
		}
		if (b->start < off && b->end > end) {
			if (lost_reserve(wb) < 0)
				return;
			b = &wb->lost[i];
			memmove(b + 1, b, (wb->nlost - i) * sizeof(*b));
			wb->nlost++;
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
	if (wb->nlost == 0) {
		free(wb->lost);
		wb->lost = NULL;
		wb->caplost = 0;
	}
}

void lost_clear_reported_tail(struct tfs_inode *inode, uint64_t from)
{
	struct wb_state *wb = inode->i_wb;
	uint32_t i, k = 0;

	if (!wb || wb->nlost == 0)
		return;
	/* a range that straddles @from keeps its part below */
	for (i = 0; i < wb->nlost; i++) {
		struct byte_range *b = &wb->lost[i];

		if (b->end <= from || b->seq > wb->reported) {
			wb->lost[k++] = *b;
		} else if (b->start < from) {
			b->end = from;
			wb->lost[k++] = *b;
		}
	}
	wb->nlost = k;
	if (k == 0) {
		free(wb->lost);
		wb->lost = NULL;
		wb->caplost = 0;
	}
}

/* The file's writeback state, made on first use.  i_dlock exclusive. */
static struct wb_state *wb_get(struct tfs_inode *inode)
{
	struct wb_state *wb = inode->i_wb;

	if (wb)
		return wb;
	wb = calloc(1, sizeof(*wb));
	if (wb)
		wb->ino = inode->i_ino;
	if (wb)
		__atomic_store_n(&inode->i_wb, wb, __ATOMIC_RELEASE);
	return wb;
}

/* Over LOST_RANGES_MAX: merge the two ranges closest to each other. */
static void lost_squeeze(struct wb_state *wb)
{
	uint32_t best = 0;
	uint64_t gap = UINT64_MAX;

	for (uint32_t i = 0; i + 1 < wb->nlost; i++) {
		if (wb->lost[i + 1].start - wb->lost[i].end < gap) {
			gap = wb->lost[i + 1].start - wb->lost[i].end;
			best = i;
		}
	}
	wb->lost[best].end = wb->lost[best + 1].end;
	wb->lost[best].seq = MAX(wb->lost[best].seq, wb->lost[best + 1].seq);
	memmove(&wb->lost[best + 1], &wb->lost[best + 2],
		(wb->nlost - best - 2) * sizeof(*wb->lost));
	wb->nlost--;
	if (!wb->squeezed)
		log_err("more than %u separate lost ranges in one file (inode %llu): some stored bytes between them read as EIO too",
			LOST_RANGES_MAX, (unsigned long long)wb->ino);
	wb->squeezed = true;
}

int lost_add(struct tfs_inode *inode, uint64_t off, uint64_t end,
	     uint64_t seq)
{
	struct wb_state *wb = wb_get(inode);
	uint32_t lo, hi;

	if (!wb)
		return -ENOMEM;
	if (end <= off)
		return 0;
	/* [lo, hi): the ranges the new one meets or touches */
	lo = lost_find(wb, off);
	for (hi = lo; hi < wb->nlost && wb->lost[hi].start <= end; hi++) {
		off = MIN(off, wb->lost[hi].start);
		end = MAX(end, wb->lost[hi].end);
		seq = MAX(seq, wb->lost[hi].seq);
	}
	if (hi > lo) {
		wb->lost[lo] = (struct byte_range){ off, end, seq };
		memmove(&wb->lost[lo + 1], &wb->lost[hi],
			(wb->nlost - hi) * sizeof(*wb->lost));
		wb->nlost -= hi - lo - 1;
		return 0;
	}
	if (lost_reserve(wb) < 0)
		return -ENOMEM;
	memmove(&wb->lost[lo + 1], &wb->lost[lo],
		(wb->nlost - lo) * sizeof(*wb->lost));
	wb->lost[lo] = (struct byte_range){ off, end, seq };
	wb->nlost++;
	if (wb->nlost > LOST_RANGES_MAX)
		lost_squeeze(wb);
	return 0;
}

bool wb_failed(struct tierfs *fs, struct tfs_inode *inode, int err,
	       uint64_t bytes, uint64_t *ret_seq)
{
	struct wb_state *wb = wb_get(inode);
	uint64_t seq = __atomic_add_fetch(&fs->wb_seq, 1, __ATOMIC_RELAXED);
	bool first;

	*ret_seq = seq;
	if (!wb)
		return true; /* no memory: say it, the log line is all */
	first = wb->fails == 0;
	wb->err = err;
	wb->seq = seq;
	wb->fails++;
	wb->fail_bytes += bytes;
	return first;
}

uint64_t data_wb_sample(struct tfs_inode *inode)
{
	struct wb_state *wb = __atomic_load_n(&inode->i_wb, __ATOMIC_ACQUIRE);
	uint64_t seq;

	if (!wb)
		return 0;
	pthread_rwlock_rdlock(&inode->i_dlock);
	/* an error nobody was told of yet goes to this file too */
	seq = wb->reported < wb->seq ? wb->reported : wb->seq;
	pthread_rwlock_unlock(&inode->i_dlock);
	return seq;
}

int data_wb_check(struct tfs_inode *inode, uint64_t *seen, bool consume,
		  struct wb_episode *ret_ep)
{
	struct wb_state *wb = __atomic_load_n(&inode->i_wb, __ATOMIC_ACQUIRE);
	uint64_t s = __atomic_load_n(seen, __ATOMIC_RELAXED);
	int err = 0;

	if (ret_ep)
		ret_ep->fails = 0;
	if (!wb)
		return 0;
	pthread_rwlock_wrlock(&inode->i_dlock);
	if (wb->seq > s) {
		err = wb->err;
		/* concurrent checks of one file: each error once */
		if (!__atomic_compare_exchange_n(seen, &s, wb->seq, false,
						 __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
			err = 0;
		if (err && consume && wb->reported < wb->seq) {
			wb->reported = wb->seq;
			/* the episode the log line opened ends here */
			if (ret_ep) {
				ret_ep->err = wb->err;
				ret_ep->fails = wb->fails;
				ret_ep->bytes = wb->fail_bytes;
			}
			wb->fails = 0;
			wb->fail_bytes = 0;
		}
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return err;
}

void data_wb_free(struct tfs_inode *inode)
{
	if (!inode->i_wb)
		return;
	free(inode->i_wb->lost);
	free(inode->i_wb);
	inode->i_wb = NULL;
}
