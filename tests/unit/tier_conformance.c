// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier_conformance.c -- the conformance suite of tiers/tier.h, run by
 * every back end (see tier_conformance.h), and its helpers.
 *
 * What every back end must do, whatever it is:
 *  - api: what it declares (ops version, name, caps) is what the tier
 *    does with it (checksums, a path, zero-copy reads);
 *  - with TIER_CAP_PATH, open: the private directory and its lock file,
 *    the unlinked slab and their modes whatever the umask, bad and
 *    unwritable paths refused with nothing left behind, the free-space
 *    check (exact on a small tmpfs), two tiers in one directory, a
 *    symlinked directory, the directory removed behind the tier's back,
 *    and a killed process that leaves no data (its directory swept by
 *    the next open);
 *  - data: the slot allocator and its counts (full, one freed when full,
 *    a random walk), fresh and freed slots read zeros, runs freed at
 *    once, unaligned writes and reads, overwrites, random I/O against a
 *    model, tier_zero(), tier_sync(), the stats counters (exact, also
 *    across threads); with TIER_CAP_PATH the data's place in the slab and
 *    the slab's directory removed or the slab truncated behind the
 *    tier's back; with TIER_CAP_CSUM damage on the medium never read
 *    back as data nor blessed by a partial write;
 *  - fault: faults injected at the Nth read or write, a failed write
 *    keeping the old data, a failed read leaving the buffer, the errno
 *    chosen and as a program gets it (tier_errno()), disarming, tier_zero
 *    failing whole, a free not spending a data fault, one fault across
 *    threads firing once; faults at reserve (where the back end has
 *    ops->reserve), discard and sync; a slot whose discard fails zeroed
 *    by writing, and one whose zeroing fails too leaked, never handed
 *    out again nor counted free;
 *  - threads: allocation and freeing from several threads exact, and
 *    writers on several threads each keeping their data.
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
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tier.h"
#include "tier_ops.h"
#include "faulty_tier.h"
#include "tap.h"
#include "tier_conformance.h"
#include "banned.h"

#define EXT TC_EXT
#define NSLOTS TC_NSLOTS

/* ------------------------------------------------------------------ */
/* helpers */

unsigned char tc_pat(uint64_t i, unsigned seed)
{
	return (unsigned char)((i * 131 + seed * 7 + (i >> 12)) % 251 + 1);
}

void tc_fill(unsigned char *buf, size_t len, uint64_t base, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = tc_pat(base + i, seed);
}

long tc_check(const unsigned char *buf, size_t len, uint64_t base,
	      unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != tc_pat(base + i, seed))
			return (long)i;
	return -1;
}

long tc_nonzero(const unsigned char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i])
			return (long)i;
	return -1;
}

void *tc_xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

void tc_write_slot(struct tier *t, uint32_t slot, unsigned seed)
{
	unsigned char *buf = tc_xmalloc(t->extent_size);

	tc_fill(buf, t->extent_size, 0, seed);
	ck_assert_int_eq(tier_write(t, slot, 0, buf, t->extent_size),
			 (ssize_t)t->extent_size);
	free(buf);
}

/* All of @slot, read into a fresh buffer filled with 0xee first. */
static unsigned char *tc_read_slot(struct tier *t, uint32_t slot)
{
	unsigned char *buf = tc_xmalloc(t->extent_size);

	memset(buf, 0xee, t->extent_size);
	ck_assert_int_eq(tier_read(t, slot, 0, buf, t->extent_size),
			 (ssize_t)t->extent_size);
	return buf;
}

void tc_assert_slot_pattern(struct tier *t, uint32_t slot, unsigned seed)
{
	unsigned char *buf = tc_read_slot(t, slot);
	long at = tc_check(buf, t->extent_size, 0, seed);

	ck_assert_msg(at < 0, "slot %u byte %ld: 0x%02x, want 0x%02x", slot, at,
		      at < 0 ? 0 : buf[at],
		      at < 0 ? 0 : tc_pat((uint64_t)at, seed));
	free(buf);
}

void tc_assert_slot_zero(struct tier *t, uint32_t slot)
{
	unsigned char *buf = tc_read_slot(t, slot);
	long at = tc_nonzero(buf, t->extent_size);

	ck_assert_msg(at < 0, "slot %u: byte %ld is 0x%02x, want 0", slot, at,
		      at < 0 ? 0 : buf[at]);
	free(buf);
}

void tc_alloc_all(struct tier *t, uint32_t *slots)
{
	for (uint32_t i = 0; i < t->nslots; i++) {
		ck_assert_int_eq(tier_slot_alloc(t, &slots[i]), 0);
		ck_assert_uint_lt(slots[i], t->nslots);
		for (uint32_t j = 0; j < i; j++)
			ck_assert_msg(slots[i] != slots[j],
				      "slot %u handed out twice", slots[i]);
		ck_assert_uint_eq(tier_used_slots(t), i + 1);
		ck_assert_uint_eq(tier_free_slots(t), t->nslots - i - 1);
	}
}

/* Free @slots[0 .. nslots-1] of @t in order, checking the counts. */
static void tc_free_all(struct tier *t, const uint32_t *slots)
{
	for (uint32_t i = 0; i < t->nslots; i++) {
		tier_slot_free(t, slots[i]);
		ck_assert_uint_eq(tier_used_slots(t), t->nslots - i - 1);
		ck_assert_uint_eq(tier_free_slots(t), i + 1);
	}
}

void tc_random_io(struct tier *t)
{
	const uint32_t ext = t->extent_size, n = t->nslots;
	uint32_t *slots = tc_xmalloc(n * sizeof(*slots));
	unsigned char *model, *buf;
	uint64_t rnd = 0x9e3779b97f4a7c15ull;

	tc_alloc_all(t, slots);
	model = tc_xmalloc((size_t)n * ext);
	memset(model, 0, (size_t)n * ext);
	buf = tc_xmalloc(ext);
	for (int op = 0; op < 3000; op++) {
		uint32_t i, off;
		size_t len;
		unsigned char *m;

		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		i = (uint32_t)(rnd % n);
		off = (uint32_t)((rnd >> 8) % ext);
		/* mostly small, sometimes up to the rest of the slot */
		len = (rnd >> 40) % 8 ? (rnd >> 28) % 9000 + 1
				      : (rnd >> 28) % (ext - off) + 1;
		len = len > ext - off ? ext - off : len;
		m = model + (size_t)slots[i] * ext + off;
		if ((rnd >> 50) % 3) {
			tc_fill(buf, len, (uint64_t)op * 977, (unsigned)op);
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
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_int_eq(tier_read(t, i, 0, buf, ext), (ssize_t)ext);
		ck_assert_msg(!memcmp(buf, model + (size_t)i * ext, ext),
			      "slot %u differs at the end", i);
	}
	ck_assert_int_eq(tier_sync(t), 0);
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
	free(buf);
	free(model);
	free(slots);
}

struct tier_stats tc_stats(const struct tier *t)
{
	struct tier_stats st;

	memset(&st, 0, sizeof(st));
	st.read_bytes = __atomic_load_n(&t->stats.read_bytes, __ATOMIC_RELAXED);
	st.read_ops = __atomic_load_n(&t->stats.read_ops, __ATOMIC_RELAXED);
	st.write_bytes =
		__atomic_load_n(&t->stats.write_bytes, __ATOMIC_RELAXED);
	st.write_ops = __atomic_load_n(&t->stats.write_ops, __ATOMIC_RELAXED);
	st.io_errors = __atomic_load_n(&t->stats.io_errors, __ATOMIC_RELAXED);
	st.csum_errors =
		__atomic_load_n(&t->stats.csum_errors, __ATOMIC_RELAXED);
	return st;
}

void tc_mkdtemp(char *out, size_t size, const char *parent, const char *prefix)
{
	const char *tmp = parent ? parent : getenv("TMPDIR");

	ck_assert_int_lt(snprintf(out, size, "%s/%s.XXXXXX",
				  tmp && *tmp ? tmp : "/tmp", prefix),
			 (int)size);
	ck_assert_ptr_nonnull(mkdtemp(out));
}

static int tc_rm_entry(const char *path, const struct stat *st, int flag,
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

void tc_rm_rf(const char *path)
{
	(void)nftw(path, tc_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int tc_count_entries(const char *dir)
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

void tc_only_entry(const char *dir, char *out, size_t size)
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
	ck_assert_msg(n == 1, "%s has %d entries, want 1", dir, n);
}

void tc_slab_path(const char *dir, char *out, size_t size)
{
	char prefix[4096], link[8192], fdp[300];
	char *real = realpath(dir, NULL);
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
		/* the file tier's second, O_DIRECT fd for bulk copies */
		if (fcntl((int)strtol(de->d_name, NULL, 10), F_GETFL) &
		    O_DIRECT)
			continue;
		ck_assert_int_lt(snprintf(out, size, "%s", fdp), (int)size);
		n++;
	}
	closedir(d);
	ck_assert_msg(n == 1, "%d unlinked slab files open in %s, want 1", n,
		      dir);
}

uint64_t tc_avail(const char *path)
{
	struct statvfs vfs;

	ck_assert_int_eq(statvfs(path, &vfs), 0);
	return (uint64_t)vfs.f_bavail * vfs.f_frsize;
}

bool tc_private_mounts(void)
{
	const char *f = getenv("CK_FORK");

	if (f && !strcmp(f, "no"))
		return false;
	if (unshare(CLONE_NEWNS) < 0)
		return false;
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
}

int tier_conformance_make(enum tier_kind kind, const char *dir, uint32_t nslots,
			  uint32_t ext, struct tier **ret)
{
	return tier_create("conf", kind, dir, (uint64_t)nslots * ext, ext, ret);
}

void tier_conformance_drop(struct tier *t, const char *dir)
{
	tier_free(t);
	tc_rm_rf(dir);
}

/* ------------------------------------------------------------------ */
/* fixtures */

/* The back end under test (tier_conformance()) and what it declares. */
static struct tier_conformance_setup cs;
static unsigned caps;
/* Per-case base directory (unchecked fixture, made in the parent). */
static char c_base[4096];
/* Per-test directory (checked fixture) and the tier made in it. */
static char c_dir[4096];
static struct tier *t;

static void setup_base(void)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "test_tier_%s_conf",
		 tier_kind_name(cs.kind));
	tc_mkdtemp(c_base, sizeof(c_base), NULL, prefix);
}

static void teardown_base(void)
{
	tc_rm_rf(c_base);
}

static void setup_dir(void)
{
	tc_mkdtemp(c_dir, sizeof(c_dir), c_base, "t");
	t = NULL;
}

static void teardown_dir(void)
{
	cs.drop(t, c_dir);
	t = NULL;
}

static void setup_tier(void)
{
	setup_dir();
	ck_assert_int_eq(cs.make(cs.kind, c_dir, NSLOTS, EXT, &t), 0);
	ck_assert_ptr_nonnull(t);
}

/* The fixture's tier replaced by one of @nslots slots of @ext bytes. */
static void remake(uint32_t nslots, uint32_t ext)
{
	t = tier_free(t);
	ck_assert_int_eq(cs.make(cs.kind, c_dir, nslots, ext, &t), 0);
	ck_assert_ptr_nonnull(t);
}

