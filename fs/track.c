// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * track.c -- the tracker of track.h: per mount, the inodes with data
 * (a hash table by inode pointer, and per tier an intrusive list of the
 * inodes with extents there, with the count), the queue of extents to
 * look at (an open-addressing set of (inode, index)) and the inodes new
 * to data.
 *
 * One mount's tracker exists while some inode of it has data: it is made
 * by the first extent and freed with the last, so a mount without data
 * holds none, memory comes back after mass deletes, and a later mount
 * whose struct tierfs lands at the same address starts afresh.  The
 * trackers of all mounts (a daemon has one; unit tests make many) hang
 * on one list under track_mu, the one lock of this file (track.h says
 * its place in the lock order).
 *
 * Cost: a hook takes track_mu once, plus O(extents dropped) for
 * track_drop(); a hash look-up is O(1) expected.  Memory: one entry per
 * inode with data (about 32 bytes plus 24 per tier) and 16 bytes per
 * queued extent, up to TRACK_QUEUE_MAX.
 *
 * Longer than 700 lines for a reason: one data structure (the sets, the
 * queue, the new list, the fingerprints) under one mutex, track_mu;
 * every function here takes it or is called with it, and a split would
 * expose the structure to a second file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "track.h"
#include "fs.h"
#include "inode.h"
#include "heat.h"
#include "policy.h"
#include "extent_map.h"
#include "macro.h"
#include "log.h"
#include "never.h"
#include "banned.h"

#define HASH_MIN_SHIFT 6 /* 64 buckets at least */
#define QUEUE_MIN 64	 /* slots of a fresh queue */

struct tent;

/* One tier of one inode with data. */
struct tpart {
	uint32_t cnt;		   /* its extents on the tier */
	struct tent *prev, *next;  /* list of the tier's inodes, while cnt */
};

/* One inode with data (at least one extent on some tier). */
struct tent {
	struct tfs_inode *inode;
	struct tent *hnext;	/* hash chain */
	uint64_t fp;		/* track_policy_fp() of the last whole look,
				 * 0: never looked at */
	bool fresh;		/* on the new list, not collected yet */
	struct tpart part[];	/* [ntiers] */
};

/* A queued extent; inode NULL: an empty slot. */
struct qent {
	struct tfs_inode *inode;
	uint64_t idx;
};

/* One mount's tracker; every field track_mu. */
struct track {
	struct tierfs *fs;
	struct track *next;	/* the list of trackers */
	unsigned ntiers;

	struct tent **hash;	/* by inode pointer, 1 << hshift buckets */
	unsigned hshift;
	uint64_t ninodes;	/* entries */
	uint64_t nextents;	/* sum of every entry's counts */
	struct tent *head[TIER_MAX_CONF]; /* inodes with data on each tier */
	uint64_t non[TIER_MAX_CONF];	  /* ... and how many */

	struct qent *q;		/* open addressing, qcap a power of two */
	size_t qcap, qn;
	struct tfs_inode **fresh; /* inodes new to data (tent.fresh) */
	size_t nfresh, cfresh;
	bool overflow;		/* notes were lost: look at everything */
	uint64_t gen_seen;	/* fs->policy_gen at the last collect */
};

static pthread_mutex_t track_mu = PTHREAD_MUTEX_INITIALIZER;
static struct track *tracks; /* track_mu */

