// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dirtest.c -- large and changing directories.
 *
 *   dirtest mk DIR N PREFIX           create PREFIX0000000 .. PREFIX{N-1}
 *   dirtest rm DIR N PREFIX STEP      unlink those whose index % STEP == 0
 *   dirtest ls DIR N PREFIX [STEP]    list with getdents64 and check that
 *                                     the names are exactly PREFIX0..N-1
 *                                     (without index % STEP == 0 when STEP
 *                                     is given), each once, plus "." and ".."
 *   dirtest churn DIR NSTABLE ROUNDS  list the directory ROUNDS times while
 *                                     it changes: a child process keeps
 *                                     creating and removing entries, and the
 *                                     lister itself removes entries and adds
 *                                     new ones between getdents64 calls
 *                                     (during the first half of each
 *                                     listing).
 *                                     Entries present for the whole listing
 *                                     must appear exactly once, no name may
 *                                     appear twice, no unknown name may
 *                                     appear; after the churn stops one more
 *                                     listing must match the directory
 *                                     exactly.
 *   dirtest renameloop DIR N          list N files while renaming each
 *                                     entry returned (fstests generic/736):
 *                                     the listing must end
 *
 * Output "OK ..." and exit 0, or "FAIL ..." and exit 1.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int xcreate(const char *path)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static long parse_index(const char *name, const char *prefix)
{
	size_t pl = strlen(prefix);
	char *end;
	long v;

	if (strncmp(name, prefix, pl) || !isdigit((unsigned char)name[pl]))
		return -1;
	v = strtol(name + pl, &end, 10);
	return *end ? -1 : v;
}

static int cmd_mk(const char *dir, long n, const char *prefix)
{
	char path[4096];

	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s%07ld", dir, prefix, i);
		int r = xcreate(path);
		if (r) {
			printf("FAIL create %s: %s\n", path, t_errname(-r));
			return 1;
		}
	}
	printf("OK created %ld\n", n);
	return 0;
}

static int cmd_rm(const char *dir, long n, const char *prefix, long step)
{
	char path[4096];
	long cnt = 0;

	for (long i = 0; i < n; i += step) {
		snprintf(path, sizeof(path), "%s/%s%07ld", dir, prefix, i);
		if (unlink(path)) {
			printf("FAIL unlink %s: %s\n", path, t_errname(errno));
			return 1;
		}
		cnt++;
	}
	printf("OK removed %ld\n", cnt);
	return 0;
}

static int cmd_ls(const char *dir, long n, const char *prefix, long step)
{
	static char buf[32768];
	unsigned char *seen = calloc((size_t)n, 1);
	long total = 0, dots = 0, dotdots = 0, bad = 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0) {
		printf("FAIL open %s: %s\n", dir, t_errname(errno));
		return 1;
	}
	for (;;) {
		long nread = syscall(SYS_getdents64, fd, buf, sizeof(buf));

		if (nread < 0) {
			printf("FAIL getdents64: %s\n", t_errname(errno));
			return 1;
		}
		if (nread == 0)
			break;
		for (long pos = 0; pos < nread;) {
			struct linux_dirent64 *d = (void *)(buf + pos);
			long idx;

			pos += d->d_reclen;
			if (!strcmp(d->d_name, ".")) {
				dots++;
				continue;
			}
			if (!strcmp(d->d_name, "..")) {
				dotdots++;
				continue;
			}
			total++;
			idx = parse_index(d->d_name, prefix);
			if (idx < 0 || idx >= n || (step && idx % step == 0)) {
				if (bad++ < 5)
					printf("unexpected entry '%s'\n",
					       d->d_name);
				continue;
			}
			if (seen[idx]++ == 1)
				printf("duplicate entry '%s'\n", d->d_name);
			if (d->d_type != DT_REG && d->d_type != DT_UNKNOWN &&
			    bad++ < 5)
				printf("entry '%s' has d_type %u\n", d->d_name,
				       d->d_type);
		}
	}
	close(fd);
	long missing = 0, dups = 0, expect = 0;
	for (long i = 0; i < n; i++) {
		bool want = !(step && i % step == 0);

		expect += want;
		if (want && !seen[i] && missing++ < 5)
			printf("missing entry '%s%07ld'\n", prefix, i);
		if (seen[i] > 1)
			dups++;
	}
	if (missing || dups || bad || dots != 1 || dotdots != 1) {
		printf("FAIL %ld entries, expected %ld: %ld missing, %ld "
		       "duplicated, %ld unexpected, '.' x%ld, '..' x%ld\n",
		       total, expect, missing, dups, bad, dots, dotdots);
		return 1;
	}
	printf("OK %ld entries\n", total);
	return 0;
}

