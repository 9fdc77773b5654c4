// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * uring.c -- per-thread io_uring and the batched pread/pwrite loop.
 * See uring.h for the contract.
 *
 * A request is cut into pieces of at most URING_CHUNK bytes.  Up to
 * URING_DEPTH pieces are in flight at once; each round prepares SQEs for
 * every piece not in flight (new pieces, and the rest of pieces that
 * came back short), submits them and waits for everything in flight
 * with one io_uring_enter(), then reaps.  A 1 MiB request thus costs one
 * system call.  After the first error no new piece is queued, but every
 * piece already in flight is still reaped: its buffer belongs to the
 * kernel until its CQE is seen.
 */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "uring.h"
#include "macro.h"
#include "never.h"

/*
 * Valgrind cannot see the kernel fill a read buffer through io_uring and
 * would call its bytes uninitialised.  Its client-request macros cost a
 * few instructions outside valgrind and need only the header (shipped
 * with the valgrind package); without it they are no-ops.
 */
#if defined(__has_include) && __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(addr, len) ((void)(addr), (void)(len))
#endif

#include "tsan.h"
#include "banned.h"

/*
 * Rounds in a row that may end with -EAGAIN/-EBUSY from io_uring_enter()
 * and no completion before a request gives up: the kernel is out of
 * memory for requests, and retrying forever would hang a FUSE worker.
 */
#define URING_MAX_STALLS 10000


struct uring_thread {
	struct io_uring ring; /* used only by the thread that made it */
};

/*
 * This thread's ring, or NULL.  Only the owning thread reads or writes
 * it (a key destructor and the atfork child handler run on that thread
 * too), so it needs no lock.
 */
static __thread struct uring_thread *tls_ring;

/* Frees a thread's ring when the thread exits; set up once. */
static pthread_key_t ring_key;
static pthread_once_t ring_once = PTHREAD_ONCE_INIT;
static int ring_once_err; /* written once, inside ring_once */

/*
 * Process-wide flags and counters, relaxed atomics: each is read on its
 * own and no ordering with other memory is needed (a thread that misses
 * a just-set flag merely tries io_uring once more).
 */
static unsigned live_rings;  /* rings set up, all threads */
static bool kernel_no_uring; /* io_uring_queue_init() said ENOSYS/EPERM */
static bool forced_fallback; /* uring_set_sync_fallback() */

/* the address the unmap and a later mapping meet at (tsan.h) */
static char ring_reuse_sync;

static void ring_free(struct uring_thread *u)
{
	if (!u)
		return;
	TSAN_RELEASE(&ring_reuse_sync);
	io_uring_queue_exit(&u->ring);
	free(u);
	__atomic_sub_fetch(&live_rings, 1, __ATOMIC_RELAXED);
}

/* pthread key destructor: runs on the exiting thread itself. */
static void ring_destructor(void *arg)
{
	struct uring_thread *u = arg;

	if (u == tls_ring)
		tls_ring = NULL;
	ring_free(u);
}

/*
 * Drop this thread's ring.  Also used to throw away a ring whose state
 * is unknown after a failed io_uring_enter(): unsubmitted SQEs must never
 * reach the kernel with a later request.
 */
static void ring_drop(void)
{
	struct uring_thread *u = tls_ring;

	if (!u)
		return;
	tls_ring = NULL;
	(void)pthread_setspecific(ring_key, NULL);
	ring_free(u);
}

/*
 * In a forked child only the forking thread survives, holding a copy of
 * its parent's ring mapping.  Using that ring would mix the two
 * processes' requests (and SINGLE_ISSUER refuses it), so forget it; the
 * unmap and close affect only the child.
 */
static void ring_atfork_child(void)
{
	ring_drop();
}

static void ring_init_once(void)
{
	int r = pthread_key_create(&ring_key, ring_destructor);

	if (r) {
		ring_once_err = r;
		return;
	}
	r = pthread_atfork(NULL, NULL, ring_atfork_child);
	if (r)
		ring_once_err = r;
}

