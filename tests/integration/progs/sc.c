// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sc.c -- run one system call and print its outcome, for shell tests.
 *
 *     sc CMD ARGS...
 *
 * On success prints "OK" (followed by the call's result for queries) and
 * exits 0; on failure prints the errno name ("EEXIST") and exits 1.  Usage
 * errors exit 2.  The shell helper t_errno compares the first word.
 *
 * Commands:
 *   rename2 none|noreplace|exchange OLD NEW   renameat2(2) via syscall(2)
 *   rename OLD NEW | link OLD NEW | symlink TARGET PATH | readlink PATH
 *   unlink PATH | rmdir PATH | mkdir PATH MODE | mkfifo PATH MODE
 *   mknod PATH fifo|reg MODE
 *   open PATH FLAGS [MODE]      FLAGS: comma list of r,w,rw,creat,excl,trunc,
 *                               append,direct,dir,nofollow,path
 *   truncate PATH LEN | ftruncate PATH LEN
 *   chmod PATH MODE | chown PATH UID GID | lchown PATH UID GID
 *   utimens PATH ATIME MTIME    each: now | omit | SEC[.NSEC]
 *   stat PATH | lstat PATH      prints key=value fields
 *   statfs PATH                 prints key=value fields
 *   setxattr PATH NAME VALUE 0|create|replace   VALUE "@FILE" reads a file,
 *                               "-" is the empty value
 *   getxattr PATH NAME BUFSIZE [OUTFILE]   prints the value length
 *   listxattr PATH BUFSIZE      prints the names
 *   removexattr PATH NAME
 *   fallocate PATH MODE OFF LEN MODE: 0|keep|punch|zero|zerokeep|collapse|insert
 *   access PATH r|w|x|rw|rx|wx|rwx|f
 *   fsync PATH | fdatasync PATH (open O_RDWR, a directory O_RDONLY; sync)
 *   write PATH OFF STRING       pwrite (O_WRONLY|O_CREAT, 0644, no trunc)
 *   read PATH OFF LEN           prints the bytes read
 *   links PATH PREFIX N         link(PATH, PREFIX<i>) for i = 0 .. N-1,
 *                               stopping at the first failure
 *   symlinks LEN PREFIX N       symlink(a target of LEN bytes, PREFIX<i>),
 *                               the same way
 *       both print "OK N" when all were made, else "ERRNO I" (the
 *       errno name of the first failure and how many were made before)
 */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "common.h"

static int fail(void)
{
	printf("%s\n", t_errname(errno));
	return 1;
}

static int ok(void)
{
	printf("OK\n");
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sc CMD ARGS... (see sc.c)\n");
	exit(2);
}

static long num(const char *s)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (*s == 0 || *end)
		usage();
	return v;
}

static mode_t mode_arg(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 8);

	if (*s == 0 || *end)
		usage();
	return (mode_t)v;
}

static int open_flags(const char *s)
{
	char buf[256];
	int fl = 0, acc = O_RDONLY;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		if (!strcmp(tok, "r"))
			acc = O_RDONLY;
		else if (!strcmp(tok, "w"))
			acc = O_WRONLY;
		else if (!strcmp(tok, "rw"))
			acc = O_RDWR;
		else if (!strcmp(tok, "creat"))
			fl |= O_CREAT;
		else if (!strcmp(tok, "excl"))
			fl |= O_EXCL;
		else if (!strcmp(tok, "trunc"))
			fl |= O_TRUNC;
		else if (!strcmp(tok, "append"))
			fl |= O_APPEND;
		else if (!strcmp(tok, "direct"))
			fl |= O_DIRECT;
		else if (!strcmp(tok, "dir"))
			fl |= O_DIRECTORY;
		else if (!strcmp(tok, "nofollow"))
			fl |= O_NOFOLLOW;
		else if (!strcmp(tok, "path"))
			fl |= O_PATH;
		else
			usage();
	}
	return fl | acc;
}

