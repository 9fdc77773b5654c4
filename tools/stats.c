// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stats.c -- see tierctl.h: the parser of user.tierfs.stats (one record a
 * line, key=value fields) and the queries the commands make of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "tierctl.h"
#include "cleanup.h"
#include "macro.h"
#include "size.h"
#include "banned.h"

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

double stats_read_share(const struct stats *s, const struct stats_rec *r)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < s->nrecs; i++)
		if (!strcmp(s->recs[i].type, "tier"))
			sum += rec_u64(&s->recs[i], "read_bytes");
	if (sum == 0)
		return -1.0;
	return (double)rec_u64(r, "read_bytes") / (double)sum;
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
	tierctl_err("unknown tier '%s' on '%s' (tiers: %s)", qn(name), qn(root),
		    list);
	return false;
}
