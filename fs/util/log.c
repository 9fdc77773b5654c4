// SPDX-License-Identifier: GPL-2.0-or-later
/* log.c -- see log.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>

#include "log.h"
#include "banned.h"

enum log_sink { SINK_STDERR, SINK_SYSLOG, SINK_JOURNAL };

/* Written by the log_setup*() calls before any thread starts; read-only
 * after. */
static const char *log_ident = "tierfs";
static enum log_sink log_sink = SINK_STDERR;
static bool log_debug_on;
/* an unconnected socket and the journal's address: each message is sent
 * to the address, so a journald that restarts (and binds its socket
 * anew) still gets the messages that follow */
static int journal_fd = -1;
static struct sockaddr_un journal_sa;

void log_setup(const char *ident, bool use_syslog, bool debug)
{
	log_ident = ident;
	log_debug_on = debug;
	if (use_syslog && log_sink != SINK_SYSLOG)
		openlog(ident, LOG_PID, LOG_DAEMON);
	log_sink = use_syslog ? SINK_SYSLOG : SINK_STDERR;
}

static int journal_addr(const char *path, struct sockaddr_un *sa)
{
	if (!path)
		path = getenv("TIERFS_JOURNAL_SOCKET");
	if (!path || !*path)
		path = LOG_JOURNAL_SOCKET;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, strlen(path) + 1);
	return 0;
}

/* A datagram socket connected to the journal, or -errno. */
static int journal_connect(const char *path)
{
	struct sockaddr_un sa;
	int fd, r = journal_addr(path, &sa);

	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

bool log_journal_present(const char *path)
{
	int fd = journal_connect(path);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int log_setup_journal(const char *path)
{
	struct sockaddr_un sa;
	int fd = journal_connect(path);

	if (fd < 0)
		return fd;
	close(fd);
	(void)journal_addr(path, &sa); /* journal_connect() checked it */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (journal_fd >= 0)
		close(journal_fd);
	journal_fd = fd;
	journal_sa = sa;
	log_sink = SINK_JOURNAL;
	return 0;
}

bool log_to_journal(void)
{
	return log_sink == SINK_JOURNAL;
}

int log_journal_stream_parse(const char *value, uint64_t *dev, uint64_t *ino)
{
	unsigned long long d, i;
	char *end;

	/* "DEV:INO", both decimal (systemd.exec(5)) */
	if (!value || *value < '0' || *value > '9')
		return -EINVAL;
	errno = 0;
	d = strtoull(value, &end, 10);
	if (errno || *end != ':' || end[1] < '0' || end[1] > '9')
		return -EINVAL;
	i = strtoull(end + 1, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*dev = d;
	*ino = i;
	return 0;
}

bool log_journal_stream_is(const char *value, int fd)
{
	uint64_t dev, ino;
	struct stat st;

	if (log_journal_stream_parse(value, &dev, &ino) < 0 ||
	    fstat(fd, &st) < 0)
		return false;
	return (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

/*
 * One datagram in the journal's native format: "KEY=VALUE\n" fields, and
 * MESSAGE in the length-prefixed form ("MESSAGE\n", 64-bit little-endian
 * length, bytes, "\n") so that a newline in a file name cannot end it or
 * forge a field.  A message that cannot be sent is dropped: logging must
 * never block or fail a request.
 */
static void journal_send(int level, const char *fields, const char *msg)
{
	/* iov_base is not const: arrays, not literals (-Wwrite-strings) */
	static char nl[] = "\n", key[] = "MESSAGE\n";
	char head[128];
	uint64_t n = strlen(msg);
	unsigned char len[8];
	struct iovec iov[7];
	struct msghdr mh = { 0 };
	int k = 0, hl;

	hl = snprintf(head, sizeof(head),
		      "PRIORITY=%d\nSYSLOG_FACILITY=%d\nSYSLOG_IDENTIFIER=%s\n",
		      level, LOG_DAEMON >> 3, log_ident);
	if (hl < 0 || (size_t)hl >= sizeof(head))
		return;
	for (int i = 0; i < 8; i++)
		len[i] = (unsigned char)(n >> (8 * i));
	iov[k++] = (struct iovec){ head, (size_t)hl };
	if (fields && *fields) {
		size_t fl = strlen(fields);

		iov[k++] = (struct iovec){ (void *)fields, fl };
		if (fields[fl - 1] != '\n')
			iov[k++] = (struct iovec){ nl, 1 };
	}
	iov[k++] = (struct iovec){ key, 8 };
	iov[k++] = (struct iovec){ len, sizeof(len) };
	iov[k++] = (struct iovec){ (void *)msg, (size_t)n };
	iov[k++] = (struct iovec){ nl, 1 };
	mh.msg_name = &journal_sa;
	mh.msg_namelen = sizeof(journal_sa);
	mh.msg_iov = iov;
	mh.msg_iovlen = (size_t)k;
	(void)sendmsg(journal_fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/*
 * Format into a stack buffer, or the heap when the line is longer (a
 * path can be 4 KiB): a message is never cut.  Out of memory, the
 * truncated stack copy is logged rather than nothing.
 */
static void log_v(int level, const char *fields, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static void log_v(int level, const char *fields, const char *fmt, va_list ap)
{
	char small[512], *line = small, *big = NULL;
	va_list aq;
	int n;

	if (level == LOG_LVL_DEBUG && !log_debug_on)
		return;
	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small)) {
		big = malloc((size_t)n + 1);
		if (big) {
			vsnprintf(big, (size_t)n + 1, fmt, aq);
			line = big;
		}
	}
	va_end(aq);
	switch (log_sink) {
	case SINK_JOURNAL:
		journal_send(level, fields, line);
		break;
	case SINK_SYSLOG:
		syslog(level, "%s", line);
		break;
	default:
		/* one write per line keeps lines from threads whole */
		fprintf(stderr, "%s: %s\n", log_ident, line);
		break;
	}
	free(big);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v(level, NULL, fmt, ap);
	va_end(ap);
}

void log_fields(int level, const char *fields, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v(level, fields, fmt, ap);
	va_end(ap);
}
