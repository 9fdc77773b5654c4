// SPDX-License-Identifier: GPL-2.0-or-later
/* policy.c -- see policy.h.  Pure functions: no I/O, no locks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "size.h"
#include "macro.h"
#include "banned.h"

static const char *const key_xattr[_POLICY_KEY_MAX] = {
	[POLICY_TIERS] = "user.tierfs.tiers",
	[POLICY_PIN] = "user.tierfs.pin",
	[POLICY_SPLIT] = "user.tierfs.split",
	[POLICY_PROMOTE] = "user.tierfs.promote",
	[POLICY_IO] = "user.tierfs.io",
};

enum policy_key policy_key_from_xattr(const char *name)
{
	for (int k = 0; k < _POLICY_KEY_MAX; k++)
		if (!strcmp(name, key_xattr[k]))
			return k;
	return _POLICY_KEY_INVALID;
}

const char *policy_key_name(enum policy_key k)
{
	static const char *const names[_POLICY_KEY_MAX] = {
		"tiers", "pin", "split", "promote", "io"
	};

	return k >= 0 && k < _POLICY_KEY_MAX ? names[k] : "?";
}

static int tier_lookup(const struct tier_names *names, const char *s,
		       size_t n)
{
	for (unsigned i = 0; i < names->n; i++)
		if (strlen(names->name[i]) == n && !memcmp(names->name[i], s, n))
			return (int)i;
	return -1;
}

/* A NUL-terminated copy of the value without one trailing '\n'/NUL;
 * NULL for an empty value or one with other control bytes. */
static char *clean_value(const char *value, size_t len)
{
	char *s;

	if (len && (value[len - 1] == '\n' || value[len - 1] == '\0'))
		len--;
	if (len == 0 || len > 4096)
		return NULL;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)value[i] < 0x20 || value[i] == 0x7f)
			return NULL;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	memcpy(s, value, len);
	s[len] = '\0';
	return s;
}

static int parse_tiers(const struct tier_names *names, const char *s,
		       struct ipolicy *out)
{
	uint32_t seen = 0;
	unsigned n = 0;

	for (const char *p = s;;) {
		const char *end = strchrnul(p, ',');
		int t = tier_lookup(names, p, (size_t)(end - p));

		if (t < 0 || (seen & (1u << t)) || n >= TIER_MAX_CONF)
			return -EINVAL;
		seen |= 1u << t;
		out->tiers[n++] = (uint8_t)t;
		if (!*end)
			break;
		p = end + 1;
	}
	out->ntiers = (uint8_t)n;
	return 0;
}

static int parse_split(const struct tier_names *names, uint64_t extent_size,
		       const char *s, struct ipolicy *out)
{
	uint64_t pos = 0;
	unsigned n = 0;

	for (const char *p = s;;) {
		const char *end = strchrnul(p, ',');
		const char *colon = memchr(p, ':', (size_t)(end - p));
		size_t nlen = (size_t)((colon ? colon : end) - p);
		int t = tier_lookup(names, p, nlen);
		bool last = !*end;
		uint64_t size = UINT64_MAX;

		if (t < 0 || n >= POLICY_SPLIT_MAX)
			return -EINVAL;
		if (colon) {
			char num[32];
			size_t l = (size_t)(end - colon - 1);

			if (l == 0 || l >= sizeof(num))
				return -EINVAL;
			memcpy(num, colon + 1, l);
			num[l] = '\0';
			if (!strcmp(num, "-1")) {
				size = UINT64_MAX;
			} else if (size_parse(num, &size) < 0 || size == 0) {
				return -EINVAL;
			}
		}
		/* only the last range may take "the rest" */
		if (size == UINT64_MAX && !last)
			return -EINVAL;
		if (size != UINT64_MAX && size > UINT64_MAX - pos - 1)
			return -EINVAL;
		pos = size == UINT64_MAX ? UINT64_MAX : pos + size;
		out->split[n].end = pos;
		out->split[n].tier = (uint8_t)t;
		n++;
		if (last)
			break;
		p = end + 1;
	}
	(void)extent_size;
	out->nsplit = (uint8_t)n;
	return 0;
}

int policy_parse(const struct tier_names *names, uint64_t extent_size,
		 enum policy_key k, const char *value, size_t len,
		 struct ipolicy *ip)
{
	struct ipolicy tmp = *ip;
	char *s = clean_value(value, len);
	int r = -EINVAL;
	int t;

	if (!s)
		return -EINVAL;
	switch (k) {
	case POLICY_TIERS:
		r = parse_tiers(names, s, &tmp);
		tmp.has_tiers = r == 0;
		break;
	case POLICY_PIN:
		t = tier_lookup(names, s, strlen(s));
		if (t >= 0) {
			tmp.pin = (uint8_t)t;
			tmp.has_pin = true;
			r = 0;
		}
		break;
	case POLICY_SPLIT:
		r = parse_split(names, extent_size, s, &tmp);
		tmp.has_split = r == 0;
		break;
	case POLICY_PROMOTE:
		if (!strcmp(s, "0") || !strcmp(s, "1")) {
			tmp.promote = s[0] == '1';
			tmp.has_promote = true;
			r = 0;
		}
		break;
	case POLICY_IO:
		if (!strcmp(s, "native") || !strcmp(s, "tiered")) {
			tmp.native = s[0] == 'n';
			tmp.has_io = true;
			r = 0;
		}
		break;
	default:
		break;
	}
	free(s);
	if (r == 0)
		*ip = tmp;
	return r;
}

