// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_quota.c -- fs/quota.c: the parser of trusted.tierfs.quota (table
 * driven), the charge arithmetic along a chain of nodes, and on an
 * in-process mount the hooks of the data path: charge at placement,
 * a tier cap that spills, EDQUOT at the total, uncharge on truncate and
 * release, the move of a migrated extent and its refusal past a cap;
 * and the inode units (issue 16: 8, 9, 11): the "inodes:" key, EDQUOT
 * for every kind of new name past it, ENOSPC past --max-inodes for
 * links and long symlinks, statfs, and the walk that counts what is
 * there when a quota is set; and the figures of the job report (issue
 * 19): the peak, bytes written, spilled and read, failed writebacks,
 * summed over nested quotas and kept when a nested one goes.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sys/statvfs.h>

#include "namespace.h"
#include "quota.h"
#include "strbuf.h"
#include "t_fs.h"
#include "attr.h"
#include "xattr.h"
#include "tap.h"

#define MB (UINT64_C(1) << 20)
#define N QUOTA_NONE

static const char *const tier_list[] = { "ram", "nvme", "hdd" };
static const struct tier_names names = { { "ram", "nvme", "hdd" }, 3 };

static const struct {
	const char *in;
	int ret;
	uint64_t total, ram, nvme, hdd;
} parse_table[] = {
	{ "200G", 0, 200 * 1024 * MB, N, N, N },
	{ "200G\n", 0, 200 * 1024 * MB, N, N, N },
	{ "0", 0, 0, N, N, N },
	{ "4096", 0, 4096, N, N, N },
	{ "ram:4G,total:200G", 0, 200 * 1024 * MB, 4096 * MB, N, N },
	{ "total:1M,ram:0", 0, MB, 0, N, N },
	{ "ram:1M,nvme:2M,hdd:3M", 0, N, MB, 2 * MB, 3 * MB },
	{ "nvme:8GiB", 0, N, N, 8192 * MB, N },
	{ "", -EINVAL, 0, 0, 0, 0 },
	{ "\n", -EINVAL, 0, 0, 0, 0 },
	{ "bogus", -EINVAL, 0, 0, 0, 0 },
	{ "-1", -EINVAL, 0, 0, 0, 0 },
	{ "1.5G", -EINVAL, 0, 0, 0, 0 },
	{ " 1G", -EINVAL, 0, 0, 0, 0 },
	{ "1G ", -EINVAL, 0, 0, 0, 0 },
	{ "99999999999999999999", -EINVAL, 0, 0, 0, 0 },
	{ "16384P", -EINVAL, 0, 0, 0, 0 },
	{ "ram:1M,ram:2M", -EINVAL, 0, 0, 0, 0 },
	{ "total:1M,total:2M", -EINVAL, 0, 0, 0, 0 },
	{ "tape:1M", -EINVAL, 0, 0, 0, 0 },
	{ "RAM:1M", -EINVAL, 0, 0, 0, 0 },
	{ "ram:", -EINVAL, 0, 0, 0, 0 },
	{ ":1M", -EINVAL, 0, 0, 0, 0 },
	{ "ram:1M,", -EINVAL, 0, 0, 0, 0 },
	{ ",ram:1M", -EINVAL, 0, 0, 0, 0 },
	{ "ram:1M,,total:2M", -EINVAL, 0, 0, 0, 0 },
	{ "ram:1M:2M", -EINVAL, 0, 0, 0, 0 },
	{ "ram=1M", -EINVAL, 0, 0, 0, 0 },
	{ "ram", -EINVAL, 0, 0, 0, 0 },
};

/* The "inodes:" key: a count with --max-inodes' suffixes, zero allowed
 * as for sizes (nothing may be made), not a size of the bare form. */
static const struct {
	const char *in;
	int ret;
	uint64_t total, ram, inodes;
} iparse_table[] = {
	{ "inodes:1M", 0, N, N, MB },
	{ "total:200G,inodes:1M", 0, 200 * 1024 * MB, N, MB },
	{ "ram:4G,total:200G,inodes:1M", 0, 200 * 1024 * MB, 4096 * MB, MB },
	{ "inodes:1000,ram:1M", 0, N, MB, 1000 },
	{ "inodes:0", 0, N, N, 0 },
	{ "inodes:2k", 0, N, N, 2048 },
	{ "200G", 0, 200 * 1024 * MB, N, N },
	{ "ram:1M", 0, N, MB, N },
	{ "inodes:abc", -EINVAL, 0, 0, 0 },
	{ "inodes:", -EINVAL, 0, 0, 0 },
	{ "inodes:-1", -EINVAL, 0, 0, 0 },
	{ "inodes:1.5K", -EINVAL, 0, 0, 0 },
	{ "inodes:1X", -EINVAL, 0, 0, 0 },
	{ "inodes:1M,inodes:2M", -EINVAL, 0, 0, 0 },
	{ "INODES:1", -EINVAL, 0, 0, 0 },
	{ "inodes", -EINVAL, 0, 0, 0 },
	{ "inodes:1M,", -EINVAL, 0, 0, 0 },
	{ "inodes:99999999999999999999", -EINVAL, 0, 0, 0 },
};

