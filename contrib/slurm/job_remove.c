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

#define RM_PASSES 16		/* readdir passes over the top */
#define RM_ROUNDS 3		/* detach, empty, rmdir: tries of the whole */
#define RM_DETACH_MAX 256	/* mounts detached in one call */
#define RM_MOVED_MAX (1u << 26) /* directories moved up in one removal */
#define MOVED_PREFIX ".tierfs-rm." /* their names in the top: ours */

/* one removal: the top and what was moved into it */
struct rm {
	dev_t dev;	  /* st_dev of the tierfs */
	int top;	  /* the job directory, locked: only we change it */
	unsigned moved;	  /* fresh names MOVED_PREFIX0.. handed out */
	unsigned visited; /* of those, cleared (or tried) by drain_moved() */
	struct job_remove_stats *st;
};

/* errors a process of the job's user can cause by changing the tree */
static bool user_errno(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTEMPTY:
	case EEXIST:
	case EBUSY:
	case EXDEV:
	case ELOOP:
	case ENOTDIR:
	case EISDIR:
	case EACCES:
	case EPERM:
	case EINVAL:
	case ESTALE:
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
		.flags = path_only
				 ? O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
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

/* the fresh name of the @k-th directory moved up */
static void moved_name(unsigned k, char *buf, size_t len)
{
	snprintf(buf, len, MOVED_PREFIX "%u", k);
}

/*
 * move_up() - rename what is at @name in @dfd (a directory, unless the
 * user swapped it meanwhile: then whatever it is now) into the top
 * under the next fresh name, queued for drain_moved().
 * Return: true when it moved.
 */
static bool move_up(struct rm *rm, int dfd, const char *name)
{
	char fresh[32];

	while (rm->moved < RM_MOVED_MAX) {
		moved_name(rm->moved++, fresh, sizeof(fresh));
		if (renameat2(dfd, name, rm->top, fresh, RENAME_NOREPLACE) == 0)
			return true;
		if (errno != EEXIST) {
			/* EBUSY: a mount point; ENOENT: gone meanwhile */
			note(rm->st, errno);
			return errno == ENOENT;
		}
		/* a name the user made before the top was locked */
	}
	note(rm->st, ENOSPC); /* a process that keeps making directories */
	return false;
}

/*
 * clear_dir() - remove the directory @name of the top: open it, unlink
 * what in it is not a directory, move its directories up (the names in
 * it are the user's to change, so they are only unlinked or renamed
 * away, never walked through), then rmdir it.  @ino: the inode readdir
 * listed for @name, or 0 when the name is one of ours.
 * Return: true when it is gone.
 */
static bool clear_dir(struct rm *rm, const char *name, ino_t ino)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd = open_beneath(rm->top, name, false);

	if (fd == -ELOOP || fd == -ENOTDIR) {
		/* not a directory (a symlink moved up): the name goes */
		if (unlinkat(rm->top, name, 0) == 0)
			goto removed;
		note(rm->st, errno);
		return errno == ENOENT;
	}
	if (fd < 0) {
		note(rm->st, -fd); /* EXDEV: mounted on since the detach */
		return fd == -ENOENT;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_dev != rm->dev || (ino && st.st_ino != ino)) {
		/* not what readdir listed (cannot be in the locked top) */
		rm->st->skipped++;
		note(rm->st, EBUSY);
		close(fd);
		return false;
	}
	d = fdopendir(fd);
	if (!d) {
		note(rm->st, errno);
		close(fd);
		return false;
	}
	for (;;) {
		errno = 0;
		e = readdir(d);
		if (!e)
			break;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type != DT_DIR) {
			if (unlinkat(dirfd(d), e->d_name, 0) == 0) {
				rm->st->removed++;
				continue;
			}
			if (errno != EISDIR) {
				note(rm->st, errno);
				continue;
			}
			/* a directory: DT_UNKNOWN, or swapped in since */
		}
		(void)move_up(rm, dirfd(d), e->d_name);
	}
	if (errno)
		note(rm->st, errno);
	closedir(d);
	if (unlinkat(rm->top, name, AT_REMOVEDIR) < 0) {
		/* ENOTEMPTY: filled meanwhile; a later pass comes back */
		note(rm->st, errno);
		return false;
	}
removed:
	rm->st->removed++;
	return true;
}

/* clear_dir() each directory moved up and not yet visited, those it
 * moves up in turn included: a tree of any depth, in a loop */
static unsigned long drain_moved(struct rm *rm)
{
	unsigned long gone = 0;
	char fresh[32];

	for (; rm->visited < rm->moved; rm->visited++) {
		moved_name(rm->visited, fresh, sizeof(fresh));
		if (clear_dir(rm, fresh, 0))
			gone++;
	}
	return gone;
}

/*
 * empty_top() - remove what is in the top (@fd, a second descriptor of
 * it, which this closes): passes over it until one finds nothing or
 * removes nothing.  A later pass catches what a readdir that ran while
 * names went missed, and directories a process of the user's filled
 * again.
 */
static void empty_top(struct rm *rm, int fd)
{
	DIR *d = fdopendir(fd);

	if (!d) {
		note(rm->st, errno);
		close(fd);
		return;
	}
	for (unsigned pass = 0; pass < RM_PASSES; pass++) {
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
			if (e->d_type != DT_DIR) {
				if (unlinkat(rm->top, e->d_name, 0) == 0) {
					rm->st->removed++;
					gone++;
					continue;
				}
				if (errno != EISDIR) {
					note(rm->st, errno);
					continue;
				}
			}
			if (clear_dir(rm, e->d_name, e->d_ino))
				gone++;
			gone += drain_moved(rm);
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

int job_remove(const char *mount, const char *name, struct job_remove_stats *st)
{
	struct rm rm = { .st = st };
	struct stat ms, ts;
	int mfd, r = 1;

	mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0 || fstat(mfd, &ms) < 0) {
		r = -errno;
		note(st, -r);
		goto out;
	}
	rm.dev = ms.st_dev;
	for (unsigned round = 0; round < RM_ROUNDS; round++) {
		int top, fd, e;

		detach_mounts(mfd, mount, name, st);
		top = open_beneath(mfd, name, false);
		if (top == -ENOENT) {
			r = 0;
			goto out;
		}
		if (top == -ELOOP || top == -ENOTDIR) {
			/* not a directory, so not the prolog's: the name goes */
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
		e = 0;
		if (fstat(top, &ts) < 0)
			e = errno;
		else if (ts.st_dev != rm.dev)
			e = EXDEV;
		if (e) {
			note(st, e); /* EXDEV cannot be: RESOLVE_NO_XDEV */
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
			empty_top(&rm, fd);
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
