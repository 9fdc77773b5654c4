// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ops.c -- the FUSE low-level handlers.  Each one decodes the request,
 * calls into namespace/data/xattr/placement code (which returns -errno
 * and never replies), drops every lock, and only then replies: a reply
 * may be the kernel's last reference to an inode, after which a forget
 * may free it.  What is left here is the FUSE side only: node ids,
 * entry and attribute replies with their timeouts, counted lookups the
 * kernel did not take, open flags, reply buffers, readdir encoding.
 *
 * Longer than 700 lines for a reason: one short handler per FUSE
 * operation (34) and the operation table; splitting them by theme
 * would only scatter the table and the shared reply helpers.
 *
 * Node ids: the kernel's node id for an inode is the inode's address
 * (FUSE_ROOT_ID stands for the root), which saves a table lookup per
 * request; st_ino is the inode's own counter, stable and never reused
 * within a mount, and doubles as the generation number so that a reused
 * address is never mistaken for an old inode.
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ops.h"
#include "reply.h"
#include "namespace.h"
#include "fs.h"
#include "inode.h"
#include "data.h"
#include "native.h"
#include "placement.h"
#include "attr.h"
#include "kernel.h"
#include "kernel_uring.h"
#include "never.h"
#include "memwatch.h"
#include "migrate.h"
#include "quota.h"
#include "macro.h"
#include "log.h"
#include "banned.h"

/*
 * What the kernel caches, and why it is safe (the rule for every change
 * to this file and to the modules below it):
 *
 * Names, negative names and attributes are cached for a day.  Every
 * change to a tierfs file or name is a request of this one kernel mount,
 * so the kernel knows of it as it makes it -- it drops or updates what it
 * cached (create instantiates a negative entry, unlink and rename move or
 * drop entries and the link count, setattr and setxattr replies or
 * invalidations cover mode, owner, times and ctime, a write, truncate,
 * fallocate or copy_file_range invalidates size, mtime, ctime and
 * st_blocks, a read or a listing that reaches us invalidates atime).
 * The timeout is then only a bound on the damage of a case we missed;
 * a day costs one getattr per cached inode per day.
 *
 * The exceptions, where the daemon changes attributes on its own or in a
 * request after which the kernel does not refresh them, each tell the
 * kernel (kernel.h): kernel_inval_attr_sync() in the request, before the
 * reply, or kernel_inval_attr() (queued; any thread, any lock) from the
 * migrator:
 * - st_blocks, when a write the kernel's writeback sent (long after the
 *   program's write(2), whose invalidation came early) allocates;
 * - mode and ctime, when a write, fallocate or copy_file_range clears
 *   suid/sgid for the kernel (killpriv_v2: it invalidates st_blocks
 *   after them, which today brings the mode back with it, but never the
 *   mode as such);
 * - st_blocks (and ctime) after a control action (user.tierfs.*, e.g.
 *   tierctl migrate), which moves data in a setxattr request: the kernel
 *   invalidates only ctime there, and not at all with the writeback
 *   cache, which owns a regular file's ctime;
 * - st_blocks when the migrator moves data between tiers (migrate.c and
 *   data_move.c: the same call, where the bytes held change).
 * Not exceptions: atime on a read (the kernel invalidates atime after
 * each read and readdir that reaches us, and we set it before replying),
 * size and mtime (only requests change them), statfs (never cached:
 * quotas and df are always asked), xattr values (never cached).
 */
#define ENTRY_TIMEOUT 86400.0
#define ATTR_TIMEOUT 86400.0

/* Pieces of one zero-copy read reply (writev allows 1024, with libfuse's
 * header in front). */
#define READ_IOV_MAX 256

static struct tierfs *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct tfs_inode *ino_get(fuse_req_t req, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return req_fs(req)->root;
	return (struct tfs_inode *)(uintptr_t)ino;
}

static fuse_ino_t node_id(struct tierfs *fs, struct tfs_inode *inode)
{
	return inode == fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)inode;
}

/* The reply's entry for @inode, whose attributes namespace.c read. */
static void fill_entry(struct tierfs *fs, struct tfs_inode *inode,
		       const struct stat *st, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = node_id(fs, inode);
	e->generation = inode->i_ino;
	e->attr_timeout = ATTR_TIMEOUT;
	e->entry_timeout = ENTRY_TIMEOUT;
	e->attr = *st;
}

static int req_getgroups(void *arg, int size, gid_t list[])
{
	return fuse_req_getgroups(arg, size, list);
}

/* The caller of @req; its groups are read only if a rule needs them. */
static struct ns_cred req_cred(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return (struct ns_cred){
		.uid = ctx->uid,
		.gid = ctx->gid,
		.getgroups = req_getgroups,
		.arg = req,
	};
}

