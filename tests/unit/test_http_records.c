/*
 * test_http_records.c: a large response body over real FastCGI. http_serve
 * runs in a child on a unix socket; this process is the web server. The
 * body is written in pieces of many sizes, as is (put_direct) and held
 * (http_coalesce); it must arrive whole and in order, in FCGI_STDOUT records
 * of at most 32 KiB (FastCGI 1.0 §3.3), held bytes leaving at http_flush
 * and when the handler returns; and a write blocked on a web server that
 * reads nothing does not keep SIGTERM from ending the server.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "check.h"
#include "fcgi_peer.h"
#include "http/http.h"

#define RECORD_MAX	32768

/* The pieces the handler writes, then (after a flush and a go from us) the tail. */
static const size_t pieces[] = { 1, 100, 8191, 8192, 16384, 16384, 70000,
    131072, 200000, 262144, 300000, 5 };
static const size_t tail[] = { 5, 100000, 3 };
static int go_fd = -1;		/* the handler waits here after its flush */

static unsigned char
pattern(size_t i)
{
	return (unsigned char)(i * 131 + i / 7);
}

static size_t
sum(const size_t *a, size_t n)
{
	size_t t = 0, i;

	for (i = 0; i < n; i++)
		t += a[i];
	return t;
}

static void
write_pieces(struct http_req *r, const size_t *a, size_t n, size_t *pos)
{
	unsigned char	*buf;
	size_t		 i, k;

	for (i = 0; i < n; i++) {
		if ((buf = malloc(a[i])) == NULL)
			_exit(3);
		for (k = 0; k < a[i]; k++)
			buf[k] = pattern(*pos + k);
		if (http_write(r, buf, a[i]) == -1)
			_exit(4);
		*pos += a[i];
		free(buf);
	}
}

/* 64 MB, more than any socket holds, to a web server that reads nothing. */
static void
stall(struct http_req *r)
{
	static char	buf[256 * 1024];
	int		i;

	http_status(r, 200);
	http_header_add(r, "Content-Type", "application/octet-stream");
	http_coalesce(r);
	http_flush(r);
	for (i = 0; i < 256; i++)
		if (http_write(r, buf, sizeof(buf)) == -1)
			return;
}

static void
handler(struct http_req *r, void *arg)
{
	size_t	pos = 0;
	char	c;

	(void)arg;
	if (strcmp(http_path(r), "/stall") == 0) {
		stall(r);
		return;
	}
	http_status(r, 200);
	http_header_add(r, "Content-Type", "application/octet-stream");
	if (strcmp(http_path(r), "/held") == 0 && http_coalesce(r) != 0)
		_exit(6);	/* over FastCGI, it must take */
	write_pieces(r, pieces, sizeof(pieces) / sizeof(pieces[0]), &pos);
	http_flush(r);
	/* The web server has everything so far, or it would not say go. */
	if (read(go_fd, &c, 1) != 1)
		_exit(5);
	write_pieces(r, tail, sizeof(tail) / sizeof(tail[0]), &pos);
	/* No flush: what is held leaves when the handler returns. */
}

/*
 * One request for path; the body as it arrived, the largest record seen.
 * go: the pipe the handler waits on, written once the first part is here.
 */
static int
request(const char *sock, const char *path, int go, unsigned char **body,
    size_t *blen, size_t *maxrec, size_t *nrec, bool *flushed)
{
	unsigned char		 hdr[8], *all = NULL;
	size_t			 n = 0, o, len, cap = 0, first;
	int			 fd, rc = -1;
	char			*end;

	*body = NULL;
	*blen = *maxrec = *nrec = 0;
	*flushed = false;
	first = sum(pieces, sizeof(pieces) / sizeof(pieces[0]));
	if ((fd = peer_get(sock, path)) == -1)
		return -1;
	for (;;) {
		if (peer_read_full(fd, hdr, 8) == -1)
			goto out;
		len = (size_t)hdr[4] << 8 | hdr[5];
		if (n + len + hdr[6] > cap) {
			unsigned char *p;

			cap = (n + len + hdr[6]) * 2;
			if ((p = realloc(all, cap)) == NULL)
				goto out;
			all = p;
		}
		if (peer_read_full(fd, all + n, len + hdr[6]) == -1)
			goto out;
		if (hdr[1] == 3)		/* FCGI_END_REQUEST */
			break;
		if (hdr[1] != 6)		/* FCGI_STDOUT only */
			continue;
		if (len > *maxrec)
			*maxrec = len;
		if (len > 0)
			(*nrec)++;
		n += len;
		/* The first part and the headers are all here: let the handler go on. */
		if (!*flushed && all != NULL && (end = memmem(all, n, "\r\n\r\n", 4)) != NULL &&
		    n - (size_t)(end + 4 - (char *)all) >= first) {
			*flushed = true;
			if (write(go, "g", 1) != 1)
				goto out;
		}
	}
	if (all == NULL || (end = memmem(all, n, "\r\n\r\n", 4)) == NULL)
		goto out;
	o = (size_t)(end + 4 - (char *)all);
	if ((*body = malloc(n - o + 1)) == NULL)
		goto out;
	memcpy(*body, all + o, n - o);
	*blen = n - o;
	rc = 0;
out:
	free(all);
	close(fd);
	return rc;
}