static void lost(const char *what)
{
	static bool warned; /* relaxed atomic */

	if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
		log_warn("migrator: out of memory for %s; passes look at every file with data until there is memory again",
			 what);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static size_t bucket(const struct track *tr, const struct tfs_inode *inode)
{
	return (size_t)(mix((uintptr_t)inode) >> (64 - tr->hshift));
}

/* The tracker of @fs, made if @create and there is none.  track_mu. */
static struct track *track_of(struct tierfs *fs, bool create)
{
	struct track *tr;

	for (tr = tracks; tr; tr = tr->next)
		if (tr->fs == fs)
			return tr;
	if (!create)
		return NULL;
	tr = calloc(1, sizeof(*tr));
	if (tr)
		tr->hash = calloc((size_t)1 << HASH_MIN_SHIFT,
				  sizeof(*tr->hash));
	if (!tr || !tr->hash) {
		free(tr);
		lost("the tracker");
		return NULL;
	}
	tr->fs = fs;
	tr->ntiers = fs->ntiers;
	tr->hshift = HASH_MIN_SHIFT;
	/* what changed before the first data needs no look: every inode
	 * that gets data now is looked at whole once (fresh) */
	tr->gen_seen = __atomic_load_n(&fs->policy_gen, __ATOMIC_RELAXED);
	tr->next = tracks;
	tracks = tr;
	return tr;
}

/* Free @tr once no inode has data: nothing of it is worth keeping (its
 * notes can only name freed inodes). */
static void track_maybe_free(struct track *tr)
{
	struct track **pp;

	if (tr->ninodes)
		return;
	for (pp = &tracks; *pp != tr; pp = &(*pp)->next)
		;
	*pp = tr->next;
	free(tr->hash);
	free(tr->q);
	free(tr->fresh);
	free(tr);
}

static struct tent *tent_find(const struct track *tr,
			      const struct tfs_inode *inode)
{
	struct tent *te;

	for (te = tr->hash[bucket(tr, inode)]; te; te = te->hnext)
		if (te->inode == inode)
			return te;
	return NULL;
}

/* The entry of @inode in @fs's tracker, or NULL.  track_mu. */
static struct tent *entry_of(struct tierfs *fs, struct tfs_inode *inode)
{
	struct track *tr = track_of(fs, false);

	return tr ? tent_find(tr, inode) : NULL;
}

/* Rehash into 1 << @shift buckets; on failure keep the old table (only
 * the chains get longer). */
static void rehash(struct track *tr, unsigned shift)
{
	size_t oldn = (size_t)1 << tr->hshift;
	struct tent **nh = calloc((size_t)1 << shift, sizeof(*nh));
	struct tent **oh = tr->hash;

	if (!nh)
		return;
	tr->hash = nh;
	tr->hshift = shift;
	for (size_t b = 0; b < oldn; b++) {
		struct tent *te = oh[b], *next;

		for (; te; te = next) {
			size_t nb = bucket(tr, te->inode);

			next = te->hnext;
			te->hnext = nh[nb];
			nh[nb] = te;
		}
	}
	free(oh);
}

/* Put @inode on the new list; false (and an overflow: the next pass
 * looks at everything) without the memory for it. */
static bool fresh_push(struct track *tr, struct tfs_inode *inode)
{
	if (tr->nfresh == tr->cfresh) {
		size_t nc = tr->cfresh ? 2 * tr->cfresh : 64;
		struct tfs_inode **nv = realloc(tr->fresh, nc * sizeof(*nv));

		if (!nv) {
			tr->overflow = true;
			lost("the list of new files");
			return false;
		}
		tr->fresh = nv;
		tr->cfresh = nc;
	}
	tr->fresh[tr->nfresh++] = inode;
	return true;
}

/* The entry of @inode, made (fresh, no counts) if it has none. */
static struct tent *tent_get(struct track *tr, struct tfs_inode *inode)
{
	struct tent *te = tent_find(tr, inode);
	size_t b;

	if (te)
		return te;
	te = calloc(1, sizeof(*te) + tr->ntiers * sizeof(te->part[0]));
	if (!te) {
		lost("a file's entry");
		return NULL;
	}
	te->inode = inode;
	te->fresh = true;
	b = bucket(tr, inode);
	te->hnext = tr->hash[b];
	tr->hash[b] = te;
	tr->ninodes++;
	/* not on the list: not fresh, or its notes would be dropped for
	 * good; the overflow looks at it whole */
	if (!fresh_push(tr, inode))
		te->fresh = false;
	if (tr->ninodes > ((uint64_t)1 << tr->hshift))
		rehash(tr, tr->hshift + 1);
	return te;
}

static void tent_unhash(struct track *tr, struct tent *te)
{
	struct tent **pp = &tr->hash[bucket(tr, te->inode)];

	while (*pp != te)
		pp = &(*pp)->hnext;
	*pp = te->hnext;
	tr->ninodes--;
	/* memory back after mass deletes */
	if (tr->hshift > HASH_MIN_SHIFT &&
	    tr->ninodes < ((uint64_t)1 << tr->hshift) / 8)
		rehash(tr, tr->hshift - 1);
}

static void part_add(struct track *tr, struct tent *te, unsigned t,
		     uint32_t n)
{
	struct tpart *p = &te->part[t];

	if (NEVER(t >= tr->ntiers) || n == 0)
		return;
	if (p->cnt == 0) {
		p->prev = NULL;
		p->next = tr->head[t];
		if (p->next)
			p->next->part[t].prev = te;
		tr->head[t] = te;
		tr->non[t]++;
	}
	p->cnt += n;
	tr->nextents += n;
}

static void part_sub(struct track *tr, struct tent *te, unsigned t,
		     uint32_t n)
{
	struct tpart *p = &te->part[t];

	if (NEVER(t >= tr->ntiers) || n == 0 || p->cnt == 0)
		return;
	if (NEVER(n > p->cnt))
		n = p->cnt;
	p->cnt -= n;
	tr->nextents -= n;
	if (p->cnt)
		return;
	if (p->prev)
		p->prev->part[t].next = p->next;
	else
		tr->head[t] = p->next;
	if (p->next)
		p->next->part[t].prev = p->prev;
	p->prev = p->next = NULL;
	tr->non[t]--;
}

/* Out of every list and the table, and freed; the tracker too if it was
 * the last. */
static void tent_free(struct track *tr, struct tent *te)
{
	for (unsigned t = 0; t < tr->ntiers; t++)
		part_sub(tr, te, t, te->part[t].cnt);
	tent_unhash(tr, te);
	free(te);
	track_maybe_free(tr);
}

/* ---- the queue --------------------------------------------------- */

static size_t qslot(size_t cap, const struct tfs_inode *inode, uint64_t idx)
{
	return (size_t)mix((uintptr_t)inode * 31 + idx) & (cap - 1);
}

/* Insert without growing; the caller made room. */
static void q_put(struct qent *q, size_t cap, size_t *n,
		  struct tfs_inode *inode, uint64_t idx)
{
	size_t i = qslot(cap, inode, idx);

	for (;; i = (i + 1) & (cap - 1)) {
		if (!q[i].inode) {
			q[i].inode = inode;
			q[i].idx = idx;
			(*n)++;
			return;
		}
		if (q[i].inode == inode && q[i].idx == idx)
			return;
	}
}

static void q_insert(struct track *tr, struct tfs_inode *inode, uint64_t idx)
{
	if (tr->overflow)
		return; /* everything is looked at next pass anyway */
	if ((tr->qn + 1) * 2 > tr->qcap) {
		size_t ncap = tr->qcap ? 2 * tr->qcap : QUEUE_MIN, n = 0;
		struct qent *nq;

		if (tr->qn >= TRACK_QUEUE_MAX) {
			tr->overflow = true;
			return;
		}
		nq = calloc(ncap, sizeof(*nq));
		if (!nq) {
			tr->overflow = true;
			lost("the queue of extents");
			return;
		}
		for (size_t i = 0; i < tr->qcap; i++)
			if (tr->q[i].inode)
				q_put(nq, ncap, &n, tr->q[i].inode,
				      tr->q[i].idx);
		free(tr->q);
		tr->q = nq;
		tr->qcap = ncap;
	}
	q_put(tr->q, tr->qcap, &tr->qn, inode, idx);
}

/* ---- hooks ------------------------------------------------------- */

uint64_t track_policy_fp(const struct policy *pol)
{
	/* FNV-1a over what the migrator acts on: not the order, not who
	 * set what */
	uint64_t h = 0xcbf29ce484222325ull;
	uint64_t w[4 + 2 * POLICY_SPLIT_MAX];
	unsigned n = 0;

	w[n++] = pol->allowed;
	w[n++] = (uint64_t)(int64_t)pol->pin;
	w[n++] = pol->promote;
	w[n++] = pol->nsplit;
	for (unsigned i = 0; i < pol->nsplit && i < POLICY_SPLIT_MAX; i++) {
		w[n++] = pol->split[i].end;
		w[n++] = pol->split[i].tier;
	}
	for (unsigned i = 0; i < n; i++) {
		for (unsigned b = 0; b < 8; b++) {
			h ^= (w[i] >> (8 * b)) & 0xff;
			h *= 0x100000001b3ull;
		}
	}
	return h ? h : 1;
}

void track_add(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
	       unsigned tier, const struct policy *pol)
{
	int home;
	bool odd;
	uint64_t fp;
	struct track *tr;
	struct tent *te;

	if (fs->ntiers < 2)
		return;
	home = policy_home(pol, idx << fs->extent_shift);
	odd = home >= 0 ? tier != (unsigned)home
			: !(pol->allowed & (1u << tier));
	fp = track_policy_fp(pol);
	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, true);
	te = tr ? tent_get(tr, inode) : NULL;
	if (te) {
		part_add(tr, te, tier, 1);
		/* away from home, or placed by a policy other than the one
		 * the inode was last looked at under: look at it */
		if (!te->fresh && (odd || fp != te->fp))
			q_insert(tr, inode, idx);
	}
	pthread_mutex_unlock(&track_mu);
}

