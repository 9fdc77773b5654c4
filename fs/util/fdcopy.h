/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fdcopy.h -- copies between two open files that keep holes as holes,
 * for native files' backing files (fs/native.c).  Each works on the
 * descriptors it is given and their offsets only; no lock, no state.
 * Return conventions: -errno on failure, as each says.
 */
#ifndef TIERFS_FDCOPY_H
#define TIERFS_FDCOPY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * fd_copy_range() - copy @len bytes from @src at *@in to @dst at *@out,
 * both offsets advanced: copy_file_range(2), or through a buffer where
 * the kernel refuses it (two filesystems: a tmpfs and a disk's).
 * Return: bytes copied (fewer at the end of @src), or -errno when none.
 */
ssize_t fd_copy_range(int src, loff_t *in, int dst, loff_t *out, size_t len);

/*
 * fd_copy_sparse() - copy [@off_in, @off_in + @len) of @src (to its end
 * at most) to @dst at @off_out as copy_file_range(2) would, holes as
 * holes: data ranges are copied, @dst's bytes under a hole of @src are
 * punched out, and @dst grows to the end of what was copied.
 * *@ret_done: the bytes done (holes too), also on failure.
 * Return: 0 or -errno.
 */
int fd_copy_sparse(int src, uint64_t off_in, int dst, uint64_t off_out,
		   size_t len, size_t *ret_done);

/* fd_copy_whole() - all of @src into empty @dst, at the same offsets,
 * holes kept, same size.  Return: 0 or -errno. */
int fd_copy_whole(int src, int dst);

/* fd_held_in() - the bytes of [@off, @off + @len) that @fd holds: data,
 * or space fallocate() reserved (SEEK_DATA finds both). */
uint64_t fd_held_in(int fd, uint64_t off, uint64_t len);

#endif /* TIERFS_FDCOPY_H */
