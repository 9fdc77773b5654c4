// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cmd_tier.c -- tierctl migrate, drain and scrub: the commands that make
 * the daemon move or read back data, with progress.
 *
 * migrate sends user.tierfs.ctl.migrate = "TIER START LENGTH" in chunks
 * of MIGRATE_CHUNK_EXTENTS extents, so progress is visible and each
 * request is short.  drain sets user.tierfs.ctl.drain on the mount root
 * from a second thread (the call returns only when the tier is empty)
 * while the main thread polls the tier's used bytes for the display.
 * scrub walks the tree and reads user.tierfs.verify of every file.
 *
 * Longer than 700 lines for a reason: migrate, drain and scrub share
 * the progress display, the tier-name checks against the stats and the
 * walk of a tree.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "tierctl.h"
#include "cleanup.h"
#include "macro.h"
#include "banned.h"

/* Descriptors nftw() may keep open. */
#define WALK_FDS 32

/* ---- the file list that migrate and scrub walk ---- */

struct file_list {
	char **paths;
	size_t n, cap;
	int error;    /* first -errno of the walk */
	char *failed; /* path of that error, malloc'd */
};

/* nftw() has no user pointer: the walk in progress. */
static struct file_list *walk_list;

static int walk_cb(const char *path, const struct stat *st, int flag,
		   struct FTW *ftw)
{
	struct file_list *l = walk_list;

	if (flag == FTW_DNR || flag == FTW_NS) {
		/* unreadable directory or unstattable entry: note, go on */
		if (!l->error) {
			l->failed = strdup(path);
			if (!l->failed)
				return -1;
			l->error = -EACCES;
		}
		return 0;
	}
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 64;
		char **np = realloc(l->paths, nc * sizeof(*np));

		if (!np)
			return -1;
		l->paths = np;
		l->cap = nc;
	}
	l->paths[l->n] = strdup(path);
	if (!l->paths[l->n])
		return -1;
	l->n++;
	return 0;
}

/* Regular files at or below @path, not crossing into other mounts. */
static int collect_files(const char *path, struct file_list *l)
{
	struct stat st;
	int r;

	memset(l, 0, sizeof(*l));
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISREG(st.st_mode)) {
		l->paths = malloc(sizeof(*l->paths));
		if (!l->paths)
			return -ENOMEM;
		l->paths[0] = strdup(path);
		if (!l->paths[0])
			return -ENOMEM;
		l->n = l->cap = 1;
		return 0;
	}
	if (!S_ISDIR(st.st_mode))
		return -EINVAL;
	walk_list = l;
	errno = 0;
	r = nftw(path, walk_cb, WALK_FDS, FTW_PHYS | FTW_MOUNT);
	walk_list = NULL;
	if (r != 0)
		return errno ? -errno : -ENOMEM;
	return 0;
}

static void file_list_release(struct file_list *l)
{
	strv_free(l->paths, l->n);
	free(l->failed);
	memset(l, 0, sizeof(*l));
}

/* ---- migrate ---- */

struct run {
	uint64_t start, len;
};

struct off_tier {
	const char *tier; /* the target */
	struct run *v;
	size_t n, cap;
	uint64_t bytes;
};

