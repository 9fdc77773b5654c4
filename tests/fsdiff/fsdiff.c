// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fsdiff.c -- differential filesystem tester.
 *
 * fsdiff performs the same pseudo-random sequence of filesystem operations
 * on two directory trees, A (the filesystem under test, e.g. a tierfs mount)
 * and B (the reference, e.g. a tmpfs), and compares after every step the
 * return value, errno and any data the operation returned.  The first
 * difference is printed (step, operation, both results) and fsdiff exits 1.
 * The op sequence is a pure function of the seed and the reference tree's
 * state, so a seed reproduces a run exactly.
 *
 * Usage:
 *   fsdiff [OPTIONS] A B
 *     --seed N         PRNG seed (default 1)
 *     --ops N          number of operations (default 20000)
 *     -v               print every op as a replayable log line; -vv also
 *                      prints both results
 *     --replay FILE    run the op lines of FILE (a -v log, possibly edited)
 *                      instead of generating ops; "-" reads stdin
 *     --minimize       on a mismatch, shrink the op list (delta debugging:
 *                      replays subsets on freshly cleaned trees) and print
 *                      the smallest list that still fails the same way
 *     --clean          empty both trees first (default: they must be empty)
 *     --disable OPS    comma-separated op names never to generate
 *     --only OPS       generate only these ops (open/close always allowed)
 *     --budget MIB     bound on file data, counted in 1 MiB chunks (24)
 *     --max-file MIB   bound on one file's size (4)
 *     --op-timeout S   watchdog: abort if one op takes longer (60; 0 = off)
 *     --no-user        never run ops as an ordinary user (by default, when
 *                      run as root, one op in five runs with fsuid/fsgid
 *                      1000 or 65534, logged as "u=1000")
 *     --no-direct      never open with O_DIRECT (a native file on a disk
 *                      tier has its filesystem's alignment rules for it)
 *     --stats          print per-op counts of successes and errors
 *     --list-ops       print the op names and weights
 *
 * Long soaks by hand (tierfs on /mnt/t, a tmpfs on /mnt/ref):
 *   mount -t tmpfs -o size=256M,mode=0755,nodev,nosuid ref /mnt/ref
 *   tierfs -f --tier ram=ram:64M --extent-size 64K /mnt/t &
 *   fsdiff --clean --seed 42 --ops 1000000 /mnt/t /mnt/ref
 * and, after a failure, to get a short reproducer:
 *   fsdiff --clean --seed 42 --ops 1000000 --minimize /mnt/t /mnt/ref
 *   fsdiff --clean -v --replay min.log /mnt/t /mnt/ref
 * Minimized reproducers are kept as tests/fsdiff/cases/NAME.log; run.sh
 * replays each of them after the random runs ("#" lines are comments).
 * Build by hand:  cc -O2 -g -Wall -Wextra -D_GNU_SOURCE -pthread \
 *                    -o fsdiff fsdiff.c
 *
 * Ops (weights: --list-ops; names for --only/--disable):
 *   fds      open (RDONLY/WRONLY/RDWR with CREAT, EXCL, TRUNC, APPEND,
 *            DIRECTORY, NOFOLLOW, DIRECT, SYNC, NOATIME), close
 *   data     write, pwrite, read, pread, lseek, ftruncate, truncate,
 *            fallocate (0, KEEP_SIZE, PUNCH_HOLE|KEEP_SIZE), copy_range,
 *            mmap_read, mmap_write (MAP_SHARED + msync), fsync, fdatasync,
 *            dropcache (fsync + POSIX_FADV_DONTNEED, so the next read
 *            reaches the daemon instead of the page cache)
 *   names    unlink, mkdir, rmdir, rename (0, NOREPLACE, EXCHANGE), link,
 *            symlink, readlink, mknod (FIFO, regular, socket, /dev/null),
 *            readdir, bulk_create/bulk_remove (50-450 long names: readdir
 *            pagination)
 *   attrs    stat, lstat, fstat, chmod, fchmod, chown (to 0, 1000, 65534,
 *            -1), utimes, umask, samefile (are two names one inode?),
 *            mtime_mark/mtime_check (did a later op update mtime?)
 *   xattrs   setxattr (CREATE, REPLACE; values up to 64 KiB and one byte
 *            over), getxattr and listxattr (buffer sizes 0, small, big),
 *            removexattr, fsetxattr, fgetxattr; l*() variants on symlinks
 *   checks   fdcheck (all data of an open file, unlinked ones too, through
 *            a new description after dropping the cache), treecheck (every
 *            entry: stat, target, data hash, xattrs); both run at the end
 *            of every generated run as well
 * I/O sizes run up to 300 KiB, at offsets near 64 KiB and 1 MiB
 * boundaries, at and beyond EOF, unaligned; a few ops go to "far" offsets
 * (2^31 ... 2^62 and just below the largest file size, see far_offs).
 *
 * Namespace: eight names, paths up to depth 3 (deeper after renames), so
 * creations collide and errors (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY,
 * ELOOP, ENAMETOOLONG...) are frequent.  Paths are picked among entries
 * that exist in B (by type where it matters, e.g. symlinks for readlink),
 * or made of an existing directory and a new name, or random; some get
 * "/", "/." or "./" added, or a 255/256-byte name.  Symlink targets are
 * relative and never contain "..", so nothing resolves outside a tree.
 * Open fds live in NSLOT slots, the same slot on both sides; files stay
 * open across unlink and rename.  Opens always add O_NONBLOCK (so FIFOs
 * never block) and O_CLOEXEC.  When run as root, one op in five runs with
 * fsuid/fsgid 1000 or 65534 (per thread; drops CAP_DAC_OVERRIDE, CAP_FOWNER
 * and CAP_FSETID), so permission checks and suid/sgid clearing apply.
 *
 * Space: the total file data is kept under --budget, counting every 1 MiB
 * chunk that holds data in B (or is allocated by fallocate) as a whole
 * MiB, so a tierfs with any extent size up to 1 MiB and a 64 MiB RAM tier
 * never fills.  An op that would exceed the budget is replaced by a
 * truncate of an existing file.
 *
 * Compared after every op: return value, errno, and the op's data: bytes
 * read (read, pread, mmap_read, fdcheck), stat fields, the sorted readdir
 * names and d_types, readlink targets, xattr values and sorted lists, the
 * treecheck listing.  Everything must agree exactly, except for these
 * exemptions, each allowed by POSIX, decided by the kernel rather than
 * the filesystem, or part of the tierfs design:
 *  - stat: st_dev, st_ino (samefile compares inode identity instead),
 *    st_blksize, st_blocks (allocation is the filesystem's business),
 *    atime and ctime, and st_size of directories (unspecified; tmpfs
 *    counts 20 bytes per entry) are not compared.  mtime is compared right
 *    after utimes to the second (granularity is the filesystem's choice)
 *    and by mtime_check as "moved or not".
 *  - S_ISGID of a regular file without S_IXGRP: POSIX lets write and
 *    truncate keep or clear it; the VFS and the FUSE kernel module differ
 *    (see stat_text()).
 *  - truncates to the current size are not generated: whether they update
 *    mtime is unspecified (truncate(): "if the file size is changed").
 *  - mtime_check skips FIFOs, sockets and devices: their I/O stays in the
 *    kernel, and FUSE never tells the daemon about the mtime a FIFO write
 *    sets.  POSIX wants the update; this is a FUSE limitation, not a
 *    daemon bug, and is listed as such rather than hidden.
 *  - readdir: "." and ".." are dropped (POSIX lets a filesystem omit
 *    them); d_type is compared only where both sides report one.
 *  - errno: rmdir() and rename() onto a non-empty directory may say
 *    EEXIST or ENOTEMPTY (POSIX allows both).
 *  - listxattr: "user.tierfs.*" names are dropped from the lists
 *    (DESIGN.md: virtual, read-only policy attributes); no op names them.
 *  - lseek: SEEK_DATA/SEEK_HOLE are not used (reporting holes as data is
 *    allowed); lseek on a directory runs but is not compared (unspecified
 *    by POSIX, decided by the kernel: FUSE allows SEEK_END, tmpfs says
 *    EINVAL, ext4 returns a hash offset).
 *  - umask returns 0 here (the old mask is process-wide, set by A's run).
 *  - fsync/fdatasync: only the result (tierfs is scratch).
 * Not covered: concurrency, seekdir/telldir, SEEK_DATA/SEEK_HOLE, O_TMPFILE,
 * flock/fcntl locks, statfs, timestamps other than the above.
 *
 * Exit status: 0 no mismatch, 1 mismatch, 2 usage or setup error, 3 an op
 * hung longer than --op-timeout.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* renameat2, copy_file_range, fallocate, SEEK_DATA */
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/fsuid.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#define NSLOT 6
#define PATH_BUF 1280		/* relative paths, incl. long names */
#define FULL_BUF (PATH_BUF + PATH_MAX)
#define KIB 1024ULL
#define MIB (1024ULL * 1024ULL)
#define CHUNK MIB		/* space accounting granule: largest extent */
#define MAX_IO (300 * KIB)	/* largest single read/write */
#define XATTR_BIG 65536		/* buffer size for "get everything" */
#define BULK_PREFIX "zz"	/* bulk-created names; never picked as paths */
#define MTIME_MARK 1000000000	/* mtime_mark's time: 2001-09-09 */

/* ------------------------------------------------------------------ */
/* small utilities */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fsdiff: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		die("out of memory");
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("out of memory");
	return p;
}

/* growable byte buffer; payloads and formatted text */
struct buf {
	char *d;
	size_t len, cap;
};

static void buf_reserve(struct buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	b->cap = (b->len + extra + 1) * 2;
	b->d = xrealloc(b->d, b->cap);
}

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (!n)
		return;
	buf_reserve(b, n);
	memcpy(b->d + b->len, p, n);
	b->len += n;
	b->d[b->len] = '\0';
}

static void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char probe[1];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(probe, sizeof(probe), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->d + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static void buf_clear(struct buf *b)
{
	b->len = 0;
	if (b->d)
		b->d[0] = '\0';
}

static void buf_free(struct buf *b)
{
	free(b->d);
	b->d = NULL;
	b->len = b->cap = 0;
}

static const char *errname(int e)
{
	const char *n = e ? strerrorname_np(e) : "0";

	return n ? n : "E???";
}

/* ------------------------------------------------------------------ */
/* PRNG: splitmix64, deterministic from the seed on every platform */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [0, n); n == 0 gives 0 */
static uint64_t rnd(struct rng *r, uint64_t n)
{
	return n ? rng_next(r) % n : 0;
}

static bool chance(struct rng *r, unsigned percent)
{
	return rnd(r, 100) < percent;
}

/*
 * Data of a write or xattr value: a function of (ds, len) only.  One in
 * eight seeds gives zeros (so zero data and holes meet), one a repeated
 * byte, the rest pseudo-random bytes.
 */
static void fill_data(unsigned char *p, size_t len, uint64_t ds)
{
	struct rng r = { ds };
	size_t i;

	switch (ds % 8) {
	case 6:
		memset(p, 0, len);
		return;
	case 7:
		memset(p, (int)((ds >> 8) & 0xff) | 1, len);
		return;
	}
	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = rng_next(&r);

		memcpy(p + i, &v, 8);
	}
	if (i < len) {
		uint64_t v = rng_next(&r);

		memcpy(p + i, &v, len - i);
	}
}

/* ------------------------------------------------------------------ */
/* operations */

enum opcode {
	OP_OPEN,
	OP_CLOSE,
	OP_WRITE,
	OP_PWRITE,
	OP_READ,
	OP_PREAD,
	OP_LSEEK,
	OP_FTRUNCATE,
	OP_TRUNCATE,
	OP_FALLOCATE,
	OP_FSYNC,
	OP_FDATASYNC,
	OP_FSTAT,
	OP_STAT,
	OP_LSTAT,
	OP_UNLINK,
	OP_MKDIR,
	OP_RMDIR,
	OP_RENAME,
	OP_LINK,
	OP_SYMLINK,
	OP_READLINK,
	OP_CHMOD,
	OP_FCHMOD,
	OP_CHOWN,
	OP_SETXATTR,
	OP_GETXATTR,
	OP_LISTXATTR,
	OP_REMOVEXATTR,
	OP_FSETXATTR,
	OP_FGETXATTR,
	OP_READDIR,
	OP_MKNOD,
	OP_UMASK,
	OP_UTIMES,
	OP_SAMEFILE,
	OP_COPY_RANGE,
	OP_MMAP_READ,
	OP_MMAP_WRITE,
	OP_BULK_CREATE,
	OP_BULK_REMOVE,
	OP_FDCHECK,
	OP_TREECHECK,
	OP_MTIME_MARK,
	OP_MTIME_CHECK,
	OP_DROPCACHE,
	OP_NOP,
	_OP_MAX
};

/* which fields of struct op an opcode uses (and logs) */
enum {
	F_S = 1 << 0,
	F_S2 = 1 << 1,
	F_P = 1 << 2,
	F_Q = 1 << 3,
	F_FL = 1 << 4,
	F_MODE = 1 << 5,
	F_OFF = 1 << 6,
	F_OFF2 = 1 << 7,
	F_LEN = 1 << 8,
	F_DS = 1 << 9,
	F_NAME = 1 << 10,
	F_X = 1 << 11,
	F_Y = 1 << 12,
};

struct op {
	enum opcode code;
	int s, s2;		/* fd slots */
	char p[PATH_BUF];	/* path relative to the tree root */
	char q[PATH_BUF];	/* second path, or a symlink target (raw) */
	long fl;		/* flags, symbolic in the log (see opdef.fltab) */
	unsigned mode;
	int64_t off, off2;
	uint64_t len;
	uint64_t ds;		/* data seed, see fill_data() */
	char name[300];		/* xattr name */
	long x, y;		/* op-specific, see opdef.xtab */
	unsigned u;		/* run as fsuid = fsgid = u (0: as we are) */
};

struct flagname {
	const char *name;
	long value, mask;	/* matches when (fl & mask) == value */
};

static const struct flagname open_flags[] = {
	{ "RDONLY", O_RDONLY, O_ACCMODE },
	{ "WRONLY", O_WRONLY, O_ACCMODE },
	{ "RDWR", O_RDWR, O_ACCMODE },
	{ "CREAT", O_CREAT, O_CREAT },
	{ "EXCL", O_EXCL, O_EXCL },
	{ "TRUNC", O_TRUNC, O_TRUNC },
	{ "APPEND", O_APPEND, O_APPEND },
	{ "DIRECTORY", O_DIRECTORY, O_DIRECTORY },
	{ "NOFOLLOW", O_NOFOLLOW, O_NOFOLLOW },
	{ "DIRECT", O_DIRECT, O_DIRECT },
	{ "SYNC", O_SYNC, O_SYNC },
	{ "NOATIME", O_NOATIME, O_NOATIME },
	{ NULL, 0, 0 },
};
static const struct flagname rename_flags[] = {
	{ "NOREPLACE", RENAME_NOREPLACE, RENAME_NOREPLACE },
	{ "EXCHANGE", RENAME_EXCHANGE, RENAME_EXCHANGE },
	{ NULL, 0, 0 },
};
static const struct flagname falloc_flags[] = {
	{ "KEEP_SIZE", FALLOC_FL_KEEP_SIZE, FALLOC_FL_KEEP_SIZE },
	{ "PUNCH_HOLE", FALLOC_FL_PUNCH_HOLE, FALLOC_FL_PUNCH_HOLE },
	{ NULL, 0, 0 },
};
static const struct flagname xattr_flags[] = {
	{ "CREATE", XATTR_CREATE, XATTR_CREATE },
	{ "REPLACE", XATTR_REPLACE, XATTR_REPLACE },
	{ NULL, 0, 0 },
};
static const struct flagname whence_flags[] = {
	{ "SET", SEEK_SET, 3 },
	{ "CUR", SEEK_CUR, 3 },
	{ "END", SEEK_END, 3 },
	{ NULL, 0, 0 },
};
static const struct flagname link_flags[] = {
	{ "FOLLOW", AT_SYMLINK_FOLLOW, AT_SYMLINK_FOLLOW },
	{ NULL, 0, 0 },
};
static const struct flagname nofollow_flags[] = {
	{ "NOFOLLOW", AT_SYMLINK_NOFOLLOW, AT_SYMLINK_NOFOLLOW },
	{ NULL, 0, 0 },
};

struct opdef {
	const char *name;
	unsigned fields;
	int weight;		/* relative frequency when generating */
	bool mutates;		/* may change the namespace (B's entry cache) */
	const struct flagname *fltab; /* how "fl" is logged */
	const struct flagname *xtab;  /* how "x" is logged (else a number) */
};

static struct opdef opdefs[_OP_MAX] = {
	[OP_OPEN] = { "open", F_S | F_P | F_FL | F_MODE, 90, true, open_flags, NULL },
	[OP_CLOSE] = { "close", F_S, 50, false, NULL, NULL },
	[OP_WRITE] = { "write", F_S | F_LEN | F_DS, 50, false, NULL, NULL },
	[OP_PWRITE] = { "pwrite", F_S | F_OFF | F_LEN | F_DS, 90, false, NULL, NULL },
	[OP_READ] = { "read", F_S | F_LEN, 40, false, NULL, NULL },
	[OP_PREAD] = { "pread", F_S | F_OFF | F_LEN, 70, false, NULL, NULL },
	[OP_LSEEK] = { "lseek", F_S | F_OFF | F_X, 25, false, NULL, whence_flags },
	[OP_FTRUNCATE] = { "ftruncate", F_S | F_LEN, 35, false, NULL, NULL },
	[OP_TRUNCATE] = { "truncate", F_P | F_LEN, 25, false, NULL, NULL },
	[OP_FALLOCATE] = { "fallocate", F_S | F_OFF | F_LEN | F_X, 40, false, NULL, falloc_flags },
	[OP_FSYNC] = { "fsync", F_S, 12, false, NULL, NULL },
	[OP_FDATASYNC] = { "fdatasync", F_S, 8, false, NULL, NULL },
	[OP_FSTAT] = { "fstat", F_S, 35, false, NULL, NULL },
	[OP_STAT] = { "stat", F_P, 35, false, NULL, NULL },
	[OP_LSTAT] = { "lstat", F_P, 25, false, NULL, NULL },
	[OP_UNLINK] = { "unlink", F_P, 45, true, NULL, NULL },
	[OP_MKDIR] = { "mkdir", F_P | F_MODE, 45, true, NULL, NULL },
	[OP_RMDIR] = { "rmdir", F_P, 25, true, NULL, NULL },
	[OP_RENAME] = { "rename", F_P | F_Q | F_X, 45, true, NULL, rename_flags },
	[OP_LINK] = { "link", F_P | F_Q | F_FL, 25, true, link_flags, NULL },
	[OP_SYMLINK] = { "symlink", F_P | F_Q, 25, true, NULL, NULL },
	[OP_READLINK] = { "readlink", F_P | F_LEN, 15, false, NULL, NULL },
	[OP_CHMOD] = { "chmod", F_P | F_MODE, 20, false, NULL, NULL },
	[OP_FCHMOD] = { "fchmod", F_S | F_MODE, 10, false, NULL, NULL },
	[OP_CHOWN] = { "chown", F_P | F_FL | F_X | F_Y, 12, false, nofollow_flags, NULL },
	[OP_SETXATTR] = { "setxattr", F_P | F_NAME | F_FL | F_LEN | F_DS | F_Y, 30, false, xattr_flags, NULL },
	[OP_GETXATTR] = { "getxattr", F_P | F_NAME | F_LEN | F_Y, 25, false, NULL, NULL },
	[OP_LISTXATTR] = { "listxattr", F_P | F_LEN | F_Y, 18, false, NULL, NULL },
	[OP_REMOVEXATTR] = { "removexattr", F_P | F_NAME | F_Y, 15, false, NULL, NULL },
	[OP_FSETXATTR] = { "fsetxattr", F_S | F_NAME | F_FL | F_LEN | F_DS, 10, false, xattr_flags, NULL },
	[OP_FGETXATTR] = { "fgetxattr", F_S | F_NAME | F_LEN, 10, false, NULL, NULL },
	[OP_READDIR] = { "readdir", F_P, 35, false, NULL, NULL },
	[OP_MKNOD] = { "mknod", F_P | F_MODE | F_X, 12, true, NULL, NULL },
	[OP_UMASK] = { "umask", F_MODE, 4, false, NULL, NULL },
	[OP_UTIMES] = { "utimes", F_P | F_FL | F_OFF | F_OFF2 | F_X, 8, false, nofollow_flags, NULL },
	[OP_SAMEFILE] = { "samefile", F_P | F_Q, 15, false, NULL, NULL },
	[OP_COPY_RANGE] = { "copy_range", F_S | F_S2 | F_OFF | F_OFF2 | F_LEN, 15, false, NULL, NULL },
	[OP_MMAP_READ] = { "mmap_read", F_S | F_OFF | F_LEN, 12, false, NULL, NULL },
	[OP_MMAP_WRITE] = { "mmap_write", F_S | F_OFF | F_LEN | F_DS, 12, false, NULL, NULL },
	[OP_BULK_CREATE] = { "bulk_create", F_P | F_X, 2, true, NULL, NULL },
	[OP_BULK_REMOVE] = { "bulk_remove", F_P, 2, true, NULL, NULL },
	[OP_FDCHECK] = { "fdcheck", F_S, 6, false, NULL, NULL },
	[OP_TREECHECK] = { "treecheck", 0, 1, false, NULL, NULL },
	[OP_MTIME_MARK] = { "mtime_mark", F_P, 12, false, NULL, NULL },
	[OP_MTIME_CHECK] = { "mtime_check", F_P, 12, false, NULL, NULL },
	[OP_DROPCACHE] = { "dropcache", F_P, 10, false, NULL, NULL },
	[OP_NOP] = { "nop", 0, 0, false, NULL, NULL },
};

static void flags_format(struct buf *b, long fl, const struct flagname *t)
{
	long rest = fl;
	bool any = false;

	for (; t->name; t++) {
		long mask = t->mask ? t->mask : t->value;

		if ((fl & mask) != t->value)
			continue;
		/* a zero value (RDONLY, SET) names a field, not a bit */
		if (t->value == 0 && t->mask == 0)
			continue;
		buf_printf(b, "%s%s", any ? "|" : "", t->name);
		rest &= ~t->value;
		any = true;
	}
	if (rest || !any)
		buf_printf(b, "%s%#lx", any ? "|" : "", rest);
}

static bool flags_parse(const char *s, const struct flagname *tab, long *ret)
{
	long v = 0;
	char tmp[256], *save = NULL, *tok;

	snprintf(tmp, sizeof(tmp), "%s", s);
	for (tok = strtok_r(tmp, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
		const struct flagname *t;
		char *end;

		for (t = tab; t && t->name; t++)
			if (!strcmp(t->name, tok))
				break;
		if (t && t->name) {
			v |= t->value;
			continue;
		}
		errno = 0;
		v |= strtol(tok, &end, 0);
		if (errno || *end)
			return false;
	}
	*ret = v;
	return true;
}

/* one log line, e.g. "pwrite s=2 off=65535 len=3 ds=0x1a2b" */
static void op_format(struct buf *b, const struct op *op)
{
	const struct opdef *d = &opdefs[op->code];
	unsigned f = d->fields;

	buf_printf(b, "%s", d->name);
	if (f & F_S)
		buf_printf(b, " s=%d", op->s);
	if (f & F_S2)
		buf_printf(b, " s2=%d", op->s2);
	if (f & F_P)
		buf_printf(b, " p=%s", op->p);
	if (f & F_Q)
		buf_printf(b, " q=%s", op->q);
	if (f & F_FL) {
		buf_printf(b, " fl=");
		flags_format(b, op->fl, d->fltab ? d->fltab : xattr_flags);
	}
	if (f & F_MODE)
		buf_printf(b, " mode=%#o", op->mode);
	if (f & F_OFF)
		buf_printf(b, " off=%" PRId64, op->off);
	if (f & F_OFF2)
		buf_printf(b, " off2=%" PRId64, op->off2);
	if (f & F_LEN)
		buf_printf(b, " len=%" PRIu64, op->len);
	if (f & F_DS)
		buf_printf(b, " ds=%#" PRIx64, op->ds);
	if (f & F_NAME)
		buf_printf(b, " name=%s", op->name);
	if (f & F_X) {
		buf_printf(b, " x=");
		if (d->xtab)
			flags_format(b, op->x, d->xtab);
		else
			buf_printf(b, "%ld", op->x);
	}
	if (f & F_Y)
		buf_printf(b, " y=%ld", op->y);
	if (op->u)
		buf_printf(b, " u=%u", op->u);
}

static bool parse_num(const char *v, int64_t *ret)
{
	char *end;

	errno = 0;
	if (*v == '-')
		*ret = strtoll(v, &end, 0);
	else
		*ret = (int64_t)strtoull(v, &end, 0);
	return !errno && !*end && *v;
}

/*
 * Parse a log line: an optional step number, an op name and key=value
 * fields.  Returns 1 for an op, 0 for a line that is not one (comments,
 * result lines, summaries), -1 for a malformed op line.
 */
static int op_parse(const char *line, struct op *op)
{
	char tmp[4096], *save = NULL, *tok;
	const char *s = line;
	int code;

	while (isspace((unsigned char)*s))
		s++;
	if (s != line)
		return 0;	/* indented: a result line */
	while (isdigit((unsigned char)*s))
		s++;
	if (s != line && *s == ':')
		s++;
	while (*s == ' ')
		s++;
	snprintf(tmp, sizeof(tmp), "%s", s);
	tmp[strcspn(tmp, "\r\n")] = '\0';
	tok = strtok_r(tmp, " ", &save);
	if (!tok)
		return 0;
	for (code = 0; code < _OP_MAX; code++)
		if (!strcmp(tok, opdefs[code].name))
			break;
	if (code == _OP_MAX)
		return 0;
	memset(op, 0, sizeof(*op));
	op->code = code;
	while ((tok = strtok_r(NULL, " ", &save))) {
		const struct opdef *d = &opdefs[code];
		char *v = strchr(tok, '=');
		int64_t n = 0;
		bool ok = true;

		if (!v)
			return -1;
		*v++ = '\0';
		if (!strcmp(tok, "p")) {
			snprintf(op->p, sizeof(op->p), "%s", v);
		} else if (!strcmp(tok, "q")) {
			snprintf(op->q, sizeof(op->q), "%s", v);
		} else if (!strcmp(tok, "name")) {
			snprintf(op->name, sizeof(op->name), "%s", v);
		} else if (!strcmp(tok, "fl")) {
			ok = flags_parse(v, d->fltab ? d->fltab : xattr_flags, &op->fl);
		} else if (!strcmp(tok, "x")) {
			if (d->xtab)
				ok = flags_parse(v, d->xtab, &op->x);
			else if ((ok = parse_num(v, &n)))
				op->x = (long)n;
		} else if ((ok = parse_num(v, &n))) {
			if (!strcmp(tok, "s"))
				op->s = (int)n;
			else if (!strcmp(tok, "s2"))
				op->s2 = (int)n;
			else if (!strcmp(tok, "mode"))
				op->mode = (unsigned)n;
			else if (!strcmp(tok, "off"))
				op->off = n;
			else if (!strcmp(tok, "off2"))
				op->off2 = n;
			else if (!strcmp(tok, "len"))
				op->len = (uint64_t)n;
			else if (!strcmp(tok, "ds"))
				op->ds = (uint64_t)n;
			else if (!strcmp(tok, "y"))
				op->y = (long)n;
			else if (!strcmp(tok, "u"))
				op->u = (unsigned)n;
			else
				ok = false;
		}
		if (!ok)
			return -1;
	}
	if (op->s < 0 || op->s >= NSLOT || op->s2 < 0 || op->s2 >= NSLOT)
		return -1;
	if (op->len > 64 * MIB)
		return -1;
	return 1;
}

/* ------------------------------------------------------------------ */
/* trees and results */

struct tree {
	const char *label;	/* "A" or "B" */
	const char *root;	/* absolute */
	int dirfd;		/* the root; ops run with it as the cwd */
	int fds[NSLOT];
};

static int home_fd = -1;	/* our own cwd, restored after every op */

struct res {
	long ret;
	int err;
	bool text;		/* payload is text (else binary data) */
	struct buf pay;		/* compared byte for byte when ret >= 0 */
	struct buf aux;		/* compared with '?' as a wildcard */
};

static void res_reset(struct res *r)
{
	r->ret = 0;
	r->err = 0;
	r->text = true;
	buf_clear(&r->pay);
	buf_clear(&r->aux);
}

/* record the outcome of a libc call returning -1 + errno on failure */
static void res_sys(struct res *r, long ret)
{
	r->ret = ret < 0 ? -1 : ret;
	r->err = ret < 0 ? errno : 0;
}

static void tpath(const struct tree *t, const char *rel, char *out)
{
	snprintf(out, FULL_BUF, "%s/%s", t->root, rel);
}

static int slot_fd(const struct tree *t, int s)
{
	return s >= 0 && s < NSLOT ? t->fds[s] : -1;
}

static const char *ftype(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return "reg";
	case S_IFDIR:
		return "dir";
	case S_IFLNK:
		return "lnk";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "sock";
	case S_IFCHR:
		return "chr";
	case S_IFBLK:
		return "blk";
	}
	return "???";
}

/* the stat fields that must agree; see the exemptions at the top */
static void stat_text(struct buf *b, const struct stat *st)
{
	mode_t mode = st->st_mode;

	/*
	 * Exempt: S_ISGID on a regular file without S_IXGRP.  POSIX lets
	 * write() and truncate() keep or clear it ("may be cleared"); the
	 * VFS clears it when the writer is not in the file's group, the FUSE
	 * kernel module (without FUSE_CAP_HANDLE_KILLPRIV*) only when S_IXGRP
	 * is set too, its pre-5.15 mandatory-locking meaning.
	 */
	if (S_ISREG(mode) && (mode & (S_ISGID | S_IXGRP)) == S_ISGID)
		mode &= ~(mode_t)S_ISGID;
	buf_printf(b, "%s mode=%06o nlink=%lu uid=%u gid=%u", ftype(mode),
		   (unsigned)mode, (unsigned long)st->st_nlink,
		   (unsigned)st->st_uid, (unsigned)st->st_gid);
	if (!S_ISDIR(st->st_mode))
		buf_printf(b, " size=%lld", (long long)st->st_size);
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		buf_printf(b, " rdev=%u:%u", major(st->st_rdev), minor(st->st_rdev));
}

/* ------------------------------------------------------------------ */
/* executing one op on one tree */

static unsigned char *iobuf;	/* MAX_IO-ish scratch for data */
static size_t iobuf_cap;

static unsigned char *get_iobuf(size_t n)
{
	if (n > iobuf_cap) {
		iobuf = xrealloc(iobuf, n);
		iobuf_cap = n;
	}
	return iobuf;
}

static sigjmp_buf sigbus_jmp;
static volatile sig_atomic_t sigbus_armed;

static void on_sigbus(int sig)
{
	if (sigbus_armed)
		siglongjmp(sigbus_jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

struct dent {
	char *name;
	unsigned char type;
};

static int dent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dent *)a)->name, ((const struct dent *)b)->name);
}

