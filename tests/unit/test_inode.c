// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_inode.c -- Check suite for fs/inode.c (inode.h) on an in-process
 * mount (t_fs.h):
 *   - lifetime: an inode lives while a name (i_nlink), the kernel
 *     (i_nlookup) or an internal pin (i_nref) holds it, and is off the
 *     table (and its unit given back) when the last one goes, whichever
 *     it is; inode_is_orphan(); a forget of more than was looked up is
 *     clamped; inode numbers are never reused;
 *   - inode units: inode_charge()/inode_uncharge() against
 *     opt.max_inodes (all or nothing, 0 for no limit), inode_new() past
 *     it (NULL, ENOSPC, nothing taken), inode_units() and
 *     inode_link_units() of symlink targets, and a symlink's units back
 *     when it is freed;
 *   - the directories of a file's names: inode_parent_add/del/move,
 *     inode_parent_at() in order, inode_parent() the latest, the array
 *     growing and shrinking back to the in-place one; and the same
 *     through ns_link/ns_unlink/ns_rename for a file in several dirs;
 *   - inode_fill_stat() of every type; inode_sub();
 *   - dir_path()/inode_path(): the root, nested and long paths, the
 *     latest name of a hard-linked file, a removed directory and an
 *     unlinked file ("(deleted)").
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fuse_inc.h"
#include "namespace.h"
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

static uint64_t t_units(void)
{
	return __atomic_load_n(&fs->ninodes, __ATOMIC_RELAXED);
}

/* Is @ino on the inode table?  Pointers only: safe for a freed inode. */
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

/* ------------------------------------------------------------------ */

START_TEST(test_lifetime_counts)
{
	uint64_t base = t_units(), ino;
	struct tfs_inode *i;

	i = inode_new(fs, S_IFREG | 0600, 1, 2, 0);
	ck_assert_ptr_nonnull(i);
	ck_assert(t_on_table(i));
	ck_assert_uint_eq(t_units(), base + 1);
	ck_assert_uint_eq(i->i_type, S_IFREG);
	ck_assert_uint_eq(i->i_mode, 0600);
	ck_assert_uint_eq(i->i_nlink, 0);
	ck_assert_uint_eq(i->i_nlookup, 0);
	ck_assert_uint_eq(i->i_nref, 0);
	ino = i->i_ino;
	ck_assert_uint_eq(ino + 1, fs->next_ino);

	/* a name and a lookup; the name goes: the lookup holds it */
	i->i_nlink = 1;
	inode_lookup_ref(fs, i);
	ck_assert(!inode_is_orphan(fs, i));
	pthread_rwlock_wrlock(&fs->ns_lock);
	inode_link_drop(fs, i, 1);
	pthread_rwlock_unlock(&fs->ns_lock);
	ck_assert_uint_eq(i->i_nlink, 0);
	ck_assert(t_on_table(i));
	ck_assert(!inode_is_orphan(fs, i)); /* the kernel knows it */
	/* a pin; the kernel forgets it: only the pin holds it */
	inode_pin(fs, i);
	inode_forget(fs, i, 1);
	ck_assert(t_on_table(i));
	ck_assert(inode_is_orphan(fs, i));
	ck_assert_uint_eq(t_units(), base + 1);
	inode_unpin(fs, i);
	ck_assert(!t_on_table(i));
	ck_assert_uint_eq(t_units(), base);

	/* the other orders: pin first, lookup last */
	i = inode_new(fs, S_IFREG | 0600, 1, 2, 0);
	ck_assert_ptr_nonnull(i);
	ck_assert_uint_gt(i->i_ino, ino); /* never reused */
	i->i_nlink = 1;
	inode_pin(fs, i);
	inode_lookup_ref(fs, i);
	inode_unpin(fs, i);
	ck_assert(t_on_table(i));
	pthread_rwlock_wrlock(&fs->ns_lock);
	inode_link_drop(fs, i, 1);
	pthread_rwlock_unlock(&fs->ns_lock);
	ck_assert(t_on_table(i));
	/* a kernel forgetting more than it looked up: clamped, freed */
	inode_lookup_ref(fs, i);
	ck_assert_uint_eq(i->i_nlookup, 2);
	inode_forget(fs, i, 5);
	ck_assert(!t_on_table(i));
	ck_assert_uint_eq(t_units(), base);

	/* links: inc and drop balance; the name alone keeps it */
	i = inode_new(fs, S_IFREG | 0600, 1, 2, 0);
	ck_assert_ptr_nonnull(i);
	i->i_nlink = 1;
	inode_link_inc(fs, i);
	ck_assert_uint_eq(i->i_nlink, 2);
	pthread_rwlock_wrlock(&fs->ns_lock);
	inode_link_drop(fs, i, 1);
	pthread_rwlock_unlock(&fs->ns_lock);
	ck_assert(t_on_table(i));
	ck_assert(!inode_is_orphan(fs, i));
	pthread_rwlock_wrlock(&fs->ns_lock);
	inode_link_drop(fs, i, 1);
	pthread_rwlock_unlock(&fs->ns_lock);
	ck_assert(!t_on_table(i));
	ck_assert_uint_eq(t_units(), base);
}
END_TEST

