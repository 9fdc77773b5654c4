// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier_file.c -- the file tier: slots in one sparse slab file in a
 * directory on any filesystem (NVMe, SSD, HDD, a parallel filesystem),
 * read and written through io_uring (uring.c).
 *
 * Layout: open makes a private directory PATH/tierfs-NAME-XXXXXX (0700)
 * holding a lock file (tier_private_dir_create()) and, unlinked, the
 * slab (0600): one file of vslots * extent_size bytes, made with
 * ftruncate() and so sparse: slot N is the byte range starting at
 * N * extent_size, and a slot never written costs no disk space.  The
 * slab has no name (O_TMPFILE, see tier_backing_open()): the kernel
 * frees it when the daemon exits, however it exits -- a kill -9 or an
 * OOM kill leaves no data behind, only the directory with its empty
 * lock file, which the next mount on PATH removes (tier_sweep_stale()).
 * Close removes the directory.  Tests reach the slab through
 * /proc/PID/fd (a link to "DIR/#INO (deleted)").
 *
 * Where the filesystem has no O_TMPFILE and cannot use a file unlinked
 * while open (GlusterFS's FUSE client answers with ESTALE), the slab
 * keeps its name, DIR/slab, for the whole mount: a killed daemon's data
 * then stays until the next mount on PATH sweeps the directory (its lock
 * is free), a clean unmount removes it.  See tier_backing_open().
 *
 * Apparent size: the slab is t->vslots slots long, one per allocation
 * unit of capacity (tier.h), so that a tier full of small extents still
 * has a slot for each -- with 1 MiB extents 256 times the tier's size
 * (a 2 GiB tier: a 512 GiB slab), capped at TIER_VIRT_MAX (4 TiB) or
 * what the filesystem takes (EFBIG, below).  Where the slab is visible
 * (a named slab; sshfs's .fuse_hiddenN, NFS's .nfsXXXX) ls shows that
 * size; the blocks it holds (du, df) exceed the data only by partly
 * written units and by what an extent growing front to back reserved
 * ahead (never more than that extent holds), since units are reserved
 * as an extent takes them and punched out when it is freed.
 *
 * Zeroing: a fresh slab reads as zeros; a freed slot's blocks are handed
 * back with FALLOC_FL_PUNCH_HOLE, after which it reads as zeros again.
 * Where the filesystem cannot punch holes, discard fails with
 * -EOPNOTSUPP and tier_slot_free() zeroes the slot by writing.
 *
 * Space: open checks that the configured size fits in the free space of
 * the filesystem at that moment, but reserves nothing (the file is
 * sparse): a unit's blocks are reserved when an extent takes it
 * (file_reserve()), an extent that grows front to back a few steps
 * ahead (tier_charge(), ops->reserve_ahead).  So the tier shares the filesystem's free space
 * (t->dev_shared): tier.c caps its free slots by statvfs().
 *
 * Errors: a -errno from the kernel (cqe->res) is returned as is.  A read
 * that meets end of file -- only possible if someone truncated the slab
 * behind our back -- fails with -EIO rather than inventing zeros for
 * data that was lost.  Removing the private directory changes nothing:
 * the open fd keeps the data.
 *
 * Threads: every field of struct file_priv is immutable after open except
 * the no_punch and no_dio flags; reads and writes are positional on one shared fd,
 * and each calling thread uses its own ring (see uring.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tier.h"
#include "tier_ops.h"
#include "uring.h"
#include "macro.h"
#include "banned.h"

/* The bounce pool's buffers (struct file_priv): their size, the largest
 * request the daemon makes (TIERFS_MAX_IO), and how many at most. */
#define DIO_BOUNCE_MAX (1u << 20)
#define DIO_POOL_MAX 8u

struct file_priv {
	int fd;	     /* the slab file; immutable after open */
	int lock_fd; /* the private directory's lock; immutable after open */
	char *dir;   /* private directory; immutable after open */
	/*
	 * Set once punching a hole failed with EOPNOTSUPP, so later discards
	 * skip straight to the caller's zero-by-writing fallback.  Relaxed
	 * atomic: a racing thread that misses it makes one more failing
	 * fallocate() call, which is harmless.
	 */
	bool no_punch;
	/*
	 * @dio_fd: the slab opened again with O_DIRECT, for bulk copies
	 * (tier_bulk(), tier.h) aligned to DIO_ALIGN; -1 where the
	 * filesystem refuses O_DIRECT.  Immutable after open.  @no_dio: set
	 * once a direct request failed with EINVAL (an alignment the
	 * filesystem wants larger than DIO_ALIGN): later requests use @fd.
	 * Relaxed atomic, like no_punch.
	 */
	int dio_fd;
	bool no_dio;
	/*
	 * The bounce pool (dio_bounce_get()).  A bulk request aligned in the
	 * slab and in length but not in memory (a FUSE request's payload
	 * follows its header: --page-cache only) goes direct through one of
	 * at most DIO_POOL_MAX aligned buffers of DIO_BOUNCE_MAX, made when
	 * first needed and kept until close: one memcpy, against a second
	 * copy of the bytes in the slab's page cache.  A request that finds
	 * them all in use waits for one; the pool is this tier's, so a hung
	 * tier holds up only its own requests.  pool_lock guards pool[]
	 * (the free buffers), pool_free and pool_made; pool_cond signals a
	 * buffer given back.
	 */
	pthread_mutex_t pool_lock;
	pthread_cond_t pool_cond;
	void *pool[DIO_POOL_MAX];
	unsigned pool_free, pool_made;
};

/*
 * The page cache of the slab (issue 18): requests from programs go
 * through it -- it gathers 4 KiB writes, and it is the first memory the
 * kernel reclaims -- but the migrator's copies do not (tier_bulk()), nor
 * do programs' requests under --page-cache only, whose bytes the
 * mount's page cache holds already.  A
 * promotion read through it would leave a third copy of data now in RAM
 * (the tier's and the mount's page cache); a demotion written through
 * it would move the memory it frees into dirty page cache.  Direct I/O
 * needs buffer, offset and length aligned to the device's logical block
 * (STATX_DIOALIGN, which glibc 2.36's struct statx lacks): 4 KiB covers
 * every disk tierfs is put on; a filesystem that wants more says EINVAL
 * once and gets buffered requests from then on.
 */
#define DIO_ALIGN 4096u
/* Smaller bulk requests stay buffered: a direct write waits for the
 * device, and a drain of many 4 KiB files would wait once per file. */
#define DIO_MIN (64u << 10)


static inline uint64_t slot_offset(const struct tier *t, uint32_t slot)
{
	return (uint64_t)slot << t->extent_shift;
}


/* Undo what file_open() did, however far it got.  Accepts NULL. */
static void file_priv_free(struct file_priv *p)
{
	if (!p)
		return;
	if (p->dio_fd >= 0)
		(void)close(p->dio_fd);
	if (p->fd >= 0)
		(void)close(p->fd);
	/* may be gone already if someone removed it: fine */
	tier_private_dir_remove(p->dir, p->lock_fd);
	/* every buffer is back: no request runs at close */
	for (unsigned i = 0; i < p->pool_free; i++)
		free(p->pool[i]);
	pthread_cond_destroy(&p->pool_cond);
	pthread_mutex_destroy(&p->pool_lock);
	free(p->dir);
	free(p);
}

/* The slab @fd opened again for direct I/O, or -1 (no O_DIRECT here).
 * Through /proc: the slab may have no name. */
static int dio_open(int fd)
{
	char path[64];

	(void)snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
}

/* A free pool buffer of @p (file_priv), waiting while all are in use;
 * NULL only when none can be made (no memory: the caller goes
 * buffered). */
static void *dio_bounce_get(struct file_priv *p)
{
	void *d = NULL;
	bool make = false;

	pthread_mutex_lock(&p->pool_lock);
	while (!p->pool_free && p->pool_made == DIO_POOL_MAX)
		pthread_cond_wait(&p->pool_cond, &p->pool_lock);
	if (p->pool_free)
		d = p->pool[--p->pool_free];
	else
		make = true, p->pool_made++;
	pthread_mutex_unlock(&p->pool_lock);
	if (make && posix_memalign(&d, DIO_ALIGN, DIO_BOUNCE_MAX)) {
		d = NULL;
		pthread_mutex_lock(&p->pool_lock);
		p->pool_made--;
		pthread_cond_signal(&p->pool_cond);
		pthread_mutex_unlock(&p->pool_lock);
	}
	return d;
}

/* Give back a buffer of dio_bounce_get(); accepts NULL. */
static void dio_bounce_put(struct file_priv *p, void *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&p->pool_lock);
	p->pool[p->pool_free++] = d;
	pthread_cond_signal(&p->pool_cond);
	pthread_mutex_unlock(&p->pool_lock);
}

/* The fd for a request: @p->dio_fd for a bulk copy of at least DIO_MIN
 * that fits its alignment, else the buffered one; *@ret_bounce: the
 * pool buffer to go through when only @buf is not aligned (NULL: @buf
 * itself), for the caller to give back (dio_bounce_put()). */
static int pick_fd(struct file_priv *p, const void *buf, size_t len,
		   uint64_t pos, void **ret_bounce)
{
	*ret_bounce = NULL;
	if (p->dio_fd < 0 || len < DIO_MIN || !tier_bulk() ||
	    __atomic_load_n(&p->no_dio, __ATOMIC_RELAXED) ||
	    ((len | pos) & (DIO_ALIGN - 1)))
		return p->fd;
	if (!((uintptr_t)buf & (DIO_ALIGN - 1)))
		return p->dio_fd;
	if (len > DIO_BOUNCE_MAX)
		return p->fd;
	*ret_bounce = dio_bounce_get(p);
	return *ret_bounce ? p->dio_fd : p->fd;
}

/* A direct request refused for its alignment: never again, and this one
 * buffered.  Return: whether to retry on the buffered fd. */
static bool dio_refused(struct file_priv *p, int fd, ssize_t r)
{
	if (fd != p->dio_fd || r != -EINVAL)
		return false;
	__atomic_store_n(&p->no_dio, true, __ATOMIC_RELAXED);
	return true;
}

static int file_open(struct tier *t)
{
	uint64_t len = slot_offset(t, t->vslots);
	struct file_priv *p;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->fd = -1;
	p->dio_fd = -1;
	pthread_mutex_init(&p->pool_lock, NULL);
	pthread_cond_init(&p->pool_cond, NULL);
	r = tier_backing_prepare(t, &p->dir, &p->lock_fd);
	if (r < 0)
		goto err_free;
	p->fd = tier_backing_open(p->dir);
	if (p->fd < 0) {
		r = p->fd;
		goto err_free;
	}
	while (ftruncate(p->fd, (off_t)len) < 0 && errno == EFBIG &&
	       t->vslots > t->nslots) {
		/* past this filesystem's largest file: half as many slots,
		 * down to one per extent of capacity */
		t->vslots = MAX(t->vslots / 2, t->nslots);
		len = slot_offset(t, t->vslots);
	}
	if (ftruncate(p->fd, (off_t)len) < 0) {
		r = -errno; /* EFBIG: beyond this filesystem's file size */
		goto err_free;
	}
	p->dio_fd = dio_open(p->fd);
	t->priv = p;
	t->dev_shared = true;
	return 0;

err_free:
	file_priv_free(p);
	return r;
}

static void file_close(struct tier *t)
{
	file_priv_free(t->priv);
	t->priv = NULL;
}

static ssize_t file_read(struct tier *t, uint32_t slot, uint64_t off, void *buf,
			 size_t len)
{
	struct file_priv *p = t->priv;
	uint64_t pos = slot_offset(t, slot) + off;
	void *bounce;
	int fd = pick_fd(p, buf, len, pos, &bounce);
	ssize_t r = uring_pread(fd, bounce ? bounce : buf, len, pos);

	if (dio_refused(p, fd, r))
		r = uring_pread(p->fd, buf, len, pos);
	else if (bounce && r > 0)
		memcpy(buf, bounce, (size_t)r);
	dio_bounce_put(p, bounce);
	return r;
}

static ssize_t file_write(struct tier *t, uint32_t slot, uint64_t off,
			  const void *buf, size_t len)
{
	struct file_priv *p = t->priv;
	uint64_t pos = slot_offset(t, slot) + off;
	void *bounce;
	int fd = pick_fd(p, buf, len, pos, &bounce);
	ssize_t r;

	if (bounce)
		memcpy(bounce, buf, len);
	r = uring_pwrite(fd, bounce ? bounce : buf, len, pos);
	dio_bounce_put(p, bounce);
	if (dio_refused(p, fd, r))
		r = uring_pwrite(p->fd, buf, len, pos);
	return r;
}

static int file_discard(struct tier *t, uint32_t slot, uint64_t off,
			uint64_t len)
{
	struct file_priv *p = t->priv;
	int r;

	if (__atomic_load_n(&p->no_punch, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	do {
		r = fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)(slot_offset(t, slot) + off), (off_t)len);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	r = -errno;
	if (r == -EOPNOTSUPP || r == -ENOSYS) {
		__atomic_store_n(&p->no_punch, true, __ATOMIC_RELAXED);
		r = -EOPNOTSUPP;
	}
	return r; /* tier_slot_free() then zeroes the slot by writing */
}

static int file_discard_run(struct tier *t, uint32_t first, uint32_t n)
{
	struct file_priv *p = t->priv;
	int r;

	if (__atomic_load_n(&p->no_punch, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	do {
		r = fallocate(p->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)slot_offset(t, first),
			      (off_t)((uint64_t)n << t->extent_shift));
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	r = -errno;
	/* as file_discard(): a filesystem that cannot punch is asked once */
	if (r == -EOPNOTSUPP || r == -ENOSYS) {
		__atomic_store_n(&p->no_punch, true, __ATOMIC_RELAXED);
		r = -EOPNOTSUPP;
	}
	return r; /* the caller falls back per slot */
}

/*
 * Reserve the blocks of a freshly allocated slot, so that no write into
 * it can later fail for want of space: a device that fills up below the
 * tier's configured size then shows up here, as -ENOSPC at allocation,
 * and the new extent goes to the next tier instead -- not as a failed
 * overwrite that leaves an extent half old, half new.
 */
static int file_reserve(struct tier *t, uint32_t slot, uint64_t off,
			uint64_t len)
{
	struct file_priv *p = t->priv;
	int r;

	do {
		r = fallocate(p->fd, 0, (off_t)(slot_offset(t, slot) + off),
			      (off_t)len);
	} while (r < 0 && errno == EINTR);
	if (r == 0)
		return 0;
	/* a filesystem without fallocate: carry on unreserved */
	if (errno == EOPNOTSUPP || errno == ENOSYS)
		return 0;
	/* the filesystem's own quota (Lustre, CephFS, NFS): for us the
	 * medium is full, not a tierfs quota -- spill to the next tier */
	if (errno == EDQUOT)
		return -ENOSPC;
	return -errno;
}

static int file_sync(struct tier *t)
{
	struct file_priv *p = t->priv;

	/* the slab's size never changes: data is all fdatasync() needs */
	if (fdatasync(p->fd) < 0)
		return -errno;
	return 0;
}

/*
 * A native file's backing file (issue 33, tier.h): nameless, in the
 * private directory, so that the kernel frees it with its last
 * descriptor however the daemon ends.  Where the filesystem has no
 * O_TMPFILE the tier holds no native files (-EOPNOTSUPP): a named one
 * would outlive a killed daemon.  Its space is the filesystem's, shared
 * with the slab: fs/ accounts what it holds (tier_native_account()).
 */
static int file_native_new(struct tier *t)
{
	struct file_priv *p = t->priv;
	int fd = open(p->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd < 0)
		return errno == EISDIR || errno == EINVAL || errno == ENOENT
			       ? -EOPNOTSUPP
			       : -errno;
	/* open() honours the umask */
	if (fchmod(fd, 0600) < 0) {
		int r = -errno;

		(void)close(fd);
		return r;
	}
	return fd;
}

const struct tier_ops tier_file_ops = {
	.version = TIER_OPS_VERSION,
	.kind_name = "file",
	.caps = TIER_CAP_PATH | TIER_CAP_CSUM,
	.sparse = true,
	.reserve_ahead = true,
	.open = file_open,
	.close = file_close,
	.read = file_read,
	.write = file_write,
	.discard = file_discard,
	.discard_run = file_discard_run,
	.reserve = file_reserve,
	.sync = file_sync,
	.native_new = file_native_new,
};
