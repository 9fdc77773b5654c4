// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extent_map.c -- B+tree of extents.  See extent_map.h for the contract
 * and extent_map_i.h for the block layouts.
 *
 * Changes come in two kinds, so that a failed insert leaves the map as it
 * was and a remove never fails:
 *
 * - insert grows exactly one leaf by one entry.  When the leaf has room
 *   it is realloc()ed to its new size (a failed realloc leaves it as it
 *   was) and rewritten in place.  When it is full, every block the split
 *   needs is allocated first (the two halves, each full ancestor's two
 *   halves, a new root; the first non-full ancestor is realloc()ed one
 *   child larger), and only then is anything written: on -ENOMEM the
 *   fresh blocks are freed and nothing else was touched.
 * - remove rewrites the leaf in place (its contents only shrink), frees
 *   blocks that become empty, shrinks the rest with realloc() (keeping
 *   the larger block if that fails) and merges an underfull block into a
 *   neighbour when the merged block can be had (skipping the merge if
 *   not).
 *
 * A block is rewritten from a copy of its contents unpacked on the stack
 * (at most 64 entries or 33 children), which keeps the two leaf formats
 * and the node format behind a single pack/unpack pair each.
 *
 * Leaves split at multiples of 64 where they can (split_point()), so
 * that their halves can be dense.  Appends (an insert beyond the last key
 * of the rightmost leaf, as a file written from start to end does) split
 * at the new key's run of 64, and a full node on the rightmost path into
 * the old node, unchanged, and a new one holding only the new child, so
 * such files get full, aligned dense leaves and full nodes with evenly
 * spaced separators: the descent through them is arithmetic.
 *
 * Longer than 700 lines for a reason: one B+tree whose insert (with
 * its all-or-nothing split), remove (with merges) and iteration share
 * the block layout helpers of extent_map_i.h; none of them is of use
 * without the others.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "extent_map_i.h"
#include "banned.h"

/* struct emap_path - the nodes from the root down to a leaf's parent */
struct emap_path {
	struct emap_node *node[EMAP_MAX_HEIGHT]; /* node[d] is at depth d */
	unsigned slot[EMAP_MAX_HEIGHT];		 /* child taken in node[d] */
	unsigned depth;				 /* nodes on the path */
	bool rightmost; /* every slot taken was its node's last */
};

/* Without -mpopcnt, __builtin_popcountll() is a libgcc call. */
static inline unsigned popcount64(uint64_t x)
{
	x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
	x = (x & UINT64_C(0x3333333333333333)) +
	    ((x >> 2) & UINT64_C(0x3333333333333333));
	x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
	return (unsigned)((x * UINT64_C(0x0101010101010101)) >> 56);
}

/* Number of the @n sorted keys in @a that are <= @idx.  Branch-free (a
 * conditional move per step), so a random probe costs no mispredicted
 * branch. */
static inline size_t count_le(const uint64_t *a, size_t n, uint64_t idx)
{
	const uint64_t *b = a;

	if (n == 0)
		return 0;
	while (n > 1) {
		size_t half = n / 2;

		b = b[half] <= idx ? b + half : b;
		n -= half;
	}
	return (size_t)(b - a) + (*b <= idx);
}

/* Number of the @n sorted keys in @a that are < @idx. */
static inline size_t count_lt(const uint64_t *a, size_t n, uint64_t idx)
{
	return idx == 0 ? 0 : count_le(a, n, idx - 1);
}

/* The child of @nd whose range holds @idx. */
static inline __attribute__((always_inline)) size_t
node_pick(const struct emap_node *nd, uint64_t idx)
{
	size_t n = nd->h.n;

	if (nd->h.shift != EMAP_SEARCH) {
		uint64_t d = (idx - nd->base) >> nd->h.shift;

		return idx < nd->base ? 0 : d < n ? (size_t)d : n - 1;
	}
	return count_le(emap_node_key(nd) + 1, n - 1, idx);
}

/* Rank of bit @off among the set bits of @bm. */
static inline unsigned bit_rank(uint64_t bm, unsigned off)
{
	/* a run of set bits from bit 0 (a dense stretch of a file) */
	if ((bm & (bm + 1)) == 0)
		return off;
	return popcount64(bm & ((UINT64_C(1) << off) - 1));
}

