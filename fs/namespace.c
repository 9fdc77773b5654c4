// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * namespace.c -- names, directories and attributes: the logic of the
 * namespace requests (see namespace.h).  Every change runs under
 * fs->ns_lock exclusive from its first check to its last update, so a
 * request sees and leaves the tree consistent; attributes change under
 * each inode's i_lock inside it.
 */
#include <errno.h>
#include <limits.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuse_inc.h"
#include "namespace.h"
#include "fs.h"
#include "inode.h"
#include "dir.h"
#include "data.h"
#include "native.h"
#include "placement.h"
#include "quota.h"
#include "xattr.h"
#include "macro.h"
#include "banned.h"

static int check_name(const char *name)
{
	return strlen(name) > NAME_MAX ? -ENAMETOOLONG : 0;
}

/* @inode's attributes for a reply; called with ns_lock held, so that
 * they belong to the name just looked up or made. */
static void stat_inode(struct tierfs *fs, struct tfs_inode *inode,
		       struct stat *st)
{
	pthread_mutex_lock(&inode->i_lock);
	inode_fill_stat(fs, inode, st);
	pthread_mutex_unlock(&inode->i_lock);
}

int ns_lookup(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	      struct tfs_inode **ret_inode, struct stat *ret_st)
{
	struct dentry *de;
	int r = check_name(name);

	if (r < 0)
		return r;
	pthread_rwlock_rdlock(&fs->ns_lock);
	de = dir->i_type == S_IFDIR ? dir_find(&dir->i_dir, name) : NULL;
	if (!de) {
		pthread_rwlock_unlock(&fs->ns_lock);
		return dir->i_type != S_IFDIR ? -ENOTDIR : -ENOENT;
	}
	inode_lookup_ref(fs, de->d_inode);
	stat_inode(fs, de->d_inode, ret_st);
	*ret_inode = de->d_inode;
	pthread_rwlock_unlock(&fs->ns_lock);
	return 0;
}

/*
 * Make a new inode named @name in @dir.  @mode carries the type.
 * On success *ret_inode is it, with one kernel lookup counted.
 */
static int make_node(struct tierfs *fs, struct tfs_inode *dir,
		     const char *name, mode_t mode, dev_t rdev,
		     const char *link, const struct ns_cred *cred,
		     struct tfs_inode **ret_inode, struct stat *ret_st)
{
	struct tfs_inode *inode;
	gid_t gid = cred->gid;
	uint64_t units = 1; /* inode_units() of the new inode */
	int r = check_name(name);

