// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mounts.c -- see tierctl.h: finding tierfs mounts and the mount of a path,
 * telling a dead mount (the daemon gone) from a live one and from a
 * path that is not tierfs, and reading a mount's stats with the error
 * a command reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "tierctl.h"
#include "cleanup.h"
#include "macro.h"
#include "size.h"
#include "banned.h"
int mount_root(const char *path, char **ret_root)
{
	_cleanup_free_ char *cur = realpath(path, NULL);
	struct stat st;

	if (!cur)
		return -errno;
	if (stat(cur, &st) < 0)
		return -errno;
	for (;;) {
		char *slash = strrchr(cur, '/');
		struct stat pst;
		char save;

		if (!slash || !strcmp(cur, "/"))
			break;
		/* look at the parent without losing @cur */
		save = slash == cur ? slash[1] : slash[0];
		if (slash == cur)
			slash[1] = '\0';
		else
			slash[0] = '\0';
		if (stat(cur, &pst) < 0 || pst.st_dev != st.st_dev) {
			if (slash == cur)
				slash[1] = save;
			else
				slash[0] = save;
			break;
		}
	}
	*ret_root = TAKE_PTR(cur);
	return 0;
}

void strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

ssize_t tierfs_mounts(char ***ret_list)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	_cleanup_free_ dev_t *devs = NULL;
	size_t cap = 0, n = 0, lcap = 0;
	char **list = NULL;

	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		struct mountinfo_entry e;
		bool seen = false;

		if (!mountinfo_parse(line, &e) ||
		    strcmp(e.fstype, TIERFS_FSTYPE))
			continue;
		/* a bind mount shares its device (and statistics) with the
		 * mount it was made from, listed before it: one entry per
		 * filesystem, so that a report names each mount once */
		for (size_t i = 0; i < n && !seen; i++)
			seen = devs[i] == makedev(e.dev_major, e.dev_minor);
		if (seen)
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 4;
			char **nl = realloc(list, ncap * sizeof(*nl));
			dev_t *nd;

			if (!nl)
				goto oom;
			list = nl;
			nd = realloc(devs, ncap * sizeof(*nd));
			if (!nd)
				goto oom;
			devs = nd;
			cap = ncap;
		}
		list[n] = strdup(e.mountpoint);
		if (!list[n])
			goto oom;
		devs[n] = makedev(e.dev_major, e.dev_minor);
		n++;
	}
	*ret_list = list;
	return (ssize_t)n;
oom:
	strv_free(list, n);
	return -ENOMEM;
}

/* ---- dead mounts ---- */

bool errno_is_dead(int e)
{
	/* ENOTCONN: the daemon is gone; ECONNABORTED: the connection was
	 * aborted through /sys/fs/fuse/connections/N/abort */
	return e == ENOTCONN || e == ECONNABORTED;
}

/*
 * @path made absolute and normalized by its text alone (".", ".." and
 * repeated slashes taken out): on a dead mount every lookup fails, so
 * realpath() cannot.  malloc'd, or NULL.
 */
static char *lexical_abspath(const char *path)
{
	_cleanup_free_ char *cwd = NULL;
	_cleanup_free_ char *full = NULL;
	char *out, *save = NULL;
	size_t n = 0;

	if (path[0] != '/') {
		cwd = getcwd(NULL, 0);
		if (!cwd)
			return NULL;
	}
	if (asprintf(&full, "%s/%s", cwd ? cwd : "", path) < 0) {
		full = NULL;
		return NULL;
	}
	out = malloc(strlen(full) + 2);
	if (!out)
		return NULL;
	for (char *c = strtok_r(full, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		size_t cl = strlen(c);

		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--; /* the slash */
			continue;
		}
		out[n++] = '/';
		memcpy(out + n, c, cl);
		n += cl;
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return out;
}

/*
 * The mount that holds the absolute path @abs by its text: the longest
 * mount point of /proc/self/mountinfo that is @abs or one of its
 * parents (of equal ones the last listed: the mount on top).
 * *ret_mp and *ret_type are malloc'd.  Return: 0, -ENOENT, -errno.
 */
static int mount_of_path(const char *abs, char **ret_mp, char **ret_type)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	char *mp = NULL, *type = NULL;
	size_t lcap = 0, best = 0;

	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		struct mountinfo_entry e;
		size_t ml;

		if (!mountinfo_parse(line, &e))
			continue;
		ml = strlen(e.mountpoint);
		if (strcmp(e.mountpoint, "/") &&
		    (strncmp(abs, e.mountpoint, ml) ||
		     (abs[ml] != '\0' && abs[ml] != '/')))
			continue;
		if (ml < best)
			continue;
		free(mp);
		free(type);
		mp = strdup(e.mountpoint);
		type = strdup(e.fstype);
		if (!mp || !type) {
			free(mp);
			free(type);
			return -ENOMEM;
		}
		best = ml;
	}
	if (!mp)
		return -ENOENT;
	*ret_mp = mp;
	*ret_type = type;
	return 0;
}

