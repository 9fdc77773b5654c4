// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tier_file.c -- Check suite for the file tier (tiers/tier_file.c)
 * and its io_uring engine (tiers/uring.c).  The contract every back end
 * shares -- and, for a back end with a path and checksums, the private
 * directory and slab, path checks at open, the sweep of a killed
 * process's leftovers, the slab removed or truncated behind the tier's
 * back, damage caught by the checksums -- is the conformance suite,
 * tier_conformance.c, which this runs for TIER_FILE.  Here is what only
 * the file tier does: a sparse slab whose blocks follow the data (freed
 * slots and runs punched out, reserving ahead as an extent grows), large
 * requests split over many SQEs, the pread()/pwrite() fallback, one ring
 * per thread freed at thread exit and a fresh one after fork(), kernel
 * errors passed through from cqe->res (EFAULT), a write past a truncated
 * slab's end, bulk copies kept out of the page cache (O_DIRECT), the
 * filesystem filling up behind the tier's back, free space capped by the
 * filesystem and shared between tiers on one; and tier_path_within().
 *
 * Each test gets a fresh directory (checked fixture) inside a per-case
 * directory that the unchecked fixture removes in the parent process, so
 * nothing is left behind even when a test dies.  Tests that need to
 * mount (a tiny tmpfs) do so in a private mount namespace of the forked
 * test process and are skipped (tap_skip(): a TAP "# SKIP") when that is
 * not allowed or CK_FORK=no.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "faulty_tier.h"
#include "tier.h"
#include "tier_ops.h"
#include "uring.h"
#include "tap.h"
#include "tier_conformance.h"
#include "banned.h"

#define EXT TC_EXT
#define NSLOTS TC_NSLOTS

/* Per-case base directory (unchecked fixture, made in the parent). */
static char t_base[4096];
/* Per-test directory (checked fixture) and the tier made in it. */
static char t_dir[4096];
static struct tier *t;

static void setup_base(void)
{
	tc_mkdtemp(t_base, sizeof(t_base), NULL, "test_tier_file");
}

static void teardown_base(void)
{
	tc_rm_rf(t_base);
}

static void setup_dir(void)
{
	tc_mkdtemp(t_dir, sizeof(t_dir), t_base, "t");
	t = NULL;
}

static void teardown_dir(void)
{
	t = tier_free(t);
	tc_rm_rf(t_dir);
}

static void setup_tier(void)
{
	setup_dir();
	ck_assert_int_eq(tier_create("file", TIER_FILE, t_dir,
				     (uint64_t)NSLOTS * EXT, EXT, &t),
			 0);
	ck_assert_ptr_nonnull(t);
}

/* The slab of the fixture's tier (tc_slab_path()). */
static void t_slab_path(char *out, size_t size)
{
	tc_slab_path(t_dir, out, size);
}

/* Bytes of data the slab holds on the filesystem (st_blocks). */
static off_t t_slab_bytes(const char *slab)
{
	struct stat st;

	ck_assert_int_eq(stat(slab, &st), 0);
	return (off_t)st.st_blocks * 512;
}

/* ------------------------------------------------------------------ */
/* space: the sparse slab */

/*
 * The slab is sparse and its blocks follow the data: written slots hold
 * theirs, a freed slot's are punched out (the slab keeps its size), and
 * when every slot is free the slab holds (almost) nothing again.
 */
START_TEST(test_tier_file_freed_slots_give_space_back)
{
	uint32_t slots[NSLOTS];
	char slab[4096];
	struct stat st;

	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(t_slab_bytes(slab), 0);
	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_write_slot(t, slots[i], i + 1);
	ck_assert_int_eq(tier_sync(t), 0);
	ck_assert_int_ge(t_slab_bytes(slab), (off_t)NSLOTS * EXT);
	tier_slot_free(t, slots[3]);
	ck_assert_int_le(t_slab_bytes(slab), (off_t)NSLOTS * EXT);
	ck_assert_int_ge(t_slab_bytes(slab), (off_t)(NSLOTS - 1) * EXT);
	for (uint32_t i = 0; i < NSLOTS; i++)
		if (i != 3)
			tier_slot_free(t, slots[i]);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)t->vslots * EXT);
	ck_assert_int_lt(t_slab_bytes(slab), (off_t)EXT);
	ck_assert_uint_eq(t->stats.io_errors, 0);
}
END_TEST

