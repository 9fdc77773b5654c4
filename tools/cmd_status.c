// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_status.c -- tierctl status, stats and top: everything built from
 * user.tierfs.stats on the mount root.
 *
 * Longer than 700 lines for a reason: status, stats and top share the
 * text table, the cell formatting, the JSON ratio and the rate helpers,
 * which stay private to this file.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctl_proto.h"
#include "tierctl.h"
#include "json.h"
#include "cleanup.h"
#include "macro.h"
#include "banned.h"

/* ---- a text table with computed column widths ---- */

#define TABLE_MAX_COLS 16

struct table {
	size_t ncols;
	char **cells; /* row-major, ncols per row, owned */
	size_t nrows, cap;
	bool left[TABLE_MAX_COLS]; /* left-aligned column */
};

static int table_add(struct table *t, const char *const *row)
{
	if (t->nrows == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 8;
		char **n = realloc(t->cells, nc * t->ncols * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->cells = n;
		t->cap = nc;
	}
	for (size_t c = 0; c < t->ncols; c++) {
		char *s = strdup(row[c] ? row[c] : "");

		if (!s) {
			for (size_t k = 0; k < c; k++)
				free(t->cells[t->nrows * t->ncols + k]);
			return -ENOMEM;
		}
		t->cells[t->nrows * t->ncols + c] = s;
	}
	t->nrows++;
	return 0;
}

static void table_print(const struct table *t, FILE *f)
{
	size_t w[TABLE_MAX_COLS] = { 0 };

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			w[c] = MAX(w[c], strlen(t->cells[r * t->ncols + c]));
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			bool last = c + 1 == t->ncols;

			if (t->left[c])
				fprintf(f, "%-*s", last ? 0 : (int)w[c], s);
			else
				fprintf(f, "%*s", (int)w[c], s);
			fputs(last ? "\n" : "  ", f);
		}
	}
}

static void table_release(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = t->cap = 0;
}

