// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_migrate.c -- Check suite for fs/migrate.c's decisions, on a real
 * in-process mount (t_fs.h) driven one pass at a time with
 * migrator_run_pass(): no thread, no timing.
 *
 *  - heat at the edges of "hot" (test_heat.c covers the arithmetic;
 *    here: which extents a pass promotes, after decay, with a stamp
 *    newer than the pass's clock);
 *  - demotion to the low watermark, coldest (then least recent) first;
 *  - the victim of an exchange goes where its own policy allows
 *    (victim_dst()), and to the promoted extent's old tier otherwise;
 *  - drain: everything leaves a draining tier, even against a policy
 *    that names only it, and what finds no room is counted as stuck;
 *  - a file removed during a pass is let go at once, not moved;
 *  - every tier call of a pass failed in turn: data and slot counts hold;
 *  - the bandwidth limit is one for every mover (migrate_throttle() from
 *    two threads), and kicks of the migrator thread coalesce;
 *  - what a pass costs (issue 12): among 20,000 empty files a pass
 *    visits only the inodes with data, and an idle one visits none; a
 *    hot extent (heated by real reads) is still promoted and a cold one
 *    demoted; a policy change is seen; removing, truncating or punching
 *    a file takes it out of the tracker's sets (fs/track.h).
 *
 * t_set_heat() stands for the accesses that heat an extent: it notes the
 * extent (track_note()) as the read path does when a touch makes an
 * extent hot (track_touch()).
 */
#include <check.h>
#include <errno.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "faulty_tier.h"
#include "heat.h"
#include "t_fs.h"
#include "tap.h"
#include "throttle.h"
#include "track.h"
#include "attr.h"
#include "ctl.h"
#include "namespace.h"
#include "xattr.h"

#define EXT (64u * 1024)

static struct t_fs T;
static struct tierfs *fs;

static void setup3(int high, int low)
{
	/* ram 4, mid 8, slow 32 extents */
	static const uint32_t slots[] = { 4, 8, 32 };

	t_fs_setup(&T, EXT, 3, slots);
	fs = T.fs;
	/* mounted 100 s ago: stamps a few ticks old are not before tick 0
	 * (the migrator orders equal heat by raw stamp) */
	fs->start.tv_sec -= 100;
	T.opt.high_wm = high;
	T.opt.low_wm = low;
	fs->opt.high_wm = high;
	fs->opt.low_wm = low;
}

static void setup(void)
{
	setup3(100, 90);
}

static void teardown(void)
{
	t_gate_off();
	t_fs_teardown(&T);
	fs = NULL;
}

/* Set extent @idx's heat, stamped @age ticks before now (negative: a
 * stamp newer than the clock the pass will read). */
static void t_set_heat(struct tfs_inode *ino, uint64_t idx, uint32_t heat,
		       int32_t age)
{
	struct extent *e;

	pthread_rwlock_wrlock(&ino->i_dlock);
	e = extent_map_lookup(&ino->i_map, idx);
	ck_assert_ptr_nonnull(e);
	e->heat = (uint16_t)heat;
	e->stamp = tierfs_tick(fs) - (uint32_t)age;
	pthread_rwlock_unlock(&ino->i_dlock);
	track_note(fs, ino, idx);
}

/* A file of @n extents placed on tier @tier (by a policy set, then
 * removed again), heat 0. */
static struct tfs_inode *t_file_on(struct t_file *f, const char *name,
				   unsigned n, unsigned tier, unsigned seed)
{
	const char *tn = fs->tiers[tier]->name;

	t_file_init(f, t_create(fs, name), 16 * EXT);
	ck_assert_int_eq(attr_set(fs, f->ino, "user.tierfs.tiers", tn,
				   strlen(tn), 0, 0), 0);
	ck_assert_int_eq(t_write(fs, f, 0, n * EXT, seed), (ssize_t)(n * EXT));
	ck_assert_int_eq(attr_remove(fs, f->ino, "user.tierfs.tiers", 0), 0);
	for (unsigned i = 0; i < n; i++) {
		ck_assert_int_eq(t_tier_of(f->ino, i), (int)tier);
		t_set_heat(f->ino, i, 0, 0);
	}
	return f->ino;
}

static unsigned t_count_on(struct tfs_inode *ino, unsigned tier)
{
	unsigned n = 0;

	for (uint64_t i = 0; i < 16; i++)
		n += t_tier_of(ino, i) == (int)tier;
	return n;
}

static struct migrate_stats t_pass(void)
{
	struct migrate_stats st;

	ck_assert_int_eq(migrator_run_pass(fs, &st), 0);
	ck_assert_uint_eq(st.passes, 1);
	return st;
}

/* ------------------------------------------------------------------ */

START_TEST(test_hot_threshold)
{
	/* hot: promote_passes units, less an eighth for decay between
	 * passes (3 * 16 - 6 = 42) */
	const uint32_t hot_min = 3 * HEAT_UNIT - (3 * HEAT_UNIT) / 8;
	const uint32_t half = fs->half_life_ticks;
	struct t_file f;

	/*
	 * The test clock (--test-clock), stopped 100 s after the mount:
	 * t_verify()'s read below touches every extent, and on the real
	 * clock a read a tick or more after t_set_heat() (a loaded TSan
	 * run) made "just not" hot, which the second pass then moved.
	 */
	fs->opt.test_clock = true;
	fs->test_clock_ns = 100 * UINT64_C(1000000000);
	t_file_on(&f, "f", 5, 2, 1);
	t_set_heat(f.ino, 0, hot_min, 0);	   /* just hot */
	t_set_heat(f.ino, 1, hot_min - 1, 0);	   /* just not */
	t_set_heat(f.ino, 2, 2 * hot_min, (int32_t)half); /* decayed to hot */
	t_set_heat(f.ino, 3, 2 * hot_min, (int32_t)(2 * half)); /* to half */
	t_set_heat(f.ino, 4, hot_min, -50);	   /* stamped after "now" */
	t_pass();
	ck_assert_int_eq(t_tier_of(f.ino, 0), 0);
	ck_assert_int_eq(t_tier_of(f.ino, 1), 2);
	ck_assert_int_eq(t_tier_of(f.ino, 2), 0);
	ck_assert_int_eq(t_tier_of(f.ino, 3), 2);
	ck_assert_int_eq(t_tier_of(f.ino, 4), 0);
	t_verify(fs, &f);
	/* nothing left to do: a second pass moves nothing */
	ck_assert_uint_eq(t_pass().moved, 0);
	/* promote=0 keeps even a saturated extent where it is */
	ck_assert_int_eq(attr_set(fs, f.ino, "user.tierfs.promote", "0", 1, 0,
				   0), 0);
	t_set_heat(f.ino, 1, HEAT_MAX, 0);
	ck_assert_uint_eq(t_pass().moved, 0);
	ck_assert_int_eq(t_tier_of(f.ino, 1), 2);
	t_file_done(&f);
}
END_TEST

START_TEST(test_demote_coldest_first)
{
	struct t_file f;

	/* ram 4 slots: high 75% = 3, low 50% = 2 */
	teardown();
	setup3(75, 50);
	t_file_on(&f, "f", 4, 0, 1);
	t_set_heat(f.ino, 0, 40, 0);
	t_set_heat(f.ino, 1, 10, 5);  /* cold, older */
	t_set_heat(f.ino, 2, 10, 1);  /* as cold, more recent */
	t_set_heat(f.ino, 3, 200, 0);
	t_pass();
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 2);
	ck_assert_int_eq(t_tier_of(f.ino, 0), 0);
	ck_assert_int_eq(t_tier_of(f.ino, 1), 1); /* to the next tier down */
	ck_assert_int_eq(t_tier_of(f.ino, 2), 1);
	ck_assert_int_eq(t_tier_of(f.ino, 3), 0);
	t_verify(fs, &f);
	/* at the low mark: nothing moves */
	ck_assert_uint_eq(t_pass().moved, 0);
	/* one more extent: at the high mark, not above it: nothing moves.
	 * (Whole extents: capacity is counted in the bytes an extent holds,
	 * so a 10-byte one would hold a 4 KiB unit, not a slot.) */
	t_set_heat(f.ino, 0, 100, 0);
	ck_assert_int_eq(t_write(fs, &f, 5 * EXT, EXT, 2), (ssize_t)EXT);
	ck_assert_int_eq(t_tier_of(f.ino, 5), 0);
	t_set_heat(f.ino, 5, 1, 0);
	ck_assert_uint_eq(t_pass().moved, 0);
	/* two: above it, and back down to the low mark, coldest first */
	ck_assert_int_eq(t_write(fs, &f, 6 * EXT, EXT, 2), (ssize_t)EXT);
	t_set_heat(f.ino, 6, 2, 0);
	t_pass();
	ck_assert_int_eq(t_tier_of(f.ino, 5), 1);
	ck_assert_int_eq(t_tier_of(f.ino, 6), 1);
	ck_assert_int_eq(t_tier_of(f.ino, 0), 0);
	ck_assert_int_eq(t_tier_of(f.ino, 3), 0);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 2);
	t_verify(fs, &f);
	t_file_done(&f);
}
END_TEST

