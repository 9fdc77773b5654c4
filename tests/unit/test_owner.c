// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_owner.c -- Check suite for fs/util/owner.h: the /etc/subuid
 * parser, the lookup of a uid's principal, the reload of a changed file
 * and the current request's principal.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owner.h"
#include "tap.h"
#include "banned.h"

static int fake_resolve(const char *name, uint32_t *ret_uid)
{
	if (!strcmp(name, "alice")) {
		*ret_uid = 1001;
		return 0;
	}
	if (!strcmp(name, "bob")) {
		*ret_uid = 1002;
		return 0;
	}
	return -ENOENT;
}

START_TEST(test_parse_and_lookup)
{
	static const char text[] =
		"alice:100000:65536\n"
		"1002:165536:65536\n"	   /* a uid as the owner */
		"ghost:300000:10\n"	   /* a name that does not resolve */
		"\n"
		"bad line\n"
		"carol:x:10\n"		   /* malformed */
		"dave:400000:0\n"	   /* empty range */
		"eve:4294967290:100\n"	   /* past 2^32 */
		"bob:231072:1";		   /* no newline at the end */
	struct owner_range *r;
	int n = owner_parse(text, strlen(text), fake_resolve, &r);

	ck_assert_int_eq(n, 4);
	/* sorted by start */
	ck_assert_uint_eq(r[0].start, 100000);
	ck_assert_uint_eq(r[3].start, 300000);
	ck_assert_uint_eq(owner_lookup(r, n, 100000), 1001);
	ck_assert_uint_eq(owner_lookup(r, n, 165535), 1001);
	ck_assert_uint_eq(owner_lookup(r, n, 165536), 1002);
	ck_assert_uint_eq(owner_lookup(r, n, 231071), 1002);
	ck_assert_uint_eq(owner_lookup(r, n, 231072), 1002);
	ck_assert_uint_eq(owner_lookup(r, n, 231073), 231073);
	/* an unknown owner: one principal for the whole range, never a uid
	 * of the range itself */
	ck_assert_uint_eq(owner_lookup(r, n, 300000), OWNER_RANGE_TAG | 300000);
	ck_assert_uint_eq(owner_lookup(r, n, 300009), OWNER_RANGE_TAG | 300000);
	ck_assert_uint_eq(owner_lookup(r, n, 300010), 300010);
	/* outside every range: the uid itself */
	ck_assert_uint_eq(owner_lookup(r, n, 0), 0);
	ck_assert_uint_eq(owner_lookup(r, n, 1001), 1001);
	ck_assert_uint_eq(owner_lookup(r, n, 99999), 99999);
	free(r);

	ck_assert_int_eq(owner_parse("", 0, fake_resolve, &r), 0);
	ck_assert_ptr_null(r);
	ck_assert_uint_eq(owner_lookup(NULL, 0, 5), 5);
}
END_TEST

START_TEST(test_load_and_reload)
{
	char path[] = "/tmp/owner-test-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "1500:200000:1000\n", 17), 17);
	close(fd);
	ck_assert_int_eq(owner_load(path), 0);
	ck_assert_uint_eq(owner_of_uid(200500), 1500);
	ck_assert_uint_eq(owner_of_uid(1500), 1500);

	/* a new file (another size, another inode) is read again once
	 * OWNER_CHECK_MS passed; owner_load() reads it at once */
	ck_assert_int_eq(unlink(path), 0);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "1600:200000:1000\n1700:300000:5\n");
	fclose(f);
	ck_assert_int_eq(owner_load(path), 0);
	ck_assert_uint_eq(owner_of_uid(200500), 1600);
	ck_assert_uint_eq(owner_of_uid(300004), 1700);

	/* gone: no ranges */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(owner_load(path), 0);
	ck_assert_uint_eq(owner_of_uid(200500), 200500);
}
END_TEST

START_TEST(test_current)
{
	char path[] = "/tmp/owner-test-XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "42:500000:100\n", 14), 14);
	close(fd);
	ck_assert_int_eq(owner_load(path), 0);
	ck_assert_uint_eq(owner_current(), OWNER_NONE);
	owner_set_uid(500001);
	ck_assert_uint_eq(owner_current_uid(), 500001);
	ck_assert_uint_eq(owner_current(), 42);
	owner_set_uid(0);
	ck_assert_uint_eq(owner_current(), 0); /* root is a principal */
	owner_set_uid(OWNER_NONE);
	ck_assert_uint_eq(owner_current(), OWNER_NONE);
	unlink(path);
}
END_TEST

static Suite *owner_suite(void)
{
	Suite *s = suite_create("owner");
	TCase *tc = tcase_create("owner");

	tcase_add_test(tc, test_parse_and_lookup);
	tcase_add_test(tc, test_load_and_reload);
	tcase_add_test(tc, test_current);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(owner_suite());
}
