// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * options.c -- tierfs's own settings from the command line (see
 * options.h): --tier and the tier spec, the global settings as long
 * options and as -o key=value (everything else in -o goes to libfuse),
 * the defaults and the embedded default tier stack (options_finish()),
 * and the check that the memory tiers fit in the memory options_mem.c
 * finds (options_check_memory()).  The INI config file is read in
 * config.c, which shares the setters declared in options_i.h.
 *
 * Locking: none; options are parsed once, by main() before the mount
 * exists (and by unit tests and fuzz targets), on one thread.
 *
 * Return: 0, or -EINVAL with one line for the user in @err (fail()),
 * -ENOMEM, or -ENOENT from set_global() for a key that is not ours.
 *
 * Longer than 700 lines for a reason: one parser for every option of the
 * command line and -o, with its message for each bad value; the setters
 * are shared with config.c (options_i.h), so splitting it by option
 * group would only move them behind another header.  The memory check
 * of the tiers is here because it reads the options (and words its
 * refusal as fail() does), which options_mem.c below it must not.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "options.h"
#include "options_i.h"
#include "options_mem.h"
#include "size.h"
#include "tier.h"
#include "macro.h"
#include "banned.h"

/* Write one message line to @err; returns -EINVAL for convenience. */
int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int parse_size_opt(const char *what, const char *s, uint64_t *ret, char *err,
		   size_t errlen)
{
	uint64_t v;
	int r = size_parse(s, &v);

	if (r == -ERANGE)
		return fail(err, errlen, "%s '%s' is too large", what, s);
	if (r < 0)
		return fail(err, errlen,
			    "cannot parse %s '%s': expected a number with an optional K, M, G or T suffix",
			    what, s);
	*ret = v;
	return 0;
}

static int check_extent_size(uint64_t v, const char *s, char *err,
			     size_t errlen)
{
	if (!is_power_of_2(v) || v < 4096 || v > (UINT64_C(1) << 30))
		return fail(err, errlen,
			    "extent size '%s' must be a power of two between 4K and 1G",
			    s);
	return 0;
}

/* The characters a tier name may use, from --tier and [tier.NAME] alike
 * (tier_create() refuses the rest). */
bool tier_name_chars_ok(const char *name)
{
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			return false;
	return true;
}

int options_parse_tier(const char *spec, struct tier_conf *ret, char *err,
		       size_t errlen)
{
	const char *eq = strchr(spec, '=');
	const char *c1, *c2;
	char kind[16];
	size_t n;
	struct tier_conf tc = { .kind = _TIER_KIND_INVALID };
	int r;

	if (!eq || eq == spec)
		return fail(err, errlen,
			    "bad tier '%s': expected NAME=KIND:SIZE or NAME=KIND:PATH:SIZE",
			    spec);
	n = (size_t)(eq - spec);
	if (n > TIER_CONF_NAME_MAX)
		return fail(err, errlen, "tier name '%.*s' is longer than %d characters",
			    (int)n, spec, TIER_CONF_NAME_MAX);
	memcpy(tc.name, spec, n);
	tc.name[n] = '\0';
	if (!tier_name_chars_ok(tc.name))
		return fail(err, errlen,
			    "bad tier name '%s': use letters, digits, '_' and '-'",
			    tc.name);

	c1 = strchr(eq + 1, ':');
	if (!c1)
		return fail(err, errlen,
			    "bad tier '%s': expected NAME=KIND:SIZE or NAME=KIND:PATH:SIZE",
			    spec);
	n = (size_t)(c1 - (eq + 1));
	if (n >= sizeof(kind))
		n = sizeof(kind) - 1;
	memcpy(kind, eq + 1, n);
	kind[n] = '\0';
	tc.kind = tier_kind_parse(kind);
	if (tc.kind == _TIER_KIND_INVALID)
		return fail(err, errlen,
			    "unknown tier kind '%s' in '%s': use ram, pmem or file",
			    kind, spec);

	/* the size follows the last colon; a path may itself hold colons */
	c2 = strrchr(c1 + 1, ':');
	if (tc.kind == TIER_RAM) {
		if (c2)
			return fail(err, errlen,
				    "bad tier '%s': a ram tier takes no path (NAME=ram:SIZE)",
				    spec);
		r = parse_size_opt("tier size", c1 + 1, &tc.size, err, errlen);
		if (r < 0)
			return r;
	} else {
		if (!c2 || c2 == c1 + 1)
			return fail(err, errlen,
				    "bad tier '%s': a %s tier needs a path (NAME=%s:PATH:SIZE)",
				    spec, kind, kind);
		r = parse_size_opt("tier size", c2 + 1, &tc.size, err, errlen);
		if (r < 0)
			return r;
		tc.path = strndup(c1 + 1, (size_t)(c2 - (c1 + 1)));
		if (!tc.path)
			return -ENOMEM;
	}
	if (tc.size == 0) {
		free(tc.path);
		return fail(err, errlen, "tier '%s' has size zero", tc.name);
	}
	*ret = tc;
	return 0;
}

