/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tierfs.h -- the daemon's core objects: the mount (struct tierfs), its
 * inodes, directory entries and extended attributes, and the functions
 * the FUSE handlers in ops.c call.  Everything below ops.c returns 0 (or a
 * count) on success and -errno on failure, and never calls fuse_reply_*.
 *
 * Lock order (outermost first):
 *
 *   fs->ns_lock  ->  inode->i_dlock  ->  inode->i_lock  ->  fs->itab_lock
 *                ->  tier->alloc_lock
 *
 * - fs->ns_lock (rwlock) guards the namespace: every directory's entries,
 *   every dir's d_parent, and the link between names and inodes.  Lookup
 *   and readdir take it shared; create, link, unlink, rename take it
 *   exclusive.  Data I/O never takes it, so files are read and written in
 *   parallel.
 * - inode->i_dlock (rwlock) guards a regular file's extent map and data;
 *   reads take it shared, writes/truncate/fallocate exclusive.
 * - inode->i_lock (mutex) guards attributes (mode, uid, gid, times, rdev)
 *   and xattrs.  i_size is written with i_dlock exclusive *and* i_lock
 *   held, so either lock alone is enough to read it.
 * - fs->itab_lock (mutex) guards the list of live inodes and every
 *   inode's lifetime counts (i_nlink, i_nlookup, i_nref).  An inode is
 *   freed by whoever drops the last of them to zero, under this lock, so
 *   exactly one thread frees it.
 * - Never hold any of these while calling fuse_reply_*(): the reply may
 *   be the kernel's last reference (passthrough_hp's rule).
 */
#ifndef TIERFS_TIERFS_H
#define TIERFS_TIERFS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "extent_map.h"
#include "options.h"
#include "policy.h"

struct tier;

/* Largest request we ask the kernel for (max_write, readahead). */
#define TIERFS_MAX_IO (1u << 20)

typedef uint64_t tierfs_ino_t;

struct tfs_inode;

/* One name in a directory.  All fields: fs->ns_lock. */
struct dentry {
	struct dentry *d_hnext;	   /* hash chain */
	struct tfs_inode *d_inode; /* holds one i_nlink */
	uint64_t d_cookie;	   /* readdir offset; grows, never reused */
	uint32_t d_hash;
	bool d_dead;		   /* removed; freed at the next compaction */
	uint16_t d_namelen;
	char d_name[];
};

/*
 * A directory's entries: a hash table for lookup, plus an array in cookie
 * order for readdir, which resumes with a binary search for the first
 * cookie after the offset the kernel gives back.  Removing an entry marks
 * it dead in the array (the hash drops it at once); dead entries are
 * compacted away once they outnumber the live ones, so a listing under
 * way sees every entry that lived throughout exactly once, whatever is
 * added or removed meanwhile.  All fields: fs->ns_lock.
 */
struct tfs_dir {
	struct dentry **d_htab; /* d_hsize buckets */
	uint32_t d_hsize;	/* power of two */
	uint32_t d_nlive;	/* live entries */
	struct dentry **d_order; /* cookie order, live and dead */
	uint32_t d_norder;
	uint32_t d_ndead;
	uint32_t d_cap;
	uint64_t d_next_cookie;
	struct tfs_inode *d_parent; /* ".."; the root for the root and for
				     * a removed directory */
	struct dentry *d_self;	    /* our name in d_parent; NULL once
				     * removed (for paths in messages) */
};

/* [start, end) of a file */
struct byte_range {
	uint64_t start, end;
};

struct xattr {
	char *name;
	void *value;
	size_t size;
};

struct tfs_inode {
	/* Immutable after inode_new(). */
	tierfs_ino_t i_ino;  /* st_ino; never reused within a mount */
	mode_t i_type;	     /* S_IFMT bits */

	pthread_mutex_t i_lock; /* protects the attribute block below */
	mode_t i_mode;		/* i_lock; permission bits incl. suid/sgid/sticky */
	uid_t i_uid;		/* i_lock */
	gid_t i_gid;		/* i_lock */
	dev_t i_rdev;		/* i_lock */
	struct timespec i_atime, i_mtime, i_ctime; /* i_lock */
	struct xattr *i_xattrs; /* i_lock */
	uint32_t i_nxattrs;	/* i_lock */
	struct ipolicy *i_pol;	/* i_lock; own policy attributes, or NULL */
	uint64_t i_pol_gen;	/* i_lock; fs->policy_gen of i_eff */
	struct policy i_eff;	/* i_lock; cached effective policy */

	/*
	 * fs->ns_lock; non-directories: the directory of each of the
	 * inode's names, one entry per name, latest last.  The latest one
	 * governs the policy; none (an unlinked file) means the root's.
	 */
	struct tfs_inode **i_parents;
	uint32_t i_nparents, i_cparents;

