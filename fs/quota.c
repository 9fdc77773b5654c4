// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * quota.c -- quotas per directory (see quota.h for the model, the
 * locking and the lifetime of a node): the value parser, the charge
 * arithmetic along a chain of nodes, the hooks of the data path, the
 * namespace rules, statfs, the stored and computed attributes, and the
 * figures of the job report (issue 19: the peak, and the I/O counters
 * summed over the nodes below).
 *
 * Longer than 700 lines for a reason: one model -- a tree of nodes
 * under quota_lock -- and every operation on it; the parser and the
 * chain arithmetic are pure and tested on their own (test_quota.c), the
 * rest needs the tree's invariants in one place.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "quota.h"
#include "fs.h"
#include "inode.h"
#include "dir.h"
#include "xattr.h"
#include "ctl_proto.h"
#include "tier.h"
#include "size.h"
#include "strbuf.h"
#include "macro.h"
#include "banned.h"

/*
 * One lock for every node of every mount in the process: charges take
 * it for a few additions per extent allocated (1 MiB by default), and
 * only for files under a quota.  Innermost: nothing is taken under it.
 */
static pthread_mutex_t quota_lock = PTHREAD_MUTEX_INITIALIZER;

/* Every node made by quota_xattr_check(), of every mount (quota_lock):
 * quota_io_sum() finds the nodes below one here. */
static struct quota *quota_all;

/* Longest value of QUOTA_XATTR accepted: nine "NAME:SIZE" entries. */
#define QUOTA_VALUE_MAX 1024

/* ---- pure parts ---- */

static void limits_none(struct quota_limits *l)
{
	l->total = QUOTA_NONE;
	l->inodes = QUOTA_NONE;
	for (unsigned t = 0; t < TIER_MAX_CONF; t++)
		l->tier[t] = QUOTA_NONE;
}

/* The size in @s (NUL-terminated); QUOTA_NONE is not a size. */
static int parse_size(const char *s, uint64_t *ret)
{
	uint64_t v;

	if (size_parse(s, &v) < 0 || v == QUOTA_NONE)
		return -EINVAL;
	*ret = v;
	return 0;
}

