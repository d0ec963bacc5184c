/*
 * test_http_pool.c: http_serve's threads (lib/http/pool.c) over real FastCGI.
 * The server runs in a child with four threads on a unix socket; this
 * process is the web server. Only one thread waits in accept() at a time,
 * and the turn covers accept() alone, so:
 *   - a connection that sends nothing, and one that stops inside its begin
 *     record, hold back no other request;
 *   - a request whose handler is held (here, until this process says go)
 *     holds back no other: the watch lets another thread in;
 *   - many requests in turn are all answered, by threads that stay
 *     within the four;
 *   - a connection the web server keeps (FCGI_KEEP_CONN) serves request
 *     after request;
 *   - an answer given before the request body's end closes the
 *     connection after a bounded lingering read, though the body still
 *     trickles in (libfcgi's own would read for as long as it comes);
 *   - SIGTERM ends the server, status 0, though connections that send
 *     nothing are still open, and a handler is blocked writing a response
 *     in small pieces that the web server does not read;
 *   - the listening socket outlives the stop (systemd keeps it for the
 *     next start), and the next start serves it.
 * Nothing is timed: a reply either comes (within PEER_WAIT_MS) or not.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fcgi_peer.h"

static int hold_fd = -1;	/* /held waits here for one byte */

static void
handler(struct http_req *r, void *arg)
{
	const char	*path = http_path(r);
	char		 c;

	(void)arg;
	if (strcmp(path, "/held") == 0 && read(hold_fd, &c, 1) != 1)
		_exit(5);
	/* /early answers without reading its body. */
	/* /flood writes until a write fails; nobody reads it. */
	if (strcmp(path, "/flood") == 0) {
		static const char line[] = "0123456789abcdef0123456789abcdef\n";
		int i;

		http_status(r, 200);
		for (i = 0; i < (64 << 20) / (int)sizeof(line); i++)
			if (http_puts(r, line) == -1)
				return;
		return;
	}
	http_send(r, 200, "text/plain", path, strlen(path));
}

/* GET path; its answer holds the path as the body. */
static bool
answered(int fd, const char *path)
{
	char	buf[4096];

	return fd != -1 && peer_response(fd, buf, sizeof(buf)) == 0 &&
	    strstr(buf, "\r\n\r\n") != NULL &&
	    strcmp(strstr(buf, "\r\n\r\n") + 4, path) == 0;
}

static bool
get(const char *sock, const char *path)
{
	int	fd = peer_get(sock, path);
	bool	ok = answered(fd, path);

	if (fd != -1)
		close(fd);
	return ok;
}

/*
 * POST path with a body of a megabyte announced and 10 bytes of it sent:
 * the connection, or -1.
 */