static void pct(char *buf, size_t len, double ratio)
{
	if (ratio < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", ratio * 100.0);
}

/* ---- status ---- */

static bool tier_drained(const struct stats_rec *t)
{
	return rec_u64(t, "draining") != 0;
}

/* The tier's name, with "*" when it is drained (see drained_note()). */
static void tier_cell(char *buf, size_t len, const struct stats_rec *t)
{
	snprintf(buf, len, "%s%s", t->name, tier_drained(t) ? "*" : "");
}

/* The footnote of a table that marked a drained tier. */
static void drained_note(const char *root, const struct stats *s)
{
	bool any = false;

	for (size_t i = 0; i < s->nrecs; i++) {
		const struct stats_rec *t = &s->recs[i];

		if (strcmp(t->type, "tier") || !t->name || !tier_drained(t))
			continue;
		printf("%s%s", any ? ", " : "* drained: ", t->name);
		any = true;
	}
	if (any)
		printf(" (no new data until 'tierctl drain --undo %s')\n",
		       qn(root));
}

/* One line per tier the memory follower holds below its size. */
static void limit_note(const struct stats *s)
{
	for (size_t i = 0; i < s->nrecs; i++) {
		const struct stats_rec *t = &s->recs[i];
		char a[32], b[32];

		if (strcmp(t->type, "tier") || !t->name || !rec_get(t, "limit") ||
		    rec_u64(t, "limit") >= rec_u64(t, "size"))
			continue;
		printf("tier %s takes at most %s of its %s while memory is short (--memory-reserve)\n",
		       t->name, human(rec_u64(t, "limit"), a, sizeof(a)),
		       human(rec_u64(t, "size"), b, sizeof(b)));
	}
}

static int status_text(const char *root, const struct stats *s, bool first)
{
	const struct stats_rec *mnt, *mig;
	struct table t = { .ncols = 13 };
	static const char *const head[] = {
		"TIER", "KIND",	    "PATH",    "SIZE", "USED",
		"FREE", "USE%",	    "EXTENTS", "READ", "WRITTEN",
		"READ%", "PROMOTED", "DEMOTED",
	};
	char es[32];
	int r;

	t.left[0] = t.left[1] = t.left[2] = true;
	r = table_add(&t, head);
	for (size_t i = 0; i < s->nrecs && r == 0; i++) {
		const struct stats_rec *tr = &s->recs[i];
		char c[13][48];
		const char *row[13];
		uint64_t size, used;

		if (strcmp(tr->type, "tier") || !tr->name)
			continue;
		size = rec_u64(tr, "size");
		used = rec_u64(tr, "used");
		tier_cell(c[0], sizeof(c[0]), tr);
		snprintf(c[1], sizeof(c[1]), "%s",
			 rec_get(tr, "kind") ? rec_get(tr, "kind") : "?");
		human(size, c[3], sizeof(c[3]));
		human(used, c[4], sizeof(c[4]));
		human(rec_u64(tr, "free"), c[5], sizeof(c[5]));
		pct(c[6], sizeof(c[6]),
		    size ? (double)used / (double)size : -1);
		snprintf(c[7], sizeof(c[7]), "%llu",
			 (unsigned long long)rec_u64(tr, "extents"));
		human(rec_u64(tr, "read_bytes"), c[8], sizeof(c[8]));
		human(rec_u64(tr, "write_bytes"), c[9], sizeof(c[9]));
		pct(c[10], sizeof(c[10]), stats_read_share(s, tr));
		snprintf(c[11], sizeof(c[11]), "%llu",
			 (unsigned long long)rec_u64(tr, "promotions"));
		snprintf(c[12], sizeof(c[12]), "%llu",
			 (unsigned long long)rec_u64(tr, "demotions"));
		for (int k = 0; k < 13; k++)
			row[k] = c[k];
		/* the path may be longer than a cell buffer */
		row[2] = rec_get(tr, "path") ? qn(rec_get(tr, "path")) : "-";
		r = table_add(&t, row);
	}
	if (r < 0) {
		table_release(&t);
		return tierctl_err("out of memory");
	}
	mnt = stats_find(s, "mount", NULL);
	mig = stats_find(s, "migrator", NULL);
	if (!first)
		putchar('\n');
	/* two short lines, not one of 140 columns */
	printf("%s: extent size %s, %llu inodes", qn(root),
	       human(rec_u64(mnt, "extent_size"), es, sizeof(es)),
	       (unsigned long long)rec_u64(mnt, "inodes"));
	if (rec_get(mnt, "max_inodes") && rec_u64(mnt, "max_inodes"))
		printf(" of %llu",
		       (unsigned long long)rec_u64(mnt, "max_inodes"));
	if (rec_get(mnt, "xattr_bytes")) {
		char xb[32], xm[32];

		printf(", xattrs %s", human(rec_u64(mnt, "xattr_bytes"), xb,
					    sizeof(xb)));
		if (rec_u64(mnt, "max_xattr_bytes"))
			printf(" of %s", human(rec_u64(mnt, "max_xattr_bytes"),
					       xm, sizeof(xm)));
	}
	if (rec_get(mnt, "rss"))
		printf(", daemon RSS %s",
		       human(rec_u64(mnt, "rss"), es, sizeof(es)));
	printf("\n");
	if (mig)
		printf("migrator %s: %llu passes, %llu extents moved\n",
		       rec_u64(mig, "enabled") ? "on" : "off",
		       (unsigned long long)rec_u64(mig, "passes"),
		       (unsigned long long)rec_u64(mig, "moved"));
	table_print(&t, stdout);
	drained_note(root, s);
	limit_note(s);
	table_release(&t);
	return 0;
}

/* A ratio member: null for "none" (negative). */
static void json_ratio(struct json_writer *w, const char *key, double v)
{
	if (v < 0)
		json_null(w, key);
	else
		json_double(w, key, v);
}

/* One member of status --json's "mounts". */
static void status_json_mount(struct json_writer *w,
			      const struct mount_probe *p)
{
	const struct stats *s = &p->stats;
	const struct stats_rec *mnt, *mig;

	json_object_begin(w, NULL);
	json_string(w, "mount", p->root);
	json_bool(w, "up", p->state == PROBE_UP);
	if (p->state != PROBE_UP) {
		json_bool(w, "dead", p->dead);
		json_string(w, "error", p->why);
		json_object_end(w);
		return;
	}
	mnt = stats_find(s, "mount", NULL);
	mig = stats_find(s, "migrator", NULL);
	json_u64(w, "extent_size", rec_u64(mnt, "extent_size"));
	json_u64(w, "inodes", rec_u64(mnt, "inodes"));
	json_u64(w, "max_inodes", rec_u64(mnt, "max_inodes"));
	json_u64(w, "xattr_bytes", rec_u64(mnt, "xattr_bytes"));
	json_u64(w, "max_xattr_bytes", rec_u64(mnt, "max_xattr_bytes"));
	json_u64(w, "rss", rec_u64(mnt, "rss"));
	json_object_begin(w, "migrator");
	json_bool(w, "enabled", mig && rec_u64(mig, "enabled") != 0);
	json_u64(w, "passes", rec_u64(mig, "passes"));
	json_u64(w, "moved", rec_u64(mig, "moved"));
	json_object_end(w);
	json_array_begin(w, "tiers");
	for (size_t i = 0; i < s->nrecs; i++) {
		const struct stats_rec *t = &s->recs[i];
		const char *path = rec_get(t, "path");
		uint64_t size = rec_u64(t, "size");

		if (strcmp(t->type, "tier") || !t->name)
			continue;
		json_object_begin(w, NULL);
		json_string(w, "name", t->name);
		json_string(w, "kind", rec_get(t, "kind"));
		json_string(w, "path",
			    path && strcmp(path, "-") ? path : NULL);
		json_u64(w, "size", size);
		json_u64(w, "used", rec_u64(t, "used"));
		json_u64(w, "free", rec_u64(t, "free"));
		json_ratio(w, "use_ratio",
			   size ? (double)rec_u64(t, "used") / (double)size
				: -1);
		json_u64(w, "extents", rec_u64(t, "extents"));
		json_u64(w, "read_bytes", rec_u64(t, "read_bytes"));
		json_u64(w, "write_bytes", rec_u64(t, "write_bytes"));
		json_ratio(w, "read_share", stats_read_share(s, t));
		json_u64(w, "promotions", rec_u64(t, "promotions"));
		json_u64(w, "demotions", rec_u64(t, "demotions"));
		json_bool(w, "drained", tier_drained(t));
		json_object_end(w);
	}
	json_array_end(w);
	json_object_end(w);
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "compact", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct mount_probe *v = NULL;
	bool json = false, compact = false, first = true;
	struct json_writer w;
	size_t n = 0;
	int c, ret;

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
	ret = mount_probe_all(argc - optind, argv + optind, &v, &n);
	if (ret)
		return ret;
	if (json) {
		json_init(&w, stdout, !compact);
		json_object_begin(&w, NULL);
		json_u64(&w, "version", 1);
		json_array_begin(&w, "mounts");
	}
	for (size_t i = 0; i < n; i++) {
		const struct mount_probe *p = &v[i];

		if (p->state == PROBE_DUP)
			continue;
		/* the error lines go to stderr, the document keeps the
		 * mounts that are down */
		if (p->state != PROBE_UP) {
			tierctl_err("%s", p->why);
			ret = TIERCTL_EXIT_FAIL;
		}
		if (json && p->state != PROBE_BAD)
			status_json_mount(&w, p);
		else if (!json && p->state == PROBE_UP) {
			if (status_text(p->root, &p->stats, first))
				ret = TIERCTL_EXIT_FAIL;
			first = false;
		}
	}
	if (n == 0 && argc == optind)
		ret = tierctl_err("no tierfs mounts found");
	if (json) {
		json_array_end(&w);
		json_object_end(&w);
		tierctl_flush();
		if (json_finish(&w) == -EINVAL)
			ret = tierctl_err("cannot write JSON: %s",
					  strerror(EINVAL));
	}
	mount_probe_free(v, n);
	return ret;
}

/* ---- stats ---- */

struct metric {
	const char *key;  /* daemon key */
	const char *name; /* Prometheus name */
	bool counter;
	const char *help;
};

/* Per-tier metrics, label tier="NAME"; keys as in ctl_proto.h. */
static const struct metric tier_metrics[] = {
	{ "size", "tierfs_tier_size_bytes", false, "Capacity of the tier." },
	{ "used", "tierfs_tier_used_bytes", false,
	  "Bytes of the tier holding extents." },
	{ "free", "tierfs_tier_free_bytes", false,
	  "Bytes of the tier free for new extents." },
	{ "extents", "tierfs_tier_extents", false,
	  "Extents stored on the tier." },
	{ "read_bytes", "tierfs_tier_read_bytes_total", true,
	  "Bytes read from the tier." },
	{ "read_ops", "tierfs_tier_reads_total", true,
	  "Read requests served by the tier." },
	{ "write_bytes", "tierfs_tier_written_bytes_total", true,
	  "Bytes written to the tier." },
	{ "write_ops", "tierfs_tier_writes_total", true,
	  "Write requests served by the tier." },
	{ "promotions", "tierfs_tier_promotions_total", true,
	  "Extents promoted into the tier from a slower one." },
	{ "promote_bytes", "tierfs_tier_promoted_bytes_total", true,
	  "Bytes promoted into the tier from a slower one." },
	{ "demotions", "tierfs_tier_demotions_total", true,
	  "Extents demoted from the tier to a slower one." },
	{ "demote_bytes", "tierfs_tier_demoted_bytes_total", true,
	  "Bytes demoted from the tier to a slower one." },
	{ "spills", "tierfs_tier_spills_total", true,
	  "New extents that found the tier full and went to another." },
	{ "csum_errors", "tierfs_tier_checksum_errors_total", true,
	  "Blocks read from the tier whose checksum did not match." },
	{ "io_errors", "tierfs_tier_io_errors_total", true,
	  "Failed back end calls of the tier." },
	{ "draining", "tierfs_tier_draining", false,
	  "1 while the tier is drained: it takes no new data (tierctl drain --undo ends it)." },
	{ "io_inside", "tierfs_tier_io_inside", false,
	  "Calls inside the tier's back end now (at most 16, 8 of one user)." },
	{ "io_waiting", "tierfs_tier_io_waiting", false,
	  "Calls waiting for their turn to enter the tier's back end." },
	{ "stalled", "tierfs_tier_stalled", false,
	  "1 while the tier has answered nothing for its timeout: its data fails with EIO." },
	{ "stalls", "tierfs_tier_stalls_total", true,
	  "Times the tier answered nothing for its timeout." },
	{ "stall_refused", "tierfs_tier_stall_refused_total", true,
	  "Calls failed with EIO because the tier was stalled." },
	{ "native_bytes", "tierfs_tier_native_bytes", false,
	  "Bytes the backing files of native files hold on the tier (in used)." },
};

/* Whole-mount metrics; @scale turns a percentage into a ratio. */
static const struct {
	const char *rec, *key, *name;
	bool counter;
	double scale;
	const char *help;
} mount_metrics[] = {
	{ "mount", "extent_size", "tierfs_extent_size_bytes", false, 1,
	  "Extent size of the mount." },
	{ "mount", "inodes", "tierfs_inodes", false, 1,
	  "Files, directories and other inodes in the mount." },
	{ "mount", "writeback_cache", "tierfs_writeback_cache", false, 1,
	  "1 when the kernel's writeback cache is on for the mount." },
	{ "mount", "killpriv_v2", "tierfs_killpriv_v2", false, 1,
	  "1 when the daemon clears suid/sgid itself (no security.capability lookup per write)." },
	{ "mount", "dirty_limit", "tierfs_dirty_limit_bytes", false, 1,
	  "Dirty page cache the kernel may hold for the mount; also the free-space reserve." },
	{ "mount", "dirty_limit_asked", "tierfs_dirty_limit_asked_bytes", false, 1,
	  "Dirty limit given with --dirty-max (or the default), before the kernel's dirty threshold capped it." },
	{ "mount", "writeback_errors", "tierfs_writeback_errors_total", true, 1,
	  "Writebacks that failed (reported at the file's next fsync or close)." },
	{ "mount", "max_inodes", "tierfs_max_inodes", false, 1,
	  "Inode limit of the mount (0: none)." },
	{ "mount", "xattr_bytes", "tierfs_xattr_bytes", false, 1,
	  "Bytes charged by user.* extended attributes (names, values, bookkeeping)." },
	{ "mount", "max_xattr_bytes", "tierfs_max_xattr_bytes", false, 1,
	  "Limit of the bytes charged by user.* extended attributes (0: none)." },
	{ "mount", "rss", "tierfs_daemon_resident_bytes", false, 1,
	  "Resident memory of the daemon." },
	{ "mount", "uring_requests", "tierfs_uring_requests_total", true, 1,
	  "Requests served over FUSE over io_uring." },
	{ "mount", "uring_threads", "tierfs_uring_threads", false, 1,
	  "Threads serving the io_uring queues, one ring entry each." },
	{ "mount", "uring_busy", "tierfs_uring_busy", false, 1,
	  "Ring entries handling a request now." },
	{ "mount", "uring_lost", "tierfs_uring_lost", false, 1,
	  "Ring entries whose reply could not be sent (their callers wait until the mount ends)." },
	{ "mount", "uring_gone", "tierfs_uring_gone", false, 1,
	  "Ring threads that ended on an error of the kernel's." },
	{ "mount", "uring_retries", "tierfs_uring_retries_total", true, 1,
	  "Replies submitted again after a passing error (EAGAIN, EINTR, EBUSY)." },
	{ "mount", "uring_buffer_bytes", "tierfs_uring_buffer_bytes", false, 1,
	  "Bytes of the ring entries' buffers (as much is resident as requests filled)." },
	{ "native", "passthrough", "tierfs_native_passthrough", false, 1,
	  "1 when the kernel moves native files' bytes itself (--io native took)." },
	{ "native", "files", "tierfs_native_files", false, 1,
	  "Files whose bytes lie in a backing file of one tier (native files)." },
	{ "native", "opens", "tierfs_native_opens_total", true, 1,
	  "Opens of native files (passthrough opens)." },
	{ "native", "open_now", "tierfs_native_open", false, 1,
	  "Passthrough opens not yet released." },
	{ "native", "moves", "tierfs_native_moves_total", true, 1,
	  "Native files moved whole to another tier." },
	{ "native", "refused", "tierfs_native_refused_total", true, 1,
	  "New files that stayed tiered because no tier of their policy had room for a native one." },
	{ "mount", "ctl_computed", "tierfs_ctl_computed_total", true, 1,
	  "Computed control attribute values the daemon made (layouts, extent lists, verifies; not the stats)." },
	{ "migrator", "enabled", "tierfs_migrator_enabled", false, 1,
	  "1 when the background migrator runs." },
	{ "migrator", "passes", "tierfs_migrator_passes_total", true, 1,
	  "Scan passes of the migrator." },
	{ "migrator", "moved", "tierfs_migrator_moved_extents_total", true, 1,
	  "Extents moved by the migrator." },
	{ "migrator", "retries", "tierfs_migrator_retries_total", true, 1,
	  "Moves abandoned because a writer raced." },
	{ "migrator", "failures", "tierfs_migrator_failures_total", true, 1,
	  "Moves that failed." },
	{ "migrator", "high_watermark", "tierfs_migrator_high_watermark_ratio",
	  false, 0.01, "Use of a tier above which the migrator demotes." },
	{ "migrator", "low_watermark", "tierfs_migrator_low_watermark_ratio",
	  false, 0.01, "Use of a tier the migrator demotes down to." },
	{ "migrator", "bandwidth", "tierfs_migrator_bandwidth_bytes_per_second",
	  false, 1, "Migration rate limit (0: unlimited)." },
	{ "migrator", "idle_passes", "tierfs_migrator_idle_passes_total", true, 1,
	  "Passes that found nothing to look at." },
	{ "migrator", "visited_inodes", "tierfs_migrator_visited_inodes_total", true, 1,
	  "Inodes migrator passes looked at." },
	{ "migrator", "visited_extents", "tierfs_migrator_visited_extents_total", true, 1,
	  "Extents migrator passes looked at." },
	{ "migrator", "tracked_inodes", "tierfs_migrator_tracked_inodes", false, 1,
	  "Inodes with data, which passes may look at." },
	{ "migrator", "throttled_bytes", "tierfs_migrator_throttled_bytes_total",
	  true, 1, "Bytes moved under the bandwidth limit." },
	{ "migrator", "throttled_ms", "tierfs_migrator_throttled_seconds_total",
	  true, 0.001, "Time the bandwidth limit gave the bytes it moved." },
	{ "migrator", "lent", "tierfs_migrator_lent_extents_total", true, 1,
	  "Extents a RAM tier handed down because the page cache holds them (--page-cache only)." },
	{ "migrator", "lent_bytes", "tierfs_migrator_lent_bytes_total", true, 1,
	  "Bytes of those extents." },
};

static bool is_number(const char *v)
{
	if (!v || !*v)
		return false;
	for (; *v; v++)
		if (*v < '0' || *v > '9')
			return false;
	return true;
}

static bool known_tier_key(const char *key)
{
	if (!strcmp(key, "kind") || !strcmp(key, "path"))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(tier_metrics); i++)
		if (!strcmp(tier_metrics[i].key, key))
			return true;
	return false;
}

