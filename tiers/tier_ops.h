/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tier_ops.h -- what a tier back end implements (struct tier_ops) and
 * the helpers the tier module gives back ends; tier.h is what fs/ may
 * call.  Included by the tier module's own files (tier*.c) and by the
 * back-end unit suites, never by fs/.  It includes no project header, so
 * that the module graph stays a DAG (tests/modgraph.py): struct tier is
 * tier.h's.
 */
#ifndef TIERFS_TIER_OPS_H
#define TIERFS_TIER_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tier;

/*
 * struct tier_ops - what a back end implements.
 *
 * @version:  TIER_OPS_VERSION; tier_create() refuses other values.
 * @caps:     what the back end is and needs (TIER_CAP_*): generic code
 *            asks these, never the kind, so a new back end says what it
 *            is here and nowhere else.
 * @sparse:   the back end's storage takes space only where written
 *            (and gives it back on @discard), so the tier may have more
 *            slots than extents of capacity (t->vslots > t->nslots).
 * @open:     create the backing storage for t->vslots slots of
 *            t->extent_size bytes at t->path (NULL for RAM); returns 0 or
 *            -errno.  May set t->priv.  Must leave the storage zeroed.
 *            May lower t->vslots (not below t->nslots) when address
 *            space or file size for all of them is not to be had.
 *            On failure it releases what it made itself: @close is not
 *            called for a tier whose @open failed.
 * @close:    release everything @open made and remove the backing data.
 * @read:     read @len bytes at byte @off of @slot into @buf; returns
 *            @len or -errno (a back end loops over short transfers).
 * @write:    write @len bytes from @buf at byte @off of @slot; returns
 *            @len or -errno.  Nothing is durable before @sync, which is
 *            fine: this is scratch.
 * @discard:  make bytes [@off, @off+@len) of @slot (unit aligned) read
 *            as zeros and give their backing space back where the
 *            medium allows; returns 0 or -errno.
 * @discard_run: optional: @discard of slots @first .. @first+@n-1 in one
 *            call (one hole punch); returns 0 or -errno, and on failure
 *            the caller discards slot by slot.
 * @discard_vec: optional: @discard of bytes [0, @lens[i]) of each
 *            @slots[i], i < @n, in one call (one TLB flush for many RAM
 *            slots: process_madvise()); returns 0 or -errno, and on
 *            failure the caller discards slot by slot (discarding a
 *            range twice is harmless).  @n <= TIER_DISCARD_VEC_MAX.
 * @sync:     flush written data to the medium; returns 0 or -errno.
 * @reserve:  optional: make sure writes into bytes [@off, @off+@len) of
 *            @slot (unit aligned), just charged, will not fail for want
 *            of space on the medium; returns 0 or -errno (-ENOSPC: the
 *            medium is full below the tier's size, and tier_charge()
 *            fails with it).
 * @reserve_ahead: @reserve costs a system call and reserving more than
 *            asked for costs only space on the medium, not memory: an
 *            extent filled front to back reserves its space in a few
 *            growing steps (tier_charge()), not once per write.
 * @direct:   optional: the address of byte @off of @slot when the tier
 *            lives in this process's memory and needs no checksum, so a
 *            reader may hand it to the kernel without a copy; NULL
 *            otherwise.  The address stays valid while the slot is held.
 * @native_new: optional (issue 33, tier.h "Native files"): a new, empty
 *            backing file for a native file: its descriptor (O_RDWR,
 *            close-on-exec, with no name, so that the kernel frees it
 *            with its last descriptor however the daemon ends), or
 *            -errno (-EOPNOTSUPP: the medium cannot hold one).  NULL:
 *            the tier holds no native files.
 * @native_used: optional: the bytes the tier's native files hold now,
 *            where the back end sees them all (the RAM tier's own tmpfs),
 *            or -errno; NULL: fs/ counts them (tier_native_account()).
 */
struct tier_ops {
	unsigned version;
	const char *kind_name;
	unsigned caps;
	bool sparse;
	bool reserve_ahead;
	int (*open)(struct tier *t);
	void (*close)(struct tier *t);
	ssize_t (*read)(struct tier *t, uint32_t slot, uint64_t off,
			void *buf, size_t len);
	ssize_t (*write)(struct tier *t, uint32_t slot, uint64_t off,
			 const void *buf, size_t len);
	int (*discard)(struct tier *t, uint32_t slot, uint64_t off,
		       uint64_t len);
	int (*sync)(struct tier *t);
	int (*reserve)(struct tier *t, uint32_t slot, uint64_t off,
		       uint64_t len);
	void *(*direct)(struct tier *t, uint32_t slot, uint64_t off);
	int (*discard_run)(struct tier *t, uint32_t first, uint32_t n);
	int (*discard_vec)(struct tier *t, const uint32_t *slots,
			   const uint64_t *lens, unsigned n);
	int (*native_new)(struct tier *t);
	int64_t (*native_used)(struct tier *t);
};

