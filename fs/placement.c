// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * placement.c -- policies applied to the namespace: resolving an inode's
 * effective policy by walking up to the root, and per-directory statfs.
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

#include "tierfs.h"
#include "tier.h"
#include "banned.h"

static struct tfs_inode *parent_of(struct tierfs *fs, struct tfs_inode *i)
{
	if (i == fs->root)
		return NULL;
	if (i->i_type == S_IFDIR)
		return i->i_dir.d_parent;
	return inode_parent(i) ? inode_parent(i) : fs->root;
}

/* Called with ns_lock held (shared). */
static void resolve(struct tierfs *fs, struct tfs_inode *inode,
		    struct policy *p)
{
	bool have[_POLICY_KEY_MAX] = { false };

	policy_default(p, fs->ntiers);
	for (struct tfs_inode *i = inode; i; i = parent_of(fs, i)) {
		pthread_mutex_lock(&i->i_lock);
		if (i->i_pol)
			policy_inherit(p, i->i_pol, i->i_ino, have);
		pthread_mutex_unlock(&i->i_lock);
	}
	policy_finish(p, fs->ntiers);
}

void policy_get(struct tierfs *fs, struct tfs_inode *inode,
		struct policy *ret)
{
	uint64_t gen = __atomic_load_n(&fs->policy_gen, __ATOMIC_RELAXED);
	struct policy p;

	pthread_mutex_lock(&inode->i_lock);
	if (inode->i_pol_gen == gen + 1) {
		*ret = inode->i_eff;
		pthread_mutex_unlock(&inode->i_lock);
		return;
	}
	pthread_mutex_unlock(&inode->i_lock);

	pthread_rwlock_rdlock(&fs->ns_lock);
	resolve(fs, inode, &p);
	pthread_rwlock_unlock(&fs->ns_lock);

	pthread_mutex_lock(&inode->i_lock);
	/* stored as gen + 1 so that a zeroed inode never looks current */
	inode->i_eff = p;
	inode->i_pol_gen = gen + 1;
	pthread_mutex_unlock(&inode->i_lock);
	*ret = p;
}

void placement_statfs(struct tierfs *fs, struct tfs_inode *inode,
		      struct statvfs *st)
{
	struct policy p;
	uint64_t total = 0, avail = 0;

	tierfs_statfs(fs, st);
	policy_get(fs, inode, &p);
	if (p.allowed == (1u << fs->ntiers) - 1)
		return;
	for (unsigned i = 0; i < fs->ntiers; i++) {
		struct tier *t = fs->tiers[i];

		if (!(p.allowed & (1u << i)))
			continue;
		total += (uint64_t)t->nslots * fs->extent_size;
		avail += (uint64_t)tier_free_slots(t) * fs->extent_size;
	}
	st->f_blocks = total / st->f_frsize;
	st->f_bfree = avail / st->f_frsize;
	st->f_bavail = st->f_bfree;
}

char *dir_path(struct tierfs *fs, struct tfs_inode *dir)
{
	size_t len = 0, cap = 256;
	char *buf = malloc(cap), *out;

	if (!buf)
		return NULL;
	/* collect names leaf first, then reverse the components */
	for (struct tfs_inode *i = dir; i != fs->root;
	     i = i->i_dir.d_parent) {
		struct dentry *de = i->i_dir.d_self;
		const char *name = de ? de->d_name : "(deleted)";
		size_t n = strlen(name);

		if (len + n + 2 > cap) {
			char *nb = realloc(buf, cap * 2 + n);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap = cap * 2 + n;
		}
		/* stored reversed: "/" + reversed name */
		for (size_t k = 0; k < n; k++)
			buf[len++] = name[n - 1 - k];
		buf[len++] = '/';
		if (!de)
			break;
	}
	out = malloc(len + 2);
	if (!out) {
		free(buf);
		return NULL;
	}
	for (size_t k = 0; k < len; k++)
		out[k] = buf[len - 1 - k];
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	free(buf);
	return out;
}

char *inode_path(struct tierfs *fs, struct tfs_inode *inode)
{
	struct tfs_inode *dir;
	const char *name = NULL;
	char *dpath, *out = NULL;

	if (inode->i_type == S_IFDIR) {
		pthread_rwlock_rdlock(&fs->ns_lock);
		out = dir_path(fs, inode);
		pthread_rwlock_unlock(&fs->ns_lock);
		return out;
	}
	pthread_rwlock_rdlock(&fs->ns_lock);
	dir = inode_parent(inode);
	if (!dir)
		dir = fs->root;
	/* the latest name's directory; find the name itself (rare: messages) */
	for (struct dentry *de = dir_next(&dir->i_dir, 0); de;
	     de = dir_next(&dir->i_dir, de->d_cookie)) {
		if (de->d_inode == inode) {
			name = de->d_name;
			break;
		}
	}
	dpath = dir_path(fs, dir);
	if (dpath && asprintf(&out, "%s%s%s", dpath,
			      strcmp(dpath, "/") ? "/" : "",
			      name ? name : "(deleted)") < 0)
		out = NULL;
	pthread_rwlock_unlock(&fs->ns_lock);
	free(dpath);
	return out;
}
