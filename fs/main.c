// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * main.c -- tierfs: option parsing, tier setup, session and loop.
 *
 * Order matters for error reporting: everything that can fail because
 * of the user's input (options, config file, tier paths and sizes) is
 * checked before the mount exists, so a mistake prints one line and
 * leaves nothing mounted; only then do we mount and detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "config.h"
#include "fuse_inc.h"
#include "kernel.h"
#include "kernel_uring.h"
#include "ops.h"
#include "options.h"
#include "fs.h"
#include "mount.h"
#include "log.h"
#include "macro.h"
#include "mountinfo.h"
#include "notify.h"
#include "tier.h"
#include "banned.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tierfs [OPTIONS] [CONFIG_FILE|tierfs:default] MOUNTPOINT\n"
		"\n"
		"Tiered scratch filesystem: file data in extents over RAM, PMem and\n"
		"file (NVMe, SSD, HDD) tiers, fastest first.\n"
		"\n"
		"  --tier NAME=ram:SIZE         a RAM tier (process memory)\n"
		"  --tier NAME=KIND:PATH:SIZE   a pmem or file tier under PATH\n"
		"                               (repeat; order given = speed order)\n"
		"  --extent-size SIZE           extent size, a power of two (default 1M)\n"
		"  --high-watermark PCT         demote from a tier above PCT%% full (default %d)\n"
		"  --low-watermark PCT          ... down to PCT%% (default %d)\n"
		"  --migrate-bw SIZE            migration bytes per second (default 512M;\n"
		"                               0 = unlimited)\n"
		"  --heat-half-life SEC         how fast heat decays (default %d)\n"
		"  --promote-passes N           passes that make an extent hot (default %d)\n"
		"  --no-migrate                 no background migration\n"
		"  --dirty-max SIZE             dirty page cache the kernel may hold, and\n"
		"                               the free-space reserve (default 256M,\n"
		"                               at most 1/8 of the tiers)\n"
		"  --max-inodes N               most inodes in the mount (K, M suffixes;\n"
		"                               default one per 8K of memory; 0 = none)\n"
		"  --max-xattr-bytes SIZE       most bytes of user.* xattrs in the mount\n"
		"                               (default 1/128 of memory; 0 = none)\n"
		"  --no-writeback-cache         send every write(2) to the daemon at once\n"
		"  --no-kernel-features         ask only for what libfuse asks for\n"
		"  --no-splice                  read /dev/fuse requests whole (two\n"
		"                               copies per written byte)\n"
		"  --transport auto|uring|dev   FUSE over io_uring where the kernel offers\n"
		"                               it (auto, default), required, or never\n"
		"  --page-cache keep|drop|only  keep file data in the kernel's page cache\n"
		"                               too (keep, default: fast re-reads), never\n"
		"                               (drop: the tiers hold one copy), or as\n"
		"                               the only copy in memory (only: RAM tiers\n"
		"                               hand what was written down after 1 s)\n"
		"  --memory-reserve SIZE        RAM tiers give memory back to the next\n"
		"                               tier while less than SIZE is free in\n"
		"                               the machine or the cgroup (default 1/16)\n"
		"  --no-memory-follow           RAM tiers keep their size whatever\n"
		"                               memory is left\n"
		"  --tier-timeout SEC           a file or pmem tier that answers nothing\n"
		"                               for SEC seconds fails its data with EIO\n"
		"                               until it answers again (default %d;\n"
		"                               0 = wait for ever)\n"
		"  --io auto|tiered|native      native: a file on one tier keeps its\n"
		"                               bytes in a file of its own there, which\n"
		"                               the kernel reads and writes itself (FUSE\n"
		"                               passthrough: no writeback cache, no\n"
		"                               spill); auto (default) = tiered\n"
		"  -o OPT[,OPT...]              FUSE mount options (allow_other, ...);\n"
		"                               every option above also as -o name=value\n"
		"                               (extent_size=1M, no_migrate, tier=SPEC)\n"
		"  -o allow_suid, -o allow_dev  honour setuid bits, device nodes (the\n"
		"                               mount is nosuid,nodev without them)\n"
		"  -f                           stay in the foreground\n"
		"  -d                           debug output (implies -f)\n"
		"  -s                           single-threaded\n"
		"  -h, --help                   this text\n"
		"  -V, --version                version\n"
		"\n"
		"SIZE takes K, M, G, T suffixes (powers of 1024).  With no tier given,\n"
		"a RAM tier of a quarter of physical memory serves, over a file tier\n"
		"in %s/tierfs-$UID of half the free space there.\n",
		DEFAULT_HIGH_WATERMARK, DEFAULT_LOW_WATERMARK,
		DEFAULT_HEAT_HALF_LIFE, DEFAULT_PROMOTE_PASSES,
		DEFAULT_TIER_TIMEOUT, DEFAULT_FILE_TIER_PARENT);
}

