// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nullfs -- the ceiling of a FUSE server on this machine, for
 * fio-table.sh: a do-nothing filesystem with one directory level and
 * regular files whose data lives in one pre-faulted buffer shared by
 * all of them (a file's bytes land at buf[off mod size]), so that a
 * WRITE costs the kernel's copy into our request buffer and one memcpy,
 * and a READ one copy out, with nothing else.  Not a filesystem to keep
 * data in: every file shares the buffer.  Built by fio-table.sh at run
 * time:
 *
 *     cc -O2 -o nullfs nullfs.c $(pkg-config --cflags --libs fuse3)
 *     nullfs [-o writeback] [-o splice] [-o size=BYTES] -f MOUNTPOINT
 *
 * -o writeback asks for the kernel's writeback cache (as tierfs does);
 * without it every write(2) is a WRITE.  Requests: /dev/fuse, libfuse's
 * multithreaded loop (libfuse 3.14 has no io_uring transport).
 *
 * -o passthrough=DIR is the other ceiling: the kernel's own FUSE
 * passthrough (Linux 6.9+, CAP_SYS_ADMIN), which libfuse 3.14 cannot
 * ask for.  Each file gets a backing file in DIR (a tmpfs, for the
 * ceiling), registered with FUSE_DEV_IOC_BACKING_OPEN; INIT is answered
 * with FUSE_PASSTHROUGH and max_stack_depth 1 and every OPEN and CREATE
 * with FOPEN_PASSTHROUGH and the backing id, patched into libfuse's
 * replies by a writev hook (fuse_session_custom_io()), so that reads,
 * writes and mmap never reach this server; getattr and truncate go to
 * the backing file.  No writeback cache then (the kernel refuses both).
 *
 * Locking: one mutex guards the file table; the data buffer is written
 * without a lock (a benchmark's files never overlap in time).
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAXFILES 4096
#define ATTR_TIMEOUT 86400.0

struct nfile {
	char name[256];
	off_t size;
	mode_t mode;
	bool used;
	bool gone; /* unlinked: its inode number is never given out again
		    * (the kernel may still hold the old inode and its pages) */
	int fd;	     /* -o passthrough: the backing file, else -1 */
	int backing; /* ... and the kernel's id of it */
};

static struct {
	pthread_mutex_t lock;
	struct nfile f[MAXFILES]; /* inode i + 2 is f[i] */
	char *buf;
	size_t size;
	int writeback;
	int splice; /* -o splice: WRITE data stays in a pipe (write_buf) */
	char *pt_dir; /* -o passthrough=DIR */
	int pt_dirfd;
	int dev;      /* /dev/fuse, for the backing ioctls */
} nfs = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The kernel's passthrough interface (include/uapi/linux/fuse.h, 7.40),
 * which Debian 12's headers predate. */
struct pt_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define PT_IOC_BACKING_OPEN _IOW(229, 1, struct pt_backing_map)
#define PT_IOC_BACKING_CLOSE _IOW(229, 2, uint32_t)
#define PT_FOPEN_PASSTHROUGH (1u << 7)
#define PT_INIT_EXT (1u << 30)
#define PT_PASSTHROUGH_FLAGS2 (1u << (37 - 32))
/* offsets in fuse_init_out: flags, flags2, max_stack_depth */
#define PT_INIT_FLAGS 12
#define PT_INIT_FLAGS2 32
#define PT_INIT_DEPTH 36
#define PT_OPEN_OUT 16 /* sizeof(struct fuse_open_out), last in the reply */

/* set by a handler for the reply it is about to send on this thread */
static __thread bool t_init_reply;
static __thread int t_open_backing;

static ssize_t pt_read(int fd, void *buf, size_t len, void *ud)
{
	return read(fd, buf, len);
}

static ssize_t pt_writev(int fd, struct iovec *iov, int count, void *ud)
{
	int32_t err = -1;

	if (count >= 2 && iov[0].iov_len >= 16)
		memcpy(&err, (char *)iov[0].iov_base + 4, sizeof(err));
	if (t_init_reply && err == 0 && iov[1].iov_len >= PT_INIT_DEPTH + 4) {
		char *p = iov[1].iov_base;
		uint32_t f, one = 1;

		memcpy(&f, p + PT_INIT_FLAGS, 4);
		f |= PT_INIT_EXT;
		memcpy(p + PT_INIT_FLAGS, &f, 4);
		memcpy(&f, p + PT_INIT_FLAGS2, 4);
		f |= PT_PASSTHROUGH_FLAGS2;
		memcpy(p + PT_INIT_FLAGS2, &f, 4);
		memcpy(p + PT_INIT_DEPTH, &one, 4);
	}
	if (t_open_backing > 0 && err == 0 && iov[1].iov_len >= PT_OPEN_OUT) {
		char *p = (char *)iov[1].iov_base + iov[1].iov_len - PT_OPEN_OUT;
		uint32_t f;
		int32_t id = t_open_backing;

		memcpy(&f, p + 8, 4);
		f |= PT_FOPEN_PASSTHROUGH;
		memcpy(p + 8, &f, 4);
		memcpy(p + 12, &id, 4);
	}
	t_init_reply = false;
	t_open_backing = 0;
	return writev(fd, iov, count);
}

static void fill_attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return;
	}
	st->st_mode = S_IFREG | nfs.f[ino - 2].mode;
	st->st_nlink = 1;
	st->st_size = nfs.f[ino - 2].size;
	st->st_blocks = (st->st_size + 511) / 512;
	if (nfs.f[ino - 2].fd >= 0) {
		/* the kernel wrote the backing file itself */
		struct stat b;

		if (fstat(nfs.f[ino - 2].fd, &b) == 0) {
			st->st_size = b.st_size;
			st->st_blocks = b.st_blocks;
		}
	}
}