static void tfs_init(void *userdata, struct fuse_conn_info *conn)
{
	conn->max_write = TIERFS_MAX_IO;
	conn->max_readahead = TIERFS_MAX_IO;
	/*
	 * READDIRPLUS: a listing hands the kernel each entry's attributes,
	 * so `ls -l`, `du` and `find -ls` need no lookup per name (measured:
	 * ls -l of 10k cold entries 3x faster, find -ls of 20k 3.5x).  AUTO:
	 * the kernel asks for them on a listing's first call, later ones only
	 * if the program looked names up -- a name-only `find` of a cold tree
	 * still pays about 2.5 us per entry for the first call's attributes.
	 */
	conn->want |= (FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO) &
		      conn->capable;
	/*
	 * Every change comes through this kernel, so its page cache is never
	 * stale: do not let an mtime seen in a later getattr throw it away.
	 */
	conn->want &= ~FUSE_CAP_AUTO_INVAL_DATA;
	/*
	 * No atomic O_TRUNC: with it the kernel leaves clearing suid/sgid on
	 * a truncating open to us, and only it knows whether the caller has
	 * CAP_FSETID.  Without it, it sends a setattr that already says.
	 */
	conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	if (conn->capable & FUSE_CAP_PARALLEL_DIROPS)
		conn->want |= FUSE_CAP_PARALLEL_DIROPS;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;

	/*
	 * The migrator starts here, not in main(): this runs after
	 * fuse_daemonize() forked, and threads do not survive a fork.
	 */
	struct tierfs *fs = userdata;
	int r;

	/* killpriv_v2, the writeback cache, the bdi: see kernel.h */
	kernel_init(fs, conn);

	if (!fs->opt.no_migrate && fs->ntiers > 1) {
		r = migrator_start(fs);
		if (r < 0)
			log_err("cannot start the migrator: %s; data stays where it lands",
				strerror(-r));
	}
	r = memwatch_start(fs);
	if (r < 0)
		log_err("cannot start the memory follower: %s; RAM tiers keep their size",
			strerror(-r));
}

static void fh_free_all(void);

static void tfs_destroy(void *userdata)
{
	/* no ring thread may serve a request on what follows frees; main()
	 * stopped them already unless this comes some other way */
	kernel_uring_stop();
	memwatch_stop(userdata);
	migrator_stop(userdata);
	kernel_stop(userdata);
	fh_free_all();
}

/*
 * Reply with an entry whose lookup we counted.  If the kernel no longer
 * wants it (the request was interrupted: the reply fails with ENOENT), it
 * will never send the forget for it, so we drop the count ourselves.
 */
static void reply_entry_counted(fuse_req_t req, struct fuse_entry_param *e)
{
	if (fuse_reply_entry(req, e) == -ENOENT && e->ino &&
	    e->ino != FUSE_ROOT_ID) /* the root is never forgotten */
		inode_forget(req_fs(req), ino_get(req, e->ino), 1);
}

static void tfs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct tierfs *fs = req_fs(req);
	struct fuse_entry_param e;
	struct tfs_inode *inode;
	struct stat st;
	int r = ns_lookup(fs, ino_get(req, parent), name, &inode, &st);

	if (r == -ENOENT) {
		/* a negative entry: the kernel may cache the absence too */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = ENTRY_TIMEOUT;
		fuse_reply_entry(req, &e);
		return;
	}
	if (r < 0)
		return tierfs_reply_err(req, r);
	fill_entry(fs, inode, &st, &e);
	reply_entry_counted(req, &e);
}

static void tfs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct tierfs *fs = req_fs(req);

	if (ino != FUSE_ROOT_ID)
		inode_forget(fs, ino_get(req, ino), nlookup);
	fuse_reply_none(req);
}

static void tfs_forget_multi(fuse_req_t req, size_t count,
			     struct fuse_forget_data *forgets)
{
	struct tierfs *fs = req_fs(req);

	for (size_t i = 0; i < count; i++)
		if (forgets[i].ino != FUSE_ROOT_ID)
			inode_forget(fs, ino_get(req, forgets[i].ino),
				     forgets[i].nlookup);
	fuse_reply_none(req);
}