/* Members the daemon added after this tierctl, as numbers or strings. */
static void json_extras(struct json_writer *w, const struct stats_rec *r,
			bool (*known)(const char *key))
{
	for (size_t i = 0; i < r->nkv; i++) {
		if (known(r->kv[i].key))
			continue;
		if (is_number(r->kv[i].value))
			json_u64(w, r->kv[i].key, rec_u64(r, r->kv[i].key));
		else
			json_string(w, r->kv[i].key, r->kv[i].value);
	}
}

static bool no_key(const char *key)
{
	(void)key;
	return false;
}

static bool known_migrator_key(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(mount_metrics); i++)
		if (!strcmp(mount_metrics[i].rec, "migrator") &&
		    !strcmp(mount_metrics[i].key, key))
			return true;
	return false;
}

static bool known_mount_key(const char *key)
{
	return !strcmp(key, "extent_size") || !strcmp(key, "inodes");
}

static int stats_json(const char *root, const struct stats *s, bool pretty)
{
	const struct stats_rec *mnt = stats_find(s, "mount", NULL);
	const struct stats_rec *mig = stats_find(s, "migrator", NULL);
	struct json_writer w;
	int r;

	json_init(&w, stdout, pretty);
	json_object_begin(&w, NULL);
	json_u64(&w, "version", 1);
	json_string(&w, "mount", root);
	json_u64(&w, "extent_size", rec_u64(mnt, "extent_size"));
	json_u64(&w, "inodes", rec_u64(mnt, "inodes"));
	if (mnt)
		json_extras(&w, mnt, known_mount_key);
	json_object_begin(&w, "migrator");
	if (mig) {
		json_bool(&w, "enabled", rec_u64(mig, "enabled") != 0);
		for (size_t i = 0; i < ARRAY_SIZE(mount_metrics); i++)
			if (!strcmp(mount_metrics[i].rec, "migrator") &&
			    strcmp(mount_metrics[i].key, "enabled"))
				json_u64(&w, mount_metrics[i].key,
					 rec_u64(mig, mount_metrics[i].key));
		json_extras(&w, mig, known_migrator_key);
	}
	json_object_end(&w);
	json_array_begin(&w, "tiers");
	for (size_t i = 0; i < s->nrecs; i++) {
		const struct stats_rec *t = &s->recs[i];
		const char *path = rec_get(t, "path");
		double hit;

		if (strcmp(t->type, "tier") || !t->name)
			continue;
		json_object_begin(&w, NULL);
		json_string(&w, "name", t->name);
		json_string(&w, "kind", rec_get(t, "kind"));
		json_string(&w, "path",
			    path && strcmp(path, "-") ? path : NULL);
		for (size_t k = 0; k < ARRAY_SIZE(tier_metrics); k++)
			json_u64(&w, tier_metrics[k].key,
				 rec_u64(t, tier_metrics[k].key));
		/* "hit_ratio" is the old name of "read_share" (the
		 * field names of version 1 stay) */
		hit = stats_read_share(s, t);
		json_ratio(&w, "read_share", hit);
		json_ratio(&w, "hit_ratio", hit);
		json_extras(&w, t, known_tier_key);
		json_object_end(&w);
	}
	json_array_end(&w);
	/* FUSE requests per opcode, as many as the daemon lists */
	json_object_begin(&w, "requests");
	{
		const struct stats_rec *q = stats_find(s, "requests", NULL);

		if (q)
			json_extras(&w, q, no_key);
	}
	json_object_end(&w);
	json_object_end(&w);
	/* a write error is reported once for all output, at exit */
	tierctl_flush();
	r = json_finish(&w);
	if (r == -EINVAL)
		return tierctl_err("cannot write JSON: %s", strerror(-r));
	return 0;
}

