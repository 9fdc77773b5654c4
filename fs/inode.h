/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inode.h -- struct tfs_inode and its lifetime: creation, the three
 * counts that keep an inode alive, the directories of a file's names,
 * timestamps and stat.  Not here: names (namespace.h, dir.h), file data
 * (data.h), extended attributes (xattr.h), the mount (fs.h).
 *
 * Lifetime: an inode lives while it has a name (i_nlink), the kernel
 * knows it (i_nlookup) or an internal user pins it (i_nref).  All three
 * change under fs->itab_lock, and the thread that brings the last one to
 * zero unlinks the inode from the table there and frees it after
 * dropping the lock, so exactly one thread frees it and nobody can find
 * it in between.  Freeing releases the contents through data.h, dir.h
 * and xattr.h: the one place where inode.c calls up into those modules.
 *
 * Locking (the order is in fs.h): each field says which lock guards it.
 * - i_lock (mutex): attributes (mode, ids, times, rdev), xattrs, the
 *   cached policy.
 * - i_dlock (rwlock): a regular file's extent map and data; i_size is
 *   written with i_dlock exclusive *and* i_lock held, so either lock
 *   alone is enough to read it.
 * - fs->itab_lock: the lifetime counts and the list of live inodes.
 * - fs->ns_lock: the directory of each name (i_parents), and i_dir.
 *
 * Inode units: --max-inodes bounds the daemon's metadata, not only its
 * inodes.  Each inode takes one unit (inode_new()), each name of a
 * non-directory beyond the first one more (link(2), as tmpfs charges
 * every link to nr_inodes), and a symlink one more for each whole
 * INODE_UNIT_LINK_BYTES of its target -- on each of these, since a
 * name of a symlink costs inode_units() (inode_charge() and
 * inode_uncharge(), called by namespace.c).  fs->ninodes is the sum;
 * the default limit (options.h DEFAULT_MEM_PER_INODE) assumes an
 * inode with its name costs about 390 bytes, and a unit costs at most
 * about that: a link with a 255-byte name about 320, a 4095-byte
 * target 4.4 KB for 16 units.  An inode gives back its last name's
 * units when it is freed (a removed file that is still open keeps
 * them), the others when those names go.
 *
 * Return: inode_new() returns NULL with errno ENOSPC (the mount has
 * --max-inodes units) or ENOMEM; inode_charge() 0 or -ENOSPC;
 * inode_parent_add() 0 or -ENOMEM; the rest cannot fail.
 */
#ifndef TIERFS_INODE_H
#define TIERFS_INODE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h> /* S_IF* for i_type */
#include <sys/types.h>
#include <time.h>

#include "dir.h"
#include "extent_map.h"
#include "policy.h"

struct tierfs;
struct xattr;
struct wb_state;
struct native;
struct quota;

typedef uint64_t tierfs_ino_t;

/* A resolved effective policy (placement.c: policy_get()). */
struct policy_cache {
	uint64_t gen; /* fs->policy_gen + 1 when resolved */
	struct policy pol;
};

/*
 * A timestamp in 12 bytes: a struct timespec takes 16, and three of them
 * are in every inode.  tfs_time_get() and tfs_time_set() convert.
 */
struct tfs_time {
	int64_t sec;
	uint32_t nsec;
} __attribute__((packed, aligned(4)));

static inline struct timespec tfs_time_get(const struct tfs_time *t)
{
	return (struct timespec){ .tv_sec = t->sec, .tv_nsec = t->nsec };
}

static inline void tfs_time_set(struct tfs_time *t, struct timespec ts)
{
	t->sec = ts.tv_sec;
	t->nsec = (uint32_t)ts.tv_nsec;
}

/*
 * Field order packs the struct without holes: 4-byte fields in pairs.
 * The union at the end is the only part that depends on the type, and
 * inode_new() allocates only as much of it as the type uses (a regular
 * file's extent map is 24 bytes, a directory 64): see inode_size().
 * Nothing may copy or embed a struct tfs_inode whole (fs->inodes, the
 * list head, is a full one and uses only i_prev/i_next).
 */
struct tfs_inode {
	/* Immutable after inode_new(). */
	tierfs_ino_t i_ino;  /* st_ino; never reused within a mount */
	mode_t i_type;	     /* S_IFMT bits */

	mode_t i_mode;		/* i_lock; permission bits incl. suid/sgid/sticky */
	pthread_mutex_t i_lock; /* protects the attribute block below */
	uid_t i_uid;		/* i_lock */
	gid_t i_gid;		/* i_lock */
	struct tfs_time i_atime, i_mtime, i_ctime; /* i_lock */
	uint32_t i_nxattrs;	/* i_lock */
	struct xattr *i_xattrs; /* i_lock */
	struct ipolicy *i_pol;	/* i_lock; own policy attributes, or NULL */
	/*
	 * i_lock; the cached effective policy and the fs->policy_gen (+ 1)
	 * it was resolved at, made by the first policy_get() (most inodes,
	 * empty files and directories, never need one: 200 bytes saved
	 * each), NULL until then or when there was no memory for it.
	 */
	struct policy_cache *i_effc;