char *dead_mount_why(const char *path, int err, char **ret_mp, bool *ret_tierfs)
{
	_cleanup_free_ char *abs = lexical_abspath(path);
	_cleanup_free_ char *mp = NULL;
	_cleanup_free_ char *type = NULL;
	bool tierfs;
	char *why;
	int r;

	if (ret_mp)
		*ret_mp = NULL;
	if (ret_tierfs)
		*ret_tierfs = false;
	if (!abs || mount_of_path(abs, &mp, &type) < 0 ||
	    strncmp(type, "fuse", 4)) {
		r = asprintf(&why,
			     "cannot access '%s': %s (a FUSE mount whose daemon is gone is cleared with 'umount -l MOUNT')",
			     qn(path), strerror(err));
		return r < 0 ? NULL : why;
	}
	tierfs = !strcmp(type, TIERFS_FSTYPE);
	if (!strcmp(abs, mp))
		r = asprintf(&why,
			     "'%s' is a dead %s mount: its daemon is gone (%s); 'umount -l %s' clears it",
			     qn(path), tierfs ? "tierfs" : type, strerror(err),
			     qn(mp));
	else
		r = asprintf(&why,
			     "'%s' is on a dead %s mount, '%s': its daemon is gone (%s); 'umount -l %s' clears it",
			     qn(path), tierfs ? "tierfs" : type, qn(mp),
			     strerror(err), qn(mp));
	if (r < 0)
		return NULL;
	if (ret_tierfs)
		*ret_tierfs = tierfs;
	if (ret_mp)
		*ret_mp = TAKE_PTR(mp);
	return why;
}

/* ---- is it tierfs? ---- */

/*
 * 1 when the filesystem of device @dev is mounted with type
 * TIERFS_FSTYPE, 0 when it is listed with another type or not at all,
 * -errno when /proc/self/mountinfo cannot be read.
 */
static int dev_is_tierfs(dev_t dev)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t lcap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		struct mountinfo_entry e;

		if (!mountinfo_parse(line, &e) || e.dev_major != major(dev) ||
		    e.dev_minor != minor(dev))
			continue;
		/* bind mounts share the device and so the type: the first
		 * line of the device decides */
		return !strcmp(e.fstype, TIERFS_FSTYPE);
	}
	return ferror(f) ? -EIO : 0;
}

static void tierfs_path_fill(struct tierfs_path *p, const char *path, int fd,
			     dev_t dev)
{
	p->path = path;
	p->fd = fd;
	p->dev = dev;
	snprintf(p->at, sizeof(p->at), "/proc/self/fd/%d", fd);
}

/* Why a path failed its check: the message, and whether the path is on
 * a tierfs mount that is dead (@mp its mount point). */
struct path_err {
	char *why; /* without "tierctl: "; NULL: out of memory */
	bool dead;
	char *mp;
};

static int path_err_set(struct path_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int path_err_set(struct path_err *e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&e->why, fmt, ap) < 0)
		e->why = NULL;
	va_end(ap);
	return TIERCTL_EXIT_FAIL;
}

static int path_err_dead(struct path_err *e, const char *path, int err)
{
	e->why = dead_mount_why(path, err, &e->mp, &e->dead);
	return TIERCTL_EXIT_FAIL;
}

