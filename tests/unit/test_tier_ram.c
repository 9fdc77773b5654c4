// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_tier_ram.c -- Check suite for tiers/tier.h over the RAM back end:
 * tier_create() argument checks, the slot allocator and its accounting,
 * the data wrappers (zeroed slots, unaligned I/O, tier_zero), the stats
 * counters, fault injection through faulty_tier.h, and allocation from
 * several threads at once.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "tier.h"
#include "tier_ops.h"
#include "macro.h"
#include "faulty_tier.h"
#include "tap.h"
#include "banned.h"

#define EXT (256u * 1024) /* > tier_zero()'s 64 KiB chunk */
#define NSLOTS 16u

/* Per-test tier made by the checked fixture. */
static struct tier *t;

static void setup_tier(void)
{
	ck_assert_int_eq(tier_create("ram", TIER_RAM, NULL,
				     (uint64_t)NSLOTS * EXT, EXT, &t),
			 0);
	ck_assert_ptr_nonnull(t);
}

static void teardown_tier(void)
{
	t = tier_free(t);
}

/* Byte @i of the pattern with @seed; never 0 so it differs from a hole. */
static unsigned char t_pat(uint64_t i, unsigned seed)
{
	return (unsigned char)((i * 131 + seed * 7) % 251 + 1);
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

static unsigned char *t_read_slot(uint32_t slot)
{
	unsigned char *buf = malloc(EXT);

	ck_assert_ptr_nonnull(buf);
	memset(buf, 0xee, EXT);
	ck_assert_int_eq(tier_read(t, slot, 0, buf, EXT), EXT);
	return buf;
}

static void t_write_slot(uint32_t slot, unsigned seed)
{
	unsigned char *buf = malloc(EXT);

	ck_assert_ptr_nonnull(buf);
	t_fill(buf, EXT, 0, seed);
	ck_assert_int_eq(tier_write(t, slot, 0, buf, EXT), EXT);
	free(buf);
}

static void t_assert_slot_zero(uint32_t slot)
{
	unsigned char *buf = t_read_slot(slot);
	long at = t_nonzero(buf, EXT);

	ck_assert_msg(at < 0, "slot %u: byte %ld is 0x%02x, want 0", slot, at,
		      at < 0 ? 0 : buf[at]);
	free(buf);
}

/* Allocate every slot into @slots[NSLOTS], checking the counts as we go. */
static void t_alloc_all(uint32_t *slots)
{
	bool seen[NSLOTS] = { false };

	for (uint32_t i = 0; i < NSLOTS; i++) {
		ck_assert_int_eq(tier_slot_alloc(t, &slots[i]), 0);
		ck_assert_uint_lt(slots[i], NSLOTS);
		ck_assert_msg(!seen[slots[i]], "slot %u handed out twice",
			      slots[i]);
		seen[slots[i]] = true;
		ck_assert_uint_eq(tier_used_slots(t), i + 1);
		ck_assert_uint_eq(tier_free_slots(t), NSLOTS - i - 1);
	}
}

static void t_free_all(const uint32_t *slots)
{
	for (uint32_t i = 0; i < NSLOTS; i++) {
		tier_slot_free(t, slots[i]);
		ck_assert_uint_eq(tier_used_slots(t), NSLOTS - i - 1);
		ck_assert_uint_eq(tier_free_slots(t), i + 1);
	}
}

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
/* alloc */

START_TEST(test_tier_ram_alloc_until_enospc)
{
	uint32_t slots[NSLOTS], extra = 12345;

	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(tier_free_slots(t), NSLOTS);
	t_alloc_all(slots);
	ck_assert_int_eq(tier_slot_alloc(t, &extra), -ENOSPC);
	ck_assert_uint_eq(extra, 12345); /* untouched on failure */
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS);
	ck_assert_uint_eq(tier_free_slots(t), 0);

	t_free_all(slots);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(tier_free_slots(t), NSLOTS);

	/* every slot comes back, then the tier is full again */
	t_alloc_all(slots);
	ck_assert_int_eq(tier_slot_alloc(t, &extra), -ENOSPC);
	t_free_all(slots);
	ck_assert_uint_eq(tier_used_slots(t), 0);
}
END_TEST