static char dtype_char(unsigned char t)
{
	switch (t) {
	case DT_REG:
		return 'f';
	case DT_DIR:
		return 'd';
	case DT_LNK:
		return 'l';
	case DT_FIFO:
		return 'p';
	case DT_SOCK:
		return 's';
	case DT_CHR:
		return 'c';
	case DT_BLK:
		return 'b';
	}
	return '?';
}

static void exec_readdir(const char *path, struct res *r)
{
	struct dent *v = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d;

	d = opendir(path);
	if (!d) {
		res_sys(r, -1);
		return;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(v, cap * sizeof(*v));
		}
		v[n].name = xstrdup(de->d_name);
		v[n].type = de->d_type;
		n++;
	}
	res_sys(r, errno ? -1 : (long)n);
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), dent_cmp);
	for (i = 0; i < n; i++) {
		buf_printf(&r->pay, "%s\n", v[i].name);
		buf_printf(&r->aux, "%c", dtype_char(v[i].type));
		free(v[i].name);
	}
	free(v);
}

/* sorted, NUL-separated names to newline-separated text */
static void xattr_list_text(struct buf *b, const char *list, size_t len)
{
	const char *names[512];
	size_t n = 0, i, j;
	const char *p;

	for (p = list; p < list + len && n < 512; p += strlen(p) + 1)
		names[n++] = p;
	for (i = 1; i < n; i++) {
		const char *k = names[i];

		for (j = i; j > 0 && strcmp(names[j - 1], k) > 0; j--)
			names[j] = names[j - 1];
		names[j] = k;
	}
	for (i = 0; i < n; i++)
		buf_printf(b, "%s\n", names[i]);
}

