// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * job_request.c -- see job_request.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "job_request.h"
#include "ctl_proto.h"
#include "size.h"
#include "banned.h"

const char *const request_policy_keys[REQUEST_POLICY_KEYS] = {
	"tiers",
	"pin",
	"split",
	"promote",
	"io",
};

/* a tier name: 1 to TIERFS_TIER_NAME_MAX letters, digits, '_' or '-' */
static bool tier_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > TIERFS_TIER_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

/* copy @n bytes of @s into @buf (@len bytes) as a string; false if long */
static bool copy_part(char *buf, size_t len, const char *s, size_t n)
{
	if (n >= len)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

const char *request_quota_check(const char *value, uint64_t max, char *ret,
				size_t len)
{
	char part[REQUEST_VALUE_MAX], seen[REQUEST_VALUE_MAX] = ",";
	uint64_t v, total = 0;
	bool has_total = false;
	const char *p = value;

	if (!*value)
		return "empty";
	if (!strchr(value, ':')) {
		if (size_parse(value, &v) < 0)
			return "not a size (examples: 100G, 512M)";
		if (v == 0)
			return "a quota of 0 leaves no room";
		total = v;
		has_total = true;
		p = NULL;
	}
	while (p) {
		const char *end = strchrnul(p, ',');
		const char *colon = memchr(p, ':', (size_t)(end - p));
		size_t klen;

		if (!colon || !copy_part(part, sizeof(part), colon + 1,
					 (size_t)(end - colon - 1)))
			return "expected SIZE or KEY:SIZE,... (KEY total, inodes or a tier)";
		klen = (size_t)(colon - p);
		if (!tier_name_ok(p, klen))
			return "bad key: use total, inodes or a tier name";
		if (size_parse(part, &v) < 0)
			return "not a size (examples: 100G, ram:4G,total:200G)";
		/* each key once: look for ",KEY," in what came before */
		if (strlen(seen) + klen + 2 > sizeof(seen))
			return "too long";
		{
			char key[TIERFS_TIER_NAME_MAX + 3];

			snprintf(key, sizeof(key), ",%.*s,", (int)klen, p);
			if (strstr(seen, key))
				return "a key given twice";
			strncat(seen, key + 1, sizeof(seen) - strlen(seen) - 1);
		}
		if (klen == 5 && !memcmp(p, "total", 5)) {
			if (v == 0)
				return "a quota of 0 leaves no room";
			total = v;
			has_total = true;
		}
		p = *end ? end + 1 : NULL;
	}
	if (max && has_total && total > max)
		return "more than the site's max_quota";
	if (max && !has_total) {
		if (snprintf(ret, len, "%s,total:%llu", value,
			     (unsigned long long)max) >= (int)len)
			return "too long";
		return NULL;
	}
	if (!copy_part(ret, len, value, strlen(value)))
		return "too long";
	return NULL;
}

/* check one policy value of key @k ("tiers", "pin", ...) */
static const char *policy_value_check(const char *k, const char *v)
{
	uint64_t size;

	if (!strcmp(k, "promote"))
		return strcmp(v, "0") && strcmp(v, "1") ? "promote is 0 or 1"
							: NULL;
	if (!strcmp(k, "io"))
		return strcmp(v, "native") && strcmp(v, "tiered")
			       ? "io is native or tiered"
			       : NULL;
	if (!strcmp(k, "pin"))
		return tier_name_ok(v, strlen(v)) ? NULL
						  : "pin takes one tier name";
	for (const char *p = v;;) {
		const char *end = strchrnul(p, ',');
		const char *colon = memchr(p, ':', (size_t)(end - p));
		bool last = !*end;
		char num[32];

		if (!tier_name_ok(p, (size_t)((colon ? colon : end) - p)))
			return "expected tier names (letters, digits, '_', '-')";
		if (colon && strcmp(k, "split"))
			return "tiers takes a list of tier names, no sizes";
		if (colon) {
			if (!copy_part(num, sizeof(num), colon + 1,
				       (size_t)(end - colon - 1)))
				return "bad size in split";
			if (!strcmp(num, "-1"))
				colon = NULL; /* "the rest", as no size */
			else if (size_parse(num, &size) < 0 || size == 0)
				return "bad size in split (examples: ram:60G,nvme)";
		}
		/* only the last range of a split may take the rest */
		if (!strcmp(k, "split") && !colon && !last)
			return "only the last tier of a split may go without a size";
		if (last)
			return NULL;
		p = end + 1;
	}
}

const char *request_policy_next(const char **pp, unsigned *ret_key, char *val,
				size_t len)
{
	const char *p = *pp, *eq = strchr(p, '='), *end;
	size_t klen;
	unsigned k;

	if (!eq)
		return "expected KEY=VALUE (KEY tiers, pin, split, promote or io)";
	klen = (size_t)(eq - p);
	for (k = 0; k < REQUEST_POLICY_KEYS; k++)
		if (strlen(request_policy_keys[k]) == klen &&
		    !memcmp(request_policy_keys[k], p, klen))
			break;
	if (k == REQUEST_POLICY_KEYS)
		return "unknown key (known: tiers, pin, split, promote, io)";
	/* the value ends at the last comma before the next '=' */
	end = eq + 1 + strcspn(eq + 1, "=");
	if (*end)
		while (end > eq && *end != ',')
			end--;
	if (end <= eq + 1)
		return "empty value";
	if (!copy_part(val, len, eq + 1, (size_t)(end - eq - 1)))
		return "value too long";
	*ret_key = k;
	*pp = *end ? end + 1 : NULL;
	return NULL;
}

const char *request_policy_check(const char *value, char *bad, size_t badlen)
{
	const char *p = value, *msg;
	bool seen[REQUEST_POLICY_KEYS] = { false };
	char val[REQUEST_VALUE_MAX];
	unsigned k;

	if (!*value)
		return "empty";
	while (p) {
		const char *start = p;

		msg = request_policy_next(&p, &k, val, sizeof(val));
		if (!msg && seen[k])
			msg = "a key given twice";
		if (!msg)
			msg = policy_value_check(request_policy_keys[k], val);
		if (msg) {
			snprintf(bad, badlen, "%.*s", (int)strcspn(start, "="),
				 start);
			return msg;
		}
		seen[k] = true;
	}
	return NULL;
}
