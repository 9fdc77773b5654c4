// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_layout.c -- tierctl layout: where the data of a file lives, from
 * user.tierfs.extents (runs) and user.tierfs.layout (every tier's name,
 * in stack order, with its byte count).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl_proto.h"
#include "tierctl.h"
#include "cleanup.h"
#include "macro.h"
#include "banned.h"

struct run {
	uint64_t start, len;
	char tier[64];
};

struct tier_total {
	char name[64];
	uint64_t bytes;
};

struct totals {
	struct tier_total t[64];
	size_t n;
};

static struct tier_total *totals_get(struct totals *tt, const char *name)
{
	for (size_t i = 0; i < tt->n; i++)
		if (!strcmp(tt->t[i].name, name))
			return &tt->t[i];
	if (tt->n == ARRAY_SIZE(tt->t))
		return NULL;
	snprintf(tt->t[tt->n].name, sizeof(tt->t[tt->n].name), "%s", name);
	tt->t[tt->n].bytes = 0;
	return &tt->t[tt->n++];
}

/*
 * "ram=8388608 disk=0" into @tt, in order.  @use_values: take the byte
 * counts too (a directory), or only the names (a file, whose counts
 * come from its runs).
 */
static int parse_layout(char *text, struct totals *tt, bool use_values)
{
	char *save = NULL;

	for (char *w = strtok_r(text, " \n", &save); w;
	     w = strtok_r(NULL, " \n", &save)) {
		char *eq = strrchr(w, '=');
		struct tier_total *t;

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		t = totals_get(tt, w);
		if (!t)
			return -E2BIG;
		if (use_values)
			t->bytes = strtoull(eq + 1, NULL, 10);
	}
	return 0;
}

/* "START LENGTH TIER\n" lines into runs, merging neighbours. */
static int parse_runs(const char *text, struct run **ret, size_t *ret_n)
{
	struct run *v = NULL;
	size_t n = 0, cap = 0;
	const char *p = text;

	while (*p) {
		unsigned long long start, len;
		char tier[64];
		int used = 0;

		if (sscanf(p, "%llu %llu %63s%n", &start, &len, tier, &used) !=
		    3) {
			free(v);
			return -EINVAL;
		}
		p += used;
		while (*p == '\n' || *p == ' ')
			p++;
		if (n > 0 && !strcmp(v[n - 1].tier, tier) &&
		    v[n - 1].start + v[n - 1].len == start) {
			v[n - 1].len += len;
			continue;
		}
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			struct run *nv = realloc(v, nc * sizeof(*nv));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = nc;
		}
		v[n].start = start;
		v[n].len = len;
		snprintf(v[n].tier, sizeof(v[n].tier), "%s", tier);
		n++;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static void print_totals(const char *path, const struct totals *tt,
			 size_t nruns, bool file)
{
	uint64_t sum = 0;
	char h[32];

	for (size_t i = 0; i < tt->n; i++)
		sum += tt->t[i].bytes;
	printf("%s: ", path);
	if (file)
		printf("%zu run%s; ", nruns, nruns == 1 ? "" : "s");
	for (size_t i = 0; i < tt->n; i++)
		printf("%s%s %s (%.1f%%)", i ? ", " : "", tt->t[i].name,
		       human(tt->t[i].bytes, h, sizeof(h)),
		       sum ? 100.0 * (double)tt->t[i].bytes / (double)sum
			   : 0.0);
	printf("; total %s\n", human(sum, h, sizeof(h)));
}

static int layout_err(const char *path, int r)
{
	if (r == -ENOTSUP || r == -ENODATA)
		return tierctl_err("'%s' is not on a tierfs mount", path);
	return tierctl_err("cannot read the layout of '%s': %s", path,
			   strerror(-r));
}

static int layout_dir(const char *path)
{
	_cleanup_free_ char *text = NULL;
	struct totals tt = { .n = 0 };
	ssize_t r = ctl_get(path, TIERFS_XATTR_LAYOUT, &text);

	if (r < 0)
		return layout_err(path, (int)r);
	if (parse_layout(text, &tt, true) < 0)
		return tierctl_err("unexpected layout of '%s': '%s'", path,
				   text);
	print_totals(path, &tt, 0, false);
	return 0;
}

static int layout_file(const char *path, const struct stat *st)
{
	_cleanup_free_ char *ext = NULL;
	_cleanup_free_ char *lay = NULL;
	_cleanup_free_ char *root = NULL;
	_cleanup_free_ struct run *runs = NULL;
	struct totals tt = { .n = 0 };
	uint64_t es = 0;
	size_t nruns = 0;
	struct stats s;
	char h[32], e[32];
	ssize_t r;

	r = ctl_get(path, TIERFS_XATTR_EXTENTS, &ext);
	if (r < 0)
		return layout_err(path, (int)r);
	r = ctl_get(path, TIERFS_XATTR_LAYOUT, &lay);
	if (r < 0)
		return layout_err(path, (int)r);
	if (parse_layout(lay, &tt, false) < 0)
		return tierctl_err("unexpected layout of '%s': '%s'", path,
				   lay);
	r = parse_runs(ext, &runs, &nruns);
	if (r < 0)
		return tierctl_err("unexpected extent list of '%s'", path);
	/* the extent size is the mount's; not knowing it is no error */
	if (mount_root(path, &root) == 0 && stats_read(root, &s) == 0) {
		es = rec_u64(stats_find(&s, "mount", NULL), "extent_size");
		stats_release(&s);
	}

	printf("File size of %s is %llu (%s", path,
	       (unsigned long long)st->st_size,
	       human((uint64_t)st->st_size, h, sizeof(h)));
	if (es)
		printf(", extent size %s", human(es, e, sizeof(e)));
	printf(")\n run:      logical_offset:     length: tier:\n");
	for (size_t i = 0; i < nruns; i++) {
		struct tier_total *t = totals_get(&tt, runs[i].tier);

		if (t)
			t->bytes += runs[i].len;
		printf("%4zu: %10llu..%10llu: %10s: %s\n", i,
		       (unsigned long long)runs[i].start,
		       (unsigned long long)(runs[i].start + runs[i].len - 1),
		       human(runs[i].len, h, sizeof(h)), runs[i].tier);
	}
	print_totals(path, &tt, nruns, true);
	return 0;
}

int cmd_layout(int argc, char **argv)
{
	static const struct option opts[] = { { NULL, 0, NULL, 0 } };
	bool printed = false;
	int c, ret = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1)
		return tierctl_bad_option(c, argv);
	if (optind == argc)
		return tierctl_usage_err(argv[0], "no FILE given");
	for (int i = optind; i < argc; i++) {
		struct stat st;
		int r;

		if (stat(argv[i], &st) < 0) {
			ret = tierctl_err("cannot access '%s': %s", argv[i],
					  strerror(errno));
			continue;
		}
		/* a blank line between files, as filefrag -v has */
		if (printed && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			putchar('\n');
		if (S_ISDIR(st.st_mode))
			r = layout_dir(argv[i]);
		else if (S_ISREG(st.st_mode))
			r = layout_file(argv[i], &st);
		else
			r = tierctl_err(
				"'%s' is not a regular file or directory",
				argv[i]);
		if (r)
			ret = r;
		else
			printed = true;
	}
	return ret;
}