/* drop virtual "user.tierfs.*" names; returns the bytes removed */
static size_t xattr_list_filter(char *list, size_t len)
{
	static const char pfx[] = "user.tierfs.";
	size_t in = 0, out = 0;

	while (in < len) {
		size_t l = strnlen(list + in, len - in) + 1;

		if (strncmp(list + in, pfx, sizeof(pfx) - 1)) {
			memmove(list + out, list + in, l);
			out += l;
		}
		in += l;
	}
	return len - out;
}

static void exec_listxattr(const char *path, const struct op *op, struct res *r)
{
	char *full = xmalloc(XATTR_BIG);
	ssize_t n;
	size_t virt = 0;

	/* the full list first, to learn about virtual names */
	n = op->y ? llistxattr(path, full, XATTR_BIG) : listxattr(path, full, XATTR_BIG);
	if (n >= 0)
		virt = xattr_list_filter(full, (size_t)n);
	if (n < 0 || virt == 0) {
		/* no virtual names: the real call, as asked */
		char *b = op->len ? xmalloc(op->len) : NULL;

		n = op->y ? llistxattr(path, b, op->len) : listxattr(path, b, op->len);
		res_sys(r, n);
		if (n > 0 && b)
			xattr_list_text(&r->pay, b, (size_t)n);
		free(b);
	} else {
		/* emulate the call without the virtual names */
		size_t real = (size_t)n - virt;

		if (op->len && real > op->len) {
			r->ret = -1;
			r->err = ERANGE;
		} else {
			r->ret = (long)real;
			if (op->len)
				xattr_list_text(&r->pay, full, real);
		}
	}
	free(full);
}

static void exec_getxattr(ssize_t n, const char *b, struct res *r)
{
	res_sys(r, n);
	if (n > 0 && b) {
		r->text = false;
		buf_add(&r->pay, b, (size_t)n);
	}
}

static void exec_mmap(const struct tree *t, const struct op *op, struct res *r)
{
	int fd = slot_fd(t, op->s);
	bool wr = op->code == OP_MMAP_WRITE;
	long pg = sysconf(_SC_PAGESIZE);
	off_t off = op->off & ~((off_t)pg - 1);
	volatile size_t n = op->len;
	size_t mlen;
	struct stat st;
	unsigned char *m;

	r->text = false;
	if (fstat(fd, &st) < 0) {
		res_sys(r, -1);
		return;
	}
	/* stay inside the file: touching a page past EOF raises SIGBUS */
	if (off >= st.st_size || !S_ISREG(st.st_mode))
		n = 0;
	else if ((uint64_t)(st.st_size - off) < n)
		n = (size_t)(st.st_size - off);
	mlen = n ? n : (size_t)pg;
	m = mmap(NULL, mlen, wr ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, off);
	if (m == MAP_FAILED) {
		res_sys(r, -1);
		return;
	}
	sigbus_armed = 1;
	if (sigsetjmp(sigbus_jmp, 1)) {
		sigbus_armed = 0;
		r->ret = -1;
		r->err = EFAULT;	/* stands for "SIGBUS" */
		buf_clear(&r->pay);
		munmap(m, mlen);
		return;
	}
	if (wr) {
		unsigned char *d = get_iobuf(n);

		fill_data(d, n, op->ds);
		memcpy(m, d, n);
		sigbus_armed = 0;
		res_sys(r, n && msync(m, mlen, MS_SYNC) < 0 ? -1 : (long)n);
	} else {
		buf_add(&r->pay, m, n);
		sigbus_armed = 0;
		r->ret = (long)n;
	}
	munmap(m, mlen);
}

static void bulk_name(char *out, size_t size, long i)
{
	int pad = (int)((i * 37) % 200);

	snprintf(out, size, BULK_PREFIX "%04ld_%.*s", i,
		 pad, "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn");
}

