// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_policy.c -- libFuzzer target for policy_parse() (fs/policy.c), the
 * parser of the user.tierfs.{tiers,pin,split,promote} attribute values.
 *
 * Input: one byte of set-up, then the attribute value as setxattr gives
 * it (any bytes, any length).  The set-up byte picks the key (bits 0-1),
 * how many of the four tier names the mount has (bits 2-3: 1..4), and
 * whether a second value follows after a NUL byte to parse into the same
 * struct ipolicy (bit 4; a file's attributes are parsed one by one into
 * one ipolicy).
 *
 * Besides the sanitizers, it checks what policy.h promises: -EINVAL
 * leaves the ipolicy untouched, a parsed value stays inside its bounds,
 * and formatting a parsed value and parsing that text gives it back.
 * The resolved policy then goes through policy_inherit(), _finish(),
 * _home() and _place_order(), whose results are checked too.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "fuzz_check.h"
#include "banned.h"

static const char *const tier_name[] = { "ram", "pmem", "nvme", "hdd" };

static void check_ipolicy(const struct ipolicy *ip, unsigned ntiers)
{
	if (ip->has_tiers) {
		uint32_t seen = 0;

		CHECK(ip->ntiers >= 1 && ip->ntiers <= ntiers);
		for (unsigned i = 0; i < ip->ntiers; i++) {
			CHECK(ip->tiers[i] < ntiers);
			CHECK(!(seen & (1u << ip->tiers[i])));
			seen |= 1u << ip->tiers[i];
		}
	}
	if (ip->has_pin)
		CHECK(ip->pin < ntiers);
	if (ip->has_split) {
		uint64_t prev = 0;

		CHECK(ip->nsplit >= 1 && ip->nsplit <= POLICY_SPLIT_MAX);
		for (unsigned i = 0; i < ip->nsplit; i++) {
			CHECK(ip->split[i].tier < ntiers);
			/* strictly growing; only the last takes the rest */
			CHECK(ip->split[i].end > prev);
			CHECK(ip->split[i].end != UINT64_MAX ||
			      i == ip->nsplit - 1u);
			prev = ip->split[i].end;
		}
	}
}

/* Resolve @ip over the default and exercise the placement functions. */
static void check_resolved(const struct ipolicy *ip,
			   const struct tier_names *names)
{
	bool have[_POLICY_KEY_MAX] = { false };
	struct policy p;
	uint64_t offs[] = { 0, 1, 4095, UINT64_C(1) << 20, UINT64_C(1) << 33,
			    UINT64_MAX - 1, UINT64_MAX };
	char buf[512];

	policy_default(&p, names->n);
	policy_inherit(&p, ip, 7, have);
	policy_finish(&p, names->n);
	CHECK(p.allowed != 0);
	CHECK((p.allowed & ~((1u << names->n) - 1)) == 0);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		uint8_t order[TIER_MAX_CONF];
		uint32_t seen = 0;
		int home = policy_home(&p, offs[i]);
		unsigned n = policy_place_order(&p, offs[i], order);

		CHECK(home >= -1 && home < (int)names->n);
		CHECK(n >= 1 && n <= names->n);
		if (home >= 0)
			CHECK(order[0] == home);
		for (unsigned j = 0; j < n; j++) {
			CHECK(order[j] < names->n);
			CHECK(!(seen & (1u << order[j])));
			seen |= 1u << order[j];
		}
	}
	for (int k = 0; k < _POLICY_KEY_MAX; k++) {
		/* every key formats into a buffer of any size or says
		 * -ERANGE; never past @len */
		size_t lens[] = { 1, 8, sizeof(buf) };

		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			int r = policy_format(&p, names, k, buf, lens[i]);

			CHECK(r == -ERANGE ||
			      (r > 0 && (size_t)r < lens[i] &&
			       strlen(buf) == (size_t)r));
		}
	}
}