/* @out = c_dir + @suffix */
static void c_sub(char *out, size_t size, const char *suffix)
{
	ck_assert_int_lt(snprintf(out, size, "%s%s", c_dir, suffix), (int)size);
}

/* ------------------------------------------------------------------ */
/* api */

/*
 * What the back end declares (tier_ops) is what the tier is, with no
 * switch on the kind: the ops' version and name, its caps those of
 * tier_kind_caps(); checksums exactly with TIER_CAP_CSUM; a path, and no
 * tier without one, exactly with TIER_CAP_PATH; zero-copy reads and
 * writes only where there are no checksums and the back end lends its
 * memory (ops->direct), and then the bytes are the slot's.
 */
START_TEST(test_conf_caps_decide_setup)
{
	unsigned char buf[4096], back[4096];
	struct tier *nt = NULL;
	const void *p;
	int pfd[2], r;
	uint32_t s;

	ck_assert_int_eq(cs.make(cs.kind, c_dir, 4, EXT, &t), 0);
	ck_assert_int_eq(t->kind, cs.kind);
	ck_assert_ptr_nonnull(t->ops);
	ck_assert_uint_eq(t->ops->version, TIER_OPS_VERSION);
	ck_assert_str_eq(t->ops->kind_name, tier_kind_name(cs.kind));
	ck_assert_int_eq(tier_kind_parse(t->ops->kind_name), cs.kind);
	ck_assert_uint_eq(t->ops->caps, caps);
	ck_assert(tier_has_csum(t) == !!(caps & TIER_CAP_CSUM));
	if (caps & TIER_CAP_PATH)
		ck_assert_str_eq(t->path, c_dir);
	else
		ck_assert_ptr_null(t->path);
	ck_assert_uint_eq(t->size, 4 * EXT);
	ck_assert_uint_eq(t->extent_size, EXT);
	ck_assert_uint_eq(t->nslots, 4);
	ck_assert_uint_ge(t->vslots, t->nslots);
	if (!t->ops->sparse)
		ck_assert_uint_eq(t->vslots, t->nslots);

	/* a fresh tier: nothing used, nothing counted */
	ck_assert_stats(t, 0, 0, 0, 0, 0);
	ck_assert_uint_eq(tc_stats(t).csum_errors, 0);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(tier_free_slots(t), 4);
	ck_assert_uint_eq(tier_used_bytes(t), 0);
	ck_assert_uint_eq(tier_avail_bytes(t), 4 * EXT);
	ck_assert_int_eq(tier_last_error(t), 0);
	ck_assert(!tier_medium_full(t));
	ck_assert_int_eq(tier_sync(t), 0);

	/* TIER_CAP_PATH: no path, no tier; without it, no path needed */
	for (int i = 0; i < 2; i++) {
		const char *path = i ? "" : NULL;

		r = tier_create("nopath", cs.kind, path, 4 * EXT, EXT, &nt);
		if (caps & TIER_CAP_PATH) {
			ck_assert_int_eq(r, -EINVAL);
			ck_assert_ptr_null(nt);
		} else {
			ck_assert_int_eq(r, 0);
			ck_assert_ptr_null(nt->path);
			nt = tier_free(nt);
		}
	}

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_write_slot(t, s, 1);
	p = tier_read_direct(t, s, 4096, sizeof(buf));
	ck_assert_int_eq(pipe(pfd), 0);
	tc_fill(buf, sizeof(buf), 0, 2);
	ck_assert_int_eq(write(pfd[1], buf, sizeof(buf)), (ssize_t)sizeof(buf));
	r = (int)tier_write_fd(t, s, 0, pfd[0], sizeof(buf));
	if (tier_has_csum(t) || !t->ops->direct) {
		/* no memory to lend: the caller copies; nothing was read */
		ck_assert_ptr_null(p);
		ck_assert_int_eq(r, -EOPNOTSUPP);
		ck_assert_int_eq(read(pfd[0], back, sizeof(back)),
				 (ssize_t)sizeof(back));
		ck_assert_mem_eq(back, buf, sizeof(buf));
		tc_assert_slot_pattern(t, s, 1);
		ck_assert_stats(t, EXT, 1, EXT, 1, 0);
	} else {
		ck_assert_ptr_nonnull(p);
		ck_assert_int_eq(tc_check(p, sizeof(buf), 4096, 1), -1);
		ck_assert_int_eq(r, (int)sizeof(buf));
		ck_assert_int_eq(tier_read(t, s, 0, back, sizeof(back)),
				 (ssize_t)sizeof(back));
		ck_assert_mem_eq(back, buf, sizeof(buf));
		ck_assert_stats(t, 4096 + sizeof(back), 2, EXT + sizeof(buf), 2,
				0);
		/* with a fault armed every read goes through the hook */
		faulty_tier_arm(t, 1, EIO);
		ck_assert_ptr_null(tier_read_direct(t, s, 0, 4096));
		faulty_tier_disarm(t);
	}
	close(pfd[0]);
	close(pfd[1]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* open (TIER_CAP_PATH) */

START_TEST(test_conf_open_makes_private_slab)
{
	char priv[4096], slab[4096];
	struct stat st;
	const char *base;

	ck_assert_int_eq(tier_create("tier-0", cs.kind, c_dir,
				     (uint64_t)NSLOTS * EXT + 100, EXT, &t),
			 0);
	ck_assert_str_eq(t->path, c_dir);
	ck_assert_uint_eq(t->size, (uint64_t)NSLOTS * EXT + 100);
	ck_assert_uint_eq(t->nslots, NSLOTS);
	ck_assert_ptr_nonnull(t->priv);

	tc_only_entry(c_dir, priv, sizeof(priv));
	base = strrchr(priv, '/') + 1;
	ck_assert_msg(!strncmp(base, "tierfs-tier-0-", 14),
		      "private dir '%s' not named tierfs-NAME-XXXXXX", base);
	ck_assert_uint_eq(strlen(base), 14 + 6);
	ck_assert_int_eq(lstat(priv, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_uint_eq(st.st_uid, geteuid());

	/* the directory holds only the (empty) lock file ... */
	tc_only_entry(priv, slab, sizeof(slab));
	ck_assert_str_eq(strrchr(slab, '/'), "/lock");
	ck_assert_int_eq(lstat(slab, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(st.st_size, 0);
	/* ... and the slab has no name: the kernel frees it with us */
	tc_slab_path(c_dir, slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_nlink, 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq(st.st_uid, geteuid());
	ck_assert_int_eq(st.st_size, (off_t)t->vslots * EXT);
	if (t->dev_shared)
		/* it takes space as it goes: a fresh tier costs none */
		ck_assert_int_eq(st.st_blocks, 0);
	else
		/* it reserved its space at open */
		ck_assert_int_ge(st.st_blocks * 512, (off_t)t->vslots * EXT);

	t = tier_free(t);
	ck_assert_int_eq(tc_count_entries(c_dir), 0);
	ck_assert_int_eq(access(priv, F_OK), -1);
}
END_TEST

/* The modes do not depend on the umask of the mounting process. */
START_TEST(test_conf_open_modes_ignore_umask)
{
	char priv[4096], slab[4096];
	struct stat st;

	(void)umask(0777);
	ck_assert_int_eq(tier_create("u", cs.kind, c_dir, EXT, EXT, &t), 0);
	tc_only_entry(c_dir, priv, sizeof(priv));
	ck_assert_int_eq(stat(priv, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	tc_only_entry(priv, slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	tc_slab_path(c_dir, slab, sizeof(slab));
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	(void)umask(022);
}
END_TEST

/* Two tiers in one directory get separate private directories. */
START_TEST(test_conf_open_two_tiers_one_dir)
{
	struct tier *t2 = NULL;
	uint32_t a, b;

	ck_assert_int_eq(tier_create("a", cs.kind, c_dir, 4 * EXT, EXT, &t), 0);
	ck_assert_int_eq(tier_create("b", cs.kind, c_dir, 4 * EXT, EXT, &t2),
			 0);
	ck_assert_int_eq(tc_count_entries(c_dir), 2);
	ck_assert_int_eq(tier_slot_alloc(t, &a), 0);
	ck_assert_int_eq(tier_slot_alloc(t2, &b), 0);
	ck_assert_uint_eq(a, b);
	tc_write_slot(t, a, 1);
	tc_write_slot(t2, b, 2);
	tc_assert_slot_pattern(t, a, 1);
	tc_assert_slot_pattern(t2, b, 2);
	t2 = tier_free(t2);
	ck_assert_int_eq(tc_count_entries(c_dir), 1);
	tc_assert_slot_pattern(t, a, 1);
}
END_TEST

/* A symlink to a directory is as good as the directory. */
START_TEST(test_conf_open_symlink_to_dir)
{
	char link[4096], sub[4096];

	c_sub(sub, sizeof(sub), "/real");
	c_sub(link, sizeof(link), "/link");
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(symlink("real", link), 0);
	ck_assert_int_eq(tier_create("l", cs.kind, link, EXT, EXT, &t), 0);
	ck_assert_int_eq(tc_count_entries(sub), 1);
	t = tier_free(t);
	ck_assert_int_eq(tc_count_entries(sub), 0);
}
END_TEST

static const struct bad_path_case {
	const char *suffix; /* appended to c_dir; NULL: use @abs */
	const char *abs;
	int want;
} bad_path_cases[] = {
	{ "/missing", NULL, -ENOENT },
	{ "/missing/deeper", NULL, -ENOENT },
	{ "/dangling", NULL, -ENOENT },	 /* symlink to nowhere */
	{ "/file", NULL, -ENOTDIR },	 /* a regular file */
	{ "/file/sub", NULL, -ENOTDIR }, /* below a regular file */
	{ "/fifo", NULL, -ENOTDIR },
	{ "/devnull", NULL, -ENOTDIR }, /* symlink to a device (no devdax) */
	{ NULL, "", -EINVAL },		/* tier_create() refuses */
	{ NULL, "/nonexistent-tierfs-test-dir", -ENOENT },
	/*
	 * /proc passes access(W_OK) for root but refuses to create
	 * anything: the real create test catches it.
	 */
	{ NULL, "/proc", -EACCES },
};

START_TEST(test_conf_open_bad_path)
{
	const struct bad_path_case *c = &bad_path_cases[_i];
	struct tier *sentinel = (struct tier *)&bad_path_cases;
	struct tier *nt = sentinel;
	char path[4096], p2[4096];
	int fd, r;

	/* the things the cases point at */
	c_sub(p2, sizeof(p2), "/file");
	fd = open(p2, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	c_sub(p2, sizeof(p2), "/dangling");
	ck_assert_int_eq(symlink("nowhere", p2), 0);
	c_sub(p2, sizeof(p2), "/fifo");
	ck_assert_int_eq(mkfifo(p2, 0600), 0);
	c_sub(p2, sizeof(p2), "/devnull");
	ck_assert_int_eq(symlink("/dev/null", p2), 0);

	if (c->suffix)
		c_sub(path, sizeof(path), c->suffix);
	else
		ck_assert_int_lt(snprintf(path, sizeof(path), "%s", c->abs),
				 (int)sizeof(path));
	r = tier_create("bad", cs.kind, path, 4 * EXT, EXT, &nt);
	ck_assert_msg(r == c->want, "'%s': got %d (%s), want %d (%s)", path, r,
		      strerror(-r), c->want, strerror(-c->want));
	ck_assert_msg(nt == sentinel, "'%s': *ret_tier written on failure",
		      path);
	/* nothing was created in c_dir besides the fixtures above */
	ck_assert_int_eq(tc_count_entries(c_dir), 4);
}
END_TEST

/*
 * An unwritable directory.  Root passes access() everywhere except on a
 * read-only mount, so as root this mounts a read-only tmpfs in a private
 * namespace (-EROFS from access()); otherwise chmod 0555 does (-EACCES).
 */
START_TEST(test_conf_open_unwritable)
{
	char sub[4096];
	int r;

	c_sub(sub, sizeof(sub), "/ro");
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	if (geteuid() != 0) {
		ck_assert_int_eq(chmod(sub, 0555), 0);
		r = tier_create("ro", cs.kind, sub, EXT, EXT, &t);
		ck_assert_int_eq(r, -EACCES);
		ck_assert_ptr_null(t);
		ck_assert_int_eq(tc_count_entries(sub), 0);
		(void)chmod(sub, 0755);
		return;
	}
	if (!tc_private_mounts() ||
	    mount("tmpfs", sub, "tmpfs", MS_RDONLY, "size=1m") < 0) {
		tap_skip("no read-only tmpfs for root (needs a private "
			 "mount namespace and CK_FORK not 'no')");
		return;
	}
	r = tier_create("ro", cs.kind, sub, EXT, EXT, &t);
	ck_assert_msg(r == -EROFS || r == -EACCES, "got %d (%s)", r,
		      strerror(-r));
	ck_assert_ptr_null(t);
	(void)umount(sub);
}
END_TEST

/* A size beyond the free space is refused and leaves nothing behind. */
START_TEST(test_conf_open_larger_than_free_space)
{
	uint32_t ext = 1u << 20;
	uint64_t avail = tc_avail(c_dir), size;
	bool sparse;

	/* keep the slot count within uint32_t on a huge filesystem */
	while ((avail / ext) >= UINT32_MAX / 2)
		ext <<= 1;
	size = (avail / ext + 64) * (uint64_t)ext;
	ck_assert_int_eq(tier_create("big", cs.kind, c_dir, size, ext, &t),
			 -ENOSPC);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(tc_count_entries(c_dir), 0);

	/*
	 * A size that fits is fine.  Tried this big only where the tier
	 * takes its space as it goes (dev_shared: a sparse slab); one that
	 * reserves it all at open would take a quarter of the disk.
	 */
	ck_assert_int_eq(tier_create("probe", cs.kind, c_dir, ext, ext, &t), 0);
	sparse = t->dev_shared;
	t = tier_free(t);
	size = (avail / 4 / ext) * (uint64_t)ext;
	if (sparse && size >= ext) {
		ck_assert_int_eq(
			tier_create("fits", cs.kind, c_dir, size, ext, &t), 0);
		ck_assert_uint_eq(tier_used_bytes(t), 0);
		t = tier_free(t);
	}
	ck_assert_int_eq(tc_count_entries(c_dir), 0);
}
END_TEST

/* The free-space check on a small tmpfs, where the numbers are exact. */
START_TEST(test_conf_open_free_space_on_tmpfs)
{
	uint64_t avail;

	if (!tc_private_mounts() ||
	    mount("tmpfs", c_dir, "tmpfs", 0, "size=8m,mode=0755") < 0) {
		tap_skip("cannot mount a tmpfs (needs CAP_SYS_ADMIN in a "
			 "private mount namespace and CK_FORK not 'no')");
		return;
	}
	avail = tc_avail(c_dir);
	ck_assert_uint_eq(avail, 8u << 20);
	ck_assert_int_eq(tier_create("x", cs.kind, c_dir, avail + 4096, 4096,
				     &t),
			 -ENOSPC);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(tc_count_entries(c_dir), 0);
	ck_assert_int_eq(tier_create("x", cs.kind, c_dir, avail, 4096, &t), 0);
	ck_assert_uint_eq(t->nslots, avail / 4096);
	t = tier_free(t);
	ck_assert_int_eq(tc_count_entries(c_dir), 0);
	(void)umount(c_dir);
}
END_TEST

START_TEST(test_conf_free_after_backing_dir_removed)
{
	char priv[4096];

	ck_assert_int_eq(tier_create("gone", cs.kind, c_dir, 4 * EXT, EXT, &t),
			 0);
	tc_only_entry(c_dir, priv, sizeof(priv));
	tc_rm_rf(priv);
	ck_assert_int_eq(tc_count_entries(c_dir), 0);
	t = tier_free(t); /* must not crash or complain */
	ck_assert_int_eq(tc_count_entries(c_dir), 0);
}
END_TEST

/* Make c_dir/@name (a directory) holding @file with @len bytes of data. */
static void c_make_leftover(const char *name, const char *file, size_t len)
{
	char path[4096];
	unsigned char *buf = tc_xmalloc(len);
	int fd;

	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", c_dir, name),
			 (int)sizeof(path));
	ck_assert_int_eq(mkdir(path, 0700), 0);
	ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s/%s", c_dir, name,
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
START_TEST(test_conf_killed_leaves_no_data)
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
		if (!buf || tier_create("dead", cs.kind, c_dir,
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
	tc_only_entry(c_dir, priv, sizeof(priv));
	tc_only_entry(priv, path, sizeof(path));
	ck_assert_str_eq(strrchr(path, '/'), "/lock");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_int_eq(st.st_blocks, 0);

	/* an older tierfs's leftover, a live tier's, and a stranger's */
	c_make_leftover("tierfs-old-ABCDEF", "slab", 1u << 20);
	c_make_leftover("tierfs-live-ABCDEF", "lock", 0);
	c_make_leftover("tierfs-mine-ABCDEF", "notes", 10);
	c_sub(path, sizeof(path), "/tierfs-live-ABCDEF/lock");
	live_fd = open(path, O_RDWR);
	ck_assert_int_ge(live_fd, 0);
	ck_assert_int_eq(flock(live_fd, LOCK_EX | LOCK_NB), 0);

	ck_assert_int_eq(tier_create("new", cs.kind, c_dir,
				     (uint64_t)NSLOTS * EXT, EXT, &t),
			 0);
	ck_assert_uint_eq(t->swept_dirs, 2);
	ck_assert_uint_ge(t->swept_bytes, 1u << 20);
	ck_assert_int_eq(access(priv, F_OK), -1);
	/* the new tier's, the live one and the stranger's */
	ck_assert_int_eq(tc_count_entries(c_dir), 3);
	close(live_fd);
	t = tier_free(t);
	ck_assert_int_eq(tc_count_entries(c_dir), 2);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data: the allocator */

START_TEST(test_conf_alloc_until_enospc)
{
	uint32_t slots[NSLOTS], extra = 4242;

	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(tier_free_slots(t), NSLOTS);
	for (int round = 0; round < 3; round++) {
		tc_alloc_all(t, slots);
		ck_assert_int_eq(tier_slot_alloc(t, &extra), -ENOSPC);
		ck_assert_int_eq(tier_slot_get(t, &extra), -ENOSPC);
		ck_assert_uint_eq(extra, 4242); /* untouched on failure */
		ck_assert_uint_eq(tier_used_slots(t), NSLOTS);
		ck_assert_uint_eq(tier_free_slots(t), 0);
		ck_assert_uint_eq(tier_used_bytes(t), (uint64_t)NSLOTS * EXT);
		ck_assert_uint_eq(tier_avail_bytes(t), 0);
		/* every slot comes back, then the tier is full again */
		tc_free_all(t, slots);
		ck_assert_uint_eq(tier_used_bytes(t), 0);
		ck_assert_uint_eq(tier_avail_bytes(t), (uint64_t)NSLOTS * EXT);
	}
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
}
END_TEST

START_TEST(test_conf_free_one_when_full_reallocs_it)
{
	uint32_t slots[NSLOTS], s;

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++) {
		tier_slot_free(t, slots[i]);
		ck_assert_uint_eq(tier_free_slots(t), 1);
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_eq(s, slots[i]);
		ck_assert_uint_eq(tier_free_slots(t), 0);
		ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	}
	tc_free_all(t, slots);
}
END_TEST

START_TEST(test_conf_interleaved_alloc_free_counts)
{
	uint32_t held[NSLOTS];
	uint32_t n = 0;
	unsigned rnd = 1;

	/* a fixed pseudo-random walk of allocs and frees */
	for (int step = 0; step < 5000; step++) {
		rnd = rnd * 1103515245u + 12345u;
		if ((rnd >> 16) % 3 && n < NSLOTS) {
			ck_assert_int_eq(tier_slot_alloc(t, &held[n]), 0);
			for (uint32_t j = 0; j < n; j++)
				ck_assert_uint_ne(held[j], held[n]);
			n++;
		} else if (n == NSLOTS) {
			uint32_t s;

			ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
			tier_slot_free(t, held[--n]);
		} else if (n > 0) {
			uint32_t k = (rnd >> 8) % n;

			tier_slot_free(t, held[k]);
			held[k] = held[--n];
		}
		ck_assert_uint_eq(tier_used_slots(t), n);
		ck_assert_uint_eq(tier_free_slots(t), NSLOTS - n);
		ck_assert_uint_eq(tier_used_bytes(t), (uint64_t)n * EXT);
	}
	while (n > 0)
		tier_slot_free(t, held[--n]);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(tier_free_slots(t), NSLOTS);
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data: zeros */

START_TEST(test_conf_fresh_slots_read_zeros)
{
	uint32_t slots[NSLOTS];

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_assert_slot_zero(t, slots[i]);
}
END_TEST

/*
 * A freed slot reads zeros when handed out again: one freed while the
 * rest are held (the free stack hands it straight back), and all of a
 * full tier (reallocation can only hand back the dirty slots).  The
 * neighbours keep their data; freeing discards, which is no write.
 */
START_TEST(test_conf_freed_slot_reads_zeros)
{
	uint32_t slots[NSLOTS], s;

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_write_slot(t, slots[i], i + 1);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_assert_slot_pattern(t, slots[i], i + 1);
	ck_assert_int_eq(tier_sync(t), 0);

	tier_slot_free(t, slots[3]);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 1);
	ck_assert_uint_eq(tier_used_bytes(t), (uint64_t)(NSLOTS - 1) * EXT);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_uint_eq(s, slots[3]);
	tc_assert_slot_zero(t, s);
	tc_assert_slot_pattern(t, slots[2], 3);
	tc_assert_slot_pattern(t, slots[4], 5);

	tc_free_all(t, slots);
	ck_assert_uint_eq(tier_used_bytes(t), 0);
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
	ck_assert_uint_eq(tc_stats(t).write_ops, NSLOTS);
	ck_assert_uint_eq(t->nleaked, 0);

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_assert_slot_zero(t, slots[i]);
}
END_TEST

/*
 * tier_slot_free_run(): a run of slots freed in one call reads as zeros
 * when handed out again (checksums reset with the data), the slots
 * around it keep their data, and the counts are exact.  Where the back
 * end frees the run with one discard (ops->discard_run), allocation
 * hands the run back lowest slot first.
 */
START_TEST(test_conf_free_run)
{
	uint32_t slots[NSLOTS], s;
	bool seen[NSLOTS] = { false };

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++) {
		ck_assert_uint_eq(slots[i], i); /* a fresh tier counts up */
		tc_write_slot(t, i, i + 1);
	}
	tier_slot_free_run(t, 3, 9);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 9);
	ck_assert_uint_eq(tier_free_slots(t), 9);
	ck_assert_uint_eq(tier_used_bytes(t), (uint64_t)(NSLOTS - 9) * EXT);
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
	ck_assert_uint_eq(tc_stats(t).write_ops, NSLOTS); /* no zeroing */
	ck_assert_uint_eq(t->nleaked, 0);
	for (uint32_t i = 0; i < 3; i++)
		tc_assert_slot_pattern(t, i, i + 1);
	for (uint32_t i = 12; i < NSLOTS; i++)
		tc_assert_slot_pattern(t, i, i + 1);
	for (uint32_t k = 0; k < 9; k++) {
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_msg(s >= 3 && s < 12 && !seen[s],
			      "slot %u: not one of the run, or twice", s);
		seen[s] = true;
		if (t->ops->discard_run)
			ck_assert_uint_eq(s, 3 + k);
		tc_assert_slot_zero(t, s);
	}
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	/* a run of one is tier_slot_free() */
	tier_slot_free_run(t, 7, 1);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 1);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_uint_eq(s, 7);
	tc_assert_slot_zero(t, s);
}
END_TEST

/*
 * tier_slot_free_many(): scattered slots freed in one call (one
 * discard_vec where the back end has it, else runs) read as zeros when
 * handed out again, however little of a slot was held -- a slot holding
 * only its first unit, one holding only its last -- the slots between
 * keep their data, the counts are exact, and allocation hands them back
 * lowest first.  With the batched discard failing (the fault hook), the
 * fallback slot by slot still zeroes them.
 */
START_TEST(test_conf_free_many)
{
	static const uint32_t pick[] = { 1, 4, 5, 9, 12 };
	const unsigned np = sizeof(pick) / sizeof(pick[0]);
	const uint64_t unit = tier_unit(t);
	uint32_t slots[NSLOTS], s;
	uint64_t freed;

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++) {
		ck_assert_uint_eq(slots[i], i);
		tc_write_slot(t, i, i + 1);
	}
	/* slot 4 keeps only its last unit, slot 9 only its first */
	ck_assert_int_eq(tier_punch(t, 4, 0, EXT - unit, &freed), 0);
	ck_assert_int_eq(tier_punch(t, 9, unit, EXT - unit, &freed), 0);
	for (int round = 0; round < 2; round++) {
		if (round == 1)
			faulty_tier_arm_ops(t, TIER_FAULT_DISCARD, 1, EIO);
		tier_slot_free_many(t, pick, np);
		ck_assert_uint_eq(tier_used_slots(t), NSLOTS - np);
		ck_assert_uint_eq(tier_free_slots(t), np);
		ck_assert_uint_eq(t->nleaked, 0);
		for (uint32_t i = 0, k = 0; i < NSLOTS; i++) {
			if (k < np && pick[k] == i) {
				k++;
				continue;
			}
			tc_assert_slot_pattern(t, i, i + 1);
		}
		for (unsigned k = 0; k < np; k++) {
			ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
			ck_assert_uint_eq(s, pick[k]);
			tc_assert_slot_zero(t, s);
			tc_write_slot(t, s, 50 + k);
		}
		ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
		/* round 1: the same slots again, each held whole */
	}
	ck_assert(faulty_tier_fired(t));
	/* a batch of one, and of slots holding nothing */
	tier_slot_free_many(t, pick, 1);
	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	ck_assert_uint_eq(s, pick[0]);
	tier_slot_free_many(t, pick, 1);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 1);
	ck_assert_uint_eq(tier_used_bytes(t), (uint64_t)(NSLOTS - 1) * EXT);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data: bytes */

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
START_TEST(test_conf_unaligned_write_read)
{
	const struct range_case *c = &range_cases[_i];
	uint32_t slots[NSLOTS], mid = NSLOTS / 2;
	unsigned char *in, *out;
	long at;

	tc_alloc_all(t, slots);
	in = tc_xmalloc(c->len);
	tc_fill(in, c->len, c->off, 5);
	ck_assert_int_eq(tier_write(t, slots[mid], c->off, in, c->len),
			 (ssize_t)c->len);

	out = tc_read_slot(t, slots[mid]);
	at = tc_nonzero(out, c->off);
	ck_assert_msg(at < 0, "byte %ld before the range is not zero", at);
	at = tc_check(out + c->off, c->len, c->off, 5);
	ck_assert_msg(at < 0, "byte %ld of the range is wrong", at);
	at = tc_nonzero(out + c->off + c->len, EXT - c->off - c->len);
	ck_assert_msg(at < 0, "byte %ld after the range is not zero", at);
	free(out);

	tc_assert_slot_zero(t, slots[mid - 1]);
	tc_assert_slot_zero(t, slots[mid + 1]);

	/* read back the middle third of the range, unaligned */
	if (c->len >= 3) {
		size_t sub = c->len / 3;

		memset(in, 0, c->len);
		ck_assert_int_eq(tier_read(t, slots[mid], c->off + sub, in,
					   sub),
				 (ssize_t)sub);
		ck_assert_int_eq(tc_check(in, sub, c->off + sub, 5), -1);
	}
	free(in);
}
END_TEST

START_TEST(test_conf_overwrite_inside_slot)
{
	uint32_t s;
	unsigned char small[777], *buf;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_write_slot(t, s, 1);
	tc_fill(small, sizeof(small), 1000, 2);
	ck_assert_int_eq(tier_write(t, s, 1000, small, sizeof(small)),
			 sizeof(small));
	buf = tc_read_slot(t, s);
	ck_assert_int_eq(tc_check(buf, 1000, 0, 1), -1);
	ck_assert_int_eq(tc_check(buf + 1000, sizeof(small), 1000, 2), -1);
	ck_assert_int_eq(tc_check(buf + 1777, EXT - 1777, 1777, 1), -1);
	free(buf);
}
END_TEST

/*
 * A pseudo-random mix of writes and read-backs at unaligned ranges in
 * every slot, checked against an in-memory model of the whole tier.
 */
START_TEST(test_conf_random_io_matches_model)
{
	tc_random_io(t);
}
END_TEST

static const struct range_case zero_cases[] = {
	{ 0, EXT },	   /* the whole slot */
	{ 0, 1 },	   /* first byte */
	{ EXT - 1, 1 },	   /* last byte */
	{ 1, EXT - 2 },	   /* crosses every 64 KiB chunk boundary */
	{ 4096, 65536 },   /* exactly one chunk */
	{ 100, 65537 },	   /* one chunk and one byte */
	{ 100, 70000 },	   /* across a checksum block, unaligned */
	{ 65535, 131074 }, /* two chunks and two bytes, unaligned */
	{ EXT / 2, 0 },	   /* nothing */
};

START_TEST(test_conf_zero_range)
{
	const struct range_case *c = &zero_cases[_i];
	uint32_t s;
	unsigned char *buf;
	long at;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_write_slot(t, s, 3);
	ck_assert_int_eq(tier_zero(t, s, c->off, c->len), 0);
	buf = tc_read_slot(t, s);
	at = tc_check(buf, c->off, 0, 3);
	ck_assert_msg(at < 0, "byte %ld before the zeroed range changed", at);
	at = tc_nonzero(buf + c->off, c->len);
	ck_assert_msg(at < 0, "byte %ld of the zeroed range is not zero", at);
	at = tc_check(buf + c->off + c->len, EXT - c->off - c->len,
		      c->off + c->len, 3);
	ck_assert_msg(at < 0, "byte %ld after the zeroed range changed", at);
	free(buf);
}
END_TEST

START_TEST(test_conf_sync_keeps_data)
{
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_write_slot(t, s, 1);
	ck_assert_int_eq(tier_sync(t), 0);
	tc_assert_slot_pattern(t, s, 1);
	ck_assert_int_eq(tier_sync(t), 0);
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data: stats */

START_TEST(test_conf_stats_count_bytes_and_ops)
{
	static unsigned char buf[EXT];
	uint32_t a, b;

	ck_assert_stats(t, 0, 0, 0, 0, 0);
	ck_assert_int_eq(tier_slot_alloc(t, &a), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &b), 0);
	ck_assert_stats(t, 0, 0, 0, 0, 0); /* allocation is not I/O */

	/* what the caller asked for, not what the back end moved (a
	 * checksum block read back for a partial write is not counted) */
	ck_assert_int_eq(tier_write(t, a, 0, buf, 100), 100);
	ck_assert_int_eq(tier_write(t, b, 4095, buf, 4097), 4097);
	ck_assert_stats(t, 0, 0, 4197, 2, 0);
	ck_assert_int_eq(tier_read(t, a, 10, buf, 90), 90);
	ck_assert_int_eq(tier_read(t, b, 0, buf, EXT), EXT);
	ck_assert_int_eq(tier_read(t, b, 0, buf, 1), 1);
	ck_assert_stats(t, 90 + EXT + 1, 3, 4197, 2, 0);

	/* tier_zero is one write (from the zero mapping), counted */
	ck_assert_int_eq(tier_zero(t, a, 1, 65536 * 2 + 1), 0);
	ck_assert_stats(t, 90 + EXT + 1, 3, 4197 + 65536 * 2 + 1, 2 + 1, 0);

	/* freeing discards: no write */
	tier_slot_free(t, a);
	tier_slot_free(t, b);
	ck_assert_stats(t, 90 + EXT + 1, 3, 4197 + 65536 * 2 + 1, 3, 0);
	ck_assert_int_eq(tier_sync(t), 0);
	ck_assert_stats(t, 90 + EXT + 1, 3, 4197 + 65536 * 2 + 1, 3, 0);
	ck_assert_uint_eq(tc_stats(t).csum_errors, 0);
}
END_TEST

#define NTHREADS 4
#define STATS_ITERS 20000

static void *stats_worker(void *arg)
{
	uint32_t slot = (uint32_t)(uintptr_t)arg;
	unsigned char buf[64];

	memset(buf, (int)slot + 1, sizeof(buf));
	for (int i = 0; i < STATS_ITERS; i++) {
		if (tier_write(t, slot, (uint64_t)(i % 64) * 64, buf, 64) != 64)
			return (void *)1;
		if (tier_read(t, slot, 0, buf, 32) != 32)
			return (void *)1;
	}
	return NULL;
}

START_TEST(test_conf_stats_exact_across_threads)
{
	pthread_t th[NTHREADS];
	void *res;

	for (uintptr_t i = 0; i < NTHREADS; i++) {
		uint32_t s;

		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_int_eq(pthread_create(&th[i], NULL, stats_worker,
						(void *)(uintptr_t)s),
				 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], &res), 0);
		ck_assert_ptr_null(res);
	}
	ck_assert_stats(t, (uint64_t)NTHREADS * STATS_ITERS * 32,
			(uint64_t)NTHREADS * STATS_ITERS,
			(uint64_t)NTHREADS * STATS_ITERS * 64,
			(uint64_t)NTHREADS * STATS_ITERS, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data: the slab (TIER_CAP_PATH) */

/* Slot N is the byte range from N * extent_size of the slab: what is
 * written there is in the file (and so shared with a forked child). */
START_TEST(test_conf_data_lands_in_slab)
{
	unsigned char *buf = tc_xmalloc(EXT);
	char slab[4096];
	uint32_t s0, s1;
	int fd;

	ck_assert_int_eq(tier_slot_alloc(t, &s0), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s1), 0);
	ck_assert_uint_eq(s0, 0);
	ck_assert_uint_eq(s1, 1);
	tc_write_slot(t, s1, 3);
	tc_write_slot(t, s0, 4);
	ck_assert_int_eq(tier_sync(t), 0);
	tc_slab_path(c_dir, slab, sizeof(slab));
	fd = open(slab, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, buf, EXT, (off_t)s1 * EXT), EXT);
	ck_assert_int_eq(tc_check(buf, EXT, 0, 3), -1);
	ck_assert_int_eq(pread(fd, buf, EXT, (off_t)s0 * EXT), EXT);
	ck_assert_int_eq(tc_check(buf, EXT, 0, 4), -1);
	ck_assert_int_eq(pread(fd, buf, EXT, 2 * (off_t)EXT), EXT);
	ck_assert_int_eq(tc_nonzero(buf, EXT), -1);
	close(fd);
	free(buf);
}
END_TEST

/*
 * Observed: removing the private directory behind the tier's back (the
 * slab has no name to remove) changes nothing until tier_free() -- the
 * open fd keeps the data -- and tier_free() copes with it being gone.
 */
START_TEST(test_conf_slab_unlinked_behind_back)
{
	char priv[4096];
	uint32_t a, b;

	ck_assert_int_eq(tier_slot_alloc(t, &a), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &b), 0);
	tc_write_slot(t, a, 1);
	tc_only_entry(c_dir, priv, sizeof(priv));
	tc_rm_rf(priv);
	ck_assert_int_eq(tc_count_entries(c_dir), 0);
	tc_assert_slot_pattern(t, a, 1);
	tc_write_slot(t, b, 2);
	tc_assert_slot_pattern(t, b, 2);
	tier_slot_free(t, a);
	ck_assert_int_eq(tier_slot_alloc(t, &a), 0);
	tc_assert_slot_zero(t, a);
	ck_assert_int_eq(tier_sync(t), 0);
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
	t = tier_free(t);
	ck_assert_int_eq(tc_count_entries(c_dir), 0);
}
END_TEST

/*
 * Observed: after the slab is truncated behind the tier's back, data
 * below the new end is intact and a read of anything past it fails
 * with -EIO (the file tier: end of file inside a request; the pmem
 * tier: the SIGBUS guard), counted, rather than inventing zeros for
 * lost data; after a truncation to nothing every read fails.  Nothing
 * crashes and tier_free() leaves nothing.  (What a write past the end
 * does differs: see the back ends' suites.)
 */
START_TEST(test_conf_slab_truncated_behind_back)
{
	unsigned char *buf = tc_xmalloc(EXT);
	char slab[4096];
	uint32_t slots[NSLOTS];

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(slots[i], i); /* a fresh tier counts up */
		tc_write_slot(t, i, i + 1);
	}
	tc_slab_path(c_dir, slab, sizeof(slab));
	ck_assert_int_eq(truncate(slab, 2 * (off_t)EXT + 100), 0);

	/* below the new end: intact */
	tc_assert_slot_pattern(t, 0, 1);
	tc_assert_slot_pattern(t, 1, 2);
	/* straddling and beyond the new end */
	memset(buf, 0xee, EXT);
	ck_assert_int_eq(tier_read(t, 2, 0, buf, EXT), -EIO);
	ck_assert_int_eq(tier_read(t, 3, EXT - 1, buf, 1), -EIO);
	ck_assert_int_eq(tier_read(t, NSLOTS - 1, 0, buf, EXT), -EIO);
	ck_assert_uint_eq(tc_stats(t).io_errors, 3);
	ck_assert_int_eq(tier_last_error(t), -EIO);

	/* and a truncation to zero: every read fails, no crash */
	ck_assert_int_eq(truncate(slab, 0), 0);
	ck_assert_int_eq(tier_read(t, 0, 0, buf, 1), -EIO);
	ck_assert_int_eq(tier_read(t, NSLOTS - 1, 0, buf, EXT), -EIO);
	ck_assert_uint_eq(tc_stats(t).io_errors, 5);
	t = tier_free(t);
	ck_assert_int_eq(tc_count_entries(c_dir), 0);
	free(buf);
}
END_TEST

/*
 * TIER_CAP_CSUM (issue 18): damage on the medium is never read back as
 * data, and a write into part of a checksum block, which reads back
 * only the pieces it touches (tier.c, CSUM_PIECE) and cannot verify
 * them on their own, never blesses it: the block stays EIO after writes
 * that cover the damaged piece whole, partly, or not at all, and only a
 * write of the whole block makes it good again; the other blocks of the
 * slot are unaffected throughout.
 */
START_TEST(test_conf_partial_write_never_blesses_damage)
{
	size_t bs = (size_t)1 << t->csum_shift;
	unsigned char *buf = tc_xmalloc(EXT), bad = 0;
	uint32_t slots[NSLOTS];
	char slab[4096];
	int fd;

	ck_assert_uint_eq(bs, TIER_CSUM_BLOCK);
	tc_alloc_all(t, slots);
	tc_write_slot(t, 0, 3);
	tc_slab_path(c_dir, slab, sizeof(slab));
	fd = open(slab, O_RDWR);
	ck_assert_int_ge(fd, 0);
	/* one byte of piece 1 of block 0 changes on the medium */
	ck_assert_int_eq(pread(fd, &bad, 1, 5000), 1);
	bad ^= 0x5a;
	ck_assert_int_eq(pwrite(fd, &bad, 1, 5000), 1);
	ck_assert_int_eq(tier_read(t, 0, 0, buf, 4096), -EBADMSG);
	/* read straight into the buffer, a whole block: the damaged bytes
	 * do not stay there (zeros do) */
	memset(buf, 0xee, bs);
	ck_assert_int_eq(tier_read(t, 0, 0, buf, bs), -EBADMSG);
	ck_assert_int_eq(tc_nonzero(buf, bs), -1);
	/* the damaged piece overwritten whole: still EIO */
	tc_fill(buf, 4096, 4096, 9);
	ck_assert_int_eq(tier_write(t, 0, 4096, buf, 4096), 4096);
	ck_assert_int_eq(tier_read(t, 0, 0, buf, 4096), -EBADMSG);
	/* a partial write elsewhere in the block, and a misaligned one
	 * across two pieces: still EIO */
	tc_fill(buf, 100, 20000, 9);
	ck_assert_int_eq(tier_write(t, 0, 20000, buf, 100), 100);
	tc_fill(buf, 5000, 30000, 9);
	ck_assert_int_eq(tier_write(t, 0, 30000, buf, 5000), 5000);
	ck_assert_int_eq(tier_read(t, 0, 60000, buf, 10), -EBADMSG);
	/* each failed read counted once, as a checksum error only */
	ck_assert_uint_eq(tc_stats(t).csum_errors, 4);
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
	/* the next block was never touched by any of it */
	ck_assert_int_eq(tier_read(t, 0, bs, buf, bs), (ssize_t)bs);
	ck_assert_int_eq(tc_check(buf, bs, bs, 3), -1);
	/* partial writes into that good block keep it good and exact */
	tc_fill(buf, 4096, bs + 4096, 11);
	ck_assert_int_eq(tier_write(t, 0, bs + 4096, buf, 4096), 4096);
	tc_fill(buf, 777, bs + 9000, 11);
	ck_assert_int_eq(tier_write(t, 0, bs + 9000, buf, 777), 777);
	ck_assert_int_eq(tier_read(t, 0, bs, buf, bs), (ssize_t)bs);
	ck_assert_int_eq(tc_check(buf, 4096, bs, 3), -1);
	ck_assert_int_eq(tc_check(buf + 4096, 4096, bs + 4096, 11), -1);
	ck_assert_int_eq(tc_check(buf + 8192, 9000 - 8192, bs + 8192, 3), -1);
	ck_assert_int_eq(tc_check(buf + 9000, 777, bs + 9000, 11), -1);
	ck_assert_int_eq(tc_check(buf + 9777, bs - 9777, bs + 9777, 3), -1);
	/* a whole-block write heals block 0 */
	tc_fill(buf, bs, 0, 13);
	ck_assert_int_eq(tier_write(t, 0, 0, buf, bs), (ssize_t)bs);
	memset(buf, 0, bs);
	ck_assert_int_eq(tier_read(t, 0, 0, buf, bs), (ssize_t)bs);
	ck_assert_int_eq(tc_check(buf, bs, 0, 13), -1);
	ck_assert_uint_eq(tc_stats(t).csum_errors, 4);
	/* and a freed slot starts over: zeros, checking out */
	tier_slot_free(t, 0);
	ck_assert_int_eq(tier_slot_alloc(t, &slots[0]), 0);
	ck_assert_uint_eq(slots[0], 0);
	tc_assert_slot_zero(t, 0);
	close(fd);
	free(buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* fault */

/*
 * For each N in 1..8, of 8 alternating writes and reads only call N
 * fails, and the fault has fired exactly once it was due.  Each call
 * covers whole checksum blocks from offset 0 (64 KiB to 256 KiB), so it
 * is exactly one back end call on every kind (a partial write would
 * also read back a piece of a block).  Every read returns what the
 * writes that worked left; the stats count exactly the calls that did.
 */
START_TEST(test_conf_fault_nth_call_fails)
{
	unsigned char *buf = tc_xmalloc(EXT), *back = tc_xmalloc(EXT);
	uint64_t rb = 0, ro = 0, wb = 0, wo = 0;
	size_t written = 0;
	int nth = _i;
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_fill(buf, EXT, 0, 3);
	faulty_tier_arm(t, nth, EIO);
	for (int call = 1; call <= 8; call++) {
		size_t len = (size_t)65536 * ((call - 1) % 4 + 1);
		ssize_t r;

		ck_assert(faulty_tier_fired(t) == (call > nth));
		memset(back, 0xee, EXT);
		if (call % 2)
			r = tier_write(t, s, 0, buf, len);
		else
			r = tier_read(t, s, 0, back, len);
		if (call == nth) {
			ck_assert_int_eq(r, -EIO);
			continue;
		}
		ck_assert_int_eq(r, (ssize_t)len);
		if (call % 2) {
			wb += len;
			wo++;
			written = len > written ? len : written;
		} else {
			size_t n = len < written ? len : written;

			ck_assert_int_eq(tc_check(back, n, 0, 3), -1);
			ck_assert_int_eq(tc_nonzero(back + n, len - n), -1);
			rb += len;
			ro++;
		}
	}
	ck_assert(faulty_tier_fired(t));
	ck_assert_stats(t, rb, ro, wb, wo, 1);
	ck_assert_int_eq(tier_last_error(t), -EIO);
	/* the writes that worked are what is there */
	free(back);
	back = tc_read_slot(t, s);
	ck_assert_uint_eq(written, 3 * 65536);
	ck_assert_int_eq(tc_check(back, written, 0, 3), -1);
	ck_assert_int_eq(tc_nonzero(back + written, EXT - written), -1);
	free(back);
	free(buf);
}
END_TEST

/* An injected write failure leaves the slot's old data alone; the next
 * write works and changes exactly its bytes. */
START_TEST(test_conf_fault_failed_write_keeps_data)
{
	unsigned char *newdata = tc_xmalloc(EXT), *buf;
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_write_slot(t, s, 1);
	tc_fill(newdata, EXT, 0, 2);
	faulty_tier_arm(t, 1, EIO);
	ck_assert_int_eq(tier_write(t, s, 0, newdata, EXT), -EIO);
	faulty_tier_arm(t, 1, ENOSPC);
	ck_assert_int_eq(tier_write(t, s, 0, newdata, EXT), -ENOSPC);
	ck_assert(faulty_tier_fired(t));
	ck_assert_int_eq(tier_write(t, s, 100, newdata, 10), 10);
	ck_assert_stats(t, 0, 0, EXT + 10, 2, 2);

	buf = tc_read_slot(t, s);
	ck_assert_int_eq(tc_check(buf, 100, 0, 1), -1);
	ck_assert_int_eq(tc_check(buf + 100, 10, 0, 2), -1);
	ck_assert_int_eq(tc_check(buf + 110, EXT - 110, 110, 1), -1);
	free(buf);
	free(newdata);
}
END_TEST

START_TEST(test_conf_fault_failed_read_leaves_buffer)
{
	uint32_t s;
	unsigned char buf[4096];

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_write_slot(t, s, 1);
	memset(buf, 0x5a, sizeof(buf));
	faulty_tier_arm(t, 1, EIO);
	ck_assert_int_eq(tier_read(t, s, 0, buf, sizeof(buf)), -EIO);
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0x5a);
	ck_assert_stats(t, 0, 0, EXT, 1, 1);
	/* and the next read works */
	ck_assert_int_eq(tier_read(t, s, 0, buf, sizeof(buf)), sizeof(buf));
	ck_assert_int_eq(tc_check(buf, sizeof(buf), 0, 1), -1);
}
END_TEST

START_TEST(test_conf_fault_errno_choice)
{
	uint32_t s;
	unsigned char buf[16] = { 0 };

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	faulty_tier_arm(t, 1, ENOSPC);
	ck_assert_int_eq(tier_write(t, s, 0, buf, sizeof(buf)), -ENOSPC);
	faulty_tier_arm(t, 2, ENOMEM);
	ck_assert_int_eq(tier_read(t, s, 0, buf, sizeof(buf)), 16);
	ck_assert_int_eq(tier_read(t, s, 0, buf, sizeof(buf)), -ENOMEM);
	/* errno 0 means the default, EIO */
	faulty_tier_arm(t, 1, 0);
	ck_assert_int_eq(tier_read(t, s, 0, buf, sizeof(buf)), -EIO);
	ck_assert_stats(t, 16, 1, 0, 0, 3);
}
END_TEST

/*
 * Issue 16, item 7: a back end's errno that means nothing to a program
 * (a dead network tier: ENOTCONN, ESTALE, ...) reaches the caller as
 * EIO, counted in io_errors, the raw errno kept for the log; the
 * filesystem's EDQUOT is a full medium for tierfs (ENOSPC).
 */
START_TEST(test_conf_fault_enotconn_is_eio)
{
	uint32_t s;
	unsigned char buf[16] = { 0 };

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_int_eq(tier_last_error(t), 0);
	faulty_tier_arm(t, 1, ENOTCONN);
	ck_assert_int_eq(tier_read(t, s, 0, buf, sizeof(buf)), -EIO);
	ck_assert_int_eq(tier_last_error(t), -ENOTCONN);
	faulty_tier_arm(t, 1, ESTALE);
	ck_assert_int_eq(tier_write(t, s, 0, buf, sizeof(buf)), -EIO);
	ck_assert_int_eq(tier_last_error(t), -ESTALE);
	faulty_tier_arm(t, 1, EDQUOT);
	ck_assert_int_eq(tier_write(t, s, 0, buf, sizeof(buf)), -ENOSPC);
	ck_assert_int_eq(tier_last_error(t), -EDQUOT);
	ck_assert_stats(t, 0, 0, 0, 0, 3);
}
END_TEST

START_TEST(test_conf_fault_disarm)
{
	uint32_t s;
	unsigned char buf[16] = { 0 };

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert(faulty_tier_fired(t)); /* nothing armed */
	faulty_tier_arm(t, 3, EIO);
	ck_assert(!faulty_tier_fired(t));
	faulty_tier_disarm(t);
	ck_assert(faulty_tier_fired(t));
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(tier_write(t, s, 0, buf, sizeof(buf)), 16);
	ck_assert_stats(t, 0, 0, 160, 10, 0);
}
END_TEST

/* A fault in tier_zero(): the error comes back, counted, and since the
 * zeros go in one write nothing was zeroed. */
START_TEST(test_conf_fault_in_zero)
{
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_write_slot(t, s, 4);
	faulty_tier_arm(t, 1, EIO);
	ck_assert_int_eq(tier_zero(t, s, 0, EXT), -EIO);
	ck_assert_stats(t, 0, 0, EXT, 1, 1);
	tc_assert_slot_pattern(t, s, 4);
}
END_TEST

/* Freeing a slot discards; it spends no read or write fault. */
START_TEST(test_conf_fault_not_consumed_by_free)
{
	uint32_t s;
	unsigned char buf[16] = { 0 };

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_write_slot(t, s, 1);
	faulty_tier_arm(t, 1, EIO);
	tier_slot_free(t, s);
	ck_assert(!faulty_tier_fired(t));
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_int_eq(tier_write(t, s, 0, buf, sizeof(buf)), -EIO);
	ck_assert(faulty_tier_fired(t));
	tc_assert_slot_zero(t, s);
}
END_TEST

/* An armed fault fires exactly once even with many threads calling. */
#define FAULT_ITERS 10000

static void *fault_worker(void *arg)
{
	uint32_t slot = (uint32_t)(uintptr_t)arg;
	unsigned char buf[32] = { 0 };
	uintptr_t nfail = 0;

	for (int i = 0; i < FAULT_ITERS; i++) {
		ssize_t r = tier_write(t, slot, 0, buf, sizeof(buf));

		if (r == -EIO)
			nfail++;
		else if (r != sizeof(buf))
			return (void *)UINTPTR_MAX;
	}
	return (void *)nfail;
}

START_TEST(test_conf_fault_fires_once_across_threads)
{
	pthread_t th[NTHREADS];
	uintptr_t total = 0;
	void *res;

	for (uint32_t i = 0, s; i < NTHREADS; i++) {
		/* the workers write slots 0..NTHREADS-1: hold them */
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_eq(s, i);
	}
	/* half-way through the calls (a write into part of a checksum
	 * block is two back end calls: sooner there) */
	faulty_tier_arm(t, NTHREADS * FAULT_ITERS / 2, EIO);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, fault_worker,
						(void *)i),
				 0);
	for (int i = 0; i < NTHREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], &res), 0);
		ck_assert((uintptr_t)res != UINTPTR_MAX);
		total += (uintptr_t)res;
	}
	ck_assert_uint_eq(total, 1);
	ck_assert(faulty_tier_fired(t));
	ck_assert_stats(t, 0, 0, (NTHREADS * FAULT_ITERS - 1) * 32,
			NTHREADS * FAULT_ITERS - 1, 1);
}
END_TEST

