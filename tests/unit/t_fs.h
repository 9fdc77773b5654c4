/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * t_fs.h -- an in-process struct tierfs for the fs/ unit suites
 * (test_data.c, test_migrate.c): a stack of tiny tiers (RAM, then file
 * tiers in a private temporary directory), files created and removed as
 * ops.c does, a shadow copy of each file's expected content, and a
 * blocking test hook (fs/testhook.h) that stops a thread at one named
 * point until the test releases it.
 *
 * Helpers are t_x (liburing's convention) and static inline, so each
 * suite takes what it uses.  Every helper asserts: a failure is a test
 * failure, not a return code.
 */
#ifndef TIERFS_TEST_T_FS_H
#define TIERFS_TEST_T_FS_H

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "mount.h"
#include "inode.h"
#include "dir.h"
#include "data.h"
#include "placement.h"
#include "migrate.h"
#include "testhook.h"
#include "tier.h"

#define T_MAXTIERS 4

struct t_fs {
	struct tierfs_options opt; /* borrowed by fs: lives as long */
	struct tierfs *fs;
	char dir[64]; /* holds the file tiers' directories */
};

/*
 * Make a mount of @ntiers tiers: tier 0 RAM of @slots[0] extents, the
 * others file tiers of @slots[i] extents each, extents of @ext bytes.
 * Migration is unlimited in bandwidth and never runs by itself (tests
 * call migrator_run_pass()).
 */
static inline void t_fs_setup(struct t_fs *t, uint32_t ext, unsigned ntiers,
			      const uint32_t *slots)
{
	const char *tmp = getenv("TMPDIR");

	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "%s/tfsu-XXXXXX",
		 tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(t->dir));
	options_init(&t->opt);
	t->opt.extent_size = ext;
	t->opt.high_wm = 100;
	t->opt.low_wm = 90;
	t->opt.low_wm_set = true;
	t->opt.migrate_bw = 0;
	t->opt.migrate_bw_set = true;
	t->opt.half_life = 30;
	t->opt.promote_passes = 3;
	t->opt.no_migrate = true;
	ck_assert_uint_le(ntiers, T_MAXTIERS);
	for (unsigned i = 0; i < ntiers; i++) {
		struct tier_conf *tc = &t->opt.tiers[i];

		snprintf(tc->name, sizeof(tc->name), "t%u", i);
		tc->kind = i == 0 ? TIER_RAM : TIER_FILE;
		tc->size = (uint64_t)slots[i] * ext;
		if (i > 0) {
			ck_assert_int_ge(asprintf(&tc->path, "%s/%u", t->dir,
						  i), 0);
			ck_assert_int_eq(mkdir(tc->path, 0700), 0);
		}
	}
	t->opt.ntiers = ntiers;
	ck_assert_int_eq(tierfs_create(&t->opt, &t->fs), 0);
}

