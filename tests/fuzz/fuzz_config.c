// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_config.c -- libFuzzer target for options_load_config()
 * (fs/config.c, with the value setters of fs/options.c): the INI config
 * file, read through libinih with tierfs's own line reader, header
 * checks and key callbacks.
 *
 * The input is the file's content.  It goes into a memfd, and
 * opt->config_file names it as /proc/self/fd/N: the same stat(), open()
 * and stdio path as a real file, with nothing on disk.  Each input is
 * loaded twice: into empty options, and under options that a command
 * line already set (tiers, extent size, watermarks, -o), where the
 * command line must win.  When the file gave tiers, options_finish()
 * runs too (with tiers given it never touches the disk).
 *
 * Oracles, from options.h: a failure is -errno with exactly one line of
 * text in @err and leaves @opt as it was; a success leaves only values
 * that the command line would accept (valid tier names, kinds, sizes and
 * paths, no duplicates, settings in range).  ASan's leak check catches a
 * path that is not freed on some error.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "options.h"
#include "tier.h"
#include "fuzz_check.h"
#include "banned.h"

static int conf_fd = -1;
static char conf_path[64];

static size_t nlines; /* of the current input, the last one unended */

static void check_err_line(const char *err)
{
	size_t plen = strlen(conf_path);
	int line;

	CHECK(err[0] != '\0');
	CHECK(strnlen(err, OPT_ERR_MAX) < OPT_ERR_MAX);
	CHECK(!strchr(err, '\n'));
	/* "PATH: line N: ...": a line the file has */
	if (!strncmp(err, conf_path, plen) &&
	    sscanf(err + plen, ": line %d:", &line) == 1)
		CHECK(line >= 1 && (size_t)line <= nlines);
}

static bool name_ok(const char *name)
{
	size_t n = strnlen(name, TIER_CONF_NAME_MAX + 1);

	if (n == 0 || n > TIER_CONF_NAME_MAX)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
			return false;
	return true;
}

/* What a loaded configuration may hold: what options_parse_args()
 * would let through from a command line. */
static void check_loaded(const struct tierfs_options *opt)
{
	CHECK(opt->ntiers <= TIER_MAX_CONF);
	for (unsigned i = 0; i < opt->ntiers; i++) {
		const struct tier_conf *t = &opt->tiers[i];

		CHECK(name_ok(t->name));
		CHECK(t->kind >= 0 && t->kind < _TIER_KIND_MAX);
		CHECK(t->size > 0);
		if (t->kind == TIER_RAM)
			CHECK(t->path == NULL);
		else
			CHECK(t->path != NULL && t->path[0] != '\0');
		for (unsigned j = 0; j < i; j++) {
			CHECK(strcmp(opt->tiers[j].name, t->name) != 0);
			CHECK(!t->path || !opt->tiers[j].path ||
			      strcmp(opt->tiers[j].path, t->path) != 0);
		}
	}
	if (opt->extent_size)
		CHECK(opt->extent_size >= 4096 &&
		      opt->extent_size <= (UINT64_C(1) << 30) &&
		      !(opt->extent_size & (opt->extent_size - 1)));
	CHECK(opt->high_wm >= 0 && opt->high_wm <= 100);
	CHECK(opt->low_wm >= 0 && opt->low_wm <= 99);
	CHECK(opt->half_life <= 86400);
	CHECK(opt->promote_passes <= 1000);
	CHECK(opt->dirty_max == 0 || opt->dirty_max >= 4096);
	if (opt->fuse_opts) {
		/* what is left for libfuse: no empty item, none of ours */
		CHECK(opt->fuse_opts[0] != '\0');
		CHECK(strncmp(opt->fuse_opts, "tier=", 5) != 0);
	}
}

/* Set up what a command line like
 * "--tier cl=ram:64M --extent-size 64K --high-watermark 70 -o ro" gives. */
static void cmdline_options(struct tierfs_options *opt)
{
	struct tier_conf tc;
	char err[OPT_ERR_MAX];

	CHECK(options_parse_tier("cl=ram:64M", &tc, err, sizeof(err)) == 0);
	CHECK(options_add_tier(opt, &tc, err, sizeof(err)) == 0);
	opt->extent_size = UINT64_C(64) << 10;
	opt->high_wm = 70;
	opt->fuse_opts = strdup("ro");
	CHECK(opt->fuse_opts != NULL);
}

static void load(bool cmdline)
{
	struct tierfs_options opt, before;
	char err[OPT_ERR_MAX] = "";
	int r;

	options_init(&opt);
	if (cmdline)
		cmdline_options(&opt);
	opt.config_file = strdup(conf_path);
	CHECK(opt.config_file != NULL);
	before = opt;

	r = options_load_config(&opt, err, sizeof(err));
	CHECK(r <= 0);
	if (r < 0) {
		check_err_line(err);
		/* nothing of a bad file is kept */
		CHECK(!memcmp(&opt, &before, sizeof(opt)));
		goto out;
	}
	check_loaded(&opt);
	if (cmdline) {
		/* the command line wins */
		CHECK(opt.ntiers == 1 && !strcmp(opt.tiers[0].name, "cl"));
		CHECK(opt.extent_size == UINT64_C(64) << 10);
		CHECK(opt.high_wm == 70);
		CHECK(opt.fuse_opts && !strncmp(opt.fuse_opts, "ro", 2) &&
		      (opt.fuse_opts[2] == '\0' || opt.fuse_opts[2] == ','));
	}
	if (opt.ntiers > 0) {
		err[0] = '\0';
		r = options_finish(&opt, err, sizeof(err));
		CHECK(r == 0 || r == -EINVAL);
		if (r < 0) {
			check_err_line(err);
		} else {
			CHECK(opt.extent_size != 0);
			CHECK(opt.low_wm < opt.high_wm);
			for (unsigned i = 0; i < opt.ntiers; i++)
				CHECK(opt.tiers[i].size >= opt.extent_size);
		}
	}
out:
	options_release(&opt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (conf_fd < 0) {
		conf_fd = memfd_create("fuzz_config.ini", MFD_CLOEXEC);
		CHECK(conf_fd >= 0);
		snprintf(conf_path, sizeof(conf_path), "/proc/self/fd/%d",
			 conf_fd);
	}
	CHECK(ftruncate(conf_fd, 0) == 0);
	CHECK(pwrite(conf_fd, data, size, 0) == (ssize_t)size);
	nlines = 1;
	for (size_t i = 0; i + 1 < size; i++)
		nlines += data[i] == '\n';

	load(false);
	load(true);
	return 0;
}
