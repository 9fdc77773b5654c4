// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * native.c -- native files (native.h): a file's bytes in one backing
 * file of one tier, which the kernel reads and writes itself.
 *
 * Longer than 700 lines for a reason: a native file's life -- made,
 * opened, accounted, read and written by the daemon, moved, demoted,
 * freed -- turns on one struct under one set of lock rules (native.h)
 * and one list, and reads best in one place; the copies that keep holes
 * are fs/util/fdcopy.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "native.h"
#include "fs.h"
#include "inode.h"
#include "fdcopy.h"
#include "kernel.h"
#include "log.h"
#include "policy.h"
#include "quota.h"
#include "strbuf.h"
#include "tier.h"
#include "macro.h"
#include "never.h"
#include "banned.h"

static struct native_stats nstats; /* relaxed atomics */

/*
 * Every native file, newest first, for native_demote().  nlist_lock
 * guards the links only; it comes before itab_lock (inode_try_pin()),
 * and native_free() takes it before the inode's memory goes, so an
 * inode found on the list under the lock is still there to try to pin.
 */
static pthread_mutex_t nlist_lock = PTHREAD_MUTEX_INITIALIZER;
/* Opens of native files so far, numbering them (struct native's
 * last_open: which was opened longest ago).  Relaxed atomic. */
static uint64_t open_seq;
static struct native *nlist;

#define STAT_ADD(f, n) __atomic_add_fetch(&nstats.f, (n), __ATOMIC_RELAXED)
#define STAT_SUB(f, n) __atomic_sub_fetch(&nstats.f, (n), __ATOMIC_RELAXED)

struct native *native_of(const struct tfs_inode *inode)
{
	if (inode->i_type != S_IFREG)
		return NULL;
	return __atomic_load_n(inode_native_slot((struct tfs_inode *)inode),
			       __ATOMIC_ACQUIRE);
}

/*
 * Each native file holds a descriptor of the daemon for its life, so
 * their number is bounded by RLIMIT_NOFILE: the soft limit is raised to
 * the hard one at the first native file, and NATIVE_FD_SPARE descriptors
 * (or half of a smaller limit) are left for everything else -- tiers,
 * /dev/fuse, the ring threads, tierctl's requests.  Past the bound new
 * files are tiered.
 */
#define NATIVE_FD_SPARE 4096

static pthread_once_t fd_once = PTHREAD_ONCE_INIT;
static uint64_t fd_max_files; /* written once, under fd_once */

static void fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return; /* 0: no native files */
	if (rl.rlim_cur < rl.rlim_max) {
		struct rlimit up = { rl.rlim_max, rl.rlim_max };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			rl = up;
	}
	fd_max_files = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX
		       : rl.rlim_cur > 2 * NATIVE_FD_SPARE
			       ? rl.rlim_cur - NATIVE_FD_SPARE
			       : rl.rlim_cur / 2;
	log_debug("native files: at most %llu at once (RLIMIT_NOFILE %llu)",
		  (unsigned long long)fd_max_files,
		  (unsigned long long)rl.rlim_cur);
}

static uint64_t native_max_files(void)
{
	pthread_once(&fd_once, fd_budget);
	return fd_max_files;
}

/* Room enough on @t for a new native file (native.h)? */
static bool tier_has_room(struct tier *t)
{
	return tier_avail_bytes(t) >= MIN(NATIVE_HEADROOM, t->size / 16);
}