static int find(const char *name)
{
	for (int i = 0; i < MAXFILES; i++)
		if (nfs.f[i].used && !strcmp(nfs.f[i].name, name))
			return i;
	return -1;
}

static void reply_entry(fuse_req_t req, int i)
{
	struct fuse_entry_param e = { .ino = (fuse_ino_t)i + 2,
				      .attr_timeout = ATTR_TIMEOUT,
				      .entry_timeout = ATTR_TIMEOUT };

	fill_attr(e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

static void n_init(void *ud, struct fuse_conn_info *conn)
{
	if (nfs.writeback && !nfs.pt_dir &&
	    (conn->capable & FUSE_CAP_WRITEBACK_CACHE))
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
	t_init_reply = nfs.pt_dir != NULL;
	conn->max_write = 1 << 20;
}

static void n_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	int i;

	pthread_mutex_lock(&nfs.lock);
	i = parent == FUSE_ROOT_ID ? find(name) : -1;
	if (i < 0) {
		pthread_mutex_unlock(&nfs.lock);
		fuse_reply_err(req, ENOENT);
		return;
	}
	reply_entry(req, i);
	pthread_mutex_unlock(&nfs.lock);
}

static void n_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	pthread_mutex_lock(&nfs.lock);
	fill_attr(ino, &st);
	pthread_mutex_unlock(&nfs.lock);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void n_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		      int to_set, struct fuse_file_info *fi)
{
	struct stat st;

	pthread_mutex_lock(&nfs.lock);
	if (ino != FUSE_ROOT_ID && (to_set & FUSE_SET_ATTR_SIZE)) {
		nfs.f[ino - 2].size = attr->st_size;
		if (nfs.f[ino - 2].fd >= 0 &&
		    ftruncate(nfs.f[ino - 2].fd, attr->st_size) < 0) {
			pthread_mutex_unlock(&nfs.lock);
			fuse_reply_err(req, errno);
			return;
		}
	}
	if (ino != FUSE_ROOT_ID && (to_set & FUSE_SET_ATTR_MODE))
		nfs.f[ino - 2].mode = attr->st_mode & 07777;
	fill_attr(ino, &st);
	pthread_mutex_unlock(&nfs.lock);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

static void n_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e = { .attr_timeout = ATTR_TIMEOUT,
				      .entry_timeout = ATTR_TIMEOUT };
	int i;

	pthread_mutex_lock(&nfs.lock);
	i = find(name);
	if (i < 0) {
		for (i = 0; i < MAXFILES && (nfs.f[i].used || nfs.f[i].gone); i++)
			;
		if (i == MAXFILES || strlen(name) >= sizeof(nfs.f[i].name)) {
			pthread_mutex_unlock(&nfs.lock);
			fuse_reply_err(req, ENOSPC);
			return;
		}
		snprintf(nfs.f[i].name, sizeof(nfs.f[i].name), "%s", name);
		nfs.f[i].size = 0;
		nfs.f[i].mode = mode & 07777;
		nfs.f[i].fd = -1;
		if (nfs.pt_dir) {
			struct pt_backing_map map = { 0 };
			int fd = openat(nfs.pt_dirfd, name,
					O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC,
					0600);

			map.fd = fd;
			nfs.f[i].backing = fd < 0 ? -1 :
				ioctl(nfs.dev, PT_IOC_BACKING_OPEN, &map);
			if (nfs.f[i].backing < 0) {
				int e = errno;

				if (fd >= 0)
					close(fd);
				pthread_mutex_unlock(&nfs.lock);
				fuse_reply_err(req, e);
				return;
			}
			nfs.f[i].fd = fd;
		}
		nfs.f[i].used = true;
	}
	t_open_backing = nfs.f[i].fd >= 0 ? nfs.f[i].backing : 0;
	e.ino = (fuse_ino_t)i + 2;
	fill_attr(e.ino, &e.attr);
	pthread_mutex_unlock(&nfs.lock);
	/* the kernel takes no other open flag with FOPEN_PASSTHROUGH */
	fi->keep_cache = !t_open_backing;
	fuse_reply_create(req, &e, fi);
}

