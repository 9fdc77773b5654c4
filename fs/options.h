/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.h -- tierfs's own settings, from the command line and the INI
 * config file: the tier stack and the global options.  FUSE's options
 * (-f, -d, -o ...) pass through to libfuse untouched.
 *
 * Parsing only: nothing here opens a tier, and only the embedded default
 * stack (options_finish()) looks at the disk, so every rule is
 * unit-tested (tests/unit/test_options.c).  Errors come back as -errno
 * plus one line of text for the user in @err.
 */
#ifndef TIERFS_OPTIONS_H
#define TIERFS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIER_MAX_CONF 8	      /* tiers one mount may have */
#define TIER_CONF_NAME_MAX 32 /* longest tier name */
#define OPT_ERR_MAX 256	      /* room for one error line */

#define DEFAULT_EXTENT_SIZE (UINT64_C(1) << 20)
/* The embedded default's file tier lives in a per-user directory here. */
#define DEFAULT_FILE_TIER_PARENT "/var/tmp"

/* One --tier NAME=KIND[:PATH]:SIZE or one [tier.NAME] section. */
struct tier_conf {
	char name[TIER_CONF_NAME_MAX + 1];
	int kind;   /* enum tier_kind */
	char *path; /* owned; NULL for ram */
	uint64_t size;
};

/* Migration defaults; see fs/README.md "Placement, migration and integrity". */
#define DEFAULT_HIGH_WATERMARK 90  /* percent of a tier's slots */
#define DEFAULT_LOW_WATERMARK 80
#define DEFAULT_MIGRATE_BW (UINT64_C(512) << 20) /* bytes per second */
#define DEFAULT_HEAT_HALF_LIFE 30  /* seconds */
#define DEFAULT_PROMOTE_PASSES 3   /* passes that make an extent hot */
/* Seconds a tier may go without answering before its data fails with
 * EIO (--tier-timeout; tiers/tier_watch.h).  0: never. */
#define DEFAULT_TIER_TIMEOUT 30
/* Dirty page cache allowed for the mount (and free-space reserve); at
 * most an eighth of the tiers' capacity, at least 1 MiB.  */
#define DEFAULT_DIRTY_MAX (UINT64_C(256) << 20)

/*
 * Memory (fs/README.md "Running for many users: the limits in detail"):
 * the memory tierfs may have, mem_total() of options_mem.h, less its
 * margin must hold the RAM tiers, and PMem tiers on tmpfs or ramfs
 * (options_check_memory()); the metadata limits below come from it.
 */
/* Default --max-inodes: one inode per 8 KiB of that memory, what tmpfs
 * gives nr_inodes (half the RAM pages); at ~700 bytes an inode with its
 * name, at most about 9% of memory. */
#define DEFAULT_MEM_PER_INODE 8192
/* Default --max-xattr-bytes: 1/128 of that memory (under 1%). */
#define DEFAULT_XATTR_MEM_DIV 128

