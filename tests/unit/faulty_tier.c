// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faulty_tier.c -- fault injection for unit tests (SQLite's
 * io_error_pending idea): make the Nth following back end call of a class
 * (read/write, discard, reserve, sync) on a tier fail with a chosen
 * errno, through the hook in tiers/tier_i.h (fault_check()).
 */
#include "faulty_tier.h"
#include "tier.h"

void faulty_tier_arm(struct tier *t, int nth_call, int err)
{
	faulty_tier_arm_ops(t, TIER_FAULT_IO, nth_call, err);
}

void faulty_tier_arm_ops(struct tier *t, unsigned ops, int nth_call, int err)
{
	__atomic_store_n(&t->fault_errno, err, __ATOMIC_RELAXED);
	__atomic_store_n(&t->fault_ops, ops, __ATOMIC_RELAXED);
	__atomic_store_n(&t->fault_countdown, nth_call, __ATOMIC_RELAXED);
}

void faulty_tier_disarm(struct tier *t)
{
	__atomic_store_n(&t->fault_countdown, 0, __ATOMIC_RELAXED);
}

bool faulty_tier_fired(const struct tier *t)
{
	return __atomic_load_n(&t->fault_countdown, __ATOMIC_RELAXED) == 0;
}