int options_add_tier(struct tierfs_options *opt, struct tier_conf *tc,
		     char *err, size_t errlen)
{
	int r = 0;

	if (opt->ntiers >= TIER_MAX_CONF) {
		r = fail(err, errlen, "too many tiers: at most %d",
			 TIER_MAX_CONF);
		goto out_free;
	}
	for (unsigned i = 0; i < opt->ntiers; i++) {
		const struct tier_conf *o = &opt->tiers[i];

		if (!strcmp(o->name, tc->name)) {
			r = fail(err, errlen, "duplicate tier name '%s'",
				 tc->name);
			goto out_free;
		}
		if (o->path && tc->path && !strcmp(o->path, tc->path)) {
			r = fail(err, errlen,
				 "tiers '%s' and '%s' use the same path '%s'",
				 o->name, tc->name, tc->path);
			goto out_free;
		}
	}
	opt->tiers[opt->ntiers++] = *tc;
	tc->path = NULL;
	return 0;

out_free:
	free(tc->path);
	tc->path = NULL;
	return r;
}

static int parse_uint(const char *what, const char *s, uint64_t max,
		      uint64_t *ret, char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || v > max || s[0] == '-')
		return fail(err, errlen, "bad %s '%s': expected a whole number up to %llu",
			    what, s, (unsigned long long)max);
	*ret = v;
	return 0;
}

/* The boolean setting named @key (underscore spelling), or NULL. */
static bool *flag_key(struct tierfs_options *opt, const char *key)
{
	if (!strcmp(key, "no_migrate") || !strcmp(key, "nomigrate"))
		return &opt->no_migrate;
	if (!strcmp(key, "no_writeback_cache"))
		return &opt->no_writeback_cache;
	if (!strcmp(key, "no_kernel_features"))
		return &opt->no_kernel_features;
	if (!strcmp(key, "no_splice"))
		return &opt->no_splice;
	if (!strcmp(key, "no_memory_follow"))
		return &opt->no_memory_follow;
	return NULL;
}

/* The index of @value in @names (an enum's spellings), or -1. */
static int name_index(const char *value, const char *const *names,
		      size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(value, names[i]))
			return (int)i;
	return -1;
}

/*
 * Set global setting @key (underscore spelling) from @value.  Shared by
 * --long-options, -o key=value and the config file's [global] section.
 * Return: 0, -ENOENT for a key that is not ours (the caller decides),
 * or -EINVAL with a message.
 */