/*
 * The mount's source, as mount(8), findmnt and /proc/self/mountinfo show
 * it: the absolute path of the config file when there is one (the first
 * field of the fstab line, so that `mount -a` sees the line mounted and
 * skips it), "tierfs:NAME+NAME..." for tiers given on the command line,
 * and "tierfs:default" for the default stack.  Returns @buf.
 */
static const char *mount_source(const struct tierfs_options *opt,
				bool tiers_given, char *buf, size_t len)
{
	size_t n;

	if (opt->config_file) {
		snprintf(buf, len, "%s", opt->config_file);
		return buf;
	}
	if (!tiers_given) {
		snprintf(buf, len, "tierfs:default");
		return buf;
	}
	n = (size_t)snprintf(buf, len, "tierfs:");
	for (unsigned i = 0; i < opt->ntiers && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "+" : "",
				      opt->tiers[i].name);
	return buf;
}

/* @s with ',' and '\' escaped for a libfuse -o list, into @buf. */
static const char *opt_escape(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; *s && n + 2 < len; s++) {
		if (*s == ',' || *s == '\\')
			buf[n++] = '\\';
		buf[n++] = *s;
	}
	buf[n] = '\0';
	return buf;
}

/* Build libfuse's argv: our fixed options plus the user's -o list. */
static int build_fuse_args(const struct tierfs_options *opt,
			   const char *source, struct fuse_args *args)
{
	char o[4096], src[PATH_MAX * 2 + 2];
	int n;

	n = snprintf(o, sizeof(o),
		     "default_permissions,fsname=%s,subtype=tierfs%s%s",
		     opt_escape(source, src, sizeof(src)),
		     opt->fuse_opts ? "," : "",
		     opt->fuse_opts ? opt->fuse_opts : "");
	if (n < 0 || (size_t)n >= sizeof(o))
		return -E2BIG;
	if (fuse_opt_add_arg(args, "tierfs") || fuse_opt_add_arg(args, "-o") ||
	    fuse_opt_add_arg(args, o))
		return -ENOMEM;
	if (opt->debug && fuse_opt_add_arg(args, "-d"))
		return -ENOMEM;
	return 0;
}

/*
 * The tierfs mounted on @path itself, if any (the last line for @path in
 * mountinfo is the one on top): its source into @src, and its mount and
 * superblock options, comma-joined, into @opts (if not NULL).  Returns 1 when
 * there is one, 0 when not, -errno when mountinfo cannot be read.
 */
static int tierfs_at(const char *path, char *src, size_t len, char *opts,
		     size_t olen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int found = 0;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct mountinfo_entry e;

		if (!mountinfo_parse(line, &e) || strcmp(e.mountpoint, path))
			continue;
		/* whatever is on top of the mount point decides */
		found = !strcmp(e.fstype, "fuse.tierfs");
		if (found)
			snprintf(src, len, "%s", e.source);
		if (found && opts)
			snprintf(opts, olen, "%s,%s", e.mount_opts, e.super_opts);
	}
	free(line);
	fclose(f);
	return found;
}

