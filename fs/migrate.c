// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * migrate.c -- the migrator thread.
 *
 * Every MIGRATE_INTERVAL_MS (or sooner when kicked) it:
 *  1. pins every regular file with extents and reads each extent's
 *     decayed heat under the file's shared data lock;
 *  2. demotes, for each tier above its high watermark, its coldest
 *     extents to the next slower tier with room, until the tier is at its
 *     low watermark;
 *  3. promotes hot extents (at least promote_passes passes of heat) from
 *     slower tiers into the fastest tier that has room below its high
 *     watermark -- or, when that tier is full, exchanges them with
 *     extents there that are clearly colder (less than half the heat),
 *     so that data does not ping-pong between two tiers;
 *  4. unpins.
 * Policies come first: an extent on a tier its policy does not allow, or
 * away from the tier its pin or split range names (its "home"), is moved
 * there as soon as there is room, whatever its heat; an extent at home
 * is never demoted, and one with a home or with promote=0 is never
 * promoted by heat.
 * Moves are rate-limited to opt.migrate_bw bytes per second by one
 * throttle that every move of the mount shares (migrate_throttle(): the
 * migrator, tierctl migrate, a drain without a migrator; throttle.c).
 *
 * Kicks coalesce: migrator_kick() only sets a flag.  A kicked pass starts
 * MIGRATE_KICK_GAP_MS after the end of the previous one at the soonest,
 * or as long after it as that pass took if that is longer, so that no
 * loop of policy changes drives more than a few passes a second nor
 * keeps the migrator more than half busy; the timed pass comes
 * MIGRATE_INTERVAL_MS after the end of the last one, as before.
 *
 * A move that fails on a tier (an I/O error or a checksum mismatch the
 * tier counted, or a device that is full below the tier's size) counts
 * in failures, is logged once, and puts the tier in back-off: no move to
 * or from it for 1 s, doubling with each further failure up to 60 s,
 * until a move involving it succeeds again.
 *
 * Why one file of ~760 lines: the five passes (demote, promote with its
 * exchange, drain, fixup) share one scan, its candidate vectors and the
 * back-off state, and read best side by side; the throttle, the one part
 * with a life of its own, is in throttle.c.
 *
 * Locking: the migrator holds no lock of its own while it moves data;
 * mig->lock guards only the stop flag, the kick flag, the pass times and
 * the stats; the throttle has its own lock.  Inodes are kept alive by
 * inode_pin() across the pass.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "migrate.h"
#include "fs.h"
#include "inode.h"
#include "data.h"
#include "placement.h"
#include "heat.h"
#include "testhook.h"
#include "tier.h"
#include "macro.h"
#include "log.h"
#include "throttle.h"
#include "banned.h"

#define MIGRATE_INTERVAL_MS 500
#define MIGRATE_KICK_GAP_MS 250	  /* kicked passes: at least this apart */
#define BACKOFF_MIN_MS 1000	  /* a failing tier: first back-off */
#define BACKOFF_MAX_MS 60000	  /* ... doubling up to this */

struct cand {
	struct tfs_inode *inode;
	uint64_t idx;
	uint32_t slot;
	uint32_t heat;
	uint32_t stamp;	   /* tick of the last counted access */
	uint32_t allowed;  /* tiers the file's policy allows */
	int8_t home;	   /* tier by pin or split, or -1 */
	uint8_t tier;
	bool promote;	   /* the policy lets it move up */
};

struct cand_vec {
	struct cand *v;
	size_t n, cap;
};

struct scan;

struct migrator {
	struct tierfs *fs; /* immutable */
	pthread_t thread;  /* immutable after start */

	pthread_mutex_t lock; /* protects the fields below */
	pthread_cond_t cond;
	bool stop;
	bool kicked;
	struct migrate_stats stats;
	uint64_t drain_stuck; /* extents the last pass could not drain */

	uint64_t last_end_ns;	/* lock; CLOCK_MONOTONIC end of the last pass */
	uint64_t last_len_ns;	/* lock; how long the last pass took */

	struct throttle thr;	/* shared with ctl moves (migrate_throttle()) */

	/* back-off of failing tiers; migrator thread only */
	uint64_t backoff_until_ns[TIER_MAX_CONF];
	uint32_t backoff_ms[TIER_MAX_CONF]; /* 0: the tier is not failing */
	struct scan *scan; /* the pass under way; migrator thread only */
};

/*
 * With no migrator thread (--no-migrate, or a test's migrator_run_pass())
 * moves share this one, for the mount it was last used by: a daemon
 * serves one mount, and a unit test that makes another starts afresh.
 */
static struct {
	pthread_mutex_t lock;
	const struct tierfs *fs;
	struct throttle thr;
} spare = { .lock = PTHREAD_MUTEX_INITIALIZER };

void migrate_throttle(struct tierfs *fs, uint64_t bytes)
{
	uint64_t bw = fs->opt.migrate_bw;
	struct throttle *t;

	if (bw == 0)
		return;
	if (fs->mig) {
		t = &fs->mig->thr;
	} else {
		pthread_mutex_lock(&spare.lock);
		if (spare.fs != fs) {
			if (spare.fs)
				throttle_destroy(&spare.thr);
			throttle_init(&spare.thr);
			spare.fs = fs;
		}
		pthread_mutex_unlock(&spare.lock);
		t = &spare.thr;
	}
	throttle_wait(t, bw, bytes);
}

static int vec_push(struct cand_vec *cv, const struct cand *c)
{
	if (cv->n == cv->cap) {
		size_t ncap = cv->cap ? cv->cap * 2 : 256;
		struct cand *nv = realloc(cv->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		cv->v = nv;
		cv->cap = ncap;
	}
	cv->v[cv->n++] = *c;
	return 0;
}

/* qsort() must not see a NULL base, even for zero elements (UBSan). */
static void vec_sort(struct cand_vec *cv, int (*cmp)(const void *, const void *))
{
	if (cv->n > 1)
		qsort(cv->v, cv->n, sizeof(*cv->v), cmp);
}

/*
 * Coldest first; among equally cold extents the least recently used
 * first, so that after a streaming write larger than the tier its newest
 * part, not whatever has the lowest offsets, stays on the fast tier.
 */
static int by_heat_asc(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->heat != y->heat)
		return x->heat < y->heat ? -1 : 1;
	return x->stamp < y->stamp ? -1 : x->stamp > y->stamp;
}

static int by_heat_desc(const void *a, const void *b)
{
	return by_heat_asc(b, a);
}

static uint32_t wm_slots(const struct tier *t, int pct)
{
	return (uint32_t)(((uint64_t)t->nslots * (uint64_t)pct) / 100);
}

static bool stopping(struct migrator *m)
{
	bool s;

	pthread_mutex_lock(&m->lock);
	s = m->stop;
	pthread_mutex_unlock(&m->lock);
	return s;
}

/* Move one candidate; updates counters.  Returns 0 or -errno. */
static void scan_drop_inode(struct migrator *m, struct tfs_inode *inode);

static bool backed_off(struct migrator *m, unsigned t, uint64_t now)
{
	return m->backoff_ms[t] && now < m->backoff_until_ns[t];
}

/* Errors tier @t has counted so far (I/O and checksum). */
static uint64_t tier_errors(struct tierfs *fs, unsigned t)
{
	return __atomic_load_n(&fs->tiers[t]->stats.io_errors, __ATOMIC_RELAXED) +
	       __atomic_load_n(&fs->tiers[t]->stats.csum_errors, __ATOMIC_RELAXED);
}

/* A move involving tier @t failed with @err: back off from it, longer
 * each time; the first failure of a spell is logged. */
static void tier_failed(struct migrator *m, unsigned t, int err)
{
	uint32_t ms = m->backoff_ms[t];

	if (!ms)
		log_err("migrator: a move on tier '%s' failed (%s); no moves "
			"to or from it for %u s, longer while it keeps failing",
			m->fs->tiers[t]->name, strerror(-err),
			BACKOFF_MIN_MS / 1000);
	ms = ms ? MIN(2 * ms, (uint32_t)BACKOFF_MAX_MS) : BACKOFF_MIN_MS;
	m->backoff_ms[t] = ms;
	m->backoff_until_ns[t] = mono_ns() + (uint64_t)ms * 1000000u;
}

static void tier_ok(struct migrator *m, unsigned t)
{
	if (m->backoff_ms[t])
		log_info("migrator: tier '%s' moves data again",
			 m->fs->tiers[t]->name);
	m->backoff_ms[t] = 0;
}

static int move(struct migrator *m, const struct cand *c, unsigned dst)
{
	struct tierfs *fs = m->fs;
	uint64_t err_src, err_dst, now = mono_ns();
	bool src_bad, dst_bad;
	int r;

	if (!c->inode)
		return -ENOENT; /* dropped: see below */
	/*
	 * A file removed while the pass runs (no name, no kernel
	 * reference: only our pin holds it) is not moved, and is let go at
	 * once, so its space is free now rather than when the pass, which
	 * the bandwidth limit stretches, ends.
	 */
	if (m->scan && inode_is_orphan(fs, c->inode)) {
		scan_drop_inode(m, c->inode);
		return -ENOENT;
	}
	if (backed_off(m, c->tier, now) || backed_off(m, dst, now))
		return -EBUSY; /* a failing tier: not now */
	migrate_throttle(fs, fs->extent_size);
	err_src = tier_errors(fs, c->tier);
	err_dst = tier_errors(fs, dst);
	r = data_migrate_extent(fs, c->inode, c->idx, c->tier, c->slot, dst);
	/* which tier failed: the one that counted an error meanwhile */
	src_bad = r < 0 && tier_errors(fs, c->tier) != err_src;
	dst_bad = r < 0 && tier_errors(fs, dst) != err_dst;

	pthread_mutex_lock(&m->lock);
	if (r == 0)
		m->stats.moved++;
	else if (r == -EAGAIN)
		m->stats.retries++;
	else if (r != -ENOSPC || src_bad || dst_bad)
		m->stats.failures++;
	pthread_mutex_unlock(&m->lock);
	if (src_bad)
		tier_failed(m, c->tier, r);
	if (dst_bad)
		tier_failed(m, dst, r);
	if (r < 0)
		return r;
	tier_ok(m, c->tier);
	tier_ok(m, dst);
	if (dst < c->tier) {
		__atomic_add_fetch(&fs->tiers[dst]->stats.promotions, 1,
				   __ATOMIC_RELAXED);
		__atomic_add_fetch(&fs->tiers[dst]->stats.promote_bytes,
				   fs->extent_size, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&fs->tiers[c->tier]->stats.demotions, 1,
				   __ATOMIC_RELAXED);
		__atomic_add_fetch(&fs->tiers[c->tier]->stats.demote_bytes,
				   fs->extent_size, __ATOMIC_RELAXED);
	}
	return 0;
}

static bool usable(struct tierfs *fs, const struct cand *c, unsigned u)
{
	uint32_t draining = __atomic_load_n(&fs->draining, __ATOMIC_RELAXED);

	return (c->allowed & (1u << u)) && !(draining & (1u << u)) &&
	       tier_free_slots(fs->tiers[u]) > 0;
}

/* First tier slower than @c's that its policy allows and has room, or -1. */
static int slower_with_room(struct tierfs *fs, const struct cand *c)
{
	for (unsigned u = c->tier + 1u; u < fs->ntiers; u++)
		if (usable(fs, c, u))
			return (int)u;
	return -1;
}

struct scan {
	struct tfs_inode **pinned;
	size_t npinned;
	struct cand_vec cold[TIER_MAX_CONF]; /* demotable extents, per tier */
	struct cand_vec hot;		     /* promotion candidates */
	struct cand_vec misplaced;	     /* away from home or allowed */
};

static void vec_forget(struct cand_vec *cv, const struct tfs_inode *inode)
{
	for (size_t i = 0; i < cv->n; i++)
		if (cv->v[i].inode == inode)
			cv->v[i].inode = NULL;
}

/* Forget every candidate of @inode and drop our pin, which frees it when
 * nothing else holds it.  Migrator thread, during a pass. */
static void scan_drop_inode(struct migrator *m, struct tfs_inode *inode)
{
	struct scan *s = m->scan;

	for (unsigned t = 0; t < TIER_MAX_CONF; t++)
		vec_forget(&s->cold[t], inode);
	vec_forget(&s->hot, inode);
	vec_forget(&s->misplaced, inode);
	for (size_t i = 0; i < s->npinned; i++) {
		if (s->pinned[i] == inode) {
			s->pinned[i] = NULL;
			inode_unpin(m->fs, inode);
			break;
		}
	}
}

static void scan_release(struct tierfs *fs, struct scan *s)
{
	for (size_t i = 0; i < s->npinned; i++)
		if (s->pinned[i])
			inode_unpin(fs, s->pinned[i]);
	free(s->pinned);
	for (unsigned t = 0; t < TIER_MAX_CONF; t++)
		free(s->cold[t].v);
	free(s->hot.v);
	free(s->misplaced.v);
	memset(s, 0, sizeof(*s));
}

/* Pin every file that holds extents. */
static int scan_pin(struct tierfs *fs, struct scan *s)
{
	size_t n = 0;

	pthread_mutex_lock(&fs->itab_lock);
	for (struct tfs_inode *i = fs->inodes.i_next; i != &fs->inodes;
	     i = i->i_next)
		n++;
	s->pinned = malloc((n ? n : 1) * sizeof(*s->pinned));
	if (!s->pinned) {
		pthread_mutex_unlock(&fs->itab_lock);
		return -ENOMEM;
	}
	for (struct tfs_inode *i = fs->inodes.i_next; i != &fs->inodes;
	     i = i->i_next) {
		if (i->i_type != S_IFREG ||
		    !__atomic_load_n(&i->i_map.nr_extents, __ATOMIC_RELAXED))
			continue;
		i->i_nref++;
		s->pinned[s->npinned++] = i;
	}
	pthread_mutex_unlock(&fs->itab_lock);
	return 0;
}

static int scan_collect(struct tierfs *fs, struct scan *s, bool need_cold[])
{
	uint32_t now = tierfs_tick(fs);
	uint32_t hot_min = fs->opt.promote_passes * HEAT_UNIT;
	int r = 0;

	/* decayed a little between passes still counts */
	hot_min -= hot_min / 8;
	uint32_t draining = __atomic_load_n(&fs->draining, __ATOMIC_RELAXED);

	for (size_t i = 0; i < s->npinned && r == 0; i++) {
		struct tfs_inode *inode = s->pinned[i];
		struct policy pol;
		struct extent *e;
		uint64_t idx;

		policy_get(fs, inode, &pol);
		pthread_rwlock_rdlock(&inode->i_dlock);
		extent_for_each(&inode->i_map, e, idx) {
			struct cand c = {
				.inode = inode,
				.idx = idx,
				.slot = e->slot,
				.tier = e->tier,
				.heat = heat_of(e, now, fs->half_life_ticks),
				.stamp = __atomic_load_n(&e->stamp, __ATOMIC_RELAXED),
				.allowed = pol.allowed,
				.home = (int8_t)policy_home(&pol, idx << fs->extent_shift),
				.promote = pol.promote,
			};

			if ((draining & (1u << c.tier)) ||
			    (c.home >= 0 ? c.tier != c.home
					 : !(c.allowed & (1u << c.tier))))
				r = vec_push(&s->misplaced, &c);
			else if (need_cold[c.tier] && c.home != c.tier)
				r = vec_push(&s->cold[c.tier], &c);
			if (r == 0 && c.tier > 0 && c.heat >= hot_min &&
			    c.promote && c.home < 0)
				r = vec_push(&s->hot, &c);
			if (r < 0)
				break;
		}
		pthread_rwlock_unlock(&inode->i_dlock);
	}
	return r;
}

static void demote_pass(struct migrator *m, struct scan *s)
{
	struct tierfs *fs = m->fs;

	for (unsigned t = 0; t + 1 < fs->ntiers; t++) {
		struct tier *tt = fs->tiers[t];
		uint32_t low = wm_slots(tt, fs->opt.low_wm);
		struct cand_vec *cv = &s->cold[t];

		if (tier_used_slots(tt) <= wm_slots(tt, fs->opt.high_wm))
			continue;
		vec_sort(cv, by_heat_asc);
		for (size_t i = 0; i < cv->n && tier_used_slots(tt) > low; i++) {
			int dst = slower_with_room(fs, &cv->v[i]);

			if (stopping(m))
				break;
			if (dst < 0)
				continue;
			(void)move(m, &cv->v[i], (unsigned)dst);
			cv->v[i].inode = NULL; /* moved or gone: not a victim */
		}
	}
}

/*
 * Where the victim @v of an exchange goes: the promoted extent's tier
 * @freed if @v's own policy allows it and it is not being drained (and
 * has room), else the first slower tier that qualifies; -1 if none.
 */
static int victim_dst(struct tierfs *fs, const struct cand *v,
		      unsigned freed)
{
	if (freed > v->tier && usable(fs, v, freed))
		return (int)freed;
	return slower_with_room(fs, v);
}

/* The coldest remaining extent of tier @t with heat < @below, or NULL. */
static struct cand *victim(struct scan *s, unsigned t, uint32_t below,
			   size_t *cursor)
{
	struct cand_vec *cv = &s->cold[t];

	for (; *cursor < cv->n; (*cursor)++) {
		struct cand *c = &cv->v[*cursor];

		if (!c->inode)
			continue;
		if (c->heat >= below)
			return NULL; /* sorted: nothing colder follows */
		(*cursor)++;
		return c;
	}
	return NULL;
}

static void promote_pass(struct migrator *m, struct scan *s)
{
	struct tierfs *fs = m->fs;
	size_t cursor[TIER_MAX_CONF] = { 0 };

	vec_sort(&s->hot, by_heat_desc);
	for (unsigned t = 0; t < fs->ntiers; t++)
		vec_sort(&s->cold[t], by_heat_asc);

	for (size_t i = 0; i < s->hot.n && !stopping(m); i++) {
		struct cand *c = &s->hot.v[i];

		for (unsigned u = 0; u < c->tier; u++) {
			struct tier *tu = fs->tiers[u];
			struct cand *v;
			int vd;

			if (!(c->allowed & (1u << u)) ||
			    (__atomic_load_n(&fs->draining, __ATOMIC_RELAXED) & (1u << u)))
				continue;
			/* room below the high watermark: just move up */
			if (tier_used_slots(tu) + 1 <=
			    wm_slots(tu, fs->opt.high_wm)) {
				if (move(m, c, u) == 0)
					break;
				continue;
			}
			/* full: swap with something clearly colder */
			v = victim(s, u, c->heat / 2, &cursor[u]);
			if (!v)
				continue;
			vd = victim_dst(fs, v, c->tier);
			if (vd < 0)
				continue;
			if (move(m, v, (unsigned)vd) == 0 ||
			    tier_free_slots(tu) > 0) {
				v->inode = NULL;
				if (move(m, c, u) == 0)
					break;
			}
		}
	}
}

/*
 * Move an extent off a draining tier: home if it has one and room, else
 * the slower allowed tiers first, then the faster ones; any tier at all
 * when its policy leaves no other.  Returns 0 or -ENOSPC.
 */
static int drain_one(struct migrator *m, struct cand *c)
{
	struct tierfs *fs = m->fs;
	struct cand any = *c;

	if (c->home >= 0 && usable(fs, c, (unsigned)c->home))
		return move(m, c, (unsigned)c->home) == 0 ? 0 : -EAGAIN;
	any.allowed = (1u << fs->ntiers) - 1;
	for (int pass = 0; pass < 2; pass++) {
		const struct cand *p = pass ? &any : c;

		for (unsigned k = 1; k < fs->ntiers; k++) {
			unsigned u = c->tier + k < fs->ntiers
					     ? c->tier + k
					     : fs->ntiers - 1 - k;

			if (u < fs->ntiers && usable(fs, p, u))
				return move(m, c, u) == 0 ? 0 : -EAGAIN;
		}
	}
	return -ENOSPC;
}

/* Bring misplaced extents home (pin, split) or onto an allowed tier, and
 * everything off draining tiers. */
static void fixup_pass(struct migrator *m, struct scan *s)
{
	struct tierfs *fs = m->fs;
	uint32_t draining = __atomic_load_n(&fs->draining, __ATOMIC_RELAXED);
	uint64_t stuck = 0;

	for (size_t i = 0; i < s->misplaced.n && !stopping(m); i++) {
		struct cand *c = &s->misplaced.v[i];

		if (draining & (1u << c->tier)) {
			if (drain_one(m, c) == -ENOSPC)
				stuck++;
			continue;
		}
		if (c->home >= 0) {
			if (usable(fs, c, (unsigned)c->home))
				(void)move(m, c, (unsigned)c->home);
			continue;
		}
		for (unsigned u = 0; u < fs->ntiers; u++) {
			if (usable(fs, c, u)) {
				(void)move(m, c, u);
				break;
			}
		}
	}
	pthread_mutex_lock(&m->lock);
	m->drain_stuck = stuck;
	pthread_mutex_unlock(&m->lock);
}

static void pass(struct migrator *m)
{
	struct tierfs *fs = m->fs;
	uint64_t begin = mono_ns();
	struct scan s = { 0 };
	bool need_cold[TIER_MAX_CONF] = { false };
	bool any_full = false;

	if (fs->ntiers < 2)
		return;
	/*
	 * Cold lists are needed for tiers over their high watermark
	 * (demotion) and for full tiers above the slowest (exchange).
	 */
	for (unsigned t = 0; t + 1 < fs->ntiers; t++) {
		struct tier *tt = fs->tiers[t];

		need_cold[t] = tier_used_slots(tt) + 1 >
			       wm_slots(tt, fs->opt.high_wm);
		any_full |= need_cold[t];
	}
	if (scan_pin(fs, &s) < 0)
		goto out;
	m->scan = &s;
	if (scan_collect(fs, &s, need_cold) < 0) {
		log_warn("migrator: out of memory; skipping this pass");
		goto out;
	}
	testhook(TESTHOOK_MIGRATE_COLLECTED, NULL, 0);
	if (any_full)
		demote_pass(m, &s);
	fixup_pass(m, &s);
	promote_pass(m, &s);
out:
	m->scan = NULL;
	scan_release(fs, &s);
	pthread_mutex_lock(&m->lock);
	m->stats.passes++;
	m->last_end_ns = mono_ns();
	m->last_len_ns = m->last_end_ns - begin;
	pthread_mutex_unlock(&m->lock);
}

/* When the next pass is due: the interval after the last one, or, when
 * kicked, the kick gap (at least as long as the last pass took). */
static uint64_t next_pass_ns(const struct migrator *m)
{
	uint64_t due = m->last_end_ns + (uint64_t)MIGRATE_INTERVAL_MS * 1000000u;

	if (m->kicked) {
		uint64_t gap = MAX((uint64_t)MIGRATE_KICK_GAP_MS * 1000000u,
				   m->last_len_ns);

		due = MIN(due, m->last_end_ns + gap);
	}
	return due;
}

static void *migrator_main(void *arg)
{
	struct migrator *m = arg;

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		uint64_t due = next_pass_ns(m);

		if (mono_ns() < due) {
			struct timespec ts = ns_to_ts(due);

			/* a kick or stop signals: work out the time again */
			(void)pthread_cond_timedwait(&m->cond, &m->lock, &ts);
			continue;
		}
		m->kicked = false;
		pthread_mutex_unlock(&m->lock);
		pass(m);
		pthread_mutex_lock(&m->lock);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

int migrator_start(struct tierfs *fs)
{
	struct migrator *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	m->fs = fs;
	pthread_mutex_init(&m->lock, NULL);
	cond_init_mono(&m->cond);
	throttle_init(&m->thr);
	m->last_end_ns = mono_ns();
	r = -pthread_create(&m->thread, NULL, migrator_main, m);
	if (r < 0) {
		throttle_destroy(&m->thr);
		pthread_cond_destroy(&m->cond);
		pthread_mutex_destroy(&m->lock);
		free(m);
		return r;
	}
	fs->mig = m;
	return 0;
}

void migrator_stop(struct tierfs *fs)
{
	struct migrator *m = fs->mig;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	throttle_stop(&m->thr); /* a move waiting for bandwidth ends now */
	pthread_join(m->thread, NULL);
	throttle_destroy(&m->thr);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	free(m);
	fs->mig = NULL;
}

void migrator_kick(struct tierfs *fs)
{
	struct migrator *m = fs->mig;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->kicked = true;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

int migrator_run_pass(struct tierfs *fs, struct migrate_stats *ret_stats)
{
	struct migrator m = { .fs = fs };

	if (fs->mig)
		return -EBUSY;
	pthread_mutex_init(&m.lock, NULL);
	pass(&m);
	pthread_mutex_destroy(&m.lock);
	if (ret_stats) {
		*ret_stats = m.stats;
		ret_stats->drain_stuck = m.drain_stuck;
	}
	return 0;
}

void migrator_get_stats(struct tierfs *fs, struct migrate_stats *ret)
{
	struct migrator *m = fs->mig;

	memset(ret, 0, sizeof(*ret));
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	*ret = m->stats;
	ret->drain_stuck = m->drain_stuck;
	pthread_mutex_unlock(&m->lock);
}
