// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ctl.c -- see tierctl.h: the control channel (get, set, the paged extent
 * lists).  Mount discovery is mounts.c, the stats parser stats.c, the
 * output helpers and progress display output.c.
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

/* A malloc'd copy of @buf's first @n bytes and a NUL, or NULL. */
static char *dup_value(const char *buf, size_t n)
{
	char *v = malloc(n + 1);

	if (v) {
		memcpy(v, buf, n);
		v[n] = '\0';
	}
	return v;
}

/*
 * The daemon refuses a long request (a directory's layout, verify,
 * migrate) with EAGAIN when this user already has its share of them
 * running, or the CPU's queue its share of long requests (fs/gate.h):
 * nothing waits there on a thread of the daemon, so tierctl waits here,
 * 20 ms and doubling up to 1 s, for at most CTL_BUSY_WAIT_MS, before it
 * gives up with EAGAIN.  @waited_ms counts what was waited so far.
 */
#define CTL_BUSY_WAIT_MS (10 * 60 * 1000)

static bool busy_retry(int err, unsigned *delay_ms, unsigned *waited_ms)
{
	struct timespec ts;

	if (err != EAGAIN || *waited_ms >= CTL_BUSY_WAIT_MS)
		return false;
	if (!*delay_ms)
		*delay_ms = 20;
	ts.tv_sec = *delay_ms / 1000;
	ts.tv_nsec = (long)(*delay_ms % 1000) * 1000000L;
	(void)nanosleep(&ts, NULL);
	*waited_ms += *delay_ms;
	*delay_ms = MIN(2 * *delay_ms, 1000u);
	return true;
}

/*
 * One getxattr with room for the largest value the protocol allows
 * (TIERFS_XATTR_VALUE_MAX): a computed value is made afresh for each
 * call -- a directory's layout walks its tree, verify reads the file --
 * so a size probe first would make it twice.  Only a value larger than
 * that (ERANGE: not one of ours) falls back to asking its size, then
 * reading it, again while it keeps growing in between.
 */
ssize_t ctl_get(const char *path, const char *name, char **ret_val)
{
	_cleanup_free_ char *big = malloc(TIERFS_XATTR_VALUE_MAX);
	unsigned delay = 0, waited = 0;
	ssize_t n;

	if (!big)
		return -ENOMEM;
	do
		n = getxattr(path, name, big, TIERFS_XATTR_VALUE_MAX);
	while (n < 0 && busy_retry(errno, &delay, &waited));
	if (n >= 0) {
		*ret_val = dup_value(big, (size_t)n);
		return *ret_val ? n : -ENOMEM;
	}
	if (errno != ERANGE)
		return -errno;
	for (int tries = 0; tries < 8; tries++) {
		char *buf;

		n = getxattr(path, name, NULL, 0);
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
	unsigned delay = 0, waited = 0;
	int r;

	do
		r = setxattr(path, name, value, strlen(value), 0);
	while (r < 0 && busy_retry(errno, &delay, &waited));
	return r < 0 ? -errno : 0;
}

/* The run in hand, held back until the next one shows that a page
 * boundary did not cut it in two. */
struct pending_run {
	uint64_t start, len;
	char tier[TIERFS_TIER_NAME_MAX + 1];
	bool set;
};

static int run_flush(struct pending_run *p, ctl_run_fn fn, void *arg)
{
	int r = p->set ? fn(arg, p->start, p->len, p->tier) : 0;

	p->set = false;
	return r;
}

/* A decimal number ended by @end; false when it is not one. */
static bool parse_u64(const char **s, char end, uint64_t *ret)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (*p != end)
		return false;
	*s = p + 1;
	*ret = v;
	return true;
}

/*
 * Hand the runs of one page (@text, NUL-terminated) to @fn; *ret_next
 * the offset of its "next" line, or 0 when it is the last page.
 */
static int parse_page(const char *text, uint64_t off, struct pending_run *p,
		      ctl_run_fn fn, void *arg, uint64_t *ret_next)
{
	const size_t nw = strlen(TIERFS_PAGE_NEXT);

	*ret_next = 0;
	while (*text) {
		uint64_t start, len;
		const char *nl;
		size_t tl;
		int r;

		if (!strncmp(text, TIERFS_PAGE_NEXT " ", nw + 1)) {
			text += nw + 1;
			if (!parse_u64(&text, '\n', ret_next) || *text ||
			    *ret_next <= off)
				return -EBADMSG;
			return 0;
		}
		if (!parse_u64(&text, ' ', &start) ||
		    !parse_u64(&text, ' ', &len) || len == 0 ||
		    start + len < start)
			return -EBADMSG;
		nl = strchr(text, '\n');
		tl = nl ? (size_t)(nl - text) : 0;
		if (tl == 0 || tl > TIERFS_TIER_NAME_MAX)
			return -EBADMSG;
		if (p->set && p->start + p->len == start &&
		    strlen(p->tier) == tl && !memcmp(p->tier, text, tl)) {
			p->len += len; /* cut by a page boundary */
		} else {
			r = run_flush(p, fn, arg);
			if (r)
				return r;
			p->start = start;
			p->len = len;
			memcpy(p->tier, text, tl);
			p->tier[tl] = '\0';
			p->set = true;
		}
		text = nl + 1;
	}
	return 0;
}

int ctl_extents_each(const char *path, ctl_run_fn fn, void *arg)
{
	_cleanup_free_ char *buf = malloc(TIERFS_XATTR_VALUE_MAX + 1);
	struct pending_run p = { .set = false };
	uint64_t off = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		char name[sizeof(TIERFS_XATTR_EXTENTS_AT) + 20];
		uint64_t next;
		ssize_t n;
		int r;

		snprintf(name, sizeof(name), TIERFS_XATTR_EXTENTS_AT "%llu",
			 (unsigned long long)off);
		/* a page always fits: no size probe (ctl_proto.h) */
		n = getxattr(path, name, buf, TIERFS_XATTR_VALUE_MAX);
		if (n < 0 && errno == ENODATA && off == 0) {
			/* a daemon without pages: the whole list */
			_cleanup_free_ char *all = NULL;

			n = ctl_get(path, TIERFS_XATTR_EXTENTS, &all);
			if (n < 0)
				return (int)n;
			r = parse_page(all, 0, &p, fn, arg, &next);
			if (r == 0 && next)
				r = -EBADMSG;
			return r ? r : run_flush(&p, fn, arg);
		}
		if (n < 0)
			return -errno;
		buf[n] = '\0';
		if (strlen(buf) != (size_t)n)
			return -EBADMSG;
		r = parse_page(buf, off, &p, fn, arg, &next);
		if (r)
			return r;
		if (!next)
			return run_flush(&p, fn, arg);
		off = next;
	}
}
