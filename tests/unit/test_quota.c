// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_quota.c -- fs/quota.c: the parser of trusted.tierfs.quota (table
 * driven), the charge arithmetic along a chain of nodes, and on an
 * in-process mount the hooks of the data path: charge at placement,
 * a tier cap that spills, EDQUOT at the total, uncharge on truncate and
 * release, the move of a migrated extent and its refusal past a cap.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "namespace.h"
#include "quota.h"
#include "t_fs.h"
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
	ck_assert_int_eq(xattr_set(fs, dir, QUOTA_XATTR, value, strlen(value),
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
	ck_assert_int_eq(xattr_set(fs, dir, QUOTA_XATTR, "1M", 2, 0, 1000),
			 -EPERM);
	ck_assert_int_eq(xattr_set(fs, dir, QUOTA_XATTR, "x", 1, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(xattr_set(fs, f, QUOTA_XATTR, "1M", 2, 0, 0),
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
	ck_assert_int_eq(xattr_remove(fs, dir, QUOTA_XATTR, 0), 0);
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
	ck_assert_int_eq(xattr_set(fs, sub, QUOTA_XATTR, "1M", 2, 0, 0), 0);
	usage_is(sub, 2 * EXT, 2 * EXT, 0);
	ck_assert_int_eq(xattr_set(fs, dir, QUOTA_XATTR, "2M", 2, 0, 0), 0);
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

static Suite *quota_suite(void)
{
	Suite *s = suite_create("quota");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_quota_parse_table, 0,
			    (int)(sizeof(parse_table) / sizeof(parse_table[0])));
	tcase_add_test(tc, test_quota_parse_edges);
	suite_add_tcase(s, tc);
	tc = tcase_create("arithmetic");
	tcase_add_test(tc, test_quota_chain_arithmetic);
	suite_add_tcase(s, tc);
	tc = tcase_create("mount");
	tcase_add_checked_fixture(tc, mount_setup, mount_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_quota_mount_charge);
	tcase_add_test(tc, test_quota_mount_set_counts_and_release);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(quota_suite());
}
