/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuse_inc.h -- the libfuse API level we build against. */
#ifndef TIERFS_FUSE_INC_H
#define TIERFS_FUSE_INC_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#endif /* TIERFS_FUSE_INC_H */