START_TEST(test_quota_parse_inodes)
{
	struct quota_limits l = { 0 };
	int r = quota_parse(&names, iparse_table[_i].in,
			    strlen(iparse_table[_i].in), &l);

	ck_assert_msg(r == iparse_table[_i].ret, "'%s': %d",
		      iparse_table[_i].in, r);
	if (r < 0)
		return;
	ck_assert_uint_eq(l.total, iparse_table[_i].total);
	ck_assert_uint_eq(l.tier[0], iparse_table[_i].ram);
	ck_assert_uint_eq(l.tier[1], N);
	ck_assert_uint_eq(l.inodes, iparse_table[_i].inodes);
}
END_TEST

START_TEST(test_quota_parse_table)
{
	struct quota_limits l = { 0 };
	int r = quota_parse(&names, parse_table[_i].in,
			    strlen(parse_table[_i].in), &l);

	ck_assert_msg(r == parse_table[_i].ret, "'%s': %d", parse_table[_i].in,
		      r);
	if (r < 0)
		return;
	ck_assert_uint_eq(l.total, parse_table[_i].total);
	ck_assert_uint_eq(l.tier[0], parse_table[_i].ram);
	ck_assert_uint_eq(l.tier[1], parse_table[_i].nvme);
	ck_assert_uint_eq(l.tier[2], parse_table[_i].hdd);
	ck_assert_uint_eq(l.tier[3], N);
}
END_TEST

START_TEST(test_quota_parse_edges)
{
	struct quota_limits l;
	char big[2048];

	(void)tier_list;
	/* a NUL inside, one trailing NUL allowed */
	ck_assert_int_eq(quota_parse(&names, "1M\0", 3, &l), 0);
	ck_assert_uint_eq(l.total, MB);
	ck_assert_int_eq(quota_parse(&names, "1\0M", 3, &l), -EINVAL);
	/* too long */
	memset(big, '1', sizeof(big));
	ck_assert_int_eq(quota_parse(&names, big, sizeof(big), &l), -EINVAL);
	/* a failed parse leaves *ret alone */
	l.total = 42;
	ck_assert_int_eq(quota_parse(&names, "x", 1, &l), -EINVAL);
	ck_assert_uint_eq(l.total, 42);
}
END_TEST

static void node_init(struct quota *q, struct quota *parent, uint64_t total,
		      uint64_t ram)
{
	memset(q, 0, sizeof(*q));
	q->q_parent = parent;
	q->q_refs = 1;
	q->q_set = true;
	q->q_lim.total = total;
	q->q_lim.inodes = N;
	for (unsigned t = 0; t < TIER_MAX_CONF; t++)
		q->q_lim.tier[t] = N;
	q->q_lim.tier[0] = ram;
}

START_TEST(test_quota_chain_arithmetic)
{
	struct quota outer, inner;

	node_init(&outer, NULL, 10 * MB, N);
	node_init(&inner, &outer, 4 * MB, 2 * MB);
	/* the ram cap of the inner node */
	ck_assert_int_eq(quota_chain_charge(&inner, 0, MB), 0);
	ck_assert_int_eq(quota_chain_charge(&inner, 0, MB), 0);
	ck_assert_int_eq(quota_chain_charge(&inner, 0, MB), -ENOSPC);
	ck_assert_int_eq(quota_chain_charge(&inner, 1, MB), 0);
	ck_assert_int_eq(quota_chain_charge(&inner, 1, MB), 0);
	/* the inner total: EDQUOT comes before a cap */
	ck_assert_int_eq(quota_chain_charge(&inner, 0, MB), -EDQUOT);
	ck_assert_int_eq(quota_chain_charge(&inner, 1, MB), -EDQUOT);
	ck_assert_uint_eq(inner.q_used, 4 * MB);
	ck_assert_uint_eq(outer.q_used, 4 * MB);
	ck_assert_uint_eq(outer.q_tused[0], 2 * MB);
	ck_assert_uint_eq(outer.q_tused[1], 2 * MB);
	/* a failed charge changed nothing anywhere */
	ck_assert_uint_eq(inner.q_tused[0], 2 * MB);
	/* the outer total binds the outer node's other children too */
	ck_assert_int_eq(quota_chain_charge(&outer, 2, 6 * MB), 0);
	ck_assert_int_eq(quota_chain_charge(&outer, 2, 1), -EDQUOT);
	ck_assert_uint_eq(outer.q_used, 10 * MB);
	/* moves: within the cap, and refused past it */
	ck_assert_int_eq(quota_chain_move(&inner, 0, 1, MB), 0);
	ck_assert_uint_eq(inner.q_tused[0], MB);
	ck_assert_uint_eq(outer.q_tused[1], 3 * MB);
	ck_assert_int_eq(quota_chain_move(&inner, 1, 0, MB), 0);
	ck_assert_int_eq(quota_chain_move(&inner, 1, 0, MB), -ENOSPC);
	ck_assert_int_eq(quota_chain_move(&inner, 1, 1, MB), 0);
	ck_assert_uint_eq(inner.q_used, 4 * MB);
	/* uncharge: back to zero, never below */
	quota_chain_uncharge(&inner, 0, 2 * MB);
	quota_chain_uncharge(&inner, 1, 2 * MB);
	quota_chain_uncharge(&outer, 2, 6 * MB);
	ck_assert_uint_eq(inner.q_used, 0);
	ck_assert_uint_eq(outer.q_used, 0);
	quota_chain_uncharge(&inner, 1, MB);
	ck_assert_uint_eq(inner.q_used, 0);
	ck_assert_uint_eq(inner.q_tused[1], 0);
	/* lifted limits (q_set false) bind nothing, but count */
	inner.q_set = false;
	ck_assert_int_eq(quota_chain_charge(&inner, 0, 3 * MB), 0);
	ck_assert_uint_eq(inner.q_tused[0], 3 * MB);
	ck_assert_int_eq(quota_chain_charge(&inner, 0, 8 * MB), -EDQUOT);
	/* the peak of each node: its most, not moved by what went back */
	ck_assert_uint_eq(inner.q_peak, 4 * MB);
	ck_assert_uint_eq(outer.q_peak, 10 * MB);
}
END_TEST