void track_move(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		unsigned from, unsigned to)
{
	struct track *tr;
	struct tent *te;

	if (fs->ntiers < 2 || from == to)
		return;
	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, true);
	te = tr ? tent_get(tr, inode) : NULL;
	if (te) {
		part_sub(tr, te, from, 1);
		part_add(tr, te, to, 1);
		/* where it went may not be where it belongs (a ctl move, a
		 * relocation that spilled): one look next pass */
		if (!te->fresh)
			q_insert(tr, inode, idx);
	}
	pthread_mutex_unlock(&track_mu);
}

void track_drop(struct tierfs *fs, struct tfs_inode *inode, uint64_t first,
		uint64_t last)
{
	uint32_t n[TIER_MAX_CONF] = { 0 };
	const struct extent *e;
	struct track *tr;
	struct tent *te;
	uint64_t idx;
	bool any = false;

	if (fs->ntiers < 2)
		return;
	for (e = extent_map_next(&inode->i_map, first, &idx); e && idx <= last;
	     e = idx == EXTENT_MAP_MAX_INDEX
			 ? NULL
			 : extent_map_next(&inode->i_map, idx + 1, &idx)) {
		if (!NEVER(e->tier >= TIER_MAX_CONF)) {
			n[e->tier]++;
			any = true;
		}
	}
	if (!any)
		return;
	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, false);
	te = tr ? tent_find(tr, inode) : NULL;
	if (te) {
		uint64_t left = 0;

		for (unsigned t = 0; t < tr->ntiers; t++) {
			part_sub(tr, te, t, n[t]);
			left += te->part[t].cnt;
		}
		if (!left)
			tent_free(tr, te);
	}
	pthread_mutex_unlock(&track_mu);
}