static inline int t_rm_entry(const char *path, const struct stat *st,
			     int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void t_fs_teardown(struct t_fs *t)
{
	t->fs = tierfs_free(t->fs);
	options_release(&t->opt);
	(void)nftw(t->dir, t_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A regular file named @name in the root, as create + lookup leave it. */
static inline struct tfs_inode *t_create(struct tierfs *fs, const char *name)
{
	struct tfs_inode *inode;

	inode = inode_new(fs, S_IFREG | 0644, getuid(), getgid(), 0);
	ck_assert_ptr_nonnull(inode);
	inode->i_nlink = 1;
	pthread_rwlock_wrlock(&fs->ns_lock);
	ck_assert_int_eq(inode_parent_add(inode, fs->root), 0);
	ck_assert_int_eq(dir_add(&fs->root->i_dir, name, inode, NULL), 0);
	pthread_rwlock_unlock(&fs->ns_lock);
	inode_lookup_ref(fs, inode);
	return inode;
}

/* unlink(2) of @name: the inode lives on while the kernel knows it. */
static inline void t_unlink(struct tierfs *fs, const char *name)
{
	struct tfs_inode *inode;

	pthread_rwlock_wrlock(&fs->ns_lock);
	inode = dir_remove(&fs->root->i_dir, name, NULL);
	ck_assert_ptr_nonnull(inode);
	inode_parent_del(inode, fs->root);
	policy_changed_inode(fs, inode);
	inode_link_drop(fs, inode, 1);
	pthread_rwlock_unlock(&fs->ns_lock);
}

/* The kernel forgets @inode (close + forget): freed if nothing holds it. */
static inline void t_forget(struct tierfs *fs, struct tfs_inode *inode)
{
	inode_forget(fs, inode, 1);
}

/* Slots in use over every tier. */
static inline uint64_t t_used(struct tierfs *fs)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < fs->ntiers; i++)
		n += tier_used_slots(fs->tiers[i]);
	return n;
}

static inline void t_assert_no_leak(struct tierfs *fs)
{
	for (unsigned i = 0; i < fs->ntiers; i++)
		ck_assert_uint_eq(fs->tiers[i]->nleaked, 0);
}

/* The tier extent @idx of @inode is on, or -1 for a hole. */
static inline int t_tier_of(struct tfs_inode *inode, uint64_t idx)
{
	struct extent *e;
	int r;

	pthread_rwlock_rdlock(&inode->i_dlock);
	e = extent_map_lookup(&inode->i_map, idx);
	r = e ? e->tier : -1;
	pthread_rwlock_unlock(&inode->i_dlock);
	return r;
}

static inline uint32_t t_slot_of(struct tfs_inode *inode, uint64_t idx)
{
	struct extent *e;
	uint32_t s;

	pthread_rwlock_rdlock(&inode->i_dlock);
	e = extent_map_lookup(&inode->i_map, idx);
	ck_assert_ptr_nonnull(e);
	s = e->slot;
	pthread_rwlock_unlock(&inode->i_dlock);
	return s;
}

/* ------------------------------------------------------------------ */
/* patterns and the shadow copy */

static inline uint8_t t_pat(uint64_t off, unsigned seed)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ull ^ (seed * 0x85ebca6bu);

	return (uint8_t)(x >> 29) | 1; /* never 0: a zeroed byte shows */
}

static inline void t_pat_fill(uint8_t *buf, uint64_t off, size_t len,
			      unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = t_pat(off + i, seed);
}

/* A file and what it must read back as. */
struct t_file {
	struct tfs_inode *ino;
	uint8_t *shadow;
	uint64_t cap, size;
};

static inline void t_file_init(struct t_file *f, struct tfs_inode *ino,
			       uint64_t cap)
{
	f->ino = ino;
	f->shadow = calloc(1, cap);
	ck_assert_ptr_nonnull(f->shadow);
	f->cap = cap;
	f->size = 0;
}

static inline void t_file_done(struct t_file *f)
{
	free(f->shadow);
	f->shadow = NULL;
}

/* Write the @seed pattern at [@off, +@len); the shadow follows what the
 * call says it stored.  Returns what data_write() returned. */
static inline ssize_t t_write(struct tierfs *fs, struct t_file *f,
			      uint64_t off, size_t len, unsigned seed)
{
	uint8_t *buf = malloc(len);
	ssize_t r;

	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_le(off + len, f->cap);
	t_pat_fill(buf, off, len, seed);
	r = data_write(fs, f->ino, (const char *)buf, len, off);
	ck_assert_int_le(r, (ssize_t)len);
	if (r > 0) {
		memcpy(f->shadow + off, buf, (size_t)r);
		if (off + (uint64_t)r > f->size)
			f->size = off + (uint64_t)r;
	}
	free(buf);
	return r;
}

/* Read the whole file and compare it with the shadow. */
/*
 * The file's bytes per tier (inode_tier_bytes(), what a layout reads
 * without a lock, issue 32) are what its extents hold there, and add up
 * to st_blocks' bytes.  With no operation on the file in flight.
 */
