// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kernel_uring.c -- FUSE over io_uring (Linux 6.14+), the transport
 * libfuse 3.14 does not know, spoken here beside kernel.c's /dev/fuse
 * hooks.  The kernel's Documentation/filesystems/fuse/fuse-io-uring.rst
 * and include/uapi/linux/fuse.h describe the protocol; the structures
 * and constants are defined below because Debian 12's headers predate
 * it.
 *
 * How it works.  INIT still comes over /dev/fuse.  When the kernel
 * offers FUSE_OVER_IO_URING (module parameter enable_uring=1) and the
 * transport option allows it, kernel_init() adds the flag to the INIT
 * reply, and once that reply is written (kernel_io_writev()) the queues
 * start: one per possible CPU, as the kernel numbers them, each served
 * by UR_THREADS threads pinned to that CPU.  Every thread owns an
 * io_uring of its own (SQE128) and one ring entry: a header buffer
 * (struct ur_header) and a payload buffer of the kernel's maximum
 * payload, registered with FUSE_IO_URING_CMD_REGISTER.  When every
 * queue has an entry the kernel sends requests there instead of
 * /dev/fuse -- to the queue of the CPU the caller runs on, so a request
 * is served on the core that issued it -- and the libfuse loop on
 * /dev/fuse is left with what the kernel still sends there (FORGET,
 * INTERRUPT) and with notifications we send.
 *
 * A request arrives as a CQE of the thread's last command.  The thread
 * lays the in-header and the per-opcode header down in front of the
 * payload (the payload buffer has room reserved before it, so no
 * payload byte is copied), and hands the whole to
 * fuse_session_process_buf(): the same handlers as on /dev/fuse, and
 * the same per-request flags (kernel_note_request()).  The handler's
 * reply reaches kernel_io_writev() as always; for a request of this
 * thread's entry it comes here instead (kernel_uring_reply()), is
 * copied into the entry's buffers and committed with
 * FUSE_IO_URING_CMD_COMMIT_AND_FETCH, which also asks for the next
 * request.  Every tierfs handler replies before it returns, on its own
 * thread; a request left without a reply is answered EIO so that the
 * entry is not lost.
 *
 * Threads and locks: each ur_thread's ring and entry are touched only by
 * that thread (the reply comes on the thread that handles the request),
 * so they need no lock.  ur.lock guards the thread list and the counters
 * that kernel_uring_stop() and the stats read.
 *
 * Teardown: when the connection ends (unmount, abort) the kernel
 * completes every command with -ENOTCONN (or -ECANCELED), and each
 * thread ends; kernel_uring_stop() also sets ur.stopping, which the
 * threads see within UR_POLL_MS, for the case where the loop ended on a
 * signal while the connection lives on.  A process killed with -9 loses
 * its rings with its files; the kernel cancels the commands.
 *
 * Return conventions: functions return 0 or -errno; nothing here aborts
 * the mount -- a queue that cannot start leaves the kernel on /dev/fuse
 * (the ring is used only once every queue has an entry).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_inc.h"
#include "kernel.h"
#include "kernel_i.h"
#include "fs.h"
#include "log.h"
#include "macro.h"
#include "tsan.h"
#include "banned.h"

/* ---- the kernel's ABI (include/uapi/linux/fuse.h, 7.42+) ---- */

#define UR_IN_OUT_HEADER_SZ 128 /* FUSE_URING_IN_OUT_HEADER_SZ */
#define UR_OP_IN_OUT_SZ 128	/* FUSE_URING_OP_IN_OUT_SZ */

enum {
	UR_CMD_REGISTER = 1,	     /* FUSE_IO_URING_CMD_REGISTER */
	UR_CMD_COMMIT_AND_FETCH = 2, /* FUSE_IO_URING_CMD_COMMIT_AND_FETCH */
};

/* struct fuse_uring_ent_in_out */
struct ur_ent_in_out {
	uint64_t flags;
	uint64_t commit_id; /* echo in the commit */
	uint32_t payload_sz;
	uint32_t padding;
	uint64_t reserved;
};

