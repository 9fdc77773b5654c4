// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_data.c -- Check suite for fs/data.c on a real in-process mount
 * (t_fs.h: a tiny RAM tier over a file tier): patterns written, cut,
 * punched and moved between tiers read back as a shadow copy says;
 * slots are never leaked.
 *
 * Faults: every tier call an operation makes is failed in turn, as
 * SQLite does with its I/O error counter -- n = 1, 2, ... until the
 * operation runs without the fault firing.  For each n the operation
 * must fail cleanly (or succeed, if the failed call was retried), what
 * was acknowledged must still read back, no slot may leak, and the
 * file must take a write afterwards.
 *
 * Windows: a move of an extent (data_migrate_extent()) is stopped at
 * each named point of its copy/switch protocol (fs/testhook.h) while
 * another thread writes, truncates, punches or unlinks; the move must
 * then abort with -EAGAIN or finish on the new data, and the tiers'
 * used slots must come back to what the file holds.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fs.h"
#include "inode.h"
#include "data.h"
#include "faulty_tier.h"
#include "t_fs.h"
#include "tap.h"

#define EXT (64u * 1024)
#define CAP (16u * EXT) /* largest file of these tests */

static struct t_fs T;
static struct tierfs *fs;

/* RAM 3 extents, file tier 16: a 5-extent file spans both */
static const uint32_t slots_small[] = { 3, 16 };

static void setup_ext(uint32_t ext)
{
	t_fs_setup(&T, ext, 2, slots_small);
	fs = T.fs;
}

static void setup(void)
{
	setup_ext(EXT);
}

static void teardown(void)
{
	t_gate_off();
	t_fs_teardown(&T);
	fs = NULL;
}

/* Remove a file altogether and check that every slot came back. */
static void t_file_remove(struct t_file *f, const char *name)
{
	t_unlink(fs, name);
	t_forget(fs, f->ino);
	f->ino = NULL;
	t_file_done(f);
	ck_assert_uint_eq(t_used(fs), 0);
	t_assert_no_leak(fs);
}

/* ------------------------------------------------------------------ */
/* plain operations */

START_TEST(test_write_read_patterns)
{
	struct t_file f;

	t_file_init(&f, t_create(fs, "f"), CAP);
	/* unaligned, across extent boundaries, spilling from RAM */
	ck_assert_int_eq(t_write(fs, &f, 100, 3 * EXT, 1), 3 * EXT);
	ck_assert_int_eq(t_write(fs, &f, EXT - 7, 14, 2), 14);
	ck_assert_int_eq(t_write(fs, &f, 6 * EXT + 5, 2 * EXT, 3), 2 * EXT);
	ck_assert_int_eq(t_write(fs, &f, 0, 1, 4), 1);
	t_verify(fs, &f);
	/* extents 0-3 and 6-8: 7 extents, 3 of them in RAM */
	ck_assert_uint_eq(extent_map_count(&f.ino->i_map), 7);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 3);
	ck_assert_uint_eq(t_used(fs), 7);
	ck_assert_int_eq(t_tier_of(f.ino, 4), -1); /* a hole */
	/* a read past EOF is short, one at EOF empty */
	{
		char b[16];

		ck_assert_int_eq(data_read(fs, f.ino, b, 16, f.size - 3), 3);
		ck_assert_int_eq(data_read(fs, f.ino, b, 16, f.size), 0);
	}
	t_file_remove(&f, "f");
}
END_TEST

/*
 * SEEK_DATA / SEEK_HOLE over extents 1 and 3 of a 5-extent file; a
 * failed seek (ENXIO) leaves the caller's offset untouched (bug 10:
 * data_lseek used to write it on failure).
 */
