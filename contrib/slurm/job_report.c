// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * job_report.c -- see job_report.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "job_report.h"
#include "ctl_proto.h"
#include "size.h"
#include "banned.h"

#define REPORT_REAP_SECS 5 /* for a killed child to be gone */

/* The figures of the job report, keys of TIERFS_XATTR_QUOTA. */
enum {
	FIG_PEAK,
	FIG_WRITE,
	FIG_SPILL,
	FIG_READ,
	FIG_READ_BELOW,
	FIG_WB_ERRORS,
	FIG_WB_LOST,
	FIG_MAX,
};
static const char *const fig_keys[FIG_MAX] = {
	TIERFS_QUOTA_PEAK,    TIERFS_QUOTA_WRITE,      TIERFS_QUOTA_SPILL,
	TIERFS_QUOTA_READ,    TIERFS_QUOTA_READ_BELOW, TIERFS_QUOTA_WB_ERRORS,
	TIERFS_QUOTA_WB_LOST,
};

struct report {
	uint64_t fig[FIG_MAX];
	unsigned seen;			      /* bit per figure given */
	uint64_t limit;			      /* the quota's total */
	bool limited;			      /* it has one */
	char first[TIERFS_TIER_NAME_MAX + 1]; /* the first tier's name */
};

/* a decimal number that is all of @s */
static bool parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*ret = strtoull(s, &end, 10);
	return !*end && errno == 0;
}

/*
 * report_parse() - the first line of TIERFS_XATTR_QUOTA (the innermost
 * quota: "total=USED/LIMIT NAME=USED/LIMIT ... inodes=USED/LIMIT
 * peak_bytes=N ... dir=PATH"), if it is the quota of directory @want
 * (from the mount root).  Changes @text.
 * Return: 0; -ENOENT when the innermost quota is another directory's;
 * -EBADMSG when the line is malformed or lacks the figures (a tierfs
 * older than the job report).
 */
static int report_parse(char *text, const char *want, struct report *r)
{
	static const char dir_key[] = TIERFS_QUOTA_DIR "=";
	char *nl = strchr(text, '\n'), *dir, *save = NULL;

	memset(r, 0, sizeof(*r));
	if (nl)
		*nl = '\0';
	dir = strstr(text, dir_key);
	if (!dir || (dir != text && dir[-1] != ' '))
		return -EBADMSG;
	if (strcmp(dir + strlen(dir_key), want))
		return -ENOENT; /* job directories need no escapes */
	*dir = '\0';
	for (char *w = strtok_r(text, " ", &save); w;
	     w = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(w, '='), *slash;
		uint64_t v;

		if (!eq)
			return -EBADMSG;
		*eq = '\0';
		slash = strchr(eq + 1, '/');
		if (slash) {
			/* KEY=USED/LIMIT: "total", a tier or "inodes" */
			if (!strcmp(w, "total")) {
				r->limited = strcmp(slash + 1, "-") != 0;
				if (r->limited &&
				    !parse_u64(slash + 1, &r->limit))
					return -EBADMSG;
			} else if (!r->first[0] && strcmp(w, "inodes")) {
				/* the tiers come in stack order */
				snprintf(r->first, sizeof(r->first), "%s", w);
			}
			continue;
		}
		for (unsigned f = 0; f < FIG_MAX; f++)
			if (!strcmp(w, fig_keys[f])) {
				if (!parse_u64(eq + 1, &v))
					return -EBADMSG;
				r->fig[f] = v;
				r->seen |= 1u << f;
			}
	}
	return r->seen == (1u << FIG_MAX) - 1 ? 0 : -EBADMSG;
}

/* this node's name: slurmd's (SLURMD_NODENAME), else the host's */
static const char *node_name(void)
{
	static char host[256];
	const char *n = getenv("SLURMD_NODENAME");

	if (n && *n)
		return n;
	if (gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "?");
	host[strcspn(host, ".")] = '\0';
	return host;
}