/* tier_slot_free_run() gives a run's blocks back with one punch
 * (ops->discard_run), and allocation hands the run out in order. */
START_TEST(test_tier_file_free_run_one_punch)
{
	uint32_t slots[NSLOTS], s;
	char slab[4096];
	off_t before;

	ck_assert_ptr_nonnull(t->ops->discard_run);
	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_write_slot(t, i, i + 1);
	t_slab_path(slab, sizeof(slab));
	before = t_slab_bytes(slab);
	ck_assert_int_ge(before, (off_t)NSLOTS * EXT);
	tier_slot_free_run(t, 3, 9);
	ck_assert_int_le(t_slab_bytes(slab), before - 9 * (off_t)EXT + EXT);
	for (uint32_t i = 3; i < 12; i++) {
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_eq(s, i);
	}
	ck_assert_uint_eq(t->stats.io_errors, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* space: reserving ahead */

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

	tc_fill(buf, unit, (uint64_t)u * unit, 7);
	ck_assert_int_eq(tier_charge(t, slot, (uint64_t)u * unit, unit, NULL),
			 0);
	ck_assert_int_eq(tier_write(t, slot, (uint64_t)u * unit, buf, unit),
			 (ssize_t)unit);
}

/*
 * Reserving ahead (tier_charge(), ops->reserve_ahead): an extent written
 * front to back in 4 KiB units reserves its space in growing steps --
 * after units 0 and 1 the slab holds 4 units, after unit 4 ten -- yet
 * never more than twice what the slot holds, and a lone unit (a small
 * file, a hole written first) reserves only itself.  Giving units back
 * lowers the reserved prefix, so a write into them reserves again.  The
 * data reads back exact throughout.
 */
START_TEST(test_tier_file_reserve_ahead)
{
	const off_t unit = 4096;
	unsigned char *buf = tc_xmalloc(EXT), *want = tc_xmalloc(EXT);
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
	tc_fill(want, EXT, 0, 7);
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
 * A slot is freed by discarding only what it may hold (slot_span()):
 * its held units and its reserved prefix, which may reach past them.
 * A slot holding units 0 and 1 has reserved 0..3; freed, with others,
 * one at a time and in a batch, the slab gives all of it back.
 */
START_TEST(test_tier_file_free_gives_back_reserved_ahead)
{
	const off_t unit = 4096;
	unsigned char *buf = tc_xmalloc((size_t)unit);
	uint32_t s[4];
	char slab[4096];

	t_slab_path(slab, sizeof(slab));
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_int_eq(tier_slot_get(t, &s[i]), 0);
		t_put_unit(s[i], 0, buf);
		t_put_unit(s[i], 1, buf);
	}
	t_assert_slab(slab, 4 * 4 * unit); /* 2 held + 2 ahead, each */
	tier_slot_free(t, s[0]);
	t_assert_slab(slab, 3 * 4 * unit);
	tier_slot_free_many(t, s + 1, 3);
	t_assert_slab(slab, 0);
	ck_assert_uint_eq(tier_used_bytes(t), 0);
	ck_assert_uint_eq(t->stats.io_errors, 0);
	free(buf);
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
	unsigned char *buf = tc_xmalloc(EXT);
	char filler[4096];
	uint32_t s;
	int fd;

	t = tier_free(t); /* the fixture's; this test makes its own */
	if (!tc_private_mounts() ||
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
	tc_fill(buf, EXT, 0, 5);
	ck_assert_int_eq(tier_write(t, s, 0, buf, EXT), EXT);
	tc_assert_slot_pattern(t, s, 5);
	t = tier_free(t);
	ck_assert_int_eq(tc_count_entries(t_dir), 0);
	(void)umount(t_dir);
	free(buf);
}
END_TEST

/*
 * Wait until tier_free_slots(t) is @want: a condition that turns true
 * once the tier's cached statvfs() expires (TIER_STATVFS_MS), polled;
 * fails after 10 s.
 */
static void t_wait_free_slots(uint32_t want)
{
	const struct timespec poll = { 0, 2 * 1000 * 1000 };
	struct timespec now;
	time_t deadline;

	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &now), 0);
	deadline = now.tv_sec + 10;
	while (tier_free_slots(t) != want) {
		ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &now), 0);
		ck_assert_msg(now.tv_sec < deadline,
			      "free slots %u, want %u after 10 s",
			      tier_free_slots(t), want);
		(void)nanosleep(&poll, NULL);
	}
}

