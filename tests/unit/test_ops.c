// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_ops.c -- Check suite for the FUSE handlers of fs/ops.c: the real
 * operation table (tierfs_ops) on a real in-process mount (t_fs.h), with
 * libfuse's request and reply functions replaced by linker wraps (see
 * meson.build: -Wl,--wrap=fuse_reply_entry,...).  A fuse_req_t here is a
 * struct t_req of ours: the wraps read the mount and the caller from it,
 * record what the handler replied, and return what the test chose --
 * 0, or -ENOENT as libfuse does when the kernel dropped the request (it
 * was interrupted) and will never send a forget for the entry.
 *
 * What is checked: the kernel's lookup count of an inode (i_nlookup)
 * follows exactly what the kernel was told -- one per entry reply that
 * reached it, none for one that failed -- for every handler that replies
 * with an entry (lookup, mknod, mkdir, symlink, link, create); a later
 * forget of the count the kernel really holds frees the inode and its
 * data; and an inode whose only reference was the failed reply's is
 * freed right there, with nothing touching it afterwards (ASan).
 *
 * Single-threaded and deterministic: a "concurrent" unlink is run from
 * inside the reply wrap, where the handler holds no lock.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuse_inc.h"
#include "ops.h"
#include "fs.h"
#include "inode.h"
#include "dir.h"
#include "data.h"
#include "namespace.h"
#include "t_fs.h"
#include "tap.h"

#define EXT (64u * 1024)

static struct t_fs T;
static struct tierfs *fs;
static const uint32_t slots_ram[] = { 4 };

/* ------------------------------------------------------------------ */
/* the fake request and the wrapped libfuse functions */

enum t_reply { R_NONE, R_ENTRY, R_CREATE, R_ERR, R_NOREPLY };

struct t_req {
	struct tierfs *fs;
	struct fuse_ctx ctx;
	int reply_ret; /* what an entry/create reply returns: 0 or -ENOENT */
	/* run inside an entry/create reply, before it returns */
	void (*in_reply)(struct t_req *r);
	/* what the handler replied */
	unsigned nreplies;
	enum t_reply kind;
	int err; /* R_ERR: the positive errno (0: success) */
	struct fuse_entry_param e;
	struct fuse_file_info fi;
};

static struct fuse_req *t_fuse_req(struct t_req *r)
{
	return (struct fuse_req *)(void *)r;
}

static struct t_req *t_req_of(fuse_req_t req)
{
	return (struct t_req *)(void *)req;
}

static void t_req_init(struct t_req *r, int reply_ret)
{
	memset(r, 0, sizeof(*r));
	r->fs = fs;
	r->ctx.uid = getuid();
	r->ctx.gid = getgid();
	r->ctx.pid = getpid();
	r->ctx.umask = 022;
	r->reply_ret = reply_ret;
}

/* Every request gets exactly one reply (or, for forget, none). */
static void t_replied(struct t_req *r, enum t_reply kind)
{
	ck_assert_uint_eq(r->nreplies, 0);
	r->nreplies++;
	r->kind = kind;
}

void *__wrap_fuse_req_userdata(fuse_req_t req);
const struct fuse_ctx *__wrap_fuse_req_ctx(fuse_req_t req);
int __wrap_fuse_req_getgroups(fuse_req_t req, int size, gid_t list[]);
int __wrap_fuse_reply_entry(fuse_req_t req, const struct fuse_entry_param *e);
int __wrap_fuse_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
			     const struct fuse_file_info *fi);
int __wrap_fuse_reply_err(fuse_req_t req, int err);
void __wrap_fuse_reply_none(fuse_req_t req);

void *__wrap_fuse_req_userdata(fuse_req_t req)
{
	return t_req_of(req)->fs;
}

const struct fuse_ctx *__wrap_fuse_req_ctx(fuse_req_t req)
{
	return &t_req_of(req)->ctx;
}

int __wrap_fuse_req_getgroups(fuse_req_t req, int size, gid_t list[])
{
	if (size > 0)
		list[0] = t_req_of(req)->ctx.gid;
	return 1;
}

