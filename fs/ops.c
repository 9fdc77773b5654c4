// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ops.c -- the FUSE low-level handlers.  Each one decodes the request,
 * calls into inode/dir/data/xattr code (which returns -errno), drops every
 * lock, and only then replies: a reply may be the kernel's last reference
 * to an inode, after which a forget may free it.
 *
 * Node ids: the kernel's node id for an inode is the inode's address
 * (FUSE_ROOT_ID stands for the root), which saves a table lookup per
 * request; st_ino is the inode's own counter, stable and never reused
 * within a mount, and doubles as the generation number so that a reused
 * address is never mistaken for an old inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kernel.h"
#include "migrate.h"
#include "ops.h"
#include "reply.h"
#include "tierfs.h"
#include "macro.h"
#include "log.h"
#include "banned.h"

/*
 * Every change to a tierfs file passes through this kernel, so what the
 * kernel caches cannot go stale behind its back: cache names, attributes
 * and pages generously.
 */
#define ENTRY_TIMEOUT 1.0
#define ATTR_TIMEOUT 1.0

/* Pieces of one zero-copy read reply (writev allows 1024, with libfuse's
 * header in front). */
#define READ_IOV_MAX 256

static struct tierfs *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct tfs_inode *ino_get(fuse_req_t req, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return req_fs(req)->root;
	return (struct tfs_inode *)(uintptr_t)ino;
}

static fuse_ino_t node_id(struct tierfs *fs, struct tfs_inode *inode)
{
	return inode == fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)inode;
}

static void fill_entry(struct tierfs *fs, struct tfs_inode *inode,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = node_id(fs, inode);
	e->generation = inode->i_ino;
	e->attr_timeout = ATTR_TIMEOUT;
	e->entry_timeout = ENTRY_TIMEOUT;
	pthread_mutex_lock(&inode->i_lock);
	inode_fill_stat(fs, inode, &e->attr);
	pthread_mutex_unlock(&inode->i_lock);
}

static int check_name(const char *name)
{
	return strlen(name) > NAME_MAX ? -ENAMETOOLONG : 0;
}

static void tfs_init(void *userdata, struct fuse_conn_info *conn)
{
	conn->max_write = TIERFS_MAX_IO;
	conn->max_readahead = TIERFS_MAX_IO;
	/* we do not implement readdirplus; plain readdir + cached lookups */
	conn->want &= ~FUSE_CAP_READDIRPLUS;
	/*
	 * Every change comes through this kernel, so its page cache is never
	 * stale: do not let an mtime seen in a later getattr throw it away.
	 */
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	/*
	 * No atomic O_TRUNC: with it the kernel leaves clearing suid/sgid on
	 * a truncating open to us, and only it knows whether the caller has
	 * CAP_FSETID.  Without it, it sends a setattr that already says.
	 */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;

	/*
	 * The migrator starts here, not in main(): this runs after
	 * fuse_daemonize() forked, and threads do not survive a fork.
	 */
	struct tierfs *fs = userdata;
	int r;

	/* killpriv_v2, the writeback cache, the bdi: see kernel.h */
	kernel_init(fs, conn);

	if (!fs->opt.no_migrate && fs->ntiers > 1) {
		r = migrator_start(fs);
		if (r < 0)
			log_err("cannot start the migrator: %s; data stays where it lands",
				strerror(-r));
	}
}

static void tfs_destroy(void *userdata)
{
	migrator_stop(userdata);
	kernel_stop(userdata);
}

/*
 * Reply with an entry whose lookup we counted.  If the kernel no longer
 * wants it (the request was interrupted: the reply fails with ENOENT), it
 * will never send the forget for it, so we drop the count ourselves.
 */
static void reply_entry_counted(fuse_req_t req, struct fuse_entry_param *e)
{
	if (fuse_reply_entry(req, e) == -ENOENT && e->ino &&
	    e->ino != FUSE_ROOT_ID) /* the root is never forgotten */
		inode_forget(req_fs(req), ino_get(req, e->ino), 1);
}

