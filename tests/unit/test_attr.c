// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_attr.c -- Check suite for the extended attributes on an
 * in-process mount (t_fs.h), in two layers:
 *   - fs/xattr.c (xattr.h), the storage: set/get/list/remove with
 *     XATTR_CREATE and XATTR_REPLACE, -ERANGE for a short buffer and a
 *     size probe, -ENODATA, -EOPNOTSUPP for system.* and other
 *     namespaces, -EINVAL for a bare "user.", -E2BIG past
 *     XATTR_SIZE_MAX; the per-inode limits XATTR_INODE_MAX_COUNT and
 *     XATTR_INODE_MAX_BYTES on user.* (trusted.* not limited), and the
 *     per-mount charge in fs->xattr_bytes against opt.max_xattr_bytes:
 *     -ENOSPC with nothing changed, the exact charge (name + NUL +
 *     value + XATTR_CHARGE_OVERHEAD), back to 0 after removal and when
 *     an inode with attributes is freed;
 *   - fs/attr.c (attr.h), the routing: computed user.tierfs.* names
 *     are -EPERM to set or remove (readable, not listed); user.tierfs.*
 *     changed by a uid that is neither the owner nor root is -EPERM;
 *     a free-form user.tierfs.foo is -EINVAL; a policy key on a symlink
 *     or a FIFO is -EINVAL; a bad policy value is -EINVAL; a valid
 *     user.tierfs.pin on a directory changes the policy policy_get()
 *     sees for it and the files below, bumps fs->policy_gen, and its
 *     removal restores the default.  Failures leave policy_gen alone.
 */
#include <check.h>
#include <errno.h>
#include <linux/limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "attr.h"
#include "ctl_proto.h"
#include "namespace.h"
#include "placement.h"
#include "policy.h"
#include "xattr.h"
#include "t_fs.h"
#include "tap.h"

#define EXT (64u * 1024)

static struct t_fs T;
static struct tierfs *fs;

static void setup(void)
{
	static const uint32_t slots[] = { 8, 8 };

	t_fs_setup(&T, EXT, 2, slots);
	fs = T.fs;
	ck_assert_uint_eq(fs->opt.max_xattr_bytes, 0); /* no mount limit */
}

static void teardown(void)
{
	t_fs_teardown(&T);
	fs = NULL;
}

static struct tfs_inode *t_mk(struct tfs_inode *dir, const char *name,
			      mode_t type, uid_t uid)
{
	struct ns_cred c = { .uid = uid, .gid = uid };
	struct tfs_inode *x = NULL;
	struct stat st;

	if (type == S_IFDIR)
		ck_assert_int_eq(ns_mkdir(fs, dir, name, 0755, &c, &x, &st), 0);
	else if (type == S_IFLNK)
		ck_assert_int_eq(ns_symlink(fs, dir, name, "t", &c, &x, &st), 0);
	else
		ck_assert_int_eq(ns_mknod(fs, dir, name, type | 0644, 0, &c, &x,
					  &st), 0);
	return x;
}

static uint64_t t_xbytes(void)
{
	return __atomic_load_n(&fs->xattr_bytes, __ATOMIC_RELAXED);
}

static uint64_t t_gen(void)
{
	return __atomic_load_n(&fs->policy_gen, __ATOMIC_RELAXED);
}

/* What a user.* attribute charges the mount (xattr.h). */
static uint64_t t_charge(const char *name, size_t size)
{
	return strlen(name) + 1 + size + XATTR_CHARGE_OVERHEAD;
}

/* Is @name in @inode's listing? */
static bool t_listed(struct tfs_inode *inode, const char *name)
{
	char buf[16384];
	ssize_t n = xattr_list(fs, inode, buf, sizeof(buf));

	ck_assert_int_ge(n, 0);
	for (ssize_t k = 0; k < n; k += (ssize_t)strlen(buf + k) + 1)
		if (!strcmp(buf + k, name))
			return true;
	return false;
}

/* ---- xattr.c: storage ---------------------------------------------- */