START_TEST(test_lseek_data_hole)
{
	struct t_file f;
	const uint64_t sentinel = 0x5eed5eed5eedULL;
	uint64_t o;

	t_file_init(&f, t_create(fs, "f"), CAP);
	ck_assert_int_eq(t_write(fs, &f, EXT + 10, 5, 1), 5);
	ck_assert_int_eq(t_write(fs, &f, 3 * EXT, EXT, 2), EXT);
	ck_assert_int_eq(data_truncate(fs, f.ino, 5 * EXT), 0);
	f.size = 5 * EXT;

	ck_assert_int_eq(data_lseek(fs, f.ino, 0, SEEK_DATA, &o), 0);
	ck_assert_uint_eq(o, EXT);
	ck_assert_int_eq(data_lseek(fs, f.ino, EXT + 99, SEEK_DATA, &o), 0);
	ck_assert_uint_eq(o, EXT + 99);
	ck_assert_int_eq(data_lseek(fs, f.ino, 2 * EXT, SEEK_DATA, &o), 0);
	ck_assert_uint_eq(o, 3 * EXT);
	ck_assert_int_eq(data_lseek(fs, f.ino, 0, SEEK_HOLE, &o), 0);
	ck_assert_uint_eq(o, 0);
	/* to the allocation unit: the 5 bytes hold one 4 KiB unit */
	ck_assert_int_eq(data_lseek(fs, f.ino, EXT, SEEK_HOLE, &o), 0);
	ck_assert_uint_eq(o, EXT + 4096);
	ck_assert_int_eq(data_lseek(fs, f.ino, EXT + 4095, SEEK_HOLE, &o), 0);
	ck_assert_uint_eq(o, EXT + 4096);
	ck_assert_int_eq(data_lseek(fs, f.ino, EXT + 4096, SEEK_HOLE, &o), 0);
	ck_assert_uint_eq(o, EXT + 4096);
	ck_assert_int_eq(data_lseek(fs, f.ino, EXT + 4096, SEEK_DATA, &o), 0);
	ck_assert_uint_eq(o, 3 * EXT);
	/* a punched unit inside a full extent is a hole; its neighbours data */
	ck_assert_int_eq(data_fallocate(fs, f.ino, FALLOC_FL_PUNCH_HOLE |
					FALLOC_FL_KEEP_SIZE, 3 * EXT + 8192, 4096), 0);
	memset(f.shadow + 3 * EXT + 8192, 0, 4096);
	ck_assert_int_eq(data_lseek(fs, f.ino, 3 * EXT, SEEK_HOLE, &o), 0);
	ck_assert_uint_eq(o, 3 * EXT + 8192);
	ck_assert_int_eq(data_lseek(fs, f.ino, 3 * EXT + 8192, SEEK_DATA, &o), 0);
	ck_assert_uint_eq(o, 3 * EXT + 12288);
	ck_assert_int_eq(data_lseek(fs, f.ino, 3 * EXT + 12288, SEEK_HOLE, &o), 0);
	ck_assert_uint_eq(o, 4 * EXT);
	/* the last extent is a hole up to the size: that is where it ends */
	ck_assert_int_eq(data_lseek(fs, f.ino, 4 * EXT + 7, SEEK_HOLE, &o), 0);
	ck_assert_uint_eq(o, 4 * EXT + 7);

	/* no data after 4*EXT; nothing at or past the size */
	o = sentinel;
	ck_assert_int_eq(data_lseek(fs, f.ino, 4 * EXT, SEEK_DATA, &o), -ENXIO);
	ck_assert_uint_eq(o, sentinel);
	ck_assert_int_eq(data_lseek(fs, f.ino, 5 * EXT, SEEK_DATA, &o), -ENXIO);
	ck_assert_uint_eq(o, sentinel);
	ck_assert_int_eq(data_lseek(fs, f.ino, 5 * EXT, SEEK_HOLE, &o), -ENXIO);
	ck_assert_uint_eq(o, sentinel);
	ck_assert_int_eq(data_lseek(fs, f.ino, UINT64_MAX, SEEK_HOLE, &o),
			 -ENXIO);
	ck_assert_uint_eq(o, sentinel);
	t_verify(fs, &f);
	t_file_remove(&f, "f");
}
END_TEST

START_TEST(test_truncate_shrink_grow)
{
	struct t_file f;

	t_file_init(&f, t_create(fs, "f"), CAP);
	ck_assert_int_eq(t_write(fs, &f, 0, 6 * EXT, 1), 6 * EXT);
	/* cut inside extent 2: its tail zeroed, 3-5 freed */
	ck_assert_int_eq(data_truncate(fs, f.ino, 2 * EXT + 123), 0);
	f.size = 2 * EXT + 123;
	memset(f.shadow + f.size, 0, CAP - f.size);
	t_verify(fs, &f);
	ck_assert_uint_eq(t_used(fs), 3);
	/* growing again shows zeros, never the old bytes */
	ck_assert_int_eq(data_truncate(fs, f.ino, 5 * EXT), 0);
	f.size = 5 * EXT;
	t_verify(fs, &f);
	ck_assert_uint_eq(t_used(fs), 3);
	/* a write past the cut lands in a fresh extent */
	ck_assert_int_eq(t_write(fs, &f, 4 * EXT + 9, 10, 2), 10);
	t_verify(fs, &f);
	/* to an extent boundary: nothing to zero */
	ck_assert_int_eq(data_truncate(fs, f.ino, EXT), 0);
	f.size = EXT;
	memset(f.shadow + f.size, 0, CAP - f.size);
	t_verify(fs, &f);
	ck_assert_uint_eq(t_used(fs), 1);
	t_file_remove(&f, "f");
}
END_TEST

/* truncate -s 0 of a file of many extents on both tiers, holes between */
START_TEST(test_truncate_many_to_zero)
{
	static const uint32_t slots[] = { 64, 2048 };
	const uint32_t ext = 4096;
	struct tfs_inode *ino;
	char *buf = malloc(ext);
	uint64_t n = 0;
	char b[8];

	teardown();
	t_fs_setup(&T, ext, 2, slots);
	fs = T.fs;
	ino = t_create(fs, "f");
	ck_assert_int_eq(data_fallocate(fs, ino, 0, 0, 1000ull * ext), 0);
	for (uint64_t i = 0; i < 1900; i += 1 + i % 3, n++) {
		memset(buf, (int)(i % 251) + 1, ext);
		ck_assert_int_eq(data_write(fs, ino, buf, ext, i * ext),
				 (ssize_t)ext);
	}
	ck_assert_uint_gt(t_used(fs), 1000);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 64);
	ck_assert_int_eq(data_truncate(fs, ino, 0), 0);
	ck_assert_uint_eq(t_used(fs), 0);
	ck_assert_uint_eq(extent_map_count(&ino->i_map), 0);
	ck_assert_uint_eq(ino->i_size, 0);
	ck_assert_int_eq(data_read(fs, ino, b, sizeof(b), 0), 0);
	t_assert_no_leak(fs);
	/* every slot is usable again, and reads as zeros */
	ck_assert_int_eq(data_fallocate(fs, ino, 0, 0, 2000ull * ext), 0);
	ck_assert_uint_eq(t_used(fs), 2000);
	for (uint64_t i = 0; i < 2000; i += 97) {
		ck_assert_int_eq(data_read(fs, ino, buf, ext, i * ext),
				 (ssize_t)ext);
		for (uint32_t k = 0; k < ext; k++)
			ck_assert_int_eq(buf[k], 0);
	}
	ck_assert_int_eq(data_truncate(fs, ino, 0), 0);
	ck_assert_uint_eq(t_used(fs), 0);
	free(buf);
}
END_TEST

