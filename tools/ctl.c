// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ctl.c -- see tierctl.h: control-channel access, mount discovery, the
 * stats parser and the progress display shared by the commands.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "tierctl.h"
#include "cleanup.h"
#include "macro.h"
#include "size.h"
#include "banned.h"

ssize_t ctl_get(const char *path, const char *name, char **ret_val)
{
	/* the value may grow between the size query and the read: retry */
	for (int tries = 0; tries < 8; tries++) {
		ssize_t n = getxattr(path, name, NULL, 0);
		char *buf;

		if (n < 0)
			return -errno;
		buf = malloc((size_t)n + 1);
		if (!buf)
			return -ENOMEM;
		n = getxattr(path, name, buf, (size_t)n);
		if (n >= 0) {
			buf[n] = '\0';
			*ret_val = buf;
			return n;
		}
		free(buf);
		if (errno != ERANGE)
			return -errno;
	}
	return -ERANGE;
}

int ctl_set(const char *path, const char *name, const char *value)
{
	if (setxattr(path, name, value, strlen(value), 0) < 0)
		return -errno;
	return 0;
}

int mount_root(const char *path, char **ret_root)
{
	_cleanup_free_ char *cur = realpath(path, NULL);
	struct stat st;

	if (!cur)
		return -errno;
	if (stat(cur, &st) < 0)
		return -errno;
	for (;;) {
		char *slash = strrchr(cur, '/');
		struct stat pst;
		char save;

		if (!slash || !strcmp(cur, "/"))
			break;
		/* look at the parent without losing @cur */
		save = slash == cur ? slash[1] : slash[0];
		if (slash == cur)
			slash[1] = '\0';
		else
			slash[0] = '\0';
		if (stat(cur, &pst) < 0 || pst.st_dev != st.st_dev) {
			if (slash == cur)
				slash[1] = save;
			else
				slash[0] = save;
			break;
		}
	}
	*ret_root = TAKE_PTR(cur);
	return 0;
}

void strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
		    r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') << 6 | (r[2] - '0') << 3 |
				      (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

ssize_t tierfs_mounts(char ***ret_list)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, n = 0, lcap = 0;
	char **list = NULL;

	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SRC SOPTS */
		char *field[5], *p = line, *sep, *type;
		int i;

		for (i = 0; i < 5; i++) {
			field[i] = p;
			p = strchr(p, ' ');
			if (!p)
				break;
			*p++ = '\0';
		}
		if (i < 5)
			continue;
		sep = strstr(p, " - ");
		if (!sep)
			continue;
		type = sep + 3;
		sep = strchr(type, ' ');
		if (sep)
			*sep = '\0';
		if (strcmp(type, TIERFS_FSTYPE))
			continue;
		unescape_octal(field[4]);
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 4;
			char **nl = realloc(list, ncap * sizeof(*nl));

			if (!nl)
				goto oom;
			list = nl;
			cap = ncap;
		}
		list[n] = strdup(field[4]);
		if (!list[n])
			goto oom;
		n++;
	}
	*ret_list = list;
	return (ssize_t)n;
oom:
	strv_free(list, n);
	return -ENOMEM;
}

/* ---- stats ---- */

