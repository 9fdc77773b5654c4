// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_ctl.c -- libFuzzer target for the control channel: setxattr,
 * getxattr, removexattr and listxattr as the FUSE handlers call them
 * (attr_set() and friends, which hand the user.tierfs.* queries and the
 * ctl.migrate / ctl.drain actions to ctl.c), against a real in-process
 * struct tierfs.
 *
 * Each input gets a fresh mount: three small RAM tiers named ram, pmem
 * and nvme (extents of 4K; 8, 16 and 32 of them), no migrator thread (a
 * drain then moves the data in the request, as with --no-migrate), and
 * the tree /d/f (a file owned by uid 1000, with data) and /g (root's,
 * empty; OP_WRITE with VALUE[0] >= 0x80 writes it anywhere).  The input is a list of requests, each
 *
 *     HEAD NAME VALUE... 0xff
 *
 * HEAD bits 0-2: the request (see enum op), bits 3-4: on which inode
 * (/, /d, /d/f, /g), bits 5-6: the caller's uid (0, 1000, 2000) or, for
 * a get, the buffer size.  NAME indexes names[]; a name ending in '@' or
 * '.' takes the VALUE as its suffix (user.tierfs.extents@OFFSET, any
 * user.tierfs.* name).  VALUE runs to the next 0xff byte.
 *
 * Oracles besides the sanitizers: the file reads back what was written
 * whatever migrate and drain did; a migrate that succeeded left every
 * extent of its range on its tier, a drain that succeeded left its tier
 * empty; the extent list, its paged form and the layout agree with each
 * other and with the tiers' slot counts; a size probe answers what the
 * read then gets; every error is one the protocol allows.
 * FUZZ_CTL_VERBOSE=1 traces the requests of an input.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "ctl.h"
#include "ctl_proto.h"
#include "data.h"
#include "fs.h"
#include "mount.h"
#include "namespace.h"
#include "options.h"
#include "tier.h"
#include "attr.h"
#include "xattr.h"
#include "macro.h"
#include "fuzz_check.h"
#include "banned.h"

#define EXT 4096u
#define FILE_CAP (32u * EXT) /* the most a request writes to /d/f */
#define MAX_REQUESTS 48
#define BIG TIERFS_XATTR_VALUE_MAX

enum op {
	OP_SET,
	OP_SET_FLAGS, /* with XATTR_CREATE or XATTR_REPLACE */
	OP_GET,
	OP_PROBE_GET, /* size 0, then exactly that size */
	OP_REMOVE,
	OP_LIST,
	OP_WRITE,     /* VALUE[0]: extent, [1]: KiB, [2]: pattern into
		       * /d/f; VALUE[0] >= 0x80: anywhere into /g */
	OP_CHECK,     /* read back, cross-check the lists */
};