static inline __attribute__((always_inline)) struct extent *
leaf_find(const void *leaf, uint64_t idx)
{
	const struct emap_hdr *h = leaf;

	if (h->kind == EMAP_DENSE) {
		/* the entry's address follows from the leaf's without
		 * waiting for base and bitmap, which only feed branches */
		const struct emap_dense *l = leaf;
		unsigned off = (unsigned)(idx & 63);

		if ((idx & ~UINT64_C(63)) != l->base ||
		    !((l->bitmap >> off) & 1))
			return NULL;
		return (struct extent *)&l->ext[bit_rank(l->bitmap, off)];
	}
	const struct emap_sparse *l = leaf;
	size_t i = count_lt(l->key, h->n, idx);

	if (i == h->n || l->key[i] != idx)
		return NULL;
	return &emap_sparse_ext(l)[i];
}

/* First entry of @leaf at or after @idx, its key through @ret_idx. */
static struct extent *leaf_next(const void *leaf, uint64_t idx,
				uint64_t *ret_idx)
{
	const struct emap_hdr *h = leaf;

	if (h->kind == EMAP_DENSE) {
		const struct emap_dense *l = leaf;
		uint64_t off = idx > l->base ? idx - l->base : 0;
		uint64_t bm;
		unsigned k;

		if (off >= 64)
			return NULL;
		bm = l->bitmap & (~UINT64_C(0) << off);
		if (!bm)
			return NULL;
		k = (unsigned)__builtin_ctzll(bm);
		*ret_idx = l->base + k;
		return (struct extent *)&l->ext[bit_rank(l->bitmap, k)];
	}
	const struct emap_sparse *l = leaf;
	size_t i = count_lt(l->key, h->n, idx);

	if (i == h->n)
		return NULL;
	*ret_idx = l->key[i];
	return &emap_sparse_ext(l)[i];
}

/* ---- packing ---------------------------------------------------- */

/* Whether the @n sorted keys @k make a dense leaf: one aligned run of
 * 64 indices holds them all. */
static bool keys_dense(const uint64_t *k, size_t n)
{
	return (k[0] >> 6) == (k[n - 1] >> 6);
}

/* Size of the leaf holding the @n sorted keys @k. */
static size_t leaf_size(const uint64_t *k, size_t n)
{
	return keys_dense(k, n) ? emap_dense_size(n) : emap_sparse_size(n);
}

/* Copy @leaf's entries out, in key order.  Returns their number. */
static size_t leaf_unpack(const void *leaf, uint64_t *k, struct extent *e)
{
	const struct emap_hdr *h = leaf;
	size_t n = h->n;

	if (h->kind == EMAP_DENSE) {
		const struct emap_dense *l = leaf;
		uint64_t bm = l->bitmap;

		for (size_t i = 0; bm; i++, bm &= bm - 1)
			k[i] = l->base + (unsigned)__builtin_ctzll(bm);
		memcpy(e, l->ext, n * sizeof(*e));
	} else {
		const struct emap_sparse *l = leaf;

		memcpy(k, l->key, n * sizeof(*k));
		memcpy(e, emap_sparse_ext(l), n * sizeof(*e));
	}
	return n;
}

/* Write @n (1..EMAP_LEAF_MAX) sorted entries into @leaf, whose block
 * holds at least leaf_size(k, n) bytes; hdr.size is left alone. */
static void leaf_pack(void *leaf, const uint64_t *k, const struct extent *e,
		      size_t n)
{
	struct emap_hdr *h = leaf;

	h->n = (uint16_t)n;
	h->shift = 0;
	if (keys_dense(k, n)) {
		struct emap_dense *l = leaf;

		h->kind = EMAP_DENSE;
		l->base = k[0] & ~UINT64_C(63);
		l->bitmap = 0;
		for (size_t i = 0; i < n; i++)
			l->bitmap |= UINT64_C(1) << (k[i] & 63);
		memmove(l->ext, e, n * sizeof(*e));
	} else {
		struct emap_sparse *l = leaf;

		h->kind = EMAP_SPARSE;
		memmove(l->key, k, n * sizeof(*k));
		memmove(emap_sparse_ext(l), e, n * sizeof(*e));
	}
}

/* A new leaf holding @n sorted entries, or NULL. */
static void *leaf_new(const uint64_t *k, const struct extent *e, size_t n)
{
	size_t size = leaf_size(k, n);
	struct emap_hdr *h = malloc(size);

	if (!h)
		return NULL;
	h->size = (uint32_t)size;
	leaf_pack(h, k, e, n);
	return h;
}

