// SPDX-License-Identifier: GPL-2.0-or-later
/* options.c -- see options.h. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "options.h"
#include "size.h"
#include "tier.h"
#include "macro.h"
#include "banned.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Write one message line to @err; returns -EINVAL for convenience. */
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_size_opt(const char *what, const char *s, uint64_t *ret,
			  char *err, size_t errlen)
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
static bool tier_name_chars_ok(const char *name)
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
	return NULL;
}

/*
 * Set global setting @key (underscore spelling) from @value.  Shared by
 * --long-options, -o key=value and the config file's [global] section.
 * Return: 0, -ENOENT for a key that is not ours (the caller decides),
 * or -EINVAL with a message.
 */
static int set_global(struct tierfs_options *opt, const char *key,
		      const char *value, char *err, size_t errlen)
{
	uint64_t v;
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
	    strcmp(key, "dirty_max"))
		return -ENOENT;
	if (!value)
		return fail(err, errlen, "'%s' needs a value", key);

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
	} else if (!strcmp(key, "dirty_max")) {
		r = parse_size_opt("dirty limit", value, &v, err, errlen);
		if (!r && v < 4096)
			r = fail(err, errlen, "dirty limit must be at least 4K");
		if (!r)
			opt->dirty_max = v;
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
static int add_fuse_opt(struct tierfs_options *opt, const char *o, size_t n)
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
static int parse_o(struct tierfs_options *opt, const char *list, char *err,
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
		} else if (n >= 5 && !strncmp(p, "tier=", 5)) {
			char *v = strndup(p + 5, n - 5);
			struct tier_conf tc;

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
		"--dirty-max", "--no-migrate", "--no-writeback-cache",
		"--no-kernel-features",
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
		opt->config_file = strdup(pos[0]);
		if (!opt->config_file)
			return -ENOMEM;
	}
	opt->mountpoint = strdup(pos[npos - 1]);
	if (!opt->mountpoint)
		return -ENOMEM;
	return 0;
}

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
	opt->no_migrate |= s.file.no_migrate;
	opt->no_writeback_cache |= s.file.no_writeback_cache;
	opt->no_kernel_features |= s.file.no_kernel_features;
	if (!opt->dirty_max)
		opt->dirty_max = s.file.dirty_max;
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

/* The embedded default stack: RAM of a quarter of memory over a file
 * tier of half the free space under /var/tmp. */
static int default_tiers(struct tierfs_options *opt, char *err, size_t errlen)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long psize = sysconf(_SC_PAGESIZE);
	struct tier_conf ram = { .name = "ram", .kind = TIER_RAM };
	struct tier_conf file = { .name = "disk", .kind = TIER_FILE };
	char path[256];
	struct statvfs sv;
	int r;

	if (pages <= 0 || psize <= 0)
		return fail(err, errlen,
			    "cannot size the default RAM tier: physical memory unknown");
	ram.size = (uint64_t)pages * (uint64_t)psize / 4;
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
	if (opt->ntiers == 0) {
		r = default_tiers(opt, err, errlen);
		if (r < 0)
			return r;
	}
	for (unsigned i = 0; i < opt->ntiers; i++) {
		char a[32], b[32];

		if (opt->tiers[i].size < opt->extent_size)
			return fail(err, errlen,
				    "tier '%s' (%s) is smaller than one extent (%s)",
				    opt->tiers[i].name,
				    size_format(opt->tiers[i].size, a, sizeof(a)),
				    size_format(opt->extent_size, b, sizeof(b)));
	}
	return 0;
}

void options_release(struct tierfs_options *opt)
{
	for (unsigned i = 0; i < opt->ntiers; i++)
		free(opt->tiers[i].path);
	free(opt->config_file);
	free(opt->mountpoint);
	free(opt->fuse_opts);
	options_init(opt);
}
