// SPDX-License-Identifier: GPL-2.0-or-later
/* strbuf.c -- see strbuf.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "banned.h"

/* First allocation; then the allocation doubles, so n adds cost O(n). */
#define STRBUF_MIN_ALLOC 64

/*
 * Every unallocated strbuf points here.  Nothing writes to it: all writes
 * happen after strbuf_grow() has allocated (strbuf_setlen() leaves an
 * unallocated buffer alone).
 */
char strbuf_slopbuf[1];

void strbuf_init(struct strbuf *sb)
{
	sb->buf = strbuf_slopbuf;
	sb->len = 0;
	sb->alloc = 0;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

char *strbuf_detach(struct strbuf *sb, size_t *ret_len)
{
	size_t len = sb->len;
	char *s;

	if (sb->alloc) {
		s = sb->buf;
	} else {
		s = malloc(1);
		if (!s)
			return NULL;
		s[0] = '\0';
	}
	if (ret_len)
		*ret_len = len;
	strbuf_init(sb);
	return s;
}

void strbuf_reset(struct strbuf *sb)
{
	strbuf_setlen(sb, 0);
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc)
		return; /* empty and nothing allocated: buf is "" already */
	if (len >= sb->alloc)
		len = sb->alloc - 1; /* misuse; never write past the end */
	sb->len = len;
	sb->buf[len] = '\0';
}

int strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need, nalloc;
	char *nb;

	/* len + extra + 1 must fit, and malloc takes no more than this */
	if (extra > (size_t)PTRDIFF_MAX - 1 - sb->len)
		return -ENOMEM;
	need = sb->len + extra + 1;
	if (need <= sb->alloc)
		return 0;
	nalloc = sb->alloc < STRBUF_MIN_ALLOC ? STRBUF_MIN_ALLOC : sb->alloc;
	while (nalloc < need)
		nalloc = nalloc > (size_t)PTRDIFF_MAX / 2 ? need : 2 * nalloc;
	nb = realloc(sb->alloc ? sb->buf : NULL, nalloc);
	if (!nb)
		return -ENOMEM;
	if (!sb->alloc)
		nb[0] = '\0'; /* len is 0 while nothing is allocated */
	sb->buf = nb;
	sb->alloc = nalloc;
	return 0;
}

int strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	uintptr_t p = (uintptr_t)data, b = (uintptr_t)sb->buf;
	/* a part of the buffer itself: find it again after a realloc */
	bool inside = sb->alloc && p >= b && p <= b + sb->len;
	size_t off = inside ? (size_t)(p - b) : 0;
	int r;

	if (len == 0)
		return 0;
	r = strbuf_grow(sb, len);
	if (r < 0)
		return r;
	memmove(sb->buf + sb->len, inside ? sb->buf + off : data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_adds(struct strbuf *sb, const char *s)
{
	return strbuf_add(sb, s, strlen(s));
}

int strbuf_addch(struct strbuf *sb, int c)
{
	int r = strbuf_grow(sb, 1);

	if (r < 0)
		return r;
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n, r;

	/* never hand the shared empty string to vsnprintf */
	if (!sb->alloc) {
		r = strbuf_grow(sb, STRBUF_MIN_ALLOC - 1);
		if (r < 0)
			return r;
	}
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, strbuf_avail(sb) + 1, fmt, cp);
	va_end(cp);
	if (n >= 0 && (size_t)n > strbuf_avail(sb)) {
		/* it did not fit: undo the truncated attempt, grow, again */
		sb->buf[sb->len] = '\0';
		r = strbuf_grow(sb, (size_t)n);
		if (r < 0)
			return r;
		va_copy(cp, ap);
		if (vsnprintf(sb->buf + sb->len, strbuf_avail(sb) + 1, fmt, cp) != n)
			n = -1; /* the arguments changed under us */
		va_end(cp);
	}
	if (n < 0) {
		sb->buf[sb->len] = '\0'; /* drop whatever it wrote */
		return -EINVAL;
	}
	sb->len += (size_t)n;
	return 0;
}

int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
	return r;
}