static bool parse_ts(const char *s, struct timespec *ts)
{
	char *end;

	if (!strcmp(s, "now")) {
		ts->tv_sec = 0;
		ts->tv_nsec = UTIME_NOW;
		return true;
	}
	if (!strcmp(s, "omit")) {
		ts->tv_sec = 0;
		ts->tv_nsec = UTIME_OMIT;
		return true;
	}
	ts->tv_sec = strtoll(s, &end, 10);
	ts->tv_nsec = 0;
	if (*end == '.') {
		const char *p = end + 1;
		long ns = 0;
		int digits = 0;

		for (; isdigit((unsigned char)*p) && digits < 9; p++, digits++)
			ns = ns * 10 + (*p - '0');
		for (; digits < 9; digits++)
			ns *= 10;
		ts->tv_nsec = ns;
		end = (char *)p;
	}
	return *end == 0;
}

static void print_stat(const struct stat *st)
{
	printf("OK ino=%llu nlink=%llu mode=%04o type=%s uid=%u gid=%u size=%lld "
	       "blocks=%lld blksize=%ld atime=%lld.%09ld mtime=%lld.%09ld "
	       "ctime=%lld.%09ld rdev=%llu\n",
	       (unsigned long long)st->st_ino,
	       (unsigned long long)st->st_nlink, st->st_mode & 07777,
	       S_ISREG(st->st_mode)    ? "reg" :
	       S_ISDIR(st->st_mode)  ? "dir" :
	       S_ISLNK(st->st_mode)  ? "lnk" :
	       S_ISFIFO(st->st_mode) ? "fifo" :
	       S_ISCHR(st->st_mode)  ? "chr" :
	       S_ISBLK(st->st_mode)  ? "blk" :
	       S_ISSOCK(st->st_mode) ? "sock" :
				       "?",
	       st->st_uid, st->st_gid, (long long)st->st_size,
	       (long long)st->st_blocks, (long)st->st_blksize,
	       (long long)st->st_atim.tv_sec, st->st_atim.tv_nsec,
	       (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
	       (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec,
	       (unsigned long long)st->st_rdev);
}

static char *read_value(const char *arg, size_t *len)
{
	if (!strcmp(arg, "-")) {
		*len = 0;
		return strdup("");
	}
	if (arg[0] != '@') {
		*len = strlen(arg);
		return strdup(arg);
	}
	FILE *f = fopen(arg + 1, "rb");
	if (!f) {
		perror(arg + 1);
		exit(2);
	}
	char *buf = malloc(1 << 20);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		usage();
	const char *cmd = argv[1];
	const char *p = argv[2];
	int n = argc - 2; /* args after CMD */
	int fd;

	if (!strcmp(cmd, "rename2") && n == 3) {
		unsigned fl = 0;

		if (!strcmp(p, "noreplace"))
			fl = RENAME_NOREPLACE;
		else if (!strcmp(p, "exchange"))
			fl = RENAME_EXCHANGE;
		else if (!strcmp(p, "whiteout"))
			fl = RENAME_WHITEOUT;
		else if (strcmp(p, "none"))
			usage();
		if (syscall(SYS_renameat2, AT_FDCWD, argv[3], AT_FDCWD,
			    argv[4], fl))
			return fail();
		return ok();
	}
	if (!strcmp(cmd, "rename") && n == 2)
		return rename(p, argv[3]) ? fail() : ok();
	if ((!strcmp(cmd, "links") || !strcmp(cmd, "symlinks")) && n == 3) {
		bool sym = !strcmp(cmd, "symlinks");
		long count = num(argv[4]), i, len = sym ? num(p) : 0;
		char *target = NULL, *path;

		if (sym) {
			if (len < 1 || len > 4095)
				usage();
			target = malloc((size_t)len + 1);
			if (!target)
				usage();
			memset(target, 't', (size_t)len);
			target[len] = '\0';
		}
		path = malloc(strlen(argv[3]) + 24);
		if (!path)
			usage();
		for (i = 0; i < count; i++) {
			sprintf(path, "%s%ld", argv[3], i);
			if (sym ? symlink(target, path) : link(p, path)) {
				printf("%s %ld\n", t_errname(errno), i);
				return 1;
			}
		}
		printf("OK %ld\n", i);
		return 0;
	}
	if (!strcmp(cmd, "link") && n == 2)
		return link(p, argv[3]) ? fail() : ok();
	if (!strcmp(cmd, "symlink") && n == 2)
		return symlink(p, argv[3]) ? fail() : ok();
	if (!strcmp(cmd, "readlink") && n == 1) {
		char buf[8192];
		ssize_t r = readlink(p, buf, sizeof(buf) - 1);

		if (r < 0)
			return fail();
		buf[r] = 0;
		printf("OK %s\n", buf);
		return 0;
	}
	if (!strcmp(cmd, "unlink") && n == 1)
		return unlink(p) ? fail() : ok();
	if (!strcmp(cmd, "rmdir") && n == 1)
		return rmdir(p) ? fail() : ok();
	if (!strcmp(cmd, "mkdir") && n == 2)
		return mkdir(p, mode_arg(argv[3])) ? fail() : ok();
	if (!strcmp(cmd, "mkfifo") && n == 2)
		return mkfifo(p, mode_arg(argv[3])) ? fail() : ok();
	if (!strcmp(cmd, "mknod") && n == 3) {
		mode_t t = !strcmp(argv[3], "fifo") ? S_IFIFO :
			   !strcmp(argv[3], "reg")  ? S_IFREG :
						      0;
		if (!t)
			usage();
		return mknod(p, t | mode_arg(argv[4]), 0) ? fail() : ok();
	}
	if (!strcmp(cmd, "open") && (n == 2 || n == 3)) {
		fd = open(p, open_flags(argv[3]), n == 3 ? mode_arg(argv[4]) : 0644);
		if (fd < 0)
			return fail();
		close(fd);
		return ok();
	}
	if (!strcmp(cmd, "truncate") && n == 2)
		return truncate(p, (off_t)t_size(argv[3])) ? fail() : ok();
	if (!strcmp(cmd, "ftruncate") && n == 2) {
		fd = open(p, O_WRONLY);
		if (fd < 0 || ftruncate(fd, (off_t)t_size(argv[3])))
			return fail();
		if (close(fd))
			return fail();
		return ok();
	}
	if (!strcmp(cmd, "chmod") && n == 2)
		return chmod(p, mode_arg(argv[3])) ? fail() : ok();
	if (!strcmp(cmd, "chown") && n == 3)
		return chown(p, (uid_t)num(argv[3]), (gid_t)num(argv[4])) ?
			       fail() :
			       ok();
	if (!strcmp(cmd, "lchown") && n == 3)
		return lchown(p, (uid_t)num(argv[3]), (gid_t)num(argv[4])) ?
			       fail() :
			       ok();
	if (!strcmp(cmd, "utimens") && n == 3) {
		struct timespec ts[2];

		if (!parse_ts(argv[3], &ts[0]) || !parse_ts(argv[4], &ts[1]))
			usage();
		return utimensat(AT_FDCWD, p, ts, 0) ? fail() : ok();
	}
	if ((!strcmp(cmd, "stat") || !strcmp(cmd, "lstat")) && n == 1) {
		struct stat st;

		if ((cmd[0] == 'l' ? lstat(p, &st) : stat(p, &st)))
			return fail();
		print_stat(&st);
		return 0;
	}
	if (!strcmp(cmd, "statfs") && n == 1) {
		struct statfs s;

		if (statfs(p, &s))
			return fail();
		printf("OK bsize=%ld frsize=%ld blocks=%llu bfree=%llu "
		       "bavail=%llu files=%llu ffree=%llu namemax=%ld\n",
		       (long)s.f_bsize, (long)s.f_frsize,
		       (unsigned long long)s.f_blocks,
		       (unsigned long long)s.f_bfree,
		       (unsigned long long)s.f_bavail,
		       (unsigned long long)s.f_files,
		       (unsigned long long)s.f_ffree, (long)s.f_namelen);
		return 0;
	}
	if (!strcmp(cmd, "setxattr") && n == 4) {
		size_t len;
		char *v = read_value(argv[4], &len);
		int fl = !strcmp(argv[5], "create")  ? XATTR_CREATE :
			 !strcmp(argv[5], "replace") ? XATTR_REPLACE :
						       0;

		return setxattr(p, argv[3], v, len, fl) ? fail() : ok();
	}
	if (!strcmp(cmd, "getxattr") && (n == 3 || n == 4)) {
		size_t sz = (size_t)num(argv[4]);
		char *buf = malloc(sz + 1);
		ssize_t r = getxattr(p, argv[3], sz ? buf : NULL, sz);

		if (r < 0)
			return fail();
		printf("OK %zd\n", r);
		if (n == 4 && sz) {
			FILE *f = fopen(argv[5], "wb");

			if (!f || fwrite(buf, 1, (size_t)r, f) != (size_t)r ||
			    fclose(f)) {
				perror(argv[5]);
				return 2;
			}
		}
		return 0;
	}
	if (!strcmp(cmd, "listxattr") && n == 2) {
		size_t sz = (size_t)num(argv[3]);
		char *buf = malloc(sz + 1);
		ssize_t r = listxattr(p, sz ? buf : NULL, sz);

		if (r < 0)
			return fail();
		printf("OK %zd", r);
		if (sz)
			for (ssize_t i = 0; i < r; i += strlen(buf + i) + 1)
				printf(" %s", buf + i);
		printf("\n");
		return 0;
	}
	if (!strcmp(cmd, "removexattr") && n == 2)
		return removexattr(p, argv[3]) ? fail() : ok();
	if (!strcmp(cmd, "fallocate") && n == 4) {
		const char *m = argv[3];
		int mode = !strcmp(m, "0")	  ? 0 :
			   !strcmp(m, "keep")	  ? FALLOC_FL_KEEP_SIZE :
			   !strcmp(m, "punch")	  ? FALLOC_FL_PUNCH_HOLE |
						     FALLOC_FL_KEEP_SIZE :
			   !strcmp(m, "zero")	  ? FALLOC_FL_ZERO_RANGE :
			   !strcmp(m, "zerokeep") ? FALLOC_FL_ZERO_RANGE |
							    FALLOC_FL_KEEP_SIZE :
			   !strcmp(m, "collapse") ? FALLOC_FL_COLLAPSE_RANGE :
			   !strcmp(m, "insert")	  ? FALLOC_FL_INSERT_RANGE :
						    -1;
		if (mode < 0)
			usage();
		fd = open(p, O_RDWR);
		if (fd < 0)
			return fail();
		if (fallocate(fd, mode, (off_t)t_size(argv[4]),
			      (off_t)t_size(argv[5])))
			return fail();
		return close(fd) ? fail() : ok();
	}
	if (!strcmp(cmd, "access") && n == 2) {
		int m = 0;

		for (const char *c = argv[3]; *c; c++)
			m |= *c == 'r' ? R_OK :
			     *c == 'w' ? W_OK :
			     *c == 'x' ? X_OK :
					 F_OK;
		return access(p, m) ? fail() : ok();
	}
	if ((!strcmp(cmd, "fsync") || !strcmp(cmd, "fdatasync")) && n == 1) {
		fd = open(p, O_RDWR);
		if (fd < 0 && errno == EISDIR) /* directory: fsyncdir */
			fd = open(p, O_RDONLY | O_DIRECTORY);
		if (fd < 0)
			return fail();
		if (cmd[1] == 's' ? fsync(fd) : fdatasync(fd))
			return fail();
		return close(fd) ? fail() : ok();
	}
	if (!strcmp(cmd, "write") && n == 3) {
		size_t len = strlen(argv[4]);

		fd = open(p, O_WRONLY | O_CREAT, 0644);
		if (fd < 0)
			return fail();
		ssize_t r = pwrite(fd, argv[4], len, (off_t)t_size(argv[3]));
		if (r < 0)
			return fail();
		if (close(fd))
			return fail();
		if ((size_t)r != len) {
			printf("SHORT %zd\n", r);
			return 1;
		}
		return ok();
	}
	if (!strcmp(cmd, "read") && n == 3) {
		size_t len = (size_t)t_size(argv[4]);
		char *buf = malloc(len + 1);

		fd = open(p, O_RDONLY);
		if (fd < 0)
			return fail();
		ssize_t r = pread(fd, buf, len, (off_t)t_size(argv[3]));
		if (r < 0)
			return fail();
		close(fd);
		printf("OK ");
		fwrite(buf, 1, (size_t)r, stdout);
		printf("\n");
		return 0;
	}
	usage();
	return 2;
}
