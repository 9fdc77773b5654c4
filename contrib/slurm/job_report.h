/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * job_report.h -- the job report of the SPANK plugin (issue 19): one
 * line from the figures tierfs keeps for the job directory's quota
 * (TIERFS_XATTR_QUOTA, fs/ctl_proto.h), for slurmd's log and, written as
 * the job's user, for the end of the job's output file.  Not thread-safe
 * (the plugin is called from one thread).
 */
#ifndef TIERFS_SPANK_JOB_REPORT_H
#define TIERFS_SPANK_JOB_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* where the batch script's stdout goes; the job's own (user.*), on its
 * directory: the report is written there as the job's user */
#define REPORT_TO_XATTR "user.slurm.tierfs_report_to"
/* how long the child that writes the report may take (a hung network
 * filesystem, a child the job's user stopped) before it is killed */
#define REPORT_CHILD_SECS 10

/**
 * job_report_line() - the report of job @id from its directory @dirfd
 * (MOUNT/jobID, @mount the tierfs mount, for messages) into @buf:
 * "job N on NODE: scratch peak 3.2G of 100G quota; written 10G, 2.3G
 * spilled below ram; read 8.0G, 71.0% from ram (...); writeback errors 0".
 * Never fails: what cannot be read is what the line says.
 */
void job_report_line(int dirfd, const char *mount, uint32_t id, char *buf,
		     size_t len);

/**
 * job_report_to_output() - append "tierfs: @line" to the file the batch
 * script's stdout went to (REPORT_TO_XATTR of the job directory @dirfd),
 * as the job's user @uid/@gid with that user's groups, so that the name,
 * which the job could have changed, reaches nothing the job could not
 * write itself.  Only to a regular file.  A child process does it; the
 * parent waits for it at most REPORT_CHILD_SECS, then kills it (the
 * child is the user's: they may stop it).
 * Return: 0, 1 when there is no such file (no batch step on this node),
 * or -1 (logged).
 */
int job_report_to_output(int dirfd, uint32_t id, uid_t uid, gid_t gid,
			 const char *line);

#endif /* TIERFS_SPANK_JOB_REPORT_H */
