// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_track.c -- Check suite for fs/track.c (track.h), the tracker of
 * what the migrator has to look at, driven through real data writes,
 * truncates, punches and moves (fs/data.h) on an in-process mount of
 * three tiers (t_fs.h), with no migrator running:
 *   - the sets: track_counts() (inodes with data, extents) and
 *     track_inodes_on() per tier follow track_add (a write), track_move
 *     (data_migrate_extent()), track_drop (truncate, punch) and
 *     track_release (the inode freed; an unlinked open file stays);
 *   - track_collect(): a new inode is looked at whole once; then only
 *     what changed since the last collect (an extent placed under a
 *     policy the inode was not last looked at under, or away from its
 *     home, an extent that moved, a note, a requeue) and never what did
 *     not; a policy_gen bump makes every inode with data a
 *     TRACK_POLICY visit, but not one made before the first data; the
 *     walk of a tier's set (take false) consumes nothing; a queued
 *     extent of an inode that left the sets is dropped; visits come
 *     sorted by inode, largest mode first;
 *   - track_pending() before and after each of these;
 *   - track_lost(): the next collect looks at every inode whole, once;
 *   - the queue's bound (TRACK_QUEUE_MAX): past it, one whole look at
 *     every inode; hundreds of inodes (the table grows and shrinks);
 *   - track_pin(), track_fp()/track_set_fp(), track_policy_fp() (what
 *     the migrator acts on, not the order or who set it; never 0);
 *   - one tracker per mount, none left after an unmount with data;
 *   - a one-tier mount tracks nothing.
 */
#include <check.h>
#include <errno.h>
#include <linux/falloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attr.h"
#include "ctl_proto.h"
#include "policy.h"
#include "track.h"
#include "t_fs.h"
#include "tap.h"

#define EXT (64u * 1024)

static struct t_fs T;
static struct tierfs *fs;
static char *wbuf;

static void setup_n(unsigned ntiers)
{
	/* t0 RAM 4 extents, t1 8, t2 16 */
	static const uint32_t slots[] = { 4, 8, 16 };

	t_fs_setup(&T, EXT, ntiers, slots);
	fs = T.fs;
	wbuf = malloc(EXT);
	ck_assert_ptr_nonnull(wbuf);
	memset(wbuf, 0x42, EXT);
}

static void setup(void)
{
	setup_n(3);
}

static void setup1(void)
{
	setup_n(1);
}

static void teardown(void)
{
	t_fs_teardown(&T);
	fs = NULL;
	free(wbuf);
	wbuf = NULL;
}

/* Write extent @idx of @f whole. */
static void t_put(struct tfs_inode *f, uint64_t idx)
{
	ck_assert_int_eq(data_write(fs, f, wbuf, EXT, idx * EXT), EXT);
}

struct t_counts {
	uint64_t inodes, extents, queued;
};

static struct t_counts t_counts(void)
{
	struct t_counts c;

	track_counts(fs, &c.inodes, &c.extents, &c.queued);
	return c;
}

#define t_counts_are(i, e)                                      \
	do {                                                    \
		struct t_counts _c = t_counts();                \
		ck_assert_uint_eq(_c.inodes, (i));              \
		ck_assert_uint_eq(_c.extents, (e));             \
	} while (0)

static struct track_visits vis;

/* track_collect() into a fresh list; returns how many visits. */
static size_t t_collect(uint32_t walk, bool take)
{
	vis.n = 0;
	ck_assert_int_eq(track_collect(fs, walk, take, &vis), 0);
	return vis.n;
}

/* Visits of @inode with @mode (and @idx, for TRACK_IDX) in the list. */
static unsigned t_has(struct tfs_inode *inode, enum track_mode mode,
		      uint64_t idx)
{
	unsigned n = 0;

	for (size_t i = 0; i < vis.n; i++)
		if (vis.v[i].inode == inode && vis.v[i].mode == mode &&
		    (mode != TRACK_IDX || vis.v[i].idx == idx))
			n++;
	return n;
}

/* The visits are sorted by inode, then mode (largest first), then idx.
 * (One assertion at the end: Check records every passed one.) */
