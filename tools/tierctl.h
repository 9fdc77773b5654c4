/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tierctl.h -- what the tierctl commands share: the command entry points,
 * the control-channel helpers (extended attributes on the mount, see
 * fs/ctl_proto.h), the parsed form of user.tierfs.stats, mount discovery,
 * and the progress display.  Private to tools/; the daemon never sees it.
 *
 * Conventions: helpers return 0 (or a count) and -errno, and print
 * nothing; commands print one "tierctl: ..." line per problem through
 * tierctl_err() and return the process exit status (TIERCTL_EXIT_*).
 */
#ifndef TIERCTL_H
#define TIERCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "mountinfo.h"
#include "quote.h"

#define TIERCTL_EXIT_OK 0
#define TIERCTL_EXIT_FAIL 1  /* the action failed or found errors */
#define TIERCTL_EXIT_USAGE 2 /* bad command line */

/*
 * Size of one ctl.migrate request: MIGRATE_CHUNK_EXTENTS extents, but at
 * most MIGRATE_CHUNK_MAX bytes unless one extent is larger.  Small
 * enough for progress and to keep each request short -- the kernel
 * holds the file's inode lock across setxattr, so writers of the file
 * wait for it -- and large enough to keep the request count low.
 */
#define MIGRATE_CHUNK_EXTENTS 64
#define MIGRATE_CHUNK_MAX (UINT64_C(256) << 20)