/*
 * A file tier's free slots are capped by what the filesystem under it
 * has free (statvfs, cached for TIER_STATVFS_MS); once a reserve finds
 * the medium full the tier is full -- no more reserve attempts, no more
 * io_errors -- until space comes back.
 */
START_TEST(test_tier_file_free_capped_by_statvfs)
{
	unsigned char *buf = tc_xmalloc(EXT);
	char filler[4096];
	uint32_t s;
	ssize_t w;
	int fd;

	t = tier_free(t);
	if (!tc_private_mounts() ||
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
	/* seen once the cached statvfs() is older than TIER_STATVFS_MS */
	t_wait_free_slots(2);
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
	tc_write_slot(t, s, 3);
	tc_assert_slot_pattern(t, s, 3);
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
	if (!tc_private_mounts() ||
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
	ck_assert_msg(strstr(why, "'a', 'b'") &&
			      strstr(why, "together need 6M, but it has 4M free"),
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

/* ------------------------------------------------------------------ */
/* io_uring */

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

	/* a tier of its own extent size, in place of the fixture's */
	t = tier_free(t);
	ck_assert_int_eq(
		tier_create("big", TIER_FILE, t_dir, 3ull * ext, ext, &t), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s0), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s1), 0);
	buf = tc_xmalloc(ext);
	back = tc_xmalloc(ext);

	tc_fill(buf, ext, 0, 11);
	ck_assert_int_eq(tier_write(t, s1, 0, buf, ext), (ssize_t)ext);
	memset(back, 0, ext);
	ck_assert_int_eq(tier_read(t, s1, 0, back, ext), (ssize_t)ext);
	ck_assert_int_eq(tc_check(back, ext, 0, 11), -1);

	/* odd offset and length: every piece boundary is unaligned */
	tc_fill(buf, ext - 3, 1, 12);
	ck_assert_int_eq(tier_write(t, s0, 1, buf, ext - 3),
			 (ssize_t)(ext - 3));
	memset(back, 0xee, ext);
	ck_assert_int_eq(tier_read(t, s0, 0, back, ext), (ssize_t)ext);
	ck_assert_uint_eq(back[0], 0);
	at = tc_check(back + 1, ext - 3, 1, 12);
	ck_assert_msg(at < 0, "byte %ld differs", at);
	ck_assert_uint_eq(back[ext - 2], 0);
	ck_assert_uint_eq(back[ext - 1], 0);

	/* a read starting inside a piece and ending inside another */
	memset(back, 0, ext);
	ck_assert_int_eq(tier_read(t, s1, URING_CHUNK - 5, back,
				   3 * URING_CHUNK + 10),
			 (ssize_t)(3 * URING_CHUNK + 10));
	ck_assert_int_eq(
		tc_check(back, 3 * URING_CHUNK + 10, URING_CHUNK - 5, 11), -1);
	tc_assert_slot_zero(t, 2);
	free(back);
	free(buf);
}
END_TEST

/* The pread()/pwrite() path used where the kernel refuses io_uring. */
START_TEST(test_tier_file_sync_fallback)
{
	uint32_t slots[NSLOTS];

	uring_set_sync_fallback(true);
	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_write_slot(t, slots[i], 20 + i);
	uring_set_sync_fallback(false);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_assert_slot_pattern(t, slots[i], 20 + i);
	uring_set_sync_fallback(true);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_assert_slot_pattern(t, slots[i], 20 + i);
	tier_slot_free(t, slots[0]);
	ck_assert_int_eq(tier_slot_alloc(t, &slots[0]), 0);
	tc_assert_slot_zero(t, slots[0]);
	uring_set_sync_fallback(false);
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads and processes */

/*
 * Each thread has its own ring, made by its first I/O and freed when
 * the thread exits: 8 threads that each wrote once all have a ring
 * between two barriers, none once pthread_join() returned.  (The data
 * of writers on many threads is the conformance suite's.)
 */
#define RING_THREADS 8

static pthread_barrier_t ring_barrier;
/*
 * Least uring_live_rings() any thread saw between the barriers.  Relaxed:
 * the check-then-store may lose a smaller value to a race, but every
 * thread sees the same count there, so any value kept is the count.
 */
static unsigned ring_min;

static void *t_ring_thread(void *arg)
{
	uint32_t slot = (uint32_t)(uintptr_t)arg;
	unsigned char *buf = malloc(EXT);
	const char *err = NULL;
	unsigned seen;

	if (!buf)
		return (void *)"out of memory";
	tc_fill(buf, EXT, 0, slot + 1);
	/* the first I/O makes this thread's ring */
	if (tier_write(t, slot, 0, buf, EXT) != EXT)
		err = "write failed";
	/* all rings exist between the two barriers: none has exited */
	(void)pthread_barrier_wait(&ring_barrier);
	seen = uring_live_rings();
	if (seen < __atomic_load_n(&ring_min, __ATOMIC_RELAXED))
		__atomic_store_n(&ring_min, seen, __ATOMIC_RELAXED);
	(void)pthread_barrier_wait(&ring_barrier);
	if (!err && (tier_read(t, slot, 0, buf, EXT) != EXT ||
		     tc_check(buf, EXT, 0, slot + 1) >= 0))
		err = "read back differs";
	free(buf);
	return (void *)err;
}

START_TEST(test_tier_file_ring_per_thread)
{
	pthread_t th[RING_THREADS];
	unsigned before = uring_live_rings();
	void *err;

	ring_min = UINT32_MAX;
	ck_assert_int_eq(
		pthread_barrier_init(&ring_barrier, NULL, RING_THREADS), 0);
	for (uintptr_t i = 0; i < RING_THREADS; i++) {
		uint32_t s;

		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_eq(s, i);
		ck_assert_int_eq(pthread_create(&th[i], NULL, t_ring_thread,
						(void *)i),
				 0);
	}
	for (int i = 0; i < RING_THREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], &err), 0);
		ck_assert_msg(!err, "thread %d: %s", i, (const char *)err);
	}
	pthread_barrier_destroy(&ring_barrier);
	ck_assert_uint_eq(ring_min, before + RING_THREADS);
	/* key destructors ran before pthread_join() returned */
	ck_assert_uint_eq(uring_live_rings(), before);
	for (uint32_t i = 0; i < RING_THREADS; i++)
		tc_assert_slot_pattern(t, i, i + 1);
	ck_assert_uint_eq(t->stats.io_errors, 0);
}
END_TEST

