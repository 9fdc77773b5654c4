// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_namespace.c -- Check suite for fs/namespace.c (namespace.h) on an
 * in-process mount (t_fs.h), called as ops.c calls it:
 *   - lookup: ENOENT, ENOTDIR, ENAMETOOLONG (NAME_MAX is allowed), the
 *     lookup it counts, and ret_ arguments left alone on failure;
 *   - creation of every kind (mknod, mkdir, symlink, create): types,
 *     modes, owners, rdev, EEXIST, ENOTDIR, ENAMETOOLONG for names and
 *     targets, ENOENT in a removed directory, the parent's times;
 *   - link counts: st_nlink of directories and their parents through
 *     mkdir, rmdir and rename; of files through link and unlink; a
 *     removed inode lives while the kernel knows it;
 *   - rename: plain, RENAME_NOREPLACE, RENAME_EXCHANGE, bad flags, the
 *     POSIX/tmpfs errors (EEXIST, ENOENT, ENOTDIR, EISDIR, ENOTEMPTY,
 *     EINVAL into its own subtree), two names of one file, ".."
 *     (d_parent, and as ns_readdir() lists it) and d_self (the paths of
 *     inode_path()/dir_path()) after each kind of move;
 *   - the setgid directory: group and S_ISGID inherited;
 *   - inode units (fs->ninodes) against opt.max_inodes: ENOSPC from
 *     every creator and from link with nothing changed, units given
 *     back by unlink, rmdir, rename over a name, and the last forget;
 *   - setattr: truncate errors, mode, owners (a new uid re-resolves
 *     policies), times; the kill-suid/sgid rules (ns_kill_suidgid(),
 *     its unflagged variant, killpriv_v2 truncate and chown).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fuse_inc.h"
#include "namespace.h"
#include "xattr.h"
#include "t_fs.h"
#include "tap.h"

#define EXT (64u * 1024)

static struct t_fs T;
static struct tierfs *fs;
static const struct ns_cred root_cred = { .uid = 0, .gid = 0 };

static void setup(void)
{
	static const uint32_t slots[] = { 16 };

	t_fs_setup(&T, EXT, 1, slots);
	fs = T.fs;
}

static void teardown(void)
{
	t_fs_teardown(&T);
	fs = NULL;
}

/* ---- helpers: each keeps the lookup the call counted ---- */

static struct tfs_inode *t_mkdir(struct tfs_inode *dir, const char *name)
{
	struct tfs_inode *d = NULL;
	struct stat st;

	ck_assert_int_eq(ns_mkdir(fs, dir, name, 0755, &root_cred, &d, &st),
			 0);
	return d;
}

static struct tfs_inode *t_mkfile(struct tfs_inode *dir, const char *name)
{
	struct tfs_inode *f = NULL;
	struct stat st;

	ck_assert_int_eq(ns_create(fs, dir, name, 0644, &root_cred, &f, &st),
			 0);
	return f;
}

/* The inode named @name in @dir, or NULL; no lookup kept (the name
 * holds it). */
static struct tfs_inode *t_find(struct tfs_inode *dir, const char *name)
{
	struct tfs_inode *x = NULL;
	struct stat st;
	int r = ns_lookup(fs, dir, name, &x, &st);

	if (r == -ENOENT)
		return NULL;
	ck_assert_int_eq(r, 0);
	inode_forget(fs, x, 1);
	return x;
}

static uint32_t t_nlink(struct tfs_inode *i)
{
	return __atomic_load_n(&i->i_nlink, __ATOMIC_RELAXED);
}

/* Is @ino still on the inode table?  Compares pointers only, so it is
 * safe to ask of a freed inode. */
static bool t_on_table(struct tfs_inode *ino)
{
	bool found = false;

	pthread_mutex_lock(&fs->itab_lock);
	for (struct tfs_inode *i = fs->inodes->i_next; i != fs->inodes;
	     i = i->i_next)
		if (i == ino)
			found = true;
	pthread_mutex_unlock(&fs->itab_lock);
	return found;
}

static void t_stat(struct tfs_inode *i, struct stat *st)
{
	pthread_mutex_lock(&i->i_lock);
	inode_fill_stat(fs, i, st);
	pthread_mutex_unlock(&i->i_lock);
}

static void t_path_is(struct tfs_inode *i, const char *want)
{
	char *p = inode_path(fs, i);

	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p, want);
	free(p);
}

static void t_dir_path_is(struct tfs_inode *d, const char *want)
{
	char *p;

	pthread_rwlock_rdlock(&fs->ns_lock);
	p = dir_path(fs, d);
	pthread_rwlock_unlock(&fs->ns_lock);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p, want);
	free(p);
}

struct dotdot {
	uint64_t ino;
	unsigned seen;
};

static bool t_fill_dotdot(void *arg, const char *name,
			  struct tfs_inode *inode, uint64_t ino, mode_t type,
			  uint64_t cookie)
{
	struct dotdot *dd = arg;

	(void)inode;
	(void)type;
	(void)cookie;
	if (!strcmp(name, "..")) {
		dd->ino = ino;
		dd->seen++;
	}
	return true;
}

/* The inode number ns_readdir() lists as ".." of @dir. */
static uint64_t t_dotdot(struct tfs_inode *dir)
{
	struct dotdot dd = { 0 };
	uint64_t limit = 0;

	(void)ns_readdir(fs, dir, 0, &limit, t_fill_dotdot, &dd);
	ck_assert_uint_eq(dd.seen, 1);
	return dd.ino;
}