/*
 * Issue 19: a second tierfs on a live one would hide every running job's
 * files behind an empty filesystem, and a mount(8) that cannot tell the
 * two apart (`mount -a`, a second `mount /scratch`) would do it without
 * a word.  Refused, with one line; a dead tierfs (its daemon gone) too,
 * since its mount point must be unmounted before anything can use it.
 * Returns 0 (go on) or -1 (refused, said).
 */
static int check_not_stacked(const char *path)
{
	char src[PATH_MAX + 64] = "";
	struct statfs sfs;
	int r = tierfs_at(path, src, sizeof(src), NULL, 0);

	if (r <= 0)
		return 0; /* nothing there (or no /proc: mount as before) */
	if (statfs(path, &sfs) < 0 && errno == ENOTCONN) {
		fprintf(stderr,
			"tierfs: '%s' is a tierfs mount whose daemon is gone (source %s): unmount it first (umount -l '%s')\n",
			path, src, path);
		return -1;
	}
	fprintf(stderr,
		"tierfs: '%s' is already a live tierfs mount (source %s): refusing to mount a second one over it\n",
		path, src);
	return -1;
}

/* Mount flags -o remount may change, as mount(8) spells them. */
static const struct {
	const char *name;
	unsigned long set, clear;
} vfs_flags[] = {
	{ "ro", MS_RDONLY, 0 },	    { "rw", 0, MS_RDONLY },
	{ "nosuid", MS_NOSUID, 0 }, { "suid", 0, MS_NOSUID },
	{ "nodev", MS_NODEV, 0 },   { "dev", 0, MS_NODEV },
	{ "noexec", MS_NOEXEC, 0 }, { "exec", 0, MS_NOEXEC },
	{ "noatime", MS_NOATIME, MS_RELATIME | MS_STRICTATIME },
	{ "relatime", MS_RELATIME, MS_NOATIME | MS_STRICTATIME },
	{ "strictatime", MS_STRICTATIME, MS_NOATIME | MS_RELATIME },
	{ "atime", 0, MS_NOATIME },
	{ "nodiratime", MS_NODIRATIME, 0 }, { "diratime", 0, MS_NODIRATIME },
};

/* Does the comma list @list hold the item @item? */
static bool list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; p && *p;) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == n && !strncmp(p, item, n))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

/*
 * Apply @set and @clear (MS_* of vfs_flags[]) to the live mount on
 * @path: ro/rw on the superblock when one of them was asked, the others
 * on the mount, from the flags it has now (a bind remount replaces them
 * all).  Returns the exit status, having said why on failure.
 */