START_TEST(test_tier_file_ring_thread_exit)
{
	unsigned before;
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	tc_write_slot(t, s, 1); /* this thread now has a ring */
	before = uring_live_rings();
	ck_assert_uint_ge(before, 1);
	uring_thread_exit();
	ck_assert_uint_eq(uring_live_rings(), before - 1);
	uring_thread_exit(); /* no ring: nothing to do */
	ck_assert_uint_eq(uring_live_rings(), before - 1);
	tc_assert_slot_pattern(t, s, 1); /* makes a new one */
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
	unsigned char *buf = tc_xmalloc(EXT);
	char slab[4096];
	uint32_t s0, s1;
	pid_t pid;
	int status, fd;

	ck_assert_int_eq(tier_slot_alloc(t, &s0), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s1), 0);
	tc_write_slot(t, s0, 1); /* the parent has a ring */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		bool ok;

		tc_fill(buf, EXT, 0, 2);
		ok = tier_write(t, s1, 0, buf, EXT) == EXT &&
		     tier_read(t, s1, 0, buf, EXT) == EXT &&
		     tc_check(buf, EXT, 0, 2) < 0 &&
		     tier_read(t, s0, 0, buf, EXT) == EXT &&
		     tc_check(buf, EXT, 0, 1) < 0;
		_exit(ok ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	tc_assert_slot_pattern(t, s0, 1);
	t_slab_path(slab, sizeof(slab));
	fd = open(slab, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, buf, EXT, (off_t)s1 * EXT), EXT);
	ck_assert_int_eq(tc_check(buf, EXT, 0, 2), -1);
	close(fd);
	free(buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the medium: kernel errors, a truncated slab, the page cache */

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
	tc_write_slot(t, s, 4);
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
	tc_assert_slot_pattern(t, s, 4);
	ck_assert_int_eq(munmap(map, 2u << 20), 0);
}
END_TEST

/*
 * Observed, on top of the conformance suite's truncation: a request
 * that meets the truncated slab's end fails at the back end with -EIO
 * (end of file inside a request), not only through tier_read().  A
 * write past the end succeeds and extends the file again; a slot below
 * the re-extended end is then a hole where data used to be, which the
 * back end reads as zeros -- tier.c's checksums turn that into -EBADMSG
 * (the caller's EIO and "checksum mismatch" log line).
 */
