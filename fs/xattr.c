// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * xattr.c -- extended attributes stored with the inode, plus the
 * read-only user.tierfs.* attributes computed on demand.
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
#include <sys/xattr.h>

#include "tierfs.h"
#include "migrate.h"
#include "tier.h"
#include "strbuf.h"
#include "banned.h"

#include "ctl_proto.h"

#define XATTR_LAYOUT TIERFS_XATTR_LAYOUT
#define XATTR_STATS TIERFS_XATTR_STATS
#define XATTR_EXTENTS TIERFS_XATTR_EXTENTS

/* Attributes that exist only as computed values (never stored). */
static bool is_virtual(const char *name)
{
	return !strcmp(name, XATTR_LAYOUT) || !strcmp(name, XATTR_STATS) ||
	       !strcmp(name, XATTR_EXTENTS) ||
	       !strcmp(name, TIERFS_XATTR_EFFECTIVE) ||
	       !strcmp(name, TIERFS_XATTR_VERIFY);
}

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

/* Actions on the control channel (ctl_proto.h). */
static int ctl_action(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name, const void *value, size_t size,
		      uid_t uid)
{
	if (!strcmp(name, TIERFS_XATTR_CTL_MIGRATE))
		return ctl_migrate(fs, inode, value, size);
	if (!strcmp(name, TIERFS_XATTR_CTL_DRAIN)) {
		if (inode != fs->root)
			return -EINVAL;
		if (uid != 0)
			return -EPERM;
		return ctl_drain(fs, value, size);
	}
	return -EINVAL;
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
static int name_check(const char *name)
{
	static const char *const ns[] = { "user.", "trusted.", "security." };

	for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		size_t n = strlen(ns[i]);

		if (!strncmp(name, ns[i], n))
			return name[n] ? 0 : -EINVAL;
	}
	return -EOPNOTSUPP;
}

int xattr_set(struct tierfs *fs, struct tfs_inode *inode, const char *name,
	      const void *value, size_t size, int flags, uid_t uid)
{
	enum policy_key pk = policy_key_from_xattr(name);
	struct ipolicy ip = { 0 };
	struct xattr *x;
	void *copy;
	int r = 0;

	r = name_check(name);
	if (r < 0)
		return r;
	if (is_virtual(name))
		return -EPERM;
	if (size > XATTR_SIZE_MAX)
		return -E2BIG;
	if (!strncmp(name, TIERFS_XATTR_PREFIX, strlen(TIERFS_XATTR_PREFIX))) {
		if (!may_change(inode, uid))
			return -EPERM;
		if (!strncmp(name, TIERFS_XATTR_CTL, strlen(TIERFS_XATTR_CTL)))
			return ctl_action(fs, inode, name, value, size, uid);
		if (pk == _POLICY_KEY_INVALID)
			return -EINVAL; /* our namespace: no free-form names */
		if (inode->i_type != S_IFDIR && inode->i_type != S_IFREG)
			return -EINVAL;
		/* validate before anything changes */
		r = policy_parse(&fs->names, fs->extent_size, pk, value, size,
				 &ip);
		if (r < 0)
			return r;
	}
	copy = malloc(size ? size : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, value, size);

	pthread_mutex_lock(&inode->i_lock);
	x = find(inode, name);
	if (x && (flags & XATTR_CREATE)) {
		r = -EEXIST;
	} else if (!x && (flags & XATTR_REPLACE)) {
		r = -ENODATA;
	} else if (x) {
		free(x->value);
		x->value = copy;
		x->size = size;
		copy = NULL;
	} else {
		struct xattr *nx = realloc(inode->i_xattrs,
					   (inode->i_nxattrs + 1) * sizeof(*nx));
		char *nm = strdup(name);

		if (!nx || !nm) {
			free(nm);
			if (nx)
				inode->i_xattrs = nx;
			r = -ENOMEM;
		} else {
			inode->i_xattrs = nx;
			nx[inode->i_nxattrs].name = nm;
			nx[inode->i_nxattrs].value = copy;
			nx[inode->i_nxattrs].size = size;
			inode->i_nxattrs++;
			copy = NULL;
		}
	}
	if (r == 0 && pk != _POLICY_KEY_INVALID) {
		if (!inode->i_pol)
			inode->i_pol = calloc(1, sizeof(*inode->i_pol));
		/* the value parsed above; parse again into the live policy */
		if (!inode->i_pol ||
		    policy_parse(&fs->names, fs->extent_size, pk, value, size,
				 inode->i_pol) < 0)
			r = -ENOMEM;
	}
	if (r == 0)
		inode_touch(inode, false, true);
	pthread_mutex_unlock(&inode->i_lock);
	free(copy);
	if (r == 0 && pk != _POLICY_KEY_INVALID) {
		policy_changed(fs);
		if (fs->mig)
			migrator_kick(fs);
	}
	return r;
}

/* "ram=8388608 nvme=0": bytes on each tier, every tier in order. */
static int layout_text(struct tierfs *fs, struct tfs_inode *inode,
		       struct strbuf *out)
{
	uint64_t bytes[TIER_MAX_CONF] = { 0 };
	int r = 0;

