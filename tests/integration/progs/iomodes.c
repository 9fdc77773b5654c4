// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * iomodes.c -- I/O paths beyond plain read/write.
 *
 *   iomodes mmap-write FILE SIZE SEED   create FILE of SIZE, fill it with the
 *                                       pattern through a MAP_SHARED mapping,
 *                                       msync(MS_SYNC), munmap, close
 *   iomodes mmap-verify FILE SIZE SEED  check the pattern through a mapping
 *   iomodes mmap-share FILE             two processes map one file shared:
 *                                       each sees the other's stores
 *   iomodes direct FILE                 O_DIRECT aligned writes and reads,
 *                                       checked against buffered reads
 *   iomodes append FILE NPROC NREC RECSZ
 *                                       NPROC processes append NREC records
 *                                       each with O_APPEND at once; then the
 *                                       file must hold every record exactly
 *                                       once, none torn
 *   iomodes cfr SRC DST [OFF_IN OFF_OUT LEN]
 *                                       copy_file_range(2) in a loop (whole
 *                                       file by default)
 *   iomodes unlink-open FILE            write, unlink while open, then read,
 *                                       write, fstat and ftruncate through
 *                                       the open fd
 *
 * Output "OK ..." and exit 0, or "FAIL ..." and exit 1.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define FAIL(...)                                                              \
	do {                                                                   \
		printf("FAIL ");                                               \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		exit(1);                                                       \
	} while (0)
#define CHECK(cond, what)                                                      \
	do {                                                                   \
		if (!(cond))                                                   \
			FAIL("%s: %s", what, t_errname(errno));                \
	} while (0)

static int cmd_mmap_write(const char *path, uint64_t size, uint64_t seed)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0, "open");
	CHECK(ftruncate(fd, (off_t)size) == 0, "ftruncate");
	unsigned char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
				fd, 0);
	CHECK(m != MAP_FAILED, "mmap");
	t_pat_fill(m, 0, size, seed);
	CHECK(msync(m, size, MS_SYNC) == 0, "msync");
	CHECK(munmap(m, size) == 0, "munmap");
	CHECK(close(fd) == 0, "close");
	printf("OK\n");
	return 0;
}

static int cmd_mmap_verify(const char *path, uint64_t size, uint64_t seed)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	CHECK(fd >= 0, "open");
	CHECK(fstat(fd, &st) == 0, "fstat");
	if ((uint64_t)st.st_size != size)
		FAIL("size %lld, expected %" PRIu64, (long long)st.st_size,
		     size);
	unsigned char *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "mmap");
	long bad = t_pat_check(m, 0, size, seed);
	if (bad >= 0)
		FAIL("mapped data differs at %ld", bad);
	munmap(m, size);
	close(fd);
	printf("OK\n");
	return 0;
}

static int cmd_mmap_share(const char *path)
{
	const size_t size = 3 * 65536 + 100;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	int pfd[2], qfd[2];
	char c;

	CHECK(fd >= 0, "open");
	CHECK(ftruncate(fd, (off_t)size) == 0, "ftruncate");
	CHECK(pipe(pfd) == 0 && pipe(qfd) == 0, "pipe");
	volatile unsigned char *m = mmap(NULL, size, PROT_READ | PROT_WRITE,
					 MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED, "mmap");
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		/* own mapping, opened anew */
		int cfd = open(path, O_RDWR);
		volatile unsigned char *cm;

		if (cfd < 0)
			_exit(10);
		cm = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, cfd,
			  0);
		if (cm == MAP_FAILED)
			_exit(11);
		if (read(pfd[0], &c, 1) != 1)
			_exit(12);
		if (cm[70000] != 0xab || cm[size - 1] != 0xcd)
			_exit(13);
		cm[5] = 0x5a;
		cm[150000] = 0xa5;
		if (write(qfd[1], "x", 1) != 1)
			_exit(14);
		_exit(0);
	}
	m[70000] = 0xab;
	m[size - 1] = 0xcd;
	CHECK(write(pfd[1], "x", 1) == 1, "write pipe");
	CHECK(read(qfd[0], &c, 1) == 1, "read pipe");
	int status;
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		FAIL("child did not see the parent's stores (status 0x%x)",
		     status);
	if (m[5] != 0x5a || m[150000] != 0xa5)
		FAIL("parent did not see the child's stores");
	CHECK(msync((void *)m, size, MS_SYNC) == 0, "msync");
	/* and read(2) in this process agrees */
	unsigned char b[1];
	CHECK(pread(fd, b, 1, 150000) == 1, "pread");
	if (b[0] != 0xa5)
		FAIL("pread after msync got 0x%02x", b[0]);
	printf("OK\n");
	return 0;
}

