/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * strbuf.h -- a growable string buffer, for text whose length is not
 * known in advance: the computed xattrs of fs/ (tierctl builds its output
 * with stdio).  The model is
 * git's strbuf; this one never dies on a failed allocation but returns
 * -errno, as a daemon must.
 *
 * Contract:
 * - Ownership: the struct strbuf belongs to whoever declared it, and the
 *   memory behind @buf belongs to the strbuf until strbuf_detach() hands
 *   it to the caller (who then free()s it) or strbuf_release() frees it.
 *   Release (or detach) every strbuf that was initialized, on every path,
 *   whether or not an add failed.
 * - @buf is never NULL and always NUL-terminated at @buf[@len], from
 *   STRBUF_INIT/strbuf_init() on, so it can be used as a C string at any
 *   time (text with embedded NUL bytes is allowed: @len counts them).
 *   Until the first byte is added it points at a shared, read-only empty
 *   string: never write to it or free it (that is what @alloc == 0 says).
 * - Every add is all or nothing: it returns 0 with the text appended, or
 *   -ENOMEM (out of memory, or a length that would overflow size_t) or
 *   -EINVAL (strbuf_addf() only: vsnprintf() failed, e.g. an invalid wide
 *   character or more than INT_MAX bytes) with @buf, @len and the text
 *   exactly as before the call.  Nothing is ever truncated silently.
 *   Callers may therefore add a run of pieces and check the first error.
 * - strbuf_add() and strbuf_adds() may append a part of the buffer to
 *   itself.  strbuf_addf() may not: as with snprintf(), no argument may
 *   point into @sb's own buffer (format a copy, or into a second strbuf).
 * - @buf may move whenever the buffer grows: do not keep pointers into it
 *   across adds.
 * - No locking: a strbuf is used by one thread at a time.
 */
#ifndef TIERFS_UTIL_STRBUF_H
#define TIERFS_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf;    /* the text, NUL-terminated at buf[len] */
	size_t len;   /* bytes of text, without the NUL */
	size_t alloc; /* bytes allocated at buf; 0: buf is the empty slop */
};

/* The read-only empty string every unallocated strbuf points at. */
extern char strbuf_slopbuf[1];

#define STRBUF_INIT { .buf = strbuf_slopbuf, .len = 0, .alloc = 0 }

/* Make @sb empty, allocating nothing.  Cannot fail. */
void strbuf_init(struct strbuf *sb);

/* Free the memory of @sb and leave it empty as after strbuf_init(), so it
 * may be used again or released again. */
void strbuf_release(struct strbuf *sb);

/**
 * strbuf_detach() - take the text out of @sb
 * @ret_len: if not NULL, the length of the text
 *
 * Return: the text, NUL-terminated, which the caller now owns and must
 * free(); @sb is left empty as after strbuf_init().  NULL only when @sb
 * had nothing allocated and a one-byte allocation for "" failed (then
 * @sb is unchanged, still empty).
 */
char *strbuf_detach(struct strbuf *sb, size_t *ret_len);

/* Drop the text but keep the memory for reuse. */
void strbuf_reset(struct strbuf *sb);

/**
 * strbuf_grow() - make room for @extra more bytes (plus the NUL) without
 * another allocation.  For callers that write into the buffer directly
 * (between @buf + @len and @buf + @alloc - 1) and then strbuf_setlen().
 * Return: 0 or -ENOMEM (@sb unchanged).
 */
int strbuf_grow(struct strbuf *sb, size_t extra);

/* Bytes that can be written at @buf + @len before the buffer must grow,
 * not counting the terminating NUL. */
static inline size_t strbuf_avail(const struct strbuf *sb)
{
	return sb->alloc ? sb->alloc - sb->len - 1 : 0;
}

/* Set the length to @len (at most the room allocated; 0 is always fine)
 * and terminate the text there. */
void strbuf_setlen(struct strbuf *sb, size_t len);

/* Append @len bytes at @data (may contain NUL bytes). */
int strbuf_add(struct strbuf *sb, const void *data, size_t len);

/* Append the C string @s. */
int strbuf_adds(struct strbuf *sb, const char *s);

/* Append one byte. */
int strbuf_addch(struct strbuf *sb, int c);

/* Append printf-style text; see the contract above for errors. */
int strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif /* TIERFS_UTIL_STRBUF_H */