static char *t_name(char c, size_t n)
{
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* ------------------------------------------------------------------ */

START_TEST(test_lookup)
{
	struct tfs_inode *f, *x;
	struct stat st;
	char *n255 = t_name('a', NAME_MAX), *n256 = t_name('a', NAME_MAX + 1);

	f = t_mkfile(fs->root, "f");
	ck_assert_uint_eq(f->i_nlookup, 1);
	x = NULL;
	ck_assert_int_eq(ns_lookup(fs, fs->root, "f", &x, &st), 0);
	ck_assert_ptr_eq(x, f);
	ck_assert_uint_eq(f->i_nlookup, 2); /* one more kernel reference */
	ck_assert_uint_eq(st.st_ino, f->i_ino);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0644);
	ck_assert_uint_eq(st.st_nlink, 1);

	/* failures leave the ret_ arguments alone */
	x = (struct tfs_inode *)&T;
	memset(&st, 0x5a, sizeof(st));
	ck_assert_int_eq(ns_lookup(fs, fs->root, "g", &x, &st), -ENOENT);
	ck_assert_ptr_eq(x, (struct tfs_inode *)&T);
	ck_assert_uint_eq(st.st_ino, 0x5a5a5a5a5a5a5a5aull);
	ck_assert_int_eq(ns_lookup(fs, f, "g", &x, &st), -ENOTDIR);
	ck_assert_int_eq(ns_lookup(fs, fs->root, n256, &x, &st),
			 -ENAMETOOLONG);
	ck_assert_ptr_eq(x, (struct tfs_inode *)&T);
	/* NAME_MAX itself is a name */
	ck_assert_int_eq(ns_lookup(fs, fs->root, n255, &x, &st), -ENOENT);
	ck_assert_uint_eq(f->i_nlookup, 2);
	free(n255);
	free(n256);
}
END_TEST