static void reply_attr(fuse_req_t req, struct tfs_inode *inode)
{
	struct stat st;

	native_sync(req_fs(req), inode); /* what the kernel wrote meanwhile */
	pthread_mutex_lock(&inode->i_lock);
	inode_fill_stat(req_fs(req), inode, &st);
	pthread_mutex_unlock(&inode->i_lock);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

/*
 * An open regular file (fi->fh of open and create with the writeback
 * cache; 0 without it).  Owned by the kernel's open file, from the open
 * reply to RELEASE; requests on one file may run at once, so the
 * numbers are relaxed atomics (data_wb_check() advances them).
 */
struct tfs_fh {
	uint64_t seen;	/* writeback failures fsync and close reported */
	uint64_t told;	/* ... and the one a write(2) was failed for */
	bool direct;	/* opened write-through (FOPEN_DIRECT_IO) */
	struct tfs_fh *prev, *next; /* fh_lock; the open handles */
};

/*
 * Every open handle, so that those the kernel never released (files
 * still open when the daemon ends: no RELEASE comes) are freed at
 * destroy.  fh_lock guards the list only, and is taken alone.
 */
static pthread_mutex_t fh_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tfs_fh *fh_list;

static void fh_free(struct tfs_fh *fh)
{
	if (!fh)
		return;
	pthread_mutex_lock(&fh_lock);
	if (fh->prev)
		fh->prev->next = fh->next;
	else
		fh_list = fh->next;
	if (fh->next)
		fh->next->prev = fh->prev;
	pthread_mutex_unlock(&fh_lock);
	free(fh);
}

/* The session ends: free the handles still open. */
static void fh_free_all(void)
{
	pthread_mutex_lock(&fh_lock);
	while (fh_list) {
		struct tfs_fh *next = fh_list->next;

		free(fh_list);
		fh_list = next;
	}
	pthread_mutex_unlock(&fh_lock);
}

/* fi->fh of a native open (no handle of ours: the writeback cache,
 * which handles serve, is off on a mount with native files) */
#define FH_NATIVE 1

static struct tfs_fh *fh_of(const struct fuse_file_info *fi)
{
	if (!fi || fi->fh == FH_NATIVE)
		return NULL;
	return (struct tfs_fh *)(uintptr_t)fi->fh;
}

/*
 * An open of native @inode (native.h): the reply names its backing
 * file, and the kernel moves the file's bytes itself.  Every open of a
 * native file is one (the kernel wants one mode per inode).
 * Return: 0, or -errno to fail the open with.
 */
static int native_open_fi(fuse_req_t req, struct tfs_inode *inode,
			  struct fuse_file_info *fi)
{
	int id = native_open(req_fs(req), inode, fi->flags,
			     fuse_req_ctx(req)->uid);

	if (id < 0)
		return id;
	kernel_req_set_passthrough(id);
	fi->fh = FH_NATIVE;
	fi->direct_io = 0;
	fi->keep_cache = 0;
	return 0;
}

/*
 * With the writeback cache, the kernel asks for the attributes (with the
 * file handle) before a write(2) whenever they are not cached, and fails
 * the write(2) with our error.  A failed writeback invalidates them
 * (tfs_write), so the writer's next write(2) comes here and learns of it:
 * the only way to tell at write(2) a program that writes on into a full
 * mount.  Each failure once per open file; fstat(2) of that file, which
 * comes the same way, gets it instead when it comes first.
 */
static void tfs_getattr(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);
	struct tfs_fh *fh = fh_of(fi);

	if (fh) {
		int err = data_wb_check(inode, &fh->told, false, NULL);

		if (err)
			return tierfs_reply_err(req, err);
	}
	reply_attr(req, inode);
}

static void tfs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			int to_set, struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);
	struct ns_cred cred = req_cred(req);
	int r = ns_setattr(req_fs(req), inode, attr, to_set,
			   kernel_req_kill_suidgid(), &cred);

	if (r < 0)
		return tierfs_reply_err(req, r);
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
		      FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW))
		native_set_times(req_fs(req), inode);
	reply_attr(req, inode);
}

static void tfs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct tfs_inode *inode = ino_get(req, ino);

	if (inode->i_type != S_IFLNK)
		return tierfs_reply_err(req, -EINVAL);
	/* i_link is immutable after creation */
	fuse_reply_readlink(req, inode->i_link);
}

/* Reply to a request that made @inode (one lookup counted) or failed. */
static void reply_new_entry(fuse_req_t req, int r, struct tfs_inode *inode,
			    const struct stat *st)
{
	struct fuse_entry_param e;

	if (r < 0)
		return tierfs_reply_err(req, r);
	fill_entry(req_fs(req), inode, st, &e);
	reply_entry_counted(req, &e);
}

static void tfs_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, dev_t rdev)
{
	struct ns_cred cred = req_cred(req);
	struct tfs_inode *inode = NULL;
	struct stat st;
	int r = ns_mknod(req_fs(req), ino_get(req, parent), name, mode, rdev,
			 &cred, &inode, &st);

	reply_new_entry(req, r, inode, &st);
}

static void tfs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode)
{
	struct ns_cred cred = req_cred(req);
	struct tfs_inode *inode = NULL;
	struct stat st;
	int r = ns_mkdir(req_fs(req), ino_get(req, parent), name, mode, &cred,
			 &inode, &st);

	reply_new_entry(req, r, inode, &st);
}

static void tfs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			const char *name)
{
	struct ns_cred cred = req_cred(req);
	struct tfs_inode *inode = NULL;
	struct stat st;
	int r = ns_symlink(req_fs(req), ino_get(req, parent), name, link,
			   &cred, &inode, &st);

	reply_new_entry(req, r, inode, &st);
}

/*
 * Whether an open goes through the page cache.  With the writeback
 * cache, a write(2) is done once the page cache has it, and an error of
 * the later writeback reaches the program only at fsync or close.  So a
 * file opened for writing when less free space is left (on the tiers
 * its policy allows) than the cache may hold dirty is opened
 * write-through: each write(2) then gets its ENOSPC itself.  With
 * --page-cache=drop every open is direct.
 */
static void set_write_mode(fuse_req_t req, struct tfs_inode *inode,
			   struct fuse_file_info *fi)
{
	struct tierfs *fs = req_fs(req);
	struct statvfs st;

