// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kernel_uring.c -- FUSE over io_uring (Linux 6.14+), the transport
 * libfuse 3.14 does not know (kernel_uring.h).  The kernel's
 * Documentation/filesystems/fuse/fuse-io-uring.rst and
 * include/uapi/linux/fuse.h describe the protocol; its structures, the
 * pure halves of an entry's traffic and the kick are
 * kernel_uring_wire.c's.
 *
 * How the transport comes up and what the kernel sends where:
 * kernel_uring.h.
 *
 * A request arrives as a CQE of the thread's command.  The thread lays
 * the in-header and the per-opcode header down in front of the payload
 * (the payload buffer has room reserved before it, so no payload byte
 * is copied), and hands the whole to fuse_session_process_buf(): the
 * same handlers as on /dev/fuse, and the same per-request notes
 * (kernel_note_request()).  The handler's reply reaches
 * kernel_io_writev() as always; for a request of this thread's entry it
 * comes here instead (kernel_uring_reply()), is copied into the entry's
 * buffers and committed with FUSE_IO_URING_CMD_COMMIT_AND_FETCH, which
 * also asks for the next request.
 *
 * The state of each entry (enum ur_state, as the kernel's dev_uring.c
 * keeps one) is the one truth the counters come from: each queue counts
 * its entries per state, and a thread moves its entry from state to
 * state (ur_set()), so that a thread that ends, for whatever reason, is
 * counted as gone, and the decisions below see the entries there are:
 *   - growth: a thread that starts on a request and leaves its queue
 *     without an idle or starting entry adds one (UR_MAX_THREADS a
 *     queue, ur.total_max in all), because the kernel queues a request
 *     that finds no idle entry until one commits (a hung tier, a long
 *     walk would otherwise hold the CPU's callers);
 *   - a reply that cannot be submitted (io_uring_submit() fails) is
 *     submitted again while the failure is one that passes (EAGAIN,
 *     EINTR, EBUSY; UR_SUBMIT_TRIES times, backing off); one that stays
 *     leaves the entry LOST: the kernel holds its request until the
 *     connection ends, the thread leaves, and the stats count it;
 *   - a command the kernel fails (an error CQE other than the end of
 *     the connection) leaves the entry gone; a queue left without an
 *     entry gets a new thread at once, UR_RESPAWN_MAX times at most.
 *
 * Idle cost: a waiting thread sleeps in io_uring_enter() until the
 * kernel hands it a request or the stop wakes it (a POLL on the stop
 * eventfd that every ring keeps armed); nothing polls on a timer.  The
 * buffers are counted (stats "uring_buffer_bytes"); the pages of a
 * payload buffer are touched only as far as requests fill them.
 *
 * Threads and locks: each ur_thread's ring, entry and buffers are
 * touched only by that thread (the reply comes on the thread that
 * handles the request), so they need no lock; its state is written by
 * it alone, and the per-queue counts are relaxed atomics.  ur.lock
 * guards the thread list, the queue array, the totals and the growth
 * decision; never held across a request.
 *
 * Teardown: when the connection ends (unmount, abort) the kernel
 * completes every command with -ENOTCONN (or -ECANCELED), and each
 * thread ends.  kernel_uring_stop() ends them while the connection
 * lives (a signal ended the loop): main() calls it before the unmount
 * closes the /dev/fuse fd and before the mount is freed, so that no
 * thread serves a request on freed state or commits on a closed fd
 * (issue 32).  A process killed with -9 loses its rings with its
 * files; the kernel cancels the commands.
 *
 * Longer than 700 lines for a reason: the threads, their entries'
 * states, the growth, the retries and the stop share the queue counts
 * and one lock, and read best together; the wire format, the probes
 * and the kick are apart already (kernel_uring_wire.c).
 *
 * Return conventions: functions return 0 or -errno; nothing here aborts
 * the mount -- a queue that cannot start leaves the kernel on /dev/fuse
 * (the ring is used only once every queue has an entry).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "fuse_inc.h"
#include "kernel_uring.h"
#include "kernel_uring_wire.h"
#include "kernel_req.h"
#include "fs.h"
#include "log.h"
#include "macro.h"
#include "tsan.h"
#include "banned.h"

/* ---- ours ---- */

/* Threads (each with one ring entry) per queue at the start: the kernel
 * needs one in every queue; more come as requests wait. */
#define UR_THREADS_START 1
/* ... and at most per queue: it grows while every entry of it is busy
 * (a hung tier, a long walk), so that it keeps an idle entry. */
#define UR_MAX_THREADS 32
/* ... and in all queues together: at least this, or 4 a queue. */
#define UR_TOTAL_MIN 256
/* A reply's submit tried this often while it fails with an errno that
 * passes, sleeping 1, 2, 4, ... ms (at most UR_SUBMIT_SLEEP_MAX_MS)
 * in between: about 1.5 s in all. */
#define UR_SUBMIT_TRIES 12
#define UR_SUBMIT_SLEEP_MAX_MS 256
/* New threads for a queue left with no entry, at most. */
#define UR_RESPAWN_MAX 8
/* Room before the payload for the in-header and the opcode's header. */
#define UR_PREFIX KERNEL_URING_PREFIX
/* Opcodes counted apart, for the test faults (fuse.h has fewer). */
#define UR_OPCODES 64
/* user_data of the stop eventfd's POLL (a command's is its thread). */
#define UR_WAKE_TAG ((uint64_t)1)

enum ur_state {
	UR_NEW,	 /* thread made, entry not registered yet */
	UR_IDLE, /* registered: the kernel may hand it a request */
	UR_BUSY, /* a request of it being handled */
	UR_GONE, /* the thread ended; the entry is no longer ours */
	UR_LOST, /* its reply could not be sent: the kernel holds the
		  * request (and the entry) until the connection ends */
	_UR_STATE_MAX,
};

struct ur_thread {
	struct io_uring ring;
	bool ring_ok;		/* the ring is set up (this thread's) */
	pthread_t thread;
	bool started;		/* ur.lock; joinable */
	unsigned qid;
	enum ur_state state;	/* written by this thread (ur_set()) */
	struct ur_header hdr;	/* registered: the kernel writes it */
	char *buf;		/* UR_PREFIX + payload_cap */
	char *payload;		/* buf + UR_PREFIX, registered */
	size_t payload_cap;
	struct iovec iov[2];	/* what REGISTER points at */
	uint64_t unique;	/* the request being handled, or 0 */
	unsigned opcode;	/* its opcode and number among those */
	uint64_t reqno;		/* of that opcode (the test faults) */
	bool replied;
	bool grown;		/* added while requests waited: kick */
	struct ur_thread *next;	/* ur.lock; the list of every thread */
};

/* One queue's entries by state: relaxed atomics, moved by ur_set() and
 * ur_spawn() (UR_NEW, under ur.lock). */
struct ur_queue {
	unsigned n[_UR_STATE_MAX];
	unsigned respawns; /* ur.lock */
	bool had_entry;	   /* ur.lock; the kernel took one of it */
};

static struct {
	pthread_mutex_t lock;
	struct ur_thread *list;	/* lock; every thread, newest first */
	struct ur_queue *q;	/* lock to set; nqueues of them */
	unsigned nqueues;	/* lock */
	size_t max_payload;	/* lock */
	unsigned total;		/* lock; threads made, not yet freed */
	unsigned total_max;	/* lock */
	bool ready;		/* lock; every queue had an entry */
	uint64_t buffer_bytes;	/* lock; of the threads not yet freed */
	bool stopping;		/* relaxed atomic */
	int wake_fd;		/* eventfd: readable once stopping */
	uint64_t requests;	/* relaxed atomic; served over the rings */
	uint64_t retries;	/* relaxed atomic; commits submitted again */
	uint64_t op_seen[UR_OPCODES];	/* relaxed atomics; requests per opcode */
	unsigned again_left;	/* relaxed atomic; test fault "again" */
	struct kernel_uring_faults faults; /* set at start, read-only */
	struct fuse_session *se;
	int fd;			/* /dev/fuse */
	struct tierfs *fs;
	int kick_fd;		/* the kicker's pipe (set at start) */
	pid_t kick_pid;		/* the kicker, or 0 */
} ur = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .wake_fd = -1,
	 .kick_fd = -1 };

