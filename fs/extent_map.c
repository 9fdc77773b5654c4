// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * extent_map.c -- radix tree of extents.  See extent_map.h.
 *
 * Heights: an empty map has height 0 and no root.  Height 1 means the
 * root is a leaf for indices 0..63; each extra level multiplies the range
 * by 64.  The tree only grows upwards (a new root above the old one) when
 * an index beyond the current range is inserted, and shrinks back when
 * the root is left with only child 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "extent_map_i.h"
#include "banned.h"

static unsigned shift_of(unsigned height)
{
	/* bits of index below the level whose nodes have this height */
	return (height - 1) * EMAP_BITS;
}

static uint64_t range_of(unsigned height)
{
	return height >= EMAP_MAX_HEIGHT ? EXTENT_MAP_MAX_INDEX + 1
					 : UINT64_C(1) << (height * EMAP_BITS);
}

static struct emap_leaf *leaf_new(void)
{
	struct emap_leaf *l = malloc(sizeof(*l));

	if (!l)
		return NULL;
	for (unsigned i = 0; i < EMAP_FANOUT; i++) {
		memset(&l->ext[i], 0, sizeof(l->ext[i]));
		l->ext[i].tier = EXTENT_TIER_NONE;
	}
	l->count = 0;
	return l;
}

void extent_map_init(struct extent_map *map)
{
	map->root = NULL;
	map->height = 0;
	/* nr_extents: written under the inode's data lock, but read
	 * without it (data_blocks, the migrator): relaxed atomic stores */
	__atomic_store_n(&map->nr_extents, 0, __ATOMIC_RELAXED);
}

static void release_rec(void *p, unsigned height, uint64_t base,
			void (*fn)(const struct extent *, uint64_t, void *),
			void *arg)
{
	if (!p)
		return;
	if (height == 1) {
		struct emap_leaf *l = p;

		for (unsigned i = 0; fn && i < EMAP_FANOUT; i++)
			if (l->ext[i].tier != EXTENT_TIER_NONE)
				fn(&l->ext[i], base + i, arg);
		free(l);
		return;
	}
	struct emap_node *n = p;

	for (unsigned i = 0; i < EMAP_FANOUT; i++)
		release_rec(n->child[i], height - 1,
			    base + ((uint64_t)i << shift_of(height)), fn, arg);
	free(n);
}

void extent_map_release(struct extent_map *map,
			void (*fn)(const struct extent *e, uint64_t idx,
				   void *arg),
			void *arg)
{
	release_rec(map->root, map->height, 0, fn, arg);
	extent_map_init(map);
}

struct extent *extent_map_lookup(const struct extent_map *map, uint64_t idx)
{
	void *p = map->root;
	unsigned h = map->height;
	struct emap_leaf *l;

	if (!p || idx >= range_of(h))
		return NULL;
	for (; h > 1; h--) {
		struct emap_node *n = p;

		p = n->child[(idx >> shift_of(h)) & EMAP_MASK];
		if (!p)
			return NULL;
	}
	l = p;
	if (l->ext[idx & EMAP_MASK].tier == EXTENT_TIER_NONE)
		return NULL;
	return &l->ext[idx & EMAP_MASK];
}

/* Grow the tree until @idx is in range.  Returns 0 or -ENOMEM; on
 * failure the tree may be taller but is still valid. */
static int grow(struct extent_map *map, uint64_t idx)
{
	if (map->height == 0) {
		/* start at the height @idx needs: growing from a leaf would
		 * leave an empty chain under child 0 that nothing frees */
		unsigned h = 1;

		while (idx >= range_of(h))
			h++;
		map->root = h == 1 ? (void *)leaf_new()
				   : calloc(1, sizeof(struct emap_node));
		if (!map->root)
			return -ENOMEM;
		map->height = h;
		return 0;
	}
	while (idx >= range_of(map->height)) {
		struct emap_node *n = calloc(1, sizeof(*n));

		if (!n)
			return -ENOMEM;
		n->child[0] = map->root;
		n->count = 1;
		map->root = n;
		map->height++;
	}
	return 0;
}

/* Drop empty roots and roots with only child 0. */
static void shrink(struct extent_map *map)
{
	while (map->height > 1) {
		struct emap_node *n = map->root;

		if (n->count == 0) {
			free(n);
			extent_map_init(map);
			return;
		}
		if (n->count != 1 || !n->child[0])
			break;
		map->root = n->child[0];
		map->height--;
		free(n);
	}
	if (map->height == 1 && ((struct emap_leaf *)map->root)->count == 0) {
		free(map->root);
		map->root = NULL;
		map->height = 0;
	}
}