static void exec_bulk(const char *path, const struct op *op, struct res *r)
{
	char full[FULL_BUF + 300], nm[300];
	long i, done = 0;

	if (op->code == OP_BULK_CREATE) {
		for (i = 0; i < op->x; i++) {
			int fd;

			bulk_name(nm, sizeof(nm), i);
			snprintf(full, sizeof(full), "%s/%s", path, nm);
			fd = open(full, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
			if (fd < 0)
				break;
			close(fd);
			done++;
		}
		r->ret = done;
		r->err = i < op->x ? errno : 0;
		return;
	} else {
		DIR *d = opendir(path);
		struct dirent *de;
		char **v = NULL;
		size_t n = 0, k;

		if (!d) {
			res_sys(r, -1);
			return;
		}
		while ((de = readdir(d))) {
			if (strncmp(de->d_name, BULK_PREFIX, strlen(BULK_PREFIX)))
				continue;
			v = xrealloc(v, (n + 1) * sizeof(*v));
			v[n++] = xstrdup(de->d_name);
		}
		closedir(d);
		r->err = 0;
		for (k = 0; k < n; k++) {
			snprintf(full, sizeof(full), "%s/%s", path, v[k]);
			if (unlink(full) == 0)
				done++;
			else if (!r->err)
				r->err = errno;
			free(v[k]);
		}
		free(v);
		r->ret = done;
	}
}

/*
 * Drop the kernel's cached pages of one file, so that the next read
 * reaches the filesystem (a FUSE daemon with keep_cache is otherwise never
 * asked again).  Flushes first: only clean pages can be dropped.  Per
 * file; nothing global like /proc/sys/vm/drop_caches.
 */
static void drop_cache(int fd)
{
	(void)fsync(fd);
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
}

/*
 * Far offsets: a few ops write, read, truncate or allocate within FAR_WIN
 * of one of these (extent-index and size arithmetic at 2^31, 2^32 ... and
 * near the largest file size), with at most FAR_LEN bytes, so they cost
 * little space.  Files then get huge and sparse, and the content checks
 * read only the windows where data can be: [0, near_end), FAR_WIN around
 * every far offset and the last FAR_WIN before EOF.  Holes elsewhere are
 * not read back.
 */
#define FAR_WIN (512 * KIB)
#define FAR_LEN (128 * KIB)
static const uint64_t far_offs[] = {
	1ULL << 31, 1ULL << 32, 1ULL << 36, 1ULL << 40, 1ULL << 44, 1ULL << 48,
	1ULL << 62, (uint64_t)INT64_MAX - FAR_WIN / 2,
};
#define NFAR (sizeof(far_offs) / sizeof(far_offs[0]))
static uint64_t near_end = 8 * MIB;	/* set from --max-file */

struct range {
	uint64_t lo, hi;
};

/* the windows to read of a file of @size bytes, sorted and merged */
static size_t content_ranges(uint64_t size, struct range *v)
{
	size_t n = 0, i, k;

	v[n++] = (struct range){ 0, near_end };
	for (i = 0; i < NFAR; i++)
		v[n++] = (struct range){ far_offs[i] - FAR_WIN, far_offs[i] + FAR_WIN };
	v[n++] = (struct range){ size > FAR_WIN ? size - FAR_WIN : 0, size };
	for (i = 0; i < n; i++) {
		if (v[i].hi > size)
			v[i].hi = size;
		if (v[i].lo > v[i].hi)
			v[i].lo = v[i].hi;
	}
	for (i = 1; i < n; i++) {	/* insertion sort by lo */
		struct range x = v[i];

		for (k = i; k > 0 && v[k - 1].lo > x.lo; k--)
			v[k] = v[k - 1];
		v[k] = x;
	}
	for (i = 1, k = 0; i < n; i++) {
		if (v[i].lo <= v[k].hi) {
			if (v[i].hi > v[k].hi)
				v[k].hi = v[i].hi;
		} else {
			v[++k] = v[i];
		}
	}
	return v[0].hi > v[0].lo || k ? k + 1 : 0;
}

/*
 * Read the content windows of @fd (size @size); hand each chunk to @fn.
 * Returns the bytes read or -errno.
 */
static int64_t read_ranges(int fd, uint64_t size, void (*fn)(void *, const void *, size_t),
			   void *arg)
{
	struct range v[NFAR + 2];
	size_t n = content_ranges(size, v), i;
	int64_t total = 0;

	for (i = 0; i < n; i++) {
		uint64_t pos = v[i].lo;

		while (pos < v[i].hi) {
			unsigned char *b = get_iobuf(MAX_IO);
			size_t want = v[i].hi - pos < MAX_IO ? (size_t)(v[i].hi - pos) : MAX_IO;
			ssize_t k = pread(fd, b, want, (off_t)pos);

			if (k < 0)
				return -errno;
			if (k == 0)
				break;	/* EOF earlier than st_size said */
			fn(arg, b, (size_t)k);
			pos += (uint64_t)k;
			total += k;
		}
	}
	return total;
}

static void collect_buf(void *arg, const void *p, size_t n)
{
	buf_add(arg, p, n);
}

/* the whole content of an open file, read through a new description */
static void exec_fdcheck(const struct tree *t, const struct op *op, struct res *r)
{
	char p[64];
	struct stat st;
	int fd = slot_fd(t, op->s), rfd;
	int64_t pos;

	r->text = false;
	if (fstat(fd, &st) < 0) {
		res_sys(r, -1);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		r->ret = -1;
		r->err = EINVAL;
		return;
	}
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	rfd = open(p, O_RDONLY | O_CLOEXEC);
	if (rfd < 0) {
		res_sys(r, -1);
		return;
	}
	drop_cache(rfd);
	pos = read_ranges(rfd, (uint64_t)st.st_size, collect_buf, &r->pay);
	if (pos < 0) {
		r->ret = -1;
		r->err = (int)-pos;
	} else {
		r->ret = (long)pos;
	}
	close(rfd);
}

/*
 * Every entry below the root, sorted, with its stat text, symlink target,
 * data (as a hash; a mismatch is then narrowed down by hand or with
 * --minimize) and xattrs.
 */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

static void hash_chunk(void *arg, const void *p, size_t n)
{
	uint64_t *h = arg;

	*h = fnv1a(*h, p, n);
}

static void tree_dump(const char *root, const char *rel, struct buf *out, int depth)
{
	char p[FULL_BUF + 300];
	struct dirent **v = NULL;
	int n, i;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	n = scandir(p, &v, NULL, alphasort);
	if (n < 0) {
		buf_printf(out, "%s: scandir %s\n", rel, errname(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		char r2[PATH_BUF + 300], full[FULL_BUF + 600], tgt[PATH_BUF];
		struct stat st;
		ssize_t k;

		if (!strcmp(v[i]->d_name, ".") || !strcmp(v[i]->d_name, "..")) {
			free(v[i]);
			continue;
		}
		snprintf(r2, sizeof(r2), "%s%s%s", rel, *rel ? "/" : "", v[i]->d_name);
		free(v[i]);
		snprintf(full, sizeof(full), "%s/%s", root, r2);
		if (lstat(full, &st) < 0) {
			buf_printf(out, "%s: lstat %s\n", r2, errname(errno));
			continue;
		}
		buf_printf(out, "%s: ", r2);
		stat_text(out, &st);
		if (S_ISLNK(st.st_mode)) {
			k = readlink(full, tgt, sizeof(tgt) - 1);
			buf_printf(out, " -> %.*s", k < 0 ? 0 : (int)k, tgt);
		} else if (S_ISREG(st.st_mode)) {
			int fd = open(full, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			uint64_t h = 0xcbf29ce484222325ULL;
			int64_t pos;

			if (fd < 0) {
				buf_printf(out, " open %s", errname(errno));
			} else {
				drop_cache(fd);
				pos = read_ranges(fd, (uint64_t)st.st_size, hash_chunk, &h);
				buf_printf(out, " read=%lld%s data=%016" PRIx64, (long long)pos,
					   pos < 0 ? errname((int)-pos) : "", h);
				close(fd);
			}
		}
		if (!S_ISLNK(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode) &&
		    !S_ISCHR(st.st_mode)) {
			char *list = xmalloc(XATTR_BIG);
			ssize_t ln = listxattr(full, list, XATTR_BIG);

			if (ln > 0) {
				struct buf names = { 0 };
				char *nm;

				ln -= (ssize_t)xattr_list_filter(list, (size_t)ln);
				xattr_list_text(&names, list, (size_t)ln);
				for (nm = names.d; nm && *nm; nm = strchr(nm, '\n') + 1) {
					char xn[300], *val = (char *)get_iobuf(XATTR_BIG);
					ssize_t vl;

					snprintf(xn, sizeof(xn), "%.*s", (int)strcspn(nm, "\n"), nm);
					vl = getxattr(full, xn, val, XATTR_BIG);
					buf_printf(out, " %s=%zd:%016" PRIx64, xn, vl,
						   vl > 0 ? fnv1a(0xcbf29ce484222325ULL, val, (size_t)vl) : 0);
				}
				buf_free(&names);
			}
			free(list);
		}
		buf_printf(out, "\n");
		if (S_ISDIR(st.st_mode) && depth < 64)
			tree_dump(root, r2, out, depth + 1);
	}
	free(v);
}

static void exec_op(struct tree *t, const struct op *op, struct res *r)
{
	char p[FULL_BUF], q[FULL_BUF];
	int fd = slot_fd(t, op->s);
	unsigned char *b;
	struct stat st;
	ssize_t n;

	res_reset(r);
	/* relative to the cwd, the tree's root: see exec_as() */
	snprintf(p, sizeof(p), "./%s", op->p);
	snprintf(q, sizeof(q), "./%s", op->q);
	errno = 0;
	switch (op->code) {
	case OP_OPEN:
		if (fd >= 0)
			close(fd);
		fd = open(p, (int)op->fl | O_NONBLOCK | O_CLOEXEC, op->mode);
		t->fds[op->s] = fd < 0 ? -1 : fd;
		res_sys(r, fd < 0 ? -1 : 0);
		break;
	case OP_CLOSE:
		res_sys(r, close(fd));
		if (op->s >= 0 && op->s < NSLOT)
			t->fds[op->s] = -1;
		break;
	case OP_WRITE:
	case OP_PWRITE:
		b = get_iobuf(op->len);
		fill_data(b, op->len, op->ds);
		if (op->code == OP_WRITE)
			res_sys(r, write(fd, b, op->len));
		else
			res_sys(r, pwrite(fd, b, op->len, op->off));
		break;
	case OP_READ:
	case OP_PREAD:
		b = get_iobuf(op->len);
		if (op->code == OP_READ)
			n = read(fd, b, op->len);
		else
			n = pread(fd, b, op->len, op->off);
		res_sys(r, n);
		r->text = false;
		if (n > 0)
			buf_add(&r->pay, b, (size_t)n);
		break;
	case OP_LSEEK:
		/*
		 * Exempt: lseek on a directory is unspecified by POSIX and
		 * decided by the kernel, not the filesystem daemon (FUSE
		 * directories take SEEK_END, tmpfs says EINVAL, ext4 answers
		 * a hash offset).  The call still runs; only its answer is
		 * not compared.
		 */
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
			(void)lseek(fd, op->off, (int)op->x);
			buf_printf(&r->pay, "(directory: not compared)");
			break;
		}
		res_sys(r, lseek(fd, op->off, (int)op->x));
		break;
	case OP_FTRUNCATE:
		res_sys(r, ftruncate(fd, (off_t)op->len));
		break;
	case OP_TRUNCATE:
		res_sys(r, truncate(p, (off_t)op->len));
		break;
	case OP_FALLOCATE:
		res_sys(r, fallocate(fd, (int)op->x, op->off, (off_t)op->len));
		break;
	case OP_FSYNC:
		res_sys(r, fsync(fd));
		break;
	case OP_FDATASYNC:
		res_sys(r, fdatasync(fd));
		break;
	case OP_FSTAT:
	case OP_STAT:
	case OP_LSTAT:
		if (op->code == OP_FSTAT)
			res_sys(r, fstat(fd, &st));
		else if (op->code == OP_STAT)
			res_sys(r, stat(p, &st));
		else
			res_sys(r, lstat(p, &st));
		if (r->ret == 0)
			stat_text(&r->pay, &st);
		break;
	case OP_UNLINK:
		res_sys(r, unlink(p));
		break;
	case OP_MKDIR:
		res_sys(r, mkdir(p, op->mode));
		break;
	case OP_RMDIR:
		res_sys(r, rmdir(p));
		break;
	case OP_RENAME:
		res_sys(r, renameat2(AT_FDCWD, p, AT_FDCWD, q, (unsigned)op->x));
		break;
	case OP_LINK:
		res_sys(r, linkat(AT_FDCWD, p, AT_FDCWD, q, (int)op->fl));
		break;
	case OP_SYMLINK:
		res_sys(r, symlink(op->q, p));	/* target stays relative */
		break;
	case OP_READLINK:
		b = get_iobuf(op->len + 1);
		n = readlink(p, (char *)b, op->len);
		res_sys(r, n);
		if (n > 0)
			buf_add(&r->pay, b, (size_t)n);
		break;
	case OP_CHMOD:
		res_sys(r, chmod(p, op->mode));
		break;
	case OP_FCHMOD:
		res_sys(r, fchmod(fd, op->mode));
		break;
	case OP_CHOWN:
		res_sys(r, fchownat(AT_FDCWD, p, (uid_t)op->x, (gid_t)op->y, (int)op->fl));
		if (r->ret == 0 && fstatat(AT_FDCWD, p, &st, (int)op->fl) == 0)
			stat_text(&r->pay, &st);
		break;
	case OP_SETXATTR:
	case OP_FSETXATTR:
		b = get_iobuf(op->len);
		fill_data(b, op->len, op->ds);
		if (op->code == OP_FSETXATTR)
			res_sys(r, fsetxattr(fd, op->name, b, op->len, (int)op->fl));
		else if (op->y)
			res_sys(r, lsetxattr(p, op->name, b, op->len, (int)op->fl));
		else
			res_sys(r, setxattr(p, op->name, b, op->len, (int)op->fl));
		break;
	case OP_GETXATTR:
	case OP_FGETXATTR:
		b = op->len ? get_iobuf(op->len) : NULL;
		if (op->code == OP_FGETXATTR)
			n = fgetxattr(fd, op->name, b, op->len);
		else if (op->y)
			n = lgetxattr(p, op->name, b, op->len);
		else
			n = getxattr(p, op->name, b, op->len);
		exec_getxattr(n, (const char *)b, r);
		break;
	case OP_LISTXATTR:
		exec_listxattr(p, op, r);
		break;
	case OP_REMOVEXATTR:
		if (op->y)
			res_sys(r, lremovexattr(p, op->name));
		else
			res_sys(r, removexattr(p, op->name));
		break;
	case OP_READDIR:
		exec_readdir(p, r);
		break;
	case OP_MKNOD:
		res_sys(r, mknod(p, op->mode, (dev_t)op->x));
		break;
	case OP_UMASK:
		/* process-wide: the old value is whatever the A run just set */
		(void)umask(op->mode);
		break;
	case OP_UTIMES: {
		struct timespec ts[2] = {
			{ .tv_sec = op->off, .tv_nsec = op->x },
			{ .tv_sec = op->off2, .tv_nsec = op->x },
		};

		res_sys(r, utimensat(AT_FDCWD, p, ts, (int)op->fl));
		if (r->ret == 0 && fstatat(AT_FDCWD, p, &st, (int)op->fl) == 0)
			buf_printf(&r->pay, "mtime=%lld", (long long)st.st_mtim.tv_sec);
		break;
	}
	case OP_SAMEFILE: {
		struct stat st2;
		int e1 = lstat(p, &st) < 0 ? errno : 0;
		int e2 = lstat(q, &st2) < 0 ? errno : 0;

		buf_printf(&r->pay, "%s %s", errname(e1), errname(e2));
		if (!e1 && !e2)
			buf_printf(&r->pay, " %s", st.st_ino == st2.st_ino ? "same" : "different");
		break;
	}
	case OP_COPY_RANGE: {
		loff_t oi = op->off, oo = op->off2;

		res_sys(r, copy_file_range(fd, &oi, slot_fd(t, op->s2), &oo, op->len, 0));
		break;
	}
	case OP_MMAP_READ:
	case OP_MMAP_WRITE:
		exec_mmap(t, op, r);
		break;
	case OP_BULK_CREATE:
	case OP_BULK_REMOVE:
		exec_bulk(p, op, r);
		break;
	case OP_FDCHECK:
		exec_fdcheck(t, op, r);
		break;
	case OP_MTIME_MARK: {
		/* a fixed old time, so that any later update is visible */
		const struct timespec ts[2] = { { MTIME_MARK, 0 }, { MTIME_MARK, 0 } };

		res_sys(r, utimensat(AT_FDCWD, p, ts, 0));
		break;
	}
	case OP_DROPCACHE: {
		int dfd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

		res_sys(r, dfd);
		if (dfd >= 0) {
			r->ret = 0;
			if (fstat(dfd, &st) == 0 && S_ISREG(st.st_mode))
				drop_cache(dfd);
			close(dfd);
		}
		break;
	}
	case OP_MTIME_CHECK:
		res_sys(r, stat(p, &st));
		/*
		 * Exempt: FIFOs, sockets and devices.  Their I/O never reaches a
		 * FUSE daemon, and the FUSE kernel module (without writeback
		 * cache) does not send it the mtime that a write to a FIFO sets,
		 * so the next getattr brings back the old one.  POSIX wants the
		 * update: a known FUSE limitation, listed in the fsdiff report,
		 * not something a daemon can fix.
		 */
		if (r->ret == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
			buf_printf(&r->pay, "(%s: not compared)", ftype(st.st_mode));
			break;
		}
		if (r->ret == 0)
			buf_printf(&r->pay, "mtime %s", st.st_mtim.tv_sec == MTIME_MARK &&
				   st.st_mtim.tv_nsec == 0 ? "unchanged since mtime_mark" : "changed");
		break;
	case OP_TREECHECK:
		tree_dump(t->root, "", &r->pay, 0);
		break;
	case OP_NOP:
	case _OP_MAX:
		break;
	}
}

/*
 * Run @op with fsuid/fsgid @op->u if set.  Both are per thread; leaving
 * fsuid 0 also drops the filesystem capabilities (CAP_DAC_OVERRIDE,
 * CAP_FOWNER, CAP_CHOWN, CAP_FSETID...), so permission checks apply as to
 * an ordinary user.  Supplementary groups stay ours.
 */
static void exec_as(struct tree *t, const struct op *op, struct res *r)
{
	/*
	 * Paths are resolved from the root of the tree, never through the
	 * directories above it: an ordinary user may not be able to pass
	 * those (a private 0700 test directory, say), and what lies above
	 * the roots must not make the trees differ.
	 */
	if (fchdir(t->dirfd) < 0)
		die("cannot enter '%s': %s", t->root, strerror(errno));
	if (op->u) {
		(void)setfsgid(op->u);
		(void)setfsuid(op->u);
	}
	exec_op(t, op, r);
	if (op->u) {
		int e = errno;

		(void)setfsuid(0);
		(void)setfsgid(0);
		errno = e;
	}
	if (fchdir(home_fd) < 0)
		die("cannot return to the working directory: %s", strerror(errno));
}

/* ------------------------------------------------------------------ */
/* comparing */

static bool err_equiv(enum opcode code, int a, int b)
{
	if (a == b)
		return true;
	/* POSIX: rmdir/rename onto a non-empty dir -> EEXIST or ENOTEMPTY */
	if (code == OP_RMDIR || code == OP_RENAME)
		return (a == EEXIST || a == ENOTEMPTY) && (b == EEXIST || b == ENOTEMPTY);
	return false;
}

static bool aux_equal(const struct buf *a, const struct buf *b)
{
	size_t i;

	if (a->len != b->len)
		return false;
	for (i = 0; i < a->len; i++)
		if (a->d[i] != b->d[i] && a->d[i] != '?' && b->d[i] != '?')
			return false;
	return true;
}

static bool res_equal(enum opcode code, const struct res *a, const struct res *b)
{
	if (a->ret != b->ret)
		return false;
	if (code == OP_BULK_CREATE || code == OP_BULK_REMOVE || a->ret < 0)
		if (!err_equiv(code, a->err, b->err))
			return false;
	if (a->pay.len != b->pay.len || (a->pay.len && memcmp(a->pay.d, b->pay.d, a->pay.len)))
		return false;
	return aux_equal(&a->aux, &b->aux);
}

static void print_res(FILE *f, const struct tree *t, const struct res *r)
{
	fprintf(f, "  %s %s: ret=%ld", t->label, t->root, r->ret);
	if (r->ret < 0 || r->err)
		fprintf(f, " errno=%s (%s)", errname(r->err), strerror(r->err));
	if (r->pay.len && r->text && r->pay.len <= 2000)
		fprintf(f, "\n    %.*s", (int)r->pay.len, r->pay.d);
	else if (r->pay.len && r->text)
		fprintf(f, " (%zu bytes of text)", r->pay.len);
	if (r->aux.len)
		fprintf(f, "\n    d_types: %s", r->aux.d);
	if (r->pay.len && !r->text)
		fprintf(f, " (%zu bytes of data)", r->pay.len);
	fputc('\n', f);
}

static bool has_line(const char *text, const char *line, size_t len)
{
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, len) && (p[len] == '\n' || p[len] == '\0'))
			return true;
	return false;
}

/* multi-line text (readdir, treecheck): the lines only one side has */
static void print_text_diff(FILE *f, const struct res *a, const struct res *b)
{
	const struct res *side[2] = { a, b };
	int k, shown = 0;

	if (!a->pay.len || !b->pay.len || !memchr(a->pay.d, '\n', a->pay.len))
		return;
	for (k = 0; k < 2; k++) {
		const char *p, *other = side[!k]->pay.d;

		for (p = side[k]->pay.d; *p && shown < 40;) {
			size_t len = strcspn(p, "\n");

			if (!has_line(other, p, len)) {
				fprintf(f, "  only %s: %.*s\n", k ? "B" : "A", (int)(len > 400 ? 400 : len), p);
				shown++;
			}
			p += len;
			if (*p)
				p++;
		}
	}
}

static void hexline(FILE *f, const char *label, const struct buf *b, size_t at)
{
	size_t i;

	fprintf(f, "    %s @%zu:", label, at);
	for (i = at; i < at + 16 && i < b->len; i++)
		fprintf(f, " %02x", (unsigned char)b->d[i]);
	fputc('\n', f);
}

static void print_data_diff(FILE *f, const struct res *a, const struct res *b)
{
	size_t n = a->pay.len < b->pay.len ? a->pay.len : b->pay.len;
	size_t i, first = n, last = 0, cnt = 0, zeros = 0;

	for (i = 0; i < n; i++) {
		if (a->pay.d[i] == b->pay.d[i])
			continue;
		if (first == n)
			first = i;
		last = i;
		cnt++;
		zeros += a->pay.d[i] == 0;
	}
	if (a->pay.len != b->pay.len)
		fprintf(f, "  data length differs: A %zu, B %zu\n", a->pay.len, b->pay.len);
	if (!cnt)
		return;
	fprintf(f, "  data differs in %zu of %zu bytes, first at +%zu, last at +%zu%s\n",
		cnt, n, first, last, zeros == cnt ? " (A has zeros there)" : "");
	hexline(f, "A", &a->pay, first & ~(size_t)15);
	hexline(f, "B", &b->pay, first & ~(size_t)15);
}

/* ------------------------------------------------------------------ */
/* generating ops from the reference tree B */

static const char *const names[] = { "a", "bb", "c", "dd", "e.txt", "f", "g-1", "h" };
#define NNAMES (sizeof(names) / sizeof(names[0]))

static const char *const xnames[] = {
	"user.a", "user.bb", "user.x.y", "user.c",
	"user.long_attribute_name_0123456789_abcdefghijklmnopqrstuvwxyz",
};
#define NXNAMES (sizeof(xnames) / sizeof(xnames[0]))

/* an entry of B, for picking paths that exist */
struct ent {
	char *path;
	mode_t type;
};

struct gen {
	struct rng r;
	struct tree *ref;	/* B: state is read from here */
	char slot_path[NSLOT][PATH_BUF];
	uint64_t max_file;
	uint64_t budget;
	uint64_t est;		/* space estimate, valid if est_valid */
	bool est_valid;
	struct ent *ents;	/* B's entries (no bulk names), valid if ents_valid */
	size_t nents, cap_ents;
	bool ents_valid;
	bool as_user;		/* also run ops as uid 1000 / 65534 */
	bool no_direct;		/* never O_DIRECT (--no-direct) */
	int total_weight;
};

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->path, ((const struct ent *)b)->path);
}