/*
 * Faults at the other back end calls (tier_fault_op).  A fault of one
 * class is not spent by calls of another.  Where the back end reserves
 * what a charge takes (ops->reserve), a reserve that fails fails the
 * charge with nothing changed, counted; one that says the medium is
 * full gives -ENOSPC and the tier knows its medium is full.  Where it
 * has no reserve, a charge makes no reserve call to fail.
 */
START_TEST(test_conf_fault_reserve)
{
	uint64_t used;
	uint32_t s, s2;

	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	used = tier_used_bytes(t);
	ck_assert_uint_eq(used, 0);
	faulty_tier_arm_ops(t, TIER_FAULT_RESERVE, 1, EIO);
	ck_assert_int_eq(tier_sync(t), 0); /* not a reserve: not counted */
	ck_assert(!faulty_tier_fired(t));
	if (!t->ops->reserve) {
		ck_assert_int_eq(tier_charge(t, s, 0, EXT, NULL), 0);
		ck_assert(!faulty_tier_fired(t));
		ck_assert_uint_eq(tier_used_bytes(t), EXT);
		ck_assert_uint_eq(tc_stats(t).io_errors, 0);
		tc_write_slot(t, s, 4);
		tc_assert_slot_pattern(t, s, 4);
		faulty_tier_disarm(t);
		tier_slot_free(t, s);
		ck_assert_uint_eq(tier_used_bytes(t), 0);
		return;
	}
	ck_assert_int_eq(tier_charge(t, s, 0, 4096, NULL), -EIO);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(tier_used_bytes(t), used);
	ck_assert_uint_eq(tier_held(t, s), 0);
	ck_assert_uint_eq(tc_stats(t).io_errors, 1);
	ck_assert_int_eq(tier_last_error(t), -EIO);
	ck_assert(!tier_medium_full(t));
	/* the next charge works */
	ck_assert_int_eq(tier_charge(t, s, 0, EXT, NULL), 0);
	ck_assert_uint_eq(tier_used_bytes(t), used + EXT);
	ck_assert_uint_eq(tier_held(t, s), EXT);
	/* reads and writes do not count down a reserve fault */
	faulty_tier_arm_ops(t, TIER_FAULT_RESERVE, 1, ENOSPC);
	tc_write_slot(t, s, 4);
	tc_assert_slot_pattern(t, s, 4);
	ck_assert(!faulty_tier_fired(t));
	/* a medium that says it is full: -ENOSPC, nothing charged, and the
	 * tier knows its medium is full */
	ck_assert_int_eq(tier_slot_get(t, &s2), 0);
	ck_assert_int_eq(tier_charge(t, s2, 0, 8192, NULL), -ENOSPC);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(tier_used_bytes(t), used + EXT);
	ck_assert_uint_eq(tier_held(t, s2), 0);
	ck_assert_uint_eq(tc_stats(t).io_errors, 2);
	ck_assert(tier_medium_full(t));
	tc_assert_slot_pattern(t, s, 4);
	tier_slot_free(t, s2);
	tier_slot_free(t, s);
	ck_assert_uint_eq(tier_used_bytes(t), 0);
}
END_TEST

