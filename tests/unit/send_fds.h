/*
 * send_fds.h: one message of len bytes with n descriptors (SCM_RIGHTS, up
 * to 8) on a unix socket, as a container may send on its previews' lane
 * (lib/sandbox/portlane.h): for the unit test and the fuzz target that
 * play that container.
 */
#ifndef SEND_FDS_H
#define SEND_FDS_H

#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* The sendmsg's result; n is at most 8. */
static inline ssize_t
send_fds(int s, const void *buf, size_t len, const int *fds, int n)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(8 * sizeof(int))];
	}		 ctl;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cm;

	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	iov.iov_base = (void *)buf;
	iov.iov_len = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (n > 0 && n <= 8) {
		msg.msg_control = ctl.b;
		msg.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)n * sizeof(int));
	}
	return sendmsg(s, &msg, MSG_NOSIGNAL);
}

#endif