/* The commands (tierctl.c holds the table; cmd_*.c the code). */
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_layout(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_pin(int argc, char **argv);
int cmd_unpin(int argc, char **argv);
int cmd_migrate(int argc, char **argv);
int cmd_drain(int argc, char **argv);
int cmd_scrub(int argc, char **argv);
int cmd_quota(int argc, char **argv);

/* The error lines (output.c).
 * "tierctl: <message>" on stderr.  Returns TIERCTL_EXIT_FAIL.  A file
 * name in the message goes through qn() (quote.h) first. */
int tierctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "tierctl: <message> (usage: tierctl <usage of @verb>)" on stderr.
 * Returns TIERCTL_EXIT_USAGE. */
int tierctl_usage_err(const char *verb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* For getopt_long's '?' or ':' (optstring starting with ':'): "unknown
 * option" or "option needs a value", as tierctl_usage_err(). */
int tierctl_bad_option(int c, char **argv);

/*
 * fflush(stdout), remembering the errno of the first failure for the
 * check at exit: every command's output is checked there (main()), so a
 * command itself never reports a write error on stdout.
 */
void tierctl_flush(void);

/* The check at exit: flush and close stdout; @ret, or TIERCTL_EXIT_FAIL
 * after one error line when output was lost. */
int tierctl_close_stdout(int ret);

/* Where tierctl_usage_err() finds the usage line of a verb (after
 * "tierctl "): main() hands it the command table's lookup, so that
 * output.c, below the commands, never calls up into tierctl.c. */
void tierctl_usage_lookup(const char *(*fn)(const char *verb));

/* Print the full help of @verb on @f; false for an unknown verb. */
bool tierctl_help(const char *verb, FILE *f);

/* Handle -h/--help as the only argument check shared by every command:
 * returns true (help printed) when argv holds one. */
bool tierctl_want_help(int argc, char **argv);

/* ---- control channel ---- */

/**
 * ctl_get() - read extended attribute @name of @path (following symlinks)
 * @ret_val: on success a malloc'd, NUL-terminated copy of the value; the
 *           caller frees it
 * Return: the value's length, or -errno (ENODATA when it is not set).
 */
ssize_t ctl_get(const char *path, const char *name, char **ret_val);

/* setxattr(@path, @name, @value) without the NUL.  Return: 0 or -errno. */
int ctl_set(const char *path, const char *name, const char *value);

/* One run of an extent list: @len bytes at @start on tier @tier. */
typedef int (*ctl_run_fn)(void *arg, uint64_t start, uint64_t len,
			  const char *tier);

/**
 * ctl_extents_each() - call @fn for every run of @path's extent list, in
 * file order, read page by page (user.tierfs.extents@OFFSET; the whole
 * user.tierfs.extents from a daemon without pages), so that a list of
 * any length is read in requests of at most TIERFS_XATTR_VALUE_MAX
 * bytes.  A run that a page boundary cut in two is handed over whole.
 * Return: 0; the first non-zero value of @fn, which stops the walk; or
 * -errno (-EBADMSG for a page that breaks the protocol).
 */
int ctl_extents_each(const char *path, ctl_run_fn fn, void *arg);

/* The escapes of ctl_proto.h are those of /proc/self/mountinfo: undo
 * them with unescape_octal() (fs/util/mountinfo.h). */

/* ---- mounts ---- */

/*
 * A file the user named, checked to be on a tierfs mount (mounts.c has the
 * how and why of the check).
 */
struct tierfs_path {
	const char *path; /* as given, borrowed: for messages only */
	int fd;		  /* O_PATH descriptor of the file checked */
	dev_t dev;	  /* its filesystem */
	char at[32];	  /* "/proc/self/fd/N": the same file for path-based
			   * calls (the xattr calls have no O_PATH form) */
};

/**
 * tierfs_path_open() - open @path and check that it is on a tierfs mount:
 * the one check every command makes before it reads or changes anything
 * of a PATH or MOUNT given on the command line
 * Return: 0, or TIERCTL_EXIT_FAIL after one error line ("'x' is not on a
 * tierfs mount", "cannot access 'x': ...").  On success the caller
 * releases @ret with tierfs_path_close().
 */
int tierfs_path_open(const char *path, struct tierfs_path *ret);

/**
 * tierfs_path_open_on() - open @path, found below the checked @mnt (by a
 * walk), and check that it is still on the same filesystem
 * Return: 0, -EXDEV when it is elsewhere now, or -errno; prints nothing.
 */
int tierfs_path_open_on(const char *path, const struct tierfs_path *mnt,
			struct tierfs_path *ret);

void tierfs_path_close(struct tierfs_path *p);

/**
 * mount_root() - the root of the mount holding @path: the highest
 * ancestor of realpath(@path) on the same st_dev.
 * @ret_root: on success malloc'd; the caller frees it
 * Return: 0 or -errno.
 */
int mount_root(const char *path, char **ret_root);

/**
 * tierfs_mounts() - mount points of type TIERFS_FSTYPE, from
 * /proc/self/mountinfo, in mount order
 * @ret_list: malloc'd array of malloc'd strings; free with strv_free()
 * Return: the number found, or -errno.
 */
ssize_t tierfs_mounts(char ***ret_list);

void strv_free(char **v, size_t n);

/* ---- user.tierfs.stats ---- */

struct stats_kv {
	const char *key;   /* points into stats.text */
	const char *value; /* likewise */
};

/* One line: "TYPE [NAME] KEY=VALUE...". */
struct stats_rec {
	const char *type;    /* "tier", "migrator", "mount", ... */
	const char *name;    /* the tier name; NULL for other records */
	struct stats_kv *kv; /* in the daemon's order */
	size_t nkv;
};

struct stats {
	char *text; /* owned; records point into it */
	struct stats_rec *recs;
	size_t nrecs;
};

/**
 * stats_read() - read and parse user.tierfs.stats of mount root @root
 * Return: 0 or -errno (-ENODATA: @root is not a tierfs mount root).
 * On success the caller releases @ret with stats_release().
 */
int stats_read(const char *root, struct stats *ret);

/**
 * stats_parse() - parse @text (taken over: freed by stats_release())
 * Unknown record types and keys are kept; a value may contain spaces
 * (a tier path): words without '=' belong to the value before them.
 * Return: 0 or -ENOMEM (@text is freed then).
 */
int stats_parse(char *text, struct stats *ret);

void stats_release(struct stats *s);

/* The first record of @type (and @name, unless NULL), or NULL. */
const struct stats_rec *stats_find(const struct stats *s, const char *type,
				   const char *name);

/* The value of @key in @r, or NULL. */
const char *rec_get(const struct stats_rec *r, const char *key);

/* The value of @key as a number; 0 when missing or not a number. */
uint64_t rec_u64(const struct stats_rec *r, const char *key);

/* Number of tier records, and the read_bytes sum over all of them. */
size_t stats_ntiers(const struct stats *s);

/*
 * The read share of tier @r: its share of the bytes read from all tiers,
 * read_bytes / sum(read_bytes), in 0..1; negative when nothing was read.
 * Not a hit ratio: reads the page cache served never reach the daemon,
 * and what a tier missed is not known (a tier serves what it holds).
 */
double stats_read_share(const struct stats *s, const struct stats_rec *r);

/**
 * open_mount_stats() - check that @path is on a tierfs mount
 * (tierfs_path_open()), find its mount root and read its stats,
 * printing one error line when that fails
 * @ret_mnt: NULL, or on success the checked @path, to be released with
 *           tierfs_path_close()
 * Return: 0, or TIERCTL_EXIT_FAIL after an error message.  On success
 * the caller frees *ret_root and releases @ret.
 */
int open_mount_stats(const char *path, char **ret_root, struct stats *ret,
		     struct tierfs_path *ret_mnt);

/*
 * The state of one mount for the reports that cover several (status,
 * stats, top): read, or why not.
 */
struct mount_probe {
	enum {
		PROBE_UP,   /* statistics read */
		PROBE_DOWN, /* a tierfs mount that gave none: dead daemon,
			     * another user's mount without allow_other */
		PROBE_BAD,  /* not a tierfs mount, or no such path */
		PROBE_DUP,  /* the same mount as an earlier entry: skip */
	} state;
	bool dead;	    /* DOWN because its daemon is gone */
	char *root;	    /* UP: the mount root; DOWN: the mount point */
	struct stats stats; /* UP only */
	char *why;	    /* DOWN, BAD: the error line, without "tierctl: " */
};

/* open_mount_stats() of @path into @ret, printing nothing.  Release
 * @ret with mount_probe_release(). */
void mount_probe(const char *path, struct mount_probe *ret);
void mount_probe_release(struct mount_probe *p);

/**
 * mount_probe_all() - mount_probe() of each of the @argc paths @argv, or
 * with none, of every tierfs mount in /proc/self/mountinfo (each of
 * which is DOWN, with its mount point as root, when it cannot be read)
 * Return: 0, or TIERCTL_EXIT_FAIL after an error line.  *ret_n is 0
 * when no path was given and no tierfs is mounted.  Free *ret with
 * mount_probe_free().
 */
int mount_probe_all(int argc, char **argv, struct mount_probe **ret,
		    size_t *ret_n);
void mount_probe_free(struct mount_probe *v, size_t n);

/* ---- dead mounts ---- */

/* ENOTCONN or ECONNABORTED: the path is on a FUSE mount whose daemon is
 * gone (killed, or its connection aborted). */
bool errno_is_dead(int e);

/**
 * dead_mount_why() - the error line for @path, whose access failed with
 * @err (errno_is_dead()): which mount is dead, found by the path's text
 * in /proc/self/mountinfo, and that 'umount -l MOUNT' clears it
 * @ret_mp: NULL, or the dead mount's mount point (malloc'd; NULL when
 *          not found)
 * @ret_tierfs: NULL, or whether that mount is a tierfs
 * Return: malloc'd text without "tierctl: ", or NULL (ENOMEM).
 */
char *dead_mount_why(const char *path, int err, char **ret_mp,
		     bool *ret_tierfs);

/* "unknown tier 'x' on '/mnt' (tiers: a, b)" check: true if @name is a
 * tier of @s; otherwise prints that line and returns false. */
bool stats_check_tier(const struct stats *s, const char *root,
		      const char *name);

/* ---- output helpers ---- */

/* size_format() with "0" for zero; returns @buf. */
char *human(uint64_t v, char *buf, size_t len);

/* @v exactly, in the largest binary unit that divides it ("1M", "1536K",
 * "4097"), as size_parse() reads it back; returns @buf. */
char *size_exact(uint64_t v, char *buf, size_t len);

/* Progress display on stdout: a redrawn bar on a terminal, otherwise a
 * plain line at every tenth of the way. */
struct progress {
	const char *what; /* label, borrowed */
	uint64_t total;
	bool bytes; /* show amounts as sizes, not counts */
	bool tty;
	bool quiet;
	int last_tenth;	  /* non-terminal: last tenth printed (0: none) */
	uint64_t last_ms; /* terminal: time of the last redraw */
	bool drawn;
};

void progress_start(struct progress *p, const char *what, uint64_t total,
		    bool bytes, bool quiet);
void progress_update(struct progress *p, uint64_t done);
/* Final state: @done of total; ends the line on a terminal. */
void progress_end(struct progress *p, uint64_t done);
/* Erase the bar (terminal), e.g. before a message line or when nothing
 * was done; a later update draws it again. */
void progress_abort(struct progress *p);

uint64_t now_ms(void);

#endif /* TIERCTL_H */
