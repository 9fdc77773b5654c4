// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fdcopy.c -- copies that keep holes (fdcopy.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdcopy.h"
#include "macro.h"
#include "banned.h"

ssize_t fd_copy_range(int src, loff_t *in, int dst, loff_t *out, size_t len)
{
	enum { BUF = 1 << 20 };
	char *buf = NULL;
	size_t done = 0;
	int err = 0;

	while (done < len) {
		ssize_t r, w;

		if (!buf) {
			r = copy_file_range(src, in, dst, out, len - done, 0);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 && (errno == EXDEV || errno == EOPNOTSUPP ||
				      errno == EINVAL || errno == ENOSYS)) {
				buf = malloc(BUF);
				if (!buf) {
					err = -ENOMEM;
					break;
				}
				continue;
			}
			if (r < 0)
				err = -errno;
			if (r <= 0)
				break;
			done += (size_t)r;
			continue;
		}
		r = pread(src, buf, MIN((size_t)BUF, len - done), *in);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = -errno;
		if (r <= 0)
			break;
		for (ssize_t k = 0; k < r; k += w) {
			w = pwrite(dst, buf + k, (size_t)(r - k), *out + k);
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w < 0) {
				err = -errno;
				r = k; /* what went */
				break;
			}
		}
		*in += r;
		*out += r;
		done += (size_t)r;
		if (err)
			break;
	}
	free(buf);
	return done ? (ssize_t)done : (ssize_t)err;
}

int fd_copy_sparse(int src, uint64_t off_in, int dst, uint64_t off_out,
		   size_t len, size_t *ret_done)
{
	struct stat st;
	uint64_t end, pos = off_in;
	int err = 0;

	*ret_done = 0;
	if (fstat(src, &st) < 0)
		return -errno;
	end = MIN((uint64_t)st.st_size, off_in + len);
	while (pos < end) {
		off_t data = lseek(src, (off_t)pos, SEEK_DATA);
		uint64_t d = data < 0 ? end : MIN((uint64_t)data, end);
		off_t hole;
		loff_t in, out;

		if (data < 0 && errno != ENXIO)
			return -errno;
		if (d > pos) {
			/* the source's hole: none in the destination either */
			if (fallocate(dst, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				      (off_t)(off_out + (pos - off_in)),
				      (off_t)(d - pos)) < 0 &&
			    errno != EOPNOTSUPP)
				return -errno;
			pos = d;
			*ret_done = (size_t)(pos - off_in);
			continue;
		}
		hole = lseek(src, (off_t)pos, SEEK_HOLE);
		if (hole < 0)
			return -errno;
		in = (loff_t)pos;
		out = (loff_t)(off_out + (pos - off_in));
		while ((uint64_t)in < MIN((uint64_t)hole, end)) {
			ssize_t r = fd_copy_range(src, &in, dst, &out,
					       (size_t)(MIN((uint64_t)hole, end) -
							(uint64_t)in));

			if (r <= 0) {
				err = r < 0 ? (int)r : 0;
				*ret_done = (size_t)((uint64_t)in - off_in);
				return err;
			}
		}
		pos = (uint64_t)in;
		*ret_done = (size_t)(pos - off_in);
	}
	/* a hole at the end: the destination still grows over it */
	if (end > off_in && fstat(dst, &st) == 0 &&
	    (uint64_t)st.st_size < off_out + (end - off_in) &&
	    ftruncate(dst, (off_t)(off_out + (end - off_in))) < 0)
		return -errno;
	return 0;
}

int fd_copy_whole(int src, int dst)
{
	off_t pos = 0, end;
	struct stat st;

	if (fstat(src, &st) < 0)
		return -errno;
	end = st.st_size;
	while (pos < end) {
		off_t data = lseek(src, pos, SEEK_DATA);
		off_t hole;
		loff_t in, out;

		if (data < 0)
			break; /* ENXIO: only a hole is left */
		hole = lseek(src, data, SEEK_HOLE);
		if (hole < 0)
			return -errno;
		in = out = data;
		while (in < hole) {
			ssize_t r = fd_copy_range(src, &in, dst, &out,
					       (size_t)(hole - in));

			if (r < 0)
				return (int)r;
			if (r == 0)
				return -EIO; /* shrank under us */
		}
		pos = hole;
	}
	if (ftruncate(dst, end) < 0)
		return -errno;
	return 0;
}

uint64_t fd_held_in(int fd, uint64_t off, uint64_t len)
{
	uint64_t end = off + len, pos = off, held = 0;

	while (pos < end) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
		off_t h;

		if (d < 0 || (uint64_t)d >= end)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0)
			break;
		held += MIN((uint64_t)h, end) - (uint64_t)d;
		pos = (uint64_t)h;
	}
	return held;
}
