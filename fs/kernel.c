// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kernel.c -- kernel features past libfuse 3.14 (see kernel.h), and the
 * mount's bdi settings.
 *
 * Debian 12's libfuse 3.14 builds the INIT reply from a 32-bit
 * capability mask; the kernel here offers more, and two of them matter
 * to tierfs:
 *
 * - FUSE_HANDLE_KILLPRIV_V2: the kernel stops asking for
 *   security.capability before every write (it sets SB_NOSEC) and leaves
 *   clearing suid/sgid to us.  It tells us when: FUSE_WRITE_KILL_SUIDGID
 *   on a write and FATTR_KILL_SUIDGID on a truncate, both only for a
 *   caller without CAP_FSETID; on chown it drops the mode change it
 *   would otherwise send.  libfuse 3.14 passes neither flag to the
 *   handlers, so the read hook below keeps them for this thread.
 * - FUSE_DIRECT_IO_ALLOW_MMAP: a file opened write-through (when free
 *   space runs low, see kernel_space_low()) can still be mapped shared.
 *
 * The notifier (kernel_inval_attr()): one thread, started at INIT and
 * joined at destroy, drains a queue of node ids into
 * FUSE_NOTIFY_INVAL_INODE messages.  A handler must not send a
 * notification about its own inode itself: the kernel handles one by
 * looking the inode up (ilookup5()), which waits for an inode being
 * evicted, and eviction waits for the page writeback that may be the
 * very WRITE the handler is serving.  The notifier thread serves no
 * request and holds no lock while it writes, so it can wait safely.
 *
 * FUSE_PASSTHROUGH is not used: it hands the kernel one backing file per
 * open file, and a tierfs file's bytes live in extents on several tiers,
 * never in one file at the same offsets.  It would also exclude the
 * writeback cache for the whole mount.
 *
 * Longer than 700 lines for a reason: the one place that speaks the
 * kernel's FUSE protocol past libfuse 3.14 on /dev/fuse (INIT, the
 * splice reader, replies, notifications) and the bdi settings, which
 * share the raw protocol structs; FUSE over io_uring is kernel_uring.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_inc.h"
#include "kernel.h"
#include "kernel_i.h"
#include "kernel_req.h"
#include "kernel_uring.h"
#include "fdio.h"
#include "mountinfo.h"
#include "fs.h"
#include "log.h"
#include "macro.h"
#include "tsan.h"
#include "banned.h"


/*
 * The notifier.  One per process (there is one session).  @lock guards
 * the queue and the flags; @se is set by kernel_attach() before the loop
 * starts and read-only afterwards.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;	 /* queue no longer empty, or stop */
	struct fuse_session *se; /* kernel_attach() */
	uint64_t *q;		 /* lock; node ids to invalidate */
	size_t n, cap;		 /* lock */
	bool live;		 /* lock; thread running, queue open */
	bool stop;		 /* lock; the thread must exit */
	bool warned;		 /* lock; said once that memory ran out */
	pthread_t thread;	 /* valid while live */
} notifier = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
};

/*
 * Splice, on the /dev/fuse transport: every reader thread has a pipe,
 * and each request is spliced into it -- the kernel hands over a
 * WRITE's page-cache pages by reference, copying nothing -- and read
 * out of it again: whole, or for a WRITE carrying at least a page only
 * its two headers, the data staying in the pipe for the handler, who
 * reads it straight into tier memory (kernel_req_pipe(), data_src in
 * data.h).  One copy per written byte instead of two.
 *
 * libfuse 3.14 has a splice path of its own (write_buf), but it reads
 * the headers itself, past the read hook, so the flags noted above
 * would be lost; tierfs has no write_buf and libfuse never splices.  To
 * libfuse a request read here looks whole: the length it is told is
 * the request's, and the bytes past the headers of a WRITE whose data
 * stayed in the pipe are left as they were in its buffer (the handler
 * never looks at them; only tfs_write() gets such a request).
 *
 * A pipe must hold the largest request whole (splice_setup() sees to
 * it, at INIT); a thread whose pipe cannot be made that big reads as
 * before.  Off with --no-splice, and on the io_uring transport (its
 * /dev/fuse readers get only the odd FORGET or interrupt).
 *
 * Ownership: the pipe is its thread's; @held is set by the read hook
 * and cleared by the handler of the same request on the same thread.
 */