/* Inode units along a chain: all or nothing, EDQUOT at any node. */
START_TEST(test_quota_chain_inodes)
{
	struct quota outer, inner;

	node_init(&outer, NULL, N, N);
	node_init(&inner, &outer, N, N);
	outer.q_lim.inodes = 5;
	inner.q_lim.inodes = 3;
	ck_assert_int_eq(quota_chain_icharge(&inner, 2), 0);
	ck_assert_int_eq(quota_chain_icharge(&inner, 2), -EDQUOT);
	ck_assert_uint_eq(inner.q_iused, 2);
	ck_assert_uint_eq(outer.q_iused, 2);
	ck_assert_int_eq(quota_chain_icharge(&inner, 1), 0);
	ck_assert_int_eq(quota_chain_icharge(&inner, 1), -EDQUOT);
	/* the outer one binds the outer tree */
	ck_assert_int_eq(quota_chain_icharge(&outer, 2), 0);
	ck_assert_int_eq(quota_chain_icharge(&outer, 1), -EDQUOT);
	ck_assert_uint_eq(outer.q_iused, 5);
	/* a node without the attribute counts and does not bind */
	inner.q_set = false;
	quota_chain_iuncharge(&inner, 3);
	ck_assert_uint_eq(inner.q_iused, 0);
	ck_assert_uint_eq(outer.q_iused, 2);
	quota_chain_iuncharge(&inner, 9); /* clamped */
	ck_assert_uint_eq(inner.q_iused, 0);
	ck_assert_uint_eq(outer.q_iused, 0);
	/* no limit: anything */
	outer.q_lim.inodes = N;
	ck_assert_int_eq(quota_chain_icharge(&inner, 1000000), 0);
}
END_TEST

/* ---- on a mount: RAM 4 extents over a file tier of 16, 64K extents ---- */

#define EXT 65536u

static struct t_fs tf;

static void mount_setup(void)
{
	static const uint32_t slots[] = { 4, 16 };

	t_fs_setup(&tf, EXT, 2, slots);
}

static void mount_teardown(void)
{
	t_fs_teardown(&tf);
}

/* A directory "name" in the root with quota @value, and a file in it
 * (made through the namespace, so that it joins the quota). */
static struct tfs_inode *t_quota_file(struct tierfs *fs, const char *value,
				      struct tfs_inode **ret_dir)
{
	struct ns_cred cred = { .uid = 0, .gid = 0 };
	struct tfs_inode *dir, *f;
	struct stat st;

	ck_assert_int_eq(ns_mkdir(fs, fs->root, "q", 0755, &cred, &dir, &st), 0);
	ck_assert_int_eq(attr_set(fs, dir, QUOTA_XATTR, value, strlen(value),
				   0, 0),
			 0);
	ck_assert_int_eq(ns_create(fs, dir, "f", 0644, &cred, &f, &st), 0);
	*ret_dir = dir;
	return f;
}

static void usage_is(struct tfs_inode *dir, uint64_t total, uint64_t t0,
		     uint64_t t1)
{
	ck_assert_ptr_nonnull(dir->i_quota);
	ck_assert_uint_eq(dir->i_quota->q_used, total);
	ck_assert_uint_eq(dir->i_quota->q_tused[0], t0);
	ck_assert_uint_eq(dir->i_quota->q_tused[1], t1);
}

