// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_policy.c -- Check suite for fs/policy.c: parsing every policy
 * attribute (table-driven, valid and invalid forms), inheritance, and
 * the placement order derived from pin, split and tiers.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "tap.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static const struct tier_names names = {
	.name = { "ram", "pmem", "nvme", "hdd" },
	.n = 4,
};

static const struct parse_case {
	enum policy_key key;
	const char *value;
	int expect; /* 0 or -EINVAL */
} parse_cases[] = {
	{ POLICY_TIERS, "ram", 0 },
	{ POLICY_TIERS, "ram,nvme", 0 },
	{ POLICY_TIERS, "hdd,ram", 0 },
	{ POLICY_TIERS, "ram,pmem,nvme,hdd", 0 },
	{ POLICY_TIERS, "ram\n", 0 },
	{ POLICY_TIERS, "", -EINVAL },
	{ POLICY_TIERS, ",ram", -EINVAL },
	{ POLICY_TIERS, "ram,", -EINVAL },
	{ POLICY_TIERS, "ram,,nvme", -EINVAL },
	{ POLICY_TIERS, "ram,ram", -EINVAL },
	{ POLICY_TIERS, "tape", -EINVAL },
	{ POLICY_TIERS, "RAM", -EINVAL },
	{ POLICY_TIERS, " ram", -EINVAL },
	{ POLICY_TIERS, "ram\tnvme", -EINVAL },
	{ POLICY_PIN, "nvme", 0 },
	{ POLICY_PIN, "nvme,ram", -EINVAL },
	{ POLICY_PIN, "", -EINVAL },
	{ POLICY_PIN, "floppy", -EINVAL },
	{ POLICY_SPLIT, "ram:8G,nvme:100G,hdd", 0 },
	{ POLICY_SPLIT, "ram:8G,nvme:-1", 0 },
	{ POLICY_SPLIT, "ram:8G,nvme:100G", 0 },
	{ POLICY_SPLIT, "hdd", 0 },
	{ POLICY_SPLIT, "ram:8G,nvme,hdd", -EINVAL },
	{ POLICY_SPLIT, "ram:-1,nvme", -EINVAL },
	{ POLICY_SPLIT, "ram:", -EINVAL },
	{ POLICY_SPLIT, "ram:0,nvme", -EINVAL },
	{ POLICY_SPLIT, "ram:-5M,nvme", -EINVAL },
	{ POLICY_SPLIT, "ram:8Q,nvme", -EINVAL },
	{ POLICY_SPLIT, "ram:8G,", -EINVAL },
	{ POLICY_SPLIT, ":8G,nvme", -EINVAL },
	{ POLICY_SPLIT, "tape:8G,nvme", -EINVAL },
	{ POLICY_SPLIT, "", -EINVAL },
	{ POLICY_PROMOTE, "0", 0 },
	{ POLICY_PROMOTE, "1", 0 },
	{ POLICY_PROMOTE, "1\n", 0 },
	{ POLICY_PROMOTE, "2", -EINVAL },
	{ POLICY_PROMOTE, "yes", -EINVAL },
	{ POLICY_PROMOTE, "", -EINVAL },
	{ POLICY_PROMOTE, "01", -EINVAL },
};

START_TEST(test_policy_parse_table)
{
	const struct parse_case *c = &parse_cases[_i];
	struct ipolicy ip, before;
	int r;

	memset(&ip, 0x5a, sizeof(ip));
	ip.has_tiers = ip.has_pin = ip.has_split = ip.has_promote = false;
	before = ip;
	r = policy_parse(&names, MiB, c->key, c->value, strlen(c->value),
			 &ip);
	ck_assert_msg(r == c->expect, "%s='%s': got %d, want %d",
		      policy_key_name(c->key), c->value, r, c->expect);
	if (r < 0)
		ck_assert_msg(!memcmp(&ip, &before, sizeof(ip)),
			      "a refused value changed the policy");
}
END_TEST

/*
 * Random bytes: each value is either rejected with -EINVAL, leaving the
 * policy exactly as it was, or accepted -- and then it holds no control
 * byte but one trailing '\n' or NUL (the contract's tolerance), and the
 * same value parses the same way again.  ASan/UBSan watch the parser.
 */
