// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_quota.c -- tierctl quota: the quotas that apply to a directory,
 * their use and the figures of the job report (issue 19), from the
 * computed user.tierfs.quota (fs/ctl_proto.h): one line per quota,
 * innermost first, "total=USED/LIMIT NAME=USED/LIMIT ...
 * inodes=USED/LIMIT peak_bytes=N write_bytes=N ... dir=PATH" (bytes, but
 * inode units for "inodes"; the KEY=N figures are missing from a daemon
 * older than issue 19).  And tierctl quota set DIR QUOTA|none, which
 * stores or removes trusted.tierfs.quota (root only, as the kernel
 * wants for trusted.*).
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

/* The KEY=N figures of a line (ctl_proto.h, issue 19), in that order. */
enum {
	FIG_PEAK,
	FIG_WRITE,
	FIG_SPILL,
	FIG_READ,
	FIG_READ_BELOW,
	FIG_WB_ERRORS,
	FIG_WB_LOST,
	FIG_MAX,
};
static const char *const fig_keys[FIG_MAX] = {
	TIERFS_QUOTA_PEAK,	  TIERFS_QUOTA_WRITE,
	TIERFS_QUOTA_SPILL,	  TIERFS_QUOTA_READ,
	TIERFS_QUOTA_READ_BELOW, TIERFS_QUOTA_WB_ERRORS,
	TIERFS_QUOTA_WB_LOST,
};

struct quota_line {
	struct quota_use use[QUOTA_KEYS_MAX];
	size_t n;
	char *dir; /* unescaped, points into the text */
	uint64_t fig[FIG_MAX];
	bool has_fig; /* the daemon gave them (all of them) */
	const char *first_tier; /* the first tier's name, or NULL */
};

/* A KEY=N figure: its index into fig_keys, or -1 for a key this tierctl
 * does not know (skipped, as ctl_proto.h wants). */
static int fig_index(const char *key)
{
	for (int i = 0; i < FIG_MAX; i++)
		if (!strcmp(fig_keys[i], key))
			return i;
	return -1;
}

/* One line of the value, changed in place.  -EBADMSG if malformed. */
static int parse_line(char *line, struct quota_line *ret)
{
	char *dir = strstr(line, TIERFS_QUOTA_DIR "=");
	char *save = NULL;
	unsigned seen = 0;

	if (!dir || (dir != line && dir[-1] != ' '))
		return -EBADMSG;
	ret->n = 0;
	ret->first_tier = NULL;
	ret->has_fig = false;
	memset(ret->fig, 0, sizeof(ret->fig));
	ret->dir = dir + strlen(TIERFS_QUOTA_DIR "=");
	if (dir != line)
		dir[-1] = '\0';
	unescape_octal(ret->dir);
	if (dir == line)
		return 0;
	for (char *w = strtok_r(line, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '='), *slash, *end;
		struct quota_use *u;

		if (!eq || eq == w)
			return -EBADMSG;
		slash = strchr(eq, '/');
		if (!slash) {
			/* a figure, KEY=N; a key we do not know is skipped */
			int f;

			*eq = '\0';
			f = fig_index(w);
			if (f < 0)
				continue;
			ret->fig[f] = strtoull(eq + 1, &end, 10);
			if (end == eq + 1 || *end)
				return -EBADMSG;
			seen |= 1u << f;
			continue;
		}
		if (ret->n == QUOTA_KEYS_MAX)
			continue; /* more than we show */
		u = &ret->use[ret->n];
		*eq = *slash = '\0';
		u->key = w;
		/* the tiers come in stack order after "total" */
		if (!ret->first_tier && strcmp(w, "total") && strcmp(w, "inodes"))
			ret->first_tier = w;
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
	ret->has_fig = seen == (1u << FIG_MAX) - 1;
	return 0;
}

/* The limit of the "total" use of @q, or false when it has none. */
static bool total_limit(const struct quota_line *q, uint64_t *ret)
{
	for (size_t i = 0; i < q->n; i++)
		if (!strcmp(q->use[i].key, "total") && q->use[i].limited) {
			*ret = q->use[i].limit;
			return true;
		}
	return false;
}

/* "N%" of @part in @whole, or "-" when @whole is 0 */
static const char *percent(uint64_t part, uint64_t whole, char *buf,
			   size_t len)
{
	if (!whole)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%",
			 100.0 * (double)part / (double)whole);
	return buf;
}