/* struct fuse_uring_req_header: the entry's first iovec */
struct ur_header {
	char in_out[UR_IN_OUT_HEADER_SZ]; /* fuse_in_header / fuse_out_header */
	char op_in[UR_OP_IN_OUT_SZ];	  /* the opcode's own header */
	struct ur_ent_in_out ent;
};

/* struct fuse_uring_cmd_req: in the SQE's 80-byte command area */
struct ur_cmd_req {
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

_Static_assert(sizeof(struct ur_ent_in_out) == 32, "fuse_uring_ent_in_out");
_Static_assert(sizeof(struct ur_header) == 288, "fuse_uring_req_header");
_Static_assert(sizeof(struct ur_cmd_req) == 24, "fuse_uring_cmd_req");
_Static_assert(sizeof(struct ur_header) == KERNEL_URING_HEADER_SIZE,
	       "kernel_i.h's header size");

/* ---- ours ---- */

/* Threads (each with one ring entry) per queue at the start ... */
#define UR_THREADS 4
/* ... and at most: a queue grows while every thread of it is busy (a
 * hung tier, a long walk), so that it keeps an idle entry. */
#define UR_MAX_THREADS 32
/* How often a waiting thread looks at ur.stopping. */
#define UR_POLL_MS 500
/* Room before the payload for the in-header and the opcode's header. */
#define UR_PREFIX KERNEL_URING_PREFIX
_Static_assert(KERNEL_URING_PREFIX ==
		       sizeof(struct fuse_in_header) + UR_OP_IN_OUT_SZ,
	       "kernel_i.h's prefix");

struct ur_thread {
	struct io_uring ring;
	bool ring_ok;
	pthread_t thread;
	bool started;
	unsigned qid;
	struct ur_header hdr;	/* registered: the kernel writes it */
	char *buf;		/* UR_PREFIX + payload_cap */
	char *payload;		/* buf + UR_PREFIX, registered */
	size_t payload_cap;
	struct iovec iov[2];	/* what REGISTER points at */
	uint64_t unique;	/* the request being handled, or 0 */
	bool replied;
	bool grown;		/* added by ur_busy(): kick once registered */
	struct ur_thread *next;	/* ur.lock; the list of every thread */
};

/* One queue's threads: relaxed atomics (its threads count themselves
 * busy; ur_grow() adds one under ur.lock). */
struct ur_queue {
	unsigned threads;
	unsigned busy;
};

static struct {
	pthread_mutex_t lock;
	struct ur_thread *list;	/* lock; every thread, newest first */
	struct ur_queue *q;	/* lock to set; nqueues of them */
	unsigned nthreads;	/* lock; threads started */
	unsigned nqueues;	/* lock */
	size_t max_payload;	/* lock */
	unsigned registered;	/* lock; entries the kernel took */
	bool stopping;		/* relaxed atomic */
	uint64_t requests;	/* relaxed atomic; served over the rings */
	struct fuse_session *se;
	int fd;			/* /dev/fuse */
	struct tierfs *fs;
} ur = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* The entry whose request this thread is handling (a reply goes there). */
static __thread struct ur_thread *t_cur;

int kernel_uring_nqueues(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned a, b, n = 0;
	int c;

	/* "0-3", "0", "0-3,8-11": the kernel's num_possible_cpus() */
	if (!f)
		return -errno;
	for (;;) {
		if (fscanf(f, "%u", &a) != 1)
			break;
		b = a;
		c = fgetc(f);
		if (c == '-') {
			if (fscanf(f, "%u", &b) != 1)
				break;
			c = fgetc(f);
		}
		if (b >= a)
			n += b - a + 1;
		if (c != ',')
			break;
	}
	fclose(f);
	return n > 0 ? (int)n : -EINVAL;
}

bool kernel_uring_enabled(void)
{
	FILE *f = fopen("/sys/module/fuse/parameters/enable_uring", "r");
	int c;

	if (!f)
		return false;
	c = fgetc(f);
	fclose(f);
	return c == 'Y' || c == 'y' || c == '1';
}

/* Prepare a command for @t's entry: REGISTER, or COMMIT_AND_FETCH of
 * @commit_id.  Return: 0 or -EBUSY (no SQE: cannot happen with one
 * command in flight). */
static int ur_prep(struct ur_thread *t, unsigned op, uint64_t commit_id)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
	struct ur_cmd_req *cr;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 2 * sizeof(*sqe)); /* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = ur.fd;
	sqe->cmd_op = op;
	sqe->user_data = (uintptr_t)t;
	if (op == UR_CMD_REGISTER) {
		t->iov[0] = (struct iovec){ &t->hdr, sizeof(t->hdr) };
		t->iov[1] = (struct iovec){ t->payload, t->payload_cap };
		sqe->addr = (uintptr_t)t->iov;
		sqe->len = 2;
	}
	cr = (struct ur_cmd_req *)sqe->cmd;
	cr->qid = (uint16_t)t->qid;
	cr->commit_id = commit_id;
	return 0;
}

ssize_t kernel_uring_pack_reply(void *header, char *payload, size_t cap,
				const struct iovec *iov, int count)
{
	struct ur_header *h = header;
	struct fuse_out_header oh;
	size_t total = 0, n = 0;

	if (count < 1 || iov[0].iov_len < sizeof(oh))
		return -EINVAL;
	memcpy(&oh, iov[0].iov_base, sizeof(oh));
	for (int i = 1; i < count; i++)
		n += iov[i].iov_len;
	if (n > cap) {
		/* cannot happen: max_read/max_write bound every reply */
		log_err("a reply of %zu bytes does not fit the ring's %zu-byte payload; it fails with EIO",
			n, cap);
		oh.error = -EIO;
	}
	/* an error carries no arguments (the kernel copies none) */
	if (oh.error)
		n = 0;
	for (int i = 1; i < count && n; i++) {
		memcpy(payload + total, iov[i].iov_base, iov[i].iov_len);
		total += iov[i].iov_len;
	}
	oh.len = (uint32_t)(sizeof(oh) + n);
	memcpy(h->in_out, &oh, sizeof(oh));
	h->ent.payload_sz = (uint32_t)n;
	return (ssize_t)(sizeof(oh) + n);
}

