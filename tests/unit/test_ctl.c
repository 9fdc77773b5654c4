// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_ctl.c -- Check suite for fs/ctl.c, the computed user.tierfs.*
 * attributes, at their limits, on a real in-process mount (RAM tiers,
 * 4 KiB extents; files and directories made as ops.c makes them, data
 * written with data_write()), read through attr_get(, NULL) as the getxattr
 * handler does:
 *   - layout and extents with eight tiers of 32-character names;
 *   - extent lists with 19-digit offsets (the last extent below 2^63);
 *   - 100,001 runs: the unpaged list is E2BIG, the pages
 *     user.tierfs.extents@OFFSET are each at most 64 KiB, a size probe
 *     agrees with the read, and together they list every run once;
 *   - user.tierfs.effective below 250-character directory names (a
 *     4 KiB path, and one too long for a value, which is shortened) and
 *     with a newline and a backslash in a name (escaped);
 *   - attr_set() failing each of its allocations in turn (the linker
 *     wraps malloc and friends; see meson.build): it changes nothing or
 *     reports success, never -ENOMEM with the value stored.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs.h"
#include "mount.h"
#include "inode.h"
#include "dir.h"
#include "data.h"
#include "placement.h"
#include "attr.h"
#include "xattr.h"
#include "ctl.h"
#include "gate.h"
#include "kernel_req.h"
#include "kernel_uring.h"
#include "owner.h"
#include "namespace.h"
#include "ctl_proto.h"
#include "strbuf.h"
#include "tier.h"
#include "tap.h"

/* ---- allocation faults: the Nth allocation fails ---- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);

static long t_fail_at = -1; /* allocation to fail, counting from 0 */
static long t_nalloc;	    /* allocations since t_fault_arm() */

static bool t_fault(void)
{
	if (t_fail_at < 0)
		return false;
	if (t_nalloc++ == t_fail_at) {
		errno = ENOMEM;
		return true;
	}
	return false;
}

void *__wrap_malloc(size_t size)
{
	return t_fault() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return t_fault() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	return t_fault() ? NULL : __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
	return t_fault() ? NULL : __real_strdup(s);
}

static void t_fault_arm(long n)
{
	t_nalloc = 0;
	t_fail_at = n;
}

/* ---- the mount ---- */

#define EXT 4096u
#define K4 "4096"

static struct tierfs_options opt;
static struct tierfs *fs;

/* "t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": 32 characters, the longest */
static void long_name(char *buf, unsigned i)
{
	buf[0] = 't';
	buf[1] = (char)('0' + i);
	memset(buf + 2, 'x', TIER_CONF_NAME_MAX - 2);
	buf[TIER_CONF_NAME_MAX] = '\0';
	ck_assert_uint_eq(strlen(buf), TIER_CONF_NAME_MAX);
}

static void t_mount(unsigned ntiers)
{
	char err[OPT_ERR_MAX];

	options_init(&opt);
	for (unsigned i = 0; i < ntiers; i++) {
		long_name(opt.tiers[i].name, i);
		opt.tiers[i].kind = TIER_RAM;
		opt.tiers[i].size = UINT64_C(1) << 30; /* address space only */
	}
	opt.ntiers = ntiers;
	opt.extent_size = EXT;
	opt.no_migrate = true;
	ck_assert_int_eq(options_finish(&opt, err, sizeof(err)), 0);
	ck_assert_int_eq(tierfs_create(&opt, &fs), 0);
}

static void setup_two(void)
{
	t_mount(2);
}

static void setup_eight(void)
{
	t_mount(TIER_MAX_CONF);
}

static void teardown(void)
{
	t_fail_at = -1;
	fs = tierfs_free(fs);
	options_release(&opt);
}

