/*
 * fcgi_peer.h: the web server's side of FastCGI for the unit tests that
 * run http_serve in a child on a unix socket: the listening socket, the
 * child and its stop, one GET request sent as records (FastCGI 1.0 §5),
 * and bounded reads, so a reply that does not come fails a check rather
 * than hanging it.
 */
#ifndef FCGI_PEER_H
#define FCGI_PEER_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http/http.h"
#include "unix_listen.h"

#define PEER_WAIT_MS	20000

static inline int
peer_wait_in(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, PEER_WAIT_MS) == 1 ? 0 : -1;
}

static inline int
peer_read_full(int fd, void *buf, size_t len)
{
	char	*p = buf;
	ssize_t	 n;

	while (len > 0) {
		if (peer_wait_in(fd) == -1)
			return -1;
		n = read(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A record header: version 1, request id 1, no padding. */
static inline void
peer_record(unsigned char *out, int type, size_t len)
{
	out[0] = 1;
	out[1] = (unsigned char)type;
	out[2] = 0;
	out[3] = 1;
	out[4] = (unsigned char)(len >> 8);
	out[5] = (unsigned char)(len & 0xff);
	out[6] = out[7] = 0;
}

static inline size_t
peer_param(unsigned char *out, const char *name, const char *value)
{
	size_t a = strlen(name), b = strlen(value);

	out[0] = (unsigned char)a;
	out[1] = (unsigned char)b;
	memcpy(out + 2, name, a);
	memcpy(out + 2 + a, value, b);
	return 2 + a + b;
}

/* A unix socket listening at dir/s (path filled in); -1 on failure. */
static inline int
peer_listen(char *dir, char *sock, size_t socksz)
{
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(sock, socksz, "%s/s", dir);
	return unix_listen(sock);
}

/*
 * http_serve(handler, nthreads) in a child, on lfd as its fd 0 (libfcgi
 * takes a listening socket there as FastCGI); the child's end of nothing
 * else: drop is closed in it. The child's pid, or -1. lfd is closed here.
 */
static inline pid_t
peer_serve(int lfd, http_handler handler, int nthreads, int drop)
{
	pid_t	pid;

	fflush(stdout);
	if ((pid = fork()) == 0) {
		close(drop);
		if (dup2(lfd, 0) == -1)
			_exit(2);
		close(lfd);
		_exit(http_serve(handler, NULL, nthreads) == 0 ? 0 : 1);
	}
	close(lfd);
	return pid;
}

/* SIGTERM to the child: true when it ends, status 0, within PEER_WAIT_MS. */
static inline bool
peer_stop(pid_t pid)
{
	pid_t	w = 0;
	int	st = 0, waited;

	kill(pid, SIGTERM);
	for (waited = 0; waited < PEER_WAIT_MS; waited += 50) {
		if ((w = waitpid(pid, &st, WNOHANG)) != 0)
			break;
		usleep(50 * 1000);
	}
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	return w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* A connection to sock; -1 on failure. */
static inline int
peer_connect(const char *sock)
{
	struct sockaddr_un	 sa;
	int			 fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * GET path as a responder's records on fd; keep sets FCGI_KEEP_CONN (the
 * connection stays open for another request). 0, or -1 on failure.
 */
static inline int
peer_send(int fd, const char *path, int keep)
{
	unsigned char	 req[512];
	size_t		 o, len;

	if (strlen(path) > 200)
		return -1;
	peer_record(req, 1, 8);			/* FCGI_BEGIN_REQUEST */
	memset(req + 8, 0, 8);
	req[9] = 1;				/* FCGI_RESPONDER */
	req[10] = keep ? 1 : 0;			/* FCGI_KEEP_CONN */
	o = 16;
	len = peer_param(req + o + 8, "REQUEST_METHOD", "GET");
	len += peer_param(req + o + 8 + len, "REQUEST_URI", path);
	peer_record(req + o, 4, len);		/* FCGI_PARAMS */
	o += 8 + len;
	peer_record(req + o, 4, 0);
	o += 8;
	peer_record(req + o, 5, 0);		/* FCGI_STDIN, empty */
	o += 8;
	return write(fd, req, o) == (ssize_t)o ? 0 : -1;
}

/* GET path on a new connection; the connection, or -1 on failure. */
static inline int
peer_get(const char *sock, const char *path)
{
	int	fd;

	if ((fd = peer_connect(sock)) == -1)
		return -1;
	if (peer_send(fd, path, 0) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The response's FCGI_STDOUT bytes, up to FCGI_END_REQUEST, into buf
 * (NUL-terminated, cut at bufsz - 1); 0, or -1 when it does not come whole.
 */
static inline int
peer_response(int fd, char *buf, size_t bufsz)
{
	unsigned char	 hdr[8], chunk[65536 + 256];
	size_t		 n = 0, len;

	for (;;) {
		if (peer_read_full(fd, hdr, 8) == -1)
			return -1;
		len = (size_t)hdr[4] << 8 | hdr[5];
		if (peer_read_full(fd, chunk, len + hdr[6]) == -1)
			return -1;
		if (hdr[1] == 3)		/* FCGI_END_REQUEST */
			break;
		if (hdr[1] == 6 && n < bufsz - 1) {	/* FCGI_STDOUT */
			size_t k = len < bufsz - 1 - n ? len : bufsz - 1 - n;

			memcpy(buf + n, chunk, k);
			n += k;
		}
	}
	buf[n] = '\0';
	return 0;
}

#endif
