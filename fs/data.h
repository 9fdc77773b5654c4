/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * data.h -- regular file data: reads, writes, truncate, fallocate,
 * copy_file_range and lseek over a file's extents on the tiers, placing
 * new extents by the file's policy (placement.h), plus the one extent
 * move the migrator and ctl ask for.  Not here: deciding what to move
 * (migrate.h), where extents live (extent_map.h), the tiers (tier.h).
 *
 * Locking: these functions take the inode's i_dlock themselves --
 * shared to read, exclusive to change extents or i_size (i_lock too for
 * i_size) -- unless the comment says the caller holds it.  No data
 * function takes ns_lock while it holds i_dlock.
 *
 * Ownership: buffers are the caller's; data_read_begin() lends the
 * tier's memory until data_read_end().  Return: a byte count or 0 on
 * success, -errno on failure: -ENOSPC when every tier the policy allows
 * is full, -EIO for a checksum mismatch or a lost range, a tier's
 * -errno otherwise.  A failed write leaves the data already stored as
 * it was.
 */
#ifndef TIERFS_DATA_H
#define TIERFS_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"

struct iovec;
struct tierfs;
struct tfs_inode;

/* [start, end) of a file (struct tfs_inode's i_lost) */
struct byte_range {
	uint64_t start, end;
};

ssize_t data_read(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		  size_t len, uint64_t off);
ssize_t data_write(struct tierfs *fs, struct tfs_inode *inode,
		   const char *buf, size_t len, uint64_t off);
/**
 * data_read_begin() - gather a read of @len bytes at @off into @iov
 * without copying where a tier lends its memory (RAM): the pieces point
 * into the tier, or into @buf (at the same offsets as the file range)
 * for holes and for tiers that must be read into memory.
 * On success the inode's data lock stays held (shared) so that nothing
 * frees or rewrites those bytes; the caller sends the reply, then calls
 * data_read_end().  The total length is what the iovecs add up to.
 * Return: 0 and *ret_niov; -E2BIG when more than @maxiov pieces would be
 * needed (use data_read()); or a tier's -errno.  No lock held on failure.
 */
int data_read_begin(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		    size_t len, uint64_t off, struct iovec *iov,
		    unsigned maxiov, unsigned *ret_niov);
void data_read_end(struct tfs_inode *inode);
int data_truncate(struct tierfs *fs, struct tfs_inode *inode,
		  uint64_t size);
int data_fallocate(struct tierfs *fs, struct tfs_inode *inode, int mode,
		   uint64_t off, uint64_t len);
ssize_t data_copy(struct tierfs *fs, struct tfs_inode *in, uint64_t off_in,
		  struct tfs_inode *out, uint64_t off_out, size_t len);
int data_lseek(struct tierfs *fs, struct tfs_inode *inode, uint64_t off,
	       int whence, uint64_t *ret_off);
/* Bytes held on each tier by @inode; caller holds i_dlock shared. */
void data_layout(struct tierfs *fs, struct tfs_inode *inode,
		 uint64_t bytes[TIER_MAX_CONF]);
/**
 * data_migrate_extent() - move extent @idx of @inode from tier @src (at
 * @src_slot) to tier @dst: copy under the shared data lock (checksums
 * verified), write the copy unlocked, then switch under the exclusive
 * lock only if no writer touched the extent meanwhile.  Foreground
 * writers wait at most for one extent's read; readers never wait.
 * The caller pins @inode.
 * Return: 0; -EAGAIN when the extent changed or moved (try later);
 * -ENOSPC when @dst is full; -EIO (checksum or device) or another -errno.
 */
int data_migrate_extent(struct tierfs *fs, struct tfs_inode *inode,
			uint64_t idx, unsigned src, uint32_t src_slot,
			unsigned dst);
/**
 * data_mark_lost() - remember that [@off, @off+@len) of @inode was not
 * stored (a writeback the kernel sent failed; the program's write(2) had
 * succeeded long before).  The kernel may still hold those bytes in its
 * page cache and serve them; once it has dropped them, a read that
 * reaches the daemon fails with EIO instead of returning zeros or older
 * data.  Writing the range again, truncating it away or punching it
 * forgets it.  At most LOST_RANGES_MAX ranges are kept; past that they
 * are merged into one, which may cover bytes that were stored (EIO for
 * those too: never wrong data).  Takes i_dlock exclusive.
 * Return: 0, or -ENOMEM (nothing recorded).
 */
int data_mark_lost(struct tierfs *fs, struct tfs_inode *inode, uint64_t off,
		   uint64_t len);
/* Give every extent's slot back; for inode_free(). */
void data_release(struct tierfs *fs, struct tfs_inode *inode);
/* st_blocks (512-byte units) of @inode. */
uint64_t data_blocks(struct tierfs *fs, struct tfs_inode *inode);

#endif /* TIERFS_DATA_H */