START_TEST(test_create_kinds)
{
	struct ns_cred c = { .uid = 4242, .gid = 4343 };
	struct tfs_inode *x, *f, *d, *gone;
	struct stat st;
	char *n256 = t_name('b', NAME_MAX + 1);
	char *t4095 = t_name('t', PATH_MAX - 1), *t4096 = t_name('t', PATH_MAX);

	ck_assert_int_eq(ns_mknod(fs, fs->root, "r", 0640, 0, &c, &x, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0640); /* no type: regular */
	ck_assert_uint_eq(x->i_type, S_IFREG);
	ck_assert_uint_eq(st.st_nlink, 1);
	ck_assert_uint_eq(st.st_uid, 4242);
	ck_assert_uint_eq(st.st_gid, 4343);
	ck_assert_int_eq(ns_mknod(fs, fs->root, "p", S_IFIFO | 0600, 0, &c, &x,
				  &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFIFO | 0600);
	ck_assert_int_eq(ns_mknod(fs, fs->root, "c", S_IFCHR | 0600,
				  makedev(1, 3), &c, &x, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFCHR | 0600);
	ck_assert_uint_eq(st.st_rdev, makedev(1, 3));
	ck_assert_int_eq(ns_mknod(fs, fs->root, "b", S_IFBLK | 0600,
				  makedev(8, 1), &c, &x, &st), 0);
	ck_assert_uint_eq(st.st_rdev, makedev(8, 1));
	ck_assert_int_eq(ns_mknod(fs, fs->root, "s", S_IFSOCK | 0600, 0, &c,
				  &x, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFSOCK | 0600);
	/* directories and symlinks have their own calls */
	ck_assert_int_eq(ns_mknod(fs, fs->root, "d", S_IFDIR | 0755, 0, &c, &x,
				  &st), -EINVAL);
	ck_assert_int_eq(ns_mknod(fs, fs->root, "l", S_IFLNK | 0777, 0, &c, &x,
				  &st), -EINVAL);
	ck_assert_ptr_null(t_find(fs->root, "d"));
	ck_assert_ptr_null(t_find(fs->root, "l"));

	ck_assert_int_eq(ns_symlink(fs, fs->root, "l", "target/x", &c, &x,
				    &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFLNK | 0777);
	ck_assert_int_eq(st.st_size, 8);
	ck_assert_str_eq(x->i_link, "target/x");
	ck_assert_int_eq(ns_symlink(fs, fs->root, "long", t4095, &c, &x, &st),
			 0);
	ck_assert_int_eq(st.st_size, PATH_MAX - 1);
	ck_assert_int_eq(ns_symlink(fs, fs->root, "toolong", t4096, &c, &x,
				    &st), -ENAMETOOLONG);
	ck_assert_ptr_null(t_find(fs->root, "toolong"));

	ck_assert_int_eq(ns_create(fs, fs->root, "f", 0640, &c, &f, &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0640);
	ck_assert_uint_eq(st.st_uid, 4242);
	ck_assert_uint_eq(st.st_gid, 4343);
	ck_assert_int_eq(st.st_size, 0);
	/* type bits in a mode are not the caller's to choose */
	ck_assert_int_eq(ns_mkdir(fs, fs->root, "d", S_IFREG | 0750, &c, &d,
				  &st), 0);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0750);
	ck_assert_uint_eq(st.st_nlink, 2);
	ck_assert_int_eq(st.st_size, 4096);
	ck_assert_ptr_eq(d->i_dir.d_parent, fs->root);

	/* every kind over an existing name of every kind */
	ck_assert_int_eq(ns_create(fs, fs->root, "f", 0644, &c, &x, &st),
			 -EEXIST);
	ck_assert_int_eq(ns_create(fs, fs->root, "d", 0644, &c, &x, &st),
			 -EEXIST);
	ck_assert_int_eq(ns_mkdir(fs, fs->root, "f", 0755, &c, &x, &st),
			 -EEXIST);
	ck_assert_int_eq(ns_mkdir(fs, fs->root, "d", 0755, &c, &x, &st),
			 -EEXIST);
	ck_assert_int_eq(ns_mknod(fs, fs->root, "l", S_IFIFO | 0644, 0, &c, &x,
				  &st), -EEXIST);
	ck_assert_int_eq(ns_symlink(fs, fs->root, "p", "t", &c, &x, &st),
			 -EEXIST);
	ck_assert_ptr_eq(t_find(fs->root, "f"), f);

	/* in a file; a name too long */
	ck_assert_int_eq(ns_create(fs, f, "x", 0644, &c, &x, &st), -ENOTDIR);
	ck_assert_int_eq(ns_mkdir(fs, f, "x", 0755, &c, &x, &st), -ENOTDIR);
	ck_assert_int_eq(ns_create(fs, fs->root, n256, 0644, &c, &x, &st),
			 -ENAMETOOLONG);
	ck_assert_int_eq(ns_mkdir(fs, fs->root, n256, 0755, &c, &x, &st),
			 -ENAMETOOLONG);
	ck_assert_int_eq(ns_symlink(fs, fs->root, n256, "t", &c, &x, &st),
			 -ENAMETOOLONG);

	/* a removed directory takes no new names */
	gone = t_mkdir(fs->root, "gone");
	ck_assert_int_eq(ns_rmdir(fs, fs->root, "gone"), 0);
	ck_assert_int_eq(ns_create(fs, gone, "x", 0644, &c, &x, &st), -ENOENT);
	ck_assert_int_eq(ns_mkdir(fs, gone, "x", 0755, &c, &x, &st), -ENOENT);
	ck_assert_int_eq(ns_symlink(fs, gone, "x", "t", &c, &x, &st), -ENOENT);
	ck_assert_int_eq(ns_mknod(fs, gone, "x", S_IFIFO, 0, &c, &x, &st),
			 -ENOENT);
	ck_assert(dir_is_empty(&gone->i_dir));
	free(n256);
	free(t4095);
	free(t4096);
}
END_TEST

/* A creation sets the parent's mtime and ctime; a failed one does not. */
START_TEST(test_create_times_parent)
{
	struct tfs_inode *d = t_mkdir(fs->root, "d"), *x;
	struct stat st;

	pthread_mutex_lock(&d->i_lock);
	d->i_mtime = d->i_ctime = (struct tfs_time){ .sec = 1, .nsec = 0 };
	pthread_mutex_unlock(&d->i_lock);
	ck_assert_int_eq(ns_create(fs, d, "f", 0644, &root_cred, &x, &st), 0);
	ck_assert_int_gt(d->i_mtime.sec, 1);
	ck_assert_int_gt(d->i_ctime.sec, 1);
	pthread_mutex_lock(&d->i_lock);
	d->i_mtime = d->i_ctime = (struct tfs_time){ .sec = 1, .nsec = 0 };
	pthread_mutex_unlock(&d->i_lock);
	ck_assert_int_eq(ns_create(fs, d, "f", 0644, &root_cred, &x, &st),
			 -EEXIST);
	ck_assert_int_eq(d->i_mtime.sec, 1);
	ck_assert_int_eq(d->i_ctime.sec, 1);
}
END_TEST

START_TEST(test_nlink_dirs)
{
	struct tfs_inode *a, *b, *c, *f;
	struct stat st;

	ck_assert_uint_eq(t_nlink(fs->root), 2);
	a = t_mkdir(fs->root, "a");
	ck_assert_uint_eq(t_nlink(fs->root), 3);
	ck_assert_uint_eq(t_nlink(a), 2);
	b = t_mkdir(a, "b");
	c = t_mkdir(a, "c");
	ck_assert_uint_eq(t_nlink(a), 4);
	ck_assert_uint_eq(t_nlink(fs->root), 3);
	t_stat(a, &st);
	ck_assert_uint_eq(st.st_nlink, 4);
	/* files do not count in a directory's links */
	f = t_mkfile(a, "f");
	ck_assert_uint_eq(t_nlink(a), 4);

	ck_assert_int_eq(ns_rmdir(fs, fs->root, "a"), -ENOTEMPTY);
	ck_assert_int_eq(ns_rmdir(fs, a, "f"), -ENOTDIR);
	ck_assert_int_eq(ns_rmdir(fs, a, "nope"), -ENOENT);
	ck_assert_int_eq(ns_unlink(fs, a, "b"), -EISDIR);
	ck_assert_int_eq(ns_unlink(fs, a, "nope"), -ENOENT);
	ck_assert_uint_eq(t_nlink(a), 4);

	ck_assert_int_eq(ns_rmdir(fs, a, "b"), 0);
	ck_assert_uint_eq(t_nlink(a), 3);
	ck_assert_uint_eq(t_nlink(b), 0);
	ck_assert_ptr_null(t_find(a, "b"));
	/* the kernel still knows b: it lives, with ".." at the root */
	ck_assert(t_on_table(b));
	ck_assert_ptr_eq(b->i_dir.d_parent, fs->root);
	inode_forget(fs, b, 1);
	ck_assert(!t_on_table(b));

	ck_assert_int_eq(ns_unlink(fs, a, "f"), 0);
	ck_assert_int_eq(ns_rmdir(fs, a, "c"), 0);
	ck_assert_uint_eq(t_nlink(a), 2);
	ck_assert_int_eq(ns_rmdir(fs, fs->root, "a"), 0);
	ck_assert_uint_eq(t_nlink(fs->root), 2);
	ck_assert_uint_eq(t_nlink(a), 0);
	inode_forget(fs, c, 1);
	inode_forget(fs, f, 1);
	inode_forget(fs, a, 1);
	ck_assert(!t_on_table(a));
	ck_assert(!t_on_table(c));
	ck_assert(!t_on_table(f));
}
END_TEST

START_TEST(test_link_unlink)
{
	struct tfs_inode *f, *d, *e, *g;
	struct stat st;
	char *n256 = t_name('c', NAME_MAX + 1);

	f = t_mkfile(fs->root, "f");
	d = t_mkdir(fs->root, "d");
	ck_assert_int_eq(ns_link(fs, f, fs->root, "g", &st), 0);
	ck_assert_uint_eq(st.st_nlink, 2);
	ck_assert_uint_eq(st.st_ino, f->i_ino);
	ck_assert_uint_eq(f->i_nlookup, 2); /* link counts a lookup */
	ck_assert_int_eq(ns_link(fs, f, d, "h", &st), 0);
	ck_assert_uint_eq(st.st_nlink, 3);
	ck_assert_uint_eq(f->i_nparents, 3);
	ck_assert_ptr_eq(t_find(d, "h"), f);
	ck_assert_ptr_eq(t_find(fs->root, "g"), f);
	/* the directory's link count is not a file's business */
	ck_assert_uint_eq(t_nlink(d), 2);

	ck_assert_int_eq(ns_link(fs, d, fs->root, "dd", &st), -EPERM);
	ck_assert_int_eq(ns_link(fs, f, fs->root, "g", &st), -EEXIST);
	ck_assert_int_eq(ns_link(fs, f, fs->root, "d", &st), -EEXIST);
	ck_assert_int_eq(ns_link(fs, f, fs->root, n256, &st), -ENAMETOOLONG);
	ck_assert_uint_eq(t_nlink(f), 3);
	ck_assert_uint_eq(f->i_nlookup, 3);

	/* no new names in a removed directory */
	e = t_mkdir(fs->root, "e");
	ck_assert_int_eq(ns_rmdir(fs, fs->root, "e"), 0);
	ck_assert_int_eq(ns_link(fs, f, e, "x", &st), -ENOENT);
	ck_assert_uint_eq(t_nlink(f), 3);

	ck_assert_int_eq(ns_unlink(fs, fs->root, "f"), 0);
	ck_assert_uint_eq(t_nlink(f), 2);
	ck_assert_ptr_null(t_find(fs->root, "f"));
	ck_assert_int_eq(ns_unlink(fs, d, "h"), 0);
	ck_assert_uint_eq(t_nlink(f), 1);
	ck_assert_int_eq(ns_unlink(fs, fs->root, "g"), 0);
	ck_assert_uint_eq(t_nlink(f), 0);
	ck_assert_uint_eq(f->i_nparents, 0);
	ck_assert(t_on_table(f)); /* open: three lookups */
	/* no name for a removed file (linkat of an unlinked one) */
	ck_assert_int_eq(ns_link(fs, f, fs->root, "back", &st), -ENOENT);
	ck_assert_ptr_null(t_find(fs->root, "back"));
	inode_forget(fs, f, 3);
	ck_assert(!t_on_table(f));

	/* a name of a file that is not open: gone with its last name */
	g = t_mkfile(fs->root, "g2");
	inode_forget(fs, g, 1);
	ck_assert(t_on_table(g));
	ck_assert_int_eq(ns_unlink(fs, fs->root, "g2"), 0);
	ck_assert(!t_on_table(g));
	inode_forget(fs, e, 1);
	free(n256);
}
END_TEST

START_TEST(test_rename_errors_and_replace)
{
	struct tfs_inode *a, *b, *d, *e, *empty, *gone;
	struct stat st;
	char *n256 = t_name('d', NAME_MAX + 1);

	a = t_mkfile(fs->root, "a");
	b = t_mkfile(fs->root, "b");
	d = t_mkdir(fs->root, "d");
	e = t_mkdir(fs->root, "e");
	inode_forget(fs, t_mkfile(e, "x"), 1);

	ck_assert_int_eq(ns_rename(fs, fs->root, "a", fs->root, "a2", 0), 0);
	ck_assert_ptr_null(t_find(fs->root, "a"));
	ck_assert_ptr_eq(t_find(fs->root, "a2"), a);

	ck_assert_int_eq(ns_rename(fs, fs->root, "a2", fs->root, "b",
				   RENAME_NOREPLACE), -EEXIST);
	ck_assert_ptr_eq(t_find(fs->root, "a2"), a);
	ck_assert_ptr_eq(t_find(fs->root, "b"), b);
	ck_assert_int_eq(ns_rename(fs, fs->root, "nope", fs->root, "x", 0),
			 -ENOENT);
	ck_assert_int_eq(ns_rename(fs, fs->root, "a2", fs->root, "x",
				   RENAME_WHITEOUT), -EINVAL);
	ck_assert_int_eq(ns_rename(fs, fs->root, "a2", fs->root, "b",
				   RENAME_NOREPLACE | RENAME_EXCHANGE),
			 -EINVAL);
	ck_assert_int_eq(ns_rename(fs, fs->root, "a2", fs->root, n256, 0),
			 -ENAMETOOLONG);
	ck_assert_ptr_eq(t_find(fs->root, "a2"), a);

	/* replace a file: the old one has no name, and lives while open */
	ck_assert_int_eq(ns_rename(fs, fs->root, "a2", fs->root, "b", 0), 0);
	ck_assert_ptr_eq(t_find(fs->root, "b"), a);
	ck_assert_ptr_null(t_find(fs->root, "a2"));
	ck_assert_uint_eq(t_nlink(b), 0);
	ck_assert_uint_eq(t_nlink(a), 1);
	ck_assert(t_on_table(b));
	inode_forget(fs, b, 1);
	ck_assert(!t_on_table(b));

	/* type mismatches and a full target */
	ck_assert_int_eq(ns_rename(fs, fs->root, "b", fs->root, "d", 0),
			 -EISDIR);
	ck_assert_int_eq(ns_rename(fs, fs->root, "d", fs->root, "b", 0),
			 -ENOTDIR);
	ck_assert_int_eq(ns_rename(fs, fs->root, "d", fs->root, "e", 0),
			 -ENOTEMPTY);
	ck_assert_ptr_eq(t_find(fs->root, "d"), d);
	ck_assert_ptr_eq(t_find(fs->root, "e"), e);
	ck_assert_ptr_eq(t_find(fs->root, "b"), a);

	/* a directory over an empty one: the root loses one link */
	empty = t_mkdir(fs->root, "empty");
	ck_assert_uint_eq(t_nlink(fs->root), 5);
	ck_assert_int_eq(ns_rename(fs, fs->root, "d", fs->root, "empty", 0),
			 0);
	ck_assert_uint_eq(t_nlink(fs->root), 4);
	ck_assert_uint_eq(t_nlink(d), 2);
	ck_assert_uint_eq(t_nlink(empty), 0);
	ck_assert_ptr_eq(t_find(fs->root, "empty"), d);
	ck_assert_ptr_null(t_find(fs->root, "d"));
	ck_assert_ptr_eq(empty->i_dir.d_parent, fs->root);
	ck_assert_ptr_null(empty->i_dir.d_self);
	t_path_is(empty, "/(deleted)");
	t_path_is(d, "/empty");
	inode_forget(fs, empty, 1);
	ck_assert(!t_on_table(empty));

	/* two names of one file: POSIX says do nothing, and both stay */
	ck_assert_int_eq(ns_link(fs, a, fs->root, "b2", &st), 0);
	ck_assert_int_eq(ns_rename(fs, fs->root, "b", fs->root, "b2", 0), 0);
	ck_assert_ptr_eq(t_find(fs->root, "b"), a);
	ck_assert_ptr_eq(t_find(fs->root, "b2"), a);
	ck_assert_uint_eq(t_nlink(a), 2);
	/* onto itself */
	ck_assert_int_eq(ns_rename(fs, fs->root, "b", fs->root, "b", 0), 0);
	ck_assert_ptr_eq(t_find(fs->root, "b"), a);
	ck_assert_int_eq(ns_rename(fs, fs->root, "empty", fs->root, "empty",
				   0), 0);
	ck_assert_ptr_eq(t_find(fs->root, "empty"), d);
	ck_assert_uint_eq(t_nlink(fs->root), 4);

	/* into a removed directory */
	gone = t_mkdir(fs->root, "gone");
	ck_assert_int_eq(ns_rmdir(fs, fs->root, "gone"), 0);
	ck_assert_int_eq(ns_rename(fs, fs->root, "b2", gone, "z", 0), -ENOENT);
	ck_assert_ptr_eq(t_find(fs->root, "b2"), a);
	ck_assert(dir_is_empty(&gone->i_dir));
	free(n256);
}
END_TEST

START_TEST(test_rename_into_own_subtree)
{
	struct tfs_inode *a = t_mkdir(fs->root, "a");
	struct tfs_inode *b = t_mkdir(a, "b");
	struct tfs_inode *c = t_mkdir(b, "c");
	struct tfs_inode *f = t_mkfile(c, "f");

	ck_assert_int_eq(ns_rename(fs, fs->root, "a", c, "x", 0), -EINVAL);
	ck_assert_int_eq(ns_rename(fs, fs->root, "a", a, "x", 0), -EINVAL);
	ck_assert_int_eq(ns_rename(fs, a, "b", c, "x", 0), -EINVAL);
	ck_assert_int_eq(ns_rename(fs, a, "b", b, "x", RENAME_NOREPLACE),
			 -EINVAL);
	/* an exchange that would put either side under itself */
	ck_assert_int_eq(ns_rename(fs, fs->root, "a", c, "f",
				   RENAME_EXCHANGE), -EINVAL);
	ck_assert_int_eq(ns_rename(fs, c, "f", fs->root, "a",
				   RENAME_EXCHANGE), -EINVAL);
	/* nothing moved */
	ck_assert_ptr_eq(a->i_dir.d_parent, fs->root);
	ck_assert_ptr_eq(b->i_dir.d_parent, a);
	ck_assert_ptr_eq(c->i_dir.d_parent, b);
	ck_assert_uint_eq(t_nlink(fs->root), 3);
	ck_assert_uint_eq(t_nlink(a), 3);
	ck_assert_uint_eq(t_nlink(b), 3);
	ck_assert_uint_eq(t_nlink(c), 2);
	t_path_is(f, "/a/b/c/f");
	t_dir_path_is(c, "/a/b/c");
	ck_assert_ptr_null(t_find(c, "x"));
	ck_assert_ptr_null(t_find(a, "x"));
	/* down the tree is fine for a file, and up for a directory */
	ck_assert_int_eq(ns_rename(fs, b, "c", fs->root, "c", 0), 0);
	ck_assert_ptr_eq(c->i_dir.d_parent, fs->root);
	t_path_is(f, "/c/f");
}
END_TEST

START_TEST(test_rename_dir_parent)
{
	struct tfs_inode *p = t_mkdir(fs->root, "p");
	struct tfs_inode *q = t_mkdir(fs->root, "q");
	struct tfs_inode *d = t_mkdir(p, "d");
	struct tfs_inode *e = t_mkdir(d, "e");
	struct tfs_inode *f = t_mkfile(e, "f");

	ck_assert_uint_eq(t_dotdot(d), p->i_ino);
	ck_assert_uint_eq(t_dotdot(fs->root), fs->root->i_ino);
	ck_assert_int_eq(ns_rename(fs, p, "d", q, "d", 0), 0);
	ck_assert_uint_eq(t_nlink(p), 2);
	ck_assert_uint_eq(t_nlink(q), 3);
	ck_assert_uint_eq(t_nlink(d), 3);
	ck_assert_uint_eq(t_nlink(fs->root), 4);
	ck_assert_ptr_eq(d->i_dir.d_parent, q);
	ck_assert_uint_eq(t_dotdot(d), q->i_ino);
	ck_assert_uint_eq(t_dotdot(e), d->i_ino);
	ck_assert_ptr_eq(d->i_dir.d_self, dir_find(&q->i_dir, "d"));
	t_path_is(d, "/q/d");
	t_dir_path_is(e, "/q/d/e");
	t_path_is(f, "/q/d/e/f");

	/* a new name in the same directory: no link moves */
	ck_assert_int_eq(ns_rename(fs, q, "d", q, "d2", 0), 0);
	ck_assert_uint_eq(t_nlink(q), 3);
	ck_assert_ptr_eq(d->i_dir.d_parent, q);
	ck_assert_ptr_eq(d->i_dir.d_self, dir_find(&q->i_dir, "d2"));
	t_path_is(d, "/q/d2");
	t_path_is(f, "/q/d2/e/f");

	/* up to the root */
	ck_assert_int_eq(ns_rename(fs, q, "d2", fs->root, "top", 0), 0);
	ck_assert_uint_eq(t_nlink(q), 2);
	ck_assert_uint_eq(t_nlink(fs->root), 5);
	ck_assert_uint_eq(t_dotdot(d), fs->root->i_ino);
	t_path_is(d, "/top");
	t_path_is(f, "/top/e/f");

	/* a file moves its name's directory */
	ck_assert_int_eq(ns_rename(fs, e, "f", p, "g", 0), 0);
	ck_assert_ptr_eq(inode_parent(f), p);
	t_path_is(f, "/p/g");
}
END_TEST

START_TEST(test_rename_exchange)
{
	struct tfs_inode *p = t_mkdir(fs->root, "p");
	struct tfs_inode *q = t_mkdir(fs->root, "q");
	struct tfs_inode *d = t_mkdir(p, "d");
	struct tfs_inode *f = t_mkfile(q, "f");
	struct tfs_inode *x, *y, *g, *h;

	/* a directory and a file, across directories */
	ck_assert_int_eq(ns_rename(fs, p, "d", q, "f", RENAME_EXCHANGE), 0);
	ck_assert_ptr_eq(t_find(p, "d"), f);
	ck_assert_ptr_eq(t_find(q, "f"), d);
	ck_assert_uint_eq(t_nlink(p), 2);
	ck_assert_uint_eq(t_nlink(q), 3);
	ck_assert_uint_eq(t_nlink(d), 2);
	ck_assert_uint_eq(t_nlink(f), 1);
	ck_assert_ptr_eq(d->i_dir.d_parent, q);
	ck_assert_uint_eq(t_dotdot(d), q->i_ino);
	ck_assert_ptr_eq(inode_parent(f), p);
	ck_assert_uint_eq(f->i_nparents, 1);
	t_path_is(d, "/q/f");
	t_path_is(f, "/p/d");

	/* nothing to exchange with */
	ck_assert_int_eq(ns_rename(fs, p, "d", q, "nope", RENAME_EXCHANGE),
			 -ENOENT);
	ck_assert_ptr_eq(t_find(p, "d"), f);
	ck_assert_ptr_null(t_find(q, "nope"));

	/* two directories: each parent gives one link and takes one */
	x = t_mkdir(p, "x");
	y = t_mkdir(q, "y");
	ck_assert_uint_eq(t_nlink(p), 3);
	ck_assert_uint_eq(t_nlink(q), 4);
	ck_assert_int_eq(ns_rename(fs, p, "x", q, "y", RENAME_EXCHANGE), 0);
	ck_assert_uint_eq(t_nlink(p), 3);
	ck_assert_uint_eq(t_nlink(q), 4);
	ck_assert_ptr_eq(x->i_dir.d_parent, q);
	ck_assert_ptr_eq(y->i_dir.d_parent, p);
	t_path_is(x, "/q/y");
	t_path_is(y, "/p/x");

	/* two files in one directory: the names swap */
	g = t_mkfile(fs->root, "g");
	h = t_mkfile(fs->root, "h");
	ck_assert_int_eq(ns_rename(fs, fs->root, "g", fs->root, "h",
				   RENAME_EXCHANGE), 0);
	ck_assert_ptr_eq(t_find(fs->root, "g"), h);
	ck_assert_ptr_eq(t_find(fs->root, "h"), g);
	ck_assert_uint_eq(t_nlink(g), 1);
	ck_assert_uint_eq(t_nlink(h), 1);
	t_path_is(g, "/h");
}
END_TEST

START_TEST(test_removed_dir_names)
{
	struct tfs_inode *a = t_mkdir(fs->root, "a");
	struct tfs_inode *g = t_mkdir(a, "g");
	struct tfs_inode *f = t_mkfile(a, "f");

	ck_assert_ptr_eq(g->i_dir.d_self, dir_find(&a->i_dir, "g"));
	ck_assert_int_eq(ns_rmdir(fs, a, "g"), 0);
	ck_assert_ptr_null(g->i_dir.d_self);
	ck_assert_ptr_eq(g->i_dir.d_parent, fs->root);
	ck_assert_uint_eq(t_dotdot(g), fs->root->i_ino);
	t_path_is(g, "/(deleted)");
	t_dir_path_is(g, "/(deleted)");
	/* an unlinked file that is still open */
	ck_assert_int_eq(ns_unlink(fs, a, "f"), 0);
	t_path_is(f, "/(deleted)");
	t_path_is(a, "/a");
}
END_TEST

START_TEST(test_sgid_dir)
{
	struct ns_cred c5 = { .uid = 1000, .gid = 5 };
	struct tfs_inode *g, *sub, *deeper, *plain, *x;
	struct stat a = { 0 }, st;

	g = t_mkdir(fs->root, "g");
	a.st_mode = 02775;
	a.st_gid = 777;
	ck_assert_int_eq(ns_setattr(fs, g, &a, FUSE_SET_ATTR_MODE |
				    FUSE_SET_ATTR_GID, false, &root_cred), 0);
	ck_assert_uint_eq(g->i_mode, 02775);

	ck_assert_int_eq(ns_mkdir(fs, g, "sub", 0755, &c5, &sub, &st), 0);
	ck_assert_uint_eq(st.st_gid, 777);
	ck_assert_uint_eq(st.st_uid, 1000);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | S_ISGID | 0755);
	ck_assert_int_eq(ns_mkdir(fs, sub, "deeper", 0700, &c5, &deeper, &st),
			 0);
	ck_assert_uint_eq(st.st_gid, 777);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | S_ISGID | 0700);
	/* files take the group, not the bit */
	ck_assert_int_eq(ns_create(fs, deeper, "f", 0644, &c5, &x, &st), 0);
	ck_assert_uint_eq(st.st_gid, 777);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0644);
	ck_assert_int_eq(ns_symlink(fs, g, "l", "t", &c5, &x, &st), 0);
	ck_assert_uint_eq(st.st_gid, 777);
	ck_assert_int_eq(ns_mknod(fs, g, "p", S_IFIFO | 0600, 0, &c5, &x, &st),
			 0);
	ck_assert_uint_eq(st.st_gid, 777);
	ck_assert_uint_eq(st.st_mode, S_IFIFO | 0600);

	/* no setgid: the caller's group */
	plain = t_mkdir(fs->root, "plain");
	ck_assert_int_eq(ns_mkdir(fs, plain, "x", 0755, &c5, &x, &st), 0);
	ck_assert_uint_eq(st.st_gid, 5);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0755);
	ck_assert_int_eq(ns_create(fs, plain, "f", 0644, &c5, &x, &st), 0);
	ck_assert_uint_eq(st.st_gid, 5);
}
END_TEST

START_TEST(test_inode_units)
{
	uint64_t base = __atomic_load_n(&fs->ninodes, __ATOMIC_RELAXED);
	struct tfs_inode *f, *d, *x = NULL, *l, *r, *s;
	struct tfs_time mt;
	struct stat st;
	char *t255 = t_name('t', 255), *t256 = t_name('t', 256);

	ck_assert_uint_eq(base, 1); /* the root */
	fs->opt.max_inodes = base + 3;
	f = t_mkfile(fs->root, "f");
	ck_assert_uint_eq(fs->ninodes, base + 1);
	d = t_mkdir(fs->root, "d");
	ck_assert_uint_eq(fs->ninodes, base + 2);
	ck_assert_int_eq(ns_link(fs, f, d, "l", &st), 0); /* a name: a unit */
	ck_assert_uint_eq(fs->ninodes, base + 3);

	/* full: every creator and link fail, and nothing changes */
	mt = fs->root->i_mtime;
	ck_assert_int_eq(ns_create(fs, fs->root, "x", 0644, &root_cred, &x,
				   &st), -ENOSPC);
	ck_assert_int_eq(ns_mkdir(fs, fs->root, "x", 0755, &root_cred, &x,
				  &st), -ENOSPC);
	ck_assert_int_eq(ns_symlink(fs, fs->root, "x", "t", &root_cred, &x,
				    &st), -ENOSPC);
	ck_assert_int_eq(ns_mknod(fs, fs->root, "x", S_IFIFO | 0644, 0,
				  &root_cred, &x, &st), -ENOSPC);
	ck_assert_int_eq(ns_link(fs, f, fs->root, "x", &st), -ENOSPC);
	ck_assert_ptr_null(x);
	ck_assert_uint_eq(fs->ninodes, base + 3);
	ck_assert_ptr_null(t_find(fs->root, "x"));
	ck_assert_uint_eq(t_nlink(fs->root), 3);
	ck_assert_uint_eq(t_nlink(f), 2);
	ck_assert_uint_eq(f->i_nparents, 2);
	ck_assert_uint_eq(f->i_nlookup, 2);
	ck_assert_int_eq(fs->root->i_mtime.sec, mt.sec);
	ck_assert_uint_eq(fs->root->i_mtime.nsec, mt.nsec);

	/* a name of many: its unit comes back at once */
	ck_assert_int_eq(ns_unlink(fs, d, "l"), 0);
	ck_assert_uint_eq(fs->ninodes, base + 2);
	/* a 256-byte target takes two units, 255 one */
	ck_assert_int_eq(ns_symlink(fs, fs->root, "s", t256, &root_cred, &x,
				    &st), -ENOSPC);
	ck_assert_uint_eq(fs->ninodes, base + 2);
	ck_assert_ptr_null(t_find(fs->root, "s"));
	ck_assert_int_eq(ns_symlink(fs, fs->root, "s", t255, &root_cred, &s,
				    &st), 0);
	ck_assert_uint_eq(fs->ninodes, base + 3);

	/* the last name of an open file: the units stay until the forget */
	ck_assert_int_eq(ns_unlink(fs, fs->root, "f"), 0);
	ck_assert_uint_eq(fs->ninodes, base + 3);
	inode_forget(fs, f, 2);
	ck_assert_uint_eq(fs->ninodes, base + 2);
	/* rmdir likewise */
	ck_assert_int_eq(ns_rmdir(fs, fs->root, "d"), 0);
	ck_assert_uint_eq(fs->ninodes, base + 2);
	inode_forget(fs, d, 1);
	ck_assert_uint_eq(fs->ninodes, base + 1);
	/* rename over a name that is not open gives its unit back */
	l = t_mkfile(fs->root, "l");
	r = t_mkfile(fs->root, "r");
	ck_assert_uint_eq(fs->ninodes, base + 3);
	inode_forget(fs, r, 1);
	ck_assert_int_eq(ns_rename(fs, fs->root, "l", fs->root, "r", 0), 0);
	ck_assert_uint_eq(fs->ninodes, base + 2);
	ck_assert_int_eq(ns_unlink(fs, fs->root, "r"), 0);
	inode_forget(fs, l, 1);
	ck_assert_int_eq(ns_unlink(fs, fs->root, "s"), 0);
	inode_forget(fs, s, 1);
	ck_assert_uint_eq(fs->ninodes, base);
	free(t255);
	free(t256);
}
END_TEST

START_TEST(test_setattr)
{
	struct tfs_inode *f = t_mkfile(fs->root, "f");
	struct tfs_inode *d = t_mkdir(fs->root, "d"), *l;
	struct timespec before;
	struct stat a = { 0 }, st;
	uint64_t gen;

	ck_assert_int_eq(ns_symlink(fs, fs->root, "l", "t", &root_cred, &l,
				    &st), 0);
	a.st_size = 100;
	ck_assert_int_eq(ns_setattr(fs, d, &a, FUSE_SET_ATTR_SIZE, false,
				    &root_cred), -EISDIR);
	ck_assert_int_eq(ns_setattr(fs, l, &a, FUSE_SET_ATTR_SIZE, false,
				    &root_cred), -EINVAL);
	a.st_size = -1;
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_SIZE, false,
				    &root_cred), -EINVAL);
	ck_assert_uint_eq(f->i_size, 0);
	a.st_size = 3 * EXT + 5;
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_SIZE, false,
				    &root_cred), 0);
	ck_assert_uint_eq(f->i_size, 3 * EXT + 5);

	/* mode: the permission bits only */
	a.st_mode = S_IFDIR | 04711;
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_MODE, false,
				    &root_cred), 0);
	ck_assert_uint_eq(f->i_mode, 04711);
	ck_assert_uint_eq(f->i_type, S_IFREG);

	/* owners: a new uid re-resolves policies, the same one does not */
	gen = fs->policy_gen;
	a.st_uid = f->i_uid;
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_UID, false,
				    &root_cred), 0);
	ck_assert_uint_eq(fs->policy_gen, gen);
	a.st_uid = 777;
	a.st_gid = 888;
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_UID |
				    FUSE_SET_ATTR_GID, false, &root_cred), 0);
	ck_assert_uint_gt(fs->policy_gen, gen);
	ck_assert_uint_eq(f->i_uid, 777);
	ck_assert_uint_eq(f->i_gid, 888);

	/* times as given; ctime now unless given */
	before = now_ts();
	a.st_atim = (struct timespec){ 100, 5 };
	a.st_mtim = (struct timespec){ 200, 6 };
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_ATIME |
				    FUSE_SET_ATTR_MTIME, false, &root_cred), 0);
	t_stat(f, &st);
	ck_assert_int_eq(st.st_atim.tv_sec, 100);
	ck_assert_int_eq(st.st_atim.tv_nsec, 5);
	ck_assert_int_eq(st.st_mtim.tv_sec, 200);
	ck_assert_int_eq(st.st_mtim.tv_nsec, 6);
	ck_assert_int_ge(st.st_ctim.tv_sec, before.tv_sec);
	a.st_ctim = (struct timespec){ 300, 7 };
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_CTIME, false,
				    &root_cred), 0);
	t_stat(f, &st);
	ck_assert_int_eq(st.st_ctim.tv_sec, 300);
	ck_assert_int_eq(st.st_ctim.tv_nsec, 7);
	ck_assert_int_eq(st.st_mtim.tv_sec, 200);
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_ATIME_NOW |
				    FUSE_SET_ATTR_MTIME_NOW, false,
				    &root_cred), 0);
	t_stat(f, &st);
	ck_assert_int_ge(st.st_atim.tv_sec, before.tv_sec);
	ck_assert_int_ge(st.st_mtim.tv_sec, before.tv_sec);
	ck_assert_int_ge(st.st_ctim.tv_sec, before.tv_sec);
}
END_TEST