static int
post_open(const char *sock, const char *path)
{
	unsigned char	 req[512];
	size_t		 o, len;
	int		 fd;

	if ((fd = peer_connect(sock)) == -1)
		return -1;
	peer_record(req, 1, 8);			/* FCGI_BEGIN_REQUEST */
	memset(req + 8, 0, 8);
	req[9] = 1;				/* FCGI_RESPONDER */
	o = 16;
	len = peer_param(req + o + 8, "REQUEST_METHOD", "POST");
	len += peer_param(req + o + 8 + len, "REQUEST_URI", path);
	len += peer_param(req + o + 8 + len, "CONTENT_LENGTH", "1000000");
	peer_record(req + o, 4, len);		/* FCGI_PARAMS */
	o += 8 + len;
	peer_record(req + o, 4, 0);
	o += 8;
	peer_record(req + o, 5, 10);		/* FCGI_STDIN, 10 bytes */
	memset(req + o + 8, 'x', 10);
	o += 8 + 10;
	if (write(fd, req, o) != (ssize_t)o) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Keep sending a byte of body every 100 ms, for at most PEER_WAIT_MS,
 * until the server closes the connection (a write fails; its shutdown of
 * the way back alone, the start of a lingering close, does not count):
 * true when it does.
 */
static bool
closed_while_trickling(int fd)
{
	unsigned char	rec[9];
	int		waited;

	peer_record(rec, 5, 1);
	rec[8] = 'x';
	for (waited = 0; waited < PEER_WAIT_MS; waited += 100) {
		if (write(fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec))
			return true;
		usleep(100 * 1000);
	}
	return false;
}

/* Threads of a process, from /proc. */
static int
threads(pid_t pid)
{
	char	 path[64], line[256];
	FILE	*f;
	int	 n = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Threads:", 8) == 0)
			n = (int)strtol(line + 8, NULL, 10);
	fclose(f);
	return n;
}

int
main(void)
{
	char	 dir[] = "/tmp/cs-test-pool-XXXXXX", sock[64];
	int	 lfd, again, hold[2], silent, partial, held, kept, early, flood, i;
	int	 most = 0;
	bool	 all = true;
	pid_t	 pid;

	signal(SIGPIPE, SIG_IGN);
	if (pipe(hold) == -1 || (lfd = peer_listen(dir, sock, sizeof(sock))) == -1) {
		CHECK(0, "set-up");
		return check_status();
	}
	hold_fd = hold[0];
	again = dup(lfd);	/* the listening socket, kept as systemd does */
	pid = peer_serve(lfd, handler, 4, hold[1]);
	close(hold[0]);

	CHECK(get(sock, "/first"), "a request is answered");

	silent = peer_connect(sock);
	partial = peer_connect(sock);
	CHECK(silent != -1 && partial != -1 && write(partial, "\1", 1) == 1,
	    "a silent connection and a partial begin record are made");
	CHECK(get(sock, "/after-silent"),
	    "a request after them is answered while they wait");

	held = peer_get(sock, "/held");
	CHECK(held != -1, "/held is sent");
	CHECK(get(sock, "/beside-held"),
	    "a request is answered while /held holds its thread");
	CHECK(write(hold[1], "g", 1) == 1 && answered(held, "/held"),
	    "/held is answered once it may go on");
	if (held != -1)
		close(held);

	for (i = 0; i < 200; i++) {
		int n = threads(pid);

		if (n > most)
			most = n;
		if (!get(sock, "/again"))
			all = false;
	}
	CHECK(all, "200 requests in turn are all answered");
	CHECK(most <= 2 + 4, "never more than nthreads workers");

	/* A connection the web server keeps brings request after request. */
	kept = peer_connect(sock);
	CHECK(kept != -1 && peer_send(kept, "/kept-1", 1) == 0 &&
	    answered(kept, "/kept-1") && peer_send(kept, "/kept-2", 1) == 0 &&
	    answered(kept, "/kept-2"),
	    "two requests on one kept connection are answered");

	/* An early answer, while the body trickles on. */
	early = post_open(sock, "/early");
	CHECK(answered(early, "/early"), "/early is answered before its body");
	CHECK(early != -1 && closed_while_trickling(early),
	    "its connection is closed though the body still trickles in");
	if (early != -1)
		close(early);

	/* A response the web server does not read: its writer blocks. */
	flood = peer_get(sock, "/flood");
	CHECK(flood != -1, "/flood is sent");
	usleep(200 * 1000);

	/*
	 * The silent connection, the partial one and the kept one, idle, are
	 * still open: the stop shuts them down rather than waiting for the
	 * body deadline (30 s, past PEER_WAIT_MS) or for ever.
	 */
	CHECK(peer_stop(pid), "SIGTERM ends the server, status 0, with "
	    "connections open that send nothing and a writer blocked");
	if (flood != -1)
		close(flood);
	close(silent);
	close(partial);
	if (kept != -1)
		close(kept);

	/* The next start, on the same listening socket. */
	pid = peer_serve(again, handler, 2, -1);
	CHECK(get(sock, "/next-start"), "the listening socket serves the next "
	    "start after a stop");
	CHECK(peer_stop(pid), "SIGTERM ends the next start too");
	unlink(sock);
	rmdir(dir);
	return check_status();
}