/* A label value with \, " and newline escaped (exposition format). */
static void prom_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*v, f);
	}
}

static void prom_head(const char *name, bool counter, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name,
	       counter ? "counter" : "gauge");
}

/*
 * One metric family at a time over all mounts: the exposition format
 * wants every sample of a family right after its HELP and TYPE lines.
 */
static void stats_prometheus(char **roots, struct stats *s, size_t n,
			     const struct mount_probe *pv, size_t nv)
{
	size_t nup = 0;

	prom_head("tierfs_build_info", false,
		  "Version of the tierctl that wrote these metrics (value 1).");
	printf("tierfs_build_info{version=\"");
	prom_label(stdout, TIERFS_VERSION);
	printf("\"} 1\n");
	/* every mount reported, in mount order, up or down */
	for (size_t m = 0; m < nv; m++) {
		if (pv[m].state != PROBE_UP && pv[m].state != PROBE_DOWN)
			continue;
		if (!nup++)
			prom_head("tierfs_up", false,
				  "1 when the statistics of the mount were read; 0 when the mount does not answer (a dead daemon: umount -l clears the mount).");
		printf("tierfs_up{mount=\"");
		prom_label(stdout, pv[m].root);
		printf("\"} %d\n", pv[m].state == PROBE_UP);
	}
	if (n == 0)
		return;
	prom_head("tierfs_tier_info", false,
		  "Kind and backing path of each tier (value 1).");
	for (size_t m = 0; m < n; m++) {
		for (size_t i = 0; i < s[m].nrecs; i++) {
			const struct stats_rec *t = &s[m].recs[i];
			const char *path;

			if (strcmp(t->type, "tier") || !t->name)
				continue;
			printf("tierfs_tier_info{mount=\"");
			prom_label(stdout, roots[m]);
			printf("\",tier=\"");
			prom_label(stdout, t->name);
			printf("\",kind=\"");
			prom_label(stdout, rec_get(t, "kind")
						   ? rec_get(t, "kind")
						   : "");
			printf("\",path=\"");
			/* "-": a tier without a backing path (ram) */
			path = rec_get(t, "path");
			prom_label(stdout,
				   path && strcmp(path, "-") ? path : "");
			printf("\"} 1\n");
		}
	}
	for (size_t k = 0; k < ARRAY_SIZE(tier_metrics); k++) {
		const struct metric *me = &tier_metrics[k];

		prom_head(me->name, me->counter, me->help);
		for (size_t m = 0; m < n; m++) {
			for (size_t i = 0; i < s[m].nrecs; i++) {
				const struct stats_rec *t = &s[m].recs[i];

				if (strcmp(t->type, "tier") || !t->name)
					continue;
				printf("%s{mount=\"", me->name);
				prom_label(stdout, roots[m]);
				printf("\",tier=\"");
				prom_label(stdout, t->name);
				printf("\"} %llu\n",
				       (unsigned long long)rec_u64(t, me->key));
			}
		}
	}
	for (size_t k = 0; k < ARRAY_SIZE(mount_metrics); k++) {
		prom_head(mount_metrics[k].name, mount_metrics[k].counter,
			  mount_metrics[k].help);
		for (size_t m = 0; m < n; m++) {
			const struct stats_rec *r =
				stats_find(&s[m], mount_metrics[k].rec, NULL);
			uint64_t v = rec_u64(r, mount_metrics[k].key);

			if (!r)
				continue;
			printf("%s{mount=\"", mount_metrics[k].name);
			prom_label(stdout, roots[m]);
			if (mount_metrics[k].scale == 1)
				printf("\"} %llu\n", (unsigned long long)v);
			else
				printf("\"} %g\n",
				       (double)v * mount_metrics[k].scale);
		}
	}
}