/*
 * The one test of "is this on tierfs" that every command makes before
 * it reads or changes anything of a PATH or MOUNT the user named:
 *
 *   1. statfs() says FUSE (f_type FUSE_SUPER_MAGIC): cheap, and it
 *      answers for every non-FUSE path without reading anything else;
 *   2. the mount of the path's device (st_dev, the MAJ:MIN field of
 *      /proc/self/mountinfo) has the type fuse.tierfs: the daemon mounts
 *      with subtype=tierfs (fs/main.c) and mount.fuse3 uses the fstab
 *      type, so another FUSE filesystem is never taken for tierfs.
 *
 * Why mountinfo and not a probe of user.tierfs.stats on the mount root:
 * the probe asks the daemon of a foreign FUSE filesystem a question and
 * trusts its answer; it needs the mount root, found by walking up the
 * tree, and a bind mount of a tierfs subdirectory has a "root" that does
 * not answer; and stats is only one attribute of the protocol.  The
 * device number is what the kernel itself says the path is on, it holds
 * for bind mounts too, and the same mountinfo lists the mounts for
 * "status" without MOUNT, so both always agree.
 *
 * The path is opened O_PATH (no open request reaches any filesystem, a
 * FIFO does not block) and checked through that descriptor; the calls
 * that follow use p->at, /proc/self/fd/N, which names the file that was
 * checked even if the path is renamed or a symlink swapped meanwhile.
 *
 * A FUSE mount whose daemon is gone answers every call with ENOTCONN:
 * the message then names the dead mount (by the path's text, as the
 * kernel cannot look it up) and says that umount -l clears it.
 *
 * path_check() makes the test and leaves the error in @e;
 * tierfs_path_open() prints it.
 */
static int path_check(const char *path, struct tierfs_path *ret,
		      struct path_err *e)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	struct statfs sfs;
	struct stat st;
	int r;

	memset(e, 0, sizeof(*e));
	if (fd < 0 || fstatfs(fd, &sfs) < 0 || fstat(fd, &st) < 0) {
		r = errno; /* before qn() may change it */
		if (errno_is_dead(r))
			return path_err_dead(e, path, r);
		return path_err_set(e, "cannot access '%s': %s", qn(path),
				    strerror(r));
	}
	if ((unsigned long)sfs.f_type != FUSE_SUPER_MAGIC)
		return path_err_set(e, "'%s' is not on a tierfs mount",
				    qn(path));
	r = dev_is_tierfs(st.st_dev);
	if (r < 0)
		return path_err_set(
			e,
			"cannot tell whether '%s' is on a tierfs mount: cannot read /proc/self/mountinfo: %s",
			qn(path), strerror(-r));
	if (r == 0)
		return path_err_set(e, "'%s' is not on a tierfs mount",
				    qn(path));
	tierfs_path_fill(ret, path, TAKE_FD(fd), st.st_dev);
	return 0;
}

static void path_err_release(struct path_err *e)
{
	free(e->why);
	free(e->mp);
	memset(e, 0, sizeof(*e));
}

/* Print @e as one error line. */
static int path_err_print(const struct path_err *e)
{
	return tierctl_err("%s", e->why ? e->why : "out of memory");
}

int tierfs_path_open(const char *path, struct tierfs_path *ret)
{
	struct path_err e;
	int r = path_check(path, ret, &e);

	if (r)
		path_err_print(&e);
	path_err_release(&e);
	return r;
}

int tierfs_path_open_on(const char *path, const struct tierfs_path *mnt,
			struct tierfs_path *ret)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (st.st_dev != mnt->dev)
		return -EXDEV;
	tierfs_path_fill(ret, path, TAKE_FD(fd), st.st_dev);
	return 0;
}

void tierfs_path_close(struct tierfs_path *p)
{
	if (p->fd >= 0)
		(void)close(p->fd);
	p->fd = -1;
}

/*
 * open_mount_stats() with the error in @e instead of on stderr.  @e->dead
 * also when the daemon died between the check and the read; @down: the
 * path is on a tierfs mount (checked, or found dead by its path) that
 * gave no statistics, @e->mp then its mount point or root when known.
 */
static int mount_stats_check(const char *path, char **ret_root,
			     struct stats *ret, struct tierfs_path *ret_mnt,
			     struct path_err *e, bool *down)
{
	struct tierfs_path p;
	char *root;
	int r = path_check(path, &p, e);

