// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * migrate.c -- the migrator thread.
 *
 * Every MIGRATE_INTERVAL_MS (or sooner when kicked) it:
 *  1. works out what it must look at (track.h): the inodes with data on
 *     each tier above its high watermark (demotion) and on each draining
 *     tier, the extents noted since the last pass (just hot on a slower
 *     tier, placed away from home, moved) and the inodes new to data,
 *     and, after a policy change, every inode with data whose policy
 *     changed.  With none of these the pass ends there: an idle mount
 *     costs a few loads every interval, however many files it has;
 *  2. pins those inodes in batches of TRACK_PIN_BATCH (itab_lock is
 *     held for one batch, never for a walk) and reads each extent's
 *     decayed heat under the file's shared data lock, keeping the pins
 *     of inodes that gave a candidate only;
 *  3. when a hot extent's target tier is full, looks at that tier's
 *     inodes for exchange victims (their coldest extents);
 *  4. demotes, for each tier above its high watermark, its coldest
 *     extents to the next slower tier with room, until the tier is at its
 *     low watermark;
 *  5. promotes hot extents (at least promote_passes passes of heat) from
 *     slower tiers into the fastest tier that has room below its high
 *     watermark -- or, when that tier is full, exchanges them with
 *     extents there that are clearly colder (less than half the heat),
 *     so that data does not ping-pong between two tiers;
 *  6. notes again the hot and misplaced extents it could not move, and
 *     unpins.
 * Policies come first: an extent on a tier its policy does not allow, or
 * away from the tier its pin or split range names (its "home"), is moved
 * there as soon as there is room, whatever its heat; an extent at home
 * is never demoted, and one with a home or with promote=0 is never
 * promoted by heat.
 * Room and watermarks are in bytes (tier_used_bytes(), tier_avail_bytes()
 * against t->size): an extent holds what was written of it (tier.h).
 * Moves are rate-limited to opt.migrate_bw bytes per second by one
 * throttle that every move of the mount shares (migrate_throttle(): the
 * migrator, tierctl migrate, a drain without a migrator; throttle.c).
 *
 * Kicks coalesce: migrator_kick() only sets a flag.  A kicked pass starts
 * MIGRATE_KICK_GAP_MS after the end of the previous one at the soonest,
 * or as long after it as that pass took if that is longer, so that no
 * loop of policy changes drives more than a few passes a second nor
 * keeps the migrator more than half busy; the timed pass comes
 * MIGRATE_INTERVAL_MS after the end of the last one, as before.  Root's
 * drain alone starts a pass at once (migrator_kick_now()).
 *
 * A move that fails on a tier (an I/O error or a checksum mismatch the
 * tier counted, or a device that is full below the tier's size) counts
 * in failures, is logged once, and puts the tier in back-off: no move to
 * or from it for 1 s, doubling with each further failure up to 60 s,
 * until a move involving it succeeds again.
 *
 * --page-cache only: with the kernel's cache kept across opens, a byte
 * that reached the daemon (a WRITE at writeback, a READ it answered) is
 * in the page cache from then on, until the kernel reclaims it, and a
 * RAM tier's copy of it is a second one.  So a tier that lends (lends():
 * a memory tier with a slower tier below) hands each extent down once
 * LEND_AGE_TICKS passed since its last access, whatever its watermarks,
 * and nothing is promoted into it by heat: the page cache is the read
 * cache, and a read the kernel no longer caches comes from the slower
 * tier, as on a disk filesystem.  The tier still takes writes at RAM
 * speed, up to TIERFS_LEND_CAP (extent_place() puts new data on the next
 * tier beyond it); pins and split ranges still hold (an extent at home
 * is never demoted), and so does an admin's `tierctl migrate` into the
 * tier (EXTENT_F_PLACED, until the extent moves again; the watermarks
 * still demote it) -- within the cap: the placed bytes count against
 * it, a move into the tier stops there (ctl_action.c), and what two
 * moves at once placed beyond it is handed down at age as any other
 * extent (demote_pass()).  A file tier's I/O is then direct (data_i.h,
 * data_bulk_begin()).  Such a tier
 * is walked whole (step 1) when something was noted since the last
 * pass, or when the youngest extent it kept last time comes of age
 * (m->lend_due), or every LEND_RECHECK_TICKS for what could not move.
 *
 * --test-clock (tests only; options.h): the passes' schedule (the
 * interval, the kick gap) and the back-off of failing tiers follow the
 * test's clock (mig_now_ns()), as the heat ticks do (fs.h): the thread
 * then waits for a kick or for the clock to move, never on a timer, and
 * migrator_clock_moved() returns once every pass the new time made due
 * has ended, so a test that moves the clock 500 ms gets exactly one
 * pass and never sleeps.  The bandwidth limit stays on the real clock.
 * Without the option each of these is one branch on an immutable flag.
 *
 * Longer than 700 lines for a reason: the passes (demote, promote with
 * its exchange, drain, fixup) share one collection, its candidate
 * vectors, the back-off state and the thread's schedule (the test clock
 * too), and read best side by side; what a pass looks at is
 * migrate_scan.c's, what has data track.c's, the throttle throttle.c's.
 *
 * Locking: the migrator holds no lock of its own while it moves data;
 * mig->lock guards only the stop flag, the kick flag, the pass times,
 * whether a pass runs (in_pass, for the test clock) and the stats; the
 * throttle and the tracker have their own locks.  Inodes
 * with candidates are kept alive by their pins across the pass.
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
#include "heat.h"
#include "testhook.h"
#include "tier.h"
#include "macro.h"
#include "log.h"
#include "native.h"
#include "placement.h"
#include "throttle.h"
#include "track.h"
#include "migrate_i.h"
#include "banned.h"