ssize_t kernel_uring_unpack_request(const void *header, char *payload,
				    size_t cap, char **ret_start)
{
	const struct ur_header *h = header;
	struct fuse_in_header ih;
	uint32_t n = h->ent.payload_sz;
	size_t oplen;

	memcpy(&ih, h->in_out, sizeof(ih));
	if (n > cap || ih.len < sizeof(ih) + n ||
	    ih.len - sizeof(ih) - n > UR_OP_IN_OUT_SZ)
		return -EPROTO;
	oplen = ih.len - sizeof(ih) - n;
	/* in front of the payload, in the room reserved there */
	*ret_start = payload - oplen - sizeof(ih);
	memcpy(*ret_start, &ih, sizeof(ih));
	memcpy(*ret_start + sizeof(ih), h->op_in, oplen);
	return ih.len;
}

/*
 * The reply to the request @t handles: the out-header into the entry's
 * header, the arguments into its payload, then COMMIT_AND_FETCH.
 * Return: what writev() would (the bytes), or -errno.
 */
static ssize_t ur_commit(struct ur_thread *t, const struct iovec *iov,
			 int count)
{
	ssize_t n = kernel_uring_pack_reply(&t->hdr, t->payload,
					    t->payload_cap, iov, count);
	int r;

	if (n < 0)
		return n;
	r = ur_prep(t, UR_CMD_COMMIT_AND_FETCH, t->unique);
	if (r == 0)
		r = io_uring_submit(&t->ring) == 1 ? 0 : -EIO;
	t->replied = true;
	t->unique = 0;
	return r < 0 ? r : n;
}

