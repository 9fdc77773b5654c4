/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.h -- the mount's counters as text, for user.tierfs.stats
 * (ctl.c) and `tierctl stats`.
 */
#ifndef TIERFS_STATS_H
#define TIERFS_STATS_H

#include <sys/types.h>

struct tierfs;

/**
 * tierfs_stats_text() - the counters as text, one record a line:
 *   "tier NAME kind=.. path=.. size=.. used=.. free=.. extents=.. ..."
 *   "migrator enabled=.. passes=.. moved=.. ..."
 *   "mount extent_size=.. inodes=.. ... max_inodes=.. xattr_bytes=..
 *    max_xattr_bytes=.. rss=.."
 * (fs/README.md "Counters and the control channel" documents every field.)  On success *ret_text is
 * the caller's to free().  Return: its length, or -ENOMEM.
 */
ssize_t tierfs_stats_text(struct tierfs *fs, char **ret_text);

#endif /* TIERFS_STATS_H */