struct tierfs_options {
	struct tier_conf tiers[TIER_MAX_CONF];
	unsigned ntiers;
	uint64_t extent_size; /* 0 until set; then a power of two >= 4K */
	/* migration; zero (or the _set flag false) means "not given" */
	int high_wm;	      /* percent, 1..100 */
	int low_wm;	      /* percent, 0..99 */
	bool low_wm_set;
	uint64_t migrate_bw;  /* bytes/s; 0 = unlimited once set */
	bool migrate_bw_set;
	uint32_t half_life;   /* seconds */
	uint32_t promote_passes;
	bool no_migrate;
	/* seconds a tier may go without answering (tier_watch.h); 0:
	 * never; tier_timeout_set: given */
	uint32_t tier_timeout;
	bool tier_timeout_set;
	/*
	 * The write path (fs/README.md "Kernel features"): no_writeback_cache
	 * sends every write(2) to the daemon; no_kernel_features keeps the
	 * INIT reply to what libfuse 3.14 asks for (as on an old kernel);
	 * dirty_max caps the dirty page cache the kernel may hold for the
	 * mount, which is also the free-space reserve (0 = not given).
	 */
	bool no_writeback_cache;
	bool no_kernel_features;
	/* read /dev/fuse requests whole: no splice pipe (kernel.c) */
	bool no_splice;
	uint64_t dirty_max;
	/*
	 * How requests reach the daemon (kernel_uring.c): FUSE over
	 * io_uring where the kernel offers it (auto), always (uring: the
	 * mount is refused where it cannot be), or /dev/fuse only (dev).
	 */
	enum tierfs_transport {
		TRANSPORT_AUTO = 0,
		TRANSPORT_URING,
		TRANSPORT_DEV,
	} transport;
	bool transport_set;
	/*
	 * Whether the kernel's page cache keeps a copy of file data
	 * (fs/README.md "One copy or two: the page cache and the RAM tier"): keep (warm re-reads never reach the daemon;
	 * data in the RAM tier is then held twice while memory allows), or
	 * drop (every open is direct I/O: the tiers hold the only copy,
	 * and every read and write is a request), or only (the kernel
	 * caches as with keep, and a RAM tier with a slower tier below
	 * hands what was written to it down after a few seconds, so the
	 * page cache is the only copy in memory: migrate.c "--page-cache
	 * only").
	 */
	/*
	 * Native I/O (issue 33, native.h): native hands the kernel a
	 * backing file for each file that lives on one tier (FUSE
	 * passthrough), which excludes the writeback cache for the whole
	 * mount; tiered keeps every byte on the daemon's path with the
	 * writeback cache; auto chooses at INIT (native.h says how).
	 */
	enum tierfs_io {
		IO_AUTO = 0,
		IO_TIERED,
		IO_NATIVE,
	} io;
	bool io_set;
	enum tierfs_page_cache {
		PAGE_CACHE_KEEP = 0,
		PAGE_CACHE_DROP,
		PAGE_CACHE_ONLY,
	} page_cache;
	bool page_cache_set;
	/*
	 * The memory follower (memwatch.h): RAM tiers give memory back
	 * while the machine or the cgroup has less than memory_reserve
	 * bytes left (0: 1/16 of each, the default); no_memory_follow
	 * turns it off.
	 */
	bool no_memory_follow;
	uint64_t memory_reserve;
	/*
	 * Metadata limits (fs/README.md "Running for many users: the limits in detail"): inodes
	 * in the mount and bytes charged for user.* attributes, 0 = no
	 * limit once set; options_finish() fills the defaults.
	 */
	uint64_t max_inodes;
	bool max_inodes_set;
	uint64_t max_xattr_bytes;
	bool max_xattr_bytes_set;
	char *config_file;    /* owned */
	/*
	 * owned; the first of two positional arguments when it names no
	 * config file but a tierfs source (options_source_is_spec():
	 * "tierfs", "tierfs:default", "tierfs:NAME+NAME"), as an fstab line
	 * without a config file has it; config_file is then NULL
	 */
	char *source;
	char *mountpoint;     /* owned */
	char *fuse_opts;      /* owned; comma-joined -o options for libfuse */
	unsigned own_o;	      /* tierfs settings given in -o lists (parse_o) */
	/* -o allow_suid, -o allow_dev (options_mount_flags()) */
	bool allow_suid;
	bool allow_dev;
	bool foreground;
	bool debug;
	bool single_thread;
	bool show_help;
	bool show_version;
	/*
	 * --test-clock, for tests only (not in --help, not an -o or config
	 * key): the heat ticks and the migrator's schedule follow a clock
	 * that stands still until root moves it with user.tierfs.ctl.clock
	 * (ctl_proto.h; struct tierfs, test_clock_ns), so that a test says
	 * when time passes instead of sleeping.  The bandwidth limit, the
	 * memory follower and the log's rate limits keep the real clock.
	 */
	bool test_clock;
};

/**
 * options_parse_tier() - parse "NAME=KIND:SIZE" or "NAME=KIND:PATH:SIZE"
 * @ret: filled on success (ret->path is then owned by the caller)
 * Return: 0 or -EINVAL with a message in @err.
 */
int options_parse_tier(const char *spec, struct tier_conf *ret, char *err,
		       size_t errlen);

/**
 * options_add_tier() - append @tc to @opt, taking ownership of its path
 * Return: 0, or -EINVAL for a duplicate name, a duplicate path or too
 * many tiers (message in @err; @tc's path is freed either way).
 */
int options_add_tier(struct tierfs_options *opt, struct tier_conf *tc,
		     char *err, size_t errlen);