	pthread_rwlock_t i_dlock; /* protects i_map and file data */
	uint64_t i_size;	  /* i_dlock exclusive + i_lock to write */
	uint32_t i_wgen;	  /* i_dlock exclusive; see struct extent */
	/*
	 * i_dlock; byte ranges whose writeback failed (data_mark_lost()):
	 * sorted, disjoint, not touching.  Reading them fails with EIO
	 * until they are written again, truncated away or punched.
	 */
	struct byte_range *i_lost;
	uint32_t i_nlost;

	/* Lifetime, all fs->itab_lock (i_nlink read racily by getattr). */
	uint32_t i_nlink;
	uint64_t i_nlookup; /* kernel references (lookup minus forget) */
	uint32_t i_nref;    /* internal pins (inode_pin/inode_unpin) */
	struct tfs_inode *i_prev, *i_next; /* fs->inodes list */

	union {
		struct extent_map i_map; /* S_IFREG; i_dlock */
		struct tfs_dir i_dir;	 /* S_IFDIR; fs->ns_lock */
		char *i_link;		 /* S_IFLNK; immutable */
	};
};

struct tierfs {
	/* Immutable after tierfs_create(). */
	struct tierfs_options opt;
	struct tier *tiers[TIER_MAX_CONF];
	unsigned ntiers;
	uint32_t extent_size;
	unsigned extent_shift;
	struct tfs_inode *root;
	struct timespec start;	   /* CLOCK_MONOTONIC at mount; for ticks */
	uint32_t half_life_ticks;  /* heat half-life */
	struct migrator *mig;	   /* NULL when migration is off */

	/*
	 * Bumped (relaxed atomic) by every change that can alter some
	 * inode's effective policy: a policy attribute set or removed, a
	 * rename, link or unlink.  Cached policies older than it are
	 * resolved again; cheap, because those changes are rare.
	 */
	uint64_t policy_gen;
	uint32_t draining;	/* relaxed atomic; bit per tier taking no data */
	struct tier_names names; /* immutable; tier names for policies */

	/* last time each tier's failure was logged (relaxed atomic) */
	int64_t tier_warned[TIER_MAX_CONF];

	/*
	 * Kernel features (kernel.c).  kern_* and the two flags after them
	 * are written while INIT is processed, before the kernel sends any
	 * other request, and are read-only afterwards.
	 */
	uint64_t kern_offered;	   /* capability flags INIT offered */
	uint64_t kern_added;	   /* flags we added to the INIT reply */
	uint64_t kern_init_unique; /* the INIT request, until its reply */
	bool kern_init_pending;
	bool killpriv_v2;	   /* we clear suid/sgid on write, truncate,
				    * chown (the kernel accepted it) */
	bool writeback;		   /* the kernel's writeback cache is on */
	uint64_t dirty_max;	   /* immutable; the dirty limit asked for */
	uint64_t dirty_reserve;	   /* relaxed atomic; the limit in force */
	uint64_t wb_errors;	   /* relaxed atomic; failed writebacks */
	pthread_t bdi_thread;	   /* kernel_init() to kernel_stop() */
	bool bdi_thread_live;

	pthread_rwlock_t ns_lock; /* see the lock order above */

	pthread_mutex_t itab_lock; /* list of inodes and lifetime counts */
	struct tfs_inode inodes;   /* list head (only i_prev/i_next used) */
	uint64_t ninodes;	   /* itab_lock */
	uint64_t next_ino;	   /* itab_lock */
};

/* Heat ticks (tenths of a second) since the mount; see heat.h. */
uint32_t tierfs_tick(const struct tierfs *fs);

/* fs.c */
int tierfs_create(const struct tierfs_options *opt, struct tierfs **ret_fs);
struct tierfs *tierfs_free(struct tierfs *fs);
void tierfs_statfs(struct tierfs *fs, struct statvfs *st);
/**
 * tierfs_stats_text() - the counters as text, one record a line:
 *   "tier NAME kind=.. path=.. size=.. used=.. free=.. extents=.. ..."
 *   "migrator enabled=.. passes=.. moved=.. ..."
 *   "mount extent_size=.. inodes=.."
 * (README "Counters" documents every field.)  On success *ret_text is
 * the caller's to free().  Return: its length, or -ENOMEM.
 */
ssize_t tierfs_stats_text(struct tierfs *fs, char **ret_text);

/* inode.c */
struct tfs_inode *inode_new(struct tierfs *fs, mode_t mode, uid_t uid,
			    gid_t gid, dev_t rdev);
void inode_free(struct tierfs *fs, struct tfs_inode *inode);
/* Count one more kernel lookup (called with ns_lock held). */
void inode_lookup_ref(struct tierfs *fs, struct tfs_inode *inode);
void inode_forget(struct tierfs *fs, struct tfs_inode *inode, uint64_t n);
void inode_link_inc(struct tierfs *fs, struct tfs_inode *inode);
/* The directories of a non-directory's names; all with ns_lock held
 * exclusive (inode_parent(): shared is enough). */