START_TEST(test_set_get_flags)
{
	struct tfs_inode *f = t_mk(fs->root, "f", S_IFREG, 0);
	char buf[64];

	ck_assert_int_eq(xattr_get(fs, f, "user.a", buf, sizeof(buf)),
			 -ENODATA);
	ck_assert_int_eq(xattr_set(fs, f, "user.a", "hello", 5, 0), 0);
	ck_assert_int_eq(xattr_get(fs, f, "user.a", NULL, 0), 5); /* probe */
	ck_assert_int_eq(xattr_get(fs, f, "user.a", buf, 4), -ERANGE);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(xattr_get(fs, f, "user.a", buf, 5), 5);
	ck_assert_mem_eq(buf, "hello", 5);

	ck_assert_int_eq(xattr_set(fs, f, "user.a", "x", 1, XATTR_CREATE),
			 -EEXIST);
	ck_assert_int_eq(xattr_set(fs, f, "user.b", "x", 1, XATTR_REPLACE),
			 -ENODATA);
	ck_assert_int_eq(xattr_get(fs, f, "user.b", buf, sizeof(buf)),
			 -ENODATA);
	ck_assert_int_eq(xattr_get(fs, f, "user.a", buf, sizeof(buf)), 5);
	ck_assert_int_eq(xattr_set(fs, f, "user.a", "wor", 3, XATTR_REPLACE),
			 0);
	ck_assert_int_eq(xattr_get(fs, f, "user.a", buf, sizeof(buf)), 3);
	ck_assert_mem_eq(buf, "wor", 3);
	ck_assert_int_eq(xattr_set(fs, f, "user.b", "new", 3, XATTR_CREATE),
			 0);
	/* an empty value is a value */
	ck_assert_int_eq(xattr_set(fs, f, "user.empty", "", 0, 0), 0);
	ck_assert_int_eq(xattr_get(fs, f, "user.empty", buf, sizeof(buf)), 0);

	/* namespaces */
	ck_assert_int_eq(xattr_set(fs, f, "system.posix_acl_access", "x", 1,
				   0), -EOPNOTSUPP);
	ck_assert_int_eq(xattr_get(fs, f, "system.posix_acl_access", buf,
				   sizeof(buf)), -EOPNOTSUPP);
	ck_assert_int_eq(xattr_remove(fs, f, "system.posix_acl_access"),
			 -EOPNOTSUPP);
	ck_assert_int_eq(xattr_set(fs, f, "other.x", "x", 1, 0), -EOPNOTSUPP);
	ck_assert_int_eq(xattr_set(fs, f, "user.", "x", 1, 0), -EINVAL);
	ck_assert_int_eq(xattr_get(fs, f, "user.", buf, sizeof(buf)), -EINVAL);
	ck_assert_int_eq(xattr_remove(fs, f, "user."), -EINVAL);
	ck_assert_int_eq(xattr_set(fs, f, "trusted.", "x", 1, 0), -EINVAL);
	ck_assert_int_eq(xattr_set(fs, f, "security.", "x", 1, 0), -EINVAL);
	ck_assert_int_eq(xattr_name_check("trusted.t"), 0);
	ck_assert_int_eq(xattr_name_check("security.selinux"), 0);
	ck_assert_int_eq(xattr_name_check("system.x"), -EOPNOTSUPP);
	ck_assert_int_eq(xattr_name_check("user"), -EOPNOTSUPP);

	/* remove */
	ck_assert_int_eq(xattr_remove(fs, f, "user.nope"), -ENODATA);
	ck_assert_int_eq(xattr_remove(fs, f, "user.a"), 0);
	ck_assert_int_eq(xattr_get(fs, f, "user.a", buf, sizeof(buf)),
			 -ENODATA);
	ck_assert_int_eq(xattr_remove(fs, f, "user.a"), -ENODATA);
	ck_assert_int_eq(xattr_get(fs, f, "user.b", buf, sizeof(buf)), 3);
	ck_assert_mem_eq(buf, "new", 3);
	ck_assert_uint_eq(f->i_nxattrs, 2);
}
END_TEST

