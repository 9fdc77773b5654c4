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
 *    of the job's output file.  Then it removes the directory; fails
 *    (drains the node) when it cannot, since space that cannot be freed
 *    would starve the next jobs.
 *    Why the epilog and not the task: only the epilog runs after every
 *    process of the job has ended, and in Slurm 22.05 it has no usable
 *    name of the output file -- SLURM_JOB_STDOUT is unset for the default
 *    slurm-%j.out, and holds the %-patterns unexpanded otherwise, with
 *    neither the job name (%x) nor the array ids (%A, %a) in its
 *    environment or spank items -- so the batch task, which has the file
 *    as its fd 1, leaves the name for it.
 * This is what contrib/slurm/prolog.sh and epilog.sh do, without a second
 * place to configure and with the request checked at submission.
 *
 * Not thread-safe and need not be: every Slurm context that loads the
 * plugin calls it from one thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <slurm/spank.h>

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
#define TIERFS_FSTYPE "fuse.tierfs" /* fstype in /proc/self/mountinfo */
#define QUOTA_XATTR "trusted.tierfs.quota"
#define USAGE_XATTR "user.tierfs.quota" /* computed: use and figures */
/* where the batch script's stdout goes; the job's own (user.*), on its
 * directory: the report is written there as the job's user */
#define REPORT_TO_XATTR "user.slurm.tierfs_report_to"
#define USAGE_MAX 65536		/* TIERFS_XATTR_VALUE_MAX */
#define BATCH_STEP 0xfffffffbu	/* SLURM_BATCH_SCRIPT */
#define TIER_NAME_MAX 32	/* as fs/options.h TIER_CONF_NAME_MAX */
#define VALUE_MAX 256		/* longest quota or policy value taken */

/* plugstack.conf arguments, set by load_args() from every callback's argv */
static char arg_mount[PATH_MAX] = "/scratch";
static char arg_default_quota[VALUE_MAX]; /* "" = none */
static uint64_t arg_max_quota;		  /* 0 = no maximum */
static char arg_max_quota_text[32];	  /* as plugstack.conf says it */

static const char *const policy_keys[] = { "tiers", "pin", "split", "promote" };
#define N_POLICY_KEYS (sizeof(policy_keys) / sizeof(policy_keys[0]))

/* ---------------------------------------------------------------- parsing */

/*
 * size_parse() - a size as tierfs takes it (fs/util/size.h): digits, then
 * an optional K, M, G, T or P (1024-based, either case) with an optional
 * "B" or "iB".  Return: 0 and *ret, or -EINVAL / -ERANGE.
 */
static int size_parse(const char *s, uint64_t *ret)
{
	static const char units[] = "KMGTP";
	uint64_t v = 0;
	unsigned shift = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	if (*p) {
		const char *u = strchr(units, *p & ~0x20);

		if (!u || !*u)
			return -EINVAL;
		shift = 10 * (unsigned)(u - units + 1);
		p++;
		if (strcasecmp(p, "") && strcasecmp(p, "b") &&
		    strcasecmp(p, "ib"))
			return -EINVAL;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*ret = v << shift;
	return 0;
}

/* a tier name: 1 to TIER_NAME_MAX letters, digits, '_' or '-' */
static bool tier_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > TIER_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      s[i] == '-'))
			return false;
	return true;
}