/* Through the namespace: a created file the kernel forgot lives by its
 * name; an unlinked open one by its lookup. */
START_TEST(test_lifetime_names)
{
	struct tfs_inode *f = t_mkfile(fs->root, "f");
	struct tfs_inode *g = t_mkfile(fs->root, "g");

	inode_forget(fs, f, 1);
	ck_assert(t_on_table(f));
	ck_assert(!inode_is_orphan(fs, f));
	ck_assert_int_eq(ns_unlink(fs, fs->root, "g"), 0);
	ck_assert(t_on_table(g));
	ck_assert(!inode_is_orphan(fs, g));
	inode_pin(fs, g);
	inode_forget(fs, g, 1);
	ck_assert(inode_is_orphan(fs, g));
	inode_unpin(fs, g);
	ck_assert(!t_on_table(g));
	ck_assert_int_eq(ns_unlink(fs, fs->root, "f"), 0);
	ck_assert(!t_on_table(f));
	ck_assert_uint_eq(t_units(), 1);
}
END_TEST

START_TEST(test_charge_limits)
{
	uint64_t base = t_units(), next;
	struct tfs_inode *s, *x;
	struct stat st;
	char target[601];

	/* no limit */
	fs->opt.max_inodes = 0;
	ck_assert_int_eq(inode_charge(fs, 1000000), 0);
	ck_assert_uint_eq(t_units(), base + 1000000);
	inode_uncharge(fs, 1000000);
	ck_assert_uint_eq(t_units(), base);

	/* the limit itself may be reached, not passed; all or nothing */
	fs->opt.max_inodes = base + 2;
	ck_assert_int_eq(inode_charge(fs, 3), -ENOSPC);
	ck_assert_uint_eq(t_units(), base);
	ck_assert_int_eq(inode_charge(fs, 2), 0);
	ck_assert_uint_eq(t_units(), base + 2);
	ck_assert_int_eq(inode_charge(fs, 1), -ENOSPC);
	ck_assert_uint_eq(t_units(), base + 2);
	inode_uncharge(fs, 1);
	ck_assert_int_eq(inode_charge(fs, 1), 0);
	inode_uncharge(fs, 2);
	ck_assert_uint_eq(t_units(), base);

	/* inode_new() past it: NULL, ENOSPC, nothing taken */
	fs->opt.max_inodes = base;
	next = fs->next_ino;
	errno = 0;
	ck_assert_ptr_null(inode_new(fs, S_IFREG | 0644, 0, 0, 0));
	ck_assert_int_eq(errno, ENOSPC);
	ck_assert_uint_eq(t_units(), base);
	ck_assert_uint_eq(fs->next_ino, next);

	/* symlink targets */
	ck_assert_uint_eq(inode_link_units(0), 1);
	ck_assert_uint_eq(inode_link_units(INODE_UNIT_LINK_BYTES - 1), 1);
	ck_assert_uint_eq(inode_link_units(INODE_UNIT_LINK_BYTES), 2);
	ck_assert_uint_eq(inode_link_units(4095), 16);
	fs->opt.max_inodes = 0;
	memset(target, 'x', 600);
	target[600] = '\0';
	ck_assert_int_eq(ns_symlink(fs, fs->root, "s", target, &root_cred, &s,
				    &st), 0);
	ck_assert_uint_eq(inode_units(s), 3);
	ck_assert_uint_eq(t_units(), base + 3);
	x = t_mkfile(fs->root, "f");
	ck_assert_uint_eq(inode_units(x), 1);
	ck_assert_uint_eq(inode_units(fs->root), 1);
	ck_assert_int_eq(ns_unlink(fs, fs->root, "s"), 0);
	ck_assert_uint_eq(t_units(), base + 4); /* open: kept */
	inode_forget(fs, s, 1);
	ck_assert_uint_eq(t_units(), base + 1);
}
END_TEST

