// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_json.c -- Check suites for tierctl's output helpers: tools/json.h,
 * the streaming JSON writer behind `tierctl stats --json`, and
 * tools/quote.h, the `ls -b` style escaping of every file name tierctl
 * prints.  Each JSON test writes into a memory stream and compares the
 * exact text; string escaping is table-driven in both suites.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "quote.h"
#include "banned.h"

struct t_out {
	char *buf;
	size_t len;
	FILE *f;
	struct json_writer w;
};

static void t_open(struct t_out *o, bool pretty)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	ck_assert_ptr_nonnull(o->f);
	json_init(&o->w, o->f, pretty);
}

/* Finish the document; returns json_finish()'s result, text in o->buf. */
static int t_close(struct t_out *o)
{
	int r = json_finish(&o->w);

	fclose(o->f);
	return r;
}

static void t_free(struct t_out *o)
{
	free(o->buf);
	o->buf = NULL;
}

/* ---- structure ---- */

START_TEST(test_json_empty_object)
{
	struct t_out o;

	t_open(&o, false);
	json_object_begin(&o.w, NULL);
	json_object_end(&o.w);
	ck_assert_int_eq(t_close(&o), 0);
	ck_assert_str_eq(o.buf, "{}\n");
	t_free(&o);
}
END_TEST

START_TEST(test_json_empty_array_pretty)
{
	struct t_out o;

	t_open(&o, true);
	json_array_begin(&o.w, NULL);
	json_array_end(&o.w);
	ck_assert_int_eq(t_close(&o), 0);
	ck_assert_str_eq(o.buf, "[]\n");
	t_free(&o);
}
END_TEST

START_TEST(test_json_members_and_commas)
{
	struct t_out o;

	t_open(&o, false);
	json_object_begin(&o.w, NULL);
	json_u64(&o.w, "a", 1);
	json_string(&o.w, "b", "x");
	json_array_begin(&o.w, "c");
	json_bool(&o.w, NULL, true);
	json_bool(&o.w, NULL, false);
	json_null(&o.w, NULL);
	json_object_begin(&o.w, NULL);
	json_object_end(&o.w);
	json_array_end(&o.w);
	json_string(&o.w, "d", NULL);
	json_object_end(&o.w);
	ck_assert_int_eq(t_close(&o), 0);
	ck_assert_str_eq(
		o.buf,
		"{\"a\":1,\"b\":\"x\",\"c\":[true,false,null,{}],\"d\":null}\n");
	t_free(&o);
}
END_TEST

START_TEST(test_json_pretty_layout)
{
	struct t_out o;

	t_open(&o, true);
	json_object_begin(&o.w, NULL);
	json_u64(&o.w, "a", 1);
	json_array_begin(&o.w, "b");
	json_u64(&o.w, NULL, 2);
	json_u64(&o.w, NULL, 3);
	json_array_end(&o.w);
	json_object_end(&o.w);
	ck_assert_int_eq(t_close(&o), 0);
	ck_assert_str_eq(o.buf,
			 "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ]\n}\n");
	t_free(&o);
}
END_TEST

START_TEST(test_json_scalar_top_level)
{
	struct t_out o;

	t_open(&o, false);
	json_string(&o.w, NULL, "only");
	ck_assert_int_eq(t_close(&o), 0);
	ck_assert_str_eq(o.buf, "\"only\"\n");
	t_free(&o);
}
END_TEST

/* ---- misuse is reported, not written as broken JSON silently ---- */

START_TEST(test_json_key_in_array_is_error)
{
	struct t_out o;

	t_open(&o, false);
	json_array_begin(&o.w, NULL);
	json_u64(&o.w, "k", 1);
	json_array_end(&o.w);
	ck_assert_int_eq(t_close(&o), -EINVAL);
	t_free(&o);
}
END_TEST

START_TEST(test_json_missing_key_in_object_is_error)
{
	struct t_out o;

	t_open(&o, false);
	json_object_begin(&o.w, NULL);
	json_u64(&o.w, NULL, 1);
	json_object_end(&o.w);
	ck_assert_int_eq(t_close(&o), -EINVAL);
	t_free(&o);
}
END_TEST

START_TEST(test_json_unbalanced_is_error)
{
	struct t_out o;

	t_open(&o, false);
	json_object_begin(&o.w, NULL);
	ck_assert_int_eq(t_close(&o), -EINVAL);
	t_free(&o);

	t_open(&o, false);
	json_object_begin(&o.w, NULL);
	json_array_end(&o.w);
	ck_assert_int_eq(t_close(&o), -EINVAL);
	t_free(&o);

	t_open(&o, false);
	json_object_end(&o.w);
	ck_assert_int_eq(t_close(&o), -EINVAL);
	t_free(&o);
}
END_TEST

