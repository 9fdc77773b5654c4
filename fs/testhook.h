/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * testhook.h -- named points in the data mover and the migrator where a
 * unit test may stop a thread, so that it forces each window of the
 * copy/switch protocol deterministically instead of relying on timing
 * (tests/unit/test_data.c, test_migrate.c).
 *
 * testhook_fn is NULL in production: each point costs one load of a
 * global and a branch predicted not taken.  A test sets it before it
 * starts the operation it wants to stop and clears it afterwards; the
 * hook runs in the thread that reaches the point and may block there
 * (on a condition variable the test signals) for as long as it likes.
 *
 * At every point the thread holds no lock at all (no i_dlock, no
 * i_lock, no itab_lock), so the test may write, truncate, punch or
 * unlink the file from another thread meanwhile.
 */
#ifndef TIERFS_TESTHOOK_H
#define TIERFS_TESTHOOK_H

#include <stdint.h>

#include "macro.h"

struct tfs_inode;

enum testhook_point {
	/* data_migrate_extent(): the destination slot is taken and the
	 * first chunk of the source read (into it, or into a buffer); its
	 * write generation was noted before */
	TESTHOOK_MOVE_COPIED,
	/* data_migrate_extent(): the copy is written to its destination
	 * slot; the switch (under the exclusive data lock) comes next */
	TESTHOOK_MOVE_WRITTEN,
	/* data_migrate_extent(): the switch is done (or refused) and the
	 * data lock dropped; the slot not kept (source on success,
	 * destination on -EAGAIN) is given back next */
	TESTHOOK_MOVE_SWITCHED,
	/* migrator pass: every candidate collected and its inode pinned;
	 * no extent moved yet (@inode NULL, @idx 0) */
	TESTHOOK_MIGRATE_COLLECTED,
	/* data_copy(): a hole of the source is punched in the destination
	 * (@inode, at extent @idx), whose size is not yet grown to the
	 * hole's end -- the window where a concurrent write extending the
	 * destination was once cut off by a truncate to a size read before
	 * it */
	TESTHOOK_COPY_HOLE,
	_TESTHOOK_MAX,
};

/*
 * The hook, or NULL.  @inode and @idx name the extent being moved (NULL
 * and 0 for a migrator-wide point).  Set and cleared by tests only,
 * while no operation that reaches a point runs.
 */
extern void (*testhook_fn)(enum testhook_point point,
			   struct tfs_inode *inode, uint64_t idx);

static inline void testhook(enum testhook_point point,
			    struct tfs_inode *inode, uint64_t idx)
{
	void (*fn)(enum testhook_point, struct tfs_inode *, uint64_t) =
		__atomic_load_n(&testhook_fn, __ATOMIC_ACQUIRE);

	if (unlikely(fn != NULL))
		fn(point, inode, idx);
}

#endif /* TIERFS_TESTHOOK_H */