static void collect_ref(struct gen *g, const char *rel, int depth)
{
	char p[FULL_BUF];
	struct dirent *de;
	DIR *d;

	tpath(g->ref, rel, p);
	d = opendir(p);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char r2[PATH_BUF + 300], full[FULL_BUF + 300];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    !strncmp(de->d_name, BULK_PREFIX, strlen(BULK_PREFIX)))
			continue;
		snprintf(r2, sizeof(r2), "%s%s%s", rel, *rel ? "/" : "", de->d_name);
		if (strlen(r2) >= PATH_BUF - 8)
			continue;
		snprintf(full, sizeof(full), "%s/%s", g->ref->root, r2);
		st.st_mode = DTTOIF(de->d_type);
		if (de->d_type == DT_UNKNOWN && lstat(full, &st) < 0)
			continue;
		if (g->nents == g->cap_ents) {
			g->cap_ents = g->cap_ents ? g->cap_ents * 2 : 256;
			g->ents = xrealloc(g->ents, g->cap_ents * sizeof(*g->ents));
		}
		g->ents[g->nents].path = xstrdup(r2);
		g->ents[g->nents].type = st.st_mode & S_IFMT;
		g->nents++;
		if (S_ISDIR(st.st_mode) && depth < 4)
			collect_ref(g, r2, depth + 1);
	}
	closedir(d);
}

static void ents_refresh(struct gen *g)
{
	size_t i;

	if (g->ents_valid)
		return;
	for (i = 0; i < g->nents; i++)
		free(g->ents[i].path);
	g->nents = 0;
	collect_ref(g, "", 0);
	/* sorted: the pick must not depend on readdir order */
	if (g->nents)
		qsort(g->ents, g->nents, sizeof(*g->ents), ent_cmp);
	g->ents_valid = true;
}

static void path_append(char *path, const char *comp)
{
	size_t l = strlen(path);

	snprintf(path + l, PATH_BUF - l, "%s%s", l ? "/" : "", comp);
}

static void gen_random_path(struct gen *g, char *out)
{
	unsigned depth = 1 + (chance(&g->r, 40) ? 1 + (chance(&g->r, 30) ? 1 : 0) : 0);
	unsigned i;

	out[0] = '\0';
	for (i = 0; i < depth; i++)
		path_append(out, names[rnd(&g->r, NNAMES)]);
}

/*
 * An entry that exists in B, of type @want (S_IFREG...) if there is one
 * and @want is not 0; "" if B is empty.
 */
static void gen_existing_path(struct gen *g, char *out, mode_t want)
{
	size_t i, n = 0, k;

	ents_refresh(g);
	out[0] = '\0';
	if (want)
		for (i = 0; i < g->nents; i++)
			n += g->ents[i].type == want;
	if (!n) {
		if (g->nents)
			snprintf(out, PATH_BUF, "%s", g->ents[rnd(&g->r, g->nents)].path);
		return;
	}
	k = rnd(&g->r, n);
	for (i = 0; i < g->nents; i++)
		if (g->ents[i].type == want && !k--)
			break;
	snprintf(out, PATH_BUF, "%s", g->ents[i].path);
}

/* decorate a path: long names, trailing "/" or "/.", leading "./" */
static void gen_decorate(struct gen *g, char *out)
{
	unsigned k = (unsigned)rnd(&g->r, 1000);
	char tmp[PATH_BUF];

	if (k < 8) {
		/* NAME_MAX (255) is allowed, 256 is ENAMETOOLONG */
		size_t l = 255 + rnd(&g->r, 2);
		char *slash = strrchr(out, '/');
		size_t base = slash ? (size_t)(slash - out) + 1 : 0;

		if (base + l < PATH_BUF) {
			memset(out + base, 'L', l);
			out[base] = names[rnd(&g->r, NNAMES)][0];
			out[base + l] = '\0';
		}
	} else if (k < 20) {
		snprintf(tmp, sizeof(tmp), "%s/", out);
		memcpy(out, tmp, PATH_BUF);
	} else if (k < 28) {
		snprintf(tmp, sizeof(tmp), "%s/.", out);
		memcpy(out, tmp, PATH_BUF);
	} else if (k < 36) {
		snprintf(tmp, sizeof(tmp), "./%s", out);
		memcpy(out, tmp, PATH_BUF);
	}
}

/* any path: the root, an existing entry (preferably of type @want) or random */
static void gen_path_type(struct gen *g, char *out, mode_t want)
{
	unsigned k = (unsigned)rnd(&g->r, 1000);

	out[0] = '\0';
	if (k < 15) {
		snprintf(out, PATH_BUF, ".");
		return;
	}
	if (k < (want ? 700u : 520u))
		gen_existing_path(g, out, want);
	if (!out[0])
		gen_random_path(g, out);
	gen_decorate(g, out);
}

static void gen_path(struct gen *g, char *out)
{
	gen_path_type(g, out, 0);
}

/* a path to create: mostly an existing directory plus a random name */
static void gen_path_new(struct gen *g, char *out)
{
	if (chance(&g->r, 35)) {
		gen_path(g, out);
		return;
	}
	out[0] = '\0';
	if (chance(&g->r, 70))
		gen_existing_path(g, out, S_IFDIR);
	path_append(out, names[rnd(&g->r, NNAMES)]);
	gen_decorate(g, out);
}

/* symlink targets: relative, never "..", so nothing escapes the tree */
static void gen_target(struct gen *g, const char *linkpath, char *out)
{
	unsigned k = (unsigned)rnd(&g->r, 100);
	const char *base = strrchr(linkpath, '/');

	if (k < 55) {
		gen_random_path(g, out);
	} else if (k < 65) {
		snprintf(out, PATH_BUF, ".");
	} else if (k < 73) {
		snprintf(out, PATH_BUF, "%s/", names[rnd(&g->r, NNAMES)]);
	} else if (k < 78) {
		out[0] = '\0';	/* ENOENT */
	} else if (k < 85) {
		size_t i, l = 100 + rnd(&g->r, 900);

		for (i = 0; i + 2 < l; i += 2)
			memcpy(out + i, "./", 2);
		snprintf(out + i, PATH_BUF - i, "%s", names[rnd(&g->r, NNAMES)]);
	} else {
		snprintf(out, PATH_BUF, "%s", base ? base + 1 : linkpath);	/* ELOOP */
	}
}

/* slot: usually an open one (in B) */
static int gen_slot(struct gen *g)
{
	int open[NSLOT], n = 0, i;

	for (i = 0; i < NSLOT; i++)
		if (g->ref->fds[i] >= 0)
			open[n++] = i;
	if (n && chance(&g->r, 92))
		return open[rnd(&g->r, (uint64_t)n)];
	return (int)rnd(&g->r, NSLOT);
}

static int free_slot(struct gen *g)
{
	int v[NSLOT], n = 0, i;

	for (i = 0; i < NSLOT; i++)
		if (g->ref->fds[i] < 0)
			v[n++] = i;
	return n ? v[rnd(&g->r, (uint64_t)n)] : -1;
}

enum { WANT_R = 1, WANT_W = 2 };

/* a slot open on a regular file with the access in @want, usually */
static int gen_slot_acc(struct gen *g, int want)
{
	int v[NSLOT], n = 0, i;

	for (i = 0; i < NSLOT; i++) {
		int fd = g->ref->fds[i], acc;
		struct stat st;

		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		acc = fcntl(fd, F_GETFL) & O_ACCMODE;
		if ((want & WANT_R) && acc == O_WRONLY)
			continue;
		if ((want & WANT_W) && acc == O_RDONLY)
			continue;
		v[n++] = i;
	}
	if (n && chance(&g->r, 85))
		return v[rnd(&g->r, (uint64_t)n)];
	return -1 - gen_slot(g);	/* none fits: see gen_slot_fit() */
}

/* gen_slot_acc(), falling back to any slot */
static int gen_slot_pref(struct gen *g, int want)
{
	int s = gen_slot_acc(g, want);

	return s >= 0 ? s : -1 - s;
}

static void gen_path_type(struct gen *g, char *out, mode_t want);
static void gen_path_new(struct gen *g, char *out);
static unsigned gen_file_mode(struct gen *g);