/*
 * A discard that fails when a slot is freed is made good by writing
 * zeros, so the slot comes back reading zeros and is not leaked; one
 * that fails when units are given back keeps them held (they read as
 * zeros either way); a run whose discard fails is freed slot by slot,
 * nothing leaked.
 */
START_TEST(test_conf_fault_discard)
{
	unsigned char *buf = tc_xmalloc(EXT);
	uint64_t freed;
	uint32_t s, s2;

	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	ck_assert_int_eq(tier_charge(t, s, 0, EXT, NULL), 0);
	tc_write_slot(t, s, 5);
	/* freed with its discard failing: zeros are written instead */
	faulty_tier_arm_ops(t, TIER_FAULT_DISCARD, 1, EIO);
	tier_slot_free(t, s);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(t->nleaked, 0);
	ck_assert_uint_eq(tier_used_bytes(t), 0);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_int_eq(tier_slot_get(t, &s2), 0);
	ck_assert_uint_eq(s2, s); /* the free stack hands it back */
	ck_assert_int_eq(tier_charge(t, s2, 0, EXT, NULL), 0);
	tc_assert_slot_zero(t, s2);

	/* a hole punched whose discard fails: zeros, the units stay held */
	tc_write_slot(t, s2, 6);
	faulty_tier_arm_ops(t, TIER_FAULT_DISCARD, 1, EIO);
	ck_assert_int_eq(tier_punch(t, s2, 0, EXT / 2, &freed), 0);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(freed, 0);
	ck_assert_uint_eq(tier_used_bytes(t), EXT);
	ck_assert_uint_eq(tier_held(t, s2), EXT);
	ck_assert_int_eq(tier_read(t, s2, 0, buf, EXT), (ssize_t)EXT);
	ck_assert_int_eq(tc_nonzero(buf, EXT / 2), -1);
	ck_assert_int_eq(tc_check(buf + EXT / 2, EXT / 2, EXT / 2, 6), -1);
	/* the same punch without the fault gives the space back */
	ck_assert_int_eq(tier_punch(t, s2, 0, EXT / 2, &freed), 0);
	ck_assert_uint_eq(freed, EXT / 2);
	ck_assert_uint_eq(tier_used_bytes(t), EXT / 2);
	ck_assert_uint_eq(tier_held(t, s2), EXT / 2);
	ck_assert_int_eq(tier_read(t, s2, 0, buf, EXT), (ssize_t)EXT);
	ck_assert_int_eq(tc_nonzero(buf, EXT / 2), -1);
	ck_assert_int_eq(tc_check(buf + EXT / 2, EXT / 2, EXT / 2, 6), -1);
	tier_slot_free(t, s2);
	ck_assert_uint_eq(tier_used_bytes(t), 0);

	/* a run (slots 0..3) whose first discard fails */
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_eq(s, i == 0 ? s2 : i);
		tc_write_slot(t, s, 7 + i);
	}
	ck_assert_uint_eq(s2, 0);
	faulty_tier_arm_ops(t, TIER_FAULT_DISCARD, 1, EIO);
	tier_slot_free_run(t, 0, 4);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(t->nleaked, 0);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(tier_used_bytes(t), 0);
	/* freed slot by slot after the failure, still handed out in order */
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_eq(s, i);
		tc_assert_slot_zero(t, s);
	}
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
	free(buf);
}
END_TEST

