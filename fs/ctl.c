// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ctl.c -- the control channel (see ctl_proto.h for the protocol): every
 * user.tierfs.* attribute that is computed rather than stored -- layout,
 * extent lists (whole and paged), the effective policy, checksum
 * verification, the counters -- and the dispatch of the actions migrate
 * and drain, which ctl_action.c carries out.  attr.c routes these names
 * here (ctl.h); xattr.c keeps the stored attributes.
 *
 * All computed text is built in a struct strbuf and checked against
 * TIERFS_XATTR_VALUE_MAX before it is handed out: no fixed-size text
 * buffers, nothing truncated silently.
 *
 * Values from setxattr are untrusted bytes: every parser here checks
 * length and content and answers anything malformed with -EINVAL before
 * changing anything.
 *
 * Longer than 700 lines for a reason: one short builder per computed
 * attribute (layout, extents, effective, verify, stats, quota), all on
 * the same strbuf and escaping helpers, plus the per-user gate of the
 * long ones; the actions are ctl_action.c.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fs.h"
#include "stats.h"
#include "inode.h"
#include "dir.h"
#include "data.h"
#include "native.h"
#include "placement.h"
#include "ctl.h"
#include "ctl_proto.h"
#include "gate.h"
#include "kernel_req.h"
#include "owner.h"
#include "quota.h" /* issue 11: user.tierfs.quota */
#include "namespace.h"
#include "tier.h"
#include "size.h"
#include "macro.h"
#include "strbuf.h"
#include "banned.h"

_Static_assert(TIERFS_TIER_NAME_MAX == TIER_NAME_MAX,
	       "ctl_proto.h tells tierctl the longest tier name");


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

/*
 * Append @path escaped as ctl_proto.h says for FROM: "\\" for a
 * backslash, "\ooo" for a control byte; shortened to ".../last/parts"
 * when longer than TIERFS_EFFECTIVE_FROM_MAX escaped.
 */
static int add_from_path(struct strbuf *out, const char *path)
{
	struct strbuf esc = STRBUF_INIT;
	const char *tail;
	int r = 0;

	for (const unsigned char *p = (const unsigned char *)path;
	     *p && r == 0; p++) {
		if (*p == '\\')
			r = strbuf_adds(&esc, "\\\\");
		else if (*p < 0x20 || *p == 0x7f)
			r = strbuf_addf(&esc, "\\%03o", *p);
		else
			r = strbuf_addch(&esc, *p);
	}
	tail = esc.buf;
	if (r == 0 && esc.len > TIERFS_EFFECTIVE_FROM_MAX) {
		/* '/' never occurs inside an escape: cut before one */
		tail = strchr(esc.buf + esc.len - (TIERFS_EFFECTIVE_FROM_MAX - 3),
			      '/');
		r = strbuf_adds(out, "...");
		if (!tail) /* cannot be: names are at most 255 bytes */
			tail = esc.buf + esc.len;
	}
	if (r == 0)
		r = strbuf_adds(out, tail);
	strbuf_release(&esc);
	return r;
}

/* The directory (inode number @src) that sets a key of @inode's policy:
 * @inode itself or an ancestor of one of its names (placement.c says
 * which name governs).  Called with ns_lock held. */
static struct tfs_inode *policy_source(struct tierfs *fs,
				       struct tfs_inode *inode, uint64_t src)
{
	if (inode->i_type == S_IFDIR || inode->i_nparents == 0) {
		struct tfs_inode *d = inode->i_type == S_IFDIR ? inode : fs->root;

		while (d->i_ino != src && d != fs->root)
			d = d->i_dir.d_parent;
		return d;
	}
	for (uint32_t k = inode->i_nparents; k-- > 0;) {
		struct tfs_inode *d = inode_parent_at(inode, k);

		while (d->i_ino != src && d != fs->root)
			d = d->i_dir.d_parent;
		if (d->i_ino == src)
			return d;
	}
	return fs->root;
}

static int effective_text(struct tierfs *fs, struct tfs_inode *inode,
			  struct strbuf *out)
{
	struct policy p;
	int r = 0;

