// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * data_lost.c -- the lost ranges of a file: byte ranges whose writeback
 * failed (data_mark_lost(), data.h), kept sorted and disjoint in the
 * inode's i_lost array so that a read meeting one fails with EIO
 * (lost_overlaps()) until the bytes are written, cut or punched again
 * (lost_clear()).
 *
 * Locking: i_lost and i_nlost are guarded by the inode's i_dlock.
 * data_mark_lost() takes it exclusive itself; lost_overlaps() is called
 * with it held (shared is enough), lost_clear() with it exclusive.
 *
 * Return: data_mark_lost() returns 0 or -ENOMEM (nothing recorded);
 * lost_clear() cannot fail: without memory to split a range it keeps
 * the range whole (reads of it go on failing, never wrong data).
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
#include "macro.h"
#include "banned.h"

/* Lost ranges an inode keeps before merging them into one. */
#define LOST_RANGES_MAX 32

/* Does [@off, @off+@len) meet a lost range?  Called with i_dlock held. */
bool lost_overlaps(const struct tfs_inode *inode, uint64_t off, uint64_t len)
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
void lost_clear(struct tfs_inode *inode, uint64_t off, uint64_t end)
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