	/*
	 * --page-cache=drop: the kernel caches nothing of the file, so the
	 * tier holds the only copy of its data (a RAM tier's bytes are not
	 * held again in the page cache; a file tier's are held once, in its
	 * backing file's).  Each read and write is then a request, and an
	 * mmap goes through the page cache of this file only
	 * (FUSE_DIRECT_IO_ALLOW_MMAP, kernel.c).
	 */
	if (fs->opt.page_cache == PAGE_CACHE_DROP) {
		fi->direct_io = 1;
		return;
	}
	if (!fs->writeback || (fi->flags & O_ACCMODE) == O_RDONLY)
		return;
	/* free space under the quota above @inode too (quota_statfs) */
	placement_statfs(fs, inode, &st);
	if (kernel_space_low(fs, (uint64_t)st.f_bavail * st.f_frsize))
		fi->direct_io = 1;
}

/*
 * The open file's handle, with the writeback cache (without it every
 * error comes back from its own write(2), and fh stays 0).
 * Return: 0 or -ENOMEM.
 */
static int fh_open(struct tierfs *fs, struct tfs_inode *inode,
		   struct fuse_file_info *fi)
{
	struct tfs_fh *fh;

	if (!fs->writeback)
		return 0;
	fh = malloc(sizeof(*fh));
	if (!fh)
		return -ENOMEM;
	fh->seen = fh->told = data_wb_sample(inode);
	fh->direct = fi->direct_io;
	fh->prev = NULL;
	pthread_mutex_lock(&fh_lock);
	fh->next = fh_list;
	if (fh_list)
		fh_list->prev = fh;
	fh_list = fh;
	pthread_mutex_unlock(&fh_lock);
	fi->fh = (uintptr_t)fh;
	return 0;
}

static void tfs_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		       mode_t mode, struct fuse_file_info *fi)
{
	struct tierfs *fs = req_fs(req);
	struct ns_cred cred = req_cred(req);
	struct fuse_entry_param e;
	struct tfs_inode *inode;
	struct stat st;
	int r = ns_create(fs, ino_get(req, parent), name, mode, &cred, &inode,
			  &st);

	if (r < 0)
		return tierfs_reply_err(req, r);
	fill_entry(fs, inode, &st, &e);
	fi->keep_cache = 1;
	set_write_mode(req, inode, fi);
	if (native_of(inode))
		r = native_open_fi(req, inode, fi);
	else
		r = fh_open(fs, inode, fi);
	if (r < 0) {
		/* the file exists now, as after a create whose open failed */
		inode_forget(fs, inode, 1);
		return tierfs_reply_err(req, r);
	}
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		/* the open was interrupted: undo the lookup we counted */
		if (fi->fh == FH_NATIVE)
			native_release(fs, inode);
		inode_forget(fs, inode, 1);
		fh_free(fh_of(fi));
	}
}

static void tfs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	tierfs_reply_err(req, ns_unlink(req_fs(req), ino_get(req, parent),
					name));
}

static void tfs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	tierfs_reply_err(req, ns_rmdir(req_fs(req), ino_get(req, parent),
				       name));
}

static void tfs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		       fuse_ino_t newparent, const char *newname,
		       unsigned int flags)
{
	tierfs_reply_err(req, ns_rename(req_fs(req), ino_get(req, parent),
					name, ino_get(req, newparent),
					newname, flags));
}

static void tfs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		     const char *newname)
{
	struct tfs_inode *inode = ino_get(req, ino);
	struct stat st;
	int r = ns_link(req_fs(req), inode, ino_get(req, newparent), newname,
			&st);

	reply_new_entry(req, r, inode, &st);
}

static void tfs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);
	int r;

	if (inode->i_type == S_IFDIR)
		return tierfs_reply_err(req, -EISDIR);
	/* O_TRUNC comes as a setattr first: see tfs_init() */
	/* all changes come through this kernel: keep its page cache */
	fi->keep_cache = 1;
	set_write_mode(req, inode, fi);
	r = native_of(inode) ? native_open_fi(req, inode, fi)
			     : fh_open(req_fs(req), inode, fi);
	if (r < 0)
		return tierfs_reply_err(req, r);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* interrupted: no release will come */
		if (fi->fh == FH_NATIVE)
			native_release(req_fs(req), inode);
		fh_free(fh_of(fi));
	}
}

/*
 * Per-thread read buffer, sized to the largest request seen; freed by
 * the key destructor when a loop thread exits.  Owned by its thread.
 */
static pthread_key_t rbuf_key;
static pthread_once_t rbuf_once = PTHREAD_ONCE_INIT;

struct rbuf {
	size_t size;
	char data[];
};

static void rbuf_key_init(void)
{
	(void)pthread_key_create(&rbuf_key, free);
}

static char *rbuf_get(size_t size)
{
	struct rbuf *b;

	pthread_once(&rbuf_once, rbuf_key_init);
	b = pthread_getspecific(rbuf_key);
	if (b && b->size >= size)
		return b->data;
	free(b);
	b = malloc(sizeof(*b) + MAX(size, (size_t)TIERFS_MAX_IO));
	if (b)
		b->size = MAX(size, (size_t)TIERFS_MAX_IO);
	(void)pthread_setspecific(rbuf_key, b);
	return b ? b->data : NULL;
}

