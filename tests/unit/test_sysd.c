// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_sysd.c -- Check suite for what tierfs says to and takes from the
 * service manager and mount(8) (issue 19): the sd_notify protocol
 * (fs/util/notify.h), $JOURNAL_STREAM (fs/util/log.h), the fstab source
 * "tierfs:..." and the nosuid,nodev rule (fs/options.h).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "notify.h"
#include "options.h"
#include "tap.h"
#include "banned.h"

/* ---- notify_addr(), notify_send() -------------------------------- */

START_TEST(test_notify_addr)
{
	struct sockaddr_un sa;
	socklen_t len;
	char longname[200];

	ck_assert_int_eq(notify_addr("/run/systemd/notify", &sa, &len), 0);
	ck_assert_str_eq(sa.sun_path, "/run/systemd/notify");
	ck_assert_uint_eq(len, offsetof(struct sockaddr_un, sun_path) +
				       strlen("/run/systemd/notify") + 1);
	/* abstract: a leading NUL, no terminator counted */
	ck_assert_int_eq(notify_addr("@tierfs/x", &sa, &len), 0);
	ck_assert_int_eq(sa.sun_path[0], '\0');
	ck_assert_mem_eq(sa.sun_path + 1, "tierfs/x", 8);
	ck_assert_uint_eq(len, offsetof(struct sockaddr_un, sun_path) + 9);

	ck_assert_int_eq(notify_addr("", &sa, &len), -EINVAL);
	ck_assert_int_eq(notify_addr(NULL, &sa, &len), -EINVAL);
	ck_assert_int_eq(notify_addr("@", &sa, &len), -EINVAL);
	ck_assert_int_eq(notify_addr("relative/sock", &sa, &len), -EINVAL);
	ck_assert_int_eq(notify_addr("vsock:2:1234", &sa, &len), -EAFNOSUPPORT);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	ck_assert_int_eq(notify_addr(longname, &sa, &len), -ENAMETOOLONG);
	/* 107 bytes and its NUL fill sun_path exactly */
	longname[sizeof(sa.sun_path) - 1] = '\0';
	ck_assert_int_eq(notify_addr(longname, &sa, &len), 0);
	longname[0] = '@';
	longname[sizeof(sa.sun_path) - 1] = 'a';
	longname[sizeof(sa.sun_path)] = '\0';
	ck_assert_int_eq(notify_addr(longname, &sa, &len), 0);
}
END_TEST

/* A datagram socket bound to @addr (sd_notify's form); returns the fd. */
static int bind_dgram(const char *addr)
{
	struct sockaddr_un sa;
	socklen_t len;
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(notify_addr(addr, &sa, &len), 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, len), 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				    sizeof(tv)), 0);
	return fd;
}

static void recv_eq(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

	ck_assert_msg(n > 0, "no datagram: %s", strerror(errno));
	buf[n] = '\0';
	ck_assert_str_eq(buf, want);
}

START_TEST(test_notify_send)
{
	char dir[] = "/tmp/tierfs-test-sysd-XXXXXX", path[64], abs_name[64];
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);

	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(notify_send("READY=1"), 0); /* no manager: nothing */
	setenv("NOTIFY_SOCKET", "", 1);
	ck_assert_int_eq(notify_send("READY=1"), 0);

	fd = bind_dgram(path);
	setenv("NOTIFY_SOCKET", path, 1);
	ck_assert_int_eq(notify_send("READY=1\nSTATUS=serving /x"), 1);
	recv_eq(fd, "READY=1\nSTATUS=serving /x");
	ck_assert_int_eq(notify_send("STOPPING=1"), 1);
	recv_eq(fd, "STOPPING=1");
	close(fd);
	unlink(path);
	/* the manager went away */
	ck_assert_int_eq(notify_send("STOPPING=1"), -ENOENT);

	snprintf(abs_name, sizeof(abs_name), "@tierfs-test-%d", (int)getpid());
	fd = bind_dgram(abs_name);
	setenv("NOTIFY_SOCKET", abs_name, 1);
	ck_assert_int_eq(notify_send("READY=1"), 1);
	recv_eq(fd, "READY=1");
	close(fd);

	setenv("NOTIFY_SOCKET", "vsock:2:99", 1);
	ck_assert_int_eq(notify_send("READY=1"), -EAFNOSUPPORT);
	unsetenv("NOTIFY_SOCKET");
	rmdir(dir);
}
END_TEST

/* ---- $JOURNAL_STREAM --------------------------------------------- */

