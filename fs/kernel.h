/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kernel.h -- the one place that talks to the FUSE kernel module past
 * what libfuse 3.14 knows: it adds newer capability flags to the INIT
 * reply, reads the per-request flags that 3.14 drops, and sets the
 * mount's bdi (readahead and the dirty page cache limit).
 *
 * How: fuse_session_custom_io() gives libfuse our own read() and
 * writev() for /dev/fuse.  The read hook looks at each request's header
 * before libfuse decodes it (INIT's offered flags, WRITE's write_flags,
 * SETATTR's valid mask); the writev hook ORs the flags decided in
 * kernel_init() into the INIT reply.  A flag goes in only if the kernel
 * offered it, so on an older kernel the reply is what libfuse built.
 *
 * It also sends the one notification tierfs needs (kernel_inval_attr()):
 * attributes that changed without a request that lets the kernel know.
 *
 * Threads: a loop thread reads a request and then processes it, both on
 * that thread, so the per-request flags live in thread-local storage
 * between the read hook and the handler.  The INIT fields of struct
 * tierfs are written while INIT is processed, before the kernel sends
 * any other request, and only read afterwards.
 */
#ifndef TIERFS_KERNEL_H
#define TIERFS_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel_req.h" /* the KFUSE_* flags */

struct fuse_session;
struct fuse_conn_info;
struct tierfs;
struct tfs_inode;

/**
 * kernel_attach() - route the session's /dev/fuse I/O through our hooks.
 * Call after fuse_session_mount() and before the loop starts.
 * Also keeps @se for kernel_inval_attr(), even when the hooks fail: one
 * session per process, as main() makes.
 * Return: 0 or -errno (the session then works as before, without the
 * newer flags; the caller logs).
 */
int kernel_attach(struct fuse_session *se, struct tierfs *fs);

/**
 * kernel_init() - from the init handler: decide the kernel features of
 * this mount (killpriv_v2, writeback cache, direct-I/O mmap) from what
 * the kernel offered and the options, set conn->want for those libfuse
 * knows, and remember the rest for the INIT reply.  Starts the thread
 * that sets the mount's bdi.
 */
void kernel_init(struct tierfs *fs, struct fuse_conn_info *conn);

/* Wait for the threads kernel_init() started (notifications still
 * queued are dropped: the mount is going); from the destroy handler
 * and tierfs_free(), so that nothing reads @fs after it is freed.
 * Accepts NULL and a mount whose init never ran. */
void kernel_stop(struct tierfs *fs);

/*
 * For the WRITE this thread handles: true when its data is still in the
 * thread's splice pipe (kernel.c), with the pipe's read end and the
 * byte count; the data in the request's buffer is then not there.  The
 * handler reads all of it (struct data_src) and calls
 * kernel_req_pipe_done(): @emptied false when the pipe's contents are
 * unknown (it is replaced).  False for requests read whole and for every
 * request over io_uring.
 */
bool kernel_req_pipe(int *ret_fd, size_t *ret_len);
void kernel_req_pipe_done(bool emptied);

/*
 * Native I/O (issue 33, native.h): whether a mount with io=auto asks
 * the kernel for passthrough (and gives up the writeback cache).
 */
#define KERNEL_IO_AUTO_NATIVE false

/*
 * kernel_backing_open() - register the open file @fd with the kernel as
 * a backing file (FUSE_DEV_IOC_BACKING_OPEN on /dev/fuse), so that an
 * OPEN reply may name it (kernel_req_set_passthrough()).  Only on a
 * mount whose INIT took passthrough (fs->passthrough).  The kernel keeps
 * its own reference to the file until kernel_backing_close().
 * Return: the backing id (> 0), or -errno (-EPERM without
 * CAP_SYS_ADMIN or passthrough, -ENODEV without a session).
 */
int kernel_backing_open(int fd);
/* Drop backing file @id (open files of it keep theirs). */
void kernel_backing_close(int id);

/**
 * kernel_space_low() - is less free space left for @avail than the page
 * cache may hold dirty for this mount?  Then a file should be opened
 * write-through, so that ENOSPC comes back from write(2).
 */
bool kernel_space_low(struct tierfs *fs, uint64_t avail);

/**
 * kernel_inval_attr() - the daemon changed attributes of @inode that the
 * kernel may have cached (ATTR_TIMEOUT in ops.c is long), in a way no
 * request of the kernel's tells it: make its next stat ask us.
 *
 * Asynchronous: the node id is queued and a notifier thread, which holds
 * no lock and serves no request, sends FUSE_NOTIFY_INVAL_INODE for the
 * attributes only (offset -1: the page cache stays).  So any thread may
 * call it, under any lock, from any handler -- also one for @inode
 * itself, which a synchronous notification could deadlock: the kernel
 * may be evicting the inode and waiting for that very request.  The
 * kernel drops a getattr reply that raced with the notification, so
 * none can bring the old value back.  @inode is not read: it may be
 * freed, and its address reused, before the notification goes out; an
 * inode that then gets it loses its cached attributes once, harmlessly.
 * Does nothing without a session (unit tests) or while the mount is
 * stopping.  Cheap: call it when the attributes changed, not always.
 */
void kernel_inval_attr(struct tierfs *fs, struct tfs_inode *inode);

/**
 * kernel_inval_attr_sync() - the same, sent before it returns, so that
 * the reply that follows cannot overtake it: only from a request handler
 * whose request holds @inode in the kernel (a request on the inode or on
 * an open file of it), with no daemon lock held.  Safe there: with offset
 * -1 the kernel takes no inode lock and writes no page back, and an inode
 * that a request holds is not being evicted, so its lookup does not wait
 * (eviction is what could wait for a reply of ours: page writeback).
 */
void kernel_inval_attr_sync(struct tierfs *fs, struct tfs_inode *inode);

/**
 * kernel_inval_data_sync() - drop the kernel's cached pages of
 * [@off, @off+@len) of @inode (and its attributes), before it returns:
 * after a write that bypassed the page cache (O_DIRECT on a file opened
 * with the cache), so that no buffered reader sees the old bytes.  The
 * kernel's own invalidation after a direct write does not run for
 * asynchronous (AIO, io_uring) ones.  Only from the handler of that
 * write, with no daemon lock held: the kernel locks each cached page of
 * the range and waits for its writeback, which other loop threads
 * serve; the write itself holds no page of the range.
 */
void kernel_inval_data_sync(struct tierfs *fs, struct tfs_inode *inode,
			    uint64_t off, uint64_t len);

/* WRITEs handed over in a splice pipe (kernel.c), and *@ret_bytes,
 * their bytes. */
uint64_t kernel_spliced_writes(uint64_t *ret_bytes);

#endif /* TIERFS_KERNEL_H */
