// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_log.c -- Check suite for fs/util/log.h: the stderr sink and the
 * journal's native protocol.  A test binds its own datagram socket where
 * the journal's would be, points the logger at it, and decodes what
 * arrives field by field, as journald would.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "log.h"
#include "tap.h"
#include "banned.h"

static char dir[] = "/tmp/tierfs-test-log-XXXXXX";
static char sock_path[sizeof(dir) + 16];
static int sock = -1;

static void setup(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 5 };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sock_path, sizeof(sock_path), "%s/journal", dir);
	memcpy(sa.sun_path, sock_path, strlen(sock_path) + 1);
	sock = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ge(sock, 0);
	ck_assert_int_eq(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* a lost datagram fails the test instead of hanging it */
	ck_assert_int_eq(setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv,
				    sizeof(tv)), 0);
}

static void teardown(void)
{
	close(sock);
	unlink(sock_path);
	rmdir(dir);
}

/* One datagram, NUL-terminated for the text checks; returns its size. */
static size_t recv_one(char *buf, size_t size)
{
	ssize_t n = recv(sock, buf, size - 1, 0);

	ck_assert_msg(n > 0, "no datagram: %s", strerror(errno));
	buf[n] = '\0';
	return (size_t)n;
}

/*
 * The MESSAGE field of a datagram: "MESSAGE\n", a 64-bit little-endian
 * length, the bytes, "\n".  Returns a malloc'd copy.
 */
static char *message_of(const char *d, size_t n)
{
	const char *p = memmem(d, n, "MESSAGE\n", 8);
	uint64_t len = 0;
	char *out;

	ck_assert_ptr_nonnull(p);
	ck_assert_msg(p == d || p[-1] == '\n', "MESSAGE not at a field start");
	p += 8;
	ck_assert_uint_ge((size_t)(d + n - p), 8);
	for (int i = 7; i >= 0; i--)
		len = len << 8 | (unsigned char)p[i];
	p += 8;
	ck_assert_uint_eq((size_t)(d + n - p), len + 1);
	ck_assert_int_eq(p[len], '\n');
	out = malloc(len + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, p, len);
	out[len] = '\0';
	return out;
}

START_TEST(test_journal_fields_and_binary_message)
{
	char d[8192];
	size_t n;
	char *msg;

	ck_assert(log_journal_present(sock_path));
	ck_assert_int_eq(log_setup_journal(sock_path), 0);
	/* a newline in a name must not end the message or forge a field */
	log_fields(LOG_LVL_ERR, "TIERFS_INODE=12\nTIERFS_OFFSET=4096",
		   "checksum mismatch in '%s'", "a\nTIERFS_INODE=99");
	n = recv_one(d, sizeof(d));
	ck_assert_ptr_nonnull(strstr(d, "PRIORITY=3\n"));
	ck_assert_ptr_nonnull(strstr(d, "SYSLOG_IDENTIFIER=tierfs\n"));
	ck_assert_ptr_nonnull(strstr(d, "\nTIERFS_INODE=12\n"));
	ck_assert_ptr_nonnull(strstr(d, "\nTIERFS_OFFSET=4096\n"));
	msg = message_of(d, n);
	ck_assert_str_eq(msg, "checksum mismatch in 'a\nTIERFS_INODE=99'");
	free(msg);

	/* plain log_msg: a warning, no extra fields */
	log_warn("tier '%s' is %d%% full", "ram", 97);
	n = recv_one(d, sizeof(d));
	ck_assert_ptr_nonnull(strstr(d, "PRIORITY=4\n"));
	ck_assert_ptr_null(strstr(d, "TIERFS_"));
	msg = message_of(d, n);
	ck_assert_str_eq(msg, "tier 'ram' is 97% full");
	free(msg);
	log_setup("tierfs", false, false);
}
END_TEST

START_TEST(test_journal_long_message_whole)
{
	static char d[16384];
	char *path = malloc(5001), *msg;
	size_t n;

	ck_assert_ptr_nonnull(path);
	memset(path, 'p', 5000);
	path[5000] = '\0';
	ck_assert_int_eq(log_setup_journal(sock_path), 0);
	log_err("cannot read '%s'", path);
	n = recv_one(d, sizeof(d));
	msg = message_of(d, n);
	ck_assert_uint_eq(strlen(msg), strlen("cannot read ''") + 5000);
	ck_assert_int_eq(memcmp(msg + 13, path, 5000), 0);
	free(msg);
	free(path);
	log_setup("tierfs", false, false);
}
END_TEST

START_TEST(test_journal_absent_changes_nothing)
{
	char missing[sizeof(dir) + 16];
	char d[256];

	snprintf(missing, sizeof(missing), "%s/none", dir);
	ck_assert(!log_journal_present(missing));
	ck_assert_int_eq(log_setup_journal(missing), -ENOENT);
	/* the sink is unchanged: still the journal set up before */
	ck_assert_int_eq(log_setup_journal(sock_path), 0);
	ck_assert_int_lt(log_setup_journal(missing), 0);
	log_err("still here");
	recv_one(d, sizeof(d));
	ck_assert_ptr_nonnull(memmem(d, sizeof(d), "still here", 10));
	log_setup("tierfs", false, false);
}
END_TEST

/* Debug lines only with debug on; the stderr sink writes "ident: msg". */
START_TEST(test_stderr_sink_and_debug)
{
	char path[sizeof(dir) + 16], got[256] = "";
	int fd, saved = dup(STDERR_FILENO);
	ssize_t n;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
	log_setup("tierfs", false, false);
	log_debug("hidden %d", 1);
	log_err("shown %d", 2);
	log_setup("tierfs", false, true);
	log_debug("debug %d", 3);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = pread(fd, got, sizeof(got) - 1, 0);
	ck_assert_int_gt(n, 0);
	got[n] = '\0';
	ck_assert_str_eq(got, "tierfs: shown 2\ntierfs: debug 3\n");
	close(fd);
	unlink(path);
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("sinks");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_journal_fields_and_binary_message);
	tcase_add_test(tc, test_journal_long_message_whole);
	tcase_add_test(tc, test_journal_absent_changes_nothing);
	tcase_add_test(tc, test_stderr_sink_and_debug);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(log_suite());
}
