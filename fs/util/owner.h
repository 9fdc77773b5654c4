/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * owner.h -- whose work a thread is doing: the principal of the request
 * it serves, for the bounds that keep one user from taking what the
 * others need (issue 32: the control gate, fs/ctl.c; the requests one
 * user may have waiting on one tier, tiers/tier_io.c).
 *
 * A principal is a user, not a uid.  A uid in a subordinate range of
 * /etc/subuid (a rootless container's, mapped there by newuidmap) is
 * counted as the user who owns the range, so that a container of 65,536
 * uids gets one user's share, not 65,536.  Every other uid is its own
 * principal, root's included: root's requests are bounded like anyone's.
 *
 * The table of ranges is read at owner_load() and read again, by the
 * first thread that asks after the file changed (its mtime, size or
 * inode; looked at no more often than every OWNER_CHECK_MS).  A range
 * whose owner is a name is resolved with getpwnam_r() then -- through
 * NSS, which may be slow: it happens only when the file changed -- and a
 * name that does not resolve makes the range a principal of its own
 * (still one for the whole range).  Lines that do not parse are skipped.
 *
 * The current principal is thread-local: a transport sets it when it
 * hands a request to the handlers (owner_set_uid()) and clears it after
 * the reply; internal work (the migrator, the memory follower) has none,
 * OWNER_NONE, and is not bounded per user.
 *
 * Locking: the table is swapped under a mutex; lookups take it briefly.
 * Depends on nothing but libc.
 */
#ifndef TIERFS_OWNER_H
#define TIERFS_OWNER_H

#include <stddef.h>
#include <stdint.h>

#define OWNER_NONE UINT32_MAX
/* The first uid of a range whose owner is unknown, tagged so that it
 * cannot equal a real uid of the range's owner: a class of its own. */
#define OWNER_RANGE_TAG (UINT32_C(1) << 31)
#define OWNER_CHECK_MS 2000

/* One subordinate range: [start, start + count) belongs to @owner. */
struct owner_range {
	uint32_t start;
	uint32_t count;
	uint32_t owner;
};

/**
 * owner_parse() - the ranges of /etc/subuid text @text (@len bytes):
 * "OWNER:START:COUNT" lines, OWNER a user name or a uid.  Names are
 * resolved with @resolve (which returns 0 and *ret_uid, or -errno); a
 * name it cannot resolve gives the range the principal
 * OWNER_RANGE_TAG | START.  Blank, malformed, zero-length and
 * overflowing lines are skipped.
 * Return: the number of ranges stored in *@ret (sorted by start,
 * malloc()ed, the caller frees; NULL when 0), or -ENOMEM.
 */
int owner_parse(const char *text, size_t len,
		int (*resolve)(const char *name, uint32_t *ret_uid),
		struct owner_range **ret);

/**
 * owner_lookup() - the principal of @uid in the sorted table @r of @n
 * ranges: the owner of the range holding it, else @uid.
 */
uint32_t owner_lookup(const struct owner_range *r, size_t n, uint32_t uid);

/**
 * owner_load() - read @path (NULL: /etc/subuid) now, and from now on
 * whenever it changes.  A missing file means no ranges.
 * Return: 0, or -errno when it exists but cannot be read (no ranges
 * then; the caller may log).
 */
int owner_load(const char *path);

/* The principal of @uid under the ranges of the loaded file. */
uint32_t owner_of_uid(uint32_t uid);

/* The request this thread serves comes from @uid (OWNER_NONE: none). */
void owner_set_uid(uint32_t uid);
/* Its principal (computed once per request), or OWNER_NONE. */
uint32_t owner_current(void);
/* Its uid as the kernel gave it, or OWNER_NONE. */
uint32_t owner_current_uid(void);

#endif /* TIERFS_OWNER_H */
