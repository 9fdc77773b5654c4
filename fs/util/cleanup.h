/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cleanup.h -- scope-based cleanup for setup, config and CLI code
 * (systemd style).  Never mix these with goto unwinding in one function,
 * and never use them for locks in fs/ handlers: the span a lock is held
 * must be visible.
 */
#ifndef TIERFS_UTIL_CLEANUP_H
#define TIERFS_UTIL_CLEANUP_H

#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		(void)close(*fd);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		(void)fclose(*f);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

/* Take ownership out of a cleanup variable. */
#define TAKE_PTR(p)                           \
	({                                    \
		typeof(p) _tmp_ = (p);        \
		(p) = NULL;                   \
		_tmp_;                        \
	})
#define TAKE_FD(fd)                           \
	({                                    \
		int _tmp_ = (fd);             \
		(fd) = -1;                    \
		_tmp_;                        \
	})

#endif /* TIERFS_UTIL_CLEANUP_H */
