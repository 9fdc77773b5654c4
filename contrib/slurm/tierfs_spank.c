// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tierfs_spank.c -- Slurm SPANK plugin: a per-job tierfs scratch directory.
 *
 * plugstack.conf:
 *     required /usr/lib/x86_64-linux-gnu/slurm/tierfs_spank.so \
 *         mount=/scratch default_quota=100G max_quota=1T
 *
 * Options for sbatch, srun and salloc:
 *     --scratch-quota=SIZE                   (or KEY:SIZE,... as
 *                                            trusted.tierfs.quota takes it)
 *     --scratch-policy=KEY=VALUE[,KEY=VALUE...]  KEY tiers, pin, split,
 *                                            promote (user.tierfs.KEY)
 *
 * Where each part runs (Slurm 22.05):
 *  - sbatch/salloc/srun (allocator and local context): the option
 *    callbacks check the request against the plugstack.conf arguments and
 *    refuse a bad one, so the user sees one line and the command fails.
 *  - slurmd's job prolog (root, a private context that sees the options
 *    only as SPANK_ environment variables): checks that the mount is a
 *    live tierfs, makes MOUNT/job$SLURM_JOB_ID (0700, the job's user) and
 *    sets its quota and policy.  Any failure of the node fails the prolog,
 *    so Slurm drains the node and requeues the job.
 *  - slurmstepd, each task (as the user): TMPDIR=the directory.  The
 *    batch script's task also notes where its standard output goes (the
 *    file its fd 1 is, with every %-pattern of sbatch -o resolved) in
 *    REPORT_TO_XATTR on the directory, for the report at the end.
 *  - slurmd's job epilog (root): the job report (issue 19): one line with
 *    the figures tierfs kept for the directory's quota (user.tierfs.quota,
 *    fs/ctl_proto.h: peak use against the quota, bytes written, spilled
 *    below the first tier, read and the share of those from it, failed
 *    writebacks) goes to slurmd's log and, as the job's user, to the end
 *    of the job's output file.  Then it removes the directory
 *    (job_remove.h: as root, but never outside the directory, whatever a
 *    process of the job's user changes meanwhile; mounts left on or
 *    below it detached first).  It fails (drains the node) only when the
 *    node is at fault: a tierfs that does not answer, since space that
 *    cannot be freed would starve the next jobs; what the job's user
 *    left is logged and the node stays up.
 *    Why the epilog and not the task: only the epilog runs after every
 *    process of the job has ended, and in Slurm 22.05 it has no usable
 *    name of the output file -- SLURM_JOB_STDOUT is unset for the default
 *    slurm-%j.out, and holds the %-patterns unexpanded otherwise, with
 *    neither the job name (%x) nor the array ids (%A, %a) in its
 *    environment or spank items -- so the batch task, which has the file
 *    as its fd 1, leaves the name for it.
 * This is what contrib/slurm/prolog.sh and epilog.sh do, without a second
 * place to configure and with the request checked at submission.
 * The removal is job_remove.c, the report job_report.c.
 *
 * Not thread-safe and need not be: every Slurm context that loads the
 * plugin calls it from one thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "job_remove.h"
#include "job_report.h"
#include "job_request.h"
#include "ctl_proto.h"
#include "mountinfo.h"
#include "size.h"
#include "banned.h"

/*
 * The project builds with -fvisibility=hidden; slurmd finds the plugin's
 * entry points and its plugin_* symbols by name, so what is not static in
 * this file is exported.
 */
#pragma GCC visibility push(default)
SPANK_PLUGIN(tierfs, 1)
#pragma GCC visibility pop
#define SPANK_EXPORT __attribute__((visibility("default")))

#define FUSE_SUPER_MAGIC 0x65735546 /* statfs f_type of every FUSE mount */
#define BATCH_STEP 0xfffffffbu	/* SLURM_BATCH_SCRIPT */

/* plugstack.conf arguments, set by load_args() from every callback's argv */
static char arg_mount[PATH_MAX] = "/scratch";
static char arg_default_quota[REQUEST_VALUE_MAX]; /* "" = none */
static uint64_t arg_max_quota;		  /* 0 = no maximum */
static char arg_max_quota_text[32];	  /* as plugstack.conf says it */

