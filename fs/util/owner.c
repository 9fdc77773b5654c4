// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * owner.c -- the principal of a uid, and of the request a thread serves
 * (owner.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "owner.h"
#include "banned.h"

/* ---- pure parts ---- */

static int cmp_range(const void *a, const void *b)
{
	const struct owner_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* A decimal uid of @n bytes at @s into *@ret: true, or false. */
static bool parse_u32(const char *s, size_t n, uint32_t *ret)
{
	uint64_t v = 0;

	if (n == 0 || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*ret = (uint32_t)v;
	return true;
}

int owner_parse(const char *text, size_t len,
		int (*resolve)(const char *name, uint32_t *ret_uid),
		struct owner_range **ret)
{
	struct owner_range *v = NULL;
	size_t n = 0, cap = 0;
	size_t at = 0;

	*ret = NULL;
	while (at < len) {
		const char *line = text + at;
		const char *nl = memchr(line, '\n', len - at);
		size_t ll = nl ? (size_t)(nl - line) : len - at;
		const char *c1 = memchr(line, ':', ll);
		const char *c2 = c1 ? memchr(c1 + 1, ':', ll - (size_t)(c1 + 1 - line)) : NULL;
		uint32_t start, count, owner;
		char name[256];
		size_t nlen;

		at += ll + 1;
		if (!c1 || !c2)
			continue;
		nlen = (size_t)(c1 - line);
		if (nlen == 0 || nlen >= sizeof(name) ||
		    !parse_u32(c1 + 1, (size_t)(c2 - c1 - 1), &start) ||
		    !parse_u32(c2 + 1, ll - (size_t)(c2 + 1 - line), &count) ||
		    count == 0 || (uint64_t)start + count - 1 > UINT32_MAX)
			continue;
		if (!parse_u32(line, nlen, &owner)) {
			memcpy(name, line, nlen);
			name[nlen] = '\0';
			if (!resolve || resolve(name, &owner) < 0)
				owner = OWNER_RANGE_TAG | start;
		}
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			struct owner_range *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		v[n++] = (struct owner_range){ start, count, owner };
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_range);
	*ret = v;
	return (int)n;
}

uint32_t owner_lookup(const struct owner_range *r, size_t n, uint32_t uid)
{
	size_t lo = 0, hi = n;

	/* lo: the number of ranges that start at or below @uid */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= uid)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest such range holds it; a bad file's overlapping
	 * ranges are looked at a few back, no further */
	for (size_t k = 0; k < 8 && lo > 0; k++) {
		const struct owner_range *x = &r[--lo];

		if ((uint64_t)uid < (uint64_t)x->start + x->count)
			return x->owner;
	}
	return uid;
}

/* ---- the loaded file ---- */

static struct {
	pthread_mutex_t lock;
	char *path;		  /* lock */
	struct owner_range *r;	  /* lock */
	size_t n;		  /* lock */
	struct stat st;		  /* lock; of the file read, st_ino 0: none */
	int64_t checked_ms;	  /* relaxed atomic: the last look */
	bool reloading;		  /* lock */
} tab = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int resolve_name(const char *name, uint32_t *ret_uid)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int r = getpwnam_r(name, &pw, buf, sizeof(buf), &res);

	if (r != 0 || !res)
		return r ? -r : -ENOENT;
	*ret_uid = (uint32_t)pw.pw_uid;
	return 0;
}

/* Read @path whole (at most 1 MiB): 0 and a malloc()ed *@ret, or -errno. */
static int slurp(const char *path, struct stat *st, char **ret, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t cap = 4096, n = 0;
	char *buf;
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0 || !(buf = malloc(cap))) {
		r = -errno;
		close(fd);
		return r ? r : -ENOMEM;
	}
	for (;;) {
		ssize_t k;

		if (n == cap) {
			char *nb = cap < (1u << 20) ? realloc(buf, 2 * cap) : NULL;

			if (!nb) {
				r = cap < (1u << 20) ? -ENOMEM : -EFBIG;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = -errno;
			break;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	*ret_len = n;
	return 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Read the file again if it changed.  Called without the lock; only one
 * thread reloads at a time, the others go on with the old table. */
static int reload(bool force)
{
	struct owner_range *r = NULL;
	struct stat st = { 0 };
	char *path, *text = NULL;
	size_t len = 0;
	int n = 0, e;

	pthread_mutex_lock(&tab.lock);
	if (tab.reloading || !tab.path) {
		pthread_mutex_unlock(&tab.lock);
		return 0;
	}
	if (!force && stat(tab.path, &st) == 0 && same_file(&st, &tab.st)) {
		pthread_mutex_unlock(&tab.lock);
		return 0;
	}
	tab.reloading = true;
	path = strdup(tab.path);
	pthread_mutex_unlock(&tab.lock);

	e = path ? slurp(path, &st, &text, &len) : -ENOMEM;
	free(path);
	if (e == 0) {
		n = owner_parse(text, len, resolve_name, &r);
		if (n < 0)
			e = n;
	}
	free(text);
	if (e == -ENOENT)
		e = 0; /* no file: no ranges */
	pthread_mutex_lock(&tab.lock);
	if (e == 0) {
		free(tab.r);
		tab.r = r;
		tab.n = n > 0 ? (size_t)n : 0;
		tab.st = st;
	}
	tab.reloading = false;
	pthread_mutex_unlock(&tab.lock);
	return e;
}

int owner_load(const char *path)
{
	char *p = strdup(path ? path : "/etc/subuid");

	if (!p)
		return -ENOMEM;
	pthread_mutex_lock(&tab.lock);
	free(tab.path);
	tab.path = p;
	memset(&tab.st, 0, sizeof(tab.st));
	pthread_mutex_unlock(&tab.lock);
	__atomic_store_n(&tab.checked_ms, now_ms(), __ATOMIC_RELAXED);
	return reload(true);
}

uint32_t owner_of_uid(uint32_t uid)
{
	int64_t now = now_ms();
	int64_t last = __atomic_load_n(&tab.checked_ms, __ATOMIC_RELAXED);
	uint32_t o;

	if (now - last >= OWNER_CHECK_MS &&
	    __atomic_compare_exchange_n(&tab.checked_ms, &last, now, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		(void)reload(false);
	pthread_mutex_lock(&tab.lock);
	o = owner_lookup(tab.r, tab.n, uid);
	pthread_mutex_unlock(&tab.lock);
	return o;
}

/* ---- the current request ---- */

static __thread struct {
	uint32_t uid;	/* OWNER_NONE: no request */
	uint32_t owner; /* computed on first ask; OWNER_NONE: not yet */
} cur = { OWNER_NONE, OWNER_NONE };

void owner_set_uid(uint32_t uid)
{
	cur.uid = uid;
	cur.owner = OWNER_NONE;
}

uint32_t owner_current(void)
{
	if (cur.uid == OWNER_NONE)
		return OWNER_NONE;
	if (cur.owner == OWNER_NONE)
		cur.owner = owner_of_uid(cur.uid);
	return cur.owner;
}

uint32_t owner_current_uid(void)
{
	return cur.uid;
}