START_TEST(test_tier_file_slab_truncated_write_extends)
{
	unsigned char *buf = tc_xmalloc(EXT);
	char slab[4096];
	uint32_t slots[NSLOTS];

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(slots[i], i); /* a fresh tier counts up */
		tc_write_slot(t, slots[i], i + 1);
	}
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(truncate(slab, 2 * (off_t)EXT + 100), 0);
	ck_assert_int_eq(t->ops->read(t, 2, 0, buf, 4096), -EIO);
	ck_assert_int_eq(tier_read(t, 2, 0, buf, EXT), -EIO);

	/* writing slot 3 extends the file; slot 2 is now mostly a hole */
	tc_write_slot(t, 3, 7);
	tc_assert_slot_pattern(t, 3, 7);
	ck_assert_int_eq(t->ops->read(t, 2, 0, buf, EXT), EXT);
	ck_assert_int_eq(tc_check(buf, 100, 0, 3), -1);
	ck_assert_int_eq(tc_nonzero(buf + 100, EXT - 100), -1);
	ck_assert_int_eq(tier_read(t, 2, 0, buf, EXT), -EBADMSG);
	ck_assert_uint_eq(t->stats.csum_errors, 1);
	tc_assert_slot_pattern(t, 0, 1);
	t = tier_free(t);
	ck_assert_int_eq(tc_count_entries(t_dir), 0);
	free(buf);
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
	tc_alloc_all(t, slots);

	/* inside a bulk copy: no page of the slot cached */
	tc_fill(buf, EXT, 0, 21);
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
	tc_fill(buf, EXT, 0, 22);
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
 * --page-cache only: a program's request, aligned in the slab but not in
 * memory (a FUSE payload after its header), goes direct through a pool
 * buffer inside a bulk section: no page of it cached, the data the same.
 * Twelve threads at once, more than the pool holds: those that find no
 * buffer wait for one, and every one reads back what it wrote.
 */
#define BOUNCE_THREADS 12

struct bounce_arg {
	struct tier *t;
	uint32_t slot;
	unsigned seed;
	bool ok;
};

static void *t_bounce_thread(void *arg)
{
	struct bounce_arg *a = arg;
	unsigned char *w = malloc(EXT + 64), *r = malloc(EXT + 64);

	a->ok = false;
	if (!w || !r)
		goto out;
	tc_fill(w + 16, EXT, 0, a->seed);
	tier_bulk_begin();
	for (int i = 0; i < 8; i++) {
		if (tier_write(a->t, a->slot, 0, w + 16, EXT) != (ssize_t)EXT ||
		    tier_read(a->t, a->slot, 0, r + 48, EXT) != (ssize_t)EXT ||
		    memcmp(r + 48, w + 16, EXT))
			goto out_end;
	}
	a->ok = true;
out_end:
	tier_bulk_end();
out:
	free(w);
	free(r);
	return NULL;
}

