// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_policy.c -- tierctl policy, pin and unpin: the stored policy
 * attributes user.tierfs.{tiers,pin,split,promote} and the computed
 * user.tierfs.effective.
 *
 * The daemon answers a bad value with EINVAL and nothing more; to name
 * the problem we check the value against the mount's tier list here,
 * after the daemon refused it (never before: the daemon is the judge of
 * what is valid, and may accept more than we know).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "tierctl.h"
#include "cleanup.h"
#include "macro.h"
#include "size.h"
#include "banned.h"

static const char *const policy_keys[] = { "tiers", "pin", "split", "promote" };

static bool policy_key_ok(const char *key, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(policy_keys); i++)
		if (strlen(policy_keys[i]) == len &&
		    !strncmp(policy_keys[i], key, len))
			return true;
	return false;
}

/* An unknown KEY is a usage error, but its message needs no usage. */
static int key_err(const char *key, size_t len)
{
	tierctl_err(
		"unknown policy key '%.*s': use tiers, pin, split or promote",
		(int)len, key);
	return TIERCTL_EXIT_USAGE;
}

static void xattr_name(char *buf, size_t len, const char *key, size_t klen)
{
	snprintf(buf, len, "%s%.*s", TIERFS_XATTR_PREFIX, (int)klen, key);
}

/* @s with anything unprintable shown as '?', for messages. */
static void printable(char *buf, size_t len, const char *s)
{
	size_t i = 0;

	for (; *s && i + 1 < len; s++)
		buf[i++] = isprint((unsigned char)*s) ? *s : '?';
	buf[i] = '\0';
}

/* The mount's tier names, comma-separated, into @buf; false if unknown. */
static bool tier_names(const char *path, char *buf, size_t len, struct stats *s)
{
	_cleanup_free_ char *root = NULL;
	size_t n = 0;

	buf[0] = '\0';
	if (mount_root(path, &root) < 0 || stats_read(root, s) < 0)
		return false;
	for (size_t i = 0; i < s->nrecs; i++) {
		const struct stats_rec *r = &s->recs[i];
		int k;

		if (strcmp(r->type, "tier") || !r->name)
			continue;
		k = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", r->name);
		if (k < 0 || (size_t)k >= len - n)
			break;
		n += (size_t)k;
	}
	return true;
}

/*
 * Why @value is no good for @key, in @why.  Checks what we can know
 * here; when all of it passes, a description of the expected form.
 */
static void explain_einval(const char *path, const char *key, const char *value,
			   char *why, size_t len)
{
	struct stats s = { 0 };
	char names[256], v[128];
	bool have = tier_names(path, names, sizeof(names), &s);
	_cleanup_free_ char *copy = strdup(value);
	char *save = NULL;
	size_t count = 0, nparts = 0;

	why[0] = '\0';
	if (!copy)
		goto generic;
	if (!strcmp(key, "promote")) {
		snprintf(why, len, "expected 0 or 1");
		goto out;
	}
	if (!*value) {
		snprintf(why, len, "the value is empty");
		goto out;
	}
	for (const char *p = value; *p; p++)
		nparts += *p == ',';
	nparts++;
	for (char *part = strtok_r(copy, ",", &save); part;
	     part = strtok_r(NULL, ",", &save), count++) {
		char *colon = strchr(part, ':');
		uint64_t sz;

		if (colon && !strcmp(key, "split")) {
			*colon = '\0';
			printable(v, sizeof(v), colon + 1);
			if (strcmp(colon + 1, "-1") &&
			    size_parse(colon + 1, &sz) < 0) {
				snprintf(
					why, len,
					"bad size '%s' for tier '%s' (use a number with an optional K, M, G or T suffix)",
					v, part);
				goto out;
			}
		} else if (!colon && !strcmp(key, "split") &&
			   count + 1 < nparts) {
			printable(v, sizeof(v), part);
			snprintf(
				why, len,
				"'%s' has no size; only the last entry may leave it out",
				v);
			goto out;
		}
		if (have && !stats_find(&s, "tier", part)) {
			printable(v, sizeof(v), part);
			snprintf(why, len,
				 "unknown tier '%.64s' (tiers: %.200s)", v,
				 names);
			goto out;
		}
	}
	if (strstr(value, ",,") || value[0] == ',' ||
	    value[strlen(value) - 1] == ',') {
		snprintf(why, len, "empty entry in the list");
		goto out;
	}
	if (!strcmp(key, "pin") && nparts > 1) {
		snprintf(why, len, "a pin names one tier");
		goto out;
	}
generic:
	if (!strcmp(key, "tiers"))
		snprintf(why, len,
			 "expected a comma-separated list of tiers%s%s",
			 have ? ": " : "", have ? names : "");
	else if (!strcmp(key, "pin"))
		snprintf(why, len, "expected one tier%s%s", have ? ": " : "",
			 have ? names : "");
	else
		snprintf(
			why, len,
			"expected NAME:SIZE,...,NAME (the last entry takes the rest)%s%s",
			have ? "; tiers: " : "", have ? names : "");
out:
	stats_release(&s);
}