static void tfs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);
	char *buf = rbuf_get(size);
	ssize_t r;

	struct iovec iov[READ_IOV_MAX];
	unsigned niov;
	int rr;

	if (!buf)
		return tierfs_reply_err(req, -ENOMEM);
	/*
	 * Zero copy from RAM: the reply's iovecs point into the tier, so the
	 * data lock stays held (shared) across the reply.  This is the one
	 * reply sent under a lock, and it is safe: a read comes on an open
	 * file, so this reply cannot be the kernel's last reference (the
	 * rule in fs.h), and writers wait only for this writev.
	 */
	rr = data_read_begin(req_fs(req), inode, buf, size, (uint64_t)off,
			     iov, READ_IOV_MAX, &niov);
	if (rr == 0) {
		/* before the reply: after it the file may be closed and
		 * @inode freed (inode_free waits only for the data lock) */
		inode_touch_atime(inode);
		fuse_reply_iov(req, iov, (int)niov);
		data_read_end(inode);
		return;
	}
	if (rr != -E2BIG)
		return tierfs_reply_err(req, rr);
	r = data_read(req_fs(req), inode, buf, size, (uint64_t)off);
	if (r < 0)
		return tierfs_reply_err(req, (int)r);
	inode_touch_atime(inode);
	fuse_reply_buf(req, buf, (size_t)r);
}

/*
 * The log of failed writebacks: one line per file and episode (from its
 * first failure until an fsync or close reports it), naming the file,
 * the cause and, for EDQUOT, the quota's directory; the end of an
 * episode that lost more than one writeback says how much.  Mount-wide,
 * at most WB_LOG_PER_SEC first lines a second; the next line that gets
 * out says how many were left out.
 */
#define WB_LOG_PER_SEC 10

static bool wb_log_ok(uint64_t *ret_dropped)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int64_t sec;	   /* lock */
	static unsigned n;	   /* lock; lines in that second */
	static uint64_t dropped; /* lock; lines left out since */
	int64_t now = now_ts().tv_sec;
	bool ok;

	pthread_mutex_lock(&lock);
	if (now != sec) {
		sec = now;
		n = 0;
	}
	ok = n < WB_LOG_PER_SEC;
	if (ok) {
		n++;
		*ret_dropped = dropped;
		dropped = 0;
	} else {
		dropped++;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

static void writeback_failed(struct tierfs *fs, struct tfs_inode *inode,
			     int err)
{
	uint64_t dropped = 0;
	char *path, *qdir = NULL;

	if (!wb_log_ok(&dropped))
		return;
	path = inode_path(fs, inode);
	if (err == -EDQUOT)
		qdir = quota_full_dir(fs, inode);
	log_err("writeback of '%s' failed: %s%s%s%s; its bytes that were not stored read as EIO, and the error goes to its next write, fsync or close%s",
		path ? path : "?", strerror(-err),
		qdir ? " (the quota of '" : "", qdir ? qdir : "",
		qdir ? "' is used up)" : "",
		dropped ? " (more files failed: see writeback_errors)" : "");
	free(qdir);
	free(path);
}

/* An fsync or close reported an episode's error: its summary line. */
static void writeback_reported(struct tierfs *fs, struct tfs_inode *inode,
			       const struct wb_episode *ep)
{
	char *path;

	if (ep->fails < 2)
		return;
	path = inode_path(fs, inode);
	log_err("writeback of '%s': %u writebacks failed (%s), %llu bytes not stored; reported to the program",
		path ? path : "?", ep->fails, strerror(-ep->err),
		(unsigned long long)ep->bytes);
	free(path);
}

static void tfs_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct tierfs *fs = req_fs(req);
	struct tfs_inode *inode = ino_get(req, ino);
	struct tfs_fh *fh = fh_of(fi);
	struct data_src src = DATA_SRC_MEM(buf);
	bool inval = false;
	uint64_t blocks = 0;
	size_t held;
	ssize_t r;

	/* the data may still be in the splice pipe (kernel.c): then @buf
	 * holds only the headers, and the pipe has to be emptied */
	if (kernel_req_pipe(&src.fd, &held)) {
		src.mem = NULL;
		if (NEVER(held != size)) {
			kernel_req_pipe_done(false);
			return tierfs_reply_err(req, -EIO);
		}
	}
	/* before the data, as a local filesystem does */
	if (kernel_req_kill_suidgid()) {
		struct ns_cred cred = req_cred(req);

		/* the kernel does not refresh the mode after a write */
		inval = ns_kill_suidgid(fs, inode, &cred, false);
	}
	if (fi->writepage) {
		uint64_t lost;
		bool first;
		int err;

		/*
		 * It comes after the write(2) that made the page dirty, and
		 * after the invalidation that write(2) made: a stat in
		 * between may have cached st_blocks from before this
		 * allocation.  A write-through write is followed by the
		 * kernel's own invalidation.
		 */
		blocks = data_blocks(fs, inode);
		err = data_writeback_src(fs, inode, &src, size, (uint64_t)off,
					 &lost, &first);
		if (!src.mem)
			kernel_req_pipe_done(!src.broken);
		if (err < 0) {
			__atomic_add_fetch(&fs->wb_errors, 1,
					   __ATOMIC_RELAXED);
			/* the writer's next write(2) asks for attributes,
			 * and gets the error (tfs_getattr) */
			inval = true;
			if (first)
				writeback_failed(fs, inode, err);
		}
		if (inval || data_blocks(fs, inode) != blocks)
			kernel_inval_attr_sync(fs, inode);
		/*
		 * Success, whatever happened: the error is ours to report
		 * (data_lost.c says why), from fsync, close and the next
		 * write(2); what was not stored is recorded as lost.
		 */
		fuse_reply_write(req, size);
		return;
	}
	r = data_write_src(fs, inode, &src, size, (uint64_t)off);
	if (!src.mem)
		kernel_req_pipe_done(!src.broken);
	if (inval)
		kernel_inval_attr_sync(fs, inode);
	if (r < 0)
		return tierfs_reply_err(req, (int)r);
	/*
	 * A direct write (O_DIRECT: the write's flags are the file's) on a
	 * file opened with the cache: no cached page of its range may keep
	 * the old bytes.  Only then: a buffered write-through write (the
	 * kernel's fuse_perform_write(), e.g. to clear suid) holds the
	 * locks of the very pages it writes, and has put the new bytes in
	 * them already -- invalidating them here would deadlock.
	 */
	if (fh && !fh->direct && (fi->flags & O_DIRECT) && r > 0)
		kernel_inval_data_sync(fs, inode, (uint64_t)off, (uint64_t)r);
	fuse_reply_write(req, (size_t)r);
}

