/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * migrate.h -- the background migrator: keeps every tier below its high
 * watermark by demoting the coldest extents, and promotes hot extents
 * into faster tiers.  It decides; data_migrate_extent() (data.c) moves.
 */
#ifndef TIERFS_MIGRATE_H
#define TIERFS_MIGRATE_H

#include <stdbool.h>
#include <stdint.h>

struct tierfs;
struct migrator;

/* Counters of the migrator as a whole (per-tier ones live in tier_stats). */
struct migrate_stats {
	uint64_t passes;    /* scans done */
	uint64_t moved;	    /* extents moved */
	uint64_t retries;   /* moves abandoned because a writer raced */
	uint64_t failures;  /* moves that failed (I/O, checksum) */
	uint64_t drain_stuck; /* extents the last pass found no room for,
			       * off a draining tier */
};

/**
 * migrator_start() - start the migrator thread for @fs
 * Return: 0 (fs->mig set) or -errno.
 */
int migrator_start(struct tierfs *fs);

/* Stop and join the thread, free it; accepts a NULL fs->mig. */
void migrator_stop(struct tierfs *fs);

/* Run one scan-and-move pass now, in the calling thread (tests, tools). */
void migrator_kick(struct tierfs *fs);

void migrator_get_stats(struct tierfs *fs, struct migrate_stats *ret);

#endif /* TIERFS_MIGRATE_H */
