// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier.c -- tier registry, slot allocator and the thin data wrappers
 * around struct tier_ops.  See tier.h for the contracts.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "config.h"
#include "tier.h"
#include "never.h"
#include "macro.h"
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

static uint32_t block_hash(const void *buf, size_t len)
{
	return (uint32_t)XXH3_64bits(buf, len);
}

/* Allocate the checksum table; every block starts as all zeros. */
static int csum_setup(struct tier *t)
{
	size_t n;
	void *zero;

	t->csum_shift = MIN(TIER_CSUM_BLOCK_SHIFT, t->extent_shift);
	t->csum_per_slot = t->extent_size >> t->csum_shift;
	n = (size_t)t->nslots * t->csum_per_slot;
	t->csum = malloc(n * sizeof(*t->csum));
	zero = calloc(1, (size_t)1 << t->csum_shift);
	if (!t->csum || !zero) {
		free(zero);
		return -ENOMEM;
	}
	t->csum_zero = block_hash(zero, (size_t)1 << t->csum_shift);
	free(zero);
	for (size_t i = 0; i < n; i++)
		t->csum[i] = t->csum_zero;
	return 0;
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
	if (kind != TIER_RAM && (!path || !*path))
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
	pthread_mutex_init(&t->alloc_lock, NULL);
	if (kind != TIER_RAM) {
		t->path = strdup(path);
		if (!t->path) {
			r = -ENOMEM;
			goto err_free;
		}
	}
	if (kind != TIER_RAM) {
		r = csum_setup(t);
		if (r < 0)
			goto err_free;
	}
	r = ops->open(t);
	if (r < 0)
		goto err_free;
	if (kind != TIER_RAM) {
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
	/* ops->close copes with a half-open tier; open cleaned itself */
	t->ops = NULL;
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
	free(t->csum);
	free(t->free_stack);
	free(t->path);
	free(t);
	return NULL;
}

static void slot_put_back(struct tier *t, uint32_t slot);

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Bytes free on the filesystem under @t: statvfs() of its path, at most
 * once per TIER_STATVFS_MS unless @fresh (statfs is called often; on a
 * network filesystem a statvfs() is a round trip).  Racing refreshes
 * are harmless: each stores a true value.  When statvfs() fails (the
 * path was removed behind our back) the tier is not capped.
 */
static uint64_t dev_avail(struct tier *t, bool fresh)
{
	int64_t now = now_ms();
	int64_t last = __atomic_load_n(&t->dev_checked_ms, __ATOMIC_RELAXED);
	struct statvfs vfs;
	uint64_t avail;

	if (!fresh && last && now - last < TIER_STATVFS_MS)
		return __atomic_load_n(&t->dev_avail, __ATOMIC_RELAXED);
	if (statvfs(t->path, &vfs) < 0)
		avail = UINT64_MAX;
	else if (__builtin_mul_overflow((uint64_t)vfs.f_bavail,
					(uint64_t)vfs.f_frsize, &avail))
		avail = UINT64_MAX;
	__atomic_store_n(&t->dev_avail, avail, __ATOMIC_RELAXED);
	__atomic_store_n(&t->dev_checked_ms, now ? now : 1, __ATOMIC_RELAXED);
	return avail;
}

/*
 * While the medium is full: has space come back?  Yes once statvfs()
 * shows at least an extent more free than when it filled (the free
 * space the filesystem reported then was not enough for a reserve).
 * Clears medium_full when so.
 */
static bool medium_space_back(struct tier *t, bool fresh)
{
	uint64_t avail = dev_avail(t, fresh);
	uint64_t then = __atomic_load_n(&t->full_avail, __ATOMIC_RELAXED);

	if (avail < then || avail - then < t->extent_size)
		return false;
	__atomic_store_n(&t->medium_full, false, __ATOMIC_RELAXED);
	return true;
}

int tier_slot_alloc(struct tier *t, uint32_t *ret_slot)
{
	uint32_t slot = 0;
	int r = 0;

	/* a full medium: no new slot (and no failed reserve to count)
	 * until statvfs() shows that space came back */
	if (t->dev_shared && tier_medium_full(t) && !medium_space_back(t, true))
		return -ENOSPC;
	pthread_mutex_lock(&t->alloc_lock);
	/*
	 * nused is written atomically (under the lock) because
	 * tier_used_slots() reads it without the lock.
	 */
	if (t->nfree_stack > 0) {
		slot = t->free_stack[--t->nfree_stack];
		__atomic_add_fetch(&t->nused, 1, __ATOMIC_RELAXED);
	} else if (t->hwm < t->nslots) {
		slot = t->hwm++;
		__atomic_add_fetch(&t->nused, 1, __ATOMIC_RELAXED);
	} else {
		r = -ENOSPC;
	}
	pthread_mutex_unlock(&t->alloc_lock);
	if (r == 0 && t->ops->reserve) {
		r = t->ops->reserve(t, slot);
		if (r < 0) {
			/* the medium failed below the configured size */
			__atomic_add_fetch(&t->stats.io_errors, 1,
					   __ATOMIC_RELAXED);
			slot_put_back(t, slot);
		}
		if (r == -ENOSPC && t->dev_shared) {
			/* remember what statvfs() called free when it was not */
			(void)dev_avail(t, true);
			__atomic_store_n(&t->full_avail,
					 __atomic_load_n(&t->dev_avail,
							 __ATOMIC_RELAXED),
					 __ATOMIC_RELAXED);
		}
		if (r == 0 || r == -ENOSPC)
			__atomic_store_n(&t->medium_full, r == -ENOSPC,
					 __ATOMIC_RELAXED);
	}
	if (r == 0)
		*ret_slot = slot;
	return r;
}

/*
 * The free stack grows on demand so that a huge, mostly idle tier costs
 * no memory for it.  Called with alloc_lock held.
 */
static int free_stack_push(struct tier *t, uint32_t slot)
{
	if (!t->free_stack) {
		/* at most every slot is free at once: allocate that once */
		t->free_stack = malloc(sizeof(uint32_t) * (size_t)t->nslots);
		if (!t->free_stack)
			return -ENOMEM;
	}
	if (NEVER(t->nfree_stack >= t->nslots))
		return -EIO; /* the caller leaks the slot: never hands it out twice */
	t->free_stack[t->nfree_stack++] = slot;
	return 0;
}

void tier_slot_free(struct tier *t, uint32_t slot)
{
	int r;

	if (NEVER(slot >= t->nslots))
		return;
	r = t->ops->discard(t, slot);
	if (r < 0)
		r = tier_zero(t, slot, 0, t->extent_size);
	else if (t->csum)
		for (unsigned b = 0; b < t->csum_per_slot; b++)
			t->csum[(size_t)slot * t->csum_per_slot + b] =
				t->csum_zero;
	pthread_mutex_lock(&t->alloc_lock);
	if (!NEVER(t->nused == 0))
		__atomic_sub_fetch(&t->nused, 1, __ATOMIC_RELAXED);
	if (r < 0 || free_stack_push(t, slot) < 0) {
		/* leaked: never hand out a slot that may hold old data, and
		 * never count it as free space either */
		__atomic_add_fetch(&t->stats.io_errors, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->nleaked, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&t->alloc_lock);
}

void tier_slot_free_run(struct tier *t, uint32_t first, uint32_t n)
{
	uint32_t leaked = 0;

	if (NEVER(first >= t->nslots || n > t->nslots - first))
		return;
	if (n == 1 || !t->ops->discard_run ||
	    t->ops->discard_run(t, first, n) < 0) {
		for (uint32_t i = 0; i < n; i++)
			tier_slot_free(t, first + i);
		return;
	}
	if (t->csum)
		for (size_t b = (size_t)first * t->csum_per_slot;
		     b < (size_t)(first + n) * t->csum_per_slot; b++)
			t->csum[b] = t->csum_zero;
	pthread_mutex_lock(&t->alloc_lock);
	if (!NEVER(t->nused < n))
		__atomic_sub_fetch(&t->nused, n, __ATOMIC_RELAXED);
	/* last first, so that allocation hands the run out in order */
	for (uint32_t i = n; i-- > 0;)
		if (free_stack_push(t, first + i) < 0)
			leaked++;
	if (leaked) {
		__atomic_add_fetch(&t->stats.io_errors, leaked, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->nleaked, leaked, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&t->alloc_lock);
}

/* Undo tier_slot_alloc() of a slot nothing was written to. */
static void slot_put_back(struct tier *t, uint32_t slot)
{
	pthread_mutex_lock(&t->alloc_lock);
	__atomic_sub_fetch(&t->nused, 1, __ATOMIC_RELAXED);
	if (free_stack_push(t, slot) < 0)
		__atomic_add_fetch(&t->nleaked, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->alloc_lock);
}

uint32_t tier_used_slots(const struct tier *t)
{
	return __atomic_load_n(&t->nused, __ATOMIC_RELAXED);
}

static uint32_t cfg_free_slots(const struct tier *t)
{
	return t->nslots - tier_used_slots(t) -
	       __atomic_load_n(&t->nleaked, __ATOMIC_RELAXED);
}

uint32_t tier_free_slots(struct tier *t)
{
	uint32_t n = cfg_free_slots(t);
	uint64_t dev;

	if (!t->dev_shared)
		return n;
	if (tier_medium_full(t) && !medium_space_back(t, false))
		return 0;
	dev = dev_avail(t, false) >> t->extent_shift;
	return dev < n ? (uint32_t)dev : n;
}

uint64_t tier_free_bytes(struct tier *const *tiers, unsigned n, uint32_t mask)
{
	uint64_t free[TIER_MAX] = { 0 };
	uint64_t sum = 0;
	bool done[TIER_MAX] = { false };

	n = MIN(n, (unsigned)TIER_MAX);
	for (unsigned i = 0; i < n; i++)
		if (mask & (1u << i))
			free[i] = (uint64_t)tier_free_slots(tiers[i]) *
				  tiers[i]->extent_size;
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
		cap = ALIGN_DOWN(cap, (uint64_t)tiers[i]->extent_size);
		sum += MIN(group, cap);
	}
	return sum;
}

/* @v in a short human form (powers of 1024, as sizes are given). */
static void fmt_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	while (d >= 1024 && u < (int)sizeof(units) - 2) {
		d /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%llu bytes", (unsigned long long)v);
	else
		snprintf(buf, len, "%.1f%c", d, units[u]);
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
		avail = dev_avail(tiers[i], true);
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
		fmt_size(s1, sizeof(s1), sum);
		fmt_size(s2, sizeof(s2), avail);
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

/* Returns the injected -errno when the test hook fires, else 0. */
static int fault_check(struct tier *t)
{
	int n = __atomic_load_n(&t->fault_countdown, __ATOMIC_RELAXED);

	/* count down without ever passing zero, whatever other threads do */
	while (unlikely(n > 0)) {
		if (__atomic_compare_exchange_n(&t->fault_countdown, &n, n - 1,
						false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return n == 1 ? (t->fault_errno ? -t->fault_errno : -EIO)
				      : 0;
	}
	return 0;
}

static ssize_t raw_read(struct tier *t, uint32_t slot, uint64_t off,
			void *buf, size_t len)
{
	ssize_t r = fault_check(t);

	if (r == 0)
		r = t->ops->read(t, slot, off, buf, len);
	if (r < 0)
		__atomic_add_fetch(&t->stats.io_errors, 1, __ATOMIC_RELAXED);
	return r;
}

static ssize_t raw_write(struct tier *t, uint32_t slot, uint64_t off,
			 const void *buf, size_t len)
{
	ssize_t r = fault_check(t);

	if (r == 0)
		r = t->ops->write(t, slot, off, buf, len);
	if (r < 0)
		__atomic_add_fetch(&t->stats.io_errors, 1, __ATOMIC_RELAXED);
	return r;
}

static inline uint32_t *csum_of(struct tier *t, uint32_t slot, uint64_t off)
{
	return &t->csum[(size_t)slot * t->csum_per_slot +
			(off >> t->csum_shift)];
}

/*
 * Per-thread bounce buffer for reads that do not cover whole checksum
 * blocks; owned by its thread, grown on demand, freed at thread exit.
 */
static pthread_key_t bounce_key;
static pthread_once_t bounce_once = PTHREAD_ONCE_INIT;

struct bounce {
	size_t size;
	char data[];
};

static void bounce_key_init(void)
{
	(void)pthread_key_create(&bounce_key, free);
}

static char *bounce_get(size_t size)
{
	struct bounce *b;

	pthread_once(&bounce_once, bounce_key_init);
	b = pthread_getspecific(bounce_key);
	if (b && b->size >= size)
		return b->data;
	free(b);
	b = malloc(sizeof(*b) + size);
	if (b)
		b->size = size;
	(void)pthread_setspecific(bounce_key, b);
	return b ? b->data : NULL;
}

/* Check blocks [off, off+len) of @slot held in @buf (block aligned). */
static int csum_check(struct tier *t, uint32_t slot, uint64_t off,
		      const char *buf, size_t len)
{
	size_t bs = (size_t)1 << t->csum_shift;

	for (size_t i = 0; i < len; i += bs) {
		if (block_hash(buf + i, bs) != *csum_of(t, slot, off + i)) {
			__atomic_add_fetch(&t->stats.csum_errors, 1,
					   __ATOMIC_RELAXED);
			return -EBADMSG;
		}
	}
	return 0;
}

ssize_t tier_read(struct tier *t, uint32_t slot, uint64_t off, void *buf,
		  size_t len)
{
	ssize_t r;

	if (NEVER(slot >= t->nslots || off + len > t->extent_size))
		return -EIO;
	if (t->csum) {
		/* read whole blocks, verify them, hand out the range asked */
		size_t bs = (size_t)1 << t->csum_shift;
		uint64_t a = ALIGN_DOWN(off, (uint64_t)bs);
		uint64_t z = ALIGN_UP(off + len, (uint64_t)bs);
		bool aligned = a == off && z == off + len;
		char *tmp = aligned ? buf : bounce_get((size_t)(z - a));

		if (!tmp)
			return -ENOMEM;
		r = raw_read(t, slot, a, tmp, (size_t)(z - a));
		if (r >= 0)
			r = csum_check(t, slot, a, tmp, (size_t)(z - a));
		if (r < 0)
			return r;
		if (!aligned)
			memcpy(buf, tmp + (off - a), len);
		r = (ssize_t)len;
	} else {
		r = raw_read(t, slot, off, buf, len);
		if (r < 0)
			return r;
	}
	__atomic_add_fetch(&t->stats.read_ops, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->stats.read_bytes, (uint64_t)r, __ATOMIC_RELAXED);
	return r;
}

/*
 * New checksums for a write of @len bytes at @off: whole blocks are
 * hashed from @buf, a partly covered block is read back (and verified:
 * never bless corrupt data with a fresh checksum), patched and hashed.
 * Fills @ret_sums (one per touched block) without changing the table,
 * so that a failed write leaves the old checksums in place.
 */
static int csum_compute(struct tier *t, uint32_t slot, uint64_t off,
			const char *buf, size_t len, uint32_t *ret_sums)
{
	size_t bs = (size_t)1 << t->csum_shift;
	uint64_t a = ALIGN_DOWN(off, (uint64_t)bs);
	unsigned n = 0;

	for (uint64_t b = a; b < off + len; b += bs, n++) {
		uint64_t s = MAX(b, off), e = MIN(b + bs, off + len);
		char *blk;
		ssize_t r;

		if (s == b && e == b + bs) {
			ret_sums[n] = block_hash(buf + (b - off), bs);
			continue;
		}
		blk = bounce_get(bs);
		if (!blk)
			return -ENOMEM;
		r = raw_read(t, slot, b, blk, bs);
		if (r >= 0)
			r = csum_check(t, slot, b, blk, bs);
		if (r < 0)
			return (int)r;
		memcpy(blk + (s - b), buf + (s - off), (size_t)(e - s));
		ret_sums[n] = block_hash(blk, bs);
	}
	return 0;
}

ssize_t tier_write(struct tier *t, uint32_t slot, uint64_t off,
		   const void *buf, size_t len)
{
	uint32_t sums_small[32];
	uint32_t *sums = sums_small;
	unsigned nb = 0;
	ssize_t r;

	if (NEVER(slot >= t->nslots || off + len > t->extent_size))
		return -EIO;
	if (t->csum && len > 0) {
		size_t bs = (size_t)1 << t->csum_shift;

		nb = (unsigned)((ALIGN_UP(off + len, (uint64_t)bs) -
				 ALIGN_DOWN(off, (uint64_t)bs)) >>
				t->csum_shift);
		if (nb > ARRAY_SIZE(sums_small)) {
			sums = malloc(nb * sizeof(*sums));
			if (!sums)
				return -ENOMEM;
		}
		r = csum_compute(t, slot, off, buf, len, sums);
		if (r < 0)
			goto out;
	}
	r = raw_write(t, slot, off, buf, len);
	if (r < 0)
		goto out;
	for (unsigned i = 0; i < nb; i++)
		csum_of(t, slot, off)[i] = sums[i];
	__atomic_add_fetch(&t->stats.write_ops, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&t->stats.write_bytes, (uint64_t)r,
			   __ATOMIC_RELAXED);
out:
	if (sums != sums_small)
		free(sums);
	return r;
}

int tier_zero(struct tier *t, uint32_t slot, uint64_t off, size_t len)
{
	static const char zeros[65536];

	while (len > 0) {
		size_t n = MIN(len, sizeof(zeros));
		ssize_t r = tier_write(t, slot, off, zeros, n);

		if (r < 0)
			return (int)r;
		off += n;
		len -= n;
	}
	return 0;
}

const void *tier_read_direct(struct tier *t, uint32_t slot, uint64_t off,
			     size_t len)
{
	void *p;

	if (NEVER(slot >= t->nslots || off + len > t->extent_size))
		return NULL;
	if (!t->ops->direct || t->csum ||
	    __atomic_load_n(&t->fault_countdown, __ATOMIC_RELAXED))
		return NULL;
	p = t->ops->direct(t, slot, off);
	if (p) {
		__atomic_add_fetch(&t->stats.read_ops, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&t->stats.read_bytes, len, __ATOMIC_RELAXED);
	}
	return p;
}

int tier_sync(struct tier *t)
{
	return t->ops->sync ? t->ops->sync(t) : 0;
}

int tier_path_check(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(path, W_OK | X_OK) < 0)
		return -errno; /* EACCES, or EROFS on a read-only mount */
	return 0;
}

int tier_space_check(const char *path, uint64_t size)
{
	struct statvfs vfs;
	uint64_t avail;

	if (statvfs(path, &vfs) < 0)
		return -errno;
	if (__builtin_mul_overflow((uint64_t)vfs.f_bavail,
				   (uint64_t)vfs.f_frsize, &avail))
		avail = UINT64_MAX;
	if (size > avail)
		return -ENOSPC;
	return 0;
}

#define LOCK_NAME "lock"
#define OLD_SLAB_NAME "slab" /* the named slab of an older tierfs */

int tier_private_dir_create(const char *path, const char *name,
			    char **ret_dir, int *ret_lock_fd)
{
	char *dir, *lock = NULL;
	int fd = -1, r;

	if (asprintf(&dir, "%s/tierfs-%s-XXXXXX", path, name) < 0)
		return -ENOMEM;
	if (!mkdtemp(dir)) {
		r = -errno;
		free(dir);
		if (r == -EPERM || r == -ENOENT)
			r = -EACCES;
		return r;
	}
	/* mkdtemp() honours the umask; the mode must not depend on it */
	if (chmod(dir, 0700) < 0) {
		r = -errno;
		goto err;
	}
	if (asprintf(&lock, "%s/" LOCK_NAME, dir) < 0) {
		lock = NULL;
		r = -ENOMEM;
		goto err;
	}
	fd = open(lock, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0 || fchmod(fd, 0600) < 0) {
		r = -errno;
		goto err;
	}
	/*
	 * Held until the fd is closed, by exit or by the kernel when the
	 * process dies.  A filesystem without flock() (ENOLCK, EOPNOTSUPP:
	 * NFS mounted nolock, some parallel filesystems) makes a directory
	 * that no sweep removes, which is the safe way to be wrong.
	 */
	while (flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EINTR)
		;
	free(lock);
	*ret_dir = dir;
	*ret_lock_fd = fd;
	return 0;

err:
	if (fd >= 0)
		(void)close(fd);
	if (lock)
		(void)unlink(lock);
	free(lock);
	(void)rmdir(dir);
	free(dir);
	return r;
}

void tier_private_dir_remove(char *dir, int lock_fd)
{
	char *lock;

	/* unlink while still holding the lock: no sweep takes it meanwhile */
	if (dir && asprintf(&lock, "%s/" LOCK_NAME, dir) >= 0) {
		(void)unlink(lock);
		free(lock);
	}
	if (dir)
		(void)rmdir(dir);
	if (lock_fd >= 0)
		(void)close(lock_fd);
}

int tier_backing_open(const char *dir)
{
	char *name;
	int fd, r;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR ||
		       errno == EINVAL || errno == ENOENT)) {
		/*
		 * No O_TMPFILE here (an older kernel, NFS, FUSE): a named
		 * file, unlinked before it holds a byte.
		 */
		if (asprintf(&name, "%s/" OLD_SLAB_NAME, dir) < 0)
			return -ENOMEM;
		fd = open(name,
			  O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			  0600);
		if (fd >= 0 && unlink(name) < 0) {
			r = -errno;
			(void)unlink(name);
			(void)close(fd);
			free(name);
			return r;
		}
		free(name);
	}
	if (fd < 0)
		return -errno;
	/* open() honours the umask */
	if (fchmod(fd, 0600) < 0) {
		r = -errno;
		(void)close(fd);
		return r;
	}
	return fd;
}

/*
 * Is @dir (an open directory, name @name in @path) a dead mount's private
 * directory?  Then remove it and add the bytes freed to *ret_bytes.
 */
static bool sweep_one(int dfd, const char *name, uint64_t *ret_bytes)
{
	int fd, lfd = -1;
	bool has_lock = false, has_slab = false, other = false, dead = false;
	uint64_t bytes = 0;
	struct dirent *de;
	struct stat st;
	DIR *d;

	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || (st.st_uid != geteuid() && geteuid() != 0)) {
		(void)close(fd);
		return false;
	}
	d = fdopendir(fd);
	if (!d) {
		(void)close(fd);
		return false;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			other = true;
		else if (!strcmp(de->d_name, LOCK_NAME))
			has_lock = true;
		else if (!strcmp(de->d_name, OLD_SLAB_NAME)) {
			has_slab = true;
			bytes = (uint64_t)st.st_blocks * 512;
		} else
			other = true;
	}
	if (other || (!has_lock && !has_slab))
		goto out; /* not ours, or a mount being set up right now */
	if (has_lock) {
		lfd = openat(fd, LOCK_NAME, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		dead = lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) == 0;
	} else {
		/*
		 * An older tierfs's directory has no lock to ask.  Removing
		 * it is safe even if that daemon still runs: its open fd or
		 * mapping keeps the data until it exits, and then the kernel
		 * frees it instead of leaving it behind.
		 */
		dead = true;
	}
	if (!dead)
		goto out;
	if (has_slab && unlinkat(fd, OLD_SLAB_NAME, 0) < 0)
		bytes = 0;
	if (has_lock)
		(void)unlinkat(fd, LOCK_NAME, 0);
	dead = unlinkat(dfd, name, AT_REMOVEDIR) == 0 || bytes > 0;
	if (dead)
		*ret_bytes += bytes;
out:
	if (lfd >= 0)
		(void)close(lfd);
	closedir(d);
	return dead;
}

void tier_sweep_stale(const char *path, unsigned *ret_dirs,
		      uint64_t *ret_bytes)
{
	struct dirent *de;
	DIR *d = opendir(path);

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		/* tierfs-NAME-XXXXXX */
		if (n < sizeof("tierfs-x-XXXXXX") - 1 ||
		    strncmp(de->d_name, "tierfs-", 7) ||
		    de->d_name[n - 7] != '-' ||
		    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (sweep_one(dirfd(d), de->d_name, ret_bytes))
			(*ret_dirs)++;
	}
	closedir(d);
}