/* the figures of @r as the report's words, into @buf */
static void report_words(const struct report *r, uint32_t id, char *buf,
			 size_t len)
{
	const char *first = r->first[0] ? r->first : "the first tier";
	const uint64_t *f = r->fig;
	char a[32], b[32], pct[32];
	int n;

	if (f[FIG_READ])
		snprintf(pct, sizeof(pct), "%.1f%%",
			 100.0 *
				 (double)(f[FIG_READ] -
					  (f[FIG_READ_BELOW] < f[FIG_READ]
						   ? f[FIG_READ_BELOW]
						   : f[FIG_READ])) /
				 (double)f[FIG_READ]);
	else
		snprintf(pct, sizeof(pct), "-");
	n = snprintf(buf, len, "job %u on %s: scratch peak %s", id, node_name(),
		     size_format(f[FIG_PEAK], a, sizeof(a)));
	if (n > 0 && (size_t)n < len && r->limited)
		n += snprintf(buf + n, len - (size_t)n, " of %s quota",
			      size_format(r->limit, b, sizeof(b)));
	else if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " (no quota total)");
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      "; written %s, %s spilled below %s",
			      size_format(f[FIG_WRITE], a, sizeof(a)),
			      size_format(f[FIG_SPILL], b, sizeof(b)), first);
	if (n > 0 && (size_t)n < len)
		n += snprintf(
			buf + n, len - (size_t)n,
			"; read %s, %s from %s (reads that reached tierfs: page cache hits are not seen)",
			size_format(f[FIG_READ], a, sizeof(a)), pct, first);
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      "; writeback errors %llu",
			      (unsigned long long)f[FIG_WB_ERRORS]);
	if (n > 0 && (size_t)n < len && f[FIG_WB_ERRORS])
		snprintf(buf + n, len - (size_t)n, " (%s not stored)",
			 size_format(f[FIG_WB_LOST], a, sizeof(a)));
}

void job_report_line(int dirfd, const char *mount, uint32_t id, char *buf,
		     size_t len)
{
	char want[32];
	struct report r;
	char *text = malloc(TIERFS_XATTR_VALUE_MAX + 1);
	ssize_t n;
	int e;

	snprintf(want, sizeof(want), "/job%u", id);
	if (!text) {
		snprintf(buf, len,
			 "job %u on %s: no scratch report: out of memory", id,
			 node_name());
		return;
	}
	n = fgetxattr(dirfd, TIERFS_XATTR_QUOTA, text, TIERFS_XATTR_VALUE_MAX);
	e = n < 0 ? -errno : 0;
	if (n >= 0) {
		text[n] = '\0';
		e = report_parse(text, want, &r);
	}
	free(text);
	if (e == -ENODATA || e == -ENOENT)
		snprintf(
			buf, len,
			"job %u on %s: no scratch report: %s/job%u has no quota of its own, and tierfs counts per quota (set default_quota= in plugstack.conf)",
			id, node_name(), mount, id);
	else if (e == -EBADMSG)
		snprintf(
			buf, len,
			"job %u on %s: no scratch report: the tierfs on %s keeps no per-job figures (older than tierfs 0.3?)",
			id, node_name(), mount);
	else if (e < 0)
		snprintf(
			buf, len,
			"job %u on %s: no scratch report: cannot read %s of %s/job%u: %s",
			id, node_name(), TIERFS_XATTR_QUOTA, mount, id,
			strerror(-e));
	else
		report_words(&r, id, buf, len);
}

/*
 * pidfd_wait() - wait up to @ms milliseconds for the process of @pidfd
 * to end (the descriptor turns readable).  Return: true when it ended.
 */
