// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tierstress.c -- random writes, reads and hole punches on several files
 * at once, every read checked against a model of what must be there.
 *
 *     tierstress [OPTIONS] FILE...
 *
 * The files must exist already and hold zeros (a fresh ftruncate); their
 * sizes are taken at start and must not change.  Each file is cut into
 * stripes of -S bytes (4K aligned); stripe k belongs to worker
 * k % (threads * processes), so workers never touch the same page, while
 * stripes smaller than an extent make neighbouring workers share extents
 * (and the migrator moves extents under all of them).  The model holds,
 * per byte, the seed of the last write there (0: zero, after a punch or
 * never written); data is the position-dependent pattern of common.h, so
 * a byte read from a wrong place, a stale extent or a lost write is a
 * mismatch at a precise offset.
 *
 * File i is used with O_DIRECT (4K aligned ranges) when i is even and
 * through the page cache (any byte range) when i is odd; before half of
 * the buffered reads the worker drops its own stripe from the page cache
 * (POSIX_FADV_DONTNEED) so that the read reaches the daemon.  Mixing the
 * two modes on one file is avoided on purpose: the kernel does not keep
 * concurrent direct and buffered I/O coherent, and that is not tierfs's
 * fault.
 *
 *   -j N      threads per process (default 2)
 *   -P I/N    this process is group I of N (default 0/1)
 *   -n OPS    operations per thread (default 2000)
 *   -S SIZE   stripe size (default 24K; multiple of 4K)
 *   -s SEED   random seed (default 1; combined with the worker number)
 *   -V N      rounds of the final check, 0.5 s apart (default 1), so that
 *             the migrator moves data between them
 *
 * Mix per operation: 55% write, 38% read + verify, 5% punch a hole, 2%
 * fsync.  At the end each worker reads back all its stripes of every
 * file with O_DIRECT and checks them.
 *
 * Output: "OK ops=N writes=N reads=N punches=N bytes_written=B
 * bytes_read=B" and exit 0, or one line "MISMATCH ...", "ERR ..." and
 * exit 1.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

#define MAX_FILES 16
#define PAGE 4096

struct file {
	const char *path;
	uint64_t size;
	int fd_direct; /* O_DIRECT fd: even files, and the final check */
	int fd_buf;    /* buffered fd: odd files */
	uint8_t *model; /* seed per byte; each byte owned by one worker */
};

static struct file files[MAX_FILES];
static int nfiles;
static int nthreads = 2, pidx, pcount = 1;
static uint64_t nops = 2000, stripe = 24 * 1024, seed0 = 1;
static int vrounds = 1;

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool failed;
static atomic_uint_fast64_t st_ops, st_writes, st_reads, st_punches,
	st_wbytes, st_rbytes;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	if (!failed) {
		failed = true;
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
		fflush(stdout);
	}
	pthread_mutex_unlock(&out_lock);
}

/* xorshift64*: per-thread, reproducible */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

/* expected bytes of [off, off+len) of @f from the model */
static void expected(const struct file *f, uint64_t off, size_t len,
		     unsigned char *buf)
{
	size_t i = 0;

	while (i < len) {
		uint8_t s = f->model[off + i];
		size_t j = i + 1;

		while (j < len && f->model[off + j] == s)
			j++;
		if (s == 0)
			memset(buf + i, 0, j - i);
		else
			t_pat_fill(buf + i, off + i, j - i, s);
		i = j;
	}
}

static bool do_pwrite(int fd, const unsigned char *buf, size_t len,
		      uint64_t off, const char *path)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pwrite(fd, buf + got, len - got, (off_t)(off + got));

		if (r <= 0) {
			report("ERR write %s at %" PRIu64 " len %zu of %s",
			       r < 0 ? t_errname(errno) : "returned 0",
			       off + got, len - got, path);
			return false;
		}
		got += (size_t)r;
	}
	return true;
}

static bool do_pread(int fd, unsigned char *buf, size_t len, uint64_t off,
		     const char *path)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, buf + got, len - got, (off_t)(off + got));

		if (r <= 0) {
			report("ERR read %s at %" PRIu64 " len %zu of %s",
			       r < 0 ? t_errname(errno) : "hit EOF",
			       off + got, len - got, path);
			return false;
		}
		got += (size_t)r;
	}
	return true;
}

static bool verify(const struct file *f, int fd, uint64_t off, size_t len,
		   unsigned char *buf, unsigned char *want, const char *what,
		   uint64_t op)
{
	if (!do_pread(fd, buf, len, off, f->path))
		return false;
	expected(f, off, len, want);
	if (memcmp(buf, want, len)) {
		for (size_t i = 0; i < len; i++)
			if (buf[i] != want[i]) {
				report("MISMATCH %s of %s at %" PRIu64
				       " got 0x%02x want 0x%02x (model seed %u, op %" PRIu64
				       ", range %" PRIu64 "+%zu)",
				       what, f->path, off + i, buf[i], want[i],
				       f->model[off + i], op, off, len);
				break;
			}
		return false;
	}
	return true;
}