int set_global(struct tierfs_options *opt, const char *key, const char *value,
	       char *err, size_t errlen)
{
	uint64_t v = 0; /* set by every parser that succeeds */
	int r;

	bool *flag = flag_key(opt, key);

	if (flag) {
		/* a bare flag on the command line; a boolean in the file */
		if (!value || !strcmp(value, "1") || !strcmp(value, "true") ||
		    !strcmp(value, "yes") || !strcmp(value, "on"))
			*flag = true;
		else if (!strcmp(value, "0") || !strcmp(value, "false") ||
			 !strcmp(value, "no") || !strcmp(value, "off"))
			*flag = false;
		else
			return fail(err, errlen,
				    "bad value '%s' for %s: use true or false",
				    value, key);
		return 0;
	}
	if (strcmp(key, "extent_size") && strcmp(key, "high_watermark") &&
	    strcmp(key, "low_watermark") && strcmp(key, "migrate_bw") &&
	    strcmp(key, "heat_half_life") && strcmp(key, "promote_passes") &&
	    strcmp(key, "dirty_max") && strcmp(key, "max_inodes") &&
	    strcmp(key, "max_xattr_bytes") && strcmp(key, "transport") &&
	    strcmp(key, "page_cache") && strcmp(key, "memory_reserve") &&
	    strcmp(key, "tier_timeout") && strcmp(key, "io"))
		return -ENOENT;
	if (!value)
		return fail(err, errlen, "'%s' needs a value", key);

	if (!strcmp(key, "transport")) {
		static const char *const names[] = { "auto", "uring", "dev" };
		int i = name_index(value, names, ARRAY_SIZE(names));

		if (i < 0)
			return fail(err, errlen,
				    "bad transport '%s': use auto, uring or dev",
				    value);
		opt->transport = (enum tierfs_transport)i;
		opt->transport_set = true;
		return 0;
	}
	if (!strcmp(key, "io")) {
		static const char *const names[] = { "auto", "tiered", "native" };
		int i = name_index(value, names, ARRAY_SIZE(names));

		if (i < 0)
			return fail(err, errlen,
				    "bad io mode '%s': use auto, tiered or native",
				    value);
		opt->io = (enum tierfs_io)i;
		opt->io_set = true;
		return 0;
	}
	if (!strcmp(key, "page_cache")) {
		static const char *const names[] = { "keep", "drop", "only" };
		int i = name_index(value, names, ARRAY_SIZE(names));

		if (i < 0)
			return fail(err, errlen,
				    "bad page cache mode '%s': use keep, drop or only",
				    value);
		opt->page_cache = (enum tierfs_page_cache)i;
		opt->page_cache_set = true;
		return 0;
	}

	if (!strcmp(key, "extent_size")) {
		r = parse_size_opt("extent size", value, &v, err, errlen);
		if (!r)
			r = check_extent_size(v, value, err, errlen);
		if (!r)
			opt->extent_size = v;
	} else if (!strcmp(key, "high_watermark")) {
		r = parse_uint("high watermark", value, 100, &v, err, errlen);
		if (!r && v == 0)
			r = fail(err, errlen, "high watermark must be 1..100");
		if (!r)
			opt->high_wm = (int)v;
	} else if (!strcmp(key, "low_watermark")) {
		r = parse_uint("low watermark", value, 99, &v, err, errlen);
		if (!r) {
			opt->low_wm = (int)v;
			opt->low_wm_set = true;
		}
	} else if (!strcmp(key, "migrate_bw")) {
		r = parse_size_opt("migration bandwidth", value, &v, err,
				   errlen);
		if (!r) {
			opt->migrate_bw = v;
			opt->migrate_bw_set = true;
		}
	} else if (!strcmp(key, "memory_reserve")) {
		r = parse_size_opt("memory reserve", value, &v, err, errlen);
		if (!r && v == 0)
			r = fail(err, errlen, "memory reserve must be more than 0 (--no-memory-follow turns the follower off)");
		if (!r)
			opt->memory_reserve = v;
	} else if (!strcmp(key, "dirty_max")) {
		r = parse_size_opt("dirty limit", value, &v, err, errlen);
		if (!r && v < 4096)
			r = fail(err, errlen, "dirty limit must be at least 4K");
		if (!r)
			opt->dirty_max = v;
	} else if (!strcmp(key, "max_inodes")) {
		/* K, M, G suffixes as tmpfs's nr_inodes takes them */
		r = parse_size_opt("inode limit", value, &v, err, errlen);
		if (!r) {
			opt->max_inodes = v;
			opt->max_inodes_set = true;
		}
	} else if (!strcmp(key, "max_xattr_bytes")) {
		r = parse_size_opt("xattr limit", value, &v, err, errlen);
		if (!r) {
			opt->max_xattr_bytes = v;
			opt->max_xattr_bytes_set = true;
		}
	} else if (!strcmp(key, "tier_timeout")) {
		r = parse_uint("tier timeout", value, 86400, &v, err, errlen);
		if (!r) {
			opt->tier_timeout = (uint32_t)v;
			opt->tier_timeout_set = true;
		}
	} else if (!strcmp(key, "heat_half_life")) {
		r = parse_uint("heat half-life", value, 86400, &v, err, errlen);
		if (!r && v == 0)
			r = fail(err, errlen, "heat half-life must be at least 1 second");
		if (!r)
			opt->half_life = (uint32_t)v;
	} else {
		r = parse_uint("promote passes", value, 1000, &v, err, errlen);
		if (!r && v == 0)
			r = fail(err, errlen, "promote passes must be at least 1");
		if (!r)
			opt->promote_passes = (uint32_t)v;
	}
	return r;
}

