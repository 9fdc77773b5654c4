/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * throttle.h -- a bandwidth limiter on the monotonic clock, and the
 * monotonic-time helpers the migrator shares with it.
 *
 * Every caller of throttle_wait() on one struct throttle shares its
 * bandwidth: a call reserves the next bytes/bw seconds after the last
 * reservation (or now, if that is past) and sleeps until they have
 * passed, less THROTTLE_SLACK_NS.  throttle_stop() ends every wait, now and later, at once.
 * Locking: t->lock, internal; no other lock may be held across
 * throttle_wait() that a mover's progress needs.  Nothing here fails.
 */
#ifndef TIERFS_THROTTLE_H
#define TIERFS_THROTTLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/*
 * The bandwidth limit shared by every move: each move reserves the next
 * bytes/bw seconds of the mount's migration time and sleeps until that
 * slot has passed, less THROTTLE_SLACK_NS, so N moves take at least
 * N * bytes / bw seconds less the slack, in one thread or many, and an
 * idle limiter saves up no more than the slack's worth.
 *
 * The slack: a move waits only while the reservations run more than it
 * ahead of the clock.  A 4 KiB move at 512 MB/s is 8 us of reservation,
 * and a sleep that short costs a context switch and the timer slack
 * (about 60 us on these machines): a drain of 51,200 4 KiB files took
 * 6.5 s where it takes 1.3 s unlimited (issue 18).  A burst is at most
 * the slack's worth of bytes (1 MiB at 512 MB/s).
 */
#define THROTTLE_SLACK_NS 2000000u

struct throttle {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* broadcast when stopping */
	uint64_t next_ns;	/* lock; CLOCK_MONOTONIC end of the last slot */
	bool stop;		/* lock; unmounting: no more waiting */
	/* lock; totals of every throttle_wait() under a limit: the bytes
	 * and the length of the slots they reserved (bytes / bw each) */
	uint64_t bytes, slot_ns;
};

/* CLOCK_MONOTONIC now, in nanoseconds; and such a time as a timespec. */
uint64_t mono_ns(void);
struct timespec ns_to_ts(uint64_t ns);
/* A condition variable whose timed waits use CLOCK_MONOTONIC: setting
 * the date must not stall or hurry anything. */
void cond_init_mono(pthread_cond_t *c);

void throttle_init(struct throttle *t);
void throttle_destroy(struct throttle *t);
/* Wake and release every waiter for good (unmount). */
void throttle_stop(struct throttle *t);
/* Waits wait again after a throttle_stop() (the reservations go on). */
void throttle_resume(struct throttle *t);
/* Wait for @bytes' share of @bw bytes/s (0: no limit, no wait). */
void throttle_wait(struct throttle *t, uint64_t bw, uint64_t bytes);
/* The totals so far: bytes that waited for bandwidth, and the time
 * their slots took (what the limit made them cost, in ns). */
void throttle_totals(struct throttle *t, uint64_t *bytes, uint64_t *slot_ns);

#endif /* TIERFS_THROTTLE_H */
