// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier_backing.c -- the backing directories of tiers with TIER_CAP_PATH: path and
 * space checks, the private directory and its lock, the unlinked
 * backing file, tier_backing_prepare() and the sweep of what dead mounts
 * left.  See tier.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "config.h"
#include "fdio.h"
#include "tier.h"
#include "tier_ops.h"
#include "tier_i.h"
#include "never.h"
#include "macro.h"
#include "banned.h"


int tier_path_check(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(path, W_OK | X_OK) < 0)
		return -errno; /* EACCES, or EROFS on a read-only mount */
	return 0;
}

int tier_space_check(const char *path, uint64_t size)
{
	struct statvfs vfs;
	uint64_t avail;

	if (statvfs(path, &vfs) < 0)
		return -errno;
	if (__builtin_mul_overflow((uint64_t)vfs.f_bavail,
				   (uint64_t)vfs.f_frsize, &avail))
		avail = UINT64_MAX;
	if (size > avail)
		return -ENOSPC;
	return 0;
}

#define LOCK_NAME "lock"
/*
 * The slab's name where it has one: the fallback of tier_backing_open()
 * (unlinked at once where the filesystem allows, kept where it does not)
 * and the named slab of an older tierfs.
 */
#define SLAB_NAME "slab"

/*
 * Tries of tier_private_dir_create(): a sweep by another mount on the
 * same path removes an empty tierfs-* directory (sweep_one()), so one
 * that vanishes between mkdtemp() and the creation of its lock file
 * (-ENOENT) is made again under a fresh name.  Three sweeps hitting
 * that window of a few system calls in a row do not happen.
 */
#define PRIVATE_DIR_TRIES 3

static int private_dir_create_once(const char *path, const char *name,
				   char **ret_dir, int *ret_lock_fd);

int tier_private_dir_create(const char *path, const char *name,
			    char **ret_dir, int *ret_lock_fd)
{
	int i, r = -ENOENT;

	for (i = 0; i < PRIVATE_DIR_TRIES && r == -ENOENT; i++)
		r = private_dir_create_once(path, name, ret_dir, ret_lock_fd);
	return r;
}

static int private_dir_create_once(const char *path, const char *name,
				   char **ret_dir, int *ret_lock_fd)
{
	char *dir, *lock = NULL;
	int fd = -1, r;

	if (asprintf(&dir, "%s/tierfs-%s-XXXXXX", path, name) < 0)
		return -ENOMEM;
	if (!mkdtemp(dir)) {
		r = -errno;
		free(dir);
		if (r == -EPERM || r == -ENOENT)
			r = -EACCES;
		return r;
	}
	/* mkdtemp() honours the umask; the mode must not depend on it */
	if (chmod(dir, 0700) < 0) {
		r = -errno;
		goto err;
	}
	if (asprintf(&lock, "%s/" LOCK_NAME, dir) < 0) {
		lock = NULL;
		r = -ENOMEM;
		goto err;
	}
	fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0 || fchmod(fd, 0600) < 0) {
		r = -errno;
		goto err;
	}
	/*
	 * Held until the fd is closed, by exit or by the kernel when the
	 * process dies.  A filesystem without flock() (ENOLCK, EOPNOTSUPP:
	 * NFS mounted nolock, some parallel filesystems) makes a directory
	 * that no sweep removes, which is the safe way to be wrong.
	 */
	while (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EINTR)
		;
	free(lock);
	*ret_dir = dir;
	*ret_lock_fd = fd;
	return 0;

err:
	if (fd >= 0)
		(void)close(fd);
	if (lock)
		(void)unlink(lock);
	free(lock);
	(void)rmdir(dir);
	free(dir);
	return r;
}

/*
 * How long tier_private_dir_remove() waits for its directory to empty:
 * on a FUSE filesystem (sshfs) a file unlinked while open is renamed to
 * .fuse_hiddenXXXX and removed only when the FUSE daemon there handles
 * the release of its last fd, which the kernel sends after close()
 * returns; on NFS the silly-renamed .nfsXXXX goes just as late.  Polled
 * every PRIVATE_DIR_POLL_US; a directory still not empty after that (a
 * server that went away, a file somebody else put there) is left for
 * the next mount's sweep.
 */
#define PRIVATE_DIR_WAIT_US 2000000
#define PRIVATE_DIR_POLL_US 5000