/* Set hdr.shift and base: the descent's arithmetic when the separators
 * key[1..n-1] are evenly spaced by a power of two. */
static void node_fix(struct emap_node *nd)
{
	size_t n = nd->h.n;
	const uint64_t *key = emap_node_key(nd);
	uint64_t s;

	nd->h.shift = 0;
	nd->base = 0;
	if (n == 1)
		return; /* the clamp to n - 1 picks child 0 */
	if (n == 2) {
		nd->base = key[1] - 1; /* key[1] > 0: keys below exist */
		return;
	}
	s = key[2] - key[1];
	if ((s & (s - 1)) != 0 || key[1] < s)
		goto search;
	for (size_t j = 2; j + 1 < n; j++)
		if (key[j + 1] - key[j] != s)
			goto search;
	nd->h.shift = (uint8_t)__builtin_ctzll(s);
	nd->base = key[1] - s;
	return;
search:
	nd->h.shift = EMAP_SEARCH;
}

static size_t node_unpack(const struct emap_node *nd, uint64_t *k, void **c)
{
	size_t n = nd->h.n;

	memcpy(k, emap_node_key(nd), n * sizeof(*k));
	memcpy(c, emap_node_child(nd), n * sizeof(*c));
	return n;
}

/* Write @n children into @nd, whose block holds emap_node_size(n). */
static void node_pack(struct emap_node *nd, const uint64_t *k, void *const *c,
		      size_t n)
{
	nd->h.n = (uint16_t)n;
	nd->h.kind = EMAP_NODE;
	memmove(emap_node_key(nd), k, n * sizeof(*k));
	memmove(emap_node_child(nd), c, n * sizeof(*c));
	node_fix(nd);
}

/* ---- descent ---------------------------------------------------- */

/* Walk from the root (non-NULL) to the leaf for @idx, recording the
 * path. */
static void *descend(const struct extent_map *map, uint64_t idx,
		     struct emap_path *pa)
{
	void *p = map->root;

	pa->depth = 0;
	pa->rightmost = true;
	for (unsigned h = map->height; h > 1; h--) {
		struct emap_node *nd = p;
		size_t i = node_pick(nd, idx);

		pa->node[pa->depth] = nd;
		pa->slot[pa->depth++] = (unsigned)i;
		pa->rightmost = pa->rightmost && i + 1 == nd->h.n;
		p = emap_node_child(nd)[i];
	}
	return p;
}

/* Point the parent of the block at depth @d (or the root) at @p, which
 * replaces it (after a realloc that moved it, or a merge). */
static void relink(struct extent_map *map, struct emap_path *pa, unsigned d,
		   void *p)
{
	if (d == 0)
		map->root = p;
	else
		emap_node_child(pa->node[d - 1])[pa->slot[d - 1]] = p;
	if (d < pa->depth)
		pa->node[d] = p;
}

static void count_add(struct extent_map *map, int64_t delta)
{
	/* nr_extents: written under the inode's data lock, but read
	 * without it (data_blocks, the migrator): relaxed atomic stores */
	__atomic_store_n(&map->nr_extents, map->nr_extents + (uint64_t)delta,
			 __ATOMIC_RELAXED);
}

/* Refresh the map's copy of the root's descent (struct extent_map). */
static void cache_root(struct extent_map *map)
{
	const struct emap_node *nd = map->root;

	map->root_shift = EMAP_SEARCH;
	map->root_last = 0;
	if (map->height > 1 && nd->h.shift != EMAP_SEARCH && nd->base == 0) {
		map->root_shift = nd->h.shift;
		map->root_last = nd->h.n - 1u;
	}
}

void extent_map_init(struct extent_map *map)
{
	map->root = NULL;
	map->height = 0;
	map->root_shift = EMAP_SEARCH;
	map->root_last = 0;
	__atomic_store_n(&map->nr_extents, 0, __ATOMIC_RELAXED);
}