START_TEST(test_too_big)
{
	struct tfs_inode *f = t_mk(fs->root, "f", S_IFREG, 0);
	char *v = calloc(1, XATTR_SIZE_MAX + 1);

	ck_assert_ptr_nonnull(v);
	ck_assert_int_eq(xattr_set(fs, f, "user.big", v, XATTR_SIZE_MAX + 1,
				   0), -E2BIG);
	ck_assert_int_eq(attr_set(fs, f, "user.big", v, XATTR_SIZE_MAX + 1,
				  0, 0), -E2BIG);
	ck_assert_uint_eq(f->i_nxattrs, 0);
	ck_assert_int_eq(xattr_set(fs, f, "user.big", v, XATTR_SIZE_MAX, 0),
			 0);
	ck_assert_int_eq(xattr_get(fs, f, "user.big", NULL, 0), XATTR_SIZE_MAX);
	free(v);
}
END_TEST

START_TEST(test_list)
{
	struct tfs_inode *f = t_mk(fs->root, "f", S_IFREG, 0);
	const size_t want = sizeof("user.a") + sizeof("user.bb") +
			    sizeof("trusted.c");
	char buf[64];

	ck_assert_int_eq(xattr_list(fs, f, NULL, 0), 0);
	ck_assert_int_eq(xattr_set(fs, f, "user.a", "1", 1, 0), 0);
	ck_assert_int_eq(xattr_set(fs, f, "user.bb", "2", 1, 0), 0);
	ck_assert_int_eq(xattr_set(fs, f, "trusted.c", "3", 1, 0), 0);
	ck_assert_int_eq(xattr_list(fs, f, NULL, 0), (ssize_t)want);
	ck_assert_int_eq(xattr_list(fs, f, buf, want - 1), -ERANGE);
	ck_assert_int_eq(xattr_list(fs, f, buf, want), (ssize_t)want);
	ck_assert(t_listed(f, "user.a"));
	ck_assert(t_listed(f, "user.bb"));
	ck_assert(t_listed(f, "trusted.c"));
	ck_assert_int_eq(attr_list(fs, f, NULL, 0), (ssize_t)want);
	ck_assert_int_eq(xattr_remove(fs, f, "user.a"), 0);
	ck_assert_int_eq(xattr_list(fs, f, NULL, 0),
			 (ssize_t)(want - sizeof("user.a")));
	ck_assert(!t_listed(f, "user.a"));
	ck_assert(t_listed(f, "user.bb"));
	ck_assert(t_listed(f, "trusted.c"));
}
END_TEST

START_TEST(test_inode_count_limit)
{
	struct tfs_inode *f = t_mk(fs->root, "f", S_IFREG, 0);
	uint64_t xb;
	char name[32], buf[8];

	for (int i = 0; i < XATTR_INODE_MAX_COUNT; i++) {
		snprintf(name, sizeof(name), "user.n%d", i);
		ck_assert_int_eq(xattr_set(fs, f, name, "v", 1, 0), 0);
	}
	xb = t_xbytes();
	ck_assert_int_eq(xattr_set(fs, f, "user.one_more", "v", 1, 0),
			 -ENOSPC);
	ck_assert_int_eq(xattr_get(fs, f, "user.one_more", buf, sizeof(buf)),
			 -ENODATA);
	ck_assert_uint_eq(f->i_nxattrs, XATTR_INODE_MAX_COUNT);
	ck_assert_uint_eq(t_xbytes(), xb);
	/* replacing one is not one more */
	ck_assert_int_eq(xattr_set(fs, f, "user.n7", "vv", 2, 0), 0);
	ck_assert_int_eq(xattr_set(fs, f, "user.n8", "vvv", 3, XATTR_REPLACE),
			 0);
	/* other namespaces are not limited here */
	ck_assert_int_eq(xattr_set(fs, f, "trusted.x", "v", 1, 0), 0);
	ck_assert_int_eq(xattr_set(fs, f, "security.y", "v", 1, 0), 0);
	/* one gone: room for one */
	ck_assert_int_eq(xattr_remove(fs, f, "user.n0"), 0);
	ck_assert_int_eq(xattr_set(fs, f, "user.one_more", "v", 1, 0), 0);
	ck_assert_int_eq(xattr_set(fs, f, "user.two_more", "v", 1, 0),
			 -ENOSPC);
	/* per inode: another file has its own */
	ck_assert_int_eq(xattr_set(fs, t_mk(fs->root, "g", S_IFREG, 0),
				   "user.n0", "v", 1, 0), 0);
}
END_TEST