#define TIER_OPS_VERSION 4

/* Most slots in one @discard_vec call: under the kernel's UIO_MAXIOV
 * (1024) for process_madvise(), and a bound on the callers' arrays. */
#define TIER_DISCARD_VEC_MAX 256u

/* Inside tier_bulk_begin() .. tier_bulk_end() (tier.h) on this thread:
 * a back end that can keep bulk copies out of its medium's page cache
 * does. */
bool tier_bulk(void);

/*
 * Helpers for back ends that keep their data under a directory (pmem,
 * file).  Each returns 0 or -errno.
 *
 * tier_path_check() - @path is a directory that access() says we may
 * write: -ENOENT, -ENOTDIR, -EACCES or -EROFS otherwise.
 * tier_space_check() - the filesystem holding @path has @size bytes
 * free: -ENOSPC otherwise.
 * tier_private_dir_create() - make @path/tierfs-@name-XXXXXX, mode 0700
 * whatever the umask, holding one empty file "lock" (0600) that stays
 * locked (flock) while *ret_lock_fd is open: that is how a later mount
 * tells a dead mount's directory from a live one.  This is also the real
 * create test (access() says yes to root on /proc, or on NFS with root
 * squashing; such refusals, EPERM or ENOENT, become -EACCES).  On
 * success the caller owns *ret_dir and *ret_lock_fd and gives both back
 * with tier_private_dir_remove().
 * tier_private_dir_remove() - close the lock, then remove the lock
 * file, a named slab ("slab", see below) and the directory, waiting up
 * to 2 s for a hidden .fuse_hidden / .nfs file of a just-closed slab to
 * go; accepts NULL / -1 and things already gone.  The caller closes
 * (and unmaps) the slab first.
 * tier_backing_open() - an unlinked file (O_TMPFILE; where the
 * filesystem lacks that, a file created and unlinked at once) in @dir,
 * mode 0600: its data lives exactly as long as some process holds it
 * open or mapped, so a daemon killed by any means leaves none behind.
 * Where the filesystem cannot use a file unlinked while open (GlusterFS:
 * ESTALE), the file stays named, @dir/slab, until
 * tier_private_dir_remove() or, after a crash, the next mount's sweep.
 * Returns the fd (O_RDWR, O_CLOEXEC) or -errno.
 * tier_sweep_stale() - remove the private directories in @path that a
 * dead mount left: a tierfs-* directory holding a lock file nobody
 * holds (with a named "slab" or not), or (an older tierfs, which had no
 * lock file) a "slab" and nothing else, plus the hidden name an
 * unlinked slab has while still open -- NFS's silly-renamed .nfsXXXX
 * when the node died, a FUSE filesystem's .fuse_hiddenN -- or nothing
 * at all (an empty directory); only
 * directories we own (or any as root) whose entries are just those.  Adds what it removed to
 * *ret_dirs and the bytes freed to *ret_bytes.  Best effort: returns
 * nothing; a directory it cannot judge is left alone.
 */
int tier_path_check(const char *path);
int tier_space_check(const char *path, uint64_t size);
/*
 * tier_backing_prepare() - what every back end with TIER_CAP_PATH does
 * first, in this order: tier_path_check() of t->path, then
 * tier_private_dir_create() (before the space check: an unwritable
 * directory is the clearer complaint), then tier_sweep_stale() (what
 * dead mounts left goes before the space check, t->swept_*), then
 * tier_space_check() of t->size.  On success the caller owns *ret_dir
 * and *ret_lock_fd as after tier_private_dir_create(); on failure
 * nothing is left (*ret_dir NULL, *ret_lock_fd -1).
 */
int tier_backing_prepare(struct tier *t, char **ret_dir, int *ret_lock_fd);
int tier_private_dir_create(const char *path, const char *name,
			    char **ret_dir, int *ret_lock_fd);
void tier_private_dir_remove(char *dir, int lock_fd);
int tier_backing_open(const char *dir);
void tier_sweep_stale(const char *path, unsigned *ret_dirs,
		      uint64_t *ret_bytes);

/* Back ends, one per kind (NULL where this build lacks one). */
extern const struct tier_ops tier_ram_ops;
extern const struct tier_ops tier_pmem_ops;
extern const struct tier_ops tier_file_ops;

#endif /* TIERFS_TIER_OPS_H */
