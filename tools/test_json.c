// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_json.c -- Check suite for tools/json.h: the streaming JSON writer
 * behind `tierctl stats --json`.  Each test writes into a memory stream
 * and compares the exact text; string escaping is table-driven.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
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

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