void tier_private_dir_remove(char *dir, int lock_fd)
{
	char *file;
	int waited;

	/*
	 * The lock goes first, then the names.  Unlinking "lock" while it
	 * is open would, on sshfs, only rename it to a .fuse_hidden file
	 * that outlives the rmdir below and leave an empty directory
	 * behind at every unmount.  A sweep by another mount that takes
	 * the lock in between removes what we were about to remove: each
	 * unlink or rmdir here may then fail with ENOENT, which is fine.
	 */
	if (lock_fd >= 0)
		(void)close(lock_fd);
	if (!dir)
		return;
	if (asprintf(&file, "%s/" LOCK_NAME, dir) >= 0) {
		(void)unlink(file);
		free(file);
	}
	/* the named slab of tier_backing_open(), where there is one */
	if (asprintf(&file, "%s/" SLAB_NAME, dir) >= 0) {
		(void)unlink(file);
		free(file);
	}
	for (waited = 0; rmdir(dir) < 0 && waited < PRIVATE_DIR_WAIT_US;
	     waited += PRIVATE_DIR_POLL_US) {
		if (errno != ENOTEMPTY && errno != EEXIST && errno != EBUSY)
			break; /* gone already (ENOENT), or not ours to wait for */
		(void)usleep(PRIVATE_DIR_POLL_US);
	}
}

/*
 * Can this filesystem use @fd, a file just unlinked while open?  Most can
 * (the inode lives on while open; NFS and FUSE's high-level library keep
 * it under a hidden name).  The GlusterFS FUSE client cannot: it answers
 * a setattr on such a file (fchmod, the call we make anyway) with
 * ESTALE, so a tier there could not even be set up.  Asked with the
 * calls a slab needs that go by the inode rather than by the open
 * handle (fchmod, fstat); reads, writes, ftruncate and fallocate carry
 * the handle.  Returns 0 or the -errno of the first call that failed.
 */
static int unlinked_usable(int fd)
{
	struct stat st;

	if (fchmod(fd, 0600) < 0 || fstat(fd, &st) < 0)
		return -errno;
	return 0;
}

/* Create @dir/SLAB_NAME, mode 0600 whatever the umask.  fd or -errno. */
static int slab_create_named(const char *name)
{
	int fd, r;

	fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return -errno;
	/* open() honours the umask */
	if (fchmod(fd, 0600) < 0) {
		r = -errno;
		(void)close(fd);
		(void)unlink(name);
		return r;
	}
	return fd;
}

/*
 * Three ways to get the slab, best first:
 *  1. O_TMPFILE: a file that never has a name.
 *  2. Where the filesystem lacks O_TMPFILE (EOPNOTSUPP, EISDIR, EINVAL,
 *     ENOENT: older kernels, NFS, FUSE), a named file, unlinked before
 *     it holds a byte, if the filesystem can still use it then
 *     (unlinked_usable()).
 *  3. Where it cannot (GlusterFS), the named file is made again and
 *     KEPT: @dir/slab lives as long as the private directory.  A clean
 *     unmount removes it (tier_private_dir_remove()); after a kill or a
 *     crash the next mount's sweep does, since its lock is free
 *     (tier_sweep_stale()) -- the data of a dead mount stays on the
 *     filesystem until then, which is the price of mounting there at
 *     all.  The mode (0600, in a 0700 directory) keeps it private.
 * Error paths: an error of O_TMPFILE other than "not supported", or of
 * creating, unlinking or re-creating the named file, is returned as is
 * and nothing is left behind (an unlink that failed is tried once more;
 * a named slab whose fchmod failed is unlinked).
 */
int tier_backing_prepare(struct tier *t, char **ret_dir, int *ret_lock_fd)
{
	int r = tier_path_check(t->path);

	*ret_dir = NULL;
	*ret_lock_fd = -1;
	if (r < 0)
		return r;
	r = tier_private_dir_create(t->path, t->name, ret_dir, ret_lock_fd);
	if (r < 0) {
		*ret_dir = NULL;
		*ret_lock_fd = -1;
		return r;
	}
	tier_sweep_stale(t->path, &t->swept_dirs, &t->swept_bytes);
	/* f_bavail: the space an unprivileged user may fill */
	r = tier_space_check(t->path, t->size);
	if (r < 0) {
		tier_private_dir_remove(*ret_dir, *ret_lock_fd);
		free(*ret_dir);
		*ret_dir = NULL;
		*ret_lock_fd = -1;
	}
	return r;
}

int tier_backing_open(const char *dir)
{
	char *name;
	int fd, r;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0) {
		/* open() honours the umask */
		if (fchmod(fd, 0600) < 0) {
			r = -errno;
			(void)close(fd);
			return r;
		}
		return fd;
	}
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL &&
	    errno != ENOENT)
		return -errno;
	if (asprintf(&name, "%s/" SLAB_NAME, dir) < 0)
		return -ENOMEM;
	fd = slab_create_named(name);
	if (fd < 0)
		goto out;
	if (unlink(name) < 0) {
		r = -errno;
		(void)unlink(name);
		(void)close(fd);
		fd = r;
		goto out;
	}
	if (unlinked_usable(fd) == 0)
		goto out;
	/* way 3: this filesystem loses an unlinked file; keep a name */
	(void)close(fd);
	fd = slab_create_named(name);