/* -------------------------------------------------------- plugstack.conf */

/* parse the plugstack.conf arguments; 0 or -1 (logged) */
static int load_args(int ac, char **av)
{
	uint64_t v;

	for (int i = 0; i < ac; i++) {
		const char *a = av[i];

		if (!strncmp(a, "mount=", 6)) {
			if (a[6] != '/' ||
			    snprintf(arg_mount, sizeof(arg_mount), "%s",
				     a + 6) >= (int)sizeof(arg_mount)) {
				slurm_error("tierfs: plugstack.conf: mount= needs an absolute path, not '%s'",
					    a + 6);
				return -1;
			}
		} else if (!strncmp(a, "default_quota=", 14)) {
			if (snprintf(arg_default_quota,
				     sizeof(arg_default_quota), "%s",
				     a + 14) >= (int)sizeof(arg_default_quota)) {
				slurm_error("tierfs: plugstack.conf: default_quota= too long");
				return -1;
			}
		} else if (!strncmp(a, "max_quota=", 10)) {
			if (size_parse(a + 10, &v) < 0 || v == 0) {
				slurm_error("tierfs: plugstack.conf: max_quota= is not a size: '%s'",
					    a + 10);
				return -1;
			}
			arg_max_quota = v;
			snprintf(arg_max_quota_text, sizeof(arg_max_quota_text),
				 "%s", a + 10);
		} else {
			slurm_error("tierfs: plugstack.conf: unknown argument '%s' (known: mount=, default_quota=, max_quota=)",
				    a);
			return -1;
		}
	}
	if (arg_default_quota[0]) {
		char norm[REQUEST_VALUE_MAX];
		const char *msg = request_quota_check(arg_default_quota, arg_max_quota,
					      norm, sizeof(norm));

		if (msg) {
			slurm_error("tierfs: plugstack.conf: default_quota=%s: %s",
				    arg_default_quota, msg);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ options */

static int opt_quota_cb(int val, const char *arg, int remote)
{
	char norm[REQUEST_VALUE_MAX];
	const char *msg;

	if (remote)
		return 0; /* checked at submission, and again in the prolog */
	msg = request_quota_check(arg ? arg : "", arg_max_quota, norm,
			  sizeof(norm));
	if (msg) {
		if (arg_max_quota && !strcmp(msg, "more than the site's max_quota"))
			slurm_error("tierfs: --scratch-quota=%s: more than this site's maximum, %s",
				    arg, arg_max_quota_text);
		else
			slurm_error("tierfs: --scratch-quota=%s: %s",
				    arg ? arg : "", msg);
		return -1;
	}
	return 0;
}

static int opt_policy_cb(int val, const char *arg, int remote)
{
	char bad[REQUEST_VALUE_MAX];
	const char *msg;

	if (remote)
		return 0;
	bad[0] = '\0';
	msg = request_policy_check(arg ? arg : "", bad, sizeof(bad));
	if (msg) {
		slurm_error("tierfs: --scratch-policy=%s: %s%s%s", arg ? arg : "",
			    bad[0] ? bad : "", bad[0] ? ": " : "", msg);
		return -1;
	}
	return 0;
}

/* spank copies the strings; they are arrays here only for -Wwrite-strings */
static char name_quota[] = "scratch-quota";
static char name_policy[] = "scratch-policy";
static char info_quota[] = "SIZE";
static char info_policy[] = "KEY=VALUE[,...]";
static char usage_quota[] =
	"quota of the job's tierfs scratch directory $TMPDIR (e.g. 200G)";
static char usage_policy[] =
	"tierfs policy of $TMPDIR: tiers=, pin=, split=, promote=";

static struct spank_option options[] = {
	{ name_quota, info_quota, usage_quota, 1, 0, opt_quota_cb },
	{ name_policy, info_policy, usage_policy, 1, 1, opt_policy_cb },
	SPANK_OPTIONS_TABLE_END
};

/*
 * option_get() - the argument of option @o in the job prolog or epilog:
 * spank_option_getopt() reads it from the SPANK_ environment Slurm hands
 * the prolog; the variable is read directly too, as a fallback.
 * Return: the value, or NULL when the job did not give the option.
 */
static const char *option_get(spank_t sp, struct spank_option *o)
{
	char *arg = NULL, var[128];
	size_t n;

	if (spank_option_getopt(sp, o, &arg) == ESPANK_SUCCESS && arg)
		return arg;
	n = (size_t)snprintf(var, sizeof(var), "SPANK__SLURM_SPANK_OPTION_%s_%s",
			     plugin_name, o->name);
	for (size_t i = 0; i < n && i < sizeof(var); i++)
		if (var[i] == '-')
			var[i] = '_';
	return getenv(var);
}

SPANK_EXPORT int slurm_spank_init(spank_t sp, int ac, char **av)
{
	if (load_args(ac, av) < 0)
		return -1;
	/*
	 * Not in the job prolog/epilog: there spank_option_getopt() finds a
	 * registered option in its cache, unset, before it looks at the
	 * SPANK_ environment that carries the job's value.
	 */
	if (spank_context() == S_CTX_JOB_SCRIPT)
		return 0;
	for (struct spank_option *o = options; o->name; o++) {
		if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
			slurm_error("tierfs: cannot register option --%s",
				    o->name);
			return -1;
		}
	}
	return 0;
}

/* ---------------------------------------------------------- node side */

/* the job's directory, MOUNT/job$SLURM_JOB_ID, into @buf */
static int job_dir(spank_t sp, char *buf, size_t len, uint32_t *ret_id)
{
	uint32_t id;

	if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS) {
		slurm_error("tierfs: cannot get the job id");
		return -1;
	}
	if (snprintf(buf, len, "%s/job%u", arg_mount, id) >= (int)len) {
		slurm_error("tierfs: path of the job directory too long");
		return -1;
	}
	*ret_id = id;
	return 0;
}

/*
 * mount_check() - is @path the mount point of a live tierfs?  The last
 * mount on @path in /proc/self/mountinfo must have fstype fuse.tierfs
 * (a later mount hides an earlier one), and statfs() must answer with
 * FUSE's magic (a tierfs whose daemon died fails with ENOTCONN).
 * Return: NULL, or what is wrong (in @why).
 */
static const char *mount_check(const char *path, char *why, size_t len)
{
	char fstype[64] = "", *line = NULL;
	struct mountinfo_entry e;
	struct statfs st;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f) {
		snprintf(why, len, "cannot read /proc/self/mountinfo: %s",
			 strerror(errno));
		return why;
	}
	while (getline(&line, &cap, f) > 0)
		if (mountinfo_parse(line, &e) && !strcmp(e.mountpoint, path))
			snprintf(fstype, sizeof(fstype), "%s", e.fstype);
	free(line);
	fclose(f);
	if (!fstype[0]) {
		snprintf(why, len, "%s is not a mount point", path);
		return why;
	}
	if (strcmp(fstype, TIERFS_FSTYPE)) {
		snprintf(why, len, "%s is a %s mount, not tierfs", path, fstype);
		return why;
	}
	if (statfs(path, &st) < 0) {
		snprintf(why, len, "tierfs on %s does not answer: %s", path,
			 strerror(errno));
		return why;
	}
	if (st.f_type != FUSE_SUPER_MAGIC) {
		snprintf(why, len, "%s is not a FUSE mount", path);
		return why;
	}
	return NULL;
}