static int cmd_direct(const char *path)
{
	const size_t big = 1 << 20, small = 4096;
	unsigned char *w, *r;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0644);

	CHECK(fd >= 0, "open O_DIRECT");
	CHECK(posix_memalign((void **)&w, 4096, big + small) == 0, "memalign");
	CHECK(posix_memalign((void **)&r, 4096, big + small) == 0, "memalign");
	t_pat_fill(w, 0, big, 7);
	CHECK(pwrite(fd, w, big, 0) == (ssize_t)big, "O_DIRECT pwrite 1M");
	t_pat_fill(w, big + 3 * 4096, small, 7);
	CHECK(pwrite(fd, w, small, big + 3 * 4096) == (ssize_t)small,
	      "O_DIRECT pwrite 4K past a hole");
	memset(r, 0xff, big);
	CHECK(pread(fd, r, big, 0) == (ssize_t)big, "O_DIRECT pread 1M");
	if (t_pat_check(r, 0, big, 7) >= 0)
		FAIL("O_DIRECT read of O_DIRECT write differs");
	/* hole between the two writes, then the 4K block */
	CHECK(pread(fd, r, 4 * 4096, big) == 4 * 4096, "O_DIRECT pread hole");
	for (size_t i = 0; i < 3 * 4096; i++)
		if (r[i])
			FAIL("hole reads 0x%02x at %zu", r[i], big + i);
	if (t_pat_check(r + 3 * 4096, big + 3 * 4096, small, 7) >= 0)
		FAIL("O_DIRECT 4K block differs");
	/* read at EOF returns 0 */
	CHECK(pread(fd, r, 4096, big + 4 * 4096) == 0, "O_DIRECT pread at EOF");
	CHECK(close(fd) == 0, "close");

	/* buffered reader agrees */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0, "open buffered");
	CHECK(pread(fd, r, big, 0) == (ssize_t)big, "buffered pread");
	if (t_pat_check(r, 0, big, 7) >= 0)
		FAIL("buffered read of O_DIRECT write differs");
	close(fd);

	/* buffered write, then O_DIRECT read sees it */
	fd = open(path, O_RDWR);
	CHECK(fd >= 0, "open rw");
	t_pat_fill(w, 8192, 100, 9);
	CHECK(pwrite(fd, w, 100, 8192) == 100, "buffered pwrite");
	int dfd = open(path, O_RDONLY | O_DIRECT);
	CHECK(dfd >= 0, "open O_DIRECT reader");
	CHECK(pread(dfd, r, 4096, 8192) == 4096, "O_DIRECT pread");
	if (t_pat_check(r, 8192, 100, 9) >= 0 ||
	    t_pat_check(r + 100, 8192 + 100, 4096 - 100, 7) >= 0)
		FAIL("O_DIRECT read does not see a buffered write");
	close(dfd);
	close(fd);
	printf("OK\n");
	return 0;
}

/* record: "R<proc:4><seq:8>" header, then payload from the pattern with a
 * seed unique to (proc, seq), then '\n' */
static void make_record(unsigned char *buf, size_t recsz, int proc, long seq)
{
	char hdr[32];

	snprintf(hdr, sizeof(hdr), "R%04d%08ld", proc, seq);
	memcpy(buf, hdr, 13);
	t_pat_fill(buf + 13, 0, recsz - 14, (uint64_t)proc * 1000003 + seq);
	buf[recsz - 1] = '\n';
}

static int cmd_append(const char *path, int nproc, long nrec, size_t recsz)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (recsz < 16)
		FAIL("record size too small");
	CHECK(fd >= 0, "open");
	close(fd);
	for (int p = 0; p < nproc; p++) {
		pid_t pid = fork();

		CHECK(pid >= 0, "fork");
		if (pid)
			continue;
		unsigned char *buf = malloc(recsz);
		int afd = open(path, O_WRONLY | O_APPEND);

		if (afd < 0)
			_exit(10);
		for (long s = 0; s < nrec; s++) {
			make_record(buf, recsz, p, s);
			if (write(afd, buf, recsz) != (ssize_t)recsz)
				_exit(11);
		}
		_exit(close(afd) ? 12 : 0);
	}
	for (int p = 0; p < nproc; p++) {
		int status;

		CHECK(wait(&status) > 0, "wait");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			FAIL("appender failed (status 0x%x)", status);
	}

	struct stat st;
	CHECK(stat(path, &st) == 0, "stat");
	uint64_t want = (uint64_t)nproc * nrec * recsz;
	if ((uint64_t)st.st_size != want)
		FAIL("size %lld, expected %" PRIu64 " (records lost or "
		     "overwritten)",
		     (long long)st.st_size, want);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0, "open for verify");
	unsigned char *buf = malloc(recsz), *ref = malloc(recsz);
	long *next = calloc((size_t)nproc, sizeof(long));
	for (uint64_t off = 0; off < want; off += recsz) {
		int p;
		long s;

		CHECK(pread(fd, buf, recsz, (off_t)off) == (ssize_t)recsz,
		      "pread");
		if (sscanf((char *)buf, "R%4d%8ld", &p, &s) != 2 || p < 0 ||
		    p >= nproc)
			FAIL("torn or foreign record at offset %" PRIu64, off);
		/* one process's records stay in its own order */
		if (s != next[p])
			FAIL("record %d/%ld at offset %" PRIu64
			     ", expected %d/%ld",
			     p, s, off, p, next[p]);
		make_record(ref, recsz, p, s);
		if (memcmp(ref, buf, recsz))
			FAIL("record %d/%ld at offset %" PRIu64 " is torn", p, s,
			     off);
		next[p]++;
	}
	printf("OK %" PRIu64 " bytes\n", want);
	return 0;
}