#define SPLICE_HDR (sizeof(struct fuse_in_header) + sizeof(struct fuse_write_in))
#define SPLICE_MIN (SPLICE_HDR + 4096) /* smaller: read it all at once */

static __thread struct {
	int r, w;    /* the pipe's ends, -1 until made */
	bool off;    /* this thread reads without it */
	size_t held; /* a WRITE's bytes still in the pipe */
} t_pipe = { -1, -1, false, 0 };

/* WRITEs whose data stayed in a pipe, and their bytes (stats). */
static struct {
	uint64_t writes, bytes;
} spliced;

uint64_t kernel_spliced_writes(uint64_t *ret_bytes)
{
	*ret_bytes = __atomic_load_n(&spliced.bytes, __ATOMIC_RELAXED);
	return __atomic_load_n(&spliced.writes, __ATOMIC_RELAXED);
}

static pthread_key_t pipe_key;
static pthread_once_t pipe_once = PTHREAD_ONCE_INIT;

static void pipe_close(void)
{
	if (t_pipe.r >= 0) {
		close(t_pipe.r);
		close(t_pipe.w);
	}
	t_pipe.r = t_pipe.w = -1;
	t_pipe.held = 0;
}

/* At thread exit (the key's value is just a marker). */
static void pipe_key_done(void *unused)
{
	(void)unused;
	pipe_close();
}

static void pipe_key_make(void)
{
	if (pthread_key_create(&pipe_key, pipe_key_done) != 0)
		log_err("cannot make a key for the splice pipes; a reader thread's pipe stays open when it exits");
}

/*
 * The size of every reader's pipe, set at INIT (splice_setup()), or 0:
 * no splice.  Atomic: readers that started before INIT read it.
 */
static int splice_pipe_size;

/*
 * At INIT: can a pipe hold the largest request?  The kernel splices a
 * request whole or fails it -- EIO to the program -- so a pipe needs a
 * slot per page of data, one more for a write that does not start on a
 * page, and one for the headers.  Without CAP_SYS_RESOURCE a pipe grows
 * to /proc/sys/fs/pipe-max-size (1 MiB, 256 slots) at most: then the
 * WRITEs are made to fit (*@max_write lowered to 254 pages), as long as
 * that leaves them at 64 KiB or more.
 */
static void splice_setup(struct tierfs *fs, uint32_t *max_write)
{
	long pg = sysconf(_SC_PAGESIZE);
	long want = (long)*max_write + 2 * pg;
	long slots;
	int fds[2], got;

	__atomic_store_n(&splice_pipe_size, 0, __ATOMIC_RELAXED);
	if (fs->opt.no_splice || (fs->kern_added & KFUSE_OVER_IO_URING) ||
	    pipe2(fds, O_CLOEXEC) < 0)
		return;
	if (fcntl(fds[1], F_SETPIPE_SZ, (int)want) < 0)
		(void)fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	got = fcntl(fds[1], F_GETPIPE_SZ);
	close(fds[0]);
	close(fds[1]);
	slots = got > 0 ? got / pg : 0;
	if (slots - 2 < 16) {
		log_debug("splice off: a pipe holds %d bytes", got);
		return;
	}
	if ((slots - 2) * pg < (long)*max_write)
		*max_write = (uint32_t)((slots - 2) * pg);
	__atomic_store_n(&splice_pipe_size, got, __ATOMIC_RELAXED);
	log_debug("splice on: pipes of %d bytes, writes up to %u", got,
		  *max_write);
}

/* This thread's pipe, made on first use (as large as splice_setup()
 * found one can be).  Return: true, or false when this thread reads. */
