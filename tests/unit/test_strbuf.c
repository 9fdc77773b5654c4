// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_strbuf.c -- Check suite for fs/util/strbuf.h, the growable string
 * buffer behind every computed xattr.  The buffer must hold whatever is
 * added, at any size, with the NUL always in place, and fail an add as a
 * whole, leaving the text as it was.
 *
 * Every text built here is compared with a reference built independently
 * (a plain array filled by hand), never with strbuf's own output.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "strbuf.h"
#include "tap.h"
#include "banned.h"

/* The invariants that hold after every call, failed or not. */
static void check_invariants(const struct strbuf *sb)
{
	ck_assert_ptr_nonnull(sb->buf);
	if (sb->alloc == 0) {
		ck_assert_uint_eq(sb->len, 0);
		ck_assert_ptr_eq(sb->buf, strbuf_slopbuf);
	} else {
		ck_assert_uint_lt(sb->len, sb->alloc);
	}
	ck_assert_int_eq(sb->buf[sb->len], '\0');
	ck_assert_uint_eq(strbuf_avail(sb),
			  sb->alloc ? sb->alloc - sb->len - 1 : 0);
}

/* Byte @i of the reference pattern: printable, period 61 so that no
 * power-of-two boundary lines up with it. */
static char pat(size_t i)
{
	return (char)('!' + i % 61);
}

START_TEST(test_strbuf_init_is_empty)
{
	struct strbuf a = STRBUF_INIT, b;

	strbuf_init(&b);
	check_invariants(&a);
	check_invariants(&b);
	ck_assert_str_eq(a.buf, "");
	ck_assert_uint_eq(b.len, 0);
	/* release of a never-used buffer frees nothing, and may repeat */
	strbuf_release(&a);
	strbuf_release(&a);
	check_invariants(&a);
	strbuf_reset(&b);
	strbuf_setlen(&b, 0);
	check_invariants(&b);
	strbuf_release(&b);
}
END_TEST

/*
 * One addf of every length from 0 to a few pages, into a fresh buffer
 * and onto a buffer that already holds text of another length: each
 * crossing of an allocation boundary, at every offset.
 */
START_TEST(test_strbuf_addf_every_size)
{
	enum { MAX = 9000 };
	char *ref = malloc(2 * MAX + 1);

	ck_assert_ptr_nonnull(ref);
	for (size_t i = 0; i < 2 * MAX; i++)
		ref[i] = pat(i);
	ref[2 * MAX] = '\0';
	for (int n = 0; n <= MAX; n += n < 300 ? 1 : 7) {
		struct strbuf sb = STRBUF_INIT;
		int pre = (n * 37) % 211;

		/* fresh */
		ck_assert_int_eq(strbuf_addf(&sb, "%.*s", n, ref), 0);
		check_invariants(&sb);
		ck_assert_uint_eq(sb.len, (size_t)n);
		ck_assert(memcmp(sb.buf, ref, (size_t)n) == 0);
		strbuf_reset(&sb);
		check_invariants(&sb);
		ck_assert_uint_eq(sb.len, 0);

		/* after a prefix: the text continues the pattern */
		ck_assert_int_eq(strbuf_addf(&sb, "%.*s", pre, ref), 0);
		ck_assert_int_eq(strbuf_addf(&sb, "%.*s", n, ref + pre), 0);
		check_invariants(&sb);
		ck_assert_uint_eq(sb.len, (size_t)(pre + n));
		ck_assert(memcmp(sb.buf, ref, (size_t)(pre + n)) == 0);
		strbuf_release(&sb);
	}
	free(ref);
}
END_TEST