/* ctl_run_fn: keep the runs that are not on the target tier. */
static int add_off_tier(void *arg, uint64_t start, uint64_t len,
			const char *tier)
{
	struct off_tier *o = arg;

	if (!strcmp(tier, o->tier))
		return 0;
	if (o->n == o->cap) {
		size_t nc = o->cap ? 2 * o->cap : 16;
		struct run *nv = realloc(o->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		o->v = nv;
		o->cap = nc;
	}
	o->v[o->n].start = start;
	o->v[o->n].len = len;
	o->n++;
	o->bytes += len;
	return 0;
}

/* Runs of @path that are not on @tier yet; *ret_bytes their total.  The
 * extent list is read page by page, so a file of any size works. */
static int runs_off_tier(const char *path, const char *tier, struct run **ret,
			 size_t *ret_n, uint64_t *ret_bytes)
{
	struct off_tier o = { .tier = tier };
	int r = ctl_extents_each(path, add_off_tier, &o);

	if (r < 0) {
		free(o.v);
		return r;
	}
	*ret = o.v;
	*ret_n = o.n;
	*ret_bytes = o.bytes;
	return 0;
}

/*
 * The bytes of @path that are not on @tier: what the other tiers hold
 * for it (user.tierfs.layout, in their allocation units), which is what
 * a move to @tier copies.  The runs of the extent list are whole
 * extents, so a 4000-byte file would count as a whole extent (1M, or
 * 256M with --extent-size 256M) there.
 */
static int bytes_off_tier(const char *path, const char *tier, uint64_t *ret)
{
	_cleanup_free_ char *text = NULL;
	ssize_t n = ctl_get(path, TIERFS_XATTR_LAYOUT, &text);
	uint64_t sum = 0;
	char *save = NULL;

	if (n < 0)
		return (int)n;
	for (char *w = strtok_r(text, " \n", &save); w;
	     w = strtok_r(NULL, " \n", &save)) {
		char *eq = strrchr(w, '=');

		if (!eq)
			return -EBADMSG;
		*eq = '\0';
		if (strcmp(w, tier))
			sum += strtoull(eq + 1, NULL, 10);
	}
	*ret = sum;
	return 0;
}

struct migrate_job {
	const struct tierfs_path *mnt; /* the checked PATH argument */
	const char *tier;
	uint64_t chunk; /* bytes per request */
	uint64_t lend_cap; /* the tier lends (--page-cache only): its cap */
	struct progress pg;
	uint64_t done;	 /* bytes moved so far, <= pg.total */
	unsigned failed; /* files not (fully) moved */
	bool stop;	 /* ENOSPC: no point going on */
};

/*
 * Count the bytes of the file in hand moved so far: what left the other
 * tiers since it started (@off0 then), never more than @off0, so that a
 * file that changes meanwhile cannot make "moved" pass the total.
 * Return: the count for the file.
 */
static uint64_t migrate_count(struct migrate_job *j,
			      const struct tierfs_path *fp, uint64_t base,
			      uint64_t off0)
{
	uint64_t cur;

	if (bytes_off_tier(fp->at, j->tier, &cur) == 0)
		j->done = base + (cur < off0 ? off0 - cur : 0);
	/* else: keep the last count */
	return j->done - base;
}

/* How often (ms) a move re-counts the file: the layout of a file is a
 * walk of its extents, too slow to ask for after each of 100,000 small
 * requests.  In between, each request counts its length. */
#define MIGRATE_COUNT_MS 200

/* Request the move of @runs of @fp, chunk by chunk; @off0 of its bytes
 * are on other tiers. */
static void migrate_runs(struct migrate_job *j, const struct tierfs_path *fp,
			 const struct run *runs, size_t n, uint64_t off0)
{
	const char *path = fp->path;
	uint64_t base = j->done, est = 0, counted = now_ms();
	int r;

	for (size_t i = 0; i < n; i++) {
		for (uint64_t off = 0; off < runs[i].len; off += j->chunk) {
			uint64_t len = MIN(j->chunk, runs[i].len - off);
			char val[128];

			snprintf(val, sizeof(val), "%s %llu %llu", j->tier,
				 (unsigned long long)(runs[i].start + off),
				 (unsigned long long)len);
			r = ctl_set(fp->at, TIERFS_XATTR_CTL_MIGRATE, val);
			if (r == -ENOENT)
				return;
			if (r == -EBUSY) {
				/* a native file open now: the daemon moves
				 * it whole at its last close (fs/native.h) */
				progress_abort(&j->pg);
				tierctl_err("'%s' is open (a native file): it moves to '%s' when it is closed",
					    qn(path), j->tier);
				return;
			}
			if (r < 0) {
				char h[32], t[32];

				/* a refused request may have moved a part */
				migrate_count(j, fp, base, off0);
				progress_abort(&j->pg);
				j->failed++;
				if (r == -ENOSPC && j->lend_cap) {
					char c[32];

					/* the daemon's cap, not its room
					 * (fs/ctl_action.c) */
					j->stop = true;
					tierctl_err(
						"tier '%s' lends its memory (--page-cache only) and holds at most %s: moved %s of %s; '%s' not finished",
						j->tier,
						human(j->lend_cap, c, sizeof(c)),
						human(j->done, h, sizeof(h)),
						human(j->pg.total, t,
						      sizeof(t)),
						qn(path));
				} else if (r == -ENOSPC) {
					j->stop = true;
					tierctl_err(
						"tier '%s' is full (or draining): moved %s of %s; '%s' not finished",
						j->tier,
						human(j->done, h, sizeof(h)),
						human(j->pg.total, t,
						      sizeof(t)),
						qn(path));
				} else if (r == -EPERM || r == -EACCES) {
					tierctl_err(
						"only the owner or root may migrate '%s'",
						qn(path));
				} else if (errno_is_dead(-r)) {
					_cleanup_free_ char *why =
						dead_mount_why(path, -r, NULL,
							       NULL);

					j->stop = true;
					tierctl_err("%s", why ? why : strerror(-r));
				} else {
					tierctl_err(
						"cannot migrate '%s' to '%s': %s",
						qn(path), j->tier,
						strerror(-r));
				}
				return;
			}
			/* a run is whole extents: at most what the file
			 * had off the tier, counted exactly now and then */
			est = MIN(est + len, off0);
			j->done = base + est;
			if (now_ms() - counted >= MIGRATE_COUNT_MS) {
				est = migrate_count(j, fp, base, off0);
				counted = now_ms();
			}
			progress_update(&j->pg, j->done);
		}
	}
	migrate_count(j, fp, base, off0);
}

/*
 * Move the data of @path, found by the walk below j->mnt: opened and
 * checked to be on that mount still, and then reached only through the
 * descriptor, so a rename or symlink swap cannot send a request to a
 * file elsewhere.
 */
static void migrate_file(struct migrate_job *j, const char *path,
			 uint64_t expect)
{
	_cleanup_free_ struct run *runs = NULL;
	struct tierfs_path fp;
	size_t n = 0;
	uint64_t bytes, off0;
	int r = tierfs_path_open_on(path, j->mnt, &fp);

	/* the file may have changed since the total was counted: the
	 * total follows it, so that the progress ends at 100% */
	j->pg.total -= MIN(expect, j->pg.total - j->done);

	if (r == -ENOENT)
		return; /* removed since the walk */
	if (r < 0) {
		progress_abort(&j->pg);
		if (r == -EXDEV)
			tierctl_err("'%s' is not on the mount of '%s' any more",
				    qn(path), qn(j->mnt->path));
		else
			tierctl_err("cannot access '%s': %s", qn(path),
				    strerror(-r));
		j->failed++;
		return;
	}
	r = runs_off_tier(fp.at, j->tier, &runs, &n, &bytes);
	if (r == -ENOENT) {
		tierfs_path_close(&fp);
		return;
	}
	if (r < 0) {
		progress_abort(&j->pg);
		tierctl_err("cannot read the extents of '%s': %s", qn(path),
			    strerror(-r));
		j->failed++;
		tierfs_path_close(&fp);
		return;
	}
	if (bytes_off_tier(fp.at, j->tier, &off0) < 0)
		off0 = 0;
	j->pg.total += off0;
	if (n)
		migrate_runs(j, &fp, runs, n, off0);
	tierfs_path_close(&fp);
}

static int migrate_path(const char *path, const char *tier, bool quiet)
{
	_cleanup_free_ char *root = NULL;
	_cleanup_(tierfs_path_close) struct tierfs_path mnt = { .fd = -1 };
	struct migrate_job j = { .mnt = &mnt, .tier = tier };
	struct file_list l;
	struct stats s;
	uint64_t es, total = 0, *expect;
	char label[128];
	int r;

	r = open_mount_stats(path, &root, &s, &mnt);
	if (r)
		return r;
	if (!stats_check_tier(&s, root, tier)) {
		stats_release(&s);
		return TIERCTL_EXIT_FAIL;
	}
	es = rec_u64(stats_find(&s, "mount", NULL), "extent_size");
	j.lend_cap = rec_u64(stats_find(&s, "tier", tier), "lend_cap");
	stats_release(&s);
	if (!es)
		es = UINT64_C(1) << 20;
	j.chunk = MAX(es, MIN(es * MIGRATE_CHUNK_EXTENTS, MIGRATE_CHUNK_MAX));

	r = collect_files(path, &l);
	if (r == -EINVAL)
		return tierctl_err("'%s' is not a regular file or directory",
				   qn(path));
	if (r < 0) {
		file_list_release(&l);
		return tierctl_err("cannot walk '%s': %s", qn(path),
				   strerror(-r));
	}
	if (l.error) {
		tierctl_err("cannot read '%s': %s", qn(l.failed),
			    strerror(-l.error));
		j.failed++;
	}
	/* first the total, for the progress display: the bytes that the
	 * other tiers hold for each file */
	expect = calloc(l.n ? l.n : 1, sizeof(*expect));
	if (!expect) {
		file_list_release(&l);
		return tierctl_err("out of memory");
	}
	for (size_t i = 0; i < l.n; i++) {
		if (bytes_off_tier(l.paths[i], tier, &expect[i]) < 0)
			expect[i] = 0;
		total += expect[i];
	}
	snprintf(label, sizeof(label), "migrate to %s", tier);
	progress_start(&j.pg, label, total, true, quiet);
	progress_update(&j.pg, 0);
	for (size_t i = 0; i < l.n && !j.stop; i++)
		migrate_file(&j, l.paths[i], expect[i]);
	/* after a failure its message says how far we got */
	if (j.failed)
		progress_abort(&j.pg);
	else
		progress_end(&j.pg, j.pg.total);
	free(expect);
	file_list_release(&l);
	return j.failed ? TIERCTL_EXIT_FAIL : 0;
}

int cmd_migrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	bool quiet = false;
	const char *tier;
	int c, ret = 0;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":q", opts, NULL)) != -1) {
		if (c != 'q')
			return tierctl_bad_option(c, argv);
		quiet = true;
	}
	if (argc - optind < 2)
		return tierctl_usage_err(argv[0],
					 "migrate takes PATH... and TIER");
	tier = argv[argc - 1];
	if (!*tier || strchr(tier, ' '))
		return tierctl_usage_err(argv[0], "invalid tier name '%s'",
					 qn(tier));
	for (int i = optind; i < argc - 1; i++)
		if (migrate_path(argv[i], tier, quiet))
			ret = TIERCTL_EXIT_FAIL;
	return ret;
}