	if (r < 0)
		return r;
	if (link && strlen(link) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (S_ISLNK(mode))
		units = inode_link_units(link ? strlen(link) : 0);
	pthread_rwlock_wrlock(&fs->ns_lock);
	if (dir->i_type != S_IFDIR) {
		r = -ENOTDIR;
		goto out_unlock;
	}
	if (dir->i_nlink == 0) {
		/* a removed directory takes no new entries */
		r = -ENOENT;
		goto out_unlock;
	}
	if (dir_find(&dir->i_dir, name)) {
		r = -EEXIST;
		goto out_unlock;
	}
	pthread_mutex_lock(&dir->i_lock);
	if (dir->i_mode & S_ISGID) {
		/* BSD group semantics in a setgid directory */
		gid = dir->i_gid;
		if (S_ISDIR(mode))
			mode |= S_ISGID;
	}
	pthread_mutex_unlock(&dir->i_lock);

	/* the quotas above @dir first (EDQUOT), then the mount (ENOSPC) */
	r = quota_name_add(fs, dir, units);
	if (r < 0)
		goto out_unlock;
	inode = inode_new(fs, mode, cred->uid, gid, rdev);
	if (!inode) {
		r = -errno; /* ENOSPC past --max-inodes, or ENOMEM */
		goto out_uncharge;
	}
	/* not yet visible to anyone: no lock needed for these */
	if (S_ISDIR(mode)) {
		r = dir_init(&inode->i_dir, dir);
		inode->i_nlink = 2;
	} else if (S_ISLNK(mode)) {
		/* the target's units beyond inode_new()'s one; freeing
		 * the inode gives back inode_units(), so i_link is set
		 * only once they are taken */
		inode->i_nlink = 1;
		r = inode_charge(fs, units - 1);
		if (r == 0) {
			inode->i_link = link ? strdup(link) : NULL;
			if (!inode->i_link) {
				inode_uncharge(fs, units - 1);
				r = -ENOMEM;
			}
		}
	} else {
		inode->i_nlink = 1;
	}
	if (r == 0 && !S_ISDIR(mode))
		r = inode_parent_add(inode, dir);
	if (r == 0)
		quota_inherit(fs, inode, dir); /* charged where it is made */
	if (r == 0)
		r = dir_add(&dir->i_dir, name, inode, inode_sub(inode));
	if (r < 0) {
		inode_link_drop(fs, inode, inode->i_nlink);
		goto out_uncharge;
	}
	if (S_ISDIR(mode))
		inode_link_inc(fs, dir);
	pthread_mutex_lock(&dir->i_lock);
	inode_touch(dir, true, true);
	pthread_mutex_unlock(&dir->i_lock);
	inode_lookup_ref(fs, inode);
	stat_inode(fs, inode, ret_st);
	*ret_inode = inode;
	pthread_rwlock_unlock(&fs->ns_lock);
	return 0;
out_uncharge:
	quota_name_del(fs, dir, units);
out_unlock:
	pthread_rwlock_unlock(&fs->ns_lock);
	return r;
}

/*
 * A node was made (@r: make_node()'s return): a regular file may be a
 * native one (native.h), decided now, after ns_lock (its policy's
 * resolution takes it; making a backing file is I/O on a tier).
 * Return: @r.
 */
static int new_file(struct tierfs *fs, int r, struct tfs_inode **made)
{
	struct tfs_inode *inode;
	struct policy pol;

	if (r < 0 || !fs->passthrough)
		return r;
	inode = *made;
	if (inode->i_type != S_IFREG)
		return r;
	policy_get(fs, inode, &pol);
	(void)native_make(fs, inode, &pol); /* else it stays tiered */
	return r;
}

int ns_mknod(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	     mode_t mode, dev_t rdev, const struct ns_cred *cred,
	     struct tfs_inode **ret_inode, struct stat *ret_st)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
	case S_IFIFO:
	case S_IFSOCK:
	case S_IFCHR:
	case S_IFBLK:
		break;
	case 0:
		mode |= S_IFREG;
		break;
	default:
		return -EINVAL;
	}
	return new_file(fs, make_node(fs, dir, name, mode, rdev, NULL, cred,
				      ret_inode, ret_st), ret_inode);
}

int ns_mkdir(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	     mode_t mode, const struct ns_cred *cred,
	     struct tfs_inode **ret_inode, struct stat *ret_st)
{
	return make_node(fs, dir, name, S_IFDIR | (mode & 07777), 0, NULL,
			 cred, ret_inode, ret_st);
}

int ns_symlink(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	       const char *link, const struct ns_cred *cred,
	       struct tfs_inode **ret_inode, struct stat *ret_st)
{
	return make_node(fs, dir, name, S_IFLNK | 0777, 0, link, cred,
			 ret_inode, ret_st);
}

int ns_create(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	      mode_t mode, const struct ns_cred *cred,
	      struct tfs_inode **ret_inode, struct stat *ret_st)
{
	return new_file(fs, make_node(fs, dir, name, S_IFREG | (mode & 07777),
				      0, NULL, cred, ret_inode, ret_st),
			ret_inode);
}

static void touch_dir(struct tfs_inode *dir)
{
	pthread_mutex_lock(&dir->i_lock);
	inode_touch(dir, true, true);
	pthread_mutex_unlock(&dir->i_lock);
}

static void touch_c(struct tfs_inode *inode)
{
	pthread_mutex_lock(&inode->i_lock);
	inode_touch(inode, false, true);
	pthread_mutex_unlock(&inode->i_lock);
}

/*
 * A name of @inode in @dir went away: the directory of its latest
 * remaining name governs its policy now (the root's, once it has none).
 * The name's inode units go back to the quotas above @dir, and to the
 * mount unless it was the last name (that one is the inode's own,
 * given back when the inode is freed: inode.h).  Called with ns_lock
 * held exclusive, before the link count drops.
 */
