// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_size.c -- Check suite for fs/util/size.h: size_parse() and
 * size_format().  Both are pure functions, so every case is a row in a
 * static table run with tcase_add_loop_test().
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "size.h"
#include "tap.h"
#include "banned.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)
#define PiB (UINT64_C(1) << 50)
#define EiB (UINT64_C(1) << 60)

/* What size_parse() leaves in *ret_v when it fails: nothing new. */
#define SENTINEL UINT64_C(0xdeadbeefcafef00d)

struct parse_case {
	const char *in;
	int ret;	 /* 0, -EINVAL or -ERANGE */
	uint64_t expect; /* only when ret == 0 */
};

static const struct parse_case parse_cases[] = {
	/* plain numbers */
	{ "0", 0, 0 },
	{ "1", 0, 1 },
	{ "17", 0, 17 },
	{ "4096", 0, 4096 },
	{ "007", 0, 7 },
	{ "18446744073709551615", 0, UINT64_MAX },
	/* each suffix, both cases */
	{ "1K", 0, KiB },
	{ "1k", 0, KiB },
	{ "512M", 0, 512 * MiB },
	{ "512m", 0, 512 * MiB },
	{ "8G", 0, 8 * GiB },
	{ "8g", 0, 8 * GiB },
	{ "4T", 0, 4 * TiB },
	{ "4t", 0, 4 * TiB },
	{ "2P", 0, 2 * PiB },
	{ "2p", 0, 2 * PiB },
	{ "0G", 0, 0 },
	/* "B" and "iB" after a suffix, any case */
	{ "8GB", 0, 8 * GiB },
	{ "8Gb", 0, 8 * GiB },
	{ "8gb", 0, 8 * GiB },
	{ "8GiB", 0, 8 * GiB },
	{ "8gib", 0, 8 * GiB },
	{ "8GIB", 0, 8 * GiB },
	{ "4KB", 0, 4 * KiB },
	{ "4KiB", 0, 4 * KiB },
	{ "64MiB", 0, 64 * MiB },
	{ "3TB", 0, 3 * TiB },
	{ "1PiB", 0, PiB },
	/* largest values that still fit, per suffix */
	{ "17179869183G", 0, (UINT64_C(1) << 34) * GiB - GiB },
	{ "16383P", 0, UINT64_C(16383) * PiB },
	{ "16777215T", 0, UINT64_C(16777215) * TiB },
	/* malformed */
	{ "", -EINVAL, 0 },
	{ "G", -EINVAL, 0 },
	{ "GiB", -EINVAL, 0 },
	{ "-5M", -EINVAL, 0 },
	{ "+5M", -EINVAL, 0 },
	{ "-0", -EINVAL, 0 },
	{ "1.5G", -EINVAL, 0 },
	{ "1,5G", -EINVAL, 0 },
	{ "12Q", -EINVAL, 0 },
	{ "5E", -EINVAL, 0 }, /* exbi is not a parse suffix */
	{ " 5M", -EINVAL, 0 },
	{ "5M ", -EINVAL, 0 },
	{ "5 M", -EINVAL, 0 },
	{ "5M\n", -EINVAL, 0 },
	{ "\t5", -EINVAL, 0 },
	{ "0x10", -EINVAL, 0 },
	{ "1e6", -EINVAL, 0 },
	{ "5MM", -EINVAL, 0 },
	{ "5Mi", -EINVAL, 0 },
	{ "5MiBx", -EINVAL, 0 },
	{ "5KBB", -EINVAL, 0 },
	{ "5iB", -EINVAL, 0 },
	{ "5MBi", -EINVAL, 0 },
	/* overflow */
	{ "17179869184G", -ERANGE, 0 },
	{ "16384P", -ERANGE, 0 },
	{ "16777216T", -ERANGE, 0 },
	{ "18014398509481984K", -ERANGE, 0 },
	{ "18446744073709551616", -ERANGE, 0 },
	{ "99999999999999999999", -ERANGE, 0 },
	{ "99999999999999999999G", -ERANGE, 0 },
	{ "999999999999999999999999999999", -ERANGE, 0 },
};