static int remount_flags(const char *path, unsigned long set,
			 unsigned long clear)
{
	static const struct {
		unsigned long st, ms;
	} now_map[] = {
		{ ST_RDONLY, MS_RDONLY },     { ST_NOSUID, MS_NOSUID },
		{ ST_NODEV, MS_NODEV },	      { ST_NOEXEC, MS_NOEXEC },
		{ ST_NOATIME, MS_NOATIME },   { ST_NODIRATIME, MS_NODIRATIME },
		{ ST_RELATIME, MS_RELATIME },
	};
	unsigned long flags = 0;
	struct statvfs sv;

	if (statvfs(path, &sv) < 0) {
		fprintf(stderr, "tierfs: -o remount of '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(now_map) / sizeof(now_map[0]); i++)
		if (sv.f_flag & now_map[i].st)
			flags |= now_map[i].ms;
	flags = (flags & ~clear) | set;
	if ((set | clear) & MS_RDONLY &&
	    mount(NULL, path, NULL, MS_REMOUNT | (flags & MS_RDONLY), NULL) < 0) {
		fprintf(stderr, "tierfs: -o remount of '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
	if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | flags, NULL) < 0) {
		fprintf(stderr, "tierfs: -o remount of '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * -o remount (mount(8) runs `tierfs SOURCE DIR -o remount,...` through
 * mount.fuse3).  A tierfs cannot take new settings while it lives -- its
 * tiers hold the only copy of the data, and a new daemon would start
 * empty -- so a remount changes what the kernel can change on the live
 * mount, the flags of vfs_flags[] (ro/rw on the superblock, the rest on
 * the mount), and refuses anything else with one line: a tierfs setting
 * (-o key=value of ours, a long option), another source than the mount
 * shows (the config file, or "tierfs:..."; the config is not read), or
 * a FUSE option the live mount does not already have.  Returns the exit
 * status.
 */
static int remount(const struct tierfs_options *opt, int argc, char **argv)
{
	char live[PATH_MAX + 64] = "", line_opts[4096] = "";
	unsigned long set = 0, clear = 0;
	const char *p;
	int r;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--", 2)) {
			fprintf(stderr,
				"tierfs: -o remount changes only the mount flags (ro, rw, nosuid, nodev, noexec, atime); %s needs a new mount: unmount and mount again (the scratch data goes)\n",
				argv[i]);
			return 1;
		}
	}
	if (opt->own_o) {
		fprintf(stderr,
			"tierfs: -o remount changes only the mount flags (ro, rw, nosuid, nodev, noexec, atime), not tierfs settings: unmount and mount again (the scratch data goes), or use tierctl for policies and drains\n");
		return 1;
	}
	r = tierfs_at(opt->mountpoint, live, sizeof(live), line_opts,
		      sizeof(line_opts));
	if (r <= 0) {
		fprintf(stderr, "tierfs: -o remount: no tierfs is mounted on '%s'\n",
			opt->mountpoint);
		return 1;
	}
	/* the source as given: a config file, or tierfs:..., or plain
	 * "tierfs" (an fstab line's), which names no particular mount */
	p = opt->config_file ? opt->config_file : opt->source;
	if (p && strcmp(p, "tierfs") && strcmp(live, p)) {
		fprintf(stderr,
			"tierfs: -o remount: '%s' serves %s, not %s; a new config needs a new mount\n",
			opt->mountpoint, live, p);
		return 1;
	}
	for (p = opt->fuse_opts; p && *p;) {
		const char *end = strchrnul(p, ',');
		size_t n = (size_t)(end - p);
		char item[256];
		bool known = false;

		snprintf(item, sizeof(item), "%.*s", (int)MIN(n, sizeof(item) - 1), p);
		p = *end ? end + 1 : end;
		if (!*item || !strcmp(item, "remount"))
			continue;
		for (size_t i = 0; i < sizeof(vfs_flags) / sizeof(vfs_flags[0]); i++) {
			if (strcmp(item, vfs_flags[i].name))
				continue;
			set = (set & ~vfs_flags[i].clear) | vfs_flags[i].set;
			clear = (clear & ~vfs_flags[i].set) | vfs_flags[i].clear;
			known = true;
		}
		if (!known && !list_has(line_opts, item)) {
			fprintf(stderr,
				"tierfs: -o remount cannot change '%s' on a live mount: unmount and mount again (the scratch data goes)\n",
				item);
			return 1;
		}
	}
	return remount_flags(opt->mountpoint, set, clear);
}

static int check_mountpoint(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "tierfs: cannot use mount point '%s': %s\n",
			path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "tierfs: mount point '%s' is not a directory\n",
			path);
		return -1;
	}
	return 0;
}

/*
 * Absolute paths for the mount point and the tier directories: libfuse
 * and the daemon itself may change directory (daemonizing does), and the
 * unmount and the removal of backing data must still find their paths.
 * A path that does not resolve is left as given: the check that follows
 * reports it.  Returns 0 or -ENOMEM.
 */
static int make_absolute(char **path)
{
	char *abs;

	if (!*path || (*path)[0] == '/')
		return 0;
	abs = realpath(*path, NULL);
	if (!abs)
		return errno == ENOMEM ? -ENOMEM : 0;
	free(*path);
	*path = abs;
	return 0;
}

