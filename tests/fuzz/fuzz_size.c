// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_size.c -- libFuzzer target for size_parse() and size_format()
 * (fs/util/size.c), the size syntax of the mount options, the config
 * file and the split attribute.
 *
 * The input, cut at its first NUL, is the text to parse.  size_parse()'s
 * answer is compared with a second, independent reading of size.h's
 * grammar (digits, then an optional K/M/G/T/P in either case, then an
 * optional "B" or "iB"; -ERANGE past 64 bits), so a wrong value or a
 * wrong error is a crash as much as a bad memory access.  The first
 * eight bytes also go to size_format() as a number, into buffers of
 * several sizes.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "size.h"
#include "fuzz_check.h"
#include "banned.h"

/* size.h's grammar, read the slow way: 128-bit arithmetic, no strchr. */
static int ref_parse(const char *s, uint64_t *ret)
{
	unsigned __int128 v = 0;
	unsigned shift = 0;
	size_t i = 0;

	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	for (; isdigit((unsigned char)s[i]); i++) {
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > UINT64_MAX)
			return -ERANGE; /* digits overflow before the suffix */
	}
	if (s[i]) {
		switch (toupper((unsigned char)s[i])) {
		case 'K': shift = 10; break;
		case 'M': shift = 20; break;
		case 'G': shift = 30; break;
		case 'T': shift = 40; break;
		case 'P': shift = 50; break;
		default: return -EINVAL;
		}
		i++;
		if (toupper((unsigned char)s[i]) == 'I' &&
		    toupper((unsigned char)s[i + 1]) == 'B')
			i += 2;
		else if (toupper((unsigned char)s[i]) == 'B')
			i++;
		if (s[i])
			return -EINVAL;
	}
	v <<= shift;
	if (v > UINT64_MAX)
		return -ERANGE;
	*ret = (uint64_t)v;
	return 0;
}

static void check_format(uint64_t v)
{
	static const size_t lens[] = { 1, 2, 4, 8, 32 };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		/* heap buffers of exactly @len bytes, so ASan sees overruns */
		char *buf = malloc(lens[i]);
		char *r;

		if (!buf)
			return;
		r = size_format(v, buf, lens[i]);
		CHECK(r == buf);
		CHECK(strnlen(buf, lens[i]) < lens[i]);
		if (lens[i] == 32 && v < 1024) {
			/* below 1K it is the plain number, which parses back */
			uint64_t back;

			CHECK(size_parse(buf, &back) == 0 && back == v);
		}
		free(buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t v = 0xdeadbeef, want = 0xdeadbeef, n = 0;
	char *s;
	int r, rr;

	/* a heap copy with nothing after its NUL for ASan to hide */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	r = size_parse(s, &v);
	rr = ref_parse(s, &want);
	if (r != rr)
		fprintf(stderr, "size_parse(\"%s\") = %d, expected %d\n", s, r,
			rr);
	CHECK(r == rr);
	if (r == 0) {
		CHECK(v == want);
	} else {
		CHECK(v == 0xdeadbeef); /* never written on failure */
	}
	free(s);

	memcpy(&n, data, size < sizeof(n) ? size : sizeof(n));
	check_format(n);
	if (r == 0)
		check_format(v);
	return 0;
}