static void tfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct tierfs *fs = req_fs(req);
	struct tfs_inode *dir = ino_get(req, parent);
	struct fuse_entry_param e;
	struct dentry *de;
	int r = check_name(name);

	if (r < 0)
		return tierfs_reply_err(req, r);
	pthread_rwlock_rdlock(&fs->ns_lock);
	de = dir->i_type == S_IFDIR ? dir_find(&dir->i_dir, name) : NULL;
	if (!de) {
		pthread_rwlock_unlock(&fs->ns_lock);
		if (dir->i_type != S_IFDIR)
			return tierfs_reply_err(req, -ENOTDIR);
		/* a negative entry: the kernel may cache the absence too */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = ENTRY_TIMEOUT;
		fuse_reply_entry(req, &e);
		return;
	}
	inode_lookup_ref(fs, de->d_inode);
	fill_entry(fs, de->d_inode, &e);
	pthread_rwlock_unlock(&fs->ns_lock);
	reply_entry_counted(req, &e);
}

static void tfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct tierfs *fs = req_fs(req);

	if (ino != FUSE_ROOT_ID)
		inode_forget(fs, ino_get(req, ino), nlookup);
	fuse_reply_none(req);
}

static void tfs_forget_multi(fuse_req_t req, size_t count,
			     struct fuse_forget_data *forgets)
{
	struct tierfs *fs = req_fs(req);

	for (size_t i = 0; i < count; i++)
		if (forgets[i].ino != FUSE_ROOT_ID)
			inode_forget(fs, ino_get(req, forgets[i].ino),
				     forgets[i].nlookup);
	fuse_reply_none(req);
}

