// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * passfs.c -- the smallest FUSE filesystem a tierfs file tier can live
 * on: a passthrough of one directory, with libfuse3's high-level API.
 * For tests/integration/180-dead-tier.sh, which kills it with SIGKILL
 * to play a network filesystem whose server went away (sshfs killed):
 * every request on its mount then fails with ENOTCONN.
 *
 *     passfs DIR MOUNTPOINT [FUSE OPTIONS...]    (e.g. -f)
 *
 * What the file tier needs, and how it gets it here: mkdir and chmod of
 * its private directory, create (no O_TMPFILE in the high-level API, so
 * tierfs falls back to a named file, unlinked while open, which libfuse
 * keeps as .fuse_hiddenN, by rename, until it is closed), fchmod, ftruncate, fallocate (reserve and punch hole), pread/pwrite
 * from io_uring (punted to io-wq: FUSE has no nowait I/O), fdatasync,
 * statfs, readdir for the sweep of stale directories.  Opens keep
 * direct_io off (the default), like sshfs; the page cache it adds below
 * tierfs does no harm, since a dead connection fails cached reads too.
 *
 * Every path is resolved under DIR through one directory fd (openat and
 * friends with the path minus its leading '/'); every call returns
 * -errno.  Locking: none; libfuse's loop may run calls on several
 * threads, and each is one system call on its own fd or path.
 */
#define FUSE_USE_VERSION 314
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int base_fd = -1; /* DIR; immutable after main() opened it */

/* "/a/b" -> "a/b", "/" -> "." */
static const char *rel(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static void *pfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	cfg->use_ino = 1;
	/*
	 * Not hard_remove: the unlinked slab is renamed to .fuse_hiddenN
	 * and removed at release, so that a SETATTR without a file handle
	 * (fchmod) still has a path; a hard-removed node has none, and
	 * libfuse answers ESTALE.
	 */
	cfg->nullpath_ok = 1; /* readdir by its DIR, see pfs_opendir() */
	cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 0;
	return NULL;
}

static int pfs_getattr(const char *path, struct stat *st,
		       struct fuse_file_info *fi)
{
	int r = fi ? fstat((int)fi->fh, st)
		   : fstatat(base_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);

	return r < 0 ? -errno : 0;
}

static int pfs_mkdir(const char *path, mode_t mode)
{
	return mkdirat(base_fd, rel(path), mode) < 0 ? -errno : 0;
}

static int pfs_rmdir(const char *path)
{
	return unlinkat(base_fd, rel(path), AT_REMOVEDIR) < 0 ? -errno : 0;
}

static int pfs_unlink(const char *path)
{
	return unlinkat(base_fd, rel(path), 0) < 0 ? -errno : 0;
}

/* libfuse renames an open file to .fuse_hiddenN instead of unlinking */
static int pfs_rename(const char *from, const char *to, unsigned int flags)
{
	return renameat2(base_fd, rel(from), base_fd, rel(to), flags) < 0
		       ? -errno
		       : 0;
}

static int pfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int r = fi ? fchmod((int)fi->fh, mode)
		   : fchmodat(base_fd, rel(path), mode, 0);

	return r < 0 ? -errno : 0;
}

static int pfs_truncate(const char *path, off_t size,
			struct fuse_file_info *fi)
{
	int fd = fi ? (int)fi->fh
		    : openat(base_fd, rel(path), O_WRONLY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = ftruncate(fd, size) < 0 ? -errno : 0;
	if (!fi)
		(void)close(fd);
	return r;
}

static int pfs_open(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(base_fd, rel(path), (fi->flags & ~O_NOFOLLOW) |
						    O_CLOEXEC);

	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int pfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	int fd = openat(base_fd, rel(path), fi->flags | O_CREAT | O_CLOEXEC,
			mode);

	if (fd < 0)
		return -errno;
	fi->fh = (uint64_t)fd;
	return 0;
}

static int pfs_read(const char *path, char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	ssize_t r = pread((int)fi->fh, buf, len, off);

	return r < 0 ? -errno : (int)r;
}

static int pfs_write(const char *path, const char *buf, size_t len, off_t off,
		     struct fuse_file_info *fi)
{
	ssize_t r = pwrite((int)fi->fh, buf, len, off);

	return r < 0 ? -errno : (int)r;
}

static int pfs_release(const char *path, struct fuse_file_info *fi)
{
	(void)close((int)fi->fh);
	return 0;
}

static int pfs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	int r = datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh);

	return r < 0 ? -errno : 0;
}

static int pfs_fallocate(const char *path, int mode, off_t off, off_t len,
			 struct fuse_file_info *fi)
{
	return fallocate((int)fi->fh, mode, off, len) < 0 ? -errno : 0;
}

static int pfs_statfs(const char *path, struct statvfs *st)
{
	return fstatvfs(base_fd, st) < 0 ? -errno : 0;
}

/* opendir keeps the DIR: with nullpath_ok, readdir may get no path */
static int pfs_opendir(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(base_fd, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);

	if (!d) {
		int r = -errno;

		if (fd >= 0)
			(void)close(fd);
		return r;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	return 0;
}

static int pfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
		       off_t off, struct fuse_file_info *fi,
		       enum fuse_readdir_flags flags)
{
	DIR *d = (DIR *)(uintptr_t)fi->fh;
	struct dirent *de;

	/* offset 0 in every entry: libfuse buffers the whole listing */
	rewinddir(d);
	while ((de = readdir(d)))
		if (fill(buf, de->d_name, NULL, 0, 0))
			break;
	return 0;
}

static int pfs_releasedir(const char *path, struct fuse_file_info *fi)
{
	closedir((DIR *)(uintptr_t)fi->fh);
	return 0;
}

static const struct fuse_operations pfs_ops = {
	.init = pfs_init,
	.getattr = pfs_getattr,
	.mkdir = pfs_mkdir,
	.rmdir = pfs_rmdir,
	.unlink = pfs_unlink,
	.rename = pfs_rename,
	.chmod = pfs_chmod,
	.truncate = pfs_truncate,
	.open = pfs_open,
	.create = pfs_create,
	.read = pfs_read,
	.write = pfs_write,
	.release = pfs_release,
	.fsync = pfs_fsync,
	.fallocate = pfs_fallocate,
	.statfs = pfs_statfs,
	.opendir = pfs_opendir,
	.readdir = pfs_readdir,
	.releasedir = pfs_releasedir,
};

int main(int argc, char *argv[])
{
	if (argc < 3) {
		fprintf(stderr, "usage: passfs DIR MOUNTPOINT [FUSE OPTIONS...]\n");
		return 2;
	}
	base_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base_fd < 0) {
		perror(argv[1]);
		return 1;
	}
	/* fuse_main sees: passfs MOUNTPOINT [OPTIONS...] */
	argv[1] = argv[0];
	return fuse_main(argc - 1, argv + 1, &pfs_ops, NULL);
}