static int cmd_cfr(int argc, char **argv)
{
	int in = open(argv[2], O_RDONLY);
	int out = open(argv[3], O_WRONLY | O_CREAT, 0644);
	struct stat st;
	loff_t off_in = 0, off_out = 0;
	uint64_t len;

	CHECK(in >= 0, "open src");
	CHECK(out >= 0, "open dst");
	CHECK(fstat(in, &st) == 0, "fstat");
	len = (uint64_t)st.st_size;
	if (argc == 7) {
		off_in = (loff_t)t_size(argv[4]);
		off_out = (loff_t)t_size(argv[5]);
		len = t_size(argv[6]);
	}
	while (len) {
		ssize_t r = copy_file_range(in, &off_in, out, &off_out, len, 0);

		CHECK(r >= 0, "copy_file_range");
		if (r == 0)
			FAIL("copy_file_range returned 0 with %" PRIu64
			     " bytes left",
			     len);
		len -= (uint64_t)r;
	}
	CHECK(close(out) == 0, "close");
	printf("OK\n");
	return 0;
}

static int cmd_unlink_open(const char *path)
{
	char buf[64];
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0, "open");
	CHECK(pwrite(fd, "hello world", 11, 0) == 11, "pwrite");
	CHECK(unlink(path) == 0, "unlink");
	if (access(path, F_OK) == 0 || errno != ENOENT)
		FAIL("name still visible after unlink");
	CHECK(pread(fd, buf, sizeof(buf), 0) == 11, "pread after unlink");
	if (memcmp(buf, "hello world", 11))
		FAIL("data changed after unlink");
	CHECK(pwrite(fd, "HELLO", 5, 0) == 5, "pwrite after unlink");
	CHECK(pwrite(fd, "tail", 4, 2 << 20) == 4,
	      "pwrite after unlink (new extent)");
	CHECK(fstat(fd, &st) == 0, "fstat after unlink");
	if (st.st_nlink != 0)
		FAIL("st_nlink %lu after unlink, expected 0",
		     (unsigned long)st.st_nlink);
	if (st.st_size != (2 << 20) + 4)
		FAIL("st_size %lld after unlinked write", (long long)st.st_size);
	CHECK(pread(fd, buf, 11, 0) == 11, "pread");
	if (memcmp(buf, "HELLO world", 11))
		FAIL("unlinked file reads '%.11s'", buf);
	CHECK(pread(fd, buf, 4, 2 << 20) == 4, "pread");
	if (memcmp(buf, "tail", 4))
		FAIL("unlinked file tail reads '%.4s'", buf);
	CHECK(ftruncate(fd, 5) == 0, "ftruncate after unlink");
	CHECK(fstat(fd, &st) == 0 && st.st_size == 5, "size after ftruncate");
	/* a new file of the same name is a different file */
	int fd2 = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
	CHECK(fd2 >= 0, "create same name");
	CHECK(pwrite(fd2, "new", 3, 0) == 3, "pwrite new");
	CHECK(pread(fd, buf, 11, 0) == 5, "pread old");
	if (memcmp(buf, "HELLO", 5))
		FAIL("old file changed by new file of the same name");
	struct stat st2;
	CHECK(fstat(fd2, &st2) == 0, "fstat new");
	if (st2.st_ino == st.st_ino)
		FAIL("new file shares inode number %lu with the open unlinked "
		     "file",
		     (unsigned long)st.st_ino);
	CHECK(close(fd) == 0, "close");
	CHECK(close(fd2) == 0, "close");
	printf("OK\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "mmap-write"))
		return cmd_mmap_write(argv[2], t_size(argv[3]), t_size(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "mmap-verify"))
		return cmd_mmap_verify(argv[2], t_size(argv[3]),
				       t_size(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "mmap-share"))
		return cmd_mmap_share(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "direct"))
		return cmd_direct(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "append"))
		return cmd_append(argv[2], atoi(argv[3]), atol(argv[4]),
				  (size_t)t_size(argv[5]));
	if ((argc == 4 || argc == 7) && !strcmp(argv[1], "cfr"))
		return cmd_cfr(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "unlink-open"))
		return cmd_unlink_open(argv[2]);
	fprintf(stderr, "usage: iomodes CMD ... (see iomodes.c)\n");
	return 2;
}