START_TEST(test_json_two_top_level_values_is_error)
{
	struct t_out o;

	t_open(&o, false);
	json_u64(&o.w, NULL, 1);
	json_u64(&o.w, NULL, 2);
	ck_assert_int_eq(t_close(&o), -EINVAL);
	t_free(&o);
}
END_TEST

START_TEST(test_json_nothing_written_is_error)
{
	struct t_out o;

	t_open(&o, false);
	ck_assert_int_eq(t_close(&o), -EINVAL);
	t_free(&o);
}
END_TEST

START_TEST(test_json_depth_limit)
{
	struct t_out o;

	t_open(&o, false);
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		json_array_begin(&o.w, NULL);
	for (int i = 0; i < JSON_MAX_DEPTH; i++)
		json_array_end(&o.w);
	ck_assert_int_eq(t_close(&o), 0);
	t_free(&o);

	t_open(&o, false);
	for (int i = 0; i <= JSON_MAX_DEPTH; i++)
		json_array_begin(&o.w, NULL);
	for (int i = 0; i <= JSON_MAX_DEPTH; i++)
		json_array_end(&o.w);
	ck_assert_int_eq(t_close(&o), -EINVAL);
	t_free(&o);
}
END_TEST

/* A stream that cannot be written: json_finish() says why. */
START_TEST(test_json_write_error)
{
	struct json_writer w;
	FILE *f = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(f);
	json_init(&w, f, false);
	json_string(&w, NULL, "lost");
	ck_assert_int_eq(json_finish(&w), -ENOSPC);
	fclose(f);
}
END_TEST

/* ---- numbers ---- */

START_TEST(test_json_integers)
{
	struct t_out o;

	t_open(&o, false);
	json_array_begin(&o.w, NULL);
	json_u64(&o.w, NULL, 0);
	json_u64(&o.w, NULL, UINT64_MAX);
	json_i64(&o.w, NULL, INT64_MIN);
	json_i64(&o.w, NULL, -1);
	json_array_end(&o.w);
	ck_assert_int_eq(t_close(&o), 0);
	ck_assert_str_eq(o.buf,
			 "[0,18446744073709551615,-9223372036854775808,-1]\n");
	t_free(&o);
}
END_TEST

START_TEST(test_json_doubles)
{
	struct t_out o;

	t_open(&o, false);
	json_array_begin(&o.w, NULL);
	json_double(&o.w, NULL, 0.25);
	json_double(&o.w, NULL, 1.0);
	json_double(&o.w, NULL, 0.1);
	json_double(&o.w, NULL, 1.0 / 3.0);
	json_double(&o.w, NULL, NAN);
	json_double(&o.w, NULL, INFINITY);
	json_double(&o.w, NULL, -INFINITY);
	json_double(&o.w, NULL, 1e300);
	json_array_end(&o.w);
	ck_assert_int_eq(t_close(&o), 0);
	ck_assert_str_eq(
		o.buf,
		"[0.25,1,0.1,0.3333333333333333,null,null,null,1e+300]\n");
	t_free(&o);
}
END_TEST

/* ---- strings ---- */

struct str_case {
	const char *in;
	const char *out;
};

