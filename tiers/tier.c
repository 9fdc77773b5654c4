// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier.c -- the tier module's front: the kinds and their back ends,
 * creating and freeing a tier, its capacity and the free space of the
 * filesystems under tiers.  The data wrappers and checksums are
 * tier_io.c, the slot and unit allocator tier_units.c, the medium's
 * free space and the errno a tier failure gives tier_medium.c, the
 * backing directories tier_backing.c (tier_i.h, which says who calls
 * whom).  See tier.h for the contracts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "config.h"
#include "fdio.h"
#include "tier.h"
#include "tier_ops.h"
#include "tier_i.h"
#include "tier_watch.h"
#include "never.h"
#include "macro.h"
#include "size.h"
#include "banned.h"


static const char *const kind_names[_TIER_KIND_MAX] = {
	[TIER_RAM] = "ram",
	[TIER_PMEM] = "pmem",
	[TIER_FILE] = "file",
};

enum tier_kind tier_kind_parse(const char *s)
{
	for (int k = 0; k < _TIER_KIND_MAX; k++)
		if (s && !strcmp(s, kind_names[k]))
			return k;
	return _TIER_KIND_INVALID;
}

const char *tier_kind_name(enum tier_kind kind)
{
	if (kind < 0 || kind >= _TIER_KIND_MAX)
		return "invalid";
	return kind_names[kind];
}

static const struct tier_ops *kind_ops(enum tier_kind kind)
{
	switch (kind) {
	case TIER_RAM:
		return &tier_ram_ops;
	case TIER_PMEM:
#if HAVE_PMEM
		return &tier_pmem_ops;
#else
		return NULL; /* built with -Dpmem=disabled */
#endif
	case TIER_FILE:
		return &tier_file_ops;
	default:
		return NULL;
	}
}

unsigned tier_kind_caps(enum tier_kind kind)
{
	const struct tier_ops *ops = kind_ops(kind);

	return ops ? ops->caps : 0;
}

static bool name_is_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > TIER_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* Units, slots of address space and the bitmap's shape of a new tier. */
static void units_setup(struct tier *t, uint64_t size)
{
	uint64_t v = t->nslots;

	t->unit_shift = MAX((unsigned)__builtin_ctz(TIER_UNIT_MIN),
			    t->extent_shift -
				    (unsigned)__builtin_ctz(TIER_UNITS_MAX));
	t->units_per_slot = t->extent_size >> t->unit_shift;
	t->held_words = DIV_ROUND_UP(t->units_per_slot, 64u);
	t->held_stride = t->held_words + (t->ops->reserve_ahead ? 1u : 0u);
	t->cap_units = size >> t->unit_shift;
	t->limit_units = t->cap_units;
	if (t->ops->sparse) {
		v = MIN(t->cap_units, TIER_VIRT_MAX >> t->extent_shift);
		v = MIN(v, (uint64_t)UINT32_MAX);
		v = MAX(v, (uint64_t)t->nslots);
	}
	t->vslots = (uint32_t)v;
}

int tier_create(const char *name, enum tier_kind kind, const char *path,
		uint64_t size, uint32_t extent_size, struct tier **ret_tier)
{
	const struct tier_ops *ops;
	struct tier *t;
	uint64_t nslots;
	int r;

	if (!name_is_valid(name) || kind < 0 || kind >= _TIER_KIND_MAX)
		return -EINVAL;
	if (!is_power_of_2(extent_size) || extent_size < 4096)
		return -EINVAL;
	ops = kind_ops(kind);
	if (!ops)
		return -EOPNOTSUPP;
	if (ops->version != TIER_OPS_VERSION)
		return -EINVAL;
	nslots = size / extent_size;
	if (nslots == 0)
		return -EINVAL;
	if (nslots > UINT32_MAX)
		return -EFBIG;
	if ((ops->caps & TIER_CAP_PATH) && (!path || !*path))
		return -EINVAL;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	memcpy(t->name, name, strlen(name) + 1);
	t->kind = kind;
	t->size = size;
	t->extent_size = extent_size;
	t->extent_shift = (unsigned)__builtin_ctz(extent_size);
	t->nslots = (uint32_t)nslots;
	t->ops = ops;
	units_setup(t, size);
	pthread_mutex_init(&t->alloc_lock, NULL);
	if (ops->caps & TIER_CAP_PATH) {
		t->path = strdup(path);
		if (!t->path) {
			r = -ENOMEM;
			goto err_free;
		}
	}
	r = ops->open(t);
	if (r < 0) {
		t->ops = NULL; /* open cleaned up after itself */
		goto err_free;
	}
	/* sized for the slots open settled on */
	t->held = calloc(nchunks(t), sizeof(*t->held));
	if (!t->held) {
		r = -ENOMEM;
		goto err_free;
	}
	if (ops->caps & TIER_CAP_CSUM) {
		r = tier_csum_setup(t);
		if (r < 0)
			goto err_free;
	}
	/* a medium can stop answering; this process's memory cannot */
	if (!(ops->caps & TIER_CAP_MEMORY)) {
		t->watch = tier_watch_new();
		if (!t->watch) {
			r = -ENOMEM;
			goto err_free;
		}
	}
	if (ops->caps & TIER_CAP_PATH) {
		struct stat st;

		/* the filesystem whose free space the tier shares */
		if (stat(t->path, &st) == 0)
			t->dev = st.st_dev;
		else
			t->dev_shared = false; /* cannot group it: cap alone */
	}
	*ret_tier = t;
	return 0;

err_free:
	/* t->ops is NULL when open failed (it cleaned up itself); else
	 * tier_free() closes what open made */
	tier_free(t);
	return r;
}