int __wrap_fuse_reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
	struct t_req *r = t_req_of(req);

	t_replied(r, R_ENTRY);
	r->e = *e;
	if (r->in_reply)
		r->in_reply(r);
	return r->reply_ret;
}

int __wrap_fuse_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
			     const struct fuse_file_info *fi)
{
	struct t_req *r = t_req_of(req);

	t_replied(r, R_CREATE);
	r->e = *e;
	r->fi = *fi;
	if (r->in_reply)
		r->in_reply(r);
	return r->reply_ret;
}

int __wrap_fuse_reply_err(fuse_req_t req, int err)
{
	struct t_req *r = t_req_of(req);

	t_replied(r, R_ERR);
	r->err = err;
	return 0;
}

void __wrap_fuse_reply_none(fuse_req_t req)
{
	t_replied(t_req_of(req), R_NOREPLY);
}

/* ------------------------------------------------------------------ */
/* driving the handlers */

static void setup(void)
{
	t_fs_setup(&T, EXT, 1, slots_ram);
	fs = T.fs;
	/* the root alone, with the count the mount gives it */
	ck_assert_uint_eq(fs->ninodes, 1);
}

static void teardown(void)
{
	t_fs_teardown(&T);
	fs = NULL;
}

/* The inode @name names in the root, or NULL. */
static struct tfs_inode *t_find(const char *name)
{
	struct dentry *de;
	struct tfs_inode *inode;

	pthread_rwlock_rdlock(&fs->ns_lock);
	de = dir_find(&fs->root->i_dir, name);
	inode = de ? de->d_inode : NULL;
	pthread_rwlock_unlock(&fs->ns_lock);
	return inode;
}

static uint64_t t_nlookup(struct tfs_inode *inode)
{
	uint64_t n;

	pthread_mutex_lock(&fs->itab_lock);
	n = inode->i_nlookup;
	pthread_mutex_unlock(&fs->itab_lock);
	return n;
}

static uint64_t t_ninodes(void)
{
	return __atomic_load_n(&fs->ninodes, __ATOMIC_RELAXED);
}

static fuse_ino_t t_id(struct tfs_inode *inode)
{
	return (fuse_ino_t)(uintptr_t)inode;
}

/* A request that must succeed without data: replied with error 0. */
static void t_assert_ok(const struct t_req *r)
{
	ck_assert_uint_eq(r->nreplies, 1);
	ck_assert_int_eq(r->kind, R_ERR);
	ck_assert_int_eq(r->err, 0);
}

static void t_unlink_op(const char *name)
{
	struct t_req r;

	t_req_init(&r, 0);
	tierfs_ops.unlink(t_fuse_req(&r), FUSE_ROOT_ID, name);
	t_assert_ok(&r);
}

static void t_rmdir_op(const char *name)
{
	struct t_req r;

	t_req_init(&r, 0);
	tierfs_ops.rmdir(t_fuse_req(&r), FUSE_ROOT_ID, name);
	t_assert_ok(&r);
}

/* The kernel drops @n lookups of @inode (FORGET). */
static void t_forget_op(struct tfs_inode *inode, uint64_t n)
{
	struct t_req r;

	t_req_init(&r, 0);
	tierfs_ops.forget(t_fuse_req(&r), t_id(inode), n);
	ck_assert_uint_eq(r.nreplies, 1);
	ck_assert_int_eq(r.kind, R_NOREPLY);
}

/* Each handler that replies with an entry. */
enum t_op {
	OP_LOOKUP,
	OP_MKNOD,
	OP_MKDIR,
	OP_SYMLINK,
	OP_LINK,
	OP_CREATE,
	_OP_MAX
};

/*
 * What one op test works on: @name is the entry the op replies with;
 * @target the inode that exists before the op (lookup: @name itself,
 * with no kernel count; link: "f", which the kernel holds once, as it
 * must to send a link), NULL for the ops that make a new inode.
 * @kref is the number of lookups the kernel holds on @name's inode by
 * our model: what the mount's i_nlookup must equal.
 */
struct t_case {
	enum t_op op;
	const char *name;
	struct tfs_inode *target;
	uint64_t kref;
};