START_TEST(test_tier_ram_free_one_when_full_reallocs_it)
{
	uint32_t slots[NSLOTS], s;

	t_alloc_all(slots);
	for (uint32_t i = 0; i < NSLOTS; i++) {
		tier_slot_free(t, slots[i]);
		ck_assert_uint_eq(tier_free_slots(t), 1);
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_eq(s, slots[i]);
		ck_assert_uint_eq(tier_free_slots(t), 0);
		ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	}
	t_free_all(slots);
}
END_TEST

START_TEST(test_tier_ram_interleaved_alloc_free_counts)
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
	}
	while (n > 0)
		tier_slot_free(t, held[--n]);
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_uint_eq(tier_free_slots(t), NSLOTS);
}
END_TEST

/* ------------------------------------------------------------------ */
/* data */

START_TEST(test_tier_ram_fresh_slots_read_zeros)
{
	uint32_t slots[NSLOTS];

	t_alloc_all(slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_zero(slots[i]);
}
END_TEST

START_TEST(test_tier_ram_freed_slot_reads_zeros_when_reused)
{
	uint32_t slots[NSLOTS];

	t_alloc_all(slots);
	for (uint32_t i = 0; i < NSLOTS; i++) {
		unsigned char *buf;

		t_write_slot(slots[i], i);
		buf = t_read_slot(slots[i]);
		ck_assert_int_eq(t_check(buf, EXT, 0, i), -1);
		free(buf);
	}
	/* a full tier: reallocation can only hand back the dirty slots */
	t_free_all(slots);
	t_alloc_all(slots);
	for (uint32_t i = 0; i < NSLOTS; i++)
		t_assert_slot_zero(slots[i]);

	/* and once more for a single slot, freed while the rest are held */
	t_write_slot(slots[3], 99);
	tier_slot_free(t, slots[3]);
	ck_assert_int_eq(tier_slot_alloc(t, &slots[3]), 0);
	t_assert_slot_zero(slots[3]);
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

/*
 * Write a pattern at an unaligned range of a middle slot; the slot reads
 * back pattern inside the range and zeros outside it, the neighbouring
 * slots stay zero, and an unaligned read of a sub-range matches too.
 */
START_TEST(test_tier_ram_unaligned_write_read)
{
	const struct range_case *c = &range_cases[_i];
	uint32_t slots[NSLOTS];
	uint32_t mid = NSLOTS / 2;
	unsigned char *in, *out;
	long at;

	t_alloc_all(slots);
	in = malloc(c->len);
	ck_assert_ptr_nonnull(in);
	t_fill(in, c->len, c->off, 5);
	ck_assert_int_eq(tier_write(t, slots[mid], c->off, in, c->len),
			 (ssize_t)c->len);

	out = t_read_slot(slots[mid]);
	at = t_nonzero(out, c->off);
	ck_assert_msg(at < 0, "byte %ld before the range is not zero", at);
	at = t_check(out + c->off, c->len, c->off, 5);
	ck_assert_msg(at < 0, "byte %ld of the range is wrong", at);
	at = t_nonzero(out + c->off + c->len, EXT - c->off - c->len);
	ck_assert_msg(at < 0, "byte %ld after the range is not zero", at);
	free(out);

	t_assert_slot_zero(slots[mid - 1]);
	t_assert_slot_zero(slots[mid + 1]);

	/* read back the middle third of the range, unaligned */
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

START_TEST(test_tier_ram_overwrite_inside_slot)
{
	uint32_t s;
	unsigned char small[777], *buf;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(s, 1);
	t_fill(small, sizeof(small), 1000, 2);
	ck_assert_int_eq(tier_write(t, s, 1000, small, sizeof(small)),
			 sizeof(small));
	buf = t_read_slot(s);
	ck_assert_int_eq(t_check(buf, 1000, 0, 1), -1);
	ck_assert_int_eq(t_check(buf + 1000, sizeof(small), 1000, 2), -1);
	ck_assert_int_eq(t_check(buf + 1777, EXT - 1777, 1777, 1), -1);
	free(buf);
}
END_TEST

static const struct range_case zero_cases[] = {
	{ 0, EXT },	   /* the whole slot */
	{ 0, 1 },	   /* first byte */
	{ EXT - 1, 1 },	   /* last byte */
	{ 1, EXT - 2 },	   /* crosses every 64 KiB chunk boundary */
	{ 4096, 65536 },   /* exactly one chunk */
	{ 100, 65537 },	   /* one chunk and one byte */
	{ 65535, 131074 }, /* two chunks and two bytes, unaligned */
	{ EXT / 2, 0 },	   /* nothing */
};

START_TEST(test_tier_ram_zero_range)
{
	const struct range_case *c = &zero_cases[_i];
	uint32_t s;
	unsigned char *buf;
	long at;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(s, 3);
	ck_assert_int_eq(tier_zero(t, s, c->off, c->len), 0);
	buf = t_read_slot(s);
	at = t_check(buf, c->off, 0, 3);
	ck_assert_msg(at < 0, "byte %ld before the zeroed range changed", at);
	at = t_nonzero(buf + c->off, c->len);
	ck_assert_msg(at < 0, "byte %ld of the zeroed range is not zero", at);
	at = t_check(buf + c->off + c->len, EXT - c->off - c->len,
		     c->off + c->len, 3);
	ck_assert_msg(at < 0, "byte %ld after the zeroed range changed", at);
	free(buf);
}
END_TEST

/* ------------------------------------------------------------------ */
/* stats */

static struct tier_stats t_stats(void)
{
	struct tier_stats st;

	st.read_bytes = __atomic_load_n(&t->stats.read_bytes, __ATOMIC_RELAXED);
	st.read_ops = __atomic_load_n(&t->stats.read_ops, __ATOMIC_RELAXED);
	st.write_bytes =
		__atomic_load_n(&t->stats.write_bytes, __ATOMIC_RELAXED);
	st.write_ops = __atomic_load_n(&t->stats.write_ops, __ATOMIC_RELAXED);
	st.io_errors = __atomic_load_n(&t->stats.io_errors, __ATOMIC_RELAXED);
	return st;
}

#define ck_assert_stats(rb, ro, wb, wo, err)              \
	do {                                              \
		struct tier_stats st_ = t_stats();        \
		ck_assert_uint_eq(st_.read_bytes, (rb));  \
		ck_assert_uint_eq(st_.read_ops, (ro));    \
		ck_assert_uint_eq(st_.write_bytes, (wb)); \
		ck_assert_uint_eq(st_.write_ops, (wo));   \
		ck_assert_uint_eq(st_.io_errors, (err));  \
	} while (0)

START_TEST(test_tier_ram_stats_count_bytes_and_ops)
{
	static unsigned char buf[EXT];
	uint32_t a, b;

	ck_assert_stats(0, 0, 0, 0, 0);
	ck_assert_int_eq(tier_slot_alloc(t, &a), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &b), 0);
	ck_assert_stats(0, 0, 0, 0, 0); /* allocation is not I/O */

	ck_assert_int_eq(tier_write(t, a, 0, buf, 100), 100);
	ck_assert_int_eq(tier_write(t, b, 4095, buf, 4097), 4097);
	ck_assert_stats(0, 0, 4197, 2, 0);
	ck_assert_int_eq(tier_read(t, a, 10, buf, 90), 90);
	ck_assert_int_eq(tier_read(t, b, 0, buf, EXT), EXT);
	ck_assert_int_eq(tier_read(t, b, 0, buf, 1), 1);
	ck_assert_stats(90 + EXT + 1, 3, 4197, 2, 0);

	/* tier_zero is one write (from the zero mapping), counted */
	ck_assert_int_eq(tier_zero(t, a, 1, 65536 * 2 + 1), 0);
	ck_assert_stats(90 + EXT + 1, 3, 4197 + 65536 * 2 + 1, 2 + 1, 0);

	/* the RAM back end discards: freeing is no write */
	tier_slot_free(t, a);
	tier_slot_free(t, b);
	ck_assert_stats(90 + EXT + 1, 3, 4197 + 65536 * 2 + 1, 3, 0);
	ck_assert_int_eq(tier_sync(t), 0);
}
END_TEST

#define NTHREADS 4
#define STATS_ITERS 20000

static void *t_stats_worker(void *arg)
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

START_TEST(test_tier_ram_stats_exact_across_threads)
{
	pthread_t th[NTHREADS];
	void *res;

	for (uintptr_t i = 0; i < NTHREADS; i++) {
		uint32_t s;

		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_int_eq(pthread_create(&th[i], NULL, t_stats_worker,
						(void *)(uintptr_t)s),
				 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], &res), 0);
		ck_assert_ptr_null(res);
	}
	ck_assert_stats((uint64_t)NTHREADS * STATS_ITERS * 32,
			(uint64_t)NTHREADS * STATS_ITERS,
			(uint64_t)NTHREADS * STATS_ITERS * 64,
			(uint64_t)NTHREADS * STATS_ITERS, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* fault */

/* For each N in 1..8, of 8 alternating writes and reads only call N fails. */
START_TEST(test_tier_ram_fault_nth_call_fails)
{
	int nth = _i;
	unsigned char buf[512];
	uint64_t rb = 0, ro = 0, wb = 0, wo = 0;
	uint32_t s;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	faulty_tier_arm(t, nth, EIO);
	for (int call = 1; call <= 8; call++) {
		size_t len = 64 * (size_t)call;
		ssize_t r;

		ck_assert(faulty_tier_fired(t) == (call > nth));
		if (call % 2)
			r = tier_write(t, s, 7, buf, len);
		else
			r = tier_read(t, s, 7, buf, len);
		if (call == nth) {
			ck_assert_int_eq(r, -EIO);
			continue;
		}
		ck_assert_int_eq(r, (ssize_t)len);
		if (call % 2) {
			wb += len;
			wo++;
		} else {
			rb += len;
			ro++;
		}
	}
	ck_assert(faulty_tier_fired(t));
	ck_assert_stats(rb, ro, wb, wo, 1);
}
END_TEST

START_TEST(test_tier_ram_fault_failed_write_keeps_data)
{
	uint32_t s;
	unsigned char *newdata, *buf;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(s, 1);
	newdata = malloc(EXT);
	ck_assert_ptr_nonnull(newdata);
	t_fill(newdata, EXT, 0, 2);

	faulty_tier_arm(t, 1, EIO);
	ck_assert_int_eq(tier_write(t, s, 0, newdata, EXT), -EIO);
	ck_assert_int_eq(tier_write(t, s, 100, newdata, 10), 10);
	ck_assert_stats(0, 0, EXT + 10, 2, 1);

	buf = t_read_slot(s);
	ck_assert_int_eq(t_check(buf, 100, 0, 1), -1);
	ck_assert_int_eq(t_check(buf + 100, 10, 0, 2), -1);
	ck_assert_int_eq(t_check(buf + 110, EXT - 110, 110, 1), -1);
	free(buf);
	free(newdata);
}
END_TEST

START_TEST(test_tier_ram_fault_failed_read_leaves_buffer)
{
	uint32_t s;
	unsigned char buf[4096];

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(s, 1);
	memset(buf, 0x5a, sizeof(buf));
	faulty_tier_arm(t, 1, EIO);
	ck_assert_int_eq(tier_read(t, s, 0, buf, sizeof(buf)), -EIO);
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], 0x5a);
	ck_assert_stats(0, 0, EXT, 1, 1);
}
END_TEST

