// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_options.c -- Check suite for fs/options.h: --tier specs, the
 * command line, the INI config file, defaults, and freeing.
 *
 * Every failure must leave one line of text in @err: not empty, no
 * newline, and starting with the message this file expects, so that a
 * reworded message shows up here first.  Under -Db_sanitize=address a
 * path or string that is not freed on any path is a failure.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "options.h"
#include "options_mem.h"
#include "tier.h"
#include "macro.h"
#include "tap.h"
#include "banned.h"

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* Check that @err holds one non-empty line starting with @prefix. */
static void t_assert_err(const char *err, const char *prefix)
{
	ck_assert_msg(err[0] != '\0', "empty error message");
	ck_assert_msg(!strchr(err, '\n'), "newline in error \"%s\"", err);
	ck_assert_uint_lt(strlen(err), OPT_ERR_MAX);
	if (prefix)
		ck_assert_msg(!strncmp(err, prefix, strlen(prefix)),
			      "error \"%s\" does not start with \"%s\"", err,
			      prefix);
}

static void t_assert_err_has(const char *err, const char *part)
{
	t_assert_err(err, NULL);
	ck_assert_msg(strstr(err, part) != NULL,
		      "error \"%s\" does not contain \"%s\"", err, part);
}

/* ---- options_parse_tier ------------------------------------------ */

#define NAME32 "abcdefghijklmnopqrstuvwxyz012345"

static const struct good_tier {
	const char *spec;
	const char *name;
	int kind;
	const char *path; /* NULL for ram */
	uint64_t size;
} good_tiers[] = {
	{ "ram=ram:8G", "ram", TIER_RAM, NULL, 8 * GiB },
	{ "nvme=file:/scratch/nvme:400G", "nvme", TIER_FILE, "/scratch/nvme",
	  400 * GiB },
	{ "x=file:/a:b:1G", "x", TIER_FILE, "/a:b", GiB },
	{ "x=file:/a::1G", "x", TIER_FILE, "/a:", GiB },
	{ "pm=pmem:/dev/dax0.0:16G", "pm", TIER_PMEM, "/dev/dax0.0", 16 * GiB },
	{ "f=file:relative/dir:1M", "f", TIER_FILE, "relative/dir", MiB },
	{ "f=file:/with space:4KiB", "f", TIER_FILE, "/with space", 4 * KiB },
	{ "A_b-9=ram:4096", "A_b-9", TIER_RAM, NULL, 4096 },
	{ "r=ram:1", "r", TIER_RAM, NULL, 1 }, /* options_finish's job */
	{ NAME32 "=ram:1G", NAME32, TIER_RAM, NULL, GiB },
};

START_TEST(test_options_parse_tier_good)
{
	const struct good_tier *c = &good_tiers[_i];
	struct tier_conf tc;
	char err[OPT_ERR_MAX] = "";
	int r;

	memset(&tc, 0x5a, sizeof(tc));
	r = options_parse_tier(c->spec, &tc, err, sizeof(err));
	ck_assert_msg(r == 0, "'%s': %d (%s)", c->spec, r, err);
	ck_assert_str_eq(tc.name, c->name);
	ck_assert_int_eq(tc.kind, c->kind);
	if (c->path)
		ck_assert_pstr_eq(tc.path, c->path);
	else
		ck_assert_ptr_null(tc.path);
	ck_assert_uint_eq(tc.size, c->size);
	free(tc.path);
}
END_TEST

static const struct bad_tier {
	const char *spec;
	const char *prefix; /* the message must start with this */
} bad_tiers[] = {
	/* no '=' or nothing before it */
	{ "", "bad tier '': expected NAME=KIND:SIZE or NAME=KIND:PATH:SIZE" },
	{ "ramram:8G", "bad tier 'ramram:8G': expected NAME=KIND:SIZE" },
	{ "=ram:8G", "bad tier '=ram:8G': expected NAME=KIND:SIZE" },
	/* names */
	{ "a b=ram:1G", "bad tier name 'a b': use letters, digits" },
	{ "a.b=ram:1G", "bad tier name 'a.b'" },
	{ "a/b=ram:1G", "bad tier name 'a/b'" },
	{ "a:b=ram:1G", "bad tier name 'a:b'" },
	{ "\xc3\xa9=ram:1G", "bad tier name '\xc3\xa9'" },
	{ NAME32 "x=ram:1G",
	  "tier name '" NAME32 "x' is longer than 32 characters" },
	/* kinds */
	{ "x=ram", "bad tier 'x=ram': expected NAME=KIND:SIZE" },
	{ "x=", "bad tier 'x=': expected" },
	{ "x=disk:1G", "unknown tier kind 'disk' in 'x=disk:1G'" },
	{ "x=RAM:1G", "unknown tier kind 'RAM'" },
	{ "x=:1G", "unknown tier kind '' in 'x=:1G'" },
	{ "x=averyveryverylongkind:/p:1G", "unknown tier kind '" },
	/* paths */
	{ "x=ram:/p:1G", "bad tier 'x=ram:/p:1G': a ram tier takes no path" },
	{ "x=file:1G", "bad tier 'x=file:1G': a file tier needs a path" },
	{ "x=file::1G", "bad tier 'x=file::1G': a file tier needs a path" },
	{ "x=pmem:1G", "bad tier 'x=pmem:1G': a pmem tier needs a path" },
	/* sizes */
	{ "x=ram:12Q", "cannot parse tier size '12Q': expected a number" },
	{ "x=ram:", "cannot parse tier size ''" },
	{ "x=ram:-5M", "cannot parse tier size '-5M'" },
	{ "x=ram:1.5G", "cannot parse tier size '1.5G'" },
	{ "x=file:/p:", "cannot parse tier size ''" },
	{ "x=file:/p:1X", "cannot parse tier size '1X'" },
	{ "x=ram:99999999999P", "tier size '99999999999P' is too large" },
	{ "x=ram:0", "tier 'x' has size zero" },
	{ "x=ram:0G", "tier 'x' has size zero" },
	{ "x=file:/p:0", "tier 'x' has size zero" }, /* path freed: ASan */
};

START_TEST(test_options_parse_tier_bad)
{
	const struct bad_tier *c = &bad_tiers[_i];
	struct tier_conf tc, poison;
	char err[OPT_ERR_MAX] = "";

	memset(&poison, 0x5a, sizeof(poison));
	tc = poison;
	ck_assert_int_eq(options_parse_tier(c->spec, &tc, err, sizeof(err)),
			 -EINVAL);
	t_assert_err(err, c->prefix);
	ck_assert_msg(!memcmp(&tc, &poison, sizeof(tc)),
		      "'%s': @ret written on failure", c->spec);
}
END_TEST

/* A short @err buffer still gets a terminated (truncated) message. */
START_TEST(test_options_parse_tier_short_err)
{
	struct tier_conf tc;
	char err[8];

	memset(err, 'x', sizeof(err));
	ck_assert_int_eq(options_parse_tier("x=disk:1G", &tc, err, sizeof(err)),
			 -EINVAL);
	ck_assert_uint_eq(strlen(err), sizeof(err) - 1);
}
END_TEST

/* ---- options_add_tier -------------------------------------------- */

static struct tierfs_options opt;

static void opt_setup(void)
{
	memset(&opt, 0, sizeof(opt));
}

static void opt_teardown(void)
{
	options_release(&opt);
}

static int t_add(const char *spec, char *err, size_t errlen)
{
	struct tier_conf tc;
	int r = options_parse_tier(spec, &tc, err, errlen);

	ck_assert_msg(r == 0, "'%s': %s", spec, err);
	r = options_add_tier(&opt, &tc, err, errlen);
	ck_assert_ptr_null(tc.path); /* taken or freed either way */
	return r;
}