START_TEST(test_punch)
{
	struct t_file f;
	const int mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;

	t_file_init(&f, t_create(fs, "f"), CAP);
	ck_assert_int_eq(t_write(fs, &f, 0, 8 * EXT, 1), 8 * EXT);
	/* inside one extent */
	ck_assert_int_eq(data_fallocate(fs, f.ino, mode, 10, 100), 0);
	memset(f.shadow + 10, 0, 100);
	/* partial head and tail, whole extents 3-5 between */
	ck_assert_int_eq(data_fallocate(fs, f.ino, mode, 2 * EXT + 5,
					4 * EXT - 10), 0);
	memset(f.shadow + 2 * EXT + 5, 0, 4 * EXT - 10);
	t_verify(fs, &f);
	ck_assert_uint_eq(t_used(fs), 6);
	ck_assert_int_eq(t_tier_of(f.ino, 4), -1);
	/* exactly one whole extent */
	ck_assert_int_eq(data_fallocate(fs, f.ino, mode, 7 * EXT, EXT), 0);
	memset(f.shadow + 7 * EXT, 0, EXT);
	t_verify(fs, &f);
	ck_assert_uint_eq(t_used(fs), 5);
	ck_assert_uint_eq(f.ino->i_size, 8 * EXT);
	t_file_remove(&f, "f");
}
END_TEST

START_TEST(test_move_extent)
{
	struct t_file f;
	int before0, before1;

	t_file_init(&f, t_create(fs, "f"), CAP);
	ck_assert_int_eq(t_write(fs, &f, 0, 5 * EXT - 3, 1), 5 * EXT - 3);
	before0 = (int)tier_used_slots(fs->tiers[0]);
	before1 = (int)tier_used_slots(fs->tiers[1]);
	ck_assert_int_eq(before0, 3);
	/* down: RAM -> file */
	ck_assert_int_eq(t_tier_of(f.ino, 1), 0);
	ck_assert_int_eq(data_migrate_extent(fs, f.ino, 1, 0,
					     t_slot_of(f.ino, 1), 1), 0);
	ck_assert_int_eq(t_tier_of(f.ino, 1), 1);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), before0 - 1);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[1]), before1 + 1);
	t_verify(fs, &f);
	/* up: file -> RAM, the partial last extent */
	ck_assert_int_eq(t_tier_of(f.ino, 4), 1);
	ck_assert_int_eq(data_migrate_extent(fs, f.ino, 4, 1,
					     t_slot_of(f.ino, 4), 0), 0);
	ck_assert_int_eq(t_tier_of(f.ino, 4), 0);
	t_verify(fs, &f);
	/* a stale source is refused; a full destination says so */
	ck_assert_int_eq(data_migrate_extent(fs, f.ino, 4, 1, 0, 0), -EAGAIN);
	ck_assert_int_eq(data_migrate_extent(fs, f.ino, 9, 1, 0, 0), -EAGAIN);
	ck_assert_int_eq(data_migrate_extent(fs, f.ino, 3, 1,
					     t_slot_of(f.ino, 3), 0), -ENOSPC);
	ck_assert_uint_eq(t_used(fs), 5);
	/* the moved extents keep taking writes */
	ck_assert_int_eq(t_write(fs, &f, EXT - 2, 3 * EXT, 5), 3 * EXT);
	t_verify(fs, &f);
	t_file_remove(&f, "f");
}
END_TEST

/* ------------------------------------------------------------------ */
/* every tier call failed in turn */

enum fop { F_WRITE, F_READ, F_TRUNCATE, F_PUNCH, F_MOVE_DOWN, F_MOVE_UP,
	   F_ZERO_RANGE, _F_MAX };

static const char *const fop_name[] = {
	"write", "read", "truncate", "punch", "move down", "move up",
	"zero range",
};

/*
 * The starting file: extents 0-2 in RAM, 3-5 on the file tier; the last
 * one partial.
 */
static void fault_base(struct t_file *f)
{
	uint32_t ext = fs->extent_size;

	ck_assert_int_eq(t_write(fs, f, 0, 6 * ext - 1000, 1),
			 (ssize_t)(6 * ext - 1000));
	ck_assert_int_eq(tier_used_slots(fs->tiers[0]), 3);
}