#define MIGRATE_INTERVAL_MS 500
/* --page-cache only: an extent unread and unwritten this long is handed
 * down (the kernel has had it since); what could not move is looked at
 * again after LEND_RECHECK_TICKS (heat.h's ticks) */
#define LEND_AGE_TICKS HEAT_TICKS_PER_SEC
#define LEND_RECHECK_TICKS (10 * HEAT_TICKS_PER_SEC)
#define MIGRATE_KICK_GAP_MS 250	  /* kicked passes: at least this apart */
#define BACKOFF_MIN_MS 1000	  /* a failing tier: first back-off */
#define BACKOFF_MAX_MS 60000	  /* ... doubling up to this */

struct migrator {
	struct tierfs *fs; /* immutable */
	pthread_t thread;  /* immutable after start */

	pthread_mutex_t lock; /* protects the fields below */
	pthread_cond_t cond;
	bool stop;
	bool kicked;
	bool urgent; /* kicked by migrator_kick_now(): no gap */
	struct migrate_stats stats;
	uint64_t drain_stuck; /* extents the last pass could not drain */

	uint64_t last_end_ns;	/* lock; end of the last pass (mig_now_ns()) */
	uint64_t last_len_ns;	/* lock; how long the last pass took */
	/* --test-clock: the thread runs a pass (lock), and idle is
	 * broadcast when it has caught up with the clock or stops */
	bool in_pass;
	pthread_cond_t idle;


	/* back-off of failing tiers; migrator thread only */
	uint64_t backoff_until_ns[TIER_MAX_CONF];
	uint32_t backoff_ms[TIER_MAX_CONF]; /* 0: the tier is not failing */
	/* tick when a lending tier is next walked without a note (0: at
	 * the next pass); migrator thread only */
	uint32_t lend_due[TIER_MAX_CONF];
	struct scan *scan; /* the pass under way; migrator thread only */
};

/*
 * The migrator's clock in ns: CLOCK_MONOTONIC, or with --test-clock the
 * test's (fs.h), which stands still until a test moves it.
 */
static uint64_t mig_now_ns(const struct tierfs *fs)
{
	return fs->opt.test_clock ? tierfs_test_ns(fs) : mono_ns();
}

