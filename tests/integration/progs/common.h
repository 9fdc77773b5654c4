/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common.h -- small helpers shared by the integration test programs: size
 * parsing, errno names and the position-dependent data pattern.  Header-only
 * so that each program stays one plain C file plus this; no project headers.
 *
 * The pattern: byte at absolute file offset p, for seed s, is byte (p % 8)
 * of mix64((p / 8) ^ (s * K)).  Any byte identifies its position, so data
 * written to the wrong offset, a stale extent or a lost write shows up as a
 * mismatch at a precise offset.
 */
#ifndef TIERFS_TEST_COMMON_H
#define TIERFS_TEST_COMMON_H

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The helpers exit without freeing what they allocated (short-lived
 * programs).  In sanitizer builds keep LeakSanitizer quiet for them, also
 * when ASAN_OPTIONS=detect_leaks=1 is set for the daemon under test.
 */
#if defined(__SANITIZE_ADDRESS__)
#define T_HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define T_HAVE_ASAN 1
#endif
#endif
#ifdef T_HAVE_ASAN
int __lsan_is_turned_off(void);
__attribute__((visibility("default"), used)) int __lsan_is_turned_off(void)
{
	return 1;
}
#endif

static inline const char *t_errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "E???";
}

static inline uint64_t t_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline unsigned char t_pat_byte(uint64_t pos, uint64_t seed)
{
	uint64_t w = t_mix64((pos >> 3) ^ (seed * 0x9e3779b97f4a7c15ULL));

	return (unsigned char)(w >> ((pos & 7) * 8));
}

/* fill buf with the pattern for [pos, pos + len) */
static inline void t_pat_fill(unsigned char *buf, uint64_t pos, size_t len,
			      uint64_t seed)
{
	size_t i = 0;

	/* head up to a word boundary */
	while (i < len && ((pos + i) & 7))
		buf[i] = t_pat_byte(pos + i, seed), i++;
	for (; i + 8 <= len; i += 8) {
		uint64_t w = t_mix64(((pos + i) >> 3) ^
				     (seed * 0x9e3779b97f4a7c15ULL));

		memcpy(buf + i, &w, 8); /* little endian, like t_pat_byte */
	}
	for (; i < len; i++)
		buf[i] = t_pat_byte(pos + i, seed);
}

/* return index of first byte in buf not matching the pattern, or -1 */
static inline long t_pat_check(const unsigned char *buf, uint64_t pos,
			       size_t len, uint64_t seed)
{
	unsigned char tmp[4096];
	size_t done = 0;

	while (done < len) {
		size_t n = len - done < sizeof(tmp) ? len - done : sizeof(tmp);

		t_pat_fill(tmp, pos + done, n, seed);
		if (memcmp(tmp, buf + done, n)) {
			for (size_t i = 0; i < n; i++)
				if (tmp[i] != buf[done + i])
					return (long)(done + i);
		}
		done += n;
	}
	return -1;
}

/* parse "123", "4K", "1M", "2G", "1T" (binary units); exits on error */
static inline uint64_t t_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s) {
		fprintf(stderr, "bad size '%s'\n", s);
		exit(2);
	}
	switch (toupper((unsigned char)*end)) {
	case 0:
		return v;
	case 'K':
		v <<= 10;
		break;
	case 'M':
		v <<= 20;
		break;
	case 'G':
		v <<= 30;
		break;
	case 'T':
		v <<= 40;
		break;
	default:
		fprintf(stderr, "bad size '%s'\n", s);
		exit(2);
	}
	if (end[1]) {
		fprintf(stderr, "bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

#endif /* TIERFS_TEST_COMMON_H */