static void t_assert_sorted(void)
{
	size_t bad = 0;

	for (size_t i = 1; i < vis.n && !bad; i++) {
		const struct track_visit *a = &vis.v[i - 1], *b = &vis.v[i];

		if ((uintptr_t)a->inode > (uintptr_t)b->inode ||
		    (a->inode == b->inode &&
		     (a->mode < b->mode ||
		      (a->mode == b->mode && a->idx > b->idx))))
			bad = i;
	}
	ck_assert_msg(bad == 0, "visit %zu out of order", bad);
}

/* What the migrator does after looking at @f whole: remember the
 * policy it looked under. */
static void t_looked(struct tfs_inode *f)
{
	struct policy p;

	policy_get(fs, f, &p);
	pthread_rwlock_rdlock(&f->i_dlock);
	track_set_fp(fs, f, track_policy_fp(&p));
	pthread_rwlock_unlock(&f->i_dlock);
	ck_assert_uint_eq(track_fp(fs, f), track_policy_fp(&p));
}

static void t_set(struct tfs_inode *i, const char *key, const char *v)
{
	ck_assert_int_eq(attr_set(fs, i, key, v, strlen(v), 0, 0), 0);
}

/* ------------------------------------------------------------------ */

START_TEST(test_counts_add_drop)
{
	struct tfs_inode *f = t_create(fs, "f"), *g = t_create(fs, "g");
	struct t_counts c = t_counts();

	ck_assert_uint_eq(c.inodes, 0);
	ck_assert_uint_eq(c.extents, 0);
	ck_assert_uint_eq(c.queued, 0);
	ck_assert(!track_pending(fs));
	for (uint64_t i = 0; i < 3; i++)
		t_put(f, i);
	t_counts_are(1, 3);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 1);
	ck_assert_uint_eq(track_inodes_on(fs, 1), 0);
	/* an overwrite adds nothing */
	t_put(f, 1);
	t_counts_are(1, 3);

	t_set(g, TIERFS_XATTR_TIERS, "t1");
	t_put(g, 0);
	t_put(g, 1);
	ck_assert_int_eq(t_tier_of(g, 0), 1);
	t_counts_are(2, 5);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 1);
	ck_assert_uint_eq(track_inodes_on(fs, 1), 1);
	ck_assert_uint_eq(track_inodes_on(fs, 2), 0);
	ck_assert_uint_eq(track_inodes_on(fs, 7), 0); /* no such tier */

	/* truncate drops what is past the end */
	ck_assert_int_eq(data_truncate(fs, f, EXT), 0);
	t_counts_are(2, 3);
	ck_assert_int_eq(data_truncate(fs, g, 0), 0);
	t_counts_are(1, 1);
	ck_assert_uint_eq(track_inodes_on(fs, 1), 0);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 1);
	/* a punch of the last extent: nothing left */
	ck_assert_int_eq(data_fallocate(fs, f, FALLOC_FL_PUNCH_HOLE |
					FALLOC_FL_KEEP_SIZE, 0, EXT), 0);
	ck_assert_int_eq(t_tier_of(f, 0), -1);
	t_counts_are(0, 0);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 0);
	/* and back */
	t_put(f, 3);
	t_counts_are(1, 1);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 1);
}
END_TEST

START_TEST(test_move_counts)
{
	struct tfs_inode *f = t_create(fs, "f");

	t_put(f, 0);
	t_put(f, 1);
	ck_assert_int_eq(data_migrate_extent(fs, f, 0, 0, t_slot_of(f, 0), 2),
			 0);
	ck_assert_int_eq(t_tier_of(f, 0), 2);
	t_counts_are(1, 2);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 1);
	ck_assert_uint_eq(track_inodes_on(fs, 2), 1);
	ck_assert_int_eq(data_migrate_extent(fs, f, 1, 0, t_slot_of(f, 1), 2),
			 0);
	t_counts_are(1, 2);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 0);
	ck_assert_uint_eq(track_inodes_on(fs, 2), 1);
	ck_assert_int_eq(data_migrate_extent(fs, f, 1, 2, t_slot_of(f, 1), 1),
			 0);
	ck_assert_uint_eq(track_inodes_on(fs, 1), 1);
	ck_assert_uint_eq(track_inodes_on(fs, 2), 1);
	t_counts_are(1, 2);
}
END_TEST