START_TEST(test_inode_bytes_limit)
{
	const unsigned n = XATTR_INODE_MAX_BYTES / XATTR_SIZE_MAX;
	struct tfs_inode *f = t_mk(fs->root, "f", S_IFREG, 0);
	char *v = calloc(1, XATTR_SIZE_MAX);
	char name[32];
	uint64_t xb;

	ck_assert_ptr_nonnull(v);
	ck_assert_uint_eq(n, 16);
	for (unsigned i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "user.v%u", i);
		ck_assert_int_eq(xattr_set(fs, f, name, v, XATTR_SIZE_MAX, 0),
				 0);
	}
	/* exactly at the limit; one byte more is past it */
	xb = t_xbytes();
	ck_assert_int_eq(xattr_set(fs, f, "user.x", v, 1, 0), -ENOSPC);
	ck_assert_int_eq(xattr_set(fs, f, "user.empty", "", 0, 0), 0);
	ck_assert_uint_eq(t_xbytes(), xb + t_charge("user.empty", 0));
	ck_assert_int_eq(xattr_get(fs, f, "user.x", NULL, 0), -ENODATA);
	/* a value replaced by one as large fits (it is not counted twice) */
	v[0] = 7;
	ck_assert_int_eq(xattr_set(fs, f, "user.v3", v, XATTR_SIZE_MAX, 0), 0);
	/* shrinking one makes room */
	ck_assert_int_eq(xattr_set(fs, f, "user.v0", v, XATTR_SIZE_MAX - 10,
				   XATTR_REPLACE), 0);
	ck_assert_int_eq(xattr_set(fs, f, "user.x", v, 10, 0), 0);
	ck_assert_int_eq(xattr_set(fs, f, "user.y", v, 1, 0), -ENOSPC);
	/* growing one past it fails and keeps the old value */
	ck_assert_int_eq(xattr_set(fs, f, "user.x", v, 11, 0), -ENOSPC);
	ck_assert_int_eq(xattr_get(fs, f, "user.x", NULL, 0), 10);
	/* trusted.* is not counted */
	ck_assert_int_eq(xattr_set(fs, f, "trusted.t", v, XATTR_SIZE_MAX, 0),
			 0);
	free(v);
}
END_TEST

