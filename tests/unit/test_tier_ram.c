// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tier_ram.c -- Check suite for tiers/tier.h over the RAM back end
 * (tiers/tier_ram.c).  The contract every back end shares -- the slot
 * allocator and its counts, zeroed and freed slots, unaligned I/O,
 * tier_zero(), the stats counters, fault injection, the free fallback
 * and its leak path, threads -- is the conformance suite,
 * tier_conformance.c, which this runs for TIER_RAM.  Here is what only
 * the RAM tier, or no back end at all, is about: tier_create()'s
 * argument checks (names, kinds, extent sizes, sizes, 2^32 slots) and
 * the tiers it accepts, tier_free(NULL), the kind names and declared
 * capabilities of every kind, tier_errno()'s table, and the unit bitmap
 * (tier_charge(), tier_punch(), tier_held_next()) against a model.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "tier.h"
#include "tier_ops.h"
#include "macro.h"
#include "tap.h"
#include "tier_conformance.h"
#include "banned.h"

/* ------------------------------------------------------------------ */
/* create */

static const char name33[] = "abcdefghijklmnopqrstuvwxyz0123456";
static const char name32[] = "abcdefghijklmnopqrstuvwxyz012345";

static const struct create_case {
	const char *name;
	int kind;
	uint64_t size;
	uint32_t extent;
} bad_create_cases[] = {
	/* names */
	{ NULL, TIER_RAM, 1 << 20, 4096 },
	{ "", TIER_RAM, 1 << 20, 4096 },
	{ name33, TIER_RAM, 1 << 20, 4096 },
	{ "a b", TIER_RAM, 1 << 20, 4096 },
	{ "a/b", TIER_RAM, 1 << 20, 4096 },
	{ "a.b", TIER_RAM, 1 << 20, 4096 },
	{ "ram:1", TIER_RAM, 1 << 20, 4096 },
	{ "a=b", TIER_RAM, 1 << 20, 4096 },
	{ "r\xc3\xa4m", TIER_RAM, 1 << 20, 4096 },
	{ "ram\n", TIER_RAM, 1 << 20, 4096 },
	/* kinds */
	{ "ram", _TIER_KIND_INVALID, 1 << 20, 4096 },
	{ "ram", _TIER_KIND_MAX, 1 << 20, 4096 },
	{ "ram", 42, 1 << 20, 4096 },
	/* extent sizes: not a power of two, or below 4096 */
	{ "ram", TIER_RAM, 1 << 20, 0 },
	{ "ram", TIER_RAM, 1 << 20, 1 },
	{ "ram", TIER_RAM, 1 << 20, 512 },
	{ "ram", TIER_RAM, 1 << 20, 2048 },
	{ "ram", TIER_RAM, 1 << 20, 4095 },
	{ "ram", TIER_RAM, 1 << 20, 4097 },
	{ "ram", TIER_RAM, 1 << 20, 6144 },
	{ "ram", TIER_RAM, 1 << 20, 12288 },
	{ "ram", TIER_RAM, 1 << 20, 65535 },
	{ "ram", TIER_RAM, 1 << 20, 3u << 20 },
	{ "ram", TIER_RAM, 1 << 20, UINT32_MAX },
	/* sizes below one extent */
	{ "ram", TIER_RAM, 0, 4096 },
	{ "ram", TIER_RAM, 4095, 4096 },
	{ "ram", TIER_RAM, 65535, 65536 },
	{ "ram", TIER_RAM, 1 << 20, 2u << 20 },
};

START_TEST(test_tier_ram_create_rejects_bad_args)
{
	const struct create_case *c = &bad_create_cases[_i];
	struct tier *sentinel = (struct tier *)&bad_create_cases;
	struct tier *nt = sentinel;
	int r;

	r = tier_create(c->name, (enum tier_kind)c->kind, NULL, c->size,
			c->extent, &nt);
	ck_assert_msg(r == -EINVAL,
		      "row %d (name \"%s\" kind %d size %llu extent %u): "
		      "got %d, want -EINVAL",
		      _i, c->name ? c->name : "(null)", c->kind,
		      (unsigned long long)c->size, c->extent, r);
	ck_assert_msg(nt == sentinel, "row %d wrote *ret_tier on failure", _i);
}
END_TEST

static const struct good_case {
	const char *name;
	uint64_t size;
	uint32_t extent;
	uint32_t nslots;
	unsigned shift;
} good_create_cases[] = {
	{ "r", 4096, 4096, 1, 12 },
	{ name32, 1 << 20, 4096, 256, 12 },
	{ "A-z_09", 10 * 4096 + 100, 4096, 10, 12 }, /* remainder unused */
	{ "ram", 3u << 20, 1u << 20, 3, 20 },
	{ "ram", 2u << 20, 2u << 20, 1, 21 },
	{ "big", 1ull << 31, 1u << 31, 1, 31 }, /* largest extent */
};