/* A sync that fails is an error counted like any other; the data stays. */
START_TEST(test_conf_fault_sync)
{
	uint32_t s;

	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	ck_assert_int_eq(tier_charge(t, s, 0, EXT, NULL), 0);
	faulty_tier_arm_ops(t, TIER_FAULT_SYNC, 1, EIO);
	tc_write_slot(t, s, 7);
	tc_assert_slot_pattern(t, s, 7);
	ck_assert(!faulty_tier_fired(t));
	ck_assert_int_eq(tier_sync(t), -EIO);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(tc_stats(t).io_errors, 1);
	ck_assert_int_eq(tier_last_error(t), -EIO);
	ck_assert_int_eq(tier_sync(t), 0);
	tc_assert_slot_pattern(t, s, 7);
	tier_slot_free(t, s);
}
END_TEST

/*
 * A slot whose discard fails is zeroed by writing, 64 KiB at a time,
 * counted as writes and not as errors, and then reused like any other.
 */
START_TEST(test_conf_free_discard_fails_zeroes_by_writing)
{
	uint32_t slots[NSLOTS], s;

	tc_alloc_all(t, slots);
	tc_write_slot(t, slots[5], 1);
	faulty_tier_arm_ops(t, TIER_FAULT_DISCARD, 1, EIO);
	tier_slot_free(t, slots[5]);
	ck_assert(faulty_tier_fired(t));
	ck_assert_stats(t, 0, 0, EXT + EXT, 1 + EXT / 65536, 0);
	ck_assert_uint_eq(t->nleaked, 0);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 1);
	ck_assert_uint_eq(tier_used_bytes(t), (uint64_t)(NSLOTS - 1) * EXT);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_uint_eq(s, slots[5]);
	tc_assert_slot_zero(t, s);
}
END_TEST

