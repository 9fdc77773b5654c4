// SPDX-License-Identifier: GPL-2.0-or-later
/* notify.c -- see notify.h. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "notify.h"
#include "banned.h"

int notify_addr(const char *value, struct sockaddr_un *sa, socklen_t *len)
{
	size_t n = value ? strlen(value) : 0;

	if (n < 2 || (value[0] != '/' && value[0] != '@')) {
		/* systemd 253+ also speaks "vsock:CID:PORT" to VMs */
		return value && !strncmp(value, "vsock:", 6) ? -EAFNOSUPPORT
							     : -EINVAL;
	}
	if (n > sizeof(sa->sun_path) - (value[0] == '/'))
		return -ENAMETOOLONG;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, value, n);
	if (value[0] == '@') {
		/* abstract: the name is exactly n bytes after a NUL, with no
		 * terminator, so the length counts only those */
		sa->sun_path[0] = '\0';
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
	}
	return 0;
}

int notify_send(const char *state)
{
	const char *value = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa;
	socklen_t len;
	int fd, r;

	if (!value || !*value)
		return 0;
	r = notify_addr(value, &sa, &len);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = sendto(fd, state, strlen(state), MSG_NOSIGNAL | MSG_DONTWAIT,
		   (struct sockaddr *)&sa, len) < 0 ? -errno : 1;
	close(fd);
	return r;
}
