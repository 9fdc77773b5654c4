// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * test_kernel.c -- Check suite for fs/kernel.c: the /dev/fuse hooks that
 * add kernel features past libfuse 3.14.  Requests and replies in the
 * kernel's binary layout (linux/fuse.h) go through a pipe: the read hook
 * must record INIT's offered flags and the kill-suid/sgid flags of WRITE
 * and SETATTR; kernel_init() must choose only what the kernel offered and
 * the options allow; the writev hook must add exactly that to the INIT
 * reply and leave every other reply alone.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fuse_inc.h"
#include "kernel.h"
#include "kernel_i.h"
#include "kernel_req.h"
#include "kernel_uring.h"
#include "kernel_uring_wire.h"
#include "fs.h"
#include "tap.h"

/*
 * kernel_init() starts a thread that reads fs->opt.mountpoint (it then
 * leaves the bdi alone, "/" not being FUSE); teardown joins it.
 */
static struct tierfs fs;
static int pfd[2];

static void setup(void)
{
	memset(&fs, 0, sizeof(fs));
	fs.opt.mountpoint = (char *)"/";
	fs.dirty_reserve = 8u << 20;
	ck_assert_int_eq(pipe(pfd), 0);
}

static void teardown(void)
{
	kernel_stop(&fs);
	close(pfd[0]);
	close(pfd[1]);
}

/* Write one request with @arg of @argn bytes, then read it via the hook. */
static void t_request(uint32_t opcode, uint64_t unique, const void *arg,
		      size_t argn)
{
	struct fuse_in_header h = {
		.len = (uint32_t)(sizeof(h) + argn),
		.opcode = opcode,
		.unique = unique,
	};
	char in[512], out[512];
	ssize_t n;

	ck_assert_uint_le(sizeof(h) + argn, sizeof(in));
	memcpy(in, &h, sizeof(h));
	memcpy(in + sizeof(h), arg, argn);
	ck_assert_int_eq(write(pfd[1], in, sizeof(h) + argn),
			 (ssize_t)(sizeof(h) + argn));
	n = kernel_io_read(pfd[0], out, sizeof(out), &fs);
	ck_assert_int_eq(n, (ssize_t)(sizeof(h) + argn));
	ck_assert_mem_eq(out, in, (size_t)n); /* passed through unchanged */
}

static void t_init(uint64_t unique, uint64_t flags)
{
	struct fuse_init_in in = {
		.major = 7,
		.minor = 38,
		.flags = (uint32_t)flags,
		.flags2 = (uint32_t)(flags >> 32),
	};

	t_request(FUSE_INIT, unique, &in, sizeof(in));
}

/* Send an INIT reply through the writev hook; return what came out. */
static struct fuse_init_out t_init_reply(uint64_t unique, int error,
					 uint32_t flags, uint32_t flags2)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh) + sizeof(struct fuse_init_out),
		.error = error,
		.unique = unique,
	};
	struct fuse_init_out out = {
		.major = 7, .minor = 38, .flags = flags, .flags2 = flags2,
	};
	struct iovec iov[2] = {
		{ &oh, sizeof(oh) },
		{ &out, sizeof(out) },
	};
	char buf[sizeof(oh) + sizeof(out)];
	struct fuse_init_out got;

	ck_assert_int_eq(kernel_io_writev(pfd[1], iov, 2, &fs),
			 (ssize_t)sizeof(buf));
	ck_assert_int_eq(read(pfd[0], buf, sizeof(buf)), (ssize_t)sizeof(buf));
	ck_assert_mem_eq(buf, &oh, sizeof(oh));
	memcpy(&got, buf + sizeof(oh), sizeof(got));
	return got;
}

#define NEW_FLAGS (KFUSE_HANDLE_KILLPRIV_V2 | KFUSE_DIRECT_IO_ALLOW_MMAP)