START_TEST(test_tier_ram_create_accepts_edges)
{
	const struct good_case *c = &good_create_cases[_i];
	struct tier *nt = NULL;

	/* a RAM tier ignores @path, even a bogus one */
	ck_assert_int_eq(tier_create(c->name, TIER_RAM, "/nonexistent/x",
				     c->size, c->extent, &nt),
			 0);
	ck_assert_ptr_nonnull(nt);
	ck_assert_str_eq(nt->name, c->name);
	ck_assert_int_eq(nt->kind, TIER_RAM);
	ck_assert_ptr_null(nt->path);
	ck_assert_uint_eq(nt->size, c->size);
	ck_assert_uint_eq(nt->extent_size, c->extent);
	ck_assert_uint_eq(nt->extent_shift, c->shift);
	ck_assert_uint_eq(nt->nslots, c->nslots);
	ck_assert_uint_eq(tier_used_slots(nt), 0);
	ck_assert_uint_eq(tier_free_slots(nt), c->nslots);
	ck_assert_uint_eq(nt->stats.read_ops + nt->stats.write_ops +
				  nt->stats.read_bytes + nt->stats.write_bytes +
				  nt->stats.io_errors,
			  0);
	ck_assert_int_eq(tier_sync(nt), 0);
	ck_assert_ptr_null(tier_free(nt));
}
END_TEST

START_TEST(test_tier_ram_create_too_many_slots)
{
	struct tier *nt = NULL;

	/* 2^32 slots do not fit the uint32_t slot numbers */
	ck_assert_int_eq(tier_create("ram", TIER_RAM, NULL,
				     (UINT64_C(1) << 32) * 4096, 4096, &nt),
			 -EFBIG);
	ck_assert_ptr_null(nt);
}
END_TEST

START_TEST(test_tier_ram_free_accepts_null)
{
	ck_assert_ptr_null(tier_free(NULL));
}
END_TEST

START_TEST(test_tier_ram_kind_names)
{
	ck_assert_int_eq(tier_kind_parse("ram"), TIER_RAM);
	ck_assert_int_eq(tier_kind_parse("pmem"), TIER_PMEM);
	ck_assert_int_eq(tier_kind_parse("file"), TIER_FILE);
	ck_assert_int_eq(tier_kind_parse("RAM"), _TIER_KIND_INVALID);
	ck_assert_int_eq(tier_kind_parse("ram "), _TIER_KIND_INVALID);
	ck_assert_int_eq(tier_kind_parse(""), _TIER_KIND_INVALID);
	ck_assert_int_eq(tier_kind_parse(NULL), _TIER_KIND_INVALID);
	ck_assert_str_eq(tier_kind_name(TIER_RAM), "ram");
	ck_assert_str_eq(tier_kind_name(TIER_PMEM), "pmem");
	ck_assert_str_eq(tier_kind_name(TIER_FILE), "file");
	ck_assert_str_eq(tier_kind_name(_TIER_KIND_INVALID), "invalid");
	ck_assert_str_eq(tier_kind_name(_TIER_KIND_MAX), "invalid");
	ck_assert_str_eq(tier_ram_ops.kind_name, "ram");
	ck_assert_uint_eq(tier_ram_ops.version, TIER_OPS_VERSION);
}
END_TEST

/*
 * What each back end declares it is (tier_ops.caps), and what
 * tier_create() does with it, with no switch on the kind: a RAM tier is
 * memory, needs no path and carries no checksums; a file tier needs a
 * path and checksums its blocks.
 */
