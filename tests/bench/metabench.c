// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * metabench -- metadata and small-I/O loops for tests/bench/scale-bench.sh.
 * Not part of `meson test`; see tests/bench/README.md.
 *
 *   metabench OP [-d NDIRS] [-p PREFIX] [-t SECS] [-s SEED] [-b BYTES] PATH N
 *
 * Names are PREFIX followed by the index in 7 digits ("f0000042") in
 * PATH, or with -d NDIRS (> 0) in PATH/d0 .. PATH/d{NDIRS-1}, file i in
 * directory i / ceil(N / NDIRS): the directories fill one after the
 * other.  Every call is made relative to an open directory (the *at()
 * calls), so a lookup is one name, not a path walk from the root.
 *
 * OP:
 *   create   open(O_CREAT|O_EXCL|O_WRONLY) and close N empty files
 *            (makes the directories of -d); each create is timed
 *   stat     fstatat the N names in order; with -t SECS, keep going
 *            round for SECS seconds (at least one pass)
 *   statrand fstatat random names among the N (seed -s); with -t SECS
 *            for SECS seconds, without it one pass over a random
 *            permutation (each name once)
 *   statmiss fstatat random names "PREFIX-missing%07u" that do not
 *            exist (ENOENT expected), for -t SECS seconds (default 2)
 *   rename   rename PREFIXi to rPREFIXi (same directory)
 *   unlink   unlink the N names
 *   cwu      create, write -b BYTES (default 4096), close and unlink
 *            N distinct names, one file at a time
 *   fill     create N files of -b BYTES each (written in one write);
 *            a file counts as stored when open, write and close all
 *            succeed; goes on after a failure
 *   rtt      PATH is one file (made if missing): N statx() calls with
 *            AT_STATX_FORCE_SYNC, each of which a FUSE mount answers
 *            with one round trip to its daemon (a local filesystem
 *            from memory); each is timed
 *   sparse   PATH is one file: create it, ftruncate it to -z SIZE
 *            (default 1T) and write -b BYTES (default 4096) at N random
 *            offsets
 *            (multiples of BYTES, seed -s), with O_DIRECT (so that
 *            ENOSPC comes from the write itself) or, where O_DIRECT is
 *            refused, buffered with fdatasync after each write; goes on
 *            after a failure
 *
 * Output: one line of KEY=VALUE words on stdout, e.g.
 *   op=create n=100000 ok=100000 fail=0 secs=1.234567 rate=81037.2
 *   p50_ms=0.010 p99_ms=0.050 max_ms=2.345 first_fail=-1 errno=0
 * rate is ok operations per second; the latency keys only for the
 * timed OPs (create, cwu, fill, sparse).  Exit status 0, or 1 on a bad
 * argument or when PATH cannot be opened (a failed operation is
 * counted, not fatal).
 *
 * With METABENCH_SLOW_MS=T in the environment, every timed operation
 * that took more than T ms is also printed on stderr:
 *   slow op=create i=65536 ms=21.230 at=13.582305 mono=986.115075
 * i is its index (the file name's number), at its start in seconds
 * after the first operation, mono the same as CLOCK_MONOTONIC (what
 * `perf record -k CLOCK_MONOTONIC` and `perf script` show).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

struct args {
	const char *op;
	const char *path;
	const char *prefix;
	uint64_t n;
	unsigned ndirs;
	double secs;
	uint64_t seed;
	uint64_t bytes;
	uint64_t size;
};

struct result {
	uint64_t ok;
	uint64_t fail;
	int64_t first_fail;
	int first_errno;
	double secs;
	double *lat; /* seconds per op, or NULL */
	uint64_t nlat;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng_state;

/* splitmix64: a fixed seed gives the same offsets everywhere */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t n)
{
	return rng() % n;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: metabench create|stat|statrand|statmiss|rename|unlink|cwu|fill|sparse|rtt\n"
		"       [-d NDIRS] [-p PREFIX] [-t SECS] [-s SEED] [-b BYTES] [-z SIZE] PATH N\n");
	exit(1);
}

static uint64_t parse_u64(const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		usage();
	switch (*end) {
	case 'T': v <<= 10; /* fall through */
	case 'G': v <<= 10; /* fall through */
	case 'M': v <<= 10; /* fall through */
	case 'K': v <<= 10; end++; break;
	default: break;
	}
	if (*end)
		usage();
	return v;
}

/* directory fds: dirs[0] is PATH itself when ndirs == 0 */
static int *dirs;
static unsigned ndirfd;
static uint64_t per_dir;