void track_release(struct tierfs *fs, struct tfs_inode *inode)
{
	struct tent *te;

	if (fs->ntiers < 2)
		return;
	pthread_mutex_lock(&track_mu);
	te = entry_of(fs, inode);
	if (te)
		tent_free(track_of(fs, false), te);
	pthread_mutex_unlock(&track_mu);
}

void track_note(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx)
{
	struct tent *te;

	if (fs->ntiers < 2)
		return;
	pthread_mutex_lock(&track_mu);
	te = entry_of(fs, inode);
	if (te && !te->fresh)
		q_insert(track_of(fs, false), inode, idx);
	pthread_mutex_unlock(&track_mu);
}

void track_policy_note(struct tierfs *fs, struct tfs_inode *inode)
{
	struct tent *te;

	if (fs->ntiers < 2)
		return;
	pthread_mutex_lock(&track_mu);
	te = entry_of(fs, inode);
	/* looked at whole by the next collect, as a new inode is (or,
	 * without memory for the list, with everything: the overflow) */
	if (te && !te->fresh && fresh_push(track_of(fs, false), inode))
		te->fresh = true;
	pthread_mutex_unlock(&track_mu);
}

void track_touch(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		 const struct extent *e, uint32_t now)
{
	/* the fastest tier has nowhere to go up to; and only a touch that
	 * changed the heat (it stamped @now, heat_touch()) made anything
	 * hotter */
	if (e->tier == 0 || fs->ntiers < 2 ||
	    __atomic_load_n(&e->stamp, __ATOMIC_RELAXED) != now)
		return;
	if (heat_of(e, now, fs->half_life_ticks) <
	    heat_hot_min(fs->opt.promote_passes))
		return;
	track_note(fs, inode, idx);
}

