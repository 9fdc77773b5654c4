// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tier_file.c -- Check suite for the file tier (tiers/tier_file.c)
 * and its io_uring engine (tiers/uring.c): path checks at open, the
 * private directory and slab file and their removal, data at unaligned
 * offsets and across many slots, zeroed and punched slots, large
 * requests split over many SQEs, the pread()/pwrite() fallback, writers
 * on several threads (one ring each, freed at thread exit), fork(), and
 * errors: injected faults, kernel errors passed through from cqe->res
 * (EFAULT, ENOSPC), and a slab file removed or truncated behind the
 * tier's back; what a killed process leaves (no data) and the sweep of
 * dead mounts' directories; free space capped by the filesystem and
 * shared between tiers on one; tier_path_within().
 *
 * Each test gets a fresh directory (checked fixture) inside a per-case
 * directory that the unchecked fixture removes in the parent process, so
 * nothing is left behind even when a test dies.  Tests that need to
 * mount (a read-only or tiny tmpfs) do so in a private mount namespace
 * of the forked test process and are skipped (tap_skip(): a TAP "# SKIP"), when
 * that is not allowed or CK_FORK=no.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tier.h"
#include "tier_ops.h"
#include "uring.h"
#include "faulty_tier.h"
#include "tap.h"
#include "banned.h"

#define EXT (256u * 1024) /* one SQE (URING_CHUNK) per full-slot request */
#define NSLOTS 16u

/* Per-case base directory (unchecked fixture, made in the parent). */
static char t_base[4096];
/* Per-test directory (checked fixture) and the tier made in it. */
static char t_dir[4096];
static struct tier *t;

/* ------------------------------------------------------------------ */
/* helpers */

static int t_rm_entry(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

static void t_rm_rf(const char *path)
{
	(void)nftw(path, t_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup_base(void)
{
	const char *tmp = getenv("TMPDIR");
	int n;

	n = snprintf(t_base, sizeof(t_base), "%s/test_tier_file.XXXXXX",
		     tmp && *tmp ? tmp : "/tmp");
	ck_assert_int_lt(n, (int)sizeof(t_base));
	ck_assert_ptr_nonnull(mkdtemp(t_base));
}

static void teardown_base(void)
{
	t_rm_rf(t_base);
}

static void setup_dir(void)
{
	int n = snprintf(t_dir, sizeof(t_dir), "%s/t-XXXXXX", t_base);

	ck_assert_int_lt(n, (int)sizeof(t_dir));
	ck_assert_ptr_nonnull(mkdtemp(t_dir));
	t = NULL;
}

static void teardown_dir(void)
{
	t = tier_free(t);
	t_rm_rf(t_dir);
}

static void setup_tier(void)
{
	setup_dir();
	ck_assert_int_eq(tier_create("file", TIER_FILE, t_dir,
				     (uint64_t)NSLOTS * EXT, EXT, &t),
			 0);
	ck_assert_ptr_nonnull(t);
}

static bool t_forking(void)
{
	const char *f = getenv("CK_FORK");

	return !(f && !strcmp(f, "no"));
}

/*
 * Give this (forked) test process its own mount namespace so it can
 * mount on t_dir without anyone else seeing it.  False if not allowed.
 */
static bool t_private_mounts(void)
{
	if (!t_forking())
		return false;
	if (unshare(CLONE_NEWNS) < 0)
		return false;
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
}

/* Number of entries in @dir, not counting "." and "..". */
static int t_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* Path of the only entry of @dir into @out (asserted to exist). */
static void t_only_entry(const char *dir, char *out, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		ck_assert_int_lt(snprintf(out, size, "%s/%s", dir, de->d_name),
				 (int)size);
		n++;
	}
	closedir(d);
	ck_assert_int_eq(n, 1);
}

/*
 * Path of the tier's slab.  It has no name (tier_backing_open(): an
 * unlinked file), so this is /proc/self/fd/N of the one fd whose link
 * names a file in a private directory of t_dir and ends in "(deleted)",
 * and which is not the O_DIRECT fd of the same file (tier_file.c).
 */
static void t_slab_path(char *out, size_t size)
{
	char prefix[4096], link[8192], fdp[300];
	char *real = realpath(t_dir, NULL);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(real);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_lt(snprintf(prefix, sizeof(prefix), "%s/tierfs-", real),
			 (int)sizeof(prefix));
	free(real);
	while ((de = readdir(d))) {
		static const char del[] = " (deleted)";
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%s", de->d_name);
		len = readlink(fdp, link, sizeof(link) - 1);
		if (len < (ssize_t)sizeof(del))
			continue;
		link[len] = '\0';
		if (strncmp(link, prefix, strlen(prefix)) ||
		    strcmp(link + len - (sizeof(del) - 1), del))
			continue;
		/* the slab's second, O_DIRECT fd for bulk copies */
		if (fcntl((int)strtol(de->d_name, NULL, 10), F_GETFL) & O_DIRECT)
			continue;
		ck_assert_int_lt(snprintf(out, size, "%s", fdp), (int)size);
		n++;
	}
	closedir(d);
	ck_assert_msg(n == 1, "%d unlinked slab files open in %s, want 1", n,
		      t_dir);
}

/* Byte @i of the pattern with @seed; never 0 so it differs from a hole. */
static unsigned char t_pat(uint64_t i, unsigned seed)
{
	return (unsigned char)((i * 131 + seed * 7 + (i >> 12)) % 251 + 1);
}

static void t_fill(unsigned char *buf, size_t len, uint64_t base, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = t_pat(base + i, seed);
}

/* Index of the first byte of @buf that is not the pattern, or -1. */
static long t_check(const unsigned char *buf, size_t len, uint64_t base,
		    unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != t_pat(base + i, seed))
			return (long)i;
	return -1;
}

/* Index of the first non-zero byte of @buf, or -1. */
static long t_nonzero(const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i])
			return (long)i;
	return -1;
}

static void *t_xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

static void t_write_slot(struct tier *tt, uint32_t slot, unsigned seed)
{
	unsigned char *buf = t_xmalloc(tt->extent_size);

	t_fill(buf, tt->extent_size, 0, seed);
	ck_assert_int_eq(tier_write(tt, slot, 0, buf, tt->extent_size),
			 (ssize_t)tt->extent_size);
	free(buf);
}

static void t_assert_slot_pattern(struct tier *tt, uint32_t slot, unsigned seed)
{
	unsigned char *buf = t_xmalloc(tt->extent_size);
	long at;

	memset(buf, 0, tt->extent_size);
	ck_assert_int_eq(tier_read(tt, slot, 0, buf, tt->extent_size),
			 (ssize_t)tt->extent_size);
	at = t_check(buf, tt->extent_size, 0, seed);
	ck_assert_msg(at < 0, "slot %u byte %ld: 0x%02x, want 0x%02x", slot, at,
		      at < 0 ? 0 : buf[at],
		      at < 0 ? 0 : t_pat((uint64_t)at, seed));
	free(buf);
}

static void t_assert_slot_zero(struct tier *tt, uint32_t slot)
{
	unsigned char *buf = t_xmalloc(tt->extent_size);
	long at;

	memset(buf, 0xee, tt->extent_size);
	ck_assert_int_eq(tier_read(tt, slot, 0, buf, tt->extent_size),
			 (ssize_t)tt->extent_size);
	at = t_nonzero(buf, tt->extent_size);
	ck_assert_msg(at < 0, "slot %u: byte %ld is 0x%02x, want 0", slot, at,
		      at < 0 ? 0 : buf[at]);
	free(buf);
}

/* Allocate every slot of @tt into @slots, checking the counts. */
static void t_alloc_all(struct tier *tt, uint32_t *slots)
{
	for (uint32_t i = 0; i < tt->nslots; i++) {
		ck_assert_int_eq(tier_slot_alloc(tt, &slots[i]), 0);
		ck_assert_uint_lt(slots[i], tt->nslots);
		for (uint32_t j = 0; j < i; j++)
			ck_assert_uint_ne(slots[i], slots[j]);
		ck_assert_uint_eq(tier_used_slots(tt), i + 1);
	}
}

static uint64_t t_avail(const char *path)
{
	struct statvfs vfs;

	ck_assert_int_eq(statvfs(path, &vfs), 0);
	return (uint64_t)vfs.f_bavail * vfs.f_frsize;
}

/* ------------------------------------------------------------------ */
/* open */