START_TEST(test_release)
{
	struct tfs_inode *f = t_create(fs, "f"), *g = t_create(fs, "g");

	t_put(f, 0);
	t_put(f, 1);
	t_set(g, TIERFS_XATTR_TIERS, "t2");
	t_put(g, 0);
	t_counts_are(2, 3);
	/* removed but open: still has its data */
	t_unlink(fs, "f");
	t_counts_are(2, 3);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 1);
	t_forget(fs, f);
	t_counts_are(1, 1);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 0);
	ck_assert_uint_eq(track_inodes_on(fs, 2), 1);
	t_unlink(fs, "g");
	t_forget(fs, g);
	t_counts_are(0, 0);
	ck_assert(!track_pending(fs));
	t_assert_no_leak(fs);
}
END_TEST

START_TEST(test_collect_changes)
{
	struct tfs_inode *f = t_create(fs, "f"), *g = t_create(fs, "g");

	ck_assert_uint_eq(t_collect(0, true), 0);
	t_put(f, 0);
	ck_assert(track_pending(fs));
	/* new to data: looked at whole, once */
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(f, TRACK_WHOLE, 0), 1);
	ck_assert(!track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 0);

	/* never looked at under a policy: a new extent is a change */
	t_put(f, 1);
	ck_assert_uint_eq(t_counts().queued, 1);
	ck_assert(track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(f, TRACK_IDX, 1), 1);
	ck_assert_uint_eq(t_counts().queued, 0);
	/* looked at under this one: an extent placed as it says is not */
	t_looked(f);
	t_put(f, 2);
	t_put(f, 1); /* an overwrite neither */
	ck_assert_uint_eq(t_counts().queued, 0);
	ck_assert(!track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 0);

	/* another file's first data: only that file */
	t_put(g, 0);
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(g, TRACK_WHOLE, 0), 1);
	ck_assert_uint_eq(t_has(f, TRACK_WHOLE, 0), 0);
	t_looked(g);

	/* a policy change: every inode with data, by policy */
	policy_changed(fs);
	ck_assert(track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 2);
	ck_assert_uint_eq(t_has(f, TRACK_POLICY, 0), 1);
	ck_assert_uint_eq(t_has(g, TRACK_POLICY, 0), 1);
	t_assert_sorted();
	ck_assert(!track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 0);

	/* walking a tier's set takes nothing from the queue */
	track_note(fs, g, 0);
	ck_assert_uint_eq(t_collect(1u << 0, false), 2);
	ck_assert_uint_eq(t_has(f, TRACK_WHOLE, 0), 1);
	ck_assert_uint_eq(t_has(g, TRACK_WHOLE, 0), 1);
	ck_assert_uint_eq(t_collect(1u << 1, false), 0);
	ck_assert(track_pending(fs));
	ck_assert_uint_eq(t_counts().queued, 1);
	/* walk and take together: sorted, the whole look first */
	ck_assert_uint_eq(t_collect(1u << 0, true), 3);
	ck_assert_uint_eq(t_has(g, TRACK_IDX, 0), 1);
	t_assert_sorted();
	ck_assert(!track_pending(fs));
}
END_TEST

/* What changed before the first data needs no look: the new inode is
 * looked at whole anyway. */
START_TEST(test_gen_before_data)
{
	struct tfs_inode *f = t_create(fs, "f");

	policy_changed(fs);
	ck_assert(!track_pending(fs)); /* no data: nothing to look at */
	t_put(f, 0);
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(f, TRACK_WHOLE, 0), 1);
	ck_assert_uint_eq(t_has(f, TRACK_POLICY, 0), 0);
}
END_TEST

/* An extent placed away from its policy's home is looked at. */
START_TEST(test_placed_away)
{
	struct tfs_inode *f = t_create(fs, "f"), *g = t_create(fs, "g");

	/* both pinned before any data: the policy_gen bumps are not
	 * changes the tracker has to report */
	t_set(f, TIERFS_XATTR_PIN, "t1");
	t_set(g, TIERFS_XATTR_PIN, "t1");
	t_put(f, 0);
	ck_assert_int_eq(t_tier_of(f, 0), 1);
	ck_assert_uint_eq(t_collect(0, true), 1);
	t_looked(f);
	t_put(f, 1); /* at home */
	ck_assert_uint_eq(t_collect(0, true), 0);
	/* fill t1 with another pinned file */
	for (uint64_t i = 0; i < 6; i++)
		t_put(g, i);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[1]), 8);
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(g, TRACK_WHOLE, 0), 1);
	t_looked(g);
	/* f's next extent spills (to the slower tier first): a change */
	t_put(f, 2);
	ck_assert_int_eq(t_tier_of(f, 2), 2);
	ck_assert(track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(f, TRACK_IDX, 2), 1);
}
END_TEST