/* ---- drain ---- */

struct drain_call {
	const char *root;
	const char *tier;
	int result; /* 0 or -errno, valid once done */
	bool done;  /* __atomic */
};

static void *drain_thread(void *arg)
{
	struct drain_call *d = arg;

	d->result = ctl_set(d->root, TIERFS_XATTR_CTL_DRAIN, d->tier);
	__atomic_store_n(&d->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static int drain_err(const char *root, const char *tier, int r, uint64_t left)
{
	char h[32];

	if (r == -EPERM || r == -EACCES)
		return tierctl_err("only root may drain a tier of '%s'",
				   qn(root));
	if (r == -ENOSPC)
		return tierctl_err(
			"cannot drain '%s': the other tiers cannot take its data (%s left on it); it takes no new data until 'tierctl drain --undo %s'",
			tier, human(left, h, sizeof(h)), qn(root));
	return tierctl_err("cannot drain '%s' of '%s': %s", tier, qn(root),
			   strerror(-r));
}

/* The used bytes of @tier now, or -errno. */
static int64_t tier_used(const char *root, const char *tier)
{
	struct stats s;
	int64_t used;
	int r = stats_read(root, &s);

	if (r < 0)
		return r;
	used = (int64_t)rec_u64(stats_find(&s, "tier", tier), "used");
	stats_release(&s);
	return used;
}

int cmd_drain(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "undo", no_argument, NULL, 'u' },
		{ "stop", no_argument, NULL, 'u' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ char *root = NULL;
	_cleanup_(tierfs_path_close) struct tierfs_path mnt = { .fd = -1 };
	_cleanup_(tierfs_path_close) struct tierfs_path rootp = { .fd = -1 };
	struct drain_call d = { 0 };
	bool undo = false, quiet = false;
	struct progress pg;
	struct stats s;
	pthread_t th;
	int64_t used0, used;
	char label[128], h[32];
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":uq", opts, NULL)) != -1) {
		if (c == 'u')
			undo = true;
		else if (c == 'q')
			quiet = true;
		else
			return tierctl_bad_option(c, argv);
	}
	if (undo ? argc - optind < 1 || argc - optind > 2 : argc - optind != 2)
		return tierctl_usage_err(
			argv[0], undo ? "drain --undo takes MOUNT [TIER]"
				      : "drain takes MOUNT and TIER");
	/* the protocol's "-" (or ""): end draining, as --undo */
	if (argc - optind == 2 && (!strcmp(argv[optind + 1], "-") ||
				   !*argv[optind + 1])) {
		undo = true;
		argc--;
	}
	r = open_mount_stats(argv[optind], &root, &s, &mnt);
	if (r)
		return r;
	/* the request goes to the root found, if it is that mount's */
	r = tierfs_path_open_on(root, &mnt, &rootp);
	if (r < 0) {
		stats_release(&s);
		return tierctl_err("cannot access '%s': %s", qn(root),
				   strerror(-r));
	}
	d.root = rootp.at;
	d.tier = argc - optind == 2 ? argv[optind + 1] : NULL;
	if (d.tier && !stats_check_tier(&s, root, d.tier)) {
		stats_release(&s);
		return TIERCTL_EXIT_FAIL;
	}
	used0 = d.tier ? (int64_t)rec_u64(stats_find(&s, "tier", d.tier),
					  "used")
		       : 0;
	stats_release(&s);

	if (undo) {
		r = ctl_set(rootp.at, TIERFS_XATTR_CTL_DRAIN, "-");
		if (r < 0)
			return drain_err(root, d.tier ? d.tier : "-", r, 0);
		/* "-" ends draining of whichever tier was drained */
		if (!quiet)
			printf("%s: draining ended; every tier takes new data\n",
			       qn(root));
		return 0;
	}

	r = pthread_create(&th, NULL, drain_thread, &d);
	if (r)
		return tierctl_err("cannot start a thread: %s", strerror(r));
	snprintf(label, sizeof(label), "drain %s", d.tier);
	progress_start(&pg, label, (uint64_t)used0, true, quiet);
	used = used0;
	while (!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE)) {
		int64_t u = tier_used(root, d.tier);

		if (u >= 0)
			used = u;
		progress_update(&pg,
				used0 > used ? (uint64_t)(used0 - used) : 0);
		usleep(200 * 1000);
	}
	pthread_join(th, NULL);
	/*
	 * With a migrator the daemon answers at once and empties the tier in
	 * the background: follow used= down to 0, and give up when the
	 * migrator reports extents it found no room for (drain_stuck=) for
	 * a few polls in a row without progress.
	 */
	for (int stuck_polls = 0; d.result == 0;) {
		struct stats st;
		uint64_t stuck;
		int64_t u;

		r = stats_read(root, &st);
		if (r < 0) {
			d.result = r;
			break;
		}
		u = (int64_t)rec_u64(stats_find(&st, "tier", d.tier), "used");
		stuck = rec_u64(stats_find(&st, "migrator", NULL), "drain_stuck");
		stats_release(&st);
		if (u == 0)
			break;
		stuck_polls = stuck && u >= used ? stuck_polls + 1 : 0;
		used = u;
		if (stuck_polls >= 10) {
			d.result = -ENOSPC;
			break;
		}
		progress_update(&pg,
				used0 > used ? (uint64_t)(used0 - used) : 0);
		usleep(200 * 1000);
	}
	used = tier_used(root, d.tier);
	if (d.result < 0) {
		if (used >= used0)
			progress_abort(&pg);
		else
			progress_end(&pg, (uint64_t)(used0 - used));
		return drain_err(root, d.tier, d.result,
				 used > 0 ? (uint64_t)used : 0);
	}
	progress_end(&pg, (uint64_t)used0);
	if (!quiet)
		printf("%s: tier %s drained (%s moved); it takes no new data until 'tierctl drain --undo %s'\n",
		       qn(root), d.tier, human((uint64_t)used0, h, sizeof(h)),
		       qn(root));
	return 0;
}