void migrate_throttle(struct tierfs *fs, uint64_t bytes)
{
	uint64_t bw = fs->opt.migrate_bw;

	/* one limiter per mount (fs->mig_thr), shared by the migrator and
	 * tierctl's moves, with a migrator thread or without */
	if (bw == 0 || !fs->mig_thr)
		return;
	throttle_wait(fs->mig_thr, bw, bytes);
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

static bool stopping(struct migrator *m)
{
	bool s;

	pthread_mutex_lock(&m->lock);
	s = m->stop;
	pthread_mutex_unlock(&m->lock);
	return s;
}

/* Forget every candidate of @inode and drop our pins, which frees it when
 * nothing else holds it.  Migrator thread, during a pass. */
static void scan_drop_inode(struct migrator *m, struct tfs_inode *inode)
{
	struct scan *s = m->scan;

	scan_forget(s, inode);
	for (size_t i = 0; i < s->npinned; i++) {
		if (s->pinned[i] == inode) {
			s->pinned[i] = NULL;
			inode_unpin(m->fs, inode);
		}
	}
}

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
	m->backoff_until_ns[t] = mig_now_ns(m->fs) + (uint64_t)ms * 1000000u;
}

static void tier_ok(struct migrator *m, unsigned t)
{
	if (m->backoff_ms[t])
		log_info("migrator: tier '%s' moves data again",
			 m->fs->tiers[t]->name);
	m->backoff_ms[t] = 0;
}

/* Move one candidate to tier @dst; updates counters and c->done.
 * Returns 0 or -errno. */
static int move(struct migrator *m, struct cand *c, unsigned dst)
{
	struct tierfs *fs = m->fs;
	uint64_t err_src, err_dst, now = mig_now_ns(fs);
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
	/* what the extent holds, not its size: a 4 KiB file moves as
	 * 4 KiB under the limit */
	migrate_throttle(fs, MAX(c->bytes, (uint64_t)1));
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
	c->done = true;
	tier_ok(m, c->tier);
	tier_ok(m, dst);
	migrate_count_move(fs, c->tier, dst, c->bytes);
	return 0;
}

void migrate_count_move(struct tierfs *fs, unsigned src, unsigned dst,
			uint64_t bytes)
{
	struct tier_stats *s = dst < src ? &fs->tiers[dst]->stats
					 : &fs->tiers[src]->stats;

	__atomic_add_fetch(dst < src ? &s->promotions : &s->demotions, 1,
			   __ATOMIC_RELAXED);
	__atomic_add_fetch(dst < src ? &s->promote_bytes : &s->demote_bytes,
			   bytes, __ATOMIC_RELAXED);
}

static bool usable(struct tierfs *fs, const struct cand *c, unsigned u)
{
	uint32_t draining = __atomic_load_n(&fs->draining, __ATOMIC_RELAXED);

	return (c->allowed & (1u << u)) && !(draining & (1u << u)) &&
	       room_for(fs->tiers[u], c->bytes);
}

/* First tier slower than @c's that its policy allows and has room, or -1. */
static int slower_with_room(struct tierfs *fs, const struct cand *c)
{
	for (unsigned u = c->tier + 1u; u < fs->ntiers; u++)
		if (usable(fs, c, u))
			return (int)u;
	return -1;
}

/*
 * Demote, for each tier above its high watermark, its coldest extents
 * until it is at its low watermark; and from a lending tier walked for
 * it (s->lend[]) every extent of age, whatever the watermarks, but what
 * an admin placed there within the tier's cap.  Sets the lending tiers'
 * m->lend_due.
 */
