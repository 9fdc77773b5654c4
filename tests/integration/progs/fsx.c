// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsx.c -- a small file system exerciser in the spirit of fsx-linux: apply
 * the same random operations to a file on the file system under test and to
 * a reference file (on tmpfs), and compare after each step.
 *
 *     fsx [-n OPS] [-s SEED] [-m MAXSIZE] [-l MAXLEN] [-o OPS] TEST REF
 *
 *   -o OPS  which operations, letters of: w (pwrite), r (pread+compare),
 *           t (ftruncate), p (punch hole), a (fallocate 0 / KEEP_SIZE),
 *           z (zero range), default "wrtpa"
 *
 * Offsets and lengths are random and unaligned, biased towards multiples
 * and near-multiples of 4K and 64K so that extent edges get hit often.
 * The whole file is compared every 32 operations and at the end.  Output:
 * "OK" or a description of the first difference plus the last operations.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/falloc.h>

#include "common.h"

static uint64_t rng_state;
static uint64_t rnd(void)
{
	rng_state += 0x9e3779b97f4a7c15ULL;
	return t_mix64(rng_state);
}

static uint64_t maxsize = 4 << 20, maxlen = 256 << 10;
static int tfd, rfd;
#define LOGN 16
static char oplog[LOGN][96];
static unsigned long opno;

static void logop(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logop(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(oplog[opno % LOGN], sizeof(oplog[0]), fmt, ap);
	va_end(ap);
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL op %lu: ", opno);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\nlast operations:\n");
	for (unsigned long i = opno >= LOGN ? opno - LOGN + 1 : 0; i <= opno;
	     i++)
		printf("  %lu: %s\n", i, oplog[i % LOGN]);
	exit(1);
}

/* offsets near interesting boundaries */
static uint64_t pick_off(uint64_t limit)
{
	uint64_t v;

	if (limit == 0)
		return 0;
	switch (rnd() % 4) {
	case 0: /* near a 64K boundary */
		v = (rnd() % (limit / 65536 + 1)) * 65536;
		v += (rnd() % 9) - 4;
		break;
	case 1: /* near a 4K boundary */
		v = (rnd() % (limit / 4096 + 1)) * 4096;
		v += (rnd() % 3) - 1;
		break;
	default:
		v = rnd() % limit;
	}
	if ((int64_t)v < 0)
		v = 0;
	return v > limit ? limit : v;
}

static uint64_t pick_len(void)
{
	switch (rnd() % 4) {
	case 0:
		return 1 + rnd() % 16;
	case 1:
		return ((rnd() % (maxlen / 4096)) + 1) * 4096;
	default:
		return 1 + rnd() % maxlen;
	}
}

static uint64_t fsize(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		die("fstat: %s", t_errname(errno));
	return (uint64_t)st.st_size;
}

static void full_pread(int fd, unsigned char *buf, size_t len, uint64_t off,
		       const char *which)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, buf + got, len - got, (off_t)(off + got));

		if (r < 0)
			die("pread %s off %" PRIu64 ": %s", which, off + got,
			    t_errname(errno));
		if (r == 0) {
			memset(buf + got, 0xee, len - got);
			return;
		}
		got += (size_t)r;
	}
}

static void compare(uint64_t off, uint64_t len)
{
	static unsigned char *a, *b;
	static size_t cap;
	uint64_t ts = fsize(tfd), rs = fsize(rfd);

	if (ts != rs)
		die("size %" PRIu64 " but reference %" PRIu64, ts, rs);
	if (off >= rs)
		return;
	if (off + len > rs)
		len = rs - off;
	while (len) {
		size_t n = len > (1 << 20) ? (1 << 20) : (size_t)len;

		if (cap < n) {
			a = realloc(a, n);
			b = realloc(b, n);
			cap = n;
		}
		full_pread(tfd, a, n, off, "test");
		full_pread(rfd, b, n, off, "ref");
		if (memcmp(a, b, n))
			for (size_t i = 0; i < n; i++)
				if (a[i] != b[i])
					die("data at %" PRIu64
					    ": got 0x%02x want 0x%02x",
					    off + i, a[i], b[i]);
		off += n;
		len -= n;
	}
}

static void both(int r1, int r2, const char *what)
{
	if (r2 < 0)
		die("reference %s failed: %s", what, t_errname(errno));
	if (r1 < 0)
		die("%s failed: %s", what, t_errname(errno));
}