/*
 * gen_slot_acc() for the writing ops: when no open file fits @want, most of
 * the time open one (O_RDWR) in a free slot, or close a slot to make room,
 * instead of the op; otherwise the slots fill up with directories and
 * read-only files and most writes end in EBADF.  Returns -1 when @op was
 * replaced (op->code is then OP_OPEN or OP_CLOSE).
 */
static int gen_slot_fit(struct gen *g, struct op *op, int want)
{
	int s = gen_slot_acc(g, want), f;

	if (s >= 0)
		return s;
	s = -1 - s;
	if (!chance(&g->r, 75))
		return s;
	f = free_slot(g);
	if (f < 0) {
		op->code = OP_CLOSE;
		op->s = gen_slot(g);
		return -1;
	}
	op->code = OP_OPEN;
	op->s = f;
	op->fl = O_RDWR | O_CREAT;
	if (chance(&g->r, 50))
		gen_path_type(g, op->p, S_IFREG);
	else
		gen_path_new(g, op->p);
	op->mode = gen_file_mode(g);
	memcpy(g->slot_path[f], op->p, PATH_BUF);
	return -1;
}

static uint64_t ref_size(struct gen *g, int s, bool *is_reg)
{
	struct stat st;
	int fd = slot_fd(g->ref, s);

	*is_reg = false;
	if (fd < 0 || fstat(fd, &st) < 0)
		return 0;
	*is_reg = S_ISREG(st.st_mode);
	return (uint64_t)st.st_size;
}

static uint64_t gen_off(struct gen *g, uint64_t size)
{
	unsigned k = (unsigned)rnd(&g->r, 100);
	int64_t v, delta;

	switch (rnd(&g->r, 4)) {
	case 0:
		delta = 0;
		break;
	case 1:
		delta = (int64_t)rnd(&g->r, 3) - 1;
		break;
	default:
		delta = (int64_t)rnd(&g->r, 8193) - 4096;
		break;
	}
	if (k < 25)
		v = (int64_t)rnd(&g->r, size + 1);
	else if (k < 40)
		v = (int64_t)size + delta;
	else if (k < 65)
		v = (int64_t)(rnd(&g->r, g->max_file / (64 * KIB) + 1) * 64 * KIB) + delta;
	else if (k < 75)
		v = (int64_t)(rnd(&g->r, g->max_file / MIB + 1) * MIB) + delta;
	else if (k < 85)
		v = 0;
	else
		v = (int64_t)rnd(&g->r, g->max_file);
	if (v < 0)
		v = 0;
	if ((uint64_t)v > g->max_file)
		v = (int64_t)g->max_file;
	return (uint64_t)v;
}

/* within FAR_WIN/2 of a far offset (for the few ops that go there) */
static uint64_t gen_far(struct gen *g)
{
	uint64_t f = far_offs[rnd(&g->r, NFAR)];
	int64_t delta = chance(&g->r, 30) ? 0 : (int64_t)rnd(&g->r, FAR_WIN / 2) - (int64_t)FAR_WIN / 4;

	return f + (uint64_t)delta;
}

static uint64_t gen_len(struct gen *g)
{
	unsigned k = (unsigned)rnd(&g->r, 100);

	if (k < 4)
		return 0;
	if (k < 40)
		return 1 + rnd(&g->r, 4096);
	if (k < 65)
		return 1 + rnd(&g->r, 70000);
	if (k < 85)
		return 1 + rnd(&g->r, MAX_IO);
	return 64 * KIB * (1 + rnd(&g->r, 4)) + rnd(&g->r, 3) - 1;
}

/* make [off, off+len) fit under max_file */
static void clamp_range(struct gen *g, int64_t *off, uint64_t *len)
{
	if ((uint64_t)*off >= g->max_file)
		*off = (int64_t)(g->max_file - 1 - rnd(&g->r, 4096));
	if ((uint64_t)*off + *len > g->max_file)
		*len = g->max_file - (uint64_t)*off;
}

static uint64_t chunks_in(uint64_t off, uint64_t len)
{
	if (!len)
		return 0;
	return (off + len - 1) / CHUNK - off / CHUNK + 1;
}

static int ino_cmp(const void *a, const void *b)
{
	ino_t x = *(const ino_t *)a, y = *(const ino_t *)b;

	return x < y ? -1 : x > y;
}

struct walk {
	ino_t *inos;
	size_t n, cap;
};

/* space a file holds: every 1 MiB chunk with data (or allocated) */
static uint64_t file_space(int fd, const struct stat *st)
{
	uint64_t chunks = 0, last = UINT64_MAX, blocks;
	off_t pos = 0;

	while (pos < st->st_size) {
		off_t d = lseek(fd, pos, SEEK_DATA), h;
		uint64_t c;

		if (d < 0)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h <= d)
			h = st->st_size;
		for (c = (uint64_t)d / CHUNK; c <= (uint64_t)(h - 1) / CHUNK; c++)
			if (c != last) {
				chunks++;
				last = c;
			}
		pos = h;
	}
	blocks = ((uint64_t)st->st_blocks * 512 + CHUNK - 1) / CHUNK;
	return (chunks > blocks ? chunks : blocks) * CHUNK;
}

static uint64_t walk_space(const char *path, struct walk *w, int depth)
{
	struct dirent *de;
	uint64_t sum = 0;
	DIR *d;

	if (depth > 64)
		return 0;
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char p[FULL_BUF + 300];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* bulk files stay empty: never picked, so never written */
		if (!strncmp(de->d_name, BULK_PREFIX, strlen(BULK_PREFIX)))
			continue;
		if (de->d_type != DT_UNKNOWN && de->d_type != DT_DIR && de->d_type != DT_REG)
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			sum += walk_space(p, w, depth + 1);
		} else if (S_ISREG(st.st_mode) && (st.st_size || st.st_blocks)) {
			int fd;

			if (w->n && bsearch(&st.st_ino, w->inos, w->n, sizeof(ino_t), ino_cmp))
				continue;
			if (w->n == w->cap) {
				w->cap = w->cap ? w->cap * 2 : 64;
				w->inos = xrealloc(w->inos, w->cap * sizeof(ino_t));
			}
			w->inos[w->n++] = st.st_ino;
			qsort(w->inos, w->n, sizeof(ino_t), ino_cmp);
			fd = open(p, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				continue;
			sum += file_space(fd, &st);
			close(fd);
		}
	}
	closedir(d);
	return sum;
}

static uint64_t space_estimate(struct gen *g)
{
	struct walk w = { 0 };
	char p[64];
	uint64_t sum;
	int i, rfd;

	if (g->est_valid)
		return g->est;
	sum = walk_space(g->ref->root, &w, 0);
	/* unlinked files still open */
	for (i = 0; i < NSLOT; i++) {
		struct stat st;
		int fd = g->ref->fds[i];

		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink)
			continue;
		if (w.n && bsearch(&st.st_ino, w.inos, w.n, sizeof(ino_t), ino_cmp))
			continue;
		/* a description of our own: SEEK_DATA must not move the slot's offset */
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		rfd = open(p, O_RDONLY | O_CLOEXEC);
		if (rfd < 0)
			continue;
		sum += file_space(rfd, &st);
		close(rfd);
	}
	free(w.inos);
	g->est = sum;
	g->est_valid = true;
	return sum;
}

/* over budget: shrink a file instead, so the run keeps moving */
static void gen_shrink(struct gen *g, struct op *op)
{
	memset(op, 0, sizeof(*op));
	op->code = OP_TRUNCATE;
	gen_existing_path(g, op->p, S_IFREG);
	if (!op->p[0])
		snprintf(op->p, sizeof(op->p), "%s", names[0]);
	op->len = rnd(&g->r, 64 * KIB);
}

/*
 * g->est is an upper bound: every generated op adds its worst-case growth
 * and the exact walk runs again only when the bound would pass the budget.
 */
static bool over_budget(struct gen *g, uint64_t growth)
{
	if (!growth)
		return false;
	if (g->est_valid && g->est + growth <= g->budget) {
		g->est += growth;
		return false;
	}
	g->est_valid = false;
	if (space_estimate(g) + growth > g->budget)
		return true;
	g->est += growth;
	return false;
}

static unsigned gen_file_mode(struct gen *g)
{
	static const unsigned modes[] = { 0644, 0600, 0755, 0444, 0, 0777, 04755, 02644, 01644, 0640 };

	return modes[rnd(&g->r, sizeof(modes) / sizeof(modes[0]))];
}

static long gen_open_flags(struct gen *g)
{
	unsigned k = (unsigned)rnd(&g->r, 100);
	long fl = k < 35 ? O_RDONLY : k < 60 ? O_WRONLY : O_RDWR;

	if (chance(&g->r, 50)) {
		fl |= O_CREAT;
		if (chance(&g->r, 25))
			fl |= O_EXCL;
	} else if (chance(&g->r, 3)) {
		fl |= O_EXCL;
	}
	if (chance(&g->r, 10))
		fl |= O_TRUNC;
	if (chance(&g->r, 12))
		fl |= O_APPEND;
	if (chance(&g->r, 5))
		fl |= O_DIRECTORY;
	if (chance(&g->r, 5))
		fl |= O_NOFOLLOW;
	/* page cache bypass: coherency with cached I/O on the same file
	 * (the draw is made either way, so --no-direct keeps the rest of
	 * a seed's sequence) */
	if (chance(&g->r, 8) && !g->no_direct)
		fl |= O_DIRECT;
	if (chance(&g->r, 3))
		fl |= O_SYNC;
	if (chance(&g->r, 2))
		fl |= O_NOATIME;
	return fl;
}

static void gen_xname(struct gen *g, char *out)
{
	unsigned k = (unsigned)rnd(&g->r, 100);

	if (k < 95)
		snprintf(out, 300, "%s", xnames[rnd(&g->r, NXNAMES)]);
	else if (k < 97)
		snprintf(out, 300, "foo.bar");	/* no such namespace */
	else if (k < 98)
		snprintf(out, 300, "user.");
	else
		snprintf(out, 300, "user.%0250d", 7);	/* 255 chars: too long */
}

static enum opcode pick_code(struct gen *g)
{
	long k = (long)rnd(&g->r, (uint64_t)g->total_weight);
	int c;

	for (c = 0; c < _OP_MAX; c++) {
		k -= opdefs[c].weight;
		if (k < 0)
			return c;
	}
	return OP_NOP;
}

