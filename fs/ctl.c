// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ctl.c -- the control channel's computed attributes and actions (see
 * ctl_proto.h for the protocol): the effective policy, layouts of whole
 * directory trees, checksum verification, and migrate/drain on demand.
 *
 * Values from setxattr are untrusted bytes: every parser here checks
 * length and content and answers anything malformed with -EINVAL before
 * changing anything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tierfs.h"
#include "migrate.h"
#include "tier.h"
#include "size.h"
#include "macro.h"
#include "strbuf.h"
#include "banned.h"

#define CTL_VALUE_MAX 256 /* longest action value we accept */
#define MIGRATE_RETRIES 16 /* per extent, when writers keep racing */

/* Hand a finished text over as the (ssize_t, char **) pair of the
 * ctl_*_text() functions; releases @sb either way. */
static ssize_t ctl_text_done(struct strbuf *sb, int r, char **ret_text)
{
	size_t len;
	char *text;

	if (r < 0) {
		strbuf_release(sb);
		return r;
	}
	text = strbuf_detach(sb, &len);
	if (!text)
		return -ENOMEM;
	*ret_text = text;
	return (ssize_t)len;
}

/*
 * Append "KEY=VALUE" of key @k (policy_format()'s text) to @out.
 * policy_format() writes into a buffer it is given and says -ERANGE when
 * that is too small, so offer it the free room of @out, twice as much
 * each time, until the value fits.  A key it cannot format at all shows
 * as "KEY=?".
 */
static int add_policy_value(struct strbuf *out, const struct policy *p,
			    const struct tier_names *names, enum policy_key k)
{
	size_t room = 256;

	for (;;) {
		int r = strbuf_grow(out, room);

		if (r < 0)
			return r;
		r = policy_format(p, names, k, out->buf + out->len,
				  strbuf_avail(out) + 1);
		if (r >= 0) {
			strbuf_setlen(out, out->len + (size_t)r);
			return 0;
		}
		strbuf_setlen(out, out->len); /* drop the partial text */
		if (r != -ERANGE || room >= ((size_t)1 << 20))
			return strbuf_addf(out, "%s=?", policy_key_name(k));
		room *= 2;
	}
}

ssize_t ctl_effective_text(struct tierfs *fs, struct tfs_inode *inode,
			   char **ret_text)
{
	struct strbuf out = STRBUF_INIT;
	struct policy p;
	int r = 0;

	policy_get(fs, inode, &p);
	pthread_rwlock_rdlock(&fs->ns_lock);
	for (int k = 0; k < _POLICY_KEY_MAX && r == 0; k++) {
		char *path = NULL;
		const char *from;

		if (p.src[k] == inode->i_ino && inode->i_type != S_IFDIR) {
			from = "(this file)";
		} else if (p.src[k]) {
			/* the source is this inode or one of its ancestors */
			struct tfs_inode *d = inode->i_type == S_IFDIR
						      ? inode
						      : (inode_parent(inode) ? inode_parent(inode)
									 : fs->root);

			while (d->i_ino != p.src[k] && d != fs->root)
				d = d->i_dir.d_parent;
			from = path = dir_path(fs, d);
			if (!path) {
				r = -ENOMEM;
				break;
			}
		} else {
			from = "default";
		}
		r = add_policy_value(&out, &p, &fs->names, k);
		if (r == 0)
			r = strbuf_addf(&out, " %s\n", from);
		free(path);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	return ctl_text_done(&out, r, ret_text);
}

/*
 * A small set of inode pointers (open addressing), so that a file with
 * several names under a directory counts once in its layout.
 */
struct iset {
	const struct tfs_inode **v;
	size_t cap, n;
};

/* Returns 1 if added, 0 if present, -ENOMEM. */
static int iset_add(struct iset *s, const struct tfs_inode *p)
{
	size_t h;

	if (2 * (s->n + 1) > s->cap) {
		struct iset bigger = { NULL, s->cap ? s->cap * 2 : 64, 0 };

		bigger.v = calloc(bigger.cap, sizeof(*bigger.v));
		if (!bigger.v)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->v[i])
				(void)iset_add(&bigger, s->v[i]);
		free(s->v);
		*s = bigger;
	}
	h = ((uintptr_t)p >> 4) & (s->cap - 1);
	while (s->v[h]) {
		if (s->v[h] == p)
			return 0;
		h = (h + 1) & (s->cap - 1);
	}
	s->v[h] = p;
	s->n++;
	return 1;
}

/* Sum the layouts of everything below @dir.  Called with ns_lock shared;
 * takes each file's data lock in turn.  A hard-linked file counts once.
 * Iterative with an explicit stack: trees may be deep. */