START_TEST(test_parents)
{
	struct tfs_inode *A = t_mkdir(fs->root, "A"), *B = t_mkdir(fs->root, "B");
	struct tfs_inode *C = t_mkdir(fs->root, "C"), *D = t_mkdir(fs->root, "D");
	struct tfs_inode *E = t_mkdir(fs->root, "E"), *i;

	i = inode_new(fs, S_IFREG | 0644, 0, 0, 0);
	ck_assert_ptr_nonnull(i);
	inode_pin(fs, i);
	pthread_rwlock_wrlock(&fs->ns_lock);
	ck_assert_uint_eq(i->i_nparents, 0);
	ck_assert_ptr_null(inode_parent(i));
	ck_assert_int_eq(inode_parent_add(i, A), 0);
	ck_assert_uint_eq(i->i_nparents, 1);
	ck_assert_ptr_eq(i->i_parent, A); /* in place */
	ck_assert_ptr_eq(inode_parent(i), A);
	ck_assert_int_eq(inode_parent_add(i, B), 0);
	ck_assert_int_eq(inode_parent_add(i, A), 0);
	ck_assert_int_eq(inode_parent_add(i, C), 0);
	ck_assert_int_eq(inode_parent_add(i, D), 0); /* past 4: grows */
	ck_assert_uint_eq(i->i_nparents, 5);
	{
		struct tfs_inode *want[] = { A, B, A, C, D };

		for (uint32_t k = 0; k < 5; k++)
			ck_assert_ptr_eq(inode_parent_at(i, k), want[k]);
	}
	ck_assert_ptr_eq(inode_parent(i), D);
	/* del takes the latest name in that directory, order kept */
	inode_parent_del(i, A);
	{
		struct tfs_inode *want[] = { A, B, C, D };

		ck_assert_uint_eq(i->i_nparents, 4);
		for (uint32_t k = 0; k < 4; k++)
			ck_assert_ptr_eq(inode_parent_at(i, k), want[k]);
	}
	/* move: the renamed name is the latest */
	inode_parent_move(i, B, E);
	{
		struct tfs_inode *want[] = { A, C, D, E };

		ck_assert_uint_eq(i->i_nparents, 4);
		for (uint32_t k = 0; k < 4; k++)
			ck_assert_ptr_eq(inode_parent_at(i, k), want[k]);
	}
	ck_assert_ptr_eq(inode_parent(i), E);
	/* a directory it has no name in: nothing */
	inode_parent_move(i, B, A);
	inode_parent_del(i, B);
	ck_assert_uint_eq(i->i_nparents, 4);
	ck_assert_ptr_eq(inode_parent(i), E);
	inode_parent_del(i, E);
	ck_assert_ptr_eq(inode_parent(i), D);
	inode_parent_del(i, C);
	ck_assert_uint_eq(i->i_nparents, 2);
	ck_assert_ptr_eq(inode_parent_at(i, 0), A);
	ck_assert_ptr_eq(inode_parent_at(i, 1), D);
	inode_parent_del(i, D);
	ck_assert_uint_eq(i->i_nparents, 1); /* back in place */
	ck_assert_ptr_eq(i->i_parent, A);
	inode_parent_move(i, A, C);
	ck_assert_ptr_eq(inode_parent(i), C);
	inode_parent_del(i, A);
	ck_assert_uint_eq(i->i_nparents, 1);
	inode_parent_del(i, C);
	ck_assert_uint_eq(i->i_nparents, 0);
	ck_assert_ptr_null(inode_parent(i));
	pthread_rwlock_unlock(&fs->ns_lock);
	inode_unpin(fs, i);
	ck_assert(!t_on_table(i));
}
END_TEST