/* Run @op once; update the shadow from its result.  Returns its result. */
static long fault_op(enum fop op, struct t_file *f)
{
	uint32_t ext = fs->extent_size;
	long r = 0;

	switch (op) {
	case F_WRITE:
		/* overwrite RAM and file extents, then grow into new ones
		 * (RAM is full: they go to the file tier) */
		r = t_write(fs, f, 2 * ext + 77, 5 * ext, 9);
		break;
	case F_READ: {
		uint8_t *b = malloc(f->cap);

		ck_assert_ptr_nonnull(b);
		r = data_read(fs, f->ino, (char *)b, f->cap, 1);
		if (r >= 0) {
			ck_assert_int_eq(r, (long)f->size - 1);
			ck_assert_mem_eq(b, f->shadow + 1, (size_t)r);
		}
		free(b);
		break;
	}
	case F_TRUNCATE: {
		/* cut in RAM extent 1 and in file extent 3 */
		uint64_t sizes[2] = { 3 * ext + 4321, ext + 99 };

		for (int i = 0; i < 2 && r == 0; i++) {
			r = data_truncate(fs, f->ino, sizes[i]);
			if (r == 0) {
				f->size = sizes[i];
				memset(f->shadow + f->size, 0,
				       f->cap - f->size);
			}
		}
		break;
	}
	case F_PUNCH:
	case F_ZERO_RANGE: {
		int mode = op == F_PUNCH
				   ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
				   : FALLOC_FL_ZERO_RANGE;
		uint64_t off = ext + 500, len = 3 * ext;

		r = data_fallocate(fs, f->ino, mode, off, len);
		if (r == 0) {
			memset(f->shadow + off, 0, len);
		} else {
			/*
			 * A failed punch may have zeroed part of its range
			 * (as on any filesystem): accept either there.
			 */
			uint8_t *b = malloc(len);

			ck_assert_ptr_nonnull(b);
			ck_assert_int_eq(data_read(fs, f->ino, (char *)b,
						   len, off), (long)len);
			for (uint64_t i = 0; i < len; i++)
				if (b[i] == 0)
					f->shadow[off + i] = 0;
				else
					ck_assert_uint_eq(b[i],
							  f->shadow[off + i]);
			free(b);
		}
		break;
	}
	case F_MOVE_DOWN:
		r = data_migrate_extent(fs, f->ino, 1, 0, t_slot_of(f->ino, 1),
					1);
		break;
	case F_MOVE_UP:
		/* make room in RAM first (no fault armed yet: see caller) */
		r = data_migrate_extent(fs, f->ino, 4, 1, t_slot_of(f->ino, 4),
					0);
		break;
	default:
		ck_abort();
	}
	return r;
}

static void fault_loop(enum fop op, unsigned tier)
{
	unsigned n;

	for (n = 1; n < 2000; n++) {
		struct t_file f;
		bool fired;
		long r;

		t_file_init(&f, t_create(fs, "f"), 16 * fs->extent_size);
		fault_base(&f);
		if (op == F_MOVE_UP) {
			/* free a RAM slot so that the move has room */
			ck_assert_int_eq(data_migrate_extent(
				fs, f.ino, 0, 0, t_slot_of(f.ino, 0), 1), 0);
		}
		faulty_tier_arm(fs->tiers[tier], (int)n, EIO);
		r = fault_op(op, &f);
		fired = faulty_tier_fired(fs->tiers[tier]);
		faulty_tier_disarm(fs->tiers[tier]);
		if (fired)
			ck_assert_msg(r < 0 || op == F_WRITE || op == F_MOVE_DOWN ||
					      op == F_MOVE_UP || r == 0,
				      "%s: fault %u on tier %u: %ld",
				      fop_name[op], n, tier, r);
		if (r < 0)
			ck_assert_msg(r == -EIO, "%s: fault %u on tier %u: %ld",
				      fop_name[op], n, tier, r);
		if (!fired)
			ck_assert_msg(r >= 0, "%s: no fault, yet %ld",
				      fop_name[op], r);
		/* what was acknowledged reads back; no slot is leaked */
		t_verify(fs, &f);
		ck_assert_uint_eq(t_used(fs), extent_map_count(&f.ino->i_map));
		t_assert_no_leak(fs);
		/* and the file still works */
		ck_assert_int_eq(t_write(fs, &f, 3 * fs->extent_size - 5, 10,
					 7), 10);
		t_verify(fs, &f);
		t_file_remove(&f, "f");
		if (!fired)
			break;
	}
	ck_assert_uint_gt(n, 1); /* the operation did call the tier */
	ck_assert_uint_lt(n, 2000);
}

/* _i: op * 4 + tier * 2 + (1: 256 KiB extents, several zeroing calls) */
START_TEST(test_fault_every_call)
{
	enum fop op = (enum fop)(_i / 4);
	unsigned tier = (_i / 2) % 2;

	if (_i % 2) {
		teardown();
		setup_ext(256u * 1024);
	}
	fault_loop(op, tier);
}
END_TEST

/* ------------------------------------------------------------------ */
/* the windows of a move */

struct mover {
	pthread_t th;
	uint64_t idx;
	unsigned src, dst;
	uint32_t slot;
	struct tfs_inode *ino;
	int ret;
};

static void *mover_main(void *arg)
{
	struct mover *m = arg;

	m->ret = data_migrate_extent(fs, m->ino, m->idx, m->src, m->slot,
				     m->dst);
	return NULL;
}

/* Start moving extent @idx of @f's file to @dst and stop at @point. */
static void mover_start(struct mover *m, struct t_file *f, uint64_t idx,
			unsigned dst, enum testhook_point point)
{
	m->ino = f->ino;
	m->idx = idx;
	m->src = (unsigned)t_tier_of(f->ino, idx);
	m->slot = t_slot_of(f->ino, idx);
	m->dst = dst;
	inode_pin(fs, f->ino); /* as the migrator does */
	t_gate_arm(point);
	ck_assert_int_eq(pthread_create(&m->th, NULL, mover_main, m), 0);
	t_gate_wait();
}

