// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fillopen.c -- fill a filesystem through one file that stays open, and
 * say exactly where the error comes out.
 *
 *     fillopen [-s SEED] [-b CHUNK] [-S SYNC_EVERY] [-T SIZE] FILE MAX
 *
 * Opens FILE (O_CREAT|O_WRONLY|O_TRUNC) once, then writes the pattern of
 * common.h in CHUNK-byte write(2) calls (default 1M) from offset 0 until
 * MAX bytes or the first error, calling fsync(2) after every SYNC_EVERY
 * bytes (default 0: never) and close(2) at the end.  -T first sets the
 * file's size to SIZE with ftruncate(2), so that the data goes into a
 * hole inside the file rather than past its end.  A byte counts as
 * acknowledged once a write(2) returned it and a later fsync(2) or the
 * final close(2) succeeded (after a failed fsync, close adds nothing:
 * the error was already reported and the data since is in doubt).
 *
 * Output, one line per event and a summary:
 *   "ERR write|fsync|close ERRNO at OFF"   the first call that failed and
 *                                          the file offset written so far
 *   "written N acked M"                    bytes write(2) accepted, bytes
 *                                          acknowledged by fsync or close
 * Exit 0 whether or not the filesystem filled (the caller judges); 2 on
 * bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	uint64_t seed = 1, chunk = 1 << 20, sync_every = 0, presize = 0, max;
	uint64_t off = 0, acked = 0, since_sync = 0;
	unsigned char *buf;
	int c, fd;
	bool failed = false, sync_failed = false;

	while ((c = getopt(argc, argv, "s:b:S:T:")) != -1) {
		switch (c) {
		case 's': seed = t_size(optarg); break;
		case 'b': chunk = t_size(optarg); break;
		case 'S': sync_every = t_size(optarg); break;
		case 'T': presize = t_size(optarg); break;
		default: return 2;
		}
	}
	if (argc - optind != 2 || chunk == 0) {
		fprintf(stderr, "usage: fillopen [-s SEED] [-b CHUNK] [-S SYNC_EVERY] [-T SIZE] FILE MAX\n");
		return 2;
	}
	max = t_size(argv[optind + 1]);
	buf = malloc(chunk);
	if (!buf)
		return 2;
	fd = open(argv[optind], O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0) {
		printf("ERR open %s at 0\n", t_errname(errno));
		return 0;
	}
	if (presize && ftruncate(fd, (off_t)presize) < 0) {
		printf("ERR ftruncate %s at 0\n", t_errname(errno));
		return 0;
	}
	while (off < max) {
		size_t n = (size_t)(max - off < chunk ? max - off : chunk);
		ssize_t w;

		t_pat_fill(buf, off, n, seed);
		w = write(fd, buf, n);
		if (w < 0) {
			printf("ERR write %s at %llu\n", t_errname(errno),
			       (unsigned long long)off);
			failed = true;
			break;
		}
		off += (uint64_t)w;
		since_sync += (uint64_t)w;
		if (sync_every && since_sync >= sync_every) {
			if (fsync(fd) < 0) {
				printf("ERR fsync %s at %llu\n",
				       t_errname(errno),
				       (unsigned long long)off);
				failed = sync_failed = true;
				break;
			}
			acked = off;
			since_sync = 0;
		}
	}
	if (close(fd) < 0) {
		if (!failed)
			printf("ERR close %s at %llu\n", t_errname(errno),
			       (unsigned long long)off);
	} else if (!sync_failed) {
		acked = off;
	}
	printf("written %llu acked %llu\n", (unsigned long long)off,
	       (unsigned long long)acked);
	free(buf);
	return 0;
}