/* _i 0: the victim's policy allows ram,mid only: it goes to mid, never
 * to slow; _i 1: no policy: it takes the promoted extent's slow slot. */
START_TEST(test_exchange_victim_policy)
{
	struct t_file r, h;

	t_file_on(&r, "r", 4, 0, 1);
	if (_i == 0)
		ck_assert_int_eq(attr_set(fs, r.ino, "user.tierfs.tiers",
					   "t0,t1", 5, 0, 0), 0);
	for (unsigned i = 0; i < 4; i++)
		t_set_heat(r.ino, i, 2, (int32_t)i);
	t_file_on(&h, "h", 2, 2, 2);
	t_set_heat(h.ino, 0, 100, 0);
	t_set_heat(h.ino, 1, 90, 0);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 4);
	t_pass();
	ck_assert_uint_eq(t_count_on(h.ino, 0), 2);
	ck_assert_uint_eq(t_count_on(r.ino, 0), 2);
	if (_i == 0) {
		ck_assert_uint_eq(t_count_on(r.ino, 1), 2);
		ck_assert_uint_eq(t_count_on(r.ino, 2), 0);
	} else {
		ck_assert_uint_eq(t_count_on(r.ino, 2), 2);
	}
	/* the oldest of the equally cold ones went first */
	ck_assert_int_ne(t_tier_of(r.ino, 3), 0);
	ck_assert_int_ne(t_tier_of(r.ino, 2), 0);
	t_verify(fs, &r);
	t_verify(fs, &h);
	ck_assert_uint_eq(t_used(fs), 6);
	/* stable: no ping-pong */
	ck_assert_uint_eq(t_pass().moved, 0);
	t_file_done(&r);
	t_file_done(&h);
}
END_TEST