static void reply_attr(fuse_req_t req, struct tfs_inode *inode)
{
	struct stat st;

	pthread_mutex_lock(&inode->i_lock);
	inode_fill_stat(req_fs(req), inode, &st);
	pthread_mutex_unlock(&inode->i_lock);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void tfs_getattr(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	reply_attr(req, ino_get(req, ino));
}

/* Is the caller in group @gid (primary or supplementary)? */
static bool caller_in_group(fuse_req_t req, gid_t gid)
{
	gid_t groups[64];
	int n;

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	n = fuse_req_getgroups(req, (int)ARRAY_SIZE(groups), groups);
	for (int i = 0; i < n && i < (int)ARRAY_SIZE(groups); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/*
 * What a local filesystem does to a file on a write or truncate by a
 * caller without CAP_FSETID, and on any chown: clear suid; clear sgid
 * if group execute is set, or if the caller is neither in the file's
 * group nor @capable; drop security.capability.  Under killpriv_v2 the
 * kernel leaves this to us (kernel.h).  Takes i_lock.
 */
static void kill_suidgid(fuse_req_t req, struct tfs_inode *inode,
			 bool capable)
{
	bool in_group = true;
	mode_t mode;
	gid_t gid;

	if (inode->i_type == S_IFDIR)
		return;
	pthread_mutex_lock(&inode->i_lock);
	mode = inode->i_mode;
	gid = inode->i_gid;
	if (!(mode & (S_ISUID | S_ISGID)) && inode->i_nxattrs == 0) {
		/* the common case: every write by a user without CAP_FSETID */
		pthread_mutex_unlock(&inode->i_lock);
		return;
	}
	pthread_mutex_unlock(&inode->i_lock);
	/* reads /proc: only for the rare sgid-without-group-execute file */
	if ((mode & S_ISGID) && !(mode & S_IXGRP) && !capable)
		in_group = caller_in_group(req, gid);

	pthread_mutex_lock(&inode->i_lock);
	mode = inode->i_mode & ~S_ISUID;
	if ((mode & S_IXGRP) || !in_group)
		mode &= ~S_ISGID;
	if (xattr_drop_locked(inode, "security.capability") ||
	    mode != inode->i_mode) {
		inode->i_mode = mode;
		inode_touch(inode, false, true);
	}
	pthread_mutex_unlock(&inode->i_lock);
}

/*
 * fallocate and copy_file_range change data too, but the kernel sends no
 * kill flag with them under killpriv_v2 (and no longer clears the bits
 * itself): decide from the caller, taking uid 0 for CAP_FSETID.
 */
static void kill_suidgid_unflagged(fuse_req_t req, struct tfs_inode *inode)
{
	if (req_fs(req)->killpriv_v2 && fuse_req_ctx(req)->uid != 0)
		kill_suidgid(req, inode, false);
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

static void tfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			int to_set, struct fuse_file_info *fi)
{
	struct tierfs *fs = req_fs(req);
	struct tfs_inode *inode = ino_get(req, ino);
	struct timespec now = now_ts();
	int r;

	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (inode->i_type == S_IFDIR)
			return tierfs_reply_err(req, -EISDIR);
		if (inode->i_type != S_IFREG)
			return tierfs_reply_err(req, -EINVAL);
		if (attr->st_size < 0)
			return tierfs_reply_err(req, -EINVAL);
		r = data_truncate(fs, inode, (uint64_t)attr->st_size);
		if (r < 0)
			return tierfs_reply_err(req, r);
	}
	/*
	 * killpriv_v2: the kernel asks us to clear suid/sgid on a truncate
	 * by a caller without CAP_FSETID, and drops the mode change of a
	 * chown, which always clears them (the sgid rule sees the old group).
	 */
	if (kernel_req_kill_suidgid() && (to_set & FUSE_SET_ATTR_SIZE))
		kill_suidgid(req, inode, false);
	else if (fs->killpriv_v2 && is_chown(to_set))
		kill_suidgid(req, inode, fuse_req_ctx(req)->uid == 0);
	pthread_mutex_lock(&inode->i_lock);
	if (to_set & FUSE_SET_ATTR_MODE)
		inode->i_mode = attr->st_mode & 07777;
	if (to_set & FUSE_SET_ATTR_UID)
		inode->i_uid = attr->st_uid;
	if (to_set & FUSE_SET_ATTR_GID)
		inode->i_gid = attr->st_gid;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		inode->i_atime = now;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		inode->i_atime = attr->st_atim;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		inode->i_mtime = now;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		inode->i_mtime = attr->st_mtim;
	if (to_set & FUSE_SET_ATTR_CTIME)
		inode->i_ctime = attr->st_ctim;
	else
		inode->i_ctime = now;
	pthread_mutex_unlock(&inode->i_lock);
	reply_attr(req, inode);
}

static void tfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct tfs_inode *inode = ino_get(req, ino);

	if (inode->i_type != S_IFLNK)
		return tierfs_reply_err(req, -EINVAL);
	/* i_link is immutable after creation */
	fuse_reply_readlink(req, inode->i_link);
}

/*
 * Make a new inode named @name in @parent.  @mode carries the type.
 * On success *ret_e describes it, with one kernel lookup counted.
 */
static int make_node(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev, const char *link,
		     struct fuse_entry_param *ret_e)
{
	struct tierfs *fs = req_fs(req);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct tfs_inode *dir = ino_get(req, parent);
	struct tfs_inode *inode;
	gid_t gid = ctx->gid;
	int r = check_name(name);

	if (r < 0)
		return r;
	if (link && strlen(link) >= PATH_MAX)
		return -ENAMETOOLONG;
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

	inode = inode_new(fs, mode, ctx->uid, gid, rdev);
	if (!inode) {
		r = -ENOMEM;
		goto out_unlock;
	}
	/* not yet visible to anyone: no lock needed for these */
	if (S_ISDIR(mode)) {
		r = dir_init(&inode->i_dir, dir);
		inode->i_nlink = 2;
	} else if (S_ISLNK(mode)) {
		inode->i_link = strdup(link);
		r = inode->i_link ? 0 : -ENOMEM;
		inode->i_nlink = 1;
	} else {
		inode->i_nlink = 1;
	}
	if (r == 0 && !S_ISDIR(mode))
		r = inode_parent_add(inode, dir);
	if (r == 0)
		r = dir_add(&dir->i_dir, name, inode);
	if (r < 0) {
		inode_link_drop(fs, inode, inode->i_nlink);
		goto out_unlock;
	}
	if (S_ISDIR(mode))
		inode_link_inc(fs, dir);
	pthread_mutex_lock(&dir->i_lock);
	inode_touch(dir, true, true);
	pthread_mutex_unlock(&dir->i_lock);
	inode_lookup_ref(fs, inode);
	fill_entry(fs, inode, ret_e);
out_unlock:
	pthread_rwlock_unlock(&fs->ns_lock);
	return r;
}

static void reply_new_entry(fuse_req_t req, int r, struct fuse_entry_param *e)
{
	if (r < 0)
		return tierfs_reply_err(req, r);
	reply_entry_counted(req, e);
}

static void tfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, dev_t rdev)
{
	struct fuse_entry_param e;
	int r;

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
		return tierfs_reply_err(req, -EINVAL);
	}
	r = make_node(req, parent, name, mode, rdev, NULL, &e);
	reply_new_entry(req, r, &e);
}