/* Many small adds of mixed kinds up to 1 MiB, checked all along. */
START_TEST(test_strbuf_many_small_adds)
{
	enum { TOTAL = 1 << 20 };
	struct strbuf sb = STRBUF_INIT;
	size_t last_alloc = 0, reallocs = 0;
	char *ref = malloc(TOTAL + 3);

	while (sb.len < TOTAL) {
		size_t i = sb.len;

		switch (i % 3) {
		case 0:
			ck_assert_int_eq(strbuf_addch(&sb, pat(i)), 0);
			break;
		case 1: {
			char two[2] = { pat(i), pat(i + 1) };

			ck_assert_int_eq(strbuf_add(&sb, two, 2), 0);
			break;
		}
		default:
			ck_assert_int_eq(strbuf_addf(&sb, "%c%c%c", pat(i),
						     pat(i + 1), pat(i + 2)),
					 0);
			break;
		}
		if (sb.alloc != last_alloc) {
			reallocs++;
			last_alloc = sb.alloc;
		}
	}
	check_invariants(&sb);
	ck_assert_ptr_nonnull(ref);
	for (size_t i = 0; i < sb.len; i++)
		ref[i] = pat(i);
	ck_assert(memcmp(sb.buf, ref, sb.len) == 0);
	ck_assert_uint_eq(strlen(sb.buf), sb.len);
	free(ref);
	/* geometric growth: a handful of allocations, not one per add */
	ck_assert_uint_le(reallocs, 32);
	strbuf_release(&sb);
	check_invariants(&sb);
}
END_TEST

/* Long formats: one conversion much larger than any allocation so far,
 * and formats with many conversions. */
START_TEST(test_strbuf_long_formats)
{
	struct strbuf sb = STRBUF_INIT;
	size_t big = (1u << 20) + 3;
	char *s = malloc(big + 1);

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < big; i++)
		s[i] = pat(i);
	s[big] = '\0';

	/* a 1 MiB %s into an empty buffer, between short literals */
	ck_assert_int_eq(strbuf_addf(&sb, "<%s>", s), 0);
	check_invariants(&sb);
	ck_assert_uint_eq(sb.len, big + 2);
	ck_assert_int_eq(sb.buf[0], '<');
	ck_assert(memcmp(sb.buf + 1, s, big) == 0);
	ck_assert_int_eq(sb.buf[big + 1], '>');

	/* field width far beyond the buffer: 100000 zeros then "42" */
	strbuf_reset(&sb);
	ck_assert_int_eq(strbuf_addf(&sb, "%0*d", 100002, 42), 0);
	check_invariants(&sb);
	ck_assert_uint_eq(sb.len, 100002);
	ck_assert_uint_eq(strspn(sb.buf, "0"), 100000);
	ck_assert_str_eq(sb.buf + 100000, "42");

	/* the widest line of user.tierfs.extents, the one that overran the
	 * old fixed-slack buffer: 19-digit start, 19-digit length, 32-char
	 * tier name; 200 of them after an odd-sized prefix */
	strbuf_reset(&sb);
	ck_assert_int_eq(strbuf_addf(&sb, "%.*s", 4031, s), 0);
	for (int i = 0; i < 200; i++)
		ck_assert_int_eq(strbuf_addf(&sb, "%llu %llu %s\n",
					     9223372036854775807ULL - (unsigned)i,
					     1000000000000000000ULL + (unsigned)i,
					     "abcdefghijabcdefghijabcdefghij12"),
				 0);
	check_invariants(&sb);
	ck_assert_uint_eq(sb.len, 4031 + 200 * 73);
	for (int i = 0; i < 200; i++) {
		char want[80];

		snprintf(want, sizeof(want), "%llu %llu %s\n",
			 9223372036854775807ULL - (unsigned)i,
			 1000000000000000000ULL + (unsigned)i,
			 "abcdefghijabcdefghijabcdefghij12");
		ck_assert(memcmp(sb.buf + 4031 + 73 * i, want, 73) == 0);
	}

	/* many conversions in one format */
	strbuf_reset(&sb);
	ck_assert_int_eq(strbuf_addf(&sb,
				     "%d %u %ld %lu %lld %llu %x %o %c %s %5s|%-5s| %% %zu",
				     -1, 2u, -3L, 4UL, -5LL, 18446744073709551615ULL,
				     255u, 8u, 'z', "str", "ab", "cd", (size_t)77),
			 0);
	ck_assert_str_eq(sb.buf, "-1 2 -3 4 -5 18446744073709551615 ff 10 z str    ab|cd   | % 77");
	free(s);
	strbuf_release(&sb);
}
END_TEST

/*
 * Embedded formatting: text with NUL bytes inside (counted by len, not
 * cut by strlen), one strbuf's text formatted into another, and a part
 * of a buffer appended to itself across a reallocation.
 */
