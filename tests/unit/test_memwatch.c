// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_memwatch.c -- Check suite for fs/memwatch.c, the memory follower
 * (issue 18): the decision (shrink by the shortfall, a stall step at
 * most once a second, growth only after a calm spell and by half the
 * excess, never past the configured size), and the sampling of
 * /proc/meminfo and a cgroup v2 tree written as the kernel writes them
 * into a temporary directory.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memwatch.h"
#include "tap.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static struct mem_sample calm(int64_t spare)
{
	struct mem_sample s = { .short_by = -1, .spare = spare,
				.psi_full10 = 0 };

	return s;
}

START_TEST(test_memwatch_shrinks_by_shortfall)
{
	struct memwatch_tier st = { 0 };
	struct mem_sample s = { .short_by = (int64_t)(300 * MiB),
				.spare = -(int64_t)(600 * MiB),
				.psi_full10 = 0 };

	/* holds 1G under a limit of 2G: the limit drops to 1G - 300M */
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, GiB, 2 * GiB, &s, 1000),
			  GiB - 300 * MiB);
	/* the same shortfall again before the migrator moved anything:
	 * the limit does not compound */
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, GiB, GiB - 300 * MiB,
					  &s, 1250),
			  GiB - 300 * MiB);
	/* a shortfall larger than what the tier holds: down to 0 */
	s.short_by = (int64_t)(4 * GiB);
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, GiB, GiB, &s, 1500), 0);
	ck_assert_int_eq(st.calm_since_ms, 0);
}
END_TEST

START_TEST(test_memwatch_psi_step_once_a_second)
{
	struct memwatch_tier st = { 0 };
	struct mem_sample s = { .short_by = -1, .spare = -1,
				.psi_full10 = MEMWATCH_PSI_FULL };
	uint64_t l;

	st.last_psi_ms = -MEMWATCH_PSI_GAP_MS;
	l = memwatch_decide(&st, 2 * GiB, 1600 * MiB, 2 * GiB, &s, 0);
	ck_assert_uint_eq(l, 1500 * MiB); /* 1/16 of what it holds */
	/* 250 ms later, still stalled: no second step yet */
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, 1600 * MiB, l, &s, 250),
			  l);
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, 1500 * MiB, l, &s,
					  MEMWATCH_PSI_GAP_MS),
			  1500 * MiB - 1500 * MiB / 16);
	/* a stall while memory is plentiful is someone else's: no step */
	s.spare = (int64_t)GiB;
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, GiB, GiB, &s,
					  10 * MEMWATCH_PSI_GAP_MS),
			  GiB);
}
END_TEST

START_TEST(test_memwatch_grows_after_calm)
{
	struct memwatch_tier st = { 0 };
	struct mem_sample s = calm((int64_t)(800 * MiB));
	int64_t t = 5000;

	/* the first calm sample starts the clock */
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, 0, GiB, &s, t), GiB);
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, 0, GiB, &s,
					  t + MEMWATCH_CALM_MS - 1),
			  GiB);
	/* then half the excess */
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, 0, GiB, &s,
					  t + MEMWATCH_CALM_MS),
			  GiB + 400 * MiB);
	/* never past the configured size */
	s = calm((int64_t)(64 * GiB));
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, 0, GiB + 400 * MiB, &s,
					  t + 2 * MEMWATCH_CALM_MS),
			  2 * GiB);
	/* within the band (spare <= 0): hold, and the calm clock stops */
	s = calm(-1);
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, 0, GiB, &s,
					  t + 10 * MEMWATCH_CALM_MS),
			  GiB);
	ck_assert_int_eq(st.calm_since_ms, 0);
	/* nothing known about memory: hold */
	s = calm(INT64_MAX);
	ck_assert_uint_eq(memwatch_decide(&st, 2 * GiB, 0, GiB, &s, t), GiB);
	/* a limit given above the size is taken as the size */
	s = calm((int64_t)GiB);
	ck_assert_uint_eq(memwatch_decide(&st, GiB, 0, 2 * GiB, &s, t), GiB);
}
END_TEST

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void mk(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(mkdir(path, 0700), 0);
}

static void sample(uint64_t reserve, struct mem_sample *s)
{
	char a[128], b[128], c[128];

	snprintf(a, sizeof(a), "%s/meminfo", dir);
	snprintf(b, sizeof(b), "%s/cgroup", dir);
	snprintf(c, sizeof(c), "%s/mountinfo", dir);
	memwatch_sample(a, b, c, reserve, s);
}