static void gen_op(struct gen *g, struct op *op)
{
	enum opcode code = pick_code(g);
	uint64_t size, growth = 0;
	bool reg;
	int64_t pos;
	int other;

	memset(op, 0, sizeof(*op));
	op->code = code;
	switch (code) {
	case OP_OPEN:
		op->s = free_slot(g);
		if (op->s < 0) {
			op->code = OP_CLOSE;
			op->s = gen_slot(g);
			break;
		}
		/* reopening what is open exercises the shared-inode paths */
		other = gen_slot(g);
		op->fl = gen_open_flags(g);
		if (chance(&g->r, 15) && g->slot_path[other][0])
			snprintf(op->p, sizeof(op->p), "%s", g->slot_path[other]);
		else if (op->fl & O_CREAT && chance(&g->r, 60))
			gen_path_new(g, op->p);
		else
			gen_path_type(g, op->p, chance(&g->r, 75) ? S_IFREG : 0);
		op->mode = gen_file_mode(g);
		memcpy(g->slot_path[op->s], op->p, PATH_BUF);
		break;
	case OP_CLOSE:
	case OP_FSYNC:
	case OP_FDATASYNC:
	case OP_FSTAT:
	case OP_FDCHECK:
		op->s = gen_slot_pref(g, 0);
		break;
	case OP_WRITE:
		if ((other = gen_slot_fit(g, op, WANT_W)) < 0)
			break;
		op->s = other;
		op->len = gen_len(g);
		op->ds = rng_next(&g->r);
		size = ref_size(g, op->s, &reg);
		if (!reg)
			break;
		pos = lseek(slot_fd(g->ref, op->s), 0, SEEK_CUR);
		if (fcntl(slot_fd(g->ref, op->s), F_GETFL) & O_APPEND)
			pos = (int64_t)size;
		if (pos < 0)
			pos = 0;
		if ((uint64_t)pos >= g->max_file) {
			/* too far: move back instead */
			op->code = OP_LSEEK;
			op->x = SEEK_SET;
			op->off = (int64_t)gen_off(g, size / 2);
			break;
		}
		clamp_range(g, &pos, &op->len);
		growth = chunks_in((uint64_t)pos, op->len) * CHUNK;
		break;
	case OP_PWRITE:
	case OP_PREAD:
	case OP_MMAP_READ:
	case OP_MMAP_WRITE:
		if (code == OP_PREAD || code == OP_MMAP_READ)
			other = gen_slot_pref(g, WANT_R);
		else
			other = gen_slot_fit(g, op, code == OP_PWRITE ? WANT_W : WANT_R | WANT_W);
		if (other < 0)
			break;
		op->s = other;
		size = ref_size(g, op->s, &reg);
		op->off = (int64_t)gen_off(g, size);
		op->len = gen_len(g);
		if (code == OP_MMAP_READ || code == OP_MMAP_WRITE) {
			op->off &= ~(int64_t)4095;
			if (chance(&g->r, 85))
				op->off = op->off % (int64_t)(size + 1) & ~(int64_t)4095;
		}
		if (code != OP_PWRITE && code != OP_MMAP_WRITE) {
			if (code == OP_PREAD && chance(&g->r, 5))
				op->off = (int64_t)gen_far(g);
			break;
		}
		op->ds = rng_next(&g->r);
		if (code == OP_PWRITE && chance(&g->r, 4)) {
			op->off = (int64_t)gen_far(g);
			op->len = op->len < FAR_LEN ? op->len : FAR_LEN;
		} else {
			clamp_range(g, &op->off, &op->len);
		}
		if (reg)
			growth = chunks_in((uint64_t)op->off, op->len) * CHUNK;
		break;
	case OP_READ:
		op->s = gen_slot_pref(g, WANT_R);
		op->len = gen_len(g);
		break;
	case OP_LSEEK:
		op->s = gen_slot(g);
		size = ref_size(g, op->s, &reg);
		op->x = (long)rnd(&g->r, 3);
		if (op->x == SEEK_SET)
			op->off = (int64_t)(chance(&g->r, 4) ? gen_far(g) : gen_off(g, size));
		else if (op->x == SEEK_END)
			op->off = (int64_t)rnd(&g->r, 140000) - 70000;
		else
			op->off = (int64_t)rnd(&g->r, 20000) - 5000;
		if (op->x == SEEK_END && (int64_t)size + op->off > (int64_t)g->max_file)
			op->off = 0;
		break;
	case OP_FTRUNCATE:
	case OP_TRUNCATE:
		if (code == OP_FTRUNCATE) {
			if ((other = gen_slot_fit(g, op, WANT_W)) < 0)
				break;
			op->s = other;
			size = ref_size(g, op->s, &reg);
		} else {
			char p[FULL_BUF];
			struct stat st;

			gen_path_type(g, op->p, S_IFREG);
			tpath(g->ref, op->p, p);
			size = stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
		}
		if (chance(&g->r, 15))
			op->len = 0;
		else if (chance(&g->r, 20))
			op->len = rnd(&g->r, 4096);
		else if (chance(&g->r, 4))
			op->len = gen_far(g);
		else
			op->len = gen_off(g, size);
		/*
		 * Never to the current size: whether that updates mtime is
		 * unspecified (POSIX: truncate() "if the file size is
		 * changed"; tmpfs and ext4 leave it, FUSE daemons may not).
		 */
		if (op->len == size)
			op->len = size ? size - 1 : 1;
		break;
	case OP_FALLOCATE: {
		static const long modes[] = {
			0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		};

		if ((other = gen_slot_fit(g, op, WANT_W)) < 0)
			break;
		op->s = other;
		size = ref_size(g, op->s, &reg);
		op->x = modes[rnd(&g->r, 3)];
		op->off = (int64_t)gen_off(g, size);
		op->len = gen_len(g);
		if (chance(&g->r, 10))
			op->len *= 4;
		if (chance(&g->r, 4)) {
			op->off = (int64_t)gen_far(g);
			op->len = op->len < FAR_LEN ? op->len : FAR_LEN;
		} else {
			clamp_range(g, &op->off, &op->len);
		}
		if (reg && !(op->x & FALLOC_FL_PUNCH_HOLE))
			growth = chunks_in((uint64_t)op->off, op->len) * CHUNK;
		break;
	}
	case OP_STAT:
	case OP_LSTAT:
		gen_path(g, op->p);
		break;
	case OP_RMDIR:
	case OP_READDIR:
	case OP_BULK_REMOVE:
		gen_path_type(g, op->p, S_IFDIR);
		break;
	case OP_UNLINK:
		/* unlink a file that is open, then keep using the fd */
		other = gen_slot(g);
		if (chance(&g->r, 20) && g->slot_path[other][0])
			snprintf(op->p, sizeof(op->p), "%s", g->slot_path[other]);
		else
			gen_path(g, op->p);
		break;
	case OP_MKDIR: {
		static const unsigned modes[] = { 0755, 0700, 0777, 02755, 01777, 0555, 0 };

		gen_path_new(g, op->p);
		op->mode = modes[rnd(&g->r, sizeof(modes) / sizeof(modes[0]))];
		break;
	}
	case OP_RENAME: {
		unsigned k = (unsigned)rnd(&g->r, 100);

		gen_path(g, op->p);
		if (chance(&g->r, 50))
			gen_path_new(g, op->q);
		else
			gen_path(g, op->q);
		op->x = k < 60 ? 0 : k < 80 ? RENAME_NOREPLACE : RENAME_EXCHANGE;
		break;
	}
	case OP_LINK:
	case OP_SAMEFILE:
		gen_path(g, op->p);
		if (code == OP_LINK)
			gen_path_new(g, op->q);
		else
			gen_path(g, op->q);
		if (code == OP_LINK && chance(&g->r, 10))
			op->fl = AT_SYMLINK_FOLLOW;
		if (code == OP_SAMEFILE && chance(&g->r, 10))
			snprintf(op->q, sizeof(op->q), "%s", op->p);
		break;
	case OP_SYMLINK:
		gen_path_new(g, op->p);
		gen_target(g, op->p, op->q);
		break;
	case OP_READLINK:
		gen_path_type(g, op->p, S_IFLNK);
		op->len = chance(&g->r, 75) ? 4096 : 1 + rnd(&g->r, 20);
		break;
	case OP_CHMOD:
	case OP_FCHMOD: {
		static const unsigned modes[] = { 0644, 0600, 0755, 0, 0777, 04755, 02755, 01777, 06777, 0444 };

		if (code == OP_CHMOD)
			gen_path(g, op->p);
		else
			op->s = gen_slot(g);
		op->mode = modes[rnd(&g->r, sizeof(modes) / sizeof(modes[0]))];
		break;
	}
	case OP_CHOWN: {
		static const long ids[] = { 0, 1000, 65534, -1 };

		gen_path(g, op->p);
		op->x = ids[rnd(&g->r, 4)];
		op->y = ids[rnd(&g->r, 4)];
		if (chance(&g->r, 30))
			op->fl = AT_SYMLINK_NOFOLLOW;
		break;
	}
	case OP_SETXATTR:
	case OP_FSETXATTR: {
		static const long xfl[] = { 0, 0, XATTR_CREATE, XATTR_REPLACE };
		unsigned k;

		if (code == OP_SETXATTR)
			gen_path(g, op->p);
		else
			op->s = gen_slot(g);
		gen_xname(g, op->name);
		op->fl = xfl[rnd(&g->r, 4)];
		k = (unsigned)rnd(&g->r, 100);
		/* up to XATTR_SIZE_MAX, and one byte over it (E2BIG) */
		op->len = k < 90 ? rnd(&g->r, 300) : k < 98 ? rnd(&g->r, 4000) : 65536 + (k & 1);
		op->ds = rng_next(&g->r);
		op->y = code == OP_SETXATTR && chance(&g->r, 20);
		break;
	}
	case OP_GETXATTR:
	case OP_FGETXATTR:
	case OP_LISTXATTR:
	case OP_REMOVEXATTR: {
		unsigned k = (unsigned)rnd(&g->r, 100);

		if (code == OP_FGETXATTR)
			op->s = gen_slot(g);
		else
			gen_path(g, op->p);
		if (code != OP_LISTXATTR)
			gen_xname(g, op->name);
		if (code != OP_REMOVEXATTR)
			op->len = k < 15 ? 0 : k < 30 ? rnd(&g->r, 40) : XATTR_BIG;
		op->y = code != OP_FGETXATTR && chance(&g->r, 20);
		break;
	}
	case OP_MKNOD: {
		unsigned k = (unsigned)rnd(&g->r, 100);

		gen_path_new(g, op->p);
		op->mode = gen_file_mode(g) & 0777;
		if (k < 70) {
			op->mode |= S_IFIFO;
		} else if (k < 82) {
			op->mode |= S_IFREG;
		} else if (k < 92) {
			op->mode |= S_IFSOCK;
		} else {
			op->mode |= S_IFCHR;
			op->x = (long)makedev(1, 3);
		}
		break;
	}
	case OP_UMASK: {
		static const unsigned masks[] = { 022, 0, 077, 002, 027 };

		op->mode = masks[rnd(&g->r, sizeof(masks) / sizeof(masks[0]))];
		break;
	}
	case OP_UTIMES:
		gen_path(g, op->p);
		op->off = (int64_t)rnd(&g->r, 2000000000);
		op->off2 = (int64_t)rnd(&g->r, 2000000000);
		op->x = (long)rnd(&g->r, 1000000000);
		if (chance(&g->r, 30))
			op->fl = AT_SYMLINK_NOFOLLOW;
		break;
	case OP_COPY_RANGE:
		op->s = gen_slot_pref(g, WANT_R);
		op->s2 = gen_slot_pref(g, WANT_W);
		size = ref_size(g, op->s, &reg);
		op->off = (int64_t)gen_off(g, size);
		size = ref_size(g, op->s2, &reg);
		op->off2 = (int64_t)gen_off(g, size);
		op->len = gen_len(g);
		if (chance(&g->r, 4))
			op->off = (int64_t)gen_far(g);
		if (chance(&g->r, 4)) {
			op->off2 = (int64_t)gen_far(g);
			op->len = op->len < FAR_LEN ? op->len : FAR_LEN;
		} else {
			clamp_range(g, &op->off2, &op->len);
		}
		if (reg)
			growth = chunks_in((uint64_t)op->off2, op->len) * CHUNK;
		break;
	case OP_BULK_CREATE:
		gen_path_type(g, op->p, S_IFDIR);
		op->x = 50 + (long)rnd(&g->r, 400);
		break;
	case OP_MTIME_MARK:
	case OP_MTIME_CHECK:
		gen_path(g, op->p);
		break;
	case OP_DROPCACHE:
		gen_path_type(g, op->p, S_IFREG);
		break;
	case OP_TREECHECK:
	case OP_NOP:
	case _OP_MAX:
		break;
	}
	if (over_budget(g, growth))
		gen_shrink(g, op);
	/* some ops as an ordinary user: permission checks, suid/sgid rules */
	if (g->as_user && op->code != OP_TREECHECK && op->code != OP_FDCHECK &&
	    op->code != OP_UMASK && chance(&g->r, 20))
		op->u = chance(&g->r, 75) ? 1000 : 65534;
}

/* ------------------------------------------------------------------ */
/* running */

struct opts {
	uint64_t seed, nops;
	int verbose;
	const char *replay;
	bool minimize, clean, stats, no_user, no_direct;
	uint64_t budget, max_file;
	unsigned op_timeout;
};

static struct tree ta, tb;
static mode_t initial_umask;

/* watchdog: a hung op in a FUSE daemon must not hang the test forever */
static atomic_ullong wd_step;
static atomic_uint wd_timeout;
static char wd_op[512];

static void *watchdog(void *arg)
{
	unsigned long long last = (unsigned long long)-1;
	unsigned idle = 0;

	(void)arg;
	for (;;) {
		unsigned long long s;
		unsigned tmo;

		sleep(1);
		s = atomic_load(&wd_step);
		tmo = atomic_load(&wd_timeout);
		if (s != last) {
			last = s;
			idle = 0;
			continue;
		}
		if (tmo && ++idle >= tmo) {
			char msg[700];
			int n = snprintf(msg, sizeof(msg),
					 "fsdiff: HANG at step %llu: %s (no progress for %u s)\n",
					 s, wd_op, idle);

			if (n > 0 && write(STDOUT_FILENO, msg, (size_t)n) < 0)
				_exit(3);
			_exit(3);
		}
	}
	return NULL;
}

static void close_all(struct tree *t)
{
	int i;

	for (i = 0; i < NSLOT; i++) {
		if (t->fds[i] >= 0)
			close(t->fds[i]);
		t->fds[i] = -1;
	}
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (ftw->level == 0)
		return 0;
	if (flag == FTW_DP ? rmdir(path) : unlink(path))
		fprintf(stderr, "fsdiff: cannot remove '%s': %s\n", path, strerror(errno));
	return 0;
}