START_TEST(test_drain)
{
	struct t_file a, b;
	struct migrate_stats st;

	t_file_on(&a, "a", 3, 0, 1);
	t_file_on(&b, "b", 1, 0, 2);
	/* b may live on ram only, yet a drain moves it too */
	ck_assert_int_eq(attr_set(fs, b.ino, "user.tierfs.tiers", "t0", 2, 0,
				   0), 0);
	__atomic_or_fetch(&fs->draining, 1u, __ATOMIC_RELAXED);
	st = t_pass();
	ck_assert_uint_eq(st.drain_stuck, 0);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 0);
	ck_assert_uint_eq(t_count_on(a.ino, 1), 3); /* next slower first */
	ck_assert_uint_eq(t_count_on(b.ino, 0), 0);
	t_verify(fs, &a);
	t_verify(fs, &b);
	/* hot data is not promoted onto a draining tier */
	t_set_heat(a.ino, 0, HEAT_MAX, 0);
	ck_assert_uint_eq(t_pass().moved, 0);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 0);
	/* drain mid and slow too: nowhere to go, all stuck */
	__atomic_or_fetch(&fs->draining, 6u, __ATOMIC_RELAXED);
	st = t_pass();
	ck_assert_uint_eq(st.drain_stuck, 4);
	ck_assert_uint_eq(st.moved, 0);
	/* undrained: b goes home to ram, a may stay */
	__atomic_store_n(&fs->draining, 0, __ATOMIC_RELAXED);
	t_pass();
	ck_assert_int_eq(t_tier_of(b.ino, 0), 0);
	t_verify(fs, &a);
	t_verify(fs, &b);
	ck_assert_uint_eq(t_used(fs), 4);
	t_file_done(&a);
	t_file_done(&b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* a file removed while a pass runs */

static struct {
	struct tfs_inode *orphan, *keep;
	uint64_t used_at_keep; /* slots in use when keep's move began */
	unsigned orphan_moves;
} rm;

static void rm_hook(enum testhook_point point, struct tfs_inode *inode,
		    uint64_t idx)
{
	(void)idx;
	if (point == TESTHOOK_MIGRATE_COLLECTED && rm.orphan) {
		/* unlink + close + forget: only the pass's pin holds it */
		t_unlink(fs, "o");
		t_forget(fs, rm.orphan);
	} else if (point == TESTHOOK_MOVE_COPIED) {
		if (inode == rm.orphan)
			rm.orphan_moves++;
		if (inode == rm.keep && !rm.used_at_keep)
			rm.used_at_keep = t_used(fs);
	}
}

START_TEST(test_orphan_released)
{
	struct t_file o, k;

	memset(&rm, 0, sizeof(rm));
	/* both hot on slow; the orphan hotter, so considered first */
	rm.orphan = t_file_on(&o, "o", 3, 2, 1);
	rm.keep = t_file_on(&k, "k", 1, 2, 2);
	for (unsigned i = 0; i < 3; i++)
		t_set_heat(o.ino, i, 500, 0);
	t_set_heat(k.ino, 0, 100, 0);
	__atomic_store_n(&testhook_fn, rm_hook, __ATOMIC_RELEASE);
	t_pass();
	t_gate_off();
	ck_assert_uint_eq(rm.orphan_moves, 0);
	/* its three slots were free before the pass went on: keep's
	 * source and the destination it has just taken are all in use */
	ck_assert_uint_eq(rm.used_at_keep, 2);
	ck_assert_uint_eq(t_used(fs), 1);
	ck_assert_int_eq(t_tier_of(k.ino, 0), 0);
	t_verify(fs, &k);
	t_file_done(&o);
	t_file_done(&k);
	t_assert_no_leak(fs);
}
END_TEST

/* ------------------------------------------------------------------ */
/* every tier call of a pass failed in turn */

/* _i: the tier armed */
START_TEST(test_pass_faults)
{
	unsigned n, tier = (unsigned)_i;

	teardown();
	setup3(75, 50);
	for (n = 1; n < 1000; n++) {
		struct t_file a, b;
		bool fired;

		/* a: 4 on ram (above high: 2 are demoted); b: hot on slow,
		 * for the room the demotion makes */
		t_file_on(&a, "a", 4, 0, 1);
		t_file_on(&b, "b", 2, 2, 2);
		t_set_heat(b.ino, 0, 300, 0);
		t_set_heat(b.ino, 1, 300, 0);
		faulty_tier_arm(fs->tiers[tier], (int)n, EIO);
		t_pass();
		fired = faulty_tier_fired(fs->tiers[tier]);
		faulty_tier_disarm(fs->tiers[tier]);
		t_verify(fs, &a);
		t_verify(fs, &b);
		ck_assert_uint_eq(t_used(fs), 6);
		t_assert_no_leak(fs);
		ck_assert_int_eq(t_write(fs, &a, 10, 20, 3), 20);
		t_verify(fs, &a);
		t_unlink(fs, "a");
		t_forget(fs, a.ino);
		t_unlink(fs, "b");
		t_forget(fs, b.ino);
		t_file_done(&a);
		t_file_done(&b);
		ck_assert_uint_eq(t_used(fs), 0);
		if (!fired)
			break;
	}
	ck_assert_uint_gt(n, 1);
	ck_assert_uint_lt(n, 1000);
}
END_TEST

START_TEST(test_run_pass_busy)
{
	ck_assert_int_eq(migrator_start(fs), 0);
	ck_assert_int_eq(migrator_run_pass(fs, NULL), -EBUSY);
	migrator_stop(fs);
	ck_assert_int_eq(migrator_run_pass(fs, NULL), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* one bandwidth limit for all movers; kicks coalesce */

static double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *throttle_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++)
		migrate_throttle(fs, 256 * 1024);
	return NULL;
}

START_TEST(test_throttle_shared)
{
	pthread_t a, b;
	double t0;

	/* 8 x 256 KiB = 2 MiB at 4 MiB/s, from two threads: >= 0.5 s,
	 * less the limiter's slack */
	fs->opt.migrate_bw = 4u << 20;
	t0 = t_now();
	ck_assert_int_eq(pthread_create(&a, NULL, throttle_main, NULL), 0);
	ck_assert_int_eq(pthread_create(&b, NULL, throttle_main, NULL), 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	ck_assert_msg(t_now() - t0 >= 0.5 - THROTTLE_SLACK_NS / 1e9,
		      "2 MiB at 4 MiB/s in %.3f s", t_now() - t0);
	/* no limit: no wait */
	fs->opt.migrate_bw = 0;
	t0 = t_now();
	throttle_main(NULL);
	ck_assert(t_now() - t0 < 0.5);
}
END_TEST

/*
 * A pass that drains a tier gives the drained slots back in batches
 * (data_move_batch_begin()): forty 4 KiB files in consecutive RAM slots
 * take a few discards, not forty; every byte reads back from the tier
 * below, and the drained tier is empty when the pass ends.
 */
START_TEST(test_drain_frees_in_runs)
{
	enum { N = 40 };
	static struct t_file f[N];
	char name[16];
	int discards;

	for (unsigned i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		t_file_init(&f[i], t_create(fs, name), EXT);
		ck_assert_int_eq(t_write(fs, &f[i], 0, 4096, i + 1), 4096);
		ck_assert_int_eq(t_tier_of(f[i].ino, 0), 0);
	}
	__atomic_or_fetch(&fs->draining, 1u, __ATOMIC_RELAXED);
	/* the fault hook, armed far out, counts t0's discards */
	faulty_tier_arm_ops(fs->tiers[0], TIER_FAULT_DISCARD, 1000, EIO);
	ck_assert_uint_eq(t_pass().moved, N); /* a draining tier's walk: one
						 pass takes everything */
	discards = 1000 - fs->tiers[0]->fault_countdown;
	faulty_tier_disarm(fs->tiers[0]);
	ck_assert_msg(discards >= 1 && discards <= 4,
		      "%d discards for %d drained slots", discards, N);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 0);
	ck_assert_uint_eq(tier_used_bytes(fs->tiers[0]), 0);
	for (unsigned i = 0; i < N; i++) {
		ck_assert_int_ne(t_tier_of(f[i].ino, 0), 0);
		t_verify(fs, &f[i]);
		t_file_done(&f[i]);
	}
	__atomic_and_fetch(&fs->draining, ~1u, __ATOMIC_RELAXED);
}
END_TEST

/* The one drain order (migrate_drain_order()): every other tier once,
 * the slower ones nearest first, then the faster ones nearest first. */
START_TEST(test_drain_order)
{
	for (unsigned n = 2; n <= TIER_MAX_CONF; n++)
		for (unsigned t = 0; t < n; t++) {
			unsigned want[TIER_MAX_CONF], w = 0;

			for (unsigned u = t + 1; u < n; u++)
				want[w++] = u;
			for (unsigned u = t; u-- > 0;)
				want[w++] = u;
			ck_assert_uint_eq(w, n - 1);
			for (unsigned k = 1; k < n; k++)
				ck_assert_msg(migrate_drain_order(t, k, n) ==
						      want[k - 1],
					      "n=%u t=%u k=%u: %u, not %u", n,
					      t, k, migrate_drain_order(t, k, n),
					      want[k - 1]);
		}
}
END_TEST

/*
 * Each mount has its own limiter (fs->mig_thr), with or without a
 * migrator: moves on a second mount neither share the first one's
 * bandwidth nor wipe its counters.  The limiter was once one process
 * global handed to whichever mount used it last, which reset it, so the
 * first mount's throttled_bytes read 0 after the second one moved.
 */
START_TEST(test_throttle_per_mount)
{
	const uint32_t slots[2] = { 8, 8 };
	struct migrate_stats a, b;
	struct t_fs other;

	t_fs_setup(&other, EXT, 2, slots);
	ck_assert_ptr_nonnull(fs->mig_thr);
	ck_assert_ptr_ne(fs->mig_thr, other.fs->mig_thr);
	/* fast enough that nothing waits longer than the slack */
	fs->opt.migrate_bw = 1ull << 40;
	other.fs->opt.migrate_bw = 1ull << 40;
	migrate_throttle(fs, 256 * 1024);
	migrate_throttle(other.fs, 64 * 1024);
	migrate_throttle(fs, 256 * 1024);
	migrator_get_stats(fs, &a);
	migrator_get_stats(other.fs, &b);
	ck_assert_uint_eq(a.throttled_bytes, 512 * 1024);
	ck_assert_uint_eq(b.throttled_bytes, 64 * 1024);
	fs->opt.migrate_bw = 0;
	t_fs_teardown(&other);
}
END_TEST

START_TEST(test_kicks_coalesce)
{
	struct migrate_stats st;
	double t0;

	ck_assert_int_eq(migrator_start(fs), 0);
	t0 = t_now();
	/* a kick every millisecond for a second: at most one pass every
	 * 250 ms (and the first one) */
	while (t_now() - t0 < 1.0) {
		migrator_kick(fs);
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	migrator_get_stats(fs, &st);
	migrator_stop(fs);
	ck_assert_msg(st.passes <= 6, "%llu passes in 1 s of kicks",
		      (unsigned long long)st.passes);
	ck_assert_uint_ge(st.passes, 2); /* but kicks do bring passes */
}
END_TEST

static uint64_t t_passes(void)
{
	struct migrate_stats st;

	migrator_get_stats(fs, &st);
	return st.passes;
}

static int t_clock(const char *ms)
{
	return ctl_clock(fs, ms, strlen(ms));
}

/*
 * --test-clock (issue 32): the heat ticks and the migrator thread follow
 * the test's clock, and moving it returns once the pass it made due has
 * ended: one pass per 500 ms of test time however far it moved, a
 * kicked one after the 250 ms gap, none before; not a millisecond of
 * it passes by itself.  Malformed steps are refused, and a mount
 * without the option knows no such control.
 */
START_TEST(test_test_clock)
{
	static const char *const bad[] = { "", "-1", "1x", " 5", "86400001",
					   "99999999999999999999999" };

	ck_assert_int_eq(t_clock("500"), -EINVAL); /* no --test-clock */
	fs->opt.test_clock = true; /* as the option would, before start */
	ck_assert_uint_eq(tierfs_tick(fs), 0);
	ck_assert_int_eq(migrator_start(fs), 0);
	ck_assert_int_eq(t_clock("100"), 0);
	ck_assert_uint_eq(t_passes(), 0);
	ck_assert_uint_eq(tierfs_tick(fs), 1);
	ck_assert_int_eq(t_clock("399"), 0);
	ck_assert_uint_eq(t_passes(), 0);
	ck_assert_int_eq(t_clock("1"), 0); /* 500 ms after the start */
	ck_assert_uint_eq(t_passes(), 1);
	ck_assert_int_eq(t_clock("5000"), 0);
	ck_assert_uint_eq(t_passes(), 2);
	ck_assert_uint_eq(tierfs_tick(fs), 55);
	ck_assert_int_eq(t_clock("0"), 0);
	ck_assert_uint_eq(t_passes(), 2);
	/* a kick: due 250 ms after the last pass, not sooner */
	migrator_kick(fs);
	ck_assert_int_eq(t_clock("249"), 0);
	ck_assert_uint_eq(t_passes(), 2);
	ck_assert_int_eq(t_clock("1"), 0);
	ck_assert_uint_eq(t_passes(), 3);
	/* the real clock moves nothing: 50 ms of it, no pass, same tick */
	nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	ck_assert_uint_eq(t_passes(), 3);
	ck_assert_uint_eq(tierfs_tick(fs), 57);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(t_clock(bad[i]), -EINVAL);
	ck_assert_uint_eq(tierfs_tick(fs), 57);
	migrator_stop(fs);
}
END_TEST

/* ------------------------------------------------------------------ */
/* what a pass costs: the tracker (issue 12) */

#define NEMPTY 20000

static struct tfs_inode *empties[NEMPTY];

/* NEMPTY empty files e0 .. e19999, as many creates leave them. */
static void t_empties(void)
{
	char name[32];

	for (unsigned i = 0; i < NEMPTY; i++) {
		snprintf(name, sizeof(name), "e%u", i);
		empties[i] = t_create(fs, name);
	}
}

/* Extents in @ino's map on each tier, counted the slow way. */
static void t_map_counts(struct tfs_inode *ino, uint64_t n[TIER_MAX_CONF])
{
	struct extent *e;
	uint64_t idx;

	pthread_rwlock_rdlock(&ino->i_dlock);
	extent_for_each(&ino->i_map, e, idx)
		n[e->tier]++;
	pthread_rwlock_unlock(&ino->i_dlock);
}

/* The tracker agrees with the maps of @files[0..@n). */
static void t_assert_tracked(struct tfs_inode **files, unsigned n)
{
	uint64_t want[TIER_MAX_CONF] = { 0 }, inodes = 0, on[TIER_MAX_CONF] = { 0 };
	uint64_t ti, te, tq;

	for (unsigned i = 0; i < n; i++) {
		uint64_t c[TIER_MAX_CONF] = { 0 }, sum = 0;

		t_map_counts(files[i], c);
		for (unsigned t = 0; t < fs->ntiers; t++) {
			want[t] += c[t];
			on[t] += c[t] > 0;
			sum += c[t];
		}
		inodes += sum > 0;
	}
	track_counts(fs, &ti, &te, &tq);
	ck_assert_uint_eq(ti, inodes);
	ck_assert_uint_eq(te, want[0] + want[1] + want[2]);
	for (unsigned t = 0; t < fs->ntiers; t++)
		ck_assert_uint_eq(track_inodes_on(fs, t), on[t]);
}

/* Passes until one has nothing to look at (bounded); returns the stats
 * summed over them. */
static struct migrate_stats t_settle(void)
{
	struct migrate_stats sum = { 0 };

	for (int i = 0; i < 10; i++) {
		struct migrate_stats st = t_pass();

		sum.passes += st.passes;
		sum.moved += st.moved;
		sum.visited_inodes += st.visited_inodes;
		sum.visited_extents += st.visited_extents;
		if (st.idle_passes)
			return sum;
	}
	ck_abort_msg("the migrator did not go idle in 10 passes");
	return sum;
}

START_TEST(test_idle_visits_nothing)
{
	struct migrate_stats st;
	struct t_file d;
	char name[32];
	uint64_t gen;

	t_empties();
	/* one file with data: 3 extents on slow */
	t_file_on(&d, "d", 3, 2, 1);
	st = t_settle();
	/* its first look: at most one inode per pass, its 3 extents */
	ck_assert_uint_le(st.visited_inodes, st.passes);
	ck_assert_uint_ge(st.visited_inodes, 1);
	ck_assert_uint_eq(st.moved, 0);
	/* nothing changed: ten passes, nothing visited */
	for (int i = 0; i < 10; i++) {
		st = t_pass();
		ck_assert_uint_eq(st.idle_passes, 1);
		ck_assert_uint_eq(st.visited_inodes, 0);
		ck_assert_uint_eq(st.visited_extents, 0);
	}
	/* removing files changes no other file's policy: the policy
	 * generation stays and the pass looks at nothing (issue 20: every
	 * unlink once sent the next pass over every inode with data) */
	gen = fs->policy_gen;
	for (unsigned i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "e%u", i);
		t_unlink(fs, name);
		t_forget(fs, empties[i]);
	}
	ck_assert_uint_eq(fs->policy_gen, gen);
	st = t_pass();
	ck_assert_uint_eq(st.visited_inodes, 0);
	ck_assert_uint_eq(st.visited_extents, 0);
	ck_assert_uint_eq(st.idle_passes, 1);
	/* a pin is a policy change that matters: every extent goes */
	ck_assert_int_eq(attr_set(fs, d.ino, "user.tierfs.pin", "t1", 2, 0,
				   0), 0);
	st = t_pass();
	ck_assert_uint_eq(st.visited_inodes, 1);
	ck_assert_uint_ge(st.visited_extents, 3);
	ck_assert_uint_eq(st.moved, 3);
	ck_assert_uint_eq(t_count_on(d.ino, 1), 3);
	t_verify(fs, &d);
	t_settle();
	ck_assert_uint_eq(t_pass().visited_inodes, 0);
	t_file_done(&d);
}
END_TEST

/*
 * A rename of a file changes that file's policy only: the next pass
 * looks at it alone, and moves its data to the new directory's tiers;
 * the other file with data is not visited.  A rename of a directory
 * changes its subtree's: that bumps the policy generation.
 */
START_TEST(test_rename_scoped_to_the_file)
{
	struct ns_cred cred = { .uid = getuid(), .gid = getgid() };
	struct tfs_inode *pinned, *plain;
	struct migrate_stats st;
	struct t_file a, b;
	struct stat sb;
	uint64_t gen;

	ck_assert_int_eq(ns_mkdir(fs, fs->root, "pinned", 0755, &cred,
				  &pinned, &sb), 0);
	ck_assert_int_eq(attr_set(fs, pinned, "user.tierfs.pin", "t1", 2, 0,
				  0), 0);
	ck_assert_int_eq(ns_mkdir(fs, fs->root, "plain", 0755, &cred, &plain,
				  &sb), 0);
	t_file_on(&a, "a", 2, 0, 1);
	t_file_on(&b, "b", 2, 0, 2);
	t_settle();
	ck_assert_uint_eq(t_count_on(a.ino, 0), 2);

	gen = fs->policy_gen;
	ck_assert_int_eq(ns_rename(fs, fs->root, "a", pinned, "a", 0), 0);
	ck_assert_uint_eq(fs->policy_gen, gen);
	st = t_pass();
	ck_assert_uint_eq(st.visited_inodes, 1);
	ck_assert_uint_eq(st.moved, 2);
	ck_assert_uint_eq(t_count_on(a.ino, 1), 2);
	ck_assert_uint_eq(t_count_on(b.ino, 0), 2);
	t_verify(fs, &a);
	t_settle();

	/* and back out, through a hard link's removal: a's policy is its
	 * latest name's directory again, the root's */
	ck_assert_int_eq(ns_link(fs, a.ino, fs->root, "a2", &sb), 0);
	ck_assert_int_eq(ns_unlink(fs, pinned, "a"), 0);
	ck_assert_uint_eq(fs->policy_gen, gen);
	st = t_settle();
	ck_assert_uint_eq(st.visited_inodes, 1);
	t_verify(fs, &a);

	/* a directory's rename may change every file below it */
	ck_assert_int_eq(ns_rename(fs, fs->root, "plain", pinned, "plain", 0),
			 0);
	ck_assert_uint_gt(fs->policy_gen, gen);
	t_settle();
	t_verify(fs, &a);
	t_verify(fs, &b);
	t_file_done(&a);
	t_file_done(&b);
}
END_TEST

/* Read extent @idx of @f once, @gap seconds after the last read (the
 * heat clock is moved on, not waited for). */
static void t_read_pass(struct t_file *f, uint64_t idx, int gap)
{
	char buf[512];

	fs->start.tv_sec -= gap;
	ck_assert_int_eq(data_read(fs, f->ino, buf, sizeof(buf), idx * EXT),
			 (ssize_t)sizeof(buf));
	ck_assert_int_eq(memcmp(buf, f->shadow + idx * EXT, sizeof(buf)), 0);
}

START_TEST(test_hot_and_cold_among_empties)
{
	struct migrate_stats st;
	struct t_file h, c;
	uint64_t passes = 0, visited = 0;

	/* ram 4 slots: high 75% = 3, low 50% = 2 */
	teardown();
	setup3(75, 50);
	t_empties();
	t_file_on(&h, "h", 2, 2, 1); /* on slow, never read yet */
	t_file_on(&c, "c", 2, 0, 2); /* on ram, under the high mark */
	st = t_settle();
	passes += st.passes;
	visited += st.visited_inodes;
	ck_assert_uint_eq(st.moved, 0);

	/* three reads of h's extent 1, a second apart: hot, through the
	 * read path's own hook (data.c -> track_touch()) */
	for (int i = 0; i < 3; i++) {
		t_read_pass(&h, 1, 1);
		st = t_pass();
		passes += st.passes;
		visited += st.visited_inodes;
	}
	ck_assert_int_eq(t_tier_of(h.ino, 1), 0);
	ck_assert_int_eq(t_tier_of(h.ino, 0), 2); /* never read: stays */
	t_verify(fs, &h);

	/* ram at 3 of 4: one more extent of c puts it above 75% and the
	 * coldest go down to 50% */
	ck_assert_int_eq(t_write(fs, &c, 2 * EXT, EXT, 3), (ssize_t)EXT);
	ck_assert_int_eq(t_tier_of(c.ino, 2), 0);
	t_set_heat(h.ino, 1, 200, 0);
	t_set_heat(c.ino, 0, 5, 3);
	t_set_heat(c.ino, 1, 5, 2);
	t_set_heat(c.ino, 2, 100, 0);
	st = t_settle();
	passes += st.passes;
	visited += st.visited_inodes;
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 2);
	ck_assert_int_eq(t_tier_of(c.ino, 0), 1);
	ck_assert_int_eq(t_tier_of(c.ino, 1), 1);
	ck_assert_int_eq(t_tier_of(c.ino, 2), 0);
	ck_assert_int_eq(t_tier_of(h.ino, 1), 0);
	t_verify(fs, &h);
	t_verify(fs, &c);
	/* never more than the two files with data per pass, of 20,002 */
	ck_assert_uint_le(visited, 2 * passes);
	t_assert_tracked((struct tfs_inode *[]){ h.ino, c.ino }, 2);
	t_file_done(&h);
	t_file_done(&c);
}
END_TEST

