// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kernel_req.c -- what a request says that libfuse 3.14 drops
 * (kernel_req.h), noted for the thread that handles it.
 */
#include <errno.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "fuse_inc.h"
#include "kernel_req.h"
#include "fs.h"
#include "owner.h"
#include "banned.h"

/* Replies happen before the requests that follow them (tsan.h). */
char kernel_tsan_sync;

/* Of the request this thread handles (read hook or ring -> handler). */
static __thread bool t_kill_suidgid;
static __thread int t_queue = KERNEL_QUEUE_DEV;
static __thread uint64_t t_unique;   /* its unique id */
static __thread uint32_t t_opcode;   /* its opcode */
static __thread int t_passthrough;   /* backing id for its OPEN reply */

bool kernel_req_kill_suidgid(void)
{
	return t_kill_suidgid;
}

int kernel_req_queue(void)
{
	return t_queue;
}

/*
 * Requests per opcode, on both transports (stats: the "requests" line).
 * Opcodes past the table (CUSE's) count as "other".  Relaxed atomics.
 */
#define OPCODES 64
static uint64_t op_count[OPCODES];
static const char *const op_name[OPCODES] = {
	[0] = "other",		[1] = "lookup",		[2] = "forget",
	[3] = "getattr",	[4] = "setattr",	[5] = "readlink",
	[6] = "symlink",	[8] = "mknod",		[9] = "mkdir",
	[10] = "unlink",	[11] = "rmdir",		[12] = "rename",
	[13] = "link",		[14] = "open",		[15] = "read",
	[16] = "write",		[17] = "statfs",	[18] = "release",
	[20] = "fsync",		[21] = "setxattr",	[22] = "getxattr",
	[23] = "listxattr",	[24] = "removexattr",	[25] = "flush",
	[26] = "init",		[27] = "opendir",	[28] = "readdir",
	[29] = "releasedir",	[30] = "fsyncdir",	[31] = "getlk",
	[32] = "setlk",		[33] = "setlkw",	[34] = "access",
	[35] = "create",	[36] = "interrupt",	[37] = "bmap",
	[38] = "destroy",	[39] = "ioctl",		[40] = "poll",
	[41] = "notify_reply",	[42] = "batch_forget",	[43] = "fallocate",
	[44] = "readdirplus",	[45] = "rename2",	[46] = "lseek",
	[47] = "copy_file_range", [48] = "setupmapping", [49] = "removemapping",
	[50] = "syncfs",	[51] = "tmpfile",	[52] = "statx",
};

int kernel_request_counts(char *buf, size_t len)
{
	size_t at = 0;
	int n;

	n = snprintf(buf, len, "requests");
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	at = (size_t)n;
	for (unsigned i = 0; i < OPCODES; i++) {
		uint64_t c = __atomic_load_n(&op_count[i], __ATOMIC_RELAXED);

		if (!c)
			continue;
		n = snprintf(buf + at, len - at, " %s=%llu",
			     op_name[i] ? op_name[i] : "other",
			     (unsigned long long)c);
		if (n < 0 || (size_t)n >= len - at)
			return -ENOSPC;
		at += (size_t)n;
	}
	return (int)at;
}

void kernel_note_request(struct tierfs *fs, const void *buf, size_t n,
			 int queue)
{
	const struct fuse_in_header *h = buf;
	const char *arg = (const char *)buf + sizeof(*h);
	size_t argn;

	t_kill_suidgid = false;
	t_queue = queue;
	t_passthrough = 0;
	if (n < sizeof(*h)) {
		t_unique = 0;
		t_opcode = 0;
		owner_set_uid(OWNER_NONE);
		return;
	}
	t_unique = h->unique;
	t_opcode = h->opcode;
	owner_set_uid(h->uid);
	__atomic_add_fetch(&op_count[h->opcode < OPCODES && op_name[h->opcode]
					     ? h->opcode
					     : 0],
			   1, __ATOMIC_RELAXED);
	argn = n - sizeof(*h);
	switch (h->opcode) {
	case FUSE_WRITE:
		if (argn >= sizeof(struct fuse_write_in)) {
			const struct fuse_write_in *w = (const void *)arg;

			t_kill_suidgid = w->write_flags & FUSE_WRITE_KILL_SUIDGID;
		}
		break;
	case FUSE_SETATTR:
		if (argn >= sizeof(struct fuse_setattr_in)) {
			const struct fuse_setattr_in *s = (const void *)arg;

			t_kill_suidgid = s->valid & FATTR_KILL_SUIDGID;
		}
		break;
	case FUSE_INIT:
		if (argn >= offsetof(struct fuse_init_in, flags) + 4) {
			const struct fuse_init_in *in = (const void *)arg;
			uint64_t flags = in->flags;

			/* flags2 exists only when INIT_EXT says so */
			if ((flags & KFUSE_INIT_EXT) &&
			    argn >= offsetof(struct fuse_init_in, flags2) + 4)
				flags |= (uint64_t)in->flags2 << 32;
			fs->kern_offered = flags;
			fs->kern_init_unique = h->unique;
			__atomic_store_n(&fs->kern_init_pending, true,
					 __ATOMIC_RELEASE);
		}
		break;
	default:
		break;
	}
}

void kernel_req_set_passthrough(int backing_id)
{
	t_passthrough = backing_id > 0 ? backing_id : 0;
}

void kernel_req_patch_reply(struct iovec *iov, int count)
{
	struct fuse_out_header oh;
	struct fuse_open_out *op;
	size_t at;
	int32_t id = t_passthrough;

	if (!id || count < 2 || iov[0].iov_len < sizeof(oh))
		return;
	memcpy(&oh, iov[0].iov_base, sizeof(oh));
	if (oh.unique != t_unique || oh.error)
		return;
	/* OPEN: the open_out alone; CREATE: after the entry_out, one
	 * buffer (libfuse's fuse_reply_create()) */
	at = t_opcode == FUSE_CREATE ? sizeof(struct fuse_entry_out) : 0;
	if ((t_opcode != FUSE_OPEN && t_opcode != FUSE_CREATE) ||
	    iov[1].iov_len < at + sizeof(*op))
		return;
	op = (struct fuse_open_out *)((char *)iov[1].iov_base + at);
	op->open_flags |= KFOPEN_PASSTHROUGH;
	/* backing_id: the word Debian 12's header still calls padding */
	memcpy(&op->padding, &id, sizeof(id));
	t_passthrough = 0;
}