START_TEST(test_quota_mount_charge)
{
	struct tierfs *fs = tf.fs;
	struct tfs_inode *dir, *f;
	char buf[EXT];
	ssize_t w;

	memset(buf, 7, sizeof(buf));
	f = t_quota_file(fs, "t0:128K,total:320K", &dir);
	/* not root: EPERM; a bad value: EINVAL; on a file: ENOTDIR */
	ck_assert_int_eq(attr_set(fs, dir, QUOTA_XATTR, "1M", 2, 0, 1000),
			 -EPERM);
	ck_assert_int_eq(attr_set(fs, dir, QUOTA_XATTR, "x", 1, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(attr_set(fs, f, QUOTA_XATTR, "1M", 2, 0, 0),
			 -ENOTDIR);
	for (int i = 0; i < 5; i++) {
		w = data_write(fs, f, buf, EXT, (uint64_t)i * EXT);
		ck_assert_int_eq(w, EXT);
	}
	usage_is(dir, 5 * EXT, 2 * EXT, 3 * EXT);
	ck_assert_int_eq(t_tier_of(f, 1), 0);
	ck_assert_int_eq(t_tier_of(f, 2), 1);
	w = data_write(fs, f, buf, EXT, 5 * EXT);
	ck_assert_int_eq(w, -EDQUOT);
	usage_is(dir, 5 * EXT, 2 * EXT, 3 * EXT);
	/* a move within the cap, a move past it */
	ck_assert_int_eq(data_migrate_extent(fs, f, 0, 0, t_slot_of(f, 0), 1),
			 0);
	usage_is(dir, 5 * EXT, EXT, 4 * EXT);
	ck_assert_int_eq(data_migrate_extent(fs, f, 2, 1, t_slot_of(f, 2), 0),
			 0);
	ck_assert_int_eq(data_migrate_extent(fs, f, 3, 1, t_slot_of(f, 3), 0),
			 -ENOSPC);
	ck_assert_int_eq(t_tier_of(f, 3), 1);
	usage_is(dir, 5 * EXT, 2 * EXT, 3 * EXT);
	/* truncate and punch give it back */
	ck_assert_int_eq(data_truncate(fs, f, 3 * EXT), 0);
	usage_is(dir, 3 * EXT, 2 * EXT, EXT);
	/* lifted: the total binds no more, the usage stays counted */
	ck_assert_int_eq(attr_remove(fs, dir, QUOTA_XATTR, 0), 0);
	for (int i = 3; i < 8; i++)
		ck_assert_int_eq(data_write(fs, f, buf, EXT, (uint64_t)i * EXT),
				 EXT);
	usage_is(dir, 8 * EXT, 4 * EXT, 4 * EXT);
}
END_TEST

START_TEST(test_quota_mount_set_counts_and_release)
{
	struct ns_cred cred = { .uid = 0, .gid = 0 };
	struct tierfs *fs = tf.fs;
	struct tfs_inode *dir, *sub, *f, *g;
	struct stat st;
	char buf[EXT];

	memset(buf, 1, sizeof(buf));
	/* data first, quota after: the walk counts it */
	ck_assert_int_eq(ns_mkdir(fs, fs->root, "d", 0755, &cred, &dir, &st), 0);
	ck_assert_int_eq(ns_mkdir(fs, dir, "s", 0755, &cred, &sub, &st), 0);
	ck_assert_int_eq(ns_create(fs, sub, "f", 0644, &cred, &f, &st), 0);
	ck_assert_int_eq(data_write(fs, f, buf, EXT, 0), EXT);
	ck_assert_int_eq(data_write(fs, f, buf, EXT, 3 * EXT), EXT);
	ck_assert_int_eq(attr_set(fs, sub, QUOTA_XATTR, "1M", 2, 0, 0), 0);
	usage_is(sub, 2 * EXT, 2 * EXT, 0);
	ck_assert_int_eq(attr_set(fs, dir, QUOTA_XATTR, "2M", 2, 0, 0), 0);
	usage_is(dir, 2 * EXT, 2 * EXT, 0);
	ck_assert_ptr_eq(sub->i_quota->q_parent, dir->i_quota);
	/* EXDEV across, not within */
	ck_assert_int_eq(ns_rename(fs, sub, "f", fs->root, "f", 0), -EXDEV);
	ck_assert_int_eq(ns_rename(fs, sub, "f", dir, "f", 0), -EXDEV);
	ck_assert_int_eq(ns_rename(fs, sub, "f", sub, "f2", 0), 0);
	ck_assert_int_eq(ns_link(fs, f, dir, "l", &st), -EXDEV);
	ck_assert_int_eq(ns_link(fs, f, sub, "l", &st), 0);
	ck_assert_int_eq(ns_create(fs, dir, "g", 0644, &cred, &g, &st), 0);
	ck_assert_int_eq(data_write(fs, g, buf, EXT, 0), EXT);
	usage_is(dir, 3 * EXT, 3 * EXT, 0);
	usage_is(sub, 2 * EXT, 2 * EXT, 0);
	/* unlink and release give it back, in both */
	ck_assert_int_eq(ns_unlink(fs, sub, "f2"), 0);
	ck_assert_int_eq(ns_unlink(fs, sub, "l"), 0);
	inode_forget(fs, f, 2); /* create and link each counted one */
	usage_is(dir, EXT, EXT, 0);
	usage_is(sub, 0, 0, 0);
	ck_assert_int_eq(ns_unlink(fs, dir, "g"), 0);
	inode_forget(fs, g, 1);
	usage_is(dir, 0, 0, 0);
	inode_forget(fs, sub, 1);
	inode_forget(fs, dir, 1);
	t_assert_no_leak(fs);
}
END_TEST

static struct ns_cred root_cred = { .uid = 0, .gid = 0 };

static uint64_t t_iused(struct tfs_inode *dir)
{
	ck_assert_ptr_nonnull(dir->i_quota);
	return dir->i_quota->q_iused;
}

static uint64_t t_units(struct tierfs *fs)
{
	return __atomic_load_n(&fs->ninodes, __ATOMIC_RELAXED);
}

/* A target of @len bytes ('a' repeated), in a static buffer. */
static const char *t_target(size_t len)
{
	static char buf[4096];

	ck_assert_uint_lt(len, sizeof(buf));
	memset(buf, 'a', len);
	buf[len] = '\0';
	return buf;
}

/* Every kind of new name past an inode quota: EDQUOT; elsewhere fine. */
START_TEST(test_quota_mount_inodes)
{
	struct tierfs *fs = tf.fs;
	struct tfs_inode *dir, *other, *f, *x;
	struct statvfs sv;
	struct stat st;
	char name[16];

	ck_assert_int_eq(ns_mkdir(fs, fs->root, "q", 0755, &root_cred, &dir,
				  &st), 0);
	ck_assert_int_eq(ns_mkdir(fs, fs->root, "o", 0755, &root_cred,
				  &other, &st), 0);
	ck_assert_int_eq(attr_set(fs, dir, QUOTA_XATTR, "inodes:6", 8, 0, 0),
			 0);
	ck_assert_uint_eq(t_iused(dir), 0);
	ck_assert_int_eq(ns_create(fs, dir, "f", 0644, &root_cred, &f, &st), 0);
	ck_assert_int_eq(ns_mkdir(fs, dir, "d", 0755, &root_cred, &x, &st), 0);
	inode_forget(fs, x, 1);
	ck_assert_int_eq(ns_mknod(fs, x, "p", S_IFIFO | 0644, 0, &root_cred,
				  &x, &st), 0);
	inode_forget(fs, x, 1);
	/* a link costs one; a 600-byte target three (1 + 600 / 256) */
	ck_assert_int_eq(ns_link(fs, f, dir, "f2", &st), 0);
	inode_forget(fs, f, 1);
	ck_assert_uint_eq(t_iused(dir), 4);
	ck_assert_int_eq(ns_symlink(fs, dir, "long", t_target(600),
				    &root_cred, &x, &st), -EDQUOT);
	ck_assert_int_eq(ns_symlink(fs, dir, "s", "t", &root_cred, &x, &st), 0);
	inode_forget(fs, x, 1);
	ck_assert_uint_eq(t_iused(dir), 5);
	/* statfs of the directory and of a file below: the quota */
	placement_statfs(fs, dir, &sv);
	ck_assert_uint_eq(sv.f_files, 6);
	ck_assert_uint_eq(sv.f_ffree, 1);
	placement_statfs(fs, f, &sv);
	ck_assert_uint_eq(sv.f_files, 6);
	ck_assert_uint_eq(sv.f_ffree, 1);
	ck_assert_int_eq(ns_create(fs, dir, "g", 0644, &root_cred, &x, &st), 0);
	inode_forget(fs, x, 1);
	/* at the limit: every kind fails, nothing is left behind */
	ck_assert_int_eq(ns_create(fs, dir, "h", 0644, &root_cred, &x, &st),
			 -EDQUOT);
	ck_assert_int_eq(ns_mkdir(fs, dir, "e", 0755, &root_cred, &x, &st),
			 -EDQUOT);
	ck_assert_int_eq(ns_mknod(fs, dir, "p2", S_IFIFO | 0644, 0,
				  &root_cred, &x, &st), -EDQUOT);
	ck_assert_int_eq(ns_symlink(fs, dir, "s2", "t", &root_cred, &x, &st),
			 -EDQUOT);
	ck_assert_int_eq(ns_link(fs, f, dir, "f3", &st), -EDQUOT);
	ck_assert_uint_eq(t_iused(dir), 6);
	ck_assert_uint_eq(t_units(fs), 9); /* root, o, q, and q's 6 */
	ck_assert_int_eq(ns_lookup(fs, dir, "h", &x, &st), -ENOENT);
	placement_statfs(fs, dir, &sv);
	ck_assert_uint_eq(sv.f_ffree, 0);
	/* another tree still can */
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ck_assert_int_eq(ns_create(fs, other, name, 0644, &root_cred,
					   &x, &st), 0);
		inode_forget(fs, x, 1);
	}
	placement_statfs(fs, other, &sv);
	ck_assert_uint_eq(sv.f_files, UINT32_MAX); /* no limit here */
	/* no name moves across trees, whatever its type */
	ck_assert_int_eq(ns_rename(fs, dir, "s", other, "s", 0), -EXDEV);
	ck_assert_int_eq(ns_rename(fs, dir, "d", other, "d", 0), -EXDEV);
	ck_assert_int_eq(ns_link(fs, f, other, "l", &st), -EXDEV);
	ck_assert_int_eq(ns_rename(fs, dir, "s", dir, "s9", 0), 0);
	/* removing gives back: a name of two, then the rest */
	ck_assert_int_eq(ns_unlink(fs, dir, "f2"), 0);
	ck_assert_uint_eq(t_iused(dir), 5);
	ck_assert_int_eq(ns_rename(fs, dir, "g", dir, "s9", 0), 0);
	ck_assert_uint_eq(t_iused(dir), 4);
	ck_assert_int_eq(ns_unlink(fs, other, "n0"), 0);
	ck_assert_int_eq(ns_unlink(fs, dir, "f"), 0);
	ck_assert_int_eq(ns_rmdir(fs, dir, "d"), -ENOTEMPTY);
	ck_assert_uint_eq(t_iused(dir), 3);
	/* lifted: counted still, binding no more */
	ck_assert_int_eq(attr_remove(fs, dir, QUOTA_XATTR, 0), 0);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "m%d", i);
		ck_assert_int_eq(ns_create(fs, dir, name, 0644, &root_cred,
					   &x, &st), 0);
		inode_forget(fs, x, 1);
	}
	ck_assert_uint_eq(t_iused(dir), 7);
}
END_TEST