struct tier *tier_free(struct tier *t)
{
	if (!t)
		return NULL;
	if (t->ops)
		t->ops->close(t);
	pthread_mutex_destroy(&t->alloc_lock);
	for (size_t c = 0; (t->held || t->csum) && c < nchunks(t); c++) {
		if (t->held)
			free(t->held[c]);
		if (t->csum)
			free(t->csum[c]);
	}
	free(t->held);
	free(t->csum);
	tier_watch_free(t->watch);
	free(t->free_stack);
	free(t->path);
	free(t);
	return NULL;
}

/* Free units, and whether a new extent could get a slot at all. */
static uint64_t cfg_free_units(struct tier *t)
{
	uint64_t used = __atomic_load_n(&t->used_units, __ATOMIC_RELAXED) +
			tier_native_units(t);
	uint64_t cap = __atomic_load_n(&t->limit_units, __ATOMIC_RELAXED);
	uint32_t taken = tier_used_slots(t) +
			 __atomic_load_n(&t->nleaked, __ATOMIC_RELAXED);

	if (taken >= t->vslots || used >= cap)
		return 0;
	return cap - used;
}

void tier_set_limit(struct tier *t, uint64_t bytes)
{
	uint64_t units = MIN(bytes >> t->unit_shift, t->cap_units);

	__atomic_store_n(&t->limit_units, units, __ATOMIC_RELAXED);
}

uint64_t tier_used_bytes(struct tier *t)
{
	return (__atomic_load_n(&t->used_units, __ATOMIC_RELAXED) +
		tier_native_units(t))
	       << t->unit_shift;
}

bool tier_can_native(const struct tier *t)
{
	return t->ops->native_new != NULL;
}

int tier_native_new(struct tier *t)
{
	int r;

	if (!t->ops->native_new)
		return -EOPNOTSUPP;
	if (cfg_free_units(t) == 0)
		return -ENOSPC;
	/* a file made in a hung filesystem: bounded as every call is */
	r = tier_watch_enter(t->watch, true);
	if (r < 0)
		return r;
	r = t->ops->native_new(t);
	tier_watch_leave(t->watch);
	return r;
}

int tier_native_stat(struct tier *t, int fd, struct stat *ret)
{
	int r = tier_watch_enter(t->watch, true);

	if (r < 0)
		return r;
	r = fstat(fd, ret) < 0 ? -errno : 0;
	tier_watch_leave(t->watch);
	return r;
}

void tier_native_account(struct tier *t, int64_t delta)
{
	uint64_t bytes, cur;

	if (t->ops->native_used || delta == 0)
		return;
	if (delta > 0) {
		bytes = __atomic_add_fetch(&t->native_acct, (uint64_t)delta,
					   __ATOMIC_RELAXED);
	} else {
		/* never below zero, whatever the races of the accounts */
		cur = __atomic_load_n(&t->native_acct, __ATOMIC_RELAXED);
		do
			bytes = cur - MIN(cur, (uint64_t)-delta);
		while (!__atomic_compare_exchange_n(&t->native_acct, &cur,
						    bytes, false,
						    __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED));
	}
	/* in whole units, as the tier counts its slots' bytes; a racing
	 * account stores its own figure next */
	__atomic_store_n(&t->native_units,
			 (bytes + tier_unit(t) - 1) >> t->unit_shift,
			 __ATOMIC_RELAXED);
}

uint64_t tier_native_bytes(struct tier *t)
{
	return tier_native_units(t) << t->unit_shift;
}

uint64_t tier_avail_bytes(struct tier *t)
{
	uint64_t n = cfg_free_units(t) << t->unit_shift;

	if (!t->dev_shared)
		return n;
	if (tier_medium_full(t) && !tier_medium_space_back(t, false))
		return 0;
	return MIN(n, ALIGN_DOWN(tier_dev_avail(t, false), tier_unit(t)));
}