/* The figures of the job report under the uses (issue 19). */
static void print_figures(const struct quota_line *q)
{
	const char *first = q->first_tier ? q->first_tier : "the first tier";
	const uint64_t *f = q->fig;
	char a[32], b[32], pc[16];
	uint64_t limit;

	human(f[FIG_PEAK], a, sizeof(a));
	printf("    %-10s %8s", "peak", a);
	if (total_limit(q, &limit))
		printf(" of %-8s %5.1f%%\n", human(limit, b, sizeof(b)),
		       limit ? 100.0 * (double)f[FIG_PEAK] / (double)limit
			     : 100.0);
	else
		printf("\n");
	human(f[FIG_WRITE], a, sizeof(a));
	printf("    %-10s %8s\n", "written", a);
	human(f[FIG_SPILL], a, sizeof(a));
	printf("    %-10s %8s below %s\n", "spilled", a, first);
	human(f[FIG_READ], a, sizeof(a));
	printf("    %-10s %8s, %s from %s (reads that reached tierfs)\n",
	       "read", a,
	       percent(f[FIG_READ] - MIN(f[FIG_READ_BELOW], f[FIG_READ]),
		       f[FIG_READ], pc, sizeof(pc)),
	       first);
	human(f[FIG_WB_LOST], b, sizeof(b));
	printf("    %-10s %8llu errors", "writeback",
	       (unsigned long long)f[FIG_WB_ERRORS]);
	if (f[FIG_WB_ERRORS])
		printf(", %s not stored", b);
	printf("\n");
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
	if (q->has_fig)
		print_figures(q);
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
	if (q->has_fig) {
		const uint64_t *f = q->fig;

		for (int i = 0; i < FIG_MAX; i++)
			json_u64(w, fig_keys[i], f[i]);
		if (q->first_tier)
			json_string(w, "first_tier", q->first_tier);
		if (f[FIG_READ])
			json_double(w, "read_first_tier_ratio",
				    (double)(f[FIG_READ] -
					     MIN(f[FIG_READ_BELOW], f[FIG_READ])) /
					    (double)f[FIG_READ]);
		else
			json_null(w, "read_first_tier_ratio");
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

/* The tier names of the mount holding @at ("ram, disk"), from
 * user.tierfs.layout (every tier in stack order), into @buf. */
static void tier_list(const char *at, char *buf, size_t len)
{
	_cleanup_free_ char *text = NULL;
	size_t n = 0;

	buf[0] = '\0';
	if (ctl_get(at, TIERFS_XATTR_LAYOUT, &text) < 0)
		return;
	for (char *save = NULL, *w = strtok_r(text, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '=');
		int k;

		if (eq)
			*eq = '\0';
		k = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", w);
		if (k < 0 || (size_t)k >= len - n)
			break;
		n += (size_t)k;
	}
}

/*
 * tierctl quota set DIR QUOTA|none: store QUOTA as trusted.tierfs.quota
 * of DIR (the daemon checks it and counts what is below DIR), or, for
 * "none", remove it (the limits lift; not an error when there is none).
 * Returns the exit status.
 */
static int quota_set(int argc, char **argv)
{
	const char *value;
	struct tierfs_path p;
	struct stat st;
	char tiers[512];
	int r;

	if (argc != 4)
		return tierctl_usage_err(
			argv[0], "quota set takes DIR and QUOTA (SIZE, KEY:SIZE,... or none)");
	value = argv[3];
	if (!*value)
		return tierctl_usage_err(
			argv[0], "empty QUOTA: give SIZE, KEY:SIZE,... or none");
	if (tierfs_path_open(argv[2], &p) != 0)
		return TIERCTL_EXIT_FAIL;
	if (fstat(p.fd, &st) == 0 && !S_ISDIR(st.st_mode)) {
		tierfs_path_close(&p);
		return tierctl_err("'%s' is not a directory: quotas are set on directories",
				   qn(argv[2]));
	}
	if (!strcmp(value, "none"))
		r = removexattr(p.at, TIERFS_XATTR_QUOTA_SET) < 0 &&
				    errno != ENODATA
			    ? -errno
			    : 0;
	else
		r = ctl_set(p.at, TIERFS_XATTR_QUOTA_SET, value);
	if (r == -EINVAL)
		tier_list(p.at, tiers, sizeof(tiers));
	tierfs_path_close(&p);
	switch (r) {
	case 0:
		return TIERCTL_EXIT_OK;
	case -EPERM:
	case -EACCES:
		return tierctl_err("only root may %s the quota of '%s' (%s)",
				   strcmp(value, "none") ? "set" : "remove",
				   qn(argv[2]), TIERFS_XATTR_QUOTA_SET);
	case -EINVAL:
		return tierctl_err(
			"invalid quota '%s' for '%s': give SIZE (200G) or KEY:SIZE,... with KEY total, inodes or a tier%s%s%s (ram:4G,total:200G), or none",
			qn(value), qn(argv[2]), tiers[0] ? " (" : "", tiers,
			tiers[0] ? ")" : "");
	default:
		return tierctl_err("cannot %s the quota of '%s': %s",
				   strcmp(value, "none") ? "set" : "remove",
				   qn(argv[2]), strerror(-r));
	}
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

	/* a directory named "set" is ./set */
	if (argc >= 2 && !strcmp(argv[1], "set"))
		return quota_set(argc, argv);
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
