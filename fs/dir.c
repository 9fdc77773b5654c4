// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dir.c -- directory entries: a hash table for lookup and a cookie-ordered
 * array for readdir, both grown without a pass over the entries (dir.h).
 * See struct tfs_dir in dir.h.  Every function is called with
 * fs->ns_lock held (exclusive for changes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dir.h"
#include "banned.h"

#define DIR_HASH_MIN 16
#define DIR_COOKIE_FIRST 3 /* 1 and 2 are "." and ".." */
/*
 * Buckets of a growing table's old half moved on each add and remove.
 * A table doubles when the entries outnumber its buckets, so the n/2
 * buckets of the old one are all moved after n/2 / DIR_MOVE_STEP more
 * adds: long before the next doubling is due (n more adds), whatever
 * the removes do.  Each step is a few short chains (load factor <= 1).
 */
#define DIR_MOVE_STEP 4

/* FNV-1a: short names, good spread, no state. */
static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* A table of @nsize empty buckets, or NULL (out of memory).  calloc()
 * of a large table is fresh mmap()ed memory: no zeroing pass, its pages
 * come as the buckets are first used. */
static struct dir_htab *htab_new(uint32_t nsize)
{
	return calloc(1, sizeof(struct dir_htab) +
			      (size_t)nsize * sizeof(struct dentry *));
}

/* The chain that holds (or would hold) hash @h: in the old table while
 * its bucket there is not moved yet.  Only reads: ns_lock shared is
 * enough. */
static struct dentry **chain_of(const struct tfs_dir *d, uint32_t h)
{
	struct dir_htab *t = d->d_htab;

	if (t->h_old) {
		uint32_t ob = h & (d->d_hsize / 2 - 1);

		if (ob >= t->h_move)
			return &t->h_old->h_b[ob];
	}
	return &t->h_b[h & (d->d_hsize - 1)];
}

/* Move up to @n of the old table's buckets into the new one; free the
 * old table once it is empty.  ns_lock exclusive. */
static void htab_move(struct tfs_dir *d, uint32_t n)
{
	struct dir_htab *t = d->d_htab, *o = t->h_old;
	uint32_t osize = d->d_hsize / 2, mask = d->d_hsize - 1;

	if (!o)
		return;
	for (; n && t->h_move < osize; n--, t->h_move++) {
		struct dentry *de = o->h_b[t->h_move], *next;

		/* old bucket b splits into new buckets b and b + osize */
		for (; de; de = next) {
			next = de->d_hnext;
			de->d_hnext = t->h_b[de->d_hash & mask];
			t->h_b[de->d_hash & mask] = de;
		}
		o->h_b[t->h_move] = NULL;
	}
	if (t->h_move == osize) {
		free(o);
		t->h_old = NULL;
		t->h_move = 0;
	}
}

/* Start doubling the table: a new table in front, the current one
 * behind it to be emptied by htab_move().  Not while one is already
 * being emptied (the entries may then outnumber the buckets for a
 * while).  Return: 0 or -ENOMEM (nothing changed). */
static int htab_grow(struct tfs_dir *d)
{
	struct dir_htab *nt;

	if (d->d_htab->h_old || d->d_hsize > UINT32_MAX / 2)
		return 0;
	nt = htab_new(d->d_hsize * 2);
	if (!nt)
		return -ENOMEM;
	nt->h_old = d->d_htab;
	nt->h_move = 0;
	d->d_htab = nt;
	d->d_hsize *= 2;
	return 0;
}

/* The order array's slot @i (< d_cap). */
static inline struct dentry **order_slot(const struct tfs_dir *d, uint32_t i)
{
	return &d->d_order[i >> DIR_CHUNK_SHIFT][i & (DIR_CHUNK - 1)];
}

static inline uint32_t order_nchunks(uint32_t cap)
{
	return (cap + DIR_CHUNK - 1) >> DIR_CHUNK_SHIFT;
}

/*
 * Room for one more slot in the order array: chunk 0 doubles (at most
 * DIR_CHUNK slots, 32 KiB, copied), then one more chunk each time, and
 * the list of chunks doubles when its count is a power of two (it holds
 * at least the next power of two of chunks: 256 pointers for 1M
 * entries).  Return: 0 or -ENOMEM (nothing changed).
 */
static int order_grow(struct tfs_dir *d)
{
	uint32_t nch = order_nchunks(d->d_cap);
	struct dentry **chunk;

	if (d->d_cap < DIR_CHUNK) {
		uint32_t ncap = d->d_cap ? d->d_cap * 2 : 16;

		if (!d->d_order) {
			d->d_order = calloc(1, sizeof(*d->d_order));
			if (!d->d_order)
				return -ENOMEM;
		}
		chunk = realloc(d->d_order[0], ncap * sizeof(*chunk));
		if (!chunk)
			return -ENOMEM;
		d->d_order[0] = chunk;
		d->d_cap = ncap;
		return 0;
	}
	if (d->d_cap > UINT32_MAX - DIR_CHUNK)
		return -ENOMEM;
	if ((nch & (nch - 1)) == 0) {
		struct dentry ***nl = realloc(d->d_order,
					      2 * (size_t)nch * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		d->d_order = nl;
	}
	chunk = malloc(DIR_CHUNK * sizeof(*chunk));
	if (!chunk)
		return -ENOMEM;
	d->d_order[nch] = chunk;
	d->d_cap += DIR_CHUNK;
	return 0;
}

int dir_init(struct tfs_dir *d, struct tfs_inode *parent)
{
	memset(d, 0, sizeof(*d));
	d->d_htab = htab_new(DIR_HASH_MIN);
	if (!d->d_htab)
		return -ENOMEM;
	d->d_hsize = DIR_HASH_MIN;
	d->d_next_cookie = DIR_COOKIE_FIRST;
	d->d_parent = parent;
	return 0;
}

void dir_release(struct tfs_dir *d)
{
	/* entries of a dying directory: only dead ones can be left */
	for (uint32_t i = 0; i < d->d_norder; i++)
		free(*order_slot(d, i));
	for (uint32_t c = 0; c < order_nchunks(d->d_cap); c++)
		free(d->d_order[c]);
	free(d->d_order);
	if (d->d_htab)
		free(d->d_htab->h_old);
	free(d->d_htab);
	memset(d, 0, sizeof(*d));
}

struct dentry *dir_find(const struct tfs_dir *d, const char *name)
{
	size_t n = strlen(name);
	uint32_t h = name_hash(name, n);

	for (struct dentry *de = *chain_of(d, h); de; de = de->d_hnext)
		if (de->d_hash == h && de->d_namelen == n &&
		    !memcmp(de->d_name, name, n))
			return de;
	return NULL;
}

/* Drop dead entries from the order array once they are the majority,
 * and the chunks past the last one still used (never chunk 0);
 * amortised O(1) per removal. */
static void compact(struct tfs_dir *d)
{
	uint32_t j = 0, keep;

	if (d->d_ndead < 64 || d->d_ndead < d->d_nlive)
		return;
	for (uint32_t i = 0; i < d->d_norder; i++) {
		struct dentry *de = *order_slot(d, i);

		if (de->d_dead)
			free(de);
		else
			*order_slot(d, j++) = de;
	}
	d->d_norder = j;
	d->d_ndead = 0;
	keep = order_nchunks(j) ? order_nchunks(j) : 1;
	if (d->d_cap > DIR_CHUNK && keep < order_nchunks(d->d_cap)) {
		for (uint32_t c = keep; c < order_nchunks(d->d_cap); c++)
			free(d->d_order[c]);
		d->d_cap = keep * DIR_CHUNK;
	}
}

int dir_add(struct tfs_dir *d, const char *name, struct tfs_inode *inode,
	    struct tfs_dir *sub)
{
	size_t n = strlen(name);
	struct dentry *de, **pp;

	if (d->d_norder == d->d_cap && order_grow(d) < 0)
		return -ENOMEM;
	if (d->d_nlive + 1 > d->d_hsize && htab_grow(d) < 0)
		return -ENOMEM;
	de = malloc(sizeof(*de) + n + 1);
	if (!de)
		return -ENOMEM;
	htab_move(d, DIR_MOVE_STEP);
	memcpy(de->d_name, name, n + 1);
	de->d_namelen = (uint16_t)n;
	de->d_hash = name_hash(name, n);
	de->d_inode = inode;
	de->d_dead = false;
	de->d_cookie = d->d_next_cookie++;
	pp = chain_of(d, de->d_hash);
	de->d_hnext = *pp;
	*pp = de;
	*order_slot(d, d->d_norder++) = de;
	d->d_nlive++;
	if (sub)
		sub->d_self = de;
	return 0;
}

struct tfs_inode *dir_remove(struct tfs_dir *d, const char *name,
			     struct tfs_dir *sub)
{
	size_t n = strlen(name);
	uint32_t h = name_hash(name, n);
	struct dentry **pp;
	struct tfs_inode *inode;

	htab_move(d, DIR_MOVE_STEP);
	for (pp = chain_of(d, h); *pp; pp = &(*pp)->d_hnext) {
		struct dentry *de = *pp;

		if (de->d_hash != h || de->d_namelen != n ||
		    memcmp(de->d_name, name, n))
			continue;
		*pp = de->d_hnext;
		inode = de->d_inode;
		de->d_inode = NULL;
		if (sub && sub->d_self == de)
			sub->d_self = NULL;
		de->d_dead = true;
		d->d_nlive--;
		d->d_ndead++;
		compact(d);
		return inode;
	}
	return NULL;
}

void dir_set_inode(struct dentry *de, struct tfs_inode *inode,
		   struct tfs_dir *sub)
{
	de->d_inode = inode;
	if (sub)
		sub->d_self = de;
}

struct dentry *dir_next(const struct tfs_dir *d, uint64_t cookie)
{
	uint32_t lo = 0, hi = d->d_norder;

	/* first index whose cookie is > @cookie */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if ((*order_slot(d, mid))->d_cookie <= cookie)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < d->d_norder; lo++) {
		struct dentry *de = *order_slot(d, lo);

		if (!de->d_dead)
			return de;
	}
	return NULL;
}