void options_init(struct tierfs_options *opt)
{
	memset(opt, 0, sizeof(*opt));
}

/* Append "@o" to the comma-joined fuse option string. */
int add_fuse_opt(struct tierfs_options *opt, const char *o, size_t n)
{
	size_t old = opt->fuse_opts ? strlen(opt->fuse_opts) : 0;
	char *s = realloc(opt->fuse_opts, old + n + 2);

	if (!s)
		return -ENOMEM;
	if (old)
		s[old++] = ',';
	memcpy(s + old, o, n);
	s[old + n] = '\0';
	opt->fuse_opts = s;
	return 0;
}

/* Split a -o list: our keys are taken, the rest goes to libfuse. */
int parse_o(struct tierfs_options *opt, const char *list, char *err,
	    size_t errlen)
{
	const char *p = list;

	while (*p) {
		const char *end = strchrnul(p, ',');
		size_t n = (size_t)(end - p);
		int r = 0;

		char *item = strndup(p, n);
		char *eq;

		if (!item)
			return -ENOMEM;
		eq = strchr(item, '=');
		if (eq)
			*eq = '\0';
		r = strcmp(item, "tier") ? set_global(opt, item, eq ? eq + 1 : NULL,
						      err, errlen)
					 : -ENOENT;
		free(item);
		if (r != -ENOENT) {
			/* ours, set or refused */
			opt->own_o++;
		} else if (n >= 5 && !strncmp(p, "tier=", 5)) {
			char *v = strndup(p + 5, n - 5);
			struct tier_conf tc;

			opt->own_o++;
			if (!v)
				return -ENOMEM;
			r = options_parse_tier(v, &tc, err, errlen);
			if (!r)
				r = options_add_tier(opt, &tc, err, errlen);
			free(v);
		} else if (n > 0) {
			r = add_fuse_opt(opt, p, n);
		} else {
			r = 0;
		}
		if (r < 0)
			return r;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* "--name=value" or "--name value": returns the value or NULL. */
static const char *long_value(int argc, char **argv, int *i,
			      const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] == '\0' && *i + 1 < argc)
		return argv[++*i];
	return NULL;
}

static bool is_long(const char *a, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(a, name, n) && (a[n] == '\0' || a[n] == '=');
}

