/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * data_i.h -- what the files of the data module share with each other
 * and with nobody else: data.c (reads, writes, truncate, fallocate,
 * copy, lseek), data_extent.c (one extent: place, drop, zero, the tier
 * failure log), data_lost.c (lost ranges) and data_move.c (the move of
 * one extent).  Only fs/data*.c include it; everyone else uses data.h.
 *
 * Locking: none of these functions takes a lock.  Each is called with
 * the inode's i_dlock held as its line says ("exclusive": held for
 * writing; "held": shared is enough); tier_fail() needs no lock and is
 * safe under any.
 *
 * Return: 0 or -errno as data.h says; tier_fail() returns the errno the
 * client gets; extent_place() returns NULL and sets *ret_err.  Only
 * tier_fail() logs.
 */
#ifndef TIERFS_DATA_I_H
#define TIERFS_DATA_I_H

#include <stdbool.h>
#include <stdint.h>

#include "fs.h"
#include "tier.h"

struct extent;
struct policy;
struct tfs_inode;

/* Offset-within-extent mask (extent_size is a power of two). */
static inline uint64_t ext_mask(const struct tierfs *fs)
{
	return (uint64_t)fs->extent_size - 1;
}

/*
 * --page-cache only: the mount's page cache holds what a program reads
 * and writes, so its I/O on a file tier is bulk I/O (tier.h,
 * tier_bulk_begin()): direct where aligned, and not cached a second
 * time in the slab's page cache.  Returns whether it began a bulk
 * section (then data_bulk_end() with that value ends it).  Not nested:
 * the data functions that use it call no other that does.
 */
static inline bool data_bulk_begin(const struct tierfs *fs)
{
	if (fs->opt.page_cache != PAGE_CACHE_ONLY)
		return false;
	tier_bulk_begin();
	return true;
}

static inline void data_bulk_end(bool began)
{
	if (began)
		tier_bulk_end();
}

/* data_extent.c */

/*
 * Allocate a slot for extent @idx of @inode on the first tier of @pol's
 * order with room for the units of [@eoff, @eoff+@len) (bytes within
 * the extent), skipping the tiers in bit mask @skip and the ones being
 * drained, and insert it holding those units, charging the quotas
 * above @inode (quota.h; a tier cap there skips the tier).  i_dlock
 * exclusive.
 * Return: the new entry, or NULL with *ret_err = -ENOSPC, -EDQUOT (a
 * quota's total is reached), -ENOMEM or -EIO (the last tier tried
 * failed to reserve the space; each failing tier is logged and skipped:
 * a dead tier is spilled past).
 */
struct extent *extent_place(struct tierfs *fs, struct tfs_inode *inode,
			    uint64_t idx, unsigned skip,
			    const struct policy *pol, uint64_t eoff,
			    uint64_t len, int *ret_err);
/*
 * Make extent @idx (present) hold the units of [@eoff, @eoff+@len)
 * before they are written: charged on its tier, or, when that tier (or
 * a quota's cap on it) is full, the extent moves to the next tier of
 * @pol's order with room.  i_dlock exclusive.
 * Return: 0 (look the entry up again: it may have moved), -ENOSPC when
 * no allowed tier has room, -EDQUOT, -ENOMEM or a tier's -errno.
 */
int extent_grow(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		const struct policy *pol, uint64_t eoff, uint64_t len);
/* Make [@off, @off+@len) of extent @idx read as zeros, giving back the
 * units wholly inside; the extent goes when it holds nothing more.
 * i_dlock exclusive.  Return: 0 or a tier's -errno (logged). */
int punch_in_extent(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		    uint64_t off, uint64_t len);
/* Remove extent @idx and give its slot back (and its quota charge).
 * i_dlock exclusive. */
void extent_drop(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx);
/* Free every extent with index in [@first, @last], slots given back in
 * runs.  i_dlock exclusive. */
void drop_from(struct tierfs *fs, struct tfs_inode *inode, uint64_t first,
	       uint64_t last);
/* Zero [@off, @off+@len) inside extent @idx if it is present, all or
 * nothing; the extent holds the range's units.  i_dlock exclusive.
 * Return: 0 or a tier's -errno (logged). */
int zero_in_extent(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		   uint64_t off, uint64_t len);
/*
 * Log that tier @t failed @what (an operation name) of @inode at file
 * offset @off with @err, at most once per tier every few seconds; an
 * -EIO that tier.c mapped from the back end's own errno is logged with
 * that errno (tier_last_error()).
 * Return: the errno for the client, tier_errno(@err): -EIO for a
 * checksum mismatch (-EBADMSG) and for every errno that means nothing
 * to a program (ENOTCONN, ESTALE, ...: issue 16), else @err.
 */
int tier_fail(struct tierfs *fs, unsigned t, struct tfs_inode *inode,
	      uint64_t off, const char *what, int err);

/* data_lost.c */

/* Does [@off, @off+@len) meet a lost range?  i_dlock held. */
bool lost_overlaps(const struct tfs_inode *inode, uint64_t off, uint64_t len);
/* Forget the lost bytes in [@off, @end).  i_dlock exclusive. */
void lost_clear(struct tfs_inode *inode, uint64_t off, uint64_t end);
/* Record [@off, @end) lost by failure number @seq.  i_dlock exclusive.
 * Return: 0 or -ENOMEM (not recorded). */
int lost_add(struct tfs_inode *inode, uint64_t off, uint64_t end,
	     uint64_t seq);
/*
 * The file grows from @from (its old size) by a write or a truncate: the
 * lost ranges at or past @from whose failure was already reported (an
 * fsync or close returned it) are forgotten -- that append is simply not
 * in the file, and the gap reads as zeros, as POSIX wants.  A lost range
 * nobody was told of yet stays (EIO): a writeback landing beyond it is
 * no reason to hand out zeros for data the program wrote.
 * i_dlock exclusive.
 */
void lost_clear_reported_tail(struct tfs_inode *inode, uint64_t from);
/* Count a failed writeback of @bytes with -errno @err: a new number
 * (*@ret_seq) from fs->wb_seq.  i_dlock exclusive.
 * Return: true when it opens an episode (log it). */
bool wb_failed(struct tierfs *fs, struct tfs_inode *inode, int err,
	       uint64_t bytes, uint64_t *ret_seq);
/* Free the state (inode_free, via data_release()). */
void data_wb_free(struct tfs_inode *inode);

#endif /* TIERFS_DATA_I_H */
