/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options_i.h -- what options.c (command line, -o, defaults) shares
 * with config.c (the INI file reader) and with nobody else: the error
 * line writer and the setters both spellings of a setting go through,
 * so that --name, -o name= and the file's "name =" accept and refuse
 * exactly the same values.  Everyone else uses options.h.
 *
 * Locking: none; options are parsed on one thread at startup.
 * Return: 0, or -EINVAL with one line for the user in @err (through
 * fail()), or -ENOMEM; set_global() also returns -ENOENT for a key that
 * is not a global setting, leaving the caller to decide.
 */
#ifndef TIERFS_OPTIONS_I_H
#define TIERFS_OPTIONS_I_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

/* Write one message line to @err; returns -EINVAL for convenience. */
int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Parse size @s (K, M, G, T suffixes) into *@ret; @what names it in the
 * message.  *@ret is not written on failure. */
int parse_size_opt(const char *what, const char *s, uint64_t *ret, char *err,
		   size_t errlen);
/* Does tier name @name use only letters, digits, '_' and '-'? */
bool tier_name_chars_ok(const char *name);
/* Set global setting @key (underscore spelling) from @value (NULL for a
 * bare flag); -ENOENT for a key that is not ours. */
int set_global(struct tierfs_options *opt, const char *key, const char *value,
	       char *err, size_t errlen);
/* Append the @n bytes at @o to opt->fuse_opts, comma-joined. */
int add_fuse_opt(struct tierfs_options *opt, const char *o, size_t n);
/* Split a comma-separated -o list (or the file's "options ="): our keys
 * and tier= are taken, the rest goes to opt->fuse_opts. */
int parse_o(struct tierfs_options *opt, const char *list, char *err,
	    size_t errlen);

#endif /* TIERFS_OPTIONS_I_H */
