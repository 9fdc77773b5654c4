// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * placement.c -- policies applied to the namespace: resolving an inode's
 * effective policy by walking up to the root, statfs of the mount and
 * per directory, and paths for messages.
 *
 * Who may steer a file's placement: its owner and root only (see
 * dir_applies() for the rule).
 *
 * Locking: policy_get() checks the inode's cached policy under its
 * i_lock; when fs->policy_gen has moved on, it drops that lock, walks
 * the ancestors under ns_lock (shared) taking each one's i_lock in turn,
 * and stores the result under i_lock again.  A change that races with
 * the walk bumps policy_gen after its own update, so the next caller
 * resolves again: a stale answer is possible only for a write that ran
 * concurrently with the change, which is the same as the write running
 * just before it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "placement.h"
#include "fs.h"
#include "inode.h"
#include "dir.h"
#include "quota.h"
#include "track.h"
#include "tier.h"
#include "banned.h"

/*
 * Your file, your placement: a directory's policy applies to an inode
 * only when the directory is owned by the inode's owner or by root;
 * other directories are passed over in the walk up.  Of a file's names,
 * the latest one in such a directory governs (a hard link or rename by
 * someone else into their own directory changes nothing); with no name
 * in one, the oldest name does, which nobody can make after the fact.
 * The file's own policy keys count always: only its owner or root may
 * set them (xattr.c).
 */
static bool dir_applies(const struct tfs_inode *d, uid_t owner)
{
	return d->i_uid == owner || d->i_uid == 0; /* d's i_lock held */
}

static uid_t owner_of(struct tfs_inode *i)
{
	uid_t uid;

	pthread_mutex_lock(&i->i_lock);
	uid = i->i_uid;
	pthread_mutex_unlock(&i->i_lock);
	return uid;
}

/* The directory whose chain governs non-directory @i owned by @owner
 * (see above); NULL with no name.  ns_lock held. */
static struct tfs_inode *governing_dir(struct tfs_inode *i, uid_t owner)
{
	for (uint32_t k = i->i_nparents; k-- > 0;) {
		struct tfs_inode *d = inode_parent_at(i, k);
		bool ok;

		pthread_mutex_lock(&d->i_lock);
		ok = dir_applies(d, owner);
		pthread_mutex_unlock(&d->i_lock);
		if (ok)
			return d;
	}
	return i->i_nparents ? inode_parent_at(i, 0) : NULL;
}

static struct tfs_inode *parent_of(struct tierfs *fs, struct tfs_inode *i,
				   uid_t owner)
{
	struct tfs_inode *d;

	if (i == fs->root)
		return NULL;
	if (i->i_type == S_IFDIR)
		return i->i_dir.d_parent;
	d = governing_dir(i, owner);
	return d ? d : fs->root;
}

/* Called with ns_lock held (shared). */
static void resolve(struct tierfs *fs, struct tfs_inode *inode,
		    struct policy *p)
{
	bool have[_POLICY_KEY_MAX] = { false };
	uid_t owner = owner_of(inode);

	policy_default(p, fs->ntiers);
	for (struct tfs_inode *i = inode; i; i = parent_of(fs, i, owner)) {
		pthread_mutex_lock(&i->i_lock);
		if (i->i_pol && (i == inode || dir_applies(i, owner)))
			policy_inherit(p, i->i_pol, i->i_ino, have);
		pthread_mutex_unlock(&i->i_lock);
	}
	policy_finish(p, fs->ntiers);
}

/* policy_get() and policy_peek(); @keep: cache what was resolved */
static void policy_lookup(struct tierfs *fs, struct tfs_inode *inode,
			  struct policy *ret, bool keep)
{
	uint64_t gen = __atomic_load_n(&fs->policy_gen, __ATOMIC_RELAXED);
	struct policy p;

	pthread_mutex_lock(&inode->i_lock);
	if (inode->i_effc && inode->i_effc->gen == gen + 1) {
		*ret = inode->i_effc->pol;
		pthread_mutex_unlock(&inode->i_lock);
		return;
	}
	pthread_mutex_unlock(&inode->i_lock);