/*
 * remove_dir() - job_remove() of the directory @name (job%u) of job @id,
 * logged: the mounts detached (@st may hold those of an earlier
 * job_detach_mounts()) and what the job's user left; @what: "old " in
 * the prolog, for the messages.
 * Return: 0 when it is gone, 1 when the job's user left something,
 * -1 when the node failed.
 */
static int remove_dir(uint32_t id, const char *name, const char *what,
		      struct job_remove_stats *st)
{
	int r = job_remove(arg_mount, name, st);

	if (st->mounts)
		slurm_info("tierfs: job %u: detached %u mount%s the job's user left on or below %s/%s",
			   id, st->mounts, st->mounts == 1 ? "" : "s",
			   arg_mount, name);
	if (r < 0)
		slurm_error("tierfs: job %u: cannot remove %s%s/%s: %s", id,
			    what, arg_mount, name, strerror(-r));
	else if (r > 0)
		slurm_error("tierfs: job %u: %s%s/%s left in part (%lu names removed, %u swapped while being opened): a process of the job's user kept changing it: %s",
			    id, what, arg_mount, name, st->removed, st->skipped,
			    strerror(st->user_errno));
	return r < 0 ? -1 : r;
}

/*
 * set_quota() - the job's quota on @fd: the job's request, checked again
 * against this node's max_quota (plugstack.conf may differ from the
 * submit host's), else default_quota.  A value tierfs refuses (a per-tier
 * cap naming a tier this node lacks) is the job's mistake: logged, and
 * default_quota applies.  Return: 0, or -1 when the node fails.
 */
