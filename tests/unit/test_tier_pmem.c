// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tier_pmem.c -- Check suite for the PMem tier (tiers/tier_pmem.c)
 * on an ordinary file in a temporary directory.  The contract every back
 * end shares -- and, for a back end with a path and checksums, the
 * private directory and slab, path checks at open, the sweep of a killed
 * process's leftovers, the slab removed or truncated behind the tier's
 * back, damage caught by the checksums -- is the conformance suite,
 * tier_conformance.c, which this runs for TIER_PMEM.  Here is what only
 * the pmem tier does: the space it reserves at open, kept when slots are
 * freed and when others fill the filesystem; libpmem's pmem path
 * (forced); and the SIGBUS guard -- stores and loads past a truncated
 * slab's end fail that call with -EIO, also on a thread with every
 * signal blocked, and a SIGBUS that is not the tier's still reaches its
 * old handler.
 *
 * Both write paths: libpmem says "not pmem" for a file in /tmp, so the
 * tests run the memcpy + msync path, and the "forced" case sets
 * PMEM_IS_PMEM_FORCE=1 before libpmem first looks at it (in the forked
 * test process) and runs the pmem_memcpy_nodrain + pmem_drain path.  A
 * whole run with PMEM_IS_PMEM_FORCE=1 in the environment (the
 * tier_pmem_forced test) runs every test, the conformance suite's too,
 * on the pmem path.
 *
 * Each test gets a fresh directory (checked fixture) inside a per-case
 * directory that the unchecked fixture removes in the parent process.
 * Tests that mount a tmpfs do so in a private mount namespace of the
 * forked test process and are skipped (tap_skip(): a TAP "# SKIP") when
 * that is not allowed or CK_FORK=no.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <libpmem.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tier.h"
#include "tier_ops.h"
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
	tc_mkdtemp(t_base, sizeof(t_base), NULL, "test_tier_pmem");
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
	ck_assert_int_eq(tier_create("pmem", TIER_PMEM, t_dir,
				     (uint64_t)NSLOTS * EXT, EXT, &t),
			 0);
	ck_assert_ptr_nonnull(t);
}

/* ------------------------------------------------------------------ */
/* space reserved at open */

/* A freed slot is punched out and reserved again: the slab keeps every
 * block it reserved at open, and the slot reads zeros. */
START_TEST(test_tier_pmem_freed_slots_keep_space)
{
	uint32_t slots[NSLOTS];
	char slab[4096];
	struct stat st;

	tc_slab_path(t_dir, slab, sizeof(slab));
	ck_assert(!t->dev_shared);
	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_write_slot(t, slots[i], i + 1);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tier_slot_free(t, slots[i]);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(t->stats.io_errors, 0);
	ck_assert_int_eq(stat(slab, &st), 0);
	ck_assert_int_eq(st.st_size, (off_t)NSLOTS * EXT);
	ck_assert_int_ge(st.st_blocks * 512, (off_t)NSLOTS * EXT);
	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_assert_slot_zero(t, slots[i]);
}
END_TEST

/*
 * On a small tmpfs: the size check is exact, and the space reserved at
 * open stays the tier's when others fill the filesystem -- writes into
 * every slot, and into slots freed and reused, still succeed.
 */
START_TEST(test_tier_pmem_reserved_space_survives_full_fs)
{
	unsigned char *buf = tc_xmalloc(EXT);
	uint32_t slots[8];
	char filler[4096];
	struct tier *t2 = NULL;
	int fd;

	if (!tc_private_mounts() ||
	    mount("tmpfs", t_dir, "tmpfs", 0, "size=4m,mode=0755") < 0) {
		tap_skip("cannot mount a tmpfs (needs CAP_SYS_ADMIN in a "
		       "private mount namespace and CK_FORK not 'no')");
		free(buf);
		return;
	}
	ck_assert_uint_eq(tc_avail(t_dir), 4u << 20);
	ck_assert_int_eq(tier_create("x", TIER_PMEM, t_dir, (4u << 20) + 4096,
				     4096, &t),
			 -ENOSPC);
	ck_assert_int_eq(tc_count_entries(t_dir), 0);
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
	ck_assert_uint_lt(tc_avail(t_dir), EXT);

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < 8; i++)
		tc_write_slot(t, slots[i], i + 1);
	for (uint32_t i = 0; i < 8; i++) {
		tier_slot_free(t, slots[i]);
		ck_assert_int_eq(tier_slot_alloc(t, &slots[i]), 0);
		tc_assert_slot_zero(t, slots[i]);
		tc_write_slot(t, slots[i], i + 10);
	}
	for (uint32_t i = 0; i < 8; i++)
		tc_assert_slot_pattern(t, slots[i], i + 10);
	ck_assert_uint_eq(t->stats.io_errors, 0);
	t = tier_free(t);
	(void)unlink(filler);
	ck_assert_int_eq(tc_count_entries(t_dir), 0);
	(void)umount(t_dir);
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
	tc_random_io(t); /* leaves every slot allocated, 0..NSLOTS-1 */
	for (uint32_t i = 0; i < NSLOTS; i++)
		tier_slot_free(t, i);
	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		tc_assert_slot_zero(t, slots[i]);
	ck_assert_int_eq(tier_zero(t, slots[0], 1, EXT - 2), 0);
	ck_assert_int_eq(tier_sync(t), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the SIGBUS guard */

/*
 * Observed, on top of the conformance suite's truncation: after the slab
 * is truncated behind the tier's back, stores past the new end raise
 * SIGBUS as loads do, which the guard turns into -EIO for that call;
 * below the end data is intact; freeing a slot past the end works.  In
 * the second round the calls come from a thread with every signal
 * blocked, as worker threads of libfuse 2 (and some daemons) are.
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
	if (tier_read(t, 0, 0, buf, 100) != 100 ||
	    tc_check(buf, 100, 0, 1) >= 0)
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

START_TEST(test_tier_pmem_truncated_slab_guarded)
{
	char slab[4096];
	uint32_t slots[NSLOTS];
	pthread_t th;
	void *err;

	tc_alloc_all(t, slots);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(slots[i], i);
		tc_write_slot(t, i, i + 1);
	}
	tc_slab_path(t_dir, slab, sizeof(slab));
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
	ck_assert_int_eq(tc_count_entries(t_dir), 0);
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

	tc = tcase_create("space");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tier_pmem_freed_slots_keep_space);
	suite_add_tcase(s, tc);

	tc = tcase_create("open");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_dir, teardown_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tier_pmem_reserved_space_survives_full_fs);
	tcase_add_test(tc, test_tier_pmem_forced_pmem_path);
	suite_add_tcase(s, tc);

	tc = tcase_create("sigbus");
	tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
	tcase_add_checked_fixture(tc, setup_tier, teardown_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, test_tier_pmem_truncated_slab_guarded, 0, 2);
	tcase_add_test(tc, test_tier_pmem_foreign_sigbus_still_fatal);
	suite_add_tcase(s, tc);

	tier_conformance(s, &(struct tier_conformance_setup){
				    .kind = TIER_PMEM,
			    });
	return s;
}

int main(void)
{
	return tap_run(tier_pmem_suite());
}
