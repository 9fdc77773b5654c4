// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_layout.c -- tierctl layout: where the data of a file lives, from
 * its extent list (runs, read page by page: ctl_extents_each()) and
 * user.tierfs.layout (every tier's name, in stack order, with its byte
 * count).
 *
 * What is counted: a run of the extent list is a range of whole extents
 * (ctl_proto.h gives no more: not the bytes each extent holds), so a
 * 4000-byte file has a run of one extent, 1M by default.  The bytes per
 * tier are user.tierfs.layout's: what the tier holds for the file, in
 * its 4 KiB allocation units (a hole inside an extent holds nothing),
 * for a file as for a directory.  So the runs say where each range of
 * the file lives, the totals how much space that takes on each tier.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl_proto.h"
#include "tierctl.h"
#include "json.h"
#include "cleanup.h"
#include "macro.h"
#include "banned.h"

struct run {
	uint64_t start, len;
	char tier[TIERFS_TIER_NAME_MAX + 1];
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

/* "ram=8388608 disk=0" into @tt, in order. */
static int parse_layout(char *text, struct totals *tt)
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
		t->bytes = strtoull(eq + 1, NULL, 10);
	}
	return 0;
}

struct run_list {
	struct run *v;
	size_t n, cap;
};

/* ctl_run_fn: collect the runs (neighbours come merged already). */
static int add_run(void *arg, uint64_t start, uint64_t len, const char *tier)
{
	struct run_list *l = arg;

	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 16;
		struct run *nv = realloc(l->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n].start = start;
	l->v[l->n].len = len;
	snprintf(l->v[l->n].tier, sizeof(l->v[l->n].tier), "%s", tier);
	l->n++;
	return 0;
}

static void print_totals(const char *path, const struct totals *tt,
			 size_t nruns, bool file)
{
	uint64_t sum = 0;
	char h[32];

	for (size_t i = 0; i < tt->n; i++)
		sum += tt->t[i].bytes;
	printf("%s: ", qn(path));
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
	/* on a tierfs mount (checked): a daemon without the attribute */
	if (r == -ENOTSUP || r == -ENODATA)
		return tierctl_err("'%s' reports no layout", qn(path));
	if (errno_is_dead(-r)) {
		_cleanup_free_ char *why = dead_mount_why(path, -r, NULL, NULL);

		if (why)
			return tierctl_err("%s", why);
	}
	return tierctl_err("cannot read the layout of '%s': %s", qn(path),
			   strerror(-r));
}

/* user.tierfs.layout of @p into @tt. */
static int read_totals(const struct tierfs_path *p, struct totals *tt)
{
	_cleanup_free_ char *text = NULL;
	ssize_t r = ctl_get(p->at, TIERFS_XATTR_LAYOUT, &text);

	if (r < 0)
		return layout_err(p->path, (int)r);
	if (parse_layout(text, tt) < 0)
		return tierctl_err("unexpected layout of '%s': '%s'",
				   qn(p->path), qn(text));
	return 0;
}

static void json_totals(struct json_writer *w, const struct totals *tt)
{
	uint64_t sum = 0;

	json_array_begin(w, "tiers");
	for (size_t i = 0; i < tt->n; i++) {
		json_object_begin(w, NULL);
		json_string(w, "name", tt->t[i].name);
		json_u64(w, "bytes", tt->t[i].bytes);
		json_object_end(w);
		sum += tt->t[i].bytes;
	}
	json_array_end(w);
	json_u64(w, "total", sum);
}

static int layout_dir(const struct tierfs_path *p, struct json_writer *w)
{
	struct totals tt = { .n = 0 };
	int r = read_totals(p, &tt);

	if (r)
		return r;
	if (w) {
		json_object_begin(w, NULL);
		json_string(w, "path", p->path);
		json_string(w, "type", "directory");
		json_totals(w, &tt);
		json_object_end(w);
		return 0;
	}
	print_totals(p->path, &tt, 0, false);
	return 0;
}