START_TEST(test_strbuf_embedded)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	static const char bin[] = { 'x', '\0', 'y', '\0', '\0', 'z' };

	ck_assert_int_eq(strbuf_addf(&a, "%c%c%c", 'p', '\0', 'q'), 0);
	ck_assert_uint_eq(a.len, 3);
	ck_assert(memcmp(a.buf, "p\0q", 4) == 0);
	ck_assert_int_eq(strbuf_add(&a, bin, sizeof(bin)), 0);
	ck_assert_uint_eq(a.len, 3 + sizeof(bin));
	ck_assert(memcmp(a.buf + 3, bin, sizeof(bin)) == 0);
	check_invariants(&a);

	/* one buffer's text inside another's format, many times over */
	strbuf_reset(&a);
	ck_assert_int_eq(strbuf_adds(&a, "inner"), 0);
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(strbuf_addf(&b, "[%s:%d]", a.buf, i), 0);
	check_invariants(&b);
	{
		size_t off = 0;

		for (int i = 0; i < 1000; i++) {
			char want[32];
			int n = snprintf(want, sizeof(want), "[inner:%d]", i);

			ck_assert(memcmp(b.buf + off, want, (size_t)n) == 0);
			off += (size_t)n;
		}
		ck_assert_uint_eq(off, b.len);
	}

	/* doubling by appending the buffer to itself: every round grows it */
	strbuf_reset(&a);
	ck_assert_int_eq(strbuf_adds(&a, "ab"), 0);
	for (int i = 0; i < 16; i++) {
		ck_assert_int_eq(strbuf_add(&a, a.buf, a.len), 0);
		check_invariants(&a);
	}
	ck_assert_uint_eq(a.len, 2u << 16);
	for (size_t i = 0; i < a.len; i += 2)
		if (a.buf[i] != 'a' || a.buf[i + 1] != 'b')
			ck_abort_msg("bytes %zu, %zu are '%c%c', want 'ab'", i,
				     i + 1, a.buf[i], a.buf[i + 1]);
	/* and a tail of itself, through adds */
	ck_assert_int_eq(strbuf_adds(&a, a.buf + a.len - 3), 0);
	ck_assert_str_eq(a.buf + a.len - 6, "babbab");

	strbuf_release(&a);
	strbuf_release(&b);
}
END_TEST

/* Detach hands the memory to the caller and leaves an empty, reusable
 * buffer; the caller frees it (ASan checks the ownership). */
START_TEST(test_strbuf_detach_ownership)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = 12345;
	char *s, *t;

	/* nothing allocated yet: still a string the caller may free */
	s = strbuf_detach(&sb, &len);
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_ne(s, strbuf_slopbuf);
	ck_assert_str_eq(s, "");
	ck_assert_uint_eq(len, 0);
	check_invariants(&sb);
	free(s);

	ck_assert_int_eq(strbuf_addf(&sb, "hello %s", "world"), 0);
	t = sb.buf;
	s = strbuf_detach(&sb, &len);
	ck_assert_ptr_eq(s, t); /* the buffer itself, not a copy */
	ck_assert_str_eq(s, "hello world");
	ck_assert_uint_eq(len, 11);
	/* sb no longer owns it: empty, and its release must not free s */
	check_invariants(&sb);
	ck_assert_uint_eq(sb.alloc, 0);
	strbuf_release(&sb);
	ck_assert_str_eq(s, "hello world");

	/* reusable after detach; a second detach gives separate memory */
	ck_assert_int_eq(strbuf_adds(&sb, "again"), 0);
	t = strbuf_detach(&sb, NULL);
	ck_assert_ptr_ne(s, t);
	ck_assert_str_eq(t, "again");
	ck_assert_str_eq(s, "hello world");
	free(s);
	free(t);
	check_invariants(&sb);
	strbuf_release(&sb);
}
END_TEST

/* Failures change nothing: impossible sizes and formats that vsnprintf
 * refuses leave the text, length and terminator as they were. */
