/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * quota.h -- quotas per directory: trusted.tierfs.quota caps the tier
 * space held below a directory, in total ("200G", past it EDQUOT) and
 * per tier ("ram:4G,total:200G", past a tier's cap data goes to the
 * next tier as if that one were full), and the inodes below it
 * ("inodes:1M", past it a new name fails with EDQUOT).  Not here: where data goes
 * (policy.h, data_extent.c asks quota_charge() per tier), the stored
 * attribute itself (xattr.c keeps it and calls the quota_xattr_*()
 * hooks).
 *
 * Model.  A directory that ever had a quota owns a struct quota node
 * (its i_quota) for the rest of its life; removing the attribute only
 * lifts the limits, so setting one again needs no walk.  Nodes form a
 * tree: each points at the nearest node above its directory
 * (q_parent).  A regular file is charged to the nearest node above the
 * directory where it was made (its i_quota, fixed at creation) and to
 * every node above that one.  Names do not move between quota trees --
 * rename and link across them fail with EXDEV (quota_same_tree(),
 * quota_may_link()) -- so usage never has to be walked again.  Setting
 * a quota on a directory that has none walks its subtree once, under
 * ns_lock exclusive: files and nested nodes that belonged to the node
 * above move under the new node, which sums their usage.
 *
 * Unit: the bytes of tier space held, to the tier's allocation unit
 * (tier_charge()), counted where extents take, give back and move
 * space (data_extent.c, data_move.c).  Inodes: the units of
 * --max-inodes (inode_units() in inode.h), counted per name: each name
 * below the directory charges its inode's units when it is made
 * (create, mkdir, mknod, symlink, link) and gives them back when it
 * goes (unlink, rmdir, a rename over it), namespace.c.  Every name of an
 * inode is in one quota tree (rename and link across trees fail with
 * EXDEV for every type), so the charge never has to move.  A file that
 * is removed but still open holds no name: its inode is the mount's
 * until it is freed, no longer the quota's.
 *
 * Locking.  quota_lock (static in quota.c) guards every node's fields;
 * it is the innermost lock of the mount (taken under ns_lock, i_dlock,
 * i_lock, never around another lock).  A file's i_quota is written
 * with ns_lock exclusive and quota_lock (creation: before anyone sees
 * the file), so either lock reads it, and the data path's counters read
 * it with inode_quota(); never under the file's data lock, which a
 * writer stuck in a hung tier may hold (issue 32).  Every charge of a
 * file also moves its own bytes per tier (inode_tier_bytes()) under
 * quota_lock, quota or not: what a quota set later takes from it, and
 * what a layout reads.  A directory's i_quota is written with ns_lock
 * exclusive.  Each function says what it needs.
 *
 * Lifetime: a node is referenced by its directory, by each file whose
 * i_quota it is and by each node below it; quota_release() drops an
 * inode's reference when the inode is freed.
 *
 * Figures for the job report (issue 19), per node since it was made:
 * the peak of q_used (kept where a charge makes it grow, under
 * quota_lock) and the I/O counters of struct quota_io (the data path's
 * relaxed atomic adds, data.c: bytes written and read, how many of them
 * went to or came from a tier below tier 0, failed writebacks).  Every
 * node is on one list (quota_lock), so that the figures of a node can
 * add those of the nodes below it; a node freed folds its counts into
 * the one above.
 *
 * Return: 0 or -errno as each line says; nothing here logs.
 */
#ifndef TIERFS_QUOTA_H
#define TIERFS_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl_proto.h" /* the attribute names */
#include "policy.h" /* TIER_MAX_CONF, struct tier_names */

struct strbuf;
struct tierfs;
struct tfs_inode;

/* The stored attribute (root only: the kernel wants CAP_SYS_ADMIN for
 * trusted.*, and the daemon checks uid 0 as well). */
#define QUOTA_XATTR TIERFS_XATTR_QUOTA_SET
/* "no limit" in struct quota_limits */
#define QUOTA_NONE UINT64_MAX

