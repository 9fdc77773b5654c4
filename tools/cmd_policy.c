// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_policy.c -- tierctl policy, pin and unpin: the stored policy
 * attributes user.tierfs.{tiers,pin,split,promote,io} and the computed
 * user.tierfs.effective.
 *
 * The daemon answers a bad value with EINVAL and nothing more; to name
 * the problem we check the value against the mount's tier list here,
 * after the daemon refused it (never before: the daemon is the judge of
 * what is valid, and may accept more than we know).
 */
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

static const char *const policy_keys[] = { "tiers", "pin", "split", "promote",
					   "io" };

static bool policy_key_ok(const char *key, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(policy_keys); i++)
		if (strlen(policy_keys[i]) == len &&
		    !strncmp(policy_keys[i], key, len))
			return true;
	return false;
}

/* An unknown KEY is a usage error, but its message needs no usage.  The
 * key is the user's text: escaped like a name, so that it can neither
 * split the line nor reach the terminal as a control sequence. */
static int key_err(const char *key, size_t len)
{
	_cleanup_free_ char *k = strndup(key, len);

	tierctl_err(
		"unknown policy key '%s': use tiers, pin, split, promote or io",
		k ? qn(k) : "?");
	return TIERCTL_EXIT_USAGE;
}

/*
 * The daemon reads split sizes back in bytes ("ram:1073741824,disk"):
 * show each as the largest unit that keeps it exact ("ram:1G,disk"),
 * which policy set takes back as it is.  Anything else as it is.
 */
static void split_exact(const char *value, char *buf, size_t len)
{
	_cleanup_free_ char *copy = strdup(value);
	char *save = NULL;
	size_t n = 0;

	snprintf(buf, len, "%s", value); /* as it came, if not a split */
	if (!copy || strstr(value, ",,") || *value == ',')
		return;
	for (char *part = strtok_r(copy, ",", &save); part;
	     part = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(part, ':');
		const char *sep = n ? "," : "";
		uint64_t v;
		char h[32];
		int k;

		/* digits only: "-1" (the rest) and what we cannot read stay */
		if (colon && colon[1] && strspn(colon + 1, "0123456789") ==
						 strlen(colon + 1) &&
		    size_parse(colon + 1, &v) == 0) {
			*colon = '\0';
			k = snprintf(buf + n, len - n, "%s%s:%s", sep, part,
				     size_exact(v, h, sizeof(h)));
		} else {
			k = snprintf(buf + n, len - n, "%s%s", sep, part);
		}
		if (k < 0 || (size_t)k >= len - n) {
			snprintf(buf, len, "%s", value);
			return;
		}
		n += (size_t)k;
	}
	if (*value && value[strlen(value) - 1] == ',')
		snprintf(buf, len, "%s", value);
}


static void xattr_name(char *buf, size_t len, const char *key, size_t klen)
{
	snprintf(buf, len, "%s%.*s", TIERFS_XATTR_PREFIX, (int)klen, key);
}