/*
 * Can a detached daemon keep writing to our stderr (detached_stderr())?
 * A terminal, or a regular file that still has a name, yes.  Not a file
 * with no name left (st_nlink 0): mount(8) or a service manager may hand
 * the helper a temporary file that it deletes, and what is written there
 * reaches no one while it fills the disk.  Not a pipe or a socket: whoever
 * started us (`out=$(mount ...)`) would wait for its end as long as the
 * mount lives.  @what gets a name for it, for the message.
 */
static bool stderr_keepable(char *what, size_t len)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/fd/2", path, sizeof(path) - 1);
	struct stat st;

	path[n > 0 ? n : 0] = '\0';
	if (fstat(STDERR_FILENO, &st) < 0) {
		snprintf(what, len, "closed");
		return false;
	}
	if ((S_ISREG(st.st_mode) && st.st_nlink > 0) ||
	    (S_ISCHR(st.st_mode) && isatty(STDERR_FILENO))) {
		snprintf(what, len, "%s", *path ? path : "a file or terminal");
		return true;
	}
	if (S_ISREG(st.st_mode))
		snprintf(what, len, "a deleted file (%s)", path);
	else if (S_ISFIFO(st.st_mode))
		snprintf(what, len, "a pipe");
	else if (S_ISSOCK(st.st_mode))
		snprintf(what, len, "a socket");
	else
		snprintf(what, len, "%s", *path ? path : "not a terminal or file");
	return false;
}

/*
 * Where a detached daemon's messages go.  Detached, we log to the journal
 * when it listens, else to syslog.  A node with neither would lose every
 * message, so then we keep writing to the stderr we were started with
 * (daemonizing would close it) when stderr_keepable(), and say so once,
 * there, now: the admin who mounts sees where to look.  When it cannot
 * be kept, that line says the messages are lost.  Returns a copy of
 * stderr to keep (>= 3), or -1.
 */
static int detached_stderr(void)
{
	char what[PATH_MAX + 32];
	int fd = -1;

	if (log_journal_present(NULL) || access("/dev/log", W_OK) == 0)
		return -1;
	if (stderr_keepable(what, sizeof(what)))
		fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0) {
		fprintf(stderr,
			"tierfs: no journal (%s) and no syslog socket (/dev/log), and stderr is %s: the daemon's messages are lost once it detaches; run journald or a syslog daemon, or tierfs -f with stderr to a file\n",
			LOG_JOURNAL_SOCKET, what);
		return -1;
	}
	fprintf(stderr,
		"tierfs: no journal and no syslog socket (/dev/log): logging to stderr (%s)\n",
		what);
	return fd;
}

/*
 * libfuse's own messages ("fuse: ..."), once ours go to the journal or
 * syslog: the same place, at libfuse's level (syslog's numbers), without
 * libfuse's final newline.  Without this they would go to the stderr
 * that daemonizing points at /dev/null.
 */
static void fuse_log_ours(enum fuse_log_level level, const char *fmt,
			  va_list ap) __attribute__((format(printf, 2, 0)));

static void fuse_log_ours(enum fuse_log_level level, const char *fmt,
			  va_list ap)
{
	char buf[1024];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n < 0)
		return;
	n = MIN(n, (int)sizeof(buf) - 1);
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_msg((int)level, "%s", buf);
}

/*
 * Tell the service manager (Type=notify; notify.h) that the mount serves
 * (@ready) or that the daemon begins to stop.  A detached daemon also
 * names itself: it is not the process the manager started.
 */
static void notify_state(bool ready, const struct tierfs_options *opt,
			 const char *source)
{
	char state[PATH_MAX * 2 + 128], pid[32] = "";
	int r;

	if (!opt->foreground)
		snprintf(pid, sizeof(pid), "\nMAINPID=%d", (int)getpid());
	if (ready)
		snprintf(state, sizeof(state),
			 "READY=1\nSTATUS=serving %s (source %s)%s",
			 opt->mountpoint, source, pid);
	else
		snprintf(state, sizeof(state),
			 "STOPPING=1\nSTATUS=unmounting %s and freeing its tiers",
			 opt->mountpoint);
	r = notify_send(state);
	if (r < 0)
		log_warn("cannot notify the service manager at '%s' (NOTIFY_SOCKET): %s",
			 getenv("NOTIFY_SOCKET"), strerror(-r));
}

