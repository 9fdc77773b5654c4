/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fdio.h -- read exactly n bytes of a descriptor (a splice pipe, mostly:
 * fs/kernel.c, fs/data.c, tiers/tier_io.c).
 */
#ifndef TIERFS_FDIO_H
#define TIERFS_FDIO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

/*
 * read_exact() - read @n bytes of @fd into @p, retrying EINTR and short
 * reads.  Return: 0; -EIO when @fd ends first; read()'s -errno.  On
 * failure part of @p may have been written.
 */
static inline int read_exact(int fd, void *p, size_t n)
{
	char *c = p;

	while (n > 0) {
		ssize_t k = read(fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

#endif /* TIERFS_FDIO_H */
