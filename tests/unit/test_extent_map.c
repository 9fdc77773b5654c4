// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_extent_map.c -- Check suite for fs/extent_map.h, the radix tree
 * from extent index to tier location.
 *
 * Besides the API contract, every test that changes a map checks the
 * tree's shape through extent_map_i.h: node and leaf counts match their
 * contents, no empty node or leaf is kept, the height is the smallest
 * that holds the largest index, and nr_extents matches the leaves.
 * Under -Db_sanitize=address a node that is not freed is a failure, so
 * "remove everything" tests double as leak tests.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extent_map.h"
#include "extent_map_i.h"
#include "macro.h"
#include "tap.h"
#include "banned.h"

#define MAXI EXTENT_MAP_MAX_INDEX

/*
 * A passing ck_assert_*() still records its file and line with a write(2)
 * (for crash reports in fork mode), which dominates loops of thousands of
 * checks.  Helpers and the random loops use these instead: silent until
 * they fail, then the same report through ck_abort_msg().
 */
#define T_ASSERT(cond)                                                \
	do {                                                          \
		if (!(cond))                                          \
			ck_abort_msg("Assertion '%s' failed", #cond); \
	} while (0)
#define T_ASSERT_MSG(cond, ...)                    \
	do {                                       \
		if (!(cond))                       \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)
#define T_ASSERT_EQ(a, b)                                                      \
	do {                                                                   \
		uintmax_t t_a_ = (a), t_b_ = (b);                              \
		if (t_a_ != t_b_)                                              \
			ck_abort_msg(                                          \
				"Assertion '%s == %s' failed: %ju != %ju", #a, \
				#b, t_a_, t_b_);                               \
	} while (0)

/* A map per test, set up and torn down by a checked fixture. */
static struct extent_map map;

static void setup(void)
{
	extent_map_init(&map);
}

static void teardown(void)
{
	extent_map_release(&map, NULL, NULL);
}

/* The header promises 16-byte entries; t_ext_eq() compares bytes, which
 * is exact only while struct extent has no padding. */
_Static_assert(sizeof(struct extent) == 16, "struct extent is not 16 bytes");

/* The entry the tests store at @idx: every byte derived from @idx, so a
 * field the map fails to copy shows whatever it is called. */
static struct extent t_ext(uint64_t idx)
{
	struct extent e;
	unsigned char *b = (unsigned char *)&e;
	uint64_t h = (idx + 1) * UINT64_C(0x9e3779b97f4a7c15);

	for (size_t i = 0; i < sizeof(e); i++)
		b[i] = (unsigned char)((h >> (8 * (i % 8))) ^
				       (idx >> (i * 4 % 60)));
	e.tier = (uint8_t)(idx % 7); /* never EXTENT_TIER_NONE */
	return e;
}

static bool t_ext_eq(const struct extent *a, const struct extent *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static void t_insert(struct extent_map *m, uint64_t idx)
{
	struct extent e = t_ext(idx);
	int r = extent_map_insert(m, idx, &e);

	T_ASSERT_MSG(r == 0, "insert(%llu) = %d", (unsigned long long)idx, r);
}

static void t_remove(struct extent_map *m, uint64_t idx)
{
	struct extent old;
	struct extent want = t_ext(idx);
	int r = extent_map_remove(m, idx, &old);

	T_ASSERT_MSG(r == 0, "remove(%llu) = %d", (unsigned long long)idx, r);
	T_ASSERT_MSG(t_ext_eq(&old, &want), "remove(%llu) returned wrong entry",
		     (unsigned long long)idx);
}

static void t_assert_present(const struct extent_map *m, uint64_t idx)
{
	const struct extent *e = extent_map_lookup(m, idx);
	struct extent want = t_ext(idx);

	T_ASSERT_MSG(e != NULL, "lookup(%llu): hole, want entry",
		     (unsigned long long)idx);
	T_ASSERT_MSG(t_ext_eq(e, &want), "lookup(%llu): wrong entry",
		     (unsigned long long)idx);
}

static void t_assert_hole(const struct extent_map *m, uint64_t idx)
{
	T_ASSERT_MSG(extent_map_lookup(m, idx) == NULL,
		     "lookup(%llu): entry, want hole", (unsigned long long)idx);
}

/* Smallest height whose range holds @idx (at least 1). */
static unsigned t_min_height(uint64_t idx)
{
	unsigned h = 1;

	while (h < EMAP_MAX_HEIGHT && (idx >> (h * EMAP_BITS)) != 0)
		h++;
	return h;
}

/* Walk a subtree, checking counts; returns the entries below it and the
 * largest present index through @ret_max. */
static uint64_t t_walk(const void *p, unsigned height, uint64_t base,
		       uint64_t *ret_max)
{
	uint64_t n = 0;
	unsigned cnt = 0;

	T_ASSERT(p != NULL);
	if (height == 1) {
		const struct emap_leaf *l = p;

		for (unsigned i = 0; i < EMAP_FANOUT; i++) {
			if (l->ext[i].tier == EXTENT_TIER_NONE)
				continue;
			cnt++;
			*ret_max = base + i;
		}
		T_ASSERT_EQ(cnt, l->count);
		T_ASSERT_MSG(cnt > 0, "empty leaf at %llu kept",
			     (unsigned long long)base);
		return cnt;
	}
	const struct emap_node *nd = p;
	unsigned shift = (height - 1) * EMAP_BITS;

	for (unsigned i = 0; i < EMAP_FANOUT; i++) {
		if (!nd->child[i])
			continue;
		cnt++;
		n += t_walk(nd->child[i], height - 1,
			    base + ((uint64_t)i << shift), ret_max);
	}
	T_ASSERT_EQ(cnt, nd->count);
	T_ASSERT_MSG(cnt > 0, "empty node at %llu (height %u) kept",
		     (unsigned long long)base, height);
	return n;
}

/* The shape invariants listed at the top of this file. */
static void t_check_shape(const struct extent_map *m)
{
	uint64_t max = 0;

	if (m->height == 0) {
		T_ASSERT(m->root == NULL);
		T_ASSERT_EQ(m->nr_extents, 0);
		T_ASSERT(extent_map_is_empty(m));
		return;
	}
	T_ASSERT(m->height <= EMAP_MAX_HEIGHT);
	T_ASSERT_EQ(t_walk(m->root, m->height, 0, &max), m->nr_extents);
	T_ASSERT_EQ(extent_map_count(m), m->nr_extents);
	T_ASSERT(!extent_map_is_empty(m));
	T_ASSERT_MSG(m->height == t_min_height(max),
		     "height %u, but largest index %llu needs %u", m->height,
		     (unsigned long long)max, t_min_height(max));
}

static void t_assert_empty(const struct extent_map *m)
{
	uint64_t idx = 0;

	ck_assert_ptr_null(m->root);
	ck_assert_uint_eq(m->height, 0);
	ck_assert_uint_eq(extent_map_count(m), 0);
	ck_assert(extent_map_is_empty(m));
	ck_assert_ptr_null(extent_map_next(m, 0, &idx));
}

/* Indices at every edge of a leaf or a level, and the far end. */
static const uint64_t edge_idx[] = {
	0,
	1,
	63,
	64,
	65,
	4095,
	4096,
	4097,
	(UINT64_C(1) << 18) - 1,
	UINT64_C(1) << 18,
	(UINT64_C(1) << 24) + 5,
	(UINT64_C(1) << 36) - 1,
	UINT64_C(1) << 36,
	UINT64_C(1) << 42,
	(UINT64_C(1) << 48) + 12345,
	UINT64_C(1) << 54,
	(UINT64_C(1) << 59) + 1,
	MAXI - 64,
	MAXI - 1,
	MAXI,
};

/* Snapshot of a map's visible state: to prove a failed call changed
 * nothing. */
struct t_snap {
	void *root;
	unsigned height;
	uint64_t count;
	uint64_t n;
	uint64_t idx[64];
	struct extent ext[64];
};

static void t_snap_take(const struct extent_map *m, struct t_snap *s)
{
	struct extent *e;
	uint64_t idx;

	memset(s, 0, sizeof(*s));
	s->root = m->root;
	s->height = m->height;
	s->count = extent_map_count(m);
	extent_for_each(m, e, idx) {
		ck_assert_uint_lt(s->n, ARRAY_SIZE(s->idx));
		s->idx[s->n] = idx;
		s->ext[s->n++] = *e;
	}
}

static void t_snap_check(const struct extent_map *m, const struct t_snap *s)
{
	struct t_snap now;

	t_snap_take(m, &now);
	ck_assert_ptr_eq(now.root, s->root);
	ck_assert_uint_eq(now.height, s->height);
	ck_assert_uint_eq(now.count, s->count);
	ck_assert_uint_eq(now.n, s->n);
	for (uint64_t i = 0; i < s->n; i++) {
		ck_assert_uint_eq(now.idx[i], s->idx[i]);
		ck_assert(t_ext_eq(&now.ext[i], &s->ext[i]));
	}
	t_check_shape(m);
}

/* Deterministic PRNG (splitmix64), so a failure reproduces. */
static uint64_t t_rand(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* ---- insert / lookup / remove ---------------------------------- */

START_TEST(test_extent_map_init_is_empty)
{
	t_assert_empty(&map);
	t_assert_hole(&map, 0);
	t_assert_hole(&map, MAXI);
	t_assert_hole(&map, UINT64_MAX);
}
END_TEST

/* One entry alone at each edge index: in, found, neighbours are holes,
 * out, and the map is back to nothing. */
START_TEST(test_extent_map_insert_lookup_remove_edge)
{
	uint64_t idx = edge_idx[_i];
	struct extent old;

	t_insert(&map, idx);
	ck_assert_uint_eq(extent_map_count(&map), 1);
	ck_assert_uint_eq(map.height, t_min_height(idx));
	t_check_shape(&map);
	t_assert_present(&map, idx);
	if (idx > 0)
		t_assert_hole(&map, idx - 1);
	if (idx < MAXI)
		t_assert_hole(&map, idx + 1);
	t_assert_hole(&map, idx ^ 64);

	t_remove(&map, idx);
	t_assert_empty(&map);
	t_assert_hole(&map, idx);
	ck_assert_int_eq(extent_map_remove(&map, idx, &old), -ENOENT);
}
END_TEST

/* All edge indices in one map, removed in an order unlike insertion. */
START_TEST(test_extent_map_insert_all_edges)
{
	const size_t n = ARRAY_SIZE(edge_idx);

	for (size_t i = 0; i < n; i++) {
		t_insert(&map, edge_idx[(i * 7) % n]);
		t_check_shape(&map);
	}
	ck_assert_uint_eq(extent_map_count(&map), n);
	ck_assert_uint_eq(map.height, EMAP_MAX_HEIGHT);
	for (size_t i = 0; i < n; i++)
		t_assert_present(&map, edge_idx[i]);
	for (size_t i = 0; i < n; i++) {
		t_remove(&map, edge_idx[(i * 11 + 3) % n]);
		t_check_shape(&map);
		ck_assert_uint_eq(extent_map_count(&map), n - i - 1);
	}
	t_assert_empty(&map);
}
END_TEST

START_TEST(test_extent_map_remove_returns_old)
{
	struct extent e = t_ext(77), old;

	ck_assert_int_eq(extent_map_insert(&map, 77, &e), 0);
	memset(&old, 0xa5, sizeof(old));
	ck_assert_int_eq(extent_map_remove(&map, 77, &old), 0);
	ck_assert(t_ext_eq(&old, &e));
	/* @ret_old may be NULL */
	ck_assert_int_eq(extent_map_insert(&map, 78, &e), 0);
	ck_assert_int_eq(extent_map_remove(&map, 78, NULL), 0);
	t_assert_empty(&map);
}
END_TEST

/* The map copies the entry: changing the caller's copy later does not
 * show, and an update through lookup's pointer does. */
START_TEST(test_extent_map_lookup_pointer_is_live)
{
	struct extent e = t_ext(4096);
	struct extent *p;

	ck_assert_int_eq(extent_map_insert(&map, 4096, &e), 0);
	e.slot++;
	t_assert_present(&map, 4096);
	p = extent_map_lookup(&map, 4096);
	p->heat = 999;
	p->flags |= EXTENT_F_NEW;
	ck_assert_uint_eq(extent_map_lookup(&map, 4096)->heat, 999);
	ck_assert_uint_eq(extent_map_lookup(&map, 4096)->flags & EXTENT_F_NEW,
			  EXTENT_F_NEW);
}
END_TEST

/* Every slot of two adjacent leaves, filled and emptied. */
START_TEST(test_extent_map_fill_leaves)
{
	for (uint64_t i = 0; i < 2 * EMAP_FANOUT; i++)
		t_insert(&map, i);
	t_check_shape(&map);
	ck_assert_uint_eq(map.height, 2);
	ck_assert_uint_eq(((struct emap_node *)map.root)->count, 2);
	for (uint64_t i = 0; i < 2 * EMAP_FANOUT; i++)
		t_assert_present(&map, i);
	t_assert_hole(&map, 2 * EMAP_FANOUT);
	/* emptying the second leaf collapses the root to the first */
	for (uint64_t i = EMAP_FANOUT; i < 2 * EMAP_FANOUT; i++)
		t_remove(&map, i);
	t_check_shape(&map);
	ck_assert_uint_eq(map.height, 1);
	for (uint64_t i = 0; i < EMAP_FANOUT; i++)
		t_remove(&map, i);
	t_assert_empty(&map);
}
END_TEST

/* ---- failures leave the map unchanged --------------------------- */

static void t_populate_some(void)
{
	static const uint64_t some[] = { 0, 5, 63, 64, 4096, 1u << 20 };

	for (size_t i = 0; i < ARRAY_SIZE(some); i++)
		t_insert(&map, some[i]);
}

START_TEST(test_extent_map_insert_beyond_max_einval)
{
	static const uint64_t bad[] = {
		MAXI + 1,	MAXI + 64,  UINT64_C(1) << 61,
		UINT64_MAX - 1, UINT64_MAX,
	};
	struct t_snap s;

	for (int populated = 0; populated < 2; populated++) {
		if (populated)
			t_populate_some();
		t_snap_take(&map, &s);
		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			struct extent e = t_ext(bad[i]);

			ck_assert_int_eq(extent_map_insert(&map, bad[i], &e),
					 -EINVAL);
			t_snap_check(&map, &s);
			t_assert_hole(&map, bad[i]);
			ck_assert_int_eq(extent_map_remove(&map, bad[i], NULL),
					 -ENOENT);
		}
	}
}
END_TEST

/* An entry that is itself a hole cannot be inserted. */
START_TEST(test_extent_map_insert_hole_entry_einval)
{
	struct extent e = t_ext(10);
	struct t_snap s;

	e.tier = EXTENT_TIER_NONE;
	ck_assert_int_eq(extent_map_insert(&map, 10, &e), -EINVAL);
	t_assert_empty(&map);
	/* also where the insert would have grown the tree */
	t_populate_some();
	t_snap_take(&map, &s);
	ck_assert_int_eq(extent_map_insert(&map, 10, &e), -EINVAL);
	ck_assert_int_eq(extent_map_insert(&map, MAXI, &e), -EINVAL);
	t_snap_check(&map, &s);
}
END_TEST

START_TEST(test_extent_map_double_insert_eexist)
{
	struct t_snap s;

	t_populate_some();
	t_snap_take(&map, &s);
	for (size_t i = 0; i < s.n; i++) {
		struct extent other = t_ext(s.idx[i] + 1000);

		ck_assert_int_eq(extent_map_insert(&map, s.idx[i], &other),
				 -EEXIST);
		/* the old entry stays, not overwritten */
		t_assert_present(&map, s.idx[i]);
	}
	t_snap_check(&map, &s);

	/* the sole entry of a single leaf, and of a tall tree */
	extent_map_release(&map, NULL, NULL);
	t_insert(&map, MAXI);
	t_snap_take(&map, &s);
	ck_assert_int_eq(extent_map_insert(&map, MAXI, &s.ext[0]), -EEXIST);
	t_snap_check(&map, &s);
}
END_TEST

START_TEST(test_extent_map_remove_hole_enoent)
{
	/* in-leaf hole, hole in a missing leaf, beyond the current range,
	 * beyond the largest index */
	static const uint64_t holes[] = {
		1,    62,	65,	    128,
		4095, 4097,	1u << 21,   UINT64_C(1) << 40,
		MAXI, MAXI + 1, UINT64_MAX,
	};
	struct extent old, poison;
	struct t_snap s;

	memset(&poison, 0x5a, sizeof(poison));
	for (size_t i = 0; i < ARRAY_SIZE(holes); i++) {
		old = poison;
		ck_assert_int_eq(extent_map_remove(&map, holes[i], &old),
				 -ENOENT);
		ck_assert(!memcmp(&old, &poison, sizeof(old)));
	}
	t_assert_empty(&map);

	t_populate_some();
	t_snap_take(&map, &s);
	for (size_t i = 0; i < ARRAY_SIZE(holes); i++) {
		old = poison;
		ck_assert_int_eq(extent_map_remove(&map, holes[i], &old),
				 -ENOENT);
		ck_assert_msg(!memcmp(&old, &poison, sizeof(old)),
			      "remove(%llu) wrote ret_old on -ENOENT",
			      (unsigned long long)holes[i]);
		t_snap_check(&map, &s);
	}
	/* removing twice: the second is a hole */
	t_remove(&map, 64);
	ck_assert_int_eq(extent_map_remove(&map, 64, NULL), -ENOENT);
}
END_TEST

/* ---- next() and extent_for_each --------------------------------- */

START_TEST(test_extent_map_next_empty)
{
	uint64_t idx = 12345;

	ck_assert_ptr_null(extent_map_next(&map, 0, &idx));
	ck_assert_ptr_null(extent_map_next(&map, MAXI, &idx));
	ck_assert_ptr_null(extent_map_next(&map, UINT64_MAX, &idx));
	ck_assert_uint_eq(idx, 12345); /* not written */
}
END_TEST

/* next() from every start point around every present edge index. */
START_TEST(test_extent_map_next_from_any_start)
{
	const size_t n = ARRAY_SIZE(edge_idx);

	for (size_t i = 0; i < n; i++)
		t_insert(&map, edge_idx[i]);
	for (size_t i = 0; i < n; i++) {
		uint64_t starts[4];
		size_t ns = 0;

		starts[ns++] = edge_idx[i];
		if (edge_idx[i] > 0)
			starts[ns++] = edge_idx[i] - 1;
		if (i > 0 && edge_idx[i - 1] + 1 < edge_idx[i])
			starts[ns++] = edge_idx[i - 1] + 1;
		if (i > 0)
			starts[ns++] = edge_idx[i - 1] +
				       (edge_idx[i] - edge_idx[i - 1]) / 2 + 1;
		for (size_t k = 0; k < ns; k++) {
			uint64_t got = 0;
			struct extent *e;
			struct extent want = t_ext(edge_idx[i]);

			/* the first edge index >= start; the table is sorted */
			size_t j = 0;

			while (edge_idx[j] < starts[k])
				j++;
			e = extent_map_next(&map, starts[k], &got);
			ck_assert_ptr_nonnull(e);
			ck_assert_msg(got == edge_idx[j],
				      "next(%llu) = %llu, want %llu",
				      (unsigned long long)starts[k],
				      (unsigned long long)got,
				      (unsigned long long)edge_idx[j]);
			want = t_ext(edge_idx[j]);
			ck_assert(t_ext_eq(e, &want));
		}
	}
	/* past the last entry */
	t_remove(&map, MAXI);
	{
		uint64_t got = 0;

		ck_assert_ptr_nonnull(extent_map_next(&map, MAXI - 1, &got));
		ck_assert_uint_eq(got, MAXI - 1);
		ck_assert_ptr_null(extent_map_next(&map, MAXI, &got));
		ck_assert_ptr_null(extent_map_next(&map, UINT64_MAX, &got));
	}
}
END_TEST

/* next() beyond the tree's current range, which is below MAXI. */
START_TEST(test_extent_map_next_beyond_range)
{
	uint64_t got = 7;

	t_insert(&map, 3);
	t_insert(&map, 70);
	ck_assert_ptr_null(extent_map_next(&map, 71, &got));
	ck_assert_ptr_null(extent_map_next(&map, 4096, &got));
	ck_assert_ptr_null(extent_map_next(&map, UINT64_C(1) << 50, &got));
	ck_assert_uint_eq(got, 7);
	ck_assert_ptr_nonnull(extent_map_next(&map, 4, &got));
	ck_assert_uint_eq(got, 70);
}
END_TEST

/* Iteration visits present entries once each, in order, across sparse
 * leaves and the very last index. */
START_TEST(test_extent_map_for_each_order)
{
	uint64_t seed = 42, want[512], n = 0, prev = 0, seen = 0;
	struct extent *e;
	uint64_t idx;

	/* sparse and clustered, inserted in random order */
	for (uint64_t i = 0; i < ARRAY_SIZE(want) - ARRAY_SIZE(edge_idx); i++) {
		uint64_t r = t_rand(&seed);
		uint64_t v = (i & 1) ? r % 100000 : r & MAXI;

		if (extent_map_lookup(&map, v))
			continue;
		t_insert(&map, v);
		want[n++] = v;
	}
	for (size_t i = 0; i < ARRAY_SIZE(edge_idx); i++) {
		if (extent_map_lookup(&map, edge_idx[i]))
			continue;
		t_insert(&map, edge_idx[i]);
		want[n++] = edge_idx[i];
	}
	T_ASSERT_EQ(extent_map_count(&map), n);

	extent_for_each(&map, e, idx) {
		struct extent w = t_ext(idx);
		bool found = false;

		if (seen)
			T_ASSERT_MSG(idx > prev, "%llu after %llu",
				     (unsigned long long)idx,
				     (unsigned long long)prev);
		T_ASSERT(t_ext_eq(e, &w));
		for (uint64_t k = 0; k < n && !found; k++)
			found = want[k] == idx;
		T_ASSERT_MSG(found, "visited hole %llu",
			     (unsigned long long)idx);
		prev = idx;
		seen++;
	}
	T_ASSERT_EQ(seen, n);
	T_ASSERT_EQ(prev, MAXI);
}
END_TEST

START_TEST(test_extent_map_for_each_empty_and_single)
{
	struct extent *e;
	uint64_t idx, seen = 0;

	extent_for_each(&map, e, idx)
		seen++;
	ck_assert_uint_eq(seen, 0);

	t_insert(&map, MAXI);
	extent_for_each(&map, e, idx) {
		ck_assert_uint_eq(idx, MAXI);
		seen++;
	}
	ck_assert_uint_eq(seen, 1);
}
END_TEST

/* ---- shape: growing, shrinking, freeing ------------------------- */

START_TEST(test_extent_map_height_grows_and_shrinks)
{
	t_insert(&map, 0);
	ck_assert_uint_eq(map.height, 1);
	t_insert(&map, 4096); /* 64^2: needs height 3 */
	ck_assert_uint_eq(map.height, 3);
	t_insert(&map, UINT64_C(1) << 40); /* 2^40 < 64^7 */
	ck_assert_uint_eq(map.height, 7);
	t_insert(&map, MAXI);
	ck_assert_uint_eq(map.height, EMAP_MAX_HEIGHT);
	t_check_shape(&map);

	t_remove(&map, MAXI);
	ck_assert_uint_eq(map.height, 7);
	t_remove(&map, UINT64_C(1) << 40);
	ck_assert_uint_eq(map.height, 3);
	/* index 4096 is child 1 of the root: the root stays */
	t_remove(&map, 0);
	ck_assert_uint_eq(map.height, 3);
	t_check_shape(&map);
	t_insert(&map, 1);
	t_remove(&map, 4096);
	ck_assert_uint_eq(map.height, 1);
	t_check_shape(&map);
	t_remove(&map, 1);
	t_assert_empty(&map);
}
END_TEST

/* Many random indices in, all out in another order: nothing is left
 * (ASan reports any node that was not freed). */
START_TEST(test_extent_map_remove_all_frees_everything)
{
	enum { N = 5000 };
	uint64_t *idx = calloc(N, sizeof(*idx));
	uint64_t seed = 0x1234 + (uint64_t)_i, n = 0;

	T_ASSERT(idx != NULL);
	while (n < N) {
		uint64_t r = t_rand(&seed), v;

		switch (r % 4) {
		case 0:
			v = (r >> 8) % 20000;
			break;
		case 1:
			v = (r >> 8) & MAXI;
			break;
		case 2:
			v = MAXI - ((r >> 8) % 5000);
			break;
		default:
			v = (UINT64_C(1) << ((r >> 8) % 60)) +
			    ((r >> 16) % 130) - 65;
			v &= MAXI;
			break;
		}
		if (extent_map_lookup(&map, v))
			continue;
		t_insert(&map, v);
		idx[n++] = v;
	}
	T_ASSERT_EQ(extent_map_count(&map), N);
	t_check_shape(&map);
	/* Fisher-Yates shuffle, then remove in that order */
	for (uint64_t i = N - 1; i > 0; i--) {
		uint64_t j = t_rand(&seed) % (i + 1), t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
	}
	for (uint64_t i = 0; i < N; i++) {
		t_remove(&map, idx[i]);
		if (i % 997 == 0)
			t_check_shape(&map);
	}
	t_assert_empty(&map);
	free(idx);
}
END_TEST

/* ---- release() -------------------------------------------------- */

struct t_release_log {
	uint64_t calls;
	uint64_t idx_sum; /* wraps; compared modulo 2^64 */
	uint64_t idx[64];
	bool bad_entry;
};

static void t_release_cb(const struct extent *e, uint64_t idx, void *arg)
{
	struct t_release_log *log = arg;
	struct extent want = t_ext(idx);

	if (!t_ext_eq(e, &want))
		log->bad_entry = true;
	log->idx_sum += idx;
	if (log->calls < ARRAY_SIZE(log->idx))
		log->idx[log->calls] = idx;
	log->calls++;
}

START_TEST(test_extent_map_release_calls_once_per_entry)
{
	struct t_release_log log = { 0 };
	const size_t n = ARRAY_SIZE(edge_idx);

	for (size_t i = 0; i < n; i++)
		t_insert(&map, edge_idx[(i * 7) % n]);
	extent_map_release(&map, t_release_cb, &log);
	t_assert_empty(&map);
	ck_assert_uint_eq(log.calls, n);
	ck_assert(!log.bad_entry);
	/* each index exactly once: sort-free check against the sorted table */
	for (size_t i = 0; i < n; i++) {
		unsigned hits = 0;

		for (size_t k = 0; k < n; k++)
			hits += log.idx[k] == edge_idx[i];
		ck_assert_msg(hits == 1, "index %llu released %u times",
			      (unsigned long long)edge_idx[i], hits);
	}
}
END_TEST

START_TEST(test_extent_map_release_many_counts)
{
	struct t_release_log log = { 0 };
	uint64_t want_sum = 0;

	for (uint64_t i = 0; i < 3000; i++) {
		uint64_t v = i * 4099; /* spread over many leaves */

		t_insert(&map, v);
		want_sum += v;
	}
	extent_map_release(&map, t_release_cb, &log);
	ck_assert_uint_eq(log.calls, 3000);
	ck_assert_uint_eq(log.idx_sum, want_sum);
	ck_assert(!log.bad_entry);
	t_assert_empty(&map);
}
END_TEST

START_TEST(test_extent_map_release_empty_and_reuse)
{
	struct t_release_log log = { 0 };

	extent_map_release(&map, t_release_cb, &log);
	ck_assert_uint_eq(log.calls, 0);
	t_assert_empty(&map);

	/* release without a callback, then reuse the map */
	t_populate_some();
	extent_map_release(&map, NULL, NULL);
	t_assert_empty(&map);
	t_insert(&map, 99);
	t_assert_present(&map, 99);
	extent_map_release(&map, t_release_cb, &log);
	ck_assert_uint_eq(log.calls, 1);
	ck_assert_uint_eq(log.idx[0], 99);
	/* twice in a row is fine */
	extent_map_release(&map, t_release_cb, &log);
	ck_assert_uint_eq(log.calls, 1);
}
END_TEST

/* ---- randomized model test -------------------------------------- */

/*
 * The reference is a sorted array of present indices; the value at each
 * index is always t_ext(idx).  Indices come from a small dense range
 * (leaf and node reuse), from around level boundaries, and from the far
 * end, so the tree grows and shrinks through every height.
 */
struct t_model {
	uint64_t *v;
	size_t n, cap;
};

/* First position whose value is >= @x. */
static size_t t_model_lower(const struct t_model *m, uint64_t x)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool t_model_has(const struct t_model *m, uint64_t x)
{
	size_t p = t_model_lower(m, x);

	return p < m->n && m->v[p] == x;
}

static void t_model_add(struct t_model *m, uint64_t x)
{
	size_t p = t_model_lower(m, x);

	T_ASSERT(m->n < m->cap);
	memmove(&m->v[p + 1], &m->v[p], (m->n - p) * sizeof(m->v[0]));
	m->v[p] = x;
	m->n++;
}

static void t_model_del(struct t_model *m, uint64_t x)
{
	size_t p = t_model_lower(m, x);

	memmove(&m->v[p], &m->v[p + 1], (m->n - p - 1) * sizeof(m->v[0]));
	m->n--;
}

static uint64_t t_pick_index(uint64_t *seed, const struct t_model *m)
{
	uint64_t r = t_rand(seed);
	uint64_t a = r >> 8;

	switch (r % 8) {
	case 0:
	case 1:
	case 2:
		return a % 300; /* dense: a few leaves */
	case 3:
		/* around a level boundary 64^k, both sides */
		return ((UINT64_C(1) << (6 * (1 + a % 9))) + (a >> 8) % 9 - 4) &
		       MAXI;
	case 4:
		return MAXI - a % 200; /* the far end */
	case 5:
		return a & MAXI; /* anywhere */
	case 6:
		if (m->n) /* an existing one, to hit EEXIST and removals */
			return m->v[a % m->n];
		return a % 300;
	default:
		/* just outside the accepted range */
		return MAXI + 1 + a % 3;
	}
}

START_TEST(test_extent_map_model_random)
{
	enum { OPS = 50000 };
	uint64_t seed = UINT64_C(0x5eed0000) + (uint64_t)_i;
	struct t_model m = { .cap = OPS };
	unsigned max_height = 0, shrinks = 0, prev_height = 0;

	m.v = calloc(m.cap, sizeof(m.v[0]));
	T_ASSERT(m.v != NULL);
	for (unsigned op = 0; op < OPS; op++) {
		uint64_t x = t_pick_index(&seed, &m);
		uint64_t kind = t_rand(&seed) % 100;
		bool has = t_model_has(&m, x);
		struct extent e = t_ext(x);
		int r;

		/* grow while small, then hover, then drain toward the end */
		uint64_t ins = op < OPS / 3 ? 45 : op < 2 * OPS / 3 ? 30 : 10;

		if (kind < ins) {
			r = extent_map_insert(&map, x, &e);
			if (x > MAXI)
				T_ASSERT_EQ(r, -EINVAL);
			else if (has)
				T_ASSERT_EQ(r, -EEXIST);
			else {
				T_ASSERT_EQ(r, 0);
				t_model_add(&m, x);
			}
		} else if (kind < 60) {
			struct extent old;

			/* remove an existing index most of the time */
			if (m.n && kind < 55) {
				x = m.v[t_rand(&seed) % m.n];
				e = t_ext(x);
				has = true;
			}
			r = extent_map_remove(&map, x, &old);
			if (has) {
				T_ASSERT_MSG(r == 0, "op %u: remove(%llu) = %d",
					     op, (unsigned long long)x, r);
				T_ASSERT(t_ext_eq(&old, &e));
				t_model_del(&m, x);
			} else {
				T_ASSERT_EQ(r, -ENOENT);
			}
		} else if (kind < 80) {
			const struct extent *p = extent_map_lookup(&map, x);

			T_ASSERT_MSG((p != NULL) == has,
				     "op %u: lookup(%llu) %s, model %s", op,
				     (unsigned long long)x,
				     p ? "found" : "hole",
				     has ? "has it" : "has not");
			if (p)
				T_ASSERT(t_ext_eq(p, &e));
		} else {
			size_t pos = t_model_lower(&m, x);
			uint64_t got = 0;
			const struct extent *p = extent_map_next(&map, x, &got);

			if (pos == m.n) {
				T_ASSERT_MSG(
					p == NULL,
					"op %u: next(%llu) = %llu, want none",
					op, (unsigned long long)x,
					(unsigned long long)got);
			} else {
				struct extent w = t_ext(m.v[pos]);

				T_ASSERT_MSG(
					p != NULL && got == m.v[pos],
					"op %u: next(%llu) = %s%llu, want %llu",
					op, (unsigned long long)x,
					p ? "" : "none ",
					(unsigned long long)got,
					(unsigned long long)m.v[pos]);
				T_ASSERT(t_ext_eq(p, &w));
			}
		}
		T_ASSERT_EQ(extent_map_count(&map), m.n);
		max_height = MAX(max_height, map.height);
		shrinks += map.height < prev_height;
		prev_height = map.height;
		if (op % 1000 == 0 || m.n < 4) {
			struct extent *pe;
			uint64_t idx, k = 0;

			t_check_shape(&map);
			extent_for_each(&map, pe, idx) {
				T_ASSERT(k < m.n);
				T_ASSERT_EQ(idx, m.v[k]);
				k++;
			}
			T_ASSERT_EQ(k, m.n);
		}
	}
	/* the run went through every height and back down */
	ck_assert_uint_eq(max_height, EMAP_MAX_HEIGHT);
	ck_assert_uint_gt(shrinks, 10);
	/* drain what is left, checking the shape as it shrinks */
	while (m.n) {
		uint64_t x = m.v[t_rand(&seed) % m.n];

		t_remove(&map, x);
		t_model_del(&m, x);
		if (m.n % 64 == 0)
			t_check_shape(&map);
	}
	t_assert_empty(&map);
	free(m.v);
}
END_TEST

static Suite *extent_map_suite(void)
{
	Suite *s = suite_create("extent_map");
	TCase *tc;

	tc = tcase_create("insert");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_extent_map_init_is_empty);
	tcase_add_loop_test(tc, test_extent_map_insert_lookup_remove_edge, 0,
			    ARRAY_SIZE(edge_idx));
	tcase_add_test(tc, test_extent_map_insert_all_edges);
	tcase_add_test(tc, test_extent_map_remove_returns_old);
	tcase_add_test(tc, test_extent_map_lookup_pointer_is_live);
	tcase_add_test(tc, test_extent_map_fill_leaves);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_extent_map_insert_beyond_max_einval);
	tcase_add_test(tc, test_extent_map_insert_hole_entry_einval);
	tcase_add_test(tc, test_extent_map_double_insert_eexist);
	tcase_add_test(tc, test_extent_map_remove_hole_enoent);
	suite_add_tcase(s, tc);

	tc = tcase_create("next");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_extent_map_next_empty);
	tcase_add_test(tc, test_extent_map_next_from_any_start);
	tcase_add_test(tc, test_extent_map_next_beyond_range);
	tcase_add_test(tc, test_extent_map_for_each_order);
	tcase_add_test(tc, test_extent_map_for_each_empty_and_single);
	suite_add_tcase(s, tc);

	tc = tcase_create("shape");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_extent_map_height_grows_and_shrinks);
	tcase_add_loop_test(tc, test_extent_map_remove_all_frees_everything, 0,
			    3);
	suite_add_tcase(s, tc);

	tc = tcase_create("release");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_extent_map_release_calls_once_per_entry);
	tcase_add_test(tc, test_extent_map_release_many_counts);
	tcase_add_test(tc, test_extent_map_release_empty_and_reuse);
	suite_add_tcase(s, tc);

	tc = tcase_create("model");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_extent_map_model_random, 0, 4);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return tap_run(extent_map_suite());
}