/* A new inode named @name in @dir, as make_node() in ops.c leaves it. */
static struct tfs_inode *t_node(struct tfs_inode *dir, const char *name,
				mode_t mode)
{
	struct tfs_inode *inode = inode_new(fs, mode, getuid(), getgid(), 0);

	ck_assert_ptr_nonnull(inode);
	pthread_rwlock_wrlock(&fs->ns_lock);
	if (S_ISDIR(mode)) {
		ck_assert_int_eq(dir_init(&inode->i_dir, dir), 0);
		inode->i_nlink = 2;
	} else {
		inode->i_nlink = 1;
		ck_assert_int_eq(inode_parent_add(inode, dir), 0);
	}
	ck_assert_int_eq(dir_add(&dir->i_dir, name, inode, inode_sub(inode)), 0);
	if (S_ISDIR(mode))
		inode_link_inc(fs, dir);
	inode_lookup_ref(fs, inode);
	pthread_rwlock_unlock(&fs->ns_lock);
	return inode;
}

static struct tfs_inode *t_file(struct tfs_inode *dir, const char *name)
{
	return t_node(dir, name, S_IFREG | 0644);
}

static struct tfs_inode *t_dir(struct tfs_inode *dir, const char *name)
{
	return t_node(dir, name, S_IFDIR | 0755);
}

static void t_write1(struct tfs_inode *f, uint64_t off)
{
	ck_assert_int_eq(data_write(fs, f, "x", 1, off), 1);
}

/*
 * The value of @name: a size probe, a read into a buffer of exactly that
 * size, and a read one byte short (ERANGE).  Returns a malloc'd,
 * NUL-terminated copy; *ret_len its length.
 */
static char *t_get(struct tfs_inode *inode, const char *name, size_t *ret_len)
{
	ssize_t n = attr_get(fs, inode, name, NULL, 0, NULL);
	char *buf;

	ck_assert_msg(n >= 0, "size probe of %s: %zd", name, n);
	ck_assert_int_le(n, TIERFS_XATTR_VALUE_MAX);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	if (n > 0)
		ck_assert_int_eq(attr_get(fs, inode, name, buf, (size_t)n - 1, NULL),
				 -ERANGE);
	ck_assert_int_eq(attr_get(fs, inode, name, buf, (size_t)n + 1, NULL), n);
	ck_assert_int_eq(attr_get(fs, inode, name, buf, (size_t)n, NULL), n);
	buf[n] = '\0';
	ck_assert_uint_eq(strlen(buf), (size_t)n);
	if (ret_len)
		*ret_len = (size_t)n;
	return buf;
}

/* ---- layout and extents ---- */

START_TEST(test_ctl_layout_long_tier_names)
{
	struct tfs_inode *d = t_dir(fs->root, "d");
	struct tfs_inode *f = t_file(d, "f");
	struct strbuf want = STRBUF_INIT;
	char name[TIER_CONF_NAME_MAX + 1];
	char *v;

	t_write1(f, 0);
	t_write1(f, EXT);
	for (unsigned i = 0; i < TIER_MAX_CONF; i++) {
		long_name(name, i);
		ck_assert_int_eq(strbuf_addf(&want, "%s%s=%s", i ? " " : "",
					     name, i ? "0" : "8192"),
				 0);
	}
	v = t_get(f, TIERFS_XATTR_LAYOUT, NULL);
	ck_assert_str_eq(v, want.buf);
	free(v);
	/* a directory sums what is below it, the root too */
	v = t_get(d, TIERFS_XATTR_LAYOUT, NULL);
	ck_assert_str_eq(v, want.buf);
	free(v);
	v = t_get(fs->root, TIERFS_XATTR_LAYOUT, NULL);
	ck_assert_str_eq(v, want.buf);
	free(v);

	long_name(name, 0);
	strbuf_reset(&want);
	ck_assert_int_eq(strbuf_addf(&want, "0 8192 %s\n", name), 0);
	v = t_get(f, TIERFS_XATTR_EXTENTS, NULL);
	ck_assert_str_eq(v, want.buf);
	free(v);
	strbuf_release(&want);
}
END_TEST