START_TEST(test_tier_ram_fault_errno_choice)
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
	ck_assert_stats(16, 1, 0, 0, 3);
}
END_TEST

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

START_TEST(test_tier_ram_fault_enotconn_is_eio)
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
	ck_assert_stats(0, 0, 0, 0, 3);
}
END_TEST

START_TEST(test_tier_ram_fault_disarm)
{
	uint32_t s;
	unsigned char buf[16] = { 0 };

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert(faulty_tier_fired(t)); /* nothing armed */
	faulty_tier_arm(t, 3, EIO);
	ck_assert(!faulty_tier_fired(t));
	faulty_tier_disarm(t);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(tier_write(t, s, 0, buf, sizeof(buf)), 16);
	ck_assert_stats(0, 0, 160, 10, 0);
}
END_TEST

/* A fault in tier_zero(): the error comes back, counted, and since the
 * zeros go in one write nothing was zeroed. */
START_TEST(test_tier_ram_fault_in_zero)
{
	uint32_t s;
	unsigned char *buf;

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(s, 4);
	faulty_tier_arm(t, 1, EIO);
	ck_assert_int_eq(tier_zero(t, s, 0, EXT), -EIO);
	ck_assert_stats(0, 0, EXT, 1, 1);
	buf = t_read_slot(s);
	ck_assert_int_eq(t_check(buf, EXT, 0, 4), -1);
	free(buf);
}
END_TEST