static void n_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	int i;

	pthread_mutex_lock(&nfs.lock);
	i = find(name);
	if (i >= 0) {
		nfs.f[i].used = false;
		nfs.f[i].gone = true;
		if (nfs.f[i].fd >= 0) {
			uint32_t id = (uint32_t)nfs.f[i].backing;

			/* open files keep their own reference */
			(void)ioctl(nfs.dev, PT_IOC_BACKING_CLOSE, &id);
			close(nfs.f[i].fd);
			(void)unlinkat(nfs.pt_dirfd, name, 0);
			nfs.f[i].fd = -1;
		}
	}
	pthread_mutex_unlock(&nfs.lock);
	fuse_reply_err(req, i >= 0 ? 0 : ENOENT);
}

static void n_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != FUSE_ROOT_ID) {
		pthread_mutex_lock(&nfs.lock);
		if (nfs.f[ino - 2].fd >= 0)
			t_open_backing = nfs.f[ino - 2].backing;
		pthread_mutex_unlock(&nfs.lock);
	}
	fi->keep_cache = !t_open_backing;
	fuse_reply_open(req, fi);
}

static void n_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	off_t fsize;

	pthread_mutex_lock(&nfs.lock);
	fsize = nfs.f[ino - 2].size;
	pthread_mutex_unlock(&nfs.lock);
	if (off >= fsize)
		size = 0;
	else if ((off_t)size > fsize - off)
		size = (size_t)(fsize - off);
	if ((size_t)off % nfs.size + size > nfs.size)
		size = nfs.size - (size_t)off % nfs.size;
	fuse_reply_buf(req, nfs.buf + (size_t)off % nfs.size, size);
}

static void n_write(fuse_req_t req, fuse_ino_t ino, const char *data,
		    size_t size, off_t off, struct fuse_file_info *fi)
{
	size_t at = (size_t)off % nfs.size;
	size_t n = size < nfs.size - at ? size : nfs.size - at;

	memcpy(nfs.buf + at, data, n);
	memcpy(nfs.buf, data + n, size - n);
	pthread_mutex_lock(&nfs.lock);
	if (off + (off_t)size > nfs.f[ino - 2].size)
		nfs.f[ino - 2].size = off + (off_t)size;
	pthread_mutex_unlock(&nfs.lock);
	fuse_reply_write(req, size);
}

/*
 * -o splice: libfuse splices a large WRITE from /dev/fuse into a pipe
 * (the kernel moves page references, it copies nothing) and hands us the
 * pipe; fuse_buf_copy() reads it into the buffer: one copy per byte.
 */