START_TEST(test_removed_leaves_sets)
{
	struct t_file a, b;
	uint64_t ti, te, tq;
	struct tfs_inode *files[2];

	t_empties();
	t_file_on(&a, "a", 3, 0, 1);
	t_file_on(&b, "b", 2, 2, 2);
	ck_assert_int_eq(t_write(fs, &b, 8 * EXT, 100, 3), 100);
	files[0] = a.ino;
	files[1] = b.ino;
	t_assert_tracked(files, 2);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 2); /* b's new extent */
	ck_assert_uint_eq(track_inodes_on(fs, 2), 1);
	t_settle();

	/* punch and truncate count extents out */
	ck_assert_int_eq(data_fallocate(fs, b.ino, FALLOC_FL_PUNCH_HOLE |
					FALLOC_FL_KEEP_SIZE, 0, EXT), 0);
	t_assert_tracked(files, 2);
	ck_assert_int_eq(data_truncate(fs, a.ino, 0), 0);
	t_assert_tracked(files, 2);
	ck_assert_uint_eq(track_inodes_on(fs, 0), 1);

	/* a removed file leaves every set, and a pass looks at nothing */
	t_unlink(fs, "b");
	t_forget(fs, b.ino);
	track_counts(fs, &ti, &te, &tq);
	ck_assert_uint_eq(ti, 0);
	ck_assert_uint_eq(te, 0);
	for (unsigned t = 0; t < fs->ntiers; t++)
		ck_assert_uint_eq(track_inodes_on(fs, t), 0);
	t_settle();
	ck_assert_uint_eq(t_pass().visited_inodes, 0);
	ck_assert_uint_eq(t_used(fs), 0);
	t_assert_no_leak(fs);
	t_file_done(&a);
	t_file_done(&b);
}
END_TEST

