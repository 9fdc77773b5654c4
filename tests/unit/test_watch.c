// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_watch.c -- Check suite for tiers/tier_watch.c (issue 32): the
 * calls inside a tier's back end are bounded (TIER_WATCH_MAX in all,
 * TIER_WATCH_PER_OWNER per principal), a call past a bound waits for
 * its turn, and a tier whose calls inside do not come back for its
 * timeout is stalled: the waiting calls and the new ones fail with
 * -ETIMEDOUT, and the first call back ends it.  Calls are made to
 * "hang" by entering the watch from threads that do not leave until the
 * test lets them: the watch never looks at what happens inside.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tier.h"
#include "tier_watch.h"
#include "owner.h"
#include "tap.h"
#include "banned.h"

static char dir[64];
static struct tier *t;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/tierwatch-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(tier_create("disk", TIER_FILE, dir, 64 << 20,
				     1 << 20, &t), 0);
	ck_assert_ptr_nonnull(t->watch);
}

static void teardown(void)
{
	t = tier_free(t);
	rmdir(dir);
}

/* A thread that enters the watch as @uid and stays until told. */
struct caller {
	pthread_t th;
	uint32_t uid;
	bool may_refuse;
	int r;		 /* what enter returned */
	bool entered;	 /* enter returned (lock) */
	bool go;	 /* leave now (lock) */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	int r;