static bool pidfd_wait(int pidfd, long ms)
{
	struct timespec now, end;
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (ms % 1000) * 1000000;
	for (;;) {
		long left;
		int r;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (end.tv_sec - now.tv_sec) * 1000 +
		       (end.tv_nsec - now.tv_nsec) / 1000000;
		r = poll(&p, 1, left > 0 ? (int)left : 0);
		if (r > 0)
			return true;
		if (r == 0 || errno != EINTR)
			return false; /* the time is up, or cannot wait */
	}
}

/*
 * child_wait() - reap the child @pid, giving it REPORT_CHILD_SECS to
 * end and then, killed, REPORT_REAP_SECS more.  The bound is the
 * parent's: the child runs as the job's user, who may stop it, and
 * whatever it blocks on (a hung filesystem) is not in its hands either.
 * Return: 0 and its wait status in *@ret_status; -ETIME when it had to
 * be killed (and was reaped); -ETIMEDOUT when even that did not end it
 * (not reaped: it stays a zombie of this process); -errno otherwise.
 */
static int child_wait(pid_t pid, int *ret_status)
{
	int pidfd = pidfd_open(pid, 0), status, r = 0;

	if (pidfd < 0) {
		r = -errno;
		kill(pid, SIGKILL); /* no bounded wait without it */
	} else {
		if (!pidfd_wait(pidfd, REPORT_CHILD_SECS * 1000L)) {
			kill(pid, SIGKILL);
			r = -ETIME;
			if (!pidfd_wait(pidfd, REPORT_REAP_SECS * 1000L))
				r = -ETIMEDOUT;
		}
		close(pidfd);
		if (r == -ETIMEDOUT)
			return r;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (r == 0)
		*ret_status = status;
	return r;
}

/* the child of job_report_to_output(): exits 0, or 2..5 (see there) */
static void __attribute__((noreturn))
report_child(const char *path, uid_t uid, gid_t gid, const char *line)
{
	struct passwd pw, *pwp = NULL;
	char pwbuf[4096], msg[PATH_MAX + 600];
	struct stat st;
	int fd, k;

	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwp) != 0 || !pwp ||
	    initgroups(pw.pw_name, gid) < 0)
		if (setgroups(0, NULL) < 0)
			_exit(2);
	if (setgid(gid) < 0 || setuid(uid) < 0)
		_exit(2);
	fd = open(path,
		  O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		_exit(3);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		_exit(4);
	k = snprintf(msg, sizeof(msg), "tierfs: %s\n", line);
	if (k < 0 || (size_t)k >= sizeof(msg))
		k = (int)sizeof(msg) - 1;
	_exit(write(fd, msg, (size_t)k) == k ? 0 : 5);
}

int job_report_to_output(int dirfd, uint32_t id, uid_t uid, gid_t gid,
			 const char *line)
{
	char path[PATH_MAX];
	ssize_t n = fgetxattr(dirfd, REPORT_TO_XATTR, path, sizeof(path) - 1);
	int status = 0, r;
	pid_t pid;

	if (n <= 0 || path[0] != '/')
		return 1;
	path[n] = '\0';
	/* the job may have changed it: no control characters into the log */
	for (ssize_t i = 0; i < n; i++)
		if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f)
			return 1;
	pid = fork();
	if (pid < 0) {
		slurm_error(
			"tierfs: job %u: cannot fork to write its report: %s",
			id, strerror(errno));
		return -1;
	}
	if (pid == 0)
		report_child(path, uid, gid, line);
	r = child_wait(pid, &status);
	if (r == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	slurm_error(
		"tierfs: job %u: cannot append its report to %s (as uid %u): %s",
		id, path, (unsigned)uid,
		r == -ETIME ? "timed out"
		: r == -ETIMEDOUT
			? "timed out, and the child does not die of SIGKILL"
		: r < 0			   ? strerror(-r)
		: WIFSIGNALED(status)	   ? "killed"
		: WEXITSTATUS(status) == 3 ? "cannot open it"
		: WEXITSTATUS(status) == 4 ? "not a regular file"
					   : "failed");
	return -1;
}