/* A parsed value of QUOTA_XATTR. */
struct quota_limits {
	uint64_t total;		       /* bytes, or QUOTA_NONE */
	uint64_t tier[TIER_MAX_CONF]; /* bytes per tier, or QUOTA_NONE */
	uint64_t inodes;	       /* inode units, or QUOTA_NONE */
};

/*
 * What the files of a node did (issue 19, the job report): bytes the
 * daemon stored and served for them, and their failed writebacks.
 * Relaxed atomics, added by the data path without a lock (quota_io_*()
 * below: at most two adds a request, on the node the file is charged to
 * -- its i_quota -- and no other); read with atomic loads.  A node's own
 * counts are those of the files charged to it directly; what the nodes
 * below it counted is added when the figures are read
 * (quota_usage_text()), and folded into it when such a node is freed,
 * so that the figures of a directory only grow.
 */
struct quota_io {
	uint64_t write_bytes;	    /* stored by write and writeback */
	uint64_t spill_bytes;	    /* tier space taken below tier 0 */
	uint64_t read_bytes;	    /* served by read (what the kernel's page
				     * cache served never reaches the daemon) */
	uint64_t read_below_bytes;  /* of those, from a tier below tier 0 */
	uint64_t wb_errors;	    /* writeback requests that failed */
	uint64_t wb_lost_bytes;	    /* bytes they did not store */
};

/* One node of the quota tree.  All fields but q_io: quota_lock. */
struct quota {
	struct quota *q_parent; /* nearest node above; NULL at the top */
	uint32_t q_refs;
	bool q_set;		  /* the directory has the attribute */
	bool q_listed;		  /* on the list of every node (quota.c) */
	struct quota_limits q_lim; /* in force while q_set */
	uint64_t q_used;	  /* bytes held below, all tiers */
	uint64_t q_tused[TIER_MAX_CONF]; /* bytes held below, per tier */
	uint64_t q_iused;	  /* inode units of the names below */
	uint64_t q_peak;	  /* the most q_used has been (issue 19) */
	struct quota *q_next, *q_prev; /* that list, while q_listed */
	struct quota_io q_io;	  /* atomics, no lock (above) */
};

/* ---- pure parts (no lock, no fs; the unit suite tests them) ---- */

/*
 * quota_parse() - parse a value of QUOTA_XATTR: "SIZE" (the total) or
 * a comma-separated list of "KEY:SIZE", KEY a tier of @names, "total"
 * or "inodes" (a count, with K/M/G suffixes as --max-inodes takes
 * them), each at most once, SIZE as size_parse() takes it ("total" and
 * "inodes" are keys before tier names are).  One trailing newline or
 * NUL is allowed; nothing else (no blanks).
 * Return: 0 and *ret, or -EINVAL (nothing written).
 */
int quota_parse(const struct tier_names *names, const char *value,
		size_t len, struct quota_limits *ret);

/*
 * quota_chain_charge() - charge @bytes on tier @t to @q and every node
 * above it, all or nothing: -EDQUOT when some node's total would pass
 * its limit, -ENOSPC when some node's cap on @t would (total checked
 * first, over the whole chain).  quota_lock held (or a private chain).
 */
int quota_chain_charge(struct quota *q, unsigned t, uint64_t bytes);
/* Give back @bytes on tier @t along the chain (clamped at zero). */
void quota_chain_uncharge(struct quota *q, unsigned t, uint64_t bytes);
/* Move @bytes from tier @src to @dst along the chain: -ENOSPC when a
 * cap on @dst would be passed (nothing changed). */
int quota_chain_move(struct quota *q, unsigned src, unsigned dst,
		     uint64_t bytes);
/* Charge @units inode units to @q and every node above, all or
 * nothing: -EDQUOT when some node's inode limit would be passed. */
int quota_chain_icharge(struct quota *q, uint64_t units);
/* Give back @units inode units along the chain (clamped at zero). */
void quota_chain_iuncharge(struct quota *q, uint64_t units);

/* ---- data path (data_extent.c, data_move.c, migrate.c) ---- */