/* Freeing a slot on the RAM tier discards; it uses no data call. */
START_TEST(test_tier_ram_fault_not_consumed_by_free)
{
	uint32_t s;
	unsigned char buf[16] = { 0 };

	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	t_write_slot(s, 1);
	faulty_tier_arm(t, 1, EIO);
	tier_slot_free(t, s);
	ck_assert(!faulty_tier_fired(t));
	ck_assert_uint_eq(tier_used_slots(t), 0);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_int_eq(tier_write(t, s, 0, buf, sizeof(buf)), -EIO);
	faulty_tier_disarm(t);
	t_assert_slot_zero(s);
}
END_TEST

/*
 * A RAM tier whose discard fails, to reach tier_slot_free()'s fallback
 * (zero by writing) and, with a fault armed, its leak path.  The tests
 * swap t->ops after tier_create() and put it back before tier_free().
 */
static int t_discard_fails(struct tier *tt, uint32_t slot, uint64_t off,
			   uint64_t len)
{
	return -EOPNOTSUPP;
}

static struct tier_ops no_discard_ops;

static void t_use_no_discard_ops(void)
{
	no_discard_ops = tier_ram_ops;
	no_discard_ops.discard = t_discard_fails;
	t->ops = &no_discard_ops;
}

static void teardown_no_discard(void)
{
	t->ops = &tier_ram_ops;
	teardown_tier();
}

