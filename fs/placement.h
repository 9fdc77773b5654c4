/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * placement.h -- policies applied to the namespace: an inode's effective
 * policy (its own user.tierfs.* keys, then each ancestor's, then the
 * defaults; policy.h does the merging, without I/O), statfs for the
 * whole mount and per directory, and paths of inodes for messages.
 *
 * Locking: the cached policy sits under the inode's i_lock and is
 * current while fs->policy_gen has not moved; anything that can change
 * some inode's effective policy calls policy_changed() after its own
 * update.  Each function says which locks it takes or needs.
 *
 * Ownership: returned paths are the caller's to free().  Nothing here
 * fails but for ENOMEM (NULL paths).
 */
#ifndef TIERFS_PLACEMENT_H
#define TIERFS_PLACEMENT_H

struct policy;
struct statvfs;
struct tierfs;
struct tfs_inode;

/* Get @inode's effective policy (cached; resolved when stale).  Takes
 * ns_lock shared and i_locks: call with no lock held. */
void policy_get(struct tierfs *fs, struct tfs_inode *inode,
		struct policy *ret);
/* The same, from the cache when it is current, but resolved without
 * making a cache: for one-off questions about inodes that may never
 * need the policy again.  Same locks as policy_get(). */
void policy_peek(struct tierfs *fs, struct tfs_inode *inode,
		 struct policy *ret);
/* Any inode's effective policy may have changed (a policy attribute set
 * or removed, a directory renamed, a directory's owner changed): every
 * cached one resolves again, and the migrator's next pass looks at every
 * inode with data.  Relaxed atomic; any lock or none. */
void policy_changed(struct tierfs *fs);
/* Only @inode's effective policy may have changed: a non-directory got,
 * lost or moved a name (its policy follows its latest name's directory),
 * or an empty directory was removed.  Its cached policy resolves again
 * and the migrator's next pass looks at it, nothing else.  Called with
 * ns_lock held exclusive (the ordering with policy_get()'s cache store,
 * placement.c); takes i_lock and track_mu. */
void policy_changed_inode(struct tierfs *fs, struct tfs_inode *inode);
/* statfs of the whole mount: every tier.  Takes itab_lock. */
void tierfs_statfs(struct tierfs *fs, struct statvfs *st);
/* statfs restricted to the tiers @inode's policy allows. */
void placement_statfs(struct tierfs *fs, struct tfs_inode *inode,
		      struct statvfs *st);

#endif /* TIERFS_PLACEMENT_H */