START_TEST(test_kernel_init_adds_offered_flags)
{
	struct fuse_conn_info conn = { .capable = FUSE_CAP_WRITEBACK_CACHE };
	struct fuse_init_out out;

	t_init(2, KFUSE_INIT_EXT | NEW_FLAGS | KFUSE_PASSTHROUGH);
	ck_assert(fs.kern_init_pending);
	ck_assert_uint_eq(fs.kern_offered,
			  KFUSE_INIT_EXT | NEW_FLAGS | KFUSE_PASSTHROUGH);
	kernel_init(&fs, &conn);
	ck_assert_uint_eq(fs.kern_added, NEW_FLAGS); /* never passthrough */
	ck_assert(fs.killpriv_v2);
	ck_assert(fs.writeback);
	ck_assert(conn.want & FUSE_CAP_WRITEBACK_CACHE);

	/* another reply goes out untouched, INIT's stays pending */
	out = t_init_reply(3, 0, 0x11, 0);
	ck_assert_uint_eq(out.flags, 0x11);
	ck_assert(fs.kern_init_pending);

	out = t_init_reply(2, 0, 0x11, 0);
	ck_assert_uint_eq(out.flags, 0x11 | (uint32_t)KFUSE_INIT_EXT |
					     (uint32_t)KFUSE_HANDLE_KILLPRIV_V2);
	ck_assert_uint_eq(out.flags2,
			  (uint32_t)(KFUSE_DIRECT_IO_ALLOW_MMAP >> 32));
	ck_assert(!fs.kern_init_pending);

	/* once replied, a reply with the same unique is left alone */
	out = t_init_reply(2, 0, 0x11, 0);
	ck_assert_uint_eq(out.flags, 0x11);
}
END_TEST

START_TEST(test_kernel_old_kernel_gets_libfuse_reply)
{
	struct fuse_conn_info conn = { .capable = FUSE_CAP_WRITEBACK_CACHE };
	struct fuse_init_out out;

	/* a kernel before INIT_EXT and killpriv_v2 */
	t_init(7, UINT64_C(1) << 16);
	ck_assert_uint_eq(fs.kern_offered, UINT64_C(1) << 16);
	kernel_init(&fs, &conn);
	ck_assert_uint_eq(fs.kern_added, 0);
	ck_assert(!fs.killpriv_v2);
	out = t_init_reply(7, 0, 0x1234, 0);
	ck_assert_uint_eq(out.flags, 0x1234);
	ck_assert_uint_eq(out.flags2, 0);
}
END_TEST

START_TEST(test_kernel_flags2_needs_init_ext)
{
	struct fuse_conn_info conn = { 0 };

	/* flags2 bits without INIT_EXT in flags mean nothing */
	t_init(9, KFUSE_DIRECT_IO_ALLOW_MMAP);
	ck_assert_uint_eq(fs.kern_offered, 0);
	kernel_init(&fs, &conn);
	ck_assert_uint_eq(fs.kern_added, 0);
	ck_assert(!fs.writeback); /* the kernel did not offer the cache */
	ck_assert(!(conn.want & FUSE_CAP_WRITEBACK_CACHE));
}
END_TEST

START_TEST(test_kernel_options_turn_features_off)
{
	struct fuse_conn_info conn = { .capable = FUSE_CAP_WRITEBACK_CACHE,
				       .want = FUSE_CAP_WRITEBACK_CACHE };
	struct fuse_init_out out;

	fs.opt.no_kernel_features = true;
	fs.opt.no_writeback_cache = true;
	t_init(4, KFUSE_INIT_EXT | NEW_FLAGS);
	kernel_init(&fs, &conn);
	ck_assert_uint_eq(fs.kern_added, 0);
	ck_assert(!fs.killpriv_v2);
	ck_assert(!fs.writeback);
	ck_assert(!(conn.want & FUSE_CAP_WRITEBACK_CACHE));
	out = t_init_reply(4, 0, 0x40000000, 0);
	ck_assert_uint_eq(out.flags, 0x40000000);
}
END_TEST