START_TEST(test_moved_is_looked_at)
{
	struct tfs_inode *f = t_create(fs, "f");

	t_put(f, 0);
	t_put(f, 1);
	ck_assert_uint_eq(t_collect(0, true), 1);
	t_looked(f);
	ck_assert_int_eq(data_migrate_extent(fs, f, 1, 0, t_slot_of(f, 1), 1),
			 0);
	ck_assert(track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(f, TRACK_IDX, 1), 1);
	ck_assert_uint_eq(t_collect(0, true), 0);
}
END_TEST

START_TEST(test_note_requeue)
{
	struct tfs_inode *f = t_create(fs, "f"), *g = t_create(fs, "g");
	struct tfs_inode *h = t_create(fs, "h");
	struct track_visit keep[2];

	t_put(f, 0);
	ck_assert_uint_eq(t_collect(0, true), 1);
	t_looked(f);
	track_note(fs, f, 5);
	track_note(fs, f, 5); /* once */
	ck_assert_uint_eq(t_counts().queued, 1);
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(f, TRACK_IDX, 5), 1);
	/* what a pass could not settle goes back */
	keep[0] = vis.v[0];
	keep[1] = (struct track_visit){ f, 7, TRACK_IDX };
	track_requeue(fs, keep, 2);
	ck_assert(track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 2);
	ck_assert_uint_eq(t_has(f, TRACK_IDX, 5), 1);
	ck_assert_uint_eq(t_has(f, TRACK_IDX, 7), 1);
	t_assert_sorted();
	/* a note of a new inode is covered by its whole look */
	t_put(g, 0);
	track_note(fs, g, 0);
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(g, TRACK_WHOLE, 0), 1);
	/* of an inode with no data: nothing */
	track_note(fs, h, 0);
	ck_assert_uint_eq(t_counts().queued, 0);
	ck_assert(!track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 0);
}
END_TEST

/* A queued extent of an inode that has left the sets is not visited. */
START_TEST(test_queued_then_dropped)
{
	struct tfs_inode *f = t_create(fs, "f"), *g = t_create(fs, "g");

	t_put(f, 0);
	t_put(g, 0);
	ck_assert_uint_eq(t_collect(0, true), 2);
	track_note(fs, f, 0);
	ck_assert_int_eq(data_truncate(fs, f, 0), 0);
	t_counts_are(1, 1);
	ck_assert_uint_eq(t_collect(0, true), 0);
	/* and an inode freed with queued extents */
	track_note(fs, g, 0);
	t_unlink(fs, "g");
	t_forget(fs, g);
	t_counts_are(0, 0);
	ck_assert(!track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 0);
}
END_TEST

START_TEST(test_lost)
{
	struct tfs_inode *f = t_create(fs, "f"), *g = t_create(fs, "g");

	/* no data: nothing to look at */
	track_lost(fs);
	ck_assert(!track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 0);
	t_put(f, 0);
	t_put(g, 0);
	t_put(g, 1);
	ck_assert_uint_eq(t_collect(0, true), 2);
	t_looked(f);
	t_looked(g);
	ck_assert(!track_pending(fs));
	track_lost(fs);
	ck_assert(track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 2);
	ck_assert_uint_eq(t_has(f, TRACK_WHOLE, 0), 1);
	ck_assert_uint_eq(t_has(g, TRACK_WHOLE, 0), 1);
	ck_assert(!track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 0);
	/* lost beats a policy change: whole, not by policy */
	track_lost(fs);
	policy_changed(fs);
	ck_assert_uint_eq(t_collect(0, true), 2);
	ck_assert_uint_eq(t_has(f, TRACK_WHOLE, 0), 1);
	ck_assert_uint_eq(t_has(g, TRACK_WHOLE, 0), 1);
	ck_assert_uint_eq(t_has(f, TRACK_POLICY, 0), 0);
	/* a collect without take does not clear it */
	track_lost(fs);
	ck_assert_uint_eq(t_collect(0, false), 0);
	ck_assert(track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 2);
}
END_TEST

