/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * extent_map.h -- per-file sparse map from extent index (file offset /
 * extent size) to the extent's location on a tier.
 *
 * A hole is the absence of an entry: it costs no tier space and reads as
 * zeros.  The map is a B+tree keyed by the 64-bit index whose blocks are
 * sized to what they hold, so its memory follows the number of extents
 * present, not the file size or how the indices are spread:
 *
 * - a leaf holds up to 64 entries in index order.  When its indices lie
 *   in one aligned run of 64 it stores the run's start and a 64-bit
 *   presence bitmap (16 B per entry: a dense file costs about what its
 *   entries do, 16.8 B per extent all told for a 1 GiB file of 1 MiB
 *   extents); otherwise it stores each index beside its entry (24 B per
 *   entry).
 * - an interior node holds up to 32 children and their separating
 *   indices (16 B per child, one node for every 16-32 leaves).
 * - 100,000 isolated extents at random indices below 2^20 or 2^40 cost
 *   about 25 B each, interior nodes and malloc overhead included (see
 *   extent_map_bytes()).  A lone extent in a small file costs one 48 B
 *   block.
 *
 * Lookups descend O(log n) levels, binary-searching each node, except in
 * nodes whose separators are evenly spaced by a power of two (a file
 * written from start to end): there the child is computed, and for the
 * root from a copy the map keeps, so a dense file of up to 2048 extents
 * costs what a two-level radix tree does.  In a dense leaf the entry is
 * found through the bitmap.  Removing entries frees emptied blocks, gives
 * back the memory of shrunk ones and merges underfull neighbours; an
 * empty map allocates nothing.  The layouts are in extent_map_i.h.
 *
 * Not thread-safe: callers hold the owning inode's data lock (shared for
 * lookups, exclusive for changes).
 */
#ifndef TIERFS_EXTENT_MAP_H
#define TIERFS_EXTENT_MAP_H

#include <stdbool.h>
#include <stdint.h>

#define EXTENT_TIER_NONE 0xff /* entry is a hole */

/* struct extent flags */
#define EXTENT_F_NEW 0x80 /* transient: allocated by a running fallocate */
/* put on its tier by an admin (tierctl migrate, ctl_action.c): a lending
 * tier keeps it past the lend age (migrate.c); any later move clears it */
#define EXTENT_F_PLACED 0x40

/*
 * struct extent - where one extent lives.  16 bytes; the map stores these
 * inline in its leaves, so a pointer to one moves when its leaf changes.
 * @slot:  slot number on the tier
 * @tier:  index of the tier in the mount's stack, or EXTENT_TIER_NONE
 * @flags: EXTENT_F_* bits
 * @heat:  access heat, for the migrator (decays over time; see heat.h)
 * @stamp: tick of the last access (heat.h)
 * @wgen:  the owning inode's write generation at the last change of this
 *         extent's data; the migrator copies an extent without blocking
 *         writers and installs the copy only if @wgen did not move
 *
 * @heat and @stamp are updated by readers holding the inode's data lock
 * shared, with relaxed atomics (a lost update only blurs a statistic);
 * every other field changes only under the data lock held exclusive.
 */
struct extent {
	uint32_t slot;
	uint8_t tier;
	uint8_t flags;
	uint16_t heat;
	uint32_t stamp;
	uint32_t wgen;
};

struct extent_map {
	void *root;	 /* a leaf when height == 1, else a node */
	uint16_t height; /* 0: empty (root NULL); levels of the tree */
	/*
	 * A copy of the root node's descent when it is arithmetic from 0
	 * (child min(idx >> root_shift, root_last)), else root_shift is
	 * 0xff: a lookup then finds the root's child without waiting for
	 * the root's header.  Kept by every change to the map.
	 */
	uint8_t root_shift;
	uint32_t root_last;
	uint64_t nr_extents; /* entries present */
};

/* Largest extent index the map accepts. */
#define EXTENT_MAP_MAX_INDEX ((UINT64_C(1) << 60) - 1)

void extent_map_init(struct extent_map *map);

/**
 * extent_map_release() - free all nodes; @fn, when non-NULL, is called
 * for every entry first (to give its tier slot back).  The map is empty
 * afterwards and may be reused.
 */
void extent_map_release(struct extent_map *map,
			void (*fn)(const struct extent *e, uint64_t idx,
				   void *arg),
			void *arg);

/**
 * extent_map_lookup() - the entry at @idx
 * Return: a pointer into @map (borrowed; valid until the map changes), or
 * NULL for a hole.  Callers may update the entry's fields in place.
 */
struct extent *extent_map_lookup(const struct extent_map *map, uint64_t idx);

/**
 * extent_map_insert() - set the entry at @idx, which must be a hole
 * Return: 0; -EEXIST when @idx is present; -EINVAL for @idx beyond
 * EXTENT_MAP_MAX_INDEX or an @e that is itself a hole; -ENOMEM.  On
 * failure the map is unchanged.
 */
int extent_map_insert(struct extent_map *map, uint64_t idx,
		      const struct extent *e);

/**
 * extent_map_remove() - drop the entry at @idx, copying it to @ret_old
 * (may be NULL).
 * Return: 0, or -ENOENT for a hole (then @ret_old is not written).
 */
int extent_map_remove(struct extent_map *map, uint64_t idx,
		      struct extent *ret_old);

/**
 * extent_map_next() - first present entry at or after @idx
 * @ret_idx: on success, its index
 * Return: the entry (borrowed as for lookup), or NULL when none is left.
 */
struct extent *extent_map_next(const struct extent_map *map, uint64_t idx,
			       uint64_t *ret_idx);

/**
 * extent_map_bytes() - memory the map holds, for tests and benchmarks:
 * the size of every block it allocated, plus what glibc's malloc adds to
 * each (an 8-byte header, rounding to 16).  Walks the tree: O(n / 32).
 * Return: the bytes; 0 for an empty map.
 */
uint64_t extent_map_bytes(const struct extent_map *map);

static inline uint64_t extent_map_count(const struct extent_map *map)
{
	return map->nr_extents;
}

static inline bool extent_map_is_empty(const struct extent_map *map)
{
	return map->nr_extents == 0;
}

/* Iterate over present entries in index order; do not change the map
 * inside the loop (collect indices first, or restart with next). */
#define extent_for_each(map, e, idx)                              \
	for ((e) = extent_map_next((map), 0, &(idx)); (e);        \
	     (e) = ((idx) == EXTENT_MAP_MAX_INDEX ? NULL :        \
		    extent_map_next((map), (idx) + 1, &(idx))))

#endif /* TIERFS_EXTENT_MAP_H */