START_TEST(test_mount_charge)
{
	struct tfs_inode *f = t_mk(fs->root, "f", S_IFREG, 0);
	struct tfs_inode *g = t_mk(fs->root, "g", S_IFREG, 0);
	const uint64_t one = t_charge("user.k0", 100);
	char v[200], buf[200];

	memset(v, 'v', sizeof(v));
	ck_assert_uint_eq(t_xbytes(), 0);
	fs->opt.max_xattr_bytes = 3 * one;
	ck_assert_int_eq(xattr_set(fs, f, "user.k0", v, 100, 0), 0);
	ck_assert_uint_eq(t_xbytes(), one);
	ck_assert_int_eq(xattr_set(fs, f, "user.k1", v, 100, 0), 0);
	ck_assert_int_eq(xattr_set(fs, g, "user.k2", v, 100, 0), 0);
	ck_assert_uint_eq(t_xbytes(), 3 * one);
	/* full, for any inode of the mount: nothing changes */
	ck_assert_int_eq(xattr_set(fs, g, "user.k3", v, 0, 0), -ENOSPC);
	ck_assert_int_eq(xattr_set(fs, f, "user.k3", v, 1, 0), -ENOSPC);
	ck_assert_int_eq(xattr_get(fs, g, "user.k3", buf, sizeof(buf)),
			 -ENODATA);
	ck_assert_uint_eq(g->i_nxattrs, 1);
	ck_assert_uint_eq(t_xbytes(), 3 * one);
	/* growing a value past it keeps the old one */
	ck_assert_int_eq(xattr_set(fs, f, "user.k0", v, 101, 0), -ENOSPC);
	ck_assert_int_eq(xattr_get(fs, f, "user.k0", buf, sizeof(buf)), 100);
	ck_assert_uint_eq(t_xbytes(), 3 * one);
	/* shrinking gives the difference back, and makes room */
	ck_assert_int_eq(xattr_set(fs, f, "user.k0", v, 60, XATTR_REPLACE), 0);
	ck_assert_uint_eq(t_xbytes(), 3 * one - 40);
	ck_assert_int_eq(xattr_set(fs, f, "user.k0", v, 100, XATTR_REPLACE),
			 0);
	ck_assert_uint_eq(t_xbytes(), 3 * one);
	/* trusted.* and security.* are not charged */
	ck_assert_int_eq(xattr_set(fs, f, "trusted.t", v, 100, 0), 0);
	ck_assert_int_eq(xattr_set(fs, f, "security.s", v, 100, 0), 0);
	ck_assert_uint_eq(t_xbytes(), 3 * one);
	/* removal gives it all back */
	ck_assert_int_eq(xattr_remove(fs, f, "user.k1"), 0);
	ck_assert_uint_eq(t_xbytes(), 2 * one);
	ck_assert_int_eq(xattr_set(fs, g, "user.k3", v, 100, 0), 0);
	ck_assert_int_eq(xattr_remove(fs, g, "user.k3"), 0);
	ck_assert_int_eq(xattr_remove(fs, g, "user.k2"), 0);
	ck_assert_int_eq(xattr_remove(fs, f, "trusted.t"), 0);
	ck_assert_uint_eq(t_xbytes(), one);
	ck_assert_int_eq(xattr_remove(fs, f, "user.k0"), 0);
	ck_assert_uint_eq(t_xbytes(), 0);
	/* and a freed inode gives back what its attributes held */
	ck_assert_int_eq(xattr_set(fs, g, "user.k4", v, 100, 0), 0);
	ck_assert_int_eq(xattr_set(fs, g, "user.k5", v, 50, 0), 0);
	ck_assert_uint_eq(t_xbytes(), one + one - 50);
	ck_assert_int_eq(ns_unlink(fs, fs->root, "g"), 0);
	ck_assert_uint_eq(t_xbytes(), one + one - 50); /* open */
	inode_forget(fs, g, 1);
	ck_assert_uint_eq(t_xbytes(), 0);
}
END_TEST

/* ---- attr.c: routing ----------------------------------------------- */

START_TEST(test_computed_names)
{
	static const char *const computed[] = {
		TIERFS_XATTR_LAYOUT, TIERFS_XATTR_EFFECTIVE, TIERFS_XATTR_STATS,
		TIERFS_XATTR_EXTENTS, "user.tierfs.extents@0",
		TIERFS_XATTR_VERIFY, TIERFS_XATTR_QUOTA,
	};
	struct tfs_inode *f = t_mk(fs->root, "f", S_IFREG, 0);
	uint64_t gen = t_gen();
	char buf[4096];
	ssize_t n;

	for (size_t i = 0; i < sizeof(computed) / sizeof(computed[0]); i++) {
		ck_assert_msg(attr_set(fs, f, computed[i], "x", 1, 0, 0) ==
				      -EPERM, "%s", computed[i]);
		ck_assert_msg(attr_set(fs, fs->root, computed[i], "x", 1, 0,
				       0) == -EPERM, "%s", computed[i]);
		ck_assert_msg(attr_remove(fs, f, computed[i], 0) == -EPERM,
			      "%s", computed[i]);
	}
	ck_assert_uint_eq(f->i_nxattrs, 0);
	ck_assert_uint_eq(t_gen(), gen);
	/* readable, and not listed */
	n = attr_get(fs, f, TIERFS_XATTR_LAYOUT, buf, sizeof(buf) - 1, NULL);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "t0="));
	ck_assert_ptr_nonnull(strstr(buf, "t1="));
	ck_assert_int_eq(attr_list(fs, f, NULL, 0), 0);
}
END_TEST