int inode_parent_add(struct tfs_inode *inode, struct tfs_inode *dir);
void inode_parent_del(struct tfs_inode *inode, struct tfs_inode *dir);
void inode_parent_move(struct tfs_inode *inode, struct tfs_inode *from,
		       struct tfs_inode *to);
/* The directory whose policy @inode follows (NULL: the root's). */
struct tfs_inode *inode_parent(const struct tfs_inode *inode);
/* No name and no kernel reference: only internal pins hold @inode (a
 * removed file that no one has open).  Takes itab_lock. */
bool inode_is_orphan(struct tierfs *fs, struct tfs_inode *inode);
/* Internal pins: keep @inode alive while the migrator works on it. */
void inode_pin(struct tierfs *fs, struct tfs_inode *inode);
void inode_unpin(struct tierfs *fs, struct tfs_inode *inode);
/* Drop @n links; frees the inode when nothing references it any more.
 * Called with ns_lock held exclusive. */
void inode_link_drop(struct tierfs *fs, struct tfs_inode *inode,
		     uint32_t n);
void inode_fill_stat(struct tierfs *fs, struct tfs_inode *inode,
		     struct stat *st);
void inode_touch(struct tfs_inode *inode, bool m, bool c);
struct timespec now_ts(void);

/* placement.c */
/* Get @inode's effective policy (cached; resolved when stale).  Takes
 * ns_lock shared and i_locks: call with no lock held. */
void policy_get(struct tierfs *fs, struct tfs_inode *inode,
		struct policy *ret);
static inline void policy_changed(struct tierfs *fs)
{
	__atomic_add_fetch(&fs->policy_gen, 1, __ATOMIC_RELAXED);
}
/* statfs restricted to the tiers @inode's policy allows. */
void placement_statfs(struct tierfs *fs, struct tfs_inode *inode,
		      struct statvfs *st);
/* The path of directory @dir from the mount root ("/job42"); NULL on
 * ENOMEM.  Called with ns_lock held.  Caller frees. */
char *dir_path(struct tierfs *fs, struct tfs_inode *dir);
/* A path of @inode for messages ("/job42/Gau-1.rwf"), or NULL on ENOMEM.
 * Takes ns_lock shared: call with no lock held.  Caller frees. */
char *inode_path(struct tierfs *fs, struct tfs_inode *inode);

/* ctl.c -- the control channel's computed attributes and actions */
ssize_t ctl_effective_text(struct tierfs *fs, struct tfs_inode *inode,
			   char **ret_text);
int ctl_dir_layout(struct tierfs *fs, struct tfs_inode *dir,
		   uint64_t bytes[TIER_MAX_CONF]);
ssize_t ctl_verify_text(struct tierfs *fs, struct tfs_inode *inode,
			char **ret_text);
int ctl_migrate(struct tierfs *fs, struct tfs_inode *inode,
		const char *value, size_t len);
int ctl_drain(struct tierfs *fs, const char *value, size_t len);

/* dir.c -- all called with fs->ns_lock held (shared for find/iterate) */
int dir_init(struct tfs_dir *d, struct tfs_inode *parent);
void dir_release(struct tfs_dir *d);
struct dentry *dir_find(const struct tfs_dir *d, const char *name);
int dir_add(struct tfs_dir *d, const char *name, struct tfs_inode *inode);
/* Remove @name's entry; returns its inode, or NULL if absent. */
struct tfs_inode *dir_remove(struct tfs_dir *d, const char *name);
/* Point an existing entry at another inode (rename exchange/replace). */
void dir_set_inode(struct dentry *de, struct tfs_inode *inode);
static inline bool dir_is_empty(const struct tfs_dir *d)
{
	return d->d_nlive == 0;
}
/* First live entry with cookie > @cookie, or NULL. */
struct dentry *dir_next(const struct tfs_dir *d, uint64_t cookie);

/* data.c -- regular file data */
ssize_t data_read(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		  size_t len, uint64_t off);
ssize_t data_write(struct tierfs *fs, struct tfs_inode *inode,
		   const char *buf, size_t len, uint64_t off);
struct iovec;
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
uint64_t data_blocks(struct tierfs *fs, struct tfs_inode *inode);

/* xattr.c */
/* @uid: the caller's, for the owner-or-root rule of user.tierfs.* */
int xattr_set(struct tierfs *fs, struct tfs_inode *inode, const char *name,
	      const void *value, size_t size, int flags, uid_t uid);
/* Copies the value into @buf (if @size > 0) and returns its length. */
ssize_t xattr_get(struct tierfs *fs, struct tfs_inode *inode,
		  const char *name, void *buf, size_t size);
ssize_t xattr_list(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		   size_t size);
int xattr_remove(struct tierfs *fs, struct tfs_inode *inode,
		 const char *name, uid_t uid);
void xattr_release(struct tfs_inode *inode);
/* Remove the stored attribute @name if there is one; true if it was.
 * Called with i_lock held (no policy keys: those need xattr_remove()). */
bool xattr_drop_locked(struct tfs_inode *inode, const char *name);

#endif /* TIERFS_TIERFS_H */
