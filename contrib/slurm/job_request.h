/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_request.h -- check what a job asks for with --scratch-quota and
 * --scratch-policy, in sbatch/srun/salloc (to refuse a bad request at
 * submission) and again in the job prolog.  Pure string work: no I/O,
 * no allocation, no state.  Sizes are fs/util/size.h's; tier names
 * cannot be checked against a node's stack here, only their form.
 */
#ifndef TIERFS_SPANK_JOB_REQUEST_H
#define TIERFS_SPANK_JOB_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#define REQUEST_VALUE_MAX 256 /* longest quota or policy value taken */
#define REQUEST_POLICY_KEYS 5 /* tiers, pin, split, promote, io */

/* The keys of --scratch-policy, stored as user.tierfs.KEY. */
extern const char *const request_policy_keys[REQUEST_POLICY_KEYS];

/**
 * request_quota_check() - check a --scratch-quota value: "SIZE" (the
 * total) or "KEY:SIZE,..." with KEY total, inodes or a tier name, each
 * once.  The total must not pass @max (0: no maximum).  A list without a
 * total gets ",total:MAX" appended when there is a maximum.  The result,
 * the value to set, goes to @ret (@len bytes).
 * Return: NULL, or a message saying what is wrong (static text; "more
 * than the site's max_quota" for a total over @max).
 */
const char *request_quota_check(const char *value, uint64_t max, char *ret,
				size_t len);

/**
 * request_policy_next() - the next KEY=VALUE of a --scratch-policy
 * string at *@pp: a value runs up to the next ",KEY=" (values such as
 * split=ram:60G,nvme hold commas but never '=').  Writes the key's index
 * into request_policy_keys to *@ret_key and the value to @val (@len
 * bytes); moves *@pp on (NULL at the end).
 * Return: NULL, or a message saying what is wrong (static text).
 */
const char *request_policy_next(const char **pp, unsigned *ret_key, char *val,
				size_t len);

/**
 * request_policy_check() - check a whole --scratch-policy string: known
 * keys, each at most once, values of the right form.
 * Return: NULL, or a message saying what is wrong (static text), with
 * the key it is about in @bad (@badlen bytes; "" when none).
 */
const char *request_policy_check(const char *value, char *bad, size_t badlen);

#endif /* TIERFS_SPANK_JOB_REQUEST_H */