static void demote_pass(struct migrator *m, struct scan *s)
{
	struct tierfs *fs = m->fs;

	for (unsigned t = 0; t + 1 < fs->ntiers; t++) {
		struct tier *tt = fs->tiers[t];
		uint64_t low = wm_bytes(tt, fs->opt.low_wm);
		struct cand_vec *cv = &s->cold[t];
		uint32_t due = s->now + LEND_RECHECK_TICKS;
		bool over = tier_used_bytes(tt) > wm_bytes(tt, fs->opt.high_wm);
		uint64_t excess = 0; /* placed bytes beyond the cap */

		if (!over && !s->lend[t])
			continue;
		vec_sort(cv, by_heat_asc);
		if (s->lend[t]) {
			uint64_t placed = 0;

			for (size_t i = 0; i < cv->n; i++)
				if (cv->v[i].inode && cv->v[i].placed)
					placed += cv->v[i].bytes;
			excess = placed > fs->lend_cap ? placed - fs->lend_cap
						       : 0;
		}
		for (size_t i = 0; i < cv->n && !stopping(m); i++) {
			struct cand *c = &cv->v[i];
			bool need = over && tier_used_bytes(tt) > low;
			/* an admin's placement holds against lending, not
			 * against the watermarks (ctl_action.c), and only
			 * within the cap: the coldest placed bytes beyond
			 * it are lent as the rest */
			bool holds = c->placed && excess == 0;
			bool aged = s->lend[t] && !holds &&
				    heat_age(s->now, c->stamp) >= LEND_AGE_TICKS;
			int dst;

			if (!c->inode)
				continue;
			if (!need && !aged) {
				if (!s->lend[t])
					break; /* at the low watermark */
				/* young: due when it comes of age */
				if (!holds &&
				    (int32_t)(c->stamp + LEND_AGE_TICKS - due) < 0)
					due = c->stamp + LEND_AGE_TICKS;
				continue;
			}
			dst = slower_with_room(fs, c);
			if (dst < 0)
				continue;
			if (move(m, c, (unsigned)dst) == 0) {
				if (c->placed)
					excess -= MIN(excess, c->bytes);
				if (!need) {
					pthread_mutex_lock(&m->lock);
					m->stats.lent++;
					m->stats.lent_bytes += c->bytes;
					pthread_mutex_unlock(&m->lock);
				}
			}
			c->inode = NULL; /* moved or gone: not a victim */
		}
		if (s->lend[t])
			m->lend_due[t] = due;
	}
}

/*
 * Native files (native.h) hold no extents: a tier above its high
 * watermark hands closed ones down whole, those opened longest ago
 * first, after its extents (native_demote()), to the first slower tier
 * their policy allows that holds native files and stays below its high
 * watermark with them.  A native file at home (pinned to its tier) stays.
 * Native files are not promoted: a file is placed when it is made.
 */
static int native_dst(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		      uint64_t bytes)
{
	struct migrator *m = tierfs_mig(fs);
	uint32_t draining = __atomic_load_n(&fs->draining, __ATOMIC_RELAXED);
	uint64_t now = mig_now_ns(fs);
	struct policy pol;

	policy_get(fs, inode, &pol);
	if (pol.pin == (int)t)
		return -1;
	for (unsigned u = t + 1; u < fs->ntiers; u++) {
		struct tier *tu = fs->tiers[u];

		if (!(pol.allowed & (1u << u)) || (draining & (1u << u)) ||
		    (pol.pin >= 0 && pol.pin != (int)u) ||
		    !tier_can_native(tu) || (m && backed_off(m, u, now)))
			continue;
		if (tier_avail_bytes(tu) >= bytes &&
		    tier_used_bytes(tu) + bytes <= wm_bytes(tu, fs->opt.high_wm))
			return (int)u;
	}
	return -1;
}