static const struct str_case str_cases[] = {
	{ "", "\"\"" },
	{ "plain", "\"plain\"" },
	{ "quote\"back\\slash", "\"quote\\\"back\\\\slash\"" },
	{ "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"" },
	{ "\x01\x1f", "\"\\u0001\\u001f\"" },
	{ "del\x7f", "\"del\x7f\"" },
	{ "slash/ok", "\"slash/ok\"" },
	/* valid UTF-8 passes through */
	{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
	{ "\xe2\x82\xac", "\"\xe2\x82\xac\"" },
	{ "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"" },
	/* invalid: lone continuation, truncated, overlong, surrogate,
	 * above U+10FFFF, 0xff */
	{ "a\x80z", "\"a\\ufffdz\"" },
	{ "a\xc3", "\"a\\ufffd\"" },
	{ "\xe2\x82", "\"\\ufffd\\ufffd\"" },
	{ "\xc0\xaf", "\"\\ufffd\\ufffd\"" },
	{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },
	{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" },
	{ "\xff", "\"\\ufffd\"" },
};

START_TEST(test_json_string_escapes)
{
	const struct str_case *c = &str_cases[_i];
	struct t_out o;
	char want[128];

	t_open(&o, false);
	json_string(&o.w, NULL, c->in);
	ck_assert_int_eq(t_close(&o), 0);
	snprintf(want, sizeof(want), "%s\n", c->out);
	ck_assert_msg(!strcmp(o.buf, want), "case %d: got %s, want %s", _i,
		      o.buf, want);
	t_free(&o);
}
END_TEST

START_TEST(test_json_keys_are_escaped)
{
	struct t_out o;

	t_open(&o, false);
	json_object_begin(&o.w, NULL);
	json_u64(&o.w, "a\"b\n", 1);
	json_object_end(&o.w);
	ck_assert_int_eq(t_close(&o), 0);
	ck_assert_str_eq(o.buf, "{\"a\\\"b\\n\":1}\n");
	t_free(&o);
}
END_TEST

/* ---- file name quoting (quote.h) ---- */

static const struct str_case quote_cases[] = {
	{ "", "" },
	{ "plain/path.txt", "plain/path.txt" },
	/* spaces and quotes stay: the names are for people to read */
	{ "a b 'c' \"d\"", "a b 'c' \"d\"" },
	{ "back\\slash", "back\\\\slash" },
	{ "new\nline", "new\\nline" },
	{ "\033[31mred", "\\033[31mred" },
	{ "\a\b\t\n\v\f\r", "\\a\\b\\t\\n\\v\\f\\r" },
	{ "\x01\x1f\x7f", "\\001\\037\\177" },
	{ "~ !", "~ !" },
	/* well-formed UTF-8 passes, C1 controls and bad bytes do not */
	{ "caf\xc3\xa9", "caf\xc3\xa9" },
	{ "\xe2\x82\xac \xf0\x9f\x98\x80", "\xe2\x82\xac \xf0\x9f\x98\x80" },
	{ "\xc2\xa0nbsp", "\xc2\xa0nbsp" },
	{ "\xc2\x9bz", "\\302\\233z" },
	{ "\xc2\x85", "\\302\\205" },
	{ "\xff", "\\377" },
	{ "a\x80z", "a\\200z" },
	{ "\xe2\x82", "\\342\\202" },
	{ "\xc0\xaf", "\\300\\257" },
	{ "\xed\xa0\x80", "\\355\\240\\200" },
	{ "\xf4\x90\x80\x80", "\\364\\220\\200\\200" },
	/* the name of the integration test (065-tierctl.sh) */
	{ "f\x01\xff\xc2\x9b\\ok", "f\\001\\377\\302\\233\\\\ok" },
};

START_TEST(test_quote_cases)
{
	const struct str_case *c = &quote_cases[_i];
	char *q = quote_name(c->in);

	ck_assert_ptr_nonnull(q);
	ck_assert_msg(!strcmp(q, c->out), "case %d: got '%s', want '%s'", _i, q,
		      c->out);
	ck_assert_uint_eq(quote_name_len(c->in), strlen(q));
	free(q);
}
END_TEST

/* Every byte alone: a lone byte >= 0x80 is never UTF-8, so the escaped
 * form is printable ASCII, and exactly as long as quote_name_len(). */
START_TEST(test_quote_every_byte)
{
	for (int b = 1; b < 256; b++) {
		char in[2] = { (char)b, '\0' };
		char *q = quote_name(in);

		ck_assert_ptr_nonnull(q);
		for (const char *p = q; *p; p++)
			ck_assert_msg(*p >= 0x20 && *p < 0x7f,
				      "byte 0x%02x: unprintable 0x%02x in '%s'",
				      b, (unsigned char)*p, q);
		if (b >= 0x20 && b < 0x7f && b != '\\')
			ck_assert_str_eq(q, in);
		else
			ck_assert_msg(q[0] == '\\', "byte 0x%02x: '%s'", b, q);
		ck_assert_uint_eq(quote_name_len(in), strlen(q));
		free(q);
	}
}
END_TEST

/* The test's own reading of the escaped form, as a shell's $'...' would. */
static size_t t_unquote(const char *q, char *out)
{
	/* the C escapes: a letter and its byte at the same place */
	static const char letters[] = "abtnvfr\\", bytes[] = "\a\b\t\n\v\f\r\\";
	const char *l;
	size_t n = 0;

	while (*q) {
		if (*q != '\\') {
			out[n++] = *q++;
			continue;
		}
		q++;
		l = *q ? strchr(letters, *q) : NULL;
		if (l) {
			out[n++] = bytes[l - letters];
			q++;
			continue;
		}
		ck_assert(q[0] >= '0' && q[0] <= '3' && q[1] >= '0' &&
			  q[1] <= '7' && q[2] >= '0' && q[2] <= '7');
		out[n++] = (char)((q[0] - '0') << 6 | (q[1] - '0') << 3 |
				  (q[2] - '0'));
		q += 3;
	}
	out[n] = '\0';
	return n;
}

/* Random names (fixed seed) read back to themselves: the escaped form
 * is unambiguous, and holds no control byte or bad UTF-8. */
START_TEST(test_quote_round_trip)
{
	unsigned seed = 12345;

	for (int round = 0; round < 2000; round++) {
		char in[64], back[64], *q;
		size_t len = 1 + rand_r(&seed) % 40;

		for (size_t i = 0; i < len; i++) {
			int r = rand_r(&seed) % 4;

			/* a mix of ASCII, controls, UTF-8 lead/continuation
			 * bytes and anything at all */
			in[i] = (char)(r == 0	? 0x20 + rand_r(&seed) % 95
				       : r == 1 ? 1 + rand_r(&seed) % 31
				       : r == 2 ? 0x80 + rand_r(&seed) % 0x50
						: 1 + rand_r(&seed) % 255);
		}
		in[len] = '\0';
		q = quote_name(in);
		ck_assert_ptr_nonnull(q);
		for (const unsigned char *p = (const unsigned char *)q; *p;) {
			size_t l = utf8_seq_len(p, strlen((const char *)p));

			ck_assert_msg(l > 0 && (*p >= 0x20 && *p != 0x7f) &&
					      !(p[0] == 0xc2 && p[1] < 0xa0),
				      "round %d: raw byte 0x%02x in output",
				      round, *p);
			p += l;
		}
		ck_assert_uint_lt(strlen(q), 4 * len + 1);
		t_unquote(q, back);
		ck_assert_msg(!strcmp(back, in),
			      "round %d: '%s' reads back wrong", round, q);
		free(q);
	}
}
END_TEST

/* No length limit: a PATH_MAX name of newlines is escaped whole. */
START_TEST(test_quote_long)
{
	size_t n = 4096;
	char *in = malloc(n + 1), *q;

	ck_assert_ptr_nonnull(in);
	memset(in, '\n', n);
	in[n] = '\0';
	q = quote_name(in);
	ck_assert_ptr_nonnull(q);
	ck_assert_uint_eq(strlen(q), 2 * n);
	for (size_t i = 0; i < 2 * n; i += 2)
		ck_assert(q[i] == '\\' && q[i + 1] == 'n');
	free(q);
	free(in);
}
END_TEST

/* qn(): QN_SLOTS results stay valid together, for one printf(). */
START_TEST(test_qn_slots)
{
	const char *r[QN_SLOTS];
	char in[QN_SLOTS][8], want[16];

	for (int i = 0; i < QN_SLOTS; i++) {
		snprintf(in[i], sizeof(in[i]), "%d\n", i);
		r[i] = qn(in[i]);
	}
	for (int i = 0; i < QN_SLOTS; i++) {
		snprintf(want, sizeof(want), "%d\\n", i);
		ck_assert_str_eq(r[i], want);
	}
	/* and the slots are reused (freed), not grown without end */
	for (int i = 0; i < 10 * QN_SLOTS; i++)
		ck_assert_str_eq(qn("\033"), "\\033");
}
END_TEST

static Suite *quote_suite(void)
{
	Suite *s = suite_create("quote");
	TCase *tc = tcase_create("quote");

	tcase_add_loop_test(
		tc, test_quote_cases, 0,
		(int)(sizeof(quote_cases) / sizeof(quote_cases[0])));
	tcase_add_test(tc, test_quote_every_byte);
	tcase_add_test(tc, test_quote_round_trip);
	tcase_add_test(tc, test_quote_long);
	tcase_add_test(tc, test_qn_slots);
	suite_add_tcase(s, tc);
	return s;
}

static Suite *json_suite(void)
{
	Suite *s = suite_create("json");
	TCase *tc;

	tc = tcase_create("structure");
	tcase_add_test(tc, test_json_empty_object);
	tcase_add_test(tc, test_json_empty_array_pretty);
	tcase_add_test(tc, test_json_members_and_commas);
	tcase_add_test(tc, test_json_pretty_layout);
	tcase_add_test(tc, test_json_scalar_top_level);
	suite_add_tcase(s, tc);

	tc = tcase_create("misuse");
	tcase_add_test(tc, test_json_key_in_array_is_error);
	tcase_add_test(tc, test_json_missing_key_in_object_is_error);
	tcase_add_test(tc, test_json_unbalanced_is_error);
	tcase_add_test(tc, test_json_two_top_level_values_is_error);
	tcase_add_test(tc, test_json_nothing_written_is_error);
	tcase_add_test(tc, test_json_depth_limit);
	tcase_add_test(tc, test_json_write_error);
	suite_add_tcase(s, tc);

	tc = tcase_create("numbers");
	tcase_add_test(tc, test_json_integers);
	tcase_add_test(tc, test_json_doubles);
	suite_add_tcase(s, tc);

	tc = tcase_create("strings");
	tcase_add_loop_test(tc, test_json_string_escapes, 0,
			    (int)(sizeof(str_cases) / sizeof(str_cases[0])));
	tcase_add_test(tc, test_json_keys_are_escaped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(json_suite());
	int failed;

	srunner_add_suite(sr, quote_suite());

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