START_TEST(test_pin_and_fp)
{
	struct tfs_inode *f = t_create(fs, "f"), *h = t_create(fs, "h");
	struct tfs_inode *v[2] = { f, h };
	bool ok[2] = { false, true };

	t_put(f, 0);
	ck_assert_uint_eq(track_pin(fs, v, 2, ok), 1);
	ck_assert(ok[0]);
	ck_assert(!ok[1]); /* no data */
	ck_assert_uint_eq(f->i_nref, 1);
	ck_assert_uint_eq(h->i_nref, 0);
	inode_unpin(fs, f);
	/* fingerprints: 0 until set, and only for inodes with data */
	ck_assert_uint_eq(track_fp(fs, f), 0);
	track_set_fp(fs, h, 99);
	ck_assert_uint_eq(track_fp(fs, h), 0);
	track_set_fp(fs, f, 99);
	ck_assert_uint_eq(track_fp(fs, f), 99);
}
END_TEST

START_TEST(test_policy_fp)
{
	struct policy a, b;
	uint64_t fa, fb;

	policy_default(&a, 3);
	policy_finish(&a, 3);
	fa = track_policy_fp(&a);
	ck_assert_uint_ne(fa, 0);
	/* not the order, not who set what */
	b = a;
	b.order[0] = 2;
	b.order[2] = 0;
	b.src[POLICY_TIERS] = 42;
	ck_assert_uint_eq(track_policy_fp(&b), fa);
	/* what the migrator acts on */
	b = a;
	b.pin = 1;
	ck_assert_uint_ne(track_policy_fp(&b), fa);
	b = a;
	b.allowed = 3;
	ck_assert_uint_ne(track_policy_fp(&b), fa);
	b = a;
	b.promote = false;
	ck_assert_uint_ne(track_policy_fp(&b), fa);
	b = a;
	b.nsplit = 1;
	b.split[0] = (struct split_range){ UINT64_MAX, 2 };
	fb = track_policy_fp(&b);
	ck_assert_uint_ne(fb, fa);
	b.split[0].tier = 1;
	ck_assert_uint_ne(track_policy_fp(&b), fb);
	b.split[0] = (struct split_range){ 1u << 20, 2 };
	ck_assert_uint_ne(track_policy_fp(&b), fb);
}
END_TEST

/* The queue's bound: past TRACK_QUEUE_MAX notes, the next collect looks
 * at every inode with data whole -- once each, the queued extents and
 * fresh inodes being part of that -- and the one after at nothing. */
START_TEST(test_queue_overflow)
{
	struct tfs_inode *f = t_create(fs, "f"), *g = t_create(fs, "g");

	t_put(f, 0);
	t_put(g, 0);
	ck_assert_uint_eq(t_collect(0, true), 2);
	t_looked(f);
	t_looked(g);
	for (uint64_t i = 0; i <= TRACK_QUEUE_MAX; i++)
		track_note(fs, f, i);
	ck_assert_uint_eq(t_counts().queued, TRACK_QUEUE_MAX);
	ck_assert(track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 2);
	ck_assert_uint_eq(t_has(f, TRACK_WHOLE, 0), 1);
	ck_assert_uint_eq(t_has(g, TRACK_WHOLE, 0), 1);
	t_assert_sorted();
	ck_assert_uint_eq(t_counts().queued, 0);
	ck_assert(!track_pending(fs));
	ck_assert_uint_eq(t_collect(0, true), 0);
	/* notes are taken again */
	track_note(fs, g, 3);
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert_uint_eq(t_has(g, TRACK_IDX, 3), 1);
}
END_TEST

/* Hundreds of inodes: the table grows and shrinks back, the counts and
 * a policy pass stay exact. */
static void setup_many(void)
{
	static const uint32_t slots[] = { 512, 64, 64 };

	t_fs_setup(&T, 4096, 3, slots);
	fs = T.fs;
	wbuf = malloc(EXT);
	ck_assert_ptr_nonnull(wbuf);
	memset(wbuf, 0x42, EXT);
}

