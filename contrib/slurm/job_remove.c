// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * job_remove.c -- see job_remove.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "job_remove.h"
#include "mountinfo.h"
#include "banned.h"

#define RM_DEPTH_MAX 64	    /* directories open at once, the top's included */
#define RM_PASSES 8	    /* readdir passes over a directory below the top */
#define RM_TOP_PASSES 1024  /* over the top, which only we add to (moves up) */
#define RM_ROUNDS 3	    /* detach, empty, rmdir: tries of the whole */
#define RM_DETACH_MAX 256   /* mounts detached in one call */
#define MOVED_PREFIX ".tierfs-rm." /* names of directories moved up */

/* one removal; immutable but for the counters */
struct rm {
	dev_t dev;		 /* st_dev of the tierfs */
	int top;		 /* the job directory, where deep ones move */
	unsigned moved;		 /* directories moved up so far: fresh names */
	struct job_remove_stats *st;
};

/* errors a process of the job's user can cause by changing the tree */
static bool user_errno(int e)
{
	switch (e) {
	case ENOENT: case ENOTEMPTY: case EEXIST: case EBUSY: case EXDEV:
	case ELOOP: case ENOTDIR: case EISDIR: case EACCES: case EPERM:
	case EINVAL: case ESTALE:
		return true;
	}
	return false;
}

static void note(struct job_remove_stats *st, int e)
{
	if (user_errno(e)) {
		if (!st->user_errno)
			st->user_errno = e;
	} else if (!st->node_errno) {
		st->node_errno = e;
	}
}

/*
 * open_beneath() - open @path (relative, no "..") below the directory
 * @dfd: every component a directory on @dfd's mount, no symlink, no
 * mount crossed.  @path_only: an O_PATH descriptor (for a name that
 * umount2() resolves), else one to read the directory with.
 * Return: the descriptor, or -errno.
 */
static int open_beneath(int dfd, const char *path, bool path_only)
{
	struct open_how how = {
		.flags = path_only ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
				   : O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					     O_CLOEXEC | O_NOATIME,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV | RESOLVE_BENEATH,
	};
	long fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));

	if (fd < 0 && errno == EPERM && (how.flags & O_NOATIME)) {
		/* O_NOATIME needs CAP_FOWNER or the owner's uid */
		how.flags &= ~(unsigned long long)O_NOATIME;
		fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));
	}
	return fd < 0 ? -errno : (int)fd;
}

/* ------------------------------------------------------------- mounts */

/*
 * shallowest_mount() - the mount point with the shortest path among
 * those equal to @prefix or below it ("@prefix/..."), from a fresh read
 * of /proc/self/mountinfo.  A mount on another one below @prefix has a
 * longer path, so detaching this one first takes those along.
 * Return: the path (the caller frees it), or NULL when there is none or
 * mountinfo cannot be read (then noted in @st).
 */
static char *shallowest_mount(const char *prefix, struct job_remove_stats *st)
{
	size_t plen = strlen(prefix), cap = 0, best_len = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, *best = NULL;
	struct mountinfo_entry e;

	if (!f) {
		note(st, errno);
		return NULL;
	}
	while (getline(&line, &cap, f) > 0) {
		size_t n;

		if (!mountinfo_parse(line, &e) ||
		    strncmp(e.mountpoint, prefix, plen) ||
		    (e.mountpoint[plen] && e.mountpoint[plen] != '/'))
			continue;
		n = strlen(e.mountpoint);
		if (best && n >= best_len)
			continue;
		free(best);
		best = strdup(e.mountpoint);
		best_len = n;
		if (!best) {
			note(st, ENOMEM);
			break;
		}
	}
	free(line);
	fclose(f);
	return best;
}

/*
 * detach_one() - detach the mount on @rel, a path below the directory
 * @mfd ("jobN" or "jobN/a/m"): its parent opened with open_beneath(),
 * its last component not followed.  Return: 0 or -errno.
 */