static int set_quota(int fd, const char *dir, const char *req)
{
	char norm[REQUEST_VALUE_MAX];
	const char *q = arg_default_quota[0] ? arg_default_quota : NULL;
	const char *msg;

	if (req) {
		msg = request_quota_check(req, arg_max_quota, norm, sizeof(norm));
		if (msg)
			slurm_error("tierfs: %s: ignoring --scratch-quota=%s: %s",
				    dir, req, msg);
		else
			q = norm;
	}
	if (!q)
		return 0;
	if (fsetxattr(fd, TIERFS_XATTR_QUOTA_SET, q, strlen(q), 0) == 0)
		return 0;
	if (errno == EINVAL && q != arg_default_quota) {
		slurm_error("tierfs: %s: tierfs refuses the quota '%s'%s", dir,
			    q, arg_default_quota[0] ? ": using default_quota" : "");
		q = arg_default_quota[0] ? arg_default_quota : NULL;
		if (!q || fsetxattr(fd, TIERFS_XATTR_QUOTA_SET, q, strlen(q), 0) == 0)
			return 0;
	}
	/* the site's default refused, or the mount failing: the node's */
	slurm_error("tierfs: cannot set %s=%s on %s: %s", TIERFS_XATTR_QUOTA_SET, q, dir,
		    strerror(errno));
	return -1;
}

/*
 * set_policy() - user.tierfs.KEY on @fd for each KEY=VALUE of @req.  A
 * value this node's tierfs refuses (EINVAL: a tier it does not have) is
 * the job's mistake: logged, the job runs with the policy it inherits.
 * Return: 0, or -1 when the node fails.
 */
static int set_policy(int fd, const char *dir, const char *req)
{
	char val[REQUEST_VALUE_MAX], xname[64], bad[REQUEST_VALUE_MAX];
	const char *p = req, *msg;
	unsigned k;

	if (!req)
		return 0;
	msg = request_policy_check(req, bad, sizeof(bad));
	if (msg) {
		slurm_error("tierfs: %s: ignoring --scratch-policy=%s: %s",
			    dir, req, msg);
		return 0;
	}
	while (p) {
		if (request_policy_next(&p, &k, val, sizeof(val)))
			break; /* cannot happen: checked above */
		snprintf(xname, sizeof(xname), TIERFS_XATTR_PREFIX "%s",
			 request_policy_keys[k]);
		if (fsetxattr(fd, xname, val, strlen(val), 0) == 0)
			continue;
		if (errno != EINVAL) {
			slurm_error("tierfs: cannot set %s=%s on %s: %s", xname,
				    val, dir, strerror(errno));
			return -1;
		}
		slurm_error("tierfs: %s: tierfs refuses %s=%s (a tier this node lacks?)",
			    dir, xname, val);
	}
	return 0;
}

SPANK_EXPORT int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	char dir[PATH_MAX], name[32], why[PATH_MAX + 128];
	struct job_remove_stats st = { 0 };
	uid_t uid;
	gid_t gid;
	uint32_t id;
	int fd;

	if (load_args(ac, av) < 0 || job_dir(sp, dir, sizeof(dir), &id) < 0)
		return -1;
	snprintf(name, sizeof(name), "job%u", id);
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
		slurm_error("tierfs: job %u: cannot get the job's uid and gid",
			    id);
		return -1;
	}
	/* no tierfs: fail, so Slurm drains the node and requeues the job,
	 * rather than the job writing its scratch files elsewhere */
	if (mount_check(arg_mount, why, sizeof(why))) {
		slurm_error("tierfs: job %u: %s", id, why);
		return -1;
	}
	/* left over from an earlier run of this job (requeue): start empty;
	 * what cannot go fails the prolog (logged), as mkdir() would */
	if (remove_dir(id, name, "old ", &st) != 0)
		return -1;
	if (mkdir(dir, 0700) < 0) {
		slurm_error("tierfs: job %u: cannot create %s: %s", id, dir,
			    strerror(errno));
		return -1;
	}
	/* O_NOFOLLOW: what we made, not what a user may have swapped in */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fchown(fd, uid, gid) < 0 || fchmod(fd, 0700) < 0) {
		slurm_error("tierfs: job %u: cannot give %s to uid %u gid %u: %s",
			    id, dir, (unsigned)uid, (unsigned)gid,
			    strerror(errno));
		goto err_remove;
	}
	if (set_quota(fd, dir, option_get(sp, &options[0])) < 0 ||
	    set_policy(fd, dir, option_get(sp, &options[1])) < 0)
		goto err_remove;
	close(fd);
	return 0;

