// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stats.c -- the mount's counters as text (stats.h): the tiers, the
 * migrator, the kernel connection.  Above kernel.c and migrate.c in the
 * module graph and below ctl.c, which serves the text as
 * user.tierfs.stats.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "stats.h"
#include "fs.h"
#include "kernel.h"
#include "kernel_req.h"
#include "kernel_uring.h"
#include "memwatch.h"
#include "native.h"
#include "migrate.h"
#include "tier.h"
#include "strbuf.h"
#include "banned.h"

#define LD(x) ((unsigned long long)(x))
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* The daemon's resident memory in bytes (/proc/self/statm), 0 if
 * unknown. */
static uint64_t self_rss(void)
{
	unsigned long long size, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	long psize = sysconf(_SC_PAGESIZE);
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%llu %llu", &size, &resident);
	fclose(f);
	return n == 2 && psize > 0 ? resident * (uint64_t)psize : 0;
}

ssize_t tierfs_stats_text(struct tierfs *fs, char **ret_text)
{
	struct strbuf out = STRBUF_INIT;
	struct migrate_stats ms;
	struct memwatch_stats mws;
	struct kernel_uring_stats urs;
	struct native_stats nst;
	uint64_t spliced_b, spliced_w = kernel_spliced_writes(&spliced_b);
	size_t len;
	int r = 0;

	for (unsigned i = 0; i < fs->ntiers && r == 0; i++) {
		struct tier *t = fs->tiers[i];
		uint64_t used = tier_used_slots(t);
		struct tier_watch_stats ws;

		tier_get_watch_stats(t, &ws);
		r = strbuf_addf(&out,
			    "tier %s kind=%s path=%s size=%llu used=%llu free=%llu extents=%llu "
			    "read_bytes=%llu read_ops=%llu write_bytes=%llu write_ops=%llu "
			    "promotions=%llu promote_bytes=%llu demotions=%llu demote_bytes=%llu "
			    "spills=%llu csum_errors=%llu io_errors=%llu draining=%d limit=%llu "
			    "lend_cap=%llu io_inside=%u io_waiting=%u stalled=%d stalls=%llu "
			    "stall_refused=%llu native_bytes=%llu\n",
			    t->name, tier_kind_name(t->kind),
			    t->path ? t->path : "-",
			    LD((uint64_t)t->nslots * fs->extent_size),
			    LD(tier_used_bytes(t)),
			    LD(tier_avail_bytes(t)),
			    LD(used), LD(LOAD(t->stats.read_bytes)),
			    LD(LOAD(t->stats.read_ops)),
			    LD(LOAD(t->stats.write_bytes)),
			    LD(LOAD(t->stats.write_ops)),
			    LD(LOAD(t->stats.promotions)),
			    LD(LOAD(t->stats.promote_bytes)),
			    LD(LOAD(t->stats.demotions)),
			    LD(LOAD(t->stats.demote_bytes)),
			    LD(LOAD(t->stats.spills)),
			    LD(LOAD(t->stats.csum_errors)),
			    LD(LOAD(t->stats.io_errors)),
			    !!(LOAD(fs->draining) & (1u << i)),
			    LD(tier_limit_bytes(t)),
			    /* 0: the tier does not lend (migrate.c) */
			    LD(fs->lending & (1u << i) ? fs->lend_cap : 0),
			    ws.inside, ws.waiting, ws.stalled, LD(ws.stalls),
			    LD(ws.refused), LD(tier_native_bytes(t)));
	}
	migrator_get_stats(fs, &ms);
	kernel_uring_get_stats(&urs);
	if (r == 0)
		r = strbuf_addf(&out,
			    "migrator enabled=%d passes=%llu moved=%llu retries=%llu failures=%llu "
			    "high_watermark=%d low_watermark=%d bandwidth=%llu drain_stuck=%llu "
			    "idle_passes=%llu visited_inodes=%llu visited_extents=%llu "
			    "tracked_inodes=%llu tracked_extents=%llu queued=%llu "
			    "throttled_bytes=%llu throttled_ms=%llu lent=%llu lent_bytes=%llu\n",
			    tierfs_mig(fs) != NULL, LD(ms.passes), LD(ms.moved),
			    LD(ms.retries), LD(ms.failures), fs->opt.high_wm,
			    fs->opt.low_wm, LD(fs->opt.migrate_bw),
			    LD(ms.drain_stuck), LD(ms.idle_passes),
			    LD(ms.visited_inodes), LD(ms.visited_extents),
			    LD(ms.tracked_inodes), LD(ms.tracked_extents),
			    LD(ms.queued), LD(ms.throttled_bytes),
			    LD(ms.throttled_ns / 1000000), LD(ms.lent),
			    LD(ms.lent_bytes));
	if (r == 0)
		r = strbuf_addf(&out,
			    "mount extent_size=%u inodes=%llu writeback_cache=%d "
			    "killpriv_v2=%d page_cache=%s dirty_limit=%llu dirty_limit_asked=%llu "
			    "writeback_errors=%llu transport=%s uring_requests=%llu uring_threads=%u "
			    "uring_registered=%u uring_busy=%u uring_lost=%u uring_gone=%u "
			    "uring_retries=%llu uring_buffer_bytes=%llu "
			    "spliced_writes=%llu spliced_bytes=%llu "
			    "max_inodes=%llu xattr_bytes=%llu max_xattr_bytes=%llu "
			    "rss=%llu ctl_computed=%llu\n",
			    fs->extent_size, LD(LOAD(fs->ninodes)),
			    fs->writeback, fs->killpriv_v2,
			    fs->opt.page_cache == PAGE_CACHE_DROP   ? "drop"
			    : fs->opt.page_cache == PAGE_CACHE_ONLY ? "only"
								    : "keep",
			    LD(LOAD(fs->dirty_reserve)), LD(fs->dirty_asked),
			    LD(LOAD(fs->wb_errors)), kernel_uring_transport(),
			    LD(urs.requests), urs.threads, urs.registered,
			    urs.busy, urs.lost, urs.gone, LD(urs.retries),
			    LD(urs.buffer_bytes),
			    LD(spliced_w), LD(spliced_b),
			    LD(fs->opt.max_inodes), LD(LOAD(fs->xattr_bytes)),
			    LD(fs->opt.max_xattr_bytes), LD(self_rss()),
			    LD(LOAD(fs->ctl_computed)));
	native_get_stats(&nst);
	if (r == 0)
		r = strbuf_addf(&out,
			    "native passthrough=%d files=%llu opens=%llu open_now=%llu "
			    "moves=%llu refused=%llu\n",
			    fs->passthrough, LD(nst.files), LD(nst.opens),
			    LD(nst.open_now), LD(nst.moves), LD(nst.refused));
	memwatch_get_stats(fs, &mws);
	if (r == 0)
		r = strbuf_addf(&out,
			    "memory follow=%d reserve=%llu samples=%llu shrinks=%llu grows=%llu "
			    "short_by=%lld spare=%lld psi_full10=%.2f\n",
			    mws.running, LD(fs->opt.memory_reserve),
			    LD(mws.samples), LD(mws.shrinks), LD(mws.grows),
			    (long long)mws.short_by,
			    (long long)(mws.spare == INT64_MAX ? -1 : mws.spare),
			    mws.psi_full10);
	if (r == 0) {
		/* 64 opcodes of at most 32 bytes each */
		char req[64 * 32];

		if (kernel_request_counts(req, sizeof(req)) > 0)
			r = strbuf_addf(&out, "%s\n", req);
	}
	if (r < 0) {
		strbuf_release(&out);
		return r;
	}
	*ret_text = strbuf_detach(&out, &len);
	return (ssize_t)len;
}