START_TEST(test_ctl_extents_19_digit_offsets)
{
	struct tfs_inode *f = t_file(fs->root, "big");
	const uint64_t last = (UINT64_C(1) << 63) - EXT; /* 9223372036854771712 */
	char name[64];
	char *v;

	t_write1(f, 0);
	t_write1(f, last - EXT);
	t_write1(f, last);
	v = t_get(f, TIERFS_XATTR_EXTENTS, NULL);
	ck_assert_str_eq(v, "0 " K4 " t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
			    "9223372036854767616 8192 t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
	free(v);
	/* the same as one page, and pages from inside and past the end */
	v = t_get(f, TIERFS_XATTR_EXTENTS_AT "0", NULL);
	ck_assert_str_eq(v, "0 " K4 " t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
			    "9223372036854767616 8192 t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
	free(v);
	v = t_get(f, TIERFS_XATTR_EXTENTS_AT "9223372036854775807", NULL);
	ck_assert_str_eq(v, "9223372036854771712 " K4
			    " t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
	free(v);
	v = t_get(f, TIERFS_XATTR_EXTENTS_AT "18446744073709551615", NULL);
	ck_assert_str_eq(v, "");
	free(v);
	v = t_get(f, TIERFS_XATTR_EXTENTS_AT "000000000000000000000001", NULL);
	ck_assert_str_eq(v, "0 " K4 " t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
			    "9223372036854767616 8192 t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
	free(v);
	/* malformed offsets */
	static const char *const bad[] = { "", "-1", "+1", "1x", " 1", "0x10",
					   "18446744073709551616" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(name, sizeof(name), "%s%s", TIERFS_XATTR_EXTENTS_AT,
			 bad[i]);
		ck_assert_int_eq(attr_get(fs, f, name, NULL, 0, NULL), -EINVAL);
		/* never stored, never removed */
		ck_assert_int_eq(attr_set(fs, f, name, "1", 1, 0, 0), -EPERM);
		ck_assert_int_eq(attr_remove(fs, f, name, 0), -EPERM);
	}
	/* a directory has no extent list */
	ck_assert_int_eq(attr_get(fs, fs->root, TIERFS_XATTR_EXTENTS_AT "0",
				   NULL, 0, NULL),
			 -ENODATA);
}
END_TEST

#define NRUNS 100001u

START_TEST(test_ctl_extents_paged_100k_runs)
{
	struct tfs_inode *f = t_file(fs->root, "sparse");
	uint64_t off = 0, nruns = 0, bytes = 0;
	unsigned pages = 0;

	/* one extent, one hole, NRUNS times: NRUNS runs */
	for (uint64_t i = 0; i < NRUNS; i++)
		t_write1(f, 2 * EXT * i);
	ck_assert_int_eq(attr_get(fs, f, TIERFS_XATTR_EXTENTS, NULL, 0, NULL),
			 -E2BIG);
	for (;;) {
		char name[64], *v, *line, *next_line;
		size_t len;
		bool more = false;

		snprintf(name, sizeof(name), "%s%llu", TIERFS_XATTR_EXTENTS_AT,
			 (unsigned long long)off);
		v = t_get(f, name, &len);
		pages++;
		ck_assert_uint_le(len, TIERFS_XATTR_VALUE_MAX);
		for (line = v; *line; line = next_line) {
			unsigned long long s, l;
			char tier[64];

			next_line = strchr(line, '\n');
			ck_assert_ptr_nonnull(next_line);
			*next_line++ = '\0';
			if (!strncmp(line, TIERFS_PAGE_NEXT " ", 5)) {
				unsigned long long n = strtoull(line + 5, NULL, 10);

				ck_assert_msg(*next_line == '\0',
					      "\"next\" is not the last line");
				ck_assert_uint_gt(n, off);
				/* nearly full: no room for one more line */
				ck_assert_uint_gt(len, TIERFS_XATTR_VALUE_MAX - 128);
				off = n;
				more = true;
				break;
			}
			ck_assert_int_eq(sscanf(line, "%llu %llu %63s", &s, &l,
						tier),
					 3);
			ck_assert_uint_eq(s, 2 * EXT * nruns);
			ck_assert_uint_eq(l, EXT);
			ck_assert_str_eq(tier, "t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
			nruns++;
			bytes += l;
		}
		free(v);
		if (!more)
			break;
		ck_assert_uint_lt(pages, 10000);
	}
	ck_assert_uint_eq(nruns, NRUNS);
	ck_assert_uint_eq(bytes, (uint64_t)NRUNS * EXT);
	ck_assert_uint_gt(pages, 1); /* and each but the last nearly full */
}
END_TEST

/* ---- effective ---- */

/* @n characters @c: a directory name */
static char *t_name(char c, size_t n)
{
	char *s = malloc(n + 1);

	ck_assert_ptr_nonnull(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

START_TEST(test_ctl_effective_4k_path)
{
	struct tfs_inode *d = fs->root, *f;
	struct strbuf path = STRBUF_INIT, want = STRBUF_INIT;
	char *v;

	/* 16 levels of 250 characters: a 4016-byte path */
	for (int i = 0; i < 16; i++) {
		char *n = t_name((char)('a' + i), 250);

		d = t_dir(d, n);
		ck_assert_int_eq(strbuf_addf(&path, "/%s", n), 0);
		free(n);
	}
	ck_assert_uint_eq(path.len, 4016);
	ck_assert_int_eq(attr_set(fs, d, TIERFS_XATTR_PIN,
				   "t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 32, 0, 0),
			 0);
	f = t_file(d, "f");
	ck_assert_int_eq(
		strbuf_addf(&want,
			    "tiers=t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx default\n"
			    "pin=t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx %s\n"
			    "split=- default\npromote=1 default\nio=native default\n",
			    path.buf),
		0);
	v = t_get(f, TIERFS_XATTR_EFFECTIVE, NULL);
	ck_assert_str_eq(v, want.buf);
	free(v);
	/* the pin on the file itself */
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_PIN,
				   "t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 32, 0, 0),
			 0);
	v = t_get(f, TIERFS_XATTR_EFFECTIVE, NULL);
	ck_assert_ptr_nonnull(
		strstr(v, "\npin=t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx (this file)\n"));
	free(v);
	strbuf_release(&path);
	strbuf_release(&want);
}
END_TEST

START_TEST(test_ctl_effective_too_long_path_shortened)
{
	struct tfs_inode *d = fs->root, *f;
	struct strbuf path = STRBUF_INIT;
	static const char *const keys[] = { TIERFS_XATTR_TIERS,
					    TIERFS_XATTR_PIN,
					    TIERFS_XATTR_SPLIT,
					    TIERFS_XATTR_PROMOTE,
					    TIERFS_XATTR_IO };
	static const char *const vals[] = {
		"t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx:1G,t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		"0",
		"tiered"
	};
	char *v, *line, *nl;
	size_t len;
	int lines = 0;

	/* 300 levels of 250 control characters: each escapes to 4 bytes,
	 * a 300 KB FROM path for each key without shortening */
	for (int i = 0; i < 300; i++) {
		char *n = t_name((char)(1 + i % 31), 250);

		d = t_dir(d, n);
		ck_assert_int_eq(strbuf_addf(&path, "/%s", n), 0);
		free(n);
		if (i % 60 == 59)
			ck_assert_int_eq(attr_set(fs, d, keys[i / 60],
						   vals[i / 60],
						   strlen(vals[i / 60]), 0, 0),
					 0);
	}
	f = t_file(d, "f");
	v = t_get(f, TIERFS_XATTR_EFFECTIVE, &len);
	ck_assert_uint_le(len, TIERFS_XATTR_VALUE_MAX);
	for (line = v; *line; line = nl + 1) {
		char *from;

		nl = strchr(line, '\n');
		ck_assert_ptr_nonnull(nl);
		*nl = '\0';
		from = strchr(line, ' ');
		ck_assert_ptr_nonnull(from);
		from++;
		/* ".../" and then the last components, escaped */
		ck_assert_msg(!strncmp(from, ".../\\", 5), "FROM '%.40s'", from);
		ck_assert_uint_le(strlen(from), TIERFS_EFFECTIVE_FROM_MAX + 3);
		ck_assert_uint_gt(strlen(from), TIERFS_EFFECTIVE_FROM_MAX - 1100);
		for (char *p = from; *p; p++)
			ck_assert_msg((unsigned char)*p >= 0x20, "raw control byte");
		lines++;
	}
	ck_assert_int_eq(lines, 5);
	free(v);
	strbuf_release(&path);
}
END_TEST

START_TEST(test_ctl_effective_escapes_newline)
{
	struct tfs_inode *d = t_dir(fs->root, "a\nb\\c\x7f");
	struct tfs_inode *sub = t_dir(d, "pin=t0 /evil");
	struct tfs_inode *f = t_file(sub, "f");
	char *v;

	ck_assert_int_eq(attr_set(fs, d, TIERFS_XATTR_PIN,
				   "t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 32, 0, 0),
			 0);
	ck_assert_int_eq(attr_set(fs, sub, TIERFS_XATTR_PROMOTE, "0", 1, 0, 0),
			 0);
	v = t_get(f, TIERFS_XATTR_EFFECTIVE, NULL);
	ck_assert_str_eq(
		v,
		"tiers=t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx default\n"
		"pin=t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx /a\\012b\\\\c\\177\n"
		"split=- default\n"
		"promote=0 /a\\012b\\\\c\\177/pin=t0 /evil\n"
		"io=native default\n");
	free(v);
}
END_TEST

START_TEST(test_ctl_verify_and_stats)
{
	struct tfs_inode *f = t_file(fs->root, "f");
	char *v;

	t_write1(f, 0);
	v = t_get(f, TIERFS_XATTR_VERIFY, NULL);
	ck_assert_str_eq(v, "extents=1 checked=0 errors=0");
	free(v);
	v = t_get(fs->root, TIERFS_XATTR_STATS, NULL);
	ck_assert_ptr_nonnull(strstr(v, "tier t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx kind=ram"));
	ck_assert_ptr_nonnull(strstr(v, "\nmount extent_size=4096 "));
	free(v);
	ck_assert_int_eq(attr_get(fs, f, TIERFS_XATTR_STATS, NULL, 0, NULL), -ENODATA);
	ck_assert_int_eq(attr_get(fs, fs->root, TIERFS_XATTR_VERIFY, NULL, 0, NULL),
			 -ENODATA);
	ck_assert_int_eq(attr_set(fs, f, TIERFS_XATTR_LAYOUT, "x", 1, 0, 0),
			 -EPERM);
	/* computed names are never listed */
	ck_assert_int_eq(attr_list(fs, f, NULL, 0), 0);
}
END_TEST

/* ---- xattr_set: all or nothing under allocation failure ---- */

static int t_pin_of(struct tfs_inode *inode)
{
	struct policy p;

	policy_get(fs, inode, &p);
	return p.pin;
}

/*
 * Set @name = @val on @inode with allocation @n failing; true when no
 * allocation failed (the loop is done).  Either it succeeds and all is
 * in place, or it fails and @inode still holds @old (NULL: nothing).
 */
static bool t_set_failing(struct tfs_inode *inode, long n, const char *name,
			  const char *val, const char *old, int old_pin,
			  int new_pin)
{
	char buf[64];
	ssize_t got;
	int r;

	t_fault_arm(n);
	r = attr_set(fs, inode, name, val, strlen(val), 0, 0);
	t_fail_at = -1;
	got = attr_get(fs, inode, name, buf, sizeof(buf), NULL);
	if (r == 0) {
		ck_assert_int_eq(got, (ssize_t)strlen(val));
		ck_assert(!memcmp(buf, val, strlen(val)));
		ck_assert_int_eq(t_pin_of(inode), new_pin);
	} else {
		/* policy_parse() says EINVAL when its copy of the value
		 * cannot be allocated (fs/policy.c) */
		ck_assert_msg(r == -ENOMEM || r == -EINVAL, "r = %d", r);
		if (old) {
			ck_assert_int_eq(got, (ssize_t)strlen(old));
			ck_assert(!memcmp(buf, old, strlen(old)));
		} else {
			ck_assert_int_eq(got, -ENODATA);
		}
		ck_assert_int_eq(t_pin_of(inode), old_pin);
	}
	return t_nalloc <= n;
}

START_TEST(test_ctl_xattr_set_enomem_changes_nothing)
{
	static const char t0[] = "t0xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
	static const char t1[] = "t1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
	long n;

	/* a new policy attribute on an inode without one */
	for (n = 0;; n++) {
		struct tfs_inode *d;
		char dn[32];

		snprintf(dn, sizeof(dn), "new%ld", n);
		d = t_dir(fs->root, dn);
		if (t_set_failing(d, n, TIERFS_XATTR_PIN, t1, NULL, -1, 1))
			break;
		ck_assert_int_lt(n, 100);
	}
	ck_assert_int_gt(n, 0); /* some allocation was failed */
	/* replacing a policy value */
	for (n = 0;; n++) {
		struct tfs_inode *d;
		char dn[32];

		snprintf(dn, sizeof(dn), "old%ld", n);
		d = t_dir(fs->root, dn);
		ck_assert_int_eq(attr_set(fs, d, TIERFS_XATTR_PIN, t0,
					   strlen(t0), 0, 0),
				 0);
		if (t_set_failing(d, n, TIERFS_XATTR_PIN, t1, t0, 0, 1))
			break;
		ck_assert_int_lt(n, 100);
	}
	/* a plain user attribute, next to a policy one */
	for (n = 0;; n++) {
		struct tfs_inode *d;
		char dn[32];

		snprintf(dn, sizeof(dn), "user%ld", n);
		d = t_dir(fs->root, dn);
		ck_assert_int_eq(attr_set(fs, d, TIERFS_XATTR_PIN, t0,
					   strlen(t0), 0, 0),
				 0);
		if (t_set_failing(d, n, "user.x", "value", NULL, 0, 0))
			break;
		ck_assert_int_lt(n, 100);
	}
}
END_TEST

/*
 * The directories of a file's names (inode.h): one name is kept in the
 * inode, more in an array.  Links added and removed in every order across
 * that boundary keep the list exact and in order (the latest name last,
 * which is the one whose policy governs: user.tierfs.effective reads the
 * list), and the array is freed when one name is left (ASan: no leak).
 */
static void t_expect_parents(struct tfs_inode *f, struct tfs_inode **want,
			     uint32_t n)
{
	ck_assert_uint_eq(f->i_nparents, n);
	for (uint32_t k = 0; k < n; k++)
		ck_assert_ptr_eq(inode_parent_at(f, k), want[k]);
	ck_assert_ptr_eq(inode_parent(f), n ? want[n - 1] : NULL);
}

START_TEST(test_ctl_parents_inline_and_array)
{
	struct tfs_inode *d[10], *f;
	char name[8];

	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		d[i] = t_dir(fs->root, name);
	}
	f = t_file(d[0], "f");
	pthread_rwlock_wrlock(&fs->ns_lock);
	t_expect_parents(f, (struct tfs_inode *[]){ d[0] }, 1);
	for (int i = 1; i < 5; i++)
		ck_assert_int_eq(inode_parent_add(f, d[i]), 0);
	t_expect_parents(f, (struct tfs_inode *[]){ d[0], d[1], d[2], d[3], d[4] }, 5);
	inode_parent_move(f, d[2], d[5]);
	t_expect_parents(f, (struct tfs_inode *[]){ d[0], d[1], d[3], d[4], d[5] }, 5);
	inode_parent_del(f, d[9]); /* not there: nothing changes */
	t_expect_parents(f, (struct tfs_inode *[]){ d[0], d[1], d[3], d[4], d[5] }, 5);
	inode_parent_del(f, d[0]);
	inode_parent_del(f, d[4]);
	t_expect_parents(f, (struct tfs_inode *[]){ d[1], d[3], d[5] }, 3);
	/* fills the array of 4 exactly, then grows it */
	ck_assert_int_eq(inode_parent_add(f, d[6]), 0);
	ck_assert_int_eq(inode_parent_add(f, d[7]), 0);
	t_expect_parents(f, (struct tfs_inode *[]){ d[1], d[3], d[5], d[6], d[7] }, 5);
	for (int i = 3; i <= 6; i++)
		inode_parent_del(f, d[i]);
	t_expect_parents(f, (struct tfs_inode *[]){ d[1], d[7] }, 2);
	inode_parent_del(f, d[7]); /* two to one: back in the inode */
	t_expect_parents(f, (struct tfs_inode *[]){ d[1] }, 1);
	inode_parent_move(f, d[1], d[8]);
	t_expect_parents(f, (struct tfs_inode *[]){ d[8] }, 1);
	/* two names in one directory: the latest of them goes first */
	ck_assert_int_eq(inode_parent_add(f, d[2]), 0);
	ck_assert_int_eq(inode_parent_add(f, d[8]), 0);
	inode_parent_move(f, d[8], d[3]);
	t_expect_parents(f, (struct tfs_inode *[]){ d[8], d[2], d[3] }, 3);
	inode_parent_del(f, d[8]);
	inode_parent_del(f, d[3]);
	inode_parent_del(f, d[2]);
	t_expect_parents(f, NULL, 0);
	/* back to the name it really has, for the teardown */
	ck_assert_int_eq(inode_parent_add(f, d[0]), 0);
	ck_assert_int_eq(inode_parent_add(f, d[1]), 0);
	ck_assert_int_eq(inode_parent_add(f, d[2]), 0);
	pthread_rwlock_unlock(&fs->ns_lock);
}
END_TEST

/*
 * issue 32: the fair-share gate (gate.h).  At most four long requests
 * of one principal; past that EAGAIN at once, nothing waits; other
 * users go on; root is bounded like anyone; internal callers pass; a
 * queue's long requests take at most half of it, shared out equally
 * among the principals there; a subordinate uid counts as its owner.
 */
START_TEST(test_ctl_gate_shares)
{
	struct gate_ticket a[4], x, b, r[4], in, q[40];
	unsigned running, owners, got = 0;
	char path[] = "/tmp/gate-subuid-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "1001:300000:65536\n", 18), 18);
	close(fd);
	ck_assert_int_eq(owner_load(path), 0);

	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(gate_enter(1001, KERNEL_QUEUE_DEV, &a[i]), 0);
	/* a fifth of the same user: refused at once, on any queue */
	ck_assert_int_eq(gate_enter(1001, KERNEL_QUEUE_DEV, &x), -EAGAIN);
	ck_assert_int_eq(gate_enter(1001, 0, &x), -EAGAIN);
	/* ... and from a uid of the user's container */
	ck_assert_int_eq(gate_enter(owner_of_uid(300123), KERNEL_QUEUE_DEV, &x),
			 -EAGAIN);
	/* another user goes on; root has four too; internal calls pass */
	ck_assert_int_eq(gate_enter(1002, KERNEL_QUEUE_DEV, &b), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(gate_enter(0, KERNEL_QUEUE_DEV, &r[i]), 0);
	ck_assert_int_eq(gate_enter(0, KERNEL_QUEUE_DEV, &x), -EAGAIN);
	ck_assert_int_eq(gate_enter(OWNER_NONE, KERNEL_QUEUE_DEV, &in), 0);
	gate_counts(&running, &owners);
	ck_assert_uint_eq(running, 9);
	ck_assert_uint_eq(owners, 3);
	/* one done: the user may start one again */
	gate_leave(&a[3]);
	ck_assert_int_eq(gate_enter(1001, KERNEL_QUEUE_DEV, &a[3]), 0);
	for (int i = 0; i < 4; i++) {
		gate_leave(&a[i]);
		gate_leave(&r[i]);
	}
	gate_leave(&b);
	gate_leave(&in);
	gate_counts(&running, &owners);
	ck_assert_uint_eq(running, 0);
	ck_assert_uint_eq(owners, 0);

	/* one ring queue (32 entries): 40 users with loops each get a
	 * part of its half, 16 run, the rest are refused at once */
	for (unsigned u = 0; u < 40; u++)
		if (gate_enter(2000 + u, 0, &q[u]) == 0)
			got++;
		else
			q[u].owner = OWNER_NONE;
	ck_assert_uint_eq(got, kernel_uring_queue_max() / 2);
	/* the other queue is not taken by them */
	ck_assert_int_eq(gate_enter(1002, 1, &b), 0);
	gate_leave(&b);
	/* with the half taken by 16 users, each of them may not start a
	 * second one there */
	ck_assert_int_eq(gate_enter(2000, 0, &x), -EAGAIN);
	for (unsigned u = 0; u < 40; u++)
		gate_leave(&q[u]);
	/* two users on one queue: each gets at most its part of the half */
	got = 0;
	for (unsigned i = 0; i < 4; i++)
		got += gate_enter(3000, 0, &q[i]) == 0;
	ck_assert_uint_eq(got, 4); /* alone: its four */
	for (unsigned i = 0; i < 4; i++)
		gate_leave(&q[i]);
	unlink(path);
	ck_assert_int_eq(owner_load(path), 0);
}
END_TEST

/*
 * A drain without a migrator moves every file now, walking the inode
 * table a batch at a time (ctl_action.c drain_all(), DRAIN_BATCH 256):
 * files and directories mixed, over several batches, each file's byte
 * read back from the other tier, nothing left on the drained one, and
 * the pins of the walk all given back (a file unlinked after the drain
 * is freed, its unit returned).
 */
START_TEST(test_ctl_drain_without_migrator_in_batches)
{
	enum { NFILES = 700 };
	static struct tfs_inode *f[NFILES];
	char name[32], t0[TIER_CONF_NAME_MAX + 1];
	uint64_t inodes;

	for (unsigned i = 0; i < NFILES; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		f[i] = t_file(fs->root, name);
		ck_assert_int_eq(data_write(fs, f[i], &(char){ (char)i }, 1,
					    i), 1);
		if (i % 50 == 0) {
			snprintf(name, sizeof(name), "d%u", i);
			(void)t_dir(fs->root, name);
		}
	}
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), NFILES);
	long_name(t0, 0);
	ck_assert_int_eq(attr_set(fs, fs->root, TIERFS_XATTR_CTL_DRAIN, t0,
				  strlen(t0), 0, 0), 0);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 0);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[1]), NFILES);
	for (unsigned i = 0; i < NFILES; i++) {
		char c = 0;

		ck_assert_int_eq(data_read(fs, f[i], &c, 1, i), 1);
		ck_assert_int_eq(c, (char)i);
		ck_assert_uint_eq(f[i]->i_nref, 0);
	}
	ck_assert_uint_eq(fs->root->i_nref, 0);
	/* no pin left behind: an unlinked, forgotten file goes at once */
	inodes = __atomic_load_n(&fs->ninodes, __ATOMIC_RELAXED);
	pthread_rwlock_wrlock(&fs->ns_lock);
	ck_assert_ptr_eq(dir_remove(&fs->root->i_dir, "f0", NULL), f[0]);
	inode_parent_del(f[0], fs->root);
	inode_link_drop(fs, f[0], 1);
	pthread_rwlock_unlock(&fs->ns_lock);
	inode_forget(fs, f[0], 1);
	ck_assert_uint_eq(__atomic_load_n(&fs->ninodes, __ATOMIC_RELAXED),
			  inodes - 1);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[1]), NFILES - 1);
}
END_TEST

static Suite *ctl_suite(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc;

	tc = tcase_create("limits");
	tcase_add_checked_fixture(tc, setup_eight, teardown);
	tcase_add_test(tc, test_ctl_layout_long_tier_names);
	tcase_add_test(tc, test_ctl_extents_19_digit_offsets);
	suite_add_tcase(s, tc);

	tc = tcase_create("paging");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup_two, teardown);
	tcase_add_test(tc, test_ctl_extents_paged_100k_runs);
	suite_add_tcase(s, tc);

	tc = tcase_create("effective");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup_two, teardown);
	tcase_add_test(tc, test_ctl_effective_4k_path);
	tcase_add_test(tc, test_ctl_effective_too_long_path_shortened);
	tcase_add_test(tc, test_ctl_effective_escapes_newline);
	tcase_add_test(tc, test_ctl_verify_and_stats);
	tcase_add_test(tc, test_ctl_parents_inline_and_array);
	suite_add_tcase(s, tc);

	tc = tcase_create("set");
	tcase_add_checked_fixture(tc, setup_two, teardown);
	tcase_add_test(tc, test_ctl_xattr_set_enomem_changes_nothing);
	tcase_add_test(tc, test_ctl_gate_shares);
	tcase_add_test(tc, test_ctl_drain_without_migrator_in_batches);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(ctl_suite());
}