static void tfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode)
{
	struct fuse_entry_param e;
	int r = make_node(req, parent, name, S_IFDIR | (mode & 07777), 0,
			  NULL, &e);

	reply_new_entry(req, r, &e);
}

static void tfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			const char *name)
{
	struct fuse_entry_param e;
	int r = make_node(req, parent, name, S_IFLNK | 0777, 0, link, &e);

	reply_new_entry(req, r, &e);
}

/*
 * With the writeback cache, a write(2) is done once the page cache has
 * it, and an error of the later writeback reaches the program only at
 * fsync or close.  So a file opened for writing when less free space is
 * left (on the tiers its policy allows) than the cache may hold dirty is
 * opened write-through: each write(2) then gets its ENOSPC itself.
 */
static void set_write_mode(fuse_req_t req, struct tfs_inode *inode,
			   struct fuse_file_info *fi)
{
	struct tierfs *fs = req_fs(req);
	struct statvfs st;

	if (!fs->writeback || (fi->flags & O_ACCMODE) == O_RDONLY)
		return;
	placement_statfs(fs, inode, &st);
	if (kernel_space_low(fs, (uint64_t)st.f_bavail * st.f_frsize))
		fi->direct_io = 1;
}

static void tfs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		       mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	int r = make_node(req, parent, name, S_IFREG | (mode & 07777), 0,
			  NULL, &e);

	if (r < 0)
		return tierfs_reply_err(req, r);
	fi->keep_cache = 1;
	set_write_mode(req, ino_get(req, e.ino), fi);
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		/* the open was interrupted: undo the lookup we counted */
		inode_forget(req_fs(req), ino_get(req, e.ino), 1);
	}
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
 * Called with ns_lock held exclusive.
 */
static void forget_parent(struct tierfs *fs, struct tfs_inode *inode,
			  struct tfs_inode *dir)
{
	if (inode->i_type != S_IFDIR) {
		inode_parent_del(inode, dir);
		policy_changed(fs);
	}
}

static void tfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct tierfs *fs = req_fs(req);
	struct tfs_inode *dir = ino_get(req, parent);
	struct tfs_inode *inode = NULL;
	struct dentry *de;
	int r = check_name(name);

	if (r < 0)
		return tierfs_reply_err(req, r);
	pthread_rwlock_wrlock(&fs->ns_lock);
	de = dir_find(&dir->i_dir, name);
	if (!de) {
		r = -ENOENT;
	} else if (de->d_inode->i_type == S_IFDIR) {
		r = -EISDIR;
	} else {
		inode = dir_remove(&dir->i_dir, name);
		touch_dir(dir);
		touch_c(inode);
		forget_parent(fs, inode, dir);
		inode_link_drop(fs, inode, 1);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	tierfs_reply_err(req, r);
}

