/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h -- the daemon's one logging path.
 *
 * Where messages go (main.c decides):
 *   - in the foreground (-f), stderr (log_setup(..., false, ...)) --
 *     unless stderr is the journal's own stream, as under a systemd
 *     unit: $JOURNAL_STREAM names its device and inode
 *     (log_journal_stream_is()), and then the journal, as below;
 *   - before the daemon detaches, stderr;
 *   - once detached, the systemd journal when its socket is there
 *     (log_setup_journal(): the native protocol, so a message keeps its
 *     priority and carries fields such as TIERFS_INODE and TIERFS_OFFSET
 *     that `journalctl TIERFS_INODE=12` can select);
 *   - else syslog when /dev/log is there (log_setup(..., true, ...));
 *   - else the stderr the daemon was started with, if main() kept it (a
 *     terminal or a file that still has a name; main() says so once on
 *     that stderr, and says when the messages are lost instead).
 *
 * Style (git's): lowercase, no final full stop, error first, subject in
 * single quotes: "cannot map pmem file '%s': %s".  A message about a
 * file names it (path when known, and inode), the offset, and the cause.
 *
 * tiers/, extent_map and policy code never log above debug level; they
 * return -errno and the caller logs once.
 *
 * Thread safety: log_msg()/log_fields() may be called from any thread;
 * the log_setup*() calls are made by main() while one thread runs.
 */
#ifndef TIERFS_UTIL_LOG_H
#define TIERFS_UTIL_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

enum log_level {
	LOG_LVL_ERR = LOG_ERR,
	LOG_LVL_WARN = LOG_WARNING,
	LOG_LVL_INFO = LOG_INFO,
	LOG_LVL_DEBUG = LOG_DEBUG,
};

/* The journal's socket; $TIERFS_JOURNAL_SOCKET overrides it (tests). */
#define LOG_JOURNAL_SOCKET "/run/systemd/journal/socket"

/* stderr (use_syslog false) or syslog; also sets the debug level. */
void log_setup(const char *ident, bool use_syslog, bool debug);

/*
 * Send messages to the journal from now on.  @path NULL means
 * $TIERFS_JOURNAL_SOCKET or LOG_JOURNAL_SOCKET.  Return: 0, or -errno
 * when there is no journal listening there (the sink is then unchanged).
 */
int log_setup_journal(const char *path);

/* True if a journal listens at @path (NULL: as for log_setup_journal). */
bool log_journal_present(const char *path);

/* True once log_setup_journal() has made the journal the sink. */
bool log_to_journal(void);

/*
 * $JOURNAL_STREAM: systemd sets it to "DEV:INO" (decimal) when it
 * connects the service's stdout or stderr to the journal.  A program
 * whose stderr is that stream (same st_dev and st_ino: it may have been
 * redirected since) may speak the native protocol instead.
 * log_journal_stream_parse() returns 0 with the two numbers, or -EINVAL;
 * log_journal_stream_is() says whether @value names the file @fd is
 * open on (false for NULL or a bad value).
 */
int log_journal_stream_parse(const char *value, uint64_t *dev, uint64_t *ino);
bool log_journal_stream_is(const char *value, int fd);

void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * As log_msg(), plus structured fields for the journal: @fields is
 * "KEY=VALUE" lines separated by '\n' (KEY in [A-Z0-9_], VALUE without
 * a newline), or NULL.  Other sinks get the message alone.
 */
void log_fields(int level, const char *fields, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_err(...) log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif /* TIERFS_UTIL_LOG_H */