int extent_map_insert(struct extent_map *map, uint64_t idx,
		      const struct extent *e)
{
	struct emap_node *path[EMAP_MAX_HEIGHT];
	unsigned slots[EMAP_MAX_HEIGHT];
	unsigned depth = 0;
	struct emap_leaf *l;
	void *p;
	int r;

	if (idx > EXTENT_MAP_MAX_INDEX || e->tier == EXTENT_TIER_NONE)
		return -EINVAL;
	r = grow(map, idx);
	if (r < 0)
		goto err_shrink;
	p = map->root;
	for (unsigned h = map->height; h > 1; h--) {
		struct emap_node *n = p;
		unsigned i = (idx >> shift_of(h)) & EMAP_MASK;

		if (!n->child[i]) {
			n->child[i] = h == 2 ? (void *)leaf_new()
					     : calloc(1, sizeof(*n));
			if (!n->child[i]) {
				r = -ENOMEM;
				goto err_prune;
			}
			n->count++;
		}
		path[depth] = n;
		slots[depth++] = i;
		p = n->child[i];
	}
	l = p;
	if (l->ext[idx & EMAP_MASK].tier != EXTENT_TIER_NONE) {
		r = -EEXIST;
		goto err_prune;
	}
	l->ext[idx & EMAP_MASK] = *e;
	l->count++;
	__atomic_store_n(&map->nr_extents, map->nr_extents + 1,
			 __ATOMIC_RELAXED);
	return 0;

err_prune:
	/* free the empty nodes this call created, bottom up; path[d] has
	 * height map->height - d, so its child is a leaf at d == height-2 */
	while (depth > 0) {
		struct emap_node *n = path[--depth];
		void *c = n->child[slots[depth]];
		unsigned cnt;

		if (!c)
			continue;
		if (depth + 2 == map->height)
			cnt = ((struct emap_leaf *)c)->count;
		else
			cnt = ((struct emap_node *)c)->count;
		if (cnt)
			break;
		free(c);
		n->child[slots[depth]] = NULL;
		n->count--;
	}
err_shrink:
	shrink(map);
	return r;
}

int extent_map_remove(struct extent_map *map, uint64_t idx,
		      struct extent *ret_old)
{
	struct emap_node *path[EMAP_MAX_HEIGHT];
	unsigned slots[EMAP_MAX_HEIGHT];
	unsigned depth = 0;
	struct emap_leaf *l;
	void *p = map->root;
	struct extent *e;

	if (!p || idx >= range_of(map->height))
		return -ENOENT;
	for (unsigned h = map->height; h > 1; h--) {
		struct emap_node *n = p;
		unsigned i = (idx >> shift_of(h)) & EMAP_MASK;

		if (!n->child[i])
			return -ENOENT;
		path[depth] = n;
		slots[depth++] = i;
		p = n->child[i];
	}
	l = p;
	e = &l->ext[idx & EMAP_MASK];
	if (e->tier == EXTENT_TIER_NONE)
		return -ENOENT;
	if (ret_old)
		*ret_old = *e;
	memset(e, 0, sizeof(*e));
	e->tier = EXTENT_TIER_NONE;
	l->count--;
	__atomic_store_n(&map->nr_extents, map->nr_extents - 1,
			 __ATOMIC_RELAXED);

	/* free emptied nodes bottom up: the leaf, then its ancestors */
	if (l->count == 0 && depth > 0) {
		free(l);
		while (depth > 0) {
			struct emap_node *n = path[--depth];

			n->child[slots[depth]] = NULL;
			if (--n->count > 0 || depth == 0)
				break;
			free(n);
		}
	}
	shrink(map);
	return 0;
}

static struct extent *next_rec(void *p, unsigned height, uint64_t base,
			       uint64_t idx, uint64_t *ret_idx)
{
	if (height == 1) {
		struct emap_leaf *l = p;
		unsigned start = idx > base ? (unsigned)(idx - base) : 0;

		for (unsigned i = start; i < EMAP_FANOUT; i++) {
			if (l->ext[i].tier != EXTENT_TIER_NONE) {
				*ret_idx = base + i;
				return &l->ext[i];
			}
		}
		return NULL;
	}
	struct emap_node *n = p;
	unsigned s = shift_of(height);
	unsigned start = idx > base ? (unsigned)((idx - base) >> s) : 0;

	for (unsigned i = start; i < EMAP_FANOUT; i++) {
		struct extent *e;

		if (!n->child[i])
			continue;
		e = next_rec(n->child[i], height - 1,
			     base + ((uint64_t)i << s), idx, ret_idx);
		if (e)
			return e;
	}
	return NULL;
}

struct extent *extent_map_next(const struct extent_map *map, uint64_t idx,
			       uint64_t *ret_idx)
{
	if (!map->root || idx >= range_of(map->height))
		return NULL;
	return next_rec(map->root, map->height, 0, idx, ret_idx);
}