static void tfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct tierfs *fs = req_fs(req);
	struct tfs_inode *dir = ino_get(req, parent);
	struct tfs_inode *inode;
	struct dentry *de;
	int r = check_name(name);

	if (r < 0)
		return tierfs_reply_err(req, r);
	pthread_rwlock_wrlock(&fs->ns_lock);
	de = dir_find(&dir->i_dir, name);
	if (!de) {
		r = -ENOENT;
	} else if (de->d_inode->i_type != S_IFDIR) {
		r = -ENOTDIR;
	} else if (!dir_is_empty(&de->d_inode->i_dir)) {
		r = -ENOTEMPTY;
	} else {
		inode = dir_remove(&dir->i_dir, name);
		touch_dir(dir);
		touch_c(inode);
		/* a removed directory may outlive its parent: point ".." and
		 * policy lookups at the root, never at a freed inode */
		inode->i_dir.d_parent = fs->root;
		policy_changed(fs);
		inode_link_drop(fs, dir, 1);
		inode_link_drop(fs, inode, 2);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	tierfs_reply_err(req, r);
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

/* Moving directory @child from @from to @to: fix ".." and link counts.
 * Called with ns_lock held exclusive. */
static void reparent(struct tierfs *fs, struct tfs_inode *child,
		     struct tfs_inode *from, struct tfs_inode *to)
{
	/* the new name's directory governs the policy from now on */
	policy_changed(fs);
	if (child->i_type != S_IFDIR) {
		inode_parent_move(child, from, to);
		return;
	}
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

	if (src->i_type == S_IFDIR && is_ancestor(fs, src, ndir))
		return -EINVAL;
	if (dst->i_type == S_IFDIR && is_ancestor(fs, dst, pdir))
		return -EINVAL;
	dir_set_inode(sde, dst);
	dir_set_inode(dde, src);
	reparent(fs, src, pdir, ndir);
	reparent(fs, dst, ndir, pdir);
	touch_c(src);
	touch_c(dst);
	touch_dir(pdir);
	if (ndir != pdir)
		touch_dir(ndir);
	return 0;
}

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

	if (dde) {
		dir_set_inode(dde, src);
	} else {
		r = dir_add(&ndir->i_dir, newname, src);
		if (r < 0)
			return r;
	}
	dir_remove(&pdir->i_dir, name);
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
			inode_link_drop(fs, ndir, 1);
			inode_link_drop(fs, dst, 2);
		} else {
			forget_parent(fs, dst, ndir);
			inode_link_drop(fs, dst, 1);
		}
	}
	return 0;
}

static void tfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		       fuse_ino_t newparent, const char *newname,
		       unsigned int flags)
{
	struct tierfs *fs = req_fs(req);
	int r;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return tierfs_reply_err(req, -EINVAL);
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return tierfs_reply_err(req, -EINVAL);
	r = check_name(newname);
	if (r < 0)
		return tierfs_reply_err(req, r);
	pthread_rwlock_wrlock(&fs->ns_lock);
	r = do_rename(fs, ino_get(req, parent), name, ino_get(req, newparent),
		      newname, flags);
	pthread_rwlock_unlock(&fs->ns_lock);
	tierfs_reply_err(req, r);
}

static void tfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		     const char *newname)
{
	struct tierfs *fs = req_fs(req);
	struct tfs_inode *inode = ino_get(req, ino);
	struct tfs_inode *dir = ino_get(req, newparent);
	struct fuse_entry_param e;
	int r = check_name(newname);

	if (r < 0)
		return tierfs_reply_err(req, r);
	if (inode->i_type == S_IFDIR)
		return tierfs_reply_err(req, -EPERM);
	pthread_rwlock_wrlock(&fs->ns_lock);
	if (dir->i_nlink == 0 || inode->i_nlink == 0) {
		r = -ENOENT;
	} else if (dir_find(&dir->i_dir, newname)) {
		r = -EEXIST;
	} else {
		r = inode_parent_add(inode, dir);
		if (r == 0) {
			r = dir_add(&dir->i_dir, newname, inode);
			if (r < 0)
				inode_parent_del(inode, dir);
		}
	}
	if (r == 0) {
		inode_link_inc(fs, inode);
		policy_changed(fs);
		touch_c(inode);
		touch_dir(dir);
		inode_lookup_ref(fs, inode);
		fill_entry(fs, inode, &e);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	reply_new_entry(req, r, &e);
}

static void tfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);

	if (inode->i_type == S_IFDIR)
		return tierfs_reply_err(req, -EISDIR);
	/* O_TRUNC comes as a setattr first: see tfs_init() */
	/* all changes come through this kernel: keep its page cache */
	fi->keep_cache = 1;
	set_write_mode(req, inode, fi);
	fuse_reply_open(req, fi);
}

/*
 * Per-thread read buffer, sized to the largest request seen; freed by
 * the key destructor when a loop thread exits.  Owned by its thread.
 */
static pthread_key_t rbuf_key;
static pthread_once_t rbuf_once = PTHREAD_ONCE_INIT;

struct rbuf {
	size_t size;
	char data[];
};

static void rbuf_key_init(void)
{
	(void)pthread_key_create(&rbuf_key, free);
}