/* The long option naming a global setting that @a spells, or NULL. */
static const char *global_long(const char *a)
{
	static const char *const names[] = {
		"--extent-size", "--high-watermark", "--low-watermark",
		"--migrate-bw", "--heat-half-life", "--promote-passes",
		"--dirty-max", "--max-inodes", "--max-xattr-bytes",
		"--no-migrate", "--no-writeback-cache", "--no-kernel-features",
		"--no-splice", "--transport", "--page-cache",
		"--memory-reserve", "--no-memory-follow", "--tier-timeout",
		"--io",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (is_long(a, names[i]))
			return names[i];
	return NULL;
}

int options_parse_args(int argc, char **argv, struct tierfs_options *opt,
		       char *err, size_t errlen)
{
	const char *pos[3];
	int npos = 0;
	int r;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v;

		if (is_long(a, "--tier")) {
			struct tier_conf tc;

			v = long_value(argc, argv, &i, "--tier");
			if (!v)
				return fail(err, errlen, "--tier needs a value");
			r = options_parse_tier(v, &tc, err, errlen);
			if (!r)
				r = options_add_tier(opt, &tc, err, errlen);
			if (r < 0)
				return r;
		} else if (!strncmp(a, "--", 2) && global_long(a)) {
			char key[32];
			const char *name = global_long(a);

			snprintf(key, sizeof(key), "%s", name + 2);
			for (char *k = key; *k; k++)
				if (*k == '-')
					*k = '_';
			if (flag_key(opt, key)) {
				/* --no-migrate, or --no-migrate=false */
				v = strchr(a, '=') ? strchr(a, '=') + 1 : NULL;
			} else {
				v = long_value(argc, argv, &i, name);
				if (!v)
					return fail(err, errlen,
						    "%s needs a value", name);
			}
			r = set_global(opt, key, v, err, errlen);
			if (r < 0)
				return r;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			opt->show_help = true;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			opt->show_version = true;
		} else if (!strcmp(a, "--test-clock")) {
			/* tests only (options.h): no -o, no config key */
			opt->test_clock = true;
		} else if (!strcmp(a, "-f")) {
			opt->foreground = true;
		} else if (!strcmp(a, "-d")) {
			opt->debug = true;
			opt->foreground = true;
		} else if (!strcmp(a, "-s")) {
			opt->single_thread = true;
		} else if (!strncmp(a, "-o", 2)) {
			v = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v)
				return fail(err, errlen, "-o needs a value");
			r = parse_o(opt, v, err, errlen);
			if (r < 0)
				return r;
		} else if (a[0] == '-' && a[1] != '\0') {
			return fail(err, errlen,
				    "unknown option '%s' (see tierfs --help)",
				    a);
		} else {
			if (npos == 2)
				return fail(err, errlen,
					    "too many arguments: expected [CONFIG_FILE] MOUNTPOINT");
			pos[npos++] = a;
		}
	}
	if (opt->show_help || opt->show_version)
		return 0;
	if (npos == 0)
		return fail(err, errlen,
			    "no mount point given (usage: tierfs [OPTIONS] [CONFIG_FILE] MOUNTPOINT)");
	if (npos == 2) {
		r = options_source_is_spec(pos[0], err, errlen);
		if (r < 0)
			return r;
		if (r)
			opt->source = strdup(pos[0]);
		else
			opt->config_file = strdup(pos[0]);
		if (!opt->source && !opt->config_file)
			return -ENOMEM;
	}
	opt->mountpoint = strdup(pos[npos - 1]);
	if (!opt->mountpoint)
		return -ENOMEM;
	return 0;
}

int options_source_is_spec(const char *arg, char *err, size_t errlen)
{
	const char *p;

	if (!strcmp(arg, "tierfs") || !strcmp(arg, "tierfs:default"))
		return 1;
	if (strncmp(arg, "tierfs:", 7))
		return 0;
	/* tierfs:NAME+NAME..., as mount_source() writes it */
	for (p = arg + 7;;) {
		const char *end = strchrnul(p, '+');
		size_t n = (size_t)(end - p);
		char name[TIER_CONF_NAME_MAX + 1];

		if (n == 0 || n > TIER_CONF_NAME_MAX)
			break;
		memcpy(name, p, n);
		name[n] = '\0';
		if (!tier_name_chars_ok(name))
			break;
		if (!*end)
			return 1;
		p = end + 1;
	}
	return fail(err, errlen,
		    "bad source '%s': give a config file, or tierfs:default (no config file: the tiers from -o tier=... or the default stack), or tierfs:NAME+NAME naming the tiers",
		    arg);
}

/* Is the @n bytes at @p the word @w? */
static bool word_is(const char *p, size_t n, const char *w)
{
	return strlen(w) == n && !strncmp(p, w, n);
}