/*
 * close(2): the kernel writes the file's dirty pages back to us and
 * waits for them before it sends FLUSH, so the error of a writeback
 * that failed is known here, and close returns it -- with its own errno
 * (EDQUOT, ENOSPC, EIO), which the kernel itself could not carry.  The
 * kernel still reports its own mapping errors before FLUSH.  Without
 * the writeback cache every write(2) gets its own error, and ENOSYS
 * tells the kernel to stop sending FLUSH (one request less per close).
 */
static void tfs_flush(fuse_req_t req, fuse_ino_t ino,
		      struct fuse_file_info *fi)
{
	struct tfs_fh *fh = fh_of(fi);
	struct tfs_inode *inode;
	struct wb_episode ep;
	int err;

	if (!fh)
		return tierfs_reply_err(req, -ENOSYS);
	inode = ino_get(req, ino);
	err = data_wb_check(inode, &fh->seen, true, &ep);
	if (ep.fails)
		writeback_reported(req_fs(req), inode, &ep);
	tierfs_reply_err(req, err);
}

static void tfs_release(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	if (fi->fh == FH_NATIVE)
		native_release(req_fs(req), ino_get(req, ino));
	fh_free(fh_of(fi));
	tierfs_reply_err(req, 0);
}

/*
 * Scratch semantics: there is nothing to keep after unmount, so fsync
 * forces nothing to a device (fs/README.md "Scratch semantics" says so).  The kernel writes the
 * dirty pages back to us and waits for them before it sends FSYNC, so
 * this returns the error of a writeback that failed, once per open file
 * as tfs_flush() does.  Without the writeback cache ENOSYS makes the
 * kernel stop sending FSYNC and return success itself.
 */
static void tfs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		      struct fuse_file_info *fi)
{
	tfs_flush(req, ino, fi);
}

/*
 * An open directory: the cookie limit of the listing under way.  Owned
 * by the handle (opendir to releasedir); the kernel serialises readdir
 * calls on one open directory, so it needs no lock.
 */
struct dir_handle {
	uint64_t limit; /* entries with this cookie or later are newer */
};

static void tfs_opendir(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);

	struct dir_handle *dh;

	if (inode->i_type != S_IFDIR)
		return tierfs_reply_err(req, -ENOTDIR);
	dh = calloc(1, sizeof(*dh));
	if (!dh)
		return tierfs_reply_err(req, -ENOMEM);
	fi->fh = (uintptr_t)dh;
	fi->cache_readdir = 0;
	if (fuse_reply_open(req, fi) == -ENOENT)
		free(dh); /* interrupted: no releasedir will come */
}

/*
 * Encodes entries into one readdir or readdirplus reply buffer.  A
 * readdirplus entry is a lookup the kernel will count (unless it is "."
 * or ".."): @counted holds the inodes we counted one for, so that a
 * reply the kernel never takes gives them back.
 */
struct dir_fill {
	fuse_req_t req;
	struct tierfs *fs;
	char *buf;
	size_t size, pos;
	bool plus;
	struct tfs_inode **counted; /* plus: one per counted entry */
	size_t ncounted, cap;
};