/*
 * Only what the slot holds is zeroed when its discard fails: 4 KiB
 * written in the middle of a slot costs a 4 KiB write, not an extent's
 * (which on a sparse medium would allocate the holes), and the slot
 * still reads as zeros everywhere when handed out again.
 */
START_TEST(test_conf_free_discard_fails_zeroes_only_held)
{
	unsigned char buf[4096];
	struct tier_stats st0;
	uint32_t s, s2;

	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(tier_slot_get(t, &s), 0);
	ck_assert_int_eq(tier_charge(t, s, EXT / 2, sizeof(buf), NULL), 0);
	ck_assert_int_eq(tier_write(t, s, EXT / 2, buf, sizeof(buf)),
			 (ssize_t)sizeof(buf));
	ck_assert_uint_eq(tier_held(t, s), sizeof(buf));
	st0 = tc_stats(t);
	faulty_tier_arm_ops(t, TIER_FAULT_DISCARD, 1, EIO);
	tier_slot_free(t, s);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(tc_stats(t).write_bytes - st0.write_bytes,
			  sizeof(buf));
	ck_assert_uint_eq(tc_stats(t).write_ops - st0.write_ops, 1);
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);
	ck_assert_uint_eq(t->nleaked, 0);
	ck_assert_uint_eq(tier_used_bytes(t), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s2), 0);
	ck_assert_uint_eq(s2, s);
	tc_assert_slot_zero(t, s2);
}
END_TEST