START_TEST(test_tier_ram_caps_decide_setup)
{
	char dir[] = "/tmp/tfs-caps-XXXXXX";
	struct tier *ct = NULL;

	ck_assert_uint_eq(tier_kind_caps(TIER_RAM), TIER_CAP_MEMORY);
	ck_assert_uint_eq(tier_kind_caps(TIER_FILE),
			  TIER_CAP_PATH | TIER_CAP_CSUM);
	ck_assert_uint_eq(tier_kind_caps(_TIER_KIND_INVALID), 0);
	ck_assert_uint_eq(tier_kind_caps(_TIER_KIND_MAX), 0);
	ck_assert_uint_eq(tier_ram_ops.caps, TIER_CAP_MEMORY);

	ck_assert_int_eq(tier_create("r", TIER_RAM, NULL, 1 << 20, 4096, &ct),
			 0);
	ck_assert(!tier_has_csum(ct));
	ck_assert_ptr_null(ct->path);
	ck_assert_ptr_nonnull(tier_read_direct(ct, 0, 0, 4096));
	ct = tier_free(ct);

	/* TIER_CAP_PATH: no path, no tier */
	ck_assert_int_eq(tier_create("f", TIER_FILE, NULL, 1 << 20, 4096, &ct),
			 -EINVAL);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(tier_create("f", TIER_FILE, dir, 1 << 20, 4096, &ct),
			 0);
	ck_assert(tier_has_csum(ct));
	ck_assert_str_eq(ct->path, dir);
	ck_assert_ptr_null(tier_read_direct(ct, 0, 0, 4096));
	ct = tier_free(ct);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* tier_errno() */

/*
 * Issue 16, item 7: a back end's errno that means nothing to a program
 * (a dead network tier: ENOTCONN, ESTALE, ...) reaches the caller as
 * EIO, counted in io_errors, the raw errno kept for the log; no room
 * (ENOSPC, and EDQUOT of the filesystem below, which is a full medium
 * for tierfs) and the daemon's ENOMEM stay what they are.
 */
static const struct {
	int in, out;
} errno_cases[] = {
	{ -ENOTCONN, -EIO },	 { -ECONNABORTED, -EIO }, { -ESTALE, -EIO },
	{ -EHOSTDOWN, -EIO },	 { -ENXIO, -EIO },	  { -ENODEV, -EIO },
	{ -EROFS, -EIO },	 { -EFBIG, -EIO },	  { -EBADMSG, -EIO },
	{ -ETIMEDOUT, -EIO },	 { -EIO, -EIO },	  { -ENOSPC, -ENOSPC },
	{ -EDQUOT, -ENOSPC },	 { -ENOMEM, -ENOMEM },	  { 0, 0 },
	{ 4096, 4096 },
};

START_TEST(test_tier_ram_errno_table)
{
	ck_assert_int_eq(tier_errno(errno_cases[_i].in), errno_cases[_i].out);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the unit bitmap */

/*
 * The unit bitmap against a model, across 64-bit word edges: random
 * charges and punches of a 1 MiB slot (256 units of 4 KiB, four words),
 * then what tier_uncharged(), tier_held(), tier_held_next() and the
 * tier's used bytes say, exact to the unit.
 */
#define BM_EXT (1024u * 1024)
#define BM_UNITS (BM_EXT / 4096)

static uint64_t bm_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Units of [u0, u1) the model lacks. */
static uint64_t bm_missing(const bool *held, uint64_t u0, uint64_t u1)
{
	uint64_t n = 0;

	for (uint64_t u = u0; u < u1; u++)
		n += !held[u];
	return n;
}

static void bm_check(struct tier *bt, uint32_t slot, const bool *held)
{
	uint64_t n = 0, from = 0, off, len, u = 0;

	for (unsigned i = 0; i < BM_UNITS; i++)
		n += held[i];
	ck_assert_uint_eq(tier_held(bt, slot), n * 4096);
	ck_assert_uint_eq(tier_used_bytes(bt), n * 4096);
	/* the runs tier_held_next() gives are exactly the model's */
	while (tier_held_next(bt, slot, from, &off, &len)) {
		ck_assert_uint_eq(off % 4096, 0);
		ck_assert_uint_gt(len, 0);
		for (; u < off / 4096; u++)
			ck_assert(!held[u]);
		for (; u < (off + len) / 4096; u++)
			ck_assert(held[u]);
		ck_assert(u == BM_UNITS || !held[u]);
		from = off + len;
	}
	for (; u < BM_UNITS; u++)
		ck_assert(!held[u]);
}

START_TEST(test_tier_ram_unit_bitmap_model)
{
	struct tier *bt;
	bool held[BM_UNITS] = { false };
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint32_t slot;

	ck_assert_int_eq(tier_create("bm", TIER_RAM, NULL, 4ull * BM_EXT,
				     BM_EXT, &bt),
			 0);
	ck_assert_int_eq(tier_slot_get(bt, &slot), 0);
	bm_check(bt, slot, held);
	for (int i = 0; i < 4000; i++) {
		/* ranges that start and end near word edges (units 63/64,
		 * 127/128, ...) half of the time */
		uint64_t off, len, u0, u1, got, edge = 64 * (bm_rand(&x) % 5);

		if (bm_rand(&x) & 1) {
			off = (edge * 4096 + BM_EXT - 8192 +
			       bm_rand(&x) % 16384) % BM_EXT;
		} else {
			off = bm_rand(&x) % BM_EXT;
		}
		len = bm_rand(&x) % 4 == 0 ? bm_rand(&x) % (BM_EXT - off + 1)
					   : bm_rand(&x) % (12 * 4096 + 1);
		len = MIN(len, BM_EXT - off);
		if (bm_rand(&x) % 3) {
			u0 = off / 4096;
			u1 = (off + len + 4095) / 4096;
			ck_assert_uint_eq(tier_uncharged(bt, slot, off, len),
					  len ? bm_missing(held, u0, u1) * 4096
					      : 0);
			ck_assert_int_eq(tier_charge(bt, slot, off, len, &got),
					 0);
			ck_assert_uint_eq(got,
					  len ? bm_missing(held, u0, u1) * 4096
					      : 0);
			for (uint64_t u = u0; len && u < u1; u++)
				held[u] = true;
		} else {
			uint64_t freed = 0;

			/* units wholly inside the range go back */
			u0 = (off + 4095) / 4096;
			u1 = (off + len) / 4096;
			ck_assert_int_eq(tier_punch(bt, slot, off, len, &got),
					 0);
			for (uint64_t u = u0; u < u1; u++) {
				freed += held[u];
				held[u] = false;
			}
			ck_assert_uint_eq(got, freed * 4096);
		}
		bm_check(bt, slot, held);
	}
	tier_slot_free(bt, slot);
	ck_assert_uint_eq(tier_used_bytes(bt), 0);
	tier_free(bt);
}
END_TEST

/*
 * tier_set_limit() (the memory follower's lever, issue 18): new units
 * and slots are refused past the limit, what is held stays readable,
 * the free count follows it, and raising it gives the room back.
 */
START_TEST(test_tier_ram_limit)
{
	struct tier *lt = NULL;
	uint32_t slot[8], extra;
	char buf[4096];

	ck_assert_int_eq(tier_create("ram", TIER_RAM, NULL, 8u << 20, 1u << 20,
				     &lt),
			 0);
	ck_assert_uint_eq(tier_limit_bytes(lt), 8u << 20);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(tier_slot_alloc(lt, &slot[i]), 0);
		memset(buf, 'a' + i, sizeof(buf));
		ck_assert_int_eq(tier_write(lt, slot[i], 0, buf, sizeof(buf)),
				 4096);
	}
	/* hold 4 MiB; limit 2.5 MiB (rounded to the unit) */
	tier_set_limit(lt, (5u << 19) + 123);
	ck_assert_uint_eq(tier_limit_bytes(lt), 5u << 19);
	ck_assert_uint_eq(tier_avail_bytes(lt), 0);
	ck_assert_uint_eq(tier_free_slots(lt), 0);
	ck_assert_int_eq(tier_slot_alloc(lt, &extra), -ENOSPC);
	/* nothing held is lost, and what is held is still written */
	ck_assert_int_eq(tier_read(lt, slot[2], 0, buf, sizeof(buf)), 4096);
	ck_assert_int_eq(buf[4095], 'c');
	ck_assert_int_eq(tier_write(lt, slot[2], 0, buf, sizeof(buf)), 4096);
	/* give two back: still above the limit, still refused */
	tier_slot_free(lt, slot[3]);
	tier_slot_free(lt, slot[2]);
	ck_assert_int_eq(tier_slot_alloc(lt, &extra), -ENOSPC);
	tier_slot_free(lt, slot[1]);
	ck_assert_uint_eq(tier_avail_bytes(lt), 3u << 19);
	ck_assert_int_eq(tier_slot_alloc(lt, &slot[1]), 0);
	/* above the configured size: the size */
	tier_set_limit(lt, UINT64_MAX);
	ck_assert_uint_eq(tier_limit_bytes(lt), 8u << 20);
	ck_assert_uint_eq(tier_avail_bytes(lt), 6u << 20);
	for (int i = 2; i < 8; i++)
		ck_assert_int_eq(tier_slot_alloc(lt, &slot[i]), 0);
	ck_assert_int_eq(tier_slot_alloc(lt, &extra), -ENOSPC);
	/* 0: nothing new at all */
	for (int i = 0; i < 8; i++)
		tier_slot_free(lt, slot[i]);
	tier_set_limit(lt, 0);
	ck_assert_int_eq(tier_slot_alloc(lt, &extra), -ENOSPC);
	tier_free(lt);
}
END_TEST

/* Is the running kernel at least @maj.@min? */
static bool kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return false;
	return a > maj || (a == maj && b >= min);
}