	/*
	 * fs->ns_lock; non-directories: the directory of each of the
	 * inode's names, one entry per name, latest last.  The latest one
	 * governs the policy; none (an unlinked file) means the root's.
	 * One name (nearly every file) is kept in place, in i_parent;
	 * two or more in the array i_parents, whose capacity is the
	 * smallest power of two >= i_nparents.  Read with inode_parent_at().
	 */
	union {
		struct tfs_inode *i_parent;
		struct tfs_inode **i_parents;
	};

	/*
	 * Quota (quota.h): a directory's own node (ns_lock; once set, kept
	 * until the inode is freed), or the node a regular file is charged
	 * to (ns_lock exclusive and quota.c's quota_lock to write, with an
	 * atomic store: ns_lock or quota_lock reads it, and the data path's
	 * counters of the job report read it with inode_quota()).  One
	 * reference, dropped by quota_release().
	 */
	struct quota *i_quota;

	pthread_rwlock_t i_dlock; /* protects i_map and file data */
	uint64_t i_size;	  /* i_dlock exclusive + i_lock to write */
	/*
	 * Tier bytes the extents hold (tier_held(), to the allocation
	 * unit): st_blocks.  Written with i_dlock exclusive, as a relaxed
	 * atomic, so that getattr reads it without the data lock.
	 */
	uint64_t i_bytes;
	/*
	 * i_dlock; what the kernel's writeback failed to store (data.h,
	 * struct wb_state): NULL until a writeback of the file fails, then
	 * kept until the inode is freed (published with a release store, so
	 * a NULL test needs no lock).  Reading a lost range fails with EIO
	 * until it is written again, truncated away or punched.
	 */
	struct wb_state *i_wb;
	uint32_t i_wgen;	  /* i_dlock exclusive; see struct extent */

	/* Lifetime, all fs->itab_lock (i_nlink read racily by getattr). */
	uint32_t i_nlink;
	uint32_t i_nref;    /* internal pins (inode_pin/inode_unpin) */
	uint64_t i_nlookup; /* kernel references (lookup minus forget) */
	struct tfs_inode *i_prev, *i_next; /* fs->inodes list */
	uint32_t i_nparents; /* fs->ns_lock; of i_parent / i_parents */

	union {
		struct extent_map i_map; /* S_IFREG; i_dlock */
		struct tfs_dir i_dir;	 /* S_IFDIR; fs->ns_lock */
		char *i_link;		 /* S_IFLNK; immutable */
		dev_t i_rdev;		 /* S_IFCHR, S_IFBLK; immutable */
	};
};

/* A file's quota node for the data path's I/O counters (quota_io_*()),
 * which hold no lock that keeps it: a node a writer read just before a
 * quota set moved the file lives on (its directory is an ancestor of
 * the new node's), and counts what it was given. */
static inline struct quota *inode_quota(struct tfs_inode *inode)
{
	return __atomic_load_n(&inode->i_quota, __ATOMIC_ACQUIRE);
}

/*
 * A regular file's bytes on each tier, fs->ntiers counters after its
 * extent map and native state (inode_size()): what its extents hold there, as
 * charged where they take, give back and move space (quota.c, under
 * its quota_lock, whether a quota is set or not).  Relaxed atomics, so
 * that a layout reads them without the file's data lock, which a
 * writer stuck in a hung tier may hold for long (issue 32).
 */
static inline uint64_t *inode_tier_bytes(struct tfs_inode *inode)
{
	return (uint64_t *)((char *)inode + offsetof(struct tfs_inode, i_map) +
			    sizeof(struct extent_map) + sizeof(void *));
}

/*
 * A regular file's native state (native.h), between its extent map and
 * its bytes per tier: NULL for a tiered file.  Set once (NULL to a
 * struct, with a release store) and freed only with the inode, so that
 * a reader that loads it (acquire) may use it without a lock; what is in
 * it is native.h's to lock.
 */
static inline struct native **inode_native_slot(struct tfs_inode *inode)
{
	return (struct native **)((char *)inode +
				  offsetof(struct tfs_inode, i_map) +
				  sizeof(struct extent_map));
}

/* The directory part of @inode, or NULL if it is not a directory: what
 * dir_add(), dir_remove() and dir_set_inode() take as @sub. */
static inline struct tfs_dir *inode_sub(struct tfs_inode *inode)
{
	return inode->i_type == S_IFDIR ? &inode->i_dir : NULL;
}

/* Bytes of a symlink target that take one more inode unit (see above). */
#define INODE_UNIT_LINK_BYTES 256