/* Send @op for c->name with the reply returning @reply_ret. */
static void t_op_send(struct t_case *c, struct t_req *r, int reply_ret,
		      void (*in_reply)(struct t_req *r))
{
	struct fuse_req *req = t_fuse_req(r);
	struct fuse_file_info fi;

	t_req_init(r, reply_ret);
	r->in_reply = in_reply;
	switch (c->op) {
	case OP_LOOKUP:
		tierfs_ops.lookup(req, FUSE_ROOT_ID, c->name);
		break;
	case OP_MKNOD:
		tierfs_ops.mknod(req, FUSE_ROOT_ID, c->name, S_IFREG | 0644, 0);
		break;
	case OP_MKDIR:
		tierfs_ops.mkdir(req, FUSE_ROOT_ID, c->name, 0755);
		break;
	case OP_SYMLINK:
		tierfs_ops.symlink(req, "some/target", FUSE_ROOT_ID, c->name);
		break;
	case OP_LINK:
		tierfs_ops.link(req, t_id(c->target), FUSE_ROOT_ID, c->name);
		break;
	case OP_CREATE:
		memset(&fi, 0, sizeof(fi));
		fi.flags = O_CREAT | O_RDWR;
		tierfs_ops.create(req, FUSE_ROOT_ID, c->name, 0644, &fi);
		break;
	default:
		ck_abort_msg("op %d", c->op);
	}
	ck_assert_uint_eq(r->nreplies, 1);
}

/* The entry reply @r carries names @inode, with its attributes. */
static void t_assert_entry(const struct t_case *c, const struct t_req *r,
			   struct tfs_inode *inode)
{
	ck_assert_int_eq(r->kind, c->op == OP_CREATE ? R_CREATE : R_ENTRY);
	ck_assert_ptr_nonnull(inode);
	ck_assert_uint_eq(r->e.ino, t_id(inode));
	ck_assert_uint_eq(r->e.generation, inode->i_ino);
	ck_assert_uint_eq(r->e.attr.st_ino, inode->i_ino);
	ck_assert_uint_eq(r->e.attr.st_mode & S_IFMT, inode->i_type);
}

/* Make @name (a regular file, by mknod); the kernel keeps @kref of it. */
static struct tfs_inode *t_make_file(const char *name, uint64_t kref)
{
	struct t_case c = { .op = OP_MKNOD, .name = name };
	struct tfs_inode *inode;
	struct t_req r;

	t_op_send(&c, &r, 0, NULL);
	inode = t_find(name);
	t_assert_entry(&c, &r, inode);
	ck_assert_uint_eq(t_nlookup(inode), 1);
	if (kref == 0)
		t_forget_op(inode, 1);
	ck_assert_uint_eq(t_nlookup(inode), kref);
	return inode;
}

/* The mount as loop test @i starts it: the case for op @i. */
static void t_case_prepare(struct t_case *c, int i)
{
	memset(c, 0, sizeof(*c));
	c->op = (enum t_op)i;
	c->name = "a";
	if (c->op == OP_LOOKUP)
		c->target = t_make_file("a", 0);
	else if (c->op == OP_LINK)
		c->target = t_make_file("f", 1);
	if (c->target)
		c->kref = t_nlookup(c->target);
}

/* The inode the case's name stands for now (it must exist). */
static struct tfs_inode *t_case_inode(const struct t_case *c)
{
	struct tfs_inode *inode = t_find(c->name);

	ck_assert_ptr_nonnull(inode);
	if (c->target)
		ck_assert_ptr_eq(inode, c->target);
	return inode;
}

/*
 * Remove every name of the case's inode, then forget what the kernel
 * holds: only that forget may free the inode (if the kernel holds
 * anything), and it must.
 */