static void n_write_buf(fuse_req_t req, fuse_ino_t ino,
			struct fuse_bufvec *bufv, off_t off,
			struct fuse_file_info *fi)
{
	size_t size = fuse_buf_size(bufv);
	size_t at = (size_t)off % nfs.size;
	size_t n = size < nfs.size - at ? size : nfs.size - at;
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(n);
	ssize_t got;

	dst.buf[0].mem = nfs.buf + at;
	got = fuse_buf_copy(&dst, bufv, 0);
	if (got >= 0 && (size_t)got == n && n < size) {
		dst = (struct fuse_bufvec)FUSE_BUFVEC_INIT(size - n);
		dst.buf[0].mem = nfs.buf;
		got = fuse_buf_copy(&dst, bufv, 0);
		got = got < 0 ? got : (ssize_t)size;
	}
	if (got < 0) {
		fuse_reply_err(req, (int)-got);
		return;
	}
	pthread_mutex_lock(&nfs.lock);
	if (off + got > nfs.f[ino - 2].size)
		nfs.f[ino - 2].size = off + got;
	pthread_mutex_unlock(&nfs.lock);
	fuse_reply_write(req, (size_t)got);
}

static void n_ok(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void n_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		    struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void n_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	fuse_reply_buf(req, NULL, 0); /* fio never lists */
}

static struct fuse_lowlevel_ops ops = {
	.init = n_init,
	.lookup = n_lookup,
	.getattr = n_getattr,
	.setattr = n_setattr,
	.create = n_create,
	.unlink = n_unlink,
	.open = n_open,
	.read = n_read,
	.write = n_write,
	.flush = n_ok,
	.release = n_ok,
	.fsync = n_fsync,
	.opendir = n_open,
	.readdir = n_readdir,
	.releasedir = n_ok,
};

static const struct fuse_opt opts[] = {
	{ "writeback", offsetof(typeof(nfs), writeback), 1 },
	{ "splice", offsetof(typeof(nfs), splice), 1 },
	{ "size=%zu", offsetof(typeof(nfs), size), 0 },
	{ "passthrough=%s", offsetof(typeof(nfs), pt_dir), 0 },
	FUSE_OPT_END,
};

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts o;
	struct fuse_session *se;
	struct fuse_loop_config *cfg;
	int r = 1;

	nfs.size = (size_t)2 << 30;
	if (fuse_opt_parse(&args, &nfs, opts, NULL) < 0 ||
	    fuse_parse_cmdline(&args, &o) != 0 || !o.mountpoint) {
		fprintf(stderr, "usage: nullfs [-o writeback] [-o splice] [-o size=BYTES] [-o passthrough=DIR] -f MOUNTPOINT\n");
		return 1;
	}
	if (nfs.pt_dir) {
		nfs.pt_dirfd = open(nfs.pt_dir, O_DIRECTORY | O_RDONLY | O_CLOEXEC);
		if (nfs.pt_dirfd < 0) {
			perror("nullfs: -o passthrough");
			return 1;
		}
		nfs.size = 1 << 20; /* READ and WRITE never come */
	}
	/* pre-faulted: first-touch page faults are not part of a ceiling */
	nfs.buf = mmap(NULL, nfs.size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (nfs.buf == MAP_FAILED) {
		perror("nullfs: mmap");
		return 1;
	}
	if (nfs.splice)
		ops.write_buf = n_write_buf; /* libfuse then wants SPLICE_READ */
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se || fuse_set_signal_handlers(se) != 0 ||
	    fuse_session_mount(se, o.mountpoint) != 0)
		return 1;
	if (nfs.pt_dir) {
		static const struct fuse_custom_io io = {
			.read = pt_read,
			.writev = pt_writev,
		};

		nfs.dev = fuse_session_fd(se);
		if (fuse_session_custom_io(se, &io, nfs.dev) != 0)
			return 1;
	}
	(void)fuse_daemonize(o.foreground);
	cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(cfg, 64);
	r = fuse_session_loop_mt(se, cfg) < 0;
	fuse_loop_cfg_destroy(cfg);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	free(o.mountpoint);
	fuse_opt_free_args(&args);
	return r;
}