int options_mount_flags(struct tierfs_options *opt)
{
	bool nosuid = false, nodev = false;
	char *old = opt->fuse_opts;
	int r = 0;

	opt->fuse_opts = NULL;
	for (const char *p = old; p && *p;) {
		const char *end = strchrnul(p, ',');
		size_t n = (size_t)(end - p);

		if (word_is(p, n, "allow_suid"))
			opt->allow_suid = true;
		else if (word_is(p, n, "allow_dev"))
			opt->allow_dev = true;
		else if (word_is(p, n, "nosuid"))
			nosuid = true;
		else if (word_is(p, n, "nodev"))
			nodev = true;
		else if (n && !word_is(p, n, "suid") && !word_is(p, n, "dev"))
			r = r ? r : add_fuse_opt(opt, p, n);
		p = *end ? end + 1 : end;
	}
	free(old);
	if (!r)
		r = add_fuse_opt(opt, opt->allow_suid && !nosuid ? "suid" : "nosuid",
				 opt->allow_suid && !nosuid ? 4 : 6);
	if (!r)
		r = add_fuse_opt(opt, opt->allow_dev && !nodev ? "dev" : "nodev",
				 opt->allow_dev && !nodev ? 3 : 5);
	return r;
}

/*
 * The default file tier's directory, /var/tmp/tierfs-$UID.  /var/tmp is
 * world-writable, so an existing entry must be our own real directory,
 * not someone else's or a symlink.
 */
static int default_file_dir(char *path, size_t len, char *err, size_t errlen)
{
	struct stat st;

	snprintf(path, len, "%s/tierfs-%u", DEFAULT_FILE_TIER_PARENT,
		 (unsigned)getuid());
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return fail(err, errlen, "cannot create '%s': %s", path,
			    strerror(errno));
	if (lstat(path, &st) < 0)
		return fail(err, errlen, "cannot use '%s': %s", path,
			    strerror(errno));
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return fail(err, errlen,
			    "'%s' is not a directory owned by uid %u; remove it or give tiers explicitly",
			    path, (unsigned)getuid());
	return 0;
}

/*
 * The memory @tc holds at most: a RAM tier its size; a PMem or file
 * tier on tmpfs or ramfs (/dev/shm, /run, a RAM disk mounted by hand)
 * its size too, because every byte it stores there is a page of memory,
 * but no more than the free space there (a larger one is refused by the
 * free-space check, with its own message); anything else 0.  A path
 * that cannot be statfs()ed counts as not memory: the tier's own setup
 * then fails with the clearer message.
 */