static bool dir_fill_one(void *arg, const char *name, struct tfs_inode *inode,
			 uint64_t ino, mode_t type, uint64_t cookie)
{
	struct dir_fill *df = arg;
	struct fuse_entry_param e;
	size_t n;

	if (!df->plus) {
		memset(&e.attr, 0, sizeof(e.attr));
		e.attr.st_ino = ino;
		e.attr.st_mode = type;
		n = fuse_add_direntry(df->req, df->buf + df->pos,
				      df->size - df->pos, name, &e.attr,
				      (off_t)cookie);
		if (n > df->size - df->pos)
			return false;
		df->pos += n;
		return true;
	}
	if (!inode) {
		/* "." and "..": the kernel links no entry for them, so a
		 * node id of 0 and no count */
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = ino;
		e.attr.st_mode = type;
	} else {
		struct stat st;

		if (df->ncounted == df->cap)
			return false; /* cannot happen: cap is an upper bound */
		pthread_mutex_lock(&inode->i_lock);
		inode_fill_stat(df->fs, inode, &st);
		pthread_mutex_unlock(&inode->i_lock);
		fill_entry(df->fs, inode, &st, &e);
	}
	n = fuse_add_direntry_plus(df->req, df->buf + df->pos,
				   df->size - df->pos, name, &e,
				   (off_t)cookie);
	if (n > df->size - df->pos)
		return false;
	df->pos += n;
	if (inode) {
		/* ns_lock (shared) keeps the name, so the inode, alive */
		inode_lookup_ref(df->fs, inode);
		df->counted[df->ncounted++] = inode;
	}
	return true;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, struct fuse_file_info *fi, bool plus)
{
	struct tierfs *fs = req_fs(req);
	struct tfs_inode *dir = ino_get(req, ino);
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;
	struct dir_fill df = {
		.req = req,
		.fs = fs,
		.buf = malloc(size),
		.size = size,
		.plus = plus,
	};

	if (plus && df.buf) {
		/* no entry is smaller than its header plus one byte of name */
		size_t least = fuse_add_direntry_plus(req, NULL, 0, "x", NULL, 0);

		df.cap = size / least + 1;
		df.counted = malloc(df.cap * sizeof(*df.counted));
	}
	if (!df.buf || (plus && !df.counted)) {
		free(df.buf);
		free(df.counted);
		return tierfs_reply_err(req, -ENOMEM);
	}
	if (ns_readdir(fs, dir, off < 0 ? 0 : (uint64_t)off, &dh->limit,
		       dir_fill_one, &df) > 0)
		inode_touch_atime(dir); /* before the reply: see tfs_read() */
	if (fuse_reply_buf(req, df.buf, df.pos) == -ENOENT) {
		/* interrupted: the kernel counted none of these lookups */
		for (size_t i = 0; i < df.ncounted; i++)
			inode_forget(fs, df.counted[i], 1);
	}
	free(df.buf);
	free(df.counted);
}

static void tfs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void tfs_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			    off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

static void tfs_releasedir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	free((struct dir_handle *)(uintptr_t)fi->fh);
	tierfs_reply_err(req, 0);
}

static void tfs_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			 struct fuse_file_info *fi)
{
	tierfs_reply_err(req, -ENOSYS);
}

static void tfs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;

	/* df DIR: what DIR's policy lets a program write there */
	placement_statfs(req_fs(req), ino_get(req, ino), &st);
	fuse_reply_statfs(req, &st);
}

/* tierfs's own attributes (policy, quota, control actions) */
static bool is_ctl_name(const char *name)
{
	return !strncmp(name, "user.tierfs.", 12) ||
	       !strncmp(name, "trusted.tierfs.", 15);
}

static void tfs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 const char *value, size_t size, int flags)
{
	struct tfs_inode *inode = ino_get(req, ino);
	int r = attr_set(req_fs(req), inode, name, value, size, flags,
			 fuse_req_ctx(req)->uid);

	/* a control action (tierctl migrate) may change st_blocks */
	if (r == 0 && is_ctl_name(name))
		kernel_inval_attr_sync(req_fs(req), inode);
	tierfs_reply_err(req, r);
}

static void tfs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	struct ns_cred cred;
	ssize_t r;

	if (size && !buf)
		return tierfs_reply_err(req, -ENOMEM);
	/* computed values depend on who asks (a directory's layout) */
	cred = req_cred(req);
	r = attr_get(req_fs(req), ino_get(req, ino), name, buf, size, &cred);
	if (r < 0)
		tierfs_reply_err(req, (int)r);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)r);
	else
		fuse_reply_buf(req, buf, (size_t)r);
	free(buf);
}

static void tfs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char *buf = size ? malloc(size) : NULL;
	ssize_t r;

	if (size && !buf)
		return tierfs_reply_err(req, -ENOMEM);
	r = attr_list(req_fs(req), ino_get(req, ino), buf, size);
	if (r < 0)
		tierfs_reply_err(req, (int)r);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)r);
	else
		fuse_reply_buf(req, buf, (size_t)r);
	free(buf);
}