START_TEST(test_tier_file_bulk_unaligned_bounced)
{
	struct bounce_arg args[BOUNCE_THREADS];
	pthread_t th[BOUNCE_THREADS];
	unsigned char *w = malloc(EXT + 64), *r = malloc(EXT + 64);
	uint32_t slots[NSLOTS];
	char slab[4096];
	struct statfs sf;
	bool check_cache;

	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(r);
	t_slab_path(slab, sizeof(slab));
	ck_assert_int_eq(statfs(t_dir, &sf), 0);
	check_cache = sf.f_type != 0x01021994 /* TMPFS_MAGIC */ &&
		      t_slab_has_direct_fd();
	tc_alloc_all(t, slots);

	tc_fill(w + 16, EXT, 0, 31);
	tier_bulk_begin();
	ck_assert_int_eq(tier_write(t, slots[0], 0, w + 16, EXT), EXT);
	tier_bulk_end();
	if (check_cache)
		ck_assert_uint_eq(t_cached_pages(slab, (uint64_t)slots[0] * EXT,
						 EXT),
				  0);
	tier_bulk_begin();
	ck_assert_int_eq(tier_read(t, slots[0], 0, r + 48, EXT), EXT);
	tier_bulk_end();
	ck_assert_mem_eq(r + 48, w + 16, EXT);
	if (check_cache)
		ck_assert_uint_eq(t_cached_pages(slab, (uint64_t)slots[0] * EXT,
						 EXT),
				  0);

	for (unsigned i = 0; i < BOUNCE_THREADS; i++) {
		args[i] = (struct bounce_arg){ t, slots[1 + i], 40 + i, false };
		ck_assert_int_eq(pthread_create(&th[i], NULL, t_bounce_thread,
						&args[i]),
				 0);
	}
	for (unsigned i = 0; i < BOUNCE_THREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_msg(args[i].ok, "thread %u read back other data", i);
	}
	ck_assert_uint_eq(t->stats.io_errors, 0);
	ck_assert_uint_eq(t->stats.csum_errors, 0);
	free(w);
	free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* tier_path_within() (issue 11) */

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

/*
 * tier_write_new(): whole pieces written into a slot that reads as zeros
 * update their blocks' checksums without reading the old pieces back,
 * and the sums are exact -- the blocks read back right, piece by piece
 * and whole -- and still catch damage elsewhere in the block.
 */
START_TEST(test_tier_file_write_new_exact_sums)
{
	size_t bs = (size_t)1 << t->csum_shift;
	unsigned char *buf = tc_xmalloc(EXT), bad = 0x77;
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
	tc_fill(buf, 4096, 4096, 21);
	ck_assert_int_eq(tier_write_new(t, s, 4096, buf, 4096), 4096);
	tc_fill(buf, 4096, 3 * 4096, 21);
	ck_assert_int_eq(tier_write_new(t, s, 3 * 4096, buf, 4096), 4096);
	tc_fill(buf, 16384, 2 * bs, 21);
	ck_assert_int_eq(tier_write_new(t, s, 2 * bs, buf, 16384), 16384);
	/* three back end writes and not one read */
	ck_assert_int_eq(t->fault_countdown, 1000 - 3);
	faulty_tier_disarm(t);
	ck_assert_int_eq(tier_read(t, s, 0, buf, EXT), (ssize_t)EXT);
	ck_assert_int_eq(tc_nonzero(buf, 4096), -1);
	ck_assert_int_eq(tc_check(buf + 4096, 4096, 4096, 21), -1);
	ck_assert_int_eq(tc_nonzero(buf + 8192, 4096), -1);
	ck_assert_int_eq(tc_check(buf + 3 * 4096, 4096, 3 * 4096, 21), -1);
	ck_assert_int_eq(tc_nonzero(buf + 4 * 4096, 2 * bs - 4 * 4096), -1);
	ck_assert_int_eq(tc_check(buf + 2 * bs, 16384, 2 * bs, 21), -1);
	ck_assert_int_eq(tc_nonzero(buf + 2 * bs + 16384, EXT - 2 * bs - 16384),
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

static Suite *tier_file_suite(void)
{
	Suite *s = suite_create("tier_file");
	TCase *tc;

	tc = tcase_create("paths");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_dir, teardown_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tier_path_within);
	suite_add_tcase(s, tc);

	tc = tcase_create("space");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tier_file_freed_slots_give_space_back);
	tcase_add_test(tc, test_tier_file_free_run_one_punch);
	tcase_add_test(tc, test_tier_file_reserve_ahead);
	tcase_add_test(tc, test_tier_file_free_gives_back_reserved_ahead);
	tcase_add_test(tc, test_tier_file_filesystem_full_gives_enospc);
	tcase_add_test(tc, test_tier_file_free_capped_by_statvfs);
	tcase_add_test(tc, test_tier_file_shared_filesystem);
	suite_add_tcase(s, tc);

	tc = tcase_create("uring");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_tier_file_large_requests_split, 0,
			    sizeof(big_extents) / sizeof(big_extents[0]));
	tcase_add_test(tc, test_tier_file_sync_fallback);
	tcase_add_test(tc, test_tier_file_ring_per_thread);
	tcase_add_test(tc, test_tier_file_ring_thread_exit);
	tcase_add_test(tc, test_tier_file_fork_gets_own_ring);
	tcase_add_test(tc, test_tier_file_kernel_error_passed_through);
	suite_add_tcase(s, tc);

	tc = tcase_create("medium");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tier_file_slab_truncated_write_extends);
	tcase_add_test(tc, test_tier_file_bulk_bypasses_page_cache);
	tcase_add_test(tc, test_tier_file_bulk_unaligned_bounced);
	tcase_add_test(tc, test_tier_file_write_new_exact_sums);
	suite_add_tcase(s, tc);

	tier_conformance(s, &(struct tier_conformance_setup){
				    .kind = TIER_FILE,
			    });
	return s;
}

int main(void)
{
	return tap_run(tier_file_suite());
}
