// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_placement.c -- Check suite for fs/placement.c (placement.h) on an
 * in-process mount of three tiers (t_fs.h), policies set with attr_set()
 * as setfattr would:
 *   - policy_get() resolves each key to the nearest inode that sets it,
 *     up the tree from the file (src[] names that inode), else the
 *     default; after an attribute is set or removed anywhere above,
 *     after ns_rename() moves a file or a directory under another
 *     policy, after link and unlink change a file's latest name, after
 *     a chown (a directory's policy steers only its owner's files, or
 *     everyone's if root owns it), and with no name left (the root's);
 *   - policy_peek() answers the same without making a cache, and never
 *     answers from a stale one; policy_get() caches at policy_gen + 1;
 *   - policy_changed() bumps fs->policy_gen by one, and every change
 *     that can alter many inodes' policies bumps it (a policy attribute,
 *     a directory's rename, a chown); a file's link, unlink or rename
 *     and an empty directory's removal clear that inode's cache only;
 *   - placement_statfs(): the whole mount for the default policy, and
 *     only the tiers a policy allows otherwise (f_blocks, f_bavail of a
 *     directory whose user.tierfs.tiers names one tier are that tier's
 *     size and free space; a pin adds its tier), for files below it and
 *     after a file moves under another policy; the inode counts.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "attr.h"
#include "ctl_proto.h"
#include "fuse_inc.h"
#include "namespace.h"
#include "placement.h"
#include "policy.h"
#include "t_fs.h"
#include "tap.h"

#define EXT (64u * 1024)
#define BLK(n) ((uint64_t)(n) * EXT / 4096) /* extents in statfs blocks */

static struct t_fs T;
static struct tierfs *fs;
static const struct ns_cred root_cred = { .uid = 0, .gid = 0 };

static void setup(void)
{
	/* t0 RAM 4 extents, t1 and t2 file tiers of 8 and 16 */
	static const uint32_t slots[] = { 4, 8, 16 };

	t_fs_setup(&T, EXT, 3, slots);
	fs = T.fs;
}

static void teardown(void)
{
	t_fs_teardown(&T);
	fs = NULL;
}

static struct tfs_inode *t_mk(struct tfs_inode *dir, const char *name,
			      bool is_dir, uid_t uid)
{
	struct ns_cred c = { .uid = uid, .gid = uid };
	struct tfs_inode *x = NULL;
	struct stat st;

	if (is_dir)
		ck_assert_int_eq(ns_mkdir(fs, dir, name, 0755, &c, &x, &st), 0);
	else
		ck_assert_int_eq(ns_create(fs, dir, name, 0644, &c, &x, &st), 0);
	return x;
}

static void t_set(struct tfs_inode *i, const char *key, const char *v)
{
	ck_assert_int_eq(attr_set(fs, i, key, v, strlen(v), 0, 0), 0);
}

static void t_del(struct tfs_inode *i, const char *key)
{
	ck_assert_int_eq(attr_remove(fs, i, key, 0), 0);
}

static uint64_t t_gen(void)
{
	return __atomic_load_n(&fs->policy_gen, __ATOMIC_RELAXED);
}

/* The tiers order of @p as "2,1". */
static const char *t_order(const struct policy *p)
{
	static char buf[32];
	size_t n = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < p->norder; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%u",
				      i ? "," : "", p->order[i]);
	return buf;
}

static struct policy t_pol(struct tfs_inode *i)
{
	struct policy p;

	policy_get(fs, i, &p);
	return p;
}

static bool t_is_default(const struct policy *p)
{
	return p->allowed == 7 && !strcmp(t_order(p), "0,1,2") &&
	       p->pin == -1 && p->nsplit == 0 && p->promote &&
	       p->src[POLICY_TIERS] == 0 && p->src[POLICY_PIN] == 0 &&
	       p->src[POLICY_SPLIT] == 0 && p->src[POLICY_PROMOTE] == 0;
}

/* ------------------------------------------------------------------ */