static void tfs_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct tfs_inode *inode = ino_get(req, ino);
	int r = attr_remove(req_fs(req), inode, name, fuse_req_ctx(req)->uid);

	if (r == 0 && is_ctl_name(name))
		kernel_inval_attr_sync(req_fs(req), inode);
	tierfs_reply_err(req, r);
}

static void tfs_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			  off_t offset, off_t length,
			  struct fuse_file_info *fi)
{
	struct tfs_inode *inode = ino_get(req, ino);
	struct ns_cred cred;

	if (inode->i_type != S_IFREG)
		return tierfs_reply_err(req, -ENODEV);
	if (offset < 0 || length <= 0)
		return tierfs_reply_err(req, -EINVAL);
	cred = req_cred(req);
	/* the kernel refreshes size and st_blocks after it, not the mode */
	if (ns_kill_suidgid_unflagged(req_fs(req), inode, &cred))
		kernel_inval_attr_sync(req_fs(req), inode);
	tierfs_reply_err(req, data_fallocate(req_fs(req), inode, mode,
					     (uint64_t)offset,
					     (uint64_t)length));
}

/* The most one copy_file_range reply can say was copied. */
#define COPY_RANGE_MAX ((size_t)UINT32_MAX & ~(size_t)4095)

static void tfs_copy_file_range(fuse_req_t req, fuse_ino_t ino_in,
				off_t off_in, struct fuse_file_info *fi_in,
				fuse_ino_t ino_out, off_t off_out,
				struct fuse_file_info *fi_out, size_t len,
				int flags)
{
	struct ns_cred cred = req_cred(req);
	ssize_t r;

	if (flags)
		return tierfs_reply_err(req, -EINVAL);
	/*
	 * The reply carries the length copied in 32 bits (fuse_write_out):
	 * copy at most that much, page-aligned, and let the caller loop as
	 * copy_file_range(2) allows for a short copy.  The request's length
	 * is 64 bits; Linux 6.18 itself asks for no more than this (checked
	 * with a 5 GiB copy: 4 GiB - 4 KiB copied either way), the protocol
	 * does not promise it.
	 */
	if (len > COPY_RANGE_MAX)
		len = COPY_RANGE_MAX;
	if (ns_kill_suidgid_unflagged(req_fs(req), ino_get(req, ino_out),
				      &cred))
		kernel_inval_attr_sync(req_fs(req), ino_get(req, ino_out));
	r = data_copy(req_fs(req), ino_get(req, ino_in), (uint64_t)off_in,
		      ino_get(req, ino_out), (uint64_t)off_out, len);
	if (r < 0)
		return tierfs_reply_err(req, (int)r);
	fuse_reply_write(req, (size_t)r);
}

static void tfs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		      struct fuse_file_info *fi)
{
	uint64_t res;
	int r;

	if (whence != SEEK_DATA && whence != SEEK_HOLE)
		return tierfs_reply_err(req, -EINVAL);
	/*
	 * With the writeback cache the kernel may hold data (and a size)
	 * that has not reached us, and it does not write it back before
	 * asking: our answer could call written data a hole, or say ENXIO
	 * inside the file.  ENOSYS makes the kernel answer SEEK_DATA and
	 * SEEK_HOLE itself from then on, treating the whole file as data,
	 * which POSIX allows.  NEEDSWORK: sparse-aware answers for files
	 * with no cached writer.
	 */
	if (req_fs(req)->writeback)
		return tierfs_reply_err(req, -ENOSYS);
	if (off < 0)
		return tierfs_reply_err(req, -ENXIO);
	r = data_lseek(req_fs(req), ino_get(req, ino), (uint64_t)off, whence,
		       &res);
	if (r < 0)
		return tierfs_reply_err(req, r);
	fuse_reply_lseek(req, (off_t)res);
}

const struct fuse_lowlevel_ops tierfs_ops = {
	.init = tfs_init,
	.destroy = tfs_destroy,
	.lookup = tfs_lookup,
	.forget = tfs_forget,
	.forget_multi = tfs_forget_multi,
	.getattr = tfs_getattr,
	.setattr = tfs_setattr,
	.readlink = tfs_readlink,
	.mknod = tfs_mknod,
	.mkdir = tfs_mkdir,
	.symlink = tfs_symlink,
	.unlink = tfs_unlink,
	.rmdir = tfs_rmdir,
	.rename = tfs_rename,
	.link = tfs_link,
	.create = tfs_create,
	.open = tfs_open,
	.read = tfs_read,
	.write = tfs_write,
	.flush = tfs_flush,
	.release = tfs_release,
	.fsync = tfs_fsync,
	.opendir = tfs_opendir,
	.readdir = tfs_readdir,
	.readdirplus = tfs_readdirplus,
	.releasedir = tfs_releasedir,
	.fsyncdir = tfs_fsyncdir,
	.statfs = tfs_statfs,
	.setxattr = tfs_setxattr,
	.getxattr = tfs_getxattr,
	.listxattr = tfs_listxattr,
	.removexattr = tfs_removexattr,
	.fallocate = tfs_fallocate,
	.copy_file_range = tfs_copy_file_range,
	.lseek = tfs_lseek,
};