/* Supplementary groups for the kill-sgid rule: like fuse_req_getgroups(). */
struct t_groups {
	int n;
	gid_t g[200];
	unsigned calls;
};

static int t_getgroups(void *arg, int size, gid_t list[])
{
	struct t_groups *tg = arg;

	tg->calls++;
	for (int i = 0; i < size && i < tg->n; i++)
		list[i] = tg->g[i];
	return tg->n;
}

static void t_set_mode(struct tfs_inode *i, mode_t mode, gid_t gid)
{
	pthread_mutex_lock(&i->i_lock);
	i->i_mode = mode;
	i->i_gid = gid;
	i->i_ctime = (struct tfs_time){ .sec = 1, .nsec = 0 };
	pthread_mutex_unlock(&i->i_lock);
}

START_TEST(test_kill_suidgid)
{
	struct t_groups tg = { .n = 100 };
	struct ns_cred c = { .uid = 1000, .gid = 50, .getgroups = t_getgroups,
			     .arg = &tg };
	struct tfs_inode *f = t_mkfile(fs->root, "f");
	struct tfs_inode *d = t_mkdir(fs->root, "d");
	char v[8];

	for (int i = 0; i < tg.n; i++)
		tg.g[i] = (gid_t)(1000 + i);

	/* suid always, sgid with group execute always */
	t_set_mode(f, 06755, 50);
	ck_assert(ns_kill_suidgid(fs, f, &c, false));
	ck_assert_uint_eq(f->i_mode, 0755);
	ck_assert_int_gt(f->i_ctime.sec, 1);
	t_set_mode(f, 02755, 50);
	ck_assert(ns_kill_suidgid(fs, f, &c, true));
	ck_assert_uint_eq(f->i_mode, 0755);
	/* sgid without group execute (mandatory locking): kept for a member */
	t_set_mode(f, 02644, 50);
	ck_assert(!ns_kill_suidgid(fs, f, &c, false));
	ck_assert_uint_eq(f->i_mode, 02644);
	ck_assert_int_eq(f->i_ctime.sec, 1);
	/* ... cleared for a non-member ... */
	t_set_mode(f, 02644, 60);
	ck_assert(ns_kill_suidgid(fs, f, &c, false));
	ck_assert_uint_eq(f->i_mode, 0644);
	/* ... kept for a member by a supplementary group past the 64th ... */
	tg.g[90] = 60;
	tg.calls = 0;
	t_set_mode(f, 02644, 60);
	ck_assert(!ns_kill_suidgid(fs, f, &c, false));
	ck_assert_uint_eq(f->i_mode, 02644);
	ck_assert_uint_eq(tg.calls, 2); /* 64, then all 100 */
	/* ... and for a capable caller, who is not asked for groups */
	tg.g[90] = 1090;
	tg.calls = 0;
	ck_assert(!ns_kill_suidgid(fs, f, &c, true));
	ck_assert_uint_eq(f->i_mode, 02644);
	ck_assert_uint_eq(tg.calls, 0);

	/* security.capability goes, user.* stays */
	t_set_mode(f, 0644, 50);
	ck_assert_int_eq(xattr_set(fs, f, "user.keep", "k", 1, 0), 0);
	ck_assert(!ns_kill_suidgid(fs, f, &c, false));
	ck_assert_int_eq(xattr_set(fs, f, "security.capability", "cap", 3, 0),
			 0);
	ck_assert(ns_kill_suidgid(fs, f, &c, false));
	ck_assert_int_eq(xattr_get(fs, f, "security.capability", v,
				   sizeof(v)), -ENODATA);
	ck_assert_int_eq(xattr_get(fs, f, "user.keep", v, sizeof(v)), 1);
	ck_assert_uint_eq(f->i_mode, 0644);

	/* directories keep their bits */
	t_set_mode(d, 06755, 60);
	ck_assert(!ns_kill_suidgid(fs, d, &c, false));
	ck_assert_uint_eq(d->i_mode, 06755);

	/* the unflagged variant: only under killpriv_v2, never for root */
	t_set_mode(f, 04755, 50);
	fs->killpriv_v2 = false;
	ck_assert(!ns_kill_suidgid_unflagged(fs, f, &c));
	ck_assert_uint_eq(f->i_mode, 04755);
	fs->killpriv_v2 = true;
	ck_assert(!ns_kill_suidgid_unflagged(fs, f, &root_cred));
	ck_assert_uint_eq(f->i_mode, 04755);
	ck_assert(ns_kill_suidgid_unflagged(fs, f, &c));
	ck_assert_uint_eq(f->i_mode, 0755);
}
END_TEST

