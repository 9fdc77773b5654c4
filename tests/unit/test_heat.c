// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_heat.c -- Check suite for fs/heat.h: decay at its edges, and the
 * age of a stamp newer than the caller's clock (issue 10, bug 4: it was
 * computed unsigned, so an extent touched during a scan looked ancient
 * -- heat 0, the first to be demoted -- and a stale touch reset it).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "heat.h"
#include "tap.h"

#define HALF 300 /* ticks: the default 30 s half-life */

START_TEST(test_heat_decay_edges)
{
	ck_assert_uint_eq(heat_decay(1024, 0, HALF), 1024);
	ck_assert_uint_eq(heat_decay(1024, HALF, HALF), 512);
	ck_assert_uint_eq(heat_decay(1024, 2 * HALF, HALF), 256);
	/* halfway to the next halving: a quarter of what is left is gone */
	ck_assert_uint_eq(heat_decay(1024, HALF / 2, HALF), 768);
	ck_assert_uint_eq(heat_decay(HEAT_MAX, 16 * HALF, HALF), 0);
	ck_assert_uint_eq(heat_decay(HEAT_MAX, UINT32_MAX, HALF), 0);
	/* no half-life: no decay */
	ck_assert_uint_eq(heat_decay(77, 123456, 0), 77);
	/* never grows, never wraps, for any age */
	for (uint32_t age = 0; age < 20 * HALF; age += 7)
		ck_assert_uint_le(heat_decay(HEAT_MAX, age, HALF), HEAT_MAX);
}
END_TEST

START_TEST(test_heat_age_of_newer_stamp)
{
	ck_assert_uint_eq(heat_age(100, 40), 60);
	ck_assert_uint_eq(heat_age(100, 100), 0);
	/* a stamp one tick newer than the caller's clock is age 0 */
	ck_assert_uint_eq(heat_age(100, 101), 0);
	ck_assert_uint_eq(heat_age(0, 5), 0);
	/* across the 32-bit wrap */
	ck_assert_uint_eq(heat_age(3, UINT32_MAX - 2), 6);
}
END_TEST

START_TEST(test_heat_of_stale_clock)
{
	struct extent e = { 0 };

	e.heat = 5 * HEAT_UNIT;
	e.stamp = 1001;
	/* read with a clock taken just before that touch: still hot */
	ck_assert_uint_eq(heat_of(&e, 1000, HALF), 5 * HEAT_UNIT);
	ck_assert_uint_eq(heat_of(&e, 1001, HALF), 5 * HEAT_UNIT);
	ck_assert_uint_eq(heat_of(&e, 1001 + HALF, HALF), 5 * HEAT_UNIT / 2);
}
END_TEST

START_TEST(test_heat_touch_passes)
{
	struct extent e = { 0 };

	heat_touch(&e, 10, HALF);
	ck_assert_uint_eq(e.heat, HEAT_UNIT);
	ck_assert_uint_eq(e.stamp, 10);
	/* the same tick: nothing stored */
	heat_touch(&e, 10, HALF);
	ck_assert_uint_eq(e.heat, HEAT_UNIT);
	/* within a pass gap: the same pass, a little warmer for its length */
	heat_touch(&e, 10 + HEAT_PASS_GAP - 1, HALF);
	ck_assert_uint_eq(e.heat, HEAT_UNIT + (HEAT_PASS_GAP - 1) * HEAT_UNIT /
						 HEAT_STREAM_TICKS);
	ck_assert_uint_eq(e.stamp, 10 + HEAT_PASS_GAP - 1);
	/* a new pass adds a unit (less a little decay) */
	{
		uint16_t h = e.heat;

		heat_touch(&e, 20, HALF);
		ck_assert_uint_ge(e.heat, h + HEAT_UNIT - 1);
		ck_assert_uint_le(e.heat, h + HEAT_UNIT);
		ck_assert_uint_eq(e.stamp, 20);
	}
	/* a stale clock neither resets the heat nor moves the stamp back */
	{
		uint16_t h = e.heat;

		heat_touch(&e, 15, HALF);
		ck_assert_uint_eq(e.heat, h);
		ck_assert_uint_eq(e.stamp, 20);
	}
	/* saturates */
	for (uint32_t t = 100; t < 100 + 5000 * HEAT_PASS_GAP;
	     t += HEAT_PASS_GAP)
		heat_touch(&e, t, 0);
	ck_assert_uint_eq(e.heat, HEAT_MAX);
}
END_TEST

/*
 * One pass read slowly -- an access every tick for two seconds, a
 * loaded machine reading one extent -- is one pass, not hot at three
 * passes; the gap counts from the last access, not the first.  (Counted
 * from the first it was seven passes.)  The same stream going on for
 * long does become hot.
 */
START_TEST(test_heat_slow_pass_is_one)
{
	struct extent e = { 0 };
	uint32_t t;

	for (t = 100; t <= 120; t++)
		heat_touch(&e, t, HALF);
	ck_assert_uint_lt(e.heat, heat_hot_min(3));
	ck_assert_uint_eq(e.stamp, 120);
	/* requests two ticks apart for 30 s: hot */
	for (; t <= 420; t += 2)
		heat_touch(&e, t, HALF);
	ck_assert_uint_ge(e.heat, heat_hot_min(3));
	/* three passes with gaps are hot as before */
	e = (struct extent){ 0 };
	for (t = 1000; t < 1000 + 3 * 10; t += 10)
		heat_touch(&e, t, HALF);
	ck_assert_uint_ge(e.heat, heat_hot_min(3));
}
END_TEST

static Suite *heat_suite(void)
{
	Suite *s = suite_create("heat");
	TCase *tc = tcase_create("heat");

	tcase_add_test(tc, test_heat_decay_edges);
	tcase_add_test(tc, test_heat_age_of_newer_stamp);
	tcase_add_test(tc, test_heat_of_stale_clock);
	tcase_add_test(tc, test_heat_touch_passes);
	tcase_add_test(tc, test_heat_slow_pass_is_one);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(heat_suite());
}
