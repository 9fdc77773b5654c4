/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * namespace.h -- the namespace: names, directories and attributes.
 * Lookup, creation (mknod, mkdir, symlink, create), link, unlink, rmdir,
 * rename (plain, noreplace, exchange), setattr with its suid/sgid rules,
 * and the readdir walk.  This is the logic behind the FUSE handlers in
 * ops.c, which only decode a request, call one of these and reply.
 *
 * Not here: reply encoding and node ids (ops.c), the directory hash
 * table itself (dir.h), inode lifetime (inode.h), file data (data.h).
 *
 * Locking: each function takes fs->ns_lock itself -- shared for lookup
 * and readdir, exclusive for every change -- and inode i_locks inside it
 * (lock order in fs.h).  Call with no lock held.  Nothing here calls
 * fuse_reply_*(), so the caller replies after every lock is dropped.
 *
 * Return: 0 or -errno, never writing the ret_ arguments on failure.
 * Functions that hand back an inode (ret_inode, or the @inode of
 * ns_link()) have counted one kernel lookup for it: the caller either
 * gets it to the kernel or drops it with inode_forget(..., 1).  *ret_st
 * is the inode's attributes, read while the name was still locked.
 */
#ifndef TIERFS_NAMESPACE_H
#define TIERFS_NAMESPACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct stat;
struct tierfs;
struct tfs_inode;

/*
 * Who is asking.  @getgroups is called only when a rule needs the
 * supplementary groups (it may read /proc): like fuse_req_getgroups(),
 * it fills up to @size ids and returns how many the caller has, or
 * -errno.  Borrowed for the call only.
 */
struct ns_cred {
	uid_t uid;
	gid_t gid;
	int (*getgroups)(void *arg, int size, gid_t list[]);
	void *arg;
};

/* Lookup: -ENAMETOOLONG, -ENOTDIR, or -ENOENT (a negative entry the
 * kernel may cache). */
int ns_lookup(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	      struct tfs_inode **ret_inode, struct stat *ret_st);

/* Creation.  @mode: permission bits (ns_mknod(): with the S_IFMT type,
 * none meaning a regular file; a directory or symlink type is -EINVAL).
 * Owner and group come from @cred and the setgid rules of @dir. */
int ns_mknod(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	     mode_t mode, dev_t rdev, const struct ns_cred *cred,
	     struct tfs_inode **ret_inode, struct stat *ret_st);
int ns_mkdir(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	     mode_t mode, const struct ns_cred *cred,
	     struct tfs_inode **ret_inode, struct stat *ret_st);
int ns_symlink(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	       const char *link, const struct ns_cred *cred,
	       struct tfs_inode **ret_inode, struct stat *ret_st);
int ns_create(struct tierfs *fs, struct tfs_inode *dir, const char *name,
	      mode_t mode, const struct ns_cred *cred,
	      struct tfs_inode **ret_inode, struct stat *ret_st);

/* A new name @newname in @dir for @inode (not a directory: -EPERM). */
int ns_link(struct tierfs *fs, struct tfs_inode *inode, struct tfs_inode *dir,
	    const char *newname, struct stat *ret_st);

int ns_unlink(struct tierfs *fs, struct tfs_inode *dir, const char *name);
int ns_rmdir(struct tierfs *fs, struct tfs_inode *dir, const char *name);

/* @flags: 0, RENAME_NOREPLACE or RENAME_EXCHANGE; others are -EINVAL. */
int ns_rename(struct tierfs *fs, struct tfs_inode *pdir, const char *name,
	      struct tfs_inode *ndir, const char *newname, unsigned flags);

/**
 * ns_setattr() - change @inode's attributes as libfuse's setattr asks
 * @attr:   the new values (only those @to_set names are read)
 * @to_set: libfuse's FUSE_SET_ATTR_* mask
 * @kill:   the request carries the kernel's kill-suid/sgid flag
 *          (kernel_req_kill_suidgid())
 * Truncates through data_truncate() when @to_set has the size; ctime is
 * set to now unless @to_set gives it.
 * Return: 0, -EISDIR/-EINVAL for a bad truncate, or its -errno.
 */
int ns_setattr(struct tierfs *fs, struct tfs_inode *inode,
	       const struct stat *attr, int to_set, bool kill,
	       const struct ns_cred *cred);

/*
 * What a local filesystem does to a file on a write or truncate by a
 * caller without CAP_FSETID (@capable false), and on any chown: clear
 * suid; clear sgid if group execute is set, or if the caller is neither
 * in the file's group nor @capable; drop security.capability.  Under
 * killpriv_v2 the kernel leaves this to us (kernel.h).  Takes i_lock.
 * Return: true if it changed the mode (or ctime): the kernel, which did
 * not ask for a mode, may hold the old one (ops.c invalidates it).
 */
bool ns_kill_suidgid(struct tierfs *fs, struct tfs_inode *inode,
		     const struct ns_cred *cred, bool capable);

/*
 * The same for fallocate and copy_file_range, which change data but for
 * which the kernel sends no kill flag under killpriv_v2 (and no longer
 * clears the bits itself): decided from the caller, uid 0 standing for
 * CAP_FSETID.  Return: as ns_kill_suidgid().
 */
bool ns_kill_suidgid_unflagged(struct tierfs *fs, struct tfs_inode *inode,
			       const struct ns_cred *cred);

/*
 * One directory entry for the reader.  @inode is the entry's inode, NULL
 * for "." and ".."; it is valid for the call only (ns_lock is held
 * shared, so it keeps its name meanwhile: a reader may take its i_lock
 * and count a lookup of it).  Return false when it did not fit: the walk
 * stops there, and the entry comes first in the next call.
 */
typedef bool (*ns_filldir_t)(void *arg, const char *name,
			     struct tfs_inode *inode, uint64_t ino,
			     mode_t type, uint64_t cookie);

/**
 * ns_readdir() - list @dir from offset @cookie (0 for the start)
 * @limit: the listing's cookie limit, kept by the caller from one call to
 *         the next (0 before the first); set at the start of a listing so
 *         that entries created meanwhile are not shown, as tmpfs does
 * Calls @fill for ".", "..", then each entry with cookie > @cookie,
 * under ns_lock shared.  @dir must be a directory.
 * Return: the number of entries @fill took.
 */
unsigned ns_readdir(struct tierfs *fs, struct tfs_inode *dir,
		    uint64_t cookie, uint64_t *limit, ns_filldir_t fill,
		    void *arg);

#endif /* TIERFS_NAMESPACE_H */