	pthread_rwlock_rdlock(&fs->ns_lock);
	resolve(fs, inode, &p);
	*ret = p;
	if (!keep) {
		pthread_rwlock_unlock(&fs->ns_lock);
		return;
	}
	/*
	 * Stored with ns_lock still held: policy_changed_inode() runs with
	 * it exclusive, so it comes either before the resolve (which saw
	 * its change) or after this store (which it clears).
	 */
	pthread_mutex_lock(&inode->i_lock);
	/* made on first use; without memory the policy is just not cached */
	if (!inode->i_effc)
		inode->i_effc = malloc(sizeof(*inode->i_effc));
	if (inode->i_effc) {
		/* stored as gen + 1 so that a fresh cache never looks current */
		inode->i_effc->pol = p;
		inode->i_effc->gen = gen + 1;
	}
	pthread_mutex_unlock(&inode->i_lock);
	pthread_rwlock_unlock(&fs->ns_lock);
}

void policy_get(struct tierfs *fs, struct tfs_inode *inode,
		struct policy *ret)
{
	policy_lookup(fs, inode, ret, true);
}

void policy_peek(struct tierfs *fs, struct tfs_inode *inode,
		 struct policy *ret)
{
	policy_lookup(fs, inode, ret, false);
}

void policy_changed(struct tierfs *fs)
{
	__atomic_add_fetch(&fs->policy_gen, 1, __ATOMIC_RELAXED);
}

void policy_changed_inode(struct tierfs *fs, struct tfs_inode *inode)
{
	pthread_mutex_lock(&inode->i_lock);
	if (inode->i_effc)
		inode->i_effc->gen = 0; /* never current: stored as gen + 1 */
	pthread_mutex_unlock(&inode->i_lock);
	track_policy_note(fs, inode);
}

void tierfs_statfs(struct tierfs *fs, struct statvfs *st)
{
	uint64_t total = 0, avail;

	for (unsigned i = 0; i < fs->ntiers; i++) {
		struct tier *t = fs->tiers[i];

		total += (uint64_t)t->nslots * fs->extent_size;
	}
	/* capped by the filesystems under the tiers, each counted once */
	avail = tier_free_bytes(fs->tiers, fs->ntiers,
				(uint32_t)((1ull << fs->ntiers) - 1));
	memset(st, 0, sizeof(*st));
	st->f_bsize = 4096;
	st->f_frsize = 4096;
	st->f_blocks = total / st->f_frsize;
	st->f_bfree = avail / st->f_frsize;
	st->f_bavail = st->f_bfree;
	/* inodes: --max-inodes, in inode units (inode.h: links and long
	 * symlink targets count), or with no limit a large, steady count;
	 * ninodes is atomic */
	st->f_files = fs->opt.max_inodes ? fs->opt.max_inodes : UINT32_MAX;
	st->f_ffree = __atomic_load_n(&fs->ninodes, __ATOMIC_RELAXED);
	st->f_ffree = st->f_ffree < st->f_files ? st->f_files - st->f_ffree : 0;
	st->f_favail = st->f_ffree;
	st->f_namemax = 255;
}

void placement_statfs(struct tierfs *fs, struct tfs_inode *inode,
		      struct statvfs *st)
{
	uint64_t tfree[TIER_MAX_CONF] = { 0 };
	struct policy p;
	uint64_t total = 0, avail = 0, files, ffree;

	tierfs_statfs(fs, st);
	/* an open for writing asks this of every new file, most of which
	 * never need the policy again: do not make them a cache */
	policy_peek(fs, inode, &p);
	for (unsigned i = 0; i < fs->ntiers; i++) {
		struct tier *t = fs->tiers[i];

		if (!(p.allowed & (1u << i)))
			continue;
		total += (uint64_t)t->nslots * fs->extent_size;
		tfree[i] = tier_avail_bytes(t);
		avail += tfree[i];
	}
	if (p.allowed == (1u << fs->ntiers) - 1) {
		/* every tier: the mount's own answer */
		total = (uint64_t)st->f_blocks * st->f_frsize;
		avail = (uint64_t)st->f_bfree * st->f_frsize;
	} else {
		/* tiers on one filesystem share its free space: count it once */
		avail = tier_free_bytes(fs->tiers, fs->ntiers, p.allowed);
	}
	/* a quota above @inode: its total is the size, and the free space
	 * is what is left under every limit, at most what the tiers have */
	files = st->f_files;
	ffree = st->f_ffree;
	quota_statfs(fs, inode, tfree, &total, &avail, &files, &ffree);
	st->f_blocks = total / st->f_frsize;
	st->f_bfree = avail / st->f_frsize;
	st->f_bavail = st->f_bfree;
	/* an inode quota above @inode: its limit and what is left (df -i) */
	st->f_files = files;
	st->f_ffree = ffree;
	st->f_favail = ffree;
}

