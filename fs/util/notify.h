/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * notify.h -- the service manager's notification protocol (systemd's
 * sd_notify(3)), without libsystemd.
 *
 * A unit with Type=notify starts the daemon with $NOTIFY_SOCKET, the
 * address of a unix datagram socket: a path ("/run/systemd/notify") or an
 * abstract name ("@..."; the '@' stands for the leading NUL byte).  Each
 * notification is one datagram of newline-separated VAR=VALUE lines.
 * tierfs sends (main.c):
 *   READY=1 and STATUS=...    once the mount is live and the request loop
 *                             is about to serve it, so that units ordered
 *                             after tierfs@.service find it mounted;
 *   STOPPING=1 and STATUS=... when the loop has ended (unmount or signal)
 *                             and the daemon begins to unmount and free
 *                             its tiers.
 * systemd accepts them from the main process only (NotifyAccess=main),
 * which is tierfs under -f.  The kernel attaches the sender's
 * credentials; nothing else is needed.
 *
 * Thread safety: notify_send() keeps no state; any thread may call it.
 */
#ifndef TIERFS_UTIL_NOTIFY_H
#define TIERFS_UTIL_NOTIFY_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

/**
 * notify_addr() - the socket address @value ($NOTIFY_SOCKET) names
 * @sa, @len: filled on success (@len for connect()/sendto())
 * Return: 0; -EINVAL for an empty value or one that is neither a path
 * nor "@name"; -EAFNOSUPPORT for another kind (systemd's "vsock:...");
 * -ENAMETOOLONG when it does not fit in sun_path.
 */
int notify_addr(const char *value, struct sockaddr_un *sa, socklen_t *len);

/**
 * notify_send() - send @state ("READY=1", "STOPPING=1\nSTATUS=...") to
 * the service manager named by $NOTIFY_SOCKET
 * Return: 1 when sent, 0 when $NOTIFY_SOCKET is not set (no service
 * manager waits: nothing to do), -errno when it cannot be sent.  Never
 * blocks.
 */
int notify_send(const char *state);

#endif /* TIERFS_UTIL_NOTIFY_H */