/* Links and long targets take units of --max-inodes: ENOSPC past it. */
START_TEST(test_quota_mount_max_inodes)
{
	struct tierfs *fs = tf.fs;
	struct tfs_inode *f, *x;
	struct statvfs sv;
	struct stat st;
	char name[16];
	int i;

	fs->opt.max_inodes = 20;
	ck_assert_int_eq(ns_create(fs, fs->root, "f", 0644, &root_cred, &f,
				   &st), 0);
	ck_assert_uint_eq(t_units(fs), 2);
	for (i = 0; i < 100; i++) {
		int r;

		snprintf(name, sizeof(name), "l%d", i);
		r = ns_link(fs, f, fs->root, name, &st);
		if (r < 0) {
			ck_assert_int_eq(r, -ENOSPC);
			break;
		}
		inode_forget(fs, f, 1);
	}
	ck_assert_int_eq(i, 18);
	ck_assert_uint_eq(f->i_nlink, 19);
	placement_statfs(fs, fs->root, &sv);
	ck_assert_uint_eq(sv.f_files, 20);
	ck_assert_uint_eq(sv.f_ffree, 0);
	/* a name of many goes: its unit is back at once */
	ck_assert_int_eq(ns_unlink(fs, fs->root, "l0"), 0);
	ck_assert_uint_eq(t_units(fs), 19);
	for (i = 1; i < 18; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		ck_assert_int_eq(ns_unlink(fs, fs->root, name), 0);
	}
	ck_assert_uint_eq(t_units(fs), 2);
	/* 4095 bytes: 16 units; 17 would pass 20 */
	ck_assert_int_eq(ns_symlink(fs, fs->root, "s1", t_target(4095),
				    &root_cred, &x, &st), 0);
	inode_forget(fs, x, 1);
	ck_assert_uint_eq(t_units(fs), 18);
	ck_assert_int_eq(ns_symlink(fs, fs->root, "s2", t_target(255),
				    &root_cred, &x, &st), 0);
	inode_forget(fs, x, 1);
	ck_assert_int_eq(ns_symlink(fs, fs->root, "s3", t_target(256),
				    &root_cred, &x, &st), -ENOSPC);
	ck_assert_int_eq(ns_lookup(fs, fs->root, "s3", &x, &st), -ENOENT);
	ck_assert_uint_eq(t_units(fs), 19);
	/* a link of the long one costs as much again */
	ck_assert_int_eq(ns_lookup(fs, fs->root, "s1", &x, &st), 0);
	ck_assert_int_eq(ns_link(fs, x, fs->root, "s1b", &st), -ENOSPC);
	ck_assert_int_eq(ns_unlink(fs, fs->root, "s1"), 0);
	/* still known to the "kernel": its units stay until forgotten */
	ck_assert_uint_eq(t_units(fs), 19);
	inode_forget(fs, x, 1);
	ck_assert_uint_eq(t_units(fs), 3);
	ck_assert_int_eq(ns_unlink(fs, fs->root, "s2"), 0);
	ck_assert_int_eq(ns_unlink(fs, fs->root, "f"), 0);
	inode_forget(fs, f, 1);
	ck_assert_uint_eq(t_units(fs), 1);
	t_assert_no_leak(fs);
}
END_TEST

