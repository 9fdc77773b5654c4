/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * attr.h -- getxattr, setxattr, listxattr and removexattr as a request
 * makes them: each name is routed by one table (attr.c) to the module
 * it belongs to --
 *
 *   computed user.tierfs.* values (layout, stats, ...)  ctl.c, read-only
 *   user.tierfs.ctl.* actions (migrate, drain)           ctl.c
 *   user.tierfs.{tiers,pin,split,promote}               xattr.c, then a
 *                                                       policy change
 *   trusted.tierfs.quota                                quota.c + xattr.c
 *   anything else                                       xattr.c
 *
 * -- so that xattr.c stays storage, below quota.c and ctl.c in the
 * module graph.  ops.c is the only caller in the daemon.
 *
 * Return: as xattr.h (0 or a length; -errno), plus -EPERM when a
 * computed name is set or removed, or when @uid is neither root nor the
 * owner for a user.tierfs.* change.
 */
#ifndef TIERFS_ATTR_H
#define TIERFS_ATTR_H

#include <stddef.h>
#include <sys/types.h>

struct tierfs;
struct tfs_inode;
struct ns_cred;

/* @uid: the caller's, for the owner-or-root rule of user.tierfs.* */
int attr_set(struct tierfs *fs, struct tfs_inode *inode, const char *name,
	     const void *value, size_t size, int flags, uid_t uid);
/* @cred: who asks, for values that depend on it (a directory's layout
 * lists what the caller may see); NULL: root. */
ssize_t attr_get(struct tierfs *fs, struct tfs_inode *inode,
		 const char *name, void *buf, size_t size,
		 const struct ns_cred *cred);
/* The stored names (computed ones are not listed, as tmpfs lists no
 * security.* it computes). */
ssize_t attr_list(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		  size_t size);
int attr_remove(struct tierfs *fs, struct tfs_inode *inode, const char *name,
		uid_t uid);

#endif /* TIERFS_ATTR_H */