out:
	free(name);
	return fd;
}

/* The name an open, unlinked slab is kept under by NFS or FUSE. */
static bool is_hidden_slab(const char *name)
{
	return !strncmp(name, ".nfs", 4) || !strncmp(name, ".fuse_hidden", 12);
}

/*
 * Is @dir (an open directory, name @name in @path) a dead mount's private
 * directory?  Then remove it and add the bytes freed to *ret_bytes.
 */
static bool sweep_one(int dfd, const char *name, uint64_t *ret_bytes)
{
	int fd, lfd = -1;
	bool has_lock = false, has_slab = false, other = false, dead = false;
	bool has_nfs = false, empty = true;
	uint64_t bytes = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || (st.st_uid != geteuid() && geteuid() != 0)) {
		(void)close(fd);
		return false;
	}
	d = fdopendir(fd);
	if (!d) {
		(void)close(fd);
		return false;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			other = true;
		else if (!strcmp(de->d_name, LOCK_NAME))
			has_lock = true;
		else if (!strcmp(de->d_name, SLAB_NAME)) {
			has_slab = true;
			bytes += (uint64_t)st.st_blocks * 512;
		} else if (is_hidden_slab(de->d_name)) {
			/* on NFS an unlinked file still open when its node
			 * died stays as a silly-renamed .nfsXXXX: our slab;
			 * on a FUSE filesystem (sshfs) it is a .fuse_hiddenN
			 * until that filesystem's daemon sees the release */
			has_nfs = true;
			bytes += (uint64_t)st.st_blocks * 512;
		} else
			other = true;
		empty = false;
	}
	if (empty && !other) {
		/*
		 * A directory with nothing in it: what a tierfs left whose
		 * unmount could not remove it (before its lock file was
		 * unlinked the other way round; a server that went away
		 * mid-unmount), or a mount being set up right now, between
		 * mkdtemp() and the creation of its lock.  rmdir() is atomic
		 * about emptiness, and that mount makes a fresh directory
		 * when its lock cannot be created (PRIVATE_DIR_TRIES).
		 */
		dead = unlinkat(dfd, name, AT_REMOVEDIR) == 0;
		goto out;
	}
	if (other || (!has_lock && !has_slab))
		goto out; /* not ours */
	if (has_lock) {
		lfd = openat(fd, LOCK_NAME, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		dead = lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) == 0;
	} else {
		/*
		 * An older tierfs's directory has no lock to ask.  Removing
		 * it is safe even if that daemon still runs: its open fd or
		 * mapping keeps the data until it exits, and then the kernel
		 * frees it instead of leaving it behind.
		 */
		dead = true;
	}
	if (!dead)
		goto out;
	if (has_slab && unlinkat(fd, SLAB_NAME, 0) < 0)
		bytes = 0;
	if (has_nfs) {
		rewinddir(d);
		while ((de = readdir(d)))
			if (is_hidden_slab(de->d_name))
				(void)unlinkat(fd, de->d_name, 0);
	}
	if (has_lock) {
		/*
		 * Closed before the unlink, as in tier_private_dir_remove():
		 * on sshfs an open file's unlink is a rename to .fuse_hidden,
		 * which would keep the directory from going.  A mount never
		 * reuses a directory, so once dead it stays dead unlocked.
		 */
		(void)close(lfd);
		lfd = -1;
		(void)unlinkat(fd, LOCK_NAME, 0);
	}
	dead = unlinkat(dfd, name, AT_REMOVEDIR) == 0 || bytes > 0;
	if (dead)
		*ret_bytes += bytes;
out:
	if (lfd >= 0)
		(void)close(lfd);
	closedir(d);
	return dead;
}

void tier_sweep_stale(const char *path, unsigned *ret_dirs,
		      uint64_t *ret_bytes)
{
	struct dirent *de;
	DIR *d = opendir(path);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		/* tierfs-NAME-XXXXXX */
		if (n < sizeof("tierfs-x-XXXXXX") - 1 ||
		    strncmp(de->d_name, "tierfs-", 7) ||
		    de->d_name[n - 7] != '-' ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (sweep_one(dirfd(d), de->d_name, ret_bytes))
			(*ret_dirs)++;
	}
	closedir(d);
}