/* Is the page at @p in memory? */
static bool resident(const void *p)
{
	unsigned char v = 0;

	ck_assert_int_eq(mincore((void *)((uintptr_t)p & ~(uintptr_t)4095),
				 4096, &v),
			 0);
	return v & 1;
}

/*
 * ram_discard_vec(): scattered slots' pages given back in one
 * process_madvise() -- on a kernel that allows MADV_DONTNEED there
 * (6.13 and later) it must succeed, not fall back -- after which they
 * are out of memory and read as zeros, while the slots between keep
 * theirs.  tier_slot_free_many() then frees what each slot holds.
 */
START_TEST(test_tier_ram_discard_vec)
{
	struct tier *lt = NULL;
	uint32_t slot[6], pick[3] = { 0, 2, 5 };
	uint64_t lens[3] = { 4096, 4096, 8192 };
	char buf[8192], zero[8192] = { 0 };
	int r;

	ck_assert_int_eq(tier_create("ram", TIER_RAM, NULL, 8u << 20, 1u << 20,
				     &lt),
			 0);
	ck_assert_ptr_nonnull(lt->ops->discard_vec);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(tier_slot_get(lt, &slot[i]), 0);
		ck_assert_uint_eq(slot[i], (uint32_t)i);
		memset(buf, 'a' + i, sizeof(buf));
		ck_assert_int_eq(tier_charge(lt, slot[i], 0, sizeof(buf), NULL),
				 0);
		ck_assert_int_eq(tier_write(lt, slot[i], 0, buf, sizeof(buf)),
				 (ssize_t)sizeof(buf));
		ck_assert(resident(lt->ops->direct(lt, slot[i], 0)));
	}
	r = lt->ops->discard_vec(lt, pick, lens, 3);
	if (kernel_at_least(6, 13))
		ck_assert_int_eq(r, 0);
	else
		ck_assert(r == 0 || r == -EOPNOTSUPP);
	if (r == 0) {
		ck_assert(!resident(lt->ops->direct(lt, 0, 0)));
		ck_assert(!resident(lt->ops->direct(lt, 2, 0)));
		ck_assert(!resident(lt->ops->direct(lt, 5, 4096)));
		ck_assert(resident(lt->ops->direct(lt, 1, 0)));
		ck_assert(resident(lt->ops->direct(lt, 0, 4096)));
		ck_assert_int_eq(tier_read(lt, 5, 0, buf, sizeof(buf)),
				 (ssize_t)sizeof(buf));
		ck_assert_mem_eq(buf, zero, sizeof(buf));
	}
	/* freed together: what each holds is out of memory, the rest kept */
	tier_slot_free_many(lt, (uint32_t[]){ 1, 3, 4 }, 3);
	ck_assert(!resident(lt->ops->direct(lt, 1, 4096)));
	ck_assert(!resident(lt->ops->direct(lt, 4, 0)));
	ck_assert_uint_eq(tier_used_slots(lt), 3);
	ck_assert_uint_eq(tier_used_bytes(lt), 3 * sizeof(buf));
	ck_assert_int_eq(tier_read(lt, 1, 0, buf, sizeof(buf)),
			 (ssize_t)sizeof(buf));
	ck_assert_mem_eq(buf, zero, sizeof(buf));
	tier_free(lt);
}
END_TEST

