/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * policy.h -- per-directory and per-file placement policies, from the
 * user.tierfs.{tiers,pin,split,promote,io} extended attributes.
 *
 * Each attribute is inherited on its own: for every key, the nearest of
 * the file itself, its directory, that directory's parent, ... up to the
 * mount root that sets it wins, else the default.  A file's "directory"
 * is the one holding its most recent name (link or rename moves it;
 * removing that name hands over to the next most recent one, and a file
 * with no name left follows the root).
 *
 * The parse and placement functions here are pure (no I/O, no locks),
 * so that the unit test drives them with tables; the resolution walks
 * the namespace and is in placement.c (policy_get()).
 */
#ifndef TIERFS_POLICY_H
#define TIERFS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"

#define POLICY_SPLIT_MAX 8 /* ranges in one split */

struct split_range {
	uint64_t end;	/* exclusive; UINT64_MAX for "the rest" */
	uint8_t tier;
};

/* What one inode's own attributes say; each part optional. */
struct ipolicy {
	bool has_tiers, has_pin, has_split, has_promote, has_io;
	uint8_t tiers[TIER_MAX_CONF];
	uint8_t ntiers;
	uint8_t pin;
	uint8_t nsplit;
	struct split_range split[POLICY_SPLIT_MAX];
	bool promote;
	bool native; /* io: native (true) or tiered */
};

enum policy_key {
	POLICY_TIERS,
	POLICY_PIN,
	POLICY_SPLIT,
	POLICY_PROMOTE,
	POLICY_IO, /* issue 33: native (FUSE passthrough) or tiered */
	_POLICY_KEY_MAX,
	_POLICY_KEY_INVALID = -1,
};

/* The policy in force for one inode. */
struct policy {
	uint32_t allowed;		/* bit per tier that may hold data */
	uint8_t order[TIER_MAX_CONF];	/* preference order of those */
	uint8_t norder;
	int pin;			/* tier, or -1 */
	uint8_t nsplit;			/* 0: no split */
	struct split_range split[POLICY_SPLIT_MAX];
	bool promote;
	/*
	 * io=native: a new file may keep its bytes in a backing file of
	 * one tier that the kernel reads and writes itself (native.h), on
	 * a mount with native I/O; io=tiered: through the daemon, in
	 * extents.  Default native.
	 */
	bool native;
	/* inode number that set each key, 0 for the default */
	uint64_t src[_POLICY_KEY_MAX];
};

/* Tier names of the mount, in stack order; what values are checked
 * against. */
struct tier_names {
	const char *name[TIER_MAX_CONF];
	unsigned n;
};

/* "user.tierfs.tiers" -> POLICY_TIERS etc., or _POLICY_KEY_INVALID. */
enum policy_key policy_key_from_xattr(const char *name);
const char *policy_key_name(enum policy_key k);

/**
 * policy_parse() - parse the value of one policy attribute into @ip
 * @value, @len: as given to setxattr (one trailing '\n' or NUL is
 *               tolerated; anything else malformed is an error)
 * Return: 0 (only the @k part of @ip changed), or -EINVAL (@ip unchanged).
 */
int policy_parse(const struct tier_names *names, uint64_t extent_size,
		 enum policy_key k, const char *value, size_t len,
		 struct ipolicy *ip);

/* Drop the @k part of @ip (the attribute was removed). */
void policy_clear(struct ipolicy *ip, enum policy_key k);

/* The default: every tier in stack order, no pin or split, promote on,
 * io native. */
void policy_default(struct policy *p, unsigned ntiers);

/* Apply @ip's parts that @p does not have yet (@from marks them set). */
void policy_inherit(struct policy *p, const struct ipolicy *ip,
		    uint64_t from, bool have[_POLICY_KEY_MAX]);

/* Finish after the walk: derive @allowed and @order. */
void policy_finish(struct policy *p, unsigned ntiers);

/**
 * policy_home() - the tier that byte @off of a file belongs on by pin or
 * split, or -1 when placement is free (tiers order and heat decide).
 */
int policy_home(const struct policy *p, uint64_t off);

/**
 * policy_place_order() - the tiers to try, in order, for a new extent at
 * byte @off: its home first, then the other allowed tiers, slower ones
 * before faster ones; or the preference order when it has no home.
 * Return: the number of entries written to @ret_order.
 */
unsigned policy_place_order(const struct policy *p, uint64_t off,
			    uint8_t ret_order[TIER_MAX_CONF]);

/* "KEY=VALUE" text of each key of @p (VALUE as the attribute spells it). */
int policy_format(const struct policy *p, const struct tier_names *names,
		  enum policy_key k, char *buf, size_t len);

#endif /* TIERFS_POLICY_H */