/* Charge @bytes of tier space on tier @t to @inode's quotas: 0,
 * -EDQUOT (a total is reached: no tier helps) or -ENOSPC (a cap on @t:
 * try the next tier).  i_dlock exclusive. */
int quota_charge(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		 uint64_t bytes);
/* As quota_charge(), for an extent that relocates (data_extent.c): it
 * charges its held bytes on the new tier before the old tier gives them
 * back, so the peak use (q_peak) is left alone here and taken in by
 * quota_settle() once the extent has moved or failed to. */
int quota_charge_relocating(struct tierfs *fs, struct tfs_inode *inode,
			    unsigned t, uint64_t bytes);
/*
 * quota_account() - a native file's backing file (native.h) holds
 * @bytes more on tier @t (@up) or fewer: the kernel wrote them already,
 * so the charge is made whatever the limits (a quota may so stand past
 * its limit, which refuses further growth: quota_full()), and the
 * file's own bytes per tier follow.  i_dlock exclusive.
 */
void quota_account(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		   uint64_t bytes, bool up);
/* Is a quota above @inode at or past its total?  (A native file may not
 * be opened for writing then: native.h.)  No lock needed. */
bool quota_full(struct tierfs *fs, struct tfs_inode *inode);
/* The peak use of @inode's quotas takes in their use now.  i_dlock
 * exclusive. */
void quota_settle(struct tierfs *fs, struct tfs_inode *inode);
/* Give back @bytes on tier @t.  i_dlock exclusive (or the inode is
 * being freed). */
void quota_uncharge(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		    uint64_t bytes);
/* @bytes of @inode (an extent's held bytes) move from tier @src to
 * @dst: 0, or -ENOSPC when a cap on @dst is reached (then they must not
 * move).  i_dlock exclusive, at the switch. */
int quota_move(struct tierfs *fs, struct tfs_inode *inode, unsigned src,
	       unsigned dst, uint64_t bytes);
/* Whether @bytes more of @inode fit under every cap on tier @t (for the
 * migrator's choice of destination; a hint, quota_move() decides).
 * i_dlock held, or ns_lock. */
bool quota_tier_room(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		     uint64_t bytes);

/*
 * The I/O counters (struct quota_io) of @q, the i_quota of the file a
 * request is about (NULL: no quota above it, nothing counted).  The
 * caller holds the file's i_dlock (shared is enough), so @q stays the
 * file's node.  Relaxed atomic adds, no lock: these are on the path of
 * every read and write.
 */
/* A read served @bytes, @below of them from tiers below tier 0. */
static inline void quota_io_read(struct quota *q, uint64_t bytes,
				 uint64_t below)
{
	if (!q || !bytes)
		return;
	__atomic_add_fetch(&q->q_io.read_bytes, bytes, __ATOMIC_RELAXED);
	if (below)
		__atomic_add_fetch(&q->q_io.read_below_bytes, below,
				   __ATOMIC_RELAXED);
}

/* A write or writeback stored @bytes. */
static inline void quota_io_write(struct quota *q, uint64_t bytes)
{
	if (q && bytes)
		__atomic_add_fetch(&q->q_io.write_bytes, bytes,
				   __ATOMIC_RELAXED);
}

/*
 * @bytes of tier space were taken on a tier below tier 0 (data_extent.c):
 * by a new extent placed there, by an extent there growing, or by an
 * extent that moved there because its tier had no room (the units it
 * brings from tier 0 and the new ones).  Not by the migrator's moves.
 * i_dlock exclusive.
 */
static inline void quota_io_spill(struct quota *q, uint64_t bytes)
{
	if (q && bytes)
		__atomic_add_fetch(&q->q_io.spill_bytes, bytes,
				   __ATOMIC_RELAXED);
}

/* A writeback failed, and did not store @lost bytes. */
static inline void quota_io_wb_error(struct quota *q, uint64_t lost)
{
	if (!q)
		return;
	__atomic_add_fetch(&q->q_io.wb_errors, 1, __ATOMIC_RELAXED);
	if (lost)
		__atomic_add_fetch(&q->q_io.wb_lost_bytes, lost,
				   __ATOMIC_RELAXED);
}