bool kernel_uring_reply(const struct iovec *iov, int count, ssize_t *ret)
{
	struct ur_thread *t = t_cur;
	const struct fuse_out_header *oh;

	if (!t || count < 1 || iov[0].iov_len < sizeof(*oh))
		return false;
	oh = iov[0].iov_base;
	/* a notification (unique 0) or another request: /dev/fuse */
	if (oh->unique != t->unique || t->unique == 0)
		return false;
	*ret = ur_commit(t, iov, count);
	return true;
}

static int ur_spawn(unsigned qid, bool grown);

/*
 * @t starts on a request: if that leaves its queue without an idle entry,
 * add a thread with a new entry (the kernel queues a request that finds
 * no idle entry until one commits, and gives a new entry only requests
 * that come after it: so grow before the last one is taken).
 */
static void ur_busy(struct ur_thread *t)
{
	struct ur_queue *q = &ur.q[t->qid];
	unsigned busy = __atomic_add_fetch(&q->busy, 1, __ATOMIC_RELAXED);

	if (busy < __atomic_load_n(&q->threads, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&ur.lock);
	if (__atomic_load_n(&q->threads, __ATOMIC_RELAXED) < UR_MAX_THREADS &&
	    !__atomic_load_n(&ur.stopping, __ATOMIC_RELAXED) &&
	    ur_spawn(t->qid, true) < 0)
		log_debug("cannot add a thread to FUSE io_uring queue %u",
			  t->qid);
	pthread_mutex_unlock(&ur.lock);
}

/* Answer request @unique of @t's entry with EIO. */
static void ur_fail(struct ur_thread *t, uint64_t unique)
{
	struct fuse_out_header oh = { .error = -EIO, .unique = unique };
	struct iovec iov = { &oh, sizeof(oh) };

	t->unique = unique;
	(void)ur_commit(t, &iov, 1);
}

/* Handle the request the kernel put in @t's entry. */
static void ur_handle(struct ur_thread *t)
{
	struct fuse_in_header ih;
	struct fuse_buf fb;
	char *start;
	ssize_t len;

	memcpy(&ih, t->hdr.in_out, sizeof(ih));
	/* the request as /dev/fuse gives it, ending in the payload */
	len = kernel_uring_unpack_request(&t->hdr, t->payload, t->payload_cap,
					  &start);
	if (len < 0) {
		log_err("a FUSE request over io_uring with impossible sizes (opcode %u, length %u, payload %u); it fails with EIO",
			ih.opcode, ih.len, t->hdr.ent.payload_sz);
		ur_fail(t, ih.unique);
		return;
	}
	__atomic_add_fetch(&ur.requests, 1, __ATOMIC_RELAXED);
	kernel_note_request(ur.fs, start, (size_t)len);
	t->unique = ih.unique;
	t->replied = false;
	fb = (struct fuse_buf){ .mem = start, .size = (size_t)len };
	ur_busy(t);
	t_cur = t;
	fuse_session_process_buf(ur.se, &fb);
	t_cur = NULL;
	__atomic_sub_fetch(&ur.q[t->qid].busy, 1, __ATOMIC_RELAXED);
	if (!t->replied) {
		/* no handler of ours does this; do not lose the entry */
		log_err("FUSE request %u over io_uring got no reply; answered EIO",
			ih.opcode);
		ur_fail(t, ih.unique);
	}
}

/*
 * The kick.  The kernel hands a newly registered entry only the requests
 * that come after it: what it queued while the queue had no idle entry
 * waits until some entry of that queue commits.  If every other entry
 * of the queue is held by a hung tier (a frozen or dead filesystem),
 * nothing commits, and a CREATE waiting there holds its directory's
 * lock, so that every user who lists or creates in that directory
 * stalls behind it while the new entry sits idle (test 195 caught
 * this, 1 run in about 20 on a loaded machine).  So once a grown entry
 * is registered, a short-lived thread on the queue's CPU -- the kernel
 * picks the queue by the caller's CPU -- asks the mount for its root's
 * attributes with AT_STATX_FORCE_SYNC, which is always a GETATTR: it
 * finds an idle entry, and that entry's COMMIT_AND_FETCH takes what
 * waited.  The thread is detached and owns its argument; the mount
 * gone or the CPU offline, it ends having done nothing.  A queue grows
 * at most UR_MAX_THREADS - UR_THREADS times, so this is rare.
 */
struct ur_kick {
	unsigned qid;
	char path[]; /* the mount point */
};

static void *ur_kick_main(void *arg)
{
	struct ur_kick *k = arg;
	struct statx stx;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(k->qid, &cpus);
	if (pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus) == 0)
		(void)statx(AT_FDCWD, k->path, AT_STATX_FORCE_SYNC, STATX_TYPE,
			    &stx);
	free(k);
	return NULL;
}