static int mover_finish(struct mover *m)
{
	t_gate_release();
	ck_assert_int_eq(pthread_join(m->th, NULL), 0);
	t_gate_off();
	inode_unpin(fs, m->ino);
	return m->ret;
}

enum wop { W_WRITE, W_WRITE_OTHER, W_TRUNCATE, W_TRUNCATE_REWRITE, W_PUNCH,
	   W_PUNCH_PART, W_UNLINK, _W_MAX };

static const char *const wop_name[] = {
	"write", "write elsewhere", "truncate", "truncate and rewrite",
	"punch", "punch part", "unlink",
};

/* _i: wop * 3 + point */
START_TEST(test_move_windows)
{
	enum wop op = (enum wop)(_i / 3);
	enum testhook_point point = (enum testhook_point)(_i % 3);
	const int punch = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	struct t_file f;
	struct mover m;
	int r, expect;

	t_file_init(&f, t_create(fs, "f"), CAP);
	ck_assert_int_eq(t_write(fs, &f, 0, 4 * EXT + 10, 1), 4 * EXT + 10);
	/* move extent 1 from RAM down to the file tier */
	mover_start(&m, &f, 1, 1, point);
	/* before the switch a change of extent 1 must abort the move;
	 * after it, the change lands on the moved extent */
	expect = point == TESTHOOK_MOVE_SWITCHED ? 0 : -EAGAIN;
	switch (op) {
	case W_WRITE:
		ck_assert_int_eq(t_write(fs, &f, EXT + 3, 100, 2), 100);
		break;
	case W_WRITE_OTHER:
		ck_assert_int_eq(t_write(fs, &f, 2 * EXT + 3, 100, 2), 100);
		expect = 0;
		break;
	case W_TRUNCATE:
		ck_assert_int_eq(data_truncate(fs, f.ino, EXT / 2), 0);
		f.size = EXT / 2;
		memset(f.shadow + f.size, 0, CAP - f.size);
		break;
	case W_TRUNCATE_REWRITE:
		/* the extent comes back, likely in the very same slot */
		ck_assert_int_eq(data_truncate(fs, f.ino, EXT), 0);
		f.size = EXT;
		memset(f.shadow + f.size, 0, CAP - f.size);
		ck_assert_int_eq(t_write(fs, &f, EXT, EXT, 3), EXT);
		if (point != TESTHOOK_MOVE_SWITCHED)
			ck_assert_int_eq(t_tier_of(f.ino, 1), 0);
		break;
	case W_PUNCH:
		ck_assert_int_eq(data_fallocate(fs, f.ino, punch, EXT, EXT), 0);
		memset(f.shadow + EXT, 0, EXT);
		break;
	case W_PUNCH_PART:
		ck_assert_int_eq(data_fallocate(fs, f.ino, punch, EXT + 9, 99),
				 0);
		memset(f.shadow + EXT + 9, 0, 99);
		break;
	case W_UNLINK:
		/* the kernel forgets it too: only the mover's pin holds it */
		t_unlink(fs, "f");
		t_forget(fs, f.ino);
		expect = 0;
		break;
	default:
		ck_abort();
	}
	r = mover_finish(&m);
	ck_assert_msg(r == expect, "%s at point %d: %d, expected %d",
		      wop_name[op], point, r, expect);
	if (op == W_UNLINK) {
		/* the unpin freed it, and every slot with it */
		ck_assert_uint_eq(t_used(fs), 0);
		t_assert_no_leak(fs);
		t_file_done(&f);
		return;
	}
	if (r == 0 && op != W_TRUNCATE && op != W_PUNCH &&
	    op != W_TRUNCATE_REWRITE)
		ck_assert_int_eq(t_tier_of(f.ino, 1), 1);
	t_verify(fs, &f);
	ck_assert_uint_eq(t_used(fs), extent_map_count(&f.ino->i_map));
	t_assert_no_leak(fs);
	t_file_remove(&f, "f");
}
END_TEST

/* Remove a file while others stay (t_file_remove() checks that nothing
 * is left). */
static void t_file_unlink(struct t_file *f, const char *name)
{
	t_unlink(fs, name);
	t_forget(fs, f->ino);
	f->ino = NULL;
	t_file_done(f);
}

/* ------------------------------------------------------------------ */
/* copy_file_range's hole path (issue 16, item 3) */

static struct t_file *hole_dst;

/* At TESTHOOK_COPY_HOLE: a write that extends the destination past the
 * hole the copy is making, in the copy's own window. */
static void hole_hook(enum testhook_point point, struct tfs_inode *inode,
		      uint64_t idx)
{
	if (point != TESTHOOK_COPY_HOLE || inode != hole_dst->ino)
		return;
	ck_assert_int_eq(t_write(fs, hole_dst, 3 * EXT, EXT + 7, 5), EXT + 7);
}

