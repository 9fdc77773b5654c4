// SPDX-License-Identifier: GPL-2.0-or-later
/* reply.c -- see reply.h. */
#include <errno.h>

#include "reply.h"
#include "never.h"
#include "banned.h"

void tierfs_reply_err(fuse_req_t req, int ret)
{
	/* a positive count where an error was expected: a bug, but the
	 * mount must live on */
	if (NEVER(ret > 0))
		ret = -EIO;
	fuse_reply_err(req, -ret);
}
