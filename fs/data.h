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

/* [start, end) of a file that a writeback failed to store, and the
 * number (fs->wb_seq) of the failure that lost it last */
struct byte_range {
	uint64_t start, end;
	uint64_t seq;
};

/*
 * Writeback errors (data_lost.c): a regular file's failed writebacks,
 * made at the first one (inode->i_wb), freed with the inode.  All
 * fields: the inode's i_dlock.
 */
struct wb_state {
	struct byte_range *lost; /* sorted, disjoint, not touching */
	uint32_t nlost, caplost;
	bool squeezed;	     /* more than LOST_RANGES_MAX were merged */
	uint64_t ino;	     /* the inode's number, for the log */
	int err;	     /* -errno of the latest failure */
	uint64_t seq;	     /* its number, from fs->wb_seq */
	uint64_t reported;   /* the latest number an fsync or close got */
	uint32_t fails;	     /* failed writebacks since the last report */
	uint64_t fail_bytes; /* bytes they did not store */
};

/* What data_wb_check() says of the episode it ended (fails 0: none). */
struct wb_episode {
	int err;
	uint32_t fails;
	uint64_t bytes;
};

ssize_t data_read(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		  size_t len, uint64_t off);
ssize_t data_write(struct tierfs *fs, struct tfs_inode *inode,
		   const char *buf, size_t len, uint64_t off);
/*
 * Where a write's bytes come from (data_write_src(), data_writeback_src()):
 * @mem, or when @mem is NULL the pipe @fd, which holds exactly the
 * write's bytes (a WRITE spliced from /dev/fuse, kernel.c).  A pipe is
 * read once, in order: straight into tier memory where the tier lends it
 * (tier_write_fd(), one copy per byte), else into a per-thread bounce
 * buffer first.  After the call the pipe is empty -- what the write did
 * not store is read and dropped -- unless @broken: a read from it
 * failed, its contents are unknown, and the caller must not reuse it.
 * The other fields are data.c's.
 */
struct data_src {
	const char *mem;
	int fd;
	bool broken;
	size_t next;	    /* bytes taken from @fd so far */
	size_t cur_at;	    /* the piece the bounce buffer holds, or SIZE_MAX */
	const char *bounce; /* that buffer */
};
#define DATA_SRC_MEM(p) ((struct data_src){ .mem = (p), .fd = -1, .cur_at = SIZE_MAX })
#define DATA_SRC_PIPE(f) ((struct data_src){ .fd = (f), .cur_at = SIZE_MAX })
/* data_write() and data_writeback() of the bytes @src gives. */
ssize_t data_write_src(struct tierfs *fs, struct tfs_inode *inode,
		       struct data_src *src, size_t len, uint64_t off);
int data_writeback_src(struct tierfs *fs, struct tfs_inode *inode,
		       struct data_src *src, size_t len, uint64_t off,
		       uint64_t *ret_lost, bool *ret_first);
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
/*
 * data_lock() - take @inode's data lock (@excl: exclusively) for a
 * request: a wait longer than the tier timeout while a tier of the
 * mount is stalled gives up (issue 32; data.c says why).
 * Return: 0 (locked: unlock with pthread_rwlock_unlock()), or -EIO.
 */
int data_lock(struct tierfs *fs, struct tfs_inode *inode, bool excl);

/* Bytes held on each tier by @inode: its counters (inode_tier_bytes()),
 * read without a lock, so that no layout waits for a writer (issue 32). */
void data_layout(struct tierfs *fs, struct tfs_inode *inode,
		 uint64_t bytes[TIER_MAX_CONF]);
/*
 * data_move_batch_begin(), data_move_batch_end() - the calling thread's
 * moves in between off a draining tier give their source slots back
 * together, runs of
 * consecutive slots in one discard, at most 1 MiB held (and 256 slots)
 * behind at any time; _end() gives back the rest.  For the migrator's
 * pass.  Does not nest; the batch is the thread's.
 */
void data_move_batch_begin(struct tierfs *fs);
void data_move_batch_end(void);
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
 * data_writeback() - store a write that the kernel's writeback sent
 * (the program's write(2) returned long ago): every byte that can be
 * stored is, wherever it lies in the request -- in-place overwrites of
 * units the file holds need no room and always land -- and what cannot
 * be (no room on any allowed tier, a quota, a failing tier) is recorded
 * as lost: once the kernel has dropped its copy, a read of those bytes
 * fails with EIO, never zeros or older data, until they are written
 * again, truncated away or punched.  The failure is also recorded for
 * data_wb_check().  Takes i_dlock exclusive.
 * Return: 0 when all of it was stored, else the -errno of the first
 * failure (-ENOSPC, -EDQUOT, -EIO, -EFBIG...), with *ret_lost = bytes
 * not stored, *ret_first = true when this failure opens an episode
 * (the file had no unreported failure: log it) and *ret_seq = its
 * number.
 */
int data_writeback(struct tierfs *fs, struct tfs_inode *inode,
		   const char *buf, size_t len, uint64_t off,
		   uint64_t *ret_lost, bool *ret_first);
/*
 * data_wb_sample() - the "seen up to" number an open file starts with:
 * the latest failure's, or the one before when nobody was told of the
 * latest yet (then this file gets it too, as with the kernel's errseq).
 * Takes i_dlock shared when the file ever failed a writeback.
 */
uint64_t data_wb_sample(struct tfs_inode *inode);
/*
 * data_wb_check() - the error an open file whose "seen up to" number
 * is *@seen (a relaxed atomic of the caller's) should get now: the
 * latest failure's -errno, once, advancing *@seen; 0 when there is
 * none.  @consume (fsync, close) also marks the failure reported,
 * which ends its episode: *@ret_ep (may be NULL) then says how many
 * writebacks and bytes it lost, for the log.  Takes i_dlock exclusive
 * when the file ever failed a writeback; cheap otherwise.
 */
int data_wb_check(struct tfs_inode *inode, uint64_t *seen, bool consume,
		  struct wb_episode *ret_ep);
/* Give every extent's slot back; for inode_free(). */
void data_release(struct tierfs *fs, struct tfs_inode *inode);
/* st_blocks (512-byte units) of @inode. */
uint64_t data_blocks(struct tierfs *fs, struct tfs_inode *inode);

#endif /* TIERFS_DATA_H */