/* A quota set on a tree that has names counts them, nested ones too. */
START_TEST(test_quota_mount_inodes_counted_when_set)
{
	struct tierfs *fs = tf.fs;
	struct tfs_inode *dir, *sub, *f, *x;
	struct stat st;

	ck_assert_int_eq(ns_mkdir(fs, fs->root, "d", 0755, &root_cred, &dir,
				  &st), 0);
	ck_assert_int_eq(ns_mkdir(fs, dir, "s", 0755, &root_cred, &sub, &st),
			 0);
	ck_assert_int_eq(ns_create(fs, sub, "f", 0644, &root_cred, &f, &st), 0);
	ck_assert_int_eq(ns_link(fs, f, sub, "f2", &st), 0);
	ck_assert_int_eq(ns_link(fs, f, dir, "f3", &st), 0);
	ck_assert_int_eq(ns_symlink(fs, sub, "l", t_target(1000), &root_cred,
				    &x, &st), 0);
	inode_forget(fs, x, 1);
	ck_assert_int_eq(ns_mkdir(fs, sub, "e", 0755, &root_cred, &x, &st), 0);
	inode_forget(fs, x, 1);
	/* below sub: f, f2, l (1 + 1000 / 256 = 4), e */
	ck_assert_int_eq(attr_set(fs, sub, QUOTA_XATTR, "inodes:7", 8, 0, 0),
			 0);
	ck_assert_uint_eq(t_iused(sub), 7);
	/* below d: s and f3, and sub's 7 through its node */
	ck_assert_int_eq(attr_set(fs, dir, QUOTA_XATTR, "1G", 2, 0, 0), 0);
	ck_assert_uint_eq(t_iused(dir), 9);
	/* a quota below the use is accepted; new names fail */
	ck_assert_int_eq(attr_set(fs, dir, QUOTA_XATTR, "inodes:3", 8, 0, 0),
			 0);
	ck_assert_int_eq(ns_create(fs, dir, "g", 0644, &root_cred, &x, &st),
			 -EDQUOT);
	ck_assert_int_eq(ns_unlink(fs, sub, "f2"), 0);
	ck_assert_uint_eq(t_iused(sub), 6);
	ck_assert_uint_eq(t_iused(dir), 8);
	ck_assert_int_eq(ns_rmdir(fs, sub, "e"), 0);
	ck_assert_uint_eq(t_iused(sub), 5);
	ck_assert_uint_eq(t_iused(dir), 7);
	inode_forget(fs, f, 3);
	inode_forget(fs, sub, 1);
	inode_forget(fs, dir, 1);
}
END_TEST

