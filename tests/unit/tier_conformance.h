/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tier_conformance.h -- the one conformance suite of tiers/tier.h that
 * every back end runs (issue 20), and the helpers its kind-specific
 * neighbours (test_tier_ram.c, test_tier_file.c, test_tier_pmem.c)
 * share with it.
 *
 * tier_conformance() adds to a Suite the TCases "conformance_api",
 * "conformance_data", "conformance_fault" and "conformance_threads":
 * every contract of the tier API that does not depend on the back end,
 * written against tier.h only, each test once.  Where a contract differs
 * by kind, the difference is a capability the back end declares
 * (tier_kind_caps(): TIER_CAP_PATH, TIER_CAP_CSUM) or an optional
 * method it has or lacks (ops->reserve, ops->discard_run, ops->direct),
 * never the kind itself, so a new back end gets the suite by calling it.
 *
 * Each test gets a fresh directory (checked fixture, removed with its
 * tier at teardown) inside a per-case directory that the unchecked
 * fixture removes in the parent process, so nothing is left behind even
 * when a test dies.  Tests that mount a tmpfs do so in a private mount
 * namespace of the forked test process and are skipped (tap_skip())
 * when that is not allowed or CK_FORK=no.
 */
#ifndef TIERFS_TEST_TIER_CONFORMANCE_H
#define TIERFS_TEST_TIER_CONFORMANCE_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tier.h"
#include "tier_ops.h"

/* The tier every data test gets: TC_NSLOTS slots of TC_EXT bytes.  TC_EXT
 * is more than tier_zero()'s 64 KiB chunk and one SQE (URING_CHUNK) of
 * the file tier per full-slot request. */
#define TC_EXT (256u * 1024)
#define TC_NSLOTS 16u

/*
 * struct tier_conformance_setup - the back end under test
 * @kind:  its kind; the suite asks tier_kind_caps(@kind) what applies
 * @make:  optional: make a tier of @nslots slots of @ext bytes in the
 *         fresh, empty directory @dir (a back end without TIER_CAP_PATH
 *         may ignore it); 0 and *@ret, or -errno.  NULL:
 *         tier_conformance_make().
 * @drop:  optional: free what @make made (NULL is fine) and remove @dir
 *         with everything in it.  NULL: tier_conformance_drop().
 */
struct tier_conformance_setup {
	enum tier_kind kind;
	int (*make)(enum tier_kind kind, const char *dir, uint32_t nslots,
		    uint32_t ext, struct tier **ret);
	void (*drop)(struct tier *t, const char *dir);
};

/* Add the conformance TCases for @setup (copied) to @s.  One back end
 * per executable. */
void tier_conformance(Suite *s, const struct tier_conformance_setup *setup);

/* The default @make and @drop: tier_create("conf", kind, dir, ...), and
 * tier_free() then tc_rm_rf(). */
int tier_conformance_make(enum tier_kind kind, const char *dir, uint32_t nslots,
			  uint32_t ext, struct tier **ret);
void tier_conformance_drop(struct tier *t, const char *dir);

/* ---- helpers (all assert on failure) ---- */

/* Byte @i of the pattern with @seed: never 0, so it differs from a hole,
 * and different in every 4 KiB page, so a misplaced page shows. */
unsigned char tc_pat(uint64_t i, unsigned seed);
void tc_fill(unsigned char *buf, size_t len, uint64_t base, unsigned seed);
/* Index of the first byte of @buf that is not the pattern, or -1. */
long tc_check(const unsigned char *buf, size_t len, uint64_t base,
	      unsigned seed);
/* Index of the first non-zero byte of @buf, or -1. */
long tc_nonzero(const unsigned char *buf, size_t len);
void *tc_xmalloc(size_t len);

/* Write the pattern @seed over all of @slot / check that @slot holds
 * it, or zeros, byte for byte. */
void tc_write_slot(struct tier *t, uint32_t slot, unsigned seed);
void tc_assert_slot_pattern(struct tier *t, uint32_t slot, unsigned seed);
void tc_assert_slot_zero(struct tier *t, uint32_t slot);
/* Allocate every slot of @t (t->nslots) into @slots: each distinct and
 * below nslots, the used and free counts exact after each. */
void tc_alloc_all(struct tier *t, uint32_t *slots);
/* Random unaligned writes and read-backs over every slot of @t, which
 * must be fresh, checked against a model of the whole tier; leaves
 * every slot allocated (0 .. nslots-1) and the tier synced. */
void tc_random_io(struct tier *t);

/* The counters of @t, each loaded atomically. */
struct tier_stats tc_stats(const struct tier *t);
#define ck_assert_stats(tt, rb, ro, wb, wo, err)          \
	do {                                              \
		struct tier_stats st_ = tc_stats(tt);     \
		ck_assert_uint_eq(st_.read_bytes, (rb));  \
		ck_assert_uint_eq(st_.read_ops, (ro));    \
		ck_assert_uint_eq(st_.write_bytes, (wb)); \
		ck_assert_uint_eq(st_.write_ops, (wo));   \
		ck_assert_uint_eq(st_.io_errors, (err));  \
	} while (0)

/* Directories: a fresh one, "@parent/@prefix.XXXXXX" (@parent NULL:
 * $TMPDIR or /tmp), into @out; rm -rf. */
void tc_mkdtemp(char *out, size_t size, const char *parent, const char *prefix);
void tc_rm_rf(const char *path);
/* Entries of @dir, not counting "." and ".."; the path of its only
 * entry (asserted to be one) into @out. */
int tc_count_entries(const char *dir);
void tc_only_entry(const char *dir, char *out, size_t size);
/* /proc/self/fd/N of the slab of the one tier with TIER_CAP_PATH open in
 * @dir: the one unlinked file in a private directory of @dir that is not
 * opened O_DIRECT (the file tier's second fd of its slab). */
void tc_slab_path(const char *dir, char *out, size_t size);
/* Bytes free for an unprivileged user on the filesystem of @path. */
uint64_t tc_avail(const char *path);
/* Give this (forked) test process its own mount namespace, so that it
 * can mount without anyone else seeing it.  False if not allowed (or
 * CK_FORK=no). */
bool tc_private_mounts(void);

#endif
