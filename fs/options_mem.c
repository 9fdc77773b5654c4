// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * options_mem.c -- the memory tierfs may have (options_mem.h): physical
 * memory and the limit of its cgroup, and the margin the daemon keeps.
 * options.c checks the memory tiers against it before anything is
 * mounted (options_check_memory()), so a RAM tier that does not fit is
 * one line on stderr and no mount.
 *
 * Reads /proc/self/cgroup, /proc/self/mountinfo and the cgroup's
 * memory.max (v2) or memory.limit_in_bytes (v1) of the cgroup and each
 * ancestor: the smallest applies.  A file that cannot be read counts as
 * no limit (a container may hide them); the probe never fails the
 * mount by itself.
 *
 * Locking: none; called once at startup, on one thread.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options_mem.h"
#include "size.h"
#include "macro.h"
#include "banned.h"

/* The first line of file @path as a number into *@ret ("max" and v1's
 * "no limit", about 2^63, become UINT64_MAX); false when unreadable. */
static bool read_limit(const char *path, uint64_t *ret)
{
	char buf[64];
	char *end;
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	if (!strncmp(buf, "max", 3)) {
		*ret = UINT64_MAX;
		return true;
	}
	errno = 0;
	*ret = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return false;
	if (*ret >= (UINT64_C(1) << 62))
		*ret = UINT64_MAX;
	return true;
}

/*
 * The mount point (and mounted root) of the cgroup2 hierarchy (@v1
 * false) or of the v1 hierarchy with the memory controller, from
 * /proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS... -
 * FSTYPE SOURCE SUPEROPTS".  Escaped paths (\040) are not supported.
 */
static bool cgroup_mount(const char *mountinfo, bool v1, char *mnt,
			 size_t mlen, char *root, size_t rlen)
{
	char line[4096];
	FILE *f = fopen(mountinfo, "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char *fld[5];
		char *p = line, *save = NULL;
		int n = 0;
		char fstype[32] = "";

		if (!sep)
			continue;
		*sep = '\0';
		for (char *t = strtok_r(p, " ", &save); t && n < 5;
		     t = strtok_r(NULL, " ", &save))
			fld[n++] = t;
		if (n < 5)
			continue;
		p = sep + 3;
		sscanf(p, "%31s", fstype);
		if (strcmp(fstype, v1 ? "cgroup" : "cgroup2"))
			continue;
		if (v1 && !strstr(p, ",memory"))
			continue; /* superoptions "rw,memory" */
		snprintf(root, rlen, "%s", fld[3]);
		snprintf(mnt, mlen, "%s", fld[4]);
		found = true;
	}
	fclose(f);
	return found;
}

void mem_cgroup_limit(const char *proc_cgroup, const char *mountinfo,
		      uint64_t *ret)
{
	char line[4096];
	FILE *f = fopen(proc_cgroup, "re");

	*ret = UINT64_MAX;
	if (!f)
		return;
	/* "0::/path" (v2) or "N:memory:/path", "N:cpu,memory:/path" (v1) */
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2, *cg;
		char mnt[1024], root[1024], dir[4096], file[4200];
		size_t rl, ml;
		bool v1;

		c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		cg = c2 + 1;
		cg[strcspn(cg, "\n")] = '\0';
		v1 = strcmp(c1 + 1, "") != 0;
		if (v1 && strcmp(c1 + 1, "memory") && !strstr(c1 + 1, ",memory") &&
		    strncmp(c1 + 1, "memory,", 7))
			continue;
		if (!cgroup_mount(mountinfo, v1, mnt, sizeof(mnt), root,
				  sizeof(root)))
			continue;
		/* the cgroup's path relative to the mounted root */
		rl = strcmp(root, "/") ? strlen(root) : 0;
		if (rl && strncmp(cg, root, rl))
			continue;
		ml = strlen(mnt);
		snprintf(dir, sizeof(dir), "%s%s", mnt, cg + rl);
		/* the limit of every ancestor applies too; the root has none */
		while (strlen(dir) > ml) {
			uint64_t v;
			char *slash;

			snprintf(file, sizeof(file), "%s/%s", dir,
				 v1 ? "memory.limit_in_bytes" : "memory.max");
			if (read_limit(file, &v) && v < *ret)
				*ret = v;
			slash = strrchr(dir, '/');
			if (!slash)
				break;
			*slash = '\0';
		}
	}
	fclose(f);
}

bool mem_cgroup_dir(const char *proc_cgroup, const char *mountinfo,
		    char *dir, size_t len, size_t *ret_mnt_len, bool *ret_v1)
{
	char line[4096], mnt[1024], root[1024], v2[4096] = "", v1[4096] = "";
	FILE *f = fopen(proc_cgroup, "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c2 = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (!strcmp(c1 + 1, ""))
			snprintf(v2, sizeof(v2), "%s", c2 + 1);
		else if (!strcmp(c1 + 1, "memory") || strstr(c1 + 1, ",memory") ||
			 !strncmp(c1 + 1, "memory,", 7))
			snprintf(v1, sizeof(v1), "%s", c2 + 1);
	}
	fclose(f);
	/* a v1 memory controller, where there is one, is the one that
	 * limits: a hybrid system's cgroup2 has no controllers */
	*ret_v1 = v1[0] != '\0';
	if (!v1[0] && !v2[0])
		return false;
	if (!cgroup_mount(mountinfo, *ret_v1, mnt, sizeof(mnt), root,
			  sizeof(root)))
		return false;
	{
		const char *cg = *ret_v1 ? v1 : v2;
		size_t rl = strcmp(root, "/") ? strlen(root) : 0;
		size_t dl;

		if (rl && strncmp(cg, root, rl))
			return false;
		if ((size_t)snprintf(dir, len, "%s%s", mnt, cg + rl) >= len)
			return false;
		/* the root, "/sys/fs/cgroup" + "/": no trailing slash */
		dl = strlen(dir);
		if (dl > 1 && dir[dl - 1] == '/')
			dir[dl - 1] = '\0';
	}
	*ret_mnt_len = strlen(mnt);
	return true;
}

int mem_probe(struct mem_limit *ret)
{
	long pages = sysconf(_SC_PHYS_PAGES);
	long psize = sysconf(_SC_PAGESIZE);
	const char *test = getenv("TIERFS_TEST_MEMORY");
	uint64_t v;

	if (test && size_parse(test, &v) == 0 && v > 0) {
		ret->phys = v;
		ret->cgroup = UINT64_MAX;
		return 0;
	}
	if (pages <= 0 || psize <= 0)
		return -EINVAL;
	ret->phys = (uint64_t)pages * (uint64_t)psize;
	mem_cgroup_limit("/proc/self/cgroup", "/proc/self/mountinfo",
			 &ret->cgroup);
	return 0;
}

uint64_t mem_total(const struct mem_limit *ml)
{
	return MIN(ml->phys, ml->cgroup);
}

uint64_t mem_usable(const struct mem_limit *ml)
{
	uint64_t total = mem_total(ml);
	uint64_t margin = MAX(total / MEM_MARGIN_DIV, MEM_MARGIN_MIN);

	return total > margin ? total - margin : 0;
}
