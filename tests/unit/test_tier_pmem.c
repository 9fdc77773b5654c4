// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tier_pmem.c -- Check suite for the PMem tier (tiers/tier_pmem.c)
 * on an ordinary file in a temporary directory: path checks at open, the
 * private directory and slab file and their removal, the space reserved
 * at open, data at unaligned offsets and across many slots, zeroed and
 * discarded slots, writers on several threads, injected faults, and the
 * SIGBUS guard (a slab truncated behind the tier's back fails calls with
 * -EIO; a SIGBUS that is not the tier's still reaches its old handler).
 *
 * Both write paths: libpmem says "not pmem" for a file in /tmp, so the
 * tests run the memcpy + msync path, and the "forced" case sets
 * PMEM_IS_PMEM_FORCE=1 before libpmem first looks at it (in the forked
 * test process) and runs the pmem_memcpy_nodrain + pmem_drain path.  A
 * whole run with PMEM_IS_PMEM_FORCE=1 in the environment runs every
 * test on the pmem path.
 *
 * Each test gets a fresh directory (checked fixture) inside a per-case
 * directory that the unchecked fixture removes in the parent process.
 * Tests that mount a tmpfs do so in a private mount namespace of the
 * forked test process and are skipped (tap_skip(): a TAP "# SKIP"), when that is
 * not allowed or CK_FORK=no.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libpmem.h>
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
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tier.h"
#include "tier_ops.h"
#include "faulty_tier.h"
#include "tap.h"
#include "banned.h"

#define EXT (256u * 1024)
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

	n = snprintf(t_base, sizeof(t_base), "%s/test_tier_pmem.XXXXXX",
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
	ck_assert_int_eq(tier_create("pmem", TIER_PMEM, t_dir,
				     (uint64_t)NSLOTS * EXT, EXT, &t),
			 0);
	ck_assert_ptr_nonnull(t);
}

static bool t_forking(void)
{
	const char *f = getenv("CK_FORK");

	return !(f && !strcmp(f, "no"));
}

/* A private mount namespace for this (forked) test process. */
static bool t_private_mounts(void)
{
	if (!t_forking())
		return false;
	if (unshare(CLONE_NEWNS) < 0)
		return false;
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
}

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
 * names a file in a private directory of t_dir and ends in "(deleted)".
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
		ck_assert_int_lt(snprintf(out, size, "%s", fdp), (int)size);
		n++;
	}
	closedir(d);
	ck_assert_msg(n == 1, "%d unlinked slab files open in %s, want 1", n,
		      t_dir);
}

static unsigned char t_pat(uint64_t i, unsigned seed)
{
	return (unsigned char)((i * 131 + seed * 7 + (i >> 12)) % 251 + 1);
}

static void t_fill(unsigned char *buf, size_t len, uint64_t base, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = t_pat(base + i, seed);
}

static long t_check(const unsigned char *buf, size_t len, uint64_t base,
		    unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != t_pat(base + i, seed))
			return (long)i;
	return -1;
}

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