static void open_dirs(const struct args *a, bool make)
{
	int root = open(a->path, O_RDONLY | O_DIRECTORY);

	if (root < 0) {
		fprintf(stderr, "metabench: %s: %s\n", a->path, strerror(errno));
		exit(1);
	}
	ndirfd = a->ndirs ? a->ndirs : 1;
	dirs = calloc(ndirfd, sizeof(*dirs));
	if (!dirs)
		exit(1);
	per_dir = a->ndirs ? (a->n + a->ndirs - 1) / a->ndirs : a->n;
	if (!per_dir)
		per_dir = 1;
	if (!a->ndirs) {
		dirs[0] = root;
		return;
	}
	for (unsigned i = 0; i < a->ndirs; i++) {
		char name[32];

		snprintf(name, sizeof(name), "d%u", i);
		if (make && mkdirat(root, name, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "metabench: mkdir %s/%s: %s\n", a->path,
				name, strerror(errno));
			exit(1);
		}
		dirs[i] = openat(root, name, O_RDONLY | O_DIRECTORY);
		if (dirs[i] < 0) {
			fprintf(stderr, "metabench: %s/%s: %s\n", a->path, name,
				strerror(errno));
			exit(1);
		}
	}
	close(root);
}

static int dir_of(uint64_t i)
{
	return dirs[ndirfd == 1 ? 0 : i / per_dir];
}

static void name_of(char *buf, size_t len, const char *pre, uint64_t i)
{
	snprintf(buf, len, "%s%07" PRIu64, pre, i);
}

static void failed(struct result *r, uint64_t i, int e)
{
	if (!r->fail) {
		r->first_fail = (int64_t)i;
		r->first_errno = e;
	}
	r->fail++;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "metabench: out of memory\n");
		exit(1);
	}
	return p;
}

/* METABENCH_SLOW_MS, in seconds; 0 = off */
static double slow_secs;
static const char *slow_op;
static double slow_t0;

static void lat_alloc(struct result *r, uint64_t n)
{
	r->lat = xmalloc(n * sizeof(*r->lat));
	r->nlat = 0;
}

/* record one timed operation @i that started at @s and ended at @e */
static void lat_add(struct result *r, uint64_t i, double s, double e)
{
	r->lat[r->nlat++] = e - s;
	if (slow_secs > 0 && e - s > slow_secs)
		fprintf(stderr,
			"slow op=%s i=%" PRIu64 " ms=%.3f at=%.6f mono=%.6f\n",
			slow_op, i, (e - s) * 1e3, s - slow_t0, s);
}

static void op_create(const struct args *a, struct result *r)
{
	char name[128];

	open_dirs(a, true);
	lat_alloc(r, a->n);
	double t0 = slow_t0 = now();
	for (uint64_t i = 0; i < a->n; i++) {
		name_of(name, sizeof(name), a->prefix, i);
		double s = now();
		int fd = openat(dir_of(i), name,
				O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0 || close(fd) < 0)
			failed(r, i, errno);
		else
			r->ok++;
		lat_add(r, i, s, now());
	}
	r->secs = now() - t0;
}

static void stat_one(struct result *r, int dfd, const char *name, uint64_t i,
		     bool want_enoent)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		want_enoent ? failed(r, i, 0) : (void)r->ok++;
	else if (want_enoent && errno == ENOENT)
		r->ok++;
	else
		failed(r, i, errno);
}

static void op_stat(const struct args *a, struct result *r)
{
	char name[128];

	open_dirs(a, false);
	double t0 = now(), t;
	do {
		for (uint64_t i = 0; i < a->n; i++) {
			name_of(name, sizeof(name), a->prefix, i);
			stat_one(r, dir_of(i), name, i, false);
		}
		t = now() - t0;
	} while (t < a->secs);
	r->secs = t;
}

static void op_statrand(const struct args *a, struct result *r)
{
	char name[128];

	open_dirs(a, false);
	if (a->secs > 0) {
		double t0 = now(), t;
		do {
			for (int k = 0; k < 1024; k++) {
				uint64_t i = rng_below(a->n);

				name_of(name, sizeof(name), a->prefix, i);
				stat_one(r, dir_of(i), name, i, false);
			}
			t = now() - t0;
		} while (t < a->secs);
		r->secs = t;
		return;
	}
	uint64_t *perm = xmalloc(a->n * sizeof(*perm));
	for (uint64_t i = 0; i < a->n; i++)
		perm[i] = i;
	for (uint64_t i = a->n; i > 1; i--) {
		uint64_t j = rng_below(i), x = perm[i - 1];

		perm[i - 1] = perm[j];
		perm[j] = x;
	}
	double t0 = now();
	for (uint64_t k = 0; k < a->n; k++) {
		name_of(name, sizeof(name), a->prefix, perm[k]);
		stat_one(r, dir_of(perm[k]), name, perm[k], false);
	}
	r->secs = now() - t0;
	free(perm);
}