/* Format what was parsed for @k and parse it again: the same part. */
static void check_roundtrip(const struct ipolicy *ip,
			    const struct tier_names *names, enum policy_key k)
{
	bool have[_POLICY_KEY_MAX] = { false };
	struct ipolicy again;
	struct policy p;
	char buf[1024];
	const char *eq;
	int r;

	policy_default(&p, names->n);
	policy_inherit(&p, ip, 1, have);
	r = policy_format(&p, names, k, buf, sizeof(buf));
	CHECK(r > 0);
	eq = strchr(buf, '=');
	CHECK(eq != NULL);
	memset(&again, 0, sizeof(again));
	r = policy_parse(names, UINT64_C(1) << 20, k, eq + 1, strlen(eq + 1),
			 &again);
	CHECK(r == 0);
	switch (k) {
	case POLICY_TIERS:
		CHECK(again.ntiers == ip->ntiers);
		CHECK(!memcmp(again.tiers, ip->tiers, ip->ntiers));
		break;
	case POLICY_PIN:
		CHECK(again.pin == ip->pin);
		break;
	case POLICY_SPLIT:
		CHECK(again.nsplit == ip->nsplit);
		for (unsigned i = 0; i < ip->nsplit; i++) {
			CHECK(again.split[i].end == ip->split[i].end);
			CHECK(again.split[i].tier == ip->split[i].tier);
		}
		break;
	case POLICY_PROMOTE:
		CHECK(again.promote == ip->promote);
		break;
	default:
		break;
	}
}

static bool ipolicy_eq(const struct ipolicy *a, const struct ipolicy *b)
{
	if (a->has_tiers != b->has_tiers || a->has_pin != b->has_pin ||
	    a->has_split != b->has_split || a->has_promote != b->has_promote ||
	    a->ntiers != b->ntiers || a->pin != b->pin ||
	    a->nsplit != b->nsplit || a->promote != b->promote ||
	    memcmp(a->tiers, b->tiers, a->ntiers))
		return false;
	for (unsigned i = 0; i < a->nsplit; i++)
		if (a->split[i].end != b->split[i].end ||
		    a->split[i].tier != b->split[i].tier)
			return false;
	return true;
}

/* One trailing '\n' or NUL changes nothing: setfattr's and echo's
 * values parse as the bare ones do. */
static void check_terminator(const struct tier_names *names,
			     enum policy_key k, const uint8_t *v, size_t len,
			     int want, const struct ipolicy *before,
			     const struct ipolicy *ip)
{
	static const char term[] = { '\n', '\0' };
	uint8_t *copy = malloc(len + 1);

	if (!copy)
		return;
	memcpy(copy, v, len);
	for (size_t i = 0; i < sizeof(term); i++) {
		struct ipolicy again = *before;

		copy[len] = (uint8_t)term[i];
		CHECK(policy_parse(names, UINT64_C(1) << 20, k,
				   (const char *)copy, len + 1, &again) == want);
		CHECK(ipolicy_eq(&again, ip));
	}
	free(copy);
}

static void parse_one(const struct tier_names *names, enum policy_key k,
		      const uint8_t *v, size_t len, struct ipolicy *ip)
{
	struct ipolicy before = *ip;
	uint8_t *copy;
	int r;

	/* a heap copy of exactly @len bytes: ASan sees any read past it */
	copy = malloc(len ? len : 1);
	if (!copy)
		return;
	memcpy(copy, v, len);
	r = policy_parse(names, UINT64_C(1) << 20, k, (const char *)copy, len,
			 ip);
	free(copy);
	CHECK(r == 0 || r == -EINVAL);
	if (len && v[len - 1] != '\n' && v[len - 1] != '\0')
		check_terminator(names, k, v, len, r, &before, ip);
	if (r < 0) {
		CHECK(!memcmp(&before, ip, sizeof(before)));
		return;
	}
	check_ipolicy(ip, names->n);
	check_roundtrip(ip, names, k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tier_names names = { .n = 0 };
	struct ipolicy ip;
	enum policy_key k;
	const uint8_t *v, *nul;
	size_t len;

	if (size < 1)
		return 0;
	k = (enum policy_key)(data[0] & 3);
	names.n = ((data[0] >> 2) & 3) + 1u;
	for (unsigned i = 0; i < names.n; i++)
		names.name[i] = tier_name[i];
	v = data + 1;
	len = size - 1;

	memset(&ip, 0, sizeof(ip));
	if (data[0] & 0x10) {
		/* "first value NUL second value", each into the same ip;
		 * the second under the next key */
		nul = memchr(v, '\0', len);
		if (nul) {
			parse_one(&names, k, v, (size_t)(nul - v), &ip);
			len -= (size_t)(nul - v) + 1;
			v = nul + 1;
			k = (enum policy_key)((k + 1) % _POLICY_KEY_MAX);
		}
	}
	parse_one(&names, k, v, len, &ip);
	check_ipolicy(&ip, names.n);
	check_resolved(&ip, &names);
	policy_clear(&ip, k);
	return 0;
}