	*down = r && e->dead;
	if (r)
		return r;
	r = mount_root(p.at, &root);
	if (r < 0) {
		tierfs_path_close(&p);
		if (errno_is_dead(-r)) {
			path_err_dead(e, path, -r);
			*down = e->dead;
			return TIERCTL_EXIT_FAIL;
		}
		return path_err_set(e, "cannot access '%s': %s", qn(path),
				    strerror(-r));
	}
	r = stats_read(root, ret);
	if (r < 0) {
		tierfs_path_close(&p);
		*down = true;
		if (errno_is_dead(-r)) {
			path_err_dead(e, root, -r);
			if (!e->mp)
				e->mp = root;
			else
				free(root);
			return TIERCTL_EXIT_FAIL;
		}
		/* ENODATA: the mount is tierfs (checked above), but what we
		 * took for its root is not the daemon's root directory, as
		 * with a bind mount of a subdirectory */
		path_err_set(e, "cannot read the statistics of '%s': %s",
			     qn(root),
			     r == -ENODATA ? "not the root of a tierfs mount"
					   : strerror(-r));
		e->mp = root;
		return TIERCTL_EXIT_FAIL;
	}
	if (ret_mnt)
		*ret_mnt = p;
	else
		tierfs_path_close(&p);
	*ret_root = root;
	return 0;
}

int open_mount_stats(const char *path, char **ret_root, struct stats *ret,
		     struct tierfs_path *ret_mnt)
{
	struct path_err e;
	bool down;
	int r = mount_stats_check(path, ret_root, ret, ret_mnt, &e, &down);

	if (r)
		path_err_print(&e);
	path_err_release(&e);
	return r;
}

void mount_probe(const char *path, struct mount_probe *ret)
{
	struct path_err e;
	bool down;

	memset(ret, 0, sizeof(*ret));
	if (mount_stats_check(path, &ret->root, &ret->stats, NULL, &e,
			      &down) == 0) {
		ret->state = PROBE_UP;
		return;
	}
	ret->state = down ? PROBE_DOWN : PROBE_BAD;
	ret->dead = e.dead;
	ret->root = TAKE_PTR(e.mp);
	ret->why = TAKE_PTR(e.why);
	if (!ret->why)
		ret->why = strdup("out of memory");
	path_err_release(&e);
}

void mount_probe_release(struct mount_probe *p)
{
	if (p->state == PROBE_UP)
		stats_release(&p->stats);
	free(p->root);
	free(p->why);
	memset(p, 0, sizeof(*p));
}

int mount_probe_all(int argc, char **argv, struct mount_probe **ret,
		    size_t *ret_n)
{
	char **list = NULL;
	struct mount_probe *v;
	size_t n;
	bool listed = argc == 0;

	if (listed) {
		ssize_t nm = tierfs_mounts(&list);

		if (nm < 0)
			return tierctl_err("cannot read /proc/self/mountinfo: %s",
					   strerror((int)-nm));
		if (nm == 0) {
			*ret = NULL;
			*ret_n = 0;
			return 0;
		}
		n = (size_t)nm;
	} else {
		n = (size_t)argc;
	}
	v = calloc(n, sizeof(*v));
	if (!v) {
		strv_free(list, listed ? n : 0);
		return tierctl_err("out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		struct mount_probe *p = &v[i];

		mount_probe(listed ? list[i] : argv[i], p);
		/* a mount point of type fuse.tierfs that does not answer
		 * (dead, another user's without allow_other) is a mount
		 * that is down, whatever the reason */
		if (listed && p->state != PROBE_UP) {
			p->state = PROBE_DOWN;
			free(p->root);
			p->root = strdup(list[i]);
		}
		if (p->state == PROBE_DOWN && !p->root)
			p->root = strdup(listed ? list[i] : argv[i]);
		if (!p->root && p->state != PROBE_BAD) {
			mount_probe_release(p);
			p->state = PROBE_BAD;
			p->why = strdup("out of memory");
		}
		/* two paths in one mount: report it once */
		for (size_t k = 0; k < i && p->state != PROBE_BAD; k++) {
			if (v[k].state != PROBE_BAD && v[k].root &&
			    !strcmp(v[k].root, p->root)) {
				mount_probe_release(p);
				p->state = PROBE_DUP;
				break;
			}
		}
	}
	strv_free(list, listed ? n : 0);
	*ret = v;
	*ret_n = n;
	return 0;
}

void mount_probe_free(struct mount_probe *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		mount_probe_release(&v[i]);
	free(v);
}