START_TEST(test_tier_file_open_makes_private_slab)
{
	char priv[4096], slab[4096];
	struct stat st;
	const char *base;

	ck_assert_int_eq(tier_create("nvme-0", TIER_FILE, t_dir,
				     (uint64_t)NSLOTS * EXT + 100, EXT, &t),
			 0);
	ck_assert_str_eq(t->path, t_dir);
	ck_assert_uint_eq(t->nslots, NSLOTS);
	ck_assert_ptr_nonnull(t->priv);
	ck_assert_str_eq(tier_file_ops.kind_name, "file");

	t_only_entry(t_dir, priv, sizeof(priv));
	base = strrchr(priv, '/') + 1;
	ck_assert_msg(!strncmp(base, "tierfs-nvme-0-", 14),
		      "private dir '%s' not named tierfs-NAME-XXXXXX", base);
	ck_assert_uint_eq(strlen(base), 14 + 6);
	ck_assert_int_eq(lstat(priv, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_uint_eq(st.st_uid, geteuid());

	/* the directory holds only the (empty) lock file ... */
	t_only_entry(priv, slab, sizeof(slab));
	ck_assert_str_eq(strrchr(slab, '/'), "/lock");
	ck_assert_int_eq(lstat(slab, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, 0);
	/* ... and the slab has no name: the kernel frees it with us */
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_nlink, 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq(st.st_uid, geteuid());
	ck_assert_int_eq(st.st_size, (off_t)t->vslots * EXT);
	/* sparse: a fresh tier costs no disk space */
	ck_assert_int_eq(st.st_blocks, 0);

	t = tier_free(t);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
	ck_assert_int_eq(access(priv, F_OK), -1);
}
END_TEST

/* The modes do not depend on the umask of the mounting process. */
START_TEST(test_tier_file_open_modes_ignore_umask)
{
	char priv[4096], slab[4096];
	struct stat st;

	(void)umask(0777);
	ck_assert_int_eq(tier_create("u", TIER_FILE, t_dir, EXT, EXT, &t), 0);
	t_only_entry(t_dir, priv, sizeof(priv));
	ck_assert_int_eq(stat(priv, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	t_only_entry(priv, slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	(void)umask(022);
}
END_TEST

/* Two tiers in one directory get separate private directories. */
START_TEST(test_tier_file_open_two_tiers_one_dir)
{
	struct tier *t2 = NULL;
	uint32_t a, b;

	ck_assert_int_eq(tier_create("a", TIER_FILE, t_dir, 4 * EXT, EXT, &t),
			 0);
	ck_assert_int_eq(tier_create("b", TIER_FILE, t_dir, 4 * EXT, EXT, &t2),
			 0);
	ck_assert_int_eq(t_count_entries(t_dir), 2);
	ck_assert_int_eq(tier_slot_alloc(t, &a), 0);
	ck_assert_int_eq(tier_slot_alloc(t2, &b), 0);
	ck_assert_uint_eq(a, b);
	t_write_slot(t, a, 1);
	t_write_slot(t2, b, 2);
	t_assert_slot_pattern(t, a, 1);
	t_assert_slot_pattern(t2, b, 2);
	t2 = tier_free(t2);
	ck_assert_int_eq(t_count_entries(t_dir), 1);
	t_assert_slot_pattern(t, a, 1);
}
END_TEST

/* A symlink to a directory is as good as the directory. */
START_TEST(test_tier_file_open_symlink_to_dir)
{
	char link[4096], sub[4096];

	ck_assert_int_lt(snprintf(sub, sizeof(sub), "%s/real", t_dir),
			 (int)sizeof(sub));
	ck_assert_int_lt(snprintf(link, sizeof(link), "%s/link", t_dir),
			 (int)sizeof(link));
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(symlink("real", link), 0);
	ck_assert_int_eq(tier_create("l", TIER_FILE, link, EXT, EXT, &t), 0);
	ck_assert_int_eq(t_count_entries(sub), 1);
	t = tier_free(t);
	ck_assert_int_eq(t_count_entries(sub), 0);
}
END_TEST

static const struct bad_path_case {
	const char *suffix; /* appended to t_dir; NULL: use @abs */
	const char *abs;
	int want;
} bad_path_cases[] = {
	{ "/missing", NULL, -ENOENT },
	{ "/missing/deeper", NULL, -ENOENT },
	{ "/dangling", NULL, -ENOENT },	 /* symlink to nowhere */
	{ "/file", NULL, -ENOTDIR },	 /* a regular file */
	{ "/file/sub", NULL, -ENOTDIR }, /* below a regular file */
	{ "/fifo", NULL, -ENOTDIR },
	{ "/devnull", NULL, -ENOTDIR }, /* symlink to a device */
	{ NULL, "", -EINVAL },		/* tier_create() refuses */
	{ NULL, "/nonexistent-tierfs-test-dir", -ENOENT },
	/*
	 * /proc passes access(W_OK) for root but refuses to create
	 * anything: the real create test catches it.
	 */
	{ NULL, "/proc", -EACCES },
};

START_TEST(test_tier_file_open_bad_path)
{
	const struct bad_path_case *c = &bad_path_cases[_i];
	struct tier *sentinel = (struct tier *)&bad_path_cases;
	struct tier *nt = sentinel;
	char path[4096], p2[4096];
	int fd, r;

	/* the things the cases point at */
	ck_assert_int_lt(snprintf(p2, sizeof(p2), "%s/file", t_dir),
			 (int)sizeof(p2));
	fd = open(p2, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_lt(snprintf(p2, sizeof(p2), "%s/dangling", t_dir),
			 (int)sizeof(p2));
	ck_assert_int_eq(symlink("nowhere", p2), 0);
	ck_assert_int_lt(snprintf(p2, sizeof(p2), "%s/fifo", t_dir),
			 (int)sizeof(p2));
	ck_assert_int_eq(mkfifo(p2, 0600), 0);
	ck_assert_int_lt(snprintf(p2, sizeof(p2), "%s/devnull", t_dir),
			 (int)sizeof(p2));
	ck_assert_int_eq(symlink("/dev/null", p2), 0);

	if (c->suffix)
		ck_assert_int_lt(snprintf(path, sizeof(path), "%s%s", t_dir,
					  c->suffix),
				 (int)sizeof(path));
	else
		ck_assert_int_lt(snprintf(path, sizeof(path), "%s", c->abs),
				 (int)sizeof(path));
	r = tier_create("bad", TIER_FILE, path, 4 * EXT, EXT, &nt);
	ck_assert_msg(r == c->want, "'%s': got %d (%s), want %d (%s)", path, r,
		      strerror(-r), c->want, strerror(-c->want));
	ck_assert_msg(nt == sentinel, "'%s': *ret_tier written on failure",
		      path);
	/* nothing was created in t_dir besides the fixtures above */
	ck_assert_int_eq(t_count_entries(t_dir), 4);
}
END_TEST

START_TEST(test_tier_file_open_null_path)
{
	ck_assert_int_eq(tier_create("n", TIER_FILE, NULL, EXT, EXT, &t),
			 -EINVAL);
	ck_assert_ptr_null(t);
}
END_TEST

/*
 * An unwritable directory.  Root passes access() everywhere except on a
 * read-only mount, so as root this mounts a read-only tmpfs in a private
 * namespace (-EROFS from access()); otherwise chmod 0555 does (-EACCES).
 */
START_TEST(test_tier_file_open_unwritable)
{
	char sub[4096];
	int r;

	ck_assert_int_lt(snprintf(sub, sizeof(sub), "%s/ro", t_dir),
			 (int)sizeof(sub));
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	if (geteuid() != 0) {
		ck_assert_int_eq(chmod(sub, 0555), 0);
		r = tier_create("ro", TIER_FILE, sub, EXT, EXT, &t);
		ck_assert_int_eq(r, -EACCES);
		(void)chmod(sub, 0755);
		return;
	}
	if (!t_private_mounts() ||
	    mount("tmpfs", sub, "tmpfs", MS_RDONLY, "size=1m") < 0) {
		tap_skip("no read-only tmpfs for root (needs a private "
		       "mount namespace and CK_FORK not 'no')");
		return;
	}
	r = tier_create("ro", TIER_FILE, sub, EXT, EXT, &t);
	ck_assert_msg(r == -EROFS || r == -EACCES, "got %d (%s)", r,
		      strerror(-r));
	ck_assert_ptr_null(t);
	(void)umount(sub);
}
END_TEST

/* A size beyond the free space is refused and leaves nothing behind. */
START_TEST(test_tier_file_open_larger_than_free_space)
{
	uint32_t ext = 1u << 20;
	uint64_t avail = t_avail(t_dir), size;

	/* keep the slot count within uint32_t on a huge filesystem */
	while ((avail / ext) >= UINT32_MAX / 2)
		ext <<= 1;
	size = (avail / ext + 64) * (uint64_t)ext;
	ck_assert_int_eq(tier_create("big", TIER_FILE, t_dir, size, ext, &t),
			 -ENOSPC);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(t_count_entries(t_dir), 0);

	/* a size that fits is fine (the slab is sparse) */
	size = (avail / 4 / ext) * (uint64_t)ext;
	if (size >= ext) {
		ck_assert_int_eq(tier_create("fits", TIER_FILE, t_dir, size,
					     ext, &t),
				 0);
		t = tier_free(t);
	}
	ck_assert_int_eq(t_count_entries(t_dir), 0);
}
END_TEST

/* The free-space check on a small tmpfs, where the numbers are exact. */
START_TEST(test_tier_file_open_free_space_on_tmpfs)
{
	uint64_t avail;

	if (!t_private_mounts() ||
	    mount("tmpfs", t_dir, "tmpfs", 0, "size=8m,mode=0755") < 0) {
		tap_skip("cannot mount a tmpfs (needs CAP_SYS_ADMIN in a "
		       "private mount namespace and CK_FORK not 'no')");
		return;
	}
	avail = t_avail(t_dir);
	ck_assert_uint_eq(avail, 8u << 20);
	ck_assert_int_eq(tier_create("x", TIER_FILE, t_dir, avail + 4096, 4096,
				     &t),
			 -ENOSPC);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
	ck_assert_int_eq(tier_create("x", TIER_FILE, t_dir, avail, 4096, &t),
			 0);
	t = tier_free(t);
	(void)umount(t_dir);
}
END_TEST

START_TEST(test_tier_file_free_after_backing_dir_removed)
{
	char priv[4096];

	ck_assert_int_eq(
		tier_create("gone", TIER_FILE, t_dir, 4 * EXT, EXT, &t), 0);
	t_only_entry(t_dir, priv, sizeof(priv));
	t_rm_rf(priv);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
	t = tier_free(t); /* must not crash or complain */
	ck_assert_int_eq(t_count_entries(t_dir), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data */

START_TEST(test_tier_file_fresh_slots_read_zeros)
{
	uint32_t slots[NSLOTS];

	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_zero(t, slots[i]);
}
END_TEST

static const struct range_case {
	uint64_t off;
	size_t len;
} range_cases[] = {
	{ 0, 1 },
	{ 1, 1 },
	{ 0, EXT },
	{ 1, EXT - 1 },
	{ 0, EXT - 1 },
	{ 1, EXT - 2 },
	{ 511, 2 },
	{ 4095, 2 },
	{ 4095, 4098 },
	{ 3, 4097 },
	{ 12345, 54321 },
	{ 65535, 65538 },
	{ EXT / 2 - 7, 13 },
	{ EXT - 4096, 4096 },
	{ EXT - 7, 7 },
	{ EXT - 1, 1 },
};

/*
 * Write a pattern at an unaligned range of a middle slot: the slot reads
 * back the pattern inside the range and zeros outside it, neighbours
 * stay zero, and an unaligned sub-range reads back too.
 */
START_TEST(test_tier_file_unaligned_write_read)
{
	const struct range_case *c = &range_cases[_i];
	uint32_t slots[NSLOTS], mid = NSLOTS / 2;
	unsigned char *in, *out;
	long at;

	t_alloc_all(t, slots);
	in = t_xmalloc(c->len);
	t_fill(in, c->len, c->off, 5);
	ck_assert_int_eq(tier_write(t, slots[mid], c->off, in, c->len),
			 (ssize_t)c->len);

	out = t_xmalloc(EXT);
	ck_assert_int_eq(tier_read(t, slots[mid], 0, out, EXT), EXT);
	at = t_nonzero(out, c->off);
	ck_assert_msg(at < 0, "byte %ld before the range is not zero", at);
	at = t_check(out + c->off, c->len, c->off, 5);
	ck_assert_msg(at < 0, "byte %ld of the range is wrong", at);
	at = t_nonzero(out + c->off + c->len, EXT - c->off - c->len);
	ck_assert_msg(at < 0, "byte %ld after the range is not zero", at);
	free(out);

	t_assert_slot_zero(t, slots[mid - 1]);
	t_assert_slot_zero(t, slots[mid + 1]);

	if (c->len >= 3) {
		size_t sub = c->len / 3;

		memset(in, 0, c->len);
		ck_assert_int_eq(tier_read(t, slots[mid], c->off + sub, in,
					   sub),
				 (ssize_t)sub);
		ck_assert_int_eq(t_check(in, sub, c->off + sub, 5), -1);
	}
	free(in);
}
END_TEST

/*
 * A pseudo-random mix of writes and read-backs at unaligned ranges in
 * every slot, checked against an in-memory model of the whole tier.
 */
START_TEST(test_tier_file_random_io_matches_model)
{
	uint32_t slots[NSLOTS];
	unsigned char *model, *buf;
	uint64_t rnd = 0x9e3779b97f4a7c15ull;

	t_alloc_all(t, slots);
	model = t_xmalloc((size_t)NSLOTS * EXT);
	memset(model, 0, (size_t)NSLOTS * EXT);
	buf = t_xmalloc(EXT);
	for (int op = 0; op < 3000; op++) {
		uint32_t i, off;
		size_t len;
		unsigned char *m;

		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		i = (uint32_t)(rnd % NSLOTS);
		off = (uint32_t)((rnd >> 8) % EXT);
		/* mostly small, sometimes up to the rest of the slot */
		len = (rnd >> 40) % 8 ? (rnd >> 28) % 9000 + 1
				      : (rnd >> 28) % (EXT - off) + 1;
		len = len > EXT - off ? EXT - off : len;
		m = model + (size_t)slots[i] * EXT + off;
		if ((rnd >> 50) % 3) {
			t_fill(buf, len, (uint64_t)op * 977, (unsigned)op);
			ck_assert_int_eq(tier_write(t, slots[i], off, buf, len),
					 (ssize_t)len);
			memcpy(m, buf, len);
		} else {
			ck_assert_int_eq(tier_read(t, slots[i], off, buf, len),
					 (ssize_t)len);
			ck_assert_msg(!memcmp(buf, m, len),
				      "op %d: slot %u off %u len %zu differs",
				      op, slots[i], off, len);
		}
	}
	for (uint32_t i = 0; i < NSLOTS; i++) {
		ck_assert_int_eq(tier_read(t, i, 0, buf, EXT), EXT);
		ck_assert_msg(!memcmp(buf, model + (size_t)i * EXT, EXT),
			      "slot %u differs at the end", i);
	}
	free(buf);
	free(model);
}
END_TEST

START_TEST(test_tier_file_freed_slot_reads_zeros_and_frees_space)
{
	uint32_t slots[NSLOTS], s;
	char slab[4096];
	struct stat st;

	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_write_slot(t, slots[i], i + 1);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_pattern(t, slots[i], i + 1);
	ck_assert_int_eq(tier_sync(t), 0);
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_int_ge(st.st_blocks * 512, (off_t)NSLOTS * EXT);

	/* free one while the rest stay: LIFO hands the same slot back */
	tier_slot_free(t, slots[3]);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_uint_eq(s, slots[3]);
	t_assert_slot_zero(t, s);
	t_assert_slot_pattern(t, slots[2], 3);
	t_assert_slot_pattern(t, slots[4], 5);

	/* free all: the punched slab gives its blocks back */
	for (uint32_t i = 0; i < NSLOTS; i++)
		tier_slot_free(t, slots[i]);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)t->vslots * EXT);
	ck_assert_int_lt(st.st_blocks * 512, (off_t)EXT);
	ck_assert_uint_eq(t->stats.io_errors, 0);
	/* punching is no write */
	ck_assert_uint_eq(t->stats.write_ops, NSLOTS);

	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_zero(t, slots[i]);
}
END_TEST

/*
 * tier_slot_free_run(): a run of slots freed in one call reads as zeros
 * when handed out again (checksums reset with the data), its blocks are
 * given back by one punch, the slots around it keep their data, and
 * allocation hands the run back lowest slot first.
 */
START_TEST(test_tier_file_free_run)
{
	uint32_t slots[NSLOTS], s;
	char slab[4096];
	struct stat st;
	blkcnt_t before;

	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++) {
		ck_assert_uint_eq(slots[i], i);
		t_write_slot(t, i, i + 1);
	}
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	before = st.st_blocks;

	tier_slot_free_run(t, 3, 9);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 9);
	ck_assert_uint_eq(tier_free_slots(t), 9);
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_int_le(st.st_blocks * 512,
			 before * 512 - 9 * (blkcnt_t)EXT + (blkcnt_t)EXT);
	ck_assert_uint_eq(t->stats.io_errors, 0);
	for (uint32_t i = 0; i < 3; i++)
		t_assert_slot_pattern(t, i, i + 1);
	for (uint32_t i = 12; i < NSLOTS; i++)
		t_assert_slot_pattern(t, i, i + 1);
	for (uint32_t i = 3; i < 12; i++) {
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_eq(s, i);
		t_assert_slot_zero(t, s);
	}
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	/* a run of one is tier_slot_free() */
	tier_slot_free_run(t, 7, 1);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 1);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_uint_eq(s, 7);
	t_assert_slot_zero(t, s);
}
END_TEST

START_TEST(test_tier_file_alloc_until_enospc)
{
	uint32_t slots[NSLOTS], extra = 4242;

	for (int round = 0; round < 3; round++) {
		t_alloc_all(t, slots);
		ck_assert_int_eq(tier_slot_alloc(t, &extra), -ENOSPC);
		ck_assert_uint_eq(extra, 4242);
		ck_assert_uint_eq(tier_free_slots(t), 0);
		for (uint32_t i = 0; i < NSLOTS; i++) {
			tier_slot_free(t, slots[i]);
			ck_assert_uint_eq(tier_used_slots(t), NSLOTS - i - 1);
			ck_assert_uint_eq(tier_free_slots(t), i + 1);
		}
	}
}
END_TEST

START_TEST(test_tier_file_zero_range)
{
	uint32_t s;
	unsigned char *buf = t_xmalloc(EXT);

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(t, s, 9);
	ck_assert_int_eq(tier_zero(t, s, 100, 70000), 0);
	ck_assert_int_eq(tier_read(t, s, 0, buf, EXT), EXT);
	ck_assert_int_eq(t_check(buf, 100, 0, 9), -1);
	ck_assert_int_eq(t_nonzero(buf + 100, 70000), -1);
	ck_assert_int_eq(t_check(buf + 70100, EXT - 70100, 70100, 9), -1);
	free(buf);
}
END_TEST

/*
 * Extents much larger than URING_CHUNK: one request becomes many SQEs
 * (4 MiB: 16 at once) or more than a ring holds (32 MiB: 128 pieces,
 * URING_DEPTH in flight).  Full and unaligned ranges crossing piece
 * boundaries.
 */
static const uint32_t big_extents[] = { 4u << 20, 32u << 20 };

START_TEST(test_tier_file_large_requests_split)
{
	uint32_t ext = big_extents[_i];
	unsigned char *buf, *back;
	uint32_t s0, s1;
	long at;

	ck_assert_int_eq(
		tier_create("big", TIER_FILE, t_dir, 3ull * ext, ext, &t), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s0), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s1), 0);
	buf = t_xmalloc(ext);
	back = t_xmalloc(ext);

	t_fill(buf, ext, 0, 11);
	ck_assert_int_eq(tier_write(t, s1, 0, buf, ext), (ssize_t)ext);
	memset(back, 0, ext);
	ck_assert_int_eq(tier_read(t, s1, 0, back, ext), (ssize_t)ext);
	ck_assert_int_eq(t_check(back, ext, 0, 11), -1);

	/* odd offset and length: every piece boundary is unaligned */
	t_fill(buf, ext - 3, 1, 12);
	ck_assert_int_eq(tier_write(t, s0, 1, buf, ext - 3),
			 (ssize_t)(ext - 3));
	memset(back, 0xee, ext);
	ck_assert_int_eq(tier_read(t, s0, 0, back, ext), (ssize_t)ext);
	ck_assert_uint_eq(back[0], 0);
	at = t_check(back + 1, ext - 3, 1, 12);
	ck_assert_msg(at < 0, "byte %ld differs", at);
	ck_assert_uint_eq(back[ext - 2], 0);
	ck_assert_uint_eq(back[ext - 1], 0);

	/* a read starting inside a piece and ending inside another */
	memset(back, 0, ext);
	ck_assert_int_eq(tier_read(t, s1, URING_CHUNK - 5, back,
				   3 * URING_CHUNK + 10),
			 (ssize_t)(3 * URING_CHUNK + 10));
	ck_assert_int_eq(
		t_check(back, 3 * URING_CHUNK + 10, URING_CHUNK - 5, 11), -1);
	t_assert_slot_zero(t, 2);
	free(back);
	free(buf);
}
END_TEST

/* The pread()/pwrite() path used where the kernel refuses io_uring. */
START_TEST(test_tier_file_sync_fallback)
{
	uint32_t slots[NSLOTS];

	uring_set_sync_fallback(true);
	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_write_slot(t, slots[i], 20 + i);
	uring_set_sync_fallback(false);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_pattern(t, slots[i], 20 + i);
	uring_set_sync_fallback(true);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_pattern(t, slots[i], 20 + i);
	tier_slot_free(t, slots[0]);
	ck_assert_int_eq(tier_slot_alloc(t, &slots[0]), 0);
	t_assert_slot_zero(t, slots[0]);
	uring_set_sync_fallback(false);
}
END_TEST

START_TEST(test_tier_file_sync)
{
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(t, s, 1);
	ck_assert_int_eq(tier_sync(t), 0);
	t_assert_slot_pattern(t, s, 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads */

#define MT_THREADS 8
#define MT_SLOTS_EACH 4
#define MT_ROUNDS 40

static pthread_barrier_t mt_barrier;
/*
 * Least uring_live_rings() any thread saw between the barriers.  Relaxed:
 * the check-then-store may lose a smaller value to a race, but every
 * thread sees the same count there, so any value kept is the count.
 */
static unsigned mt_rings_min;

struct mt_arg {
	int id;
	uint32_t slots[MT_SLOTS_EACH];
	const char *err; /* first problem, or NULL */
};

static void *t_mt_writer(void *p)
{
	struct mt_arg *a = p;
	unsigned char *buf = malloc(EXT), *back = malloc(EXT);
	unsigned seen;

	if (!buf || !back) {
		a->err = "out of memory";
		goto out;
	}
	/* first I/O makes this thread's ring */
	t_fill(buf, EXT, 0, (unsigned)a->id * 100);
	if (tier_write(t, a->slots[0], 0, buf, EXT) != EXT) {
		a->err = "first write failed";
		goto out;
	}
	/* all rings exist between the two barriers: none has exited */
	(void)pthread_barrier_wait(&mt_barrier);
	seen = uring_live_rings();
	if (seen < __atomic_load_n(&mt_rings_min, __ATOMIC_RELAXED))
		__atomic_store_n(&mt_rings_min, seen, __ATOMIC_RELAXED);
	(void)pthread_barrier_wait(&mt_barrier);
	for (int r = 0; r < MT_ROUNDS && !a->err; r++) {
		unsigned seed = (unsigned)a->id * 100 + (unsigned)r;
		uint32_t s = a->slots[r % MT_SLOTS_EACH];
		uint64_t off = ((uint64_t)r * 4099) % (EXT / 2);
		size_t len = EXT - off - (size_t)r;

		t_fill(buf, len, off, seed);
		if (tier_write(t, s, off, buf, len) != (ssize_t)len) {
			a->err = "write failed";
			break;
		}
		if (tier_read(t, s, off, back, len) != (ssize_t)len ||
		    t_check(back, len, off, seed) >= 0) {
			a->err = "read back differs";
			break;
		}
		sched_yield();
	}
out:
	free(buf);
	free(back);
	return NULL;
}

/*
 * Writers on 8 threads, each on its own slots: data stays put, every
 * thread had its own ring, and exiting threads free their rings.
 */
START_TEST(test_tier_file_concurrent_writers)
{
	pthread_t th[MT_THREADS];
	struct mt_arg args[MT_THREADS];
	unsigned before;
	uint32_t s;

	t = tier_free(t);
	ck_assert_int_eq(tier_create("mt", TIER_FILE, t_dir,
				     (uint64_t)MT_THREADS * MT_SLOTS_EACH * EXT,
				     EXT, &t),
			 0);
	before = uring_live_rings();
	mt_rings_min = UINT32_MAX;
	ck_assert_int_eq(pthread_barrier_init(&mt_barrier, NULL, MT_THREADS),
			 0);
	memset(args, 0, sizeof(args));
	for (int i = 0; i < MT_THREADS; i++) {
		args[i].id = i;
		for (int j = 0; j < MT_SLOTS_EACH; j++)
			ck_assert_int_eq(tier_slot_alloc(t, &args[i].slots[j]),
					 0);
		ck_assert_int_eq(
			pthread_create(&th[i], NULL, t_mt_writer, &args[i]), 0);
	}
	for (int i = 0; i < MT_THREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_msg(!args[i].err, "thread %d: %s", i, args[i].err);
	}
	pthread_barrier_destroy(&mt_barrier);
	ck_assert_uint_eq(mt_rings_min, before + MT_THREADS);
	/* key destructors ran before pthread_join() returned */
	ck_assert_uint_eq(uring_live_rings(), before);
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);

	/* the data of every thread's last round is still there */
	for (int i = 0; i < MT_THREADS; i++) {
		for (int r = MT_ROUNDS - MT_SLOTS_EACH; r < MT_ROUNDS; r++) {
			unsigned char *back = t_xmalloc(EXT);
			uint64_t off = ((uint64_t)r * 4099) % (EXT / 2);
			size_t len = EXT - off - (size_t)r;

			ck_assert_int_eq(
				tier_read(t, args[i].slots[r % MT_SLOTS_EACH],
					  off, back, len),
				(ssize_t)len);
			ck_assert_int_eq(
				t_check(back, len, off,
					(unsigned)i * 100 + (unsigned)r),
				-1);
			free(back);
		}
	}
	ck_assert_uint_eq(t->stats.io_errors, 0);
}
END_TEST

START_TEST(test_tier_file_ring_thread_exit)
{
	unsigned before;
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(t, s, 1); /* this thread now has a ring */
	before = uring_live_rings();
	ck_assert_uint_ge(before, 1);
	uring_thread_exit();
	ck_assert_uint_eq(uring_live_rings(), before - 1);
	uring_thread_exit(); /* no ring: nothing to do */
	ck_assert_uint_eq(uring_live_rings(), before - 1);
	t_assert_slot_pattern(t, s, 1); /* makes a new one */
	ck_assert_uint_eq(uring_live_rings(), before);
}
END_TEST

/*
 * A child of fork() must not use the ring it inherited (the kernel would
 * mix both processes' requests, or refuse with SINGLE_ISSUER): it gets
 * its own, and the parent's keeps working.  The child's write lands in
 * the shared slab file; the parent looks at it there, since the child's
 * checksums (tier.c) live in the child's memory.
 */
START_TEST(test_tier_file_fork_gets_own_ring)
{
	unsigned char *buf = t_xmalloc(EXT);
	char slab[4096];
	uint32_t s0, s1;
	pid_t pid;
	int status, fd;

	ck_assert_int_eq(tier_slot_alloc(t, &s0), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s1), 0);
	t_write_slot(t, s0, 1); /* the parent has a ring */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		bool ok;

		t_fill(buf, EXT, 0, 2);
		ok = tier_write(t, s1, 0, buf, EXT) == EXT &&
		     tier_read(t, s1, 0, buf, EXT) == EXT &&
		     t_check(buf, EXT, 0, 2) < 0 &&
		     tier_read(t, s0, 0, buf, EXT) == EXT &&
		     t_check(buf, EXT, 0, 1) < 0;
		_exit(ok ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	t_assert_slot_pattern(t, s0, 1);
	t_slab_path(slab, sizeof(slab));
	fd = open(slab, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, buf, EXT, (off_t)s1 * EXT), EXT);
	ck_assert_int_eq(t_check(buf, EXT, 0, 2), -1);
	close(fd);
	free(buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* errors */

/*
 * For N in 1..6, of 6 alternating writes and reads only call N fails.
 * Whole-slot calls: each is exactly one back end call (a partial write
 * would also read back a checksum block in tier.c).
 */
START_TEST(test_tier_file_fault_nth_call_fails)
{
	unsigned char *buf = t_xmalloc(EXT), *back = t_xmalloc(EXT);
	int nth = _i;
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_fill(buf, EXT, 0, 3);
	faulty_tier_arm(t, nth, EIO);
	for (int call = 1; call <= 6; call++) {
		ssize_t r;

		if (call % 2)
			r = tier_write(t, s, 0, buf, EXT);
		else
			r = tier_read(t, s, 0, back, EXT);
		ck_assert_int_eq(r, call == nth ? -EIO : (ssize_t)EXT);
	}
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(t->stats.io_errors, 1);
	/* the last write before or after the fault is what is there */
	t_assert_slot_pattern(t, s, 3);
	free(back);
	free(buf);
}
END_TEST

/*
 * Faults at the other back end calls (tier_fault_op): a reserve that
 * fails fails the charge with nothing changed; a discard that fails when
 * a slot is freed is made good by writing zeros, so the slot comes back
 * reading zeros and is not leaked; a discard that fails when units are
 * given back keeps them held (they read as zeros either way); a sync
 * that fails is an error counted like any other.  A fault of one class
 * is not spent by calls of another.
 */
START_TEST(test_tier_file_fault_reserve)
{
	uint64_t used;
	uint32_t s, s2;

	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	used = tier_used_bytes(t);
	faulty_tier_arm_ops(t, TIER_FAULT_RESERVE, 1, EIO);
	ck_assert_int_eq(tier_sync(t), 0); /* not a reserve: not counted */
	ck_assert(!faulty_tier_fired(t));
	ck_assert_int_eq(tier_charge(t, s, 0, 4096, NULL), -EIO);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(tier_used_bytes(t), used);
	ck_assert_uint_eq(t->stats.io_errors, 1);
	ck_assert(!tier_medium_full(t));
	/* the next charge works */
	ck_assert_int_eq(tier_charge(t, s, 0, EXT, NULL), 0);
	ck_assert_uint_eq(tier_used_bytes(t), used + EXT);
	/* reads and writes do not count down a reserve fault */
	faulty_tier_arm_ops(t, TIER_FAULT_RESERVE, 1, ENOSPC);
	t_write_slot(t, s, 4);
	t_assert_slot_pattern(t, s, 4);
	ck_assert(!faulty_tier_fired(t));
	/* a medium that says it is full: -ENOSPC, nothing charged, and the
	 * tier knows its medium is full (until statvfs shows room) */
	ck_assert_int_eq(tier_slot_get(t, &s2), 0);
	ck_assert_int_eq(tier_charge(t, s2, 0, 8192, NULL), -ENOSPC);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(tier_used_bytes(t), used + EXT);
	ck_assert(tier_medium_full(t));
	t_assert_slot_pattern(t, s, 4);
	tier_slot_free(t, s2);
	tier_slot_free(t, s);
}
END_TEST

START_TEST(test_tier_file_fault_discard)
{
	unsigned char *buf = t_xmalloc(EXT);
	uint64_t freed;
	uint32_t s, s2;

	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	ck_assert_int_eq(tier_charge(t, s, 0, EXT, NULL), 0);
	t_write_slot(t, s, 5);
	/* freed with its discard failing: zeros are written instead */
	faulty_tier_arm_ops(t, TIER_FAULT_DISCARD, 1, EIO);
	tier_slot_free(t, s);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(t->nleaked, 0);
	ck_assert_uint_eq(tier_used_bytes(t), 0);
	ck_assert_int_eq(tier_slot_get(t, &s2), 0);
	ck_assert_uint_eq(s2, s); /* the free stack hands it back */
	ck_assert_int_eq(tier_charge(t, s2, 0, EXT, NULL), 0);
	t_assert_slot_zero(t, s2);

	/* a hole punched whose discard fails: zeros, the units stay held */
	t_write_slot(t, s2, 6);
	faulty_tier_arm_ops(t, TIER_FAULT_DISCARD, 1, EIO);
	ck_assert_int_eq(tier_punch(t, s2, 0, EXT / 2, &freed), 0);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(freed, 0);
	ck_assert_uint_eq(tier_used_bytes(t), EXT);
	ck_assert_int_eq(tier_read(t, s2, 0, buf, EXT), (ssize_t)EXT);
	ck_assert_int_eq(t_nonzero(buf, EXT / 2), -1);
	ck_assert_int_eq(t_check(buf + EXT / 2, EXT / 2, EXT / 2, 6), -1);
	/* the same punch without the fault gives the space back */
	ck_assert_int_eq(tier_punch(t, s2, 0, EXT / 2, &freed), 0);
	ck_assert_uint_eq(freed, EXT / 2);
	ck_assert_uint_eq(tier_used_bytes(t), EXT / 2);
	ck_assert_int_eq(tier_read(t, s2, 0, buf, EXT), (ssize_t)EXT);
	ck_assert_int_eq(t_nonzero(buf, EXT / 2), -1);
	ck_assert_int_eq(t_check(buf + EXT / 2, EXT / 2, EXT / 2, 6), -1);
	tier_slot_free(t, s2);
	free(buf);
}
END_TEST

START_TEST(test_tier_file_fault_sync)
{
	uint32_t s;

	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	ck_assert_int_eq(tier_charge(t, s, 0, EXT, NULL), 0);
	faulty_tier_arm_ops(t, TIER_FAULT_SYNC, 1, EIO);
	t_write_slot(t, s, 7);
	t_assert_slot_pattern(t, s, 7);
	ck_assert(!faulty_tier_fired(t));
	ck_assert_int_eq(tier_sync(t), -EIO);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(t->stats.io_errors, 1);
	ck_assert_int_eq(tier_sync(t), 0);
	t_assert_slot_pattern(t, s, 7);
	tier_slot_free(t, s);
}
END_TEST

/* An injected write failure leaves the slot's old data alone. */
START_TEST(test_tier_file_fault_failed_write_keeps_data)
{
	unsigned char *buf = t_xmalloc(EXT);
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(t, s, 1);
	t_fill(buf, EXT, 0, 2);
	faulty_tier_arm(t, 1, EIO);
	ck_assert_int_eq(tier_write(t, s, 0, buf, EXT), -EIO);
	t_assert_slot_pattern(t, s, 1);
	faulty_tier_arm(t, 1, ENOSPC);
	ck_assert_int_eq(tier_write(t, s, 0, buf, EXT), -ENOSPC);
	t_assert_slot_pattern(t, s, 1);
	ck_assert_uint_eq(t->stats.io_errors, 2);
	free(buf);
}
END_TEST

/*
 * A kernel error in cqe->res comes back from the back end as is:
 * buffers the kernel cannot touch give -EFAULT, also when only some of a
 * request's pieces fail.  tier_read() maps it for the program (issue 16:
 * tier_errno(), -EIO) and keeps the raw one for the log
 * (tier_last_error()).  The write goes to the back end directly:
 * tier_write() hashes the buffer for its checksums first, which would
 * fault in user space.
 */
START_TEST(test_tier_file_kernel_error_passed_through)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *map;
	uint32_t s;

	t = tier_free(t);
	ck_assert_int_eq(tier_create("ef", TIER_FILE, t_dir, 4ull << 20,
				     1u << 20, &t),
			 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(t, s, 4);
	/* 1 MiB readable, then 1 MiB of PROT_NONE */
	map = mmap(NULL, 2u << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(map, MAP_FAILED);
	ck_assert_int_eq(mprotect(map + (1u << 20), 1u << 20, PROT_NONE), 0);

	ck_assert_int_eq(tier_last_error(t), 0);
	ck_assert_int_eq(tier_read(t, s, 0, map + (1u << 20), 1u << 20),
			 -EIO);
	ck_assert_int_eq(tier_last_error(t), -EFAULT);
	ck_assert_int_eq(t->ops->write(t, s, 0, map + (1u << 20), 1u << 20),
			 -EFAULT);
	/* the first 3/4 of the pieces are fine, the last ones fault */
	ck_assert_int_eq(t->ops->read(t, s, 0, map + (1u << 20) - 3 * pg * 64,
				      1u << 20),
			 -EFAULT);
	ck_assert_int_eq(tier_read(t, s, 0, map + (1u << 20) - 3 * pg * 64,
				   1u << 20),
			 -EIO);
	ck_assert_uint_eq(t->stats.io_errors, 2);
	/* the ring is fine afterwards */
	t_assert_slot_pattern(t, s, 4);
	ck_assert_int_eq(munmap(map, 2u << 20), 0);
}
END_TEST

/*
 * A filesystem that fills up behind the tier's back (the slab is
 * sparse): allocating a slot, which reserves its blocks, fails with the
 * kernel's -ENOSPC (counted as an I/O error) and hands out nothing;
 * once there is room, a slot comes with its space, so writes into it
 * cannot fail for want of space.
 */
START_TEST(test_tier_file_filesystem_full_gives_enospc)
{
	unsigned char *buf = t_xmalloc(EXT);
	char filler[4096];
	uint32_t s;
	int fd;

	t = tier_free(t); /* the fixture's; this test makes its own */
	if (!t_private_mounts() ||
	    mount("tmpfs", t_dir, "tmpfs", 0, "size=4m,mode=0755") < 0) {
		tap_skip("cannot mount a tmpfs (needs CAP_SYS_ADMIN in a "
		       "private mount namespace and CK_FORK not 'no')");
		free(buf);
		return;
	}
	ck_assert_int_eq(
		tier_create("full", TIER_FILE, t_dir, 2u << 20, EXT, &t), 0);
	ck_assert_int_lt(snprintf(filler, sizeof(filler), "%s/filler", t_dir),
			 (int)sizeof(filler));
	fd = open(filler, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	memset(buf, 1, EXT);
	while (write(fd, buf, EXT) > 0)
		;
	close(fd);

	s = 12345;
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	ck_assert_uint_eq(s, 12345); /* not written on failure */
	ck_assert_uint_eq(t->stats.io_errors, 1);
	ck_assert_uint_eq(tier_used_slots(t), 0);

	ck_assert_int_eq(unlink(filler), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_fill(buf, EXT, 0, 5);
	ck_assert_int_eq(tier_write(t, s, 0, buf, EXT), EXT);
	t_assert_slot_pattern(t, s, 5);
	t = tier_free(t);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
	(void)umount(t_dir);
	free(buf);
}
END_TEST

/*
 * Observed: removing the private directory behind the tier's back (the
 * slab has no name to remove) changes nothing until tier_free() -- the
 * open fd keeps the data -- and tier_free() copes with it being gone.
 */
START_TEST(test_tier_file_slab_unlinked_behind_back)
{
	char priv[4096];
	uint32_t a, b;

	ck_assert_int_eq(tier_slot_alloc(t, &a), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &b), 0);
	t_write_slot(t, a, 1);
	t_only_entry(t_dir, priv, sizeof(priv));
	t_rm_rf(priv);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
	t_assert_slot_pattern(t, a, 1);
	t_write_slot(t, b, 2);
	t_assert_slot_pattern(t, b, 2);
	tier_slot_free(t, a);
	ck_assert_int_eq(tier_slot_alloc(t, &a), 0);
	t_assert_slot_zero(t, a);
	ck_assert_int_eq(tier_sync(t), 0);
	t = tier_free(t);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
}
END_TEST

/*
 * Observed: after the slab is truncated behind the tier's back, a read
 * past the new end fails with -EIO (end of file inside a request) rather
 * than inventing zeros for lost data.  A write past it succeeds and
 * extends the file again; a slot below the re-extended end is then a
 * hole where data used to be, which the back end would read as zeros --
 * tier.c's checksums turn that into -EBADMSG (the caller's EIO and
 * "checksum mismatch" log line).  Nothing crashes.
 */
START_TEST(test_tier_file_slab_truncated_behind_back)
{
	unsigned char *buf = t_xmalloc(EXT);
	char slab[4096];
	uint32_t slots[NSLOTS];

	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(slots[i], i); /* a fresh tier counts up */
		t_write_slot(t, slots[i], i + 1);
	}
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(truncate(slab, 2 * (off_t)EXT + 100), 0);

	/* below the new end: intact */
	t_assert_slot_pattern(t, 0, 1);
	t_assert_slot_pattern(t, 1, 2);
	/* straddling and beyond the new end: the back end says EOF */
	ck_assert_int_eq(t->ops->read(t, 2, 0, buf, 4096), -EIO);
	ck_assert_int_eq(tier_read(t, 2, 0, buf, EXT), -EIO);
	ck_assert_int_eq(tier_read(t, 3, EXT - 1, buf, 1), -EIO);
	ck_assert_int_eq(tier_read(t, NSLOTS - 1, 0, buf, EXT), -EIO);
	ck_assert_uint_eq(t->stats.io_errors, 3);

	/* writing slot 3 extends the file; slot 2 is now mostly a hole */
	t_write_slot(t, 3, 7);
	t_assert_slot_pattern(t, 3, 7);
	ck_assert_int_eq(t->ops->read(t, 2, 0, buf, EXT), EXT);
	ck_assert_int_eq(t_check(buf, 100, 0, 3), -1);
	ck_assert_int_eq(t_nonzero(buf + 100, EXT - 100), -1);
	ck_assert_int_eq(tier_read(t, 2, 0, buf, EXT), -EBADMSG);

	/* and a truncation to zero: every read fails, no crash */
	ck_assert_int_eq(truncate(slab, 0), 0);
	ck_assert_int_eq(tier_read(t, 0, 0, buf, 1), -EIO);
	ck_assert_int_eq(tier_read(t, NSLOTS - 1, 0, buf, EXT), -EIO);
	t = tier_free(t);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
	free(buf);
}
END_TEST

/*
 * Issue 18: a write into part of a checksum block reads back only the
 * pieces it touches (tier.c, CSUM_PIECE), which it cannot verify on
 * their own.  Damage under such a write is never blessed: the block
 * stays EIO after writes that cover the damaged piece whole, partly, or
 * not at all, and only a write of the whole block makes it good again;
 * the other blocks of the slot are unaffected throughout.
 */
/*
 * Reserving ahead (tier_charge(), ops->reserve_ahead): an extent written
 * front to back in 4 KiB units reserves its space in growing steps --
 * after units 0 and 1 the slab holds 4 units, after unit 4 ten -- yet
 * never more than twice what the slot holds, and a lone unit (a small
 * file, a hole written first) reserves only itself.  Giving units back lowers the reserved prefix, so a write into
 * them reserves again.  The data reads back exact throughout.
 */
static off_t t_slab_bytes(const char *slab)
{
	struct stat st;

	ck_assert_int_eq(stat(slab, &st), 0);
	return (off_t)st.st_blocks * 512;
}

/* The slab holds @want bytes of data: st_blocks says so, or one block
 * more where the filesystem counts a block of its own (ext4's extent
 * tree, once the slab has more extents than its inode holds). */
#define t_assert_slab(slab, want)                                          \
	do {                                                               \
		off_t got_ = t_slab_bytes(slab), want_ = (want);           \
		ck_assert_msg(got_ == want_ || got_ == want_ + 4096,       \
			      "slab holds %lld bytes, want %lld",          \
			      (long long)got_, (long long)want_);          \
	} while (0)

static void t_put_unit(uint32_t slot, uint32_t u, unsigned char *buf)
{
	const size_t unit = 4096;

	t_fill(buf, unit, (uint64_t)u * unit, 7);
	ck_assert_int_eq(tier_charge(t, slot, (uint64_t)u * unit, unit, NULL),
			 0);
	ck_assert_int_eq(tier_write(t, slot, (uint64_t)u * unit, buf, unit),
			 (ssize_t)unit);
}

START_TEST(test_tier_file_reserve_ahead)
{
	const off_t unit = 4096;
	unsigned char *buf = t_xmalloc(EXT), *want = t_xmalloc(EXT);
	uint32_t s, s2, units = EXT / (uint32_t)unit;
	char slab[4096];
	uint64_t freed;

	ck_assert_uint_eq(tier_unit(t), (uint64_t)unit);
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	t_put_unit(s, 0, buf); /* a 4 KiB file: 4 KiB */
	t_assert_slab(slab, unit);
	t_put_unit(s, 1, buf); /* growing: ahead to twice what it holds */
	t_assert_slab(slab, 4 * unit);
	t_put_unit(s, 2, buf); /* inside the prefix: no reserve */
	t_put_unit(s, 3, buf);
	t_assert_slab(slab, 4 * unit);
	t_put_unit(s, 4, buf);
	t_assert_slab(slab, 10 * unit);
	for (uint32_t u = 5; u < units; u++) {
		t_put_unit(s, u, buf);
		ck_assert_int_le(t_slab_bytes(slab),
				 2 * (off_t)(u + 1) * unit + 4096);
	}
	t_assert_slab(slab, (off_t)EXT);
	t_fill(want, EXT, 0, 7);
	ck_assert_int_eq(tier_read(t, s, 0, buf, EXT), EXT);
	ck_assert_mem_eq(buf, want, EXT);

	/* a lone unit in the middle of another slot: just itself */
	ck_assert_int_eq(tier_slot_get(t, &s2), 0);
	t_put_unit(s2, 40, buf);
	t_assert_slab(slab, (off_t)EXT + unit);
	/* then its front: just that, and then ahead to twice what the
	 * slot holds (units 1..5) */
	t_put_unit(s2, 0, buf);
	t_assert_slab(slab, (off_t)EXT + 2 * unit);
	t_put_unit(s2, 1, buf);
	t_assert_slab(slab, (off_t)EXT + 7 * unit);

	/* units 8.. of the full slot given back: the prefix falls to 8,
	 * and unit 8 written again reserves 8..17 */
	ck_assert_int_eq(tier_punch(t, s, 8 * (uint64_t)unit,
				    EXT - 8 * (uint64_t)unit, &freed),
			 0);
	ck_assert_uint_eq(freed, EXT - 8 * (uint64_t)unit);
	t_assert_slab(slab, 8 * unit + 7 * unit);
	t_put_unit(s, 8, buf);
	t_assert_slab(slab, 18 * unit + 7 * unit);
	ck_assert_int_eq(tier_read(t, s, 0, buf, EXT), EXT);
	ck_assert_mem_eq(buf, want, 9 * (size_t)unit);
	for (size_t i = 9 * (size_t)unit; i < EXT; i++)
		ck_assert_uint_eq(buf[i], 0);

	/* a freed slot gives everything back, the ahead part too */
	tier_slot_free(t, s);
	tier_slot_free(t, s2);
	t_assert_slab(slab, 0);
	ck_assert_uint_eq(t->stats.io_errors, 0);
	free(buf);
	free(want);
}
END_TEST

/*
 * Bulk copies (tier_bulk_begin(), the migrator's) keep out of the slab's
 * page cache: a slot written inside one leaves none of its pages cached,
 * one written outside leaves them all, and the data is the same whichever
 * way it was written or is read -- a direct read sees a buffered write
 * not yet written back, a buffered read a direct write.  Residency is
 * what mincore() says of a mapping of the slab; where the slab's
 * filesystem is memory (tmpfs: its page cache is the data) or takes no
 * O_DIRECT, only the data is checked.
 */
static unsigned t_cached_pages(const char *slab, uint64_t off, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char vec[1024];
	unsigned n = 0;
	void *m;
	int fd = open(slab, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_le(len / (size_t)pg, sizeof(vec));
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
	ck_assert_ptr_ne(m, MAP_FAILED);
	ck_assert_int_eq(mincore(m, len, vec), 0);
	for (size_t i = 0; i < len / (size_t)pg; i++)
		n += vec[i] & 1;
	munmap(m, len);
	close(fd);
	return n;
}

static bool t_slab_has_direct_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	bool found = false;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)) && !found) {
		int fd = (int)strtol(de->d_name, NULL, 10);
		char link[4096], fdp[300];
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%s", de->d_name);
		len = readlink(fdp, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		found = strstr(link, "/tierfs-") && strstr(link, "(deleted)") &&
			(fcntl(fd, F_GETFL) & O_DIRECT);
	}
	closedir(d);
	return found;
}

START_TEST(test_tier_file_bulk_bypasses_page_cache)
{
	unsigned char *buf, *got;
	uint32_t slots[NSLOTS];
	const size_t pages = EXT / 4096;
	char slab[4096];
	struct statfs sf;
	bool check_cache;

	ck_assert_int_eq(posix_memalign((void **)&buf, 4096, EXT), 0);
	ck_assert_int_eq(posix_memalign((void **)&got, 4096, EXT), 0);
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(statfs(t_dir, &sf), 0);
	check_cache = sf.f_type != 0x01021994 /* TMPFS_MAGIC */ &&
		      t_slab_has_direct_fd();
	t_alloc_all(t, slots);

	/* inside a bulk copy: no page of the slot cached */
	t_fill(buf, EXT, 0, 21);
	ck_assert(!tier_bulk());
	tier_bulk_begin();
	ck_assert(tier_bulk());
	ck_assert_int_eq(tier_write(t, slots[0], 0, buf, EXT), EXT);
	tier_bulk_end();
	ck_assert(!tier_bulk());
	if (check_cache)
		ck_assert_uint_eq(t_cached_pages(slab, 0, EXT), 0);
	ck_assert_int_eq(tier_read(t, slots[0], 0, got, EXT), EXT);
	ck_assert_mem_eq(got, buf, EXT);

	/* outside: all of them; a direct read of it sees the data */
	t_fill(buf, EXT, 0, 22);
	ck_assert_int_eq(tier_write(t, slots[1], 0, buf, EXT), EXT);
	if (check_cache)
		ck_assert_uint_eq(t_cached_pages(slab, (uint64_t)slots[1] * EXT,
						 EXT),
				  pages);
	tier_bulk_begin();
	memset(got, 0, EXT);
	ck_assert_int_eq(tier_read(t, slots[1], 0, got, EXT), EXT);
	/* an unaligned buffer in a bulk copy: buffered, same data */
	ck_assert_int_eq(tier_read(t, slots[1], 4096, got + 1, 8192), 8192);
	tier_bulk_end();
	ck_assert_mem_eq(got + 1, buf + 4096, 8192);
	ck_assert_int_eq(tier_read(t, slots[1], 0, got, EXT), EXT);
	ck_assert_mem_eq(got, buf, EXT);
	ck_assert_uint_eq(t->stats.io_errors, 0);
	ck_assert_uint_eq(t->stats.csum_errors, 0);
	free(buf);
	free(got);
}
END_TEST

/*
 * tier_write_new(): whole pieces written into a slot that reads as zeros
 * update their blocks' checksums without reading the old pieces back,
 * and the sums are exact -- the blocks read back right, piece by piece
 * and whole -- and still catch damage elsewhere in the block.
 */
START_TEST(test_tier_file_write_new_exact_sums)
{
	size_t bs = (size_t)1 << t->csum_shift;
	unsigned char *buf = t_xmalloc(EXT), bad = 0x77;
	char slab[4096];
	uint32_t s;
	int fd;

	ck_assert_uint_eq(bs, 65536);
	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	ck_assert_int_eq(tier_charge(t, s, 0, EXT, NULL), 0);
	/* the fault hook counts back end reads and writes: armed far out,
	 * it only counts */
	faulty_tier_arm(t, 1000, EIO);
	/* pieces 1 and 3 of block 0, and pieces 0..3 of block 2 */
	t_fill(buf, 4096, 4096, 21);
	ck_assert_int_eq(tier_write_new(t, s, 4096, buf, 4096), 4096);
	t_fill(buf, 4096, 3 * 4096, 21);
	ck_assert_int_eq(tier_write_new(t, s, 3 * 4096, buf, 4096), 4096);
	t_fill(buf, 16384, 2 * bs, 21);
	ck_assert_int_eq(tier_write_new(t, s, 2 * bs, buf, 16384), 16384);
	/* three back end writes and not one read */
	ck_assert_int_eq(t->fault_countdown, 1000 - 3);
	faulty_tier_disarm(t);
	ck_assert_int_eq(tier_read(t, s, 0, buf, EXT), (ssize_t)EXT);
	ck_assert_int_eq(t_nonzero(buf, 4096), -1);
	ck_assert_int_eq(t_check(buf + 4096, 4096, 4096, 21), -1);
	ck_assert_int_eq(t_nonzero(buf + 8192, 4096), -1);
	ck_assert_int_eq(t_check(buf + 3 * 4096, 4096, 3 * 4096, 21), -1);
	ck_assert_int_eq(t_nonzero(buf + 4 * 4096, 2 * bs - 4 * 4096), -1);
	ck_assert_int_eq(t_check(buf + 2 * bs, 16384, 2 * bs, 21), -1);
	ck_assert_int_eq(t_nonzero(buf + 2 * bs + 16384, EXT - 2 * bs - 16384),
			 -1);
	/* a byte of block 2 changed on the medium, in a piece never
	 * written: the block's sum catches it */
	t_slab_path(slab, sizeof(slab));
	fd = open(slab, O_RDWR);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, &bad, 1,
				(off_t)((uint64_t)s * EXT + 2 * bs + 40000)),
			 1);
	ck_assert_int_eq(close(fd), 0);
	ck_assert_int_eq(tier_read(t, s, 2 * bs, buf, 4096), -EBADMSG);
	ck_assert_int_eq(tier_read(t, s, 0, buf, bs), (ssize_t)bs);
	tier_slot_free(t, s);
	free(buf);
}
END_TEST

START_TEST(test_tier_file_partial_write_never_blesses_damage)
{
	size_t bs = (size_t)1 << t->csum_shift;
	unsigned char *buf = t_xmalloc(EXT), bad = 0;
	uint32_t slots[NSLOTS];
	char slab[4096];
	int fd;

	ck_assert_uint_eq(bs, 65536);
	t_alloc_all(t, slots);
	t_write_slot(t, 0, 3);
	t_slab_path(slab, sizeof(slab));
	fd = open(slab, O_RDWR);
	ck_assert_int_ge(fd, 0);
	/* one byte of piece 1 of block 0 changes on the medium */
	ck_assert_int_eq(pread(fd, &bad, 1, 5000), 1);
	bad ^= 0x5a;
	ck_assert_int_eq(pwrite(fd, &bad, 1, 5000), 1);
	ck_assert_int_eq(tier_read(t, 0, 0, buf, 4096), -EBADMSG);
	/* the damaged piece overwritten whole: still EIO */
	t_fill(buf, 4096, 4096, 9);
	ck_assert_int_eq(tier_write(t, 0, 4096, buf, 4096), 4096);
	ck_assert_int_eq(tier_read(t, 0, 0, buf, 4096), -EBADMSG);
	/* a partial write elsewhere in the block, and a misaligned one
	 * across two pieces: still EIO */
	t_fill(buf, 100, 20000, 9);
	ck_assert_int_eq(tier_write(t, 0, 20000, buf, 100), 100);
	t_fill(buf, 5000, 30000, 9);
	ck_assert_int_eq(tier_write(t, 0, 30000, buf, 5000), 5000);
	ck_assert_int_eq(tier_read(t, 0, 60000, buf, 10), -EBADMSG);
	/* the next block was never touched by any of it */
	ck_assert_int_eq(tier_read(t, 0, bs, buf, bs), (ssize_t)bs);
	ck_assert_int_eq(t_check(buf, bs, bs, 3), -1);
	/* partial writes into that good block keep it good and exact */
	t_fill(buf, 4096, bs + 4096, 11);
	ck_assert_int_eq(tier_write(t, 0, bs + 4096, buf, 4096), 4096);
	t_fill(buf, 777, bs + 9000, 11);
	ck_assert_int_eq(tier_write(t, 0, bs + 9000, buf, 777), 777);
	ck_assert_int_eq(tier_read(t, 0, bs, buf, bs), (ssize_t)bs);
	ck_assert_int_eq(t_check(buf, 4096, bs, 3), -1);
	ck_assert_int_eq(t_check(buf + 4096, 4096, bs + 4096, 11), -1);
	ck_assert_int_eq(t_check(buf + 8192, 9000 - 8192, bs + 8192, 3), -1);
	ck_assert_int_eq(t_check(buf + 9000, 777, bs + 9000, 11), -1);
	ck_assert_int_eq(t_check(buf + 9777, bs - 9777, bs + 9777, 3), -1);
	/* a whole-block write heals block 0 */
	t_fill(buf, bs, 0, 13);
	ck_assert_int_eq(tier_write(t, 0, 0, buf, bs), (ssize_t)bs);
	memset(buf, 0, bs);
	ck_assert_int_eq(tier_read(t, 0, 0, buf, bs), (ssize_t)bs);
	ck_assert_int_eq(t_check(buf, bs, 0, 13), -1);
	close(fd);
	free(buf);
}
END_TEST


/* ------------------------------------------------------------------ */
/* crash leftovers, shared free space, tier paths (issue 11) */

/* Make @dir/@name (a directory) holding @file with @len bytes of data. */
static void t_make_leftover(const char *name, const char *file, size_t len)
{
	char path[4096];
	unsigned char *buf = t_xmalloc(len ? len : 1);
	int fd;

	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", t_dir, name),
			 (int)sizeof(path));
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s/%s", t_dir, name,
				  file),
			 (int)sizeof(path));
	fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	memset(buf, 7, len ? len : 1);
	if (len)
		ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
	free(buf);
}