	owner_set_uid(c->uid);
	r = tier_watch_enter(t->watch, c->may_refuse);
	pthread_mutex_lock(&lock);
	c->r = r;
	c->entered = true;
	pthread_cond_broadcast(&cond);
	while (r == 0 && !c->go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	if (r == 0)
		tier_watch_leave(t->watch);
	return NULL;
}

static void start(struct caller *c, uint32_t uid, bool may_refuse)
{
	memset(c, 0, sizeof(*c));
	c->uid = uid;
	c->may_refuse = may_refuse;
	ck_assert_int_eq(pthread_create(&c->th, NULL, caller_main, c), 0);
}

/* Wait (at most @secs) until @c's enter returned; its result, or 1 if
 * it had not returned by then. */
static int entered(struct caller *c, int secs)
{
	struct timespec ts;
	int r = 1;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	pthread_mutex_lock(&lock);
	while (!c->entered &&
	       pthread_cond_timedwait(&cond, &lock, &ts) != ETIMEDOUT)
		;
	if (c->entered)
		r = c->r;
	pthread_mutex_unlock(&lock);
	return r;
}

static void let_go(struct caller *c)
{
	pthread_mutex_lock(&lock);
	c->go = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	ck_assert_int_eq(pthread_join(c->th, NULL), 0);
}

/* Poll the stats (at most @secs) until @n calls wait. */
static bool waiting_is(unsigned n, int secs)
{
	struct tier_watch_stats ws;

	for (int i = 0; i < secs * 100; i++) {
		tier_get_watch_stats(t, &ws);
		if (ws.waiting == n)
			return true;
		usleep(10000);
	}
	return false;
}

START_TEST(test_memory_tier_has_no_watch)
{
	struct tier *ram;
	struct tier_watch_stats ws;

	ck_assert_int_eq(tier_create("ram", TIER_RAM, NULL, 8 << 20, 1 << 20,
				     &ram), 0);
	ck_assert_ptr_null(ram->watch);
	ck_assert_int_eq(tier_watch_enter(ram->watch, true), 0);
	tier_watch_leave(ram->watch);
	ck_assert(!tier_stalled(ram));
	tier_get_watch_stats(ram, &ws);
	ck_assert_uint_eq(ws.inside, 0);
	tier_free(ram);
}
END_TEST

/* One user holds its share; the next call of that user waits, another
 * user's goes in; the whole tier holds TIER_WATCH_MAX. */
START_TEST(test_bounds)
{
	struct caller a[TIER_WATCH_PER_OWNER + 1], b[TIER_WATCH_MAX];
	struct tier_watch_stats ws;

	tier_set_timeout(t, 0); /* no stall here: only the bounds */
	for (int i = 0; i < TIER_WATCH_PER_OWNER; i++) {
		start(&a[i], 1001, true);
		ck_assert_int_eq(entered(&a[i], 10), 0);
	}
	start(&a[TIER_WATCH_PER_OWNER], 1001, true);
	ck_assert(waiting_is(1, 10));
	ck_assert_int_eq(entered(&a[TIER_WATCH_PER_OWNER], 0), 1);
	/* other users fill the rest of the tier */
	for (int i = 0; i < TIER_WATCH_MAX - TIER_WATCH_PER_OWNER; i++) {
		start(&b[i], 2000 + i, true);
		ck_assert_int_eq(entered(&b[i], 10), 0);
	}
	tier_get_watch_stats(t, &ws);
	ck_assert_uint_eq(ws.inside, TIER_WATCH_MAX);
	/* one more user: the tier is full, it waits too */
	start(&b[TIER_WATCH_MAX - TIER_WATCH_PER_OWNER], 3000, true);
	ck_assert(waiting_is(2, 10));
	/* a call of another user back: the new user goes in, user 1001
	 * still may not (its share is full) */
	let_go(&b[0]);
	ck_assert_int_eq(entered(&b[TIER_WATCH_MAX - TIER_WATCH_PER_OWNER],
				 10), 0);
	ck_assert(waiting_is(1, 10));
	/* a call of 1001 back: its waiting one goes in */
	let_go(&a[0]);
	ck_assert_int_eq(entered(&a[TIER_WATCH_PER_OWNER], 10), 0);
	for (int i = 1; i <= TIER_WATCH_PER_OWNER; i++)
		let_go(&a[i]);
	for (int i = 1; i <= TIER_WATCH_MAX - TIER_WATCH_PER_OWNER; i++)
		let_go(&b[i]);
	tier_get_watch_stats(t, &ws);
	ck_assert_uint_eq(ws.inside, 0);
	ck_assert_uint_eq(ws.stalls, 0);
}
END_TEST

/* Calls inside that do not come back for the timeout stall the tier:
 * the waiting call and new ones fail at once, a discard (may_refuse
 * false) still waits, and the first call back ends the stall. */
START_TEST(test_stall)
{
	struct caller a[TIER_WATCH_PER_OWNER + 1], c, d;
	struct tier_watch_stats ws;
	struct timespec t0, t1;

	tier_set_timeout(t, 300);
	/* before the first call goes in: the stall cannot come sooner
	 * than 300 ms after this (a lower bound, which load cannot break) */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < TIER_WATCH_PER_OWNER; i++) {
		start(&a[i], 1001, true);
		ck_assert_int_eq(entered(&a[i], 10), 0);
	}
	start(&a[TIER_WATCH_PER_OWNER], 1001, true);
	/* the waiting call gives up once the tier is 300 ms late */
	ck_assert_int_eq(entered(&a[TIER_WATCH_PER_OWNER], 30), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_int_ge((t1.tv_sec - t0.tv_sec) * 1000 +
				 (t1.tv_nsec - t0.tv_nsec) / 1000000, 290);
	pthread_join(a[TIER_WATCH_PER_OWNER].th, NULL);
	ck_assert(tier_stalled(t));
	/* a new call of another user fails at once too */
	start(&c, 2001, true);
	ck_assert_int_eq(entered(&c, 0 + 10), -ETIMEDOUT);
	pthread_join(c.th, NULL);
	/* a discard is not refused: it waits for its turn (1001's share
	 * is full) */
	start(&d, 1001, false);
	ck_assert(waiting_is(1, 10));
	tier_get_watch_stats(t, &ws);
	ck_assert(ws.stalled);
	ck_assert_uint_eq(ws.stalls, 1);
	ck_assert_uint_eq(ws.refused, 2);
	/* a call comes back: no longer stalled; the discard goes in */
	let_go(&a[0]);
	ck_assert(!tier_stalled(t));
	ck_assert_int_eq(entered(&d, 10), 0);
	let_go(&d);
	for (int i = 1; i < TIER_WATCH_PER_OWNER; i++)
		let_go(&a[i]);
	/* and new calls go in again */
	start(&c, 2001, true);
	ck_assert_int_eq(entered(&c, 10), 0);
	let_go(&c);
	tier_get_watch_stats(t, &ws);
	ck_assert_uint_eq(ws.inside, 0);
	ck_assert(!ws.stalled);
}
END_TEST

/* The wrappers: a read of a stalled tier fails with EIO and says why
 * (tier_last_error(): -ETIMEDOUT), counted as an I/O error. */
START_TEST(test_wrapper_fails_stalled)
{
	struct caller a[TIER_WATCH_PER_OWNER];
	char buf[4096];
	uint32_t slot;
	uint64_t errs;

	ck_assert_int_eq(tier_slot_alloc(t, &slot), 0);
	ck_assert_int_eq(tier_read(t, slot, 0, buf, sizeof(buf)),
			 (ssize_t)sizeof(buf));
	tier_set_timeout(t, 200);
	for (int i = 0; i < TIER_WATCH_PER_OWNER; i++) {
		start(&a[i], 1001, true);
		ck_assert_int_eq(entered(&a[i], 10), 0);
	}
	errs = t->stats.io_errors;
	for (int i = 0; i < 100 && !tier_stalled(t); i++)
		usleep(10000);
	ck_assert(tier_stalled(t));
	ck_assert_int_eq(tier_read(t, slot, 0, buf, sizeof(buf)), -EIO);
	ck_assert_int_eq(tier_last_error(t), -ETIMEDOUT);
	ck_assert_uint_eq(t->stats.io_errors, errs + 1);
	for (int i = 0; i < TIER_WATCH_PER_OWNER; i++)
		let_go(&a[i]);
	ck_assert_int_eq(tier_read(t, slot, 0, buf, sizeof(buf)),
			 (ssize_t)sizeof(buf));
	tier_slot_free(t, slot);
}
END_TEST

static Suite *watch_suite(void)
{
	Suite *s = suite_create("watch");
	TCase *tc = tcase_create("watch");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_memory_tier_has_no_watch);
	tcase_add_test(tc, test_bounds);
	tcase_add_test(tc, test_stall);
	tcase_add_test(tc, test_wrapper_fails_stalled);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(watch_suite());
}