static Suite *tier_ram_suite(void)
{
	Suite *s = suite_create("tier_ram");
	TCase *tc;

	tc = tcase_create("create");
	tcase_set_timeout(tc, 10);
	tcase_add_loop_test(tc, test_tier_ram_create_rejects_bad_args, 0,
			    sizeof(bad_create_cases) /
				    sizeof(bad_create_cases[0]));
	tcase_add_loop_test(tc, test_tier_ram_create_accepts_edges, 0,
			    sizeof(good_create_cases) /
				    sizeof(good_create_cases[0]));
	tcase_add_test(tc, test_tier_ram_create_too_many_slots);
	tcase_add_test(tc, test_tier_ram_free_accepts_null);
	tcase_add_test(tc, test_tier_ram_kind_names);
	tcase_add_test(tc, test_tier_ram_caps_decide_setup);
	suite_add_tcase(s, tc);

	tc = tcase_create("errno");
	tcase_add_loop_test(tc, test_tier_ram_errno_table, 0,
			    sizeof(errno_cases) / sizeof(errno_cases[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("bitmap");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_tier_ram_unit_bitmap_model);
	tcase_add_test(tc, test_tier_ram_limit);
	tcase_add_test(tc, test_tier_ram_discard_vec);
	suite_add_tcase(s, tc);

	tier_conformance(s, &(struct tier_conformance_setup){
				    .kind = TIER_RAM,
			    });
	return s;
}

int main(void)
{
	return tap_run(tier_ram_suite());
}