START_TEST(test_tier_ram_free_without_discard_zeroes_by_writing)
{
	uint32_t slots[NSLOTS], s;

	t_use_no_discard_ops();
	t_alloc_all(slots);
	t_write_slot(slots[5], 1);
	tier_slot_free(t, slots[5]);
	/* zeroed with writes of 64 KiB each, counted as writes */
	ck_assert_stats(0, 0, EXT + EXT, 1 + EXT / 65536, 0);
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 1);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_uint_eq(s, slots[5]);
	t_assert_slot_zero(s);
}
END_TEST

/*
 * Discard fails and so does the zeroing write: the slot holds old data
 * and must never be handed out again.
 */
START_TEST(test_tier_ram_free_failing_zero_leaks_slot)
{
	uint32_t slots[NSLOTS], s;

	t_use_no_discard_ops();
	t_alloc_all(slots);
	t_write_slot(slots[5], 1);
	faulty_tier_arm(t, 1, EIO);
	tier_slot_free(t, slots[5]);
	ck_assert(faulty_tier_fired(t));
	ck_assert_uint_eq(t_stats().io_errors, 2); /* failed write + leak */
	ck_assert_uint_eq(tier_used_slots(t), NSLOTS - 1);
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);

	/* other slots still cycle normally */
	tier_slot_free(t, slots[6]);
	ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
	ck_assert_uint_eq(s, slots[6]);
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
}
END_TEST

/*
 * A slot whose discard and zeroing both failed is leaked: it must be
 * neither handed out again nor counted as free space (statfs).
 */
START_TEST(test_tier_ram_leaked_slot_is_not_free)
{
	uint32_t slots[NSLOTS], s;

	t_use_no_discard_ops();
	t_alloc_all(slots);
	faulty_tier_arm(t, 1, EIO);
	tier_slot_free(t, slots[5]);
	ck_assert_int_eq(tier_slot_alloc(t, &s), -ENOSPC);
	ck_assert_uint_eq(tier_free_slots(t), 0);
}
END_TEST

/* An armed fault fires exactly once even with many threads calling. */
#define FAULT_ITERS 10000

static void *t_fault_worker(void *arg)
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