static void native_demote_pass(struct migrator *m, struct scan *s)
{
	struct tierfs *fs = m->fs;

	for (unsigned t = 0; t + 1 < fs->ntiers && !stopping(m); t++) {
		struct tier *tt = fs->tiers[t];
		uint64_t used = tier_used_bytes(tt);
		uint64_t low = wm_bytes(tt, fs->opt.low_wm);

		/* above its high watermark when the pass began (not only
		 * lending: native files hold no page cache twice) */
		bool over = s->need_cold[t] &&
			    (!s->lend[t] || used > wm_bytes(tt, fs->opt.high_wm));

		if (!over || used <= low || tier_native_bytes(tt) == 0)
			continue;
		(void)native_demote(fs, t, used - low, native_dst,
				    migrate_throttle, migrate_count_move);
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

			if (!(c->allowed & (1u << u)) || lends(fs, u) ||
			    (__atomic_load_n(&fs->draining, __ATOMIC_RELAXED) & (1u << u)))
				continue;
			/* room below the high watermark: just move up */
			if (room_up(fs, c, u)) {
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
			    room_for(tu, c->bytes)) {
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
			unsigned u = migrate_drain_order(c->tier, k,
							 fs->ntiers);

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
	uint64_t begin = mig_now_ns(fs);
	struct scan s = { 0 };
	uint32_t walk = 0;
	bool idle = true;

	if (fs->ntiers < 2)
		goto out;
	s.draining = __atomic_load_n(&fs->draining, __ATOMIC_RELAXED);
	s.now = tierfs_tick(fs);
	s.hot_min = heat_hot_min(fs->opt.promote_passes);
	/*
	 * The inodes of a tier above its high watermark (demotion, if
	 * anything below has room) and of a draining tier are looked at
	 * whole; everything else comes from the tracker's notes.
	 */
	for (unsigned t = 0; t + 1 < fs->ntiers; t++) {
		struct tier *tt = fs->tiers[t];

		s.need_cold[t] = tier_used_bytes(tt) >
					 wm_bytes(tt, fs->opt.high_wm) &&
				 room_below(fs, t, s.draining);
		/* a lending tier holding anything: walked for what came of
		 * age (see the top of this file) */
		s.lend[t] = lends(fs, t) && tier_used_bytes(tt) > 0 &&
			    room_below(fs, t, s.draining) &&
			    (track_pending(fs) ||
			     (int32_t)(s.now - m->lend_due[t]) >= 0);
		s.need_cold[t] |= s.lend[t];
		if (s.need_cold[t])
			walk |= 1u << t;
	}
	walk |= s.draining & ((1u << fs->ntiers) - 1);
	if (!walk && !track_pending(fs))
		goto out; /* nothing changed: nothing to look at */
	idle = false;
	m->scan = &s;
	if (scan_collect(fs, &s, walk) < 0) {
		log_warn("migrator: out of memory; skipping this pass");
		goto out;
	}
	testhook(TESTHOOK_MIGRATE_COLLECTED, NULL, 0);
	data_move_batch_begin(fs);
	demote_pass(m, &s);
	native_demote_pass(m, &s);
	fixup_pass(m, &s);
	promote_pass(m, &s);
	data_move_batch_end(); /* every source slot back before the counts */
	scan_requeue(fs, &s);
out:
	m->scan = NULL;
	pthread_mutex_lock(&m->lock);
	if (idle)
		m->drain_stuck = 0; /* no draining tier holds data */
	m->stats.passes++;
	m->stats.idle_passes += idle;
	m->stats.visited_inodes += s.vis_inodes;
	m->stats.visited_extents += s.vis_extents;
	pthread_mutex_unlock(&m->lock);
	scan_release(fs, &s);
	pthread_mutex_lock(&m->lock);
	m->last_end_ns = mig_now_ns(fs);
	m->last_len_ns = m->last_end_ns - begin;
	pthread_mutex_unlock(&m->lock);
}

/* When the next pass is due: the interval after the last one, or, when
 * kicked, the kick gap (at least as long as the last pass took). */
static uint64_t next_pass_ns(const struct migrator *m)
{
	uint64_t due = m->last_end_ns + (uint64_t)MIGRATE_INTERVAL_MS * 1000000u;

	if (m->urgent)
		return 0;
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

		if (mig_now_ns(m->fs) < due) {
			struct timespec ts = ns_to_ts(due);

			if (m->fs->opt.test_clock) {
				/* caught up with the test's clock: wait
				 * until it moves (migrator_clock_moved()) */
				pthread_cond_broadcast(&m->idle);
				pthread_cond_wait(&m->cond, &m->lock);
				continue;
			}
			/* a kick or stop signals: work out the time again */
			(void)pthread_cond_timedwait(&m->cond, &m->lock, &ts);
			continue;
		}
		m->kicked = m->urgent = false;
		m->in_pass = true;
		pthread_mutex_unlock(&m->lock);
		pass(m);
		pthread_mutex_lock(&m->lock);
		m->in_pass = false;
	}
	pthread_cond_broadcast(&m->idle); /* no more passes */
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
	pthread_cond_init(&m->idle, NULL);
	m->last_end_ns = mig_now_ns(fs);
	r = -pthread_create(&m->thread, NULL, migrator_main, m);
	if (r < 0) {
		pthread_cond_destroy(&m->idle);
		pthread_cond_destroy(&m->cond);
		pthread_mutex_destroy(&m->lock);
		free(m);
		return r;
	}
	__atomic_store_n(&fs->mig, m, __ATOMIC_RELEASE);
	return 0;
}

void migrator_stop(struct tierfs *fs)
{
	struct migrator *m = tierfs_mig(fs);

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (fs->mig_thr)
		throttle_stop(fs->mig_thr); /* a move waiting for bandwidth ends now */
	pthread_join(m->thread, NULL);
	if (fs->mig_thr)
		throttle_resume(fs->mig_thr); /* for moves after this one */
	pthread_cond_destroy(&m->idle);
	pthread_cond_destroy(&m->cond);
	pthread_mutex_destroy(&m->lock);
	/*
	 * Unpublished only now: the migrator thread's own moves look it up
	 * for their throttle (throttle_stop() above ends their waits) until
	 * the join.  No request is in flight at DESTROY (struct tierfs).
	 */
	__atomic_store_n(&fs->mig, NULL, __ATOMIC_RELEASE);
	free(m);
}

static void kick(struct tierfs *fs, bool urgent)
{
	struct migrator *m = tierfs_mig(fs);

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->kicked = true;
	m->urgent |= urgent;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

void migrator_kick(struct tierfs *fs)
{
	kick(fs, false);
}

void migrator_kick_now(struct tierfs *fs)
{
	kick(fs, true);
}

void migrator_clock_moved(struct tierfs *fs)
{
	struct migrator *m = tierfs_mig(fs);

	if (!m || !fs->opt.test_clock)
		return;
	pthread_mutex_lock(&m->lock);
	pthread_cond_signal(&m->cond);
	/* the thread broadcasts idle once no pass is due, or as it stops */
	while (!m->stop && (m->in_pass || mig_now_ns(fs) >= next_pass_ns(m)))
		pthread_cond_wait(&m->idle, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

int migrator_run_pass(struct tierfs *fs, struct migrate_stats *ret_stats)
{
	struct migrator m = { .fs = fs };

	if (tierfs_mig(fs))
		return -EBUSY;
	pthread_mutex_init(&m.lock, NULL);
	pass(&m);
	pthread_mutex_destroy(&m.lock);
	if (ret_stats) {
		*ret_stats = m.stats;
		ret_stats->drain_stuck = m.drain_stuck;
		track_counts(fs, &ret_stats->tracked_inodes,
			     &ret_stats->tracked_extents, &ret_stats->queued);
	}
	return 0;
}

void migrator_get_stats(struct tierfs *fs, struct migrate_stats *ret)
{
	struct migrator *m = tierfs_mig(fs);

	memset(ret, 0, sizeof(*ret));
	if (m) {
		pthread_mutex_lock(&m->lock);
		*ret = m->stats;
		ret->drain_stuck = m->drain_stuck;
		pthread_mutex_unlock(&m->lock);
	}
	if (fs->mig_thr)
		throttle_totals(fs->mig_thr, &ret->throttled_bytes,
				&ret->throttled_ns);
	track_counts(fs, &ret->tracked_inodes, &ret->tracked_extents,
		     &ret->queued);
}
