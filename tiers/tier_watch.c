// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier_watch.c -- the calls inside a tier's back end, bounded and timed
 * (tier_watch.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "tier_watch.h"
#include "owner.h"
#include "banned.h"

struct tier_watch {
	pthread_mutex_t lock;
	pthread_cond_t turn;	/* a call came back, or the timeout moved */
	unsigned inside;	/* lock */
	unsigned waiting;	/* lock */
	int64_t progress_ms;	/* lock; the last call back, or the start of
				 * the calls inside now (monotonic) */
	bool stall_counted;	/* lock; this stall is in @stalls */
	uint64_t stalls;	/* lock */
	uint64_t refused;	/* lock */
	uint32_t timeout_ms;	/* relaxed atomic; 0: never */
	struct {
		uint32_t owner;
		unsigned n;	/* 0: a free row */
	} by_owner[TIER_WATCH_MAX]; /* lock; of the calls inside */
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct tier_watch *tier_watch_new(void)
{
	struct tier_watch *w = calloc(1, sizeof(*w));
	pthread_condattr_t ca;

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	(void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->turn, &ca);
	pthread_condattr_destroy(&ca);
	return w;
}

void tier_watch_free(struct tier_watch *w)
{
	if (!w)
		return;
	pthread_cond_destroy(&w->turn);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

void tier_watch_set_timeout(struct tier_watch *w, uint32_t ms)
{
	if (!w)
		return;
	__atomic_store_n(&w->timeout_ms, ms, __ATOMIC_RELAXED);
	/* waiters recompute their deadline */
	pthread_mutex_lock(&w->lock);
	pthread_cond_broadcast(&w->turn);
	pthread_mutex_unlock(&w->lock);
}

/* Calls of @owner inside now.  w->lock held. */
static unsigned owner_inside(const struct tier_watch *w, uint32_t owner)
{
	for (unsigned i = 0; i < TIER_WATCH_MAX; i++)
		if (w->by_owner[i].n && w->by_owner[i].owner == owner)
			return w->by_owner[i].n;
	return 0;
}

/* One more (@d 1) or one less (@d -1) call of @owner inside.  There is
 * a row for it: at most TIER_WATCH_MAX calls, so owners, are inside.
 * w->lock held. */
static void owner_count(struct tier_watch *w, uint32_t owner, int d)
{
	unsigned free_row = TIER_WATCH_MAX;

	for (unsigned i = 0; i < TIER_WATCH_MAX; i++) {
		if (w->by_owner[i].n && w->by_owner[i].owner == owner) {
			w->by_owner[i].n += (unsigned)d;
			return;
		}
		if (!w->by_owner[i].n && free_row == TIER_WATCH_MAX)
			free_row = i;
	}
	if (d > 0 && free_row < TIER_WATCH_MAX)
		w->by_owner[free_row] = (typeof(w->by_owner[0])){ owner, 1 };
}

/* Calls are inside and none came back for the timeout.  w->lock held. */
static bool stalled_at(const struct tier_watch *w, int64_t now)
{
	uint32_t to = __atomic_load_n(&w->timeout_ms, __ATOMIC_RELAXED);

	return to && w->inside > 0 && now - w->progress_ms >= (int64_t)to;
}

int tier_watch_enter(struct tier_watch *w, bool may_refuse)
{
	uint32_t owner = owner_current();
	int64_t now;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		uint32_t to = __atomic_load_n(&w->timeout_ms, __ATOMIC_RELAXED);

		now = mono_ms();
		if (may_refuse && stalled_at(w, now)) {
			if (!w->stall_counted) {
				w->stall_counted = true;
				w->stalls++;
			}
			w->refused++;
			pthread_mutex_unlock(&w->lock);
			return -ETIMEDOUT;
		}
		if (w->inside < TIER_WATCH_MAX &&
		    owner_inside(w, owner) < TIER_WATCH_PER_OWNER)
			break;
		/* wait for a call to come back, or until the calls inside
		 * are late enough to make the tier stalled */
		w->waiting++;
		if (to && may_refuse) {
			int64_t at = w->progress_ms + (int64_t)to;
			struct timespec ts = { .tv_sec = at / 1000,
					       .tv_nsec = (at % 1000) * 1000000L };

			(void)pthread_cond_timedwait(&w->turn, &w->lock, &ts);
		} else {
			pthread_cond_wait(&w->turn, &w->lock);
		}
		w->waiting--;
	}
	if (w->inside == 0)
		w->progress_ms = now;
	w->inside++;
	owner_count(w, owner, 1);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

void tier_watch_leave(struct tier_watch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->inside--;
	owner_count(w, owner_current(), -1);
	w->progress_ms = mono_ms();
	w->stall_counted = false;
	if (w->waiting)
		pthread_cond_broadcast(&w->turn);
	pthread_mutex_unlock(&w->lock);
}

bool tier_watch_stalled(struct tier_watch *w)
{
	bool s;

	if (!w)
		return false;
	pthread_mutex_lock(&w->lock);
	s = stalled_at(w, mono_ms());
	pthread_mutex_unlock(&w->lock);
	return s;
}

void tier_watch_get_stats(struct tier_watch *w, struct tier_watch_stats *ret)
{
	*ret = (struct tier_watch_stats){ 0 };
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	ret->inside = w->inside;
	ret->waiting = w->waiting;
	ret->stalled = stalled_at(w, mono_ms());
	ret->stalls = w->stalls + (ret->stalled && !w->stall_counted);
	ret->refused = w->refused;
	pthread_mutex_unlock(&w->lock);
}
