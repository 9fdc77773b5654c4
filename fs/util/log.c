// SPDX-License-Identifier: GPL-2.0-or-later
/* log.c -- see log.h. */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"
#include "banned.h"

/* Written once by log_setup() before any thread starts; read-only after. */
static const char *log_ident = "tierfs";
static bool log_syslog;
static bool log_debug_on;

void log_setup(const char *ident, bool use_syslog, bool debug)
{
	log_ident = ident;
	log_debug_on = debug;
	if (use_syslog && !log_syslog)
		openlog(ident, LOG_PID, LOG_DAEMON);
	log_syslog = use_syslog;
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level == LOG_LVL_DEBUG && !log_debug_on)
		return;
	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		/* one fprintf per line keeps lines from threads whole */
		char line[1024];

		vsnprintf(line, sizeof(line), fmt, ap);
		fprintf(stderr, "%s: %s\n", log_ident, line);
	}
	va_end(ap);
}