START_TEST(test_kernel_failed_init_adds_nothing)
{
	struct fuse_conn_info conn = { 0 };
	struct fuse_out_header oh = { .len = sizeof(oh), .error = -EPROTO,
				      .unique = 5 };
	struct iovec iov[1] = { { &oh, sizeof(oh) } };
	char buf[sizeof(oh)];

	t_init(5, KFUSE_INIT_EXT | NEW_FLAGS);
	kernel_init(&fs, &conn);
	/* an error reply has no argument to patch */
	ck_assert_int_eq(kernel_io_writev(pfd[1], iov, 1, &fs),
			 (ssize_t)sizeof(oh));
	ck_assert_int_eq(read(pfd[0], buf, sizeof(buf)), (ssize_t)sizeof(oh));
	ck_assert_mem_eq(buf, &oh, sizeof(oh));
}
END_TEST

START_TEST(test_kernel_kill_flags_per_request)
{
	struct fuse_write_in w = { .size = 1 };
	struct fuse_setattr_in sa = { .valid = FATTR_SIZE };
	char arg[sizeof(w) + 1] = { 0 };

	w.write_flags = FUSE_WRITE_KILL_SUIDGID;
	memcpy(arg, &w, sizeof(w));
	t_request(FUSE_WRITE, 10, arg, sizeof(arg));
	ck_assert(kernel_req_kill_suidgid());

	/* the next request resets it */
	t_request(FUSE_GETATTR, 11, arg, 16);
	ck_assert(!kernel_req_kill_suidgid());

	w.write_flags = FUSE_WRITE_CACHE;
	memcpy(arg, &w, sizeof(w));
	t_request(FUSE_WRITE, 12, arg, sizeof(arg));
	ck_assert(!kernel_req_kill_suidgid());

	t_request(FUSE_SETATTR, 13, &sa, sizeof(sa));
	ck_assert(!kernel_req_kill_suidgid());
	sa.valid |= FATTR_KILL_SUIDGID;
	t_request(FUSE_SETATTR, 14, &sa, sizeof(sa));
	ck_assert(kernel_req_kill_suidgid());

	/* a request too short for its argument is not looked at */
	t_request(FUSE_WRITE, 15, arg, 8);
	ck_assert(!kernel_req_kill_suidgid());
}
END_TEST

/*
 * Splice: after INIT a large WRITE read through the hook leaves its data
 * in the thread's pipe (kernel_req_pipe()), its headers in the buffer and
 * its flags noted; other requests come whole; bytes a handler left are
 * never read as the next request; --no-splice reads everything whole.
 * The source is a pipe here (splice moves pipe to pipe as it moves
 * /dev/fuse to a pipe), one request at a time.
 */
static void t_big_write(uint64_t unique, size_t datan, uint32_t flags,
			char *in)
{
	struct fuse_in_header h = {
		.len = (uint32_t)(sizeof(h) + sizeof(struct fuse_write_in) + datan),
		.opcode = FUSE_WRITE,
		.unique = unique,
	};
	struct fuse_write_in w = { .size = (uint32_t)datan,
				   .write_flags = flags };
	size_t n = sizeof(h) + sizeof(w) + datan;

	memcpy(in, &h, sizeof(h));
	memcpy(in + sizeof(h), &w, sizeof(w));
	for (size_t i = 0; i < datan; i++)
		in[sizeof(h) + sizeof(w) + i] = (char)(i * 7 + unique);
	ck_assert_int_eq(write(pfd[1], in, n), (ssize_t)n);
}

