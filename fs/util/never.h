/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * never.h -- NEVER(cond): a "cannot happen" check on a path that a
 * request, a disk or a full tier can reach.  assert() would end the
 * daemon, and with it the mount for every user (ENOTCONN), and it stays
 * on in the shipped debugoptimized build.  NEVER() instead evaluates to
 * the truth of @cond, and the first time it holds at that spot it logs
 * one line naming the file, line and condition, so the caller can fail
 * the request (usually with -EIO) and the mount lives on.  (SQLite's
 * NEVER() and the kernel's WARN_ON_ONCE() are the models.)
 *
 *     if (NEVER(slot >= t->nslots))
 *             return -EIO;
 */
#ifndef TIERFS_UTIL_NEVER_H
#define TIERFS_UTIL_NEVER_H

#include <stdbool.h>

#include "log.h"

#define NEVER(cond)                                                         \
	({                                                                  \
		static bool never_warned_; /* relaxed atomic, per site */   \
		bool never_c_ = !!(cond);                                   \
		if (never_c_ && !__atomic_exchange_n(&never_warned_, true,  \
						     __ATOMIC_RELAXED))     \
			log_msg(LOG_LVL_ERR,                                \
				"internal error at %s:%d: %s; failing the request", \
				__FILE__, __LINE__, #cond);                 \
		never_c_;                                                   \
	})

#endif /* TIERFS_UTIL_NEVER_H */