static void ur_kick(unsigned qid)
{
	const char *mnt = ur.fs ? ur.fs->opt.mountpoint : NULL;
	size_t n = mnt ? strlen(mnt) + 1 : 0;
	pthread_attr_t attr;
	struct ur_kick *k;
	pthread_t th;
	int r;

	if (!n || !(k = malloc(sizeof(*k) + n)))
		return;
	k->qid = qid;
	memcpy(k->path, mnt, n);
	r = pthread_attr_init(&attr);
	if (r == 0) {
		(void)pthread_attr_setdetachstate(&attr,
						  PTHREAD_CREATE_DETACHED);
		r = pthread_create(&th, &attr, ur_kick_main, k);
		pthread_attr_destroy(&attr);
	}
	if (r != 0) {
		log_debug("cannot kick FUSE io_uring queue %u: %s", qid,
			  strerror(r));
		free(k);
	}
}

static void *ur_main(void *arg)
{
	struct ur_thread *t = arg;
	cpu_set_t cpus;
	int r;

	/* serve the CPU whose callers this queue gets */
	CPU_ZERO(&cpus);
	CPU_SET(t->qid, &cpus);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);

	r = ur_prep(t, UR_CMD_REGISTER, 0);
	if (r == 0)
		r = io_uring_submit(&t->ring) == 1 ? 0 : -EIO;
	if (r == 0) {
		struct io_uring_cqe *cqe;

		/* a refused REGISTER completes at once, inside the submit */
		if (io_uring_peek_cqe(&t->ring, &cqe) == 0 && cqe->res < 0) {
			r = cqe->res;
			io_uring_cqe_seen(&t->ring, cqe);
		}
	}
	if (r < 0)
		goto out;
	pthread_mutex_lock(&ur.lock);
	ur.registered++;
	pthread_mutex_unlock(&ur.lock);
	/* the kernel took the entry inside the submit: it is idle now */
	if (t->grown)
		ur_kick(t->qid);
	while (!__atomic_load_n(&ur.stopping, __ATOMIC_RELAXED)) {
		struct __kernel_timespec ts = {
			.tv_sec = UR_POLL_MS / 1000,
			.tv_nsec = (UR_POLL_MS % 1000) * 1000000L,
		};
		struct io_uring_cqe *cqe;
		int res;

		r = io_uring_wait_cqe_timeout(&t->ring, &cqe, &ts);
		if (r == -ETIME || r == -EINTR)
			continue;
		if (r < 0)
			break;
		res = cqe->res;
		io_uring_cqe_seen(&t->ring, cqe);
		TSAN_ACQUIRE(&kernel_tsan_sync);
		if (res < 0) {
			r = res;
			break;
		}
		ur_handle(t);
	}
out:
	if (r < 0 && r != -ENOTCONN && r != -ECANCELED && r != -ENODEV &&
	    !__atomic_load_n(&ur.stopping, __ATOMIC_RELAXED)) {
		bool all;

		pthread_mutex_lock(&ur.lock);
		all = ur.registered >= ur.nqueues * UR_THREADS;
		pthread_mutex_unlock(&ur.lock);
		log_warn("FUSE io_uring queue %u: %s%s", t->qid, strerror(-r),
			 all ? "" : "; requests stay on /dev/fuse");
	}
	return NULL;
}

/* Set up thread @t for queue @qid: its ring and its entry's buffers.
 * Return: 0 or -errno. */