int stats_parse(char *text, struct stats *ret)
{
	struct stats s = { .text = text };
	size_t cap = 0;
	char *line = text;

	while (line && *line) {
		char *end = strchr(line, '\n');
		struct stats_rec r = { 0 };
		size_t kcap = 0;
		char *p;

		if (end)
			*end = '\0';
		/* words split at single spaces, NULs written as we go */
		p = line;
		for (int word = 0; p; word++) {
			char *sp = strchr(p, ' ');
			char *eq;

			if (sp)
				*sp = '\0';
			eq = strchr(p, '=');
			if (word == 0) {
				r.type = p;
			} else if (word == 1 && !eq &&
				   !strcmp(r.type, "tier")) {
				r.name = p;
			} else if (eq) {
				if (r.nkv == kcap) {
					size_t nc = kcap ? 2 * kcap : 24;
					struct stats_kv *nkv = realloc(
						r.kv, nc * sizeof(*nkv));

					if (!nkv)
						goto oom_rec;
					r.kv = nkv;
					kcap = nc;
				}
				*eq = '\0';
				r.kv[r.nkv].key = p;
				r.kv[r.nkv].value = eq + 1;
				r.nkv++;
			} else if (r.nkv > 0) {
				/* a space inside the last value: put it back */
				p[-1] = ' ';
			}
			p = sp ? sp + 1 : NULL;
		}
		if (r.type && *r.type) {
			if (s.nrecs == cap) {
				size_t nc = cap ? 2 * cap : 8;
				struct stats_rec *nr =
					realloc(s.recs, nc * sizeof(*nr));

				if (!nr)
					goto oom_rec;
				s.recs = nr;
				cap = nc;
			}
			s.recs[s.nrecs++] = r;
		} else {
			free(r.kv);
		}
		line = end ? end + 1 : NULL;
		continue;
oom_rec:
		free(r.kv);
		stats_release(&s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

int stats_read(const char *root, struct stats *ret)
{
	char *text;
	ssize_t n = ctl_get(root, TIERFS_XATTR_STATS, &text);

	if (n < 0)
		return (int)n;
	return stats_parse(text, ret);
}

void stats_release(struct stats *s)
{
	for (size_t i = 0; i < s->nrecs; i++)
		free(s->recs[i].kv);
	free(s->recs);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

const struct stats_rec *stats_find(const struct stats *s, const char *type,
				   const char *name)
{
	for (size_t i = 0; i < s->nrecs; i++) {
		const struct stats_rec *r = &s->recs[i];

		if (strcmp(r->type, type))
			continue;
		if (name && (!r->name || strcmp(r->name, name)))
			continue;
		return r;
	}
	return NULL;
}

const char *rec_get(const struct stats_rec *r, const char *key)
{
	for (size_t i = 0; r && i < r->nkv; i++)
		if (!strcmp(r->kv[i].key, key))
			return r->kv[i].value;
	return NULL;
}

uint64_t rec_u64(const struct stats_rec *r, const char *key)
{
	const char *v = rec_get(r, key);
	uint64_t n;

	if (!v || size_parse(v, &n) < 0)
		return 0;
	return n;
}

size_t stats_ntiers(const struct stats *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nrecs; i++)
		n += !strcmp(s->recs[i].type, "tier") && s->recs[i].name;
	return n;
}

double stats_hit_ratio(const struct stats *s, const struct stats_rec *r)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < s->nrecs; i++)
		if (!strcmp(s->recs[i].type, "tier"))
			sum += rec_u64(&s->recs[i], "read_bytes");
	if (sum == 0)
		return -1.0;
	return (double)rec_u64(r, "read_bytes") / (double)sum;
}

int open_mount_stats(const char *path, char **ret_root, struct stats *ret)
{
	char *root;
	int r = mount_root(path, &root);

	if (r < 0)
		return tierctl_err("cannot access '%s': %s", path,
				   strerror(-r));
	r = stats_read(root, ret);
	if (r == -ENODATA || r == -ENOTSUP) {
		tierctl_err("'%s' is not on a tierfs mount", path);
		free(root);
		return TIERCTL_EXIT_FAIL;
	}
	if (r < 0) {
		tierctl_err("cannot read the statistics of '%s': %s", root,
			    strerror(-r));
		free(root);
		return TIERCTL_EXIT_FAIL;
	}
	*ret_root = root;
	return 0;
}

bool stats_check_tier(const struct stats *s, const char *root, const char *name)
{
	char list[512] = "";
	size_t n = 0;

	if (stats_find(s, "tier", name))
		return true;
	for (size_t i = 0; i < s->nrecs; i++) {
		const struct stats_rec *r = &s->recs[i];
		int k;

		if (strcmp(r->type, "tier") || !r->name)
			continue;
		k = snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "",
			     r->name);
		if (k < 0 || (size_t)k >= sizeof(list) - n)
			break;
		n += (size_t)k;
	}
	tierctl_err("unknown tier '%s' on '%s' (tiers: %s)", name, root, list);
	return false;
}

/* ---- output ---- */

char *human(uint64_t v, char *buf, size_t len)
{
	return size_format(v, buf, len);
}

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void progress_start(struct progress *p, const char *what, uint64_t total,
		    bool bytes, bool quiet)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->total = total;
	p->bytes = bytes;
	p->quiet = quiet;
	p->tty = isatty(STDOUT_FILENO);
}

static void amount(const struct progress *p, uint64_t v, char *buf, size_t len)
{
	if (p->bytes)
		human(v, buf, len);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

static void progress_draw(struct progress *p, uint64_t done, bool final)
{
	enum { BAR = 30 };
	char a[32], b[32], bar[BAR + 1];
	unsigned pct;
	unsigned fill;

	if (p->quiet)
		return;
	if (done > p->total)
		done = p->total;
	pct = p->total ? (unsigned)(done * 100 / p->total) : 100;
	amount(p, done, a, sizeof(a));
	amount(p, p->total, b, sizeof(b));
	if (!p->tty) {
		int tenth = (int)(pct / 10);

		/* no "0%" line: a command that fails at once prints only
		 * its error */
		if (tenth <= p->last_tenth && !final)
			return;
		if (final && p->last_tenth == 10)
			return;
		p->last_tenth = tenth;
		printf("%s: %u%% (%s of %s)\n", p->what, pct, a, b);
		fflush(stdout);
		return;
	}
	fill = p->total ? (unsigned)(done * BAR / p->total) : BAR;
	for (unsigned i = 0; i < BAR; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[BAR] = '\0';
	printf("\r%s [%s] %3u%% %s/%s\033[K%s", p->what, bar, pct, a, b,
	       final ? "\n" : "");
	fflush(stdout);
	p->drawn = !final;
}

void progress_update(struct progress *p, uint64_t done)
{
	uint64_t t = now_ms();

	/* a terminal is redrawn at most ten times a second */
	if (p->tty && p->drawn && t - p->last_ms < 100)
		return;
	p->last_ms = t;
	progress_draw(p, done, false);
}

void progress_end(struct progress *p, uint64_t done)
{
	progress_draw(p, done, true);
}

void progress_abort(struct progress *p)
{
	if (p->tty && p->drawn && !p->quiet) {
		fputs("\r\033[K", stdout);
		fflush(stdout);
	}
	p->drawn = false;
}
