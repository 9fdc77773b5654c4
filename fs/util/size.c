// SPDX-License-Identifier: GPL-2.0-or-later
/* size.c -- see size.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "size.h"
#include "banned.h"

int size_parse(const char *s, uint64_t *ret_v)
{
	static const char units[] = "KMGTP";
	uint64_t v = 0;
	const char *p = s;
	unsigned shift = 0;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = *p - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*p) {
		const char *u = strchr(units, toupper((unsigned char)*p));

		if (!u)
			return -EINVAL;
		shift = 10 * (unsigned)(u - units + 1);
		p++;
		if (!strcasecmp(p, "ib") || !strcasecmp(p, "b"))
			p += strlen(p);
		if (*p)
			return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret_v = v << shift;
	return 0;
}

char *size_format(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	while (d >= 1024.0 && u < 5) {
		d /= 1024.0;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else if (d < 10.0 && d != (double)(uint64_t)d)
		snprintf(buf, len, "%.1f%c", d, units[u]);
	else
		snprintf(buf, len, "%.0f%c", d, units[u]);
	return buf;
}