static void stats_text(const char *root, const struct stats *s, bool header)
{
	/* values are numbers or words but for tier paths: quote them all */
	if (header)
		printf("mount %s\n", qn(root));
	for (size_t i = 0; i < s->nrecs; i++) {
		const struct stats_rec *r = &s->recs[i];

		for (size_t k = 0; k < r->nkv; k++) {
			if (r->name)
				printf("%s.%s.%s %s\n", r->type, r->name,
				       r->kv[k].key, qn(r->kv[k].value));
			else
				printf("%s.%s %s\n", r->type, r->kv[k].key,
				       qn(r->kv[k].value));
		}
	}
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "compact", no_argument, NULL, 'c' },
		{ "prometheus", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	enum { TEXT, JSON, PROM } fmt = TEXT;
	bool compact = false;
	struct mount_probe *v = NULL;
	char **roots = NULL;
	struct stats *s = NULL;
	size_t n = 0, nup = 0, ndown = 0, nshown = 0;
	int c, ret = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":jcp", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			fmt = JSON;
			break;
		case 'c':
			compact = true;
			break;
		case 'p':
			fmt = PROM;
			break;
		default:
			return tierctl_bad_option(c, argv);
		}
	}
	if (compact && fmt != JSON)
		return tierctl_usage_err(argv[0], "--compact goes with --json");
	if (fmt == JSON && argc - optind != 1)
		return tierctl_usage_err(argv[0],
					 "--json takes exactly one MOUNT");
	ret = mount_probe_all(argc - optind, argv + optind, &v, &n);
	if (ret)
		return ret;
	if (n == 0 && fmt != PROM) {
		mount_probe_free(v, n);
		return tierctl_err("no tierfs mounts found");
	}
	s = calloc(n ? n : 1, sizeof(*s));
	roots = calloc(n ? n : 1, sizeof(*roots));
	if (!s || !roots) {
		ret = tierctl_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct mount_probe *p = &v[i];

		if (p->state == PROBE_DUP)
			continue;
		nshown++;
		if (p->state == PROBE_UP) {
			roots[nup] = p->root;
			s[nup++] = p->stats;
			continue;
		}
		tierctl_err("%s", p->why);
		/*
		 * A scrape must not fail for one mount that is down: it
		 * is exported as tierfs_up 0 and the others as usual.  A
		 * path that is no tierfs at all is still an error.
		 */
		if (fmt == PROM && p->state == PROBE_DOWN)
			ndown++;
		else
			ret = TIERCTL_EXIT_FAIL;
	}
	if (fmt == PROM) {
		/* nothing but errors: no families either */
		if (nup + ndown > 0 || n == 0)
			stats_prometheus(roots, s, nup, v, n);
	} else {
		for (size_t i = 0; i < nup; i++) {
			if (fmt == JSON)
				ret |= stats_json(roots[i], &s[i], !compact);
			else
				stats_text(roots[i], &s[i], nshown > 1);
		}
	}