START_TEST(test_nearest_policy)
{
	struct tfs_inode *a = t_mk(fs->root, "a", true, 0);
	struct tfs_inode *b = t_mk(a, "b", true, 0);
	struct tfs_inode *c = t_mk(b, "c", true, 0);
	struct tfs_inode *f = t_mk(c, "f", false, 0);
	struct policy p;

	p = t_pol(f);
	ck_assert(t_is_default(&p));
	t_set(a, TIERFS_XATTR_TIERS, "t2,t1");
	t_set(b, TIERFS_XATTR_PIN, "t0");
	p = t_pol(f);
	ck_assert_str_eq(t_order(&p), "2,1");
	ck_assert_uint_eq(p.src[POLICY_TIERS], a->i_ino);
	ck_assert_int_eq(p.pin, 0);
	ck_assert_uint_eq(p.src[POLICY_PIN], b->i_ino);
	ck_assert_uint_eq(p.allowed, 7); /* the pin's tier is allowed too */
	ck_assert(p.promote);
	ck_assert_uint_eq(p.src[POLICY_PROMOTE], 0);
	ck_assert_uint_eq(p.nsplit, 0);
	/* the directories on the way resolve the same way */
	p = t_pol(c);
	ck_assert_int_eq(p.pin, 0);
	ck_assert_str_eq(t_order(&p), "2,1");
	p = t_pol(a);
	ck_assert_int_eq(p.pin, -1);
	ck_assert_str_eq(t_order(&p), "2,1");
	ck_assert_uint_eq(p.allowed, 6);

	/* nearer wins, key by key */
	t_set(f, TIERFS_XATTR_PROMOTE, "0");
	t_set(c, TIERFS_XATTR_TIERS, "t1");
	p = t_pol(f);
	ck_assert(!p.promote);
	ck_assert_uint_eq(p.src[POLICY_PROMOTE], f->i_ino);
	ck_assert_str_eq(t_order(&p), "1");
	ck_assert_uint_eq(p.src[POLICY_TIERS], c->i_ino);
	ck_assert_int_eq(p.pin, 0);
	ck_assert_uint_eq(p.allowed, 3);
	/* the root's split reaches everything that sets none */
	t_set(fs->root, TIERFS_XATTR_SPLIT, "t0:64K,t2");
	p = t_pol(f);
	ck_assert_uint_eq(p.nsplit, 2);
	ck_assert_uint_eq(p.src[POLICY_SPLIT], fs->root->i_ino);
	ck_assert_uint_eq(p.split[0].end, 65536);
	ck_assert_uint_eq(p.split[0].tier, 0);
	ck_assert_uint_eq(p.split[1].end, UINT64_MAX);
	ck_assert_uint_eq(p.split[1].tier, 2);
	ck_assert_uint_eq(p.allowed, 7);
	ck_assert_int_eq(policy_home(&p, 0), 0); /* the pin first */
	p = t_pol(a);
	ck_assert_uint_eq(p.nsplit, 2);
	ck_assert_int_eq(policy_home(&p, 65536), 2);
}
END_TEST

START_TEST(test_policy_after_rename)
{
	struct tfs_inode *a = t_mk(fs->root, "a", true, 0);
	struct tfs_inode *x = t_mk(fs->root, "x", true, 0);
	struct tfs_inode *sub = t_mk(a, "sub", true, 0);
	struct tfs_inode *f = t_mk(sub, "f", false, 0);
	struct tfs_inode *g = t_mk(sub, "g", false, 0);
	struct policy p;

	t_set(a, TIERFS_XATTR_PIN, "t1");
	t_set(x, TIERFS_XATTR_PIN, "t2");
	t_set(x, TIERFS_XATTR_TIERS, "t2");
	p = t_pol(f); /* cached under a's pin */
	ck_assert_int_eq(p.pin, 1);
	ck_assert_uint_eq(p.src[POLICY_PIN], a->i_ino);

	ck_assert_int_eq(ns_rename(fs, sub, "f", x, "f", 0), 0);
	p = t_pol(f);
	ck_assert_int_eq(p.pin, 2);
	ck_assert_uint_eq(p.src[POLICY_PIN], x->i_ino);
	ck_assert_str_eq(t_order(&p), "2");
	ck_assert_uint_eq(p.allowed, 4);
	ck_assert_int_eq(ns_rename(fs, x, "f", fs->root, "f", 0), 0);
	p = t_pol(f);
	ck_assert(t_is_default(&p));

	/* a directory moves with everything below it */
	p = t_pol(g);
	ck_assert_int_eq(p.pin, 1);
	ck_assert_int_eq(ns_rename(fs, a, "sub", x, "sub", 0), 0);
	p = t_pol(g);
	ck_assert_int_eq(p.pin, 2);
	ck_assert_uint_eq(p.src[POLICY_PIN], x->i_ino);
	p = t_pol(sub);
	ck_assert_int_eq(p.pin, 2);
	/* an exchange swaps what governs each side */
	ck_assert_int_eq(ns_rename(fs, fs->root, "f", x, "sub",
				   RENAME_EXCHANGE), 0);
	p = t_pol(f);
	ck_assert_int_eq(p.pin, 2);
	p = t_pol(g);
	ck_assert_int_eq(p.pin, -1);
	ck_assert_uint_eq(p.allowed, 7);
}
END_TEST