static void tree_clean(const struct tree *t)
{
	if (nftw(t->root, rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		die("cannot clean '%s': %s", t->root, strerror(errno));
}

static bool tree_is_empty(const struct tree *t)
{
	DIR *d = opendir(t->root);
	struct dirent *de;
	bool empty = true;

	if (!d)
		die("cannot open '%s': %s", t->root, strerror(errno));
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

/* the root's own xattrs (virtual user.tierfs.* ones aside) */
static size_t root_xattrs(const struct tree *t, bool remove)
{
	char *list = xmalloc(XATTR_BIG), *p;
	ssize_t n = listxattr(t->root, list, XATTR_BIG);
	size_t count = 0;

	if (n > 0)
		n -= (ssize_t)xattr_list_filter(list, (size_t)n);
	for (p = list; n > 0 && p < list + n; p += strlen(p) + 1) {
		count++;
		if (remove && removexattr(t->root, p) < 0)
			fprintf(stderr, "fsdiff: cannot remove xattr '%s' of '%s': %s\n", p,
				t->root, strerror(errno));
	}
	free(list);
	return count;
}

/* resolve @arg to an absolute root and open it; returns the root */
static const char *tree_open(struct tree *t, const char *arg)
{
	char *abs = realpath(arg, NULL);

	if (!abs)
		die("cannot resolve '%s': %s", arg, strerror(errno));
	t->dirfd = open(abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->dirfd < 0)
		die("cannot open '%s': %s", abs, strerror(errno));
	return abs;
}

static void tree_prepare(struct tree *t, bool clean)
{
	int i;

	for (i = 0; i < NSLOT; i++)
		t->fds[i] = -1;
	if (clean) {
		tree_clean(t);
		root_xattrs(t, true);
	}
	if (!tree_is_empty(t) || root_xattrs(t, false))
		die("'%s' is not empty or has xattrs (use --clean)", t->root);
	/* the roots are compared too: start them equal */
	if (chmod(t->root, 0755) < 0 || chown(t->root, getuid(), getgid()) < 0)
		fprintf(stderr, "fsdiff: warning: cannot reset '%s' to 0755 %d:%d: %s\n",
			t->root, (int)getuid(), (int)getgid(), strerror(errno));
}

/* per-op outcome counts for --stats */
static struct {
	unsigned long n, ok;
	unsigned long err[134];
} stats[_OP_MAX];

static void stats_add(enum opcode code, const struct res *r)
{
	stats[code].n++;
	if (r->ret >= 0 && !r->err)
		stats[code].ok++;
	else if (r->err > 0 && r->err < 134)
		stats[code].err[r->err]++;
}

static void stats_print(void)
{
	int c, e;

	printf("fsdiff: %-12s %8s %8s  errors (B side)\n", "op", "count", "ok");
	for (c = 0; c < _OP_MAX; c++) {
		if (!stats[c].n)
			continue;
		printf("fsdiff: %-12s %8lu %8lu ", opdefs[c].name, stats[c].n, stats[c].ok);
		for (e = 1; e < 134; e++)
			if (stats[c].err[e])
				printf(" %s:%lu", errname(e), stats[c].err[e]);
		printf("\n");
	}
}

struct failure {
	uint64_t step;
	enum opcode code;
	int err_a, err_b;
	bool ret_eq;
};

/*
 * Run one op on both trees.  Returns true when the results agree.
 */
static bool step_op(const struct opts *o, uint64_t step, const struct op *op,
		    struct res *ra, struct res *rb, bool quiet)
{
	struct buf line = { 0 };
	bool eq;

	op_format(&line, op);
	snprintf(wd_op, sizeof(wd_op), "%s", line.d);
	atomic_store(&wd_step, step);
	if (o->verbose && !quiet) {
		printf("%" PRIu64 " %s\n", step, line.d);
		fflush(stdout);
	}
	exec_as(&ta, op, ra);
	exec_as(&tb, op, rb);
	eq = res_equal(op->code, ra, rb);
	if (!quiet)
		stats_add(op->code, rb);
	if (o->verbose >= 2 && !quiet) {
		print_res(stdout, &ta, ra);
		print_res(stdout, &tb, rb);
	}
	if (!eq && !quiet) {
		printf("fsdiff: MISMATCH at step %" PRIu64 ": %s\n", step, line.d);
		print_res(stdout, &ta, ra);
		print_res(stdout, &tb, rb);
		if (!ra->text && ra->ret >= 0 && rb->ret >= 0)
			print_data_diff(stdout, ra, rb);
		if (ra->text && rb->text)
			print_text_diff(stdout, ra, rb);
		fflush(stdout);
	}
	buf_free(&line);
	return eq;
}

static void failure_of(uint64_t step, const struct op *op, const struct res *ra,
		       const struct res *rb, struct failure *f)
{
	f->step = step;
	f->code = op->code;
	f->err_a = ra->ret < 0 ? ra->err : 0;
	f->err_b = rb->ret < 0 ? rb->err : 0;
	f->ret_eq = ra->ret == rb->ret;
}

/* ------------------------------------------------------------------ */
/* minimization: ddmin over recorded op lines */

struct oplist {
	char **v;
	size_t n, cap;
};

static void oplist_add(struct oplist *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = xstrdup(s);
}

static unsigned long min_runs;

/* replay a subset on clean trees; true if it fails like *want */
static bool replay_fails(const struct opts *o, char **v, size_t n, const struct failure *want,
			 size_t *ret_fail_at)
{
	struct res ra = { 0 }, rb = { 0 };
	struct op *op = xmalloc(sizeof(*op));
	bool fails = false;
	size_t i;

	min_runs++;
	close_all(&ta);
	close_all(&tb);
	tree_prepare(&ta, true);
	tree_prepare(&tb, true);
	umask(initial_umask);
	for (i = 0; i < n; i++) {
		if (op_parse(v[i], op) != 1)
			continue;
		if (step_op(o, i + 1, op, &ra, &rb, true))
			continue;
		if (op->code == want->code && (ra.ret == rb.ret) == want->ret_eq &&
		    (ra.ret < 0 ? ra.err : 0) == want->err_a && (rb.ret < 0 ? rb.err : 0) == want->err_b) {
			fails = true;
			*ret_fail_at = i;
		}
		break;
	}
	buf_free(&ra.pay);
	buf_free(&ra.aux);
	buf_free(&rb.pay);
	buf_free(&rb.aux);
	free(op);
	return fails;
}

static void minimize(const struct opts *o, struct oplist *l, const struct failure *want)
{
	char **cur = xmalloc(l->n * sizeof(*cur)), **tmp = xmalloc(l->n * sizeof(*tmp));
	size_t n = l->n, gran = 2, at, i;
	FILE *f;

	memcpy(cur, l->v, n * sizeof(*cur));
	printf("fsdiff: minimizing %zu ops...\n", n);
	fflush(stdout);
	if (!replay_fails(o, cur, n, want, &at)) {
		printf("fsdiff: the failure does not reproduce on replay; no minimization\n");
		goto out;
	}
	n = at + 1;
	while (n >= 2 && min_runs < 5000) {
		size_t chunk = (n - 1 + gran - 1) / gran;	/* the last op stays */
		bool reduced = false;
		size_t start;

		for (start = 0; start < n - 1; start += chunk) {
			size_t end = start + chunk < n - 1 ? start + chunk : n - 1, m = 0;

			for (i = 0; i < n; i++)
				if (i < start || i >= end)
					tmp[m++] = cur[i];
			if (replay_fails(o, tmp, m, want, &at)) {
				memcpy(cur, tmp, (at + 1) * sizeof(*cur));
				n = at + 1;
				gran = gran > 2 ? gran - 1 : 2;
				reduced = true;
				break;
			}
		}
		if (!reduced) {
			if (chunk <= 1)
				break;
			gran = gran * 2 < n ? gran * 2 : n;
		}
	}
	f = fopen("fsdiff-min.log", "w");
	printf("fsdiff: minimized to %zu ops (%lu replays)%s:\n", n, min_runs,
	       f ? ", also written to fsdiff-min.log" : "");
	for (i = 0; i < n; i++) {
		printf("%zu %s\n", i + 1, cur[i]);
		if (f)
			fprintf(f, "%zu %s\n", i + 1, cur[i]);
	}
	if (f)
		fclose(f);
	/* show the failure of the minimal list */
	{
		struct opts v = *o;
		struct res ra = { 0 }, rb = { 0 };
		struct op *op = xmalloc(sizeof(*op));

		v.verbose = 0;
		close_all(&ta);
		close_all(&tb);
		tree_prepare(&ta, true);
		tree_prepare(&tb, true);
		umask(initial_umask);
		for (i = 0; i < n; i++)
			if (op_parse(cur[i], op) == 1 && !step_op(&v, i + 1, op, &ra, &rb, false))
				break;
		buf_free(&ra.pay);
		buf_free(&ra.aux);
		buf_free(&rb.pay);
		buf_free(&rb.aux);
		free(op);
	}
out:
	free(cur);
	free(tmp);
}

/* ------------------------------------------------------------------ */

static void set_weights(const char *list, bool only)
{
	char tmp[1024], *save = NULL, *tok;
	int c;

	if (only)
		for (c = 0; c < _OP_MAX; c++)
			if (c != OP_OPEN && c != OP_CLOSE)
				opdefs[c].weight = -opdefs[c].weight; /* off unless named */
	snprintf(tmp, sizeof(tmp), "%s", list);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (c = 0; c < _OP_MAX; c++)
			if (!strcmp(opdefs[c].name, tok))
				break;
		if (c == _OP_MAX)
			die("unknown op '%s' (see --list-ops)", tok);
		if (only)
			opdefs[c].weight = opdefs[c].weight < 0 ? -opdefs[c].weight : opdefs[c].weight;
		else
			opdefs[c].weight = 0;
	}
	if (only)
		for (c = 0; c < _OP_MAX; c++)
			if (opdefs[c].weight < 0)
				opdefs[c].weight = 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: fsdiff [--seed N] [--ops N] [-v[v]] [--replay FILE] [--minimize]\n"
		"              [--clean] [--disable OPS] [--only OPS] [--budget MIB]\n"
		"              [--max-file MIB] [--op-timeout S] [--no-user] [--stats]\n"
		"              [--list-ops] A B\n"
		"A is the filesystem under test, B the reference (e.g. tmpfs).\n");
	exit(2);
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || !*s)
		die("bad %s '%s'", what, s);
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "ops", required_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "replay", required_argument, NULL, 'r' },
		{ "minimize", no_argument, NULL, 'm' },
		{ "clean", no_argument, NULL, 'c' },
		{ "disable", required_argument, NULL, 'd' },
		{ "only", required_argument, NULL, 'o' },
		{ "budget", required_argument, NULL, 'b' },
		{ "max-file", required_argument, NULL, 'f' },
		{ "op-timeout", required_argument, NULL, 't' },
		{ "list-ops", no_argument, NULL, 'l' },
		{ "stats", no_argument, NULL, 'S' },
		{ "no-user", no_argument, NULL, 'U' },
		{ "no-direct", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = {
		.seed = 1, .nops = 20000, .budget = 24 * MIB, .max_file = 4 * MIB, .op_timeout = 60,
	};
	const char *only = NULL, *disable = NULL;
	struct res ra = { 0 }, rb = { 0 };
	struct oplist log = { 0 };
	struct failure fail = { 0 };
	uint64_t step = 0, mismatches = 0;
	struct gen g = { 0 };
	struct op *op;
	FILE *rf = NULL;
	pthread_t wd;
	char *line = NULL;
	size_t linecap = 0;
	int c;

	while ((c = getopt_long(argc, argv, "vh", lopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o.seed = parse_u64(optarg, "seed");
			break;
		case 'n':
			o.nops = parse_u64(optarg, "op count");
			break;
		case 'v':
			o.verbose++;
			break;
		case 'r':
			o.replay = optarg;
			break;
		case 'm':
			o.minimize = true;
			break;
		case 'c':
			o.clean = true;
			break;
		case 'd':
			disable = optarg;
			break;
		case 'o':
			only = optarg;
			break;
		case 'b':
			o.budget = parse_u64(optarg, "budget") * MIB;
			break;
		case 'f':
			o.max_file = parse_u64(optarg, "max file size") * MIB;
			break;
		case 't':
			o.op_timeout = (unsigned)parse_u64(optarg, "timeout");
			break;
		case 'S':
			o.stats = true;
			break;
		case 'U':
			o.no_user = true;
			break;
		case 'D':
			o.no_direct = true;
			break;
		case 'l':
			for (c = 0; c < OP_NOP; c++)
				printf("%-12s %d\n", opdefs[c].name, opdefs[c].weight);
			return 0;
		default:
			usage();
		}
	}
	if (argc - optind != 2)
		usage();
	if (o.max_file < MIB || o.budget < o.max_file)
		die("need --max-file >= 1 and --budget >= --max-file");
	if (only)
		set_weights(only, true);
	if (disable)
		set_weights(disable, false);
	for (c = 0; c < _OP_MAX; c++)
		g.total_weight += opdefs[c].weight;
	if (!g.total_weight)
		die("every op is disabled");

	setvbuf(stdout, NULL, _IOLBF, 0);
	home_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (home_fd < 0)
		die("cannot open the working directory: %s", strerror(errno));
	signal(SIGBUS, on_sigbus);
	signal(SIGPIPE, SIG_IGN);
	ta.label = "A";
	ta.root = tree_open(&ta, argv[optind]);
	tb.label = "B";
	tb.root = tree_open(&tb, argv[optind + 1]);
	tree_prepare(&ta, o.clean);
	tree_prepare(&tb, o.clean);
	initial_umask = umask(022);
	umask(initial_umask);

	if (o.replay) {
		rf = strcmp(o.replay, "-") ? fopen(o.replay, "r") : stdin;
		if (!rf)
			die("cannot open '%s': %s", o.replay, strerror(errno));
	}
	g.r.s = o.seed;
	g.ref = &tb;
	g.max_file = o.max_file;
	g.budget = o.budget;
	near_end = o.max_file + 64 * KIB;
	g.as_user = geteuid() == 0 && !o.no_user;
	g.no_direct = o.no_direct;
	atomic_store(&wd_timeout, o.op_timeout);
	if (o.op_timeout && pthread_create(&wd, NULL, watchdog, NULL) == 0)
		pthread_detach(wd);

	op = xmalloc(sizeof(*op));
	for (;;) {
		if (rf) {
			int k;

			if (getline(&line, &linecap, rf) < 0)
				break;
			k = op_parse(line, op);
			if (k < 0)
				die("bad op line: %s", line);
			if (k == 0)
				continue;
		} else {
			if (step >= o.nops)
				break;
			gen_op(&g, op);
		}
		step++;
		if (o.minimize) {
			struct buf b = { 0 };

			op_format(&b, op);
			oplist_add(&log, b.d);
			buf_free(&b);
		}
		if (!step_op(&o, step, op, &ra, &rb, false)) {
			failure_of(step, op, &ra, &rb, &fail);
			mismatches++;
			break;
		}
		if (opdefs[op->code].mutates && !rf)
			g.ents_valid = false;
	}
	if (!mismatches && !rf) {
		/* finally: every open file and the whole tree */
		int k;

		for (k = 0; k <= NSLOT && !mismatches; k++) {
			memset(op, 0, sizeof(*op));
			op->code = k < NSLOT ? OP_FDCHECK : OP_TREECHECK;
			op->s = k < NSLOT ? k : 0;
			if (k < NSLOT && tb.fds[k] < 0)
				continue;
			if (!step_op(&o, ++step, op, &ra, &rb, false)) {
				failure_of(step, op, &ra, &rb, &fail);
				mismatches++;
			}
		}
	}
	if (o.stats)
		stats_print();
	if (rf && rf != stdin)
		fclose(rf);
	free(line);
	printf("fsdiff: %" PRIu64 " ops, %" PRIu64 " mismatches (seed %" PRIu64 ", A=%s, B=%s)\n",
	       step, mismatches, o.seed, ta.root, tb.root);
	if (mismatches && o.minimize) {
		atomic_store(&wd_timeout, o.op_timeout);
		minimize(&o, &log, &fail);
	}
	close_all(&ta);
	close_all(&tb);
	buf_free(&ra.pay);
	buf_free(&ra.aux);
	buf_free(&rb.pay);
	buf_free(&rb.aux);
	for (size_t i = 0; i < g.nents; i++)
		free(g.ents[i].path);
	free(g.ents);
	for (size_t i = 0; i < log.n; i++)
		free(log.v[i]);
	free(log.v);
	free(op);
	free(iobuf);
	close(ta.dirfd);
	close(tb.dirfd);
	close(home_fd);
	free((char *)ta.root);
	free((char *)tb.root);
	return mismatches ? 1 : 0;
}
