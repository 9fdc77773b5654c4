// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ccscratch.c -- the I/O steps of tests/bench/cc-bench.sh, one per run:
 *
 *   ccscratch write  FILE OFFSET LENGTH [-b BS] [-m direct|buffered] [-s SEED]
 *   ccscratch read   FILE OFFSET LENGTH [-b BS] [-m direct|fadvise] [-s SEED] [-v]
 *   ccscratch layout FILE OFFSET LENGTH
 *   ccscratch probe  DIR
 *
 * write/read move LENGTH bytes at OFFSET in BS requests (default 1 MiB)
 * and print one line "SECONDS BYTES" (wall clock of the I/O only).
 *  - write -m direct (default): O_DIRECT writes, then fsync.
 *    -m buffered: plain writes, then fsync.
 *  - read -m direct (default): O_DIRECT reads, so every request reaches
 *    the filesystem (on tierfs: the daemon and its tiers), never the
 *    page cache.  -m fadvise: posix_fadvise(POSIX_FADV_DONTNEED) on the
 *    range first (not timed), then plain reads: the kernel's readahead
 *    is in play, and a filesystem whose page cache *is* its storage
 *    (tmpfs) keeps its pages.
 *  - The data is a pattern of the byte offset and SEED, so read -v checks
 *    every byte that comes back (and so costs CPU: leave it off for
 *    timing); a mismatch prints the first bad offset and exits 3.
 * layout prints the bytes of [OFFSET, OFFSET+LENGTH) on each tier of a
 * tierfs file, from the xattrs user.tierfs.extents ("START LENGTH TIER"
 * runs) and user.tierfs.layout (every tier, in order), as
 * "ram=B disk=B hole=B"; "n/a" where the filesystem has no such xattrs.
 * probe exits 0 when a file in DIR can be opened with O_DIRECT and a
 * 4 KiB O_DIRECT write succeeds, 1 otherwise.
 *
 * Sizes take K/M/G/T suffixes (binary).  Exit: 0 ok, 1 I/O or system
 * error, 2 usage, 3 verification failure.
 *
 * Build: cc -O2 -o ccscratch ccscratch.c (cc-bench.sh does it).
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
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define ALIGN 4096
#define PATTERN_MUL UINT64_C(0x9E3779B97F4A7C15)

static const char *prog = "ccscratch";

static void usage(void)
{
	fprintf(stderr,
		"usage: %s write  FILE OFFSET LENGTH [-b BS] [-m direct|buffered] [-s SEED]\n"
		"       %s read   FILE OFFSET LENGTH [-b BS] [-m direct|fadvise] [-s SEED] [-v]\n"
		"       %s layout FILE OFFSET LENGTH\n"
		"       %s probe  DIR\n",
		prog, prog, prog, prog);
	exit(2);
}

static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		goto bad;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': mult = UINT64_C(1) << 10; end++; break;
	case 'm': case 'M': mult = UINT64_C(1) << 20; end++; break;
	case 'g': case 'G': mult = UINT64_C(1) << 30; end++; break;
	case 't': case 'T': mult = UINT64_C(1) << 40; end++; break;
	default: goto bad;
	}
	if (*end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (v && mult > UINT64_MAX / v))
		goto bad;
	return (uint64_t)v * mult;
bad:
	fprintf(stderr, "%s: bad size '%s'\n", prog, s);
	exit(2);
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fill @buf (@len bytes, a multiple of 8) with the pattern of @off. */
static void fill(uint64_t *buf, size_t len, uint64_t off, uint64_t seed)
{
	for (size_t i = 0; i < len / 8; i++)
		buf[i] = ((off + 8 * i) ^ seed) * PATTERN_MUL;
}

/* Offset of the first byte of @buf that differs from the pattern, or -1. */
static int64_t check(const uint64_t *buf, size_t len, uint64_t off,
		     uint64_t seed)
{
	for (size_t i = 0; i < len / 8; i++)
		if (buf[i] != (((off + 8 * i) ^ seed) * PATTERN_MUL))
			return (int64_t)(off + 8 * i);
	return -1;
}