START_TEST(test_policy_after_remove)
{
	struct tfs_inode *a = t_mk(fs->root, "a", true, 0);
	struct tfs_inode *b = t_mk(a, "b", true, 0);
	struct tfs_inode *f = t_mk(b, "f", false, 0);
	struct policy p;

	t_set(a, TIERFS_XATTR_TIERS, "t2,t1");
	t_set(b, TIERFS_XATTR_PIN, "t0");
	t_set(b, TIERFS_XATTR_TIERS, "t1");
	p = t_pol(f);
	ck_assert_int_eq(p.pin, 0);
	ck_assert_str_eq(t_order(&p), "1");
	/* one key goes: the other stays */
	t_del(b, TIERFS_XATTR_PIN);
	p = t_pol(f);
	ck_assert_int_eq(p.pin, -1);
	ck_assert_uint_eq(p.src[POLICY_PIN], 0);
	ck_assert_str_eq(t_order(&p), "1");
	ck_assert_uint_eq(p.allowed, 2);
	/* the next one up shows through */
	t_del(b, TIERFS_XATTR_TIERS);
	p = t_pol(f);
	ck_assert_str_eq(t_order(&p), "2,1");
	ck_assert_uint_eq(p.src[POLICY_TIERS], a->i_ino);
	ck_assert_uint_eq(p.allowed, 6);
	t_del(a, TIERFS_XATTR_TIERS);
	p = t_pol(f);
	ck_assert(t_is_default(&p));
}
END_TEST

/* A directory's policy steers its owner's files, or everyone's if root
 * owns it (placement.c dir_applies()). */
START_TEST(test_owner_rule)
{
	struct tfs_inode *d = t_mk(fs->root, "d", true, 1000);
	struct tfs_inode *r = t_mk(fs->root, "r", true, 0);
	struct tfs_inode *f1 = t_mk(d, "f1", false, 1000);
	struct tfs_inode *f2 = t_mk(d, "f2", false, 2000);
	struct tfs_inode *f3 = t_mk(r, "f3", false, 2000);
	struct tfs_inode *d2, *f4;
	struct stat a = { 0 };
	struct policy p;

	ck_assert_int_eq(attr_set(fs, d, TIERFS_XATTR_PIN, "t2", 2, 0, 1000),
			 0);
	t_set(r, TIERFS_XATTR_PIN, "t1");
	ck_assert_int_eq(t_pol(f1).pin, 2);
	ck_assert_int_eq(t_pol(f2).pin, -1);
	ck_assert_int_eq(t_pol(f3).pin, 1);
	/* chown: the owner's directory applies now */
	a.st_uid = 1000;
	ck_assert_int_eq(ns_setattr(fs, f2, &a, FUSE_SET_ATTR_UID, false,
				    &root_cred), 0);
	ck_assert_int_eq(t_pol(f2).pin, 2);
	/* passed over in the walk, not a stop: above it, root's applies */
	t_set(r, TIERFS_XATTR_TIERS, "t1");
	d2 = t_mk(r, "d2", true, 1000);
	ck_assert_int_eq(attr_set(fs, d2, TIERFS_XATTR_PIN, "t2", 2, 0, 1000),
			 0);
	f4 = t_mk(d2, "f4", false, 2000);
	p = t_pol(f4);
	ck_assert_int_eq(p.pin, 1);
	ck_assert_uint_eq(p.src[POLICY_PIN], r->i_ino);
	ck_assert_str_eq(t_order(&p), "1");
}
END_TEST

