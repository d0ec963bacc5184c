/*
 * connect.c: a connection to a TCP port in the container, for a stream of
 * the mux (mux.c), a preview link's connection (lib/preview/).
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "supervisor/connect.h"

/* A connection to addr within CONNECT_MS, or -1. */
#define CONNECT_MS	2000
static int
try_connect(const struct sockaddr *sa, socklen_t len)
{
	struct pollfd	pfd;
	int		fd, e = 0;
	socklen_t	el = sizeof(e);

	if ((fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, sa, len) == 0)
		goto ok;
	if (errno != EINPROGRESS)
		goto fail;
	pfd.fd = fd;
	pfd.events = POLLOUT;
	if (poll(&pfd, 1, CONNECT_MS) != 1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) == -1 || e != 0)
		goto fail;
ok:
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	return -1;
}

int
connect_port(long port)
{
	struct sockaddr_in	 a4;
	struct sockaddr_in6	 a6;
	struct ifaddrs		*ifs, *i;
	int			 fd;

	memset(&a4, 0, sizeof(a4));
	a4.sin_family = AF_INET;
	a4.sin_port = htons((uint16_t)port);
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = try_connect((struct sockaddr *)&a4, sizeof(a4))) >= 0)
		return fd;
	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	a6.sin6_port = htons((uint16_t)port);
	a6.sin6_addr = in6addr_loopback;
	if ((fd = try_connect((struct sockaddr *)&a6, sizeof(a6))) >= 0)
		return fd;
	if (getifaddrs(&ifs) == -1)
		return -1;
	for (i = ifs; i != NULL && fd < 0; i = i->ifa_next) {
		if (i->ifa_addr == NULL)
			continue;
		if (i->ifa_addr->sa_family == AF_INET) {
			memcpy(&a4, i->ifa_addr, sizeof(a4));
			if (ntohl(a4.sin_addr.s_addr) >> 24 == 127)
				continue;
			a4.sin_port = htons((uint16_t)port);
			fd = try_connect((struct sockaddr *)&a4, sizeof(a4));
		} else if (i->ifa_addr->sa_family == AF_INET6) {
			memcpy(&a6, i->ifa_addr, sizeof(a6));
			if (IN6_IS_ADDR_LOOPBACK(&a6.sin6_addr))
				continue;
			a6.sin6_port = htons((uint16_t)port);
			fd = try_connect((struct sockaddr *)&a6, sizeof(a6));
		}
	}
	freeifaddrs(ifs);
	return fd;
}

int
connect_give(const char *path, const unsigned char *key, size_t klen, int fd)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(int))];
	}			 ctl;
	struct sockaddr_un	 sa;
	struct msghdr		 msg;
	struct iovec		 iov;
	struct cmsghdr		*cm;
	int			 s, rc = -1;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	memcpy(sa.sun_path, path, strlen(path));
	/* Non-blocking: a lane that does not take it at once is not used. */
	if ((s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK,
	    0)) == -1)
		return -1;
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		goto out;
	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	iov.iov_base = (void *)key;
	iov.iov_len = klen;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.b;
	msg.msg_controllen = sizeof(ctl.b);
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(s, &msg, MSG_NOSIGNAL) == (ssize_t)klen)
		rc = 0;
out:
	close(s);
	return rc;
}