START_TEST(test_owner_rule)
{
	struct tfs_inode *f = t_mk(fs->root, "f", S_IFREG, 4242);
	uint64_t gen = t_gen();
	char buf[16];

	ck_assert_uint_eq(f->i_uid, 4242);
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_PIN, "t1", 2, 0, 1000),
			 -EPERM);
	ck_assert_int_eq(attr_get(fs, f, TIERFS_XATTR_PIN, buf, sizeof(buf),
				  NULL), -ENODATA);
	ck_assert_uint_eq(t_gen(), gen);
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_PIN, "t1", 2, 0, 4242),
			 0);
	ck_assert_uint_gt(t_gen(), gen);
	gen = t_gen();
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_PROMOTE, "0", 1, 0, 0),
			 0); /* root */
	ck_assert_uint_gt(t_gen(), gen);
	gen = t_gen();
	ck_assert_int_eq(attr_remove(fs, f, TIERFS_XATTR_PIN, 1000), -EPERM);
	ck_assert_int_eq(attr_get(fs, f, TIERFS_XATTR_PIN, buf, sizeof(buf),
				  NULL), 2);
	ck_assert_uint_eq(t_gen(), gen);
	/* an action by a stranger */
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_CTL_MIGRATE, "t0", 2, 0,
				  1000), -EPERM);
	ck_assert_int_eq(attr_remove(fs, f, TIERFS_XATTR_CTL_MIGRATE, 1000),
			 -EPERM);
	/* other user.* names are the kernel's to check, not ours */
	ck_assert_int_eq(attr_set(fs, f, "user.other", "x", 1, 0, 1000), 0);
	ck_assert_int_eq(attr_remove(fs, f, "user.other", 1000), 0);
	ck_assert_int_eq(attr_remove(fs, f, TIERFS_XATTR_PIN, 4242), 0);
	ck_assert_uint_gt(t_gen(), gen);
	ck_assert_int_eq(attr_get(fs, f, TIERFS_XATTR_PIN, buf, sizeof(buf),
				  NULL), -ENODATA);
}
END_TEST