out:
	/* the stats and roots belong to the probes */
	free(s);
	free(roots);
	mount_probe_free(v, n);
	return ret;
}

/* ---- top ---- */

static volatile sig_atomic_t top_stop;

static void top_sigint(int sig)
{
	top_stop = 1;
}

static double rate(const struct stats_rec *a, const struct stats_rec *b,
		   const char *key, double secs)
{
	uint64_t x = rec_u64(a, key), y = rec_u64(b, key);

	/* a counter that went down (a remount) counts from zero */
	return (double)(y >= x ? y - x : y) / secs;
}

static void human_rate(double v, char *buf, size_t len)
{
	char h[32];

	human((uint64_t)(v + 0.5), h, sizeof(h));
	snprintf(buf, len, "%s/s", h);
}

static int top_screen(const char *root, const struct stats *a,
		      const struct stats *b, double secs, bool clear,
		      bool interactive)
{
	struct table t = { .ncols = 10 };
	static const char *const head[] = {
		"TIER",	 "USED",  "USE%",    "READ",   "WRITE",
		"R-OPS", "W-OPS", "PROMOTE", "DEMOTE", "READ%",
	};
	const struct stats_rec *ma = stats_find(a, "migrator", NULL);
	const struct stats_rec *mb = stats_find(b, "migrator", NULL);
	uint64_t rsum = 0;
	int r;

	for (size_t i = 0; i < b->nrecs; i++) {
		const struct stats_rec *tb = &b->recs[i];

		if (!strcmp(tb->type, "tier") && tb->name) {
			const struct stats_rec *ta =
				stats_find(a, "tier", tb->name);

			rsum += (uint64_t)rate(ta, tb, "read_bytes", 1.0);
		}
	}
	t.left[0] = true;
	r = table_add(&t, head);
	for (size_t i = 0; i < b->nrecs && r == 0; i++) {
		const struct stats_rec *tb = &b->recs[i];
		const struct stats_rec *ta;
		const char *row[10];
		char c[10][48];
		uint64_t size, used;

		if (strcmp(tb->type, "tier") || !tb->name)
			continue;
		ta = stats_find(a, "tier", tb->name);
		size = rec_u64(tb, "size");
		used = rec_u64(tb, "used");
		tier_cell(c[0], sizeof(c[0]), tb);
		human(used, c[1], sizeof(c[1]));
		pct(c[2], sizeof(c[2]),
		    size ? (double)used / (double)size : -1);
		human_rate(rate(ta, tb, "read_bytes", secs), c[3],
			   sizeof(c[3]));
		human_rate(rate(ta, tb, "write_bytes", secs), c[4],
			   sizeof(c[4]));
		snprintf(c[5], sizeof(c[5]), "%.0f/s",
			 rate(ta, tb, "read_ops", secs));
		snprintf(c[6], sizeof(c[6]), "%.0f/s",
			 rate(ta, tb, "write_ops", secs));
		human_rate(rate(ta, tb, "promote_bytes", secs), c[7],
			   sizeof(c[7]));
		human_rate(rate(ta, tb, "demote_bytes", secs), c[8],
			   sizeof(c[8]));
		pct(c[9], sizeof(c[9]),
		    rsum ? rate(ta, tb, "read_bytes", 1.0) / (double)rsum : -1);
		for (int k = 0; k < 10; k++)
			row[k] = c[k];
		r = table_add(&t, row);
	}
	if (r < 0) {
		table_release(&t);
		return tierctl_err("out of memory");
	}
	if (clear)
		fputs("\033[H\033[J", stdout);
	printf("%s: rates over %.1fs%s\n", qn(root), secs,
	       interactive ? " (q or Ctrl-C to quit)" : "");
	table_print(&t, stdout);
	if (mb)
		printf("migrator %s: %.1f extents/s moved, %llu passes, %llu failures\n",
		       rec_u64(mb, "enabled") ? "on" : "off",
		       rate(ma, mb, "moved", secs),
		       (unsigned long long)rec_u64(mb, "passes"),
		       (unsigned long long)rec_u64(mb, "failures"));
	drained_note(root, b);
	putchar('\n');
	tierctl_flush();
	table_release(&t);
	return 0;
}

