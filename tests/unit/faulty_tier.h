/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * faulty_tier.h -- arm a tier so that its Nth following tier_read/
 * tier_write call fails with -@err (nth_call 1 = the very next call).
 */
#ifndef TIERFS_TEST_FAULTY_TIER_H
#define TIERFS_TEST_FAULTY_TIER_H

#include <stdbool.h>

struct tier;

void faulty_tier_arm(struct tier *t, int nth_call, int err);
/* The same for the Nth call of a class in @ops (enum tier_fault_op in
 * tier.h: TIER_FAULT_IO, _DISCARD, _RESERVE, _SYNC); calls of other
 * classes do not count. */
void faulty_tier_arm_ops(struct tier *t, unsigned ops, int nth_call, int err);
void faulty_tier_disarm(struct tier *t);
/* True once the armed fault has fired (or when nothing is armed). */
bool faulty_tier_fired(const struct tier *t);

#endif