START_TEST(test_tier_pmem_open_makes_private_slab)
{
	char priv[4096], slab[4096];
	struct stat st;
	const char *base;

	ck_assert_int_eq(tier_create("pm0", TIER_PMEM, t_dir,
				     (uint64_t)NSLOTS * EXT + 100, EXT, &t),
			 0);
	ck_assert_uint_eq(t->nslots, NSLOTS);
	ck_assert_ptr_nonnull(t->priv);
	ck_assert_str_eq(tier_pmem_ops.kind_name, "pmem");
	ck_assert_uint_eq(tier_pmem_ops.version, TIER_OPS_VERSION);

	t_only_entry(t_dir, priv, sizeof(priv));
	base = strrchr(priv, '/') + 1;
	ck_assert_msg(!strncmp(base, "tierfs-pm0-", 11),
		      "private dir '%s' not named tierfs-NAME-XXXXXX", base);
	ck_assert_int_eq(lstat(priv, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_uint_eq(st.st_uid, geteuid());

	/* the directory holds only the (empty) lock file ... */
	t_only_entry(priv, slab, sizeof(slab));
	ck_assert_str_eq(strrchr(slab, '/'), "/lock");
	ck_assert_int_eq(lstat(slab, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	/* ... and the slab has no name: the kernel frees it with us */
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_nlink, 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, (off_t)NSLOTS * EXT);
	/* reserved at open (ext4, xfs, tmpfs all have fallocate) */
	ck_assert_int_ge(st.st_blocks * 512, (off_t)NSLOTS * EXT);

	t = tier_free(t);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
}
END_TEST

START_TEST(test_tier_pmem_open_modes_ignore_umask)
{
	char priv[4096], slab[4096];
	struct stat st;

	(void)umask(0777);
	ck_assert_int_eq(tier_create("u", TIER_PMEM, t_dir, EXT, EXT, &t), 0);
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

static const struct bad_path_case {
	const char *suffix; /* appended to t_dir; NULL: use @abs */
	const char *abs;
	int want;
} bad_path_cases[] = {
	{ "/missing", NULL, -ENOENT },	{ "/dangling", NULL, -ENOENT },
	{ "/file", NULL, -ENOTDIR },	{ "/file/sub", NULL, -ENOTDIR },
	{ "/devnull", NULL, -ENOTDIR }, /* no devdax support yet */
	{ NULL, "", -EINVAL },		{ NULL, "/proc", -EACCES },
};

START_TEST(test_tier_pmem_open_bad_path)
{
	const struct bad_path_case *c = &bad_path_cases[_i];
	struct tier *sentinel = (struct tier *)&bad_path_cases;
	struct tier *nt = sentinel;
	char path[4096], p2[4096];
	int fd, r;

	ck_assert_int_lt(snprintf(p2, sizeof(p2), "%s/file", t_dir),
			 (int)sizeof(p2));
	fd = open(p2, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_lt(snprintf(p2, sizeof(p2), "%s/dangling", t_dir),
			 (int)sizeof(p2));
	ck_assert_int_eq(symlink("nowhere", p2), 0);
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
	r = tier_create("bad", TIER_PMEM, path, 4 * EXT, EXT, &nt);
	ck_assert_msg(r == c->want, "'%s': got %d (%s), want %d (%s)", path, r,
		      strerror(-r), c->want, strerror(-c->want));
	ck_assert_msg(nt == sentinel, "'%s': *ret_tier written on failure",
		      path);
	ck_assert_int_eq(t_count_entries(t_dir), 3);
}
END_TEST

START_TEST(test_tier_pmem_open_unwritable)
{
	char sub[4096];
	int r;

	ck_assert_int_lt(snprintf(sub, sizeof(sub), "%s/ro", t_dir),
			 (int)sizeof(sub));
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	if (geteuid() != 0) {
		ck_assert_int_eq(chmod(sub, 0555), 0);
		r = tier_create("ro", TIER_PMEM, sub, EXT, EXT, &t);
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
	r = tier_create("ro", TIER_PMEM, sub, EXT, EXT, &t);
	ck_assert_msg(r == -EROFS || r == -EACCES, "got %d (%s)", r,
		      strerror(-r));
	ck_assert_ptr_null(t);
	(void)umount(sub);
}
END_TEST

START_TEST(test_tier_pmem_open_larger_than_free_space)
{
	uint32_t ext = 1u << 20;
	uint64_t avail = t_avail(t_dir), size;

	while ((avail / ext) >= UINT32_MAX / 2)
		ext <<= 1;
	size = (avail / ext + 64) * (uint64_t)ext;
	ck_assert_int_eq(tier_create("big", TIER_PMEM, t_dir, size, ext, &t),
			 -ENOSPC);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
}
END_TEST

/*
 * On a small tmpfs: the size check is exact, and the space reserved at
 * open stays the tier's when others fill the filesystem -- writes into
 * every slot, and into slots freed and reused, still succeed.
 */
START_TEST(test_tier_pmem_reserved_space_survives_full_fs)
{
	unsigned char *buf = t_xmalloc(EXT);
	uint32_t slots[8];
	char filler[4096];
	struct tier *t2 = NULL;
	int fd;

	if (!t_private_mounts() ||
	    mount("tmpfs", t_dir, "tmpfs", 0, "size=4m,mode=0755") < 0) {
		tap_skip("cannot mount a tmpfs (needs CAP_SYS_ADMIN in a "
		       "private mount namespace and CK_FORK not 'no')");
		free(buf);
		return;
	}
	ck_assert_uint_eq(t_avail(t_dir), 4u << 20);
	ck_assert_int_eq(tier_create("x", TIER_PMEM, t_dir, (4u << 20) + 4096,
				     4096, &t),
			 -ENOSPC);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
	ck_assert_int_eq(tier_create("x", TIER_PMEM, t_dir, 8 * EXT, EXT, &t),
			 0);
	/* half the tmpfs is the tier's now: 3 MiB more do not fit */
	ck_assert_int_eq(tier_create("y", TIER_PMEM, t_dir, 12 * EXT, EXT, &t2),
			 -ENOSPC);
	ck_assert_ptr_null(t2);

	ck_assert_int_lt(snprintf(filler, sizeof(filler), "%s/filler", t_dir),
			 (int)sizeof(filler));
	fd = open(filler, O_CREAT | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	memset(buf, 1, EXT);
	while (write(fd, buf, EXT) > 0)
		;
	close(fd);
	ck_assert_uint_lt(t_avail(t_dir), EXT);

	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < 8; i++)
		t_write_slot(t, slots[i], i + 1);
	for (uint32_t i = 0; i < 8; i++) {
		tier_slot_free(t, slots[i]);
		ck_assert_int_eq(tier_slot_alloc(t, &slots[i]), 0);
		t_assert_slot_zero(t, slots[i]);
		t_write_slot(t, slots[i], i + 10);
	}
	for (uint32_t i = 0; i < 8; i++)
		t_assert_slot_pattern(t, slots[i], i + 10);
	ck_assert_uint_eq(t->stats.io_errors, 0);
	t = tier_free(t);
	(void)unlink(filler);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
	(void)umount(t_dir);
	free(buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data */

START_TEST(test_tier_pmem_fresh_slots_read_zeros)
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

START_TEST(test_tier_pmem_unaligned_write_read)
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

/* Random unaligned writes and read-backs against an in-memory model. */
static void t_random_io(void)
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
	ck_assert_int_eq(tier_sync(t), 0);
	free(buf);
	free(model);
}

START_TEST(test_tier_pmem_random_io_matches_model)
{
	t_random_io();
}
END_TEST

START_TEST(test_tier_pmem_freed_slot_reads_zeros)
{
	uint32_t slots[NSLOTS], s;
	char slab[4096];
	struct stat st;

	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_write_slot(t, slots[i], i + 1);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_pattern(t, slots[i], i + 1);

	tier_slot_free(t, slots[3]);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_uint_eq(s, slots[3]);
	t_assert_slot_zero(t, s);
	t_assert_slot_pattern(t, slots[2], 3);
	t_assert_slot_pattern(t, slots[4], 5);

	for (uint32_t i = 0; i < NSLOTS; i++)
		tier_slot_free(t, slots[i]);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	/* discarding is no write (punched), and the space stays reserved */
	ck_assert_uint_eq(t->stats.write_ops, NSLOTS);
	ck_assert_uint_eq(t->stats.io_errors, 0);
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)NSLOTS * EXT);
	ck_assert_int_ge(st.st_blocks * 512, (off_t)NSLOTS * EXT);

	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_zero(t, slots[i]);
}
END_TEST

START_TEST(test_tier_pmem_alloc_until_enospc)
{
	uint32_t slots[NSLOTS], extra = 4242;

	for (int round = 0; round < 3; round++) {
		t_alloc_all(t, slots);
		ck_assert_int_eq(tier_slot_alloc(t, &extra), -ENOSPC);
		ck_assert_uint_eq(extra, 4242);
		for (uint32_t i = 0; i < NSLOTS; i++) {
			tier_slot_free(t, slots[i]);
			ck_assert_uint_eq(tier_free_slots(t), i + 1);
		}
	}
}
END_TEST

START_TEST(test_tier_pmem_zero_range)
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

/* Data written through the mapping is in the file (and so shared). */
START_TEST(test_tier_pmem_data_lands_in_file)
{
	unsigned char *buf = t_xmalloc(EXT);
	char slab[4096];
	uint32_t s;
	int fd;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0); /* slot 1 */
	t_write_slot(t, s, 3);
	ck_assert_int_eq(tier_sync(t), 0);
	t_slab_path(slab, sizeof(slab));
	fd = open(slab, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, buf, EXT, (off_t)s * EXT), EXT);
	ck_assert_int_eq(t_check(buf, EXT, 0, 3), -1);
	close(fd);
	free(buf);
}
END_TEST

/*
 * The pmem path (pmem_memcpy_nodrain + pmem_drain, pmem_memset_persist):
 * PMEM_IS_PMEM_FORCE=1 is read on libpmem's first pmem_is_pmem() call,
 * which in fork mode has not happened yet in this test process.
 */
START_TEST(test_tier_pmem_forced_pmem_path)
{
	uint32_t slots[NSLOTS];
	char probe[64];

	ck_assert_int_eq(setenv("PMEM_IS_PMEM_FORCE", "1", 1), 0);
	if (pmem_is_pmem(probe, sizeof(probe)) != 1) {
		tap_skip("libpmem looked at PMEM_IS_PMEM_FORCE already "
		       "(CK_FORK=no?)");
		return;
	}
	ck_assert_int_eq(tier_create("forced", TIER_PMEM, t_dir,
				     (uint64_t)NSLOTS * EXT, EXT, &t),
			 0);
	t_random_io(); /* leaves every slot allocated, 0..NSLOTS-1 */
	for (uint32_t i = 0; i < NSLOTS; i++)
		tier_slot_free(t, i);
	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_zero(t, slots[i]);
	ck_assert_int_eq(tier_zero(t, slots[0], 1, EXT - 2), 0);
	ck_assert_int_eq(tier_sync(t), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads */

#define MT_THREADS 8
#define MT_SLOTS_EACH 4
#define MT_ROUNDS 40

struct mt_arg {
	int id;
	uint32_t slots[MT_SLOTS_EACH];
	const char *err;
};

static void *t_mt_writer(void *p)
{
	struct mt_arg *a = p;
	unsigned char *buf = malloc(EXT), *back = malloc(EXT);

	if (!buf || !back) {
		a->err = "out of memory";
		goto out;
	}
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

START_TEST(test_tier_pmem_concurrent_writers)
{
	pthread_t th[MT_THREADS];
	struct mt_arg args[MT_THREADS];
	uint32_t s;

	t = tier_free(t);
	ck_assert_int_eq(tier_create("mt", TIER_PMEM, t_dir,
				     (uint64_t)MT_THREADS * MT_SLOTS_EACH * EXT,
				     EXT, &t),
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
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
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

/* ------------------------------------------------------------------ */
/* errors */

/*
 * For N in 1..6, of 6 alternating writes and reads only call N fails.
 * Whole-slot calls: each is exactly one back end call (a partial write
 * would also read back a checksum block in tier.c).
 */
START_TEST(test_tier_pmem_fault_nth_call_fails)
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

START_TEST(test_tier_pmem_fault_failed_write_keeps_data)
{
	unsigned char *buf = t_xmalloc(EXT);
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(t, s, 1);
	t_fill(buf, EXT, 0, 2);
	faulty_tier_arm(t, 1, EIO);
	ck_assert_int_eq(tier_write(t, s, 0, buf, EXT), -EIO);
	t_assert_slot_pattern(t, s, 1);
	ck_assert_uint_eq(t->stats.io_errors, 1);
	free(buf);
}
END_TEST

/*
 * Observed: removing the private directory (the slab has no name to
 * remove) changes nothing until tier_free().
 */
START_TEST(test_tier_pmem_slab_unlinked_behind_back)
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
	t = tier_free(t);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
}
END_TEST

/*
 * Observed: after the slab is truncated behind the tier's back, loads
 * and stores past the new end raise SIGBUS, which the guard turns into
 * -EIO for that call; below the end data is intact.  In the second
 * round the calls come from a thread with every signal blocked, as
 * worker threads of libfuse 2 (and some daemons) are.
 */
static void *t_truncated_io(void *arg)
{
	unsigned char buf[4096];
	const char *err = NULL;

	if (arg) {
		sigset_t all;

		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, NULL);
	}
	if (tier_read(t, 0, 0, buf, 100) != 100 || t_check(buf, 100, 0, 1) >= 0)
		err = "slot 0 changed";
	else if (tier_read(t, 1, 0, buf, sizeof(buf)) != -EIO)
		err = "read past the end did not fail with -EIO";
	else if (tier_write(t, 2, 10, buf, sizeof(buf)) != -EIO)
		err = "write past the end did not fail with -EIO";
	else if (tier_read(t, NSLOTS - 1, EXT - 1, buf, 1) != -EIO)
		err = "read at the very end did not fail with -EIO";
	return (void *)err;
}

static const bool truncate_blocked[] = { false, true };

START_TEST(test_tier_pmem_slab_truncated_behind_back)
{
	char slab[4096];
	uint32_t slots[NSLOTS];
	pthread_t th;
	void *err;

	t_alloc_all(t, slots);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(slots[i], i);
		t_write_slot(t, i, i + 1);
	}
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(truncate(slab, (off_t)EXT), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, t_truncated_io,
					truncate_blocked[_i] ? t : NULL),
			 0);
	ck_assert_int_eq(pthread_join(th, &err), 0);
	ck_assert_msg(!err, "%s", (const char *)err);
	ck_assert_uint_eq(t->stats.io_errors, 3);

	/* freeing a slot past the end works (punching there is a no-op) */
	tier_slot_free(t, 2);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 1);
	t = tier_free(t);
	ck_assert_int_eq(t_count_entries(t_dir), 0);
}
END_TEST

/*
 * A SIGBUS outside a tier call is not the tier's: with the guard
 * installed it still kills the process as it would have anyway.
 */
START_TEST(test_tier_pmem_foreign_sigbus_still_fatal)
{
	struct sigaction cur;
	char path[4096];
	pid_t pid;
	int status;

	/* the fixture's tier installed the guard */
	ck_assert_int_eq(sigaction(SIGBUS, NULL, &cur), 0);
	ck_assert(cur.sa_flags & SA_SIGINFO);
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/foreign", t_dir),
			 (int)sizeof(path));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		volatile char *m;
		int fd = open(path, O_RDWR | O_CREAT, 0600);

		if (fd < 0 || ftruncate(fd, 8192) < 0)
			_exit(2);
		m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED || ftruncate(fd, 0) < 0)
			_exit(2);
		/* a sanitizer's report of this intended crash is noise */
		fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			(void)dup2(fd, STDERR_FILENO);
		(void)m[4096]; /* past the end of file: SIGBUS */
		_exit(3);      /* survived: the guard swallowed it */
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	/*
	 * Killed by SIGBUS; or, under ASan, whose handler was the one
	 * before ours, reported and exited with its error code.
	 */
	ck_assert_msg((WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) ||
			      (WIFEXITED(status) && WEXITSTATUS(status) != 0 &&
			       WEXITSTATUS(status) != 2 &&
			       WEXITSTATUS(status) != 3),
		      "status %#x", status);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *tier_pmem_suite(void)
{
	Suite *s = suite_create("tier_pmem");
	TCase *tc;

	tc = tcase_create("open");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_dir, teardown_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tier_pmem_open_makes_private_slab);
	tcase_add_test(tc, test_tier_pmem_open_modes_ignore_umask);
	tcase_add_loop_test(tc, test_tier_pmem_open_bad_path, 0,
			    sizeof(bad_path_cases) / sizeof(bad_path_cases[0]));
	tcase_add_test(tc, test_tier_pmem_open_unwritable);
	tcase_add_test(tc, test_tier_pmem_open_larger_than_free_space);
	tcase_add_test(tc, test_tier_pmem_reserved_space_survives_full_fs);
	tcase_add_test(tc, test_tier_pmem_forced_pmem_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("data");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tier_pmem_fresh_slots_read_zeros);
	tcase_add_loop_test(tc, test_tier_pmem_unaligned_write_read, 0,
			    sizeof(range_cases) / sizeof(range_cases[0]));
	tcase_add_test(tc, test_tier_pmem_random_io_matches_model);
	tcase_add_test(tc, test_tier_pmem_freed_slot_reads_zeros);
	tcase_add_test(tc, test_tier_pmem_alloc_until_enospc);
	tcase_add_test(tc, test_tier_pmem_zero_range);
	tcase_add_test(tc, test_tier_pmem_data_lands_in_file);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tier_pmem_concurrent_writers);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_tier_pmem_fault_nth_call_fails, 1, 7);
	tcase_add_test(tc, test_tier_pmem_fault_failed_write_keeps_data);
	tcase_add_test(tc, test_tier_pmem_slab_unlinked_behind_back);
	tcase_add_loop_test(tc, test_tier_pmem_slab_truncated_behind_back, 0,
			    2);
	tcase_add_test(tc, test_tier_pmem_foreign_sigbus_still_fatal);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return tap_run(tier_pmem_suite());
}