START_TEST(test_strbuf_failure_leaves_text)
{
	struct strbuf sb = STRBUF_INIT;
	size_t alloc;

	ck_assert_int_eq(strbuf_grow(&sb, SIZE_MAX), -ENOMEM);
	check_invariants(&sb);
	ck_assert_uint_eq(sb.alloc, 0);

	ck_assert_int_eq(strbuf_adds(&sb, "keep"), 0);
	alloc = sb.alloc;
	ck_assert_int_eq(strbuf_grow(&sb, SIZE_MAX), -ENOMEM);
	ck_assert_int_eq(strbuf_grow(&sb, SIZE_MAX - 4), -ENOMEM);
	ck_assert_int_eq(strbuf_grow(&sb, (size_t)PTRDIFF_MAX), -ENOMEM);
	ck_assert_int_eq(strbuf_add(&sb, "x", SIZE_MAX - 2), -ENOMEM);
	ck_assert_uint_eq(sb.alloc, alloc);
	ck_assert_uint_eq(sb.len, 4);
	ck_assert_str_eq(sb.buf, "keep");

	/* an invalid wide character: vsnprintf fails after writing "abc"
	 * into the free room; the text must still end after "keep" */
	ck_assert_int_eq(strbuf_addf(&sb, "abc%ls", L"\xdc00\xd800"), -EINVAL);
	check_invariants(&sb);
	ck_assert_uint_eq(sb.len, 4);
	ck_assert_str_eq(sb.buf, "keep");
	/* the same when the failing format would also need more room */
	{
		char *wide = malloc(5000);

		ck_assert_ptr_nonnull(wide);
		memset(wide, 'w', 4999);
		wide[4999] = '\0';
		ck_assert_int_eq(strbuf_addf(&sb, "%s%ls", wide, L"\xdc00"),
				 -EINVAL);
		free(wide);
	}
	check_invariants(&sb);
	ck_assert_str_eq(sb.buf, "keep");
	ck_assert_uint_eq(sb.len, 4);

	/* and the buffer works on afterwards */
	ck_assert_int_eq(strbuf_addf(&sb, "%s", "!"), 0);
	ck_assert_str_eq(sb.buf, "keep!");
	strbuf_release(&sb);
}
END_TEST

/* grow + direct write + setlen, the way a formatter that writes into a
 * caller's buffer (policy_format()) is used. */
START_TEST(test_strbuf_grow_and_setlen)
{
	struct strbuf sb = STRBUF_INIT;

	ck_assert_int_eq(strbuf_adds(&sb, "head:"), 0);
	ck_assert_int_eq(strbuf_grow(&sb, 1000), 0);
	ck_assert_uint_ge(strbuf_avail(&sb), 1000);
	memset(sb.buf + sb.len, 'm', 1000);
	strbuf_setlen(&sb, sb.len + 1000);
	check_invariants(&sb);
	ck_assert_uint_eq(sb.len, 1005);
	ck_assert_uint_eq(strlen(sb.buf), 1005);
	/* grow with room enough already allocates nothing */
	{
		char *before = sb.buf;
		size_t alloc = sb.alloc;

		ck_assert_int_eq(strbuf_grow(&sb, strbuf_avail(&sb)), 0);
		ck_assert_ptr_eq(sb.buf, before);
		ck_assert_uint_eq(sb.alloc, alloc);
	}
	strbuf_setlen(&sb, 4);
	ck_assert_str_eq(sb.buf, "head");
	strbuf_release(&sb);
}
END_TEST

static Suite *strbuf_suite(void)
{
	Suite *s = suite_create("strbuf");
	TCase *tc;

	tc = tcase_create("grow");
	/* a million checked adds: seconds under a sanitizer on a busy machine */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_strbuf_init_is_empty);
	tcase_add_test(tc, test_strbuf_addf_every_size);
	tcase_add_test(tc, test_strbuf_many_small_adds);
	tcase_add_test(tc, test_strbuf_grow_and_setlen);
	suite_add_tcase(s, tc);

	tc = tcase_create("format");
	tcase_add_test(tc, test_strbuf_long_formats);
	tcase_add_test(tc, test_strbuf_embedded);
	suite_add_tcase(s, tc);

	tc = tcase_create("ownership");
	tcase_add_test(tc, test_strbuf_detach_ownership);
	tcase_add_test(tc, test_strbuf_failure_leaves_text);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return tap_run(strbuf_suite());
}