START_TEST(test_copy_hole_race)
{
	struct t_file src, dst;

	t_file_init(&src, t_create(fs, "src"), CAP);
	t_file_init(&dst, t_create(fs, "dst"), CAP);
	/* the source: a hole of two extents, then data */
	ck_assert_int_eq(data_truncate(fs, src.ino, 2 * EXT), 0);
	ck_assert_int_eq(t_write(fs, &src, 2 * EXT, 100, 1), 100);
	hole_dst = &dst;
	__atomic_store_n(&testhook_fn, hole_hook, __ATOMIC_RELEASE);
	/* copy the hole (and a bit of data) to the start of dst: while it
	 * makes the hole, dst grows to 4 extents + 7 */
	ck_assert_int_eq(data_copy(fs, src.ino, 0, dst.ino, 0, EXT), EXT);
	__atomic_store_n(&testhook_fn, NULL, __ATOMIC_RELEASE);
	ck_assert_uint_eq(dst.ino->i_size, 4 * EXT + 7);
	dst.size = 4 * EXT + 7;
	t_verify(fs, &dst);
	t_file_unlink(&src, "src");
	t_file_remove(&dst, "dst");
}
END_TEST

/* ------------------------------------------------------------------ */
/* writebacks that find no room (issue 16, items 1 and 2) */

/* Fill every tier with a file of its own; return its t_file. */
static void fill_up(struct t_file *f)
{
	uint64_t off = 0;

	t_file_init(f, t_create(fs, "fill"), 64 * EXT);
	while (off < 64 * EXT && t_write(fs, f, off, EXT, 9) == (ssize_t)EXT)
		off += EXT;
	/* then unit by unit: a tier may have units left, not an extent */
	while (off < 64 * EXT && t_write(fs, f, off, 4096, 9) == 4096)
		off += 4096;
	ck_assert_uint_lt(off, 64 * EXT);
}

START_TEST(test_writeback_keeps_held)
{
	struct t_file f, fill;
	uint8_t buf[3 * 4096];
	uint64_t lost;
	bool first;

	t_file_init(&f, t_create(fs, "f"), CAP);
	/* acknowledged: blocks 0 and 2 of extent 0, and 100 bytes of 4 */
	ck_assert_int_eq(t_write(fs, &f, 0, 4096, 1), 4096);
	ck_assert_int_eq(t_write(fs, &f, 8192, 4096, 1), 4096);
	ck_assert_int_eq(t_write(fs, &f, 4 * 4096, 100, 1), 100);
	fill_up(&fill);
	/* one writeback over blocks 0..2 and 4..5: 1 and 5 need room */
	t_pat_fill(buf, 0, sizeof(buf), 2);
	ck_assert_int_eq(data_writeback(fs, f.ino, (char *)buf, sizeof(buf),
					0, &lost, &first),
			 -ENOSPC);
	ck_assert_uint_eq(lost, 4096);
	ck_assert(first);
	ck_assert_int_eq(data_writeback(fs, f.ino, (char *)buf, 8192,
					4 * 4096, &lost, &first),
			 -ENOSPC);
	ck_assert_uint_eq(lost, 4096);
	ck_assert(!first); /* the same episode: nobody was told yet */
	/* the held blocks took the new data, in place */
	memcpy(f.shadow, buf, 4096);
	memcpy(f.shadow + 8192, buf + 8192, 4096);
	memcpy(f.shadow + 4 * 4096, buf, 4096);
	f.size = 5 * 4096;
	ck_assert_uint_eq(f.ino->i_size, 5 * 4096);
	ck_assert_int_eq(data_read(fs, f.ino, (char *)buf, 4096, 0), 4096);
	ck_assert_int_eq(memcmp(buf, f.shadow, 4096), 0);
	ck_assert_int_eq(data_read(fs, f.ino, (char *)buf, 4096, 8192), 4096);
	ck_assert_int_eq(memcmp(buf, f.shadow + 8192, 4096), 0);
	ck_assert_int_eq(data_read(fs, f.ino, (char *)buf, 4096, 4 * 4096),
			 4096);
	ck_assert_int_eq(memcmp(buf, f.shadow + 4 * 4096, 4096), 0);
	/* the block that found no room reads as EIO, never zeros */
	ck_assert_int_eq(data_read(fs, f.ino, (char *)buf, 10, 4096), -EIO);
	t_file_unlink(&fill, "fill");
	/* written again, it reads back (a read past the end would meet the
	 * lost block 5, which the kernel may still think is there) */
	ck_assert_int_eq(t_write(fs, &f, 4096, 4096, 3), 4096);
	{
		uint8_t all[5 * 4096];

		ck_assert_int_eq(data_read(fs, f.ino, (char *)all, sizeof(all),
					   0),
				 sizeof(all));
		ck_assert_int_eq(memcmp(all, f.shadow, sizeof(all)), 0);
	}
	t_file_remove(&f, "f");
}
END_TEST

/* ------------------------------------------------------------------ */
/* a write's bytes from a pipe (splice, kernel.c) */

/* A pipe holding @len bytes of pattern @seed for offset @off; @short_by
 * bytes fewer, with the write end closed, for a source that fails. */
static void t_pipe_with(int p[2], uint64_t off, size_t len, unsigned seed,
			size_t short_by)
{
	uint8_t *buf = malloc(len);

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_ge(fcntl(p[1], F_SETPIPE_SZ, 1 << 20), (int)len);
	t_pat_fill(buf, off, len, seed);
	ck_assert_int_eq(write(p[1], buf, len - short_by),
			 (ssize_t)(len - short_by));
	free(buf);
	if (short_by) {
		close(p[1]);
		p[1] = -1;
	}
}

static int t_pipe_left(int fd)
{
	int n = -1;

	ck_assert_int_eq(ioctl(fd, FIONREAD, &n), 0);
	return n;
}