/* The entry whose request this thread is handling (a reply goes there),
 * and this thread's own, if it is a ring thread. */
static __thread struct ur_thread *t_cur;
static __thread struct ur_thread *t_self;

/* Is the request @t handles the one test fault @f picks? */
static bool ur_fault_is(const struct kernel_uring_fault_at *f,
			const struct ur_thread *t)
{
	return f->opcode && f->opcode == t->opcode && f->nth == t->reqno;
}

/* Move @t's entry to state @s: the queue's counts follow. */
static void ur_set(struct ur_thread *t, enum ur_state s)
{
	struct ur_queue *q = &ur.q[t->qid];

	__atomic_sub_fetch(&q->n[t->state], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&q->n[s], 1, __ATOMIC_RELAXED);
	t->state = s;
}

static unsigned q_count(const struct ur_queue *q, enum ur_state s)
{
	return __atomic_load_n(&q->n[s], __ATOMIC_RELAXED);
}

/* Entries of @q a thread still serves (or is about to). */
static unsigned q_live(const struct ur_queue *q)
{
	return q_count(q, UR_NEW) + q_count(q, UR_IDLE) + q_count(q, UR_BUSY);
}

/* Prepare a command for @t's entry: REGISTER, or COMMIT_AND_FETCH of
 * @commit_id.  Return: 0 or -EBUSY (no SQE: cannot happen with at most
 * two in flight). */
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

