// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xattr.c -- extended attributes stored with the inode: any name in the
 * user., trusted. and security. namespaces, and the policy attributes
 * user.tierfs.{tiers,pin,split,promote}, which are stored like the rest
 * and also parsed into the inode's policy.  Pure storage: which module a
 * name belongs to (computed values and actions to ctl.c, a quota to
 * quota.c), who may change user.tierfs.*, and what a policy change sets
 * off is attr.c's, above this one in the module graph.
 *
 * Stored attributes live in a small array under the inode's i_lock; the
 * kernel has already checked permissions (default_permissions) and the
 * namespace rules (no user.* on symlinks and devices) before a request
 * reaches us.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/limits.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "fs.h"
#include "inode.h"
#include "xattr.h"
#include "policy.h"
#include "never.h"
#include "banned.h"

static bool is_user(const char *name)
{
	return !strncmp(name, "user.", 5);
}

/* What @name with a value of @size charges to the mount (xattr.h). */
static uint64_t charge(const char *name, size_t size)
{
	return is_user(name) ? strlen(name) + 1 + size + XATTR_CHARGE_OVERHEAD
			     : 0;
}

/*
 * Room for @name with a value of @size on @inode, replacing @old (or
 * NULL): the per-inode limits.  Called with i_lock held.  Returns 0 or
 * -ENOSPC.
 */
static int inode_room(struct tfs_inode *inode, const char *name, size_t size,
		      const struct xattr *old)
{
	uint64_t bytes = size;
	uint32_t count = 1;

	if (!is_user(name))
		return 0;
	for (uint32_t i = 0; i < inode->i_nxattrs; i++) {
		const struct xattr *x = &inode->i_xattrs[i];

		if (x == old || !is_user(x->name))
			continue;
		count++;
		bytes += x->size;
	}
	if (count > XATTR_INODE_MAX_COUNT || bytes > XATTR_INODE_MAX_BYTES)
		return -ENOSPC;
	return 0;
}

