/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * native.h -- native files (issue 33): a regular file that lives whole
 * on one tier keeps its bytes in a backing file of its own there, at
 * the file's own offsets, and every open of it hands the kernel that
 * backing file (FUSE passthrough, kernel.h): reads, writes, splice and
 * mmap of it never reach the daemon, and move at the tier's own speed.
 *
 * A file is native or tiered for its whole life on one tier; tiered
 * files keep their bytes in extents (data.h), as before.  Which files are
 * native: on a mount whose INIT took passthrough (fs->passthrough;
 * --io native), a new regular file whose policy allows it (io=native,
 * the default; no split), made on the first tier of its policy's order
 * that holds native files (tier_can_native(): RAM and file tiers; not
 * PMem) and has room for NATIVE_HEADROOM or a sixteenth of its size,
 * whichever is smaller.  It is decided when the file is made: a tiered
 * file stays tiered (an empty one too: it would need a count of its
 * opens that no inode keeps).  Every open of a native file is a
 * passthrough open: the kernel wants all opens of one inode in one mode
 * while any is open.
 *
 * What a native file gives up, and what takes its place (fs/README.md,
 * "Native files"): while it is open the daemon sees none of its reads
 * and writes, so
 *   - space: its tier's size bounds it (the RAM tier's own tmpfs: ENOSPC
 *     in the writer's write(2)); on a file tier the filesystem under it
 *     does, and the tier counts what it holds at each getattr, truncate,
 *     fallocate and close (native_sync());
 *   - spill: it grows on its tier only; no extent goes to the next tier
 *     when that one is full;
 *   - quota: a new file under a quota stays tiered, so that its write(2)
 *     gets EDQUOT; a native file that comes under one (a quota set on a
 *     directory above it) is charged at those same points, whatever the
 *     limit, and cannot be opened for writing once the quota is at its
 *     total (EDQUOT), but an open may write past it;
 *   - heat: from its opens (each counts as an access of the whole file);
 *   - checksums: none while native; the kernel reads it as written;
 *   - suid/sgid: cleared when a caller other than root opens it for
 *     writing (the kernel's passthrough write does not clear them);
 *   - times: the backing file's mtime, ctime and atime, which the
 *     kernel's writes and reads set.
 * The migrator moves a closed native file whole; one open waits for it
 * (and a move of it waits for its last close).
 *
 * Locking: a native file's state (struct native) is guarded by the
 * inode's i_dlock, exclusive to change (its descriptor, tier, opens,
 * what was accounted), shared to use the descriptor.  i_size, i_bytes
 * and the times of a native file change with i_dlock exclusive and
 * i_lock, as a tiered file's.  No lock is held across a copy of data.
 *
 * Return conventions: 0 or -errno; nothing here logs but the first
 * failure of each kind (a tier that cannot hold native files).
 */
#ifndef TIERFS_NATIVE_H
#define TIERFS_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "policy.h" /* TIER_MAX_CONF */

struct policy;
struct strbuf;
struct tierfs;
struct tfs_inode;

/* The room a tier must have for a new native file (see above). */
#define NATIVE_HEADROOM (UINT64_C(1) << 30)

/* A native file's state; i_dlock (see above). */
struct native {
	int fd;		     /* its backing file; the daemon's for its life */
	uint8_t tier;	     /* the tier that holds it */
	int backing_id;	     /* the kernel's name of it while opened: > 0 */
	uint32_t nopen;	     /* passthrough opens now */
	uint64_t held;	     /* bytes its tier and quota were told it holds */
	uint64_t opens;	     /* opens so far (heat: relaxed atomic) */
	uint64_t last_open;  /* number of its last open (relaxed atomic) */
	bool move_wanted;    /* a move waits for its last close */
	uint8_t move_to;     /* ... to this tier */
	/* every native file, for native_demote(): native.c's list lock */
	struct tfs_inode *inode;
	struct native *prev, *next;
};

/* @inode's native state, or NULL for a tiered file (or not a file). */
struct native *native_of(const struct tfs_inode *inode);

/*
 * native_make() - make the regular file @inode, just made by create or
 * mknod, native, if the mount, its policy @pol and a tier allow it (see
 * above) and nobody but its creator knows it yet (inode_adopt_native():
 * a file that another process looked up in between stays tiered, so
 * that no two opens of it differ in mode).  No lock held; takes i_dlock.
 * Return: 0 (native now), -EAGAIN (it stays tiered: not allowed, no
 * tier has room, or known to another), or -errno (no memory).
 */
int native_make(struct tierfs *fs, struct tfs_inode *inode,
		const struct policy *pol);

/*
 * native_open() - an open of native @inode with open(2) @flags by
 * @uid: register its backing file with the kernel at the first, count
 * it.  A caller other than root opening for writing clears suid/sgid
 * (see above).  Takes i_dlock.
 * Return: the backing id to name in the reply (> 0), -EDQUOT (opened
 * for writing below a quota at its total), or -errno.
 */