/*
 * A daemon killed with SIGKILL leaves no data: its slab had no name, so
 * the kernel freed it; only its private directory with the empty lock
 * file stays, and the next tier opened in that path removes it, and an
 * older tierfs's named slab too -- but not a live tier's directory (its
 * lock is held) nor a directory with anything else in it.
 */
START_TEST(test_tier_file_killed_leaves_no_data)
{
	char priv[4096], path[4096];
	int pfd[2], status, live_fd;
	struct stat st;
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		unsigned char *buf = malloc(EXT);
		struct tier *ct = NULL;
		uint32_t s;

		close(pfd[0]);
		if (!buf || tier_create("dead", TIER_FILE, t_dir,
					(uint64_t)NSLOTS * EXT, EXT, &ct) < 0)
			_exit(1);
		memset(buf, 0x5a, EXT);
		for (uint32_t i = 0; i < NSLOTS; i++)
			if (tier_slot_alloc(ct, &s) < 0 ||
			    tier_write(ct, s, 0, buf, EXT) != EXT)
				_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));

	/* what the crash left: a directory with an empty lock file */
	t_only_entry(t_dir, priv, sizeof(priv));
	t_only_entry(priv, path, sizeof(path));
	ck_assert_str_eq(strrchr(path, '/'), "/lock");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_int_eq(st.st_blocks, 0);

	/* an older tierfs's leftover, a live tier's, and a stranger's */
	t_make_leftover("tierfs-old-ABCDEF", "slab", 1u << 20);
	t_make_leftover("tierfs-live-ABCDEF", "lock", 0);
	t_make_leftover("tierfs-mine-ABCDEF", "notes", 10);
	ck_assert_int_lt(snprintf(path, sizeof(path),
				  "%s/tierfs-live-ABCDEF/lock", t_dir),
			 (int)sizeof(path));
	live_fd = open(path, O_RDWR);
	ck_assert_int_ge(live_fd, 0);
	ck_assert_int_eq(flock(live_fd, LOCK_EX | LOCK_NB), 0);

	ck_assert_int_eq(tier_create("new", TIER_FILE, t_dir,
				     (uint64_t)NSLOTS * EXT, EXT, &t),
			 0);
	ck_assert_uint_eq(t->swept_dirs, 2);
	ck_assert_uint_ge(t->swept_bytes, 1u << 20);
	ck_assert_int_eq(access(priv, F_OK), -1);
	/* the new tier's, the live one and the stranger's */
	ck_assert_int_eq(t_count_entries(t_dir), 3);
	close(live_fd);
	t = tier_free(t);
	ck_assert_int_eq(t_count_entries(t_dir), 2);
}
END_TEST