	if (inode->i_type == S_IFREG) {
		pthread_rwlock_rdlock(&inode->i_dlock);
		data_layout(fs, inode, bytes);
		pthread_rwlock_unlock(&inode->i_dlock);
	} else if (inode->i_type == S_IFDIR) {
		r = ctl_dir_layout(fs, inode, bytes);
		if (r < 0)
			return r;
	}
	for (unsigned t = 0; t < fs->ntiers && r == 0; t++)
		r = strbuf_addf(out, "%s%s=%llu", t ? " " : "",
				fs->tiers[t]->name,
				(unsigned long long)bytes[t]);
	return r;
}

/* Copy a computed value out under the getxattr size rules. */
static ssize_t give(const char *val, size_t len, void *buf, size_t size)
{
	if (size && len > size)
		return -ERANGE;
	if (size)
		memcpy(buf, val, len);
	return (ssize_t)len;
}

/*
 * "START LENGTH TIER\n" for each run of consecutive extents on one tier,
 * in bytes, holes left out.  Called with no lock held.
 */
static int extents_text(struct tierfs *fs, struct tfs_inode *inode,
			struct strbuf *out)
{
	const struct extent *e;
	uint64_t idx, run_start = 0, run_next = 0;
	int run_tier = -1;
	int r = 0;

	pthread_rwlock_rdlock(&inode->i_dlock);
	for (e = extent_map_next(&inode->i_map, 0, &idx);;
	     e = idx == EXTENT_MAP_MAX_INDEX
			 ? NULL
			 : extent_map_next(&inode->i_map, idx + 1, &idx)) {
		bool flush = run_tier >= 0 &&
			     (!e || idx != run_next || e->tier != run_tier);

		if (flush) {
			r = strbuf_addf(out, "%llu %llu %s\n",
					(unsigned long long)(run_start << fs->extent_shift),
					(unsigned long long)((run_next - run_start) << fs->extent_shift),
					fs->tiers[run_tier]->name);
			if (r < 0)
				break;
			run_tier = -1;
		}
		if (!e)
			break;
		if (run_tier < 0) {
			run_tier = e->tier;
			run_start = idx;
		}
		run_next = idx + 1;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return r;
}

ssize_t xattr_get(struct tierfs *fs, struct tfs_inode *inode,
		  const char *name, void *buf, size_t size)
{
	struct xattr *x;
	ssize_t r;

	if (!strcmp(name, TIERFS_XATTR_EFFECTIVE) ||
	    !strcmp(name, TIERFS_XATTR_VERIFY)) {
		char *text;

		if (inode->i_type != S_IFREG && inode->i_type != S_IFDIR)
			return -ENODATA;
		if (!strcmp(name, TIERFS_XATTR_EFFECTIVE))
			r = ctl_effective_text(fs, inode, &text);
		else
			r = ctl_verify_text(fs, inode, &text);
		if (r < 0)
			return r;
		r = give(text, (size_t)r, buf, size);
		free(text);
		return r;
	}
	if (!strcmp(name, XATTR_EXTENTS) || !strcmp(name, XATTR_LAYOUT)) {
		struct strbuf text = STRBUF_INIT;

		if (!strcmp(name, XATTR_LAYOUT))
			r = layout_text(fs, inode, &text);
		else if (inode->i_type != S_IFREG)
			r = -ENODATA;
		else
			r = extents_text(fs, inode, &text);
		if (r == 0)
			r = give(text.buf, text.len, buf, size);
		strbuf_release(&text);
		return r;
	}
	if (!strcmp(name, XATTR_STATS)) {
		char *text;

		if (inode != fs->root)
			return -ENODATA;
		r = tierfs_stats_text(fs, &text);
		if (r < 0)
			return r;
		r = give(text, (size_t)r, buf, size);
		free(text);
		return r;
	}
	r = name_check(name);
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

int xattr_remove(struct tierfs *fs, struct tfs_inode *inode,
		 const char *name, uid_t uid)
{
	enum policy_key pk = policy_key_from_xattr(name);
	int r = 0;

	r = name_check(name);
	if (r < 0)
		return r;
	if (is_virtual(name))
		return -EPERM;
	if (!strncmp(name, TIERFS_XATTR_PREFIX, strlen(TIERFS_XATTR_PREFIX)) &&
	    !may_change(inode, uid))
		return -EPERM;
	pthread_mutex_lock(&inode->i_lock);
	if (!xattr_drop_locked(inode, name)) {
		r = -ENODATA;
	} else {
		inode_touch(inode, false, true);
		if (pk != _POLICY_KEY_INVALID && inode->i_pol)
			policy_clear(inode->i_pol, pk);
	}
	pthread_mutex_unlock(&inode->i_lock);
	if (r == 0 && pk != _POLICY_KEY_INVALID) {
		policy_changed(fs);
		if (fs->mig)
			migrator_kick(fs);
	}
	return r;
}

bool xattr_drop_locked(struct tfs_inode *inode, const char *name)
{
	struct xattr *x = find(inode, name);

	if (!x)
		return false;
	free(x->name);
	free(x->value);
	*x = inode->i_xattrs[--inode->i_nxattrs];
	return true;
}

void xattr_release(struct tfs_inode *inode)
{
	free(inode->i_pol);
	inode->i_pol = NULL;
	for (uint32_t i = 0; i < inode->i_nxattrs; i++) {
		free(inode->i_xattrs[i].name);
		free(inode->i_xattrs[i].value);
	}
	free(inode->i_xattrs);
	inode->i_xattrs = NULL;
	inode->i_nxattrs = 0;
}
