// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_extent_map.c -- Check suite for fs/extent_map.h, the B+tree from
 * extent index to tier location.
 *
 * Besides the API contract, every test that changes a map checks the
 * tree's shape through extent_map_i.h (t_check_shape()): all leaves at
 * one depth, counts that match contents, no empty block kept, keys in
 * order and inside their separators' ranges, each leaf in the format its
 * keys call for, each node's arithmetic descent (hdr.shift) exactly when
 * its separators allow it, blocks no larger than their contents need,
 * and extent_map_bytes() equal to the sum over the blocks.
 *
 * The executable wraps malloc, realloc and free (meson.build): the tests
 * count the blocks and bytes the map really holds, which must match the
 * tree and drop to nothing when the map is emptied, and fail the Nth
 * allocation to check that a failed insert changes nothing and a remove
 * never fails.  Under -Db_sanitize=address a block that is not freed is a
 * failure too.
 */
#include <check.h>
#include <errno.h>
#include <malloc.h>
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

/* ---- the allocator, seen from the test ---- */

void *__real_malloc(size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);

/*
 * While t_counting, live blocks and their usable bytes (what
 * malloc_usable_size() says: the request rounded up by the allocator)
 * are counted; only the map may allocate then, so the tests use
 * T_ASSERT() there (a passing ck_assert() allocates).  t_fail_at >= 0 fails the
 * allocation (malloc or realloc) of that number, counting from 0.
 */
static bool t_counting;
static int64_t t_live_blocks, t_live_bytes;
static long t_fail_at = -1, t_nalloc;
static bool t_fail_all;		  /* fail t_fail_at and every one after */
static bool t_sizes_exact = true; /* no shrinking realloc() failed */

static bool t_fault(void)
{
	if (t_fail_at < 0)
		return false;
	return t_fail_all ? t_nalloc++ >= t_fail_at : t_nalloc++ == t_fail_at;
}

void *__wrap_malloc(size_t size)
{
	void *p = t_fault() ? NULL : __real_malloc(size);

	if (p && t_counting) {
		t_live_blocks++;
		t_live_bytes += (int64_t)malloc_usable_size(p);
	}
	return p;
}

void *__wrap_realloc(void *p, size_t size)
{
	size_t was = p && t_counting ? malloc_usable_size(p) : 0;
	void *q;

	if (t_fault())
		return NULL;
	q = __real_realloc(p, size);
	if (q && t_counting) {
		t_live_blocks += p == NULL;
		t_live_bytes += (int64_t)malloc_usable_size(q) - (int64_t)was;
	}
	return q;
}

void __wrap_free(void *p)
{
	if (p && t_counting) {
		t_live_blocks--;
		t_live_bytes -= (int64_t)malloc_usable_size(p);
	}
	__real_free(p);
}

/* Start counting from zero; the map must be empty. */
static void t_count_start(void)
{
	t_live_blocks = 0;
	t_live_bytes = 0;
	t_counting = true;
}

static void t_fault_arm(long n)
{
	t_nalloc = 0;
	t_fail_at = n;
}

/* A map per test, set up and torn down by a checked fixture. */
static struct extent_map map;

static void setup(void)
{
	extent_map_init(&map);
}