START_TEST(test_size_parse_table)
{
	const struct parse_case *c = &parse_cases[_i];
	uint64_t v = SENTINEL;
	int r = size_parse(c->in, &v);

	ck_assert_msg(r == c->ret, "size_parse(\"%s\") returned %d, want %d",
		      c->in, r, c->ret);
	if (c->ret == 0)
		ck_assert_msg(v == c->expect,
			      "size_parse(\"%s\") gave %llu, want %llu", c->in,
			      (unsigned long long)v,
			      (unsigned long long)c->expect);
	else
		ck_assert_msg(v == SENTINEL,
			      "size_parse(\"%s\") wrote *ret_v on failure",
			      c->in);
}
END_TEST

START_TEST(test_size_parse_null_is_einval)
{
	uint64_t v = SENTINEL;

	ck_assert_int_eq(size_parse(NULL, &v), -EINVAL);
	ck_assert(v == SENTINEL);
}
END_TEST

struct format_case {
	uint64_t in;
	const char *expect;
};

static const struct format_case format_cases[] = {
	{ 0, "0" },
	{ 17, "17" },
	{ 1023, "1023" },
	{ KiB, "1K" },
	{ KiB + KiB / 2, "1.5K" },
	{ 4 * KiB, "4K" },
	{ 512 * MiB, "512M" },
	{ 1023 * MiB, "1023M" },
	{ GiB, "1G" },
	{ GiB + GiB / 2, "1.5G" },
	{ 9 * GiB + GiB / 2, "9.5G" },
	{ 10 * GiB, "10G" },
	{ 10 * GiB + 3 * GiB / 4, "11G" }, /* >= 10: no decimals */
	{ 100 * GiB, "100G" },
	{ 4 * TiB, "4T" },
	{ 2 * PiB + PiB / 2, "2.5P" },
	{ EiB, "1E" },
	{ UINT64_MAX, "16E" },
};

START_TEST(test_size_format_table)
{
	const struct format_case *c = &format_cases[_i];
	char buf[32];
	char *r;

	memset(buf, 'x', sizeof(buf));
	r = size_format(c->in, buf, sizeof(buf));
	ck_assert_ptr_eq(r, buf);
	ck_assert_msg(!strcmp(buf, c->expect),
		      "size_format(%llu) gave \"%s\", want \"%s\"",
		      (unsigned long long)c->in, buf, c->expect);
}
END_TEST

START_TEST(test_size_format_truncates_with_nul)
{
	char buf[4];

	memset(buf, 'x', sizeof(buf));
	ck_assert_ptr_eq(size_format(123456, buf, sizeof(buf)), buf);
	ck_assert_str_eq(buf, "121"); /* "121K", 120.56K rounded */
	memset(buf, 'x', sizeof(buf));
	size_format(GiB + GiB / 2, buf, 2);
	ck_assert_str_eq(buf, "1");
}
END_TEST

/*
 * Whole multiples of a unit below 10, and any whole multiple from 10
 * up, format without decimals; size_parse() must read them back exactly.
 */
START_TEST(test_size_format_parses_back)
{
	static const uint64_t units[] = { 1, KiB, MiB, GiB, TiB, PiB };

	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		for (uint64_t n = 1; n < 1024; n++) {
			uint64_t v = n * units[u], back = 0;
			char buf[32];

			size_format(v, buf, sizeof(buf));
			ck_assert_msg(size_parse(buf, &back) == 0 && back == v,
				      "%llu formats as \"%s\", parses as %llu",
				      (unsigned long long)v, buf,
				      (unsigned long long)back);
		}
	}
}
END_TEST

static Suite *size_suite(void)
{
	Suite *s = suite_create("size");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_size_parse_table, 0,
			    sizeof(parse_cases) / sizeof(parse_cases[0]));
	tcase_add_test(tc, test_size_parse_null_is_einval);
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_loop_test(tc, test_size_format_table, 0,
			    sizeof(format_cases) / sizeof(format_cases[0]));
	tcase_add_test(tc, test_size_format_truncates_with_nul);
	tcase_add_test(tc, test_size_format_parses_back);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return tap_run(size_suite());
}
