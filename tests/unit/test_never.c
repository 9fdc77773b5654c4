// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_never.c -- Check suite for fs/util/never.h: NEVER() is the truth
 * of its condition, evaluates it once, and never aborts (the daemon's
 * "cannot happen" checks must fail a request, not end the mount).
 */
#include <check.h>
#include <stdlib.h>

#include "log.h"
#include "never.h"
#include "tap.h"

static int calls;

static int count_call(int v)
{
	calls++;
	return v;
}

START_TEST(test_never_value_and_once)
{
	int hits = 0;

	log_setup("test_never", false, false);
	for (int i = 0; i < 5; i++)
		if (NEVER(count_call(i >= 3)))
			hits++;
	ck_assert_int_eq(hits, 2);
	ck_assert_int_eq(calls, 5); /* one evaluation per use */
	ck_assert(!NEVER(0));
	ck_assert(NEVER(1)); /* a second site logs on its own, and returns */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("never");
	TCase *tc = tcase_create("never");

	tcase_add_test(tc, test_never_value_and_once);
	suite_add_tcase(s, tc);
	return tap_run(s);
}
