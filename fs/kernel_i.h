/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel_i.h -- the /dev/fuse hooks of kernel.c, shared only with its
 * unit test (tests/unit/test_kernel.c), which feeds them requests and
 * replies through a pipe.
 */
#ifndef TIERFS_KERNEL_I_H
#define TIERFS_KERNEL_I_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct iovec;

/* read() one request from @fd and note what libfuse 3.14 drops; @userdata
 * is the struct tierfs.  Returns what read() returned, errno intact. */
ssize_t kernel_io_read(int fd, void *buf, size_t len, void *userdata);
/* writev() one reply to @fd, adding the chosen flags if it is INIT's. */
ssize_t kernel_io_writev(int fd, struct iovec *iov, int count,
			 void *userdata);

#endif /* TIERFS_KERNEL_I_H */
