// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * migrate_scan.c -- what a migrator pass looks at, and the look
 * (migrate_i.h): the tracker (track.h) names the inodes and extents;
 * they are pinned in batches, each inode's policy resolved and its
 * extents read under the shared data lock, and sorted into the
 * candidate vectors the decisions of migrate.c work on.
 *
 * Cost: proportional to what the tracker names -- the inodes with data
 * on the tiers the pass must walk, the extents noted since the last
 * pass, the inodes new to data -- never to the inode table.  Counted in
 * s->vis_inodes (each inode once per pass) and s->vis_extents.
 *
 * Locking: track_mu and itab_lock only inside track_pin(), for one batch
 * of TRACK_PIN_BATCH inodes; then each inode's i_dlock, shared, for its
 * look; nothing held across a look or while unpinning.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "migrate_i.h"
#include "fs.h"
#include "inode.h"
#include "heat.h"
#include "placement.h"
#include "policy.h"
#include "extent_map.h"
#include "tier.h"
#include "track.h"
#include "macro.h"
#include "banned.h"

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

static void vec_forget(struct cand_vec *cv, const struct tfs_inode *inode)
{
	for (size_t i = 0; i < cv->n; i++)
		if (cv->v[i].inode == inode)
			cv->v[i].inode = NULL;
}

/* Forget every candidate of @inode. */
void scan_forget(struct scan *s, const struct tfs_inode *inode)
{
	for (unsigned t = 0; t < TIER_MAX_CONF; t++)
		vec_forget(&s->cold[t], inode);
	vec_forget(&s->hot, inode);
	vec_forget(&s->misplaced, inode);
}

void scan_release(struct tierfs *fs, struct scan *s)
{
	for (size_t i = 0; i < s->npinned; i++)
		if (s->pinned[i])
			inode_unpin(fs, s->pinned[i]);
	free(s->pinned);
	for (unsigned t = 0; t < TIER_MAX_CONF; t++)
		free(s->cold[t].v);
	free(s->hot.v);
	free(s->misplaced.v);
	free(s->vis.v);
	memset(s, 0, sizeof(*s));
}

static size_t ncands(const struct scan *s)
{
	size_t n = s->hot.n + s->misplaced.n;

	for (unsigned t = 0; t < TIER_MAX_CONF; t++)
		n += s->cold[t].n;
	return n;
}

/*
 * Sort one extent into the candidate vectors.  With @cold_only (an
 * exchange victim search on its tier), only into cold[].
 */
static int classify(struct scan *s, const struct cand *c, bool cold_only)
{
	bool misplaced = (s->draining & (1u << c->tier)) ||
			 (c->home >= 0 ? c->tier != c->home
				       : !(c->allowed & (1u << c->tier)));
	int r = 0;

	if (cold_only)
		return misplaced || c->home == c->tier
			       ? 0
			       : vec_push(&s->cold[c->tier], c);
	if (misplaced)
		r = vec_push(&s->misplaced, c);
	else if (s->need_cold[c->tier] && c->home != c->tier)
		r = vec_push(&s->cold[c->tier], c);
	if (r == 0 && c->tier > 0 && c->heat >= s->hot_min && c->promote &&
	    c->home < 0)
		r = vec_push(&s->hot, c);
	return r;
}

static int look_extent(struct tierfs *fs, struct scan *s,
		       struct tfs_inode *inode, const struct policy *pol,
		       const struct extent *e, uint64_t idx, int cold_tier)
{
	struct cand c;

	s->vis_extents++;
	if (cold_tier >= 0 && e->tier != cold_tier)
		return 0;
	c = (struct cand){
		.inode = inode,
		.idx = idx,
		.bytes = tier_held(fs->tiers[e->tier], e->slot),
		.slot = e->slot,
		.tier = e->tier,
		.heat = heat_of(e, s->now, fs->half_life_ticks),
		.stamp = __atomic_load_n(&e->stamp, __ATOMIC_RELAXED),
		.allowed = pol->allowed,
		.home = (int8_t)policy_home(pol, idx << fs->extent_shift),
		.promote = pol->promote,
		.placed = e->flags & EXTENT_F_PLACED,
	};
	return classify(s, &c, cold_tier >= 0);
}

/*
 * Look at pinned @inode as its visits @g[0..@n) say (sorted: the largest
 * mode first), or, with @cold_tier >= 0, at its extents on that tier as
 * exchange victims.  Return: 0 or -ENOMEM.
 */