/* Notes lost (no memory for the queue): the next pass looks at every
 * inode with data, and still finds what is hot. */
START_TEST(test_lost_notes_full_look)
{
	struct migrate_stats st;
	struct t_file f, g;
	struct extent *e;

	t_empties();
	t_file_on(&f, "f", 2, 2, 1);
	t_file_on(&g, "g", 1, 1, 2);
	t_settle();
	/* hot without a note */
	pthread_rwlock_wrlock(&f.ino->i_dlock);
	e = extent_map_lookup(&f.ino->i_map, 1);
	e->heat = 200;
	e->stamp = tierfs_tick(fs);
	pthread_rwlock_unlock(&f.ino->i_dlock);
	ck_assert_uint_eq(t_pass().moved, 0);
	track_lost(fs);
	st = t_pass();
	ck_assert_uint_eq(st.visited_inodes, 2);
	ck_assert_uint_eq(st.visited_extents, 3);
	ck_assert_int_eq(t_tier_of(f.ino, 1), 0);
	t_verify(fs, &f);
	t_file_done(&f);
	t_file_done(&g);
}
END_TEST

/*
 * --page-cache only (issue 32): what an admin placed in a lending tier
 * holds there within the tier's cap, and beyond it the coldest placed
 * extents are lent as any other (two tierctl moves at once may both
 * pass ctl_action.c's check; an owner must not keep the tier above the
 * cap).  Cap 2 extents, 4 placed: the 2 coldest go down, then nothing.
 */
