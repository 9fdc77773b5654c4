// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dir.c -- directory entries: a hash table for lookup and a cookie-ordered
 * array for readdir.  See struct tfs_dir in dir.h.  Every function is
 * called with fs->ns_lock held (exclusive for changes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dir.h"
#include "inode.h"
#include "banned.h"

#define DIR_HASH_MIN 16
#define DIR_COOKIE_FIRST 3 /* 1 and 2 are "." and ".." */

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

int dir_init(struct tfs_dir *d, struct tfs_inode *parent)
{
	memset(d, 0, sizeof(*d));
	d->d_htab = calloc(DIR_HASH_MIN, sizeof(*d->d_htab));
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
		free(d->d_order[i]);
	free(d->d_order);
	free(d->d_htab);
	memset(d, 0, sizeof(*d));
}

struct dentry *dir_find(const struct tfs_dir *d, const char *name)
{
	size_t n = strlen(name);
	uint32_t h = name_hash(name, n);

	for (struct dentry *de = d->d_htab[h & (d->d_hsize - 1)]; de;
	     de = de->d_hnext)
		if (de->d_hash == h && de->d_namelen == n &&
		    !memcmp(de->d_name, name, n))
			return de;
	return NULL;
}

static int rehash(struct tfs_dir *d, uint32_t nsize)
{
	struct dentry **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (uint32_t i = 0; i < d->d_hsize; i++) {
		struct dentry *de = d->d_htab[i], *next;

		for (; de; de = next) {
			next = de->d_hnext;
			de->d_hnext = nt[de->d_hash & (nsize - 1)];
			nt[de->d_hash & (nsize - 1)] = de;
		}
	}
	free(d->d_htab);
	d->d_htab = nt;
	d->d_hsize = nsize;
	return 0;
}

/* Drop dead entries from the order array once they are the majority;
 * amortised O(1) per removal. */
static void compact(struct tfs_dir *d)
{
	uint32_t j = 0;

	if (d->d_ndead < 64 || d->d_ndead < d->d_nlive)
		return;
	for (uint32_t i = 0; i < d->d_norder; i++) {
		if (d->d_order[i]->d_dead)
			free(d->d_order[i]);
		else
			d->d_order[j++] = d->d_order[i];
	}
	d->d_norder = j;
	d->d_ndead = 0;
}

int dir_add(struct tfs_dir *d, const char *name, struct tfs_inode *inode)
{
	size_t n = strlen(name);
	struct dentry *de;
	uint32_t b;

	if (d->d_norder == d->d_cap) {
		uint32_t ncap = d->d_cap ? d->d_cap * 2 : 16;
		struct dentry **no = realloc(d->d_order, ncap * sizeof(*no));

		if (!no)
			return -ENOMEM;
		d->d_order = no;
		d->d_cap = ncap;
	}
	if (d->d_nlive + 1 > d->d_hsize && rehash(d, d->d_hsize * 2) < 0)
		return -ENOMEM;
	de = malloc(sizeof(*de) + n + 1);
	if (!de)
		return -ENOMEM;
	memcpy(de->d_name, name, n + 1);
	de->d_namelen = (uint16_t)n;
	de->d_hash = name_hash(name, n);
	de->d_inode = inode;
	de->d_dead = false;
	de->d_cookie = d->d_next_cookie++;
	b = de->d_hash & (d->d_hsize - 1);
	de->d_hnext = d->d_htab[b];
	d->d_htab[b] = de;
	d->d_order[d->d_norder++] = de;
	d->d_nlive++;
	if (inode->i_type == S_IFDIR)
		inode->i_dir.d_self = de;
	return 0;
}

struct tfs_inode *dir_remove(struct tfs_dir *d, const char *name)
{
	size_t n = strlen(name);
	uint32_t h = name_hash(name, n);
	struct dentry **pp = &d->d_htab[h & (d->d_hsize - 1)];
	struct tfs_inode *inode;

	for (; *pp; pp = &(*pp)->d_hnext) {
		struct dentry *de = *pp;

		if (de->d_hash != h || de->d_namelen != n ||
		    memcmp(de->d_name, name, n))
			continue;
		*pp = de->d_hnext;
		inode = de->d_inode;
		de->d_inode = NULL;
		if (inode->i_type == S_IFDIR && inode->i_dir.d_self == de)
			inode->i_dir.d_self = NULL;
		de->d_dead = true;
		d->d_nlive--;
		d->d_ndead++;
		compact(d);
		return inode;
	}
	return NULL;
}

void dir_set_inode(struct dentry *de, struct tfs_inode *inode)
{
	de->d_inode = inode;
	if (inode->i_type == S_IFDIR)
		inode->i_dir.d_self = de;
}

struct dentry *dir_next(const struct tfs_dir *d, uint64_t cookie)
{
	uint32_t lo = 0, hi = d->d_norder;

	/* first index whose cookie is > @cookie */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->d_order[mid]->d_cookie <= cookie)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < d->d_norder; lo++)
		if (!d->d_order[lo]->d_dead)
			return d->d_order[lo];
	return NULL;
}
