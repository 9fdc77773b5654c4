/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options_mem.h -- the memory tierfs may have: the smaller of physical
 * memory and the memory limit of its cgroup (v2 memory.max, v1
 * memory.limit_in_bytes, of its cgroup and every ancestor), and what is
 * left of it after a margin for the daemon itself (metadata within
 * --max-inodes and --max-xattr-bytes, request buffers, the kernel's page
 * cache of the mount): a tenth of it, at least MEM_MARGIN_MIN.
 * options.c sizes the default stack and the metadata limits from it and
 * refuses memory tiers that do not fit (options_check_memory(),
 * options.h); memwatch.c follows the cgroup found here.
 *
 * It knows nothing of options: it reads /proc and the cgroup files and
 * does arithmetic.  A file that cannot be read counts as no limit (a
 * container may hide them); the probe never fails the mount by itself.
 *
 * Locking: none; mem_probe() runs once at startup, on one thread, and
 * mem_cgroup_dir() reads only the files it is given.
 */
#ifndef TIERFS_OPTIONS_MEM_H
#define TIERFS_OPTIONS_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MEM_MARGIN_DIV 10
#define MEM_MARGIN_MIN (UINT64_C(256) << 20)

/* What the daemon may have, from mem_probe(). */
struct mem_limit {
	uint64_t phys;	 /* physical memory */
	uint64_t cgroup; /* the cgroup's limit; UINT64_MAX for none */
};

/**
 * mem_probe() - physical memory and the memory limit of our cgroup,
 * from /proc/self/cgroup, /proc/self/mountinfo and the cgroup files.
 * The environment variable TIERFS_TEST_MEMORY (a SIZE), for tests only,
 * replaces both.  A cgroup limit that cannot be read counts as none.
 * Return: 0, or -EINVAL when physical memory is unknown.
 */
int mem_probe(struct mem_limit *ret);
/* The same from the two /proc files named (unit tests); *@ret is the
 * smallest limit of the cgroup and its ancestors, UINT64_MAX for none. */
void mem_cgroup_limit(const char *proc_cgroup, const char *mountinfo,
		      uint64_t *ret);
/*
 * mem_cgroup_dir() - the directory of the cgroup that limits our memory
 * into @dir: the v1 memory controller's where it is mounted (*@ret_v1
 * true; a hybrid system's cgroup2 then has no controllers), else the
 * cgroup v2 one; from @proc_cgroup's lines and @mountinfo's mounts.
 * *@ret_mnt_len is the length of the hierarchy's mount point, where a
 * walk to the ancestors stops.  Return: false without a cgroup to read
 * or when a path does not fit.
 */
bool mem_cgroup_dir(const char *proc_cgroup, const char *mountinfo,
		    char *dir, size_t len, size_t *ret_mnt_len, bool *ret_v1);
/* The smaller of the two limits, and what is left of it after the
 * margin (0 when the margin takes it all). */
uint64_t mem_total(const struct mem_limit *ml);
uint64_t mem_usable(const struct mem_limit *ml);

#endif /* TIERFS_OPTIONS_MEM_H */