/* ---- churn ---- */

static volatile sig_atomic_t stop;
static void on_term(int sig)
{
	stop = 1;
}

/* child: keep up to 64 files c<i> alive, creating new and removing old */
static int churn_child(const char *dir)
{
	char path[4096];
	long next = 0, oldest = 0;
	struct sigaction sa = { .sa_handler = on_term };

	sigaction(SIGTERM, &sa, NULL);
	while (!stop) {
		/* slower than the lister reads, so that a listing that
		 * returns new entries at its end still reaches the end */
		usleep(300);
		snprintf(path, sizeof(path), "%s/c%ld", dir, next);
		if (xcreate(path))
			_exit(3);
		next++;
		if (next - oldest > 64) {
			snprintf(path, sizeof(path), "%s/c%ld", dir, oldest++);
			if (unlink(path))
				_exit(4);
		}
	}
	while (oldest < next) {
		snprintf(path, sizeof(path), "%s/c%ld", dir, oldest++);
		if (unlink(path))
			_exit(4);
	}
	_exit(0);
}

struct counts {
	unsigned char *c;
	size_t n;
};

static void bump(struct counts *c, long i)
{
	if ((size_t)i >= c->n) {
		size_t nn = ((size_t)i + 1) * 2;

		c->c = realloc(c->c, nn);
		memset(c->c + c->n, 0, nn - c->n);
		c->n = nn;
	}
	if (c->c[i] < 255)
		c->c[i]++;
}