START_TEST(test_lend_cap_counts_placed)
{
	struct migrate_stats st;
	struct t_file f;

	t_file_on(&f, "f", 4, 0, 1);
	fs->lending = 1u << 0;
	fs->lend_cap = 2 * EXT;
	for (uint64_t i = 0; i < 4; i++) {
		struct extent *e;

		pthread_rwlock_wrlock(&f.ino->i_dlock);
		e = extent_map_lookup(&f.ino->i_map, i);
		e->flags |= EXTENT_F_PLACED;
		pthread_rwlock_unlock(&f.ino->i_dlock);
		/* 10 s old, well past LEND_AGE_TICKS; 0 and 2 coldest */
		t_set_heat(f.ino, i, i % 2 ? 200 : 20,
			   10 * HEAT_TICKS_PER_SEC);
	}
	st = t_pass();
	ck_assert_uint_eq(st.lent, 2);
	ck_assert_int_eq(t_tier_of(f.ino, 0), 1);
	ck_assert_int_eq(t_tier_of(f.ino, 1), 0);
	ck_assert_int_eq(t_tier_of(f.ino, 2), 1);
	ck_assert_int_eq(t_tier_of(f.ino, 3), 0);
	ck_assert_uint_le(tier_used_bytes(fs->tiers[0]), fs->lend_cap);
	/* within the cap a placement holds */
	t_set_heat(f.ino, 1, 200, 10 * HEAT_TICKS_PER_SEC);
	st = t_pass();
	ck_assert_uint_eq(st.moved, 0);
	ck_assert_uint_eq(t_count_on(f.ino, 0), 2);
	t_verify(fs, &f);
	t_file_done(&f);
}
END_TEST

