// SPDX-License-Identifier: GPL-2.0-or-later
/* quote.c -- see quote.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quote.h"
#include "banned.h"

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp, min;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* The C escape letter of @c, or 0 when it has none. */
static char c_escape(unsigned char c)
{
	switch (c) {
	case '\a':
		return 'a';
	case '\b':
		return 'b';
	case '\t':
		return 't';
	case '\n':
		return 'n';
	case '\v':
		return 'v';
	case '\f':
		return 'f';
	case '\r':
		return 'r';
	case '\\':
		return '\\';
	default:
		return 0;
	}
}

/*
 * The one walk over @s behind both functions below: writes the escaped
 * form to @out when it is not NULL, and returns its length.
 */
static size_t quote_walk(const char *str, char *out)
{
	static const char octal[] = "01234567";
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), len = 0;

	while (n > 0) {
		size_t seq = 1, esc_bytes = 0;
		char letter = c_escape(*s);

		if (letter) {
			if (out) {
				out[len] = '\\';
				out[len + 1] = letter;
			}
			len += 2;
		} else if (*s < 0x20 || *s == 0x7f) {
			esc_bytes = 1;
		} else if (*s < 0x80) {
			if (out)
				out[len] = (char)*s;
			len++;
		} else {
			seq = utf8_seq_len(s, n);
			/* not UTF-8: this byte; a C1 control: both bytes */
			if (seq == 0)
				esc_bytes = seq = 1;
			else if (s[0] == 0xc2 && s[1] < 0xa0)
				esc_bytes = 2;
			else if (out)
				memcpy(out + len, s, seq);
			if (!esc_bytes)
				len += seq;
		}
		for (size_t i = 0; i < esc_bytes; i++) {
			if (out) {
				out[len] = '\\';
				out[len + 1] = octal[s[i] >> 6];
				out[len + 2] = octal[(s[i] >> 3) & 7];
				out[len + 3] = octal[s[i] & 7];
			}
			len += 4;
		}
		s += seq;
		n -= seq;
	}
	if (out)
		out[len] = '\0';
	return len;
}

size_t quote_name_len(const char *s)
{
	return quote_walk(s, NULL);
}

char *quote_name(const char *s)
{
	char *out = malloc(quote_walk(s, NULL) + 1);

	if (out)
		quote_walk(s, out);
	return out;
}

const char *qn(const char *s)
{
	static char *slot[QN_SLOTS];
	static unsigned next;
	char *q = quote_name(s);

	if (!q)
		return "(name not shown: out of memory)";
	free(slot[next]);
	slot[next] = q;
	next = (next + 1) % QN_SLOTS;
	return q;
}
