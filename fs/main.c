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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fuse_inc.h"
#include "kernel.h"
#include "ops.h"
#include "options.h"
#include "fs.h"
#include "log.h"
#include "tier.h"
#include "banned.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tierfs [OPTIONS] [CONFIG_FILE] MOUNTPOINT\n"
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
		"  --page-cache keep|drop       keep file data in the kernel's page cache\n"
		"                               too (keep, default: fast re-reads), or\n"
		"                               never (drop: the tiers hold one copy)\n"
		"  -o OPT[,OPT...]              FUSE mount options (allow_other, ...);\n"
		"                               every option above also as -o name=value\n"
		"                               (extent_size=1M, no_migrate, tier=SPEC)\n"
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
		DEFAULT_FILE_TIER_PARENT);
}

/* Build libfuse's argv: our fixed options plus the user's -o list. */
static int build_fuse_args(const struct tierfs_options *opt,
			   struct fuse_args *args)
{
	char o[4096];
	int n;

	n = snprintf(o, sizeof(o),
		     "default_permissions,fsname=tierfs,subtype=tierfs%s%s",
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

/* Is our stderr a terminal or a regular file (see main())? */
static bool stderr_keepable(void)
{
	struct stat st;

	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return S_ISREG(st.st_mode) || (S_ISCHR(st.st_mode) &&
				       isatty(STDERR_FILENO));
}

int main(int argc, char **argv)
{
	struct tierfs_options opt;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_session *se = NULL;
	struct tierfs *fs = NULL;
	char err[OPT_ERR_MAX] = "";
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
	if (r == 0 && opt.config_file)
		r = options_load_config(&opt, err, sizeof(err));
	if (r == 0)
		r = options_finish(&opt, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "tierfs: %s\n", *err ? err : strerror(-r));
		goto out;
	}
	log_setup("tierfs", false, opt.debug);
	r = make_absolute(&opt.mountpoint);
	for (unsigned i = 0; r == 0 && i < opt.ntiers; i++)
		r = make_absolute(&opt.tiers[i].path);
	if (r < 0) {
		fprintf(stderr, "tierfs: out of memory\n");
		goto out;
	}
	if (check_mountpoint(opt.mountpoint) < 0)
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

	/* tier errors are logged (to stderr: not detached yet) by create */
	if (tierfs_create(&opt, &fs) < 0)
		goto out;

	if (build_fuse_args(&opt, &args) < 0) {
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
	/*
	 * Detached, we log to the journal when it listens, else to syslog.
	 * A node with neither would lose every message, so then we keep
	 * writing to the stderr we were started with, which daemonizing
	 * would close -- if it is a terminal or a file.  Never a pipe or a
	 * socket: whoever started us (`out=$(mount ...)`) would wait for its
	 * end as long as the mount lives.
	 */
	if (!opt.foreground && !log_journal_present(NULL) &&
	    access("/dev/log", W_OK) != 0 && stderr_keepable())
		saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fuse_daemonize(opt.foreground) != 0)
		goto out_unmount;
	if (saved_stderr >= 0) {
		(void)dup2(saved_stderr, STDERR_FILENO);
		(void)close(saved_stderr);
		log_warn("no journal and no syslog socket (/dev/log): logging to stderr");
	} else if (!opt.foreground && log_setup_journal(NULL) < 0) {
		log_setup("tierfs", true, opt.debug);
	}
	if (!opt.foreground)
		log_info("mounted on '%s'", opt.mountpoint);

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