struct io_args {
	const char *file;
	uint64_t off, len, bs, seed;
	const char *mode;
	bool verify;
};

static void parse_io(int argc, char **argv, struct io_args *a, bool is_read)
{
	int c;

	if (argc < 4)
		usage();
	a->file = argv[1];
	a->off = parse_size(argv[2]);
	a->len = parse_size(argv[3]);
	a->bs = UINT64_C(1) << 20;
	a->seed = 0;
	a->mode = "direct";
	a->verify = false;
	optind = 4;
	while ((c = getopt(argc, argv, "b:m:s:v")) != -1) {
		switch (c) {
		case 'b': a->bs = parse_size(optarg); break;
		case 'm': a->mode = optarg; break;
		case 's': a->seed = strtoull(optarg, NULL, 0); break;
		case 'v':
			if (!is_read)
				usage();
			a->verify = true;
			break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (a->bs == 0 || a->bs % ALIGN || a->off % ALIGN || a->len % ALIGN) {
		fprintf(stderr, "%s: OFFSET, LENGTH and BS must be multiples of %d\n",
			prog, ALIGN);
		exit(2);
	}
	if (strcmp(a->mode, "direct") &&
	    strcmp(a->mode, is_read ? "fadvise" : "buffered")) {
		fprintf(stderr, "%s: bad mode '%s'\n", prog, a->mode);
		exit(2);
	}
}

static int do_io(int argc, char **argv, bool is_read)
{
	struct io_args a;
	int flags, fd;
	void *buf;
	double t0, t1;
	uint64_t done = 0;

	parse_io(argc, argv, &a, is_read);
	flags = is_read ? O_RDONLY : (O_WRONLY | O_CREAT);
	if (!strcmp(a.mode, "direct"))
		flags |= O_DIRECT;
	fd = open(a.file, flags | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "%s: open %s%s: %s\n", prog, a.file,
			(flags & O_DIRECT) ? " (O_DIRECT)" : "", strerror(errno));
		return 1;
	}
	if (posix_memalign(&buf, ALIGN, a.bs)) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	memset(buf, 0, a.bs);
	if (is_read && !strcmp(a.mode, "fadvise")) {
		int r = posix_fadvise(fd, (off_t)a.off, (off_t)a.len,
				      POSIX_FADV_DONTNEED);

		if (r) {
			fprintf(stderr, "%s: posix_fadvise: %s\n", prog,
				strerror(r));
			return 1;
		}
	}

	t0 = now_sec();
	while (done < a.len) {
		uint64_t pos = a.off + done;
		size_t n = (size_t)(a.len - done < a.bs ? a.len - done : a.bs);
		ssize_t r;

		if (!is_read)
			fill(buf, n, pos, a.seed);
		r = is_read ? pread(fd, buf, n, (off_t)pos)
			    : pwrite(fd, buf, n, (off_t)pos);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "%s: %s at %" PRIu64 ": %s\n", prog,
				is_read ? "read" : "write", pos, strerror(errno));
			return 1;
		}
		if (r == 0) {
			fprintf(stderr, "%s: unexpected end of file at %" PRIu64 "\n",
				prog, pos);
			return 1;
		}
		if (is_read && a.verify) {
			int64_t bad = check(buf, (size_t)r & ~(size_t)7, pos,
					    a.seed);

			if (bad >= 0) {
				fprintf(stderr, "%s: %s: wrong data at offset %" PRId64 "\n",
					prog, a.file, bad);
				return 3;
			}
		}
		done += (uint64_t)r;
	}
	if (!is_read && fsync(fd) < 0) {
		fprintf(stderr, "%s: fsync: %s\n", prog, strerror(errno));
		return 1;
	}
	t1 = now_sec();
	close(fd);
	free(buf);
	printf("%.6f %" PRIu64 "\n", t1 - t0, done);
	return 0;
}