static int ring_setup(struct io_uring *ring)
{
	int r;

	/*
	 * SINGLE_ISSUER (6.0) lets the kernel check our one-thread-per-ring
	 * rule and skip locking; DEFER_TASKRUN (6.1) runs completion work
	 * only when we wait, which we always do at once.  Older kernels
	 * reject the flags with EINVAL: fall back to a plain ring.
	 */
	r = io_uring_queue_init(URING_DEPTH, ring,
				IORING_SETUP_SINGLE_ISSUER |
					IORING_SETUP_DEFER_TASKRUN);
	if (r == -EINVAL)
		r = io_uring_queue_init(URING_DEPTH, ring, 0);
	/* the kernel may map it where an exited thread's ring was */
	TSAN_ACQUIRE(&ring_reuse_sync);
	return r;
}

/* Return this thread's ring, making it on first use. */
static int ring_get(struct io_uring **ret_ring)
{
	struct uring_thread *u = tls_ring;
	int r;

	if (likely(u)) {
		*ret_ring = &u->ring;
		return 0;
	}
	(void)pthread_once(&ring_once, ring_init_once);
	if (ring_once_err)
		return -ring_once_err;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	r = ring_setup(&u->ring);
	if (r < 0) {
		free(u);
		if (r == -ENOSYS || r == -EPERM)
			__atomic_store_n(&kernel_no_uring, true,
					 __ATOMIC_RELAXED);
		return r;
	}
	r = pthread_setspecific(ring_key, u);
	if (r) {
		io_uring_queue_exit(&u->ring);
		free(u);
		return -r;
	}
	tls_ring = u;
	__atomic_add_fetch(&live_rings, 1, __ATOMIC_RELAXED);
	*ret_ring = &u->ring;
	return 0;
}

static bool use_fallback(void)
{
	return __atomic_load_n(&forced_fallback, __ATOMIC_RELAXED) ||
	       __atomic_load_n(&kernel_no_uring, __ATOMIC_RELAXED);
}