static void release_rec(void *p, unsigned height,
			void (*fn)(const struct extent *, uint64_t, void *),
			void *arg)
{
	if (height == 1) {
		uint64_t k[EMAP_LEAF_MAX];
		struct extent e[EMAP_LEAF_MAX];
		size_t n;

		if (fn) {
			n = leaf_unpack(p, k, e);
			for (size_t i = 0; i < n; i++)
				fn(&e[i], k[i], arg);
		}
		free(p);
		return;
	}
	struct emap_node *nd = p;

	for (size_t i = 0; i < nd->h.n; i++)
		release_rec(emap_node_child(nd)[i], height - 1, fn, arg);
	free(nd);
}

void extent_map_release(struct extent_map *map,
			void (*fn)(const struct extent *e, uint64_t idx,
				   void *arg),
			void *arg)
{
	if (map->root)
		release_rec(map->root, map->height, fn, arg);
	extent_map_init(map);
}

struct extent *extent_map_lookup(const struct extent_map *map, uint64_t idx)
{
	const void *p = map->root;
	unsigned h = map->height;

	if (!p)
		return NULL;
	if (h > 1 && map->root_shift != EMAP_SEARCH) {
		/* the root's child from the map alone (cache_root()) */
		uint64_t i = idx >> map->root_shift;

		if (i > map->root_last)
			i = map->root_last;
		p = ((const struct emap_node *)p)->child[i];
		h--;
	}
	for (; h > 1; h--) {
		const struct emap_node *nd = p;

		p = nd->child[node_pick(nd, idx)];
	}
	return leaf_find(p, idx);
}

/* ---- insert ----------------------------------------------------- */

/*
 * Where to split the @n sorted keys @k of an overfull leaf: at a multiple
 * of 64, so that the halves can be dense leaves.  An append (@append: the
 * new key is the last of the rightmost leaf) splits at the new key's run,
 * so a file written from start to end fills whole aligned leaves; any
 * other split at the multiple of 64 nearest the middle, or at the middle
 * when that leaves less than a quarter on one side.
 */
static size_t split_point(const uint64_t *k, size_t n, bool append)
{
	uint64_t b = (append ? k[n - 1] : k[n / 2]) & ~UINT64_C(63);
	size_t i = count_lt(k, n, b);

	if (append && i > 0)
		return i;
	if (i < n / 4)
		i = count_lt(k, n, b + 64);
	if (i < n / 4 || i > n - n / 4)
		i = n / 2;
	return i;
}

/*
 * Insert into the full leaf @leaf at the end of @pa: @k and @e hold its
 * entries plus the new one at @pos (EMAP_LEAF_MAX + 1 in all).
 */