/* data_write_src() from a pipe: into the RAM tier with one copy, into the
 * file tier through the bounce buffer; the pipe ends empty. */
static ssize_t t_write_pipe(struct t_file *f, uint64_t off, size_t len,
			    unsigned seed)
{
	struct data_src src;
	int p[2];
	ssize_t r;

	t_pipe_with(p, off, len, seed, 0);
	src = DATA_SRC_PIPE(p[0]);
	r = data_write_src(fs, f->ino, &src, len, off);
	ck_assert(!src.broken);
	ck_assert_int_eq(t_pipe_left(p[0]), 0);
	if (r > 0) {
		t_pat_fill(f->shadow + off, off, (size_t)r, seed);
		if (off + (uint64_t)r > f->size)
			f->size = off + (uint64_t)r;
	}
	close(p[0]);
	close(p[1]);
	return r;
}

START_TEST(test_write_from_pipe)
{
	struct t_file f, fill;
	uint64_t ram_before = fs->tiers[0]->stats.write_bytes;
	uint64_t lost;
	bool first;
	int p[2];
	struct data_src src;

	t_file_init(&f, t_create(fs, "f"), CAP);
	/* unaligned, over extent edges, RAM (3 extents) then the file tier */
	ck_assert_int_eq(t_write_pipe(&f, 100, 5 * EXT, 1), 5 * EXT);
	ck_assert_uint_eq(tier_used_slots(fs->tiers[0]), 3);
	ck_assert_uint_ge(fs->tiers[0]->stats.write_bytes - ram_before,
			  3 * EXT - 100);
	/* overwrites in place, on both tiers, and a piece from memory */
	ck_assert_int_eq(t_write_pipe(&f, EXT - 7, 3 * EXT, 2), 3 * EXT);
	ck_assert_int_eq(t_write(fs, &f, 2 * EXT + 1, 10, 3), 10);
	t_verify(fs, &f);

	/* a writeback on a full mount: held units take their bytes, the
	 * rest is lost, and the pipe is still emptied */
	fill_up(&fill);
	t_pipe_with(p, 5 * EXT + 100, 4 * EXT, 4, 0);
	src = DATA_SRC_PIPE(p[0]);
	ck_assert_int_eq(data_writeback_src(fs, f.ino, &src, 4 * EXT,
					    5 * EXT + 100, &lost, &first),
			 -ENOSPC);
	ck_assert(!src.broken);
	ck_assert_int_eq(t_pipe_left(p[0]), 0);
	/* the unit the file held (up to 5 EXT + 4K) took its new bytes */
	ck_assert(first);
	ck_assert_uint_eq(lost, 4 * EXT - (4096 - 100));
	close(p[0]);
	close(p[1]);
	{
		uint8_t want[4096 - 100], got[4096 - 100];

		t_pat_fill(want, 5 * EXT + 100, sizeof(want), 4);
		ck_assert_int_eq(data_read(fs, f.ino, (char *)got, sizeof(got),
					   5 * EXT + 100),
				 sizeof(got));
		ck_assert_int_eq(memcmp(got, want, sizeof(got)), 0);
		memcpy(f.shadow + 5 * EXT + 100, want, sizeof(want));
		ck_assert_int_eq(data_read(fs, f.ino, (char *)got, 10, 7 * EXT),
				 -EIO);
	}
	t_file_unlink(&fill, "fill");
	ck_assert_int_eq(data_truncate(fs, f.ino, 5 * EXT + 4096), 0);
	f.size = 5 * EXT + 4096;
	t_verify(fs, &f);
	t_file_remove(&f, "f");
}
END_TEST

/* A pipe that ends early: the write fails with EIO where its bytes run
 * out, a writeback's unread bytes are lost (EIO, never zeros), and the
 * tiers are not blamed. */
START_TEST(test_write_from_broken_pipe)
{
	struct t_file f;
	struct data_src src;
	uint64_t lost;
	bool first;
	int p[2];
	ssize_t r;

	t_file_init(&f, t_create(fs, "f"), CAP);
	ck_assert_int_eq(t_write(fs, &f, 0, 2 * EXT, 1), 2 * EXT);
	/* write-through: the first extent lands, the second cannot be read */
	t_pipe_with(p, 4 * EXT, 2 * EXT, 2, 100);
	src = DATA_SRC_PIPE(p[0]);
	r = data_write_src(fs, f.ino, &src, 2 * EXT, 4 * EXT);
	ck_assert(src.broken);
	ck_assert_int_eq(r, EXT);
	t_pat_fill(f.shadow + 4 * EXT, 4 * EXT, EXT, 2);
	f.size = 5 * EXT;
	close(p[0]);
	t_verify(fs, &f);
	/* writeback over held data: the unread tail is lost */
	t_pipe_with(p, 0, 2 * EXT, 3, EXT);
	src = DATA_SRC_PIPE(p[0]);
	ck_assert_int_eq(data_writeback_src(fs, f.ino, &src, 2 * EXT, 0, &lost,
					    &first),
			 -EIO);
	ck_assert(src.broken);
	ck_assert_uint_eq(lost, EXT);
	close(p[0]);
	{
		uint8_t b[EXT];

		ck_assert_int_eq(data_read(fs, f.ino, (char *)b, EXT, 0), EXT);
		t_pat_fill(f.shadow, 0, EXT, 3);
		ck_assert_int_eq(memcmp(b, f.shadow, EXT), 0);
		ck_assert_int_eq(data_read(fs, f.ino, (char *)b, 10, EXT), -EIO);
	}
	for (unsigned i = 0; i < fs->ntiers; i++)
		ck_assert_uint_eq(fs->tiers[i]->stats.io_errors, 0);
	t_file_remove(&f, "f");
}
END_TEST