/**
 * options_parse_args() - parse argv into @opt
 *
 * Recognises --tier, the global settings as --name VALUE or --name=VALUE
 * (--extent-size, --high-watermark, --low-watermark, --migrate-bw,
 * --heat-half-life, --promote-passes, --dirty-max, --max-inodes,
 * --max-xattr-bytes, --no-migrate, --no-writeback-cache,
 * --no-kernel-features; each also as
 * "-o name=value" with '_' for '-'), -f, -d, -s, -o, -h/--help,
 * -V/--version, and one or two positional arguments
 * ([CONFIG_FILE] MOUNTPOINT), and --test-clock (tests only, on the
 * command line only).  A first argument that is a tierfs source
 * (options_source_is_spec()) goes to opt->source, not config_file.
 * Other options are an error.
 *
 * Return: 0 or -EINVAL with a message in @err.
 */
int options_parse_args(int argc, char **argv, struct tierfs_options *opt,
		       char *err, size_t errlen);

/**
 * options_source_is_spec() - is @arg a tierfs source, not a config file?
 *
 * "tierfs", "tierfs:default" and "tierfs:NAME+NAME..." (tier names as
 * --tier takes them) name no config file: the tiers come from the
 * options (-o tier=..., --tier) or, with none, the default stack.  They
 * are what an fstab line without a config file puts in its first field,
 * and the sources a mount shows (main.c mount_source()), which
 * mount.fuse3 passes back on -o remount.  A config file called "tierfs"
 * in the current directory is "./tierfs".
 * Return: 1 for such a source, 0 for a config file path, -EINVAL (with
 * a message) for "tierfs:" followed by anything else.
 */
int options_source_is_spec(const char *arg, char *err, size_t errlen);

/**
 * options_mount_flags() - settle suid and dev in opt->fuse_opts
 *
 * Issue 19: the same mount flags however tierfs is started.  As root,
 * libfuse mounts nosuid,nodev by default, but mount.fuse3 (fstab, mount
 * units) adds "dev,suid" to every mount whose options lack nodev and
 * nosuid, so the two words cannot say what the admin meant.  A scratch
 * filesystem that every user writes must not honour setuid binaries or
 * device nodes unless the admin says so: the words suid and dev are
 * dropped, and "nosuid"/"nodev" always end the list, unless -o
 * allow_suid (then "suid") or -o allow_dev (then "dev") is given; a
 * nosuid or nodev given with them still wins.  allow_suid and allow_dev
 * leave the list too (libfuse does not know them) and set
 * opt->allow_suid, opt->allow_dev.  Call it once every -o list is in
 * (command line, config file), before the mount or -o remount.
 * Return: 0 or -ENOMEM.
 */
int options_mount_flags(struct tierfs_options *opt);

/**
 * options_load_config() - read opt->config_file (INI) into @opt
 *
 * Settings given on the command line win over the file's: tiers from the
 * file are used only when the command line gave none.
 *
 * The file must be a regular file (checked with stat() before it is
 * opened, so a FIFO or /dev/zero is never read; -EISDIR for a
 * directory).  Refused with "PATH: line N: ...": an unknown section or
 * key, a bad value, a section twice, a key twice in one section or
 * before any section, a [tier.NAME] section without keys (never
 * dropped, so a file of only that cannot leave the default stack in
 * force), a NUL byte, a line longer than inih's buffer.  Indentation is dropped before inih sees a
 * line, so no value continues onto the next line.
 * Return: 0, or -errno with a message in @err; nothing of a bad file is
 * kept in @opt.
 */
int options_load_config(struct tierfs_options *opt, char *err,
			size_t errlen);

/**
 * options_finish() - fill defaults (extent size, the default tier stack,
 * the metadata limits) and check what is left to check, including that
 * the memory tiers fit in memory (options_check_memory() with
 * mem_probe()).  Only the default stack touches the disk: it creates
 * DEFAULT_FILE_TIER_PARENT/tierfs-$UID (0700) and sizes the file tier
 * from the free space there.
 * Return: 0 or -EINVAL with a message in @err.
 */
int options_finish(struct tierfs_options *opt, char *err, size_t errlen);

struct mem_limit; /* options_mem.h */

/**
 * options_check_memory() - refuse memory tiers (RAM, and PMem or file
 * tiers on tmpfs or ramfs, issue 16) that together exceed mem_usable(@ml)
 * (options_mem.h).
 * Return: 0 or -EINVAL with one line naming the tiers, their total and
 * the limit with where it comes from.
 */
int options_check_memory(const struct tierfs_options *opt,
			 const struct mem_limit *ml, char *err,
			 size_t errlen);

void options_release(struct tierfs_options *opt);

/* Set every field to "not given" (what options_finish() fills); the
 * same as zero-initialising. */
void options_init(struct tierfs_options *opt);

#endif /* TIERFS_OPTIONS_H */