	policy_get(fs, inode, &p);
	pthread_rwlock_rdlock(&fs->ns_lock);
	for (int k = 0; k < _POLICY_KEY_MAX && r == 0; k++) {
		r = add_policy_value(out, &p, &fs->names, k);
		if (r == 0)
			r = strbuf_addch(out, ' ');
		if (r < 0)
			break;
		if (p.src[k] == inode->i_ino && inode->i_type != S_IFDIR) {
			r = strbuf_adds(out, "(this file)");
		} else if (p.src[k]) {
			char *path = dir_path(fs, policy_source(fs, inode,
								p.src[k]));

			r = path ? add_from_path(out, path) : -ENOMEM;
			free(path);
		} else {
			r = strbuf_adds(out, "default");
		}
		if (r == 0)
			r = strbuf_addch(out, '\n');
	}
	pthread_rwlock_unlock(&fs->ns_lock);
	return r;
}

/*
 * A small set of inode numbers (open addressing; never reused within a
 * mount, and 0 is none), so that a file with several names under a
 * directory counts once in its layout.
 */
struct iset {
	uint64_t *v;
	size_t cap, n;
};

/* Returns 1 if added, 0 if present, -ENOMEM. */
static int iset_add(struct iset *s, uint64_t ino)
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
	h = (size_t)(ino * 0x9e3779b97f4a7c15ull >> 20) & (s->cap - 1);
	while (s->v[h]) {
		if (s->v[h] == ino)
			return 0;
		h = (h + 1) & (s->cap - 1);
	}
	s->v[h] = ino;
	s->n++;
	return 1;
}

/*
 * Who asks for a layout: a directory's layout counts only the
 * directories below it that the caller may list and search (read and
 * execute permission by the owner, group and other bits, with the
 * caller's supplementary groups), with everything below them; root and
 * internal callers (no credentials) see everything.
 */
#define VIEWER_GROUPS_MAX 256

struct viewer {
	bool all;
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[VIEWER_GROUPS_MAX];
};

static void viewer_init(struct viewer *v, const struct ns_cred *cred)
{
	v->all = !cred || cred->uid == 0;
	v->ngroups = 0;
	if (v->all)
		return;
	v->uid = cred->uid;
	v->gid = cred->gid;
	if (cred->getgroups) {
		int n = cred->getgroups(cred->arg, VIEWER_GROUPS_MAX, v->groups);

		/* none readable: judged by the primary group alone */
		v->ngroups = n < 0 ? 0 : MIN(n, VIEWER_GROUPS_MAX);
	}
}

/* May @v list and search directory @d?  Takes @d's i_lock. */
static bool viewer_may_list(const struct viewer *v, struct tfs_inode *d)
{
	mode_t mode, bits;
	uid_t uid;
	gid_t gid;
	bool group;

	if (v->all)
		return true;
	pthread_mutex_lock(&d->i_lock);
	mode = d->i_mode;
	uid = d->i_uid;
	gid = d->i_gid;
	pthread_mutex_unlock(&d->i_lock);
	group = gid == v->gid;
	for (int i = 0; i < v->ngroups && !group; i++)
		group = v->groups[i] == gid;
	if (uid == v->uid)
		bits = mode >> 6;
	else if (group)
		bits = mode >> 3;
	else
		bits = mode;
	return (bits & 5) == 5;
}

/*
 * The walk of a directory layout holds ns_lock (shared) for at most
 * LAYOUT_BATCH entries at a time: it pins the files and directories of
 * a batch, drops ns_lock, sums the files and unpins them, then takes
 * ns_lock again for the next batch, resuming the directory at the cookie
 * where it stopped.  A directory waits on the stack, pinned, until it is
 * listed.  A create, rename or unlink therefore waits for one batch at
 * most; what changes during the walk is counted as a readdir would see
 * it (entries that lived throughout exactly once).  A file's bytes per
 * tier are its counters (data_layout()), read without its data lock: a
 * writer stuck in a hung tier holds that lock, and a walk that waited
 * for it would hold up every walk after it (issue 32).
 */
#define LAYOUT_BATCH 256

/*
 * One batch of a directory layout walk at a time (per daemon, which
 * serves one mount): ns_lock prefers readers, so walks in several
 * threads, each holding it shared most of the time, would leave a
 * create or unlink almost no moment to take it exclusive.  Taken for
 * the batch only, so that walks of several users interleave batch by
 * batch instead of queueing whole behind each other; dropped with a
 * yield after each, so that a waiting writer gets ns_lock.
 */