/*
 * quota_io_sum() - the I/O figures of node @q: its own and those of
 * every node below it, into @ret.  Takes quota_lock.
 */
void quota_io_sum(struct quota *q, struct quota_io *ret);

/* ---- namespace (namespace.c, placement.c) ---- */

/* A new regular file in @dir joins the quota tree of @dir.  ns_lock
 * exclusive, before @inode is visible. */
void quota_inherit(struct tierfs *fs, struct tfs_inode *inode,
		   struct tfs_inode *dir);
/* Whether directories @a and @b are in the same quota tree (a rename
 * between them keeps every file's quotas).  ns_lock held. */
bool quota_same_tree(struct tierfs *fs, struct tfs_inode *a,
		     struct tfs_inode *b);
/* Whether @inode may get a name in @dir (its quotas are @dir's: a
 * regular file's i_quota, the tree of any other inode's names).
 * ns_lock held. */
bool quota_may_link(struct tierfs *fs, struct tfs_inode *inode,
		    struct tfs_inode *dir);
/* A new name in @dir whose inode costs @units inode units: charge them
 * to the quotas above @dir.  0, or -EDQUOT (nothing charged).  ns_lock
 * exclusive, held until the name exists or quota_name_del() undid it. */
int quota_name_add(struct tierfs *fs, struct tfs_inode *dir,
		   uint64_t units);
/* A name in @dir went away (or was never made): give back @units.
 * ns_lock exclusive. */
void quota_name_del(struct tierfs *fs, struct tfs_inode *dir,
		    uint64_t units);
/*
 * quota_statfs() - apply the quotas above @inode to a statfs answer:
 * @total and @avail (bytes, of the allowed tiers, @tfree[t] free on
 * tier t, 0 for tiers not allowed) become the innermost total limit
 * and the room left under every limit; @files and @ffree (the mount's
 * inode units) the innermost inode limit and the units left under
 * every inode limit, at most *@ffree.  Takes ns_lock shared.
 */
void quota_statfs(struct tierfs *fs, struct tfs_inode *inode,
		  const uint64_t tfree[TIER_MAX_CONF], uint64_t *total,
		  uint64_t *avail, uint64_t *files, uint64_t *ffree);
/* Drop @inode's reference to its node (inode_free(), through fs->evict:
 * mount.c).  No lock held. */
void quota_release(struct tfs_inode *inode);

/* ---- the attributes (xattr.c, ctl.c) ---- */

/*
 * quota_xattr_check() - before xattr.c stores @name = @value on @inode:
 * 0 for any other name; for QUOTA_XATTR, -EPERM unless @uid is 0,
 * -ENOTDIR unless @inode is a directory, -EINVAL for a bad value, else
 * the directory gets its node (-ENOMEM; a new node sums the usage
 * below it, walking the subtree) and 0.  The limits change only in
 * quota_xattr_sync(), after the store.  Takes ns_lock exclusive.
 */
int quota_xattr_check(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name, const void *value, size_t size,
		      uid_t uid);
/* After QUOTA_XATTR of @inode was stored or removed (any other @name:
 * nothing): the limits follow the stored value, or lift.  Cannot fail.
 * Takes ns_lock exclusive, then i_lock. */
void quota_xattr_sync(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name);
/* The computed TIERFS_XATTR_QUOTA of @inode (ctl_proto.h) into @out:
 * per quota its use and limits, its peak use and its I/O figures.
 * Return: 0, -ENODATA (no quota above it) or -ENOMEM.  Takes ns_lock
 * shared. */
int quota_usage_text(struct tierfs *fs, struct tfs_inode *inode,
		     struct strbuf *out);
/* For the log of a write that failed with EDQUOT: the path of the
 * directory above regular file @inode whose quota total has the least
 * room left, or NULL (none, or no memory).  Takes ns_lock shared: call
 * with no lock held.  Caller frees. */
char *quota_full_dir(struct tierfs *fs, struct tfs_inode *inode);

#endif /* TIERFS_QUOTA_H */