int native_make(struct tierfs *fs, struct tfs_inode *inode,
		const struct policy *pol)
{
	static bool warned[TIER_MAX_CONF]; /* relaxed atomics */
	uint8_t order[TIER_MAX_CONF];
	unsigned n = 0;
	struct native *nat;
	int fd = -EAGAIN;
	unsigned t = 0;
	bool adopted;

	/* under a quota a file stays tiered: its write(2) must be able to
	 * fail with EDQUOT, which only the daemon's path can do */
	if (!fs->passthrough || !pol->native || pol->nsplit ||
	    inode->i_type != S_IFREG || inode_quota(inode))
		return -EAGAIN;
	if (__atomic_load_n(&nstats.files, __ATOMIC_RELAXED) >=
	    native_max_files()) {
		STAT_ADD(refused, 1);
		return -EAGAIN;
	}
	if (native_of(inode))
		return 0;
	if (pol->pin >= 0)
		order[n++] = (uint8_t)pol->pin;
	else
		for (unsigned i = 0; i < pol->norder; i++)
			if (pol->allowed & (1u << pol->order[i]))
				order[n++] = pol->order[i];
	for (unsigned i = 0; i < n && fd < 0; i++) {
		struct tier *tt = fs->tiers[order[i]];

		if (!tier_can_native(tt) || !tier_has_room(tt))
			continue;
		t = order[i];
		fd = tier_native_new(tt);
		if (fd == -EOPNOTSUPP || fd == -EPERM) {
			if (!__atomic_exchange_n(&warned[t], true,
						 __ATOMIC_RELAXED))
				log_warn("tier '%s' cannot hold native files (%s): its files go through the daemon",
					 tt->name, strerror(-fd));
		}
	}
	if (fd < 0) {
		STAT_ADD(refused, 1);
		return -EAGAIN;
	}
	nat = calloc(1, sizeof(*nat));
	if (!nat) {
		close(fd);
		return -ENOMEM;
	}
	nat->fd = fd;
	nat->tier = (uint8_t)t;
	pthread_rwlock_wrlock(&inode->i_dlock);
	adopted = inode->i_size == 0 && extent_map_is_empty(&inode->i_map) &&
		  inode_adopt_native(fs, inode, nat);
	pthread_rwlock_unlock(&inode->i_dlock);
	if (!adopted) {
		/* looked up (and maybe opened) by another meanwhile */
		close(fd);
		free(nat);
		return -EAGAIN;
	}
	nat->inode = inode;
	pthread_mutex_lock(&nlist_lock);
	nat->next = nlist;
	if (nlist)
		nlist->prev = nat;
	nlist = nat;
	pthread_mutex_unlock(&nlist_lock);
	STAT_ADD(files, 1);
	return 0;
}

