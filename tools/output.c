// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * output.c -- see tierctl.h: sizes for people (human(), size_exact()) and the
 * progress display of the long commands.
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

char *human(uint64_t v, char *buf, size_t len)
{
	return size_format(v, buf, len);
}

char *size_exact(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTP"; /* what size_parse() reads */
	int u = -1;

	while (v && u + 1 < (int)sizeof(units) - 1 && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
	return buf;
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
		tierctl_flush();
		return;
	}
	fill = p->total ? (unsigned)(done * BAR / p->total) : BAR;
	for (unsigned i = 0; i < BAR; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[BAR] = '\0';
	printf("\r%s [%s] %3u%% %s/%s\033[K%s", p->what, bar, pct, a, b,
	       final ? "\n" : "");
	tierctl_flush();
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
		tierctl_flush();
	}
	p->drawn = false;
}