/* Take @n bytes of the mount's xattr budget; 0 or -ENOSPC. */
static int mount_charge(struct tierfs *fs, uint64_t n)
{
	uint64_t max = fs->opt.max_xattr_bytes;

	if (!n)
		return 0;
	if (__atomic_add_fetch(&fs->xattr_bytes, n, __ATOMIC_RELAXED) > max &&
	    max) {
		__atomic_sub_fetch(&fs->xattr_bytes, n, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	return 0;
}

static void mount_uncharge(struct tierfs *fs, uint64_t n)
{
	if (n)
		__atomic_sub_fetch(&fs->xattr_bytes, n, __ATOMIC_RELAXED);
}

static struct xattr *find(struct tfs_inode *inode, const char *name)
{
	for (uint32_t i = 0; i < inode->i_nxattrs; i++)
		if (!strcmp(inode->i_xattrs[i].name, name))
			return &inode->i_xattrs[i];
	return NULL;
}

/*
 * 0 for a name we store, -EOPNOTSUPP for other namespaces (system.*
 * would be POSIX ACLs, which we do not implement) and -EINVAL for a bare
 * prefix such as "user.", as tmpfs answers.
 */
int xattr_name_check(const char *name)
{
	static const char *const ns[] = { "user.", "trusted.", "security." };

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		size_t n = strlen(ns[i]);

		if (!strncmp(name, ns[i], n))
			return name[n] ? 0 : -EINVAL;
	}
	return -EOPNOTSUPP;
}

/* Copy the @k part of @src into @dst (what policy_parse() of key @k
 * writes); the other parts of @dst stay. */
static void ipolicy_take(struct ipolicy *dst, const struct ipolicy *src,
			 enum policy_key k)
{
	switch (k) {
	case POLICY_TIERS:
		dst->has_tiers = src->has_tiers;
		memcpy(dst->tiers, src->tiers, sizeof(dst->tiers));
		dst->ntiers = src->ntiers;
		break;
	case POLICY_PIN:
		dst->has_pin = src->has_pin;
		dst->pin = src->pin;
		break;
	case POLICY_SPLIT:
		dst->has_split = src->has_split;
		dst->nsplit = src->nsplit;
		memcpy(dst->split, src->split, sizeof(dst->split));
		break;
	case POLICY_PROMOTE:
		dst->has_promote = src->has_promote;
		dst->promote = src->promote;
		break;
	case POLICY_IO:
		dst->has_io = src->has_io;
		dst->native = src->native;
		break;
	default:
		break;
	}
}

/*
 * Store @value under @name, all or nothing: every allocation is made
 * before the first change, so a failure leaves the attribute and the
 * policy as they were, and success is reported only once both are in
 * place.  @pk: the policy key of @name, whose value policy_parse() has
 * already parsed into @ip, or _POLICY_KEY_INVALID.
 */
static int store(struct tierfs *fs, struct tfs_inode *inode,
		 const char *name, const void *value, size_t size, int flags,
		 enum policy_key pk, const struct ipolicy *ip)
{
	struct ipolicy *pol = NULL;
	struct xattr *x, *nx;
	char *nm = NULL;
	void *copy;
	uint64_t now = charge(name, size), before;
	int r = 0;

	copy = malloc(size ? size : 1);
	if (pk != _POLICY_KEY_INVALID)
		pol = calloc(1, sizeof(*pol));
	if (!copy || (pk != _POLICY_KEY_INVALID && !pol)) {
		free(copy);
		free(pol);
		return -ENOMEM;
	}
	memcpy(copy, value, size);

	pthread_mutex_lock(&inode->i_lock);
	x = find(inode, name);
	if (x && (flags & XATTR_CREATE)) {
		r = -EEXIST;
		goto out_unlock;
	}
	if (!x && (flags & XATTR_REPLACE)) {
		r = -ENODATA;
		goto out_unlock;
	}
	r = inode_room(inode, name, size, x);
	if (r < 0)
		goto out_unlock;
	if (!x) {
		/* a larger array is harmless if what follows fails */
		nx = realloc(inode->i_xattrs,
			     (inode->i_nxattrs + 1) * sizeof(*nx));
		if (nx)
			inode->i_xattrs = nx;
		nm = nx ? strdup(name) : NULL;
		if (!nm) {
			r = -ENOMEM;
			goto out_unlock;
		}
	}
	if (pol) {
		/* the new policy: the inode's own with this key's part
		 * from the value parsed before */
		if (inode->i_pol)
			*pol = *inode->i_pol;
		ipolicy_take(pol, ip, pk);
	}
	/* last: a charge is not taken back on failure */
	before = x ? charge(name, x->size) : 0;
	r = mount_charge(fs, now > before ? now - before : 0);
	if (r < 0)
		goto out_unlock;

	/* nothing fails from here on */
	mount_uncharge(fs, before > now ? before - now : 0);
	if (x) {
		free(x->value);
	} else {
		x = &inode->i_xattrs[inode->i_nxattrs++];
		x->name = nm;
		nm = NULL;
	}
	x->value = copy;
	x->size = size;
	copy = NULL;
	if (pol) {
		free(inode->i_pol);
		inode->i_pol = pol;
		pol = NULL;
	}
	inode_touch(inode, false, true);
out_unlock:
	pthread_mutex_unlock(&inode->i_lock);
	free(nm);
	free(copy);
	free(pol);
	return r;
}

int xattr_set(struct tierfs *fs, struct tfs_inode *inode, const char *name,
	      const void *value, size_t size, int flags)
{
	enum policy_key pk = policy_key_from_xattr(name);
	struct ipolicy ip = { 0 };
	int r = xattr_name_check(name);

	if (r < 0)
		return r;
	if (size > XATTR_SIZE_MAX)
		return -E2BIG;
	/* validate before anything changes */
	if (pk != _POLICY_KEY_INVALID) {
		r = policy_parse(&fs->names, fs->extent_size, pk, value, size,
				 &ip);
		if (r < 0)
			return r;
	}
	return store(fs, inode, name, value, size, flags, pk, &ip);
}

ssize_t xattr_get(struct tierfs *fs, struct tfs_inode *inode,
		  const char *name, void *buf, size_t size)
{
	struct xattr *x;
	ssize_t r;

	r = xattr_name_check(name);
	if (r < 0)
		return r;
	pthread_mutex_lock(&inode->i_lock);
	x = find(inode, name);
	if (!x) {
		r = -ENODATA;
	} else if (size && x->size > size) {
		r = -ERANGE;
	} else {
		if (size)
			memcpy(buf, x->value, x->size);
		r = (ssize_t)x->size;
	}
	pthread_mutex_unlock(&inode->i_lock);
	return r;
}

ssize_t xattr_list(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		   size_t size)
{
	size_t need = 0;
	ssize_t r;

	pthread_mutex_lock(&inode->i_lock);
	for (uint32_t i = 0; i < inode->i_nxattrs; i++)
		need += strlen(inode->i_xattrs[i].name) + 1;
	if (size && need > size) {
		r = -ERANGE;
	} else {
		size_t n = 0;

		for (uint32_t i = 0; size && i < inode->i_nxattrs; i++) {
			size_t l = strlen(inode->i_xattrs[i].name) + 1;

			memcpy(buf + n, inode->i_xattrs[i].name, l);
			n += l;
		}
		r = (ssize_t)need;
	}
	pthread_mutex_unlock(&inode->i_lock);
	return r;
}

static bool drop_locked(struct tierfs *fs, struct tfs_inode *inode,
			const char *name);

int xattr_remove(struct tierfs *fs, struct tfs_inode *inode,
		 const char *name)
{
	enum policy_key pk = policy_key_from_xattr(name);
	int r = xattr_name_check(name);

	if (r < 0)
		return r;
	pthread_mutex_lock(&inode->i_lock);
	if (!drop_locked(fs, inode, name)) {
		r = -ENODATA;
	} else {
		inode_touch(inode, false, true);
		if (pk != _POLICY_KEY_INVALID && inode->i_pol)
			policy_clear(inode->i_pol, pk);
	}
	pthread_mutex_unlock(&inode->i_lock);
	return r;
}

static bool drop_locked(struct tierfs *fs, struct tfs_inode *inode,
			const char *name)
{
	struct xattr *x = find(inode, name);

	if (!x)
		return false;
	mount_uncharge(fs, charge(x->name, x->size));
	free(x->name);
	free(x->value);
	*x = inode->i_xattrs[--inode->i_nxattrs];
	return true;
}

bool xattr_drop_locked(struct tfs_inode *inode, const char *name)
{
	if (NEVER(is_user(name)))
		return false;
	return drop_locked(NULL, inode, name);
}

void xattr_release(struct tierfs *fs, struct tfs_inode *inode)
{
	free(inode->i_pol);
	inode->i_pol = NULL;
	for (uint32_t i = 0; i < inode->i_nxattrs; i++) {
		mount_uncharge(fs, charge(inode->i_xattrs[i].name,
					  inode->i_xattrs[i].size));
		free(inode->i_xattrs[i].name);
		free(inode->i_xattrs[i].value);
	}
	free(inode->i_xattrs);
	inode->i_xattrs = NULL;
	inode->i_nxattrs = 0;
}
