/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ops.h -- the FUSE low-level operation table (ops.c). */
#ifndef TIERFS_OPS_H
#define TIERFS_OPS_H

#include "fuse_inc.h"

extern const struct fuse_lowlevel_ops tierfs_ops;

#endif /* TIERFS_OPS_H */