static void t_case_finish(struct t_case *c)
{
	struct tfs_inode *inode = t_case_inode(c);
	/* the root and the case's inode; a link's second name one more */
	uint64_t before = t_ninodes();

	ck_assert_uint_eq(before, c->op == OP_LINK ? 3 : 2);
	ck_assert_uint_eq(t_nlookup(inode), c->kref);
	if (c->op == OP_MKDIR)
		t_rmdir_op(c->name);
	else
		t_unlink_op(c->name);
	if (c->op == OP_LINK)
		t_unlink_op("f");
	if (c->kref) {
		/* nameless, but the kernel still knows it: the inode's
		 * own unit stays, the second name's went with it */
		ck_assert_uint_eq(t_ninodes(), 2);
		ck_assert_uint_eq(inode->i_nlink, 0);
		t_forget_op(inode, c->kref);
	}
	ck_assert_uint_eq(t_ninodes(), 1);
	ck_assert_uint_eq(t_used(fs), 0);
	t_assert_no_leak(fs);
}

/* ------------------------------------------------------------------ */
/* entry replies that reach the kernel */

/* One lookup counted per entry reply; a failed op counts none. */
START_TEST(test_ops_entry_reply_counts_one)
{
	struct tfs_inode *inode;
	struct t_case c;
	struct t_req r;

	t_case_prepare(&c, _i);
	t_op_send(&c, &r, 0, NULL);
	inode = t_case_inode(&c);
	t_assert_entry(&c, &r, inode);
	c.kref++;
	ck_assert_uint_eq(t_nlookup(inode), c.kref);
	if (c.op == OP_CREATE)
		ck_assert_uint_eq(r.fi.keep_cache, 1);

	/* again: a lookup counts once more; the rest now fail, with EEXIST,
	 * and count nothing */
	t_op_send(&c, &r, 0, NULL);
	if (c.op == OP_LOOKUP) {
		t_assert_entry(&c, &r, inode);
		c.kref++;
	} else {
		ck_assert_int_eq(r.kind, R_ERR);
		ck_assert_int_eq(r.err, EEXIST);
	}
	ck_assert_uint_eq(t_nlookup(inode), c.kref);

	/* and a lookup of the name, whatever made it, counts one */
	if (c.op != OP_LOOKUP) {
		struct t_case l = { .op = OP_LOOKUP, .name = c.name };

		t_op_send(&l, &r, 0, NULL);
		t_assert_entry(&l, &r, inode);
		c.kref++;
		ck_assert_uint_eq(t_nlookup(inode), c.kref);
	}
	t_case_finish(&c);
}
END_TEST

/* A negative entry counts nothing, and a failed one undoes nothing. */
START_TEST(test_ops_lookup_negative)
{
	struct t_case c = { .op = OP_LOOKUP, .name = "missing" };
	struct t_req r;

	for (int fail = 0; fail < 2; fail++) {
		t_op_send(&c, &r, fail ? -ENOENT : 0, NULL);
		ck_assert_int_eq(r.kind, R_ENTRY);
		ck_assert_uint_eq(r.e.ino, 0);
		ck_assert(r.e.entry_timeout > 0);
		ck_assert_uint_eq(t_ninodes(), 1);
		ck_assert_uint_eq(t_nlookup(fs->root), 1);
	}
}
END_TEST

/*
 * Entries and attributes are cached long (ops.c says why), negative
 * entries too: a reply with a short timeout would cost the round trips
 * back.  At least an hour; the choice is a day.
 */
START_TEST(test_ops_entry_timeouts_long)
{
	struct t_case c = { .op = OP_LOOKUP, .name = "f" };
	struct t_req r;

	t_make_file("f", 0);
	t_op_send(&c, &r, 0, NULL);
	ck_assert_int_eq(r.kind, R_ENTRY);
	ck_assert_uint_ne(r.e.ino, 0);
	ck_assert(r.e.entry_timeout >= 3600);
	ck_assert(r.e.attr_timeout >= 3600);
	t_forget_op(t_find("f"), 1);
	c.name = "missing";
	t_op_send(&c, &r, 0, NULL);
	ck_assert_uint_eq(r.e.ino, 0);
	ck_assert(r.e.entry_timeout >= 3600);
	t_unlink_op("f");
}
END_TEST

/*
 * flush, fsync and fsyncdir have nothing to do (scratch semantics): they
 * say ENOSYS, after which the kernel stops sending them (it still writes
 * dirty pages back and reports their errors itself).
 */