static int insert_split(struct extent_map *map, struct emap_path *pa,
			void *leaf, const uint64_t *k, const struct extent *e,
			size_t pos)
{
	const size_t n = EMAP_LEAF_MAX + 1;
	/* blocks allocated for the split: halves per level, a new root */
	void *fresh[2 * EMAP_MAX_HEIGHT + 3];
	size_t nfresh = 0;
	void *old[EMAP_MAX_HEIGHT + 1]; /* blocks the split replaces */
	size_t nold = 0;
	struct emap_node *grown = NULL; /* the ancestor that takes a child */
	void *left, *right, *newroot = NULL;
	uint64_t sep;
	size_t nl;
	int d;

	nl = split_point(k, n, pa->rightmost && pos == n - 1);

	/* reserve: nothing in the tree changes until every block is had */
	left = leaf;
	if (nl != n - 1 || pos != n - 1) {
		left = malloc(leaf_size(k, nl));
		if (!left)
			return -ENOMEM;
		fresh[nfresh++] = left;
	}
	right = malloc(leaf_size(k + nl, n - nl));
	if (!right)
		goto err_free;
	fresh[nfresh++] = right;
	for (d = (int)pa->depth - 1; d >= 0; d--) {
		struct emap_node *nd = pa->node[d];
		size_t want = emap_node_size(nd->h.n + 1u);

		if (nd->h.n < EMAP_NODE_MAX) {
			if (want > nd->h.size) {
				struct emap_node *p = realloc(nd, want);

				if (!p)
					goto err_free;
				p->h.size = (uint32_t)want;
				relink(map, pa, (unsigned)d, p);
			}
			grown = pa->node[d];
			break;
		}
		/* full: two halves (an append keeps the left one) */
		bool append = pa->rightmost;
		size_t hl = append ? EMAP_NODE_MAX : (EMAP_NODE_MAX + 1) / 2;

		if (!append) {
			void *p = malloc(emap_node_size(hl));

			if (!p)
				goto err_free;
			fresh[nfresh++] = p;
		}
		void *p = malloc(emap_node_size(EMAP_NODE_MAX + 1 - hl));

		if (!p)
			goto err_free;
		fresh[nfresh++] = p;
	}
	if (d < 0) {
		if (map->height >= EMAP_MAX_HEIGHT)
			goto err_free; /* cannot happen: see EMAP_MAX_HEIGHT */
		newroot = malloc(emap_node_size(2));
		if (!newroot)
			goto err_free;
	}

	/* commit: fill the reserved blocks bottom up */
	size_t f = 0;

	if (left != leaf) {
		f++;
		((struct emap_hdr *)left)->size = (uint32_t)leaf_size(k, nl);
		leaf_pack(left, k, e, nl);
		old[nold++] = leaf;
	}
	((struct emap_hdr *)right)->size = (uint32_t)leaf_size(k + nl, n - nl);
	leaf_pack(right, k + nl, e + nl, n - nl);
	f++;
	sep = k[nl];
	for (d = (int)pa->depth - 1; d >= 0; d--) {
		struct emap_node *nd = pa->node[d];
		uint64_t nk[EMAP_NODE_MAX + 1];
		void *nc[EMAP_NODE_MAX + 1];
		size_t s = pa->slot[d], m = node_unpack(nd, nk, nc);

		nc[s] = left;
		memmove(&nk[s + 2], &nk[s + 1], (m - s - 1) * sizeof(nk[0]));
		memmove(&nc[s + 2], &nc[s + 1], (m - s - 1) * sizeof(nc[0]));
		nk[s + 1] = sep;
		nc[s + 1] = right;
		m++;
		if (nd == grown) {
			node_pack(nd, nk, nc, m);
			break;
		}
		/* split, as reserved above */
		bool append = pa->rightmost;
		size_t hl = append ? EMAP_NODE_MAX : (EMAP_NODE_MAX + 1) / 2;
		struct emap_node *pl = nd, *pr;

		if (!append) {
			pl = fresh[f++];
			pl->h.size = (uint32_t)emap_node_size(hl);
			old[nold++] = nd;
		}
		pr = fresh[f++];
		pr->h.size = (uint32_t)emap_node_size(m - hl);
		node_pack(pl, nk, nc, hl);
		node_pack(pr, nk + hl, nc + hl, m - hl);
		left = pl;
		right = pr;
		sep = nk[hl];
	}
	if (d < 0) {
		uint64_t nk[2] = { 0, sep };
		void *nc[2] = { left, right };
		struct emap_node *r = newroot;

		r->h.size = (uint32_t)emap_node_size(2);
		node_pack(r, nk, nc, 2);
		map->root = r;
		map->height++;
	}
	for (size_t i = 0; i < nold; i++)
		free(old[i]);
	cache_root(map);
	count_add(map, 1);
	return 0;

err_free:
	while (nfresh > 0)
		free(fresh[--nfresh]);
	return -ENOMEM;
}

int extent_map_insert(struct extent_map *map, uint64_t idx,
		      const struct extent *e)
{
	uint64_t k[EMAP_LEAF_MAX + 1];
	struct extent x[EMAP_LEAF_MAX + 1];
	struct emap_path pa;
	struct emap_hdr *leaf;
	size_t n, pos, size;

	if (idx > EXTENT_MAP_MAX_INDEX || e->tier == EXTENT_TIER_NONE)
		return -EINVAL;
	if (!map->root) {
		map->root = leaf_new(&idx, e, 1);
		if (!map->root)
			return -ENOMEM;
		map->height = 1;
		cache_root(map);
		count_add(map, 1);
		return 0;
	}
	leaf = descend(map, idx, &pa);
	if (leaf_find(leaf, idx))
		return -EEXIST;
	n = leaf_unpack(leaf, k, x);
	pos = count_lt(k, n, idx);
	memmove(&k[pos + 1], &k[pos], (n - pos) * sizeof(k[0]));
	memmove(&x[pos + 1], &x[pos], (n - pos) * sizeof(x[0]));
	k[pos] = idx;
	x[pos] = *e;
	n++;
	if (n > EMAP_LEAF_MAX)
		return insert_split(map, &pa, leaf, k, x, pos);
	size = leaf_size(k, n);
	if (size > leaf->size) {
		struct emap_hdr *p = realloc(leaf, size);

		if (!p)
			return -ENOMEM;
		p->size = (uint32_t)size;
		relink(map, &pa, pa.depth, p);
		leaf = p;
	}
	leaf_pack(leaf, k, x, n);
	count_add(map, 1);
	return 0;
}