int quota_parse(const struct tier_names *names, const char *value,
		size_t len, struct quota_limits *ret)
{
	char buf[QUOTA_VALUE_MAX + 1], *save = NULL;
	struct quota_limits l;
	bool seen_total = false, seen_inodes = false;
	unsigned seen = 0;

	if (len && (value[len - 1] == '\n' || value[len - 1] == '\0'))
		len--;
	if (len == 0 || len > QUOTA_VALUE_MAX || memchr(value, '\0', len))
		return -EINVAL;
	memcpy(buf, value, len);
	buf[len] = '\0';
	limits_none(&l);
	if (!strchr(buf, ':')) {
		if (parse_size(buf, &l.total) < 0)
			return -EINVAL;
		*ret = l;
		return 0;
	}
	/* strtok_r would skip empty entries: "ram:1G,,total:2G" is bad */
	if (buf[0] == ',' || buf[len - 1] == ',' || strstr(buf, ",,"))
		return -EINVAL;
	for (char *w = strtok_r(buf, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(w, ':');
		uint64_t v;
		unsigned t;

		if (!colon || colon == w)
			return -EINVAL;
		*colon = '\0';
		if (parse_size(colon + 1, &v) < 0)
			return -EINVAL;
		if (!strcmp(w, "total")) {
			if (seen_total)
				return -EINVAL;
			seen_total = true;
			l.total = v;
			continue;
		}
		if (!strcmp(w, "inodes")) {
			/* a count: "1M" is 1048576, as --max-inodes reads it */
			if (seen_inodes)
				return -EINVAL;
			seen_inodes = true;
			l.inodes = v;
			continue;
		}
		for (t = 0; t < names->n; t++)
			if (!strcmp(names->name[t], w))
				break;
		if (t == names->n || (seen & (1u << t)))
			return -EINVAL;
		seen |= 1u << t;
		l.tier[t] = v;
	}
	*ret = l;
	return 0;
}

/* Would @used + @add pass @limit? */
static bool over(uint64_t used, uint64_t add, uint64_t limit)
{
	return limit != QUOTA_NONE && (used > limit || add > limit - used);
}

/* quota_chain_charge(), moving each node's peak or not. */
static int chain_charge(struct quota *q, unsigned t, uint64_t bytes,
			bool peak)
{
	for (struct quota *p = q; p; p = p->q_parent)
		if (p->q_set && over(p->q_used, bytes, p->q_lim.total))
			return -EDQUOT;
	for (struct quota *p = q; p; p = p->q_parent)
		if (p->q_set && over(p->q_tused[t], bytes, p->q_lim.tier[t]))
			return -ENOSPC;
	for (struct quota *p = q; p; p = p->q_parent) {
		p->q_used += bytes;
		p->q_tused[t] += bytes;
		if (peak)
			p->q_peak = MAX(p->q_peak, p->q_used);
	}
	return 0;
}

int quota_chain_charge(struct quota *q, unsigned t, uint64_t bytes)
{
	return chain_charge(q, t, bytes, true);
}

void quota_chain_uncharge(struct quota *q, unsigned t, uint64_t bytes)
{
	for (struct quota *p = q; p; p = p->q_parent) {
		p->q_used -= MIN(p->q_used, bytes);
		p->q_tused[t] -= MIN(p->q_tused[t], bytes);
	}
}

int quota_chain_move(struct quota *q, unsigned src, unsigned dst,
		     uint64_t bytes)
{
	if (src == dst)
		return 0;
	for (struct quota *p = q; p; p = p->q_parent)
		if (p->q_set && over(p->q_tused[dst], bytes, p->q_lim.tier[dst]))
			return -ENOSPC;
	for (struct quota *p = q; p; p = p->q_parent) {
		p->q_tused[src] -= MIN(p->q_tused[src], bytes);
		p->q_tused[dst] += bytes;
	}
	return 0;
}

int quota_chain_icharge(struct quota *q, uint64_t units)
{
	for (struct quota *p = q; p; p = p->q_parent)
		if (p->q_set && over(p->q_iused, units, p->q_lim.inodes))
			return -EDQUOT;
	for (struct quota *p = q; p; p = p->q_parent)
		p->q_iused += units;
	return 0;
}

void quota_chain_iuncharge(struct quota *q, uint64_t units)
{
	for (struct quota *p = q; p; p = p->q_parent)
		p->q_iused -= MIN(p->q_iused, units);
}

/* The I/O counters of @from added to @to (relaxed atomics). */
static void io_add(struct quota_io *to, const struct quota_io *from)
{
	static const size_t n = sizeof(*to) / sizeof(uint64_t);
	uint64_t *t = (uint64_t *)to;
	const uint64_t *f = (const uint64_t *)from;

	for (size_t i = 0; i < n; i++)
		__atomic_add_fetch(&t[i], __atomic_load_n(&f[i],
							  __ATOMIC_RELAXED),
				   __ATOMIC_RELAXED);
}

static void list_add(struct quota *q)
{
	q->q_prev = NULL;
	q->q_next = quota_all;
	if (quota_all)
		quota_all->q_prev = q;
	quota_all = q;
	q->q_listed = true;
}

static void list_del(struct quota *q)
{
	if (!q->q_listed)
		return;
	if (q->q_prev)
		q->q_prev->q_next = q->q_next;
	else
		quota_all = q->q_next;
	if (q->q_next)
		q->q_next->q_prev = q->q_prev;
	q->q_listed = false;
}

/* Drop one reference of @q, freeing every node that loses its last; a
 * freed node's I/O counts go to the node above, whose figures they are
 * part of.  quota_lock held. */
static void quota_put_locked(struct quota *q)
{
	while (q && --q->q_refs == 0) {
		struct quota *parent = q->q_parent;

		/* no file holds @q any more: nothing adds to it */
		if (parent)
			io_add(&parent->q_io, &q->q_io);
		list_del(q);
		free(q);
		q = parent;
	}
}

void quota_io_sum(struct quota *q, struct quota_io *ret)
{
	memset(ret, 0, sizeof(*ret));
	pthread_mutex_lock(&quota_lock);
	if (!q->q_listed)
		io_add(ret, &q->q_io); /* a private node (the unit suite) */
	for (struct quota *n = quota_all; n; n = n->q_next)
		for (struct quota *p = n; p; p = p->q_parent)
			if (p == q) {
				io_add(ret, &n->q_io);
				break;
			}
	pthread_mutex_unlock(&quota_lock);
}

/* ---- data path ---- */

/*
 * @inode's own bytes on tier @t (inode_tier_bytes()) change by @bytes,
 * up (@up) or down: every charge of a file moves them, whether a quota
 * is set above it or not, so that a quota set later takes exactly what
 * the file holds (adopt_file()), and a layout reads them without the
 * file's data lock.  quota_lock held: the one writer; relaxed atomic
 * stores for the lock-free readers.
 */
static void file_bytes(struct tfs_inode *inode, unsigned t, uint64_t bytes,
		       bool up)
{
	uint64_t *tb;
	uint64_t v;

	if (inode->i_type != S_IFREG)
		return;
	tb = inode_tier_bytes(inode);
	v = __atomic_load_n(&tb[t], __ATOMIC_RELAXED);
	v = up ? v + bytes : v - MIN(v, bytes);
	__atomic_store_n(&tb[t], v, __ATOMIC_RELAXED);
}

int quota_charge(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		 uint64_t bytes)
{
	int r = 0;

	if (bytes == 0)
		return 0;
	pthread_mutex_lock(&quota_lock);
	if (inode->i_quota)
		r = quota_chain_charge(inode->i_quota, t, bytes);
	if (r == 0)
		file_bytes(inode, t, bytes, true);
	pthread_mutex_unlock(&quota_lock);
	return r;
}

int quota_charge_relocating(struct tierfs *fs, struct tfs_inode *inode,
			    unsigned t, uint64_t bytes)
{
	int r = 0;

	if (bytes == 0)
		return 0;
	pthread_mutex_lock(&quota_lock);
	if (inode->i_quota)
		r = chain_charge(inode->i_quota, t, bytes, false);
	if (r == 0)
		file_bytes(inode, t, bytes, true);
	pthread_mutex_unlock(&quota_lock);
	return r;
}

void quota_account(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		   uint64_t bytes, bool up)
{
	struct quota *q;

	if (bytes == 0)
		return;
	pthread_mutex_lock(&quota_lock);
	q = inode->i_quota;
	for (struct quota *p = q; p && up; p = p->q_parent) {
		p->q_used += bytes;
		p->q_tused[t] += bytes;
		p->q_peak = MAX(p->q_peak, p->q_used);
	}
	if (q && !up)
		quota_chain_uncharge(q, t, bytes);
	file_bytes(inode, t, bytes, up);
	pthread_mutex_unlock(&quota_lock);
}

bool quota_full(struct tierfs *fs, struct tfs_inode *inode)
{
	bool full = false;

	if (!inode_quota(inode))
		return false;
	pthread_mutex_lock(&quota_lock);
	for (struct quota *p = inode->i_quota; p && !full; p = p->q_parent)
		full = p->q_set && p->q_lim.total != QUOTA_NONE &&
		       p->q_used >= p->q_lim.total;
	pthread_mutex_unlock(&quota_lock);
	return full;
}

void quota_settle(struct tierfs *fs, struct tfs_inode *inode)
{
	if (!inode_quota(inode))
		return;
	pthread_mutex_lock(&quota_lock);
	for (struct quota *p = inode->i_quota; p; p = p->q_parent)
		p->q_peak = MAX(p->q_peak, p->q_used);
	pthread_mutex_unlock(&quota_lock);
}

void quota_uncharge(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		    uint64_t bytes)
{
	if (bytes == 0)
		return;
	pthread_mutex_lock(&quota_lock);
	if (inode->i_quota)
		quota_chain_uncharge(inode->i_quota, t, bytes);
	file_bytes(inode, t, bytes, false);
	pthread_mutex_unlock(&quota_lock);
}

int quota_move(struct tierfs *fs, struct tfs_inode *inode, unsigned src,
	       unsigned dst, uint64_t bytes)
{
	int r = 0;

	if (bytes == 0 || src == dst)
		return 0;
	pthread_mutex_lock(&quota_lock);
	if (inode->i_quota)
		r = quota_chain_move(inode->i_quota, src, dst, bytes);
	if (r == 0) {
		file_bytes(inode, src, bytes, false);
		file_bytes(inode, dst, bytes, true);
	}
	pthread_mutex_unlock(&quota_lock);
	return r;
}

bool quota_tier_room(struct tierfs *fs, struct tfs_inode *inode, unsigned t,
		     uint64_t bytes)
{
	bool ok = true;

	if (!inode_quota(inode))
		return true;
	pthread_mutex_lock(&quota_lock);
	for (struct quota *p = inode->i_quota; p && ok; p = p->q_parent)
		if (p->q_set &&
		    over(p->q_tused[t], bytes, p->q_lim.tier[t]))
			ok = false;
	pthread_mutex_unlock(&quota_lock);
	return ok;
}

/* ---- namespace ---- */

/* The nearest node at or above directory @d.  ns_lock held. */
static struct quota *dir_quota(struct tierfs *fs, struct tfs_inode *d)
{
	for (;;) {
		if (d->i_quota)
			return d->i_quota;
		if (d == fs->root)
			return NULL;
		d = d->i_dir.d_parent;
	}
}

void quota_inherit(struct tierfs *fs, struct tfs_inode *inode,
		   struct tfs_inode *dir)
{
	struct quota *q;

	if (inode->i_type != S_IFREG)
		return;
	q = dir_quota(fs, dir);
	if (!q)
		return;
	pthread_mutex_lock(&quota_lock);
	q->q_refs++;
	pthread_mutex_unlock(&quota_lock);
	inode->i_quota = q;
}

bool quota_same_tree(struct tierfs *fs, struct tfs_inode *a,
		     struct tfs_inode *b)
{
	return a == b || dir_quota(fs, a) == dir_quota(fs, b);
}

bool quota_may_link(struct tierfs *fs, struct tfs_inode *inode,
		    struct tfs_inode *dir)
{
	struct tfs_inode *at;

	if (inode->i_type == S_IFREG)
		return inode->i_quota == dir_quota(fs, dir);
	/* every name of @inode is in one tree: that of its latest */
	at = inode_parent(inode);
	return !at || dir_quota(fs, at) == dir_quota(fs, dir);
}

int quota_name_add(struct tierfs *fs, struct tfs_inode *dir, uint64_t units)
{
	struct quota *q = dir_quota(fs, dir);
	int r;

	if (!q || units == 0)
		return 0;
	pthread_mutex_lock(&quota_lock);
	r = quota_chain_icharge(q, units);
	pthread_mutex_unlock(&quota_lock);
	return r;
}

void quota_name_del(struct tierfs *fs, struct tfs_inode *dir, uint64_t units)
{
	struct quota *q = dir_quota(fs, dir);

	if (!q || units == 0)
		return;
	pthread_mutex_lock(&quota_lock);
	quota_chain_iuncharge(q, units);
	pthread_mutex_unlock(&quota_lock);
}

void quota_statfs(struct tierfs *fs, struct tfs_inode *inode,
		  const uint64_t tfree[TIER_MAX_CONF], uint64_t *total,
		  uint64_t *avail, uint64_t *files, uint64_t *ffree)
{
	uint64_t troom[TIER_MAX_CONF], room = QUOTA_NONE, size = QUOTA_NONE;
	uint64_t iroom = QUOTA_NONE, isize = QUOTA_NONE;
	uint64_t sum = 0;
	struct quota *q;

	pthread_rwlock_rdlock(&fs->ns_lock);
	q = inode->i_type == S_IFDIR ? dir_quota(fs, inode) : inode->i_quota;
	if (!q) {
		pthread_rwlock_unlock(&fs->ns_lock);
		return;
	}
	for (unsigned t = 0; t < TIER_MAX_CONF; t++)
		troom[t] = QUOTA_NONE;
	pthread_mutex_lock(&quota_lock);
	for (struct quota *p = q; p; p = p->q_parent) {
		if (!p->q_set)
			continue;
		if (p->q_lim.total != QUOTA_NONE) {
			if (size == QUOTA_NONE)
				size = p->q_lim.total; /* the innermost */
			room = MIN(room, p->q_lim.total -
					      MIN(p->q_used, p->q_lim.total));
		}
		if (p->q_lim.inodes != QUOTA_NONE) {
			if (isize == QUOTA_NONE)
				isize = p->q_lim.inodes; /* the innermost */
			iroom = MIN(iroom, p->q_lim.inodes -
						   MIN(p->q_iused,
						       p->q_lim.inodes));
		}
		for (unsigned t = 0; t < fs->ntiers; t++)
			if (p->q_lim.tier[t] != QUOTA_NONE)
				troom[t] = MIN(troom[t],
					       p->q_lim.tier[t] -
						       MIN(p->q_tused[t],
							   p->q_lim.tier[t]));
	}
	pthread_mutex_unlock(&quota_lock);
	pthread_rwlock_unlock(&fs->ns_lock);
	for (unsigned t = 0; t < fs->ntiers; t++)
		sum += MIN(tfree[t], troom[t]);
	*avail = MIN(sum, room);
	if (size != QUOTA_NONE)
		*total = size;
	if (isize != QUOTA_NONE) {
		*files = isize;
		*ffree = MIN(*ffree, iroom);
	}
}

void quota_release(struct tfs_inode *inode)
{
	if (!inode->i_quota)
		return;
	pthread_mutex_lock(&quota_lock);
	quota_put_locked(inode->i_quota);
	pthread_mutex_unlock(&quota_lock);
	inode->i_quota = NULL;
}

/* ---- the attributes ---- */

/*
 * File @f below the new node @nq: if it belonged to @above, it moves to
 * @nq, which takes its usage: exactly its own bytes per tier, which
 * every charge of @f moves under quota_lock (file_bytes()), so that no
 * charge falls between what @nq takes and the switch.  ns_lock
 * exclusive; takes quota_lock, never @f's data lock, which a writer
 * stuck in a hung tier may hold (issue 32: the quota set waited, with
 * ns_lock held, and every namespace request of every user with it).
 */
static void adopt_file(struct tierfs *fs, struct tfs_inode *f,
		       struct quota *nq, struct quota *above)
{
	const uint64_t *tb = inode_tier_bytes(f);

	pthread_mutex_lock(&quota_lock);
	if (f->i_quota != above) {
		/* in a node below already, or counted (a second name) */
		pthread_mutex_unlock(&quota_lock);
		return;
	}
	for (unsigned t = 0; t < fs->ntiers; t++) {
		uint64_t n = __atomic_load_n(&tb[t], __ATOMIC_RELAXED);

		nq->q_used += n;
		nq->q_tused[t] += n;
	}
	nq->q_peak = MAX(nq->q_peak, nq->q_used);
	nq->q_refs++;
	if (above)
		quota_put_locked(above); /* its directory holds it too */
	__atomic_store_n(&f->i_quota, nq, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&quota_lock);
}

/* Node @m of a directory below the new node @nq: if it hung from
 * @above, it hangs from @nq now.  ns_lock exclusive. */
static void adopt_node(struct tierfs *fs, struct quota *m, struct quota *nq,
		       struct quota *above)
{
	pthread_mutex_lock(&quota_lock);
	if (m->q_parent == above) {
		nq->q_used += m->q_used;
		nq->q_iused += m->q_iused;
		for (unsigned t = 0; t < fs->ntiers; t++)
			nq->q_tused[t] += m->q_tused[t];
		nq->q_peak = MAX(nq->q_peak, nq->q_used);
		m->q_parent = nq;
		nq->q_refs++;
		if (above)
			quota_put_locked(above);
	}
	pthread_mutex_unlock(&quota_lock);
}

/*
 * Every file and node below @top that belonged to @above moves under
 * @nq, and @nq counts the inode units of every name below @top (those
 * of a nested node's directory and, through the node, below it).
 * Depth first through each directory's ".." and its name in the
 * parent (d_self's cookie), so that no stack is allocated and a tree
 * of any depth is walked.  Directories with a node of their own are
 * not entered: what is below them hangs from that node.  ns_lock
 * exclusive.
 */
static void adopt_subtree(struct tierfs *fs, struct tfs_inode *top,
			  struct quota *nq, struct quota *above)
{
	struct tfs_inode *d = top;
	uint64_t cookie = 0, units = 0;

	for (;;) {
		struct dentry *de = dir_next(&d->i_dir, cookie);
		struct tfs_inode *c;

		if (!de) {
			if (d == top || !d->i_dir.d_self)
				break;
			cookie = d->i_dir.d_self->d_cookie;
			d = d->i_dir.d_parent;
			continue;
		}
		cookie = de->d_cookie;
		c = de->d_inode;
		units += inode_units(c);
		if (c->i_type == S_IFREG) {
			adopt_file(fs, c, nq, above);
		} else if (c->i_type == S_IFDIR) {
			if (c->i_quota) {
				adopt_node(fs, c->i_quota, nq, above);
			} else {
				d = c;
				cookie = 0;
			}
		}
	}
	/* no name is made or removed meanwhile: ns_lock is exclusive */
	pthread_mutex_lock(&quota_lock);
	nq->q_iused += units;
	pthread_mutex_unlock(&quota_lock);
}

int quota_xattr_check(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name, const void *value, size_t size,
		      uid_t uid)
{
	struct quota_limits l;
	struct quota *nq, *above;

	if (strcmp(name, QUOTA_XATTR))
		return 0;
	if (uid != 0)
		return -EPERM;
	if (inode->i_type != S_IFDIR)
		return -ENOTDIR;
	if (quota_parse(&fs->names, value, size, &l) < 0)
		return -EINVAL;
	nq = calloc(1, sizeof(*nq));
	if (!nq)
		return -ENOMEM;
	nq->q_refs = 1; /* the directory's */
	limits_none(&nq->q_lim);
	pthread_rwlock_wrlock(&fs->ns_lock);
	if (inode->i_quota) {
		/* it has one: the limits change in quota_xattr_sync() */
		pthread_rwlock_unlock(&fs->ns_lock);
		free(nq);
		return 0;
	}
	above = inode == fs->root ? NULL : dir_quota(fs, inode->i_dir.d_parent);
	pthread_mutex_lock(&quota_lock);
	nq->q_parent = above;
	if (above)
		above->q_refs++;
	list_add(nq);
	pthread_mutex_unlock(&quota_lock);
	adopt_subtree(fs, inode, nq, above);
	inode->i_quota = nq;
	pthread_rwlock_unlock(&fs->ns_lock);
	return 0;
}

void quota_xattr_sync(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name)
{
	char buf[QUOTA_VALUE_MAX + 1];
	struct quota_limits l;
	bool set = false;
	ssize_t n;

	if (strcmp(name, QUOTA_XATTR))
		return;
	/* exclusive: two syncs must not apply their values out of order */
	pthread_rwlock_wrlock(&fs->ns_lock);
	n = xattr_get(fs, inode, QUOTA_XATTR, buf, sizeof(buf));
	if (n >= 0 && quota_parse(&fs->names, buf, (size_t)n, &l) == 0)
		set = true;
	if (inode->i_quota) {
		pthread_mutex_lock(&quota_lock);
		inode->i_quota->q_set = set;
		if (set)
			inode->i_quota->q_lim = l;
		pthread_mutex_unlock(&quota_lock);
	}
	pthread_rwlock_unlock(&fs->ns_lock);
}

/* "USED/LIMIT" ("-" for no limit) */
static int add_use(struct strbuf *out, const char *key, uint64_t used,
		   uint64_t limit)
{
	if (limit == QUOTA_NONE)
		return strbuf_addf(out, "%s=%llu/- ", key,
				   (unsigned long long)used);
	return strbuf_addf(out, "%s=%llu/%llu ", key, (unsigned long long)used,
			   (unsigned long long)limit);
}

/* @path escaped as ctl_proto.h says for paths: "\\", "\ooo". */
static int add_path(struct strbuf *out, const char *path)
{
	int r = 0;

	for (const unsigned char *p = (const unsigned char *)path; *p && !r;
	     p++) {
		if (*p == '\\')
			r = strbuf_adds(out, "\\\\");
		else if (*p < 0x20 || *p == 0x7f)
			r = strbuf_addf(out, "\\%03o", *p);
		else
			r = strbuf_addch(out, *p);
	}
	return r;
}

/* " KEY=N" for each figure of the job report (ctl_proto.h) */
static int add_report(struct strbuf *out, uint64_t peak,
		      const struct quota_io *io)
{
	return strbuf_addf(out,
			   TIERFS_QUOTA_PEAK "=%llu " TIERFS_QUOTA_WRITE "=%llu "
			   TIERFS_QUOTA_SPILL "=%llu " TIERFS_QUOTA_READ "=%llu "
			   TIERFS_QUOTA_READ_BELOW "=%llu "
			   TIERFS_QUOTA_WB_ERRORS "=%llu "
			   TIERFS_QUOTA_WB_LOST "=%llu ",
			   (unsigned long long)peak,
			   (unsigned long long)io->write_bytes,
			   (unsigned long long)io->spill_bytes,
			   (unsigned long long)io->read_bytes,
			   (unsigned long long)io->read_below_bytes,
			   (unsigned long long)io->wb_errors,
			   (unsigned long long)io->wb_lost_bytes);
}

int quota_usage_text(struct tierfs *fs, struct tfs_inode *inode,
		     struct strbuf *out)
{
	struct tfs_inode *d;
	int r = 0;

	pthread_rwlock_rdlock(&fs->ns_lock);
	d = inode;
	if (inode->i_type != S_IFDIR)
		d = inode_parent(inode) ? inode_parent(inode) : fs->root;
	for (;;) {
		uint64_t tused[TIER_MAX_CONF], used = 0, iused = 0, peak = 0;
		struct quota_limits lim = { 0 };
		struct quota_io io;
		bool set = false;
		char *path;

		/* field by field: q_io is not the lock's (quota_io_sum) */
		if (d->i_quota) {
			pthread_mutex_lock(&quota_lock);
			set = d->i_quota->q_set;
			lim = d->i_quota->q_lim;
			used = d->i_quota->q_used;
			iused = d->i_quota->q_iused;
			peak = d->i_quota->q_peak;
			memcpy(tused, d->i_quota->q_tused, sizeof(tused));
			pthread_mutex_unlock(&quota_lock);
		}
		if (set) {
			quota_io_sum(d->i_quota, &io);
			r = add_use(out, "total", used, lim.total);
			for (unsigned t = 0; t < fs->ntiers && !r; t++)
				r = add_use(out, fs->tiers[t]->name, tused[t],
					    lim.tier[t]);
			if (!r)
				r = add_use(out, "inodes", iused, lim.inodes);
			if (!r)
				r = add_report(out, peak, &io);
			path = r ? NULL : dir_path(fs, d);
			if (!r)
				r = path ? strbuf_adds(out, TIERFS_QUOTA_DIR "=") : -ENOMEM;
			if (!r)
				r = add_path(out, path);
			if (!r)
				r = strbuf_addch(out, '\n');
			free(path);
		}
		if (r || d == fs->root || !d->i_dir.d_self)
			break;
		d = d->i_dir.d_parent;
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	if (r == 0 && out->len == 0)
		r = -ENODATA;
	return r;
}

char *quota_full_dir(struct tierfs *fs, struct tfs_inode *inode)
{
	struct tfs_inode *d, *best = NULL;
	uint64_t least = UINT64_MAX;
	char *path = NULL;

	if (inode->i_type != S_IFREG)
		return NULL;
	pthread_rwlock_rdlock(&fs->ns_lock);
	/*
	 * The directories from the file's up (a node's directory is where it
	 * is set, so walk directories, not nodes): the one whose total has
	 * the least room left is the quota that refused the write -- a write
	 * fails when it needs more than that room, which may be more than
	 * nothing (a 1M writeback with 256K left).
	 */
	for (d = inode_parent(inode) ? inode_parent(inode) : fs->root;;
	     d = d->i_dir.d_parent) {
		struct quota *q = d->i_quota;

		if (q) {
			pthread_mutex_lock(&quota_lock);
			if (q->q_set && q->q_lim.total != QUOTA_NONE) {
				uint64_t room = q->q_lim.total -
						MIN(q->q_used, q->q_lim.total);

				if (room < least) {
					least = room;
					best = d;
				}
			}
			pthread_mutex_unlock(&quota_lock);
		}
		if (d == fs->root)
			break;
	}
	if (best)
		path = dir_path(fs, best);
	pthread_rwlock_unlock(&fs->ns_lock);
	return path;
}