/* getxattr into a malloc'd, NUL-terminated buffer; NULL with errno set. */
static char *xattr(const char *file, const char *name)
{
	for (int tries = 0; tries < 8; tries++) {
		ssize_t n = getxattr(file, name, NULL, 0);
		char *v;

		if (n < 0)
			return NULL;
		v = malloc((size_t)n + 1);
		if (!v)
			return NULL;
		n = getxattr(file, name, v, (size_t)n);
		if (n >= 0) {
			v[n] = '\0';
			return v;
		}
		free(v);
		if (errno != ERANGE)
			return NULL;
	}
	errno = ERANGE;
	return NULL;
}

#define MAX_TIERS 16

static int do_layout(int argc, char **argv)
{
	const char *file;
	uint64_t off, end, covered = 0;
	char *lay, *ext, *save = NULL;
	char names[MAX_TIERS][64];
	uint64_t bytes[MAX_TIERS] = { 0 };
	int ntiers = 0;

	if (argc != 4)
		usage();
	file = argv[1];
	off = parse_size(argv[2]);
	end = off + parse_size(argv[3]);
	lay = xattr(file, "user.tierfs.layout");
	if (!lay) {
		if (errno == ENOTSUP || errno == ENODATA) {
			printf("n/a\n");
			return 0;
		}
		fprintf(stderr, "%s: %s: user.tierfs.layout: %s\n", prog, file,
			strerror(errno));
		return 1;
	}
	for (char *w = strtok_r(lay, " \n", &save); w && ntiers < MAX_TIERS;
	     w = strtok_r(NULL, " \n", &save)) {
		char *eq = strrchr(w, '=');

		if (eq)
			*eq = '\0';
		snprintf(names[ntiers++], sizeof(names[0]), "%s", w);
	}
	free(lay);
	ext = xattr(file, "user.tierfs.extents");
	if (!ext) {
		fprintf(stderr, "%s: %s: user.tierfs.extents: %s\n", prog, file,
			strerror(errno));
		return 1;
	}
	for (const char *p = ext; *p;) {
		unsigned long long s, l;
		char tier[64];
		int used = 0, t;
		uint64_t a, b;

		if (sscanf(p, "%llu %llu %63s%n", &s, &l, tier, &used) != 3)
			break;
		p += used;
		while (*p == '\n' || *p == ' ')
			p++;
		a = s > off ? s : off;
		b = s + l < end ? s + l : end;
		if (a >= b)
			continue;
		for (t = 0; t < ntiers && strcmp(names[t], tier); t++)
			;
		if (t == ntiers) {
			if (ntiers == MAX_TIERS)
				continue;
			snprintf(names[ntiers++], sizeof(names[0]), "%s", tier);
		}
		bytes[t] += b - a;
		covered += b - a;
	}
	free(ext);
	for (int t = 0; t < ntiers; t++)
		printf("%s%s=%" PRIu64, t ? " " : "", names[t], bytes[t]);
	printf(" hole=%" PRIu64 "\n", end - off - covered);
	return 0;
}

static int do_probe(int argc, char **argv)
{
	char path[4096];
	void *buf;
	int fd, ok;

	if (argc != 2)
		usage();
	snprintf(path, sizeof(path), "%s/.ccscratch-probe.%ld", argv[1],
		 (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return 1;
	if (posix_memalign(&buf, ALIGN, ALIGN)) {
		close(fd);
		unlink(path);
		return 1;
	}
	memset(buf, 0, ALIGN);
	ok = pwrite(fd, buf, ALIGN, 0) == ALIGN;
	close(fd);
	unlink(path);
	free(buf);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "write"))
		return do_io(argc - 1, argv + 1, false);
	if (!strcmp(argv[1], "read"))
		return do_io(argc - 1, argv + 1, true);
	if (!strcmp(argv[1], "layout"))
		return do_layout(argc - 1, argv + 1);
	if (!strcmp(argv[1], "probe"))
		return do_probe(argc - 1, argv + 1);
	usage();
	return 2;
}
