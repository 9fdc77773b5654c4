/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * extent_map_i.h -- node layout of the extent map radix tree, shared
 * only with extent_map.c and its unit test.
 */
#ifndef TIERFS_EXTENT_MAP_I_H
#define TIERFS_EXTENT_MAP_I_H

#include "extent_map.h"

#define EMAP_BITS 6
#define EMAP_FANOUT (1u << EMAP_BITS)
#define EMAP_MASK (EMAP_FANOUT - 1)
#define EMAP_MAX_HEIGHT 10 /* 6 * 10 = 60 index bits */

/* Interior node: @child[i] covers 64^(height-1) consecutive indices. */
struct emap_node {
	void *child[EMAP_FANOUT];
	unsigned count; /* non-NULL children */
};

/* Leaf: 64 consecutive entries; tier == EXTENT_TIER_NONE marks a hole. */
struct emap_leaf {
	struct extent ext[EMAP_FANOUT];
	unsigned count; /* present entries */
};

#endif /* TIERFS_EXTENT_MAP_I_H */