/* A struct timespec @a is later than @b. */
static bool ts_after(struct timespec a, struct timespec b)
{
	return a.tv_sec > b.tv_sec ||
	       (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

/*
 * Take in what the backing file of @n says now: its blocks into the
 * tier, the quota and i_bytes, its size, atime and mtime (and ctime,
 * if later than the inode's) into the inode.  i_dlock exclusive.
 * Return: 0, or -errno of the fstat() (-ETIMEDOUT: the tier is stalled;
 * nothing changed).
 */
static int sync_locked(struct tierfs *fs, struct tfs_inode *inode,
		       struct native *n)
{
	struct timespec ct;
	struct stat st;
	uint64_t held;
	int r = tier_native_stat(fs->tiers[n->tier], n->fd, &st);

	if (r < 0)
		return r;
	held = (uint64_t)st.st_blocks * 512;
	if (held != n->held) {
		bool up = held > n->held;
		uint64_t d = up ? held - n->held : n->held - held;

		tier_native_account(fs->tiers[n->tier],
				    up ? (int64_t)d : -(int64_t)d);
		quota_account(fs, inode, n->tier, d, up);
		__atomic_store_n(&n->held, held, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&inode->i_bytes, held, __ATOMIC_RELAXED);
	pthread_mutex_lock(&inode->i_lock);
	inode->i_size = (uint64_t)st.st_size;
	/* atime and mtime: the backing file's, which native_set_times()
	 * keeps equal to what was set here; ctime: the later (a chmod
	 * changes this inode's alone) */
	ct = tfs_time_get(&inode->i_ctime);
	tfs_time_set(&inode->i_mtime, st.st_mtim);
	tfs_time_set(&inode->i_atime, st.st_atim);
	if (ts_after(st.st_ctim, ct))
		tfs_time_set(&inode->i_ctime, st.st_ctim);
	pthread_mutex_unlock(&inode->i_lock);
	return 0;
}

void native_fill_stat(struct tfs_inode *inode, struct stat *st)
{
	struct native *n = native_of(inode);
	struct stat b;

	/* n->fd changes under i_lock too (native_move()), and the old
	 * one is closed after: it is open while i_lock is held here */
	if (!n || fstat(n->fd, &b) < 0)
		return;
	st->st_size = b.st_size;
	st->st_blocks = b.st_blocks;
	st->st_atim = b.st_atim;
	st->st_mtim = b.st_mtim;
	if (ts_after(b.st_ctim, st->st_ctim))
		st->st_ctim = b.st_ctim;
}

void native_set_times(struct tierfs *fs, struct tfs_inode *inode)
{
	struct native *n = native_of(inode);
	struct timespec ts[2];

	(void)fs;
	if (!n)
		return;
	pthread_rwlock_wrlock(&inode->i_dlock);
	pthread_mutex_lock(&inode->i_lock);
	ts[0] = tfs_time_get(&inode->i_atime);
	ts[1] = tfs_time_get(&inode->i_mtime);
	pthread_mutex_unlock(&inode->i_lock);
	if (futimens(n->fd, ts) < 0)
		log_debug("native file %llu: cannot set its backing file's times: %s",
			  (unsigned long long)inode->i_ino, strerror(errno));
	pthread_rwlock_unlock(&inode->i_dlock);
}

void native_sync(struct tierfs *fs, struct tfs_inode *inode)
{
	struct native *n = native_of(inode);

	if (!n)
		return;
	pthread_rwlock_wrlock(&inode->i_dlock);
	(void)sync_locked(fs, inode, n);
	pthread_rwlock_unlock(&inode->i_dlock);
}

int native_open(struct tierfs *fs, struct tfs_inode *inode, int flags,
		uint32_t uid)
{
	struct native *n = native_of(inode);
	bool writing = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	int id;

	if (!n)
		return -EINVAL;
	if (writing && quota_full(fs, inode))
		return -EDQUOT;
	pthread_rwlock_wrlock(&inode->i_dlock);
	if (n->backing_id <= 0) {
		id = kernel_backing_open(n->fd);
		if (id < 0) {
			pthread_rwlock_unlock(&inode->i_dlock);
			return id;
		}
		n->backing_id = id;
	}
	__atomic_store_n(&n->nopen, n->nopen + 1, __ATOMIC_RELAXED);
	id = n->backing_id;
	pthread_rwlock_unlock(&inode->i_dlock);
	__atomic_add_fetch(&n->opens, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&n->last_open,
			 __atomic_add_fetch(&open_seq, 1, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	STAT_ADD(opens, 1);
	STAT_ADD(open_now, 1);
	if (writing && uid != 0) {
		/*
		 * The kernel's passthrough write clears the privileges of
		 * the backing file, not of this one: a writer other than
		 * root clears them at its open, as its first write would
		 * (set-group-ID only with group execute, as Linux does).
		 */
		pthread_mutex_lock(&inode->i_lock);
		if (inode->i_mode & (S_ISUID | S_ISGID)) {
			mode_t m = inode->i_mode & ~(mode_t)S_ISUID;

			if (m & S_IXGRP)
				m &= ~(mode_t)S_ISGID;
			if (m != inode->i_mode) {
				inode->i_mode = m;
				inode_touch(inode, false, true);
			}
		}
		pthread_mutex_unlock(&inode->i_lock);
	}
	return id;
}

void native_release(struct tierfs *fs, struct tfs_inode *inode)
{
	struct native *n = native_of(inode);
	bool move = false;
	unsigned to = 0;

	if (!n)
		return;
	pthread_rwlock_wrlock(&inode->i_dlock);
	if (NEVER(n->nopen == 0)) {
		pthread_rwlock_unlock(&inode->i_dlock);
		return;
	}
	__atomic_store_n(&n->nopen, n->nopen - 1, __ATOMIC_RELAXED);
	if (n->nopen == 0) {
		kernel_backing_close(n->backing_id);
		n->backing_id = 0;
		move = n->move_wanted;
		to = n->move_to;
		n->move_wanted = false;
	}
	(void)sync_locked(fs, inode, n);
	pthread_rwlock_unlock(&inode->i_dlock);
	STAT_SUB(open_now, 1);
	if (move)
		(void)native_move(fs, inode, to);
}

ssize_t native_read(struct tierfs *fs, struct tfs_inode *inode, char *buf,
		    size_t len, uint64_t off)
{
	struct native *n = native_of(inode);
	size_t done = 0;
	int err = 0;

	(void)fs;
	if (!n)
		return -EINVAL;
	pthread_rwlock_rdlock(&inode->i_dlock);
	while (done < len) {
		ssize_t r = pread(n->fd, buf + done, len - done,
				  (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = -errno;
		if (r <= 0)
			break; /* end of file, or the error */
		done += (size_t)r;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	return done ? (ssize_t)done : (ssize_t)err;
}

ssize_t native_write(struct tierfs *fs, struct tfs_inode *inode,
		     const char *buf, size_t len, uint64_t off)
{
	struct native *n = native_of(inode);
	size_t done = 0;
	int err = 0;

	if (!n)
		return -EINVAL;
	pthread_rwlock_wrlock(&inode->i_dlock);
	while (done < len) {
		ssize_t r = pwrite(n->fd, buf + done, len - done,
				   (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		done += (size_t)r;
	}
	(void)sync_locked(fs, inode, n);
	pthread_rwlock_unlock(&inode->i_dlock);
	/* a short count, then the error: as a local filesystem does */
	return done ? (ssize_t)done : (ssize_t)err;
}

int native_truncate(struct tierfs *fs, struct tfs_inode *inode,
		    uint64_t size)
{
	struct native *n = native_of(inode);
	int r = 0;

	if (!n)
		return -EINVAL;
	pthread_rwlock_wrlock(&inode->i_dlock);
	if (ftruncate(n->fd, (off_t)size) < 0)
		r = -errno;
	(void)sync_locked(fs, inode, n);
	pthread_rwlock_unlock(&inode->i_dlock);
	return r;
}

int native_fallocate(struct tierfs *fs, struct tfs_inode *inode, int mode,
		     uint64_t off, uint64_t len)
{
	struct native *n = native_of(inode);
	int r = 0;

	if (!n)
		return -EINVAL;
	pthread_rwlock_wrlock(&inode->i_dlock);
	if (!(mode & FALLOC_FL_PUNCH_HOLE) &&
	    tier_avail_bytes(fs->tiers[n->tier]) <
		    len - fd_held_in(n->fd, off, len)) {
		/*
		 * Not room on the tier for what the range does not hold
		 * yet: nothing changes (a file tier's filesystem would let
		 * it grow past the tier's size).
		 */
		r = -ENOSPC;
	} else if (fallocate(n->fd, mode, (off_t)off, (off_t)len) < 0) {
		r = -errno;
		/* tmpfs has no ZERO_RANGE: the space first (which changes
		 * no byte, so a failure changes nothing), then a punch and
		 * the space again (what the punch freed) */
		if (r == -EOPNOTSUPP && (mode & FALLOC_FL_ZERO_RANGE)) {
			if (fallocate(n->fd, FALLOC_FL_KEEP_SIZE, (off_t)off,
				      (off_t)len) < 0 ||
			    fallocate(n->fd,
				      FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      (off_t)off, (off_t)len) < 0 ||
			    fallocate(n->fd, mode & FALLOC_FL_KEEP_SIZE,
				      (off_t)off, (off_t)len) < 0)
				r = -errno;
			else
				r = 0;
		}
	}
	(void)sync_locked(fs, inode, n);
	pthread_rwlock_unlock(&inode->i_dlock);
	return r;
}

int native_lseek(struct tierfs *fs, struct tfs_inode *inode, uint64_t off,
		 int whence, uint64_t *ret_off)
{
	struct native *n = native_of(inode);
	off_t r;

	(void)fs;
	if (!n)
		return -EINVAL;
	pthread_rwlock_rdlock(&inode->i_dlock);
	r = lseek(n->fd, (off_t)off, whence);
	if (r < 0)
		r = -errno;
	pthread_rwlock_unlock(&inode->i_dlock);
	if (r < 0)
		return (int)r;
	*ret_off = (uint64_t)r;
	return 0;
}

ssize_t native_copy(struct tierfs *fs, struct tfs_inode *in, uint64_t off_in,
		    struct tfs_inode *out, uint64_t off_out, size_t len)
{
	struct native *ni = native_of(in), *no = native_of(out);
	struct tfs_inode *first = in, *second = out;
	size_t done = 0;
	int err = 0;

	if (!ni || !no)
		return -EINVAL;
	/* two data locks in address order; one for a copy within a file */
	if ((uintptr_t)first > (uintptr_t)second) {
		first = out;
		second = in;
	}
	pthread_rwlock_wrlock(&first->i_dlock);
	if (second != first)
		pthread_rwlock_wrlock(&second->i_dlock);
	err = fd_copy_sparse(ni->fd, off_in, no->fd, off_out, len, &done);
	(void)sync_locked(fs, out, no);
	if (second != first)
		pthread_rwlock_unlock(&second->i_dlock);
	pthread_rwlock_unlock(&first->i_dlock);
	return done ? (ssize_t)done : (ssize_t)err;
}

void native_layout(struct tierfs *fs, struct tfs_inode *inode,
		   uint64_t bytes[TIER_MAX_CONF])
{
	struct native *n = native_of(inode);

	memset(bytes, 0, sizeof(uint64_t) * TIER_MAX_CONF);
	if (!n)
		return;
	native_sync(fs, inode);
	pthread_rwlock_rdlock(&inode->i_dlock);
	bytes[n->tier] = n->held;
	pthread_rwlock_unlock(&inode->i_dlock);
}

int native_extents(struct tierfs *fs, struct tfs_inode *inode, uint64_t from,
		   size_t max, struct strbuf *out, uint64_t *ret_next)
{
	struct native *n = native_of(inode);
	uint64_t next = UINT64_MAX;
	int r = 0;

	if (!n)
		return -EINVAL;
	pthread_rwlock_rdlock(&inode->i_dlock);
	for (;;) {
		off_t data = lseek(n->fd, (off_t)from, SEEK_DATA);
		off_t hole;
		size_t before = out->len;

		if (data < 0)
			break; /* ENXIO: no data past @from */
		hole = lseek(n->fd, data, SEEK_HOLE);
		if (hole < 0) {
			r = -errno;
			break;
		}
		r = strbuf_addf(out, "%llu %llu %s\n",
				(unsigned long long)data,
				(unsigned long long)(hole - data),
				fs->tiers[n->tier]->name);
		if (r < 0)
			break;
		if (out->len > max) {
			strbuf_setlen(out, before);
			next = (uint64_t)data;
			break;
		}
		from = (uint64_t)hole;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	*ret_next = next;
	return r;
}

int native_move(struct tierfs *fs, struct tfs_inode *inode, unsigned dst)
{
	struct native *n = native_of(inode);
	uint64_t opens;
	unsigned src;
	int nfd, r;

	if (!n)
		return -EINVAL;
	if (dst >= fs->ntiers || !tier_can_native(fs->tiers[dst]))
		return -EOPNOTSUPP;
	pthread_rwlock_wrlock(&inode->i_dlock);
	src = n->tier;
	if (n->nopen > 0) {
		/* the kernel holds the backing file: after the last close */
		n->move_wanted = src != dst;
		n->move_to = (uint8_t)dst;
		pthread_rwlock_unlock(&inode->i_dlock);
		return src == dst ? 0 : -EBUSY;
	}
	pthread_rwlock_unlock(&inode->i_dlock);
	if (src == dst)
		return 0;
	nfd = tier_native_new(fs->tiers[dst]);
	if (nfd < 0)
		return nfd;
	/*
	 * The copy runs with no lock held.  An open, or a change by the
	 * daemon, meanwhile moves the file's opens or what it holds: then
	 * the copy is stale, and the move is given up (the file stays).
	 */
	opens = __atomic_load_n(&n->opens, __ATOMIC_RELAXED);
	pthread_rwlock_rdlock(&inode->i_dlock);
	r = fd_copy_whole(n->fd, nfd);
	pthread_rwlock_unlock(&inode->i_dlock);
	if (r == 0) {
		pthread_rwlock_wrlock(&inode->i_dlock);
		if (n->nopen > 0 || n->tier != src ||
		    __atomic_load_n(&n->opens, __ATOMIC_RELAXED) != opens) {
			r = -EAGAIN;
		} else {
			int old = n->fd;
			uint64_t held = n->held;

			r = quota_move(fs, inode, src, dst, held);
			if (r == 0) {
				tier_native_account(fs->tiers[src],
						    -(int64_t)held);
				tier_native_account(fs->tiers[dst],
						    (int64_t)held);
				/* under i_lock too: native_fill_stat() */
				pthread_mutex_lock(&inode->i_lock);
				n->fd = nfd;
				pthread_mutex_unlock(&inode->i_lock);
				__atomic_store_n(&n->tier, (uint8_t)dst, __ATOMIC_RELAXED);
				nfd = old;
				(void)sync_locked(fs, inode, n);
				STAT_ADD(moves, 1);
			}
		}
		pthread_rwlock_unlock(&inode->i_dlock);
	}
	close(nfd); /* the old backing file, or the copy given up */
	return r;
}

void native_free(struct tierfs *fs, struct tfs_inode *inode)
{
	struct native *n = native_of(inode);

	if (!n)
		return;
	if (n->backing_id > 0 && !fs->unmounting)
		kernel_backing_close(n->backing_id);
	if (!fs->unmounting) {
		/* else the tiers and quotas are gone already */
		tier_native_account(fs->tiers[n->tier], -(int64_t)n->held);
		quota_account(fs, inode, n->tier, n->held, false);
	}
	close(n->fd);
	pthread_mutex_lock(&nlist_lock);
	if (n->prev)
		n->prev->next = n->next;
	else
		nlist = n->next;
	if (n->next)
		n->next->prev = n->prev;
	pthread_mutex_unlock(&nlist_lock);
	__atomic_store_n(inode_native_slot(inode), NULL, __ATOMIC_RELEASE);
	free(n);
	STAT_SUB(files, 1);
}

/* Candidates of one native_demote() round: at most this many files. */
#define DEMOTE_BATCH 64

struct demote_cand {
	struct tfs_inode *inode; /* pinned */
	uint64_t last_open;
};

static int by_last_open(const void *a, const void *b)
{
	const struct demote_cand *x = a, *y = b;
	return x->last_open < y->last_open ? -1 : x->last_open > y->last_open;
}

uint64_t native_demote(struct tierfs *fs, unsigned t, uint64_t bytes,
		       int (*pick)(struct tierfs *, struct tfs_inode *,
				   unsigned, uint64_t),
		       void (*throttle)(struct tierfs *, uint64_t),
		       void (*moved)(struct tierfs *, unsigned, unsigned,
				     uint64_t))
{
	struct demote_cand c[DEMOTE_BATCH];
	uint64_t done = 0;
	size_t n = 0;

	/*
	 * The closed files on @t opened longest ago, a batch of them (the
	 * next pass sees the rest), chosen under the list lock and pinned
	 * before it is dropped: a file on the list is not freed meanwhile.
	 * Its tier, opens and bytes are i_dlock's, read here racily as a
	 * hint; native_move() checks them under the lock.
	 */
	pthread_mutex_lock(&nlist_lock);
	for (struct native *p = nlist; p; p = p->next) {
		uint64_t lo = __atomic_load_n(&p->last_open, __ATOMIC_RELAXED);
		size_t y = 0;

		if (__atomic_load_n(&p->tier, __ATOMIC_RELAXED) != t ||
		    __atomic_load_n(&p->nopen, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&p->held, __ATOMIC_RELAXED) == 0)
			continue;
		if (n < DEMOTE_BATCH) {
			c[n++] = (struct demote_cand){ p->inode, lo };
			continue;
		}
		/* full: it replaces the youngest kept, if older */
		for (size_t i = 1; i < n; i++)
			if (c[i].last_open > c[y].last_open)
				y = i;
		if (lo < c[y].last_open)
			c[y] = (struct demote_cand){ p->inode, lo };
	}
	for (size_t i = 0; i < n;) {
		if (inode_try_pin(fs, c[i].inode))
			i++;
		else
			c[i] = c[--n];
	}
	pthread_mutex_unlock(&nlist_lock);
	qsort(c, n, sizeof(c[0]), by_last_open);
	for (size_t i = 0; i < n; i++) {
		struct native *nat = native_of(c[i].inode);
		uint64_t held;
		int dst;

		if (done < bytes && nat) {
			held = __atomic_load_n(&nat->held, __ATOMIC_RELAXED);
			dst = pick(fs, c[i].inode, t, held);
			if (dst >= 0) {
				throttle(fs, held);
				if (native_move(fs, c[i].inode, (unsigned)dst) == 0) {
					done += held;
					moved(fs, t, (unsigned)dst, held);
				}
			}
		}
		inode_unpin(fs, c[i].inode);
	}
	return done;
}

void native_get_stats(struct native_stats *ret)
{
	ret->files = __atomic_load_n(&nstats.files, __ATOMIC_RELAXED);
	ret->opens = __atomic_load_n(&nstats.opens, __ATOMIC_RELAXED);
	ret->open_now = __atomic_load_n(&nstats.open_now, __ATOMIC_RELAXED);
	ret->moves = __atomic_load_n(&nstats.moves, __ATOMIC_RELAXED);
	ret->refused = __atomic_load_n(&nstats.refused, __ATOMIC_RELAXED);
}