/* copy @n bytes of @s into @buf (@len bytes) as a string; false if long */
static bool copy_part(char *buf, size_t len, const char *s, size_t n)
{
	if (n >= len)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

/*
 * quota_check() - check a --scratch-quota value: "SIZE" (the total) or
 * "KEY:SIZE,..." with KEY total, inodes or a tier name, each once.  The
 * total must not pass @max (0: no maximum).  A list without a total gets
 * ",total:MAX" appended when there is a maximum.  The result, the value to
 * set, goes to @ret (@len bytes).
 * Return: NULL, or a message saying what is wrong (static text).
 */
static const char *quota_check(const char *value, uint64_t max, char *ret,
			       size_t len)
{
	char part[VALUE_MAX], seen[VALUE_MAX] = ",";
	uint64_t v, total = 0;
	bool has_total = false;
	const char *p = value;

	if (!*value)
		return "empty";
	if (!strchr(value, ':')) {
		if (size_parse(value, &v) < 0)
			return "not a size (examples: 100G, 512M)";
		if (v == 0)
			return "a quota of 0 leaves no room";
		total = v;
		has_total = true;
		p = NULL;
	}
	while (p) {
		const char *end = strchrnul(p, ',');
		const char *colon = memchr(p, ':', (size_t)(end - p));
		size_t klen;

		if (!colon || !copy_part(part, sizeof(part), colon + 1,
					 (size_t)(end - colon - 1)))
			return "expected SIZE or KEY:SIZE,... (KEY total, inodes or a tier)";
		klen = (size_t)(colon - p);
		if (!tier_name_ok(p, klen))
			return "bad key: use total, inodes or a tier name";
		if (size_parse(part, &v) < 0)
			return "not a size (examples: 100G, ram:4G,total:200G)";
		/* each key once: look for ",KEY," in what came before */
		if (strlen(seen) + klen + 2 > sizeof(seen))
			return "too long";
		{
			char key[TIER_NAME_MAX + 3];

			snprintf(key, sizeof(key), ",%.*s,", (int)klen, p);
			if (strstr(seen, key))
				return "a key given twice";
			strncat(seen, key + 1, sizeof(seen) - strlen(seen) - 1);
		}
		if (klen == 5 && !memcmp(p, "total", 5)) {
			if (v == 0)
				return "a quota of 0 leaves no room";
			total = v;
			has_total = true;
		}
		p = *end ? end + 1 : NULL;
	}
	if (max && has_total && total > max)
		return "more than the site's max_quota";
	if (max && !has_total) {
		if (snprintf(ret, len, "%s,total:%llu", value,
			     (unsigned long long)max) >= (int)len)
			return "too long";
		return NULL;
	}
	if (!copy_part(ret, len, value, strlen(value)))
		return "too long";
	return NULL;
}

/* check one policy value of key @k ("tiers", "pin", ...) */
static const char *policy_value_check(const char *k, const char *v)
{
	uint64_t size;

	if (!strcmp(k, "promote"))
		return strcmp(v, "0") && strcmp(v, "1") ? "promote is 0 or 1" : NULL;
	if (!strcmp(k, "pin"))
		return tier_name_ok(v, strlen(v)) ? NULL : "pin takes one tier name";
	for (const char *p = v;;) {
		const char *end = strchrnul(p, ',');
		const char *colon = memchr(p, ':', (size_t)(end - p));
		bool last = !*end;
		char num[32];

		if (!tier_name_ok(p, (size_t)((colon ? colon : end) - p)))
			return "expected tier names (letters, digits, '_', '-')";
		if (colon && strcmp(k, "split"))
			return "tiers takes a list of tier names, no sizes";
		if (colon) {
			if (!copy_part(num, sizeof(num), colon + 1,
				       (size_t)(end - colon - 1)))
				return "bad size in split";
			if (!strcmp(num, "-1"))
				colon = NULL; /* "the rest", as no size */
			else if (size_parse(num, &size) < 0 || size == 0)
				return "bad size in split (examples: ram:60G,nvme)";
		}
		/* only the last range of a split may take the rest */
		if (!strcmp(k, "split") && !colon && !last)
			return "only the last tier of a split may go without a size";
		if (last)
			return NULL;
		p = end + 1;
	}
}

/*
 * policy_next() - the next KEY=VALUE of a --scratch-policy string at *@pp:
 * a value runs up to the next ",KEY=" (values such as split=ram:60G,nvme
 * hold commas but never '=').  Writes the key's index to *@ret_key and the
 * value to @val; moves *@pp on (NULL at the end).
 * Return: NULL, or a message saying what is wrong.
 */
static const char *policy_next(const char **pp, unsigned *ret_key, char *val,
			       size_t len)
{
	const char *p = *pp, *eq = strchr(p, '='), *end;
	size_t klen;
	unsigned k;

	if (!eq)
		return "expected KEY=VALUE (KEY tiers, pin, split or promote)";
	klen = (size_t)(eq - p);
	for (k = 0; k < N_POLICY_KEYS; k++)
		if (strlen(policy_keys[k]) == klen &&
		    !memcmp(policy_keys[k], p, klen))
			break;
	if (k == N_POLICY_KEYS)
		return "unknown key (known: tiers, pin, split, promote)";
	/* the value ends at the last comma before the next '=' */
	end = eq + 1 + strcspn(eq + 1, "=");
	if (*end)
		while (end > eq && *end != ',')
			end--;
	if (end <= eq + 1)
		return "empty value";
	if (!copy_part(val, len, eq + 1, (size_t)(end - eq - 1)))
		return "value too long";
	*ret_key = k;
	*pp = *end ? end + 1 : NULL;
	return NULL;
}

/* check a whole --scratch-policy string; each key at most once */
static const char *policy_check(const char *value, char *bad, size_t badlen)
{
	const char *p = value, *msg;
	bool seen[N_POLICY_KEYS] = { false };
	char val[VALUE_MAX];
	unsigned k;

	if (!*value)
		return "empty";
	while (p) {
		const char *start = p;

		msg = policy_next(&p, &k, val, sizeof(val));
		if (!msg && seen[k])
			msg = "a key given twice";
		if (!msg)
			msg = policy_value_check(policy_keys[k], val);
		if (msg) {
			snprintf(bad, badlen, "%.*s", (int)strcspn(start, "="),
				 start);
			return msg;
		}
		seen[k] = true;
	}
	return NULL;
}

/* -------------------------------------------------------- plugstack.conf */

/* parse the plugstack.conf arguments; 0 or -1 (logged) */
static int load_args(int ac, char **av)
{
	uint64_t v;

	for (int i = 0; i < ac; i++) {
		const char *a = av[i];

		if (!strncmp(a, "mount=", 6)) {
			if (a[6] != '/' || !copy_part(arg_mount, sizeof(arg_mount),
						      a + 6, strlen(a + 6))) {
				slurm_error("tierfs: plugstack.conf: mount= needs an absolute path, not '%s'",
					    a + 6);
				return -1;
			}
		} else if (!strncmp(a, "default_quota=", 14)) {
			if (!copy_part(arg_default_quota,
				       sizeof(arg_default_quota), a + 14,
				       strlen(a + 14))) {
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
		char norm[VALUE_MAX];
		const char *msg = quota_check(arg_default_quota, arg_max_quota,
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
	char norm[VALUE_MAX];
	const char *msg;

	if (remote)
		return 0; /* checked at submission, and again in the prolog */
	msg = quota_check(arg ? arg : "", arg_max_quota, norm,
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
	char bad[VALUE_MAX];
	const char *msg;

	if (remote)
		return 0;
	bad[0] = '\0';
	msg = policy_check(arg ? arg : "", bad, sizeof(bad));
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

/* undo mountinfo's octal escapes (\040 for a blank) in place */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
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
	char line[4096], fstype[64] = "";
	struct statfs st;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f) {
		snprintf(why, len, "cannot read /proc/self/mountinfo: %s",
			 strerror(errno));
		return why;
	}
	while (fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - TYPE ... */
		char *save = NULL, *mp, *sep;
		int i;

		mp = strtok_r(line, " ", &save);
		for (i = 0; mp && i < 4; i++)
			mp = strtok_r(NULL, " ", &save);
		if (!mp)
			continue;
		unescape(mp);
		if (strcmp(mp, path))
			continue;
		while ((sep = strtok_r(NULL, " ", &save)) && strcmp(sep, "-"))
			;
		sep = sep ? strtok_r(NULL, " ", &save) : NULL;
		snprintf(fstype, sizeof(fstype), "%s", sep ? sep : "?");
	}
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

static int rm_errno;

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	int r = flag == FTW_DP ? rmdir(path) : unlink(path);

	if (r < 0 && errno != ENOENT && !rm_errno)
		rm_errno = errno;
	return 0;
}

/*
 * tree_remove() - remove @path and everything below it, never following
 * a symlink and never crossing into another mount (a bind mount a job
 * left there makes the removal fail, rather than empty what it shows).
 * Return: 0 when @path is gone, or -errno.
 */
static int tree_remove(const char *path)
{
	struct stat st;

	rm_errno = 0;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		return -errno;
	if (lstat(path, &st) == 0)
		return rm_errno ? -rm_errno : -ENOTEMPTY;
	return errno == ENOENT ? 0 : -errno;
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
	char norm[VALUE_MAX];
	const char *q = arg_default_quota[0] ? arg_default_quota : NULL;
	const char *msg;

	if (req) {
		msg = quota_check(req, arg_max_quota, norm, sizeof(norm));
		if (msg)
			slurm_error("tierfs: %s: ignoring --scratch-quota=%s: %s",
				    dir, req, msg);
		else
			q = norm;
	}
	if (!q)
		return 0;
	if (fsetxattr(fd, QUOTA_XATTR, q, strlen(q), 0) == 0)
		return 0;
	if (errno == EINVAL && q != arg_default_quota) {
		slurm_error("tierfs: %s: tierfs refuses the quota '%s'%s", dir,
			    q, arg_default_quota[0] ? ": using default_quota" : "");
		q = arg_default_quota[0] ? arg_default_quota : NULL;
		if (!q || fsetxattr(fd, QUOTA_XATTR, q, strlen(q), 0) == 0)
			return 0;
	}
	/* the site's default refused, or the mount failing: the node's */
	slurm_error("tierfs: cannot set %s=%s on %s: %s", QUOTA_XATTR, q, dir,
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
	char val[VALUE_MAX], xname[64], bad[VALUE_MAX];
	const char *p = req, *msg;
	unsigned k;

	if (!req)
		return 0;
	msg = policy_check(req, bad, sizeof(bad));
	if (msg) {
		slurm_error("tierfs: %s: ignoring --scratch-policy=%s: %s",
			    dir, req, msg);
		return 0;
	}
	while (p) {
		if (policy_next(&p, &k, val, sizeof(val)))
			break; /* cannot happen: checked above */
		snprintf(xname, sizeof(xname), "user.tierfs.%s", policy_keys[k]);
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
	char dir[PATH_MAX], why[PATH_MAX + 128];
	uid_t uid;
	gid_t gid;
	uint32_t id;
	int fd, r;

	if (load_args(ac, av) < 0 || job_dir(sp, dir, sizeof(dir), &id) < 0)
		return -1;
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
	/* left over from an earlier run of this job (requeue): start empty */
	r = tree_remove(dir);
	if (r < 0) {
		slurm_error("tierfs: job %u: cannot remove old %s: %s", id, dir,
			    strerror(-r));
		return -1;
	}
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
	(void)tree_remove(dir);
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

/* ------------------------------------------------------ the job report */

/* The figures of the job report, keys of user.tierfs.quota (issue 19). */
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
	"peak_bytes", "write_bytes", "spill_bytes", "read_bytes",
	"read_below_bytes", "writeback_errors", "writeback_lost_bytes",
};

struct report {
	uint64_t fig[FIG_MAX];
	unsigned seen;		     /* bit per figure given */
	uint64_t limit;		     /* the quota's total */
	bool limited;		     /* it has one */
	char first[TIER_NAME_MAX + 1]; /* the first tier's name */
};

/* "1.5G", "512M", "17" as tierfs and tierctl write sizes */
static char *human(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	while (d >= 1024.0 && u < 5) {
		d /= 1024.0;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else if (d < 10.0 && d != (double)(uint64_t)d)
		snprintf(buf, len, "%.1f%c", d, units[u]);
	else
		snprintf(buf, len, "%.0f%c", d, units[u]);
	return buf;
}

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
 * report_parse() - the first line of user.tierfs.quota (the innermost
 * quota: "total=USED/LIMIT NAME=USED/LIMIT ... inodes=USED/LIMIT
 * peak_bytes=N ... dir=PATH"), if it is the quota of directory @want
 * (from the mount root).  Changes @text.
 * Return: 0; -ENOENT when the innermost quota is another directory's;
 * -EBADMSG when the line is malformed or lacks the figures (a tierfs
 * older than the job report).
 */
static int report_parse(char *text, const char *want, struct report *r)
{
	char *nl = strchr(text, '\n'), *dir, *save = NULL;

	memset(r, 0, sizeof(*r));
	if (nl)
		*nl = '\0';
	dir = strstr(text, "dir=");
	if (!dir || (dir != text && dir[-1] != ' '))
		return -EBADMSG;
	if (strcmp(dir + 4, want))
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
				if (r->limited && !parse_u64(slash + 1, &r->limit))
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

/*
 * report_line() - the report of job @id's directory @dir (MOUNT/jobID)
 * into @buf: "job N on NODE: scratch peak 3.2G of 100G quota; written
 * 10G, 2.3G spilled below ram; read 8.0G, 71.0% from ram (...);
 * writeback errors 0".
 * Never fails: what cannot be read is what the line says.
 */
static void report_line(const char *dir, uint32_t id, char *buf, size_t len)
{
	const char *first;
	char want[32], a[32], b[32], pct[32];
	struct report r;
	char *text = malloc(USAGE_MAX + 1);
	const uint64_t *f = r.fig;
	ssize_t n;
	int e;

	snprintf(want, sizeof(want), "/job%u", id);
	if (!text) {
		snprintf(buf, len, "job %u on %s: no scratch report: out of memory",
			 id, node_name());
		return;
	}
	n = getxattr(dir, USAGE_XATTR, text, USAGE_MAX);
	e = n < 0 ? -errno : 0;
	if (n >= 0) {
		text[n] = '\0';
		e = report_parse(text, want, &r);
	}
	free(text);
	if (e == -ENODATA || e == -ENOENT) {
		snprintf(buf, len,
			 "job %u on %s: no scratch report: %s has no quota of its own, and tierfs counts per quota (set default_quota= in plugstack.conf)",
			 id, node_name(), dir);
		return;
	}
	if (e == -EBADMSG) {
		snprintf(buf, len,
			 "job %u on %s: no scratch report: the tierfs on %s keeps no per-job figures (older than tierfs 0.3?)",
			 id, node_name(), arg_mount);
		return;
	}
	if (e < 0) {
		snprintf(buf, len,
			 "job %u on %s: no scratch report: cannot read %s of %s: %s",
			 id, node_name(), USAGE_XATTR, dir, strerror(-e));
		return;
	}
	first = r.first[0] ? r.first : "the first tier";
	if (f[FIG_READ])
		snprintf(pct, sizeof(pct), "%.1f%%",
			 100.0 * (double)(f[FIG_READ] -
					  (f[FIG_READ_BELOW] < f[FIG_READ]
						   ? f[FIG_READ_BELOW]
						   : f[FIG_READ])) /
				 (double)f[FIG_READ]);
	else
		snprintf(pct, sizeof(pct), "-");
	n = snprintf(buf, len, "job %u on %s: scratch peak %s", id, node_name(),
		     human(f[FIG_PEAK], a, sizeof(a)));
	if (n > 0 && (size_t)n < len && r.limited)
		n += snprintf(buf + n, len - (size_t)n, " of %s quota",
			      human(r.limit, b, sizeof(b)));
	else if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " (no quota total)");
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      "; written %s, %s spilled below %s",
			      human(f[FIG_WRITE], a, sizeof(a)),
			      human(f[FIG_SPILL], b, sizeof(b)), first);
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
			      "; read %s, %s from %s (reads that reached tierfs: page cache hits are not seen)",
			      human(f[FIG_READ], a, sizeof(a)), pct, first);
	if (n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, "; writeback errors %llu",
			      (unsigned long long)f[FIG_WB_ERRORS]);
	if (n > 0 && (size_t)n < len && f[FIG_WB_ERRORS])
		snprintf(buf + n, len - (size_t)n, " (%s not stored)",
			 human(f[FIG_WB_LOST], a, sizeof(a)));
}

/*
 * report_to_output() - append "tierfs: @line" to the file the batch
 * script's stdout went to (REPORT_TO_XATTR of @dir, left there by
 * slurm_spank_task_init()), as the job's user @uid/@gid and with that
 * user's groups, so that the name, which the job could have changed,
 * reaches nothing the job could not write itself.  Only a regular file;
 * a child does it, with 10 s to finish (a hung network filesystem).
 * Return: 0, 1 when there is no such file (no batch step on this node),
 * or -1 (logged).
 */
static int report_to_output(const char *dir, uint32_t id, uid_t uid,
			    gid_t gid, const char *line)
{
	char path[PATH_MAX];
	ssize_t n = getxattr(dir, REPORT_TO_XATTR, path, sizeof(path) - 1);
	int status;
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
		slurm_error("tierfs: job %u: cannot fork to write its report: %s",
			    id, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		struct passwd pw, *pwp = NULL;
		char pwbuf[4096], msg[PATH_MAX + 600];
		struct stat st;
		int fd, k;

		alarm(10);
		if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwp) != 0 || !pwp ||
		    initgroups(pw.pw_name, gid) < 0)
			if (setgroups(0, NULL) < 0)
				_exit(2);
		if (setgid(gid) < 0 || setuid(uid) < 0)
			_exit(2);
		fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK |
					O_CLOEXEC);
		if (fd < 0)
			_exit(3);
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			_exit(4);
		k = snprintf(msg, sizeof(msg), "tierfs: %s\n", line);
		if (k < 0 || (size_t)k >= sizeof(msg))
			k = (int)sizeof(msg) - 1;
		_exit(write(fd, msg, (size_t)k) == k ? 0 : 5);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	slurm_error("tierfs: job %u: cannot append its report to %s (as uid %u): %s",
		    id, path, (unsigned)uid,
		    WIFSIGNALED(status) ? "timed out"
		    : WEXITSTATUS(status) == 3 ? "cannot open it"
		    : WEXITSTATUS(status) == 4 ? "not a regular file"
					       : "failed");
	return -1;
}

SPANK_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	char dir[PATH_MAX], line[PATH_MAX + 512];
	uid_t uid;
	gid_t gid;
	uint32_t id;
	int r;

	if (load_args(ac, av) < 0 || job_dir(sp, dir, sizeof(dir), &id) < 0)
		return -1;
	/* the report first: the figures go with the directory */
	if (access(dir, F_OK) == 0) {
		report_line(dir, id, line, sizeof(line));
		slurm_info("tierfs: %s", line);
		if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS &&
		    spank_get_item(sp, S_JOB_GID, &gid) == ESPANK_SUCCESS)
			(void)report_to_output(dir, id, uid, gid, line);
	}
	/* space that cannot be freed would starve the next jobs: fail, so
	 * Slurm drains the node for an administrator */
	r = tree_remove(dir);
	if (r < 0) {
		slurm_error("tierfs: job %u: cannot remove %s: %s", id, dir,
			    strerror(-r));
		return -1;
	}
	return 0;
}