static void op_statmiss(const struct args *a, struct result *r)
{
	char name[128], pre[48];
	double secs = a->secs > 0 ? a->secs : 2;

	open_dirs(a, false);
	snprintf(pre, sizeof(pre), "%s-missing", a->prefix);
	double t0 = now(), t;
	do {
		for (int k = 0; k < 1024; k++) {
			uint64_t i = rng_below(a->n);

			name_of(name, sizeof(name), pre, i);
			stat_one(r, dir_of(i), name, i, true);
		}
		t = now() - t0;
	} while (t < secs);
	r->secs = t;
}

static void op_rename(const struct args *a, struct result *r)
{
	char from[128], to[128], pre[48];

	open_dirs(a, false);
	snprintf(pre, sizeof(pre), "r%s", a->prefix);
	double t0 = now();
	for (uint64_t i = 0; i < a->n; i++) {
		int d = dir_of(i);

		name_of(from, sizeof(from), a->prefix, i);
		name_of(to, sizeof(to), pre, i);
		if (renameat(d, from, d, to) < 0)
			failed(r, i, errno);
		else
			r->ok++;
	}
	r->secs = now() - t0;
}

static void op_unlink(const struct args *a, struct result *r)
{
	char name[128];

	open_dirs(a, false);
	double t0 = now();
	for (uint64_t i = 0; i < a->n; i++) {
		name_of(name, sizeof(name), a->prefix, i);
		if (unlinkat(dir_of(i), name, 0) < 0)
			failed(r, i, errno);
		else
			r->ok++;
	}
	r->secs = now() - t0;
}

static char *data_buf(uint64_t bytes, bool aligned)
{
	char *buf;

	if (aligned) {
		if (posix_memalign((void **)&buf, 4096, bytes ? bytes : 4096))
			exit(1);
	} else {
		buf = xmalloc(bytes);
	}
	/* not zeros: nothing may store a page of zeros as a hole */
	for (uint64_t i = 0; i < bytes; i++)
		buf[i] = (char)(rng() | 1);
	return buf;
}

/* write all of buf at off (pwrite when off >= 0); 0 or an errno */
static int write_all(int fd, const char *buf, uint64_t len, int64_t off)
{
	uint64_t done = 0;

	while (done < len) {
		ssize_t w = off < 0 ? write(fd, buf + done, len - done)
				    : pwrite(fd, buf + done, len - done,
					     off + (off_t)done);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (w == 0)
			return EIO;
		done += (uint64_t)w;
	}
	return 0;
}

/* cwu (unlink after close) and fill (keep the file) */
static void op_files(const struct args *a, struct result *r, bool keep)
{
	char name[128];
	char *buf = data_buf(a->bytes, false);

	open_dirs(a, true);
	lat_alloc(r, a->n);
	double t0 = slow_t0 = now();
	for (uint64_t i = 0; i < a->n; i++) {
		int d = dir_of(i), e = 0;

		name_of(name, sizeof(name), a->prefix, i);
		double s = now();
		int fd = openat(d, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
				0644);
		if (fd < 0) {
			e = errno;
		} else {
			e = write_all(fd, buf, a->bytes, -1);
			if (close(fd) < 0 && !e)
				e = errno;
			if (!keep && unlinkat(d, name, 0) < 0 && !e)
				e = errno;
		}
		lat_add(r, i, s, now());
		if (e)
			failed(r, i, e);
		else
			r->ok++;
	}
	r->secs = now() - t0;
	free(buf);
}

/* rtt: one forced statx a call (a FUSE round trip) */
static void op_rtt(const struct args *a, struct result *r)
{
	int fd = open(a->path, O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
	struct statx stx;

	if (fd < 0) {
		fprintf(stderr, "metabench: %s: %s\n", a->path, strerror(errno));
		exit(1);
	}
	lat_alloc(r, a->n);
	double t0 = slow_t0 = now();
	for (uint64_t i = 0; i < a->n; i++) {
		double s = now();

		if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_FORCE_SYNC,
			  STATX_BASIC_STATS, &stx) < 0)
			failed(r, i, errno);
		else
			r->ok++;
		lat_add(r, i, s, now());
	}
	r->secs = now() - t0;
	close(fd);
}