static int cmd_churn(const char *dir, long nstable, int rounds)
{
	char path[4096];
	static char buf[1024]; /* small: many getdents64 calls per listing */
	unsigned char *v_alive = calloc((size_t)nstable, 1);
	long n_next = 0, fails = 0, c_seen = 0;
	struct counts nseen_alive = { 0 };
	pid_t child;
	int status;

	/* interleave stable and volatile entries in creation order */
	for (long i = 0; i < nstable; i++) {
		snprintf(path, sizeof(path), "%s/s%06ld", dir, i);
		if (xcreate(path))
			goto err_create;
		snprintf(path, sizeof(path), "%s/v%06ld", dir, i);
		if (xcreate(path))
			goto err_create;
		v_alive[i] = 1;
	}

	child = fork();
	if (child == 0)
		churn_child(dir);
	if (child < 0) {
		printf("FAIL fork\n");
		return 1;
	}

	uint64_t rng = 12345;
	for (int r = 0; r < rounds && !fails; r++) {
		struct counts s = { 0 }, v = { 0 }, c = { 0 }, nn = { 0 };
		long others = 0, dots = 0, calls = 0;
		char first_dup[300] = "";
		int fd = open(dir, O_RDONLY | O_DIRECTORY);

		if (fd < 0) {
			printf("FAIL open dir: %s\n", t_errname(errno));
			fails++;
			break;
		}
		for (;;) {
			long nread = syscall(SYS_getdents64, fd, buf,
					     sizeof(buf));

			if (nread < 0) {
				printf("FAIL getdents64: %s\n",
				       t_errname(errno));
				fails++;
				break;
			}
			if (nread == 0)
				break;
			/* at least one entry per call: a listing of the initial
			 * 2 * nstable entries plus what is added while it runs
			 * ends well before this */
			if (++calls > 4 * nstable + 1000) {
				long tot[4] = { 0 };
				struct counts *cs[] = { &s, &v, &c, &nn };
				for (int k = 0; k < 4; k++)
					for (size_t i = 0; i < cs[k]->n; i++)
						tot[k] += cs[k]->c[i];
				printf("FAIL round %d: listing does not end "
				       "after %ld getdents64 calls (seen so far: "
				       "%ld stable, %ld volatile, %ld from the "
				       "churn process, %ld added by the lister)\n",
				       r, calls, tot[0], tot[1], tot[2], tot[3]);
				fails++;
				break;
			}
			for (long pos = 0; pos < nread;) {
				struct linux_dirent64 *d = (void *)(buf + pos);
				const char *nm = d->d_name;
				long idx;

				pos += d->d_reclen;
				if (!strcmp(nm, ".") || !strcmp(nm, "..")) {
					dots++;
					continue;
				}
				idx = strtol(nm + 1, NULL, 10);
				if (first_dup[0] == 0 &&
				    ((nm[0] == 's' && (size_t)idx < s.n && s.c[idx]) ||
				     (nm[0] == 'v' && (size_t)idx < v.n && v.c[idx]) ||
				     (nm[0] == 'c' && (size_t)idx < c.n && c.c[idx]) ||
				     (nm[0] == 'n' && (size_t)idx < nn.n && nn.c[idx])))
				{
					snprintf(first_dup, sizeof(first_dup),
						 "%s (getdents64 call %ld)", nm,
						 calls);
					printf("round %d: duplicate %s\n", r,
					       first_dup);
				}
				switch (nm[0]) {
				case 's':
					bump(&s, idx);
					break;
				case 'v':
					bump(&v, idx);
					break;
				case 'c':
					bump(&c, idx);
					break;
				case 'n':
					bump(&nn, idx);
					break;
				default:
					if (others++ < 5)
						printf("unknown name '%s'\n",
						       nm);
				}
			}
			/*
			 * mutate: remove two volatile entries, add two new.
			 * Only in the first half of the listing: new entries
			 * may legitimately show up at its end, and adding
			 * some after every call would then never let it end.
			 */
			long s_seen = 0;
			for (size_t i = 0; i < s.n; i++)
				s_seen += s.c[i];
			for (int k = 0; k < 2 && s_seen < nstable / 2; k++) {
				rng = t_mix64(rng);
				long i = (long)(rng % (uint64_t)nstable);

				if (v_alive[i]) {
					snprintf(path, sizeof(path),
						 "%s/v%06ld", dir, i);
					if (unlink(path)) {
						printf("FAIL unlink %s: %s\n",
						       path, t_errname(errno));
						fails++;
					}
					v_alive[i] = 0;
				}
				snprintf(path, sizeof(path), "%s/n%06ld", dir,
					 n_next);
				if (xcreate(path))
					goto err_create;
				bump(&nseen_alive, n_next);
				n_next++;
			}
		}
		close(fd);

		long missing = 0, dups = 0;
		for (long i = 0; i < nstable; i++) {
			unsigned cnt = (size_t)i < s.n ? s.c[i] : 0;

			if (cnt == 0 && missing++ < 5)
				printf("round %d: stable entry s%06ld missing\n",
				       r, i);
			if (cnt > 1 && dups++ < 5)
				printf("round %d: stable entry s%06ld seen %u "
				       "times\n",
				       r, i, cnt);
		}
		struct counts *all[] = { &v, &c, &nn };
		const char pfx[] = "vcn";
		for (int k = 0; k < 3; k++)
			for (size_t i = 0; i < all[k]->n; i++)
				if (all[k]->c[i] > 1 && dups++ < 5)
					printf("round %d: entry %c%06zu seen %u "
					       "times\n",
					       r, pfx[k], i, all[k]->c[i]);
		if (missing || dups || others || dots != 2) {
			printf("FAIL round %d (%ld getdents calls): %ld stable "
			       "missing, %ld duplicates, %ld unknown, %ld "
			       "dot entries\n",
			       r, calls, missing, dups, others, dots);
			fails++;
		}
		for (size_t i = 0; i < c.n; i++)
			c_seen += c.c[i];
		free(s.c);
		free(v.c);
		free(c.c);
		free(nn.c);
	}

	kill(child, SIGTERM);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("FAIL churn child failed (status 0x%x)\n", status);
		return 1;
	}
	if (fails)
		return 1;

	/* quiet directory: the listing must now be exact */
	{
		struct counts s = { 0 }, v = { 0 }, nn = { 0 };
		long others = 0;
		int fd = open(dir, O_RDONLY | O_DIRECTORY);

		for (;;) {
			long nread = syscall(SYS_getdents64, fd, buf,
					     sizeof(buf));

			if (nread <= 0) {
				if (nread < 0) {
					printf("FAIL getdents64: %s\n",
					       t_errname(errno));
					return 1;
				}
				break;
			}
			for (long pos = 0; pos < nread;) {
				struct linux_dirent64 *d = (void *)(buf + pos);
				long idx = strtol(d->d_name + 1, NULL, 10);

				pos += d->d_reclen;
				if (d->d_name[0] == '.')
					continue;
				if (d->d_name[0] == 's')
					bump(&s, idx);
				else if (d->d_name[0] == 'v')
					bump(&v, idx);
				else if (d->d_name[0] == 'n')
					bump(&nn, idx);
				else if (others++ < 5)
					printf("leftover entry '%s'\n",
					       d->d_name);
			}
		}
		close(fd);
		long bad = others;
		for (long i = 0; i < nstable; i++) {
			unsigned cs = (size_t)i < s.n ? s.c[i] : 0;
			unsigned cv = (size_t)i < v.n ? v.c[i] : 0;

			if (cs != 1 || cv != v_alive[i]) {
				if (bad++ < 5)
					printf("final: s%06ld x%u, v%06ld x%u "
					       "(alive %u)\n",
					       i, cs, i, cv, v_alive[i]);
			}
		}
		for (long i = 0; i < n_next; i++) {
			unsigned cn = (size_t)i < nn.n ? nn.c[i] : 0;

			if (cn != 1 && bad++ < 5)
				printf("final: n%06ld x%u\n", i, cn);
		}
		if (bad) {
			printf("FAIL final listing differs (%ld problems)\n",
			       bad);
			return 1;
		}
	}
	printf("OK %d rounds, %ld entries added by the lister, %ld entries of "
	       "the churn process seen\n",
	       rounds, n_next, c_seen);
	return 0;