static uint64_t tier_memory(const struct tier_conf *tc, const char **ret_fs)
{
	struct statfs sf;

	*ret_fs = NULL;
	if (tier_kind_caps(tc->kind) & TIER_CAP_MEMORY)
		return tc->size;
	if (!tc->path || statfs(tc->path, &sf) < 0 ||
	    (sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC))
		return 0;
	if (sf.f_type == TMPFS_MAGIC) {
		*ret_fs = "tmpfs";
		return MIN(tc->size, (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize);
	}
	*ret_fs = "ramfs";
	return tc->size; /* ramfs reports no free space */
}

int options_check_memory(const struct tierfs_options *opt,
			 const struct mem_limit *ml, char *err,
			 size_t errlen)
{
	char names[160] = "", a[32], b[32], c[32], d[32], why[128] = "";
	uint64_t sum = 0, usable = mem_usable(ml), total = mem_total(ml);
	unsigned n = 0;
	size_t len = 0;

	for (unsigned i = 0; i < opt->ntiers; i++) {
		const struct tier_conf *tc = &opt->tiers[i];
		const char *fstype;
		uint64_t m = tier_memory(tc, &fstype);

		if (!m)
			continue;
		sum += m;
		if (len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len,
						"%s'%s'", n ? ", " : "",
						tc->name);
		/* the first tier that is memory by where it lives, not by
		 * kind: say so, or the admin sees a "file" tier refused as
		 * memory and wonders why */
		if (fstype && !why[0])
			snprintf(why, sizeof(why), " ('%s' is on %s, which is memory)",
				 tc->name, fstype);
		n++;
	}
	if (sum <= usable)
		return 0;
	return fail(err, errlen,
		    "%s %s (%s) %s larger than the memory tierfs may use, %s: %s %s less a margin of %s%s",
		    n == 1 ? "memory tier" : "memory tiers", names,
		    size_format(sum, a, sizeof(a)), n == 1 ? "is" : "are",
		    size_format(usable, b, sizeof(b)),
		    ml->cgroup < ml->phys ? "the cgroup's memory limit"
					  : "physical memory",
		    size_format(total, c, sizeof(c)),
		    size_format(total - usable, d, sizeof(d)), why);
}

/* The embedded default stack: RAM of a quarter of memory (the smaller
 * of physical memory and the cgroup's limit) over a file tier of half
 * the free space under /var/tmp. */
static int default_tiers(struct tierfs_options *opt,
			 const struct mem_limit *ml, char *err, size_t errlen)
{
	struct tier_conf ram = { .name = "ram", .kind = TIER_RAM };
	struct tier_conf file = { .name = "disk", .kind = TIER_FILE };
	char path[256];
	struct statvfs sv;
	int r;

	ram.size = MIN(mem_total(ml) / 4, mem_usable(ml));
	ram.size -= ram.size % opt->extent_size;
	r = options_add_tier(opt, &ram, err, errlen);
	if (r < 0)
		return r;

	r = default_file_dir(path, sizeof(path), err, errlen);
	if (r < 0)
		return r;
	if (statvfs(path, &sv) < 0)
		return fail(err, errlen, "cannot stat '%s': %s", path,
			    strerror(errno));
	file.size = (uint64_t)sv.f_bavail * sv.f_frsize / 2;
	file.size -= file.size % opt->extent_size;
	if (file.size < opt->extent_size)
		return 0; /* no room on disk: RAM alone */
	file.path = strdup(path);
	if (!file.path)
		return -ENOMEM;
	return options_add_tier(opt, &file, err, errlen);
}

int options_finish(struct tierfs_options *opt, char *err, size_t errlen)
{
	struct mem_limit ml;
	int r;

	if (!opt->extent_size)
		opt->extent_size = DEFAULT_EXTENT_SIZE;
	if (!opt->high_wm)
		opt->high_wm = DEFAULT_HIGH_WATERMARK;
	if (!opt->low_wm_set)
		opt->low_wm = MIN(DEFAULT_LOW_WATERMARK, opt->high_wm - 1);
	if (opt->low_wm >= opt->high_wm)
		return fail(err, errlen,
			    "low watermark (%d%%) must be below the high watermark (%d%%)",
			    opt->low_wm, opt->high_wm);
	if (!opt->migrate_bw_set)
		opt->migrate_bw = DEFAULT_MIGRATE_BW;
	if (!opt->half_life)
		opt->half_life = DEFAULT_HEAT_HALF_LIFE;
	if (!opt->promote_passes)
		opt->promote_passes = DEFAULT_PROMOTE_PASSES;
	if (!opt->tier_timeout_set)
		opt->tier_timeout = DEFAULT_TIER_TIMEOUT;
	if (mem_probe(&ml) < 0)
		return fail(err, errlen,
			    "cannot tell how much memory there is: physical memory unknown");
	if (opt->ntiers == 0) {
		r = default_tiers(opt, &ml, err, errlen);
		if (r < 0)
			return r;
	}
	if (!opt->max_inodes_set)
		opt->max_inodes = MAX(mem_total(&ml) / DEFAULT_MEM_PER_INODE,
				      UINT64_C(1024));
	if (!opt->max_xattr_bytes_set)
		opt->max_xattr_bytes = MAX(mem_total(&ml) / DEFAULT_XATTR_MEM_DIV,
					   UINT64_C(1) << 20);
	for (unsigned i = 0; i < opt->ntiers; i++) {
		char a[32], b[32];

		if (opt->tiers[i].size < opt->extent_size)
			return fail(err, errlen,
				    "tier '%s' (%s) is smaller than one extent (%s)",
				    opt->tiers[i].name,
				    size_format(opt->tiers[i].size, a, sizeof(a)),
				    size_format(opt->extent_size, b, sizeof(b)));
	}
	return options_check_memory(opt, &ml, err, errlen);
}

void options_release(struct tierfs_options *opt)
{
	for (unsigned i = 0; i < opt->ntiers; i++)
		free(opt->tiers[i].path);
	free(opt->config_file);
	free(opt->source);
	free(opt->mountpoint);
	free(opt->fuse_opts);
	options_init(opt);
}