/* ---- for the migrator -------------------------------------------- */

static int visits_reserve(struct track_visits *out, size_t more)
{
	size_t want = out->n + more, nc;
	struct track_visit *nv;

	if (want <= out->cap)
		return 0;
	nc = out->cap ? out->cap : 64;
	while (nc < want)
		nc *= 2;
	nv = realloc(out->v, nc * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	out->v = nv;
	out->cap = nc;
	return 0;
}

static void visit_add(struct track_visits *out, struct tfs_inode *inode,
		      uint64_t idx, enum track_mode mode)
{
	out->v[out->n++] = (struct track_visit){ inode, idx, (uint8_t)mode };
}

/* By inode, then the largest mode first, then index. */
static int visit_cmp(const void *a, const void *b)
{
	const struct track_visit *x = a, *y = b;

	if (x->inode != y->inode)
		return (uintptr_t)x->inode < (uintptr_t)y->inode ? -1 : 1;
	if (x->mode != y->mode)
		return x->mode > y->mode ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int track_collect(struct tierfs *fs, uint32_t walk, bool take,
		  struct track_visits *out)
{
	uint64_t gen = __atomic_load_n(&fs->policy_gen, __ATOMIC_RELAXED);
	size_t first = out->n, need = 0;
	int all = -1; /* enum track_mode of every inode, or none */
	struct track *tr;

	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, false);
	if (!tr) {
		pthread_mutex_unlock(&track_mu);
		return 0;
	}
	if (take && tr->overflow)
		all = TRACK_WHOLE;
	else if (take && gen != tr->gen_seen)
		all = TRACK_POLICY;
	for (unsigned t = 0; t < tr->ntiers; t++)
		if (walk & (1u << t))
			need += tr->non[t];
	/* after an overflow every inode is looked at whole: the queued
	 * extents and the fresh inodes are in that already */
	if (take)
		need += all == TRACK_WHOLE ? tr->ninodes
					   : tr->qn + tr->nfresh +
						     (all >= 0 ? tr->ninodes : 0);
	if (visits_reserve(out, need) < 0) {
		if (take)
			tr->overflow = true;
		pthread_mutex_unlock(&track_mu);
		return -ENOMEM;
	}
	for (unsigned t = 0; t < tr->ntiers; t++) {
		if (!(walk & (1u << t)))
			continue;
		for (struct tent *te = tr->head[t]; te; te = te->part[t].next)
			visit_add(out, te->inode, 0, TRACK_WHOLE);
	}
	if (take) {
		for (size_t i = 0; all != TRACK_WHOLE && i < tr->qcap; i++) {
			struct tent *te;

			if (!tr->q[i].inode)
				continue;
			te = tent_find(tr, tr->q[i].inode);
			if (te && !te->fresh)
				visit_add(out, te->inode, tr->q[i].idx,
					  TRACK_IDX);
		}
		for (size_t i = 0; i < tr->nfresh; i++) {
			struct tent *te = tent_find(tr, tr->fresh[i]);

			if (te && te->fresh) {
				te->fresh = false;
				if (all != TRACK_WHOLE)
					visit_add(out, te->inode, 0,
						  TRACK_WHOLE);
			}
		}
		for (size_t b = 0; all >= 0 && b < ((size_t)1 << tr->hshift);
		     b++)
			for (struct tent *te = tr->hash[b]; te; te = te->hnext)
				visit_add(out, te->inode, 0,
					  (enum track_mode)all);
		free(tr->q);
		tr->q = NULL;
		tr->qcap = tr->qn = 0;
		tr->nfresh = 0;
		if (tr->cfresh > 1024) { /* memory back after a burst */
			free(tr->fresh);
			tr->fresh = NULL;
			tr->cfresh = 0;
		}
		tr->overflow = false;
		tr->gen_seen = gen;
	}
	pthread_mutex_unlock(&track_mu);
	if (out->n - first > 1)
		qsort(out->v + first, out->n - first, sizeof(*out->v),
		      visit_cmp);
	return 0;
}

bool track_pending(struct tierfs *fs)
{
	uint64_t gen = __atomic_load_n(&fs->policy_gen, __ATOMIC_RELAXED);
	struct track *tr;
	bool r;

	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, false);
	r = tr && (tr->qn || tr->nfresh || tr->overflow || gen != tr->gen_seen);
	pthread_mutex_unlock(&track_mu);
	return r;
}