static bool pipe_ready(void)
{
	int want = __atomic_load_n(&splice_pipe_size, __ATOMIC_RELAXED);
	int fds[2], got;

	if (t_pipe.r >= 0)
		return true;
	if (t_pipe.off || !want)
		return false;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		t_pipe.off = true;
		return false;
	}
	got = fcntl(fds[1], F_SETPIPE_SZ, want);
	if (got < want) {
		/* the kernel fails a request that does not fit (EIO to the
		 * program): read instead */
		close(fds[0]);
		close(fds[1]);
		t_pipe.off = true;
		return false;
	}
	pthread_once(&pipe_once, pipe_key_make);
	(void)pthread_setspecific(pipe_key, &t_pipe);
	t_pipe.r = fds[0];
	t_pipe.w = fds[1];
	return true;
}

/* One request through the pipe, as described above; as read() returns. */
static ssize_t splice_request(int fd, char *buf, size_t len)
{
	const struct fuse_in_header *h = (const void *)buf;
	ssize_t n = splice(fd, NULL, t_pipe.w, NULL, len, 0);
	size_t first;
	int e;

	if (n < 0) {
		if (errno == EINVAL) {
			/* this fd cannot splice: read from now on */
			pipe_close();
			t_pipe.off = true;
			return read(fd, buf, len);
		}
		return -1;
	}
	first = (size_t)n < SPLICE_MIN ? (size_t)n : SPLICE_HDR;
	e = read_exact(t_pipe.r, buf, first);
	if (e < 0)
		goto broken;
	if ((size_t)n > first) {
		if (h->opcode == FUSE_WRITE) {
			t_pipe.held = (size_t)n - first;
			__atomic_add_fetch(&spliced.writes, 1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&spliced.bytes, t_pipe.held,
					   __ATOMIC_RELAXED);
		} else {
			e = read_exact(t_pipe.r, buf + first,
				       (size_t)n - first);
			if (e < 0)
				goto broken;
		}
	}
	return n;
broken:
	log_err("cannot read a request back from its splice pipe: %s", strerror(-e));
	pipe_close();
	t_pipe.off = true;
	errno = -e;
	return -1;
}

bool kernel_req_pipe(int *ret_fd, size_t *ret_len)
{
	if (!t_pipe.held)
		return false;
	*ret_fd = t_pipe.r;
	*ret_len = t_pipe.held;
	return true;
}

void kernel_req_pipe_done(bool emptied)
{
	if (emptied)
		t_pipe.held = 0;
	else
		pipe_close(); /* a fresh one for the next request */
}

/*
 * The read hook: read one request, as libfuse would (through the pipe
 * above where it can), and note what 3.14 would drop.  errno is left as
 * read() set it.
 */
ssize_t kernel_io_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n;

	/* bytes a handler did not take never prefix the next request */
	if (t_pipe.held)
		pipe_close();
	if (len >= SPLICE_MIN && pipe_ready())
		n = splice_request(fd, buf, len);
	else
		n = read(fd, buf, len);

	TSAN_ACQUIRE(&kernel_tsan_sync);

	/* a failed read notes nothing: the flags and requester clear */
	kernel_note_request(userdata, buf, n >= 0 ? MIN((size_t)n, len) : 0,
			    KERNEL_QUEUE_DEV);
	return n;
}

/*
 * The writev hook: every reply goes out here.  Only the INIT reply is
 * changed: the flags kernel_init() chose are ORed into it (libfuse 3.14
 * already sets INIT_EXT and flags2 when the kernel offered INIT_EXT; we
 * set them again, which is harmless).
 */
