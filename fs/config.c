// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * config.c -- the INI config file reader, options_load_config() (see
 * options.h): opens the file only if it is a regular file, feeds inih
 * one checked line at a time (no NUL byte, no over-long line, no
 * indentation, each section header once), collects [global] and
 * [tier.NAME] into a separate set of options, and merges that into the
 * caller's only when the whole file is good, the command line winning.
 * The value setters are options.c's (options_i.h).
 *
 * Locking: none; called once at startup (or by a test or fuzz target)
 * on one thread.  The parse state lives on options_load_config()'s
 * stack.
 *
 * Return: 0, or -errno with "PATH: line N: ..." or "cannot read config
 * file ..." in @err: -EINVAL for a bad file, -EISDIR for a directory,
 * open()'s or read's -errno, -ENOMEM.  Nothing of a bad file is kept.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"
#include "options_i.h"
#include "tier.h"
#include "macro.h"
#include "banned.h"

struct ini_state {
	struct tierfs_options *opt;
	struct tierfs_options file; /* what the file says */
	char *err;
	size_t errlen;
	int r;
	/* the tier section being read, added when the next section starts */
	char cur_section[64];
	struct tier_conf cur;
	bool have_cur;
	bool cur_kind, cur_size;
	/* the keys of the section being read, for duplicates (more room
	 * than any section has keys: unknown keys stop the file) */
	struct {
		char name[24];
		int line;
	} keys[16];
	unsigned nkeys;
	/* for the line reader: file, line number, section headers seen */
	FILE *f;
	int lineno;
	char sections[2 + TIER_MAX_CONF * 2][64];
	unsigned nsections;
	int hdr_line;	/* line of the last header, 0 before the first */
	bool hdr_keys;	/* a key came after it */
	int err_line;	/* line the reader's or callback's error names */
	int read_errno; /* the file could not be read to its end */
};

/*
 * A [tier.NAME] section without a single key would be dropped by inih
 * without a word (and a file of only that would leave the embedded
 * default stack in force): refuse it, naming its header's line.
 */
static int check_empty_section(struct ini_state *s)
{
	const char *name;

	if (!s->hdr_line || s->hdr_keys)
		return 0;
	name = s->sections[s->nsections - 1];
	if (strncmp(name, "tier.", 5))
		return 0;
	s->err_line = s->hdr_line;
	return fail(s->err, s->errlen,
		    "section '[%s]' is empty: a tier needs a kind and a size",
		    name);
}

/*
 * Check one "[name]" header line.  inih itself never reports a section
 * without keys, nor a repeated one (it just merges them), so headers are
 * checked here, as the lines go by.  Returns 0 or -EINVAL (message set).
 */
static int check_header(struct ini_state *s, const char *line)
{
	const char *end = strchr(line, ']');
	char name[64];
	size_t n;
	int r;

	if (!end)
		return 0; /* inih reports the syntax error */
	/* the section before this one ends here */
	r = check_empty_section(s);
	if (r < 0)
		return r;
	n = (size_t)(end - line - 1);
	if (n >= sizeof(name))
		return fail(s->err, s->errlen, "section name too long");
	memcpy(name, line + 1, n);
	name[n] = '\0';
	if (strcmp(name, "global") && strncmp(name, "tier.", 5))
		return fail(s->err, s->errlen,
			    "unknown section '[%s]': use [global] or [tier.NAME]",
			    name);
	for (unsigned i = 0; i < s->nsections; i++)
		if (!strcmp(s->sections[i], name))
			return fail(s->err, s->errlen,
				    "section '[%s]' appears twice", name);
	if (s->nsections == sizeof(s->sections) / sizeof(s->sections[0]))
		return fail(s->err, s->errlen, "too many sections");
	memcpy(s->sections[s->nsections++], name, n + 1);
	s->hdr_line = s->lineno;
	s->hdr_keys = false;
	return 0;
}

/* Stop the parse at this line with the error already in s->err. */
static char *reader_fail(struct ini_state *s, int line)
{
	s->r = -EINVAL;
	if (!s->err_line)
		s->err_line = line;
	return NULL;
}