static int layout_rec(struct tierfs *fs, struct tfs_inode *dir,
		      uint64_t bytes[TIER_MAX_CONF])
{
	struct tfs_inode **stack = malloc(64 * sizeof(*stack));
	struct iset linked = { 0 };
	size_t n = 0, cap = 64;
	int r = 0;

	if (!stack)
		return -ENOMEM;
	stack[n++] = dir;
	while (n > 0 && r == 0) {
		struct tfs_inode *d = stack[--n];

		for (struct dentry *de = dir_next(&d->i_dir, 0); de;
		     de = dir_next(&d->i_dir, de->d_cookie)) {
			struct tfs_inode *c = de->d_inode;

			if (c->i_type == S_IFREG) {
				uint64_t b[TIER_MAX_CONF];

				if (__atomic_load_n(&c->i_nlink, __ATOMIC_RELAXED) > 1) {
					r = iset_add(&linked, c);
					if (r < 0)
						break;
					if (r == 0)
						continue; /* counted already */
					r = 0;
				}

				pthread_rwlock_rdlock(&c->i_dlock);
				data_layout(fs, c, b);
				pthread_rwlock_unlock(&c->i_dlock);
				for (unsigned t = 0; t < fs->ntiers; t++)
					bytes[t] += b[t];
			} else if (c->i_type == S_IFDIR) {
				if (n == cap) {
					struct tfs_inode **ns =
						realloc(stack, 2 * cap * sizeof(*ns));

					if (!ns) {
						r = -ENOMEM;
						break;
					}
					stack = ns;
					cap *= 2;
				}
				stack[n++] = c;
			}
		}
	}
	free(linked.v);
	free(stack);
	return r;
}

int ctl_dir_layout(struct tierfs *fs, struct tfs_inode *dir,
		   uint64_t bytes[TIER_MAX_CONF])
{
	int r;

	memset(bytes, 0, sizeof(uint64_t) * TIER_MAX_CONF);
	pthread_rwlock_rdlock(&fs->ns_lock);
	r = layout_rec(fs, dir, bytes);
	pthread_rwlock_unlock(&fs->ns_lock);
	return r;
}