/* ---- remove ----------------------------------------------------- */

/*
 * Shrink the block @blk at depth @d of @pa to @want bytes when that gives
 * memory back.  Returns the block, moved or not; when realloc() fails it
 * stays as it was, which is still valid.
 */
static void *shrink_block(struct extent_map *map, struct emap_path *pa,
			  unsigned d, void *blk, size_t want)
{
	struct emap_hdr *h = blk;

	if (emap_footprint(want) >= emap_footprint(h->size))
		return blk;
	h = realloc(blk, want);
	if (!h)
		return blk;
	h->size = (uint32_t)want;
	relink(map, pa, d, h);
	return h;
}

/*
 * Merge the block @blk at depth @d of @pa (a leaf at depth pa->depth)
 * into a neighbour under the same parent when it is underfull and the two
 * fit in one; then see to the parent the same way.  Skipped when the
 * merged block cannot be had.
 */
static void merge(struct extent_map *map, struct emap_path *pa, unsigned d,
		  void *blk)
{
	const bool is_leaf = d == pa->depth;
	const size_t low = is_leaf ? EMAP_LEAF_MERGE : EMAP_NODE_MERGE;
	const size_t cap = is_leaf ? EMAP_LEAF_MERGE_MAX : EMAP_NODE_MERGE_MAX;
	struct emap_node *parent;
	struct emap_hdr *l, *r, *p;
	size_t s, sl, nb, t, size;
	void **pc;

	if (d == 0 || ((struct emap_hdr *)blk)->n >= low)
		return;
	parent = pa->node[d - 1];
	s = pa->slot[d - 1];
	pc = emap_node_child(parent);
	nb = ((struct emap_hdr *)blk)->n;
	/* the smaller neighbour that fits */
	sl = SIZE_MAX;
	if (s > 0 && nb + ((struct emap_hdr *)pc[s - 1])->n <= cap)
		sl = s - 1;
	if (s + 1 < parent->h.n &&
	    nb + ((struct emap_hdr *)pc[s + 1])->n <= cap &&
	    (sl == SIZE_MAX || ((struct emap_hdr *)pc[s + 1])->n <
				       ((struct emap_hdr *)pc[s - 1])->n))
		sl = s;
	if (sl == SIZE_MAX)
		return;
	l = pc[sl];
	r = pc[sl + 1];
	if (is_leaf) {
		uint64_t k[EMAP_LEAF_MAX];
		struct extent e[EMAP_LEAF_MAX];

		t = leaf_unpack(l, k, e);
		t += leaf_unpack(r, k + t, e + t);
		size = leaf_size(k, t);
		p = size > l->size ? realloc(l, size) : l;
		if (!p)
			return;
		if (size > p->size)
			p->size = (uint32_t)size;
		leaf_pack(p, k, e, t);
	} else {
		uint64_t k[EMAP_NODE_MAX];
		void *c[EMAP_NODE_MAX];

		t = node_unpack((struct emap_node *)l, k, c);
		node_unpack((struct emap_node *)r, k + t, c + t);
		/* the lower bound of r's range */
		k[t] = emap_node_key(parent)[sl + 1];
		t += r->n;
		size = emap_node_size(t);
		p = size > l->size ? realloc(l, size) : l;
		if (!p)
			return;
		if (size > p->size)
			p->size = (uint32_t)size;
		node_pack((struct emap_node *)p, k, c, t);
	}
	free(r);

	/* the parent loses child sl + 1 and points child sl at p */
	{
		uint64_t k[EMAP_NODE_MAX];
		void *c[EMAP_NODE_MAX];
		size_t m = node_unpack(parent, k, c);

		c[sl] = p;
		memmove(&k[sl + 1], &k[sl + 2], (m - sl - 2) * sizeof(k[0]));
		memmove(&c[sl + 1], &c[sl + 2], (m - sl - 2) * sizeof(c[0]));
		node_pack(parent, k, c, m - 1);
		parent = shrink_block(map, pa, d - 1, parent,
				      emap_node_size(m - 1));
	}
	merge(map, pa, d - 1, parent);
}