/*
 * A file tier's free slots are capped by what the filesystem under it
 * has free (statvfs, cached for TIER_STATVFS_MS); once a reserve finds
 * the medium full the tier is full -- no more reserve attempts, no more
 * io_errors -- until space comes back.
 */
START_TEST(test_tier_file_free_capped_by_statvfs)
{
	unsigned char *buf = t_xmalloc(EXT);
	char filler[4096];
	uint32_t s;
	ssize_t w;
	int fd;

	t = tier_free(t);
	if (!t_private_mounts() ||
	    mount("tmpfs", t_dir, "tmpfs", 0, "size=4m,mode=0755") < 0) {
		tap_skip("cannot mount a tmpfs (needs CAP_SYS_ADMIN in a "
			 "private mount namespace and CK_FORK not 'no')");
		free(buf);
		return;
	}
	ck_assert_int_eq(
		tier_create("cap", TIER_FILE, t_dir, 8 * EXT, EXT, &t), 0);
	ck_assert(t->dev_shared);
	ck_assert_uint_eq(tier_free_slots(t), 8);
	ck_assert_uint_eq(tier_free_bytes(&t, 1, 1), 8 * EXT);

	/* someone else leaves 2 extents free */
	ck_assert_int_lt(snprintf(filler, sizeof(filler), "%s/filler", t_dir),
			 (int)sizeof(filler));
	fd = open(filler, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	memset(buf, 1, EXT);
	for (int i = 0; i < 14; i++)
		ck_assert_int_eq(write(fd, buf, EXT), EXT);
	usleep((TIER_STATVFS_MS + 100) * 1000);
	ck_assert_uint_eq(tier_free_slots(t), 2);
	ck_assert_uint_eq(tier_free_bytes(&t, 1, 1), 2 * EXT);

	/* and then takes the rest */
	do {
		w = write(fd, buf, 4096);
	} while (w > 0);
	close(fd);
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	ck_assert(tier_medium_full(t));
	ck_assert_uint_eq(t->stats.io_errors, 1);
	ck_assert_uint_eq(tier_free_slots(t), 0);
	ck_assert_uint_eq(tier_free_bytes(&t, 1, 1), 0);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	ck_assert_uint_eq(t->stats.io_errors, 1); /* no more attempts */

	/* space comes back: the next allocation sees it at once */
	ck_assert_int_eq(unlink(filler), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert(!tier_medium_full(t));
	ck_assert_uint_eq(tier_free_slots(t), 7);
	t_write_slot(t, s, 3);
	t_assert_slot_pattern(t, s, 3);
	t = tier_free(t);
	(void)umount(t_dir);
	free(buf);
}
END_TEST

/*
 * Two file tiers on one filesystem share its free space: each alone
 * fits, together they do not, which tier_check_shared_space() says in
 * one line; tier_free_bytes() counts the free space once.
 */
START_TEST(test_tier_file_shared_filesystem)
{
	struct tier *two[2] = { NULL, NULL };
	char why[512] = "";

	t = tier_free(t);
	if (!t_private_mounts() ||
	    mount("tmpfs", t_dir, "tmpfs", 0, "size=4m,mode=0755") < 0) {
		tap_skip("cannot mount a tmpfs (needs CAP_SYS_ADMIN in a "
			 "private mount namespace and CK_FORK not 'no')");
		return;
	}
	ck_assert_int_eq(tier_create("a", TIER_FILE, t_dir, 3u << 20, EXT,
				     &two[0]),
			 0);
	ck_assert_int_eq(tier_create("b", TIER_FILE, t_dir, 3u << 20, EXT,
				     &two[1]),
			 0);
	ck_assert_int_eq(tier_check_shared_space(two, 2, why, sizeof(why)),
			 -ENOSPC);
	ck_assert_msg(strstr(why, "'a', 'b'") && strstr(why, "6.0M") &&
			      strstr(why, "4.0M"),
		      "message: '%s'", why);
	ck_assert_uint_eq(tier_free_slots(two[0]), 12);
	ck_assert_uint_eq(tier_free_slots(two[1]), 12);
	ck_assert_uint_eq(tier_free_bytes(two, 2, 3), 4u << 20);
	ck_assert_uint_eq(tier_free_bytes(two, 2, 2), 3u << 20);
	two[1] = tier_free(two[1]);
	ck_assert_int_eq(tier_create("b", TIER_FILE, t_dir, 1u << 20, EXT,
				     &two[1]),
			 0);
	ck_assert_int_eq(tier_check_shared_space(two, 2, why, sizeof(why)), 0);
	two[0] = tier_free(two[0]);
	two[1] = tier_free(two[1]);
	(void)umount(t_dir);
}
END_TEST

/* @out = t_dir + @suffix */
static void t_sub(char *out, size_t size, const char *suffix)
{
	ck_assert_int_lt(snprintf(out, size, "%s%s", t_dir, suffix),
			 (int)size);
}

/* tier_path_within(): at or under a directory, by inode. */
START_TEST(test_tier_path_within)
{
	char m[4096], p[4096];

	ck_assert_int_lt(snprintf(m, sizeof(m), "%s/m", t_dir), (int)sizeof(m));
	ck_assert_int_eq(mkdir(m, 0755), 0);
	t_sub(p, sizeof(p), "/m/sub");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	t_sub(p, sizeof(p), "/other");
	ck_assert_int_eq(mkdir(p, 0755), 0);
	t_sub(p, sizeof(p), "/ln");
	ck_assert_int_eq(symlink("m/sub", p), 0);

	ck_assert(tier_path_within(m, m));
	t_sub(p, sizeof(p), "/m/");
	ck_assert(tier_path_within(p, m));
	t_sub(p, sizeof(p), "/m/sub");
	ck_assert(tier_path_within(p, m));
	t_sub(p, sizeof(p), "/m/missing/deeper");
	ck_assert(tier_path_within(p, m));
	t_sub(p, sizeof(p), "/ln"); /* a symlink into it */
	ck_assert(tier_path_within(p, m));
	t_sub(p, sizeof(p), "/m/../other");
	ck_assert(!tier_path_within(p, m));
	t_sub(p, sizeof(p), "/other");
	ck_assert(!tier_path_within(p, m));
	t_sub(p, sizeof(p), "/mx");
	ck_assert(!tier_path_within(p, m));
	ck_assert(!tier_path_within(t_dir, m));
	ck_assert(!tier_path_within("/", m));
	ck_assert(tier_path_within(m, "/"));
	t_sub(p, sizeof(p), "/nonexistent");
	ck_assert(!tier_path_within(m, p));
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *tier_file_suite(void)
{
	Suite *s = suite_create("tier_file");
	TCase *tc;

	tc = tcase_create("open");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_dir, teardown_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tier_file_open_makes_private_slab);
	tcase_add_test(tc, test_tier_file_open_modes_ignore_umask);
	tcase_add_test(tc, test_tier_file_open_two_tiers_one_dir);
	tcase_add_test(tc, test_tier_file_open_symlink_to_dir);
	tcase_add_loop_test(tc, test_tier_file_open_bad_path, 0,
			    sizeof(bad_path_cases) / sizeof(bad_path_cases[0]));
	tcase_add_test(tc, test_tier_file_open_null_path);
	tcase_add_test(tc, test_tier_file_open_unwritable);
	tcase_add_test(tc, test_tier_file_open_larger_than_free_space);
	tcase_add_test(tc, test_tier_file_open_free_space_on_tmpfs);
	tcase_add_test(tc, test_tier_file_free_after_backing_dir_removed);
	tcase_add_test(tc, test_tier_file_killed_leaves_no_data);
	tcase_add_test(tc, test_tier_path_within);
	suite_add_tcase(s, tc);

	tc = tcase_create("data");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tier_file_fresh_slots_read_zeros);
	tcase_add_loop_test(tc, test_tier_file_unaligned_write_read, 0,
			    sizeof(range_cases) / sizeof(range_cases[0]));
	tcase_add_test(tc, test_tier_file_random_io_matches_model);
	tcase_add_test(tc,
		       test_tier_file_freed_slot_reads_zeros_and_frees_space);
	tcase_add_test(tc, test_tier_file_alloc_until_enospc);
	tcase_add_test(tc, test_tier_file_free_run);
	tcase_add_test(tc, test_tier_file_zero_range);
	tcase_add_test(tc, test_tier_file_sync_fallback);
	tcase_add_test(tc, test_tier_file_sync);
	suite_add_tcase(s, tc);

	tc = tcase_create("large");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_dir, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_tier_file_large_requests_split, 0,
			    sizeof(big_extents) / sizeof(big_extents[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tier_file_concurrent_writers);
	tcase_add_test(tc, test_tier_file_ring_thread_exit);
	tcase_add_test(tc, test_tier_file_fork_gets_own_ring);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_tier_file_fault_nth_call_fails, 1, 7);
	tcase_add_test(tc, test_tier_file_fault_failed_write_keeps_data);
	tcase_add_test(tc, test_tier_file_fault_reserve);
	tcase_add_test(tc, test_tier_file_fault_discard);
	tcase_add_test(tc, test_tier_file_fault_sync);
	tcase_add_test(tc, test_tier_file_kernel_error_passed_through);
	tcase_add_test(tc, test_tier_file_filesystem_full_gives_enospc);
	tcase_add_test(tc, test_tier_file_slab_unlinked_behind_back);
	tcase_add_test(tc, test_tier_file_slab_truncated_behind_back);
	tcase_add_test(tc, test_tier_file_reserve_ahead);
	tcase_add_test(tc, test_tier_file_bulk_bypasses_page_cache);
	tcase_add_test(tc, test_tier_file_partial_write_never_blesses_damage);
	tcase_add_test(tc, test_tier_file_write_new_exact_sums);
	tcase_add_test(tc, test_tier_file_free_capped_by_statvfs);
	tcase_add_test(tc, test_tier_file_shared_filesystem);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return tap_run(tier_file_suite());
}
