/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * size.h -- parse and format byte sizes ("8G", "512M", "4096") as the
 * mount options, the config file and the policy xattrs spell them.
 * Suffixes K, M, G, T, P are binary (1024-based), in either case, with an
 * optional trailing "B" or "iB" ("8GiB", "8GB" and "8G" are equal).
 */
#ifndef TIERFS_UTIL_SIZE_H
#define TIERFS_UTIL_SIZE_H

#include <stddef.h>
#include <stdint.h>

/**
 * size_parse() - parse a size
 * @s:     NUL-terminated text; no surrounding blanks allowed
 * @ret_v: on success, the size in bytes
 *
 * Return: 0, -EINVAL for empty or malformed text (including negative
 * numbers and fractions), or -ERANGE when the value overflows 64 bits.
 */
int size_parse(const char *s, uint64_t *ret_v);

/**
 * size_format() - format @v in human units ("1.5G", "512M", "17")
 * Return: @buf, always NUL-terminated.
 */
char *size_format(uint64_t v, char *buf, size_t len);

#endif /* TIERFS_UTIL_SIZE_H */