START_TEST(test_ops_flush_fsync_enosys)
{
	struct tfs_inode *inode = t_make_file("f", 1);
	struct fuse_file_info fi;
	struct t_req r;

	memset(&fi, 0, sizeof(fi));
	t_req_init(&r, 0);
	tierfs_ops.flush(t_fuse_req(&r), t_id(inode), &fi);
	ck_assert_int_eq(r.kind, R_ERR);
	ck_assert_int_eq(r.err, ENOSYS);
	t_req_init(&r, 0);
	tierfs_ops.fsync(t_fuse_req(&r), t_id(inode), 0, &fi);
	ck_assert_int_eq(r.kind, R_ERR);
	ck_assert_int_eq(r.err, ENOSYS);
	t_req_init(&r, 0);
	tierfs_ops.fsyncdir(t_fuse_req(&r), FUSE_ROOT_ID, 1, &fi);
	ck_assert_int_eq(r.kind, R_ERR);
	ck_assert_int_eq(r.err, ENOSYS);
	t_unlink_op("f");
	t_forget_op(inode, 1);
	ck_assert_uint_eq(t_ninodes(), 1);
}
END_TEST

/* forget_multi drops several counts of several inodes at once. */
START_TEST(test_ops_forget_multi)
{
	struct fuse_forget_data fd[3];
	const char *names[3] = { "x", "y", "z" };
	struct t_req r;

	for (unsigned i = 0; i < 3; i++) {
		struct t_case c = { .op = OP_CREATE, .name = names[i] };
		struct t_case l = { .op = OP_LOOKUP, .name = names[i] };
		struct tfs_inode *inode;

		t_op_send(&c, &r, 0, NULL);
		inode = t_find(names[i]);
		t_assert_entry(&c, &r, inode);
		for (unsigned k = 0; k < i; k++) {
			t_op_send(&l, &r, 0, NULL);
			t_assert_entry(&l, &r, inode);
		}
		ck_assert_uint_eq(t_nlookup(inode), i + 1);
		fd[i].ino = t_id(inode);
		fd[i].nlookup = i + 1;
		t_unlink_op(names[i]);
	}
	ck_assert_uint_eq(t_ninodes(), 4);
	t_req_init(&r, 0);
	tierfs_ops.forget_multi(t_fuse_req(&r), 3, fd);
	ck_assert_int_eq(r.kind, R_NOREPLY);
	ck_assert_uint_eq(t_ninodes(), 1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* entry replies the kernel dropped */

/*
 * The reply fails: the count is back where it was, while what the op
 * did (a new name) stays, as for any interrupted request.  Successful
 * and failed lookups of the name then alternate, each counting (or not)
 * by itself, and the forget of the count the kernel really holds frees
 * the inode.
 */
START_TEST(test_ops_entry_reply_fails_undone)
{
	struct t_case l = { .op = OP_LOOKUP };
	struct tfs_inode *inode;
	struct t_case c;
	struct t_req r;

	t_case_prepare(&c, _i);
	l.name = c.name;
	t_op_send(&c, &r, -ENOENT, NULL);
	inode = t_case_inode(&c);
	t_assert_entry(&c, &r, inode);
	ck_assert_uint_eq(t_nlookup(inode), c.kref);
	ck_assert_uint_eq(t_ninodes(), c.op == OP_LINK ? 3 : 2);
	if (c.op == OP_LINK)
		ck_assert_uint_eq(inode->i_nlink, 2);

	for (int k = 0; k < 4; k++) {
		bool fail = k % 2;

		t_op_send(&l, &r, fail ? -ENOENT : 0, NULL);
		t_assert_entry(&l, &r, inode);
		if (!fail)
			c.kref++;
		ck_assert_uint_eq(t_nlookup(inode), c.kref);
	}
	t_case_finish(&c);
}
END_TEST

/* Inside the reply: write to the inode (create), then remove its names,
 * as another thread may do while the reply is on its way. */
static void t_remove_in_reply(struct t_req *r)
{
	struct tfs_inode *inode = (struct tfs_inode *)(uintptr_t)r->e.ino;
	char buf[3 * EXT / 2];

	if (inode->i_type == S_IFREG) {
		memset(buf, 0x5a, sizeof(buf));
		ck_assert_int_eq(data_write(r->fs, inode, buf, sizeof(buf), 0),
				 (ssize_t)sizeof(buf));
		ck_assert_uint_eq(t_used(r->fs), 2);
	}
	if (inode->i_type == S_IFDIR) {
		ck_assert_int_eq(ns_rmdir(r->fs, r->fs->root, "a"), 0);
	} else {
		ck_assert_int_eq(ns_unlink(r->fs, r->fs->root, "a"), 0);
		if (inode->i_nlink)
			ck_assert_int_eq(ns_unlink(r->fs, r->fs->root, "f"), 0);
	}
	ck_assert_uint_eq(inode->i_nlink, 0);
	/* alive only by the count the failing reply is about to give back
	 * (and, for link, the kernel's own) */
	ck_assert_uint_eq(r->fs->ninodes, 2);
}

/*
 * The name goes while the reply is in flight and the reply fails: the
 * undo is the inode's last reference and frees it, data and all, before
 * the handler returns -- and nothing in the handler touches it after
 * (ASan).  For link the kernel still holds its own count, whose forget
 * frees it.
 */
START_TEST(test_ops_entry_reply_fails_last_ref)
{
	struct tfs_inode *inode;
	struct t_case c;
	struct t_req r;

	t_case_prepare(&c, _i);
	t_op_send(&c, &r, -ENOENT, t_remove_in_reply);
	ck_assert_int_eq(r.kind, c.op == OP_CREATE ? R_CREATE : R_ENTRY);
	ck_assert_ptr_null(t_find(c.name));
	if (c.op == OP_LINK) {
		inode = c.target;
		ck_assert_uint_eq(r.e.ino, t_id(inode));
		ck_assert_uint_eq(t_ninodes(), 2);
		ck_assert_uint_eq(t_nlookup(inode), c.kref);
		t_forget_op(inode, c.kref);
	}
	ck_assert_uint_eq(t_ninodes(), 1);
	ck_assert_uint_eq(t_used(fs), 0);
	t_assert_no_leak(fs);
}
END_TEST

/* The same race with a reply that arrives: the kernel's forget frees. */
START_TEST(test_ops_entry_reply_ok_last_ref)
{
	struct tfs_inode *inode;
	struct t_case c;
	struct t_req r;

	t_case_prepare(&c, _i);
	t_op_send(&c, &r, 0, t_remove_in_reply);
	ck_assert_ptr_null(t_find(c.name));
	inode = (struct tfs_inode *)(uintptr_t)r.e.ino;
	if (c.target)
		ck_assert_ptr_eq(inode, c.target);
	ck_assert_uint_eq(t_ninodes(), 2);
	ck_assert_uint_eq(t_nlookup(inode), c.kref + 1);
	t_forget_op(inode, c.kref + 1);
	ck_assert_uint_eq(t_ninodes(), 1);
	ck_assert_uint_eq(t_used(fs), 0);
	t_assert_no_leak(fs);
}
END_TEST

static Suite *ops_suite(void)
{
	Suite *s = suite_create("ops");
	TCase *tc = tcase_create("entry");
	TCase *tf = tcase_create("entry_fails");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_ops_entry_reply_counts_one, 0, _OP_MAX);
	tcase_add_test(tc, test_ops_lookup_negative);
	tcase_add_test(tc, test_ops_forget_multi);
	tcase_add_test(tc, test_ops_entry_timeouts_long);
	tcase_add_test(tc, test_ops_flush_fsync_enosys);
	tcase_add_loop_test(tc, test_ops_entry_reply_ok_last_ref, 0, _OP_MAX);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(tf, setup, teardown);
	tcase_add_loop_test(tf, test_ops_entry_reply_fails_undone, 0, _OP_MAX);
	tcase_add_loop_test(tf, test_ops_entry_reply_fails_last_ref, 0,
			    _OP_MAX);
	suite_add_tcase(s, tf);
	return s;
}

int main(void)
{
	return tap_run(ops_suite());
}
