// SPDX-License-Identifier: GPL-2.0-or-later
/* json.c -- see json.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "quote.h"
#include "banned.h"

void json_init(struct json_writer *w, FILE *f, bool pretty)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->pretty = pretty;
	w->first[0] = true;
}

static void indent(struct json_writer *w)
{
	if (!w->pretty)
		return;
	fputc('\n', w->f);
	for (unsigned i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

static void put_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);

	fputc('"', f);
	while (n > 0) {
		size_t len;

		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			if (*s < 0x20) {
				fprintf(f, "\\u%04x", *s);
				break;
			}
			len = utf8_seq_len(s, n);
			if (len == 0) {
				fputs("\\ufffd", f);
				break;
			}
			fwrite(s, 1, len, f);
			s += len;
			n -= len;
			continue;
		}
		s++;
		n--;
	}
	fputc('"', f);
}

/* Separator, indentation and "key": before any value. */
static bool member(struct json_writer *w, const char *key)
{
	bool in_obj = w->depth > 0 && w->is_obj[w->depth];

	if (w->error)
		return false;
	if (w->done || (in_obj && !key) || (!in_obj && key)) {
		w->error = -EINVAL;
		return false;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	if (w->depth > 0)
		indent(w);
	w->first[w->depth] = false;
	if (key) {
		put_string(w->f, key);
		fputs(w->pretty ? ": " : ":", w->f);
	}
	return true;
}

/* After a scalar value or a closed container. */
static void value_done(struct json_writer *w)
{
	if (w->depth == 0)
		w->done = true;
}

static void begin(struct json_writer *w, const char *key, bool obj)
{
	if (!member(w, key))
		return;
	if (w->depth == JSON_MAX_DEPTH) {
		w->error = -EINVAL;
		return;
	}
	fputc(obj ? '{' : '[', w->f);
	w->depth++;
	w->first[w->depth] = true;
	w->is_obj[w->depth] = obj;
}

static void end(struct json_writer *w, bool obj)
{
	bool empty;

	if (w->error)
		return;
	if (w->depth == 0 || w->is_obj[w->depth] != obj) {
		w->error = -EINVAL;
		return;
	}
	empty = w->first[w->depth];
	w->depth--;
	if (!empty)
		indent(w);
	fputc(obj ? '}' : ']', w->f);
	value_done(w);
}

void json_object_begin(struct json_writer *w, const char *key)
{
	begin(w, key, true);
}

void json_object_end(struct json_writer *w)
{
	end(w, true);
}

void json_array_begin(struct json_writer *w, const char *key)
{
	begin(w, key, false);
}

void json_array_end(struct json_writer *w)
{
	end(w, false);
}

void json_string(struct json_writer *w, const char *key, const char *s)
{
	if (!member(w, key))
		return;
	if (s)
		put_string(w->f, s);
	else
		fputs("null", w->f);
	value_done(w);
}

void json_u64(struct json_writer *w, const char *key, uint64_t v)
{
	if (!member(w, key))
		return;
	fprintf(w->f, "%" PRIu64, v);
	value_done(w);
}

void json_i64(struct json_writer *w, const char *key, int64_t v)
{
	if (!member(w, key))
		return;
	fprintf(w->f, "%" PRId64, v);
	value_done(w);
}

void json_double(struct json_writer *w, const char *key, double v)
{
	char buf[64];

	if (!member(w, key))
		return;
	if (!isfinite(v)) {
		fputs("null", w->f);
	} else {
		/*
		 * The shortest of %.15g..%.17g that reads back as @v
		 * (%.17g always does), so 0.25 stays "0.25".  The C locale
		 * is in force (we never call setlocale): the decimal point
		 * is '.'.  A whole number gets no ".0"; JSON needs none.
		 */
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*g", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		fputs(buf, w->f);
	}
	value_done(w);
}

void json_bool(struct json_writer *w, const char *key, bool v)
{
	if (!member(w, key))
		return;
	fputs(v ? "true" : "false", w->f);
	value_done(w);
}

void json_null(struct json_writer *w, const char *key)
{
	if (!member(w, key))
		return;
	fputs("null", w->f);
	value_done(w);
}

int json_finish(struct json_writer *w)
{
	if (!w->error && (w->depth != 0 || !w->done))
		w->error = -EINVAL;
	if (w->error)
		return w->error;
	fputc('\n', w->f);
	if (fflush(w->f) != 0)
		return errno ? -errno : -EIO;
	if (ferror(w->f))
		return -EIO;
	return 0;
}
