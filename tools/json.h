/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h -- a small streaming JSON writer for tierctl's machine output.
 *
 * It writes straight to a FILE and keeps only a stack of "is this the
 * first member" flags, so a document is built top-down with no tree in
 * memory.  What it guarantees is a valid document (RFC 8259) for any
 * input: strings are escaped, bytes that are not UTF-8 become U+FFFD,
 * and NaN or infinities become null.  What it does not do is check the
 * caller's structure beyond that: a key inside an array, a missing key
 * inside an object, or unbalanced begin/end calls set an error that
 * json_finish() reports, and the output is then not to be trusted.
 *
 * Every value call takes a @key: the member name inside an object, NULL
 * at the top level and inside arrays.
 */
#ifndef TIERCTL_JSON_H
#define TIERCTL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json_writer {
	FILE *f;	/* borrowed */
	bool pretty;	/* two-space indentation, one member a line */
	unsigned depth; /* open containers */
	bool first[JSON_MAX_DEPTH + 1];	 /* no member yet at this depth */
	bool is_obj[JSON_MAX_DEPTH + 1]; /* container is an object */
	bool done;			 /* the top-level value is complete */
	int error;			 /* 0 or -EINVAL for misuse */
};

void json_init(struct json_writer *w, FILE *f, bool pretty);

void json_object_begin(struct json_writer *w, const char *key);
void json_object_end(struct json_writer *w);
void json_array_begin(struct json_writer *w, const char *key);
void json_array_end(struct json_writer *w);

/* A NULL @s writes null. */
void json_string(struct json_writer *w, const char *key, const char *s);
void json_u64(struct json_writer *w, const char *key, uint64_t v);
void json_i64(struct json_writer *w, const char *key, int64_t v);
/* Non-finite values write null (JSON has no NaN). */
void json_double(struct json_writer *w, const char *key, double v);
void json_bool(struct json_writer *w, const char *key, bool v);
void json_null(struct json_writer *w, const char *key);

/*
 * json_finish() - end the document with a newline
 * Return: 0 when exactly one complete value was written, -EINVAL after
 * misuse, -errno when flushing the stream fails, -EIO when the stream
 * reported an error before.
 */
int json_finish(struct json_writer *w);

#endif /* TIERCTL_JSON_H */