/* One line for a failed set or remove of @key on @path. */
static int policy_err(const char *path, const char *key, const char *value,
		      int r, bool set)
{
	char why[384], v[128];
	struct stat st;

	switch (r) {
	case -EINVAL:
		if (!set)
			break;
		explain_einval(path, key, value, why, sizeof(why));
		printable(v, sizeof(v), value);
		return tierctl_err("invalid value '%s' for %s: %s", v, key,
				   why);
	case -EACCES:
		if (stat(path, &st) == 0 && st.st_uid == geteuid())
			return tierctl_err(
				"'%s' is not writable: make it writable (chmod u+w) to change its policy",
				path);
		__attribute__((fallthrough));
	case -EPERM:
		return tierctl_err(
			"only the owner or root may change the policy of '%s'",
			path);
	case -ENOTSUP:
		return tierctl_err("'%s' is not on a tierfs mount", path);
	case -ENOENT:
	case -ENOTDIR:
		return tierctl_err("cannot access '%s': %s", path,
				   strerror(-r));
	default:
		break;
	}
	return tierctl_err("cannot %s %s of '%s': %s", set ? "set" : "unset",
			   key, path, strerror(-r));
}

static int policy_set_one(const char *path, const char *key, size_t klen,
			  const char *value)
{
	char name[64], k[16];
	int r;

	xattr_name(name, sizeof(name), key, klen);
	snprintf(k, sizeof(k), "%.*s", (int)klen, key);
	r = ctl_set(path, name, value);
	if (r < 0)
		return policy_err(path, k, value, r, true);
	return 0;
}

static int policy_unset_one(const char *path, const char *key)
{
	char name[64];

	xattr_name(name, sizeof(name), key, strlen(key));
	if (removexattr(path, name) < 0 && errno != ENODATA)
		return policy_err(path, key, NULL, -errno, false);
	return 0;
}

/* Is @key among argv[from..argc) (all keys when there are none)? */
static bool key_wanted(const char *key, size_t klen, int argc, char **argv,
		       int from)
{
	if (from >= argc)
		return true;
	for (int i = from; i < argc; i++)
		if (strlen(argv[i]) == klen && !strncmp(argv[i], key, klen))
			return true;
	return false;
}

/* Without user.tierfs.effective: what @path itself sets. */
static int policy_get_stored(const char *path, int argc, char **argv, int from)
{
	tierctl_err(
		"this tierfs does not report the effective policy; showing what '%s' sets itself",
		path);
	for (size_t i = 0; i < ARRAY_SIZE(policy_keys); i++) {
		const char *key = policy_keys[i];
		_cleanup_free_ char *val = NULL;
		char name[64];
		ssize_t r;

		if (!key_wanted(key, strlen(key), argc, argv, from))
			continue;
		xattr_name(name, sizeof(name), key, strlen(key));
		r = ctl_get(path, name, &val);
		if (r == -ENODATA)
			printf("%-8s -\n", key);
		else if (r < 0)
			return tierctl_err("cannot read %s of '%s': %s", key,
					   path, strerror((int)-r));
		else
			printf("%-8s %s\n", key, val);
	}
	return 0;
}

