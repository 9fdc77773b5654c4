// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * attr.c -- the routing of attribute names to the modules they belong to
 * (attr.h).  One table, first match wins; each class says how its names
 * are read, set and removed.  The checks every name gets come first and
 * in the order the kernel's own filesystems make them: the namespace
 * (xattr_name_check()), a computed name (-EPERM to change), the size
 * (-E2BIG); then the class.
 */
#include <errno.h>
#include <string.h>
#include <linux/limits.h>
#include <sys/stat.h>

#include "attr.h"
#include "fs.h"
#include "inode.h"
#include "xattr.h"
#include "ctl.h"
#include "ctl_proto.h"
#include "migrate.h"
#include "placement.h"
#include "policy.h"
#include "quota.h"
#include "banned.h"

/* user.tierfs.* may be changed by the owner or root only. */
static bool may_change(struct tfs_inode *inode, uid_t uid)
{
	bool ok;

	if (uid == 0)
		return true;
	pthread_mutex_lock(&inode->i_lock);
	ok = inode->i_uid == uid;
	pthread_mutex_unlock(&inode->i_lock);
	return ok;
}

static bool prefixed(const char *name, const char *prefix)
{
	return !strncmp(name, prefix, strlen(prefix));
}

/* A policy attribute changed: cached policies are stale, and the
 * migrator may have data to move. */
static void policy_moved(struct tierfs *fs)
{
	policy_changed(fs);
	if (tierfs_mig(fs))
		migrator_kick(fs);
}

/* ---- the classes ---- */

static ssize_t get_stored(struct tierfs *fs, struct tfs_inode *inode,
			  const char *name, void *buf, size_t size,
			  const struct ns_cred *cred)
{
	(void)cred;
	return xattr_get(fs, inode, name, buf, size);
}

static int set_stored(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name, const void *value, size_t size,
		      int flags, uid_t uid)
{
	(void)uid;
	return xattr_set(fs, inode, name, value, size, flags);
}

static int remove_stored(struct tierfs *fs, struct tfs_inode *inode,
			 const char *name, uid_t uid)
{
	(void)uid;
	return xattr_remove(fs, inode, name);
}

/* computed: ctl.c makes the value; nobody sets or removes one */
static bool is_computed(const char *name)
{
	return ctl_xattr_is_computed(name);
}

static ssize_t get_computed(struct tierfs *fs, struct tfs_inode *inode,
			    const char *name, void *buf, size_t size,
			    const struct ns_cred *cred)
{
	return ctl_xattr_get_as(fs, inode, name, buf, size, cred);
}

/* actions: a set is a request to ctl.c; nothing is stored */
static bool is_action(const char *name)
{
	return prefixed(name, TIERFS_XATTR_CTL);
}

static int set_action(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name, const void *value, size_t size,
		      int flags, uid_t uid)
{
	(void)flags;
	if (!may_change(inode, uid))
		return -EPERM;
	return ctl_xattr_set(fs, inode, name, value, size, uid);
}

static int remove_owned(struct tierfs *fs, struct tfs_inode *inode,
			const char *name, uid_t uid)
{
	if (!may_change(inode, uid))
		return -EPERM;
	return xattr_remove(fs, inode, name);
}

/* the rest of user.tierfs.*: the four policy keys and nothing else */
static bool is_policy(const char *name)
{
	return prefixed(name, TIERFS_XATTR_PREFIX);
}

static int set_policy(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name, const void *value, size_t size,
		      int flags, uid_t uid)
{
	int r;

	if (!may_change(inode, uid))
		return -EPERM;
	if (policy_key_from_xattr(name) == _POLICY_KEY_INVALID)
		return -EINVAL; /* our namespace: no free-form names */
	if (inode->i_type != S_IFDIR && inode->i_type != S_IFREG)
		return -EINVAL;
	r = xattr_set(fs, inode, name, value, size, flags);
	if (r == 0)
		policy_moved(fs);
	return r;
}

static int remove_policy(struct tierfs *fs, struct tfs_inode *inode,
			 const char *name, uid_t uid)
{
	int r = remove_owned(fs, inode, name, uid);

	if (r == 0 && policy_key_from_xattr(name) != _POLICY_KEY_INVALID)
		policy_moved(fs);
	return r;
}

/* a directory's quota: quota.c checks and applies, xattr.c stores */
static bool is_quota(const char *name)
{
	return !strcmp(name, QUOTA_XATTR);
}

static int set_quota(struct tierfs *fs, struct tfs_inode *inode,
		     const char *name, const void *value, size_t size,
		     int flags, uid_t uid)
{
	int r = quota_xattr_check(fs, inode, name, value, size, uid);

	if (r == 0)
		r = xattr_set(fs, inode, name, value, size, flags);
	if (r == 0)
		quota_xattr_sync(fs, inode, name);
	return r;
}

static int remove_quota(struct tierfs *fs, struct tfs_inode *inode,
			const char *name, uid_t uid)
{
	int r = xattr_remove(fs, inode, name);

	(void)uid;
	if (r == 0)
		quota_xattr_sync(fs, inode, name); /* lifts it */
	return r;
}

static bool is_any(const char *name)
{
	(void)name;
	return true;
}

static const struct attr_class {
	bool (*match)(const char *name);
	/* NULL set/remove: the names are read-only (-EPERM) */
	ssize_t (*get)(struct tierfs *fs, struct tfs_inode *inode,
		       const char *name, void *buf, size_t size,
		       const struct ns_cred *cred);
	int (*set)(struct tierfs *fs, struct tfs_inode *inode,
		   const char *name, const void *value, size_t size,
		   int flags, uid_t uid);
	int (*remove)(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name, uid_t uid);
} classes[] = {
	{ is_computed, get_computed, NULL, NULL },
	{ is_action, get_stored, set_action, remove_owned },
	{ is_policy, get_stored, set_policy, remove_policy },
	{ is_quota, get_stored, set_quota, remove_quota },
	{ is_any, get_stored, set_stored, remove_stored },
};

static const struct attr_class *class_of(const char *name)
{
	size_t i = 0;

	while (!classes[i].match(name))
		i++; /* the last class matches every name */
	return &classes[i];
}

int attr_set(struct tierfs *fs, struct tfs_inode *inode, const char *name,
	     const void *value, size_t size, int flags, uid_t uid)
{
	const struct attr_class *c = class_of(name);
	int r = xattr_name_check(name);

	if (r < 0)
		return r;
	if (!c->set)
		return -EPERM;
	if (size > XATTR_SIZE_MAX)
		return -E2BIG;
	return c->set(fs, inode, name, value, size, flags, uid);
}

ssize_t attr_get(struct tierfs *fs, struct tfs_inode *inode,
		 const char *name, void *buf, size_t size,
		 const struct ns_cred *cred)
{
	return class_of(name)->get(fs, inode, name, buf, size, cred);
}

ssize_t attr_list(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		  size_t size)
{
	return xattr_list(fs, inode, buf, size);
}

int attr_remove(struct tierfs *fs, struct tfs_inode *inode, const char *name,
		uid_t uid)
{
	const struct attr_class *c = class_of(name);
	int r = xattr_name_check(name);

	if (r < 0)
		return r;
	if (!c->remove)
		return -EPERM;
	return c->remove(fs, inode, name, uid);
}