START_TEST(test_bad_policy_names)
{
	struct tfs_inode *f = t_mk(fs->root, "f", S_IFREG, 0);
	struct tfs_inode *l = t_mk(fs->root, "l", S_IFLNK, 0);
	struct tfs_inode *p = t_mk(fs->root, "p", S_IFIFO, 0);
	uint64_t gen = t_gen();
	char buf[16];

	ck_assert_int_eq(attr_set(fs, f, "user.tierfs.foo", "1", 1, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(attr_set(fs, f, "user.tierfs.", "1", 1, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(attr_set(fs, f, "user.tierfs.Pin", "t0", 2, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(attr_get(fs, f, "user.tierfs.foo", buf, sizeof(buf),
				  NULL), -ENODATA);
	ck_assert_int_eq(attr_set(fs, l, TIERFS_XATTR_PIN, "t0", 2, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(attr_set(fs, p, TIERFS_XATTR_TIERS, "t0", 2, 0, 0),
			 -EINVAL);
	/* values: a tier the mount does not have, a bad promote, empty */
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_PIN, "t9", 2, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_TIERS, "t0,t0", 5, 0,
				  0), -EINVAL);
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_PROMOTE, "2", 1, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_PIN, "", 0, 0, 0),
			 -EINVAL);
	ck_assert_uint_eq(f->i_nxattrs, 0);
	ck_assert_uint_eq(l->i_nxattrs, 0);
	ck_assert_uint_eq(p->i_nxattrs, 0);
	ck_assert_ptr_null(f->i_pol);
	ck_assert_uint_eq(t_gen(), gen);
	ck_assert_int_eq(attr_list(fs, f, NULL, 0), 0);
	/* XATTR_CREATE over an existing key: EEXIST, the old value kept */
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_PIN, "t0", 2, 0, 0), 0);
	gen = t_gen();
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_PIN, "t1", 2,
				  XATTR_CREATE, 0), -EEXIST);
	ck_assert_uint_eq(t_gen(), gen);
	ck_assert_int_eq(attr_get(fs, f, TIERFS_XATTR_PIN, buf, sizeof(buf),
				  NULL), 2);
	ck_assert_mem_eq(buf, "t0", 2);
	ck_assert(f->i_pol && f->i_pol->has_pin && f->i_pol->pin == 0);
	/* the namespace first */
	ck_assert_int_eq(attr_set(fs, f, "system.x", "1", 1, 0, 0),
			 -EOPNOTSUPP);
	ck_assert_int_eq(attr_remove(fs, f, "system.x", 0), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_pin_dir_policy)
{
	struct tfs_inode *d = t_mk(fs->root, "d", S_IFDIR, 0);
	struct tfs_inode *f = t_mk(d, "f", S_IFREG, 0);
	struct policy p;
	uint64_t gen;
	char buf[16];

	policy_get(fs, f, &p);
	ck_assert_int_eq(p.pin, -1);
	ck_assert_uint_eq(p.allowed, 3);
	ck_assert_uint_eq(p.src[POLICY_PIN], 0);
	gen = t_gen();
	ck_assert_int_eq(attr_set(fs, d, TIERFS_XATTR_PIN, "t1\n", 3, 0, 0), 0);
	ck_assert_uint_gt(t_gen(), gen);
	ck_assert_int_eq(attr_get(fs, d, TIERFS_XATTR_PIN, buf, sizeof(buf),
				  NULL), 3);
	ck_assert(t_listed(d, TIERFS_XATTR_PIN));
	policy_get(fs, d, &p);
	ck_assert_int_eq(p.pin, 1);
	ck_assert_uint_eq(p.src[POLICY_PIN], d->i_ino);
	/* the file below sees it, though its own cache was made before */
	policy_get(fs, f, &p);
	ck_assert_int_eq(p.pin, 1);
	ck_assert_uint_eq(p.src[POLICY_PIN], d->i_ino);
	ck_assert_int_eq(policy_home(&p, 0), 1);

	gen = t_gen();
	ck_assert_int_eq(attr_remove(fs, d, TIERFS_XATTR_PIN, 0), 0);
	ck_assert_uint_gt(t_gen(), gen);
	policy_get(fs, f, &p);
	ck_assert_int_eq(p.pin, -1);
	ck_assert_uint_eq(p.src[POLICY_PIN], 0);
	policy_get(fs, d, &p);
	ck_assert_int_eq(p.pin, -1);
	gen = t_gen();
	ck_assert_int_eq(attr_remove(fs, d, TIERFS_XATTR_PIN, 0), -ENODATA);
	ck_assert_uint_eq(t_gen(), gen);
	ck_assert(!t_listed(d, TIERFS_XATTR_PIN));
}
END_TEST

static Suite *attr_suite(void)
{
	Suite *s = suite_create("attr");
	TCase *tc = tcase_create("xattr");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_set_get_flags);
	tcase_add_test(tc, test_too_big);
	tcase_add_test(tc, test_list);
	tcase_add_test(tc, test_inode_count_limit);
	tcase_add_test(tc, test_inode_bytes_limit);
	tcase_add_test(tc, test_mount_charge);
	suite_add_tcase(s, tc);

	tc = tcase_create("routing");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_computed_names);
	tcase_add_test(tc, test_owner_rule);
	tcase_add_test(tc, test_bad_policy_names);
	tcase_add_test(tc, test_pin_dir_policy);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(attr_suite());
}
