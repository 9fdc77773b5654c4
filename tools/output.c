// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * output.c -- see tierctl.h: the error lines every command writes
 * (tierctl_err(), tierctl_usage_err()), stdout's check at exit, sizes
 * for people (human(), size_exact()) and the progress display of the
 * long commands.  Below every other file of tools/ but json.c and
 * quote.c: it calls none of them (the usage line of a verb comes
 * through the lookup tierctl.c's main() hands tierctl_usage_lookup()).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

/* errno of the first failed flush of stdout, 0 if none */
static int stdout_errno;

void tierctl_flush(void)
{
	if (fflush(stdout) != 0 && !stdout_errno)
		stdout_errno = errno;
}

/* "tierctl: " @fmt @suffix "\n" on stderr, of any length. */
__attribute__((format(printf, 1, 0))) static void
err_line(const char *fmt, va_list ap, const char *suffix)
{
	/* what went to stdout before the error comes first */
	tierctl_flush();
	flockfile(stderr);
	fputs("tierctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(suffix, stderr);
	fputc('\n', stderr);
	funlockfile(stderr);
}

int tierctl_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_line(fmt, ap, "");
	va_end(ap);
	return TIERCTL_EXIT_FAIL;
}

/* tierctl.c's command table, for the usage line of a verb; NULL until
 * main() gives it (then no usage is shown). */
static const char *(*usage_of)(const char *verb);

void tierctl_usage_lookup(const char *(*fn)(const char *verb))
{
	usage_of = fn;
}

int tierctl_usage_err(const char *verb, const char *fmt, ...)
{
	const char *usage = usage_of ? usage_of(verb) : NULL;
	_cleanup_free_ char *suffix = NULL;
	va_list ap;

	/* one line, like every error: the usage goes in parentheses */
	if (usage && asprintf(&suffix, " (usage: tierctl %s)", usage) < 0)
		suffix = NULL;
	va_start(ap, fmt);
	err_line(fmt, ap, suffix ? suffix : "");
	va_end(ap);
	return TIERCTL_EXIT_USAGE;
}

int tierctl_bad_option(int c, char **argv)
{
	const char *opt = optind > 0 ? argv[optind - 1] : "?";

	if (c == ':')
		return tierctl_usage_err(argv[0], "option '%s' needs a value",
					 opt);
	if (optopt && optopt != '?')
		return tierctl_usage_err(argv[0], "unknown option '-%c'",
					 optopt);
	return tierctl_usage_err(argv[0], "unknown option '%s'", opt);
}

/*
 * Whether everything written to stdout reached it (gnulib's close_stdout,
 * git's check at exit): stdio keeps a failed write as the stream's error
 * flag, and the last buffer is written only now, so "tierctl status >
 * /dev/full" would otherwise exit 0 with nothing written.  Returns the
 * exit status, after one error line when the output was lost.
 */
int tierctl_close_stdout(int ret)
{
	bool failed = ferror(stdout) != 0;

	tierctl_flush();
	/* EBADF from close alone: stdout was closed (>&-), nothing lost */
	if (fclose(stdout) != 0 && errno != EBADF && !stdout_errno)
		stdout_errno = errno;
	if (!failed && !stdout_errno)
		return ret;
	/* not tierctl_err(): it flushes stdout, which is closed now.  A
	 * failed write inside a flush has no errno we could keep. */
	fprintf(stderr, "tierctl: cannot write to standard output%s%s\n",
		stdout_errno ? ": " : "",
		stdout_errno ? strerror(stdout_errno) : "");
	return ret ? ret : TIERCTL_EXIT_FAIL;
}

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