START_TEST(test_lost_append_reported)
{
	struct t_file f, fill;
	uint64_t lost, seen = 0;
	bool first;
	uint8_t buf[4096];
	int err;

	t_file_init(&f, t_create(fs, "f"), CAP);
	ck_assert_int_eq(t_write(fs, &f, 0, 4096, 1), 4096);
	seen = data_wb_sample(f.ino);
	fill_up(&fill);
	t_pat_fill(buf, 4096, 4096, 2);
	ck_assert_int_eq(data_writeback(fs, f.ino, (char *)buf, 4096, 4096,
					&lost, &first),
			 -ENOSPC);
	/* the append is not in the file; the kernel still has a larger size,
	 * and a read there fails */
	ck_assert_uint_eq(f.ino->i_size, 4096);
	ck_assert_int_eq(data_read(fs, f.ino, (char *)buf, 4096, 4096), -EIO);
	t_file_unlink(&fill, "fill");
	/* not reported yet: a writeback beyond it does not make it zeros */
	t_pat_fill(buf, 8192, 4096, 3);
	ck_assert_int_eq(data_writeback(fs, f.ino, (char *)buf, 4096, 8192,
					&lost, &first),
			 0);
	ck_assert_int_eq(data_read(fs, f.ino, (char *)buf, 4096, 4096), -EIO);
	/* fsync reports it, once */
	err = data_wb_check(f.ino, &seen, true, NULL);
	ck_assert_int_eq(err, -ENOSPC);
	ck_assert_int_eq(data_wb_check(f.ino, &seen, true, NULL), 0);
	/* a file opened now is not told again */
	ck_assert_uint_eq(data_wb_sample(f.ino), seen);
	/* cut back to the stored part and grown again: a hole now */
	ck_assert_int_eq(data_truncate(fs, f.ino, 4096), 0);
	ck_assert_int_eq(data_truncate(fs, f.ino, 3 * 4096), 0);
	ck_assert_int_eq(data_read(fs, f.ino, (char *)buf, 4096, 4096), 4096);
	for (unsigned i = 0; i < 4096; i++)
		ck_assert_uint_eq(buf[i], 0);
	t_file_remove(&f, "f");
}
END_TEST

START_TEST(test_lost_many_ranges)
{
	struct t_file f, fill;
	uint64_t lost;
	bool first;
	uint8_t *buf = malloc(EXT);

	ck_assert_ptr_nonnull(buf);
	t_file_init(&f, t_create(fs, "f"), CAP);
	/* every other 4K block of one extent acknowledged */
	for (unsigned k = 0; k < EXT / 8192; k++)
		ck_assert_int_eq(t_write(fs, &f, k * 8192, 4096, 1), 4096);
	fill_up(&fill);
	t_pat_fill(buf, 0, EXT, 4);
	ck_assert_int_eq(data_writeback(fs, f.ino, (char *)buf, EXT, 0, &lost,
					&first),
			 -ENOSPC);
	ck_assert_uint_eq(lost, EXT / 2);
	/* each held block has the new data, each other one is EIO */
	for (unsigned k = 0; k < EXT / 4096; k++) {
		uint8_t b[4096];
		ssize_t r = data_read(fs, f.ino, (char *)b, 4096, k * 4096);

		if (k % 2) {
			ck_assert_int_eq(r, -EIO);
		} else {
			ck_assert_int_eq(r, 4096);
			ck_assert_int_eq(memcmp(b, buf + k * 4096, 4096), 0);
		}
	}
	free(buf);
	t_file_unlink(&fill, "fill");
	t_file_remove(&f, "f");
}
END_TEST

static Suite *data_suite(void)
{
	Suite *s = suite_create("data");
	TCase *tc = tcase_create("ops");
	TCase *tf = tcase_create("faults");
	TCase *tw = tcase_create("windows");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_write_read_patterns);
	tcase_add_test(tc, test_lseek_data_hole);
	tcase_add_test(tc, test_truncate_shrink_grow);
	tcase_add_test(tc, test_truncate_many_to_zero);
	tcase_add_test(tc, test_punch);
	tcase_add_test(tc, test_move_extent);
	tcase_add_test(tc, test_copy_hole_race);
	tcase_add_test(tc, test_write_from_pipe);
	tcase_add_test(tc, test_write_from_broken_pipe);
	tcase_add_test(tc, test_writeback_keeps_held);
	tcase_add_test(tc, test_lost_append_reported);
	tcase_add_test(tc, test_lost_many_ranges);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(tf, setup, teardown);
	tcase_set_timeout(tf, 120);
	tcase_add_loop_test(tf, test_fault_every_call, 0, _F_MAX * 4);
	suite_add_tcase(s, tf);

	tcase_add_checked_fixture(tw, setup, teardown);
	tcase_add_loop_test(tw, test_move_windows, 0, _W_MAX * 3);
	suite_add_tcase(s, tw);
	return s;
}

int main(void)
{
	return tap_run(data_suite());
}
