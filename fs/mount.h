/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mount.h -- set up and tear down a mount: the composition root of the
 * daemon (mount.c), which alone may call every module.  For main.c and
 * the tests.
 */
#ifndef TIERFS_MOUNT_H
#define TIERFS_MOUNT_H

struct tierfs;
struct tierfs_options;

/**
 * tierfs_create() - set up the tiers and the root directory of a mount
 * @opt: borrowed; the caller keeps it alive until tierfs_free()
 * Return: 0 and *ret_fs (free with tierfs_free()), or -errno after
 * logging which tier failed.
 */
int tierfs_create(const struct tierfs_options *opt, struct tierfs **ret_fs);
/* Stop the threads, free every inode and the tiers (removing their
 * backing data).  Accepts NULL; returns NULL. */
struct tierfs *tierfs_free(struct tierfs *fs);

#endif /* TIERFS_MOUNT_H */
