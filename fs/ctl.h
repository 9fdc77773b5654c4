/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl.h -- the control channel (ctl_proto.h is the protocol, the one fs/
 * header tools/ may include): the user.tierfs.* attributes that are
 * computed rather than stored (layout, extent lists, the effective
 * policy, checksum verification, the counters) and the actions migrate
 * and drain.  xattr.c keeps the stored attributes and hands these names
 * over here; nothing here stores anything on an inode.
 *
 * Locking: call with no lock held; each function takes ns_lock (shared)
 * and the data locks it needs itself, and pins the inodes it works on
 * across unlocked moves.
 *
 * Ownership: values passed in are borrowed, untrusted bytes (not
 * NUL-terminated); @buf is the caller's.  Return: a length, or 0, on
 * success; -errno on failure (-EINVAL for a malformed value, before
 * anything changed; -E2BIG for a value longer than
 * TIERFS_XATTR_VALUE_MAX; -ERANGE when @size is too small).
 */
#ifndef TIERFS_CTL_H
#define TIERFS_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"

struct ns_cred;
struct tierfs;
struct tfs_inode;

/* Is @name one of the computed attributes (read-only, not stored)? */
bool ctl_xattr_is_computed(const char *name);
/* getxattr of a computed attribute: the value into @buf when @size > 0;
 * returns its length.  As ctl_xattr_get_as() with no credentials: for
 * internal callers, which see everything. */
ssize_t ctl_xattr_get(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name, void *buf, size_t size);
/*
 * The same for the caller @cred (ops.c passes the request's; NULL: see
 * everything).  A directory's user.tierfs.layout counts only the
 * directories below it that @cred may list and search (read and execute
 * permission), with everything below them; of a directory @cred may not
 * list and search itself, it is -EACCES.  Root sees everything.
 */
ssize_t ctl_xattr_get_as(struct tierfs *fs, struct tfs_inode *inode,
			 const char *name, void *buf, size_t size,
			 const struct ns_cred *cred);
/* setxattr of an action (user.tierfs.ctl.*); @uid: the caller's, drain
 * being root's only. */
int ctl_xattr_set(struct tierfs *fs, struct tfs_inode *inode,
		  const char *name, const void *value, size_t size, uid_t uid);
/* Bytes on each tier, summed over everything below @dir (a hard-linked
 * file once).  Holds ns_lock for a bounded batch of entries at a time,
 * never while it waits for a data lock (see ctl.c, LAYOUT_BATCH). */
int ctl_dir_layout(struct tierfs *fs, struct tfs_inode *dir,
		   uint64_t bytes[TIER_MAX_CONF]);
int ctl_migrate(struct tierfs *fs, struct tfs_inode *inode,
		const char *value, size_t len);
int ctl_drain(struct tierfs *fs, const char *value, size_t len);
/* --test-clock only (options.h): move the test clock on by the
 * milliseconds in @value, then wait for the migrator passes that made
 * due (migrator_clock_moved()).  Return: 0 or -EINVAL. */
int ctl_clock(struct tierfs *fs, const char *value, size_t len);

#endif /* TIERFS_CTL_H */