START_TEST(test_options_add_tier_takes_path)
{
	struct tier_conf tc;
	char err[OPT_ERR_MAX] = "";
	char *path;

	ck_assert_int_eq(
		options_parse_tier("a=file:/p:1G", &tc, err, sizeof(err)), 0);
	path = tc.path;
	ck_assert_int_eq(options_add_tier(&opt, &tc, err, sizeof(err)), 0);
	ck_assert_ptr_null(tc.path);
	ck_assert_uint_eq(opt.ntiers, 1);
	ck_assert_ptr_eq(opt.tiers[0].path, path);
	ck_assert_str_eq(opt.tiers[0].name, "a");
	ck_assert_uint_eq(opt.tiers[0].size, GiB);
	/* two ram tiers both have no path: not a duplicate */
	ck_assert_int_eq(t_add("r1=ram:1G", err, sizeof(err)), 0);
	ck_assert_int_eq(t_add("r2=ram:1G", err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.ntiers, 3);
}
END_TEST

START_TEST(test_options_add_tier_duplicate_name)
{
	char err[OPT_ERR_MAX] = "";

	ck_assert_int_eq(t_add("a=file:/p:1G", err, sizeof(err)), 0);
	ck_assert_int_eq(t_add("a=file:/q:1G", err, sizeof(err)), -EINVAL);
	t_assert_err(err, "duplicate tier name 'a'");
	ck_assert_int_eq(t_add("a=ram:1G", err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(opt.ntiers, 1);
	ck_assert_str_eq(opt.tiers[0].path, "/p");
}
END_TEST

START_TEST(test_options_add_tier_duplicate_path)
{
	char err[OPT_ERR_MAX] = "";

	ck_assert_int_eq(t_add("a=file:/p:1G", err, sizeof(err)), 0);
	ck_assert_int_eq(t_add("b=pmem:/p:1G", err, sizeof(err)), -EINVAL);
	t_assert_err(err, "tiers 'a' and 'b' use the same path '/p'");
	ck_assert_uint_eq(opt.ntiers, 1);
}
END_TEST

START_TEST(test_options_add_tier_too_many)
{
	char err[OPT_ERR_MAX] = "";
	char spec[64];

	for (int i = 0; i < TIER_MAX_CONF; i++) {
		snprintf(spec, sizeof(spec), "t%d=file:/p%d:1G", i, i);
		ck_assert_int_eq(t_add(spec, err, sizeof(err)), 0);
	}
	ck_assert_uint_eq(opt.ntiers, TIER_MAX_CONF);
	ck_assert_int_eq(t_add("one_more=file:/q:1G", err, sizeof(err)),
			 -EINVAL);
	t_assert_err(err, "too many tiers: at most 8");
	ck_assert_uint_eq(opt.ntiers, TIER_MAX_CONF);
}
END_TEST

/* ---- options_parse_args ------------------------------------------ */

#define ARGS_MAX 10

/*
 * Run options_parse_args() on "tierfs" followed by the NULL-terminated
 * @args.  The arguments are private heap copies: argv is writable, and
 * ASan sees any read past an argument's end.
 */
static int t_parse_args(const char *const *args, char *err, size_t errlen)
{
	char *argv[ARGS_MAX + 2];
	int argc = 0, r;

	argv[argc++] = strdup("tierfs");
	for (int i = 0; i < ARGS_MAX && args[i]; i++)
		argv[argc++] = strdup(args[i]);
	argv[argc] = NULL;
	for (int i = 0; i < argc; i++)
		ck_assert_ptr_nonnull(argv[i]);
	r = options_parse_args(argc, argv, &opt, err, errlen);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return r;
}

#define A(...) .argv = { __VA_ARGS__ }
#define OK(mnt) .ret = 0, .mountpoint = (mnt)
#define BAD(msg) .ret = -EINVAL, .err = (msg)

static const struct args_case {
	const char *argv[ARGS_MAX]; /* after "tierfs"; NULL-terminated */
	int ret;
	const char *err; /* prefix, when ret < 0 */
	/* the rest only when ret == 0 */
	const char *mountpoint;
	const char *config;
	const char *fuse_opts;
	uint64_t extent_size;
	unsigned ntiers;
	bool fg, debug, single, help, version;
	bool no_migrate, no_wb, no_kf, no_splice;
	bool drop; /* --page-cache drop */
	bool only; /* --page-cache only */
	bool no_follow; /* --no-memory-follow */
	bool test_clock; /* --test-clock (tests only) */
	uint64_t mem_reserve;
	uint64_t dirty_max;
	uint64_t max_inodes, max_xattr; /* with their _set flags */
} args_cases[] = {
	/* positionals */
	{ A("/mnt"), OK("/mnt") },
	{ A("/etc/t.conf", "/mnt"), OK("/mnt"), .config = "/etc/t.conf" },
	{ A("a", "b", "c"),
	  BAD("too many arguments: expected [CONFIG_FILE] MOUNTPOINT") },
	{ A(NULL), BAD("no mount point given (usage: ") },
	{ A("-f"), BAD("no mount point given") },
	{ A("-"), OK("-") },
	/* --tier */
	{ A("--tier", "ram=ram:8G", "/mnt"), OK("/mnt"), .ntiers = 1 },
	{ A("--tier=ram=ram:8G", "--tier=nvme=file:/n:1G", "/mnt"), OK("/mnt"),
	  .ntiers = 2 },
	{ A("/mnt", "--tier"), BAD("--tier needs a value") },
	{ A("--tier", "bad", "/mnt"), BAD("bad tier 'bad': expected") },
	{ A("--tier=", "/mnt"), BAD("bad tier '': expected") },
	{ A("--tier=a=ram:1G", "--tier", "a=ram:2G", "/mnt"),
	  BAD("duplicate tier name 'a'") },
	/* --extent-size */
	{ A("--extent-size", "64K", "/mnt"), OK("/mnt"),
	  .extent_size = 64 * KiB },
	{ A("--extent-size=64K", "/mnt"), OK("/mnt"), .extent_size = 64 * KiB },
	{ A("--extent-size=4K", "/mnt"), OK("/mnt"), .extent_size = 4 * KiB },
	{ A("--extent-size=1G", "/mnt"), OK("/mnt"), .extent_size = GiB },
	{ A("--extent-size", "3000", "/mnt"),
	  BAD("extent size '3000' must be a power of two between 4K and 1G") },
	{ A("--extent-size=1K", "/mnt"),
	  BAD("extent size '1K' must be a power of two") },
	{ A("--extent-size=2G", "/mnt"),
	  BAD("extent size '2G' must be a power of two") },
	{ A("--extent-size=0", "/mnt"),
	  BAD("extent size '0' must be a power of two") },
	{ A("--extent-size=12Q", "/mnt"),
	  BAD("cannot parse extent size '12Q'") },
	{ A("--extent-size=", "/mnt"), BAD("cannot parse extent size ''") },
	{ A("/mnt", "--extent-size"), BAD("--extent-size needs a value") },
	/* -o */
	{ A("-o", "allow_other,extent_size=2M", "/mnt"), OK("/mnt"),
	  .fuse_opts = "allow_other", .extent_size = 2 * MiB },
	{ A("-oallow_other,default_permissions", "/mnt"), OK("/mnt"),
	  .fuse_opts = "allow_other,default_permissions" },
	{ A("-o", "ro", "-o", "allow_other", "/mnt"), OK("/mnt"),
	  .fuse_opts = "ro,allow_other" },
	{ A("-o", ",ro,,", "/mnt"), OK("/mnt"), .fuse_opts = "ro" },
	{ A("-o", "tier=ram=ram:1G", "/mnt"), OK("/mnt"), .ntiers = 1 },
	{ A("-o", "tier=a=file:/x:1G,tier=b=ram:1G,ro", "/mnt"), OK("/mnt"),
	  .fuse_opts = "ro", .ntiers = 2 },
	{ A("-o", "extent_size=3000", "/mnt"),
	  BAD("extent size '3000' must be a power of two") },
	{ A("-o", "extent_size=", "/mnt"), BAD("cannot parse extent size ''") },
	{ A("-o", "tier=", "/mnt"), BAD("bad tier '': expected") },
	{ A("-o", "tier=x=disk:1G", "/mnt"), BAD("unknown tier kind 'disk'") },
	{ A("/mnt", "-o"), BAD("-o needs a value") },
	/* flags */
	{ A("-f", "/mnt"), OK("/mnt"), .fg = true },
	{ A("-d", "/mnt"), OK("/mnt"), .fg = true, .debug = true },
	{ A("-s", "/mnt"), OK("/mnt"), .single = true },
	{ A("-h"), OK(NULL), .help = true },
	{ A("--help"), OK(NULL), .help = true },
	{ A("-h", "/mnt"), OK(NULL), .help = true }, /* help wins */
	{ A("-V"), OK(NULL), .version = true },
	{ A("--version"), OK(NULL), .version = true },
	/* boolean settings: a bare flag, or =BOOL */
	{ A("--no-migrate", "/mnt"), OK("/mnt"), .no_migrate = true },
	{ A("--no-migrate=0", "/mnt"), OK("/mnt") },
	{ A("--no-migrate=false", "/mnt"), OK("/mnt") },
	{ A("--no-migrate=yes", "/mnt"), OK("/mnt"), .no_migrate = true },
	{ A("--no-migrate=2", "/mnt"),
	  BAD("bad value '2' for no_migrate: use true or false") },
	{ A("--no-writeback-cache", "/mnt"), OK("/mnt"), .no_wb = true },
	{ A("-o", "no_writeback_cache=1,no_kernel_features", "/mnt"),
	  OK("/mnt"), .no_wb = true, .no_kf = true },
	{ A("--no-kernel-features=off", "/mnt"), OK("/mnt") },
	{ A("--no-splice", "/mnt"), OK("/mnt"), .no_splice = true },
	{ A("-o", "no_splice=0", "/mnt"), OK("/mnt") },
	/* the memory follower (issue 18) */
	{ A("--memory-reserve", "300M", "/mnt"), OK("/mnt"),
	  .mem_reserve = 300u << 20 },
	{ A("-o", "memory_reserve=1G,no_memory_follow", "/mnt"), OK("/mnt"),
	  .mem_reserve = 1u << 30, .no_follow = true },
	{ A("--no-memory-follow", "/mnt"), OK("/mnt"), .no_follow = true },
	{ A("--memory-reserve", "0", "/mnt"),
	  BAD("memory reserve must be more than 0") },
	{ A("--memory-reserve", "12Q", "/mnt"), BAD("cannot parse memory reserve '12Q'") },
	{ A("--memory-reserve", "/mnt"), BAD("cannot parse memory reserve '/mnt'") },
	/* --page-cache */
	{ A("--page-cache", "drop", "/mnt"), OK("/mnt"), .drop = true },
	{ A("-o", "page_cache=keep", "/mnt"), OK("/mnt") },
	{ A("--page-cache=drop", "/mnt"), OK("/mnt"), .drop = true },
	{ A("--page-cache", "only", "/mnt"), OK("/mnt"), .only = true },
	{ A("-o", "page_cache=only", "/mnt"), OK("/mnt"), .only = true },
	{ A("--page-cache=sometimes", "/mnt"),
	  BAD("bad page cache mode 'sometimes': use keep, drop or only") },
	/* --dirty-max */
	{ A("--dirty-max", "64M", "/mnt"), OK("/mnt"), .dirty_max = 64 * MiB },
	{ A("-o", "dirty_max=4K", "/mnt"), OK("/mnt"), .dirty_max = 4 * KiB },
	{ A("--dirty-max=1K", "/mnt"),
	  BAD("dirty limit must be at least 4K") },
	{ A("--dirty-max=lots", "/mnt"), BAD("cannot parse dirty limit 'lots'") },
	/* --max-inodes, --max-xattr-bytes (issue 11); 0 = no limit */
	{ A("--max-inodes", "1M", "/mnt"), OK("/mnt"), .max_inodes = MiB },
	{ A("-o", "max_inodes=0", "/mnt"), OK("/mnt") },
	{ A("--max-inodes=many", "/mnt"),
	  BAD("cannot parse inode limit 'many'") },
	{ A("--max-xattr-bytes=64M", "/mnt"), OK("/mnt"),
	  .max_xattr = 64 * MiB },
	{ A("-o", "max_xattr_bytes=1K", "/mnt"), OK("/mnt"),
	  .max_xattr = KiB },
	{ A("--max-xattr-bytes", "/mnt"),
	  BAD("cannot parse xattr limit '/mnt'") },
	/* --test-clock, for tests: the command line only, no value */
	{ A("--test-clock", "/mnt"), OK("/mnt"), .test_clock = true },
	{ A("--test-clock=1", "/mnt"), BAD("unknown option '--test-clock=1'") },
	/* unknown options */
	{ A("-x", "/mnt"), BAD("unknown option '-x' (see tierfs --help)") },
	{ A("--bogus", "/mnt"), BAD("unknown option '--bogus'") },
	{ A("--tiers=a=ram:1G", "/mnt"), BAD("unknown option '--tiers=") },
	{ A("--extent-sizes=64K", "/mnt"),
	  BAD("unknown option '--extent-sizes=64K'") },
	{ A("-fd", "/mnt"), BAD("unknown option '-fd'") },
	/* everything together, positionals between options */
	{ A("-f", "--tier", "a=ram:1G", "/etc/t.conf", "-o", "allow_other",
	    "--extent-size=256K", "/mnt", "-s"),
	  OK("/mnt"), .config = "/etc/t.conf", .fuse_opts = "allow_other",
	  .extent_size = 256 * KiB, .ntiers = 1, .fg = true, .single = true },
};

#undef A
#undef OK
#undef BAD

START_TEST(test_options_parse_args_table)
{
	const struct args_case *c = &args_cases[_i];
	char err[OPT_ERR_MAX] = "";
	int r;

	r = t_parse_args(c->argv, err, sizeof(err));
	ck_assert_msg(r == c->ret, "case %d: ret %d, want %d (%s)", _i, r,
		      c->ret, err);
	if (r < 0) {
		t_assert_err(err, c->err);
	} else {
		ck_assert_pstr_eq(opt.mountpoint, c->mountpoint);
		ck_assert_pstr_eq(opt.config_file, c->config);
		ck_assert_pstr_eq(opt.fuse_opts, c->fuse_opts);
		ck_assert_uint_eq(opt.extent_size, c->extent_size);
		ck_assert_uint_eq(opt.ntiers, c->ntiers);
		ck_assert_int_eq(opt.foreground, c->fg);
		ck_assert_int_eq(opt.debug, c->debug);
		ck_assert_int_eq(opt.single_thread, c->single);
		ck_assert_int_eq(opt.show_help, c->help);
		ck_assert_int_eq(opt.show_version, c->version);
		ck_assert_int_eq(opt.no_migrate, c->no_migrate);
		ck_assert_int_eq(opt.no_writeback_cache, c->no_wb);
		ck_assert_int_eq(opt.no_kernel_features, c->no_kf);
		ck_assert_int_eq(opt.no_splice, c->no_splice);
		ck_assert_int_eq(opt.page_cache == PAGE_CACHE_DROP, c->drop);
		ck_assert_int_eq(opt.page_cache == PAGE_CACHE_ONLY, c->only);
		ck_assert_int_eq(opt.no_memory_follow, c->no_follow);
		ck_assert_int_eq(opt.test_clock, c->test_clock);
		ck_assert_uint_eq(opt.memory_reserve, c->mem_reserve);
		ck_assert_uint_eq(opt.dirty_max, c->dirty_max);
		ck_assert_uint_eq(opt.max_inodes, c->max_inodes);
		ck_assert_uint_eq(opt.max_xattr_bytes, c->max_xattr);
		/* given (even as 0) or not: options_finish() fills the rest */
		ck_assert_int_eq(opt.max_inodes_set,
				 c->max_inodes || strstr(c->argv[1] ? c->argv[1] : "",
							 "max_inodes"));
		ck_assert_int_eq(opt.max_xattr_bytes_set,
				 c->max_xattr != 0);
	}
	/* opt_teardown releases whatever was parsed, even on failure */
}
END_TEST

START_TEST(test_options_parse_args_tier_contents)
{
	static const char *const args[] = {
		"--tier", "fast=ram:8G", "-o", "tier=slow=file:/a:b:400G",
		"/mnt",	  NULL
	};
	char err[OPT_ERR_MAX] = "";

	ck_assert_int_eq(t_parse_args(args, err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.ntiers, 2);
	ck_assert_str_eq(opt.tiers[0].name, "fast");
	ck_assert_int_eq(opt.tiers[0].kind, TIER_RAM);
	ck_assert_ptr_null(opt.tiers[0].path);
	ck_assert_uint_eq(opt.tiers[0].size, 8 * GiB);
	ck_assert_str_eq(opt.tiers[1].name, "slow");
	ck_assert_int_eq(opt.tiers[1].kind, TIER_FILE);
	ck_assert_str_eq(opt.tiers[1].path, "/a:b");
	ck_assert_uint_eq(opt.tiers[1].size, 400 * GiB);
}
END_TEST

/* ---- options_load_config ----------------------------------------- */

static char tmpdir[64];
static char conf_path[128];

static void conf_setup(void)
{
	opt_setup();
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_options.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(conf_path, sizeof(conf_path), "%s/tierfs.conf", tmpdir);
}

static void conf_teardown(void)
{
	(void)unlink(conf_path);
	(void)rmdir(tmpdir);
	opt_teardown();
}

/* Write @text as the config file and point opt.config_file at it. */
static void t_write_conf(const char *text)
{
	FILE *f = fopen(conf_path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fputs(text, f) >= 0, 1);
	ck_assert_int_eq(fclose(f), 0);
	free(opt.config_file);
	opt.config_file = strdup(conf_path);
	ck_assert_ptr_nonnull(opt.config_file);
}

static const char good_conf[] = "; tierfs example\n"
				"[global]\n"
				"extent_size = 2M\n"
				"options = allow_other\n"
				"\n"
				"# the fast tier first\n"
				"[tier.fast]\n"
				"kind = ram\n"
				"size = 1G\n"
				"\n"
				"[tier.slow]\n"
				"kind = file\n"
				"path = /scratch/slow\n"
				"size = 100G\n";

START_TEST(test_options_load_config_good)
{
	char err[OPT_ERR_MAX] = "";

	t_write_conf(good_conf);
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.extent_size, 2 * MiB);
	ck_assert_pstr_eq(opt.fuse_opts, "allow_other");
	ck_assert_uint_eq(opt.ntiers, 2);
	ck_assert_str_eq(opt.tiers[0].name, "fast");
	ck_assert_int_eq(opt.tiers[0].kind, TIER_RAM);
	ck_assert_ptr_null(opt.tiers[0].path);
	ck_assert_uint_eq(opt.tiers[0].size, GiB);
	ck_assert_str_eq(opt.tiers[1].name, "slow");
	ck_assert_int_eq(opt.tiers[1].kind, TIER_FILE);
	ck_assert_pstr_eq(opt.tiers[1].path, "/scratch/slow");
	ck_assert_uint_eq(opt.tiers[1].size, 100 * GiB);
}
END_TEST

/* The metadata limits from [global]; the command line's win. */
START_TEST(test_options_load_config_limits)
{
	static const char *const args[] = { "--max-inodes=5", "conf",
					    "/mnt", NULL };
	char err[OPT_ERR_MAX] = "";

	t_write_conf("[global]\nmax_inodes = 2K\nmax_xattr_bytes = 3M\n");
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.max_inodes, 2 * KiB);
	ck_assert(opt.max_inodes_set);
	ck_assert_uint_eq(opt.max_xattr_bytes, 3 * MiB);
	ck_assert(opt.max_xattr_bytes_set);

	options_release(&opt);
	ck_assert_int_eq(t_parse_args(args, err, sizeof(err)), 0);
	t_write_conf("[global]\nmax_inodes = 2K\n");
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.max_inodes, 5);
	ck_assert(!opt.max_xattr_bytes_set);

	options_release(&opt);
	t_write_conf("[global]\nmax_xattr_bytes = lots\n");
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), -EINVAL);
	t_assert_err_has(err, "cannot parse xattr limit 'lots'");
}
END_TEST