static char *rbuf_get(size_t size)
{
	struct rbuf *b;

	pthread_once(&rbuf_once, rbuf_key_init);
	b = pthread_getspecific(rbuf_key);
	if (b && b->size >= size)
		return b->data;
	free(b);
	b = malloc(sizeof(*b) + MAX(size, (size_t)TIERFS_MAX_IO));
	if (b)
		b->size = MAX(size, (size_t)TIERFS_MAX_IO);
	(void)pthread_setspecific(rbuf_key, b);
	return b ? b->data : NULL;
}

/* relatime: update atime only if it is older than mtime/ctime or a day */
static void touch_atime(struct tfs_inode *inode)
{
	struct timespec now = now_ts();

	pthread_mutex_lock(&inode->i_lock);
	if (inode->i_atime.tv_sec <= inode->i_mtime.tv_sec ||
	    inode->i_atime.tv_sec <= inode->i_ctime.tv_sec ||
	    now.tv_sec - inode->i_atime.tv_sec >= 24 * 3600)
		inode->i_atime = now;
	pthread_mutex_unlock(&inode->i_lock);
}

static void tfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);
	char *buf = rbuf_get(size);
	ssize_t r;

	struct iovec iov[READ_IOV_MAX];
	unsigned niov;
	int rr;

	if (!buf)
		return tierfs_reply_err(req, -ENOMEM);
	/*
	 * Zero copy from RAM: the reply's iovecs point into the tier, so the
	 * data lock stays held (shared) across the reply.  This is the one
	 * reply sent under a lock, and it is safe: a read comes on an open
	 * file, so this reply cannot be the kernel's last reference (the
	 * rule in tierfs.h), and writers wait only for this writev.
	 */
	rr = data_read_begin(req_fs(req), inode, buf, size, (uint64_t)off,
			     iov, READ_IOV_MAX, &niov);
	if (rr == 0) {
		fuse_reply_iov(req, iov, (int)niov);
		data_read_end(inode);
		touch_atime(inode);
		return;
	}
	if (rr != -E2BIG)
		return tierfs_reply_err(req, rr);
	r = data_read(req_fs(req), inode, buf, size, (uint64_t)off);
	if (r < 0)
		return tierfs_reply_err(req, (int)r);
	touch_atime(inode);
	fuse_reply_buf(req, buf, (size_t)r);
}

/*
 * A write that the kernel's writeback sent (the program's write(2) is
 * long done) failed for [@off, @off+@len): the kernel keeps the error for
 * the file's next fsync or close; we remember the range as lost, count
 * it and say which file, at most once a second.
 */
static void writeback_failed(struct tierfs *fs, struct tfs_inode *inode,
			     int err, uint64_t off, uint64_t len)
{
	static int64_t last; /* relaxed atomic: seconds of the last message */
	int64_t now = now_ts().tv_sec;
	int64_t prev = __atomic_load_n(&last, __ATOMIC_RELAXED);
	char *path;

	__atomic_add_fetch(&fs->wb_errors, 1, __ATOMIC_RELAXED);
	/* once the kernel drops its copy, reads of these bytes fail: EIO,
	 * never zeros or older data */
	if (data_mark_lost(fs, inode, off, len) < 0)
		log_err("cannot record a failed writeback: out of memory");
	if (prev == now ||
	    !__atomic_compare_exchange_n(&last, &prev, now, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	path = inode_path(fs, inode);
	log_err("writeback of '%s' failed: %s; the error goes to its next fsync or close",
		path ? path : "?", strerror(-err));
	free(path);
}

static void tfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct tierfs *fs = req_fs(req);
	struct tfs_inode *inode = ino_get(req, ino);
	ssize_t r;

	/* before the data, as a local filesystem does */
	if (kernel_req_kill_suidgid())
		kill_suidgid(req, inode, false);
	r = data_write(fs, inode, buf, size, (uint64_t)off);
	if (fi->writepage && (r < 0 || (size_t)r < size)) {
		/* a short writeback is a failed one: the kernel keeps no
		 * count, only the error (no room is the usual reason) */
		uint64_t stored = r > 0 ? (uint64_t)r : 0;
		int err = r < 0 ? (int)r : -ENOSPC;

		writeback_failed(fs, inode, err, (uint64_t)off + stored,
				 size - stored);
		return tierfs_reply_err(req, err);
	}
	if (r < 0)
		return tierfs_reply_err(req, (int)r);
	fuse_reply_write(req, (size_t)r);
}

static void tfs_flush(fuse_req_t req, fuse_ino_t ino,
		      struct fuse_file_info *fi)
{
	tierfs_reply_err(req, 0);
}

static void tfs_release(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	tierfs_reply_err(req, 0);
}

/* Scratch semantics: there is nothing to keep after unmount, so fsync
 * succeeds without forcing data to a device (README says so). */
static void tfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		      struct fuse_file_info *fi)
{
	tierfs_reply_err(req, 0);
}