START_TEST(test_journal_stream_parse)
{
	uint64_t dev = 7, ino = 7;

	ck_assert_int_eq(log_journal_stream_parse("8:123456", &dev, &ino), 0);
	ck_assert_uint_eq(dev, 8);
	ck_assert_uint_eq(ino, 123456);
	ck_assert_int_eq(log_journal_stream_parse("0:0", &dev, &ino), 0);
	ck_assert_uint_eq(dev, 0);
	ck_assert_uint_eq(ino, 0);
	ck_assert_int_eq(log_journal_stream_parse("18446744073709551615:1",
						  &dev, &ino), 0);
	ck_assert_uint_eq(dev, UINT64_MAX);

	dev = ino = 7;
	static const char *const bad[] = {
		"", ":", "1:", ":2", "1:2x", "1x:2", "a:b", "-1:2", "1:-2",
		" 1:2", "1: 2", "1:2:3", "1;2", "18446744073709551616:1",
		"1:18446744073709551616",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(log_journal_stream_parse(bad[i], &dev, &ino) == -EINVAL,
			      "'%s' parsed", bad[i]);
	ck_assert_int_eq(log_journal_stream_parse(NULL, &dev, &ino), -EINVAL);
	ck_assert_uint_eq(dev, 7); /* untouched on failure */
	ck_assert_uint_eq(ino, 7);
}
END_TEST

START_TEST(test_journal_stream_is)
{
	char path[] = "/tmp/tierfs-test-sysd-stream-XXXXXX", v[64];
	struct stat st;
	int fd = mkstemp(path), other = open("/dev/null", O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(other, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	ck_assert(log_journal_stream_is(v, fd));
	ck_assert(!log_journal_stream_is(v, other)); /* redirected since */
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino + 1);
	ck_assert(!log_journal_stream_is(v, fd));
	snprintf(v, sizeof(v), "%llu:%llu", (unsigned long long)st.st_dev + 1,
		 (unsigned long long)st.st_ino);
	ck_assert(!log_journal_stream_is(v, fd));
	ck_assert(!log_journal_stream_is(NULL, fd));
	ck_assert(!log_journal_stream_is("junk", fd));
	ck_assert(!log_journal_stream_is("1:2", -1));
	close(fd);
	close(other);
	unlink(path);
}
END_TEST

/* A journald that restarts binds its socket anew: messages after that
 * still reach it (each is sent to the address, not on a connection). */
START_TEST(test_journal_restarted)
{
	char dir[] = "/tmp/tierfs-test-sysd-XXXXXX", path[64], buf[4096];
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/journal", dir);
	fd = bind_dgram(path);
	ck_assert_int_eq(log_setup_journal(path), 0);
	ck_assert(log_to_journal());
	log_warn("before %d", 1);
	ck_assert_int_gt(recv(fd, buf, sizeof(buf), 0), 0);
	ck_assert_ptr_nonnull(memmem(buf, sizeof(buf), "PRIORITY=4\n", 11));
	close(fd);
	unlink(path);
	fd = bind_dgram(path);
	memset(buf, 0, sizeof(buf));
	log_err("after %d", 2);
	ck_assert_int_gt(recv(fd, buf, sizeof(buf), 0), 0);
	ck_assert_ptr_nonnull(memmem(buf, sizeof(buf), "PRIORITY=3\n", 11));
	ck_assert_ptr_nonnull(memmem(buf, sizeof(buf), "after 2", 7));
	close(fd);
	unlink(path);
	rmdir(dir);
	log_setup("tierfs", false, false);
}
END_TEST

/* ---- the fstab source -------------------------------------------- */

START_TEST(test_source_is_spec)
{
	char err[OPT_ERR_MAX];
	static const char *const specs[] = {
		"tierfs", "tierfs:default", "tierfs:ram", "tierfs:ram+disk",
		"tierfs:a_b-c+D9", "tierfs:other",
	};
	static const char *const files[] = {
		"/etc/tierfs/scratch.conf", "scratch.conf", "./tierfs",
		"tierfs.conf", "tierfsx:ram", "/tierfs:ram", "",
	};
	static const char *const bad[] = {
		"tierfs:", "tierfs:ram+", "tierfs:+ram", "tierfs:ram++disk",
		"tierfs:/etc/x.conf", "tierfs:ram disk",
		"tierfs:a23456789012345678901234567890123", /* 33 characters */
	};

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		ck_assert_msg(options_source_is_spec(specs[i], err, sizeof(err)) == 1,
			      "'%s' is not a source", specs[i]);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		ck_assert_msg(options_source_is_spec(files[i], err, sizeof(err)) == 0,
			      "'%s' is not a config file", files[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ck_assert_msg(options_source_is_spec(bad[i], err, sizeof(err)) == -EINVAL,
			      "'%s' accepted", bad[i]);
		ck_assert_msg(!strncmp(err, "bad source '", 12), "message '%s'", err);
		ck_assert(!strchr(err, '\n'));
	}
}
END_TEST

static int parse(struct tierfs_options *opt, char *err, const char *a1,
		 const char *a2, const char *a3, const char *a4)
{
	char *argv[] = { (char *)"tierfs", (char *)a1, (char *)a2, (char *)a3,
			 (char *)a4, NULL };
	int argc = 1;

	while (argv[argc])
		argc++;
	options_init(opt);
	return options_parse_args(argc, argv, opt, err, OPT_ERR_MAX);
}

START_TEST(test_parse_source)
{
	struct tierfs_options opt;
	char err[OPT_ERR_MAX] = "";

	ck_assert_int_eq(parse(&opt, err, "tierfs:default", "/scratch", NULL, NULL), 0);
	ck_assert_ptr_null(opt.config_file);
	ck_assert_str_eq(opt.source, "tierfs:default");
	ck_assert_str_eq(opt.mountpoint, "/scratch");
	options_release(&opt);

	/* mount.fuse3's shape: SOURCE DIR -o LIST */
	ck_assert_int_eq(parse(&opt, err, "tierfs", "/scratch", "-o",
			       "tier=ram=ram:16M,dev,suid"), 0);
	ck_assert_ptr_null(opt.config_file);
	ck_assert_str_eq(opt.source, "tierfs");
	ck_assert_uint_eq(opt.ntiers, 1);
	ck_assert_str_eq(opt.fuse_opts, "dev,suid");
	ck_assert_int_eq(options_mount_flags(&opt), 0);
	ck_assert_str_eq(opt.fuse_opts, "nosuid,nodev");
	options_release(&opt);

	ck_assert_int_eq(parse(&opt, err, "./tierfs", "/scratch", NULL, NULL), 0);
	ck_assert_str_eq(opt.config_file, "./tierfs");
	ck_assert_ptr_null(opt.source);
	options_release(&opt);

	ck_assert_int_eq(parse(&opt, err, "tierfs:no/such", "/scratch", NULL, NULL),
			 -EINVAL);
	ck_assert_msg(!strncmp(err, "bad source 'tierfs:no/such'", 27), "%s", err);
	options_release(&opt);

	/* one positional argument is the mount point, whatever it says */
	ck_assert_int_eq(parse(&opt, err, "tierfs:default", NULL, NULL, NULL), 0);
	ck_assert_ptr_null(opt.source);
	ck_assert_str_eq(opt.mountpoint, "tierfs:default");
	options_release(&opt);
}
END_TEST

/* ---- nosuid,nodev ------------------------------------------------ */

/* options_mount_flags() on the -o list @in: must give @want */
static void flags_eq(const char *in, const char *want)
{
	struct tierfs_options opt;
	char err[OPT_ERR_MAX] = "";

	options_init(&opt);
	if (in)
		ck_assert_int_eq(parse(&opt, err, "-o", in, "/scratch", NULL), 0);
	else
		ck_assert_int_eq(parse(&opt, err, "/scratch", NULL, NULL, NULL), 0);
	ck_assert_int_eq(options_mount_flags(&opt), 0);
	ck_assert_msg(!strcmp(opt.fuse_opts, want), "-o %s: got '%s', want '%s'",
		      in ? in : "(none)", opt.fuse_opts, want);
	/* once more (the remount path may come twice): the same */
	ck_assert_int_eq(options_mount_flags(&opt), 0);
	ck_assert_msg(!strcmp(opt.fuse_opts, want), "-o %s twice: got '%s'",
		      in ? in : "(none)", opt.fuse_opts);
	options_release(&opt);
}

START_TEST(test_mount_flags)
{
	flags_eq(NULL, "nosuid,nodev");
	/* what mount.fuse3 adds to every mount */
	flags_eq("allow_other,dev,suid", "allow_other,nosuid,nodev");
	flags_eq("rw,nosuid,dev", "rw,nosuid,nodev");
	flags_eq("suid,dev,noexec", "noexec,nosuid,nodev");
	/* the admin's opt-in, with and without mount.fuse3's words */
	flags_eq("allow_suid", "suid,nodev");
	flags_eq("allow_dev", "nosuid,dev");
	flags_eq("allow_suid,allow_dev,dev,suid", "suid,dev");
	flags_eq("allow_other,allow_suid,dev,suid", "allow_other,suid,nodev");
	/* nosuid, nodev win over the opt-in, wherever they are */
	flags_eq("nosuid,allow_suid,suid", "nosuid,nodev");
	flags_eq("allow_dev,allow_suid,nodev", "suid,nodev");
	/* remount's words stay where they were */
	flags_eq("remount,ro,dev,suid", "remount,ro,nosuid,nodev");
}
END_TEST

static Suite *sysd_suite(void)
{
	Suite *s = suite_create("sysd");
	TCase *tc = tcase_create("sysd");

	tcase_add_test(tc, test_notify_addr);
	tcase_add_test(tc, test_notify_send);
	tcase_add_test(tc, test_journal_stream_parse);
	tcase_add_test(tc, test_journal_stream_is);
	tcase_add_test(tc, test_journal_restarted);
	tcase_add_test(tc, test_source_is_spec);
	tcase_add_test(tc, test_parse_source);
	tcase_add_test(tc, test_mount_flags);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(sysd_suite());
}