/* page_cache from [global]; the command line's wins; a bad one is one
 * error. */
START_TEST(test_options_load_config_page_cache)
{
	static const char *const args[] = { "--page-cache=keep", "conf",
					    "/mnt", NULL };
	char err[OPT_ERR_MAX] = "";

	t_write_conf("[global]\npage_cache = drop\n");
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), 0);
	ck_assert_int_eq(opt.page_cache, PAGE_CACHE_DROP);

	options_release(&opt);
	ck_assert_int_eq(t_parse_args(args, err, sizeof(err)), 0);
	t_write_conf("[global]\npage_cache = drop\n");
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), 0);
	ck_assert_int_eq(opt.page_cache, PAGE_CACHE_KEEP);

	options_release(&opt);
	t_write_conf("[global]\npage_cache = often\n");
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), -EINVAL);
	t_assert_err_has(err, "bad page cache mode 'often'");
}
END_TEST

/* The command line's tiers and extent size win; -o options add up. */
START_TEST(test_options_load_config_cmdline_wins)
{
	static const char *const args[] = { "--tier",
					    "mine=file:/m:8G",
					    "-o",
					    "ro",
					    "--extent-size=64K",
					    "conf",
					    "/mnt",
					    NULL };
	char err[OPT_ERR_MAX] = "";

	ck_assert_int_eq(t_parse_args(args, err, sizeof(err)), 0);
	ck_assert_pstr_eq(opt.config_file, "conf");
	t_write_conf(good_conf);
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.ntiers, 1);
	ck_assert_str_eq(opt.tiers[0].name, "mine");
	ck_assert_pstr_eq(opt.tiers[0].path, "/m");
	ck_assert_uint_eq(opt.extent_size, 64 * KiB);
	ck_assert_pstr_eq(opt.fuse_opts, "ro,allow_other");
}
END_TEST

