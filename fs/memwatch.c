// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memwatch.c -- the memory follower (memwatch.h): samples free memory
 * and memory pressure, and lowers or raises the RAM tiers' limits.
 * Above tier.h and migrate.h in the module graph: it sets limits and
 * kicks the migrator, which does the moving.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memwatch.h"
#include "fs.h"
#include "migrate.h"
#include "options.h"
#include "options_mem.h"
#include "tier.h"
#include "log.h"
#include "macro.h"
#include "banned.h"

struct memwatch {
	struct tierfs *fs; /* immutable */
	pthread_t thread;  /* immutable after start */
	pthread_mutex_t lock; /* guards stop and stats */
	pthread_cond_t cond;
	bool stop;
	struct memwatch_stats stats;
	struct memwatch_tier st[TIER_MAX_CONF]; /* the thread's own */
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t memwatch_decide(struct memwatch_tier *st, uint64_t size,
			 uint64_t used, uint64_t limit,
			 const struct mem_sample *s, int64_t now_ms)
{
	uint64_t take = 0;

	limit = MIN(limit, size);
	if (s->short_by > 0) {
		take = (uint64_t)s->short_by;
	} else if (s->psi_full10 >= MEMWATCH_PSI_FULL && s->spare < 0 &&
		   now_ms - st->last_psi_ms >= MEMWATCH_PSI_GAP_MS) {
		/* stalled within the band: a step, not the whole tier */
		take = MAX(used / 16, UINT64_C(1) << 20);
		st->last_psi_ms = now_ms;
	}
	if (take) {
		st->calm_since_ms = 0;
		return MIN(limit, used > take ? used - take : 0);
	}
	if (s->spare <= 0 || s->spare == INT64_MAX || limit >= size ||
	    s->psi_full10 >= MEMWATCH_PSI_FULL) {
		/* in the band, nothing known, or nothing to give back */
		st->calm_since_ms = 0;
		return limit;
	}
	if (!st->calm_since_ms) {
		st->calm_since_ms = now_ms;
		return limit;
	}
	if (now_ms - st->calm_since_ms < MEMWATCH_CALM_MS)
		return limit;
	st->calm_since_ms = now_ms; /* the next step as long after */
	/* half of the excess: what the tier then takes leaves the source
	 * above twice its reserve still */
	return MIN(size, limit + (uint64_t)s->spare / 2);
}

/* The value after "@key" (e.g. "MemAvailable:") in @path, in the unit
 * @mult of the file; false when absent. */
static bool read_keyed(const char *path, const char *key, uint64_t mult,
		       uint64_t *ret)
{
	char line[256];
	size_t kl = strlen(key);
	FILE *f = fopen(path, "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (strncmp(line, key, kl) || (line[kl] != ' ' && line[kl] != '\t'))
			continue;
		if (sscanf(line + kl, "%llu", &v) == 1) {
			*ret = (uint64_t)v * mult;
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* The number on the first line of @path ("max": UINT64_MAX). */
static bool read_num(const char *path, uint64_t *ret)
{
	char buf[64];
	unsigned long long v;
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	if (!strncmp(buf, "max", 3)) {
		*ret = UINT64_MAX;
		return true;
	}
	if (sscanf(buf, "%llu", &v) != 1)
		return false;
	*ret = (uint64_t)v;
	return true;
}

/* "full avg10=X" of a pressure file, in percent; -1 when unreadable. */
static double read_psi_full10(const char *path)
{
	char line[256];
	double v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "full ", 5) &&
		    sscanf(line, "full avg10=%lf", &v) == 1)
			break;
	fclose(f);
	return v;
}

static uint64_t reserve_of(uint64_t total, uint64_t asked)
{
	return asked ? asked : MAX(total / MEMWATCH_RESERVE_DIV,
				   MEMWATCH_RESERVE_MIN);
}

/* Fold one source with @room left of @total into @s. */
static void source(struct mem_sample *s, uint64_t room, uint64_t total,
		   uint64_t asked)
{
	uint64_t r = reserve_of(total, asked);
	int64_t sh = (int64_t)MIN(r, (uint64_t)INT64_MAX / 4) -
		     (int64_t)MIN(room, (uint64_t)INT64_MAX / 4);
	int64_t sp = (int64_t)MIN(room, (uint64_t)INT64_MAX / 4) -
		     2 * (int64_t)MIN(r, (uint64_t)INT64_MAX / 8);

	s->short_by = MAX(s->short_by, sh);
	s->spare = MIN(s->spare, sp);
}

void memwatch_sample(const char *meminfo, const char *proc_cgroup,
		     const char *mountinfo, uint64_t reserve,
		     struct mem_sample *ret)
{
	char dir[4096], file[4200];
	uint64_t avail, total;
	size_t mlen = 0;
	bool v1 = false;

	ret->short_by = INT64_MIN;
	ret->spare = INT64_MAX;
	ret->psi_full10 = -1;
	if (read_keyed(meminfo, "MemAvailable:", 1024, &avail) &&
	    read_keyed(meminfo, "MemTotal:", 1024, &total))
		source(ret, avail, total, reserve);
	if (!mem_cgroup_dir(proc_cgroup, mountinfo, dir, sizeof(dir), &mlen,
			    &v1))
		return;
	if (!v1 && strlen(dir) > mlen) {
		snprintf(file, sizeof(file), "%s/memory.pressure", dir);
		ret->psi_full10 = read_psi_full10(file);
	}
	/* every ancestor's limit applies; the root has none */
	while (strlen(dir) > mlen) {
		uint64_t high = UINT64_MAX, max = UINT64_MAX, lim, cur, act = 0,
			 inact = 0, hard;
		char *slash;

		if (v1) {
			snprintf(file, sizeof(file), "%s/memory.limit_in_bytes",
				 dir);
			(void)read_num(file, &max);
			if (max >= (UINT64_C(1) << 62))
				max = UINT64_MAX; /* v1's "no limit" */
		} else {
			snprintf(file, sizeof(file), "%s/memory.high", dir);
			(void)read_num(file, &high);
			snprintf(file, sizeof(file), "%s/memory.max", dir);
			(void)read_num(file, &max);
		}
		lim = MIN(high, max);
		snprintf(file, sizeof(file), "%s/%s", dir,
			 v1 ? "memory.usage_in_bytes" : "memory.current");
		if (lim != UINT64_MAX && read_num(file, &cur)) {
			snprintf(file, sizeof(file), "%s/memory.stat", dir);
			/* v1: the hierarchical counts, as the usage is */
			(void)read_keyed(file, v1 ? "total_active_file" : "active_file",
					 1, &act);
			(void)read_keyed(file, v1 ? "total_inactive_file" : "inactive_file",
					 1, &inact);
			hard = cur > act + inact ? cur - act - inact : 0;
			source(ret, lim > hard ? lim - hard : 0, lim, reserve);
		}
		slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
}

/* A RAM tier that follows: memory, and a slower tier below it. */
static bool follows(const struct tierfs *fs, unsigned i)
{
	return (tier_kind_caps(fs->tiers[i]->kind) & TIER_CAP_MEMORY) &&
	       i + 1 < fs->ntiers;
}

static void *memwatch_main(void *arg)
{
	struct memwatch *mw = arg;
	struct tierfs *fs = mw->fs;

	pthread_mutex_lock(&mw->lock);
	while (!mw->stop) {
		struct mem_sample s;
		uint64_t down = 0, up = 0;
		int64_t now;
		struct timespec until;

		pthread_mutex_unlock(&mw->lock);
		memwatch_sample("/proc/meminfo", "/proc/self/cgroup",
				"/proc/self/mountinfo", fs->opt.memory_reserve,
				&s);
		now = mono_ms();
		/* the slowest RAM tier gives first: its data has the
		 * shortest way down */
		for (unsigned k = fs->ntiers; k-- > 0;) {
			struct tier *t = fs->tiers[k];
			uint64_t lim, used, next;

			if (!follows(fs, k))
				continue;
			lim = tier_limit_bytes(t);
			used = tier_used_bytes(t);
			next = memwatch_decide(&mw->st[k], t->size, used, lim,
					       &s, now);
			if (next == lim)
				continue;
			tier_set_limit(t, next);
			if (next < lim) {
				down++;
				/* what this tier gives covers the shortfall */
				if (s.short_by > 0)
					s.short_by -= (int64_t)MIN(
						used - MIN(used, next),
						(uint64_t)s.short_by);
			} else {
				up++;
			}
		}
		if (down)
			migrator_kick_now(fs);
		pthread_mutex_lock(&mw->lock);
		mw->stats.samples++;
		mw->stats.shrinks += down;
		mw->stats.grows += up;
		mw->stats.short_by = s.short_by;
		mw->stats.spare = s.spare;
		mw->stats.psi_full10 = s.psi_full10;
		if (mw->stop)
			break;
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += MEMWATCH_PERIOD_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		(void)pthread_cond_timedwait(&mw->cond, &mw->lock, &until);
	}
	pthread_mutex_unlock(&mw->lock);
	return NULL;
}

int memwatch_start(struct tierfs *fs)
{
	struct memwatch *mw;
	pthread_condattr_t ca;
	bool any = false;
	int r;

	if (fs->opt.no_memory_follow)
		return 0;
	for (unsigned i = 0; i < fs->ntiers; i++)
		any |= follows(fs, i);
	if (!any)
		return 0;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return -ENOMEM;
	mw->fs = fs;
	pthread_mutex_init(&mw->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&mw->cond, &ca);
	pthread_condattr_destroy(&ca);
	mw->stats.running = true;
	r = pthread_create(&mw->thread, NULL, memwatch_main, mw);
	if (r) {
		pthread_cond_destroy(&mw->cond);
		pthread_mutex_destroy(&mw->lock);
		free(mw);
		return -r;
	}
	__atomic_store_n(&fs->mw, mw, __ATOMIC_RELEASE);
	return 0;
}

void memwatch_stop(struct tierfs *fs)
{
	struct memwatch *mw = __atomic_load_n(&fs->mw, __ATOMIC_ACQUIRE);

	if (!mw)
		return;
	pthread_mutex_lock(&mw->lock);
	mw->stop = true;
	pthread_cond_signal(&mw->cond);
	pthread_mutex_unlock(&mw->lock);
	pthread_join(mw->thread, NULL);
	__atomic_store_n(&fs->mw, NULL, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < fs->ntiers; i++)
		tier_set_limit(fs->tiers[i], fs->tiers[i]->size);
	pthread_cond_destroy(&mw->cond);
	pthread_mutex_destroy(&mw->lock);
	free(mw);
}

void memwatch_get_stats(struct tierfs *fs, struct memwatch_stats *ret)
{
	struct memwatch *mw = __atomic_load_n(&fs->mw, __ATOMIC_ACQUIRE);

	memset(ret, 0, sizeof(*ret));
	ret->psi_full10 = -1;
	if (!mw)
		return;
	pthread_mutex_lock(&mw->lock);
	*ret = mw->stats;
	pthread_mutex_unlock(&mw->lock);
}