/* A file with names in several directories, through the namespace. */
START_TEST(test_parents_hard_links)
{
	struct tfs_inode *A = t_mkdir(fs->root, "A"), *B = t_mkdir(fs->root, "B");
	struct tfs_inode *C = t_mkdir(fs->root, "C"), *D = t_mkdir(fs->root, "D");
	struct tfs_inode *f = t_mkfile(A, "f");
	struct stat st;

	ck_assert_ptr_eq(inode_parent(f), A);
	ck_assert_int_eq(ns_link(fs, f, B, "f", &st), 0);
	ck_assert_ptr_eq(inode_parent(f), B);
	ck_assert_int_eq(ns_link(fs, f, C, "f", &st), 0);
	ck_assert_ptr_eq(inode_parent(f), C);
	ck_assert_uint_eq(f->i_nparents, 3);
	t_path_is(f, "/C/f");
	ck_assert_int_eq(ns_unlink(fs, C, "f"), 0);
	ck_assert_ptr_eq(inode_parent(f), B);
	t_path_is(f, "/B/f");
	ck_assert_int_eq(ns_rename(fs, A, "f", D, "g", 0), 0);
	ck_assert_ptr_eq(inode_parent(f), D);
	ck_assert_uint_eq(f->i_nparents, 2);
	ck_assert_ptr_eq(inode_parent_at(f, 0), B);
	ck_assert_ptr_eq(inode_parent_at(f, 1), D);
	t_path_is(f, "/D/g");
	ck_assert_int_eq(ns_unlink(fs, D, "g"), 0);
	ck_assert_int_eq(ns_unlink(fs, B, "f"), 0);
	ck_assert_uint_eq(f->i_nparents, 0);
	ck_assert_ptr_null(inode_parent(f));
	ck_assert_uint_eq(f->i_nlink, 0);
}
END_TEST

START_TEST(test_fill_stat)
{
	struct ns_cred c = { .uid = 4242, .gid = 4343 };
	struct tfs_inode *f, *d, *l, *cd, *p;
	struct stat st, a = { 0 };
	char *buf = malloc(EXT + 100);

	ck_assert_ptr_nonnull(buf);
	memset(buf, 0x11, EXT + 100);
	ck_assert_int_eq(ns_create(fs, fs->root, "f", 0640, &c, &f, &st), 0);
	ck_assert_int_eq(data_write(fs, f, buf, EXT + 100, 0), EXT + 100);
	a.st_atim = (struct timespec){ 11, 1 };
	a.st_mtim = (struct timespec){ 22, 2 };
	a.st_ctim = (struct timespec){ 33, 3 };
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_ATIME |
				    FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_CTIME,
				    false, &root_cred), 0);
	t_stat(f, &st);
	ck_assert_uint_eq(st.st_ino, f->i_ino);
	ck_assert_uint_eq(st.st_mode, S_IFREG | 0640);
	ck_assert_uint_eq(st.st_nlink, 1);
	ck_assert_uint_eq(st.st_uid, 4242);
	ck_assert_uint_eq(st.st_gid, 4343);
	ck_assert_int_eq(st.st_size, EXT + 100);
	ck_assert_int_eq(st.st_blksize, EXT);
	ck_assert_int_gt(st.st_blocks, 0);
	ck_assert_int_eq(st.st_blocks, (blkcnt_t)(f->i_bytes / 512));
	/* at least what was written, at most two whole extents */
	ck_assert_int_ge(st.st_blocks * 512, EXT + 100);
	ck_assert_int_le(st.st_blocks * 512, 2 * EXT);
	ck_assert_int_eq(st.st_atim.tv_sec, 11);
	ck_assert_int_eq(st.st_atim.tv_nsec, 1);
	ck_assert_int_eq(st.st_mtim.tv_sec, 22);
	ck_assert_int_eq(st.st_mtim.tv_nsec, 2);
	ck_assert_int_eq(st.st_ctim.tv_sec, 33);
	ck_assert_int_eq(st.st_ctim.tv_nsec, 3);
	ck_assert_uint_eq(st.st_rdev, 0);

	d = t_mkdir(fs->root, "d");
	t_stat(d, &st);
	ck_assert_uint_eq(st.st_mode, S_IFDIR | 0755);
	ck_assert_int_eq(st.st_size, 4096);
	ck_assert_uint_eq(st.st_nlink, 2);
	ck_assert_int_eq(st.st_blocks, 0);
	(void)t_mkdir(d, "sub");
	t_stat(d, &st);
	ck_assert_uint_eq(st.st_nlink, 3);
	t_stat(fs->root, &st);
	ck_assert_uint_eq(st.st_ino, 1); /* FUSE_ROOT_ID */
	ck_assert_uint_eq(st.st_nlink, 3);

	ck_assert_int_eq(ns_symlink(fs, fs->root, "l", "abc/def", &c, &l, &st),
			 0);
	t_stat(l, &st);
	ck_assert_uint_eq(st.st_mode, S_IFLNK | 0777);
	ck_assert_int_eq(st.st_size, 7);

	ck_assert_int_eq(ns_mknod(fs, fs->root, "c", S_IFCHR | 0620,
				  makedev(4, 5), &c, &cd, &st), 0);
	t_stat(cd, &st);
	ck_assert_uint_eq(st.st_mode, S_IFCHR | 0620);
	ck_assert_uint_eq(st.st_rdev, makedev(4, 5));
	ck_assert_int_eq(st.st_size, 0);

	ck_assert_int_eq(ns_mknod(fs, fs->root, "p", S_IFIFO | 0600, 0, &c, &p,
				  &st), 0);
	t_stat(p, &st);
	ck_assert_uint_eq(st.st_mode, S_IFIFO | 0600);
	ck_assert_uint_eq(st.st_rdev, 0);
	ck_assert_int_eq(st.st_size, 0);
	free(buf);
}
END_TEST