/* The figures of the job report (issue 19) on a mount. */
START_TEST(test_quota_mount_report)
{
	struct ns_cred cred = { .uid = 0, .gid = 0 };
	struct tierfs *fs = tf.fs;
	struct tfs_inode *dir, *in, *f, *g;
	struct strbuf text = STRBUF_INIT;
	struct quota_io io;
	struct stat st;
	char buf[6 * EXT];
	uint64_t lost;
	bool first;

	memset(buf, 3, sizeof(buf));
	ck_assert_int_eq(ns_mkdir(fs, fs->root, "r", 0755, &cred, &dir, &st), 0);
	ck_assert_int_eq(attr_set(fs, dir, QUOTA_XATTR, "1M", 2, 0, 0), 0);
	ck_assert_int_eq(ns_mkdir(fs, dir, "in", 0755, &cred, &in, &st), 0);
	ck_assert_int_eq(attr_set(fs, in, QUOTA_XATTR, "1M", 2, 0, 0), 0);
	ck_assert_int_eq(ns_create(fs, in, "f", 0644, &cred, &f, &st), 0);
	/* 6 extents over a RAM tier of 4: 2 spill */
	ck_assert_int_eq(data_write(fs, f, buf, 6 * EXT, 0), 6 * EXT);
	ck_assert_int_eq(t_tier_of(f, 3), 0);
	ck_assert_int_eq(t_tier_of(f, 4), 1);
	ck_assert_uint_eq(in->i_quota->q_io.write_bytes, 6 * EXT);
	ck_assert_uint_eq(in->i_quota->q_io.spill_bytes, 2 * EXT);
	ck_assert_uint_eq(in->i_quota->q_peak, 6 * EXT);
	ck_assert_int_eq(data_read(fs, f, buf, 6 * EXT, 0), 6 * EXT);
	ck_assert_int_eq(data_read(fs, f, buf, EXT, 0), EXT);
	ck_assert_uint_eq(in->i_quota->q_io.read_bytes, 7 * EXT);
	ck_assert_uint_eq(in->i_quota->q_io.read_below_bytes, 2 * EXT);
	/* the outer quota counts nothing itself, but sums what is below */
	ck_assert_uint_eq(dir->i_quota->q_io.write_bytes, 0);
	quota_io_sum(dir->i_quota, &io);
	ck_assert_uint_eq(io.write_bytes, 6 * EXT);
	ck_assert_uint_eq(io.read_bytes, 7 * EXT);
	ck_assert_uint_eq(dir->i_quota->q_peak, 6 * EXT);
	ck_assert_int_eq(quota_usage_text(fs, f, &text), 0);
	ck_assert_ptr_nonnull(strstr(text.buf, " peak_bytes=393216 write_bytes=393216 spill_bytes=131072 read_bytes=458752 read_below_bytes=131072 writeback_errors=0 writeback_lost_bytes=0 dir=/r/in\n"));
	ck_assert_ptr_nonnull(strstr(text.buf, " write_bytes=393216 spill_bytes=131072 read_bytes=458752 read_below_bytes=131072 writeback_errors=0 writeback_lost_bytes=0 dir=/r\n"));
	strbuf_release(&text);
	/* the peak stays when the use goes */
	ck_assert_int_eq(data_truncate(fs, f, 0), 0);
	ck_assert_uint_eq(in->i_quota->q_used, 0);
	ck_assert_uint_eq(in->i_quota->q_peak, 6 * EXT);
	/* a writeback past the quota: an error, and its lost bytes */
	ck_assert_int_eq(ns_create(fs, dir, "g", 0644, &cred, &g, &st), 0);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(data_write(fs, g, buf, EXT, (uint64_t)i * EXT),
				 EXT);
	ck_assert_int_eq(data_writeback(fs, g, buf, 2 * EXT, 16 * EXT, &lost,
					&first),
			 -EDQUOT);
	ck_assert_uint_eq(lost, 2 * EXT);
	ck_assert_uint_eq(dir->i_quota->q_io.wb_errors, 1);
	ck_assert_uint_eq(dir->i_quota->q_io.wb_lost_bytes, 2 * EXT);
	ck_assert_uint_eq(dir->i_quota->q_io.write_bytes, 16 * EXT);
	ck_assert_uint_eq(in->i_quota->q_io.wb_errors, 0);
	/* the nested quota goes: what it counted stays in the outer one */
	ck_assert_int_eq(ns_unlink(fs, in, "f"), 0);
	inode_forget(fs, f, 1);
	ck_assert_int_eq(ns_rmdir(fs, dir, "in"), 0);
	inode_forget(fs, in, 1);
	quota_io_sum(dir->i_quota, &io);
	ck_assert_uint_eq(io.write_bytes, 22 * EXT);
	ck_assert_uint_eq(io.spill_bytes, dir->i_quota->q_io.spill_bytes);
	ck_assert_uint_ge(io.spill_bytes, 2 * EXT);
	ck_assert_uint_eq(io.read_bytes, 7 * EXT);
	ck_assert_uint_eq(io.wb_errors, 1);
	ck_assert_int_eq(ns_unlink(fs, dir, "g"), 0);
	inode_forget(fs, g, 1);
	inode_forget(fs, dir, 1);
	t_assert_no_leak(fs);
}
END_TEST

static Suite *quota_suite(void)
{
	Suite *s = suite_create("quota");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_quota_parse_table, 0,
			    (int)(sizeof(parse_table) / sizeof(parse_table[0])));
	tcase_add_test(tc, test_quota_parse_edges);
	tcase_add_loop_test(tc, test_quota_parse_inodes, 0,
			    (int)(sizeof(iparse_table) /
				  sizeof(iparse_table[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("arithmetic");
	tcase_add_test(tc, test_quota_chain_arithmetic);
	tcase_add_test(tc, test_quota_chain_inodes);
	suite_add_tcase(s, tc);
	tc = tcase_create("mount");
	tcase_add_checked_fixture(tc, mount_setup, mount_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_quota_mount_charge);
	tcase_add_test(tc, test_quota_mount_set_counts_and_release);
	tcase_add_test(tc, test_quota_mount_inodes);
	tcase_add_test(tc, test_quota_mount_max_inodes);
	tcase_add_test(tc, test_quota_mount_inodes_counted_when_set);
	tcase_add_test(tc, test_quota_mount_report);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(quota_suite());
}
