/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_remove.h -- remove a job's scratch directory MOUNT/NAME as root,
 * safely while processes of the job's user still change what is in it.
 *
 * The job's user owns everything below the directory, and a process of
 * theirs outside the job (another job, an ssh session Slurm adopted) may
 * rename, replace or mount on any of it while root removes it.  So:
 *  - Mounts go first.  Every mount on or below the directory (from
 *    /proc/self/mountinfo) is detached with umount2(MNT_DETACH),
 *    shallowest first: a lazy detach takes the mounts below it along,
 *    and reaching a deeper one first would mean walking through the
 *    user's mount (whose daemon may never answer).  A mount point is
 *    named to umount2() as its parent directory, opened as below, plus
 *    its last component with UMOUNT_NOFOLLOW, so that no symlink the
 *    user swaps into the path can make root detach another mount.
 *  - The directory itself becomes root's, mode 0700, first: from then on
 *    no process of the user's can add, rename or swap a name in it (a
 *    process holding a descriptor of a directory below still can, in
 *    that directory).
 *  - Names the user can still change are never walked through: every
 *    directory below is renamed up into the locked directory under a
 *    fresh name (MOVED_PREFIX and a counter), opened there and emptied:
 *    what in it is not a directory is unlinked by name, what is a
 *    directory is renamed up in turn, then it is removed.  Whatever the
 *    user swaps in at a name is only ever unlinked or moved, as the
 *    name it is; a tree of any depth takes a loop over the counter, no
 *    descriptors or stack per level.
 *  - Each directory is opened relative to the locked one with
 *    openat2(O_NOFOLLOW | O_DIRECTORY | O_NOATIME, RESOLVE_NO_SYMLINKS |
 *    RESOLVE_NO_XDEV | RESOLVE_BENEATH): a symlink fails (ELOOP) and is
 *    unlinked as the link it is, a mount fails (EXDEV) without a request
 *    to its filesystem, and fstat() of what was opened must show the
 *    tierfs (st_dev) and the inode readdir listed (st_ino), or it is
 *    skipped.  Entries are never stat'ed: a name readdir says is not a
 *    directory is unlinked, and EISDIR says it is one after all.
 *  - The locked directory is read in passes until one finds nothing or
 *    removes nothing (at most RM_PASSES), and the whole -- detach, empty,
 *    rmdir -- is tried RM_ROUNDS times (job_remove.c).
 * Needs Linux 5.6 (openat2).  Not thread-safe (the plugin is called from
 * one thread); logs nothing: the caller logs from struct job_remove_stats.
 */
#ifndef TIERFS_SPANK_JOB_REMOVE_H
#define TIERFS_SPANK_JOB_REMOVE_H

/* What a removal did and met; the caller zeroes it, the calls add. */
struct job_remove_stats {
	unsigned long removed; /* names removed */
	unsigned mounts;       /* mounts detached on or below the directory */
	unsigned skipped;      /* entries swapped while being opened */
	int user_errno;	       /* first error of what the job's user did:
				* ENOTEMPTY, EBUSY, EXDEV, ELOOP, ... */
	int node_errno;	       /* first other error (EIO, ENOTCONN, ...) */
};

/**
 * job_detach_mounts() - detach every mount on or below @mount/@name
 * (@mount: the tierfs mount point as /proc/self/mountinfo spells it).
 * Counts and errors go to @st.
 */
void job_detach_mounts(const char *mount, const char *name,
		       struct job_remove_stats *st);

/**
 * job_dir_open() - open the job directory @mount/@name read-only, never
 * through a symlink or a mount on it.
 * Return: a descriptor the caller closes, or -errno (-ENOENT: none,
 * -EXDEV: something is mounted on it).
 */
int job_dir_open(const char *mount, const char *name);

/**
 * job_remove() - detach the mounts on and below @mount/@name and remove
 * it and everything in it, as described at the top.  Counts and errors
 * go to @st.
 * Return: 0 when the directory is gone (or was never there); 1 when
 * something is left and every error was of the job user's making (a
 * process of theirs that kept changing the tree); -errno when the node
 * failed: the mount cannot be opened, or tierfs answered an error of its
 * own (EIO, ENOTCONN, ...) and something is left.
 */
int job_remove(const char *mount, const char *name,
	       struct job_remove_stats *st);

#endif /* TIERFS_SPANK_JOB_REMOVE_H */