uint32_t tier_free_slots(struct tier *t)
{
	uint32_t slots = t->vslots - MIN(t->vslots,
					 tier_used_slots(t) +
						 __atomic_load_n(&t->nleaked,
								 __ATOMIC_RELAXED));
	uint64_t whole = tier_avail_bytes(t) >> t->extent_shift;

	return whole < slots ? (uint32_t)whole : slots;
}

uint64_t tier_free_bytes(struct tier *const *tiers, unsigned n, uint32_t mask)
{
	uint64_t free[TIER_MAX] = { 0 };
	uint64_t sum = 0;
	bool done[TIER_MAX] = { false };

	n = MIN(n, (unsigned)TIER_MAX);
	for (unsigned i = 0; i < n; i++)
		if (mask & (1u << i))
			free[i] = tier_avail_bytes(tiers[i]);
	for (unsigned i = 0; i < n; i++) {
		uint64_t group, cap;

		if (!(mask & (1u << i)) || done[i])
			continue;
		if (!tiers[i]->dev_shared) {
			sum += free[i];
			continue;
		}
		/* every dev_shared tier on this filesystem, counted once */
		group = free[i];
		cap = __atomic_load_n(&tiers[i]->dev_avail, __ATOMIC_RELAXED);
		for (unsigned j = i + 1; j < n; j++) {
			if (!(mask & (1u << j)) || !tiers[j]->dev_shared ||
			    tiers[j]->dev != tiers[i]->dev)
				continue;
			done[j] = true;
			group += free[j];
		}
		cap = ALIGN_DOWN(cap, tier_unit(tiers[i]));
		sum += MIN(group, cap);
	}
	return sum;
}

int tier_check_shared_space(struct tier *const *tiers, unsigned n, char *why,
			    size_t len)
{
	n = MIN(n, (unsigned)TIER_MAX);
	for (unsigned i = 0; i < n; i++) {
		uint64_t sum = tiers[i]->size, avail;
		unsigned count = 1;
		char names[TIER_MAX * (TIER_NAME_MAX + 4) + 1];
		char s1[32], s2[32];
		size_t at;
		bool first = true;

		if (!tiers[i]->dev_shared)
			continue;
		for (unsigned j = 0; j < i; j++)
			if (tiers[j]->dev_shared && tiers[j]->dev == tiers[i]->dev)
				first = false;
		if (!first)
			continue; /* its group was checked with its first */
		for (unsigned j = i + 1; j < n; j++)
			if (tiers[j]->dev_shared &&
			    tiers[j]->dev == tiers[i]->dev) {
				sum += tiers[j]->size;
				count++;
			}
		avail = tier_dev_avail(tiers[i], true);
		if (count < 2 || sum <= avail)
			continue;
		at = (size_t)snprintf(names, sizeof(names), "'%s'",
				      tiers[i]->name);
		for (unsigned j = i + 1; j < n && at < sizeof(names); j++)
			if (tiers[j]->dev_shared &&
			    tiers[j]->dev == tiers[i]->dev)
				at += (size_t)snprintf(names + at,
						       sizeof(names) - at,
						       ", '%s'", tiers[j]->name);
		size_format(sum, s1, sizeof(s1));
		size_format(avail, s2, sizeof(s2));
		snprintf(why, len,
			 "tiers %s are on one filesystem (%s) and together need %s, but it has %s free",
			 names, tiers[i]->path, s1, s2);
		return -ENOSPC;
	}
	return 0;
}

/* stat() @p and compare with (@dev, @ino). */
static bool same_inode(const char *p, dev_t dev, ino_t ino)
{
	struct stat st;

	return stat(p, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

bool tier_path_within(const char *path, const char *dir)
{
	struct stat d;
	char *p, *slash;
	bool within = false;

	if (!path || !dir || stat(dir, &d) < 0)
		return false;
	p = realpath(path, NULL);
	if (!p)
		p = strdup(path); /* missing: its parents still tell */
	if (!p)
		return false;
	for (;;) {
		if (same_inode(*p ? p : "/", d.st_dev, d.st_ino)) {
			within = true;
			break;
		}
		/* up one component; "a//b/" and a relative path alike */
		slash = strrchr(p, '/');
		while (slash && slash > p && slash[1] == '\0') {
			*slash = '\0';
			slash = strrchr(p, '/');
		}
		if (!slash || !*p || !strcmp(p, "/"))
			break;
		if (slash == p)
			slash[1] = '\0'; /* "/x" -> "/" */
		else
			*slash = '\0';
	}
	free(p);
	return within;
}

void tier_set_timeout(struct tier *t, uint32_t ms)
{
	tier_watch_set_timeout(t->watch, ms);
}

bool tier_stalled(struct tier *t)
{
	return tier_watch_stalled(t->watch);
}

void tier_get_watch_stats(struct tier *t, struct tier_watch_stats *ret)
{
	tier_watch_get_stats(t->watch, ret);
}