/*
 * An open directory: the cookie limit of the listing under way.  Owned
 * by the handle (opendir to releasedir); the kernel serialises readdir
 * calls on one open directory, so it needs no lock.
 */
struct dir_handle {
	uint64_t limit; /* entries with this cookie or later are newer */
};

static void tfs_opendir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);

	struct dir_handle *dh;

	if (inode->i_type != S_IFDIR)
		return tierfs_reply_err(req, -ENOTDIR);
	dh = calloc(1, sizeof(*dh));
	if (!dh)
		return tierfs_reply_err(req, -ENOMEM);
	fi->fh = (uintptr_t)dh;
	fi->cache_readdir = 0;
	if (fuse_reply_open(req, fi) == -ENOENT)
		free(dh); /* interrupted: no releasedir will come */
}

static void tfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	struct tierfs *fs = req_fs(req);
	struct tfs_inode *dir = ino_get(req, ino);
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;
	char *buf = malloc(size);
	size_t pos = 0;
	struct stat st;
	struct dentry *de;
	uint64_t cookie = off < 0 ? 0 : (uint64_t)off;

	if (!buf)
		return tierfs_reply_err(req, -ENOMEM);
	memset(&st, 0, sizeof(st));
	pthread_rwlock_rdlock(&fs->ns_lock);
	/*
	 * A listing shows the entries that existed when it started (at
	 * offset 0: opendir or rewinddir), never ones created meanwhile,
	 * as tmpfs does: a program that creates a file for each one it
	 * sees, or renames each, must still reach the end.
	 */
	if (cookie == 0 || dh->limit == 0)
		dh->limit = dir->i_dir.d_next_cookie;
	if (cookie < 1) {
		st.st_ino = dir->i_ino;
		st.st_mode = S_IFDIR;
		pos += fuse_add_direntry(req, buf + pos, size - pos, ".", &st,
					 1);
	}
	if (cookie < 2) {
		size_t n;

		st.st_ino = dir->i_dir.d_parent->i_ino;
		st.st_mode = S_IFDIR;
		n = fuse_add_direntry(req, buf + pos, size - pos, "..", &st,
				      2);
		if (n > size - pos)
			goto out;
		pos += n;
	}
	for (de = dir_next(&dir->i_dir, MAX(cookie, 2));
	     de && de->d_cookie < dh->limit;
	     de = dir_next(&dir->i_dir, de->d_cookie)) {
		size_t n;

		st.st_ino = de->d_inode->i_ino;
		st.st_mode = de->d_inode->i_type;
		n = fuse_add_direntry(req, buf + pos, size - pos, de->d_name,
				      &st, (off_t)de->d_cookie);
		if (n > size - pos)
			break;
		pos += n;
	}
out:
	pthread_rwlock_unlock(&fs->ns_lock);
	if (pos)
		touch_atime(dir);
	fuse_reply_buf(req, buf, pos);
	free(buf);
}

static void tfs_releasedir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	free((struct dir_handle *)(uintptr_t)fi->fh);
	tierfs_reply_err(req, 0);
}

static void tfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			 struct fuse_file_info *fi)
{
	tierfs_reply_err(req, 0);
}

static void tfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;

	/* df DIR: what DIR's policy lets a program write there */
	placement_statfs(req_fs(req), ino_get(req, ino), &st);
	fuse_reply_statfs(req, &st);
}

static void tfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 const char *value, size_t size, int flags)
{
	int r = xattr_set(req_fs(req), ino_get(req, ino), name, value, size,
			  flags, fuse_req_ctx(req)->uid);

	tierfs_reply_err(req, r);
}

static void tfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	ssize_t r;

	if (size && !buf)
		return tierfs_reply_err(req, -ENOMEM);
	r = xattr_get(req_fs(req), ino_get(req, ino), name, buf, size);
	if (r < 0)
		tierfs_reply_err(req, (int)r);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)r);
	else
		fuse_reply_buf(req, buf, (size_t)r);
	free(buf);
}