START_TEST(test_policy_parse_binary_garbage)
{
	struct ipolicy ip = { 0 }, before, again;
	char buf[64];
	unsigned seed = 12345;
	int accepted = 0, rejected = 0;

	for (int round = 0; round < 5000; round++) {
		size_t n = (size_t)(rand_r(&seed) % sizeof(buf));

		for (size_t i = 0; i < n; i++)
			buf[i] = (char)rand_r(&seed);
		for (int k = 0; k < _POLICY_KEY_MAX; k++) {
			int r;

			before = ip;
			r = policy_parse(&names, MiB, k, buf, n, &ip);
			if (r < 0) {
				ck_assert_int_eq(r, -EINVAL);
				ck_assert_int_eq(memcmp(&before, &ip, sizeof(ip)), 0);
				rejected++;
				continue;
			}
			ck_assert_int_eq(r, 0);
			for (size_t i = 0; i + 1 < n; i++)
				ck_assert_msg((unsigned char)buf[i] >= 0x20 &&
						      buf[i] != 0x7f,
					      "accepted a control byte 0x%02x",
					      (unsigned char)buf[i]);
			again = before;
			ck_assert_int_eq(policy_parse(&names, MiB, k, buf, n,
						      &again), 0);
			ck_assert_int_eq(memcmp(&again, &ip, sizeof(ip)), 0);
			accepted++;
		}
	}
	/* random bytes are almost never a valid value */
	ck_assert_int_gt(rejected, 19000);
	ck_assert_int_eq(accepted + rejected, 5000 * _POLICY_KEY_MAX);
}
END_TEST

START_TEST(test_policy_key_from_xattr)
{
	ck_assert_int_eq(policy_key_from_xattr("user.tierfs.tiers"), POLICY_TIERS);
	ck_assert_int_eq(policy_key_from_xattr("user.tierfs.pin"), POLICY_PIN);
	ck_assert_int_eq(policy_key_from_xattr("user.tierfs.split"), POLICY_SPLIT);
	ck_assert_int_eq(policy_key_from_xattr("user.tierfs.promote"), POLICY_PROMOTE);
	ck_assert_int_eq(policy_key_from_xattr("user.tierfs.layout"), _POLICY_KEY_INVALID);
	ck_assert_int_eq(policy_key_from_xattr("user.other"), _POLICY_KEY_INVALID);
}
END_TEST

static void parse_ok(struct ipolicy *ip, enum policy_key k, const char *v)
{
	ck_assert_int_eq(policy_parse(&names, MiB, k, v, strlen(v), ip), 0);
}

START_TEST(test_policy_split_ranges)
{
	struct ipolicy ip = { 0 };

	parse_ok(&ip, POLICY_SPLIT, "ram:8G,nvme:100G,hdd");
	ck_assert_int_eq(ip.nsplit, 3);
	ck_assert_uint_eq(ip.split[0].end, 8 * GiB);
	ck_assert_uint_eq(ip.split[0].tier, 0);
	ck_assert_uint_eq(ip.split[1].end, 108 * GiB);
	ck_assert_uint_eq(ip.split[1].tier, 2);
	ck_assert_uint_eq(ip.split[2].end, UINT64_MAX);
	ck_assert_uint_eq(ip.split[2].tier, 3);
}
END_TEST

START_TEST(test_policy_inherit_nearest_wins)
{
	struct ipolicy file = { 0 }, dir = { 0 }, top = { 0 };
	bool have[_POLICY_KEY_MAX] = { false };
	struct policy p;

	parse_ok(&top, POLICY_TIERS, "ram,nvme");
	parse_ok(&top, POLICY_PROMOTE, "0");
	parse_ok(&dir, POLICY_TIERS, "nvme");
	parse_ok(&file, POLICY_PIN, "hdd");

	policy_default(&p, names.n);
	policy_inherit(&p, &file, 30, have);
	policy_inherit(&p, &dir, 20, have);
	policy_inherit(&p, &top, 10, have);
	policy_finish(&p, names.n);

	ck_assert_int_eq(p.norder, 1);
	ck_assert_int_eq(p.order[0], 2);
	ck_assert_uint_eq(p.src[POLICY_TIERS], 20);
	ck_assert_int_eq(p.pin, 3);
	ck_assert_uint_eq(p.src[POLICY_PIN], 30);
	ck_assert(!p.promote);
	ck_assert_uint_eq(p.src[POLICY_PROMOTE], 10);
	ck_assert_uint_eq(p.src[POLICY_SPLIT], 0);
	/* a pin names its tier: allowed although the list leaves it out */
	ck_assert_uint_eq(p.allowed, (1u << 2) | (1u << 3));
}
END_TEST

