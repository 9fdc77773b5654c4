// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tier.c -- tier registry, slot allocator and the thin data wrappers
 * around struct tier_ops.  See tier.h for the contracts.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

int tier_slot_alloc(struct tier *t, uint32_t *ret_slot)
{
	uint32_t slot = 0;
	int r = 0;

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

uint32_t tier_free_slots(const struct tier *t)
{
	return t->nslots - tier_used_slots(t) -
	       __atomic_load_n(&t->nleaked, __ATOMIC_RELAXED);
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
			return -EIO;
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

int tier_verify_slot(struct tier *t, uint32_t slot)
{
	size_t len = t->extent_size;
	char *buf;
	ssize_t r;

	if (!t->csum)
		return 0;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	r = raw_read(t, slot, 0, buf, len);
	if (r >= 0)
		r = csum_check(t, slot, 0, buf, len);
	free(buf);
	return r < 0 ? (int)r : 0;
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

int tier_private_dir_create(const char *path, const char *name,
			    char **ret_dir)
{
	char *dir;
	int r;

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
		(void)rmdir(dir);
		free(dir);
		return r;
	}
	*ret_dir = dir;
	return 0;
}