/*
 * inih line reader: one whole line per call, or NULL to stop (at the end
 * of the file, or with s->r set).  It refuses a NUL byte (not a text
 * file) and a line longer than inih's buffer (fgets() would cut it in
 * two, and inih would read the rest as a line of its own).  It drops a
 * UTF-8 BOM and the indentation: inih reads an indented line as the
 * continuation of the previous value, so "path = /a" then "  /b" would
 * silently make the path "/b"; without the indent that line is a syntax
 * error, and an indented "key = value" is just a key.  Headers are
 * checked as they go by.
 */
static char *line_reader(char *str, int num, void *stream)
{
	struct ini_state *s = stream;
	size_t n = 0, skip = 0;
	int c = EOF;

	if (s->r < 0 || num < 2)
		return NULL;
	while ((c = getc(s->f)) != EOF) {
		if (n == 0)
			s->lineno++;
		if (c == '\0') {
			fail(s->err, s->errlen, "NUL byte: not a text file");
			return reader_fail(s, s->lineno);
		}
		if (n == (size_t)num - 1) {
			fail(s->err, s->errlen,
			     "line longer than %d characters", num - 2);
			return reader_fail(s, s->lineno);
		}
		str[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (c == EOF && ferror(s->f)) {
		s->read_errno = errno ? errno : EIO;
		s->r = -s->read_errno;
		return NULL;
	}
	if (n == 0)
		return NULL; /* the end of the file */
	str[n] = '\0';
	if (s->lineno == 1 && !strncmp(str, "\xef\xbb\xbf", 3))
		skip = 3;
	while (skip < n && str[skip] != '\n' &&
	       isspace((unsigned char)str[skip]))
		skip++;
	memmove(str, str + skip, n - skip + 1);
	if (str[0] == '[' && check_header(s, str) < 0)
		return reader_fail(s, s->lineno);
	return str;
}

/*
 * Each key at most once per section: the second would silently win.
 * "nomigrate" is another spelling of "no_migrate".
 */
static int check_dup_key(struct ini_state *s, const char *section,
			 const char *name)
{
	const char *canon = strcmp(name, "nomigrate") ? name : "no_migrate";

	for (unsigned i = 0; i < s->nkeys; i++)
		if (!strcmp(s->keys[i].name, canon))
			return fail(s->err, s->errlen,
				    "duplicate key '%s' in [%s] (first on line %d)",
				    name, section, s->keys[i].line);
	if (s->nkeys < ARRAY_SIZE(s->keys) &&
	    strlen(canon) < sizeof(s->keys[0].name)) {
		memcpy(s->keys[s->nkeys].name, canon, strlen(canon) + 1);
		s->keys[s->nkeys++].line = s->lineno;
	}
	return 0;
}

static int flush_tier_section(struct ini_state *s)
{
	int r;

	/* have_cur stays set until options_add_tier() owns cur.path, so
	 * that options_load_config() frees it when a check fails */
	if (!s->have_cur)
		return 0;
	if (!s->cur_kind)
		return fail(s->err, s->errlen, "tier '%s' has no kind",
			    s->cur.name);
	if (!s->cur_size)
		return fail(s->err, s->errlen, "tier '%s' has no size",
			    s->cur.name);
	if (s->cur.kind != TIER_RAM && !s->cur.path)
		return fail(s->err, s->errlen, "tier '%s' has no path",
			    s->cur.name);
	if (s->cur.kind == TIER_RAM && s->cur.path)
		return fail(s->err, s->errlen,
			    "tier '%s': a ram tier takes no path",
			    s->cur.name);
	s->have_cur = false;
	r = options_add_tier(&s->file, &s->cur, s->err, s->errlen);
	memset(&s->cur, 0, sizeof(s->cur));
	return r;
}

/* inih callback: returns 1 to go on, 0 to stop with an error. */
static int ini_cb(void *user, const char *section, const char *name,
		  const char *value)
{
	struct ini_state *s = user;
	int r = 0;

	/* inih goes on after an error; keep the first message */
	if (s->r < 0)
		return 0;
	/* not taken as [global]: a later [global] could repeat it unseen */
	if (!*section) {
		r = fail(s->err, s->errlen,
			 "key '%s' comes before any section: put it under [global]",
			 name ? name : "");
		goto out;
	}

	if (strcmp(section, s->cur_section)) {
		r = flush_tier_section(s);
		if (r < 0)
			goto out;
		snprintf(s->cur_section, sizeof(s->cur_section), "%s",
			 section);
		s->nkeys = 0;
		if (!strncmp(section, "tier.", 5)) {
			const char *tname = section + 5;

			if (!*tname || strlen(tname) > TIER_CONF_NAME_MAX) {
				r = fail(s->err, s->errlen,
					 "bad tier section name '[%s]'",
					 section);
				goto out;
			}
			if (!tier_name_chars_ok(tname)) {
				r = fail(s->err, s->errlen,
					 "bad tier name '%s': use letters, digits, '_' and '-'",
					 tname);
				goto out;
			}
			memset(&s->cur, 0, sizeof(s->cur));
			memcpy(s->cur.name, tname, strlen(tname) + 1);
			s->have_cur = true;
			s->cur_kind = s->cur_size = false;
		} else if (strcmp(section, "global")) {
			r = fail(s->err, s->errlen,
				 "unknown section '[%s]': use [global] or [tier.NAME]",
				 section);
			goto out;
		}
	}
	if (!name) /* a section header alone (inih INI_CALL_HANDLER_ON_NEW_SECTION) */
		return 1;
	s->hdr_keys = true;
	r = check_dup_key(s, section, name);
	if (r < 0)
		goto out;

	if (s->have_cur) {
		if (!strcmp(name, "kind")) {
			s->cur.kind = tier_kind_parse(value);
			if (s->cur.kind == _TIER_KIND_INVALID)
				r = fail(s->err, s->errlen,
					 "unknown tier kind '%s': use ram, pmem or file",
					 value);
			s->cur_kind = true;
		} else if (!strcmp(name, "path")) {
			/* as on the command line: "path =" names no
			 * directory (found by tests/fuzz/fuzz_config) */
			if (!*value) {
				r = fail(s->err, s->errlen,
					 "tier '%s' has an empty path",
					 s->cur.name);
				goto out;
			}
			free(s->cur.path);
			s->cur.path = strdup(value);
			if (!s->cur.path)
				r = -ENOMEM;
		} else if (!strcmp(name, "size")) {
			r = parse_size_opt("tier size", value, &s->cur.size,
					   s->err, s->errlen);
			if (!r && s->cur.size == 0)
				r = fail(s->err, s->errlen,
					 "tier '%s' has size zero",
					 s->cur.name);
			s->cur_size = true;
		} else {
			r = fail(s->err, s->errlen,
				 "unknown key '%s' in [%s]: use kind, path, size",
				 name, section);
		}
	} else {
		if (!strcmp(name, "options")) {
			r = parse_o(&s->file, value, s->err, s->errlen);
		} else {
			r = set_global(&s->file, name, value, s->err,
				       s->errlen);
			if (r == -ENOENT)
				r = fail(s->err, s->errlen,
					 "unknown key '%s' in [global]", name);
		}
	}
out:
	if (r < 0) {
		s->r = r;
		s->err_line = s->lineno;
		return 0;
	}
	return 1;
}

/*
 * Open the config file only if it is a regular file: a directory reads
 * as empty (the embedded default stack would mount), /dev/zero never
 * ends, and opening a FIFO waits for a writer.  stat() first, so that
 * nothing else is even opened; O_NONBLOCK and fstat() in case the path
 * changes in between.
 */
static FILE *open_config(const char *path, int *ret, char *err,
			 size_t errlen)
{
	struct stat st;
	FILE *f;
	int fd;

	if (stat(path, &st) < 0)
		goto fail_errno;
	if (S_ISDIR(st.st_mode))
		goto fail_dir;
	if (!S_ISREG(st.st_mode))
		goto fail_type;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		goto fail_errno;
	if (fstat(fd, &st) < 0) {
		*ret = -errno;
		close(fd);
		goto fail_read;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			goto fail_dir;
		goto fail_type;
	}
	f = fdopen(fd, "r");
	if (!f) {
		*ret = -errno;
		close(fd);
		goto fail_read;
	}
	return f;

fail_errno:
	*ret = -errno;
fail_read:
	snprintf(err, errlen, "cannot read config file '%s': %s", path,
		 strerror(-*ret));
	return NULL;
fail_dir:
	*ret = -EISDIR;
	snprintf(err, errlen, "config file '%s' is a directory", path);
	return NULL;
fail_type:
	*ret = -EINVAL;
	snprintf(err, errlen, "config file '%s' is not a regular file", path);
	return NULL;
}

int options_load_config(struct tierfs_options *opt, char *err,
			size_t errlen)
{
	struct ini_state s = { .opt = opt, .err = err, .errlen = errlen };
	FILE *f;
	int r;

	options_init(&s.file);
	f = open_config(opt->config_file, &r, err, errlen);
	if (!f)
		return r;
	s.f = f;
	r = ini_parse_stream(line_reader, &s, ini_cb, &s);
	fclose(f);
	/* what is missing shows at the end: in the last tier section (no
	 * line: its keys are all there is), or the whole section */
	if (r == 0 && s.r == 0)
		s.r = flush_tier_section(&s);
	if (r == 0 && s.r == 0)
		s.r = check_empty_section(&s);
	if (s.read_errno) {
		snprintf(err, errlen, "cannot read config file '%s': %s",
			 opt->config_file, strerror(s.read_errno));
	} else if (r > 0 && (!s.err_line || r < s.err_line)) {
		/* inih's own complaint came first */
		s.r = -EINVAL;
		snprintf(err, errlen, "%s: line %d: syntax error",
			 opt->config_file, r);
	} else if (s.err_line) {
		char msg[OPT_ERR_MAX];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "%s: line %d: %s", opt->config_file,
			 s.err_line, msg);
	} else if (r < 0 && s.r == 0) {
		s.r = -ENOMEM;
		snprintf(err, errlen, "cannot parse config file '%s'",
			 opt->config_file);
	}
	if (s.r < 0 && s.have_cur)
		free(s.cur.path);
	if (s.r < 0)
		goto out;

	/* the command line wins */
	if (opt->ntiers == 0) {
		for (unsigned i = 0; i < s.file.ntiers; i++) {
			opt->tiers[i] = s.file.tiers[i];
			s.file.tiers[i].path = NULL;
		}
		opt->ntiers = s.file.ntiers;
	}
	if (!opt->extent_size)
		opt->extent_size = s.file.extent_size;
	if (!opt->high_wm)
		opt->high_wm = s.file.high_wm;
	if (!opt->low_wm_set) {
		opt->low_wm = s.file.low_wm;
		opt->low_wm_set = s.file.low_wm_set;
	}
	if (!opt->migrate_bw_set) {
		opt->migrate_bw = s.file.migrate_bw;
		opt->migrate_bw_set = s.file.migrate_bw_set;
	}
	if (!opt->half_life)
		opt->half_life = s.file.half_life;
	if (!opt->promote_passes)
		opt->promote_passes = s.file.promote_passes;
	if (!opt->tier_timeout_set) {
		opt->tier_timeout = s.file.tier_timeout;
		opt->tier_timeout_set = s.file.tier_timeout_set;
	}
	opt->no_migrate |= s.file.no_migrate;
	opt->no_writeback_cache |= s.file.no_writeback_cache;
	opt->no_kernel_features |= s.file.no_kernel_features;
	opt->no_splice |= s.file.no_splice;
	opt->no_memory_follow |= s.file.no_memory_follow;
	if (!opt->memory_reserve)
		opt->memory_reserve = s.file.memory_reserve;
	if (!opt->transport_set) {
		opt->transport = s.file.transport;
		opt->transport_set = s.file.transport_set;
	}
	if (!opt->io_set) {
		opt->io = s.file.io;
		opt->io_set = s.file.io_set;
	}
	if (!opt->page_cache_set) {
		opt->page_cache = s.file.page_cache;
		opt->page_cache_set = s.file.page_cache_set;
	}
	if (!opt->dirty_max)
		opt->dirty_max = s.file.dirty_max;
	if (!opt->max_inodes_set) {
		opt->max_inodes = s.file.max_inodes;
		opt->max_inodes_set = s.file.max_inodes_set;
	}
	if (!opt->max_xattr_bytes_set) {
		opt->max_xattr_bytes = s.file.max_xattr_bytes;
		opt->max_xattr_bytes_set = s.file.max_xattr_bytes_set;
	}
	if (s.file.fuse_opts) {
		r = add_fuse_opt(opt, s.file.fuse_opts,
				 strlen(s.file.fuse_opts));
		if (r < 0)
			s.r = r;
	}
out:
	options_release(&s.file);
	return s.r;
}
