// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_quota.c -- tierctl quota: the quotas that apply to a directory
 * and their use, from the computed user.tierfs.quota (fs/ctl_proto.h):
 * one line per quota, innermost first,
 * "total=USED/LIMIT NAME=USED/LIMIT ... inodes=USED/LIMIT dir=PATH"
 * (bytes, but inode units for "inodes").  Setting a quota is setfattr's
 * job (trusted.tierfs.quota, root only).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_proto.h"
#include "json.h"
#include "tierctl.h"
#include "cleanup.h"
#include "macro.h"
#include "banned.h"

#define QUOTA_KEYS_MAX 16 /* total, every tier (at most 8), inodes */

struct quota_use {
	const char *key; /* "total", a tier name or "inodes"; into the text */
	uint64_t used;
	uint64_t limit;
	bool limited;
};

struct quota_line {
	struct quota_use use[QUOTA_KEYS_MAX];
	size_t n;
	char *dir; /* unescaped, points into the text */
};

/* One line of the value, changed in place.  -EBADMSG if malformed. */
static int parse_line(char *line, struct quota_line *ret)
{
	char *dir = strstr(line, "dir=");
	char *save = NULL;

	if (!dir || (dir != line && dir[-1] != ' '))
		return -EBADMSG;
	ret->n = 0;
	ret->dir = dir + 4;
	if (dir != line)
		dir[-1] = '\0';
	unescape_octal(ret->dir);
	if (dir == line)
		return 0;
	for (char *w = strtok_r(line, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '='), *slash, *end;
		struct quota_use *u;

		if (!eq || !(slash = strchr(eq, '/')))
			return -EBADMSG;
		if (ret->n == QUOTA_KEYS_MAX)
			continue; /* more than we show */
		u = &ret->use[ret->n];
		*eq = *slash = '\0';
		u->key = w;
		u->used = strtoull(eq + 1, &end, 10);
		if (end == eq + 1 || *end)
			return -EBADMSG;
		u->limited = strcmp(slash + 1, "-") != 0;
		u->limit = 0;
		if (u->limited) {
			u->limit = strtoull(slash + 1, &end, 10);
			if (end == slash + 1 || *end)
				return -EBADMSG;
		}
		ret->n++;
	}
	return 0;
}

static void print_line(const struct quota_line *q)
{
	char h[32], l[32];

	printf("  quota on %s\n", qn(q->dir));
	for (size_t i = 0; i < q->n; i++) {
		const struct quota_use *u = &q->use[i];
		/* inodes are a count, in full; the rest bytes */
		bool count = !strcmp(u->key, "inodes");

		if (count) {
			snprintf(h, sizeof(h), "%llu", (unsigned long long)u->used);
			snprintf(l, sizeof(l), "%llu", (unsigned long long)u->limit);
		} else {
			human(u->used, h, sizeof(h));
			human(u->limit, l, sizeof(l));
		}
		printf("    %-10s %8s", u->key, h);
		if (u->limited)
			printf(" of %-8s %5.1f%%\n", l,
			       u->limit ? 100.0 * (double)u->used /
						  (double)u->limit
					: 100.0);
		else
			printf(" (no limit)\n");
	}
}

static void json_line(struct json_writer *w, const struct quota_line *q)
{
	json_object_begin(w, NULL);
	json_string(w, "dir", q->dir);
	for (size_t i = 0; i < q->n; i++) {
		const struct quota_use *u = &q->use[i];

		json_object_begin(w, u->key);
		json_u64(w, "used", u->used);
		if (u->limited)
			json_u64(w, "limit", u->limit);
		else
			json_null(w, "limit");
		json_object_end(w);
	}
	json_object_end(w);
}

/* Show the quotas of @path.  Returns the exit status. */
static int quota_one(const char *path, struct json_writer *w)
{
	struct tierfs_path p;
	_cleanup_free_ char *text = NULL;
	ssize_t r;
	int ret = TIERCTL_EXIT_OK;

	if (tierfs_path_open(path, &p) != 0)
		return TIERCTL_EXIT_FAIL;
	r = ctl_get(p.at, TIERFS_XATTR_QUOTA, &text);
	tierfs_path_close(&p);
	if (r == -ENODATA) {
		if (w) {
			json_object_begin(w, NULL);
			json_string(w, "path", path);
			json_array_begin(w, "quotas");
			json_array_end(w);
			json_object_end(w);
		} else {
			printf("%s: no quota\n", qn(path));
		}
		return TIERCTL_EXIT_OK;
	}
	if (r < 0)
		return tierctl_err("cannot read the quota of '%s': %s", qn(path),
				   strerror((int)-r));
	if (w) {
		json_object_begin(w, NULL);
		json_string(w, "path", path);
		json_array_begin(w, "quotas");
	} else {
		printf("%s:\n", qn(path));
	}
	for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct quota_line q;

		if (parse_line(line, &q) < 0) {
			ret = tierctl_err("unexpected quota of '%s'", qn(path));
			break;
		}
		if (w)
			json_line(w, &q);
		else
			print_line(&q);
	}
	if (w) {
		json_array_end(w);
		json_object_end(w);
	}
	return ret;
}

int cmd_quota(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "compact", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	static char dot[] = ".";
	char *here[] = { dot };
	bool json = false, compact = false;
	struct json_writer w;
	char **paths;
	int c, n, ret = TIERCTL_EXIT_OK;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":jc", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'c':
			compact = true;
			break;
		default:
			return tierctl_bad_option(c, argv);
		}
	}
	if (compact && !json)
		return tierctl_usage_err(argv[0], "--compact needs --json");
	n = argc - optind;
	paths = n ? argv + optind : here;
	if (!n)
		n = 1;
	if (json) {
		json_init(&w, stdout, !compact);
		json_object_begin(&w, NULL);
		json_u64(&w, "version", 1);
		json_array_begin(&w, "paths");
	}
	for (int i = 0; i < n; i++) {
		int r = quota_one(paths[i], json ? &w : NULL);

		if (r && !ret)
			ret = r;
	}
	if (json) {
		int r;

		json_array_end(&w);
		json_object_end(&w);
		tierctl_flush();
		r = json_finish(&w);
		if (r == -EINVAL)
			return tierctl_err("cannot write JSON: %s",
					   strerror(-r));
	}
	return ret;
}