ssize_t kernel_io_writev(int fd, struct iovec *iov, int count,
			 void *userdata)
{
	struct tierfs *fs = userdata;
	size_t uring_payload = 0;
	ssize_t r;

	TSAN_RELEASE(&kernel_tsan_sync);
	/* an OPEN or CREATE reply of a native file: its backing file */
	kernel_req_patch_reply(iov, count);
	/* a reply to a request that came over io_uring goes back there */
	if (kernel_uring_reply(iov, count, &r))
		return r;
	/* every reply of every worker looks: an atomic, so that the
	 * ordering with INIT is one TSan can see, not only the protocol's */
	if (__atomic_load_n(&fs->kern_init_pending, __ATOMIC_ACQUIRE) &&
	    count >= 2 &&
	    iov[0].iov_len >= sizeof(struct fuse_out_header)) {
		struct fuse_out_header *oh = iov[0].iov_base;

		if (oh->unique == fs->kern_init_unique) {
			uint64_t add = fs->kern_added;

			__atomic_store_n(&fs->kern_init_pending, false,
					 __ATOMIC_RELEASE);
			if (oh->error == 0 &&
			    iov[1].iov_len >= offsetof(struct fuse_init_out, flags2) + 4) {
				struct fuse_init_out *out = iov[1].iov_base;

				out->flags |= (uint32_t)add;
				if (add >> 32) {
					out->flags |= (uint32_t)KFUSE_INIT_EXT;
					out->flags2 |= (uint32_t)(add >> 32);
				}
				/* passthrough wants the stacking depth of its
				 * backing files: one (tmpfs, a disk's fs), in
				 * the field after flags2 (7.40) */
				if ((add & KFUSE_PASSTHROUGH) &&
				    iov[1].iov_len >= KFUSE_INIT_STACK_DEPTH_OFF + 4) {
					uint32_t one = 1;

					memcpy((char *)out + KFUSE_INIT_STACK_DEPTH_OFF,
					       &one, sizeof(one));
				}
				/* the kernel's largest payload, as it
				 * computes it for the ring */
				if (add & KFUSE_OVER_IO_URING) {
					uring_payload = MAX(
						(size_t)FUSE_MIN_READ_BUFFER,
						(size_t)out->max_write);
					if (out->flags & FUSE_MAX_PAGES)
						uring_payload = MAX(
							uring_payload,
							(size_t)out->max_pages *
								(size_t)sysconf(
									_SC_PAGESIZE));
				}
			} else {
				fs->kern_added = 0;
			}
		}
	}
	r = writev(fd, iov, count);
	/* the INIT reply is in: the kernel takes ring entries now */
	if (r >= 0 && uring_payload)
		(void)kernel_uring_start(fs, notifier.se, fd, uring_payload);
	return r;
}

int kernel_attach(struct fuse_session *se, struct tierfs *fs)
{
	static const struct fuse_custom_io io = {
		.read = kernel_io_read,
		.writev = kernel_io_writev,
	};
	int fd = fuse_session_fd(se);

	(void)fs; /* the hooks get it as the session's userdata */
	notifier.se = se;
	if (fd < 0)
		return -EBADF;
	if (fuse_session_custom_io(se, &io, fd) != 0)
		return -EINVAL;
	return 0;
}

/* Open /sys/class/bdi/MAJ:MIN/@name with fopen() @mode; NULL and errno. */
static FILE *bdi_open(dev_t dev, const char *name, const char *mode)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/%s", major(dev),
		 minor(dev), name);
	return fopen(path, mode);
}

/* Write @val to the bdi setting @name; 0 or -errno. */
static int bdi_write(dev_t dev, const char *name, uint64_t val)
{
	FILE *f = bdi_open(dev, name, "we");
	int r = 0;

	if (!f)
		return -errno;
	if (fprintf(f, "%llu\n", (unsigned long long)val) < 0)
		r = -EIO;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

/* Read the bdi setting @name into *@ret; 0 or -errno (*@ret untouched). */
static int bdi_read(dev_t dev, const char *name, uint64_t *ret)
{
	FILE *f = bdi_open(dev, name, "re");
	unsigned long long v;
	int r = 0;

	if (!f)
		return -errno;
	if (fscanf(f, "%llu", &v) == 1)
		*ret = v;
	else
		r = -EINVAL;
	(void)fclose(f);
	return r;
}

/*
 * Set the mount's bdi: readahead of 1 MiB requests (the kernel caps a
 * FUSE mount at 128 KiB whatever max_readahead says), and, with the
 * writeback cache, the most dirty page cache it may hold for us, which
 * is also the free-space reserve.  Needs root to change anything; an
 * unprivileged mount reads back what the kernel set (FUSE's default is
 * a strict limit of 1% of the dirty threshold) and reserves that.
 * Runs in its own thread because stat() of the mount point is a request
 * that this daemon must answer.
 */
/*
 * The device of our mount, from /proc/self/mountinfo: the last mount on
 * the mount point, if it is a FUSE one (an anonymous device, major 0).
 * Not by stat() or statfs() of the mount point: those are requests to
 * this daemon, and a thread of the daemon waiting for its own mount
 * keeps the process from ending when it is killed (the kernel ends the
 * connection only once the process has closed /dev/fuse); and two
 * lookups by path, with an unmount between them, once set the FUSE
 * limits (1 MB of dirty pages, strict) on the root disk under the
 * mount point.  Return: true and *@ret_dev, or false.
 */
static bool own_mount_dev(const char *mountpoint, dev_t *ret_dev)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	dev_t dev = 0;

	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_entry e;

		if (!mountinfo_parse(line, &e) ||
		    strcmp(e.mountpoint, mountpoint) != 0)
			continue;
		/* a later mount on the same point hides the earlier ones */
		found = e.dev_major == 0 && !strncmp(e.fstype, "fuse", 4);
		dev = makedev(e.dev_major, e.dev_minor);
	}
	free(line);
	fclose(f);
	if (found)
		*ret_dev = dev;
	return found;
}