START_TEST(test_policy_clear_reverts)
{
	struct ipolicy dir = { 0 }, top = { 0 };
	bool have[_POLICY_KEY_MAX] = { false };
	struct policy p;

	parse_ok(&top, POLICY_TIERS, "hdd");
	parse_ok(&dir, POLICY_TIERS, "ram");
	policy_clear(&dir, POLICY_TIERS);
	policy_default(&p, names.n);
	policy_inherit(&p, &dir, 2, have);
	policy_inherit(&p, &top, 1, have);
	policy_finish(&p, names.n);
	ck_assert_int_eq(p.order[0], 3);
	ck_assert_uint_eq(p.src[POLICY_TIERS], 1);
}
END_TEST

START_TEST(test_policy_default_order)
{
	struct policy p;
	uint8_t order[TIER_MAX_CONF];

	policy_default(&p, names.n);
	policy_finish(&p, names.n);
	ck_assert_uint_eq(policy_place_order(&p, 0, order), 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(order[i], i);
	ck_assert_int_eq(policy_home(&p, 123), -1);
}
END_TEST

START_TEST(test_policy_split_order)
{
	struct ipolicy ip = { 0 };
	bool have[_POLICY_KEY_MAX] = { false };
	struct policy p;
	uint8_t order[TIER_MAX_CONF];
	unsigned n;

	parse_ok(&ip, POLICY_SPLIT, "pmem:2M,nvme:4M");
	policy_default(&p, names.n);
	policy_inherit(&p, &ip, 1, have);
	policy_finish(&p, names.n);

	ck_assert_int_eq(policy_home(&p, 0), 1);
	ck_assert_int_eq(policy_home(&p, 2 * MiB - 1), 1);
	ck_assert_int_eq(policy_home(&p, 2 * MiB), 2);
	ck_assert_int_eq(policy_home(&p, 6 * MiB - 1), 2);
	/* past the last sized range: free placement */
	ck_assert_int_eq(policy_home(&p, 6 * MiB), -1);

	/* home first, then slower tiers, then faster ones */
	n = policy_place_order(&p, 3 * MiB, order);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(order[0], 2);
	ck_assert_int_eq(order[1], 3);
	ck_assert_int_eq(order[2], 1);
	ck_assert_int_eq(order[3], 0);
}
END_TEST

START_TEST(test_policy_tiers_restrict_spill)
{
	struct ipolicy ip = { 0 };
	bool have[_POLICY_KEY_MAX] = { false };
	struct policy p;
	uint8_t order[TIER_MAX_CONF];
	unsigned n;

	parse_ok(&ip, POLICY_TIERS, "ram,nvme");
	parse_ok(&ip, POLICY_PIN, "nvme");
	policy_default(&p, names.n);
	policy_inherit(&p, &ip, 1, have);
	policy_finish(&p, names.n);
	n = policy_place_order(&p, 0, order);
	/* pinned to nvme, spilling only where the list allows: ram */
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(order[0], 2);
	ck_assert_int_eq(order[1], 0);
}
END_TEST

START_TEST(test_policy_format_roundtrip)
{
	struct ipolicy ip = { 0 }, again = { 0 };
	bool have[_POLICY_KEY_MAX] = { false };
	struct policy p;
	char buf[256];
	int n;

	parse_ok(&ip, POLICY_SPLIT, "ram:8G,nvme:100G,hdd");
	policy_default(&p, names.n);
	policy_inherit(&p, &ip, 1, have);
	policy_finish(&p, names.n);
	n = policy_format(&p, &names, POLICY_SPLIT, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_str_eq(buf, "split=ram:8589934592,nvme:107374182400,hdd");
	parse_ok(&again, POLICY_SPLIT, buf + strlen("split="));
	ck_assert(!memcmp(again.split, ip.split, sizeof(ip.split[0]) * 3));
	ck_assert_int_eq(policy_format(&p, &names, POLICY_SPLIT, buf, 8), -ERANGE);
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc;

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, test_policy_parse_table, 0,
			    sizeof(parse_cases) / sizeof(parse_cases[0]));
	tcase_add_test(tc, test_policy_parse_binary_garbage);
	tcase_add_test(tc, test_policy_key_from_xattr);
	tcase_add_test(tc, test_policy_split_ranges);
	suite_add_tcase(s, tc);

	tc = tcase_create("inherit");
	tcase_add_test(tc, test_policy_inherit_nearest_wins);
	tcase_add_test(tc, test_policy_clear_reverts);
	suite_add_tcase(s, tc);

	tc = tcase_create("place");
	tcase_add_test(tc, test_policy_default_order);
	tcase_add_test(tc, test_policy_split_order);
	tcase_add_test(tc, test_policy_tiers_restrict_spill);
	tcase_add_test(tc, test_policy_format_roundtrip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(policy_suite());
}
