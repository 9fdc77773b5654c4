// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pattern.c -- write or verify the position-dependent pattern of common.h.
 *
 *     pattern w|v|z [OPTIONS] FILE OFFSET LENGTH
 *
 *   w  write the pattern over [OFFSET, OFFSET+LENGTH) (O_CREAT, no O_TRUNC)
 *   v  verify the pattern there
 *   z  verify that the range reads as zeros
 *
 * The range is cut into chunks of -b bytes (default 1M).  Workers (-j
 * threads, times -P processes) share the chunks: interleaved round robin by
 * default (neighbouring chunks, often in one extent, go to different
 * workers at once), or one contiguous region per worker with -R.
 *
 *   -s SEED   pattern seed (default 1)
 *   -b SIZE   chunk size (default 1M; K/M/G suffixes)
 *   -j N      threads (default 1)
 *   -P I/N    this process is worker group I of N (0-based)
 *   -R        contiguous region per worker instead of round robin
 *   -d        O_DIRECT (offset, length and chunk must be 4K aligned)
 *   -f        fsync before close (w)
 *
 * Output: "OK BYTES" and exit 0, or one line saying what failed and exit 1:
 *   "ERR write ENOSPC at OFF done BYTES"  (BYTES: contiguous bytes written
 *                                         from OFFSET, single worker only)
 *   "MISMATCH at OFF got 0xXX want 0xYY"
 *   "SHORT read at OFF"                   (EOF inside the range)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static char mode;
static const char *path;
static uint64_t base, length, chunk = 1 << 20, seed = 1;
static int nthreads = 1, pidx, pcount = 1;
static bool regions, direct, do_fsync;
static int fd;

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool failed;
static uint64_t done_bytes; /* contiguous progress, for 1 worker */

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&err_lock);
	if (!failed) {
		failed = true;
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	pthread_mutex_unlock(&err_lock);
}

static void do_chunk(unsigned char *buf, unsigned char *ref, uint64_t off,
		     size_t len)
{
	size_t got = 0;

	if (mode == 'w') {
		t_pat_fill(buf, off, len, seed);
		while (got < len) {
			ssize_t r = pwrite(fd, buf + got, len - got,
					   (off_t)(off + got));
			if (r < 0) {
				report("ERR write %s at %" PRIu64
				       " done %" PRIu64,
				       t_errname(errno), off + got,
				       done_bytes + got);
				return;
			}
			if (r == 0) {
				report("ERR write returned 0 at %" PRIu64,
				       off + got);
				return;
			}
			got += (size_t)r;
		}
		if (nthreads * pcount == 1)
			done_bytes += len;
		return;
	}
	while (got < len) {
		ssize_t r = pread(fd, buf + got, len - got, (off_t)(off + got));

		if (r < 0) {
			report("ERR read %s at %" PRIu64, t_errname(errno),
			       off + got);
			return;
		}
		if (r == 0) {
			report("SHORT read at %" PRIu64, off + got);
			return;
		}
		got += (size_t)r;
	}
	if (mode == 'v') {
		long bad = t_pat_check(buf, off, len, seed);

		if (bad >= 0)
			report("MISMATCH at %" PRIu64 " got 0x%02x want 0x%02x",
			       off + (uint64_t)bad, buf[bad],
			       t_pat_byte(off + (uint64_t)bad, seed));
	} else {
		if (memcmp(buf, ref, len)) {
			for (size_t i = 0; i < len; i++)
				if (buf[i]) {
					report("MISMATCH at %" PRIu64
					       " got 0x%02x want 0x00",
					       off + i, buf[i]);
					break;
				}
		}
	}
}

static void *worker(void *arg)
{
	int w = pidx * nthreads + (int)(intptr_t)arg;
	int nw = pcount * nthreads;
	uint64_t nchunks = (length + chunk - 1) / chunk;
	uint64_t first, last, step;
	unsigned char *buf, *zero = NULL;

	if (posix_memalign((void **)&buf, 4096, chunk)) {
		report("ERR out of memory");
		return NULL;
	}
	if (mode == 'z')
		zero = calloc(1, chunk);
	if (regions) {
		first = nchunks * (uint64_t)w / (uint64_t)nw;
		last = nchunks * (uint64_t)(w + 1) / (uint64_t)nw;
		step = 1;
	} else {
		first = (uint64_t)w;
		last = nchunks;
		step = (uint64_t)nw;
	}
	for (uint64_t k = first; k < last && !failed; k += step) {
		uint64_t off = k * chunk;
		size_t len = (size_t)(length - off < chunk ? length - off :
							     chunk);
		do_chunk(buf, zero, base + off, len);
	}
	free(buf);
	free(zero);
	return NULL;
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "s:b:j:P:Rdf")) != -1) {
		switch (opt) {
		case 's':
			seed = t_size(optarg);
			break;
		case 'b':
			chunk = t_size(optarg);
			break;
		case 'j':
			nthreads = atoi(optarg);
			break;
		case 'P':
			if (sscanf(optarg, "%d/%d", &pidx, &pcount) != 2 ||
			    pcount < 1 || pidx < 0 || pidx >= pcount)
				goto usage;
			break;
		case 'R':
			regions = true;
			break;
		case 'd':
			direct = true;
			break;
		case 'f':
			do_fsync = true;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 4 || strlen(argv[optind]) != 1 ||
	    !strchr("wvz", argv[optind][0]) || nthreads < 1 || chunk == 0)
		goto usage;
	mode = argv[optind][0];
	path = argv[optind + 1];
	base = t_size(argv[optind + 2]);
	length = t_size(argv[optind + 3]);
	if (direct && ((base | length | chunk) & 4095)) {
		fprintf(stderr, "pattern: -d needs 4K aligned ranges\n");
		return 2;
	}

	fd = open(path,
		  (mode == 'w' ? O_WRONLY | O_CREAT : O_RDONLY) |
			  (direct ? O_DIRECT : 0),
		  0644);
	if (fd < 0) {
		printf("ERR open %s\n", t_errname(errno));
		return 1;
	}

	pthread_t *th = calloc((size_t)nthreads, sizeof(*th));
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i)) {
			printf("ERR pthread_create\n");
			return 1;
		}
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);

	if (mode == 'w' && do_fsync && fsync(fd))
		report("ERR fsync %s", t_errname(errno));
	if (close(fd))
		report("ERR close %s", t_errname(errno));
	if (failed)
		return 1;
	printf("OK %" PRIu64 "\n", length);
	return 0;

usage:
	fprintf(stderr, "usage: pattern w|v|z [-s SEED] [-b SIZE] [-j N] "
			"[-P I/N] [-R] [-d] [-f] FILE OFFSET LENGTH\n");
	return 2;
}