START_TEST(test_kernel_splice_write)
{
	struct fuse_conn_info conn = { .max_write = 1u << 20 };
	const size_t hdr = sizeof(struct fuse_in_header) +
			   sizeof(struct fuse_write_in);
	const size_t datan = 64 * 1024, big = (1u << 20) + 4096;
	char *in = malloc(hdr + datan), *out = malloc(big), *got = malloc(datan);
	struct fuse_setxattr_in sx = { .size = 8000 };
	size_t held;
	int fd;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(got);
	ck_assert_int_ge(fcntl(pfd[1], F_SETPIPE_SZ, 1 << 20), 1 << 20);
	fs.opt.no_splice = (bool)_i;
	kernel_init(&fs, &conn);
	/* a pipe of 1 MiB (no CAP_SYS_RESOURCE) holds 254 pages of data */
	ck_assert_uint_ge(conn.max_write, 64 * 1024);
	ck_assert_uint_le(conn.max_write, 1u << 20);

	t_big_write(20, datan, FUSE_WRITE_KILL_SUIDGID, in);
	ck_assert_int_eq(kernel_io_read(pfd[0], out, big, &fs),
			 (ssize_t)(hdr + datan));
	ck_assert_mem_eq(out, in, hdr);
	ck_assert(kernel_req_kill_suidgid());
	if (fs.opt.no_splice) {
		ck_assert(!kernel_req_pipe(&fd, &held));
		ck_assert_mem_eq(out + hdr, in + hdr, datan);
		goto out;
	}
	ck_assert(kernel_req_pipe(&fd, &held));
	ck_assert_uint_eq(held, datan);
	ck_assert_int_eq(read(fd, got, datan), (ssize_t)datan);
	ck_assert_mem_eq(got, in + hdr, datan);
	kernel_req_pipe_done(true);
	ck_assert(!kernel_req_pipe(&fd, &held));

	/* a large request of another kind comes whole */
	{
		size_t n = sizeof(struct fuse_in_header) + sizeof(sx) + 8000;
		struct fuse_in_header h = { .len = (uint32_t)n,
					    .opcode = FUSE_SETXATTR,
					    .unique = 21 };
		char *x = calloc(1, n);

		ck_assert_ptr_nonnull(x);
		memcpy(x, &h, sizeof(h));
		memcpy(x + sizeof(h), &sx, sizeof(sx));
		memset(x + sizeof(h) + sizeof(sx), 'v', 8000);
		ck_assert_int_eq(write(pfd[1], x, n), (ssize_t)n);
		ck_assert_int_eq(kernel_io_read(pfd[0], out, big, &fs),
				 (ssize_t)n);
		ck_assert_mem_eq(out, x, n);
		ck_assert(!kernel_req_pipe(&fd, &held));
		free(x);
	}

	/* a WRITE whose handler took nothing: the next request is itself */
	t_big_write(22, datan, FUSE_WRITE_CACHE, in);
	ck_assert_int_eq(kernel_io_read(pfd[0], out, big, &fs),
			 (ssize_t)(hdr + datan));
	ck_assert(!kernel_req_kill_suidgid());
	ck_assert(kernel_req_pipe(&fd, &held));
	t_big_write(23, datan, 0, in);
	ck_assert_int_eq(kernel_io_read(pfd[0], out, big, &fs),
			 (ssize_t)(hdr + datan));
	ck_assert_mem_eq(out, in, hdr);
	ck_assert(kernel_req_pipe(&fd, &held));
	ck_assert_uint_eq(held, datan);
	ck_assert_int_eq(read(fd, got, datan), (ssize_t)datan);
	ck_assert_mem_eq(got, in + hdr, datan);
	kernel_req_pipe_done(true);

	/* a small request goes through the pipe whole */
	{
		struct fuse_in_header h = { .len = sizeof(h) + 16,
					    .opcode = FUSE_GETATTR,
					    .unique = 24 };
		char x[sizeof(h) + 16] = { 0 };

		memcpy(x, &h, sizeof(h));
		ck_assert_int_eq(write(pfd[1], x, sizeof(x)), (ssize_t)sizeof(x));
		ck_assert_int_eq(kernel_io_read(pfd[0], out, big, &fs),
				 (ssize_t)sizeof(x));
		ck_assert_mem_eq(out, x, sizeof(x));
		ck_assert(!kernel_req_pipe(&fd, &held));
	}
out:
	free(in);
	free(out);
	free(got);
}
END_TEST