static void forget_parent(struct tierfs *fs, struct tfs_inode *inode,
			  struct tfs_inode *dir)
{
	uint64_t units = inode_units(inode);

	quota_name_del(fs, dir, units);
	if (inode->i_type != S_IFDIR) {
		inode_parent_del(inode, dir);
		if (inode->i_nparents > 0)
			inode_uncharge(fs, units);
		policy_changed_inode(fs, inode);
	}
}

int ns_unlink(struct tierfs *fs, struct tfs_inode *dir, const char *name)
{
	struct tfs_inode *inode = NULL;
	struct dentry *de;
	int r = check_name(name);

	if (r < 0)
		return r;
	pthread_rwlock_wrlock(&fs->ns_lock);
	de = dir_find(&dir->i_dir, name);
	if (!de) {
		r = -ENOENT;
	} else if (de->d_inode->i_type == S_IFDIR) {
		r = -EISDIR;
	} else {
		inode = dir_remove(&dir->i_dir, name, NULL);
		touch_dir(dir);
		touch_c(inode);
		forget_parent(fs, inode, dir);
		inode_link_drop(fs, inode, 1);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	return r;
}

int ns_rmdir(struct tierfs *fs, struct tfs_inode *dir, const char *name)
{
	struct tfs_inode *inode;
	struct dentry *de;
	int r = check_name(name);

	if (r < 0)
		return r;
	pthread_rwlock_wrlock(&fs->ns_lock);
	de = dir_find(&dir->i_dir, name);
	if (!de) {
		r = -ENOENT;
	} else if (de->d_inode->i_type != S_IFDIR) {
		r = -ENOTDIR;
	} else if (!dir_is_empty(&de->d_inode->i_dir)) {
		r = -ENOTEMPTY;
	} else {
		inode = dir_remove(&dir->i_dir, name, inode_sub(de->d_inode));
		touch_dir(dir);
		touch_c(inode);
		/* a removed directory may outlive its parent: point ".." and
		 * policy lookups at the root, never at a freed inode */
		inode->i_dir.d_parent = fs->root;
		forget_parent(fs, inode, dir);
		policy_changed_inode(fs, inode); /* empty: nothing below it */
		inode_link_drop(fs, dir, 1);
		inode_link_drop(fs, inode, 2);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	return r;
}

/* Is @a @d or an ancestor of @d?  Called with ns_lock held. */
static bool is_ancestor(struct tierfs *fs, struct tfs_inode *a,
			struct tfs_inode *d)
{
	for (;;) {
		if (d == a)
			return true;
		if (d == fs->root)
			return false;
		d = d->i_dir.d_parent;
	}
}

/*
 * Quota trees (quota.h): a file is charged to the quotas above the
 * directory it was made in, and every name to the quotas above its
 * directory (inode units), so no inode -- of any type, since each
 * counts against an inode limit -- moves into another quota tree:
 * rename and link say EXDEV, and mv copies instead.  Called with
 * ns_lock held.
 */
static int quota_cross(struct tierfs *fs, const struct tfs_inode *inode,
		       struct tfs_inode *from, struct tfs_inode *to)
{
	return !quota_same_tree(fs, from, to) ? -EXDEV : 0;
}

/* Moving directory @child from @from to @to: fix ".." and link counts.
 * Called with ns_lock held exclusive. */
static void reparent(struct tierfs *fs, struct tfs_inode *child,
		     struct tfs_inode *from, struct tfs_inode *to)
{
	/* the new name's directory governs the policy from now on: of the
	 * file alone, or of the directory's whole subtree */
	if (child->i_type != S_IFDIR) {
		inode_parent_move(child, from, to);
		policy_changed_inode(fs, child);
		return;
	}
	policy_changed(fs);
	if (from == to)
		return;
	child->i_dir.d_parent = to;
	inode_link_inc(fs, to);
	inode_link_drop(fs, from, 1);
}

static int rename_exchange(struct tierfs *fs, struct tfs_inode *pdir,
			   struct dentry *sde, struct tfs_inode *ndir,
			   struct dentry *dde)
{
	struct tfs_inode *src = sde->d_inode, *dst = dde->d_inode;
	int r;

	if (src->i_type == S_IFDIR && is_ancestor(fs, src, ndir))
		return -EINVAL;
	if (dst->i_type == S_IFDIR && is_ancestor(fs, dst, pdir))
		return -EINVAL;
	r = quota_cross(fs, src, pdir, ndir);
	if (r == 0)
		r = quota_cross(fs, dst, ndir, pdir);
	if (r < 0)
		return r;
	dir_set_inode(sde, dst, inode_sub(dst));
	dir_set_inode(dde, src, inode_sub(src));
	reparent(fs, src, pdir, ndir);
	reparent(fs, dst, ndir, pdir);
	touch_c(src);
	touch_c(dst);
	touch_dir(pdir);
	if (ndir != pdir)
		touch_dir(ndir);
	return 0;
}

/* Called with ns_lock held exclusive. */
static int do_rename(struct tierfs *fs, struct tfs_inode *pdir,
		     const char *name, struct tfs_inode *ndir,
		     const char *newname, unsigned flags)
{
	struct dentry *sde, *dde;
	struct tfs_inode *src, *dst = NULL;
	int r;

	sde = dir_find(&pdir->i_dir, name);
	if (!sde)
		return -ENOENT;
	if (ndir->i_nlink == 0)
		return -ENOENT;
	dde = dir_find(&ndir->i_dir, newname);
	if (flags & RENAME_EXCHANGE) {
		if (!dde)
			return -ENOENT;
		return rename_exchange(fs, pdir, sde, ndir, dde);
	}
	src = sde->d_inode;
	if (dde) {
		dst = dde->d_inode;
		if (flags & RENAME_NOREPLACE)
			return -EEXIST;
		if (dst == src)
			return 0; /* two names of one file: POSIX says no-op */
		if (src->i_type == S_IFDIR && dst->i_type != S_IFDIR)
			return -ENOTDIR;
		if (src->i_type != S_IFDIR && dst->i_type == S_IFDIR)
			return -EISDIR;
		if (dst->i_type == S_IFDIR && !dir_is_empty(&dst->i_dir))
			return -ENOTEMPTY;
	}
	if (src->i_type == S_IFDIR && is_ancestor(fs, src, ndir))
		return -EINVAL;
	r = quota_cross(fs, src, pdir, ndir);
	if (r < 0)
		return r;

	if (dde) {
		dir_set_inode(dde, src, inode_sub(src));
	} else {
		r = dir_add(&ndir->i_dir, newname, src, inode_sub(src));
		if (r < 0)
			return r;
	}
	dir_remove(&pdir->i_dir, name, inode_sub(src));
	reparent(fs, src, pdir, ndir);
	touch_c(src);
	touch_dir(pdir);
	if (ndir != pdir)
		touch_dir(ndir);
	if (dst) {
		touch_c(dst);
		if (dst->i_type == S_IFDIR) {
			dst->i_dir.d_parent = fs->root;
			dst->i_dir.d_self = NULL;
			forget_parent(fs, dst, ndir);
			inode_link_drop(fs, ndir, 1);
			inode_link_drop(fs, dst, 2);
		} else {
			forget_parent(fs, dst, ndir);
			inode_link_drop(fs, dst, 1);
		}
	}
	return 0;
}

int ns_rename(struct tierfs *fs, struct tfs_inode *pdir, const char *name,
	      struct tfs_inode *ndir, const char *newname, unsigned flags)
{
	int r;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return -EINVAL;
	r = check_name(newname);
	if (r < 0)
		return r;
	pthread_rwlock_wrlock(&fs->ns_lock);
	r = do_rename(fs, pdir, name, ndir, newname, flags);
	pthread_rwlock_unlock(&fs->ns_lock);
	return r;
}

int ns_link(struct tierfs *fs, struct tfs_inode *inode, struct tfs_inode *dir,
	    const char *newname, struct stat *ret_st)
{
	int r = check_name(newname);

	if (r < 0)
		return r;
	if (inode->i_type == S_IFDIR)
		return -EPERM;
	pthread_rwlock_wrlock(&fs->ns_lock);
	if (dir->i_nlink == 0 || inode->i_nlink == 0) {
		r = -ENOENT;
	} else if (dir_find(&dir->i_dir, newname)) {
		r = -EEXIST;
	} else if (!quota_may_link(fs, inode, dir)) {
		r = -EXDEV; /* another quota tree (quota.h) */
	} else {
		/* a name costs inode units, as tmpfs charges each link to
		 * nr_inodes: the quotas' (EDQUOT), then the mount's */
		uint64_t units = inode_units(inode);

		r = quota_name_add(fs, dir, units);
		if (r == 0) {
			r = inode_charge(fs, units);
			if (r < 0)
				quota_name_del(fs, dir, units);
		}
		if (r == 0) {
			r = inode_parent_add(inode, dir);
			if (r == 0) {
				r = dir_add(&dir->i_dir, newname, inode,
					    inode_sub(inode));
				if (r < 0)
					inode_parent_del(inode, dir);
			}
			if (r < 0) {
				inode_uncharge(fs, units);
				quota_name_del(fs, dir, units);
			}
		}
	}
	if (r == 0) {
		inode_link_inc(fs, inode);
		policy_changed_inode(fs, inode); /* not a directory */
		touch_c(inode);
		touch_dir(dir);
		inode_lookup_ref(fs, inode);
		stat_inode(fs, inode, ret_st);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	return r;
}

/*
 * Is the caller in group @gid (primary or supplementary)?  Every
 * supplementary group counts, not only the first 64: getgroups says how
 * many there are, and a longer list is fetched again into a buffer of
 * that size (NGROUPS_MAX is 65536).  Out of memory, or a list that cannot
 * be read, answers "not in the group": for the sgid rule that clears the
 * bit, the safe side.
 */
static bool cred_in_group(const struct ns_cred *cred, gid_t gid)
{
	gid_t small[64], *groups = small;
	bool in = false;
	int n;

	if (cred->gid == gid)
		return true;
	n = cred->getgroups(cred->arg, (int)ARRAY_SIZE(small), small);
	if (n > (int)ARRAY_SIZE(small)) {
		int want = n;

		groups = malloc((size_t)want * sizeof(*groups));
		if (!groups)
			return false;
		n = cred->getgroups(cred->arg, want, groups);
		if (n > want)
			n = want; /* grew in between: what was read */
	}
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			in = true;
	if (groups != small)
		free(groups);
	return in;
}

bool ns_kill_suidgid(struct tierfs *fs, struct tfs_inode *inode,
		     const struct ns_cred *cred, bool capable)
{
	bool in_group = true, changed = false;
	mode_t mode;
	gid_t gid;

	if (inode->i_type == S_IFDIR)
		return false;
	pthread_mutex_lock(&inode->i_lock);
	mode = inode->i_mode;
	gid = inode->i_gid;
	if (!(mode & (S_ISUID | S_ISGID)) && inode->i_nxattrs == 0) {
		/* the common case: every write by a user without CAP_FSETID */
		pthread_mutex_unlock(&inode->i_lock);
		return false;
	}
	pthread_mutex_unlock(&inode->i_lock);
	/* reads /proc: only for the rare sgid-without-group-execute file */
	if ((mode & S_ISGID) && !(mode & S_IXGRP) && !capable)
		in_group = cred_in_group(cred, gid);

	pthread_mutex_lock(&inode->i_lock);
	mode = inode->i_mode & ~S_ISUID;
	if ((mode & S_IXGRP) || !in_group)
		mode &= ~S_ISGID;
	if (xattr_drop_locked(inode, "security.capability") ||
	    mode != inode->i_mode) {
		inode->i_mode = mode;
		inode_touch(inode, false, true);
		changed = true;
	}
	pthread_mutex_unlock(&inode->i_lock);
	return changed;
}

bool ns_kill_suidgid_unflagged(struct tierfs *fs, struct tfs_inode *inode,
			       const struct ns_cred *cred)
{
	if (fs->killpriv_v2 && cred->uid != 0)
		return ns_kill_suidgid(fs, inode, cred, false);
	return false;
}

/*
 * A setattr that comes from chown(2), or from the kernel's own attempt to
 * remove privileges, whose mode change it dropped under killpriv_v2:
 * uid or gid and no mode; or nothing but ctime (chown with both ids -1,
 * which still clears suid/sgid on Linux, with the writeback cache); or
 * nothing at all (the same without it).  Nothing else sends these two.
 */
static bool is_chown(int to_set)
{
	if (to_set & FUSE_SET_ATTR_MODE)
		return false;
	return (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) ||
	       to_set == FUSE_SET_ATTR_CTIME || to_set == 0;
}

int ns_setattr(struct tierfs *fs, struct tfs_inode *inode,
	       const struct stat *attr, int to_set, bool kill,
	       const struct ns_cred *cred)
{
	struct timespec now = now_ts();
	int r;

	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (inode->i_type == S_IFDIR)
			return -EISDIR;
		if (inode->i_type != S_IFREG)
			return -EINVAL;
		if (attr->st_size < 0)
			return -EINVAL;
		r = data_truncate(fs, inode, (uint64_t)attr->st_size);
		if (r < 0)
			return r;
	}
	/*
	 * killpriv_v2: the kernel asks us to clear suid/sgid on a truncate
	 * by a caller without CAP_FSETID, and drops the mode change of a
	 * chown, which always clears them (the sgid rule sees the old group).
	 */
	if (kill && (to_set & FUSE_SET_ATTR_SIZE))
		(void)ns_kill_suidgid(fs, inode, cred, false);
	else if (fs->killpriv_v2 && is_chown(to_set))
		(void)ns_kill_suidgid(fs, inode, cred, cred->uid == 0);
	pthread_mutex_lock(&inode->i_lock);
	if (to_set & FUSE_SET_ATTR_MODE)
		inode->i_mode = attr->st_mode & 07777;
	/* placement depends on owners (a directory's policy governs only
	 * its owner's files): a new owner re-resolves every policy */
	if ((to_set & FUSE_SET_ATTR_UID) && inode->i_uid != attr->st_uid)
		policy_changed(fs);
	if (to_set & FUSE_SET_ATTR_UID)
		inode->i_uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		inode->i_gid = attr->st_gid;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		tfs_time_set(&inode->i_atime, now);
	else if (to_set & FUSE_SET_ATTR_ATIME)
		tfs_time_set(&inode->i_atime, attr->st_atim);
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		tfs_time_set(&inode->i_mtime, now);
	else if (to_set & FUSE_SET_ATTR_MTIME)
		tfs_time_set(&inode->i_mtime, attr->st_mtim);
	if (to_set & FUSE_SET_ATTR_CTIME)
		tfs_time_set(&inode->i_ctime, attr->st_ctim);
	else
		tfs_time_set(&inode->i_ctime, now);
	pthread_mutex_unlock(&inode->i_lock);
	return 0;
}

unsigned ns_readdir(struct tierfs *fs, struct tfs_inode *dir,
		    uint64_t cookie, uint64_t *limit, ns_filldir_t fill,
		    void *arg)
{
	unsigned n = 0;
	struct dentry *de;

	pthread_rwlock_rdlock(&fs->ns_lock);
	/*
	 * A listing shows the entries that existed when it started (at
	 * offset 0: opendir or rewinddir), never ones created meanwhile,
	 * as tmpfs does: a program that creates a file for each one it
	 * sees, or renames each, must still reach the end.
	 */
	if (cookie == 0 || *limit == 0)
		*limit = dir->i_dir.d_next_cookie;
	if (cookie < 1) {
		if (!fill(arg, ".", NULL, dir->i_ino, S_IFDIR, 1))
			goto out;
		n++;
	}
	if (cookie < 2) {
		if (!fill(arg, "..", NULL, dir->i_dir.d_parent->i_ino,
			  S_IFDIR, 2))
			goto out;
		n++;
	}
	for (de = dir_next(&dir->i_dir, MAX(cookie, 2));
	     de && de->d_cookie < *limit;
	     de = dir_next(&dir->i_dir, de->d_cookie)) {
		if (!fill(arg, de->d_name, de->d_inode, de->d_inode->i_ino,
			  de->d_inode->i_type, de->d_cookie))
			break;
		n++;
	}
out:
	pthread_rwlock_unlock(&fs->ns_lock);
	return n;
}