int main(int argc, char **argv)
{
	unsigned long nops = 2000;
	const char *ops = "wrtpa";
	int opt;

	rng_state = 1;
	while ((opt = getopt(argc, argv, "n:s:m:l:o:")) != -1) {
		switch (opt) {
		case 'n':
			nops = strtoul(optarg, NULL, 0);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			maxsize = t_size(optarg);
			break;
		case 'l':
			maxlen = t_size(optarg);
			break;
		case 'o':
			ops = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || maxlen < 4096)
		goto usage;
	tfd = open(argv[optind], O_RDWR | O_CREAT | O_TRUNC, 0644);
	rfd = open(argv[optind + 1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (tfd < 0 || rfd < 0) {
		printf("FAIL open: %s\n", t_errname(errno));
		return 1;
	}
	unsigned char *buf = malloc(maxlen);
	size_t nops_avail = strlen(ops);

	for (opno = 0; opno < nops; opno++) {
		char op = ops[rnd() % nops_avail];
		uint64_t size = fsize(rfd);
		uint64_t off, len;
		int r1, r2;

		switch (op) {
		case 'w':
			off = pick_off(maxsize - 1);
			len = pick_len();
			if (off + len > maxsize)
				len = maxsize - off;
			for (uint64_t i = 0; i < len; i++)
				buf[i] = (unsigned char)rnd();
			logop("write off %" PRIu64 " len %" PRIu64, off, len);
			{
				ssize_t w1 = pwrite(tfd, buf, len, (off_t)off);
				ssize_t w2 = pwrite(rfd, buf, len, (off_t)off);

				both((int)w1, (int)w2, "pwrite");
				if ((uint64_t)w1 != len || (uint64_t)w2 != len)
					die("short write %zd/%zd of %" PRIu64,
					    w1, w2, len);
			}
			compare(off >= 8 ? off - 8 : 0, len + 16);
			break;
		case 'r':
			off = pick_off(size + 100);
			len = pick_len();
			logop("read off %" PRIu64 " len %" PRIu64, off, len);
			{
				unsigned char *a = malloc(len), *b = malloc(len);
				ssize_t r1s = pread(tfd, a, len, (off_t)off);
				ssize_t r2s = pread(rfd, b, len, (off_t)off);

				both((int)r1s, (int)r2s, "pread");
				if (r1s != r2s)
					die("pread returned %zd, reference %zd",
					    r1s, r2s);
				for (ssize_t i = 0; i < r1s; i++)
					if (a[i] != b[i])
						die("read data at %" PRIu64
						    ": got 0x%02x want 0x%02x",
						    off + (uint64_t)i, a[i],
						    b[i]);
				free(a);
				free(b);
			}
			break;
		case 't':
			off = pick_off(maxsize);
			logop("truncate %" PRIu64 " (from %" PRIu64 ")", off,
			      size);
			r1 = ftruncate(tfd, (off_t)off);
			r2 = ftruncate(rfd, (off_t)off);
			both(r1, r2, "ftruncate");
			compare(off >= 70000 ? off - 70000 : 0, 140000);
			break;
		case 'p':
		case 'z':
			off = pick_off(size + 100);
			len = pick_len();
			logop("%s off %" PRIu64 " len %" PRIu64,
			      op == 'p' ? "punch" : "zero", off, len);
			{
				int m = op == 'p' ? FALLOC_FL_PUNCH_HOLE |
							    FALLOC_FL_KEEP_SIZE :
						    FALLOC_FL_ZERO_RANGE;
				r1 = fallocate(tfd, m, (off_t)off, (off_t)len);
				r2 = fallocate(rfd, m, (off_t)off, (off_t)len);
			}
			both(r1, r2, op == 'p' ? "punch hole" : "zero range");
			compare(off >= 8 ? off - 8 : 0, len + 16);
			break;
		case 'a':
			off = pick_off(maxsize - 1);
			len = pick_len();
			if (off + len > maxsize)
				len = maxsize - off;
			{
				int m = rnd() & 1 ? FALLOC_FL_KEEP_SIZE : 0;

				logop("fallocate %s off %" PRIu64
				      " len %" PRIu64,
				      m ? "keep" : "0", off, len);
				r1 = fallocate(tfd, m, (off_t)off, (off_t)len);
				r2 = fallocate(rfd, m, (off_t)off, (off_t)len);
			}
			both(r1, r2, "fallocate");
			compare(off >= 8 ? off - 8 : 0, len + 16);
			break;
		default:
			goto usage;
		}
		if (opno % 32 == 31)
			compare(0, UINT64_MAX / 2);
	}
	opno--;
	compare(0, UINT64_MAX / 2);
	if (close(tfd))
		die("close: %s", t_errname(errno));
	printf("OK\n");
	return 0;

usage:
	fprintf(stderr, "usage: fsx [-n OPS] [-s SEED] [-m MAXSIZE] [-l MAXLEN] "
			"[-o wrtpaz] TEST REF\n");
	return 2;
}