/*
 * The back end's discard failing for good (a medium that cannot punch
 * holes): the tier's ops swapped for a copy whose discard fails, so that
 * an injected write fault can fail the zeroing too.  The copy keeps
 * every other method, close included, so tier_free() works with it.
 */
static struct tier_ops no_discard_ops;

static int discard_fails(struct tier *tt, uint32_t slot, uint64_t off,
			 uint64_t len)
{
	return -EOPNOTSUPP;
}

static int discard_run_fails(struct tier *tt, uint32_t first, uint32_t n)
{
	return -EOPNOTSUPP;
}

static void use_no_discard_ops(void)
{
	no_discard_ops = *t->ops;
	no_discard_ops.discard = discard_fails;
	if (no_discard_ops.discard_run)
		no_discard_ops.discard_run = discard_run_fails;
	t->ops = &no_discard_ops;
}

/*
 * Discard fails and so does the zeroing write: the slot holds old data
 * and must never be handed out again, its space stays counted; other
 * slots still cycle (zeroed by writing).
 */
START_TEST(test_conf_free_failing_zero_leaks_slot)
{
	uint32_t slots[NSLOTS], s;

	use_no_discard_ops();
	tc_alloc_all(t, slots);
	tc_write_slot(t, slots[5], 1);
	faulty_tier_arm(t, 1, EIO);
	tier_slot_free(t, slots[5]);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(tc_stats(t).io_errors, 2); /* failed write + leak */
	ck_assert_uint_eq(t->nleaked, 1);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 1);
	ck_assert_uint_eq(tier_used_bytes(t), (uint64_t)NSLOTS * EXT);
	ck_assert_uint_eq(tier_free_slots(t), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);

	tier_slot_free(t, slots[6]);
	ck_assert_uint_eq(t->nleaked, 1);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_uint_eq(s, slots[6]);
	tc_assert_slot_zero(t, s);
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
}
END_TEST

/*
 * A leaked slot is neither handed out again nor counted as free space
 * (statfs), also once every other slot is free again.
 */