static int policy_get(const char *path, int argc, char **argv, int from)
{
	_cleanup_free_ char *text = NULL;
	ssize_t r;
	char *line, *save = NULL;

	for (int i = from; i < argc; i++)
		if (!policy_key_ok(argv[i], strlen(argv[i])))
			return key_err(argv[i], strlen(argv[i]));
	r = ctl_get(path, TIERFS_XATTR_EFFECTIVE, &text);
	if (r == -ENODATA) {
		struct stat st;
		_cleanup_free_ char *root = NULL;
		struct stats s;

		/* a tierfs without the attribute, or not a tierfs at all? */
		if (stat(path, &st) < 0)
			return tierctl_err("cannot access '%s': %s", path,
					   strerror(errno));
		if (mount_root(path, &root) < 0 || stats_read(root, &s) < 0)
			return tierctl_err("'%s' is not on a tierfs mount",
					   path);
		stats_release(&s);
		return policy_get_stored(path, argc, argv, from);
	}
	if (r == -ENOTSUP)
		return tierctl_err("'%s' is not on a tierfs mount", path);
	if (r < 0)
		return tierctl_err("cannot read the policy of '%s': %s", path,
				   strerror((int)-r));
	/* "KEY=VALUE FROM\n" */
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '='), *sp;

		if (!eq)
			continue;
		if (!key_wanted(line, (size_t)(eq - line), argc, argv, from))
			continue;
		*eq = '\0';
		sp = strchr(eq + 1, ' ');
		if (sp)
			*sp++ = '\0';
		printf("%-8s %-24s %s\n", line, eq[1] ? eq + 1 : "-",
		       sp ? sp : "");
	}
	return 0;
}

static int policy_set(const char *path, int argc, char **argv, int from)
{
	if (from >= argc)
		return tierctl_usage_err("policy",
					 "policy set needs KEY=VALUE");
	/* check every argument before changing anything */
	for (int i = from; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');

		if (!eq)
			return tierctl_usage_err("policy",
						 "expected KEY=VALUE, not '%s'",
						 argv[i]);
		if (!policy_key_ok(argv[i], (size_t)(eq - argv[i])))
			return key_err(argv[i], (size_t)(eq - argv[i]));
	}
	for (int i = from; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		int r = policy_set_one(path, argv[i], (size_t)(eq - argv[i]),
				       eq + 1);

		if (r)
			return r;
	}
	return 0;
}

static int policy_unset(const char *path, int argc, char **argv, int from)
{
	for (int i = from; i < argc; i++)
		if (!policy_key_ok(argv[i], strlen(argv[i])))
			return key_err(argv[i], strlen(argv[i]));
	for (size_t i = 0; i < ARRAY_SIZE(policy_keys); i++) {
		int r;

		if (!key_wanted(policy_keys[i], strlen(policy_keys[i]), argc,
				argv, from))
			continue;
		r = policy_unset_one(path, policy_keys[i]);
		if (r)
			return r;
	}
	return 0;
}

int cmd_policy(int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	const char *sub, *path;
	int c;

	optind = 0;
	/* "+": stop at the first non-option, so values may start with '-' */
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1)
		return tierctl_bad_option(c, argv);
	if (argc - optind < 2)
		return tierctl_usage_err(
			argv[0], "policy needs get, set or unset and a PATH");
	sub = argv[optind];
	path = argv[optind + 1];
	if (!strcmp(sub, "get"))
		return policy_get(path, argc, argv, optind + 2);
	if (!strcmp(sub, "set"))
		return policy_set(path, argc, argv, optind + 2);
	if (!strcmp(sub, "unset"))
		return policy_unset(path, argc, argv, optind + 2);
	return tierctl_usage_err(
		argv[0], "unknown policy action '%s': use get, set or unset",
		sub);
}

int cmd_pin(int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1)
		return tierctl_bad_option(c, argv);
	if (argc - optind != 2)
		return tierctl_usage_err(argv[0], "pin takes PATH and TIER");
	return policy_set_one(argv[optind], "pin", 3, argv[optind + 1]);
}

int cmd_unpin(int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	int c;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1)
		return tierctl_bad_option(c, argv);
	if (argc - optind != 1)
		return tierctl_usage_err(argv[0], "unpin takes one PATH");
	return policy_unset_one(argv[optind], "pin");
}