static void teardown(void)
{
	t_fail_at = -1;
	t_fail_all = false;
	t_sizes_exact = true;
	extent_map_release(&map, NULL, NULL);
	t_counting = false;
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

static size_t t_footprint(size_t size)
{
	return emap_footprint(size);
}

/* What a walk of the tree found. */
struct t_walk {
	uint64_t entries, blocks, bytes;
	uint64_t prev; /* last key seen, in order */
	bool any;
	uint64_t dense, sparse, nodes, arith;
};

/* The keys of a leaf, in order; returns how many. */
static size_t t_leaf_keys(const void *leaf, uint64_t *k)
{
	const struct emap_hdr *h = leaf;
	size_t n = 0;

	if (h->kind == EMAP_DENSE) {
		const struct emap_dense *l = leaf;

		for (unsigned b = 0; b < 64; b++)
			if ((l->bitmap >> b) & 1)
				k[n++] = l->base + b;
	} else {
		const struct emap_sparse *l = leaf;

		for (n = 0; n < h->n; n++)
			k[n] = l->key[n];
	}
	return n;
}

/* The extent stored with the @i-th key of a leaf. */
static const struct extent *t_leaf_ext(const void *leaf, size_t i)
{
	const struct emap_hdr *h = leaf;

	if (h->kind == EMAP_DENSE)
		return &((const struct emap_dense *)leaf)->ext[i];
	return &emap_sparse_ext(leaf)[i];
}

/*
 * Check a subtree whose keys must lie in [@lo, @hi] (the separators
 * around it), at @height (1: a leaf).
 */
static void t_walk_block(const void *p, unsigned height, bool root, uint64_t lo,
			 uint64_t hi, struct t_walk *w)
{
	const struct emap_hdr *h = p;

	T_ASSERT(p != NULL);
	w->blocks++;
	w->bytes += t_footprint(h->size);
	if (height == 1) {
		uint64_t k[EMAP_LEAF_MAX];
		size_t n, need;

		T_ASSERT_MSG(h->kind == EMAP_DENSE || h->kind == EMAP_SPARSE,
			     "leaf of kind %u", h->kind);
		T_ASSERT_MSG(h->n >= 1 && h->n <= EMAP_LEAF_MAX,
			     "leaf with %u entries", h->n);
		n = t_leaf_keys(p, k);
		T_ASSERT_EQ(n, h->n);
		for (size_t i = 0; i < n; i++) {
			struct extent want = t_ext(k[i]);

			T_ASSERT_MSG(!w->any || k[i] > w->prev,
				     "key %llu after %llu",
				     (unsigned long long)k[i],
				     (unsigned long long)w->prev);
			T_ASSERT_MSG(k[i] >= lo && k[i] <= hi,
				     "key %llu outside [%llu, %llu]",
				     (unsigned long long)k[i],
				     (unsigned long long)lo,
				     (unsigned long long)hi);
			T_ASSERT(k[i] <= MAXI);
			T_ASSERT_MSG(t_ext_eq(t_leaf_ext(p, i), &want),
				     "entry at %llu", (unsigned long long)k[i]);
			w->prev = k[i];
			w->any = true;
		}
		if ((k[0] >> 6) == (k[n - 1] >> 6)) {
			T_ASSERT_MSG(h->kind == EMAP_DENSE,
				     "keys %llu..%llu in a sparse leaf",
				     (unsigned long long)k[0],
				     (unsigned long long)k[n - 1]);
			T_ASSERT_EQ(((const struct emap_dense *)p)->base,
				    k[0] & ~UINT64_C(63));
			need = emap_dense_size(n);
			w->dense++;
		} else {
			T_ASSERT_MSG(h->kind == EMAP_SPARSE,
				     "keys %llu..%llu in a dense leaf",
				     (unsigned long long)k[0],
				     (unsigned long long)k[n - 1]);
			need = emap_sparse_size(n);
			w->sparse++;
		}
		/* the block is what its contents need, give or take the
		 * allocator's rounding: removals give memory back */
		T_ASSERT_MSG(h->size >= need && (!t_sizes_exact ||
						 t_footprint(h->size) ==
							 t_footprint(need)),
			     "leaf of %u entries in %u bytes", h->n, h->size);
		w->entries += n;
		return;
	}

	const struct emap_node *nd = p;
	void **c = emap_node_child(nd);
	const uint64_t *t_key = emap_node_key(nd);
	size_t n = h->n;
	unsigned want_shift = EMAP_SEARCH;

	T_ASSERT_EQ(h->kind, EMAP_NODE);
	T_ASSERT_MSG(n >= (root ? 2u : 1u) && n <= EMAP_NODE_MAX,
		     "node with %zu children (root %d)", n, root);
	T_ASSERT_MSG(h->size >= emap_node_size(n) &&
			     (!t_sizes_exact ||
			      t_footprint(h->size) ==
				      t_footprint(emap_node_size(n))),
		     "node of %zu children in %u bytes", n, h->size);
	for (size_t j = 1; j < n; j++) {
		T_ASSERT_MSG(t_key[j] > lo && t_key[j] <= hi,
			     "separator %llu outside (%llu, %llu]",
			     (unsigned long long)t_key[j],
			     (unsigned long long)lo, (unsigned long long)hi);
		if (j > 1)
			T_ASSERT(t_key[j] > t_key[j - 1]);
	}
	/* arithmetic descent exactly when the separators are evenly spaced
	 * by a power of two (any single or pair qualifies) */
	if (n <= 2) {
		want_shift = 0;
	} else {
		uint64_t st = t_key[2] - t_key[1];
		bool even = (st & (st - 1)) == 0 && t_key[1] >= st;

		for (size_t j = 2; even && j + 1 < n; j++)
			even = t_key[j + 1] - t_key[j] == st;
		if (even)
			want_shift = (unsigned)__builtin_ctzll(st);
	}
	T_ASSERT_EQ(h->shift, want_shift);
	if (h->shift != EMAP_SEARCH) {
		w->arith++;
		if (n >= 2)
			T_ASSERT_EQ(nd->base,
				    t_key[1] - (UINT64_C(1) << h->shift));
	}
	w->nodes++;
	for (size_t j = 0; j < n; j++)
		t_walk_block(c[j], height - 1, false, j ? t_key[j] : lo,
			     j + 1 < n ? t_key[j + 1] - 1 : hi, w);
}

/* The shape invariants listed at the top of this file; returns what the
 * walk found. */
static struct t_walk t_check_shape(const struct extent_map *m)
{
	struct t_walk w = { 0 };

	if (m->height == 0) {
		T_ASSERT(m->root == NULL);
		T_ASSERT_EQ(m->nr_extents, 0);
		T_ASSERT(extent_map_is_empty(m));
		T_ASSERT_EQ(extent_map_bytes(m), 0);
		return w;
	}
	T_ASSERT(m->height <= EMAP_MAX_HEIGHT);
	t_walk_block(m->root, m->height, true, 0, MAXI, &w);
	/* the map's copy of the root's descent (struct extent_map) */
	if (m->height > 1 &&
	    ((const struct emap_hdr *)m->root)->shift != EMAP_SEARCH &&
	    ((const struct emap_node *)m->root)->base == 0) {
		T_ASSERT_EQ(m->root_shift,
			    ((const struct emap_hdr *)m->root)->shift);
		T_ASSERT_EQ(m->root_last,
			    ((const struct emap_hdr *)m->root)->n - 1u);
	} else {
		T_ASSERT_EQ(m->root_shift, EMAP_SEARCH);
	}
	T_ASSERT_EQ(w.entries, m->nr_extents);
	T_ASSERT_EQ(extent_map_count(m), m->nr_extents);
	T_ASSERT(!extent_map_is_empty(m));
	T_ASSERT_EQ(extent_map_bytes(m), w.bytes);
	if (t_counting) {
		/* the allocator's view: exactly the tree's blocks, and no
		 * more bytes than extent_map_bytes() owns up to, give or
		 * take a realloc() that shrank a block in place */
		T_ASSERT_EQ(t_live_blocks, w.blocks);
		T_ASSERT_MSG(
			(uint64_t)t_live_bytes <= w.bytes + 16 * w.blocks ||
				!t_sizes_exact,
			"allocator holds %lld bytes, map says %llu",
			(long long)t_live_bytes, (unsigned long long)w.bytes);
	}
	return w;
}

static void t_assert_empty(const struct extent_map *m)
{
	uint64_t idx = 0;

	/* T_ASSERT: a passing ck_assert may allocate, which would count */
	T_ASSERT(m->root == NULL);
	T_ASSERT_EQ(m->height, 0);
	T_ASSERT_EQ(extent_map_count(m), 0);
	T_ASSERT_EQ(extent_map_bytes(m), 0);
	if (t_counting) {
		/* the map allocates nothing once it is empty */
		T_ASSERT_EQ(t_live_blocks, 0);
		T_ASSERT_EQ(t_live_bytes, 0);
	}
	T_ASSERT(extent_map_is_empty(m));
	T_ASSERT(extent_map_next(m, 0, &idx) == NULL);
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
	ck_assert_uint_eq(map.height, 1);
	ck_assert_uint_eq(((struct emap_hdr *)map.root)->kind, EMAP_DENSE);
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
	ck_assert_uint_eq(map.height, 1); /* 20 entries: one sparse leaf */
	ck_assert_uint_eq(((struct emap_hdr *)map.root)->kind, EMAP_SPARSE);
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

/* A file written from start to end: whole aligned dense leaves under
 * nodes that descend by arithmetic; emptied from the end, it shrinks
 * back.  Written from 10 on, the leaves still split at multiples of 64. */
START_TEST(test_extent_map_fill_leaves)
{
	const uint64_t first = (uint64_t)_i * 10;		/* 0, then 10 */
	const uint64_t end = 3 * EMAP_LEAF_MAX * EMAP_NODE_MAX; /* height 3 */
	struct t_walk w;

	for (uint64_t i = first; i < 2 * EMAP_LEAF_MAX; i++)
		t_insert(&map, i);
	w = t_check_shape(&map);
	ck_assert_uint_eq(map.height, 2);
	ck_assert_uint_eq(((struct emap_node *)map.root)->h.n, 2);
	ck_assert_uint_eq(w.dense, 2);
	ck_assert_uint_eq(w.sparse, 0);
	for (uint64_t i = first; i < 2 * EMAP_LEAF_MAX; i++)
		t_assert_present(&map, i);
	t_assert_hole(&map, 2 * EMAP_LEAF_MAX);
	if (first)
		t_assert_hole(&map, first - 1);

	for (uint64_t i = 2 * EMAP_LEAF_MAX; i < end; i++)
		t_insert(&map, i);
	w = t_check_shape(&map);
	ck_assert_uint_eq(map.height, 3);
	ck_assert_uint_eq(w.sparse, 0);
	ck_assert_uint_eq(w.dense, end / EMAP_LEAF_MAX);
	ck_assert_uint_eq(w.arith, w.nodes); /* every node: no search */
	/* about what the entries take: 16 B, plus under 1 B of headers */
	ck_assert_uint_le(extent_map_bytes(&map),
			  (end - first) * (sizeof(struct extent) + 1));

	/* emptying from the end collapses the root back to one leaf */
	for (uint64_t i = end; i-- > EMAP_LEAF_MAX;) {
		t_remove(&map, i);
		if (i % 500 == 0)
			t_check_shape(&map);
	}
	t_check_shape(&map);
	ck_assert_uint_eq(map.height, 1);
	for (uint64_t i = first; i < EMAP_LEAF_MAX; i++)
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
	/* one entry in every 100th index: sparse leaves of 64 */
	const uint64_t n2 = EMAP_LEAF_MAX + 1;
	uint64_t i;

	t_insert(&map, MAXI);
	ck_assert_uint_eq(map.height, 1);
	for (i = 0; i < n2 - 1; i++)
		t_insert(&map, i * 100);
	ck_assert_uint_eq(map.height, 2);
	t_check_shape(&map);
	/* grow until the root splits once more */
	for (; map.height < 3; i++)
		t_insert(&map, i * 100);
	t_check_shape(&map);
	/* then back: remove all but the last and the first */
	while (i-- > 1) {
		t_remove(&map, i * 100);
		if (i % 256 == 0)
			t_check_shape(&map);
	}
	t_check_shape(&map);
	ck_assert_uint_eq(map.height, 1);
	ck_assert_uint_eq(extent_map_count(&map), 2);
	t_remove(&map, MAXI);
	t_remove(&map, 0);
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

/*
 * The reference is a sorted array of present indices; the value at each
 * index is always t_ext(idx).  Each loop draws its indices from one of
 * the sets of enum t_dist (dense, clustered, sparse, the far end, all
 * mixed), so leaves go through both formats, split, merge and empty, and
 * the tree grows to three levels and back.
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

/* ---- memory ---------------------------------------------------- */

/* Shuffle @v (Fisher-Yates). */
static void t_shuffle(uint64_t *v, uint64_t n, uint64_t *seed)
{
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = t_rand(seed) % (i + 1), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

/*
 * Issue 12: at most 100 B per isolated extent; the map's share is held
 * to 64 B, counted both by extent_map_bytes() and by the allocator (its
 * usable bytes plus 16 B of header and rounding per block).  Then every
 * entry out, in random order, and the map holds nothing.
 */
START_TEST(test_extent_map_memory_isolated)
{
	static const unsigned bits[] = { 20, 40, 60 };
	enum { N = 100000, MAX_BPE = 64 };
	uint64_t range = UINT64_C(1) << bits[_i];
	uint64_t *v = calloc(N, sizeof(*v));
	uint64_t seed = 0xb17e5 + (uint64_t)_i, n = 0, bytes;
	struct t_walk w;

	T_ASSERT(v != NULL);
	t_count_start();
	while (n < N) {
		uint64_t x = t_rand(&seed) & (range - 1) & MAXI;

		if (extent_map_lookup(&map, x))
			continue;
		t_insert(&map, x);
		v[n++] = x;
	}
	w = t_check_shape(&map);
	bytes = extent_map_bytes(&map);
	T_ASSERT_MSG(bytes <= (uint64_t)MAX_BPE * N,
		     "%.1f B per extent below 2^%u (map's count)",
		     (double)bytes / N, bits[_i]);
	T_ASSERT_MSG(
		(uint64_t)t_live_bytes + 16 * w.blocks <= (uint64_t)MAX_BPE * N,
		"%.1f B per extent below 2^%u (allocator's count)",
		(double)(t_live_bytes + 16 * (int64_t)w.blocks) / N, bits[_i]);
	t_shuffle(v, N, &seed);
	for (uint64_t i = 0; i < N; i++) {
		t_remove(&map, v[i]);
		if (i % 9973 == 0)
			t_check_shape(&map);
	}
	t_assert_empty(&map); /* and no block or byte left */
	t_counting = false;
	free(v);
}
END_TEST

/* A dense file costs what its entries do: 16 B each, and a little. */
START_TEST(test_extent_map_memory_dense)
{
	static const uint64_t sizes[] = { 1024, 65536 };
	const uint64_t n = sizes[_i];
	uint64_t bytes;

	t_count_start();
	for (uint64_t i = 0; i < n; i++)
		t_insert(&map, i);
	t_check_shape(&map);
	bytes = extent_map_bytes(&map);
	T_ASSERT_MSG(bytes <= n * 17, "%.2f B per extent for %llu extents",
		     (double)bytes / n, (unsigned long long)n);
	/* release frees everything too */
	extent_map_release(&map, NULL, NULL);
	t_assert_empty(&map);
}
END_TEST

/* After a mass removal the few entries left do not keep a leaf each:
 * underfull leaves merge, and memory per extent stays bounded. */
START_TEST(test_extent_map_memory_after_mass_remove)
{
	const uint64_t n = 64 * EMAP_LEAF_MAX, keep = 16;
	struct t_walk w;

	t_count_start();
	for (uint64_t i = 0; i < n; i++)
		t_insert(&map, i * (_i ? 3 : 1)); /* dense, then sparse */
	w = t_check_shape(&map);
	T_ASSERT(w.dense + w.sparse >= 64);
	for (uint64_t i = 0; i < n; i++)
		if (i % keep)
			t_remove(&map, i * (_i ? 3 : 1));
	w = t_check_shape(&map);
	/* 256 entries left: without merges they would keep 64 leaves */
	T_ASSERT_MSG(w.dense + w.sparse <= 24, "%llu leaves for %llu entries",
		     (unsigned long long)(w.dense + w.sparse),
		     (unsigned long long)(n / keep));
	T_ASSERT_MSG(extent_map_bytes(&map) <= 64 * n / keep,
		     "%llu bytes for %llu entries",
		     (unsigned long long)extent_map_bytes(&map),
		     (unsigned long long)(n / keep));
	extent_map_release(&map, NULL, NULL);
	t_assert_empty(&map);
}
END_TEST

/* ---- allocation failures ---------------------------------------- */

/* The map holds exactly the model's indices, with their entries. */
static void t_assert_matches(const struct extent_map *mp, const uint64_t *v,
			     uint64_t n)
{
	struct extent *e;
	uint64_t idx, k = 0;

	extent_for_each(mp, e, idx) {
		struct extent want = t_ext(idx);

		T_ASSERT(k < n);
		T_ASSERT_EQ(idx, v[k]);
		T_ASSERT(t_ext_eq(e, &want));
		k++;
	}
	T_ASSERT_EQ(k, n);
	T_ASSERT_EQ(extent_map_count(mp), n);
}

/*
 * Fail each allocation of each insert in turn: every failure is -ENOMEM,
 * loses no block and leaves the entries and the shape as they were; the
 * same insert then succeeds.  Appends (loop 0) split at the end of every
 * level; random indices (1: sparse, 2: dense) split in the middle.  Then
 * removes with every allocation failing still succeed.
 */
START_TEST(test_extent_map_insert_enomem_changes_nothing)
{
	enum { N = 5000 };
	struct t_model m = { .cap = N };
	uint64_t seed = 0xe0e0 + (uint64_t)_i, failures = 0;
	unsigned max_height = 0;

	m.v = calloc(m.cap, sizeof(m.v[0]));
	T_ASSERT(m.v != NULL);
	t_count_start();
	for (uint64_t op = 0; op < N; op++) {
		uint64_t x;
		struct extent e;
		int r;

		do {
			uint64_t a = t_rand(&seed);

			x = _i == 0 ? op : _i == 1 ? a & MAXI : a % (2 * N);
		} while (t_model_has(&m, x));
		e = t_ext(x);
		for (long fail = 0;; fail++) {
			int64_t blocks = t_live_blocks;

			t_fault_arm(fail);
			r = extent_map_insert(&map, x, &e);
			t_fault_arm(-1);
			if (r == 0)
				break;
			failures++;
			T_ASSERT_MSG(r == -ENOMEM, "insert(%llu) = %d",
				     (unsigned long long)x, r);
			T_ASSERT_EQ(t_live_blocks, blocks);
			T_ASSERT_EQ(extent_map_count(&map), m.n);
			t_assert_hole(&map, x);
			if (op % 97 == 0 || map.height > max_height) {
				t_assert_matches(&map, m.v, m.n);
				t_check_shape(&map);
			}
		}
		t_model_add(&m, x);
		max_height = MAX(max_height, map.height);
	}
	t_check_shape(&map);
	T_ASSERT(max_height >= 3);
	T_ASSERT(failures >= N); /* every insert allocates */

	/* removes need nothing that can fail */
	t_sizes_exact = false;
	t_fail_all = true;
	t_fault_arm(0);
	for (uint64_t i = 0; i < N / 2; i++) {
		uint64_t x = m.v[t_rand(&seed) % m.n];

		t_remove(&map, x);
		t_model_del(&m, x);
		if (i % 101 == 0) {
			t_assert_matches(&map, m.v, m.n);
			t_check_shape(&map);
		}
	}
	t_fault_arm(-1);
	t_fail_all = false;
	t_assert_matches(&map, m.v, m.n);
	while (m.n) {
		uint64_t x = m.v[t_rand(&seed) % m.n];

		t_remove(&map, x);
		t_model_del(&m, x);
	}
	t_assert_empty(&map);
	t_counting = false;
	free(m.v);
}
END_TEST

/* ---- randomized model test -------------------------------------- */

/* The index sets the model test draws from; the test's loop number
 * picks one. */
enum t_dist {
	T_MIXED,     /* all of the below, and out of range */
	T_DENSE,     /* 0..3000: full and nearly full dense leaves */
	T_CLUSTERED, /* short runs at random places below 2^30 */
	T_SPARSE20,  /* anywhere below 2^20 */
	T_SPARSE40,  /* anywhere below 2^40 */
	T_FAR_END,   /* the last 5000 indices and the multiples of 64 there */
	_T_DIST_MAX
};

static uint64_t t_pick_index(uint64_t *seed, const struct t_model *m,
			     enum t_dist dist)
{
	uint64_t r = t_rand(seed);
	uint64_t a = r >> 8;

	if (r % 8 == 6 && m->n) /* an existing one: EEXIST and removals */
		return m->v[a % m->n];
	switch (dist) {
	case T_DENSE:
		return a % 3000;
	case T_CLUSTERED:
		/* 4096 cluster starts, runs of up to 100 */
		return ((((a >> 12) % 4096) * UINT64_C(0x9e3779b9)) &
			((UINT64_C(1) << 30) - 1)) +
		       a % 100;
	case T_SPARSE20:
		return a & ((UINT64_C(1) << 20) - 1);
	case T_SPARSE40:
		return a & ((UINT64_C(1) << 40) - 1);
	case T_FAR_END:
		if (r % 8 == 7)
			return MAXI + 1 + a % 3; /* just outside */
		if (r % 8 == 5)
			return (MAXI & ~UINT64_C(63)) - 64 * (a % 80);
		return MAXI - a % 5000;
	default:
		break;
	}
	switch (r % 8) {
	case 0:
	case 1:
	case 2:
		return a % 300; /* dense: a few leaves */
	case 3:
		/* around a power of 64, both sides */
		return ((UINT64_C(1) << (6 * (1 + a % 9))) + (a >> 8) % 9 - 4) &
		       MAXI;
	case 4:
		return MAXI - a % 200; /* the far end */
	case 5:
	case 6:
		return a & MAXI; /* anywhere */
	default:
		/* just outside the accepted range */
		return MAXI + 1 + a % 3;
	}
}

START_TEST(test_extent_map_model_random)
{
	enum { OPS = 50000 };
	uint64_t seed = UINT64_C(0x5eed0000) + (uint64_t)_i;
	enum t_dist dist = (enum t_dist)(_i % _T_DIST_MAX);
	struct t_model m = { .cap = OPS };
	unsigned max_height = 0;

	m.v = calloc(m.cap, sizeof(m.v[0]));
	T_ASSERT(m.v != NULL);
	for (unsigned op = 0; op < OPS; op++) {
		uint64_t x = t_pick_index(&seed, &m, dist);
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
	/* the run grew the tree to three levels (two for the mixed set,
	 * whose inserts hit present indices more often) */
	ck_assert_uint_ge(max_height, (dist == T_MIXED ? 2u : 3u));
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
	tcase_add_loop_test(tc, test_extent_map_fill_leaves, 0, 2);
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

	tc = tcase_create("memory");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_extent_map_memory_isolated, 0, 3);
	tcase_add_loop_test(tc, test_extent_map_memory_dense, 0, 2);
	tcase_add_loop_test(tc, test_extent_map_memory_after_mass_remove, 0, 2);
	tcase_add_loop_test(tc, test_extent_map_insert_enomem_changes_nothing,
			    0, 3);
	suite_add_tcase(s, tc);

	tc = tcase_create("model");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_extent_map_model_random, 0,
			    2 * _T_DIST_MAX);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return tap_run(extent_map_suite());
}