static void *worker(void *arg)
{
	int w = pidx * nthreads + (int)(intptr_t)arg;
	int nw = pcount * nthreads;
	uint64_t rs = t_mix64(seed0 * 1000003u + (uint64_t)w + 1) | 1;
	unsigned char *buf, *want;

	if (posix_memalign((void **)&buf, PAGE, stripe) ||
	    posix_memalign((void **)&want, PAGE, stripe)) {
		report("ERR out of memory");
		return NULL;
	}
	for (uint64_t op = 0; op < nops && !failed; op++) {
		struct file *f = &files[rnd_below(&rs, (uint64_t)nfiles)];
		bool direct = (f - files) % 2 == 0;
		int fd = direct ? f->fd_direct : f->fd_buf;
		uint64_t nstripes = f->size / stripe;
		uint64_t mine = nstripes / (uint64_t)nw +
				((uint64_t)w < nstripes % (uint64_t)nw);
		uint64_t s, start, off, len;
		unsigned kind = (unsigned)rnd_below(&rs, 100);

		if (mine == 0)
			continue;
		s = rnd_below(&rs, mine) * (uint64_t)nw + (uint64_t)w;
		start = s * stripe;
		if (direct) {
			uint64_t pages = stripe / PAGE;
			uint64_t a = rnd_below(&rs, pages);

			off = start + a * PAGE;
			len = (1 + rnd_below(&rs, pages - a)) * PAGE;
		} else {
			uint64_t a = rnd_below(&rs, stripe);

			off = start + a;
			len = 1 + rnd_below(&rs, stripe - a);
		}
		atomic_fetch_add(&st_ops, 1);

		if (kind < 55) {
			uint8_t sd;

			do
				sd = (uint8_t)(1 + rnd_below(&rs, 255));
			while (sd == f->model[off] || sd == f->model[off + len - 1]);
			t_pat_fill(buf, off, (size_t)len, sd);
			if (!do_pwrite(fd, buf, (size_t)len, off, f->path))
				break;
			memset(f->model + off, sd, (size_t)len);
			atomic_fetch_add(&st_writes, 1);
			atomic_fetch_add(&st_wbytes, len);
		} else if (kind < 93) {
			if (!direct && (rnd(&rs) & 1))
				(void)posix_fadvise(fd, (off_t)start,
						    (off_t)stripe,
						    POSIX_FADV_DONTNEED);
			if (!verify(f, fd, off, (size_t)len, buf, want,
				    direct ? "direct read" : "buffered read",
				    op))
				break;
			atomic_fetch_add(&st_reads, 1);
			atomic_fetch_add(&st_rbytes, len);
		} else if (kind < 98) {
			if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      (off_t)off, (off_t)len)) {
				report("ERR punch %s at %" PRIu64 " len %" PRIu64
				       " of %s", t_errname(errno), off, len,
				       f->path);
				break;
			}
			memset(f->model + off, 0, (size_t)len);
			atomic_fetch_add(&st_punches, 1);
		} else {
			if (fsync(fd)) {
				report("ERR fsync %s of %s", t_errname(errno),
				       f->path);
				break;
			}
		}
	}
	/* final check of everything this worker owns, through the daemon */
	for (int round = 0; round < vrounds && !failed; round++) {
	if (round)
		usleep(500000);
	for (int i = 0; i < nfiles && !failed; i++) {
		struct file *f = &files[i];
		uint64_t nstripes = f->size / stripe;

		for (uint64_t s = (uint64_t)w; s < nstripes && !failed;
		     s += (uint64_t)nw)
			if (!verify(f, f->fd_direct, s * stripe, (size_t)stripe,
				    buf, want, "final direct read", nops))
				break;
	}
	}
	free(buf);
	free(want);
	return NULL;
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "j:P:n:S:s:V:")) != -1) {
		switch (opt) {
		case 'j':
			nthreads = atoi(optarg);
			break;
		case 'P':
			if (sscanf(optarg, "%d/%d", &pidx, &pcount) != 2 ||
			    pcount < 1 || pidx < 0 || pidx >= pcount)
				goto usage;
			break;
		case 'n':
			nops = t_size(optarg);
			break;
		case 'S':
			stripe = t_size(optarg);
			break;
		case 's':
			seed0 = t_size(optarg);
			break;
		case 'V':
			vrounds = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	nfiles = argc - optind;
	if (nfiles < 1 || nfiles > MAX_FILES || nthreads < 1 ||
	    stripe == 0 || stripe % PAGE)
		goto usage;
	for (int i = 0; i < nfiles; i++) {
		struct file *f = &files[i];
		struct stat st;

		f->path = argv[optind + i];
		f->fd_direct = open(f->path, O_RDWR | O_DIRECT);
		f->fd_buf = open(f->path, O_RDWR);
		if (f->fd_direct < 0 || f->fd_buf < 0 ||
		    fstat(f->fd_buf, &st)) {
			printf("ERR open %s: %s\n", f->path, t_errname(errno));
			return 1;
		}
		f->size = (uint64_t)st.st_size;
		if (f->size % stripe) {
			printf("ERR size of %s is not a multiple of the stripe\n",
			       f->path);
			return 1;
		}
		f->model = calloc(1, f->size ? f->size : 1);
		if (!f->model) {
			printf("ERR out of memory\n");
			return 1;
		}
	}

	pthread_t *th = calloc((size_t)nthreads, sizeof(*th));
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i)) {
			printf("ERR pthread_create\n");
			return 1;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < nfiles; i++) {
		if (close(files[i].fd_direct) || close(files[i].fd_buf))
			report("ERR close %s: %s", files[i].path,
			       t_errname(errno));
		free(files[i].model);
	}
	free(th);
	if (failed)
		return 1;
	printf("OK ops=%" PRIu64 " writes=%" PRIu64 " reads=%" PRIu64
	       " punches=%" PRIu64 " bytes_written=%" PRIu64
	       " bytes_read=%" PRIu64 "\n",
	       (uint64_t)st_ops, (uint64_t)st_writes, (uint64_t)st_reads,
	       (uint64_t)st_punches, (uint64_t)st_wbytes, (uint64_t)st_rbytes);
	return 0;

usage:
	fprintf(stderr, "usage: tierstress [-j N] [-P I/N] [-n OPS] [-S SIZE] "
			"[-s SEED] [-V N] FILE...\n");
	return 2;
}