START_TEST(test_options_load_config_empty_file)
{
	char err[OPT_ERR_MAX] = "";

	t_write_conf("");
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.ntiers, 0);
	ck_assert_uint_eq(opt.extent_size, 0);
	ck_assert_ptr_null(opt.fuse_opts);
}
END_TEST

START_TEST(test_options_load_config_missing_file)
{
	char err[OPT_ERR_MAX] = "";
	char want[256];

	opt.config_file = strdup("/nonexistent/tierfs.conf");
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "cannot read config file '%s': %s",
		 "/nonexistent/tierfs.conf", strerror(ENOENT));
	t_assert_err(err, want);
	ck_assert_uint_eq(opt.ntiers, 0);
}
END_TEST

#define LONG10 "0123456789"
#define LONG100 LONG10 LONG10 LONG10 LONG10 LONG10 LONG10 LONG10 LONG10 \
	LONG10 LONG10
#define LONG300 LONG100 LONG100 LONG100

/*
 * Bad files.  @part must appear in the message; @line, when not 0, is
 * the line the message must name ("PATH: line N: ...").
 */
static const struct bad_conf {
	const char *text;
	int line;
	const char *part;
} bad_confs[] = {
	/* headers are checked as they come: the header's own line */
	{ "[bogus]\nkey = 1\n", 1,
	  "unknown section '[bogus]': use [global] or [tier.NAME]" },
	{ "[global]\nextent_size = 1M\n[empty]\n", 3,
	  "unknown section '[empty]'" },
	{ "[global]\n[global]\n", 2, "section '[global]' appears twice" },
	{ "[global]\nextent_size = 1M\nfoo = 1\n", 3,
	  "unknown key 'foo' in [global]" },
	{ "[tier.a]\nkind = ram\ncolour = red\nsize = 1G\n", 3,
	  "unknown key 'colour' in [tier.a]: use kind, path, size" },
	{ "[global]\nextent_size = 3000\n", 2,
	  "extent size '3000' must be a power of two" },
	{ "[global]\nextent_size = 12Q\n", 2,
	  "cannot parse extent size '12Q'" },
	{ "[global]\noptions = extent_size=1K\n", 2,
	  "extent size '1K' must be a power of two" },
	{ "[tier.a]\nkind = disk\n", 2, "unknown tier kind 'disk'" },
	{ "[tier.a]\nkind = ram\nsize = 12Q\n", 3,
	  "cannot parse tier size '12Q'" },
	{ "[tier.a]\nkind = ram\nsize = 0\n", 3, "tier 'a' has size zero" },
	{ "[tier.]\nkind = ram\n", 2, "bad tier section name '[tier.]'" },
	{ "[tier." NAME32 "x]\nkind = ram\n", 2, "bad tier section name" },
	{ "[tier.a b]\nkind = ram\nsize = 1G\n", 2, "bad tier name 'a b'" },
	{ "[tier.a/b]\nkind = ram\nsize = 1G\n", 2, "bad tier name 'a/b'" },
	/* missing keys, found when the section ends: at the end of file */
	{ "[tier.a]\nsize = 1G\n", 0, "tier 'a' has no kind" },
	{ "[tier.a]\nkind = ram\n", 0, "tier 'a' has no size" },
	{ "[tier.a]\nkind = file\nsize = 1G\n", 0, "tier 'a' has no path" },
	/* an empty value is no path either (found by tests/fuzz/fuzz_config) */
	{ "[tier.a]\nkind = file\npath =\nsize = 1G\n", 3,
	  "tier 'a' has an empty path" },
	{ "[tier.a]\nkind = pmem\nsize = 1G\npath =   \n", 4,
	  "tier 'a' has an empty path" },
	{ "[tier.a]\nkind = file\npath = /p\n", 0, "tier 'a' has no size" },
	{ "[tier.a]\nkind = ram\npath = /p\nsize = 1G\n", 0,
	  "tier 'a': a ram tier takes no path" },
	{ "[tier.a]\npath = /p\nsize = 1G\n", 0, "tier 'a' has no kind" },
	/* ... or when the next section starts */
	{ "[tier.a]\nsize = 1G\n[tier.b]\nkind = ram\nsize = 1G\n", 4,
	  "tier 'a' has no kind" },
	{ "[tier.a]\nkind = ram\npath = /p\nsize = 1G\n[global]\n"
	  "extent_size = 1M\n",
	  6, "tier 'a': a ram tier takes no path" },
	{ "[tier.a]\nkind = file\npath = /p\n[tier.b]\nkind = ram\n", 5,
	  "tier 'a' has no size" },
	/* duplicates and too many */
	{ "[tier.a]\nkind = ram\nsize = 1G\n[tier.b]\nkind = ram\nsize = 1G\n"
	  "[tier.a]\nkind = ram\nsize = 2G\n",
	  7, "section '[tier.a]' appears twice" },
	{ "[tier.a]\nkind = ram\n[tier.a]\nsize = 2G\n", 3,
	  "section '[tier.a]' appears twice" },
	{ "[tier.a]\nkind = file\npath = /p\nsize = 1G\n[tier.b]\nkind = file\n"
	  "path = /p\nsize = 1G\n",
	  0, "tiers 'a' and 'b' use the same path '/p'" },
	/* syntax */
	{ "[global]\nthis line has no equals sign\n", 2, "syntax error" },
	{ "[global\nextent_size = 1M\n", 1, "" },
	/* the first error wins; later lines do not overwrite it */
	{ "[global]\nfoo = 1\nbar = 2\n[bogus]\nx = 1\n", 2,
	  "unknown key 'foo' in [global]" },
	{ "[global\nextent_size = 1M\n[tier.x]\n", 1, "syntax error" },
	/*
	 * An empty tier section is an error, not dropped: alone it would
	 * leave the embedded default stack in force.  It is found when
	 * the next section starts or the file ends; the line is its own.
	 */
	{ "[tier.ram]\n", 1,
	  "section '[tier.ram]' is empty: a tier needs a kind and a size" },
	{ "[tier.ram]", 1, "section '[tier.ram]' is empty" },
	{ "[tier.ram]\n; kind = ram\n\n# size = 1G\n", 1,
	  "section '[tier.ram]' is empty" },
	{ "[tier.a]\nkind = ram\nsize = 1G\n[tier.x]\n[tier.b]\nkind = ram\n"
	  "size = 1G\n",
	  4, "section '[tier.x]' is empty" },
	{ "[tier.a]\nkind = ram\nsize = 1G\n[tier.x]\n", 4,
	  "section '[tier.x]' is empty" },
	{ "[tier.x]\n[global]\nextent_size = 1M\n", 1,
	  "section '[tier.x]' is empty" },
	{ "[global]\nextent_size = 1M\n[tier.x]\n\n", 3,
	  "section '[tier.x]' is empty" },
	/* a key twice in one section: the first line is named too */
	{ "[tier.a]\nkind = ram\nsize = 1G\nsize = 2G\n", 4,
	  "duplicate key 'size' in [tier.a] (first on line 3)" },
	{ "[tier.a]\nkind = file\npath = /p\nsize = 1G\npath = /q\n", 5,
	  "duplicate key 'path' in [tier.a] (first on line 3)" },
	{ "[tier.a]\nkind = ram\nkind = file\npath = /p\nsize = 1G\n", 3,
	  "duplicate key 'kind' in [tier.a] (first on line 2)" },
	{ "[tier.a]\nkind = ram\nsize = 1G\n[tier.b]\nkind = ram\n"
	  "size : 1G\nsize = 2G\n",
	  7, "duplicate key 'size' in [tier.b] (first on line 6)" },
	{ "[global]\nextent_size = 1M\nhigh_watermark = 90\n"
	  "extent_size = 2M\n",
	  4, "duplicate key 'extent_size' in [global] (first on line 2)" },
	{ "[global]\nno_migrate = true\nnomigrate = false\n", 3,
	  "duplicate key 'nomigrate' in [global] (first on line 2)" },
	{ "[global]\noptions = allow_other\noptions = ro\n", 3,
	  "duplicate key 'options' in [global] (first on line 2)" },
	/* a key before any section is not quietly a [global] key */
	{ "extent_size = 1M\n[global]\nextent_size = 2M\n", 1,
	  "key 'extent_size' comes before any section: put it under [global]" },
	{ "; comment\n\nno_migrate = 1\n", 3,
	  "key 'no_migrate' comes before any section" },
	/*
	 * inih reads an indented line as the continuation of the value
	 * before it ("path = /q" silently); indentation means nothing
	 * here, so such a line is a syntax error, or a duplicate key
	 */
	{ "[tier.a]\nkind = file\npath = /p\n   /q\nsize = 1G\n", 4,
	  "syntax error" },
	{ "[tier.a]\nkind = file\npath = /p\n\n\tpath = /q\nsize = 1G\n", 5,
	  "duplicate key 'path' in [tier.a] (first on line 3)" },
	/* a line too long for inih's buffer is not cut in two */
	{ "[tier.a]\nkind = file\npath = /" LONG300 "\nsize = 1G\n", 3,
	  "line longer than" },
};