err_remove:
	if (fd >= 0)
		close(fd);
	memset(&st, 0, sizeof(st));
	(void)remove_dir(id, name, "", &st);
	return -1;
}

/*
 * note_output() - in the batch script's task (as the job's user, its
 * stdout set up): the file its stdout is, into REPORT_TO_XATTR of the
 * job's directory @dir, for the report of the job epilog.  Only a
 * regular file; nothing said when it cannot be noted (the report then
 * goes to slurmd's log only).
 */
static void note_output(spank_t sp, const char *dir)
{
	char path[PATH_MAX];
	struct stat st;
	uint32_t step;
	ssize_t n;

	if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS ||
	    step != BATCH_STEP || fstat(STDOUT_FILENO, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return;
	n = readlink("/proc/self/fd/1", path, sizeof(path) - 1);
	if (n <= 0 || path[0] != '/')
		return;
	path[n] = '\0';
	if (setxattr(dir, REPORT_TO_XATTR, path, (size_t)n, 0) < 0)
		slurm_debug("tierfs: cannot note the output file in %s: %s",
			    dir, strerror(errno));
}

SPANK_EXPORT int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	char dir[PATH_MAX];
	struct stat st;
	uint32_t id;

	if (!spank_remote(sp))
		return 0;
	if (load_args(ac, av) < 0 || job_dir(sp, dir, sizeof(dir), &id) < 0)
		return -1;
	/* the prolog made it; without one (no prolog ran) keep TMPDIR */
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		slurm_error("tierfs: job %u: no %s: TMPDIR left as it was", id,
			    dir);
		return 0;
	}
	if (spank_setenv(sp, "TMPDIR", dir, 1) != ESPANK_SUCCESS) {
		slurm_error("tierfs: job %u: cannot set TMPDIR", id);
		return -1;
	}
	note_output(sp, dir);
	return 0;
}

/* ------------------------------------------------------------ epilog */

SPANK_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	char dir[PATH_MAX], name[32], line[PATH_MAX + 512];
	struct job_remove_stats st = { 0 };
	uid_t uid;
	gid_t gid;
	uint32_t id;
	int fd;

	if (load_args(ac, av) < 0 || job_dir(sp, dir, sizeof(dir), &id) < 0)
		return -1;
	snprintf(name, sizeof(name), "job%u", id);
	/* the mounts the job's user left go first: the figures are under
	 * them, and root never enters them */
	job_detach_mounts(arg_mount, name, &st);
	/* the report next: the figures go with the directory */
	fd = job_dir_open(arg_mount, name);
	if (fd >= 0) {
		job_report_line(fd, arg_mount, id, line, sizeof(line));
		slurm_info("tierfs: %s", line);
		if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS &&
		    spank_get_item(sp, S_JOB_GID, &gid) == ESPANK_SUCCESS)
			(void)job_report_to_output(fd, id, uid, gid, line);
		close(fd);
	} else if (fd != -ENOENT) {
		slurm_error("tierfs: job %u: no scratch report: cannot open %s: %s",
			    id, dir, strerror(-fd));
	}
	/*
	 * Space the node cannot free (a tierfs that does not answer) would
	 * starve the next jobs: fail, so that Slurm drains the node for an
	 * administrator.  What the job's user keeps changing is theirs, and
	 * logged: no user may drain a node.
	 */
	return remove_dir(id, name, "", &st) < 0 ? -1 : 0;
}
