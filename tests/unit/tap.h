/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tap.h -- run a Check suite and report it as TAP, with skips that show.
 *
 * Check 0.15 has no "skip" result: a test that returns early passes, so
 * a test that could not run looked like one that ran and passed.  Here a
 * test that cannot run calls tap_skip("why"), which ends it with a
 * failure whose message starts with TAP_SKIP_PREFIX; tap_run() prints
 * that one as "ok N - ... # SKIP why" (meson counts it as a skip), every
 * other failure as "not ok", and exits 77 when nothing ran at all.
 */
#ifndef TIERFS_TEST_TAP_H
#define TIERFS_TEST_TAP_H

#include <check.h>

#define TAP_SKIP_PREFIX "SKIP: "

/* End the current test as skipped, with a reason; does not return. */
#define tap_skip(why) ck_abort_msg(TAP_SKIP_PREFIX "%s", (why))

/* Run @s (CK_FORK etc. from the environment), print TAP on stdout.
 * Return: the exit status for main(). */
int tap_run(Suite *s);

#endif
