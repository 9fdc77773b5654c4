/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * extent_map_i.h -- block layout of the extent map's B+tree, shared only
 * with extent_map.c and its unit test.
 *
 * Every block starts with a struct emap_hdr; what follows depends on its
 * kind.  Blocks are sized to their contents (see emap_*_size()), so a
 * block's size follows its entry count, not a fixed fan-out:
 *
 *   EMAP_DENSE leaf:  hdr | base | bitmap | ext[n]
 *	every key lies in the aligned run [base, base + 64), base a
 *	multiple of 64; bit k of bitmap says whether base + k is present,
 *	and its entry is ext[number of set bits below k] (ext[k] when the
 *	set bits are one run from bit 0, as in a full leaf).  16 B per
 *	entry: what a stretch of consecutive extents costs.
 *   EMAP_SPARSE leaf: hdr | key[n] | ext[n]
 *	keys sorted ascending, anywhere in 0..EXTENT_MAP_MAX_INDEX; used
 *	when the keys are not in one aligned run of 64.  24 B per entry.
 *   EMAP_NODE:	       hdr | base | child[n] | key[n]
 *	child[j] holds the keys in [key[j], key[j + 1]); key[0] is not
 *	used for the descent (child 0 takes everything below key[1]).
 *	When the separators key[1..n-1] are evenly spaced by a power of
 *	two 2^shift (as after sequential writes), hdr.shift says so and
 *	the descent computes the child as (idx - base) >> shift instead
 *	of searching; otherwise hdr.shift is EMAP_SEARCH and the descent
 *	binary-searches key[1..n-1].  When the root node's descent is
 *	arithmetic from base 0, struct extent_map keeps a copy of its
 *	shift and child count, so that a lookup computes the root's child
 *	without waiting for the root's header.
 *
 * Invariants (checked by the unit test): all leaves are at depth
 * height - 1; no block is empty; a leaf holds 1..EMAP_LEAF_MAX entries
 * and is EMAP_DENSE exactly when its keys lie in one aligned run of 64;
 * a node holds
 * 1..EMAP_NODE_MAX children, the root at least 2; keys increase
 * left to right across the whole tree; hdr.size is the block's size.
 */
#ifndef TIERFS_EXTENT_MAP_I_H
#define TIERFS_EXTENT_MAP_I_H

#include <stddef.h>

#include "extent_map.h"

#define EMAP_LEAF_MAX 64   /* entries in a leaf; also a dense leaf's span */
#define EMAP_NODE_MAX 32   /* children of an interior node */
#define EMAP_MAX_HEIGHT 24 /* more than 2^60 entries could need */

/*
 * A leaf with fewer than EMAP_LEAF_MERGE entries after a removal is
 * merged with a neighbour when the two fit in EMAP_LEAF_MERGE_MAX; nodes
 * the same with EMAP_NODE_MERGE and EMAP_NODE_MERGE_MAX.  The slack
 * below the maximum keeps a merge from being undone by the next insert.
 */
#define EMAP_LEAF_MERGE (EMAP_LEAF_MAX / 4)
#define EMAP_LEAF_MERGE_MAX (EMAP_LEAF_MAX * 3 / 4)
#define EMAP_NODE_MERGE (EMAP_NODE_MAX / 4)
#define EMAP_NODE_MERGE_MAX (EMAP_NODE_MAX * 3 / 4)

enum emap_kind { EMAP_DENSE, EMAP_SPARSE, EMAP_NODE };

#define EMAP_SEARCH 0xff /* hdr.shift of a node whose children are searched */

struct emap_hdr {
	uint16_t n;    /* entries (leaf) or children (node) */
	uint8_t kind;  /* enum emap_kind */
	uint8_t shift; /* EMAP_NODE: stride of the separators, or EMAP_SEARCH */
	uint32_t size; /* bytes of this block (at least emap_*_size(n)) */
};

struct emap_dense {
	struct emap_hdr h;
	uint64_t base;	 /* multiple of 64: the run holding the keys */
	uint64_t bitmap; /* bit k: base + k is present */
	struct extent ext[];
};

struct emap_sparse {
	struct emap_hdr h;
	uint64_t key[]; /* h.n keys, then h.n struct extent */
};

struct emap_node {
	struct emap_hdr h;
	uint64_t base; /* with h.shift != EMAP_SEARCH: key[1] - 2^shift */
	void *child[]; /* h.n child pointers, then h.n keys */
};

static inline size_t emap_dense_size(size_t n)
{
	return sizeof(struct emap_dense) + n * sizeof(struct extent);
}

static inline size_t emap_sparse_size(size_t n)
{
	return sizeof(struct emap_sparse) +
	       n * (sizeof(uint64_t) + sizeof(struct extent));
}

static inline size_t emap_node_size(size_t n)
{
	return sizeof(struct emap_node) +
	       n * (sizeof(uint64_t) + sizeof(void *));
}

static inline struct extent *emap_sparse_ext(const struct emap_sparse *l)
{
	return (struct extent *)(uintptr_t)(l->key + l->h.n);
}

static inline void **emap_node_child(const struct emap_node *nd)
{
	return (void **)(uintptr_t)nd->child;
}

static inline uint64_t *emap_node_key(const struct emap_node *nd)
{
	return (uint64_t *)(uintptr_t)(nd->child + nd->h.n);
}

/*
 * The bytes a block of @size takes from glibc's malloc: its size plus an
 * 8-byte header, rounded up to 16, at least 32.  extent_map_bytes() sums
 * this over the map's blocks.
 */
static inline size_t emap_footprint(size_t size)
{
	size_t c = (size + 8 + 15) & ~(size_t)15;

	return c < 32 ? 32 : c;
}

#endif /* TIERFS_EXTENT_MAP_I_H */
