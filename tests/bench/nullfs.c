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
 * Locking: one mutex guards the file table; the data buffer is written
 * without a lock (a benchmark's files never overlap in time).
 */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fuse_lowlevel.h>
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
};

static struct {
	pthread_mutex_t lock;
	struct nfile f[MAXFILES]; /* inode i + 2 is f[i] */
	char *buf;
	size_t size;
	int writeback;
	int splice; /* -o splice: WRITE data stays in a pipe (write_buf) */
} nfs = { .lock = PTHREAD_MUTEX_INITIALIZER };

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
	if (nfs.writeback && (conn->capable & FUSE_CAP_WRITEBACK_CACHE))
		conn->want |= FUSE_CAP_WRITEBACK_CACHE;
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
	if (ino != FUSE_ROOT_ID && (to_set & FUSE_SET_ATTR_SIZE))
		nfs.f[ino - 2].size = attr->st_size;
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
		nfs.f[i].used = true;
		nfs.f[i].size = 0;
		nfs.f[i].mode = mode & 07777;
	}
	e.ino = (fuse_ino_t)i + 2;
	fill_attr(e.ino, &e.attr);
	pthread_mutex_unlock(&nfs.lock);
	fi->keep_cache = 1;
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
	}
	pthread_mutex_unlock(&nfs.lock);
	fuse_reply_err(req, i >= 0 ? 0 : ENOENT);
}

static void n_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fi->keep_cache = 1;
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
		fprintf(stderr, "usage: nullfs [-o writeback] [-o splice] [-o size=BYTES] -f MOUNTPOINT\n");
		return 1;
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