void policy_clear(struct ipolicy *ip, enum policy_key k)
{
	switch (k) {
	case POLICY_TIERS:
		ip->has_tiers = false;
		break;
	case POLICY_PIN:
		ip->has_pin = false;
		break;
	case POLICY_SPLIT:
		ip->has_split = false;
		break;
	case POLICY_PROMOTE:
		ip->has_promote = false;
		break;
	case POLICY_IO:
		ip->has_io = false;
		break;
	default:
		break;
	}
}

void policy_default(struct policy *p, unsigned ntiers)
{
	memset(p, 0, sizeof(*p));
	p->norder = (uint8_t)ntiers;
	for (unsigned i = 0; i < ntiers; i++)
		p->order[i] = (uint8_t)i;
	p->allowed = (1u << ntiers) - 1;
	p->pin = -1;
	p->promote = true;
	p->native = true;
}

void policy_inherit(struct policy *p, const struct ipolicy *ip,
		    uint64_t from, bool have[_POLICY_KEY_MAX])
{
	if (ip->has_tiers && !have[POLICY_TIERS]) {
		memcpy(p->order, ip->tiers, ip->ntiers);
		p->norder = ip->ntiers;
		p->src[POLICY_TIERS] = from;
		have[POLICY_TIERS] = true;
	}
	if (ip->has_pin && !have[POLICY_PIN]) {
		p->pin = ip->pin;
		p->src[POLICY_PIN] = from;
		have[POLICY_PIN] = true;
	}
	if (ip->has_split && !have[POLICY_SPLIT]) {
		memcpy(p->split, ip->split, sizeof(ip->split[0]) * ip->nsplit);
		p->nsplit = ip->nsplit;
		p->src[POLICY_SPLIT] = from;
		have[POLICY_SPLIT] = true;
	}
	if (ip->has_promote && !have[POLICY_PROMOTE]) {
		p->promote = ip->promote;
		p->src[POLICY_PROMOTE] = from;
		have[POLICY_PROMOTE] = true;
	}
	if (ip->has_io && !have[POLICY_IO]) {
		p->native = ip->native;
		p->src[POLICY_IO] = from;
		have[POLICY_IO] = true;
	}
}

void policy_finish(struct policy *p, unsigned ntiers)
{
	/*
	 * A pin or split names its tiers explicitly: they may hold data
	 * even when a tiers list from elsewhere leaves them out.
	 */
	p->allowed = 0;
	for (unsigned i = 0; i < p->norder; i++)
		p->allowed |= 1u << p->order[i];
	if (p->pin >= 0)
		p->allowed |= 1u << p->pin;
	for (unsigned i = 0; i < p->nsplit; i++)
		p->allowed |= 1u << p->split[i].tier;
	p->allowed &= (1u << ntiers) - 1;
}

int policy_home(const struct policy *p, uint64_t off)
{
	if (p->pin >= 0)
		return p->pin;
	for (unsigned i = 0; i < p->nsplit; i++)
		if (off < p->split[i].end)
			return p->split[i].tier;
	/* past the last sized range with no "rest" entry: free placement */
	return -1;
}

unsigned policy_place_order(const struct policy *p, uint64_t off,
			    uint8_t ret_order[TIER_MAX_CONF])
{
	int home = policy_home(p, off);
	uint32_t used = 0;
	unsigned n = 0;

	if (home < 0) {
		memcpy(ret_order, p->order, p->norder);
		return p->norder;
	}
	ret_order[n++] = (uint8_t)home;
	used |= 1u << home;
	/* spill like any data: slower allowed tiers first, then faster */
	for (unsigned t = (unsigned)home + 1; t < TIER_MAX_CONF; t++)
		if ((p->allowed & (1u << t)) && !(used & (1u << t))) {
			ret_order[n++] = (uint8_t)t;
			used |= 1u << t;
		}
	for (int t = home - 1; t >= 0; t--)
		if ((p->allowed & (1u << t)) && !(used & (1u << t))) {
			ret_order[n++] = (uint8_t)t;
			used |= 1u << t;
		}
	return n;
}

int policy_format(const struct policy *p, const struct tier_names *names,
		  enum policy_key k, char *buf, size_t len)
{
	size_t n = 0;

#define PUT(...)                                                          \
	do {                                                              \
		int _k = snprintf(buf + n, len - n, __VA_ARGS__);         \
		if (_k < 0 || (size_t)_k >= len - n)                      \
			return -ERANGE;                                   \
		n += (size_t)_k;                                          \
	} while (0)

	PUT("%s=", policy_key_name(k));
	switch (k) {
	case POLICY_TIERS:
		for (unsigned i = 0; i < p->norder; i++)
			PUT("%s%s", i ? "," : "", names->name[p->order[i]]);
		break;
	case POLICY_PIN:
		PUT("%s", p->pin >= 0 ? names->name[p->pin] : "-");
		break;
	case POLICY_SPLIT:
		if (!p->nsplit)
			PUT("-");
		for (unsigned i = 0; i < p->nsplit; i++) {
			uint64_t start = i ? p->split[i - 1].end : 0;

			PUT("%s%s", i ? "," : "", names->name[p->split[i].tier]);
			if (p->split[i].end != UINT64_MAX)
				PUT(":%llu", (unsigned long long)(p->split[i].end - start));
		}
		break;
	case POLICY_PROMOTE:
		PUT("%d", p->promote ? 1 : 0);
		break;
	case POLICY_IO:
		PUT("%s", p->native ? "native" : "tiered");
		break;
	default:
		return -EINVAL;
	}
#undef PUT
	return (int)n;
}
