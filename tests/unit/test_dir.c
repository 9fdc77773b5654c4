// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_dir.c -- Check suite for fs/dir.c: lookups and readdir order
 * across the growth of the hash table (doubled incrementally: two tables
 * while the old one's buckets move) and of the chunked order array,
 * with removals and compaction in between (issue 12), and dir_add()
 * failing each of its allocations in turn (the linker wraps malloc and
 * friends; see meson.build): it changes nothing then.
 *
 * The directory is checked against a model: every name ever added, its
 * cookie, and whether it is still there.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dir.h"
#include "inode.h"
#include "tap.h"

/* ---- allocation faults: the Nth allocation fails ---- */

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);

static long t_fail_at = -1; /* allocation to fail, counting from 0 */
static long t_nalloc;	    /* allocations since t_fault_arm() */

static bool t_fault(void)
{
	if (t_fail_at < 0)
		return false;
	return t_nalloc++ == t_fail_at;
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

static void t_fault_arm(long n)
{
	t_fail_at = n;
	t_nalloc = 0;
}

/*
 * Check writes down where every passing ck_assert*() was (for a crash
 * report): a system call each, minutes for the millions made here.  The
 * hot loops check with this instead, which costs nothing when it holds.
 */
#define T_REQUIRE(cond)                                               \
	do {                                                          \
		if (!(cond))                                          \
			ck_abort_msg("%s:%d: failed: %s", __FILE__,   \
				     __LINE__, #cond);                \
	} while (0)

/* ---- the model ---- */

struct t_name {
	char name[32];
	struct tfs_inode *inode;
	uint64_t cookie;
	bool live;
};

struct t_dir {
	struct tfs_dir d;
	struct tfs_inode owner;	 /* the directory's own inode */
	struct t_name *names;	 /* in the order added: cookie order */
	uint32_t n, cap, nlive;
};

static void t_setup(struct t_dir *t, uint32_t cap)
{
	memset(t, 0, sizeof(*t));
	t->owner.i_type = S_IFDIR;
	T_REQUIRE(dir_init(&t->d, &t->owner) == 0);
	t->names = calloc(cap, sizeof(*t->names));
	T_REQUIRE(t->names);
	t->cap = cap;
}

static void t_teardown(struct t_dir *t)
{
	dir_release(&t->d);
	for (uint32_t i = 0; i < t->n; i++)
		free(t->names[i].inode);
	free(t->names);
}

/* Names of different lengths, so that chains hold mixed lengths. */
static void t_name_of(char *buf, size_t len, uint32_t i)
{
	snprintf(buf, len, "%s%" PRIu32, i % 3 ? "f" : "longer-name-", i);
}

/* Add name number t->n; @isdir makes its inode a directory. */
static void t_add(struct t_dir *t, bool isdir)
{
	struct t_name *tn = &t->names[t->n];
	struct dentry *de;

	T_REQUIRE(t->n < t->cap);
	t_name_of(tn->name, sizeof(tn->name), t->n);
	tn->inode = calloc(1, sizeof(*tn->inode));
	T_REQUIRE(tn->inode);
	tn->inode->i_type = isdir ? S_IFDIR : S_IFREG;
	T_REQUIRE(!(dir_find(&t->d, tn->name)));
	T_REQUIRE(dir_add(&t->d, tn->name, tn->inode, inode_sub(tn->inode)) == 0);
	de = dir_find(&t->d, tn->name);
	T_REQUIRE(de);
	T_REQUIRE(de->d_inode == tn->inode);
	if (isdir)
		T_REQUIRE(tn->inode->i_dir.d_self == de);
	tn->cookie = de->d_cookie;
	if (t->n)
		T_REQUIRE(tn->cookie > t->names[t->n - 1].cookie);
	tn->live = true;
	t->n++;
	t->nlive++;
	/* the table keeps up: never more entries than buckets */
	T_REQUIRE(t->d.d_nlive <= t->d.d_hsize);
	T_REQUIRE(t->d.d_nlive == t->nlive);
}

static void t_del(struct t_dir *t, uint32_t i)
{
	struct t_name *tn = &t->names[i];

	T_REQUIRE(tn->live);
	T_REQUIRE(dir_remove(&t->d, tn->name, inode_sub(tn->inode)) ==
		  tn->inode);
	T_REQUIRE(!(dir_find(&t->d, tn->name)));
	T_REQUIRE(!(dir_remove(&t->d, tn->name, NULL)));
	if (tn->inode->i_type == S_IFDIR)
		T_REQUIRE(!(tn->inode->i_dir.d_self));
	tn->live = false;
	t->nlive--;
	T_REQUIRE(t->d.d_nlive == t->nlive);
}

/* Every name: found if live (with its inode and cookie), else not;
 * names never added are not found either. */
static void t_check_lookups(const struct t_dir *t)
{
	char miss[40];

	for (uint32_t i = 0; i < t->n; i++) {
		const struct t_name *tn = &t->names[i];
		struct dentry *de = dir_find(&t->d, tn->name);

		if (!tn->live) {
			T_REQUIRE(!de);
			continue;
		}
		T_REQUIRE(de);
		T_REQUIRE(de->d_inode == tn->inode);
		T_REQUIRE(de->d_cookie == tn->cookie);
		T_REQUIRE(!strcmp(de->d_name, tn->name));
	}
	for (uint32_t i = 0; i < 64; i++) {
		snprintf(miss, sizeof(miss), "missing%" PRIu32, i);
		T_REQUIRE(!(dir_find(&t->d, miss)));
	}
}

/* A whole listing: the live names, each once, in cookie order. */
static void t_check_readdir(const struct t_dir *t)
{
	uint64_t cookie = 0;
	uint32_t k = 0;
	struct dentry *de;

	while ((de = dir_next(&t->d, cookie))) {
		while (k < t->n && !t->names[k].live)
			k++;
		T_REQUIRE(k < t->n);
		T_REQUIRE(de->d_cookie == t->names[k].cookie);
		T_REQUIRE(de->d_inode == t->names[k].inode);
		cookie = de->d_cookie;
		k++;
	}
	while (k < t->n && !t->names[k].live)
		k++;
	T_REQUIRE(k == t->n);
	/* resuming from any cookie starts at the next live one */
	for (uint32_t i = 0; i < t->n; i += 1 + t->n / 97) {
		uint32_t j = i + 1;

		while (j < t->n && !t->names[j].live)
			j++;
		de = dir_next(&t->d, t->names[i].cookie);
		if (j == t->n)
			T_REQUIRE(!de);
		else
			T_REQUIRE(de->d_cookie == t->names[j].cookie);
	}
}

static void t_check(const struct t_dir *t)
{
	t_check_lookups(t);
	t_check_readdir(t);
}

static bool is_pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

/* Growth alone: full checks on both sides of every doubling of the
 * table and of chunk 0, at chunk boundaries, and while a grown table's
 * old half is still being emptied. */
START_TEST(test_dir_grow)
{
	const uint32_t n = 5 * DIR_CHUNK + 100;
	struct t_dir t;
	uint32_t grows = 0;

	t_setup(&t, n);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t hsize = t.d.d_hsize;

		t_add(&t, i % 50 == 0);
		if (t.d.d_hsize != hsize)
			grows++;
		if (is_pow2(i) || is_pow2(i + 1) || is_pow2(i + 2) ||
		    i % DIR_CHUNK <= 1 || i % DIR_CHUNK == DIR_CHUNK - 1 ||
		    (t.d.d_htab->h_old && i % 257 == 0))
			t_check(&t);
	}
	t_check(&t);
	/* 16 buckets to the first power of two >= n */
	T_REQUIRE(grows >= 10);
	T_REQUIRE(t.d.d_hsize >= n);
	T_REQUIRE(t.d.d_cap >= n);
	t_teardown(&t);
}
END_TEST

/* Removals while the table grows (some of them in the old half, some
 * moved), then so many that the order array is compacted and drops
 * chunks, then growth again: lookups and listings stay right. */
START_TEST(test_dir_grow_remove)
{
	const uint32_t n = 12 * DIR_CHUNK;
	struct t_dir t;
	uint32_t cap_before;

	t_setup(&t, n);
	for (uint32_t i = 0; i < 6 * DIR_CHUNK; i++) {
		t_add(&t, false);
		/* remove every third name, a little behind */
		if (i >= 10 && i % 3 == 0)
			t_del(&t, i - 10);
		if (t.d.d_htab->h_old && i % 101 == 0)
			t_check(&t);
	}
	t_check(&t);
	/* remove all but every 16th: compaction on the way */
	cap_before = t.d.d_cap;
	for (uint32_t i = 0; i < t.n; i++) {
		if (t.names[i].live && i % 16)
			t_del(&t, i);
		if (i % 997 == 0)
			t_check(&t);
	}
	t_check(&t);
	T_REQUIRE(t.d.d_ndead < t.d.d_nlive + 64);
	T_REQUIRE(t.d.d_cap < cap_before);
	/* and grow again past where it was */
	while (t.n < n) {
		t_add(&t, false);
		if (t.n % 509 == 0)
			t_check(&t);
	}
	t_check(&t);
	t_teardown(&t);
}
END_TEST

/* A listing under way sees every entry that lived throughout exactly
 * once, whatever is added (growing both structures) and removed
 * (compacting) between its calls. */
START_TEST(test_dir_listing_under_way)
{
	const uint32_t n0 = 3000, n = 40000;
	struct t_dir t;
	uint64_t cookie = 0;
	uint32_t seen = 0, round = 0;
	bool *was_seen;
	struct dentry *de;

	t_setup(&t, n);
	was_seen = calloc(n, sizeof(*was_seen));
	T_REQUIRE(was_seen);
	for (uint32_t i = 0; i < n0; i++)
		t_add(&t, false);
	while ((de = dir_next(&t.d, cookie))) {
		/* the entry's index: cookies are consecutive from the first */
		uint32_t k = (uint32_t)(de->d_cookie - t.names[0].cookie);

		T_REQUIRE(k < t.n);
		T_REQUIRE(t.names[k].cookie == de->d_cookie);
		T_REQUIRE(!was_seen[k]);
		T_REQUIRE(t.names[k].live);
		was_seen[k] = true;
		seen++;
		cookie = de->d_cookie;
		/* between two entries: add some, remove some on both sides
		 * of the cursor, but never the first n0 / 2 */
		for (uint32_t a = 0; a < 7 && t.n < n; a++)
			t_add(&t, false);
		for (uint32_t r = 0; r < 5; r++) {
			uint32_t v = n0 / 2 + (round * 7919 + r * 104729) %
						 (t.n - n0 / 2);

			if (t.names[v].live)
				t_del(&t, v);
		}
		round++;
	}
	/* the first n0 / 2 lived throughout: each seen once */
	for (uint32_t i = 0; i < n0 / 2; i++)
		T_REQUIRE(was_seen[i]);
	T_REQUIRE(seen >= n0 / 2);
	t_check(&t);
	free(was_seen);
	t_teardown(&t);
}
END_TEST

/* dir_add() failing each allocation in turn, at the edges where it
 * allocates most (chunk 0 doubling, the first chunks, a doubling of the
 * table): -ENOMEM, and the directory as it was. */
START_TEST(test_dir_add_enomem)
{
	const uint32_t n = DIR_CHUNK + DIR_CHUNK / 2;
	struct t_dir t;
	uint32_t faults = 0;

	t_setup(&t, n + 1);
	while (t.n < n) {
		struct t_name *tn = &t.names[t.n];
		bool edge = t.d.d_norder == t.d.d_cap ||
			    t.d.d_nlive + 1 > t.d.d_hsize || t.n < 3;
		int r;

		if (!edge) {
			t_add(&t, false);
			continue;
		}
		t_name_of(tn->name, sizeof(tn->name), t.n);
		tn->inode = calloc(1, sizeof(*tn->inode));
		T_REQUIRE(tn->inode);
		tn->inode->i_type = S_IFREG;
		for (long k = 0;; k++) {
			t_fault_arm(k);
			r = dir_add(&t.d, tn->name, tn->inode, inode_sub(tn->inode));
			t_fault_arm(-1);
			if (r == 0)
				break;
			T_REQUIRE(r == -ENOMEM);
			T_REQUIRE(!(dir_find(&t.d, tn->name)));
			T_REQUIRE(t.d.d_nlive == t.nlive);
			T_REQUIRE(t.d.d_norder == t.n);
			faults++;
		}
		tn->cookie = dir_find(&t.d, tn->name)->d_cookie;
		tn->live = true;
		t.n++;
		t.nlive++;
		t_check(&t);
	}
	T_REQUIRE(faults > 0);
	t_teardown(&t);
}
END_TEST

/* A removed directory's release frees the dead entries it still has,
 * also mid-growth (ASan and LeakSanitizer check the frees). */
START_TEST(test_dir_release_mid_growth)
{
	struct t_dir t;

	t_setup(&t, 4 * DIR_CHUNK);
	while (!(t.d.d_htab->h_old && t.n > 2 * DIR_CHUNK))
		t_add(&t, false);
	for (uint32_t i = 0; i < 64; i += 2)
		t_del(&t, i);
	T_REQUIRE(t.d.d_htab->h_old);
	t_check(&t);
	t_teardown(&t);
}
END_TEST

static Suite *dir_suite(void)
{
	Suite *s = suite_create("dir");
	TCase *tc = tcase_create("dir");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_dir_grow);
	tcase_add_test(tc, test_dir_grow_remove);
	tcase_add_test(tc, test_dir_listing_under_way);
	tcase_add_test(tc, test_dir_add_enomem);
	tcase_add_test(tc, test_dir_release_mid_growth);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(dir_suite());
}
