/*
 * connect.c: "supervisor connect PORT" (supervisor.c lists the commands):
 * a connection to a TCP port in the container, carried unchanged between
 * it and the exec's stdin and stdout, for a preview link (lib/preview/).
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "supervisor/connect.h"
#include "supervisor/io.h"

#define READ_CHUNK	(32 * 1024)

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

static int
open_port(long port)
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
connect_main(long port)
{
	struct pollfd	 pfd[2];
	char		 buf[READ_CHUNK];
	ssize_t		 n;
	int		 s;

	signal(SIGPIPE, SIG_IGN);
	if ((s = open_port(port)) == -1) {
		sup_write_all(1, "-", 1);
		return 2;
	}
	if (sup_write_all(1, "+", 1) == -1)
		return 1;
	for (;;) {
		pfd[0].fd = 0;
		pfd[0].events = POLLIN;
		pfd[1].fd = s;
		pfd[1].events = POLLIN;
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pfd[0].revents != 0) {
			n = read(0, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || sup_write_all(s, buf, (size_t)n) == -1)
				return 0;
		}
		if (pfd[1].revents != 0) {
			n = read(s, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0 || sup_write_all(1, buf, (size_t)n) == -1)
				return 0;
		}
	}
}