START_TEST(test_sub)
{
	struct tfs_inode *d = t_mkdir(fs->root, "d"), *f = t_mkfile(d, "f");
	struct tfs_inode *l;
	struct stat st;

	ck_assert_int_eq(ns_symlink(fs, d, "l", "x", &root_cred, &l, &st), 0);
	ck_assert_ptr_eq(inode_sub(d), &d->i_dir);
	ck_assert_ptr_eq(inode_sub(fs->root), &fs->root->i_dir);
	ck_assert_ptr_null(inode_sub(f));
	ck_assert_ptr_null(inode_sub(l));
	/* what dir.c keeps through it: the directory's own name */
	ck_assert_ptr_eq(inode_sub(d)->d_self, dir_find(&fs->root->i_dir, "d"));
}
END_TEST

START_TEST(test_paths)
{
	struct tfs_inode *a, *b, *c, *f, *top, *gone, *u, *d;
	char name[201], want[1100];
	size_t n = 0;
	struct stat st;

	t_dir_path_is(fs->root, "/");
	t_path_is(fs->root, "/");
	a = t_mkdir(fs->root, "a");
	b = t_mkdir(a, "b");
	c = t_mkdir(b, "c");
	f = t_mkfile(c, "f");
	top = t_mkfile(fs->root, "top");
	t_dir_path_is(a, "/a");
	t_dir_path_is(c, "/a/b/c");
	t_path_is(c, "/a/b/c");
	t_path_is(f, "/a/b/c/f");
	t_path_is(top, "/top");

	/* the latest name of a hard-linked file */
	ck_assert_int_eq(ns_link(fs, f, a, "g", &st), 0);
	t_path_is(f, "/a/g");
	ck_assert_int_eq(ns_link(fs, top, c, "t2", &st), 0);
	t_path_is(top, "/a/b/c/t2");

	/* past the first buffer: five names of 200 bytes */
	d = fs->root;
	for (int k = 0; k < 5; k++) {
		memset(name, 'a' + k, 200);
		name[200] = '\0';
		d = t_mkdir(d, name);
		want[n++] = '/';
		memcpy(want + n, name, 200);
		n += 200;
	}
	want[n] = '\0';
	t_dir_path_is(d, want);
	memcpy(want + n, "/leaf", 6);
	t_path_is(t_mkfile(d, "leaf"), want);

	/* removed directory; unlinked file still open */
	gone = t_mkdir(b, "gone");
	ck_assert_int_eq(ns_rmdir(fs, b, "gone"), 0);
	t_dir_path_is(gone, "/(deleted)");
	t_path_is(gone, "/(deleted)");
	u = t_mkfile(b, "u");
	ck_assert_int_eq(ns_unlink(fs, b, "u"), 0);
	t_path_is(u, "/(deleted)");
	/* a rename of an ancestor shows in every path below it */
	ck_assert_int_eq(ns_rename(fs, fs->root, "a", fs->root, "z", 0), 0);
	t_path_is(f, "/z/g");
	t_dir_path_is(c, "/z/b/c");
}
END_TEST

static Suite *inode_suite(void)
{
	Suite *s = suite_create("inode");
	TCase *tc = tcase_create("lifetime");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_lifetime_counts);
	tcase_add_test(tc, test_lifetime_names);
	tcase_add_test(tc, test_charge_limits);
	suite_add_tcase(s, tc);

	tc = tcase_create("parents");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_parents);
	tcase_add_test(tc, test_parents_hard_links);
	suite_add_tcase(s, tc);

	tc = tcase_create("attributes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_fill_stat);
	tcase_add_test(tc, test_sub);
	tcase_add_test(tc, test_paths);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(inode_suite());
}