static void op_sparse(const struct args *a, struct result *r)
{
	bool direct = true;
	int fd = open(a->path, O_CREAT | O_RDWR | O_CLOEXEC | O_DIRECT, 0644);

	if (fd < 0 && errno == EINVAL) {
		direct = false;
		fd = open(a->path, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
	}
	if (fd < 0) {
		fprintf(stderr, "metabench: %s: %s\n", a->path, strerror(errno));
		exit(1);
	}
	if (ftruncate(fd, (off_t)a->size) < 0) {
		fprintf(stderr, "metabench: truncate %s: %s\n", a->path,
			strerror(errno));
		exit(1);
	}
	uint64_t slots = a->size / a->bytes;
	char *buf = data_buf(a->bytes, true);

	if (!slots)
		usage();
	lat_alloc(r, a->n);
	double t0 = slow_t0 = now();
	for (uint64_t i = 0; i < a->n; i++) {
		int64_t off = (int64_t)(rng_below(slots) * a->bytes);
		double s = now();
		int e = write_all(fd, buf, a->bytes, off);

		if (!e && !direct && fdatasync(fd) < 0)
			e = errno;
		lat_add(r, i, s, now());
		if (e)
			failed(r, i, e);
		else
			r->ok++;
	}
	r->secs = now() - t0;
	if (close(fd) < 0 && !r->fail)
		failed(r, a->n, errno);
	free(buf);
	printf("direct=%d ", direct);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	struct args a = { .prefix = "f", .seed = 42, .bytes = 4096,
			  .size = UINT64_C(1) << 40 };
	struct result r = { .first_fail = -1 };
	int c;

	if (argc < 2)
		usage();
	a.op = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "d:p:t:s:b:z:")) != -1) {
		switch (c) {
		case 'd': a.ndirs = (unsigned)parse_u64(optarg); break;
		case 'p': a.prefix = optarg; break;
		case 't': a.secs = strtod(optarg, NULL); break;
		case 's': a.seed = parse_u64(optarg); break;
		case 'b': a.bytes = parse_u64(optarg); break;
		case 'z': a.size = parse_u64(optarg); break;
		default: usage();
		}
	}
	if (argc - optind != 2 || strlen(a.prefix) > 32 || !a.bytes)
		usage();
	a.path = argv[optind];
	a.n = parse_u64(argv[optind + 1]);
	if (!a.n)
		usage();
	rng_state = a.seed;
	slow_op = a.op;
	if (getenv("METABENCH_SLOW_MS"))
		slow_secs = strtod(getenv("METABENCH_SLOW_MS"), NULL) * 1e-3;

	if (!strcmp(a.op, "create"))
		op_create(&a, &r);
	else if (!strcmp(a.op, "stat"))
		op_stat(&a, &r);
	else if (!strcmp(a.op, "statrand"))
		op_statrand(&a, &r);
	else if (!strcmp(a.op, "statmiss"))
		op_statmiss(&a, &r);
	else if (!strcmp(a.op, "rename"))
		op_rename(&a, &r);
	else if (!strcmp(a.op, "unlink"))
		op_unlink(&a, &r);
	else if (!strcmp(a.op, "cwu"))
		op_files(&a, &r, false);
	else if (!strcmp(a.op, "fill"))
		op_files(&a, &r, true);
	else if (!strcmp(a.op, "sparse"))
		op_sparse(&a, &r);
	else if (!strcmp(a.op, "rtt"))
		op_rtt(&a, &r);
	else
		usage();

	printf("op=%s n=%" PRIu64 " ok=%" PRIu64 " fail=%" PRIu64
	       " secs=%.6f rate=%.1f first_fail=%" PRId64 " errno=%d",
	       a.op, r.ok + r.fail, r.ok, r.fail, r.secs,
	       r.secs > 0 ? (double)r.ok / r.secs : 0.0, r.first_fail,
	       r.first_errno);
	if (r.lat && r.nlat) {
		qsort(r.lat, r.nlat, sizeof(*r.lat), cmp_double);
		printf(" p50_ms=%.3f p99_ms=%.3f max_ms=%.3f",
		       r.lat[r.nlat / 2] * 1e3,
		       r.lat[(r.nlat * 99) / 100 < r.nlat ? (r.nlat * 99) / 100
							  : r.nlat - 1] * 1e3,
		       r.lat[r.nlat - 1] * 1e3);
	}
	printf("\n");
	free(r.lat);
	return 0;
}