static void tfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	ssize_t r;

	if (size && !buf)
		return tierfs_reply_err(req, -ENOMEM);
	r = xattr_list(req_fs(req), ino_get(req, ino), buf, size);
	if (r < 0)
		tierfs_reply_err(req, (int)r);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)r);
	else
		fuse_reply_buf(req, buf, (size_t)r);
	free(buf);
}

static void tfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	tierfs_reply_err(req, xattr_remove(req_fs(req), ino_get(req, ino),
					   name, fuse_req_ctx(req)->uid));
}

static void tfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			  off_t offset, off_t length,
			  struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);

	if (inode->i_type != S_IFREG)
		return tierfs_reply_err(req, -ENODEV);
	if (offset < 0 || length <= 0)
		return tierfs_reply_err(req, -EINVAL);
	kill_suidgid_unflagged(req, inode);
	tierfs_reply_err(req, data_fallocate(req_fs(req), inode, mode,
					     (uint64_t)offset,
					     (uint64_t)length));
}

static void tfs_copy_file_range(fuse_req_t req, fuse_ino_t ino_in,
				off_t off_in, struct fuse_file_info *fi_in,
				fuse_ino_t ino_out, off_t off_out,
				struct fuse_file_info *fi_out, size_t len,
				int flags)
{
	ssize_t r;

	if (flags)
		return tierfs_reply_err(req, -EINVAL);
	kill_suidgid_unflagged(req, ino_get(req, ino_out));
	r = data_copy(req_fs(req), ino_get(req, ino_in), (uint64_t)off_in,
		      ino_get(req, ino_out), (uint64_t)off_out, len);
	if (r < 0)
		return tierfs_reply_err(req, (int)r);
	fuse_reply_write(req, (size_t)r);
}

static void tfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		      struct fuse_file_info *fi)
{
	uint64_t res;
	int r;

	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return tierfs_reply_err(req, -EINVAL);
	/*
	 * With the writeback cache the kernel may hold data (and a size)
	 * that has not reached us, and it does not write it back before
	 * asking: our answer could call written data a hole, or say ENXIO
	 * inside the file.  ENOSYS makes the kernel answer SEEK_DATA and
	 * SEEK_HOLE itself from then on, treating the whole file as data,
	 * which POSIX allows.  NEEDSWORK: sparse-aware answers for files
	 * with no cached writer.
	 */
	if (req_fs(req)->writeback)
		return tierfs_reply_err(req, -ENOSYS);
	if (off < 0)
		return tierfs_reply_err(req, -ENXIO);
	r = data_lseek(req_fs(req), ino_get(req, ino), (uint64_t)off, whence,
		       &res);
	if (r < 0)
		return tierfs_reply_err(req, r);
	fuse_reply_lseek(req, (off_t)res);
}

const struct fuse_lowlevel_ops tierfs_ops = {
	.init = tfs_init,
	.destroy = tfs_destroy,
	.lookup = tfs_lookup,
	.forget = tfs_forget,
	.forget_multi = tfs_forget_multi,
	.getattr = tfs_getattr,
	.setattr = tfs_setattr,
	.readlink = tfs_readlink,
	.mknod = tfs_mknod,
	.mkdir = tfs_mkdir,
	.symlink = tfs_symlink,
	.unlink = tfs_unlink,
	.rmdir = tfs_rmdir,
	.rename = tfs_rename,
	.link = tfs_link,
	.create = tfs_create,
	.open = tfs_open,
	.read = tfs_read,
	.write = tfs_write,
	.flush = tfs_flush,
	.release = tfs_release,
	.fsync = tfs_fsync,
	.opendir = tfs_opendir,
	.readdir = tfs_readdir,
	.releasedir = tfs_releasedir,
	.fsyncdir = tfs_fsyncdir,
	.statfs = tfs_statfs,
	.setxattr = tfs_setxattr,
	.getxattr = tfs_getxattr,
	.listxattr = tfs_listxattr,
	.removexattr = tfs_removexattr,
	.fallocate = tfs_fallocate,
	.copy_file_range = tfs_copy_file_range,
	.lseek = tfs_lseek,
};