static pthread_mutex_t layout_walk_lock = PTHREAD_MUTEX_INITIALIZER;

struct walk_dir {
	struct tfs_inode *dir; /* pinned */
	uint64_t cookie;       /* resume after this entry */
};

struct walk {
	struct walk_dir *stack;
	size_t n, cap;
	struct tfs_inode *files[LAYOUT_BATCH]; /* pinned, for this batch */
	struct tfs_inode *dirs[LAYOUT_BATCH];  /* pinned, to push */
	size_t nfiles, ndirs;
};

static int walk_push(struct walk *w, struct tfs_inode *dir)
{
	if (w->n == w->cap) {
		size_t ncap = w->cap ? 2 * w->cap : 64;
		struct walk_dir *ns = realloc(w->stack, ncap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		w->stack = ns;
		w->cap = ncap;
	}
	w->stack[w->n++] = (struct walk_dir){ dir, 0 };
	return 0;
}

/*
 * Look at up to LAYOUT_BATCH entries of the directory on top of the
 * stack from its cookie on: pin its regular files into w->files and its
 * directories the viewer may list into w->dirs.  Returns true when the
 * directory is done.  Called with ns_lock shared.
 */
static bool walk_batch(struct tierfs *fs, struct walk *w,
		       const struct viewer *v)
{
	struct walk_dir *top = &w->stack[w->n - 1];
	struct tfs_dir *d = &top->dir->i_dir;
	struct dentry *de = dir_next(d, top->cookie);

	for (unsigned k = 0; de && k < LAYOUT_BATCH;
	     k++, de = dir_next(d, de->d_cookie)) {
		struct tfs_inode *c = de->d_inode;

		top->cookie = de->d_cookie;
		if (c->i_type == S_IFREG) {
			inode_pin(fs, c);
			w->files[w->nfiles++] = c;
		} else if (c->i_type == S_IFDIR && viewer_may_list(v, c)) {
			inode_pin(fs, c);
			w->dirs[w->ndirs++] = c;
		}
	}
	return de == NULL;
}

/* Sum the layouts of everything below @dir that @v may see (a hard-linked
 * file once).  Called with no lock held; see LAYOUT_BATCH. */
static int layout_walk(struct tierfs *fs, struct tfs_inode *dir,
		       const struct viewer *v, uint64_t bytes[TIER_MAX_CONF])
{
	struct walk w = { 0 };
	struct iset linked = { 0 };
	int r;

	inode_pin(fs, dir);
	r = walk_push(&w, dir);
	if (r < 0) {
		inode_unpin(fs, dir);
		return r;
	}
	while (w.n > 0) {
		struct tfs_inode *done = NULL;

		pthread_mutex_lock(&layout_walk_lock);
		pthread_rwlock_rdlock(&fs->ns_lock);
		if (walk_batch(fs, &w, v))
			done = w.stack[--w.n].dir;
		pthread_rwlock_unlock(&fs->ns_lock);
		pthread_mutex_unlock(&layout_walk_lock);
		sched_yield(); /* a writer that waited goes first */
		if (done)
			inode_unpin(fs, done);

		for (size_t i = 0; i < w.nfiles; i++) {
			struct tfs_inode *c = w.files[i];
			uint64_t b[TIER_MAX_CONF];
			int added = 1;

			if (r == 0 &&
			    __atomic_load_n(&c->i_nlink, __ATOMIC_RELAXED) > 1)
				added = iset_add(&linked, c->i_ino);
			if (added < 0)
				r = added;
			if (r == 0 && added) {
				data_layout(fs, c, b);
				for (unsigned t = 0; t < fs->ntiers; t++)
					bytes[t] += b[t];
			}
			inode_unpin(fs, c);
		}
		w.nfiles = 0;
		for (size_t i = 0; i < w.ndirs; i++) {
			if (r == 0)
				r = walk_push(&w, w.dirs[i]);
			if (r < 0)
				inode_unpin(fs, w.dirs[i]);
		}
		w.ndirs = 0;
		if (r < 0)
			break;
	}
	/* on failure: let go of what waits on the stack */
	while (w.n > 0)
		inode_unpin(fs, w.stack[--w.n].dir);
	free(w.stack);
	free(linked.v);
	return r;
}

int ctl_dir_layout(struct tierfs *fs, struct tfs_inode *dir,
		   uint64_t bytes[TIER_MAX_CONF])
{
	struct viewer all;

	viewer_init(&all, NULL);
	memset(bytes, 0, sizeof(uint64_t) * TIER_MAX_CONF);
	return layout_walk(fs, dir, &all, bytes);
}

/*
 * Re-read every extent on a tier with checksums and check them: the data
 * lock (shared) is taken for one extent at a time, and the extent is read
 * in chunks of at most TIERFS_MAX_IO into one buffer of that size,
 * whatever the extent size.
 */
static int verify_text(struct tierfs *fs, struct tfs_inode *inode,
		       struct strbuf *out)
{
	size_t chunk = MIN((size_t)fs->extent_size, (size_t)TIERFS_MAX_IO);
	uint64_t n = 0, checked = 0, errors = 0, idx = 0;
	char *buf = malloc(chunk);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		const struct extent *e;
		struct tier *t;

		/* a writer stuck in a stalled tier: give up (EIO) */
		if (data_lock(fs, inode, false) < 0) {
			free(buf);
			return -EIO;
		}
		e = extent_map_next(&inode->i_map, idx, &idx);
		if (!e) {
			pthread_rwlock_unlock(&inode->i_dlock);
			break;
		}
		n++;
		t = fs->tiers[e->tier];
		if (tier_has_csum(t)) {
			checked++;
			for (uint64_t off = 0; off < fs->extent_size; off += chunk) {
				if (tier_read(t, e->slot, off, buf, chunk) < 0) {
					errors++;
					break;
				}
			}
		}
		pthread_rwlock_unlock(&inode->i_dlock);
		if (idx == EXTENT_MAP_MAX_INDEX)
			break;
		idx++;
	}
	free(buf);
	return strbuf_addf(out, "extents=%llu checked=%llu errors=%llu",
			   (unsigned long long)n, (unsigned long long)checked,
			   (unsigned long long)errors);
}