START_TEST(test_conf_leaked_slot_is_not_free)
{
	uint32_t slots[NSLOTS], s, leak;

	use_no_discard_ops();
	tc_alloc_all(t, slots);
	leak = slots[5];
	faulty_tier_arm(t, 1, EIO);
	tier_slot_free(t, leak);
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	ck_assert_uint_eq(tier_free_slots(t), 0);
	for (uint32_t i = 0; i < NSLOTS; i++)
		if (slots[i] != leak)
			tier_slot_free(t, slots[i]);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(tier_used_bytes(t), EXT);
	ck_assert_uint_eq(tier_free_slots(t), NSLOTS - 1);
	ck_assert_uint_eq(tier_avail_bytes(t), (uint64_t)(NSLOTS - 1) * EXT);
	for (uint32_t i = 0; i < NSLOTS - 1; i++) {
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_ne(s, leak);
		tc_assert_slot_zero(t, s);
	}
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	ck_assert_uint_eq(tc_stats(t).io_errors, 2);
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads */

#define MT_NSLOTS 64u
#define MT_HOLD 24 /* per thread; 4 * 24 > 64, so ENOSPC happens */
/* per thread; where slots live on a medium every allocation and free is
 * a system call or two (fallocate(), a punch), so fewer there */
#define MT_ITERS 20000
#define MT_ITERS_MEDIUM 5000

/* mt_owner[slot]: 0 free, else thread id + 1; atomically exchanged */
static int mt_owner[MT_NSLOTS];

struct mt_arg {
	int id;
	unsigned long nalloc, nenospc;
	const char *err; /* first problem seen, or NULL */
};

static void *mt_alloc_worker(void *p)
{
	struct mt_arg *a = p;
	uint32_t held[MT_HOLD];
	unsigned n = 0, rnd = (unsigned)a->id * 7919 + 1;
	unsigned char tag[8], back[8];
	int iters = caps & TIER_CAP_PATH ? MT_ITERS_MEDIUM : MT_ITERS;

	for (int i = 0; i < iters && !a->err; i++) {
		rnd = rnd * 1103515245u + 12345u;
		if (n < MT_HOLD && ((rnd >> 16) & 1)) {
			uint32_t s;
			int r = tier_slot_alloc(t, &s), prev;

			if (r == -ENOSPC) {
				a->nenospc++;
				continue;
			}
			if (r != 0 || s >= MT_NSLOTS) {
				a->err = "bad alloc result";
				break;
			}
			prev = __atomic_exchange_n(&mt_owner[s], a->id + 1,
						   __ATOMIC_ACQ_REL);
			if (prev != 0) {
				a->err = "slot handed to two threads";
				break;
			}
			/* the slot is ours: it must be zero, then keep data */
			memset(back, 0xff, sizeof(back));
			if (tier_read(t, s, 4000, back, sizeof(back)) != 8 ||
			    memcmp(back, "\0\0\0\0\0\0\0\0", 8)) {
				a->err = "new slot not zero";
				break;
			}
			memset(tag, a->id + 1, sizeof(tag));
			if (tier_write(t, s, 4000, tag, sizeof(tag)) != 8) {
				a->err = "write failed";
				break;
			}
			held[n++] = s;
			a->nalloc++;
		} else if (n > 0) {
			unsigned k = (rnd >> 4) % n;
			uint32_t s = held[k];

			held[k] = held[--n];
			if (tier_read(t, s, 4000, back, sizeof(back)) != 8 ||
			    back[0] != a->id + 1 || back[7] != a->id + 1) {
				a->err = "slot data changed under us";
				break;
			}
			__atomic_store_n(&mt_owner[s], 0, __ATOMIC_RELEASE);
			tier_slot_free(t, s);
		}
		if (tier_used_slots(t) > MT_NSLOTS) {
			a->err = "used above capacity";
			break;
		}
	}
	while (n > 0) {
		uint32_t s = held[--n];

		__atomic_store_n(&mt_owner[s], 0, __ATOMIC_RELEASE);
		tier_slot_free(t, s);
	}
	return NULL;
}

/* Allocation and freeing on 4 threads at once: no slot handed to two,
 * every slot comes back, the counts exact afterwards. */
START_TEST(test_conf_concurrent_alloc_free_exact)
{
	pthread_t th[NTHREADS];
	struct mt_arg args[NTHREADS];
	unsigned long total = 0, enospc = 0;
	uint32_t s;

	remake(MT_NSLOTS, 4096);
	memset(mt_owner, 0, sizeof(mt_owner));
	memset(args, 0, sizeof(args));
	for (int i = 0; i < NTHREADS; i++) {
		args[i].id = i;
		ck_assert_int_eq(pthread_create(&th[i], NULL, mt_alloc_worker,
						&args[i]),
				 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_msg(!args[i].err, "thread %d: %s", i, args[i].err);
		total += args[i].nalloc;
		enospc += args[i].nenospc;
	}
	ck_assert_uint_gt(total, MT_NSLOTS);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(tier_used_bytes(t), 0);
	ck_assert_uint_eq(tier_free_slots(t), MT_NSLOTS);
	ck_assert_uint_eq(tc_stats(t).io_errors, 0);

	/* exactly nslots come back out, all distinct, then -ENOSPC */
	for (uint32_t i = 0; i < MT_NSLOTS; i++) {
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_lt(s, MT_NSLOTS);
		ck_assert_int_eq(__atomic_exchange_n(&mt_owner[s], 1,
						     __ATOMIC_RELAXED),
				 0);
	}
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	ck_assert_uint_eq(tier_free_slots(t), 0);
	(void)enospc; /* likely but not guaranteed > 0; not asserted */
}
END_TEST

#define MW_THREADS 8
#define MW_SLOTS_EACH 4
#define MW_ROUNDS 40

struct mw_arg {
	int id;
	uint32_t slots[MW_SLOTS_EACH];
	const char *err; /* first problem, or NULL */
};

/* Round @r of a writer: an unaligned range of one of its slots. */
static void mw_range(int r, uint64_t *off, size_t *len)
{
	*off = ((uint64_t)r * 4099) % (EXT / 2);
	*len = EXT - *off - (size_t)r;
}

static void *mw_writer(void *p)
{
	struct mw_arg *a = p;
	unsigned char *buf = malloc(EXT), *back = malloc(EXT);

	if (!buf || !back) {
		a->err = "out of memory";
		goto out;
	}
	for (int r = 0; r < MW_ROUNDS && !a->err; r++) {
		unsigned seed = (unsigned)a->id * 100 + (unsigned)r;
		uint32_t s = a->slots[r % MW_SLOTS_EACH];
		uint64_t off;
		size_t len;

		mw_range(r, &off, &len);
		tc_fill(buf, len, off, seed);
		if (tier_write(t, s, off, buf, len) != (ssize_t)len) {
			a->err = "write failed";
			break;
		}
		if (tier_read(t, s, off, back, len) != (ssize_t)len ||
		    tc_check(back, len, off, seed) >= 0) {
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

/* Writers on 8 threads, each on its own slots: every thread reads back
 * what it wrote, and afterwards each slot holds its last round. */
START_TEST(test_conf_concurrent_writers)
{
	pthread_t th[MW_THREADS];
	struct mw_arg args[MW_THREADS];
	unsigned char *back = tc_xmalloc(EXT);
	uint64_t rbytes = 0, wbytes = 0;
	uint32_t s;

	remake(MW_THREADS * MW_SLOTS_EACH, EXT);
	memset(args, 0, sizeof(args));
	for (int i = 0; i < MW_THREADS; i++) {
		args[i].id = i;
		for (int j = 0; j < MW_SLOTS_EACH; j++)
			ck_assert_int_eq(tier_slot_alloc(t, &args[i].slots[j]),
					 0);
		ck_assert_int_eq(
			pthread_create(&th[i], NULL, mw_writer, &args[i]), 0);
	}
	for (int i = 0; i < MW_THREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_msg(!args[i].err, "thread %d: %s", i, args[i].err);
	}
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	for (int i = 0; i < MW_THREADS; i++) {
		for (int r = MW_ROUNDS - MW_SLOTS_EACH; r < MW_ROUNDS; r++) {
			uint64_t off;
			size_t len;

			mw_range(r, &off, &len);
			ck_assert_int_eq(
				tier_read(t, args[i].slots[r % MW_SLOTS_EACH],
					  off, back, len),
				(ssize_t)len);
			ck_assert_int_eq(
				tc_check(back, len, off,
					 (unsigned)i * 100 + (unsigned)r),
				-1);
		}
	}
	/* every call counted once: the rounds' writes and read-backs, and
	 * the reads above */
	for (int r = 0; r < MW_ROUNDS; r++) {
		uint64_t off;
		size_t len;

		mw_range(r, &off, &len);
		wbytes += len;
		rbytes += len;
		if (r >= MW_ROUNDS - MW_SLOTS_EACH)
			rbytes += len;
	}
	ck_assert_stats(t, MW_THREADS * rbytes,
			MW_THREADS * (MW_ROUNDS + MW_SLOTS_EACH),
			MW_THREADS * wbytes, MW_THREADS * MW_ROUNDS, 0);
	free(back);
}
END_TEST

/* ------------------------------------------------------------------ */

void tier_conformance(Suite *s, const struct tier_conformance_setup *setup)
{
	TCase *tc;
	bool path, csum;

	cs = *setup;
	if (!cs.make)
		cs.make = tier_conformance_make;
	if (!cs.drop)
		cs.drop = tier_conformance_drop;
	caps = tier_kind_caps(cs.kind);
	path = caps & TIER_CAP_PATH;
	csum = caps & TIER_CAP_CSUM;

	tc = tcase_create("conformance_api");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_dir, teardown_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_conf_caps_decide_setup);
	if (path) {
		tcase_add_test(tc, test_conf_open_makes_private_slab);
		tcase_add_test(tc, test_conf_open_modes_ignore_umask);
		tcase_add_test(tc, test_conf_open_two_tiers_one_dir);
		tcase_add_test(tc, test_conf_open_symlink_to_dir);
		tcase_add_loop_test(tc, test_conf_open_bad_path, 0,
				    sizeof(bad_path_cases) /
					    sizeof(bad_path_cases[0]));
		tcase_add_test(tc, test_conf_open_unwritable);
		tcase_add_test(tc, test_conf_open_larger_than_free_space);
		tcase_add_test(tc, test_conf_open_free_space_on_tmpfs);
		tcase_add_test(tc, test_conf_free_after_backing_dir_removed);
		tcase_add_test(tc, test_conf_killed_leaves_no_data);
	}
	suite_add_tcase(s, tc);

	tc = tcase_create("conformance_data");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_conf_alloc_until_enospc);
	tcase_add_test(tc, test_conf_free_one_when_full_reallocs_it);
	tcase_add_test(tc, test_conf_interleaved_alloc_free_counts);
	tcase_add_test(tc, test_conf_fresh_slots_read_zeros);
	tcase_add_test(tc, test_conf_freed_slot_reads_zeros);
	tcase_add_test(tc, test_conf_free_run);
	tcase_add_test(tc, test_conf_free_many);
	tcase_add_loop_test(tc, test_conf_unaligned_write_read, 0,
			    sizeof(range_cases) / sizeof(range_cases[0]));
	tcase_add_test(tc, test_conf_overwrite_inside_slot);
	tcase_add_test(tc, test_conf_random_io_matches_model);
	tcase_add_loop_test(tc, test_conf_zero_range, 0,
			    sizeof(zero_cases) / sizeof(zero_cases[0]));
	tcase_add_test(tc, test_conf_sync_keeps_data);
	tcase_add_test(tc, test_conf_stats_count_bytes_and_ops);
	tcase_add_test(tc, test_conf_stats_exact_across_threads);
	if (path) {
		tcase_add_test(tc, test_conf_data_lands_in_slab);
		tcase_add_test(tc, test_conf_slab_unlinked_behind_back);
		tcase_add_test(tc, test_conf_slab_truncated_behind_back);
	}
	if (path && csum)
		tcase_add_test(tc,
			       test_conf_partial_write_never_blesses_damage);
	suite_add_tcase(s, tc);

	tc = tcase_create("conformance_fault");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_conf_fault_nth_call_fails, 1, 9);
	tcase_add_test(tc, test_conf_fault_failed_write_keeps_data);
	tcase_add_test(tc, test_conf_fault_failed_read_leaves_buffer);
	tcase_add_test(tc, test_conf_fault_errno_choice);
	tcase_add_test(tc, test_conf_fault_enotconn_is_eio);
	tcase_add_test(tc, test_conf_fault_disarm);
	tcase_add_test(tc, test_conf_fault_in_zero);
	tcase_add_test(tc, test_conf_fault_not_consumed_by_free);
	tcase_add_test(tc, test_conf_fault_fires_once_across_threads);
	tcase_add_test(tc, test_conf_fault_reserve);
	tcase_add_test(tc, test_conf_fault_discard);
	tcase_add_test(tc, test_conf_fault_sync);
	tcase_add_test(tc, test_conf_free_discard_fails_zeroes_by_writing);
	tcase_add_test(tc, test_conf_free_discard_fails_zeroes_only_held);
	tcase_add_test(tc, test_conf_free_failing_zero_leaks_slot);
	tcase_add_test(tc, test_conf_leaked_slot_is_not_free);
	suite_add_tcase(s, tc);

	tc = tcase_create("conformance_threads");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_conf_concurrent_alloc_free_exact);
	tcase_add_test(tc, test_conf_concurrent_writers);
	suite_add_tcase(s, tc);
}
