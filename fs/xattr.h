/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xattr.h -- the stored extended attributes: any namespace the kernel
 * lets through, plus the user.tierfs.* policy keys, which are parsed and
 * kept as the inode's struct ipolicy.  Storage only: requests come
 * through attr.h, which routes computed user.tierfs.* names and actions
 * to ctl.c, a quota to quota.c, and checks who may change
 * user.tierfs.*; quota.c reads its stored value here.
 *
 * Locking: an inode's attributes are under its i_lock, which these
 * functions take themselves unless the name says _locked.
 *
 * Ownership: the inode owns its struct xattr array and each name and
 * value; xattr_release() frees them.  Buffers passed in are the
 * caller's.  Return: 0 (or a length) on success, -errno on failure:
 * -ENODATA for a missing attribute, -ERANGE for a buffer too small,
 * -EINVAL for a bad policy value, -E2BIG for a value over
 * XATTR_SIZE_MAX, -ENOSPC past the limits below.
 *
 * Limits on user.* attributes, the namespace every user may write
 * (trusted.* and security.* need privilege and are not limited here):
 * - per inode, XATTR_INODE_MAX_COUNT attributes and
 *   XATTR_INODE_MAX_BYTES of values (kernfs's rule: a count and a sum
 *   of value sizes; the names are at most 255 bytes each, so a listing
 *   stays within the kernel's XATTR_LIST_MAX);
 * - per mount, fs->opt.max_xattr_bytes charged bytes: each attribute
 *   charges its name, its value and XATTR_CHARGE_OVERHEAD for the
 *   daemon's bookkeeping (tmpfs charges its struct simple_xattr the
 *   same way), counted in fs->xattr_bytes.
 * Reaching any of them fails the set with -ENOSPC and changes nothing.
 */
#ifndef TIERFS_XATTR_H
#define TIERFS_XATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tierfs;
struct tfs_inode;

#define XATTR_INODE_MAX_COUNT 128
#define XATTR_INODE_MAX_BYTES (1u << 20)
#define XATTR_CHARGE_OVERHEAD 64

/* One stored attribute.  All fields: the owning inode's i_lock. */
struct xattr {
	char *name;
	void *value;
	size_t size;
};

/* 0 for a name we store, -EOPNOTSUPP for other namespaces (system.*),
 * -EINVAL for a bare prefix such as "user.". */
int xattr_name_check(const char *name);
/* Store @value under @name (XATTR_CREATE/XATTR_REPLACE in @flags), all
 * or nothing; a policy key's value is parsed into the inode's policy
 * with it (-EINVAL: not a valid value, nothing changed). */
int xattr_set(struct tierfs *fs, struct tfs_inode *inode, const char *name,
	      const void *value, size_t size, int flags);
/* Copies the value into @buf (if @size > 0) and returns its length. */
ssize_t xattr_get(struct tierfs *fs, struct tfs_inode *inode,
		  const char *name, void *buf, size_t size);
/* The names, each NUL-terminated, into @buf (if @size > 0); returns the
 * length of the whole list. */
ssize_t xattr_list(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		   size_t size);
/* Remove @name (a policy key's part of the inode's policy with it). */
int xattr_remove(struct tierfs *fs, struct tfs_inode *inode,
		 const char *name);
/* Free every attribute and the policy of a dying inode and give back
 * what its user.* attributes charged to the mount; for fs->evict. */
void xattr_release(struct tierfs *fs, struct tfs_inode *inode);
/* Remove the stored attribute @name if there is one; true if it was.
 * Called with i_lock held.  Not for user.* names (their charge to the
 * mount needs xattr_remove()): false for those, nothing dropped. */
bool xattr_drop_locked(struct tfs_inode *inode, const char *name);

#endif /* TIERFS_XATTR_H */