/* Wait @ms or until q is typed or a signal comes; true to go on. */
static bool top_wait(int ms, bool keys)
{
	uint64_t end = now_ms() + (uint64_t)ms;

	while (!top_stop) {
		uint64_t now = now_ms();
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int r;

		if (now >= end)
			return true;
		r = poll(&pfd, keys ? 1 : 0, (int)(end - now));
		if (r > 0 && keys) {
			char ch;

			if (read(STDIN_FILENO, &ch, 1) == 1 &&
			    (ch == 'q' || ch == 'Q'))
				return false;
		}
	}
	return false;
}

/* One mount that top follows: the last sample and its time. */
struct top_mount {
	char *root; /* borrowed from the probe */
	struct stats a;
	uint64_t ta;
	bool gone; /* stopped answering: reported once, left out */
};

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iterations", required_argument, NULL, 'n' },
		{ "once", no_argument, NULL, '1' },
		{ "delay", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	long count = -1;
	double delay = 1.0;
	bool once = false, ansi, keys;
	struct termios saved;
	struct sigaction sa = { .sa_handler = top_sigint };
	struct mount_probe *v = NULL;
	struct top_mount *tm = NULL;
	size_t n = 0, nm = 0, live;
	int c, ret = 0;
	char *end;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":n:1d:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			errno = 0;
			count = strtol(optarg, &end, 10);
			if (errno || *end || count < 1)
				return tierctl_usage_err(
					argv[0],
					"invalid count '%s': expected a whole number from 1",
					optarg);
			break;
		case '1':
			once = true;
			count = 1;
			break;
		case 'd':
			errno = 0;
			delay = strtod(optarg, &end);
			if (errno || *end || !(delay >= 0.1 && delay <= 3600))
				return tierctl_usage_err(
					argv[0],
					"invalid delay '%s': expected seconds from 0.1 to 3600",
					optarg);
			break;
		default:
			return tierctl_bad_option(c, argv);
		}
	}
	/* like status and stats: without MOUNT, every tierfs mount */
	ret = mount_probe_all(argc - optind, argv + optind, &v, &n);
	if (ret)
		return ret;
	tm = calloc(n ? n : 1, sizeof(*tm));
	if (!tm) {
		mount_probe_free(v, n);
		return tierctl_err("out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].state == PROBE_DUP)
			continue;
		if (v[i].state != PROBE_UP) {
			ret = tierctl_err("%s", v[i].why);
			continue;
		}
		tm[nm].root = v[i].root;
		tm[nm].a = v[i].stats;
		/* the probe no longer owns the stats */
		memset(&v[i].stats, 0, sizeof(v[i].stats));
		v[i].state = PROBE_DOWN;
		tm[nm].ta = now_ms();
		nm++;
	}
	if (n == 0)
		ret = tierctl_err("no tierfs mounts found");
	if (nm == 0) {
		free(tm);
		mount_probe_free(v, n);
		return ret ? ret : TIERCTL_EXIT_FAIL;
	}

	ansi = !once && isatty(STDOUT_FILENO);
	keys = ansi && isatty(STDIN_FILENO) &&
	       tcgetattr(STDIN_FILENO, &saved) == 0;
	if (keys) {
		struct termios raw = saved;

		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	}
	/* no SA_RESTART: the signal must end poll() */
	sigemptyset(&sa.sa_mask);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);

	live = nm;
	for (long i = 0; live > 0 && (count < 0 || i < count); i++) {
		bool first = true;

		if (!top_wait((int)(delay * 1000), keys))
			break;
		for (size_t m = 0; m < nm; m++) {
			struct top_mount *t = &tm[m];
			struct stats b;
			uint64_t tb;
			int r;

			if (t->gone)
				continue;
			r = stats_read(t->root, &b);
			if (r < 0) {
				_cleanup_free_ char *why =
					errno_is_dead(-r)
						? dead_mount_why(t->root, -r,
								 NULL, NULL)
						: NULL;

				if (why)
					ret = tierctl_err("%s", why);
				else
					ret = tierctl_err(
						"cannot read the statistics of '%s': %s",
						qn(t->root), strerror(-r));
				t->gone = true;
				live--;
				continue;
			}
			tb = now_ms();
			r = top_screen(t->root, &t->a, &b,
				       (double)(tb - t->ta) / 1000.0,
				       ansi && first, keys && first);
			stats_release(&t->a);
			t->a = b;
			t->ta = tb;
			first = false;
			if (r)
				ret = r;
			/* output lost (reported at exit): no point going on */
			if (r || ferror(stdout)) {
				live = 0;
				break;
			}
		}
	}
	for (size_t m = 0; m < nm; m++)
		stats_release(&tm[m].a);
	free(tm);
	mount_probe_free(v, n);
	if (keys)
		(void)tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return ret;
}
