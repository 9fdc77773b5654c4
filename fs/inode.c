// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * inode.c -- inode creation, lifetime and attributes.
 *
 * Lock order (see fs.h for what each lock guards):
 *   fs->ns_lock -> inode->i_dlock -> inode->i_lock -> fs->itab_lock
 *   -> tier->alloc_lock
 *
 * Lifetime: an inode lives while it has a name (i_nlink), the kernel
 * knows it (i_nlookup) or an internal user pins it (i_nref).  All three
 * change under fs->itab_lock, and the thread that brings the last one to
 * zero unlinks the inode from the table there and frees it after
 * dropping the lock, so exactly one thread frees it and nobody can find
 * it in between.
 */
#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inode.h"
#include "fs.h"
#include "dir.h"
#include "never.h"
#include "banned.h"

struct timespec now_ts(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

/*
 * Bytes of a struct tfs_inode of type @type: the fixed part and as much
 * of the closing union as the type uses.  An empty file is the common
 * inode (a million of them is a normal scratch tree), and a directory's
 * 64-byte table would add 40 bytes to each; the remainder is rounded so
 * that the allocation keeps the struct's alignment.
 */
static size_t inode_size(mode_t type, unsigned ntiers)
{
	size_t head = offsetof(struct tfs_inode, i_map), part;

	switch (type) {
	case S_IFREG:
		/* the extent map, the native state, the bytes per tier */
		part = sizeof(struct extent_map) + sizeof(void *) +
		       ntiers * sizeof(uint64_t);
		break;
	case S_IFDIR:
		part = sizeof(struct tfs_dir);
		break;
	case S_IFLNK:
		part = sizeof(char *);
		break;
	default:
		part = sizeof(dev_t);
		break;
	}
	return (head + part + _Alignof(struct tfs_inode) - 1) &
	       ~(_Alignof(struct tfs_inode) - 1);
}

uint64_t inode_units(const struct tfs_inode *inode)
{
	if (inode->i_type == S_IFLNK && inode->i_link)
		return inode_link_units(strlen(inode->i_link));
	return 1;
}

int inode_charge(struct tierfs *fs, uint64_t n)
{
	uint64_t max = fs->opt.max_inodes;

	/*
	 * Take our place in the count first (the stats and statfs read it
	 * without itab_lock: atomic), so that racing creates cannot pass
	 * --max-inodes together; the loser gives it back.
	 */
	if (__atomic_add_fetch(&fs->ninodes, n, __ATOMIC_RELAXED) > max &&
	    max) {
		__atomic_sub_fetch(&fs->ninodes, n, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	return 0;
}

void inode_uncharge(struct tierfs *fs, uint64_t n)
{
	__atomic_sub_fetch(&fs->ninodes, n, __ATOMIC_RELAXED);
}

struct tfs_inode *inode_new(struct tierfs *fs, mode_t mode, uid_t uid,
			    gid_t gid, dev_t rdev)
{
	struct tfs_inode *inode;
	struct timespec ts;

	/* one unit; maybe_unhook() gives back inode_units() */
	if (inode_charge(fs, 1) < 0) {
		errno = ENOSPC;
		return NULL;
	}
	inode = calloc(1, inode_size(mode & S_IFMT, fs->ntiers));
	if (!inode) {
		inode_uncharge(fs, 1);
		errno = ENOMEM;
		return NULL;
	}
	inode->i_type = mode & S_IFMT;
	inode->i_mode = mode & ~S_IFMT;
	inode->i_uid = uid;
	inode->i_gid = gid;
	if (S_ISCHR(mode) || S_ISBLK(mode))
		inode->i_rdev = rdev;
	ts = now_ts();
	tfs_time_set(&inode->i_atime, ts);
	inode->i_mtime = inode->i_ctime = inode->i_atime;
	pthread_mutex_init(&inode->i_lock, NULL);
	pthread_rwlock_init(&inode->i_dlock, NULL);
	if (inode->i_type == S_IFREG)
		extent_map_init(&inode->i_map);

	pthread_mutex_lock(&fs->itab_lock);
	inode->i_ino = fs->next_ino++;
	inode->i_next = fs->inodes->i_next;
	inode->i_prev = fs->inodes;
	fs->inodes->i_next->i_prev = inode;
	fs->inodes->i_next = inode;
	pthread_mutex_unlock(&fs->itab_lock);
	return inode;
}

/*
 * After this many inodes freed, give the heap's free memory back to the
 * kernel (malloc_trim()): glibc keeps what a mass delete freed for later
 * allocations, and an rm -r of a million files would otherwise leave the
 * daemon's RSS at its peak.  A trim of a large heap takes milliseconds;
 * one per 64Ki frees is noise next to the deletes.
 */
#define INODE_TRIM_EVERY 65536

static uint64_t inodes_freed; /* relaxed atomic, mount-independent */

/* Free an inode that is already off the table.  No lock held. */
void inode_free(struct tierfs *fs, struct tfs_inode *inode)
{
	if (!inode)
		return;
	/*
	 * tfs_read() replies from the tier with the data lock held shared
	 * and unlocks after the reply, when the kernel may already have
	 * closed the file and forgotten the inode: wait for that unlock.
	 * Why a wait here and not a pin held by the reader (inode_pin()):
	 * a pin takes itab_lock, one mutex for the whole mount, twice per
	 * read, on the hottest path there is; the wait costs the reader
	 * nothing and the freer one lock round trip.  It is enough because
	 * a reader takes i_dlock before the kernel can see its reply, and
	 * nothing can find the inode any more once it is off the table (no
	 * new reader can start): the last unlock is the last use.
	 */
	pthread_rwlock_wrlock(&inode->i_dlock);
	pthread_rwlock_unlock(&inode->i_dlock);
	if (fs->evict)
		fs->evict(fs, inode); /* data, attributes, quota (fs.h) */
	switch (inode->i_type) {
	case S_IFDIR:
		dir_release(&inode->i_dir);
		break;
	case S_IFLNK:
		free(inode->i_link);
		break;
	}
	if (inode->i_nparents > 1)
		free(inode->i_parents);
	free(inode->i_effc);
	pthread_rwlock_destroy(&inode->i_dlock);
	pthread_mutex_destroy(&inode->i_lock);
	free(inode);
	if (__atomic_add_fetch(&inodes_freed, 1, __ATOMIC_RELAXED) %
		    INODE_TRIM_EVERY == 0)
		(void)malloc_trim(0);
}

/* Called with itab_lock held.  True when @inode was unhooked and the
 * caller must free it after dropping the lock. */
static bool maybe_unhook(struct tierfs *fs, struct tfs_inode *inode)
{
	if (inode->i_nlink || inode->i_nlookup || inode->i_nref)
		return false;
	inode->i_prev->i_next = inode->i_next;
	inode->i_next->i_prev = inode->i_prev;
	inode->i_prev = inode->i_next = NULL;
	/* the last name's units (a symlink's target with it) */
	inode_uncharge(fs, inode_units(inode));
	return true;
}

void inode_lookup_ref(struct tierfs *fs, struct tfs_inode *inode)
{
	pthread_mutex_lock(&fs->itab_lock);
	inode->i_nlookup++;
	pthread_mutex_unlock(&fs->itab_lock);
}

bool inode_adopt_native(struct tierfs *fs, struct tfs_inode *inode,
			struct native *n)
{
	bool ok;

	pthread_mutex_lock(&fs->itab_lock);
	ok = inode->i_type == S_IFREG && inode->i_nlookup == 1 &&
	     inode->i_nlink == 1 && !*inode_native_slot(inode);
	if (ok)
		__atomic_store_n(inode_native_slot(inode), n,
				 __ATOMIC_RELEASE);
	pthread_mutex_unlock(&fs->itab_lock);
	return ok;
}

void inode_forget(struct tierfs *fs, struct tfs_inode *inode, uint64_t n)
{
	bool dead;

	pthread_mutex_lock(&fs->itab_lock);
	/* a kernel forgetting more than it looked up is a bug; clamp */
	inode->i_nlookup -= n <= inode->i_nlookup ? n : inode->i_nlookup;
	dead = maybe_unhook(fs, inode);
	pthread_mutex_unlock(&fs->itab_lock);
	if (dead)
		inode_free(fs, inode);
}

/* Capacity of the array of @n >= 2 names: the power of two at or above. */
static uint32_t parents_cap(uint32_t n)
{
	return n <= 2 ? 2 : 1u << (32 - __builtin_clz(n - 1));
}

int inode_parent_add(struct tfs_inode *inode, struct tfs_inode *dir)
{
	uint32_t n = inode->i_nparents;
	struct tfs_inode **p;

	if (n == 0) {
		inode->i_parent = dir;
	} else if (n == 1) {
		p = malloc(2 * sizeof(*p));
		if (!p)
			return -ENOMEM;
		p[0] = inode->i_parent;
		p[1] = dir;
		inode->i_parents = p;
	} else {
		/* full exactly when @n is a power of two */
		if (parents_cap(n) == n) {
			p = realloc(inode->i_parents, 2 * n * sizeof(*p));
			if (!p)
				return -ENOMEM;
			inode->i_parents = p;
		}
		inode->i_parents[n] = dir;
	}
	inode->i_nparents = n + 1;
	return 0;
}

/* Remove the latest name in @dir; with @to, append it as the latest name
 * instead (same count: nothing to allocate).  false when none is in @dir. */
static bool parent_take(struct tfs_inode *inode, struct tfs_inode *dir,
			struct tfs_inode *to)
{
	uint32_t n = inode->i_nparents, i;
	struct tfs_inode **p;

	if (n == 1) {
		if (inode->i_parent != dir)
			return false;
		if (to)
			inode->i_parent = to;
		else
			inode->i_nparents = 0;
		return true;
	}
	p = inode->i_parents;
	for (i = n; i-- > 0;)
		if (p[i] == dir)
			break;
	if (i == UINT32_MAX)
		return false;
	/* order of the others is kept */
	memmove(&p[i], &p[i + 1], (n - i - 1) * sizeof(*p));
	if (to) {
		p[n - 1] = to;
	} else if (n == 2) {
		inode->i_parent = p[0];
		inode->i_nparents = 1;
		free(p);
	} else {
		inode->i_nparents = n - 1;
	}
	return true;
}

void inode_parent_del(struct tfs_inode *inode, struct tfs_inode *dir)
{
	(void)parent_take(inode, dir, NULL);
}

void inode_parent_move(struct tfs_inode *inode, struct tfs_inode *from,
		       struct tfs_inode *to)
{
	/* renamed: the name now in @to is the latest one */
	(void)parent_take(inode, from, to);
}

struct tfs_inode *inode_parent(const struct tfs_inode *inode)
{
	return inode->i_nparents ? inode_parent_at(inode, inode->i_nparents - 1)
				 : NULL;
}

void inode_pin(struct tierfs *fs, struct tfs_inode *inode)
{
	pthread_mutex_lock(&fs->itab_lock);
	inode->i_nref++;
	pthread_mutex_unlock(&fs->itab_lock);
}

bool inode_try_pin(struct tierfs *fs, struct tfs_inode *inode)
{
	bool hooked;

	pthread_mutex_lock(&fs->itab_lock);
	hooked = inode->i_next != NULL;
	if (hooked)
		inode->i_nref++;
	pthread_mutex_unlock(&fs->itab_lock);
	return hooked;
}

void inode_unpin(struct tierfs *fs, struct tfs_inode *inode)
{
	bool dead;

	pthread_mutex_lock(&fs->itab_lock);
	inode->i_nref--;
	dead = maybe_unhook(fs, inode);
	pthread_mutex_unlock(&fs->itab_lock);
	if (dead)
		inode_free(fs, inode);
}

void inode_link_inc(struct tierfs *fs, struct tfs_inode *inode)
{
	pthread_mutex_lock(&fs->itab_lock);
	inode->i_nlink++;
	pthread_mutex_unlock(&fs->itab_lock);
}

bool inode_is_orphan(struct tierfs *fs, struct tfs_inode *inode)
{
	bool r;

	pthread_mutex_lock(&fs->itab_lock);
	r = inode->i_nlink == 0 && inode->i_nlookup == 0;
	pthread_mutex_unlock(&fs->itab_lock);
	return r;
}

void inode_link_drop(struct tierfs *fs, struct tfs_inode *inode, uint32_t n)
{
	bool dead;

	pthread_mutex_lock(&fs->itab_lock);
	if (NEVER(inode->i_nlink < n))
		n = inode->i_nlink;
	inode->i_nlink -= n;
	dead = maybe_unhook(fs, inode);
	pthread_mutex_unlock(&fs->itab_lock);
	if (dead)
		inode_free(fs, inode);
}

/* Set timestamps to now: atime never here; @m mtime, @c ctime.
 * Called with i_lock held. */
void inode_touch(struct tfs_inode *inode, bool m, bool c)
{
	struct timespec ts = now_ts();

	if (m)
		tfs_time_set(&inode->i_mtime, ts);
	if (c)
		tfs_time_set(&inode->i_ctime, ts);
}

void inode_touch_atime(struct tfs_inode *inode)
{
	struct timespec now = now_ts();

	/* relatime: only if older than mtime/ctime, or a day old */
	pthread_mutex_lock(&inode->i_lock);
	if (inode->i_atime.sec <= inode->i_mtime.sec ||
	    inode->i_atime.sec <= inode->i_ctime.sec ||
	    now.tv_sec - inode->i_atime.sec >= 24 * 3600)
		tfs_time_set(&inode->i_atime, now);
	pthread_mutex_unlock(&inode->i_lock);
}

/* Called with i_lock held. */
void inode_fill_stat(struct tierfs *fs, struct tfs_inode *inode,
		     struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = inode->i_ino;
	st->st_mode = inode->i_type | inode->i_mode;
	st->st_nlink = __atomic_load_n(&inode->i_nlink, __ATOMIC_RELAXED);
	st->st_uid = inode->i_uid;
	st->st_gid = inode->i_gid;
	st->st_blksize = fs->extent_size;
	st->st_atim = tfs_time_get(&inode->i_atime);
	st->st_mtim = tfs_time_get(&inode->i_mtime);
	st->st_ctim = tfs_time_get(&inode->i_ctime);
	switch (inode->i_type) {
	case S_IFREG:
		st->st_size = (off_t)inode->i_size;
		/* benign race: a torn-free 64-bit load of a count (data.h) */
		st->st_blocks = (blkcnt_t)(__atomic_load_n(&inode->i_bytes,
							 __ATOMIC_RELAXED) / 512);
		if (fs->stat_native && *inode_native_slot(inode))
			fs->stat_native(inode, st);
		break;
	case S_IFDIR:
		/* like tmpfs: a nominal size that grows with the entries */
		st->st_size = 4096;
		break;
	case S_IFLNK:
		st->st_size = (off_t)strlen(inode->i_link);
		break;
	case S_IFCHR:
	case S_IFBLK:
		st->st_rdev = inode->i_rdev;
		break;
	}
}

char *dir_path(struct tierfs *fs, struct tfs_inode *dir)
{
	size_t len = 0, cap = 256;
	char *buf = malloc(cap), *out;

	if (!buf)
		return NULL;
	/* collect names leaf first, then reverse the components */
	for (struct tfs_inode *i = dir; i != fs->root;
	     i = i->i_dir.d_parent) {
		struct dentry *de = i->i_dir.d_self;
		const char *name = de ? de->d_name : "(deleted)";
		size_t n = strlen(name);

		if (len + n + 2 > cap) {
			char *nb = realloc(buf, cap * 2 + n);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap = cap * 2 + n;
		}
		/* stored reversed: "/" + reversed name */
		for (size_t k = 0; k < n; k++)
			buf[len++] = name[n - 1 - k];
		buf[len++] = '/';
		if (!de)
			break;
	}
	out = malloc(len + 2);
	if (!out) {
		free(buf);
		return NULL;
	}
	for (size_t k = 0; k < len; k++)
		out[k] = buf[len - 1 - k];
	if (len == 0)
		out[len++] = '/';
	out[len] = '\0';
	free(buf);
	return out;
}

char *inode_path(struct tierfs *fs, struct tfs_inode *inode)
{
	struct tfs_inode *dir;
	const char *name = NULL;
	char *dpath, *out = NULL;

	if (inode->i_type == S_IFDIR) {
		pthread_rwlock_rdlock(&fs->ns_lock);
		out = dir_path(fs, inode);
		pthread_rwlock_unlock(&fs->ns_lock);
		return out;
	}
	pthread_rwlock_rdlock(&fs->ns_lock);
	dir = inode_parent(inode);
	if (!dir)
		dir = fs->root;
	/* the latest name's directory; find the name itself (rare: messages) */
	for (struct dentry *de = dir_next(&dir->i_dir, 0); de;
	     de = dir_next(&dir->i_dir, de->d_cookie)) {
		if (de->d_inode == inode) {
			name = de->d_name;
			break;
		}
	}
	dpath = dir_path(fs, dir);
	if (dpath && asprintf(&out, "%s%s%s", dpath,
			      strcmp(dpath, "/") ? "/" : "",
			      name ? name : "(deleted)") < 0)
		out = NULL;
	pthread_rwlock_unlock(&fs->ns_lock);
	free(dpath);
	return out;
}
