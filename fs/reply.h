/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reply.h -- the one place where -errno becomes a FUSE error reply.
 * libfuse wants the positive errno; everything below ops.c returns
 * -errno, so the sign flips here and nowhere else.
 */
#ifndef TIERFS_REPLY_H
#define TIERFS_REPLY_H

#include "fuse_inc.h"

/* @ret must be <= 0; 0 replies success for requests without data. */
void tierfs_reply_err(fuse_req_t req, int ret);

#endif /* TIERFS_REPLY_H */
