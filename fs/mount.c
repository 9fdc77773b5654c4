// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mount.c -- the composition root: the top floor of the daemon's module
 * graph (fs/README.md "Layout of the source").  It sets up a mount (the
 * tier stack, the root directory, the dirty limit), registers what the
 * lower modules call back into (fs->evict: what an inode holds in the
 * modules above inode.c), and tears the mount down at unmount.  Nothing
 * below it includes mount.h; main.c and the tests do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount.h"
#include "fs.h"
#include "inode.h"
#include "data.h"
#include "dir.h"
#include "heat.h"
#include "kernel.h"
#include "memwatch.h"
#include "migrate.h"
#include "quota.h"
#include "xattr.h"
#include "throttle.h"
#include "tier.h"
#include "macro.h"
#include "size.h"
#include "log.h"
#include "native.h"
#include "banned.h"

/*
 * fs->evict: free what @inode holds in the modules above inode.c, which
 * inode_free() may not call itself (it sits below them): a regular
 * file's extents (data.c), the stored attributes and the policy parsed
 * from them (xattr.c), and the inode's quota reference (quota.c).
 * inode_free() frees the rest (a directory's entries, a symlink's
 * target) after this returns.  No lock held; nothing can find @inode.
 */
static void mount_evict(struct tierfs *fs, struct tfs_inode *inode)
{
	if (inode->i_type == S_IFREG) {
		native_free(fs, inode);
		data_release(fs, inode);
	}
	xattr_release(fs, inode);
	quota_release(inode);
}

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

/*
 * The most dirty page cache the kernel lets one bdi hold, in bytes: its
 * global dirty threshold now (vm.dirty_ratio of the memory the page
 * cache may use, or vm.dirty_bytes), which /proc/vmstat gives in pages
 * as nr_dirty_threshold.  The bdi's max_bytes is a ratio of it, and a
 * value above it is refused (EINVAL), which left the bdi at FUSE's
 * strict 1% (issue 16: --dirty-max 1T became 41 MiB).  The environment
 * variable TIERFS_TEST_DIRTY_THRESH (a byte count), for tests only,
 * replaces it.  Return: the threshold, or 0 when it cannot be read.
 */
static uint64_t kernel_dirty_thresh(void)
{
	const char *test = getenv("TIERFS_TEST_DIRTY_THRESH");
	unsigned long long pages = 0;
	long psize = sysconf(_SC_PAGESIZE);
	char line[128];
	uint64_t v = 0;
	FILE *f;

	if (test && *test)
		return strtoull(test, NULL, 10);
	f = fopen("/proc/vmstat", "re");
	if (!f || psize <= 0) {
		if (f)
			(void)fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nr_dirty_threshold %llu", &pages) == 1) {
			v = (uint64_t)pages * (uint64_t)psize;
			break;
		}
	(void)fclose(f);
	return v;
}

/*
 * The dirty page cache the kernel may hold for the mount (issue 16,
 * item 12): --dirty-max, else DEFAULT_DIRTY_MAX but never more than an
 * eighth of the tiers' capacity, because as much must stay free for it
 * (kernel_space_low()).  Either is then capped at 15/16 of the kernel's
 * dirty threshold (kernel_dirty_thresh()): the kernel refuses more, and
 * the threshold moves with free memory between this check and the
 * bdi write in kernel.c, hence the sixteenth of slack.  A cap is not an
 * error -- an fstab line shared by nodes of different memory sizes
 * must mount on each -- but it is logged in one line saying what was
 * asked, what is used and why; `tierctl stats` shows both
 * (dirty_limit_asked, dirty_limit).  *@ret_asked gets what was asked.
 */