/* killpriv_v2: the kill flag on a truncate, and chown, clear the bits. */
START_TEST(test_setattr_killpriv)
{
	struct t_groups tg = { .n = 0 };
	struct ns_cred c = { .uid = 1000, .gid = 50, .getgroups = t_getgroups,
			     .arg = &tg };
	struct tfs_inode *f = t_mkfile(fs->root, "f");
	struct stat a = { 0 };

	fs->killpriv_v2 = true;
	t_set_mode(f, 06755, 50);
	a.st_size = 10;
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_SIZE, false, &c),
			 0);
	ck_assert_uint_eq(f->i_mode, 06755); /* no flag: a capable caller */
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_SIZE, true, &c),
			 0);
	ck_assert_uint_eq(f->i_mode, 0755);
	/* chown by root: suid and sgid with group execute go */
	t_set_mode(f, 06755, 50);
	a.st_uid = 1234;
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_UID, false,
				    &root_cred), 0);
	ck_assert_uint_eq(f->i_mode, 0755);
	ck_assert_uint_eq(f->i_uid, 1234);
	/* a mode change is not a chown */
	a.st_mode = 06755;
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_MODE, false,
				    &root_cred), 0);
	ck_assert_uint_eq(f->i_mode, 06755);
}
END_TEST

static Suite *namespace_suite(void)
{
	Suite *s = suite_create("namespace");
	TCase *tc = tcase_create("names");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_lookup);
	tcase_add_test(tc, test_create_kinds);
	tcase_add_test(tc, test_create_times_parent);
	tcase_add_test(tc, test_nlink_dirs);
	tcase_add_test(tc, test_link_unlink);
	tcase_add_test(tc, test_sgid_dir);
	tcase_add_test(tc, test_inode_units);
	suite_add_tcase(s, tc);

	tc = tcase_create("rename");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_rename_errors_and_replace);
	tcase_add_test(tc, test_rename_into_own_subtree);
	tcase_add_test(tc, test_rename_dir_parent);
	tcase_add_test(tc, test_rename_exchange);
	tcase_add_test(tc, test_removed_dir_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("attributes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_setattr);
	tcase_add_test(tc, test_kill_suidgid);
	tcase_add_test(tc, test_setattr_killpriv);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(namespace_suite());
}