static int look(struct tierfs *fs, struct scan *s, struct tfs_inode *inode,
		const struct track_visit *g, size_t n, int cold_tier)
{
	struct policy pol;
	uint64_t fp;
	bool whole;
	int r = 0;

	/* before the data lock: resolving takes ns_lock, which comes first */
	policy_get(fs, inode, &pol);
	fp = track_policy_fp(&pol);
	whole = cold_tier >= 0 || g[0].mode == TRACK_WHOLE ||
		(g[0].mode == TRACK_POLICY && track_fp(fs, inode) != fp);
	pthread_rwlock_rdlock(&inode->i_dlock);
	if (whole) {
		struct extent *e;
		uint64_t idx;

		extent_for_each(&inode->i_map, e, idx) {
			r = look_extent(fs, s, inode, &pol, e, idx, cold_tier);
			if (r < 0)
				break;
		}
		/* every extent seen under this policy; a placement after
		 * the unlock compares against it (track_add()) */
		if (r == 0 && cold_tier < 0)
			track_set_fp(fs, inode, fp);
	} else {
		for (size_t i = 0; i < n && r == 0; i++) {
			struct extent *e;

			if (g[i].mode != TRACK_IDX ||
			    (i > 0 && g[i - 1].mode == TRACK_IDX &&
			     g[i - 1].idx == g[i].idx))
				continue;
			e = extent_map_lookup(&inode->i_map, g[i].idx);
			if (e)
				r = look_extent(fs, s, inode, &pol, e,
						g[i].idx, -1);
		}
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return r;
}

static int keep_pin(struct scan *s, struct tfs_inode *inode)
{
	if (s->npinned == s->cpinned) {
		size_t nc = s->cpinned ? 2 * s->cpinned : 64;
		struct tfs_inode **nv = realloc(s->pinned, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		s->pinned = nv;
		s->cpinned = nc;
	}
	s->pinned[s->npinned++] = inode;
	return 0;
}

static int visit_cmp_inode(const void *key, const void *elem)
{
	const struct tfs_inode *k = key;
	const struct track_visit *v = elem;

	return (uintptr_t)k < (uintptr_t)v->inode ? -1 : (uintptr_t)k > (uintptr_t)v->inode;
}

/* Did step 2 look at @inode?  (Its visits are sorted by inode.) */
static bool looked_at(const struct scan *s, const struct tfs_inode *inode)
{
	return s->vis.n && bsearch(inode, s->vis.v, s->vis.n, sizeof(*s->vis.v),
				   visit_cmp_inode);
}

/*
 * Look at the inodes of @vis (sorted by inode), pinned TRACK_PIN_BATCH
 * at a time; the pins of inodes that gave a candidate are kept in
 * s->pinned, the others dropped after each look.  @cold_tier as for
 * look().  Return: 0 or -ENOMEM.
 */
static int look_all(struct tierfs *fs, struct scan *s,
		    const struct track_visits *vis, int cold_tier)
{
	struct tfs_inode *batch[TRACK_PIN_BATCH];
	size_t start[TRACK_PIN_BATCH], end[TRACK_PIN_BATCH];
	bool pinned[TRACK_PIN_BATCH];
	size_t i = 0;
	int r = 0;

	while (i < vis->n && r == 0) {
		size_t k = 0;

		for (; i < vis->n && k < TRACK_PIN_BATCH; k++) {
			batch[k] = vis->v[i].inode;
			start[k] = i;
			while (i < vis->n && vis->v[i].inode == batch[k])
				i++;
			end[k] = i;
		}
		track_pin(fs, batch, k, pinned);
		for (size_t j = 0; j < k; j++) {
			size_t before = ncands(s);
			bool keep = false;

			if (!pinned[j])
				continue; /* freed meanwhile, or being freed */
			if (r == 0) {
				if (cold_tier < 0 || !looked_at(s, batch[j]))
					s->vis_inodes++;
				r = look(fs, s, batch[j], &vis->v[start[j]],
					 end[j] - start[j], cold_tier);
				keep = ncands(s) > before;
				if (keep && (r < 0 || keep_pin(s, batch[j]) < 0)) {
					/* no candidate may outlive its pin */
					scan_forget(s, batch[j]);
					keep = false;
					r = -ENOMEM;
				}
			}
			/* no lock held: the last pin of a removed file
			 * frees it here */
			if (!keep)
				inode_unpin(fs, batch[j]);
		}
	}
	return r;
}

/*
 * The tiers whose cold extents the promotions need as exchange victims
 * and step 2 did not collect: a tier some hot candidate may go up to,
 * with no room for it below the high watermark, and somewhere below it
 * for a victim to go.
 */
static uint32_t exchange_tiers(struct tierfs *fs, const struct scan *s)
{
	uint32_t x = 0;

	for (size_t i = 0; i < s->hot.n; i++) {
		const struct cand *c = &s->hot.v[i];

		for (unsigned u = 0; u < c->tier; u++) {
			if ((x & (1u << u)) || s->need_cold[u] ||
			    lends(fs, u) || !(c->allowed & (1u << u)) ||
			    (s->draining & (1u << u)) || room_up(fs, c, u) ||
			    !room_below(fs, u, s->draining))
				continue;
			x |= 1u << u;
		}
	}
	return x;
}

/* No room, a failing tier, a writer that raced: nothing else would bring
 * them back.  What did move was noted by the move itself (track_move()). */
void scan_requeue(struct tierfs *fs, struct scan *s)
{
	struct cand_vec *vs[] = { &s->hot, &s->misplaced };
	struct track_visit v[256];
	size_t n = 0;

	for (size_t k = 0; k < ARRAY_SIZE(vs); k++) {
		for (size_t i = 0; i < vs[k]->n; i++) {
			const struct cand *c = &vs[k]->v[i];

			if (!c->inode || c->done)
				continue;
			v[n++] = (struct track_visit){ c->inode, c->idx,
						       TRACK_IDX };
			if (n == ARRAY_SIZE(v)) {
				track_requeue(fs, v, n);
				n = 0;
			}
		}
	}
	track_requeue(fs, v, n);
}

int scan_collect(struct tierfs *fs, struct scan *s, uint32_t walk)
{
	uint32_t x;
	int r;

	r = track_collect(fs, walk, true, &s->vis);
	if (r == 0)
		r = look_all(fs, s, &s->vis, -1);
	x = r == 0 ? exchange_tiers(fs, s) : 0;
	for (unsigned u = 0; u < fs->ntiers && r == 0; u++) {
		struct track_visits v = { 0 };

		if (!(x & (1u << u)))
			continue;
		s->need_cold[u] = true;
		r = track_collect(fs, 1u << u, false, &v);
		if (r == 0)
			r = look_all(fs, s, &v, (int)u);
		free(v.v);
	}
	if (r < 0)
		track_lost(fs);
	return r;
}