int native_open(struct tierfs *fs, struct tfs_inode *inode, int flags,
		uint32_t uid);
/* The open is gone (release, or its reply could not be sent): at the
 * last, the kernel's backing file goes, and the file is accounted. */
void native_release(struct tierfs *fs, struct tfs_inode *inode);

/*
 * native_sync() - take in what the kernel did to native @inode behind
 * the daemon's back: its size, blocks and times into the inode, and
 * the blocks it gained or lost into the tier and the quota.  Takes
 * i_dlock (and i_lock).  Quiet on failure (the inode keeps what it had).
 */
void native_sync(struct tierfs *fs, struct tfs_inode *inode);

/* fs->stat_native (fs.h): @st takes the size, blocks, atime, mtime and
 * (if later) ctime of native @inode's backing file now.  i_lock held;
 * quiet on failure (@st keeps the inode's). */
void native_fill_stat(struct tfs_inode *inode, struct stat *st);

/* Times were set on native @inode (utimensat, or by a setattr that
 * sets them): its backing file takes its atime and mtime, which
 * native_sync() reads back.  Takes i_dlock and i_lock. */
void native_set_times(struct tierfs *fs, struct tfs_inode *inode);

/* The daemon's own operations on a native file: as the data.h ones of
 * the same names, on its backing file (the caller dispatches to them
 * when native_of()).  Each takes i_dlock and accounts. */
ssize_t native_read(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		    size_t len, uint64_t off);
ssize_t native_write(struct tierfs *fs, struct tfs_inode *inode,
		     const char *buf, size_t len, uint64_t off);
int native_truncate(struct tierfs *fs, struct tfs_inode *inode,
		    uint64_t size);
int native_fallocate(struct tierfs *fs, struct tfs_inode *inode, int mode,
		     uint64_t off, uint64_t len);
int native_lseek(struct tierfs *fs, struct tfs_inode *inode, uint64_t off,
		 int whence, uint64_t *ret_off);
/* Copy @len bytes between two native files' backing files
 * (copy_file_range(2) there).  Return: bytes copied, or -errno. */
ssize_t native_copy(struct tierfs *fs, struct tfs_inode *in, uint64_t off_in,
		    struct tfs_inode *out, uint64_t off_out, size_t len);

/* Bytes held on each tier by native @inode (fresh: it syncs). */
void native_layout(struct tierfs *fs, struct tfs_inode *inode,
		   uint64_t bytes[TIER_MAX_CONF]);
/* Its data ranges, "START LENGTH TIER" lines as user.tierfs.extents
 * gives them, from byte @from, at most @max bytes of text; *ret_next
 * the offset to go on from, UINT64_MAX at the end. */
int native_extents(struct tierfs *fs, struct tfs_inode *inode, uint64_t from,
		   size_t max, struct strbuf *out, uint64_t *ret_next);

/*
 * native_move() - move closed native @inode whole to tier @dst (a copy
 * into a new backing file there, then the switch): for the migrator and
 * tierctl migrate.  While it is open, -EBUSY, and the move is noted: it
 * happens at its last close (native_release()).
 * Return: 0, -EBUSY, -ENOSPC (@dst has no room), or -errno.
 */
int native_move(struct tierfs *fs, struct tfs_inode *inode, unsigned dst);

/*
 * native_demote() - for the migrator: move closed native files off tier
 * @t, those opened longest ago first, until @bytes moved or none is
 * left.  Each goes whole to @pick(@fs, the inode, @t, its bytes) (the
 * tier to move it to, or -1: none its policy allows has room), after @throttle(@fs, its bytes) (the
 * mount's bandwidth limit); @moved(@fs, @t, dst, bytes) is told of each
 * move.  No lock held.
 * Return: the bytes moved.
 */
uint64_t native_demote(struct tierfs *fs, unsigned t, uint64_t bytes,
		       int (*pick)(struct tierfs *, struct tfs_inode *,
				   unsigned, uint64_t),
		       void (*throttle)(struct tierfs *, uint64_t),
		       void (*moved)(struct tierfs *, unsigned, unsigned,
				     uint64_t));

/* Free what native @inode holds (the inode is being freed). */
void native_free(struct tierfs *fs, struct tfs_inode *inode);

/* Counters for the stats (relaxed atomics). */
struct native_stats {
	uint64_t files;	   /* native files now */
	uint64_t opens;	   /* passthrough opens so far */
	uint64_t open_now; /* of those, open now */
	uint64_t moves;	   /* native files moved whole */
	uint64_t refused;  /* new files that stayed tiered for want of room */
};
void native_get_stats(struct native_stats *ret);

#endif /* TIERFS_NATIVE_H */