START_TEST(test_options_load_config_bad)
{
	const struct bad_conf *c = &bad_confs[_i];
	char err[OPT_ERR_MAX] = "";
	int r;

	t_write_conf(c->text);
	r = options_load_config(&opt, err, sizeof(err));
	ck_assert_msg(r == -EINVAL, "case %d: ret %d (%s)", _i, r, err);
	t_assert_err_has(err, c->part);
	if (c->line) {
		char want[256];

		snprintf(want, sizeof(want), "%s: line %d: ", conf_path,
			 c->line);
		t_assert_err(err, want);
	}
	/* nothing of a bad file is kept */
	ck_assert_uint_eq(opt.ntiers, 0);
	ck_assert_uint_eq(opt.extent_size, 0);
	ck_assert_ptr_null(opt.fuse_opts);
}
END_TEST

/* Indentation means nothing: an indented key is a key. */
START_TEST(test_options_load_config_indented)
{
	char err[OPT_ERR_MAX] = "";

	t_write_conf("\xef\xbb\xbf  [global]\n"
		     "  extent_size = 2M\n"
		     "\thigh_watermark = 70\n"
		     "[tier.fast]\n"
		     "    kind = ram\n"
		     "    size = 1G\n"
		     "\n"
		     "  [tier.slow]\r\n"
		     "\tkind = file\r\n"
		     "\tpath = /scratch/slow\r\n"
		     "\tsize = 100G\r\n");
	ck_assert_msg(options_load_config(&opt, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(opt.extent_size, 2 * MiB);
	ck_assert_int_eq(opt.high_wm, 70);
	ck_assert_uint_eq(opt.ntiers, 2);
	ck_assert_str_eq(opt.tiers[0].name, "fast");
	ck_assert_uint_eq(opt.tiers[0].size, GiB);
	ck_assert_str_eq(opt.tiers[1].name, "slow");
	ck_assert_pstr_eq(opt.tiers[1].path, "/scratch/slow");
	ck_assert_uint_eq(opt.tiers[1].size, 100 * GiB);
}
END_TEST

/* The same key in two sections, and an empty [global], are fine. */
START_TEST(test_options_load_config_same_key_other_section)
{
	char err[OPT_ERR_MAX] = "";

	t_write_conf("[global]\n"
		     "[tier.a]\nkind = file\npath = /a\nsize = 1G\n"
		     "[tier.b]\nkind = file\npath = /b\nsize = 2G\n");
	ck_assert_msg(options_load_config(&opt, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(opt.ntiers, 2);
	ck_assert_uint_eq(opt.tiers[1].size, 2 * GiB);
}
END_TEST

/* A NUL byte: not a text file (fputs() cannot write this one). */
START_TEST(test_options_load_config_nul_byte)
{
	static const char text[] = "[tier.a]\nkind = ram\0\nsize = 1G\n";
	char err[OPT_ERR_MAX] = "";
	char want[256];
	FILE *f;

	t_write_conf("");
	f = fopen(conf_path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, sizeof(text) - 1, f),
			  sizeof(text) - 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(options_load_config(&opt, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: line 2: NUL byte: not a text file",
		 conf_path);
	t_assert_err(err, want);
	ck_assert_uint_eq(opt.ntiers, 0);
}
END_TEST

/*
 * A config path that is not a regular file is refused at once, without
 * reading it: a directory reads as empty (the default stack would
 * mount), /dev/zero never ends and a FIFO blocks the open.  The old
 * code hung on the last two; the tcase timeout turns that into a
 * failure.
 */
enum conf_kind { CONF_DIR, CONF_FIFO, CONF_DEV_ZERO, CONF_DEV_NULL,
		 CONF_LINK_TO_DIR };

static const struct conf_path_case {
	enum conf_kind kind;
	int ret;
	const char *what; /* after "config file 'PATH' " */
} conf_path_cases[] = {
	{ CONF_DIR, -EISDIR, "is a directory" },
	{ CONF_FIFO, -EINVAL, "is not a regular file" },
	{ CONF_DEV_ZERO, -EINVAL, "is not a regular file" },
	{ CONF_DEV_NULL, -EINVAL, "is not a regular file" },
	{ CONF_LINK_TO_DIR, -EISDIR, "is a directory" },
};

START_TEST(test_options_load_config_not_regular)
{
	const struct conf_path_case *c = &conf_path_cases[_i];
	char err[OPT_ERR_MAX] = "";
	char want[256];
	const char *path = conf_path;
	int r;

	switch (c->kind) {
	case CONF_DIR:
		path = tmpdir;
		break;
	case CONF_FIFO:
		ck_assert_int_eq(mkfifo(conf_path, 0600), 0);
		break;
	case CONF_DEV_ZERO:
		path = "/dev/zero";
		break;
	case CONF_DEV_NULL:
		path = "/dev/null";
		break;
	case CONF_LINK_TO_DIR:
		ck_assert_int_eq(symlink(tmpdir, conf_path), 0);
		break;
	}
	opt.config_file = strdup(path);
	ck_assert_ptr_nonnull(opt.config_file);
	r = options_load_config(&opt, err, sizeof(err));
	ck_assert_msg(r == c->ret, "case %d: ret %d (%s)", _i, r, err);
	snprintf(want, sizeof(want), "config file '%s' %s", path, c->what);
	t_assert_err(err, want);
	ck_assert_str_eq(err, want);
	ck_assert_uint_eq(opt.ntiers, 0);
	ck_assert_ptr_null(opt.fuse_opts);
}
END_TEST

/* A symlink to a regular file is read through. */
START_TEST(test_options_load_config_symlink)
{
	char err[OPT_ERR_MAX] = "";
	char link[160];
	int r;

	t_write_conf(good_conf);
	snprintf(link, sizeof(link), "%s/link.conf", tmpdir);
	ck_assert_int_eq(symlink(conf_path, link), 0);
	free(opt.config_file);
	opt.config_file = strdup(link);
	ck_assert_ptr_nonnull(opt.config_file);
	r = options_load_config(&opt, err, sizeof(err));
	(void)unlink(link);
	ck_assert_msg(r == 0, "%s", err);
	ck_assert_uint_eq(opt.ntiers, 2);
}
END_TEST

/* ---- options_finish ---------------------------------------------- */

/*
 * No tiers given: the embedded default stack, a RAM tier of a quarter of
 * memory (whole extents) first, then possibly a file tier.
 */
START_TEST(test_options_finish_defaults)
{
	char err[OPT_ERR_MAX] = "";
	struct mem_limit ml;
	uint64_t mem;
	int r;

	/* a quarter of the memory tierfs may have: physical or cgroup */
	ck_assert_int_eq(mem_probe(&ml), 0);
	mem = mem_total(&ml);
	ck_assert_uint_le(mem, (uint64_t)sysconf(_SC_PHYS_PAGES) *
				       (uint64_t)sysconf(_SC_PAGESIZE));
	r = options_finish(&opt, err, sizeof(err));
	ck_assert_msg(r == 0, "options_finish: %d (%s)", r, err);
	ck_assert_uint_eq(opt.extent_size, DEFAULT_EXTENT_SIZE);
	ck_assert_uint_eq(opt.extent_size, MiB);
	ck_assert_uint_ge(opt.ntiers, 1);
	ck_assert_str_eq(opt.tiers[0].name, "ram");
	ck_assert_int_eq(opt.tiers[0].kind, TIER_RAM);
	ck_assert_ptr_null(opt.tiers[0].path);
	ck_assert_uint_le(opt.tiers[0].size, mem / 4);
	ck_assert_uint_gt(opt.tiers[0].size, mem / 4 - opt.extent_size);
	/* the metadata limits follow memory */
	ck_assert_uint_eq(opt.max_inodes, mem / DEFAULT_MEM_PER_INODE);
	ck_assert_uint_eq(opt.max_xattr_bytes, mem / DEFAULT_XATTR_MEM_DIV);
	for (unsigned i = 0; i < opt.ntiers; i++) {
		ck_assert_uint_ge(opt.tiers[i].size, opt.extent_size);
		ck_assert_uint_eq(opt.tiers[i].size % opt.extent_size, 0);
		if (opt.tiers[i].kind != TIER_RAM)
			ck_assert_ptr_nonnull(opt.tiers[i].path);
	}
}
END_TEST

START_TEST(test_options_finish_keeps_given)
{
	char err[OPT_ERR_MAX] = "";

	opt.extent_size = 64 * KiB;
	ck_assert_int_eq(t_add("a=file:/p:1G", err, sizeof(err)), 0);
	ck_assert_int_eq(t_add("b=ram:64K", err, sizeof(err)), 0);
	ck_assert_int_eq(options_finish(&opt, err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.extent_size, 64 * KiB);
	ck_assert_uint_eq(opt.ntiers, 2); /* no default tier added */
	ck_assert_str_eq(opt.tiers[0].name, "a");
	ck_assert_str_eq(opt.tiers[1].name, "b");
}
END_TEST

START_TEST(test_options_finish_tier_below_extent)
{
	char err[OPT_ERR_MAX] = "";

	ck_assert_int_eq(t_add("big=ram:1G", err, sizeof(err)), 0);
	ck_assert_int_eq(t_add("small=file:/s:512K", err, sizeof(err)), 0);
	ck_assert_int_eq(options_finish(&opt, err, sizeof(err)), -EINVAL);
	t_assert_err(err,
		     "tier 'small' (512K) is smaller than one extent (1M)");

	/* the same check against an explicit extent size */
	options_release(&opt);
	opt.extent_size = 8 * MiB;
	ck_assert_int_eq(t_add("t=ram:4M", err, sizeof(err)), 0);
	ck_assert_int_eq(options_finish(&opt, err, sizeof(err)), -EINVAL);
	t_assert_err(err, "tier 't' (4M) is smaller than one extent (8M)");
}
END_TEST

/* ---- memory (options_mem.c) --------------------------------------- */

#define ML(p, c) ((struct mem_limit){ .phys = (p), .cgroup = (c) })

START_TEST(test_options_mem_usable)
{
	struct mem_limit ml;

	/* a tenth, at least 256M */
	ml = ML(100 * GiB, UINT64_MAX);
	ck_assert_uint_eq(mem_usable(&ml), 90 * GiB);
	ml = ML(GiB, UINT64_MAX);
	ck_assert_uint_eq(mem_usable(&ml), 768 * MiB);
	/* the smaller of the two */
	ml = ML(24 * GiB, 400 * MiB);
	ck_assert_uint_eq(mem_total(&ml), 400 * MiB);
	ck_assert_uint_eq(mem_usable(&ml), 144 * MiB);
	ml = ML(200 * MiB, UINT64_MAX);
	ck_assert_uint_eq(mem_usable(&ml), 0);
}
END_TEST

START_TEST(test_options_mem_check)
{
	char err[OPT_ERR_MAX] = "";
	struct mem_limit ml = ML(8 * GiB, UINT64_MAX);
	struct statfs sf;

	/* 8G less 819.2M */
	ck_assert_int_eq(t_add("r=ram:7G", err, sizeof(err)), 0);
	ck_assert_int_eq(options_check_memory(&opt, &ml, err, sizeof(err)), 0);
	ck_assert_int_eq(t_add("d=file:/nowhere:100G", err, sizeof(err)), 0);
	ck_assert_int_eq(options_check_memory(&opt, &ml, err, sizeof(err)), 0);
	ck_assert_int_eq(t_add("s=ram:512M", err, sizeof(err)), 0);
	ck_assert_int_eq(options_check_memory(&opt, &ml, err, sizeof(err)),
			 -EINVAL);
	t_assert_err(err,
		     "memory tiers 'r', 's' (7.5G) are larger than the memory tierfs may use, 7.2G: physical memory 8G less a margin of 819M");

	options_release(&opt);
	ml = ML(24 * GiB, 400 * MiB);
	ck_assert_int_eq(t_add("r=ram:1G", err, sizeof(err)), 0);
	ck_assert_int_eq(options_check_memory(&opt, &ml, err, sizeof(err)),
			 -EINVAL);
	t_assert_err(err,
		     "memory tier 'r' (1G) is larger than the memory tierfs may use, 144M: the cgroup's memory limit 400M less a margin of 256M");
	options_release(&opt);
	ck_assert_int_eq(t_add("r=ram:144M", err, sizeof(err)), 0);
	ck_assert_int_eq(options_check_memory(&opt, &ml, err, sizeof(err)), 0);

	/* a PMem or file tier on tmpfs is memory too (issue 16: a file
	 * tier on /dev/shm mounted 31G on a 24G node); only the free
	 * space there counts: a larger one is refused by the free-space
	 * check when the tier is set up */
	if (statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	    (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize >= 512 * MiB) {
		options_release(&opt);
		ml = ML(GiB, UINT64_MAX); /* 768M usable */
		ck_assert_int_eq(t_add("f=file:/dev/shm:512M", err, sizeof(err)), 0);
		ck_assert_int_eq(options_check_memory(&opt, &ml, err, sizeof(err)), 0);
		ck_assert_int_eq(t_add("r=ram:512M", err, sizeof(err)), 0);
		ck_assert_int_eq(options_check_memory(&opt, &ml, err, sizeof(err)),
				 -EINVAL);
		t_assert_err(err,
			     "memory tiers 'f', 'r' (1G) are larger than the memory tierfs may use, 768M: physical memory 1G less a margin of 256M ('f' is on tmpfs, which is memory)");
		options_release(&opt);
		ck_assert_int_eq(t_add("p=pmem:/dev/shm/.:512M", err, sizeof(err)), 0);
		ck_assert_int_eq(t_add("s=ram:512M", err, sizeof(err)), 0);
		ck_assert_int_eq(options_check_memory(&opt, &ml, err, sizeof(err)),
				 -EINVAL);
		t_assert_err_has(err, "('p' is on tmpfs, which is memory)");
		/* a file tier on a disk is not memory */
		options_release(&opt);
		ck_assert_int_eq(t_add("r=ram:700M", err, sizeof(err)), 0);
		ck_assert_int_eq(t_add("d=file:/var/tmp:8G", err, sizeof(err)), 0);
		ck_assert_int_eq(options_check_memory(&opt, &ml, err, sizeof(err)), 0);
	}
}
END_TEST

/* A RAM tier above the memory is refused by options_finish() itself,
 * and the defaults follow the memory (TIERFS_TEST_MEMORY stands in). */
START_TEST(test_options_finish_memory)
{
	char err[OPT_ERR_MAX] = "";

	ck_assert_int_eq(setenv("TIERFS_TEST_MEMORY", "2G", 1), 0);
	ck_assert_int_eq(t_add("r=ram:2G", err, sizeof(err)), 0);
	ck_assert_int_eq(options_finish(&opt, err, sizeof(err)), -EINVAL);
	t_assert_err(err, "memory tier 'r' (2G) is larger than the memory tierfs may use, 1.8G: physical memory 2G");

	options_release(&opt);
	ck_assert_int_eq(t_add("r=ram:1G", err, sizeof(err)), 0);
	ck_assert_int_eq(options_finish(&opt, err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.max_inodes, 256 * KiB);
	ck_assert_uint_eq(opt.max_xattr_bytes, 16 * MiB);

	/* given limits, 0 included, stay */
	options_release(&opt);
	opt.max_inodes_set = opt.max_xattr_bytes_set = true;
	opt.max_xattr_bytes = 5;
	ck_assert_int_eq(options_finish(&opt, err, sizeof(err)), 0);
	ck_assert_uint_eq(opt.max_inodes, 0);
	ck_assert_uint_eq(opt.max_xattr_bytes, 5);
	/* the default RAM tier fits: a quarter of 2G */
	ck_assert_int_eq(opt.tiers[0].kind, TIER_RAM);
	ck_assert_uint_eq(opt.tiers[0].size, 512 * MiB);
	ck_assert_int_eq(unsetenv("TIERFS_TEST_MEMORY"), 0);
}
END_TEST

static char cg_dir[64];

static void t_put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg_dir, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

static void t_mkdir(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", cg_dir, rel);
	ck_assert_int_eq(mkdir(path, 0700), 0);
}

static uint64_t t_cg_limit(void)
{
	char a[256], b[256];
	uint64_t v = 0;

	snprintf(a, sizeof(a), "%s/cgroup", cg_dir);
	snprintf(b, sizeof(b), "%s/mountinfo", cg_dir);
	mem_cgroup_limit(a, b, &v);
	return v;
}

/* /proc/self/cgroup and mountinfo as a v2 and a v1 system write them. */
START_TEST(test_options_mem_cgroup)
{
	char line[512];

	snprintf(cg_dir, sizeof(cg_dir), "/tmp/tierfs-cg.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(cg_dir));
	/* no files at all: no limit */
	ck_assert_uint_eq(t_cg_limit(), UINT64_MAX);

	/* v2: the job's cgroup and its parent, the smaller wins */
	t_mkdir("v2");
	t_mkdir("v2/user");
	t_mkdir("v2/user/job");
	t_put("cgroup", "0::/user/job\n");
	snprintf(line, sizeof(line),
		 "22 1 0:5 / /proc rw - proc proc rw\n"
		 "30 25 0:26 / %s/v2 rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n",
		 cg_dir);
	t_put("mountinfo", line);
	t_put("v2/user/job/memory.max", "max\n");
	ck_assert_uint_eq(t_cg_limit(), UINT64_MAX);
	t_put("v2/user/memory.max", "419430400\n");
	ck_assert_uint_eq(t_cg_limit(), 400 * MiB);
	t_put("v2/user/job/memory.max", "104857600\n");
	ck_assert_uint_eq(t_cg_limit(), 100 * MiB);

	/* v1 (hybrid): the memory hierarchy; "no limit" is about 2^63 */
	t_mkdir("v1");
	t_mkdir("v1/x");
	t_put("cgroup", "5:cpu,cpuacct:/\n4:memory:/x\n0::/\n");
	snprintf(line, sizeof(line),
		 "31 25 0:27 / %s/v1 rw,nosuid - cgroup cgroup rw,memory\n",
		 cg_dir);
	t_put("mountinfo", line);
	t_put("v1/x/memory.limit_in_bytes", "9223372036854771712\n");
	ck_assert_uint_eq(t_cg_limit(), UINT64_MAX);
	t_put("v1/x/memory.limit_in_bytes", "209715200\n");
	ck_assert_uint_eq(t_cg_limit(), 200 * MiB);

	snprintf(line, sizeof(line), "rm -rf '%s'", cg_dir);
	ck_assert_int_eq(system(line), 0);
}
END_TEST

/* ---- options_release --------------------------------------------- */

START_TEST(test_options_release_frees_everything)
{
	static const char *const args[] = { "--tier", "a=file:/p:1G",
					    "--tier", "b=pmem:/q:1G",
					    "-o",     "allow_other,ro",
					    "conf",   "/mnt",
					    NULL };
	char err[OPT_ERR_MAX] = "";
	struct tierfs_options zero;

	ck_assert_int_eq(t_parse_args(args, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(opt.config_file);
	ck_assert_ptr_nonnull(opt.fuse_opts);
	options_release(&opt);
	memset(&zero, 0, sizeof(zero));
	ck_assert(!memcmp(&opt, &zero, sizeof(opt)));
	/* releasing twice, or a zeroed struct, is harmless */
	options_release(&opt);
	options_release(&zero);
}
END_TEST

/* A parse that fails half way leaves only what options_release frees. */
START_TEST(test_options_release_after_failure)
{
	static const char *const args[] = { "--tier", "a=file:/p:1G",
					    "-o",     "ro",
					    "--tier", "b=file:/p:1G",
					    "/mnt",   NULL };
	char err[OPT_ERR_MAX] = "";

	ck_assert_int_eq(t_parse_args(args, err, sizeof(err)), -EINVAL);
	t_assert_err(err, "tiers 'a' and 'b' use the same path '/p'");
	ck_assert_uint_eq(opt.ntiers, 1);
	/* opt_teardown frees tier a's path and the -o string (ASan) */
}
END_TEST

static Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc;

	tc = tcase_create("parse_tier");
	tcase_set_timeout(tc, 10);
	tcase_add_loop_test(tc, test_options_parse_tier_good, 0,
			    ARRAY_SIZE(good_tiers));
	tcase_add_loop_test(tc, test_options_parse_tier_bad, 0,
			    ARRAY_SIZE(bad_tiers));
	tcase_add_test(tc, test_options_parse_tier_short_err);
	suite_add_tcase(s, tc);

	tc = tcase_create("add_tier");
	tcase_add_checked_fixture(tc, opt_setup, opt_teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_options_add_tier_takes_path);
	tcase_add_test(tc, test_options_add_tier_duplicate_name);
	tcase_add_test(tc, test_options_add_tier_duplicate_path);
	tcase_add_test(tc, test_options_add_tier_too_many);
	suite_add_tcase(s, tc);

	tc = tcase_create("parse_args");
	tcase_add_checked_fixture(tc, opt_setup, opt_teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_loop_test(tc, test_options_parse_args_table, 0,
			    ARRAY_SIZE(args_cases));
	tcase_add_test(tc, test_options_parse_args_tier_contents);
	suite_add_tcase(s, tc);

	tc = tcase_create("load_config");
	tcase_add_checked_fixture(tc, conf_setup, conf_teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_options_load_config_good);
	tcase_add_test(tc, test_options_load_config_cmdline_wins);
	tcase_add_test(tc, test_options_load_config_limits);
	tcase_add_test(tc, test_options_load_config_page_cache);
	tcase_add_test(tc, test_options_load_config_empty_file);
	tcase_add_test(tc, test_options_load_config_missing_file);
	tcase_add_loop_test(tc, test_options_load_config_bad, 0,
			    ARRAY_SIZE(bad_confs));
	tcase_add_test(tc, test_options_load_config_indented);
	tcase_add_test(tc, test_options_load_config_same_key_other_section);
	tcase_add_test(tc, test_options_load_config_nul_byte);
	tcase_add_loop_test(tc, test_options_load_config_not_regular, 0,
			    ARRAY_SIZE(conf_path_cases));
	tcase_add_test(tc, test_options_load_config_symlink);
	suite_add_tcase(s, tc);

	tc = tcase_create("finish");
	tcase_add_checked_fixture(tc, opt_setup, opt_teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_options_finish_defaults);
	tcase_add_test(tc, test_options_finish_keeps_given);
	tcase_add_test(tc, test_options_finish_tier_below_extent);
	tcase_add_test(tc, test_options_finish_memory);
	suite_add_tcase(s, tc);

	tc = tcase_create("memory");
	tcase_add_checked_fixture(tc, opt_setup, opt_teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_options_mem_usable);
	tcase_add_test(tc, test_options_mem_check);
	tcase_add_test(tc, test_options_mem_cgroup);
	suite_add_tcase(s, tc);

	tc = tcase_create("release");
	tcase_add_checked_fixture(tc, opt_setup, opt_teardown);
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_options_release_frees_everything);
	tcase_add_test(tc, test_options_release_after_failure);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	return tap_run(options_suite());
}
