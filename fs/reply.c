// SPDX-License-Identifier: GPL-2.0-or-later
/* reply.c -- see reply.h. */
#include <assert.h>
#include <errno.h>

#include "reply.h"
#include "log.h"
#include "banned.h"

void tierfs_reply_err(fuse_req_t req, int ret)
{
	assert(ret <= 0);
	if (ret > 0) {
		/* a positive count where an error was expected: a bug, but
		 * the mount must live on */
		log_err("internal error: reply_err(%d)", ret);
		ret = -EIO;
	}
	fuse_reply_err(req, -ret);
}