/* ---- scrub ---- */

/* "extents=N checked=N errors=N": the value of @key, 0 if absent. */
static uint64_t kv_u64(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p;) {
		while (*p == ' ' || *p == '\n')
			p++;
		if (!strncmp(p, key, kl) && p[kl] == '=')
			return strtoull(p + kl + 1, NULL, 10);
		p = strpbrk(p, " \n");
	}
	return 0;
}

int cmd_scrub(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ char *root = NULL;
	uint64_t extents = 0, errors = 0, files = 0, unverified = 0;
	bool quiet = false;
	struct file_list l;
	struct progress pg;
	struct stats s;
	int c, r;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":q", opts, NULL)) != -1) {
		if (c != 'q')
			return tierctl_bad_option(c, argv);
		quiet = true;
	}
	if (argc - optind != 1)
		return tierctl_usage_err(argv[0], "scrub takes one MOUNT");
	r = open_mount_stats(argv[optind], &root, &s, NULL);
	if (r)
		return r;
	stats_release(&s);
	r = collect_files(argv[optind], &l);
	if (r < 0) {
		file_list_release(&l);
		return tierctl_err("cannot walk '%s': %s", qn(argv[optind]),
				   strerror(-r));
	}
	if (l.error) {
		tierctl_err("cannot read '%s': %s", qn(l.failed),
			    strerror(-l.error));
		unverified++;
	}
	progress_start(&pg, "scrub", l.n, false, quiet);
	for (size_t i = 0; i < l.n; i++) {
		_cleanup_free_ char *text = NULL;
		ssize_t n = ctl_get(l.paths[i], TIERFS_XATTR_VERIFY, &text);
		uint64_t e;

		progress_update(&pg, i);
		if (n == -ENOENT)
			continue; /* removed since the walk */
		if (n == -ENODATA || n == -ENOTSUP) {
			progress_abort(&pg);
			file_list_release(&l);
			return tierctl_err(
				"'%s' cannot verify checksums (no %s)",
				qn(root), TIERFS_XATTR_VERIFY);
		}
		if (n < 0) {
			progress_abort(&pg);
			tierctl_err("cannot verify '%s': %s", qn(l.paths[i]),
				    strerror((int)-n));
			unverified++;
			continue;
		}
		files++;
		extents += kv_u64(text, "checked");
		e = kv_u64(text, "errors");
		if (e) {
			progress_abort(&pg);
			tierctl_err(
				"'%s': %llu of %llu extents failed their checksum",
				qn(l.paths[i]), (unsigned long long)e,
				(unsigned long long)kv_u64(text, "checked"));
			errors += e;
		}
	}
	progress_end(&pg, l.n);
	file_list_release(&l);
	printf("checked %llu extents in %llu files, %llu errors",
	       (unsigned long long)extents, (unsigned long long)files,
	       (unsigned long long)errors);
	if (unverified)
		printf(", %llu files not verified",
		       (unsigned long long)unverified);
	printf("\n");
	return errors || unverified ? TIERCTL_EXIT_FAIL : 0;
}