static Suite *migrate_suite(void)
{
	Suite *s = suite_create("migrate");
	TCase *tc = tcase_create("decisions");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_hot_threshold);
	tcase_add_test(tc, test_demote_coldest_first);
	tcase_add_loop_test(tc, test_exchange_victim_policy, 0, 2);
	tcase_add_test(tc, test_drain);
	tcase_add_test(tc, test_orphan_released);
	tcase_add_loop_test(tc, test_pass_faults, 0, 3);
	tcase_add_test(tc, test_run_pass_busy);
	tcase_add_test(tc, test_throttle_shared);
	tcase_add_test(tc, test_throttle_per_mount);
	tcase_add_test(tc, test_drain_order);
	tcase_add_test(tc, test_drain_frees_in_runs);
	tcase_add_test(tc, test_kicks_coalesce);
	tcase_add_test(tc, test_lend_cap_counts_placed);
	tcase_add_test(tc, test_test_clock);
	suite_add_tcase(s, tc);

	tc = tcase_create("tracking");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_idle_visits_nothing);
	tcase_add_test(tc, test_rename_scoped_to_the_file);
	tcase_add_test(tc, test_hot_and_cold_among_empties);
	tcase_add_test(tc, test_removed_leaves_sets);
	tcase_add_test(tc, test_lost_notes_full_look);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(migrate_suite());
}