/* "ram=8388608 nvme=0": bytes on each tier, every tier in order. */
static int layout_text(struct tierfs *fs, struct tfs_inode *inode,
		       const struct ns_cred *cred, struct strbuf *out)
{
	uint64_t bytes[TIER_MAX_CONF] = { 0 };
	int r = 0;

	if (inode->i_type == S_IFREG) {
		native_sync(fs, inode); /* a native file: what it holds now */
		data_layout(fs, inode, bytes);
	} else if (inode->i_type == S_IFDIR) {
		struct viewer *v = malloc(sizeof(*v));

		if (!v)
			return -ENOMEM;
		viewer_init(v, cred);
		/* the directory itself: listable, or no layout at all */
		r = viewer_may_list(v, inode) ? layout_walk(fs, inode, v, bytes)
					      : -EACCES;
		free(v);
	}
	for (unsigned t = 0; t < fs->ntiers && r == 0; t++)
		r = strbuf_addf(out, "%s%s=%llu", t ? " " : "",
				fs->tiers[t]->name,
				(unsigned long long)bytes[t]);
	return r;
}

/* Room a page keeps for its "next N\n" line (N up to 20 digits). */
#define PAGE_NEXT_ROOM (sizeof(TIERFS_PAGE_NEXT " \n") - 1 + 20)

/*
 * "START LENGTH TIER\n" for each run of consecutive extents on one tier,
 * in bytes, holes left out, from extent @idx on.  Whole lines only, and
 * @out no longer than @limit; at most @max_extents extents.
 * @ret_next: the extent index to go on from, UINT64_MAX when the list is
 * complete.  Takes i_dlock shared.
 * Return: 0 or -ENOMEM.
 */
static int extents_lines(struct tierfs *fs, struct tfs_inode *inode,
			 uint64_t idx, size_t limit, uint64_t max_extents,
			 struct strbuf *out, uint64_t *ret_next)
{
	uint64_t run_start = 0, run_next = 0, seen = 0, next = UINT64_MAX;
	const struct extent *e;
	int run_tier = -1;
	int r = 0;