/* @s escaped (quote.h) and cut to fit @buf, for messages. */
static void printable(char *buf, size_t len, const char *s)
{
	snprintf(buf, len, "%s", qn(s));
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
	if (!strcmp(key, "io")) {
		snprintf(why, len, "expected native or tiered");
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

/* One line for a failed set or remove of @key on @p. */
static int policy_err(const struct tierfs_path *p, const char *key,
		      const char *value, int r, bool set)
{
	char why[384];
	struct stat st;

	switch (r) {
	case -EINVAL:
		if (!set)
			break;
		explain_einval(p->at, key, value, why, sizeof(why));
		return tierctl_err("invalid value '%s' for %s: %s", qn(value),
				   key, why);
	case -EACCES:
		if (fstat(p->fd, &st) == 0 && st.st_uid == geteuid())
			return tierctl_err(
				"'%s' is not writable: make it writable (chmod u+w) to change its policy",
				qn(p->path));
		__attribute__((fallthrough));
	case -EPERM:
		return tierctl_err(
			"only the owner or root may change the policy of '%s'",
			qn(p->path));
	case -ENOTSUP:
		/* on a tierfs mount (checked): this file takes no policy */
		return tierctl_err("'%s' takes no policy", qn(p->path));
	default:
		break;
	}
	return tierctl_err("cannot %s %s of '%s': %s", set ? "set" : "unset",
			   key, qn(p->path), strerror(-r));
}

static int policy_set_one(const struct tierfs_path *p, const char *key,
			  size_t klen, const char *value)
{
	char name[64], k[16];
	int r;

	xattr_name(name, sizeof(name), key, klen);
	snprintf(k, sizeof(k), "%.*s", (int)klen, key);
	r = ctl_set(p->at, name, value);
	if (r < 0)
		return policy_err(p, k, value, r, true);
	return 0;
}

static int policy_unset_one(const struct tierfs_path *p, const char *key)
{
	char name[64];

	xattr_name(name, sizeof(name), key, strlen(key));
	if (removexattr(p->at, name) < 0 && errno != ENODATA)
		return policy_err(p, key, NULL, -errno, false);
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

/* @value of @key as policy get shows it; valid until the next call. */
static const char *shown_value(const char *key, const char *value)
{
	static char buf[1024];

	if (strcmp(key, "split"))
		return value;
	split_exact(value, buf, sizeof(buf));
	return buf;
}

/* Without user.tierfs.effective: what @p itself sets. */
static int policy_get_stored(const struct tierfs_path *p, int argc, char **argv,
			     int from)
{
	tierctl_err(
		"this tierfs does not report the effective policy; showing what '%s' sets itself",
		qn(p->path));
	for (size_t i = 0; i < ARRAY_SIZE(policy_keys); i++) {
		const char *key = policy_keys[i];
		_cleanup_free_ char *val = NULL;
		char name[64];
		ssize_t r;

		if (!key_wanted(key, strlen(key), argc, argv, from))
			continue;
		xattr_name(name, sizeof(name), key, strlen(key));
		r = ctl_get(p->at, name, &val);
		if (r == -ENODATA)
			printf("%-8s -\n", key);
		else if (r < 0)
			return tierctl_err("cannot read %s of '%s': %s", key,
					   qn(p->path), strerror((int)-r));
		else
			printf("%-8s %s\n", key, qn(shown_value(key, val)));
	}
	return 0;
}

static int policy_get(const struct tierfs_path *p, int argc, char **argv,
		      int from)
{
	_cleanup_free_ char *text = NULL;
	ssize_t r = ctl_get(p->at, TIERFS_XATTR_EFFECTIVE, &text);
	char *line, *next;

	/* on a tierfs mount (checked): a daemon without the attribute */
	if (r == -ENODATA)
		return policy_get_stored(p, argc, argv, from);
	if (r < 0)
		return tierctl_err("cannot read the policy of '%s': %s",
				   qn(p->path), strerror((int)-r));
	/* "KEY=VALUE FROM\n": FROM escaped, no newline in it (ctl_proto.h) */
	for (line = text; line && *line; line = next) {
		char *eq, *sp;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		eq = strchr(line, '=');
		if (!eq)
			continue;
		if (!key_wanted(line, (size_t)(eq - line), argc, argv, from))
			continue;
		*eq = '\0';
		sp = strchr(eq + 1, ' ');
		if (sp) {
			*sp++ = '\0';
			unescape_octal(sp);
		}
		printf("%-8s %-24s %s\n", line,
		       eq[1] ? qn(shown_value(line, eq + 1)) : "-",
		       sp ? qn(sp) : "");
	}
	return 0;
}

static int policy_set(const struct tierfs_path *p, int argc, char **argv,
		      int from)
{
	for (int i = from; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		int r = policy_set_one(p, argv[i], (size_t)(eq - argv[i]),
				       eq + 1);

		if (r)
			return r;
	}
	return 0;
}

static int policy_unset(const struct tierfs_path *p, int argc, char **argv,
			int from)
{
	for (size_t i = 0; i < ARRAY_SIZE(policy_keys); i++) {
		int r;

		if (!key_wanted(policy_keys[i], strlen(policy_keys[i]), argc,
				argv, from))
			continue;
		r = policy_unset_one(p, policy_keys[i]);
		if (r)
			return r;
	}
	return 0;
}

/* The KEY (get, unset) or KEY=VALUE (set) arguments, before any change. */
static int policy_check_args(const char *sub, int argc, char **argv, int from)
{
	bool set = !strcmp(sub, "set");

	if (set && from >= argc)
		return tierctl_usage_err("policy",
					 "policy set needs KEY=VALUE");
	for (int i = from; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');

		if (!set) {
			if (!policy_key_ok(argv[i], strlen(argv[i])))
				return key_err(argv[i], strlen(argv[i]));
			continue;
		}
		if (!eq)
			return tierctl_usage_err("policy",
						 "expected KEY=VALUE, not '%s'",
						 qn(argv[i]));
		if (!policy_key_ok(argv[i], (size_t)(eq - argv[i])))
			return key_err(argv[i], (size_t)(eq - argv[i]));
	}
	return 0;
}

int cmd_policy(int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	struct tierfs_path p;
	const char *sub;
	int c, r;

	optind = 0;
	/* "+": stop at the first non-option, so values may start with '-' */
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1)
		return tierctl_bad_option(c, argv);
	if (argc - optind < 2)
		return tierctl_usage_err(
			argv[0], "policy needs get, set or unset and a PATH");
	sub = argv[optind];
	if (strcmp(sub, "get") && strcmp(sub, "set") && strcmp(sub, "unset"))
		return tierctl_usage_err(
			argv[0],
			"unknown policy action '%s': use get, set or unset",
			qn(sub));
	r = policy_check_args(sub, argc, argv, optind + 2);
	if (r)
		return r;
	r = tierfs_path_open(argv[optind + 1], &p);
	if (r)
		return r;
	if (!strcmp(sub, "get"))
		r = policy_get(&p, argc, argv, optind + 2);
	else if (!strcmp(sub, "set"))
		r = policy_set(&p, argc, argv, optind + 2);
	else
		r = policy_unset(&p, argc, argv, optind + 2);
	tierfs_path_close(&p);
	return r;
}

int cmd_pin(int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	struct tierfs_path p;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1)
		return tierctl_bad_option(c, argv);
	if (argc - optind != 2)
		return tierctl_usage_err(argv[0], "pin takes PATH and TIER");
	r = tierfs_path_open(argv[optind], &p);
	if (r)
		return r;
	r = policy_set_one(&p, "pin", 3, argv[optind + 1]);
	tierfs_path_close(&p);
	return r;
}

int cmd_unpin(int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	struct tierfs_path p;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1)
		return tierctl_bad_option(c, argv);
	if (argc - optind != 1)
		return tierctl_usage_err(argv[0], "unpin takes one PATH");
	r = tierfs_path_open(argv[optind], &p);
	if (r)
		return r;
	r = policy_unset_one(&p, "pin");
	tierfs_path_close(&p);
	return r;
}