/* Ask for /stall and read its first record only; the connection, or -1. */
static int
start_stall(const char *sock)
{
	unsigned char	hdr[8];
	int		fd;

	if ((fd = peer_get(sock, "/stall")) == -1)
		return -1;
	if (peer_read_full(fd, hdr, 8) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool
body_ok(const unsigned char *b, size_t len)
{
	size_t i;

	if (len != sum(pieces, sizeof(pieces) / sizeof(pieces[0])) +
	    sum(tail, sizeof(tail) / sizeof(tail[0])))
		return false;
	for (i = 0; i < len; i++)
		if (b[i] != pattern(i))
			return false;
	return true;
}

int
main(void)
{
	char			 dir[] = "/tmp/cs-test-http-XXXXXX", sock[64];
	unsigned char		*body;
	size_t			 blen, maxrec, nrec, full;
	bool			 flushed;
	int			 lfd, go[2];
	pid_t			 pid;
	const char		*paths[] = { "/direct", "/held" };
	int			 sfd;
	size_t			 i;

	signal(SIGPIPE, SIG_IGN);
	if (pipe(go) == -1 || (lfd = peer_listen(dir, sock, sizeof(sock))) == -1) {
		CHECK(0, "set-up");
		return check_status();
	}
	go_fd = go[0];
	pid = peer_serve(lfd, handler, 1, go[1]);
	close(go[0]);
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char name[128];

		body = NULL;
		snprintf(name, sizeof(name), "%s: the response arrives", paths[i]);
		CHECK(request(sock, paths[i], go[1], &body, &blen, &maxrec,
		    &nrec, &flushed) == 0, name);
		snprintf(name, sizeof(name), "%s: the bytes flushed arrive before "
		    "the handler goes on", paths[i]);
		CHECK(flushed, name);
		snprintf(name, sizeof(name), "%s: every byte, in order, the held "
		    "tail too", paths[i]);
		CHECK(body != NULL && body_ok(body, blen), name);
		snprintf(name, sizeof(name), "%s: records of at most 32 KiB, "
		    "the largest full (%zu)", paths[i], maxrec);
		CHECK(maxrec == RECORD_MAX, name);
		free(body);
		/*
		 * Unheld, each piece ends a record (8 KiB ones through libfcgi's
		 * buffer); held, a record is cut short only where a write left:
		 * the flush, the end, and the three pieces of 128 KiB or more that
		 * leave from the caller's buffer.
		 */
		full = (sum(pieces, sizeof(pieces) / sizeof(pieces[0])) +
		    RECORD_MAX - 1) / RECORD_MAX + (sum(tail, sizeof(tail) /
		    sizeof(tail[0])) + RECORD_MAX - 1) / RECORD_MAX;
		snprintf(name, sizeof(name), "%s: %zu records for %zu full ones",
		    paths[i], nrec, full);
		CHECK(i == 0 ? nrec > full + 6 : nrec <= full + 4, name);
	}
	/*
	 * A web server that stops reading: the handler blocks in a write.
	 * SIGTERM must still end the server (the write gives up within a
	 * second, well within PEER_WAIT_MS), not wait for the web server.
	 */
	CHECK((sfd = start_stall(sock)) != -1, "/stall: the response starts");
	CHECK(peer_stop(pid),
	    "SIGTERM ends the server, a write blocked on a stalled web server too");
	if (sfd != -1)
		close(sfd);
	unlink(sock);
	rmdir(dir);
	return check_status();
}