static void *bdi_setup(void *arg)
{
	struct tierfs *fs = arg;
	dev_t dev;
	uint64_t have = 0;

	/* only a FUSE mount's bdi: never the disk's under a plain directory */
	if (!own_mount_dev(fs->opt.mountpoint, &dev))
		return NULL;
	(void)bdi_write(dev, "read_ahead_kb", TIERFS_MAX_IO / 1024);
	if (!fs->writeback)
		return NULL;
	/* strict: the limit holds for this bdi even below the global one */
	(void)bdi_write(dev, "strict_limit", 1);
	(void)bdi_write(dev, "max_bytes", fs->dirty_max);
	if (bdi_read(dev, "max_bytes", &have) == 0 && have > 0) {
		__atomic_store_n(&fs->dirty_reserve, have, __ATOMIC_RELAXED);
		log_debug("bdi %u:%u: dirty limit %llu bytes",
			  major(dev), minor(dev),
			  (unsigned long long)have);
	}
	return NULL;
}

/*
 * The notifier thread: take the whole queue, send it with no lock held,
 * repeat.  A failure for one inode is normal (-ENOENT: the kernel has
 * forgotten it, so it caches nothing to invalidate); anything else is
 * logged once per burst at debug level -- at unmount the device goes.
 */
static void *notifier_main(void *arg)
{
	pthread_mutex_lock(&notifier.lock);
	for (;;) {
		uint64_t *q;
		size_t n;

		while (!notifier.n && !notifier.stop)
			pthread_cond_wait(&notifier.wake, &notifier.lock);
		if (notifier.stop)
			break;
		q = notifier.q;
		n = notifier.n;
		notifier.q = NULL;
		notifier.n = notifier.cap = 0;
		pthread_mutex_unlock(&notifier.lock);
		for (size_t i = 0; i < n; i++) {
			int r = fuse_lowlevel_notify_inval_inode(
				notifier.se, (fuse_ino_t)q[i], -1, 0);

			if (r < 0 && r != -ENOENT)
				log_debug("cannot invalidate node %#llx: %s",
					  (unsigned long long)q[i],
					  strerror(-r));
		}
		free(q);
		pthread_mutex_lock(&notifier.lock);
	}
	pthread_mutex_unlock(&notifier.lock);
	return arg;
}

static void notifier_start(void)
{
	pthread_mutex_lock(&notifier.lock);
	if (notifier.se && !notifier.live) {
		notifier.stop = false;
		if (pthread_create(&notifier.thread, NULL, notifier_main,
				   NULL) == 0)
			notifier.live = true;
		else
			log_err("cannot start the notifier thread: attributes the daemon changes show late");
	}
	pthread_mutex_unlock(&notifier.lock);
}

static void notifier_stop(void)
{
	bool live;

	pthread_mutex_lock(&notifier.lock);
	live = notifier.live;
	notifier.live = false;
	notifier.stop = true;
	pthread_cond_signal(&notifier.wake);
	pthread_mutex_unlock(&notifier.lock);
	if (live)
		(void)pthread_join(notifier.thread, NULL);
	pthread_mutex_lock(&notifier.lock);
	free(notifier.q);
	notifier.q = NULL;
	notifier.n = notifier.cap = 0;
	pthread_mutex_unlock(&notifier.lock);
}