ssize_t ctl_verify_text(struct tierfs *fs, struct tfs_inode *inode,
			char **ret_text)
{
	uint64_t n = 0, checked = 0, errors = 0, idx;
	struct strbuf out = STRBUF_INIT;
	const struct extent *e;
	int r;

	if (inode->i_type != S_IFREG)
		return -ENODATA;
	pthread_rwlock_rdlock(&inode->i_dlock);
	extent_for_each(&inode->i_map, e, idx) {
		struct tier *t = fs->tiers[e->tier];

		n++;
		if (!tier_has_csum(t))
			continue;
		checked++;
		if (tier_verify_slot(t, e->slot) < 0)
			errors++;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	r = strbuf_addf(&out, "extents=%llu checked=%llu errors=%llu",
			(unsigned long long)n, (unsigned long long)checked,
			(unsigned long long)errors);
	return ctl_text_done(&out, r, ret_text);
}

/* Copy an untrusted value into a C string; -EINVAL if it cannot be one. */
static int ctl_string(const char *value, size_t len, char *buf, size_t size)
{
	if (len && (value[len - 1] == '\n' || value[len - 1] == '\0'))
		len--;
	if (len >= size)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
			return -EINVAL;
	memcpy(buf, value, len);
	buf[len] = '\0';
	return 0;
}

static int tier_by_name(struct tierfs *fs, const char *name)
{
	for (unsigned i = 0; i < fs->ntiers; i++)
		if (!strcmp(fs->tiers[i]->name, name))
			return (int)i;
	return -1;
}

/* Move extent @idx of @inode to @dst, retrying while writers race. */
static int move_one(struct tierfs *fs, struct tfs_inode *inode, uint64_t idx,
		    unsigned dst)
{
	for (int tries = 0; tries < MIGRATE_RETRIES; tries++) {
		struct extent *e;
		unsigned src;
		uint32_t slot;
		int r;

		pthread_rwlock_rdlock(&inode->i_dlock);
		e = extent_map_lookup(&inode->i_map, idx);
		if (!e || e->tier == dst) {
			pthread_rwlock_unlock(&inode->i_dlock);
			return 0; /* gone or already there */
		}
		src = e->tier;
		slot = e->slot;
		pthread_rwlock_unlock(&inode->i_dlock);
		r = data_migrate_extent(fs, inode, idx, src, slot, dst);
		if (r != -EAGAIN) {
			if (r == 0) {
				struct tier_stats *s = dst < src
					? &fs->tiers[dst]->stats
					: &fs->tiers[src]->stats;

				__atomic_add_fetch(dst < src ? &s->promotions : &s->demotions,
						   1, __ATOMIC_RELAXED);
				__atomic_add_fetch(dst < src ? &s->promote_bytes : &s->demote_bytes,
						   fs->extent_size, __ATOMIC_RELAXED);
			}
			return r;
		}
	}
	return -EBUSY;
}

int ctl_migrate(struct tierfs *fs, struct tfs_inode *inode, const char *value,
		size_t len)
{
	char buf[CTL_VALUE_MAX], name[TIER_NAME_MAX + 2];
	unsigned long long start = 0, length = UINT64_MAX;
	uint64_t first, last, idx;
	int dst, n, used = 0;

	if (inode->i_type != S_IFREG)
		return -EINVAL;
	if (ctl_string(value, len, buf, sizeof(buf)) < 0)
		return -EINVAL;
	n = sscanf(buf, "%33s %llu %llu%n", name, &start, &length, &used);
	if (n == 1) {
		if (strlen(name) != strlen(buf))
			return -EINVAL;
	} else if (n != 3 || (size_t)used != strlen(buf) || length == 0) {
		return -EINVAL;
	} else {
		/* %llu takes a sign ("-1" would be 2^64-1): digits only */
		const char *p = buf + strlen(name);

		for (; *p; p++)
			if (*p != ' ' && (*p < '0' || *p > '9'))
				return -EINVAL;
	}
	dst = tier_by_name(fs, name);
	if (dst < 0)
		return -EINVAL;
	if (__atomic_load_n(&fs->draining, __ATOMIC_RELAXED) & (1u << dst))
		return -ENOSPC;
	first = start >> fs->extent_shift;
	last = length == UINT64_MAX || start + length < start
		       ? EXTENT_MAP_MAX_INDEX
		       : (start + length - 1) >> fs->extent_shift;

	for (idx = first; idx <= last; idx++) {
		const struct extent *e;
		int r;

		pthread_rwlock_rdlock(&inode->i_dlock);
		e = extent_map_next(&inode->i_map, idx, &idx);
		pthread_rwlock_unlock(&inode->i_dlock);
		if (!e || idx > last)
			break;
		r = move_one(fs, inode, idx, (unsigned)dst);
		if (r < 0)
			return r;
		if (idx == EXTENT_MAP_MAX_INDEX)
			break;
	}
	return 0;
}

/* Move every extent of @inode off tier @t: slower tiers first. */
static int drain_inode(struct tierfs *fs, struct tfs_inode *inode, unsigned t)
{
	uint64_t idx = 0;

	for (;;) {
		const struct extent *e;
		int r = -ENOSPC;

		pthread_rwlock_rdlock(&inode->i_dlock);
		do {
			e = extent_map_next(&inode->i_map, idx, &idx);
		} while (e && e->tier != t && idx++ < EXTENT_MAP_MAX_INDEX);
		pthread_rwlock_unlock(&inode->i_dlock);
		if (!e || e->tier != t)
			return 0;
		for (unsigned k = 1; k < fs->ntiers && r == -ENOSPC; k++) {
			/* t+1, t+2, ..., then t-1, t-2, ... */
			unsigned u = t + k < fs->ntiers ? t + k
							: fs->ntiers - 1 - k;

			if (u == t || u >= fs->ntiers ||
			    tier_free_slots(fs->tiers[u]) == 0)
				continue;
			r = move_one(fs, inode, idx, u);
		}
		if (r < 0)
			return r;
		if (idx == EXTENT_MAP_MAX_INDEX)
			return 0;
		idx++;
	}
}

int ctl_drain(struct tierfs *fs, const char *value, size_t len)
{
	char name[CTL_VALUE_MAX];
	struct tfs_inode **pinned;
	size_t n = 0;
	int t, r = 0;

	if (ctl_string(value, len, name, sizeof(name)) < 0)
		return -EINVAL;
	if (!strcmp(name, "") || !strcmp(name, "-")) {
		__atomic_store_n(&fs->draining, 0, __ATOMIC_RELAXED);
		return 0;
	}
	t = tier_by_name(fs, name);
	if (t < 0)
		return -EINVAL;
	if (fs->ntiers < 2)
		return -ENOSPC;
	__atomic_or_fetch(&fs->draining, 1u << t, __ATOMIC_RELAXED);
	if (fs->mig) {
		/*
		 * The migrator empties the tier in the background: this
		 * request must not hold the kernel's lock on the mount root
		 * for minutes.  Progress and a stuck drain show in the stats
		 * (used, draining=, drain_stuck=).
		 */
		migrator_kick(fs);
		return 0;
	}
	/* no migrator (--no-migrate): move everything now, in this request */

	/* pin every file, then move their extents off one by one */
	pthread_mutex_lock(&fs->itab_lock);
	for (struct tfs_inode *i = fs->inodes.i_next; i != &fs->inodes;
	     i = i->i_next)
		n++;
	pinned = malloc((n ? n : 1) * sizeof(*pinned));
	n = 0;
	for (struct tfs_inode *i = fs->inodes.i_next; pinned && i != &fs->inodes;
	     i = i->i_next) {
		if (i->i_type != S_IFREG)
			continue;
		i->i_nref++;
		pinned[n++] = i;
	}
	pthread_mutex_unlock(&fs->itab_lock);
	if (!pinned)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (r == 0)
			r = drain_inode(fs, pinned[i], (unsigned)t);
		inode_unpin(fs, pinned[i]);
	}
	free(pinned);
	return r;
}
