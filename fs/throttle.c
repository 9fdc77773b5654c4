// SPDX-License-Identifier: GPL-2.0-or-later
/* throttle.c -- see throttle.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "throttle.h"
#include "banned.h"

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct timespec ns_to_ts(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / 1000000000u),
				  (long)(ns % 1000000000u) };
}

void cond_init_mono(pthread_cond_t *c)
{
	pthread_condattr_t ca;

	/* timed on the monotonic clock: setting the date must not stall or
	 * hurry anything */
	pthread_condattr_init(&ca);
	(void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
}

void throttle_init(struct throttle *t)
{
	pthread_mutex_init(&t->lock, NULL);
	cond_init_mono(&t->cond);
	t->next_ns = 0;
	t->stop = false;
	t->bytes = t->slot_ns = 0;
}

void throttle_destroy(struct throttle *t)
{
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
}

void throttle_stop(struct throttle *t)
{
	pthread_mutex_lock(&t->lock);
	t->stop = true;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

void throttle_resume(struct throttle *t)
{
	pthread_mutex_lock(&t->lock);
	t->stop = false;
	pthread_mutex_unlock(&t->lock);
}

void throttle_totals(struct throttle *t, uint64_t *bytes, uint64_t *slot_ns)
{
	pthread_mutex_lock(&t->lock);
	*bytes = t->bytes;
	*slot_ns = t->slot_ns;
	pthread_mutex_unlock(&t->lock);
}

void throttle_wait(struct throttle *t, uint64_t bw, uint64_t bytes)
{
	uint64_t now = mono_ns(), start, len, end;
	struct timespec ts;

	if (bw == 0 || bytes == 0)
		return;
	/* bytes * 1e9 / bw without overflow for any extent size */
	len = bytes / bw * 1000000000u +
	      (bytes % bw) * 1000000000u / bw;
	pthread_mutex_lock(&t->lock);
	start = t->next_ns > now ? t->next_ns : now;
	end = start + len;
	t->next_ns = end;
	t->bytes += bytes;
	t->slot_ns += len;
	/* ahead of the clock by no more than the slack: no sleep at all */
	end = end > THROTTLE_SLACK_NS ? end - THROTTLE_SLACK_NS : 0;
	ts = ns_to_ts(end);
	while (!t->stop && mono_ns() < end &&
	       pthread_cond_timedwait(&t->cond, &t->lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&t->lock);
}