START_TEST(test_many_inodes)
{
	enum { N = 300, KEEP = 10 };
	static struct tfs_inode *ino[N];
	char name[16];

	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		ino[i] = t_create(fs, name);
		ck_assert_int_eq(data_write(fs, ino[i], wbuf, 100, 0), 100);
	}
	t_counts_are(N, N);
	ck_assert_uint_eq(track_inodes_on(fs, 0), N);
	ck_assert_uint_eq(t_collect(0, true), N);
	for (int i = 0; i < N; i++)
		ck_assert_uint_eq(t_has(ino[i], TRACK_WHOLE, 0), 1);
	t_assert_sorted();
	for (int i = KEEP; i < N; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		t_unlink(fs, name);
		t_forget(fs, ino[i]);
	}
	t_counts_are(KEEP, KEEP);
	ck_assert_uint_eq(track_inodes_on(fs, 0), KEEP);
	/* the unlinks changed no other file's policy: the ones left are
	 * not looked at (issue 20: each was, once, when every unlink moved
	 * policy_gen) */
	ck_assert_uint_eq(t_collect(0, true), 0);
	ck_assert_uint_eq(t_collect(1u << 0, false), KEEP);
	ck_assert_uint_eq(t_collect(0, true), 0);
}
END_TEST

/* Each mount has its own tracker, and an unmount with data leaves
 * nothing behind for the next mount (which may land at the same
 * address). */
START_TEST(test_per_mount)
{
	static const uint32_t slots[] = { 4, 8, 16 };
	struct t_fs T2;
	struct tierfs *fs1 = fs;
	struct tfs_inode *f = t_create(fs, "f"), *g;
	uint64_t i, e, q;

	t_put(f, 0);
	t_put(f, 1);
	t_fs_setup(&T2, EXT, 3, slots);
	g = t_create(T2.fs, "g");
	ck_assert_int_eq(data_write(T2.fs, g, wbuf, EXT, 0), EXT);
	track_counts(T2.fs, &i, &e, &q);
	ck_assert_uint_eq(i, 1);
	ck_assert_uint_eq(e, 1);
	t_counts_are(1, 2);
	/* a collect of one mount leaves the other's pending */
	ck_assert_uint_eq(t_collect(0, true), 1);
	ck_assert(track_pending(T2.fs));
	ck_assert(!track_pending(fs1));
	/* unmount with data, mount again */
	t_fs_teardown(&T2);
	t_fs_setup(&T2, EXT, 3, slots);
	track_counts(T2.fs, &i, &e, &q);
	ck_assert_uint_eq(i, 0);
	ck_assert_uint_eq(e, 0);
	ck_assert_uint_eq(q, 0);
	ck_assert(!track_pending(T2.fs));
	t_fs_teardown(&T2);
	t_counts_are(1, 2);
}
END_TEST

/* One tier: nothing to migrate between, nothing tracked. */
START_TEST(test_one_tier)
{
	struct tfs_inode *f = t_create(fs, "f");
	struct t_counts c;

	t_put(f, 0);
	t_put(f, 1);
	track_note(fs, f, 0);
	track_lost(fs);
	policy_changed(fs);
	c = t_counts();
	ck_assert_uint_eq(c.inodes, 0);
	ck_assert_uint_eq(c.extents, 0);
	ck_assert_uint_eq(c.queued, 0);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 0);
	ck_assert(!track_pending(fs));
	ck_assert_uint_eq(t_collect(1u << 0, true), 0);
}
END_TEST

static void teardown_vis(void)
{
	free(vis.v);
	vis = (struct track_visits){ 0 };
	teardown();
}

static Suite *track_suite(void)
{
	Suite *s = suite_create("track");
	TCase *tc = tcase_create("sets");

	tcase_add_checked_fixture(tc, setup, teardown_vis);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_counts_add_drop);
	tcase_add_test(tc, test_move_counts);
	tcase_add_test(tc, test_release);
	tcase_add_test(tc, test_per_mount);
	suite_add_tcase(s, tc);

	tc = tcase_create("collect");
	tcase_add_checked_fixture(tc, setup, teardown_vis);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_collect_changes);
	tcase_add_test(tc, test_gen_before_data);
	tcase_add_test(tc, test_placed_away);
	tcase_add_test(tc, test_moved_is_looked_at);
	tcase_add_test(tc, test_note_requeue);
	tcase_add_test(tc, test_queued_then_dropped);
	tcase_add_test(tc, test_lost);
	tcase_add_test(tc, test_pin_and_fp);
	tcase_add_test(tc, test_policy_fp);
	tcase_add_test(tc, test_queue_overflow);
	suite_add_tcase(s, tc);

	tc = tcase_create("many");
	tcase_add_checked_fixture(tc, setup_many, teardown_vis);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_many_inodes);
	suite_add_tcase(s, tc);

	tc = tcase_create("one_tier");
	tcase_add_checked_fixture(tc, setup1, teardown_vis);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_one_tier);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(track_suite());
}