START_TEST(test_memwatch_sample_files)
{
	struct mem_sample s;
	char line[512];

	snprintf(dir, sizeof(dir), "/tmp/tierfs-mw.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* nothing readable: nothing known */
	sample(0, &s);
	ck_assert_int_le(s.short_by, 0);
	ck_assert_int_eq(s.spare, INT64_MAX);
	ck_assert(s.psi_full10 < 0);

	/* the machine: 16 GiB, 3 GiB available; reserve 1/16 = 1 GiB */
	put("meminfo", "MemTotal:       16777216 kB\n"
		       "MemFree:         1048576 kB\n"
		       "MemAvailable:    3145728 kB\n");
	sample(0, &s);
	ck_assert_int_eq(s.short_by, -(int64_t)(2 * GiB));
	ck_assert_int_eq(s.spare, (int64_t)GiB);
	/* an explicit reserve of 2.5 GiB: 0.5 GiB spare... short by -0.5 */
	sample(2 * GiB + 512 * MiB, &s);
	ck_assert_int_eq(s.short_by, -(int64_t)(512 * MiB));
	ck_assert_int_eq(s.spare, -(int64_t)(2 * GiB));

	/* a cgroup v2 tree: the job's cgroup has memory.high 512M and
	 * holds 500M, 100M of it page cache on the file LRU */
	mk("v2");
	mk("v2/sys");
	mk("v2/sys/tierfs");
	put("cgroup", "0::/sys/tierfs\n");
	snprintf(line, sizeof(line),
		 "22 1 0:5 / /proc rw - proc proc rw\n"
		 "30 25 0:26 / %s/v2 rw,nosuid,nodev - cgroup2 cgroup2 rw\n",
		 dir);
	put("mountinfo", line);
	put("v2/sys/tierfs/memory.high", "536870912\n");
	put("v2/sys/tierfs/memory.max", "max\n");
	put("v2/sys/tierfs/memory.current", "524288000\n");
	put("v2/sys/tierfs/memory.stat", "anon 419430400\n"
					 "file 104857600\n"
					 "active_file 52428800\n"
					 "inactive_file 52428800\n"
					 "shmem 0\n");
	put("v2/sys/tierfs/memory.pressure",
	    "some avg10=12.50 avg60=3.00 avg300=1.00 total=123\n"
	    "full avg10=7.25 avg60=2.00 avg300=0.50 total=100\n");
	sample(0, &s);
	/* room 512M - 400M = 112M against a reserve of 64M (the minimum;
	 * 1/16 of 512M is 32M): not short, spare 112 - 128 = -16M */
	ck_assert_int_eq(s.short_by, -(int64_t)(48 * MiB));
	ck_assert_int_eq(s.spare, -(int64_t)(16 * MiB));
	ck_assert(s.psi_full10 > 7.2 && s.psi_full10 < 7.3);

	/* the parent's memory.max is tighter: 450M, holding all of it
	 * (its file pages count for nothing without a memory.stat) */
	put("v2/sys/memory.max", "471859200\n");
	put("v2/sys/memory.current", "471859200\n");
	sample(0, &s);
	ck_assert_int_eq(s.short_by, (int64_t)(64 * MiB));

	/* in the root cgroup: no pressure file is read, no limit applies */
	put("cgroup", "0::/\n");
	sample(0, &s);
	ck_assert(s.psi_full10 < 0);
	ck_assert_int_eq(s.spare, (int64_t)GiB);

	/* a hybrid system: the memory controller on v1, a cgroup2 without
	 * controllers beside it; v1 counts the hierarchy's file pages */
	mk("v1");
	mk("v1/job");
	put("cgroup", "4:memory:/job\n1:cpu:/\n0::/\n");
	snprintf(line, sizeof(line),
		 "35 31 0:32 / %s/v1 rw,relatime - cgroup cgroup rw,memory\n"
		 "41 31 0:38 / %s/v2 rw,relatime - cgroup2 cgroup2 rw\n",
		 dir, dir);
	put("mountinfo", line);
	put("v1/memory.limit_in_bytes", "9223372036854771712\n");
	put("v1/job/memory.limit_in_bytes", "1073741824\n");
	put("v1/job/memory.usage_in_bytes", "943718400\n");
	put("v1/job/memory.stat", "cache 104857600\n"
				  "active_file 1\n"
				  "inactive_file 1\n"
				  "total_active_file 62914560\n"
				  "total_inactive_file 41943040\n");
	sample(300 * MiB, &s);
	/* room 1024M - (900M - 100M) = 224M against 300M: short by 76M */
	ck_assert_int_eq(s.short_by, (int64_t)(76 * MiB));
	ck_assert(s.psi_full10 < 0);
	snprintf(line, sizeof(line), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(line), 0);
}
END_TEST

static Suite *memwatch_suite(void)
{
	Suite *s = suite_create("memwatch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_memwatch_shrinks_by_shortfall);
	tcase_add_test(tc, test_memwatch_psi_step_once_a_second);
	tcase_add_test(tc, test_memwatch_grows_after_calm);
	tcase_add_test(tc, test_memwatch_sample_files);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(memwatch_suite());
}