START_TEST(test_tier_ram_fault_fires_once_across_threads)
{
	pthread_t th[NTHREADS];
	uintptr_t total = 0;
	void *res;

	for (uint32_t i = 0, s; i < NTHREADS; i++) {
		/* the workers write slots 0..NTHREADS-1: hold them */
		ck_assert_int_eq(tier_slot_alloc(t, &s), 0);
		ck_assert_uint_eq(s, i);
	}
	faulty_tier_arm(t, NTHREADS * FAULT_ITERS / 2, EIO);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, t_fault_worker,
						(void *)i),
				 0);
	for (int i = 0; i < NTHREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], &res), 0);
		ck_assert((uintptr_t)res != UINTPTR_MAX);
		total += (uintptr_t)res;
	}
	ck_assert_uint_eq(total, 1);
	ck_assert_stats(0, 0, (NTHREADS * FAULT_ITERS - 1) * 32,
			NTHREADS * FAULT_ITERS - 1, 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* threads */

#define MT_NSLOTS 64u
#define MT_HOLD 24 /* per thread; 4 * 24 > 64, so ENOSPC happens */
#define MT_ITERS 20000

static struct tier *mt;
/* mt_owner[slot]: 0 free, else thread id + 1; atomically exchanged */
static int mt_owner[MT_NSLOTS];

static void setup_mt(void)
{
	ck_assert_int_eq(tier_create("mt", TIER_RAM, NULL,
				     (uint64_t)MT_NSLOTS * 4096, 4096, &mt),
			 0);
	memset(mt_owner, 0, sizeof(mt_owner));
}

static void teardown_mt(void)
{
	mt = tier_free(mt);
}

struct mt_arg {
	int id;
	unsigned long nalloc, nenospc;
	const char *err; /* first problem seen, or NULL */
};

static void *t_mt_worker(void *p)
{
	struct mt_arg *a = p;
	uint32_t held[MT_HOLD];
	unsigned n = 0, rnd = (unsigned)a->id * 7919 + 1;
	unsigned char tag[8], back[8];

	for (int i = 0; i < MT_ITERS && !a->err; i++) {
		rnd = rnd * 1103515245u + 12345u;
		if (n < MT_HOLD && ((rnd >> 16) & 1)) {
			uint32_t s;
			int r = tier_slot_alloc(mt, &s), prev;

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
			if (tier_read(mt, s, 4000, back, sizeof(back)) != 8 ||
			    memcmp(back, "\0\0\0\0\0\0\0\0", 8)) {
				a->err = "new slot not zero";
				break;
			}
			memset(tag, a->id + 1, sizeof(tag));
			if (tier_write(mt, s, 4000, tag, sizeof(tag)) != 8) {
				a->err = "write failed";
				break;
			}
			held[n++] = s;
			a->nalloc++;
		} else if (n > 0) {
			unsigned k = (rnd >> 4) % n;
			uint32_t s = held[k];

			held[k] = held[--n];
			if (tier_read(mt, s, 4000, back, sizeof(back)) != 8 ||
			    back[0] != a->id + 1 || back[7] != a->id + 1) {
				a->err = "slot data changed under us";
				break;
			}
			__atomic_store_n(&mt_owner[s], 0, __ATOMIC_RELEASE);
			tier_slot_free(mt, s);
		}
		if (tier_used_slots(mt) > MT_NSLOTS) {
			a->err = "used above capacity";
			break;
		}
	}
	while (n > 0) {
		uint32_t s = held[--n];

		__atomic_store_n(&mt_owner[s], 0, __ATOMIC_RELEASE);
		tier_slot_free(mt, s);
	}
	return NULL;
}

START_TEST(test_tier_ram_concurrent_alloc_free_exact)
{
	pthread_t th[NTHREADS];
	struct mt_arg args[NTHREADS];
	unsigned long total = 0, enospc = 0;
	uint32_t s;

	memset(args, 0, sizeof(args));
	for (int i = 0; i < NTHREADS; i++) {
		args[i].id = i;
		ck_assert_int_eq(
			pthread_create(&th[i], NULL, t_mt_worker, &args[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
		ck_assert_msg(!args[i].err, "thread %d: %s", i, args[i].err);
		total += args[i].nalloc;
		enospc += args[i].nenospc;
	}
	ck_assert_uint_gt(total, MT_NSLOTS);
	ck_assert_uint_eq(tier_used_slots(mt), 0);
	ck_assert_uint_eq(tier_free_slots(mt), MT_NSLOTS);

	/* exactly nslots come back out, all distinct, then -ENOSPC */
	for (uint32_t i = 0; i < MT_NSLOTS; i++) {
		ck_assert_int_eq(tier_slot_alloc(mt, &s), 0);
		ck_assert_int_eq(__atomic_exchange_n(&mt_owner[s], 1,
						     __ATOMIC_RELAXED),
				 0);
	}
	ck_assert_int_eq(tier_slot_alloc(mt, &s), -ENOSPC);
	ck_assert_uint_eq(tier_free_slots(mt), 0);
	(void)enospc; /* likely but not guaranteed > 0; not asserted */
}
END_TEST

/* ------------------------------------------------------------------ */

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

	tc = tcase_create("alloc");
	tcase_add_checked_fixture(tc, setup_tier, teardown_tier);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_tier_ram_alloc_until_enospc);
	tcase_add_test(tc, test_tier_ram_free_one_when_full_reallocs_it);
	tcase_add_test(tc, test_tier_ram_interleaved_alloc_free_counts);
	suite_add_tcase(s, tc);

	tc = tcase_create("data");
	tcase_add_checked_fixture(tc, setup_tier, teardown_tier);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_tier_ram_fresh_slots_read_zeros);
	tcase_add_test(tc, test_tier_ram_freed_slot_reads_zeros_when_reused);
	tcase_add_loop_test(tc, test_tier_ram_unaligned_write_read, 0,
			    sizeof(range_cases) / sizeof(range_cases[0]));
	tcase_add_test(tc, test_tier_ram_overwrite_inside_slot);
	tcase_add_loop_test(tc, test_tier_ram_zero_range, 0,
			    sizeof(zero_cases) / sizeof(zero_cases[0]));
	tcase_add_test(tc, test_tier_ram_unit_bitmap_model);
	suite_add_tcase(s, tc);

	tc = tcase_create("stats");
	tcase_add_checked_fixture(tc, setup_tier, teardown_tier);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_tier_ram_stats_count_bytes_and_ops);
	tcase_add_test(tc, test_tier_ram_stats_exact_across_threads);
	suite_add_tcase(s, tc);

	tc = tcase_create("fault");
	tcase_add_checked_fixture(tc, setup_tier, teardown_tier);
	tcase_set_timeout(tc, 10);
	tcase_add_loop_test(tc, test_tier_ram_fault_nth_call_fails, 1, 9);
	tcase_add_test(tc, test_tier_ram_fault_failed_write_keeps_data);
	tcase_add_test(tc, test_tier_ram_fault_failed_read_leaves_buffer);
	tcase_add_test(tc, test_tier_ram_fault_errno_choice);
	tcase_add_loop_test(tc, test_tier_ram_errno_table, 0,
			    sizeof(errno_cases) / sizeof(errno_cases[0]));
	tcase_add_test(tc, test_tier_ram_fault_enotconn_is_eio);
	tcase_add_test(tc, test_tier_ram_fault_disarm);
	tcase_add_test(tc, test_tier_ram_fault_in_zero);
	tcase_add_test(tc, test_tier_ram_fault_not_consumed_by_free);
	tcase_add_test(tc, test_tier_ram_fault_fires_once_across_threads);
	suite_add_tcase(s, tc);

	tc = tcase_create("free_fallback");
	tcase_add_checked_fixture(tc, setup_tier, teardown_no_discard);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc,
		       test_tier_ram_free_without_discard_zeroes_by_writing);
	tcase_add_test(tc, test_tier_ram_free_failing_zero_leaks_slot);
	tcase_add_test(tc, test_tier_ram_leaked_slot_is_not_free);
	suite_add_tcase(s, tc);

	tc = tcase_create("threads");
	tcase_add_checked_fixture(tc, setup_mt, teardown_mt);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_tier_ram_concurrent_alloc_free_exact);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return tap_run(tier_ram_suite());
}