	if (native_of(inode)) {
		/* its data ranges in its backing file, in bytes: the page's
		 * place is the extent index of the range that did not fit */
		uint64_t from = idx << fs->extent_shift, at;

		(void)max_extents;
		r = native_extents(fs, inode, from, limit, out, &at);
		*ret_next = at == UINT64_MAX ? UINT64_MAX
					     : at >> fs->extent_shift;
		return r;
	}
	pthread_rwlock_rdlock(&inode->i_dlock);
	for (e = extent_map_next(&inode->i_map, idx, &idx);;
	     e = idx == EXTENT_MAP_MAX_INDEX
			 ? NULL
			 : extent_map_next(&inode->i_map, idx + 1, &idx)) {
		bool full = seen == max_extents;

		if (run_tier >= 0 && (!e || full || idx != run_next ||
				      e->tier != run_tier)) {
			size_t before = out->len;

			r = strbuf_addf(out, "%llu %llu %s\n",
					(unsigned long long)(run_start << fs->extent_shift),
					(unsigned long long)((run_next - run_start) << fs->extent_shift),
					fs->tiers[run_tier]->name);
			if (r == 0 && out->len > limit) {
				strbuf_setlen(out, before);
				next = run_start; /* did not fit */
				break;
			}
			if (r < 0)
				break;
			run_tier = -1;
		}
		if (!e)
			break;
		if (full) {
			next = idx;
			break;
		}
		if (run_tier < 0) {
			run_tier = e->tier;
			run_start = idx;
		}
		run_next = idx + 1;
		seen++;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	*ret_next = next;
	return r;
}

/* The whole list: -E2BIG past TIERFS_XATTR_VALUE_MAX. */
static int extents_text(struct tierfs *fs, struct tfs_inode *inode,
			struct strbuf *out)
{
	uint64_t next;
	int r = extents_lines(fs, inode, 0, TIERFS_XATTR_VALUE_MAX, UINT64_MAX,
			      out, &next);