static const char *const names[] = {
	TIERFS_XATTR_CTL_MIGRATE,
	TIERFS_XATTR_CTL_DRAIN,
	TIERFS_XATTR_TIERS,
	TIERFS_XATTR_PIN,
	TIERFS_XATTR_SPLIT,
	TIERFS_XATTR_PROMOTE,
	TIERFS_XATTR_LAYOUT,
	TIERFS_XATTR_EXTENTS,
	TIERFS_XATTR_EXTENTS_AT,	/* + VALUE */
	TIERFS_XATTR_EFFECTIVE,
	TIERFS_XATTR_STATS,
	TIERFS_XATTR_VERIFY,
	"user.comment",
	"trusted.tierfs.quota",
	TIERFS_XATTR_PREFIX,		/* + VALUE */
	TIERFS_XATTR_CTL,		/* + VALUE */
	"user.",			/* + VALUE */
	"system.posix_acl_access",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

struct world {
	struct tierfs_options opt;
	struct tierfs *fs;
	struct tfs_inode *node[4]; /* /, /d, /d/f, /g */
	uint8_t *shadow;	   /* what /d/f must read back as */
	uint64_t size;		   /* its length */
};

static const uid_t uids[] = { 0, 1000, 2000, 1000 };
static const char *const node_name[] = { "/", "/d", "/d/f", "/g" };
static int verbose = -1; /* FUZZ_CTL_VERBOSE=1: trace each request */

static void trace(const char *what, int node, const char *name,
		  const uint8_t *v, size_t vlen, long r)
{
	if (verbose < 0)
		verbose = getenv("FUZZ_CTL_VERBOSE") != NULL;
	if (!verbose)
		return;
	fprintf(stderr, "%s %s '%s' '%.*s' -> %ld%s%s\n", what,
		node_name[node], name, (int)vlen, v ? (const char *)v : "", r,
		r < 0 ? " " : "", r < 0 ? strerror((int)-r) : "");
}

static const size_t get_sizes[] = { 1, 64, 4096, BIG };

static bool errno_ok(long r)
{
	switch (-r) {
	case ENODATA: case ERANGE: case EPERM: case EACCES: case EINVAL:
	case E2BIG: case ENOSPC: case EEXIST: case EOPNOTSUPP: case EDQUOT:
	case ENOTDIR: /* trusted.tierfs.quota on a file (quota.h) */
		return true;
	default:
		return false;
	}
}

static void check_ret(const char *what, const char *name, long r)
{
	if (r < 0 && !errno_ok(r)) {
		fprintf(stderr, "%s '%s': unexpected error %ld (%s)\n", what,
			name, r, strerror((int)-r));
		CHECK(errno_ok(r));
	}
}

static int no_groups(void *arg, int size, gid_t list[])
{
	return 0;
}

/* A file or directory under @dir, made as the FUSE handlers make them. */
static struct tfs_inode *add_node(struct tierfs *fs, struct tfs_inode *dir,
				  const char *name, bool is_dir, uid_t uid)
{
	const struct ns_cred cred = { .uid = uid, .gid = uid,
				      .getgroups = no_groups };
	struct tfs_inode *inode = NULL;
	struct stat st;

	if (is_dir)
		CHECK(ns_mkdir(fs, dir, name, 0755, &cred, &inode, &st) == 0);
	else
		CHECK(ns_create(fs, dir, name, 0644, &cred, &inode, &st) == 0);
	CHECK(inode != NULL);
	return inode;
}

static void world_create(struct world *w)
{
	static const char *const tname[] = { "ram", "pmem", "nvme" };
	static const unsigned slots[] = { 8, 16, 32 };
	char err[OPT_ERR_MAX];

	memset(w, 0, sizeof(*w));
	options_init(&w->opt);
	for (unsigned i = 0; i < 3; i++) {
		struct tier_conf *tc = &w->opt.tiers[i];

		snprintf(tc->name, sizeof(tc->name), "%s", tname[i]);
		tc->kind = TIER_RAM;
		tc->size = (uint64_t)slots[i] * EXT;
	}
	w->opt.ntiers = 3;
	w->opt.extent_size = EXT;
	w->opt.no_migrate = true;
	w->opt.dirty_max = EXT;
	CHECK(options_finish(&w->opt, err, sizeof(err)) == 0);
	CHECK(tierfs_create(&w->opt, &w->fs) == 0);
	w->node[0] = w->fs->root;
	w->node[1] = add_node(w->fs, w->fs->root, "d", true, 1000);
	w->node[2] = add_node(w->fs, w->node[1], "f", false, 1000);
	w->node[3] = add_node(w->fs, w->fs->root, "g", false, 0);
	w->shadow = calloc(1, FILE_CAP);
	CHECK(w->shadow != NULL);
}

static void world_free(struct world *w)
{
	w->fs = tierfs_free(w->fs);
	options_release(&w->opt);
	free(w->shadow);
}

static uint8_t pat(uint64_t off, unsigned seed)
{
	return (uint8_t)(((off + 1) * 0x9e3779b97f4a7c15ull ^ seed) >> 29) | 1;
}

/* A write anywhere in /g (no shadow: its lists are still checked):
 * VALUE[1..8] the offset, little-endian, VALUE[9] the KiB. */
static void do_write_far(struct world *w, const uint8_t *v, size_t len)
{
	uint64_t off = 0;
	size_t n = (len > 9 ? v[9] % 32 + 1u : 1u) * 1024u;
	char *buf = calloc(1, n);
	ssize_t r;

	CHECK(buf != NULL);
	memcpy(&off, v + 1, MIN(len - 1, sizeof(off)));
	r = data_write(w->fs, w->node[3], buf, n, off);
	CHECK(r == -ENOSPC || r == -EDQUOT || r == -EFBIG || (r > 0 && (size_t)r <= n));
	free(buf);
}

static void do_write(struct world *w, const uint8_t *v, size_t len)
{
	uint64_t off = (uint64_t)(len > 0 ? v[0] % 24 : 0) * EXT;
	size_t n = (len > 1 ? v[1] % 32 + 1u : 4u) * 1024u;
	unsigned seed = len > 2 ? v[2] : 7;
	uint8_t *buf;
	ssize_t r;

	if (off + n > FILE_CAP)
		n = (size_t)(FILE_CAP - off);
	buf = malloc(n);
	CHECK(buf != NULL);
	for (size_t i = 0; i < n; i++)
		buf[i] = pat(off + i, seed);
	r = data_write(w->fs, w->node[2], (const char *)buf, n, off);
	/* EDQUOT: a trusted.tierfs.quota above the file is used up */
	CHECK(r == -ENOSPC || r == -EDQUOT || (r > 0 && (size_t)r <= n));
	if (r > 0) {
		memcpy(w->shadow + off, buf, (size_t)r);
		if (off + (uint64_t)r > w->size)
			w->size = off + (uint64_t)r;
	}
	free(buf);
}

/* The whole value of @name on @inode, NUL-terminated; NULL if none. */
static char *get_text(struct world *w, struct tfs_inode *inode,
		      const char *name, ssize_t *ret_len)
{
	char *buf = malloc(BIG + 1);
	ssize_t r;

	CHECK(buf != NULL);
	r = attr_get(w->fs, inode, name, buf, BIG, NULL);
	check_ret("getxattr", name, r);
	if (r < 0) {
		free(buf);
		*ret_len = r;
		return NULL;
	}
	CHECK(r <= BIG);
	buf[r] = '\0';
	CHECK(strlen(buf) == (size_t)r); /* text: no NUL inside */
	*ret_len = r;
	return buf;
}

/* Add up "START LENGTH TIER\n" lines into per-tier bytes; a page's
 * last line "next N" goes to *ret_next (0 without one). */
static void sum_runs(const char *text, const struct tier_names *tn,
		     uint64_t bytes[TIER_MAX_CONF], uint64_t *ret_next)
{
	const char *p = text;
	uint64_t last_end = 0;

	*ret_next = 0;
	while (*p) {
		unsigned long long start, len, next;
		char tier[TIER_CONF_NAME_MAX + 1];
		int n = 0;
		bool found = false;

		if (sscanf(p, TIERFS_PAGE_NEXT " %llu\n%n", &next, &n) == 1 &&
		    n > 0) {
			CHECK(p[n] == '\0'); /* the last line of a page */
			*ret_next = next;
			break;
		}
		CHECK(sscanf(p, "%llu %llu %32s\n%n", &start, &len, tier,
			     &n) == 3 && n > 0);
		CHECK(len > 0 && start % EXT == 0 && len % EXT == 0);
		CHECK(start >= last_end); /* file order, no overlap */
		last_end = start + len;
		for (unsigned t = 0; t < tn->n; t++)
			if (!strcmp(tier, tn->name[t])) {
				bytes[t] += len;
				found = true;
			}
		CHECK(found);
		p += n;
	}
}

/* The extent list, whole and paged, and the layout must agree. */
static void cross_check(struct world *w, struct tfs_inode *inode)
{
	uint64_t whole[TIER_MAX_CONF] = { 0 }, paged[TIER_MAX_CONF] = { 0 };
	uint64_t layout[TIER_MAX_CONF] = { 0 }, next, at = 0;
	char name[64], *text;
	ssize_t len;
	unsigned pages = 0;

	text = get_text(w, inode, TIERFS_XATTR_EXTENTS, &len);
	CHECK(text != NULL);
	sum_runs(text, &w->fs->names, whole, &next);
	CHECK(next == 0);
	free(text);

	for (;;) {
		snprintf(name, sizeof(name), "%s%llu",
			 TIERFS_XATTR_EXTENTS_AT, (unsigned long long)at);
		text = get_text(w, inode, name, &len);
		CHECK(text != NULL);
		sum_runs(text, &w->fs->names, paged, &next);
		free(text);
		if (!next)
			break;
		CHECK(next > at);
		at = next;
		CHECK(++pages < 1000);
	}

	text = get_text(w, inode, TIERFS_XATTR_LAYOUT, &len);
	CHECK(text != NULL);
	{
		const char *p = text;

		for (unsigned t = 0; t < 3; t++) {
			char tier[TIER_CONF_NAME_MAX + 1];
			unsigned long long b;
			int n = 0;

			CHECK(sscanf(p, "%32[^=]=%llu%n", tier, &b, &n) == 2);
			CHECK(!strcmp(tier, w->fs->names.name[t]));
			layout[t] = b;
			p += n;
			if (*p == ' ')
				p++;
		}
		CHECK(*p == '\0' || *p == '\n');
	}
	free(text);
	for (unsigned t = 0; t < 3; t++) {
		CHECK(whole[t] == paged[t]);
		CHECK(whole[t] == layout[t]);
	}
}

/* /d/f reads back as written; the tiers hold exactly the files' extents. */
static void check_world(struct world *w)
{
	uint8_t *buf = malloc(FILE_CAP + 1);
	uint64_t layout[TIER_MAX_CONF] = { 0 };
	ssize_t r;

	CHECK(buf != NULL);
	r = data_read(w->fs, w->node[2], (char *)buf, FILE_CAP + 1, 0);
	CHECK(r == (ssize_t)w->size);
	CHECK(!memcmp(buf, w->shadow, w->size));
	free(buf);

	cross_check(w, w->node[2]);
	cross_check(w, w->node[3]);
	/* the root's layout sums both files */
	CHECK(ctl_dir_layout(w->fs, w->fs->root, layout) == 0);
	for (unsigned t = 0; t < 3; t++) {
		CHECK(layout[t] ==
		      (uint64_t)tier_used_slots(w->fs->tiers[t]) * EXT);
	}
}

/* The tier of every extent of @inode in [@start, @start + @len), OR-ed
 * as bits, from its extent list. */
static uint32_t tiers_in_range(struct world *w, struct tfs_inode *inode,
			       uint64_t start, uint64_t len)
{
	uint64_t end = len > UINT64_MAX - start ? UINT64_MAX : start + len;
	uint32_t bits = 0;
	ssize_t tlen;
	char *text = get_text(w, inode, TIERFS_XATTR_EXTENTS, &tlen);
	const char *p = text;

	CHECK(text != NULL);
	while (*p) {
		unsigned long long s, l;
		char tier[TIER_CONF_NAME_MAX + 1];
		int n = 0;

		CHECK(sscanf(p, "%llu %llu %32s\n%n", &s, &l, tier, &n) == 3);
		/* whole extents: a partly covered one moves too */
		if (s < ((end + EXT - 1) & ~(uint64_t)(EXT - 1)) &&
		    s + l > (start & ~(uint64_t)(EXT - 1)))
			for (unsigned t = 0; t < w->fs->names.n; t++)
				if (!strcmp(tier, w->fs->names.name[t]))
					bits |= 1u << t;
		p += n;
	}
	free(text);
	return bits;
}

/*
 * After a migrate that succeeded: what ctl_proto.h says it did.  The
 * value is read again here, simply: "TIER" or "TIER START LENGTH", one
 * trailing newline or NUL.  Values this reading does not understand are
 * not checked.
 */
static void check_migrated(struct world *w, struct tfs_inode *inode,
			   const uint8_t *v, size_t vlen)
{
	char text[256], tier[64];
	unsigned long long start = 0, len = UINT64_MAX;
	int n = 0, t = -1;

	if (vlen && (v[vlen - 1] == '\n' || v[vlen - 1] == '\0'))
		vlen--;
	if (vlen >= sizeof(text) || memchr(v, '\0', vlen))
		return;
	memcpy(text, v, vlen);
	text[vlen] = '\0';
	if (!(sscanf(text, "%63s%n", tier, &n) == 1 && text[n] == '\0') &&
	    !(sscanf(text, "%63s %llu %llu%n", tier, &start, &len, &n) == 3 &&
	      text[n] == '\0'))
		return;
	for (unsigned i = 0; i < w->fs->names.n; i++)
		if (!strcmp(tier, w->fs->names.name[i]))
			t = (int)i;
	CHECK(t >= 0); /* it succeeded: the tier exists */
	CHECK((tiers_in_range(w, inode, start, len) & ~(1u << t)) == 0);
}

/* After a drain that succeeded, with no migrator: the tier is empty. */
static void check_drained(struct world *w, const uint8_t *v, size_t vlen)
{
	if (vlen && (v[vlen - 1] == '\n' || v[vlen - 1] == '\0'))
		vlen--;
	for (unsigned t = 0; t < w->fs->names.n; t++)
		if (strlen(w->fs->names.name[t]) == vlen &&
		    !memcmp(w->fs->names.name[t], v, vlen)) {
			CHECK(w->fs->draining & (1u << t));
			CHECK(tier_used_slots(w->fs->tiers[t]) == 0);
		}
}

static void do_request(struct world *w, uint8_t head, uint8_t nidx,
		       const uint8_t *v, size_t vlen)
{
	enum op op = (enum op)(head & 7);
	int node = (head >> 3) & 3;
	struct tfs_inode *inode = w->node[node];
	uid_t uid = uids[(head >> 5) & 3];
	const char *base = names[nidx % NNAMES];
	size_t blen = strlen(base);
	char name[256];
	char *buf;
	long r;

	if (base[blen - 1] == '@' || base[blen - 1] == '.') {
		/* the value is the rest of the name, up to a NUL */
		size_t n = strnlen((const char *)v, vlen);

		if (n > sizeof(name) - blen - 1)
			n = sizeof(name) - blen - 1;
		memcpy(name, base, blen);
		memcpy(name + blen, v, n);
		name[blen + n] = '\0';
		v += n;
		vlen -= n;
	} else {
		memcpy(name, base, blen + 1);
	}

	switch (op) {
	case OP_SET:
	case OP_SET_FLAGS:
		r = attr_set(w->fs, inode, name, v, vlen,
			      op == OP_SET ? 0 :
			      (head & 0x80) ? XATTR_REPLACE : XATTR_CREATE,
			      uid);
		trace("set", node, name, v, vlen, r);
		check_ret("setxattr", name, r);
		CHECK(r <= 0);
		if (r == 0 && !strcmp(name, TIERFS_XATTR_CTL_MIGRATE))
			check_migrated(w, inode, v, vlen);
		if (r == 0 && !strcmp(name, TIERFS_XATTR_CTL_DRAIN))
			check_drained(w, v, vlen);
		break;
	case OP_GET: {
		size_t size = get_sizes[(head >> 5) & 3];

		buf = malloc(size);
		CHECK(buf != NULL);
		r = attr_get(w->fs, inode, name, buf, size, NULL);
		trace("get", node, name, NULL, 0, r);
		check_ret("getxattr", name, r);
		CHECK(r <= (long)size);
		free(buf);
		break;
	}
	case OP_PROBE_GET: {
		long r2;

		r = attr_get(w->fs, inode, name, NULL, 0, NULL);
		trace("probe", node, name, NULL, 0, r);
		check_ret("getxattr", name, r);
		if (r < 0)
			break;
		CHECK(r <= BIG);
		/* exactly the size the probe said: ASan sees any overrun */
		buf = malloc(r ? (size_t)r : 1);
		CHECK(buf != NULL);
		r2 = attr_get(w->fs, inode, name, buf, (size_t)r, NULL);
		/* size 0 is a probe again; stats change between calls */
		if (r > 0 && strcmp(name, TIERFS_XATTR_STATS))
			CHECK(r2 == r);
		free(buf);
		break;
	}
	case OP_REMOVE:
		r = attr_remove(w->fs, inode, name, uid);
		trace("remove", node, name, NULL, 0, r);
		check_ret("removexattr", name, r);
		CHECK(r <= 0);
		break;
	case OP_LIST: {
		size_t size = get_sizes[(head >> 5) & 3];

		r = attr_list(w->fs, inode, NULL, 0);
		check_ret("listxattr", "", r);
		buf = malloc(size);
		CHECK(buf != NULL);
		r = attr_list(w->fs, inode, buf, size);
		check_ret("listxattr", "", r);
		if (r > 0) {
			CHECK((size_t)r <= size);
			CHECK(buf[r - 1] == '\0');
		}
		free(buf);
		break;
	}
	case OP_WRITE:
		if (vlen > 0 && (v[0] & 0x80))
			do_write_far(w, v, vlen);
		else
			do_write(w, v, vlen);
		break;
	case OP_CHECK:
		check_world(w);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t first[] = { 0, 24, 1 }; /* 24 KiB at 0 */
	struct world w;
	size_t i = 0;
	unsigned n = 0;

	world_create(&w);
	do_write(&w, first, sizeof(first));
	while (i + 2 <= size && n++ < MAX_REQUESTS) {
		uint8_t head = data[i], nidx = data[i + 1];
		const uint8_t *v = data + i + 2;
		const uint8_t *end = memchr(v, 0xff, size - i - 2);
		size_t vlen = end ? (size_t)(end - v) : size - i - 2;

		do_request(&w, head, nidx, v, vlen);
		i += 2 + vlen + (end ? 1 : 0);
	}
	check_world(&w);
	world_free(&w);
	return 0;
}
