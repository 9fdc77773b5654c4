/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * macro.h -- small helpers every module may use: array sizes, min/max,
 * rounding, container_of.  No functions with state live here.
 */
#ifndef TIERFS_UTIL_MACRO_H
#define TIERFS_UTIL_MACRO_H

#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr)-offsetof(type, member)))

/* @a must be a power of two for the ALIGN helpers. */
#define ALIGN_DOWN(x, a) ((x) & ~((typeof(x))(a)-1))
#define ALIGN_UP(x, a) ALIGN_DOWN((x) + (a)-1, (a))
#define DIV_ROUND_UP(x, d) (((x) + (d)-1) / (d))

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define _public_ __attribute__((visibility("default")))

static inline int is_power_of_2(uint64_t x)
{
	return x && !(x & (x - 1));
}

#endif /* TIERFS_UTIL_MACRO_H */