/* Print the runs @rl of file @p and the totals per tier. */
static int layout_runs(const struct tierfs_path *p, const struct stat *st,
		       const struct run_list *rl, struct json_writer *w)
{
	const char *path = p->path;
	const struct run *runs = rl->v;
	size_t nruns = rl->n;
	_cleanup_free_ char *root = NULL;
	struct totals tt = { .n = 0 };
	uint64_t es = 0;
	struct stats s;
	char h[32], e[32];
	int r;

	r = read_totals(p, &tt);
	if (r)
		return r;
	/* the extent size is the mount's; not knowing it is no error */
	if (mount_root(p->at, &root) == 0 && stats_read(root, &s) == 0) {
		es = rec_u64(stats_find(&s, "mount", NULL), "extent_size");
		stats_release(&s);
	}

	if (w) {
		json_object_begin(w, NULL);
		json_string(w, "path", path);
		json_string(w, "type", "file");
		json_u64(w, "size", (uint64_t)st->st_size);
		if (es)
			json_u64(w, "extent_size", es);
		else
			json_null(w, "extent_size");
		json_array_begin(w, "runs");
		for (size_t i = 0; i < nruns; i++) {
			json_object_begin(w, NULL);
			json_u64(w, "start", runs[i].start);
			json_u64(w, "length", runs[i].len);
			json_string(w, "tier", runs[i].tier);
			json_object_end(w);
		}
		json_array_end(w);
		json_totals(w, &tt);
		json_object_end(w);
		return 0;
	}
	printf("File size of %s is %llu (%s", qn(path),
	       (unsigned long long)st->st_size,
	       human((uint64_t)st->st_size, h, sizeof(h)));
	if (es)
		printf(", extent size %s", human(es, e, sizeof(e)));
	printf(")\n run:      logical_offset:     length: tier:\n");
	for (size_t i = 0; i < nruns; i++)
		printf("%4zu: %10llu..%10llu: %10s: %s\n", i,
		       (unsigned long long)runs[i].start,
		       (unsigned long long)(runs[i].start + runs[i].len - 1),
		       human(runs[i].len, h, sizeof(h)), runs[i].tier);
	print_totals(path, &tt, nruns, true);
	return 0;
}

static int layout_file(const struct tierfs_path *p, const struct stat *st,
		       struct json_writer *w)
{
	struct run_list rl = { NULL, 0, 0 };
	int r = ctl_extents_each(p->at, add_run, &rl);

	if (r == -EBADMSG)
		r = tierctl_err("unexpected extent list of '%s'", qn(p->path));
	else if (r < 0)
		r = layout_err(p->path, r);
	else
		r = layout_runs(p, st, &rl, w);
	free(rl.v);
	return r;
}

int cmd_layout(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "compact", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	bool printed = false, json = false, compact = false;
	struct json_writer jw, *w = NULL;
	int c, ret = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":jc", opts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'c')
			compact = true;
		else
			return tierctl_bad_option(c, argv);
	}
	if (compact && !json)
		return tierctl_usage_err(argv[0], "--compact goes with --json");
	if (optind == argc)
		return tierctl_usage_err(argv[0], "no FILE given");
	if (json) {
		w = &jw;
		json_init(w, stdout, !compact);
		json_object_begin(w, NULL);
		json_u64(w, "version", 1);
		json_array_begin(w, "files");
	}
	for (int i = optind; i < argc; i++) {
		struct tierfs_path p;
		struct stat st;
		int r;

		r = tierfs_path_open(argv[i], &p);
		if (r) {
			ret = r;
			continue;
		}
		if (fstat(p.fd, &st) < 0) {
			r = errno; /* before qn() may change it */
			ret = tierctl_err("cannot access '%s': %s", qn(argv[i]),
					  strerror(r));
			tierfs_path_close(&p);
			continue;
		}
		/* a blank line between files, as filefrag -v has */
		if (printed && !w &&
		    (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
			putchar('\n');
		if (S_ISDIR(st.st_mode))
			r = layout_dir(&p, w);
		else if (S_ISREG(st.st_mode))
			r = layout_file(&p, &st, w);
		else
			r = tierctl_err(
				"'%s' is not a regular file or directory",
				qn(argv[i]));
		tierfs_path_close(&p);
		if (r)
			ret = r;
		else
			printed = true;
	}
	if (w) {
		json_array_end(w);
		json_object_end(w);
		/* a write error is reported once for all output, at exit */
		tierctl_flush();
		if (json_finish(w) == -EINVAL)
			ret = tierctl_err("cannot write JSON: %s",
					  strerror(EINVAL));
	}
	return ret;
}