/* The pread()/pwrite() loop for kernels without io_uring. */
static ssize_t sync_rw(bool write, int fd, char *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n;

		if (write)
			n = pwrite(fd, buf + done, len - done,
				   (off_t)(off + done));
		else
			n = pread(fd, buf + done, len - done,
				  (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* end of file inside the request */
		done += (size_t)n;
	}
	return (ssize_t)len;
}

/* One piece of a request: a window of at most URING_CHUNK bytes. */
struct piece {
	char *buf;     /* next byte to transfer */
	uint64_t off;  /* file offset of *buf */
	size_t len;    /* bytes left; 0 = this entry is free */
	bool inflight; /* an SQE for it has been queued, no CQE seen yet */
};

/*
 * Queue an SQE for every piece not in flight: the rest of a piece that
 * came back short, or a fresh piece cut from the request at *next.
 * Returns how many were queued.
 */
static unsigned queue_pieces(struct io_uring *ring, struct piece *pc,
			     bool write, int fd, char *buf, size_t len,
			     uint64_t off, size_t *next)
{
	unsigned queued = 0;

	for (unsigned i = 0; i < URING_DEPTH; i++) {
		struct piece *p = &pc[i];
		struct io_uring_sqe *sqe;

		if (p->inflight)
			continue;
		if (p->len == 0) {
			size_t n = MIN(len - *next, (size_t)URING_CHUNK);

			if (n == 0)
				continue;
			p->buf = buf + *next;
			p->off = off + *next;
			p->len = n;
			*next += n;
		}
		/* never NULL: at most URING_DEPTH pieces are in flight */
		sqe = io_uring_get_sqe(ring);
		if (!sqe)
			break;
		if (write)
			io_uring_prep_write(sqe, fd, p->buf, (unsigned)p->len,
					    p->off);
		else
			io_uring_prep_read(sqe, fd, p->buf, (unsigned)p->len,
					   p->off);
		io_uring_sqe_set_data64(sqe, i);
		p->inflight = true;
		queued++;
	}
	return queued;
}

/* Account one completion of piece @i with result @res. */
static void piece_done(struct piece *pc, uint64_t i, int res, bool write,
		       int *err)
{
	struct piece *p;

	if (NEVER(i >= URING_DEPTH)) {
		if (!*err)
			*err = -EIO;
		return;
	}
	p = &pc[i];
	p->inflight = false;
	if (res <= 0 || *err) {
		/* res == 0: end of file inside the request */
		if (!*err)
			*err = res < 0 ? res : -EIO;
		p->len = 0;
		return;
	}
	if (NEVER((size_t)res > p->len))
		res = (int)p->len;
	if (!write)
		VALGRIND_MAKE_MEM_DEFINED(p->buf, (size_t)res);
	p->buf += res;
	p->off += (unsigned)res;
	p->len -= (size_t)res;
}

/*
 * Reap every available CQE without entering the kernel.  Updates *err
 * with the first error seen and returns how many CQEs were reaped.
 */
static unsigned reap_pieces(struct io_uring *ring, struct piece *pc, bool write,
			    int *err)
{
	struct io_uring_cqe *cqes[URING_DEPTH];
	unsigned n, seen = 0;

	do {
		n = io_uring_peek_batch_cqe(ring, cqes, URING_DEPTH);
		for (unsigned k = 0; k < n; k++)
			piece_done(pc, io_uring_cqe_get_data64(cqes[k]),
				   cqes[k]->res, write, err);
		io_uring_cq_advance(ring, n);
		seen += n;
	} while (n == URING_DEPTH);
	return seen;
}

/*
 * After io_uring_enter() failed in a way we cannot retry: wait for the
 * pieces the kernel did take (their buffers are still in use), then
 * throw the ring away together with any SQE it never took.
 */
static void ring_abandon(struct io_uring *ring, struct piece *pc, bool write,
			 unsigned inflight, int *err)
{
	unsigned unsubmitted = io_uring_sq_ready(ring);
	unsigned pending = inflight > unsubmitted ? inflight - unsubmitted : 0;

	while (pending > 0) {
		struct io_uring_cqe *cqe;
		unsigned n;

		if (io_uring_wait_cqe(ring, &cqe) < 0)
			break;
		n = reap_pieces(ring, pc, write, err);
		pending = n < pending ? pending - n : 0;
	}
	ring_drop();
}

static ssize_t ring_rw(bool write, int fd, char *buf, size_t len, uint64_t off)
{
	struct piece pc[URING_DEPTH];
	struct io_uring *ring = NULL;
	size_t next = 0; /* bytes of the request handed to pieces so far */
	unsigned inflight = 0, stalls = 0;
	int err = 0, r;

	r = ring_get(&ring);
	if (r < 0) {
		if (use_fallback())
			return sync_rw(write, fd, buf, len, off);
		return r;
	}
	memset(pc, 0, sizeof(pc));
	for (;;) {
		unsigned reaped;

		if (!err)
			inflight += queue_pieces(ring, pc, write, fd, buf, len,
						 off, &next);
		if (inflight == 0)
			break;
		/* submits what is queued and waits for all in flight */
		r = io_uring_submit_and_wait(ring, inflight);
		reaped = reap_pieces(ring, pc, write, &err);
		inflight -= reaped;
		if (r >= 0 || r == -EINTR || reaped) {
			stalls = 0;
			continue;
		}
		if ((r == -EAGAIN || r == -EBUSY) &&
		    ++stalls < URING_MAX_STALLS) {
			/* out of request memory: let others complete */
			sched_yield();
			continue;
		}
		if (!err)
			err = r;
		ring_abandon(ring, pc, write, inflight, &err);
		return err;
	}
	return err ? err : (ssize_t)len;
}

ssize_t uring_pread(int fd, void *buf, size_t len, uint64_t off)
{
	if (unlikely(use_fallback()) || len <= URING_SYNC_MAX)
		return sync_rw(false, fd, buf, len, off);
	return ring_rw(false, fd, buf, len, off);
}

ssize_t uring_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	/* the buffer is only read from; the cast serves one shared loop */
	if (unlikely(use_fallback()) || len <= URING_SYNC_MAX)
		return sync_rw(true, fd, (char *)buf, len, off);
	return ring_rw(true, fd, (char *)buf, len, off);
}

void uring_thread_exit(void)
{
	ring_drop();
}

unsigned uring_live_rings(void)
{
	return __atomic_load_n(&live_rings, __ATOMIC_RELAXED);
}

void uring_set_sync_fallback(bool on)
{
	__atomic_store_n(&forced_fallback, on, __ATOMIC_RELAXED);
}