int main(int argc, char **argv)
{
	struct tierfs_options opt;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se = NULL;
	struct tierfs *fs = NULL;
	char err[OPT_ERR_MAX] = "";
	char source[PATH_MAX + 64];
	bool tiers_given;
	int saved_stderr = -1;
	int ret = 1;
	int r;

	log_setup("tierfs", false, false);
	options_init(&opt);
	r = options_parse_args(argc, argv, &opt, err, sizeof(err));
	if (r == 0 && opt.show_help) {
		usage(stdout);
		ret = 0;
		goto out;
	}
	if (r == 0 && opt.show_version) {
		printf("tierfs %s (libfuse %s)\n", TIERFS_VERSION,
		       fuse_pkgversion());
		ret = 0;
		goto out;
	}
	if (r == 0 && list_has(opt.fuse_opts, "remount")) {
		/* the first argument is the source the mount shows, which
		 * mount.fuse3 passes back: a config file or "tierfs:..." */
		if (opt.config_file && make_absolute(&opt.config_file) < 0)
			r = -ENOMEM;
		else if (opt.mountpoint && make_absolute(&opt.mountpoint) < 0)
			r = -ENOMEM;
		else if (options_mount_flags(&opt) < 0)
			r = -ENOMEM; /* mount.fuse3's dev,suid: see there */
		else if (opt.mountpoint) {
			ret = remount(&opt, argc, argv);
			goto out;
		}
	}
	if (r == 0 && opt.config_file)
		r = options_load_config(&opt, err, sizeof(err));
	tiers_given = opt.ntiers > 0; /* options_finish() adds the defaults */
	if (r == 0)
		r = options_finish(&opt, err, sizeof(err));
	if (r == 0)
		r = options_mount_flags(&opt); /* nosuid,nodev unless allowed */
	if (r < 0) {
		fprintf(stderr, "tierfs: %s\n", *err ? err : strerror(-r));
		goto out;
	}
	log_setup("tierfs", false, opt.debug);
	/*
	 * Under a systemd unit (tierfs -f) stderr is the journal's stream
	 * ($JOURNAL_STREAM names it): speak the journal's own protocol, so
	 * that messages keep their priority and fields (log.h).  Anywhere
	 * else in the foreground -- a terminal, a test's log file -- stderr.
	 */
	if (opt.foreground &&
	    log_journal_stream_is(getenv("JOURNAL_STREAM"), STDERR_FILENO))
		(void)log_setup_journal(NULL);
	r = make_absolute(&opt.mountpoint);
	if (r == 0)
		r = make_absolute(&opt.config_file);
	for (unsigned i = 0; r == 0 && i < opt.ntiers; i++)
		r = make_absolute(&opt.tiers[i].path);
	if (r < 0) {
		fprintf(stderr, "tierfs: out of memory\n");
		goto out;
	}
	mount_source(&opt, tiers_given, source, sizeof(source));
	if (check_not_stacked(opt.mountpoint) < 0 ||
	    check_mountpoint(opt.mountpoint) < 0)
		goto out;
	if (opt.transport == TRANSPORT_URING && !kernel_uring_enabled()) {
		fprintf(stderr,
			"tierfs: transport=uring, but this kernel has FUSE over io_uring off or lacks it (Linux 6.14+; as root: echo 1 > /sys/module/fuse/parameters/enable_uring); use transport=auto to fall back to /dev/fuse\n");
		goto out;
	}
	/* issue 11: the mount would hide a tier at or under it */
	for (unsigned i = 0; i < opt.ntiers; i++) {
		if (!opt.tiers[i].path ||
		    !tier_path_within(opt.tiers[i].path, opt.mountpoint))
			continue;
		fprintf(stderr,
			"tierfs: tier '%s' (%s) is at or under the mount point '%s': tier paths must lie outside it\n",
			opt.tiers[i].name, opt.tiers[i].path, opt.mountpoint);
		goto out;
	}

	/* an fstab line's tierfs:... source that the mount will not show:
	 * mount -a would not see the line mounted (and be refused);
	 * said after the refusals above, which are one line each */
	if (opt.source && strcmp(opt.source, source))
		log_warn("the source '%s' does not name this mount's tiers: it shows as '%s'; give that as the fstab line's first field, so that mount -a sees it mounted",
			 opt.source, source);
	/* tier errors are logged (to stderr: not detached yet) by create */
	if (tierfs_create(&opt, &fs) < 0)
		goto out;

	if (build_fuse_args(&opt, source, &args) < 0) {
		fprintf(stderr, "tierfs: mount options too long\n");
		goto out;
	}
	se = fuse_session_new(&args, &tierfs_ops, sizeof(tierfs_ops), fs);
	if (!se)
		goto out; /* libfuse printed why */
	if (fuse_set_signal_handlers(se) != 0)
		goto out_destroy;
	if (fuse_session_mount(se, opt.mountpoint) != 0)
		goto out_handlers;
	/* newer kernel features through our own /dev/fuse hooks (kernel.h) */
	r = kernel_attach(se, fs);
	if (r < 0)
		log_warn("cannot hook the FUSE device: %s; using only what libfuse %s negotiates",
			 strerror(-r), fuse_pkgversion());
	/* detached: the journal, syslog, or the stderr we keep (said now) */
	if (!opt.foreground)
		saved_stderr = detached_stderr();
	if (fuse_daemonize(opt.foreground) != 0)
		goto out_unmount;
	if (saved_stderr >= 0) {
		(void)dup2(saved_stderr, STDERR_FILENO);
		(void)close(saved_stderr);
	} else if (!opt.foreground && log_setup_journal(NULL) < 0) {
		log_setup("tierfs", true, opt.debug);
	}
	if (log_to_journal() || (!opt.foreground && saved_stderr < 0))
		fuse_set_log_func(fuse_log_ours);
	if (!opt.foreground || log_to_journal())
		log_info("mounted on '%s' (source %s)", opt.mountpoint, source);
	/* the mount is live and the loop below serves it from now on */
	notify_state(true, &opt, source);

	if (opt.single_thread) {
		r = fuse_session_loop(se);
	} else {
		struct fuse_loop_config *cfg = fuse_loop_cfg_create();

		if (!cfg) {
			log_err("cannot create loop config: out of memory");
			goto out_unmount;
		}
		fuse_loop_cfg_set_clone_fd(cfg, 0);
		fuse_loop_cfg_set_idle_threads(cfg, 10);
		/*
		 * Each request holds its thread until its reply, so a slow
		 * tier or a long walk holds threads: let the pool grow far
		 * past libfuse's default of 10, so that the other users'
		 * requests still find one (issue 17).
		 */
		fuse_loop_cfg_set_max_threads(cfg, TIERFS_MAX_THREADS);
		r = fuse_session_loop_mt(se, cfg);
		fuse_loop_cfg_destroy(cfg);
	}
	/* a positive value is the signal that ended the loop: a clean end */
	ret = r < 0 ? 1 : 0;
	if (r < 0)
		log_err("session loop failed: %s", strerror(-r));

out_unmount:
	/*
	 * The ring threads serve requests on their own (the loop above
	 * served only /dev/fuse): end them first, while the mount and the
	 * /dev/fuse fd they commit on are still there -- the unmount
	 * closes the fd, and the destroy handler frees what they read
	 * (issue 32).  Requests that come after wait in the kernel until
	 * the connection ends with the fd.
	 */
	kernel_uring_stop();
	notify_state(false, &opt, source);
	fuse_session_unmount(se);
out_handlers:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
out:
	fs = tierfs_free(fs);
	fuse_opt_free_args(&args);
	options_release(&opt);
	return ret;
}