/* An errno of io_uring_submit() that passes. */
static bool ur_transient(int r)
{
	return r == -EAGAIN || r == -EINTR || r == -EBUSY || r == 0;
}

/*
 * Submit what @t prepared, again while it fails with an errno that
 * passes (see UR_SUBMIT_TRIES); @lose: the test fault that makes every
 * try fail; the test fault "again" fails the first two tries of a call
 * while it lasts.  An SQE the kernel did not take stays in the ring, so the
 * next io_uring_submit() offers it again.
 * Return: 0, or the -errno that stayed.
 */
static int ur_submit(struct ur_thread *t, bool lose)
{
	static const int again_errno[3] = { -EAGAIN, -EINTR, -EBUSY };
	unsigned sleep_ms = 1;

	for (unsigned i = 0;; i++) {
		unsigned left = __atomic_load_n(&ur.again_left,
						__ATOMIC_RELAXED);
		int r;

		if (lose)
			r = -EFAULT;
		else if (left && i < 2 &&
			 __atomic_compare_exchange_n(
				 &ur.again_left, &left, left - 1, false,
				 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			r = again_errno[left % 3];
		else
			r = io_uring_submit(&t->ring);
		if (r > 0)
			return 0;
		if (!ur_transient(r) || i + 1 >= UR_SUBMIT_TRIES)
			return r < 0 ? r : -EIO;
		__atomic_add_fetch(&ur.retries, 1, __ATOMIC_RELAXED);
		if (i > 0) {
			struct timespec ts = {
				.tv_sec = sleep_ms / 1000,
				.tv_nsec = (long)(sleep_ms % 1000) * 1000000L,
			};

			(void)nanosleep(&ts, NULL);
			sleep_ms = MIN(2 * sleep_ms, UR_SUBMIT_SLEEP_MAX_MS);
		}
	}
}

/*
 * The reply to the request @t handles: the out-header into the entry's
 * header, the arguments into its payload, then COMMIT_AND_FETCH, which
 * also makes the entry idle again.  A submit that fails for good leaves
 * the entry LOST (logged).  Either way the request counts as replied:
 * there is no other way to answer it.
 * Return: what writev() would (the bytes), or -errno.
 */
static ssize_t ur_commit(struct ur_thread *t, const struct iovec *iov,
			 int count)
{
	ssize_t n = kernel_uring_pack_reply(&t->hdr, t->payload,
					    t->payload_cap, iov, count);
	uint64_t id = t->unique;
	int r;

	if (n < 0)
		return n;
	/* test fault: a commit id the kernel cannot have (an odd one:
	 * request ids are even) */
	if (ur_fault_is(&ur.faults.badcommit, t))
		id = 1;
	r = ur_prep(t, UR_CMD_COMMIT_AND_FETCH, id);
	if (r == 0)
		r = ur_submit(t, ur_fault_is(&ur.faults.lose, t));
	t->replied = true;
	t->unique = 0;
	if (r < 0) {
		ur_set(t, UR_LOST);
		log_err("FUSE io_uring queue %u: the reply to a request cannot be sent (%s): its caller waits until the mount ends; the queue goes on without this entry",
			t->qid, strerror(-r));
		return r;
	}
	ur_set(t, UR_IDLE);
	return n;
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
 * @t starts on a request (its entry BUSY now): if that leaves its queue
 * without an idle or starting entry, add a thread with a new entry (the
 * kernel queues a request that finds no idle entry until one commits,
 * and gives a new entry only requests that come after it: so grow
 * before the last one is taken).
 */
static void ur_busy(struct ur_thread *t)
{
	struct ur_queue *q = &ur.q[t->qid];

	if (q_count(q, UR_IDLE) + q_count(q, UR_NEW) > 0)
		return;
	pthread_mutex_lock(&ur.lock);
	if (q_count(q, UR_IDLE) + q_count(q, UR_NEW) == 0 &&
	    q_live(q) < UR_MAX_THREADS && ur.total < ur.total_max &&
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

	ur_set(t, UR_BUSY);
	memcpy(&ih, t->hdr.in_out, sizeof(ih));
	__atomic_add_fetch(&ur.requests, 1, __ATOMIC_RELAXED);
	t->opcode = ih.opcode;
	t->reqno = __atomic_add_fetch(&ur.op_seen[ih.opcode % UR_OPCODES], 1,
				      __ATOMIC_RELAXED);
	/* the request as /dev/fuse gives it, ending in the payload */
	len = kernel_uring_unpack_request(&t->hdr, t->payload, t->payload_cap,
					  &start);
	if (len < 0) {
		log_err("a FUSE request over io_uring with impossible sizes (opcode %u, length %u, payload %u); it fails with EIO",
			ih.opcode, ih.len, t->hdr.ent.payload_sz);
		ur_fail(t, ih.unique);
		return;
	}
	kernel_note_request(ur.fs, start, (size_t)len, (int)t->qid);
	t->unique = ih.unique;
	t->replied = false;
	fb = (struct fuse_buf){ .mem = start, .size = (size_t)len };
	ur_busy(t);
	t_cur = t;
	fuse_session_process_buf(ur.se, &fb);
	t_cur = NULL;
	if (!t->replied) {
		/* no handler of ours does this; do not lose the entry */
		log_err("FUSE request %u over io_uring got no reply; answered EIO",
			ih.opcode);
		ur_fail(t, ih.unique);
	}
}

/* The errnos a command ends with when the connection or the ring goes:
 * nothing to say, nothing to replace. */
static bool ur_ending(int r)
{
	return r == -ENOTCONN || r == -ECANCELED || r == -ENODEV ||
	       r == -ECONNABORTED;
}

/* Register @t's entry and arm the stop poll.  Return: 0 or -errno. */
static int ur_register(struct ur_thread *t)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
	struct io_uring_cqe *cqe;
	int r;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 2 * sizeof(*sqe));
	io_uring_prep_poll_add(sqe, ur.wake_fd, POLLIN);
	sqe->user_data = UR_WAKE_TAG;
	r = ur_prep(t, UR_CMD_REGISTER, 0);
	if (r == 0)
		r = ur_submit(t, false);
	if (r < 0)
		return r;
	/*
	 * A refused REGISTER completes at once, inside the submit.  Only
	 * that is taken here: a completion with a request (the kernel may
	 * hand one over at once) or the stop's poll stays for the loop.
	 */
	if (io_uring_peek_cqe(&t->ring, &cqe) == 0 &&
	    cqe->user_data != UR_WAKE_TAG && cqe->res < 0) {
		r = cqe->res;
		io_uring_cqe_seen(&t->ring, cqe);
		return r;
	}
	return 0;
}

/* A queue left with no entry by an unexpected end: a new thread for it
 * (the kernel would keep its CPU's requests for ever).  ur.lock held. */
static void ur_replace(struct ur_thread *t)
{
	struct ur_queue *q = &ur.q[t->qid];

	if (q_live(q) > 0 || __atomic_load_n(&ur.stopping, __ATOMIC_RELAXED))
		return;
	if (q->respawns >= UR_RESPAWN_MAX || ur_spawn(t->qid, true) < 0) {
		log_err("FUSE io_uring queue %u has no entry left: requests from CPU %u wait until the mount ends",
			t->qid, t->qid);
		return;
	}
	q->respawns++;
}

static void *ur_main(void *arg)
{
	struct ur_thread *t = arg;
	cpu_set_t cpus;
	int r;

	t_self = t;
	/* serve the CPU whose callers this queue gets */
	CPU_ZERO(&cpus);
	CPU_SET(t->qid, &cpus);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);

	r = ur_register(t);
	if (r < 0)
		goto out;
	pthread_mutex_lock(&ur.lock);
	ur_set(t, UR_IDLE);
	ur.q[t->qid].had_entry = true;
	if (!ur.ready) {
		bool all = true;

		for (unsigned i = 0; i < ur.nqueues && all; i++)
			all = ur.q[i].had_entry;
		ur.ready = all;
	}
	pthread_mutex_unlock(&ur.lock);
	/* the kernel took the entry inside the submit: it is idle now */
	if (t->grown)
		kernel_uring_kick(ur.kick_fd, t->qid);
	for (;;) {
		struct io_uring_cqe *cqe;
		uint64_t ud;
		int res;

		r = io_uring_wait_cqe(&t->ring, &cqe);
		if (r == -EINTR)
			continue;
		if (r < 0)
			break;
		ud = cqe->user_data;
		res = cqe->res;
		io_uring_cqe_seen(&t->ring, cqe);
		if (ud == UR_WAKE_TAG) {
			if (__atomic_load_n(&ur.stopping, __ATOMIC_RELAXED)) {
				r = 0;
				break;
			}
			continue; /* cannot happen: the poll fires once */
		}
		TSAN_ACQUIRE(&kernel_tsan_sync);
		if (res < 0) {
			r = res;
			break;
		}
		ur_handle(t);
		if (t->state == UR_LOST) {
			r = -EIO;
			break;
		}
	}
out:
	if (t->state != UR_LOST)
		ur_set(t, UR_GONE);
	if (r < 0 && !ur_ending(r) &&
	    !__atomic_load_n(&ur.stopping, __ATOMIC_RELAXED)) {
		bool ready;

		pthread_mutex_lock(&ur.lock);
		ready = ur.ready;
		pthread_mutex_unlock(&ur.lock);
		if (!ready) {
			/* the kernel switches only once every queue has
			 * an entry: it stays on /dev/fuse */
			log_warn("FUSE io_uring queue %u: %s; requests stay on /dev/fuse",
				 t->qid, strerror(-r));
		} else {
			if (t->state != UR_LOST)
				log_warn("FUSE io_uring queue %u: an entry ended: %s",
					 t->qid, strerror(-r));
			/* its entry is no longer the kernel's to hand
			 * out: close the ring now, so that the kernel
			 * cancels it if it was */
			if (t->ring_ok) {
				io_uring_queue_exit(&t->ring);
				t->ring_ok = false;
			}
			pthread_mutex_lock(&ur.lock);
			ur_replace(t);
			pthread_mutex_unlock(&ur.lock);
		}
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
	t->state = UR_NEW;
	r = ur_thread_init(t, qid, ur.max_payload);
	if (r == 0) {
		/* counted before it runs: it moves itself from UR_NEW */
		__atomic_add_fetch(&ur.q[qid].n[UR_NEW], 1, __ATOMIC_RELAXED);
		r = -pthread_create(&t->thread, NULL, ur_main, t);
		if (r < 0)
			__atomic_sub_fetch(&ur.q[qid].n[UR_NEW], 1,
					   __ATOMIC_RELAXED);
	}
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
	ur.total++;
	ur.buffer_bytes += UR_PREFIX + t->payload_cap;
	return 0;
}

int kernel_uring_start(struct tierfs *fs, struct fuse_session *se, int fd,
		       size_t max_payload)
{
	const char *faults = getenv("TIERFS_TEST_URING_FAULTS");
	struct kernel_uring_faults f = { 0 };
	int nq = kernel_uring_nqueues();
	int r = 0;

	if (nq < 0)
		return nq;
	if (faults && kernel_uring_parse_faults(faults, &f) < 0)
		log_err("TIERFS_TEST_URING_FAULTS='%s' is not a list of again=N, lose=OP:K, badcommit=OP:K; ignored",
			faults);
	pthread_mutex_lock(&ur.lock);
	if (ur.q) {
		pthread_mutex_unlock(&ur.lock);
		return -EALREADY;
	}
	/* without it, a queue that grows takes what waited only once
	 * another of its entries commits */
	if (fs && fs->opt.mountpoint && ur.kick_fd < 0 &&
	    (r = kernel_uring_kicker_start(fs->opt.mountpoint, &ur.kick_fd,
					   &ur.kick_pid)) < 0) {
		log_warn("cannot start the FUSE io_uring kicker: %s", strerror(-r));
		r = 0;
	}
	ur.q = calloc((size_t)nq, sizeof(*ur.q));
	ur.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!ur.q || ur.wake_fd < 0) {
		r = ur.q ? -errno : -ENOMEM;
		free(ur.q);
		ur.q = NULL;
		if (ur.wake_fd >= 0)
			close(ur.wake_fd);
		ur.wake_fd = -1;
		pthread_mutex_unlock(&ur.lock);
		return r;
	}
	ur.nqueues = (unsigned)nq;
	ur.total_max = MAX((unsigned)UR_TOTAL_MIN, 4u * (unsigned)nq);
	ur.max_payload = max_payload;
	ur.se = se;
	ur.fd = fd;
	ur.fs = fs;
	ur.ready = false;
	ur.faults = f;
	__atomic_store_n(&ur.again_left, f.again, __ATOMIC_RELAXED);
	__atomic_store_n(&ur.stopping, false, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < (unsigned)nq * UR_THREADS_START && r == 0; i++)
		r = ur_spawn(i / UR_THREADS_START, false);
	pthread_mutex_unlock(&ur.lock);
	if (r < 0) {
		log_warn("cannot start FUSE over io_uring: %s; requests stay on /dev/fuse",
			 strerror(-r));
		kernel_uring_stop();
	}
	return r;
}

unsigned kernel_uring_queue_max(void)
{
	return UR_MAX_THREADS;
}

const char *kernel_uring_transport(void)
{
	bool live;

	pthread_mutex_lock(&ur.lock);
	/* the kernel uses the ring once every queue has had an entry */
	live = ur.q && ur.ready;
	pthread_mutex_unlock(&ur.lock);
	return live ? "uring" : "dev";
}

void kernel_uring_get_stats(struct kernel_uring_stats *ret)
{
	struct kernel_uring_stats s = { 0 };

	s.requests = __atomic_load_n(&ur.requests, __ATOMIC_RELAXED);
	s.retries = __atomic_load_n(&ur.retries, __ATOMIC_RELAXED);
	pthread_mutex_lock(&ur.lock);
	for (unsigned i = 0; ur.q && i < ur.nqueues; i++) {
		const struct ur_queue *q = &ur.q[i];

		s.threads += q_live(q);
		s.registered += q_count(q, UR_IDLE) + q_count(q, UR_BUSY);
		s.busy += q_count(q, UR_BUSY);
		s.lost += q_count(q, UR_LOST);
		s.gone += q_count(q, UR_GONE);
	}
	s.buffer_bytes = ur.buffer_bytes;
	pthread_mutex_unlock(&ur.lock);
	*ret = s;
}

void kernel_uring_stop(void)
{
	struct ur_thread *t;
	uint64_t one = 1;

	if (t_self)
		return; /* never from a ring thread: it would join itself */
	pthread_mutex_lock(&ur.lock);
	__atomic_store_n(&ur.stopping, true, __ATOMIC_RELAXED);
	t = ur.list;
	ur.list = NULL;
	/* every ring's poll fires: its thread sees stopping */
	if (ur.wake_fd >= 0 &&
	    write(ur.wake_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		log_err("cannot wake the FUSE io_uring threads: %s", strerror(errno));
	pthread_mutex_unlock(&ur.lock);
	/* no thread is added now (ur_busy() and ur_replace() see stopping
	 * under the lock) */
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
	kernel_uring_kicker_stop(ur.kick_fd, ur.kick_pid);
	ur.kick_fd = -1;
	ur.kick_pid = 0;
	free(ur.q);
	ur.q = NULL;
	ur.nqueues = 0;
	ur.total = 0;
	ur.buffer_bytes = 0;
	ur.ready = false;
	if (ur.wake_fd >= 0)
		close(ur.wake_fd);
	ur.wake_fd = -1;
	pthread_mutex_unlock(&ur.lock);
}