/* Requests are counted per opcode, whatever reads them; unknown ones
 * (CUSE's) as "other". */
START_TEST(test_kernel_request_counts)
{
	char arg[64] = { 0 }, line[2048];

	ck_assert_int_eq(kernel_request_counts(line, sizeof(line)),
			 (int)strlen("requests"));
	t_request(FUSE_GETATTR, 30, arg, 16);
	t_request(FUSE_GETATTR, 31, arg, 16);
	t_request(FUSE_WRITE, 32, arg, sizeof(struct fuse_write_in) + 1);
	t_request(4096, 33, arg, 16);
	t_request(7, 34, arg, 16); /* no opcode 7 */
	ck_assert_int_gt(kernel_request_counts(line, sizeof(line)), 0);
	ck_assert_str_eq(line, "requests other=2 getattr=2 write=1");
	ck_assert_int_eq(kernel_request_counts(line, 12), -ENOSPC);
}
END_TEST

START_TEST(test_kernel_read_errors_pass_through)
{
	char buf[64];

	close(pfd[1]);
	pfd[1] = -1;
	/* end of file: a short read, nothing recorded */
	ck_assert_int_eq(kernel_io_read(pfd[0], buf, sizeof(buf), &fs), 0);
	errno = 0;
	ck_assert_int_eq(kernel_io_read(-1, buf, sizeof(buf), &fs), -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert(!kernel_req_kill_suidgid());
}
END_TEST

START_TEST(test_kernel_space_low)
{
	fs.writeback = false;
	ck_assert(!kernel_space_low(&fs, 0));
	fs.writeback = true;
	fs.dirty_reserve = 8u << 20;
	ck_assert(kernel_space_low(&fs, 0));
	ck_assert(kernel_space_low(&fs, (16u << 20) - 1));
	ck_assert(!kernel_space_low(&fs, 16u << 20));
	ck_assert(!kernel_space_low(&fs, UINT64_MAX));
}
END_TEST

/* ---- FUSE over io_uring (kernel_uring.c) ---- */

START_TEST(test_uring_init_flag_by_transport)
{
	static const enum tierfs_transport tr[] = {
		TRANSPORT_AUTO, TRANSPORT_URING, TRANSPORT_DEV,
	};

	for (unsigned i = 0; i < 3; i++) {
		struct fuse_conn_info conn = { 0 };

		fs.opt.transport = tr[i];
		fs.kern_init_pending = false;
		t_init(2, KFUSE_INIT_EXT | KFUSE_OVER_IO_URING);
		kernel_init(&fs, &conn);
		ck_assert_uint_eq(fs.kern_added & KFUSE_OVER_IO_URING,
				  tr[i] == TRANSPORT_DEV ? 0 :
							   KFUSE_OVER_IO_URING);
		kernel_stop(&fs);
	}
	/* not offered (enable_uring=0, an older kernel): never added */
	fs.opt.transport = TRANSPORT_URING;
	fs.kern_init_pending = false;
	t_init(2, KFUSE_INIT_EXT);
	{
		struct fuse_conn_info conn = { 0 };

		kernel_init(&fs, &conn);
	}
	ck_assert_uint_eq(fs.kern_added & KFUSE_OVER_IO_URING, 0);
}
END_TEST

/*
 * The INIT reply with FUSE_OVER_IO_URING starts the queues; on a pipe
 * (no FUSE connection) the kernel refuses every REGISTER, so the
 * transport stays /dev/fuse and kernel_stop() ends every thread.
 */
START_TEST(test_uring_refused_register_falls_back)
{
	struct fuse_conn_info conn = { 0 };
	struct fuse_init_out out;

	fs.opt.transport = TRANSPORT_AUTO;
	t_init(5, KFUSE_INIT_EXT | KFUSE_OVER_IO_URING);
	kernel_init(&fs, &conn);
	out = t_init_reply(5, 0, 0, 0);
	ck_assert_uint_eq(out.flags2 & (uint32_t)(KFUSE_OVER_IO_URING >> 32),
			  (uint32_t)(KFUSE_OVER_IO_URING >> 32));
	ck_assert_str_eq(kernel_uring_transport(), "dev");
	kernel_stop(&fs);
	ck_assert_str_eq(kernel_uring_transport(), "dev");
}
END_TEST

START_TEST(test_uring_pack_reply)
{
	char hdr[KERNEL_URING_HEADER_SIZE] = { 0 };
	char payload[64];
	struct fuse_out_header oh = { .error = 0, .unique = 7 };
	struct fuse_out_header got;
	char a[10], b[20];
	struct iovec iov[3] = { { &oh, sizeof(oh) }, { a, 10 }, { b, 20 } };
	uint32_t psz;

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	ck_assert_int_eq(kernel_uring_pack_reply(hdr, payload, sizeof(payload),
						 iov, 3),
			 (ssize_t)sizeof(oh) + 30);
	memcpy(&got, hdr, sizeof(got));
	ck_assert_uint_eq(got.len, sizeof(oh) + 30);
	ck_assert_uint_eq(got.unique, 7);
	ck_assert_int_eq(got.error, 0);
	/* fuse_uring_ent_in_out.payload_sz, after the two 128-byte halves */
	memcpy(&psz, hdr + 256 + 16, sizeof(psz));
	ck_assert_uint_eq(psz, 30);
	ck_assert_mem_eq(payload, a, 10);
	ck_assert_mem_eq(payload + 10, b, 20);

	/* an error carries no arguments */
	oh.error = -ENOENT;
	ck_assert_int_eq(kernel_uring_pack_reply(hdr, payload, sizeof(payload),
						 iov, 3),
			 (ssize_t)sizeof(oh));
	memcpy(&psz, hdr + 256 + 16, sizeof(psz));
	ck_assert_uint_eq(psz, 0);
	memcpy(&got, hdr, sizeof(got));
	ck_assert_int_eq(got.error, -ENOENT);

	/* a reply larger than the payload buffer becomes EIO */
	oh.error = 0;
	ck_assert_int_eq(kernel_uring_pack_reply(hdr, payload, 16, iov, 3),
			 (ssize_t)sizeof(oh));
	memcpy(&got, hdr, sizeof(got));
	ck_assert_int_eq(got.error, -EIO);

	/* no out-header: refused */
	ck_assert_int_eq(kernel_uring_pack_reply(hdr, payload, 64, iov + 1, 2),
			 -EINVAL);
}
END_TEST

START_TEST(test_uring_unpack_request)
{
	char hdr[KERNEL_URING_HEADER_SIZE] = { 0 };
	char buf[KERNEL_URING_PREFIX + 128];
	char *payload = buf + KERNEL_URING_PREFIX, *start = NULL;
	struct fuse_write_in w = { .fh = 3, .offset = 4096, .size = 100 };
	struct fuse_in_header ih = {
		.len = sizeof(ih) + sizeof(w) + 100,
		.opcode = FUSE_WRITE,
		.unique = 9,
	};
	uint32_t psz = 100;

	memcpy(hdr, &ih, sizeof(ih));
	memcpy(hdr + 128, &w, sizeof(w));
	memcpy(hdr + 256 + 16, &psz, sizeof(psz));
	memset(payload, 'p', 100);
	ck_assert_int_eq(kernel_uring_unpack_request(hdr, payload, 128,
						     &start),
			 (ssize_t)ih.len);
	/* contiguous, as read(/dev/fuse) gives it, the payload in place */
	ck_assert_ptr_eq(start, payload - sizeof(w) - sizeof(ih));
	ck_assert_mem_eq(start, &ih, sizeof(ih));
	ck_assert_mem_eq(start + sizeof(ih), &w, sizeof(w));
	ck_assert_int_eq(start[sizeof(ih) + sizeof(w)], 'p');

	/* sizes that do not add up */
	psz = 200;
	memcpy(hdr + 256 + 16, &psz, sizeof(psz));
	ck_assert_int_eq(kernel_uring_unpack_request(hdr, payload, 128,
						     &start),
			 -EPROTO);
	psz = 0; /* would make a 140-byte opcode header */
	memcpy(hdr + 256 + 16, &psz, sizeof(psz));
	ck_assert_int_eq(kernel_uring_unpack_request(hdr, payload, 128,
						     &start),
			 -EPROTO);
}
END_TEST

/* The test faults' syntax (kernel_uring_i.h): a bad list is refused
 * whole, a good one read exactly. */
START_TEST(test_uring_parse_faults)
{
	struct kernel_uring_faults f = { .again = 99 };

	ck_assert_int_eq(kernel_uring_parse_faults("", &f), 0);
	ck_assert_uint_eq(f.again, 0);
	ck_assert_int_eq(kernel_uring_parse_faults("again=30,lose=23:60", &f), 0);
	ck_assert_uint_eq(f.again, 30);
	ck_assert_uint_eq(f.lose.opcode, 23);
	ck_assert_uint_eq(f.lose.nth, 60);
	ck_assert_uint_eq(f.badcommit.opcode, 0);
	ck_assert_int_eq(kernel_uring_parse_faults("badcommit=22:7", &f), 0);
	ck_assert_uint_eq(f.badcommit.opcode, 22);
	ck_assert_uint_eq(f.badcommit.nth, 7);
	ck_assert_uint_eq(f.again, 0);
	f.again = 5;
	ck_assert_int_eq(kernel_uring_parse_faults("again=", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("again=3,", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("again=1:2", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("lose=60", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("lose=23:0", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("lose=0:3", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("lose=64:3", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("lose=:3", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("again=x", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("drop=3", &f), -EINVAL);
	ck_assert_int_eq(kernel_uring_parse_faults("again", &f), -EINVAL);
	ck_assert_uint_eq(f.again, 5); /* untouched on failure */
}
END_TEST

START_TEST(test_uring_nqueues)
{
	int n = kernel_uring_nqueues();

	ck_assert_int_gt(n, 0);
	ck_assert_int_ge(n, (int)sysconf(_SC_NPROCESSORS_ONLN));
}
END_TEST

static Suite *kernel_suite(void)
{
	Suite *s = suite_create("kernel");
	TCase *tc = tcase_create("hooks");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_kernel_init_adds_offered_flags);
	tcase_add_test(tc, test_kernel_old_kernel_gets_libfuse_reply);
	tcase_add_test(tc, test_kernel_flags2_needs_init_ext);
	tcase_add_test(tc, test_kernel_options_turn_features_off);
	tcase_add_test(tc, test_kernel_failed_init_adds_nothing);
	tcase_add_test(tc, test_kernel_kill_flags_per_request);
	tcase_add_test(tc, test_kernel_read_errors_pass_through);
	tcase_add_loop_test(tc, test_kernel_splice_write, 0, 2);
	tcase_add_test(tc, test_kernel_request_counts);
	tcase_add_test(tc, test_kernel_space_low);
	tcase_add_test(tc, test_uring_init_flag_by_transport);
	tcase_add_test(tc, test_uring_refused_register_falls_back);
	tcase_add_test(tc, test_uring_pack_reply);
	tcase_add_test(tc, test_uring_unpack_request);
	tcase_add_test(tc, test_uring_nqueues);
	tcase_add_test(tc, test_uring_parse_faults);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tap_run(kernel_suite());
}