size_t track_pin(struct tierfs *fs, struct tfs_inode *const *v, size_t n,
		 bool *ok)
{
	struct track *tr;
	size_t pinned = 0;

	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, false);
	pthread_mutex_lock(&fs->itab_lock);
	for (size_t i = 0; i < n; i++) {
		/* tracked: its memory is valid while we hold track_mu;
		 * i_prev: still on the table, not being freed */
		ok[i] = tr && tent_find(tr, v[i]) && v[i]->i_prev;
		if (ok[i]) {
			v[i]->i_nref++;
			pinned++;
		}
	}
	pthread_mutex_unlock(&fs->itab_lock);
	pthread_mutex_unlock(&track_mu);
	return pinned;
}

uint64_t track_fp(struct tierfs *fs, struct tfs_inode *inode)
{
	struct tent *te;
	uint64_t fp;

	pthread_mutex_lock(&track_mu);
	te = entry_of(fs, inode);
	fp = te ? te->fp : 0;
	pthread_mutex_unlock(&track_mu);
	return fp;
}

void track_set_fp(struct tierfs *fs, struct tfs_inode *inode, uint64_t fp)
{
	struct tent *te;

	pthread_mutex_lock(&track_mu);
	te = entry_of(fs, inode);
	if (te)
		te->fp = fp;
	pthread_mutex_unlock(&track_mu);
}

void track_lost(struct tierfs *fs)
{
	struct track *tr;

	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, false);
	if (tr)
		tr->overflow = true;
	pthread_mutex_unlock(&track_mu);
}

void track_requeue(struct tierfs *fs, const struct track_visit *v, size_t n)
{
	struct track *tr;

	if (n == 0)
		return;
	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, false);
	for (size_t i = 0; tr && i < n; i++) {
		struct tent *te = tent_find(tr, v[i].inode);

		if (te && !te->fresh)
			q_insert(tr, v[i].inode, v[i].idx);
	}
	pthread_mutex_unlock(&track_mu);
}

void track_counts(struct tierfs *fs, uint64_t *ret_inodes,
		  uint64_t *ret_extents, uint64_t *ret_queued)
{
	struct track *tr;

	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, false);
	*ret_inodes = tr ? tr->ninodes : 0;
	*ret_extents = tr ? tr->nextents : 0;
	*ret_queued = tr ? tr->qn : 0;
	pthread_mutex_unlock(&track_mu);
}

uint64_t track_inodes_on(struct tierfs *fs, unsigned t)
{
	struct track *tr;
	uint64_t n;

	pthread_mutex_lock(&track_mu);
	tr = track_of(fs, false);
	n = tr && t < tr->ntiers ? tr->non[t] : 0;
	pthread_mutex_unlock(&track_mu);
	return n;
}