static uint64_t dirty_max_choose(const struct tierfs *fs, uint64_t *ret_asked)
{
	uint64_t total = 0, v, thresh, cap;
	char a[32], b[32], c[32];

	if (fs->opt.dirty_max) {
		v = fs->opt.dirty_max;
	} else {
		for (unsigned i = 0; i < fs->ntiers; i++)
			total += (uint64_t)fs->tiers[i]->nslots * fs->extent_size;
		v = MIN(DEFAULT_DIRTY_MAX, total / 8);
		v = MAX(v, (uint64_t)1 << 20);
	}
	*ret_asked = v;
	thresh = kernel_dirty_thresh();
	cap = ALIGN_DOWN(thresh / 16 * 15, (uint64_t)4096);
	if (!thresh || !cap || v <= cap)
		return v;
	if (fs->opt.dirty_max)
		log_warn("--dirty-max %s is more than the kernel lets a mount hold: its dirty threshold is %s now (vm.dirty_ratio of the memory the page cache may use, or vm.dirty_bytes); the dirty limit is %s, 15/16 of it",
			 size_format(v, a, sizeof(a)), size_format(thresh, b, sizeof(b)),
			 size_format(cap, c, sizeof(c)));
	else
		log_info("dirty limit %s (15/16 of the kernel's dirty threshold, %s), not the default %s, which is more than the kernel lets a mount hold",
			 size_format(cap, c, sizeof(c)), size_format(thresh, b, sizeof(b)),
			 size_format(v, a, sizeof(a)));
	return cap;
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
	fs->inodes = calloc(1, sizeof(*fs->inodes));
	if (!fs->inodes) {
		free(fs);
		return -ENOMEM;
	}
	fs->inodes->i_next = fs->inodes->i_prev = fs->inodes;
	fs->mig_thr = calloc(1, sizeof(*fs->mig_thr));
	if (!fs->mig_thr) {
		free(fs->inodes);
		free(fs);
		return -ENOMEM;
	}
	throttle_init(fs->mig_thr);
	fs->evict = mount_evict;
	fs->stat_native = native_fill_stat;
	fs->next_ino = 1; /* FUSE_ROOT_ID */
	clock_gettime(CLOCK_MONOTONIC, &fs->start);
	fs->half_life_ticks = opt->half_life * HEAT_TICKS_PER_SEC;
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
		tier_set_timeout(fs->tiers[i], opt->tier_timeout * 1000u);
		fs->tiers[i]->index = i;
		fs->names.name[i] = fs->tiers[i]->name;
		fs->ntiers++;
		fs->names.n = fs->ntiers;
		/* issue 11: what dead mounts left in this tier's path */
		if (fs->tiers[i]->swept_dirs)
			log_warn("tier '%s': removed %u director%s left by dead mounts in %s (%llu bytes of data)",
				 tc->name, fs->tiers[i]->swept_dirs,
				 fs->tiers[i]->swept_dirs == 1 ? "y" : "ies",
				 tc->path,
				 (unsigned long long)fs->tiers[i]->swept_bytes);
	}
	/* issue 11: tiers on one filesystem must fit in it together */
	{
		char why[512];

		r = tier_check_shared_space(fs->tiers, fs->ntiers, why,
					    sizeof(why));
		if (r < 0) {
			log_err("%s", why);
			goto err_free;
		}
	}

	for (unsigned i = 0; i + 1 < fs->ntiers; i++)
		if (opt->page_cache == PAGE_CACHE_ONLY &&
		    (tier_kind_caps(fs->tiers[i]->kind) & TIER_CAP_MEMORY))
			fs->lending |= 1u << i;
	fs->lend_cap = TIERFS_LEND_CAP;

	fs->dirty_max = dirty_max_choose(fs, &fs->dirty_asked);
	fs->dirty_reserve = fs->dirty_max;

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
	memwatch_stop(fs); /* normally done already by the destroy op */
	migrator_stop(fs);
	kernel_stop(fs);
	/*
	 * Unmount: the tiers first, which gives their memory and backing
	 * data back at once (a munmap, a close), then what is left of the
	 * inodes, without a discard per extent: with 150k files the daemon
	 * took 11 s to exit, holding the RAM tier until then (issue 18).
	 */
	fs->unmounting = true;
	for (unsigned i = 0; i < fs->ntiers; i++)
		fs->tiers[i] = tier_free(fs->tiers[i]);
	while (fs->inodes->i_next != fs->inodes) {
		struct tfs_inode *inode = fs->inodes->i_next;

		inode->i_prev->i_next = inode->i_next;
		inode->i_next->i_prev = inode->i_prev;
		inode_free(fs, inode);
	}
	pthread_rwlock_destroy(&fs->ns_lock);
	pthread_mutex_destroy(&fs->itab_lock);
	free(fs->inodes);
	throttle_destroy(fs->mig_thr);
	free(fs->mig_thr);
	free(fs);
	return NULL;
}
