/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h -- the daemon's one logging path.  Messages go to stderr while
 * the daemon runs in the foreground and to syslog once it has detached.
 * Style (git's): lowercase, no final full stop, error first, subject in
 * single quotes: "cannot map pmem file '%s': %s".
 *
 * tiers/, extent_map and policy code never log above debug level; they
 * return -errno and the caller logs once.
 */
#ifndef TIERFS_UTIL_LOG_H
#define TIERFS_UTIL_LOG_H

#include <stdbool.h>
#include <syslog.h>

enum log_level {
	LOG_LVL_ERR = LOG_ERR,
	LOG_LVL_WARN = LOG_WARNING,
	LOG_LVL_INFO = LOG_INFO,
	LOG_LVL_DEBUG = LOG_DEBUG,
};

/* Set once at startup, before threads start. */
void log_setup(const char *ident, bool use_syslog, bool debug);

void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif /* TIERFS_UTIL_LOG_H */