static int detach_one(int mfd, char *rel)
{
	char *slash = strrchr(rel, '/'), target[64 + NAME_MAX];
	int pfd = mfd, r = 0;

	if (slash) {
		*slash = '\0';
		pfd = open_beneath(mfd, rel, true);
		*slash = '/';
		if (pfd < 0)
			return pfd;
	}
	if (snprintf(target, sizeof(target), "/proc/self/fd/%d/%s", pfd,
		     slash ? slash + 1 : rel) >= (int)sizeof(target))
		r = -ENAMETOOLONG;
	else if (umount2(target, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
		r = -errno;
	if (pfd != mfd)
		close(pfd);
	return r;
}

/* job_detach_mounts() with the mount open as @mfd */
static void detach_mounts(int mfd, const char *mount, const char *name,
			  struct job_remove_stats *st)
{
	char prefix[PATH_MAX];

	if (snprintf(prefix, sizeof(prefix), "%s/%s", mount, name) >=
	    (int)sizeof(prefix)) {
		note(st, ENAMETOOLONG);
		return;
	}
	for (unsigned i = 0; i < RM_DETACH_MAX; i++) {
		char *mp = shallowest_mount(prefix, st);
		int r;

		if (!mp)
			return;
		r = detach_one(mfd, mp + strlen(mount) + 1);
		free(mp);
		if (r < 0) {
			/* it would be found again: the removal skips it */
			note(st, -r);
			return;
		}
		st->mounts++;
	}
}

void job_detach_mounts(const char *mount, const char *name,
		       struct job_remove_stats *st)
{
	int mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (mfd < 0) {
		note(st, errno);
		return;
	}
	detach_mounts(mfd, mount, name, st);
	close(mfd);
}

/* ---------------------------------------------------------- removal */

static void empty_dir(struct rm *rm, int fd, unsigned depth);

/*
 * move_up() - rename the directory @name of @dfd into the top under a
 * fresh name, where a later pass over the top empties it with fewer
 * directories open.  Return: true when it moved.
 */
static bool move_up(struct rm *rm, int dfd, const char *name)
{
	char fresh[32];

	for (int tries = 0; tries < 16; tries++) {
		snprintf(fresh, sizeof(fresh), MOVED_PREFIX "%u", rm->moved++);
		if (renameat2(dfd, name, rm->top, fresh, RENAME_NOREPLACE) == 0)
			return true;
		if (errno != EEXIST) {
			note(rm->st, errno);
			return false;
		}
	}
	note(rm->st, EEXIST);
	return false;
}

/*
 * remove_entry() - remove the entry @e that readdir listed in the
 * directory @dfd, @depth below the top.  Return: true when it is gone.
 */
static bool remove_entry(struct rm *rm, int dfd, const struct dirent *e,
			 unsigned depth)
{
	const char *name = e->d_name;
	struct stat st;
	int fd;

	if (e->d_type != DT_DIR) {
		if (unlinkat(dfd, name, 0) == 0)
			goto removed;
		if (errno != EISDIR) {
			note(rm->st, errno);
			return errno == ENOENT;
		}
		/* a directory: DT_UNKNOWN, or swapped in since readdir */
	}
	if (depth + 1 >= RM_DEPTH_MAX)
		return move_up(rm, dfd, name);
	fd = open_beneath(dfd, name, false);
	if (fd == -ELOOP || fd == -ENOTDIR) {
		/* a symlink or a file now: the name goes, never its target */
		if (unlinkat(dfd, name, 0) == 0)
			goto removed;
		note(rm->st, errno);
		return false;
	}
	if (fd < 0) {
		note(rm->st, -fd); /* EXDEV: mounted on since the detach */
		return fd == -ENOENT;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_dev != rm->dev ||
	    st.st_ino != e->d_ino) {
		/* not what readdir listed: swapped meanwhile; the next pass
		 * lists what is there now */
		rm->st->skipped++;
		note(rm->st, EBUSY);
		close(fd);
		return false;
	}
	empty_dir(rm, fd, depth + 1);
	if (unlinkat(dfd, name, AT_REMOVEDIR) < 0) {
		note(rm->st, errno);
		return false;
	}
removed:
	rm->st->removed++;
	return true;
}

/*
 * empty_dir() - remove what is in the directory @fd (which this closes),
 * @depth below the top: passes over it until one finds nothing or
 * removes nothing.  Another pass also catches what a readdir that ran
 * while names went missed.
 */
static void empty_dir(struct rm *rm, int fd, unsigned depth)
{
	unsigned passes = depth ? RM_PASSES : RM_TOP_PASSES;
	DIR *d = fdopendir(fd);

	if (!d) {
		note(rm->st, errno);
		close(fd);
		return;
	}
	for (unsigned pass = 0; pass < passes; pass++) {
		unsigned long seen = 0, gone = 0;
		struct dirent *e;

		if (pass)
			rewinddir(d);
		for (;;) {
			errno = 0;
			e = readdir(d);
			if (!e)
				break;
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			seen++;
			if (remove_entry(rm, dirfd(d), e, depth))
				gone++;
		}
		if (errno) {
			note(rm->st, errno);
			break;
		}
		if (!seen || !gone)
			break;
	}
	closedir(d);
}

int job_dir_open(const char *mount, const char *name)
{
	int mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;

	if (mfd < 0)
		return -errno;
	fd = open_beneath(mfd, name, false);
	close(mfd);
	return fd;
}

int job_remove(const char *mount, const char *name,
	       struct job_remove_stats *st)
{
	struct rm rm = { .st = st };
	struct stat ms, ts;
	int mfd, r = 1;

	mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0 || fstat(mfd, &ms) < 0) {
		r = -errno;
		goto out;
	}
	rm.dev = ms.st_dev;
	for (unsigned round = 0; round < RM_ROUNDS; round++) {
		int top, fd;

		detach_mounts(mfd, mount, name, st);
		top = open_beneath(mfd, name, false);
		if (top == -ENOENT) {
			r = 0;
			goto out;
		}
		if (top == -ELOOP || top == -ENOTDIR) {
			/* not a directory (never the prolog's): the name goes */
			if (unlinkat(mfd, name, 0) == 0 || errno == ENOENT) {
				r = 0;
				goto out;
			}
			note(st, errno);
			continue;
		}
		if (top < 0) {
			note(st, -top); /* EXDEV: mounted on since the detach */
			continue;
		}
		if (fstat(top, &ts) < 0 || ts.st_dev != rm.dev) {
			note(st, errno ? errno : EXDEV);
			close(top);
			continue;
		}
		/* no new path of the user's into it */
		if (fchown(top, 0, 0) < 0 || fchmod(top, 0700) < 0)
			note(st, errno);
		rm.top = top;
		/* a second open file description: the walk's readdir offset
		 * is its own */
		fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			note(st, errno);
		else
			empty_dir(&rm, fd, 0);
		close(top);
		if (unlinkat(mfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
			r = 0;
			goto out;
		}
		note(st, errno);
	}
	if (st->node_errno)
		r = -st->node_errno;
out:
	if (mfd >= 0)
		close(mfd);
	return r;
}
