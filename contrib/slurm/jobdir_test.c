// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jobdir_test.c -- the plugin's node-side parts outside Slurm, for
 * tests/integration/201-slurm-jobdir.sh: the same job_remove.c and
 * job_report.c as tierfs_spank.so, linked into a program the
 * sanitizer builds instrument (the plugin itself runs inside Slurm's
 * uninstrumented daemons, which cannot load an instrumented module).
 * Logging is libslurm's slurm_error(), to stderr.  Not installed.
 *
 *     jobdir_test remove MOUNT NAME
 *         job_remove(); prints "rc=R removed=N mounts=N skipped=N
 *         user=ERRNO node=ERRNO" (errno names, "-" for none)
 *     jobdir_test report-to MOUNT NAME UID GID LINE
 *         job_report_to_output() on MOUNT/NAME; prints "rc=R"
 *
 * Exit status: 0 when the call ran (whatever it returned), 2 on a
 * usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job_remove.h"
#include "job_report.h"
#include "banned.h"

static const char *errno_name(int e)
{
	const char *n = e ? strerrorname_np(e) : "-";

	return n ? n : "?";
}

static int usage(void)
{
	fprintf(stderr,
		"usage: jobdir_test remove MOUNT NAME\n"
		"       jobdir_test report-to MOUNT NAME UID GID LINE\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "remove")) {
		struct job_remove_stats st = { 0 };
		int r = job_remove(argv[2], argv[3], &st);

		printf("rc=%d removed=%lu mounts=%u skipped=%u user=%s node=%s\n",
		       r, st.removed, st.mounts, st.skipped,
		       errno_name(st.user_errno), errno_name(st.node_errno));
		return 0;
	}
	if (argc == 7 && !strcmp(argv[1], "report-to")) {
		int fd = job_dir_open(argv[2], argv[3]), r;

		if (fd < 0) {
			printf("open: %s\n", errno_name(-fd));
			return 0;
		}
		r = job_report_to_output(fd, 1,
					 (uid_t)strtoul(argv[4], NULL, 10),
					 (gid_t)strtoul(argv[5], NULL, 10),
					 argv[6]);
		close(fd);
		printf("rc=%d\n", r);
		return 0;
	}
	return usage();
}