START_TEST(test_hard_links)
{
	struct tfs_inode *A = t_mk(fs->root, "A", true, 0);
	struct tfs_inode *B = t_mk(fs->root, "B", true, 0);
	struct tfs_inode *f = t_mk(A, "f", false, 0);
	struct stat st;
	struct policy p;

	t_set(A, TIERFS_XATTR_PIN, "t1");
	t_set(B, TIERFS_XATTR_PIN, "t2");
	t_set(fs->root, TIERFS_XATTR_TIERS, "t0");
	ck_assert_int_eq(t_pol(f).pin, 1);
	ck_assert_int_eq(ns_link(fs, f, B, "f", &st), 0);
	ck_assert_int_eq(t_pol(f).pin, 2); /* the latest name */
	ck_assert_int_eq(ns_unlink(fs, B, "f"), 0);
	ck_assert_int_eq(t_pol(f).pin, 1);
	/* no name left: the root's */
	ck_assert_int_eq(ns_unlink(fs, A, "f"), 0);
	p = t_pol(f);
	ck_assert_int_eq(p.pin, -1);
	ck_assert_str_eq(t_order(&p), "0");
	ck_assert_uint_eq(p.src[POLICY_TIERS], fs->root->i_ino);
}
END_TEST

START_TEST(test_peek_and_cache)
{
	struct tfs_inode *f = t_mk(fs->root, "f", false, 0);
	struct policy p;
	uint64_t gen;

	ck_assert_ptr_null(f->i_effc);
	policy_peek(fs, f, &p);
	ck_assert(t_is_default(&p));
	ck_assert_ptr_null(f->i_effc); /* no cache made */
	policy_get(fs, f, &p);
	ck_assert(t_is_default(&p));
	ck_assert_ptr_nonnull(f->i_effc);
	ck_assert_uint_eq(f->i_effc->gen, t_gen() + 1);

	gen = t_gen();
	policy_changed(fs);
	ck_assert_uint_eq(t_gen(), gen + 1);

	/* a stale cache is never the answer, peeked or not */
	t_set(fs->root, TIERFS_XATTR_PIN, "t2");
	policy_peek(fs, f, &p);
	ck_assert_int_eq(p.pin, 2);
	ck_assert_int_eq(f->i_effc->pol.pin, -1); /* peek kept nothing */
	ck_assert_uint_lt(f->i_effc->gen, t_gen() + 1);
	policy_get(fs, f, &p);
	ck_assert_int_eq(p.pin, 2);
	ck_assert_int_eq(f->i_effc->pol.pin, 2);
	ck_assert_uint_eq(f->i_effc->gen, t_gen() + 1);
	/* a current cache is: peek answers from it */
	policy_peek(fs, f, &p);
	ck_assert_int_eq(p.pin, 2);
}
END_TEST

START_TEST(test_gen_bumps)
{
	struct tfs_inode *d = t_mk(fs->root, "d", true, 0);
	struct tfs_inode *e = t_mk(fs->root, "e", true, 0);
	struct tfs_inode *f = t_mk(d, "f", false, 0);
	struct stat st, a = { 0 };
	uint64_t g;

	(void)e;
	/* a file's link, unlink and rename change that file's policy only:
	 * its cache goes, the generation stays (issue 20) */
	policy_get(fs, f, &(struct policy){ 0 });
	ck_assert_ptr_nonnull(f->i_effc);
	g = t_gen();
	ck_assert_int_eq(ns_link(fs, f, fs->root, "l", &st), 0);
	ck_assert_uint_eq(t_gen(), g);
	ck_assert_uint_eq(f->i_effc->gen, 0);
	policy_get(fs, f, &(struct policy){ 0 });
	ck_assert_uint_eq(f->i_effc->gen, g + 1);
	ck_assert_int_eq(ns_unlink(fs, fs->root, "l"), 0);
	ck_assert_uint_eq(t_gen(), g);
	ck_assert_uint_eq(f->i_effc->gen, 0);
	policy_get(fs, f, &(struct policy){ 0 });
	ck_assert_int_eq(ns_rename(fs, d, "f", fs->root, "f", 0), 0);
	ck_assert_uint_eq(t_gen(), g);
	ck_assert_uint_eq(f->i_effc->gen, 0);
	/* a directory's rename changes its whole subtree's */
	ck_assert_int_eq(ns_rename(fs, fs->root, "d", fs->root, "e", 0), 0);
	ck_assert_uint_gt(t_gen(), g);
	/* an empty directory's removal only its own */
	g = t_gen();
	ck_assert_int_eq(ns_rmdir(fs, fs->root, "e"), 0);
	ck_assert_uint_eq(t_gen(), g);
	g = t_gen();
	a.st_uid = 5;
	ck_assert_int_eq(ns_setattr(fs, f, &a, FUSE_SET_ATTR_UID, false,
				    &root_cred), 0);
	ck_assert_uint_gt(t_gen(), g);
	g = t_gen();
	t_set(f, TIERFS_XATTR_PROMOTE, "1");
	ck_assert_uint_gt(t_gen(), g);
	g = t_gen();
	t_del(f, TIERFS_XATTR_PROMOTE);
	ck_assert_uint_gt(t_gen(), g);
}
END_TEST