	return r == 0 && next != UINT64_MAX ? -E2BIG : r;
}

/* One page from byte @arg ("OFFSET" of user.tierfs.extents@OFFSET). */
static int extents_page(struct tierfs *fs, struct tfs_inode *inode,
			const char *arg, struct strbuf *out)
{
	uint64_t off = 0, next;
	int r;

	if (!*arg)
		return -EINVAL;
	for (const char *p = arg; *p; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (d > 9 || off > (UINT64_MAX - d) / 10)
			return -EINVAL;
		off = off * 10 + d;
	}
	r = extents_lines(fs, inode, off >> fs->extent_shift,
			  TIERFS_XATTR_VALUE_MAX - PAGE_NEXT_ROOM,
			  TIERFS_PAGE_EXTENTS, out, &next);
	if (r == 0 && next != UINT64_MAX)
		r = strbuf_addf(out, TIERFS_PAGE_NEXT " %llu\n",
				(unsigned long long)(next << fs->extent_shift));
	return r;
}

bool ctl_xattr_is_computed(const char *name)
{
	return !strcmp(name, TIERFS_XATTR_LAYOUT) ||
	       !strcmp(name, TIERFS_XATTR_STATS) ||
	       !strcmp(name, TIERFS_XATTR_EXTENTS) ||
	       !strncmp(name, TIERFS_XATTR_EXTENTS_AT,
			strlen(TIERFS_XATTR_EXTENTS_AT)) ||
	       !strcmp(name, TIERFS_XATTR_EFFECTIVE) ||
	       !strcmp(name, TIERFS_XATTR_VERIFY) ||
	       !strcmp(name, TIERFS_XATTR_QUOTA); /* quota.c (issue 11) */
}

/*
 * The requests that hold their thread long -- a directory's layout,
 * verify, migrate -- pass the fair-share gate first (gate.h, issue 32):
 * past a user's share they fail at once with EAGAIN rather than wait on
 * a thread.  Root's count too; internal callers (no @cred) pass.
 */
static int ctl_gate_enter(const struct ns_cred *cred, struct gate_ticket *tk)
{
	return gate_enter(cred ? owner_of_uid(cred->uid) : OWNER_NONE,
			  kernel_req_queue(), tk);
}

/* Copy a computed value out under the getxattr size rules. */
static ssize_t give(const char *val, size_t len, void *buf, size_t size)
{
	if (len > TIERFS_XATTR_VALUE_MAX)
		return -E2BIG;
	if (size && len > size)
		return -ERANGE;
	if (size)
		memcpy(buf, val, len);
	return (ssize_t)len;
}

ssize_t ctl_xattr_get(struct tierfs *fs, struct tfs_inode *inode,
		      const char *name, void *buf, size_t size)
{
	return ctl_xattr_get_as(fs, inode, name, buf, size, NULL);
}

ssize_t ctl_xattr_get_as(struct tierfs *fs, struct tfs_inode *inode,
			 const char *name, void *buf, size_t size,
			 const struct ns_cred *cred)
{
	const size_t at = strlen(TIERFS_XATTR_EXTENTS_AT);
	struct strbuf out = STRBUF_INIT;
	bool reg = inode->i_type == S_IFREG;
	bool dir = inode->i_type == S_IFDIR;
	struct gate_ticket tk;
	ssize_t r;

	if (!strcmp(name, TIERFS_XATTR_STATS)) {
		char *text;

		if (inode != fs->root)
			return -ENODATA;
		r = tierfs_stats_text(fs, &text);
		if (r < 0)
			return r;
		r = give(text, (size_t)r, buf, size);
		free(text);
		return r;
	}
	if (!strcmp(name, TIERFS_XATTR_LAYOUT) && dir) {
		r = ctl_gate_enter(cred, &tk);
		if (r == 0) {
			r = layout_text(fs, inode, cred, &out);
			gate_leave(&tk);
		}
	} else if (!strcmp(name, TIERFS_XATTR_LAYOUT))
		r = layout_text(fs, inode, cred, &out);
	else if (!strcmp(name, TIERFS_XATTR_EXTENTS))
		r = reg ? extents_text(fs, inode, &out) : -ENODATA;
	else if (!strncmp(name, TIERFS_XATTR_EXTENTS_AT, at))
		r = reg ? extents_page(fs, inode, name + at, &out) : -ENODATA;
	else if (!strcmp(name, TIERFS_XATTR_EFFECTIVE))
		r = reg || dir ? effective_text(fs, inode, &out) : -ENODATA;
	else if (!strcmp(name, TIERFS_XATTR_QUOTA)) /* quota.c (issue 11) */
		r = quota_usage_text(fs, inode, &out);
	else if (!strcmp(name, TIERFS_XATTR_VERIFY) && reg) {
		r = ctl_gate_enter(cred, &tk);
		if (r == 0) {
			r = verify_text(fs, inode, &out);
			gate_leave(&tk);
		}
	} else if (!strcmp(name, TIERFS_XATTR_VERIFY))
		r = -ENODATA;
	else
		r = -ENODATA;
	if (r == 0) {
		/* a size probe (size 0) computes the value as well: tierctl
		 * reads each in one call (tools/ctl.c), and
		 * mount.ctl_computed shows it */
		__atomic_add_fetch(&fs->ctl_computed, 1, __ATOMIC_RELAXED);
		r = give(out.buf, out.len, buf, size);
	}
	strbuf_release(&out);
	return r;
}

int ctl_xattr_set(struct tierfs *fs, struct tfs_inode *inode,
		  const char *name, const void *value, size_t size, uid_t uid)
{
	if (!strcmp(name, TIERFS_XATTR_CTL_MIGRATE)) {
		struct ns_cred cred = { .uid = uid };
		struct gate_ticket tk;
		int r = ctl_gate_enter(&cred, &tk);

		if (r == 0) {
			r = ctl_migrate(fs, inode, value, size);
			gate_leave(&tk);
		}
		return r;
	}
	if (!strcmp(name, TIERFS_XATTR_CTL_DRAIN)) {
		if (inode != fs->root)
			return -EINVAL;
		if (uid != 0)
			return -EPERM;
		return ctl_drain(fs, value, size);
	}
	if (!strcmp(name, TIERFS_XATTR_CTL_CLOCK) && fs->opt.test_clock) {
		if (inode != fs->root)
			return -EINVAL;
		if (uid != 0)
			return -EPERM;
		return ctl_clock(fs, value, size);
	}
	return -EINVAL;
}