/* Inode units of a symlink whose target is @len bytes long. */
static inline uint64_t inode_link_units(size_t len)
{
	return 1 + len / INODE_UNIT_LINK_BYTES;
}

/* Inode units of one name of @inode: 1, or inode_link_units() of a
 * symlink's target (i_link immutable; NULL while being made). */
uint64_t inode_units(const struct tfs_inode *inode);
/* Take @n more inode units of the mount: 0, or -ENOSPC past
 * --max-inodes (nothing taken).  Atomic: no lock needed. */
int inode_charge(struct tierfs *fs, uint64_t n);
/* Give back @n inode units taken with inode_charge(). */
void inode_uncharge(struct tierfs *fs, uint64_t n);

/* A new inode on the table, no name and no count yet (the caller sets
 * i_nlink); mode carries the type.  Takes one inode unit.  NULL with
 * errno ENOSPC when the mount has fs->opt.max_inodes units (0: no
 * limit), or ENOMEM. */
struct tfs_inode *inode_new(struct tierfs *fs, mode_t mode, uid_t uid,
			    gid_t gid, dev_t rdev);
/* Free an inode that is already off the table (or NULL).  No lock held. */
void inode_free(struct tierfs *fs, struct tfs_inode *inode);
/* Count one more kernel lookup (called with ns_lock held). */
void inode_lookup_ref(struct tierfs *fs, struct tfs_inode *inode);
/*
 * inode_adopt_native() - store native state @n in regular file @inode
 * (inode_native_slot()) if the kernel knows it by one lookup only (its
 * creator's, whose open has not come yet) and it holds nothing: then no
 * open of it can be in another mode.  Under itab_lock, which every
 * lookup takes to count itself, so a lookup after this sees @n.
 * Return: true when stored.
 */
bool inode_adopt_native(struct tierfs *fs, struct tfs_inode *inode,
			struct native *n);
/* The kernel dropped @n lookups; frees the inode when nothing else
 * references it. */
void inode_forget(struct tierfs *fs, struct tfs_inode *inode, uint64_t n);
void inode_link_inc(struct tierfs *fs, struct tfs_inode *inode);
/* Drop @n links; frees the inode when nothing references it any more.
 * Called with ns_lock held exclusive. */
void inode_link_drop(struct tierfs *fs, struct tfs_inode *inode,
		     uint32_t n);
/* The directories of a non-directory's names; all with ns_lock held
 * exclusive (inode_parent(): shared is enough). */
int inode_parent_add(struct tfs_inode *inode, struct tfs_inode *dir);
void inode_parent_del(struct tfs_inode *inode, struct tfs_inode *dir);
void inode_parent_move(struct tfs_inode *inode, struct tfs_inode *from,
		       struct tfs_inode *to);
/* The directory whose policy @inode follows (NULL: the root's). */
struct tfs_inode *inode_parent(const struct tfs_inode *inode);
/* The directory of name @k (0 .. i_nparents - 1, oldest first).  With
 * ns_lock held. */
static inline struct tfs_inode *inode_parent_at(const struct tfs_inode *inode,
						uint32_t k)
{
	return inode->i_nparents == 1 ? inode->i_parent : inode->i_parents[k];
}
/* No name and no kernel reference: only internal pins hold @inode (a
 * removed file that no one has open).  Takes itab_lock. */
bool inode_is_orphan(struct tierfs *fs, struct tfs_inode *inode);
/* Internal pins: keep @inode alive while the migrator works on it. */
void inode_pin(struct tierfs *fs, struct tfs_inode *inode);
void inode_unpin(struct tierfs *fs, struct tfs_inode *inode);
/* Pin @inode if it is still in the inode table (not on its way to
 * inode_free()).  For a registry that finds inodes under a lock their
 * freeing also takes (native.c).  Return: true when pinned. */
bool inode_try_pin(struct tierfs *fs, struct tfs_inode *inode);
/* @inode's attributes as stat(2) shows them.  Called with i_lock held. */
void inode_fill_stat(struct tierfs *fs, struct tfs_inode *inode,
		     struct stat *st);
/* Set timestamps to now: @m mtime, @c ctime.  Called with i_lock held. */
void inode_touch(struct tfs_inode *inode, bool m, bool c);
/* A read or a listing: atime by relatime rules.  Takes i_lock. */
void inode_touch_atime(struct tfs_inode *inode);
/* The path of directory @dir from the mount root ("/job42"); NULL on
 * ENOMEM.  Called with ns_lock held.  Caller frees. */
char *dir_path(struct tierfs *fs, struct tfs_inode *dir);
/* A path of @inode for messages ("/job42/Gau-1.rwf"), or NULL on ENOMEM.
 * Takes ns_lock shared: call with no lock held.  Caller frees. */
char *inode_path(struct tierfs *fs, struct tfs_inode *inode);
/* CLOCK_REALTIME now, for timestamps. */
struct timespec now_ts(void);

#endif /* TIERFS_INODE_H */