void kernel_inval_attr(struct tierfs *fs, struct tfs_inode *inode)
{
	/* the node id, as ops.c gives it to the kernel */
	uint64_t id = inode == fs->root ? FUSE_ROOT_ID : (uintptr_t)inode;

	pthread_mutex_lock(&notifier.lock);
	if (!notifier.live)
		goto out;
	/* the same inode twice in a row (a run of writes): once is enough */
	if (notifier.n && notifier.q[notifier.n - 1] == id)
		goto out;
	if (notifier.n == notifier.cap) {
		size_t cap = notifier.cap ? 2 * notifier.cap : 64;
		uint64_t *q = realloc(notifier.q, cap * sizeof(*q));

		if (!q) {
			/* the attribute timeout still bounds how long the
			 * kernel shows the old value */
			if (!notifier.warned)
				log_warn("cannot queue an attribute invalidation: out of memory");
			notifier.warned = true;
			goto out;
		}
		notifier.q = q;
		notifier.cap = cap;
	}
	notifier.q[notifier.n++] = id;
	if (notifier.n == 1)
		pthread_cond_signal(&notifier.wake);
out:
	pthread_mutex_unlock(&notifier.lock);
}

/*
 * FUSE_NOTIFY_INVAL_INODE for @inode, sent before it returns: offset -1
 * for the attributes only, else the cached pages of [@off, @off+@len)
 * too.  Nothing without a session or while the mount is stopping.
 */
static void inval_sync(struct tierfs *fs, struct tfs_inode *inode,
		       int64_t off, int64_t len)
{
	uint64_t id = inode == fs->root ? FUSE_ROOT_ID : (uintptr_t)inode;
	int r;

	/* live: between INIT and destroy; se never changes meanwhile */
	pthread_mutex_lock(&notifier.lock);
	if (!notifier.live) {
		pthread_mutex_unlock(&notifier.lock);
		return;
	}
	pthread_mutex_unlock(&notifier.lock);
	r = fuse_lowlevel_notify_inval_inode(notifier.se, (fuse_ino_t)id,
					     (off_t)off, (off_t)len);
	if (r < 0 && r != -ENOENT)
		log_debug("cannot invalidate node %#llx: %s",
			  (unsigned long long)id, strerror(-r));
}

void kernel_inval_attr_sync(struct tierfs *fs, struct tfs_inode *inode)
{
	inval_sync(fs, inode, -1, 0);
}

void kernel_inval_data_sync(struct tierfs *fs, struct tfs_inode *inode,
			    uint64_t off, uint64_t len)
{
	if (len == 0 || off > (uint64_t)INT64_MAX ||
	    len > (uint64_t)INT64_MAX - off)
		return;
	inval_sync(fs, inode, (int64_t)off, (int64_t)len);
}

/* Does the mount want native I/O?  io=native, or auto (native.h: the
 * choice auto makes). */
static bool native_wanted(const struct tierfs *fs)
{
	return fs->opt.io == IO_NATIVE ||
	       (fs->opt.io == IO_AUTO && KERNEL_IO_AUTO_NATIVE);
}

/* Has the calling thread CAP_SYS_ADMIN in its effective set?  What the
 * kernel wants of a server that registers backing files. */
static bool have_sys_admin(void)
{
	struct {
		uint32_t version;
		int pid;
	} hdr = { 0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0 };
	struct {
		uint32_t effective, permitted, inheritable;
	} data[2] = { { 0 } };

	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	return data[0].effective & (1u << 21 /* CAP_SYS_ADMIN */);
}

