// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fs.c -- the mount as a whole: the tier stack, the root directory and
 * the teardown at unmount.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tierfs.h"
#include "tier.h"
#include "log.h"
#include "banned.h"

/*
 * Two tiers on one directory would each think they own its space.  The
 * option parser catches equal strings; this catches "/a" vs "/a/" and
 * symlinks.  Returns 0 or -EINVAL after logging the pair.
 */
static int check_distinct_paths(const struct tierfs_options *opt)
{
	struct stat st[TIER_MAX_CONF];
	bool ok[TIER_MAX_CONF] = { false };

	for (unsigned i = 0; i < opt->ntiers; i++) {
		/* a missing path is reported by the back end */
		ok[i] = opt->tiers[i].path && stat(opt->tiers[i].path, &st[i]) == 0;
		if (!ok[i])
			continue;
		for (unsigned j = 0; j < i; j++) {
			if (!ok[j])
				continue;
			if (st[i].st_dev == st[j].st_dev &&
			    st[i].st_ino == st[j].st_ino) {
				log_err("tiers '%s' and '%s' use the same directory '%s'",
					opt->tiers[j].name, opt->tiers[i].name,
					opt->tiers[i].path);
				return -EINVAL;
			}
		}
	}
	return 0;
}

int tierfs_create(const struct tierfs_options *opt, struct tierfs **ret_fs)
{
	struct tierfs *fs = calloc(1, sizeof(*fs));
	int r;

	if (!fs)
		return -ENOMEM;
	r = check_distinct_paths(opt);
	if (r < 0) {
		free(fs);
		return r;
	}
	fs->opt = *opt; /* borrowed: the caller keeps @opt alive and frees it */
	fs->extent_size = (uint32_t)opt->extent_size;
	fs->extent_shift = (unsigned)__builtin_ctzll(opt->extent_size);
	fs->inodes.i_next = fs->inodes.i_prev = &fs->inodes;
	fs->next_ino = 1; /* FUSE_ROOT_ID */
	pthread_rwlock_init(&fs->ns_lock, NULL);
	pthread_mutex_init(&fs->itab_lock, NULL);

	for (unsigned i = 0; i < opt->ntiers; i++) {
		const struct tier_conf *tc = &opt->tiers[i];

		r = tier_create(tc->name, tc->kind, tc->path, tc->size,
				fs->extent_size, &fs->tiers[i]);
		if (r < 0) {
			log_err("cannot set up tier '%s' (%s%s%s): %s",
				tc->name, tier_kind_name(tc->kind),
				tc->path ? " at " : "",
				tc->path ? tc->path : "", strerror(-r));
			goto err_free;
		}
		fs->tiers[i]->index = i;
		fs->ntiers++;
	}

	fs->root = inode_new(fs, S_IFDIR | 0755, getuid(), getgid(), 0);
	if (!fs->root) {
		r = -ENOMEM;
		goto err_free;
	}
	r = dir_init(&fs->root->i_dir, fs->root);
	if (r < 0)
		goto err_free;
	/* "." and the (virtual) parent; never dropped, so never freed */
	fs->root->i_nlink = 2;
	fs->root->i_nlookup = 1;
	*ret_fs = fs;
	return 0;

err_free:
	tierfs_free(fs);
	return r;
}

struct tierfs *tierfs_free(struct tierfs *fs)
{
	if (!fs)
		return NULL;
	/* unmount: free everything left, then the tiers (which removes
	 * their backing data) */
	while (fs->inodes.i_next != &fs->inodes) {
		struct tfs_inode *inode = fs->inodes.i_next;

		inode->i_prev->i_next = inode->i_next;
		inode->i_next->i_prev = inode->i_prev;
		inode_free(fs, inode);
	}
	for (unsigned i = 0; i < fs->ntiers; i++)
		fs->tiers[i] = tier_free(fs->tiers[i]);
	pthread_rwlock_destroy(&fs->ns_lock);
	pthread_mutex_destroy(&fs->itab_lock);
	free(fs);
	return NULL;
}

void tierfs_statfs(struct tierfs *fs, struct statvfs *st)
{
	uint64_t total = 0, avail = 0;

	for (unsigned i = 0; i < fs->ntiers; i++) {
		struct tier *t = fs->tiers[i];

		total += (uint64_t)t->nslots * fs->extent_size;
		avail += (uint64_t)tier_free_slots(t) * fs->extent_size;
	}
	memset(st, 0, sizeof(*st));
	st->f_bsize = 4096;
	st->f_frsize = 4096;
	st->f_blocks = total / st->f_frsize;
	st->f_bfree = avail / st->f_frsize;
	st->f_bavail = st->f_bfree;
	/* inodes cost memory only: report a large, steady count */
	st->f_files = UINT32_MAX;
	pthread_mutex_lock(&fs->itab_lock);
	st->f_ffree = st->f_files - fs->ninodes;
	pthread_mutex_unlock(&fs->itab_lock);
	st->f_favail = st->f_ffree;
	st->f_namemax = 255;
}
