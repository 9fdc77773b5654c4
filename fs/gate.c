// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gate.c -- fair shares of the request threads for long requests
 * (gate.h).  A short list of (principal, queue, count) rows, one per pair
 * with requests running: long requests are few and slow, so a scan of
 * the rows per request costs nothing next to what the request does.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "gate.h"
#include "fs.h"
#include "kernel_req.h"
#include "kernel_uring.h"
#include "owner.h"
#include "macro.h"
#include "banned.h"

struct gate_row {
	uint32_t owner;
	int queue;
	unsigned n; /* running; a row with 0 is removed */
};

static struct {
	pthread_mutex_t lock;
	struct gate_row *rows; /* lock */
	size_t nrows, cap;     /* lock */
} gate = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Threads (or ring entries) of @queue. */
static unsigned queue_threads(int queue)
{
	return queue == KERNEL_QUEUE_DEV ? TIERFS_MAX_THREADS
					 : kernel_uring_queue_max();
}

int gate_enter(uint32_t owner, int queue, struct gate_ticket *ret)
{
	unsigned half = MAX(queue_threads(queue) / 2, 1u);
	unsigned user = 0, on_queue = 0, owners_q = 0, mine_q = 0;
	struct gate_row *row = NULL;
	unsigned part;

	*ret = (struct gate_ticket){ OWNER_NONE, queue };
	if (owner == OWNER_NONE)
		return 0;
	pthread_mutex_lock(&gate.lock);
	for (size_t i = 0; i < gate.nrows; i++) {
		struct gate_row *r = &gate.rows[i];

		if (r->owner == owner)
			user += r->n;
		if (r->queue != queue)
			continue;
		on_queue += r->n;
		owners_q++;
		if (r->owner == owner) {
			mine_q = r->n;
			row = r;
		}
	}
	/* this principal's part of the queue's half, counting itself */
	part = MAX(half / (owners_q + (row ? 0 : 1)), 1u);
	if (user >= GATE_USER_MAX || on_queue >= half || mine_q >= part)
		goto refuse;
	if (!row) {
		if (gate.nrows == gate.cap) {
			size_t ncap = gate.cap ? 2 * gate.cap : 32;
			struct gate_row *nr =
				realloc(gate.rows, ncap * sizeof(*nr));

			if (!nr)
				goto refuse;
			gate.rows = nr;
			gate.cap = ncap;
		}
		row = &gate.rows[gate.nrows++];
		*row = (struct gate_row){ owner, queue, 0 };
	}
	row->n++;
	pthread_mutex_unlock(&gate.lock);
	ret->owner = owner;
	return 0;
refuse:
	pthread_mutex_unlock(&gate.lock);
	return -EAGAIN;
}

void gate_leave(const struct gate_ticket *t)
{
	if (t->owner == OWNER_NONE)
		return;
	pthread_mutex_lock(&gate.lock);
	for (size_t i = 0; i < gate.nrows; i++) {
		struct gate_row *r = &gate.rows[i];

		if (r->owner != t->owner || r->queue != t->queue)
			continue;
		if (--r->n == 0)
			*r = gate.rows[--gate.nrows];
		break;
	}
	pthread_mutex_unlock(&gate.lock);
}

void gate_counts(unsigned *ret_running, unsigned *ret_owners)
{
	unsigned running = 0, owners = 0;

	pthread_mutex_lock(&gate.lock);
	for (size_t i = 0; i < gate.nrows; i++) {
		bool seen = false;

		running += gate.rows[i].n;
		for (size_t j = 0; j < i && !seen; j++)
			seen = gate.rows[j].owner == gate.rows[i].owner;
		owners += !seen;
	}
	pthread_mutex_unlock(&gate.lock);
	*ret_running = running;
	*ret_owners = owners;
}