static int ur_thread_init(struct ur_thread *t, unsigned qid, size_t payload)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 };
	int r;

	t->qid = qid;
	t->payload_cap = payload;
	t->buf = malloc(UR_PREFIX + payload);
	if (!t->buf)
		return -ENOMEM;
	t->payload = t->buf + UR_PREFIX;
	r = io_uring_queue_init_params(4, &t->ring, &p);
	if (r < 0)
		return r;
	t->ring_ok = true;
	return 0;
}

/*
 * A new thread (and ring entry) for queue @qid.  ur.lock held.
 * Return: 0 or -errno (nothing added).
 */
static int ur_spawn(unsigned qid, bool grown)
{
	struct ur_thread *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->grown = grown;
	r = ur_thread_init(t, qid, ur.max_payload);
	if (r == 0)
		r = -pthread_create(&t->thread, NULL, ur_main, t);
	if (r < 0) {
		if (t->ring_ok)
			io_uring_queue_exit(&t->ring);
		free(t->buf);
		free(t);
		return r;
	}
	t->started = true;
	t->next = ur.list;
	ur.list = t;
	ur.nthreads++;
	__atomic_add_fetch(&ur.q[qid].threads, 1, __ATOMIC_RELAXED);
	return 0;
}

int kernel_uring_start(struct tierfs *fs, struct fuse_session *se, int fd,
		       size_t max_payload)
{
	int nq = kernel_uring_nqueues();
	int r = 0;

	if (nq < 0)
		return nq;
	pthread_mutex_lock(&ur.lock);
	if (ur.q) {
		pthread_mutex_unlock(&ur.lock);
		return -EALREADY;
	}
	ur.q = calloc((size_t)nq, sizeof(*ur.q));
	if (!ur.q) {
		pthread_mutex_unlock(&ur.lock);
		return -ENOMEM;
	}
	ur.nqueues = (unsigned)nq;
	ur.max_payload = max_payload;
	ur.se = se;
	ur.fd = fd;
	ur.fs = fs;
	ur.registered = 0;
	__atomic_store_n(&ur.stopping, false, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < (unsigned)nq * UR_THREADS && r == 0; i++)
		r = ur_spawn(i / UR_THREADS, false);
	pthread_mutex_unlock(&ur.lock);
	if (r < 0) {
		log_warn("cannot start FUSE over io_uring: %s; requests stay on /dev/fuse",
			 strerror(-r));
		kernel_uring_stop();
	}
	return r;
}

uint64_t kernel_uring_requests(void)
{
	return __atomic_load_n(&ur.requests, __ATOMIC_RELAXED);
}

const char *kernel_uring_transport(void)
{
	bool live;

	pthread_mutex_lock(&ur.lock);
	/* the kernel uses the ring once every queue has an entry */
	live = ur.q && ur.registered >= ur.nqueues * UR_THREADS;
	pthread_mutex_unlock(&ur.lock);
	return live ? "uring" : "dev";
}

unsigned kernel_uring_threads(void)
{
	unsigned n;

	pthread_mutex_lock(&ur.lock);
	n = ur.nthreads;
	pthread_mutex_unlock(&ur.lock);
	return n;
}

void kernel_uring_stop(void)
{
	struct ur_thread *t;

	pthread_mutex_lock(&ur.lock);
	__atomic_store_n(&ur.stopping, true, __ATOMIC_RELAXED);
	t = ur.list;
	ur.list = NULL;
	pthread_mutex_unlock(&ur.lock);
	/* no thread is added now (ur_busy() sees stopping under the lock) */
	while (t) {
		struct ur_thread *next = t->next;

		if (t->started)
			(void)pthread_join(t->thread, NULL);
		if (t->ring_ok)
			io_uring_queue_exit(&t->ring);
		free(t->buf);
		free(t);
		t = next;
	}
	pthread_mutex_lock(&ur.lock);
	free(ur.q);
	ur.q = NULL;
	ur.nqueues = ur.nthreads = 0;
	pthread_mutex_unlock(&ur.lock);
}