err_create:
	printf("FAIL create %s: %s\n", path, t_errname(errno));
	return 1;
}

/*
 * Like fstests generic/736: list a directory of N files with readdir(3)
 * and rename every entry returned to a new name in the same directory.
 * The listing must end (renamed entries may be returned again, but not
 * without bound: more than 4 * N entries counts as never ending), and no
 * file may be lost.
 */
static int cmd_renameloop(const char *dir, long n)
{
	char path[4096], npath[4096];
	long seen = 0, renamed = 0;
	DIR *d;
	struct dirent *de;

	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%07ld", dir, i);
		if (xcreate(path)) {
			printf("FAIL create %s: %s\n", path, t_errname(errno));
			return 1;
		}
	}
	d = opendir(dir);
	if (!d) {
		printf("FAIL opendir: %s\n", t_errname(errno));
		return 1;
	}
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (++seen > 4 * n) {
			printf("FAIL listing does not end: %ld entries returned "
			       "for a directory of %ld files being renamed\n",
			       seen, n);
			return 1;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(npath, sizeof(npath), "%s/r%ld_%s", dir, renamed,
			 de->d_name[0] == 'f' ? de->d_name + 1 :
						strchr(de->d_name, '_') + 1);
		if (rename(path, npath)) {
			printf("FAIL rename %s: %s\n", path, t_errname(errno));
			return 1;
		}
		renamed++;
	}
	if (errno) {
		printf("FAIL readdir: %s\n", t_errname(errno));
		return 1;
	}
	closedir(d);
	/* every file is still there, once */
	unsigned char *cnt = calloc((size_t)n, 1);
	long total = 0;
	d = opendir(dir);
	while ((de = readdir(d))) {
		const char *u = strchr(de->d_name, '_');
		long idx;

		if (de->d_name[0] == '.')
			continue;
		total++;
		idx = atol(u ? u + 1 : de->d_name + 1);
		if (idx >= 0 && idx < n)
			cnt[idx]++;
	}
	closedir(d);
	for (long i = 0; i < n; i++)
		if (cnt[i] != 1) {
			printf("FAIL file %ld present %u times after the "
			       "renames\n",
			       i, cnt[i]);
			return 1;
		}
	if (total != n) {
		printf("FAIL %ld entries after the renames, expected %ld\n",
		       total, n);
		return 1;
	}
	printf("OK %ld entries returned while renaming %ld files\n", seen, n);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 5 && !strcmp(argv[1], "mk"))
		return cmd_mk(argv[2], atol(argv[3]), argv[4]);
	if (argc == 6 && !strcmp(argv[1], "rm"))
		return cmd_rm(argv[2], atol(argv[3]), argv[4], atol(argv[5]));
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "ls"))
		return cmd_ls(argv[2], atol(argv[3]), argv[4],
			      argc == 6 ? atol(argv[5]) : 0);
	if (argc == 4 && !strcmp(argv[1], "renameloop"))
		return cmd_renameloop(argv[2], atol(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "churn"))
		return cmd_churn(argv[2], atol(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: dirtest mk|rm|ls|churn ... (see dirtest.c)\n");
	return 2;
}