/* The block at depth @d of @pa was freed: drop it from its parent, and
 * the parent too when it was its only child. */
static void drop_block(struct extent_map *map, struct emap_path *pa, unsigned d)
{
	uint64_t k[EMAP_NODE_MAX];
	void *c[EMAP_NODE_MAX];
	struct emap_node *nd;
	size_t s, m;

	if (d == 0) {
		map->root = NULL;
		map->height = 0;
		return;
	}
	nd = pa->node[d - 1];
	s = pa->slot[d - 1];
	if (nd->h.n == 1) {
		free(nd);
		drop_block(map, pa, d - 1);
		return;
	}
	m = node_unpack(nd, k, c);
	memmove(&k[s], &k[s + 1], (m - s - 1) * sizeof(k[0]));
	memmove(&c[s], &c[s + 1], (m - s - 1) * sizeof(c[0]));
	node_pack(nd, k, c, m - 1);
	nd = shrink_block(map, pa, d - 1, nd, emap_node_size(m - 1));
	merge(map, pa, d - 1, nd);
}

/* A root node with a single child gives way to that child. */
static void collapse(struct extent_map *map)
{
	while (map->height > 1) {
		struct emap_node *nd = map->root;

		if (nd->h.n != 1)
			break;
		map->root = emap_node_child(nd)[0];
		map->height--;
		free(nd);
	}
}

int extent_map_remove(struct extent_map *map, uint64_t idx,
		      struct extent *ret_old)
{
	uint64_t k[EMAP_LEAF_MAX];
	struct extent x[EMAP_LEAF_MAX];
	struct emap_path pa;
	struct extent *e;
	void *leaf;
	size_t n, pos;

	if (!map->root || idx > EXTENT_MAP_MAX_INDEX)
		return -ENOENT;
	leaf = descend(map, idx, &pa);
	e = leaf_find(leaf, idx);
	if (!e)
		return -ENOENT;
	if (ret_old)
		*ret_old = *e;
	n = leaf_unpack(leaf, k, x);
	pos = count_lt(k, n, idx);
	if (pos >= n)
		return -ENOENT; /* cannot happen: leaf_find() found it */
	memmove(&k[pos], &k[pos + 1], (n - pos - 1) * sizeof(k[0]));
	memmove(&x[pos], &x[pos + 1], (n - pos - 1) * sizeof(x[0]));
	n--;
	if (n == 0) {
		free(leaf);
		drop_block(map, &pa, pa.depth);
	} else {
		/* in place: a leaf's size only shrinks with its contents */
		leaf_pack(leaf, k, x, n);
		leaf = shrink_block(map, &pa, pa.depth, leaf, leaf_size(k, n));
		merge(map, &pa, pa.depth, leaf);
	}
	collapse(map);
	cache_root(map);
	count_add(map, -1);
	return 0;
}

/* ---- next, bytes ------------------------------------------------ */

struct extent *extent_map_next(const struct extent_map *map, uint64_t idx,
			       uint64_t *ret_idx)
{
	struct emap_path pa;
	struct extent *e;
	void *p;

	if (!map->root || idx > EXTENT_MAP_MAX_INDEX)
		return NULL;
	p = descend(map, idx, &pa);
	e = leaf_next(p, idx, ret_idx);
	if (e)
		return e;
	/* the first leaf to the right: up to a node with a next child,
	 * then down its leftmost path */
	for (unsigned d = pa.depth; d-- > 0;) {
		struct emap_node *nd = pa.node[d];

		if (pa.slot[d] + 1u >= nd->h.n)
			continue;
		p = emap_node_child(nd)[pa.slot[d] + 1];
		for (unsigned h = pa.depth - d; h > 1; h--)
			p = emap_node_child(p)[0];
		return leaf_next(p, 0, ret_idx);
	}
	return NULL;
}

static uint64_t bytes_rec(const void *p, unsigned height)
{
	const struct emap_hdr *h = p;
	uint64_t b = emap_footprint(h->size);

	if (height > 1)
		for (size_t i = 0; i < h->n; i++)
			b += bytes_rec(emap_node_child(p)[i], height - 1);
	return b;
}

uint64_t extent_map_bytes(const struct extent_map *map)
{
	return map->root ? bytes_rec(map->root, map->height) : 0;
}