/* Why passthrough cannot be had on this mount, or NULL. */
static const char *passthrough_missing(const struct tierfs *fs)
{
	if (fs->opt.no_kernel_features)
		return "--no-kernel-features";
	if (!__atomic_load_n(&fs->kern_init_pending, __ATOMIC_ACQUIRE))
		return "the INIT request was not seen";
	if (!(fs->kern_offered & KFUSE_PASSTHROUGH))
		return "the kernel does not offer FUSE passthrough (Linux 6.9 and later, with CONFIG_FUSE_PASSTHROUGH)";
	if (!have_sys_admin())
		return "passthrough needs CAP_SYS_ADMIN (a root daemon)";
	return NULL;
}

int kernel_backing_open(int fd)
{
	struct kfuse_backing_map map = { .fd = fd };
	int dev = notifier.se ? fuse_session_fd(notifier.se) : -1;
	int id;

	if (dev < 0)
		return -ENODEV;
	id = ioctl(dev, KFUSE_DEV_IOC_BACKING_OPEN, &map);
	return id < 0 ? -errno : id;
}

void kernel_backing_close(int id)
{
	uint32_t v = (uint32_t)id;
	int dev = notifier.se ? fuse_session_fd(notifier.se) : -1;

	if (dev >= 0 && id > 0 &&
	    ioctl(dev, KFUSE_DEV_IOC_BACKING_CLOSE, &v) < 0)
		log_debug("cannot close backing file %d: %s", id,
			  strerror(errno));
}

void kernel_init(struct tierfs *fs, struct fuse_conn_info *conn)
{
	uint64_t add = 0;
	pthread_t t;

	kernel_stop(fs); /* a second INIT (tests) waits for the first */
	if (!fs->opt.no_kernel_features &&
	    __atomic_load_n(&fs->kern_init_pending, __ATOMIC_ACQUIRE)) {
		add = fs->kern_offered &
		      (KFUSE_HANDLE_KILLPRIV_V2 | KFUSE_DIRECT_IO_ALLOW_MMAP);
		if (fs->opt.transport != TRANSPORT_DEV)
			add |= fs->kern_offered & KFUSE_OVER_IO_URING;
	}
	if (fs->opt.transport == TRANSPORT_URING &&
	    !(add & KFUSE_OVER_IO_URING))
		log_err("transport=uring, but the kernel did not offer FUSE over io_uring%s; requests go over /dev/fuse",
			fs->opt.no_kernel_features ? " (--no-kernel-features)" : "");
	fs->passthrough = false;
	if (native_wanted(fs)) {
		const char *why = passthrough_missing(fs);

		if (why) {
			log_warn("io=native: %s; files go through the daemon (io=tiered)", why);
		} else {
			add |= KFUSE_PASSTHROUGH;
			fs->passthrough = true;
		}
	}
	fs->kern_added = add;
	fs->killpriv_v2 = add & KFUSE_HANDLE_KILLPRIV_V2;
	/* the kernel takes no passthrough with the writeback cache */
	fs->writeback = !fs->opt.no_writeback_cache && !fs->passthrough &&
			(conn->capable & FUSE_CAP_WRITEBACK_CACHE);
	if (fs->writeback)
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
	else
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	splice_setup(fs, &conn->max_write);
	log_debug("kernel offered %#llx; added %#llx; writeback cache %s; passthrough %s",
		  (unsigned long long)fs->kern_offered,
		  (unsigned long long)add, fs->writeback ? "on" : "off",
		  fs->passthrough ? "on" : "off");

	if (pthread_create(&t, NULL, bdi_setup, fs) == 0) {
		fs->bdi_thread = t;
		fs->bdi_thread_live = true;
	}
	notifier_start();
}

void kernel_stop(struct tierfs *fs)
{
	kernel_uring_stop();
	notifier_stop();
	if (!fs || !fs->bdi_thread_live)
		return;
	/* short-lived; after unmount its stat() of the mount point fails */
	(void)pthread_join(fs->bdi_thread, NULL);
	fs->bdi_thread_live = false;
}

bool kernel_space_low(struct tierfs *fs, uint64_t avail)
{
	uint64_t reserve;

	if (!fs->writeback)
		return false;
	/*
	 * Twice the limit: the kernel may overshoot it for a moment, and
	 * every file already open with the cache shares it.
	 */
	reserve = __atomic_load_n(&fs->dirty_reserve, __ATOMIC_RELAXED);
	return avail < 2 * reserve;
}