START_TEST(test_statfs_tiers)
{
	struct tfs_inode *r = t_mk(fs->root, "r", true, 0);
	struct tfs_inode *m = t_mk(fs->root, "m", true, 0);
	struct tfs_inode *pd = t_mk(fs->root, "p", true, 0);
	struct tfs_inode *f;
	struct statvfs sv;
	char *buf = calloc(1, EXT);

	ck_assert_ptr_nonnull(buf);
	placement_statfs(fs, fs->root, &sv);
	ck_assert_uint_eq(sv.f_frsize, 4096);
	ck_assert_uint_eq(sv.f_blocks, BLK(4 + 8 + 16));
	ck_assert_uint_le(sv.f_bavail, sv.f_blocks);

	t_set(r, TIERFS_XATTR_TIERS, "t0");
	placement_statfs(fs, r, &sv);
	ck_assert_uint_eq(sv.f_blocks, BLK(4));
	ck_assert_uint_eq(sv.f_bfree, BLK(4));
	ck_assert_uint_eq(sv.f_bavail, BLK(4));
	f = t_mk(r, "f", false, 0);
	memset(buf, 3, EXT);
	ck_assert_int_eq(data_write(fs, f, buf, EXT, 0), EXT);
	ck_assert_int_eq(t_tier_of(f, 0), 0);
	placement_statfs(fs, r, &sv);
	ck_assert_uint_eq(sv.f_blocks, BLK(4));
	ck_assert_uint_eq(sv.f_bavail, BLK(3));
	ck_assert_uint_eq(sv.f_bavail * sv.f_frsize,
			  tier_avail_bytes(fs->tiers[0]));
	/* a file answers for its policy: the directory's */
	placement_statfs(fs, f, &sv);
	ck_assert_uint_eq(sv.f_blocks, BLK(4));
	ck_assert_uint_eq(sv.f_bavail, BLK(3));

	t_set(m, TIERFS_XATTR_TIERS, "t1");
	placement_statfs(fs, m, &sv);
	ck_assert_uint_eq(sv.f_blocks, BLK(8));
	ck_assert_uint_le(sv.f_bavail, BLK(8));
	/* a file tier's free space is capped by the filesystem under it;
	 * assume that has a few hundred KiB free */
	ck_assert_uint_eq(sv.f_bavail, BLK(8));
	/* moved under m, the file answers for m */
	ck_assert_int_eq(ns_rename(fs, r, "f", m, "f", 0), 0);
	placement_statfs(fs, f, &sv);
	ck_assert_uint_eq(sv.f_blocks, BLK(8));

	/* a pin adds its tier to those the list allows */
	t_set(pd, TIERFS_XATTR_TIERS, "t1");
	t_set(pd, TIERFS_XATTR_PIN, "t0");
	placement_statfs(fs, pd, &sv);
	ck_assert_uint_eq(sv.f_blocks, BLK(4 + 8));
	/* removing the list: every tier, the mount's own figures */
	t_del(pd, TIERFS_XATTR_TIERS);
	t_del(r, TIERFS_XATTR_TIERS);
	placement_statfs(fs, r, &sv);
	ck_assert_uint_eq(sv.f_blocks, BLK(4 + 8 + 16));

	/* inodes: --max-inodes in units, less what is used */
	fs->opt.max_inodes = 100;
	placement_statfs(fs, r, &sv);
	ck_assert_uint_eq(sv.f_files, 100);
	ck_assert_uint_eq(sv.f_ffree, 100 - fs->ninodes);
	ck_assert_uint_eq(sv.f_favail, 100 - fs->ninodes);
	ck_assert_uint_eq(sv.f_namemax, 255);
	free(buf);
}
END_TEST

static Suite *placement_suite(void)
{
	Suite *s = suite_create("placement");
	TCase *tc = tcase_create("policy");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_nearest_policy);
	tcase_add_test(tc, test_policy_after_rename);
	tcase_add_test(tc, test_policy_after_remove);
	tcase_add_test(tc, test_owner_rule);
	tcase_add_test(tc, test_hard_links);
	tcase_add_test(tc, test_peek_and_cache);
	tcase_add_test(tc, test_gen_bumps);
	suite_add_tcase(s, tc);

	tc = tcase_create("statfs");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_statfs_tiers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(placement_suite());
}