static inline void t_assert_tier_bytes(struct tierfs *fs,
				       struct tfs_inode *inode)
{
	uint64_t held[TIER_MAX_CONF] = { 0 }, sum = 0;
	const struct extent *e;
	uint64_t idx;

	pthread_rwlock_rdlock(&inode->i_dlock);
	extent_for_each(&inode->i_map, e, idx)
		held[e->tier] += tier_held(fs->tiers[e->tier], e->slot);
	for (unsigned t = 0; t < fs->ntiers; t++) {
		ck_assert_msg(inode_tier_bytes(inode)[t] == held[t],
			      "tier %u: counted %llu, extents hold %llu", t,
			      (unsigned long long)inode_tier_bytes(inode)[t],
			      (unsigned long long)held[t]);
		sum += held[t];
	}
	ck_assert_uint_eq(inode->i_bytes, sum);
	pthread_rwlock_unlock(&inode->i_dlock);
}

static inline void t_verify(struct tierfs *fs, struct t_file *f)
{
	uint8_t *buf = malloc(f->cap + 1);
	ssize_t r;

	t_assert_tier_bytes(fs, f->ino);

	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(f->ino->i_size, f->size);
	r = data_read(fs, f->ino, (char *)buf, f->cap + 1, 0);
	ck_assert_int_eq(r, (ssize_t)f->size);
	for (uint64_t i = 0; i < f->size; i++)
		if (buf[i] != f->shadow[i])
			ck_abort_msg("byte %llu: read %#x, expected %#x",
				     (unsigned long long)i, buf[i],
				     f->shadow[i]);
	free(buf);
}

/* ------------------------------------------------------------------ */
/* a test hook that stops one thread at one point */

struct t_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum testhook_point point; /* where to stop */
	unsigned hits;		   /* times a thread arrived there */
	bool waiting;		   /* a thread is stopped there */
	bool open;		   /* let it (and later ones) go */
};

static struct t_gate t_gate = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static inline void t_gate_hook(enum testhook_point point,
			       struct tfs_inode *inode, uint64_t idx)
{
	(void)inode;
	(void)idx;
	pthread_mutex_lock(&t_gate.lock);
	if (point == t_gate.point) {
		t_gate.hits++;
		t_gate.waiting = true;
		pthread_cond_broadcast(&t_gate.cond);
		while (!t_gate.open)
			pthread_cond_wait(&t_gate.cond, &t_gate.lock);
		t_gate.waiting = false;
	}
	pthread_mutex_unlock(&t_gate.lock);
}

/* Stop the next thread that reaches @point. */
static inline void t_gate_arm(enum testhook_point point)
{
	pthread_mutex_lock(&t_gate.lock);
	t_gate.point = point;
	t_gate.hits = 0;
	t_gate.waiting = false;
	t_gate.open = false;
	pthread_mutex_unlock(&t_gate.lock);
	__atomic_store_n(&testhook_fn, t_gate_hook, __ATOMIC_RELEASE);
}

/* Wait until a thread is stopped at the armed point. */
static inline void t_gate_wait(void)
{
	pthread_mutex_lock(&t_gate.lock);
	while (!t_gate.waiting)
		pthread_cond_wait(&t_gate.cond, &t_gate.lock);
	pthread_mutex_unlock(&t_gate.lock);
}

/* Let it go; the hook stays installed (passing) until t_gate_off(). */
static inline void t_gate_release(void)
{
	pthread_mutex_lock(&t_gate.lock);
	t_gate.open = true;
	pthread_cond_broadcast(&t_gate.cond);
	pthread_mutex_unlock(&t_gate.lock);
}

static inline void t_gate_off(void)
{
	__atomic_store_n(&testhook_fn, NULL, __ATOMIC_RELEASE);
}

#endif /* TIERFS_TEST_T_FS_H */
