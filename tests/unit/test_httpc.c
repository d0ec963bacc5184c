/*
 * test_httpc.c: the HTTP/1.1 client's parsers (lib/base/httpc_parse.c, httpc.c): the response
 * head, the chunked decoder, and a body read through a real unix socket,
 * with the kept connection reused and a closed one noticed.
 * Prints "ok - name" or "not ok - name" per check; exits 1 on any failure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/httpc.h"
#include "check.h"
#include "unix_listen.h"

static long
head(const char *s, struct httpc_head *h)
{
	return httpc_head_parse(s, strlen(s), h, NULL, NULL);
}

static int
count_lines(void *arg, const char *line, size_t len)
{
	(void)line;
	(void)len;
	++*(int *)arg;
	return 0;
}

static void
test_head(void)
{
	struct httpc_head	 h;
	char			*big;
	const char		*ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 12\r\n\r\n{\"a\":1}";
	size_t			 i, olen;
	int			 lines = 0;
	bool			 prefixes = true;

	CHECK(head(ok, &h) == (long)(strlen(ok) - 7), "head: length to the blank line");
	CHECK(h.status == 200 && h.framing == HTTPC_LENGTH && h.length == 12 &&
	    h.json && !h.close, "head: status, length, JSON, kept");
	for (i = 0; i < strlen(ok) - 7; i++)
		if (httpc_head_parse(ok, i, &h, NULL, NULL) != 0)
			prefixes = false;
	CHECK(prefixes, "head: every prefix asks for more");
	CHECK(httpc_head_parse(ok, strlen(ok), &h, count_lines, &lines) > 0 &&
	    lines == 2, "head: each header line to the callback");
	CHECK(head("HTTP/1.1 204\r\n\r\n", &h) == 16 && h.status == 204 &&
	    h.framing == HTTPC_NONE && !h.close, "head: no reason, 204 has no body");
	CHECK(head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", &h) > 0 &&
	    h.framing == HTTPC_CHUNKED, "head: chunked");
	CHECK(head("HTTP/1.1 200 OK\r\n\r\n", &h) > 0 && h.framing == HTTPC_CLOSE &&
	    h.close, "head: no framing reads to the end, not kept");
	CHECK(head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", &h) > 0 &&
	    h.close, "head: HTTP/1.0 is not kept");
	CHECK(head("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\n"
	    "Content-Length: 0\r\n\r\n", &h) > 0 && h.close, "head: Connection: close");
	CHECK(head("HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n",
	    &h) > 0 && h.status == 101 && h.framing == HTTPC_NONE && h.close,
	    "head: 101 switches, never kept");
	CHECK(head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", &h) > 0 &&
	    (httpc_framing(&h, true), h.framing == HTTPC_NONE) && !h.close,
	    "head: an answer to HEAD has no body");

	CHECK(head("HTTP/2 200 OK\r\n\r\n", &h) == -1, "head: not HTTP/1.x");
	CHECK(head("HTTP/1.1 099 X\r\n\r\n", &h) == -1, "head: status below 100");
	CHECK(head("HTTP/1.1 2000 X\r\n\r\n", &h) == -1, "head: four digits");
	CHECK(head("HTTP/1.1  200 X\r\n\r\n", &h) == -1, "head: two spaces");
	CHECK(httpc_head_parse("HTTP/1.1 200 O\0K\r\n\r\n", 20, &h, NULL, NULL) == -1,
	    "head: NUL refused");
	CHECK(httpc_head_parse("HTTP/1.1 20\0", 12, &h, NULL, NULL) == -1,
	    "head: NUL refused before the head is complete");
	CHECK(head("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n", &h) == -1, "head: no colon");
	CHECK(head("HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", &h) == -1,
	    "head: folded line refused");
	CHECK(head("HTTP/1.1 200 OK\r\nA: b\nC: d\r\n\r\n", &h) == -1, "head: bare LF");
	CHECK(head("HTTP/1.1 200 OK\r\nA: b\x01\r\n\r\n", &h) == -1, "head: control byte");
	CHECK(head("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
	    &h) == -1, "head: repeated Content-Length");
	CHECK(head("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", &h) == -1,
	    "head: Content-Length list");
	CHECK(head("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", &h) == -1,
	    "head: negative Content-Length");
	CHECK(head("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
	    &h) == -1, "head: Content-Length overflow");
	CHECK(head("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775808\r\n\r\n",
	    &h) == -1, "head: Content-Length past 2^63-1");
	CHECK(head("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", &h) == -1,
	    "head: other transfer codings refused");
	CHECK(head("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	    "Content-Length: 3\r\n\r\n", &h) == -1, "head: both framings refused");

	big = malloc(HTTPC_HEAD_MAX + 64);
	memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
	memset(big + 20, 'a', HTTPC_HEAD_MAX);
	CHECK(httpc_head_parse(big, HTTPC_HEAD_MAX, &h, NULL, NULL) == -1,
	    "head: longer than the maximum");
	CHECK(httpc_head_parse(big, HTTPC_HEAD_MAX - 1, &h, NULL, NULL) == 0,
	    "head: just under the maximum asks for more");
	olen = 0;
	olen += (size_t)snprintf(big, 64, "HTTP/1.1 200 OK\r\n");
	for (i = 0; i <= HTTPC_HEADERS_MAX; i++)
		olen += (size_t)snprintf(big + olen, 64, "A: b\r\n");
	snprintf(big + olen, 64, "\r\n");
	CHECK(head(big, &h) == -1, "head: too many header lines");
	free(big);
}

/* Decode s fed in pieces of step bytes; the data into out. */
static int
chunked(const char *s, size_t len, size_t step, char *out, size_t *olen)
{
	struct httpc_chunked	 ch;
	const char		*d;
	size_t			 off = 0, n, used, dl, end = 0;
	int			 rc = 0;

	httpc_chunked_init(&ch);
	*olen = 0;
	while (end < len) {
		end = end + step < len ? end + step : len;
		while (off < end) {
			rc = httpc_chunked_step(&ch, s + off, end - off, &used, &d, &dl);
			off += used;
			if (rc == -1 || rc == 2)
				return rc;
			if (rc == 1) {
				memcpy(out + *olen, d, dl);
				*olen += dl;
			}
			n = used;
			if (rc == 0 && n == 0)
				break;
		}
	}
	return 0;	/* all used, more needed */
}

#define CHUNKED(s)	chunked((s), sizeof(s) - 1, sizeof(s) - 1, out, &olen)

static void
test_chunked(void)
{
	static const char body[] = "5\r\nhello\r\n7;ext=\"x\"\r\n, world\r\n"
	    "A\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\nNEXT";
	char		out[256], big[64];
	size_t		olen, step;
	bool		all = true;

	for (step = 1; step <= sizeof(body); step++) {
		if (chunked(body, sizeof(body) - 1, step, out, &olen) != 2 ||
		    olen != 22 || memcmp(out, "hello, world0123456789", 22) != 0)
			all = false;
	}
	CHECK(all, "chunked: the same data however the bytes are split");
	CHECK(CHUNKED("0\r\n\r\n") == 2 && olen == 0,
	    "chunked: empty body");
	CHECK(CHUNKED("5\r\nhel") == 0 && olen == 3,
	    "chunked: a partial chunk asks for more");
	CHECK(CHUNKED("\r\n") == -1, "chunked: no size");
	CHECK(CHUNKED("g\r\n") == -1, "chunked: not hex");
	CHECK(CHUNKED("5\r\nhelloX\r\n") == -1,
	    "chunked: no CRLF after the data");
	CHECK(CHUNKED("5\nhello\r\n") == -1,
	    "chunked: bare LF after the size");
	CHECK(CHUNKED("1000000000000000\r\n") == -1,
	    "chunked: a size of 16 hex digits refused (overflow)");
	CHECK(CHUNKED("ffffffffffffffffffff\r\n") == -1,
	    "chunked: a size past 64 bits refused");
	memset(big, 'x', sizeof(big));
	{
		char	*line = malloc(HTTPC_CHUNK_LINE_MAX + 16);

		memcpy(line, "1;", 2);
		memset(line + 2, 'e', HTTPC_CHUNK_LINE_MAX);
		CHECK(chunked(line, HTTPC_CHUNK_LINE_MAX + 2, 100, out, &olen) == -1,
		    "chunked: a size line too long");
		free(line);
	}
	CHECK(CHUNKED("1\r\nx\r\n0\r\nA: \x01\r\n\r\n") == -1,
	    "chunked: control byte in a trailer");
}

/* The peer's side: send s whole. */
static bool
put(int fd, const char *s, size_t n)
{
	return write(fd, s, n) == (ssize_t)n;
}

static int
read_all(struct httpc_conn *c, struct httpc_head *h, char *out, size_t *olen,
    bool *empty)
{
	struct httpc_body	 b;
	struct error		 err;
	const char		*p;
	size_t			 n;
	int			 rc;

	*olen = 0;
	while ((rc = httpc_read_head(c, h, false, NULL, NULL, 2000, empty, &err)) == 0)
		;
	if (rc != 1)
		return -1;
	httpc_body_init(&b, c, h);
	while ((rc = httpc_body_next(&b, &p, &n, 2000, &err)) != 2) {
		if (rc == -1)
			return -1;
		if (rc == 1) {
			memcpy(out + *olen, p, n);
			*olen += n;
		}
	}
	return 0;
}

static void
test_socket(void)
{
	static const char r1[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
	static const char r2[] = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
	struct httpc		*ep = NULL;
	struct httpc_conn	*c;
	struct httpc_head	 h;
	struct error		 err;
	char			 path[108], out[64];
	size_t			 olen;
	long long		 t0;
	bool			 reused, empty;
	int			 lfd, sfd;

	snprintf(path, sizeof(path), "/tmp/cs-httpc-%d.sock", (int)getpid());
	if ((lfd = unix_listen(path)) == -1 ||
	    httpc_new(path, NULL, NULL, NULL, NULL, NULL, &ep, &err) == -1) {
		CHECK(0, "socket: set up");
		return;
	}
	c = httpc_conn_get(ep, true, 0, clock_ms() + 2000, &reused, &err);
	sfd = accept(lfd, NULL, NULL);
	CHECK(c != NULL && !reused && sfd != -1, "socket: connected");
	if (c == NULL || sfd == -1)
		goto out;
	CHECK(httpc_write(c, "GET / HTTP/1.1\r\n\r\n", 18, 1000, NULL) == 18,
	    "socket: request sent");
	CHECK(put(sfd, r1, sizeof(r1) - 1), "socket: answer 1 written");
	CHECK(read_all(c, &h, out, &olen, &empty) == 0 && olen == 5 &&
	    memcmp(out, "hello", 5) == 0, "socket: Content-Length body");
	httpc_conn_put(ep, c, !h.close);
	c = httpc_conn_get(ep, true, 0, clock_ms() + 2000, &reused, &err);
	CHECK(c != NULL && reused, "socket: the kept connection is reused");
	CHECK(put(sfd, r2, sizeof(r2) - 1), "socket: answer 2 written");
	CHECK(read_all(c, &h, out, &olen, &empty) == 0 && h.status == 200 &&
	    olen == 3 && memcmp(out, "abc", 3) == 0,
	    "socket: interim 100 skipped, chunked body");
	httpc_conn_put(ep, c, !h.close);
	close(sfd);
	c = httpc_conn_get(ep, true, 0, clock_ms() + 2000, &reused, &err);
	CHECK(read_all(c, &h, out, &olen, &empty) == -1 && empty,
	    "socket: a kept connection the peer closed answers nothing");
	httpc_conn_close(c);

	c = httpc_conn_get(ep, false, 0, clock_ms() + 2000, &reused, &err);
	sfd = accept(lfd, NULL, NULL);
	t0 = clock_ms();
	CHECK(c != NULL && httpc_read_head(c, &h, false, NULL, NULL, 200, &empty,
	    &err) == 0 && clock_ms() - t0 < 2000, "socket: a silent peer: the wait ends");
	CHECK(put(sfd, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 42),
	    "socket: a short answer written");
	close(sfd);
	CHECK(read_all(c, &h, out, &olen, &empty) == -1,
	    "socket: a body cut short is an error");
	httpc_conn_close(c);
out:
	httpc_free(ep);
	close(lfd);
	unlink(path);
}

int
main(void)
{
	test_head();
	test_chunked();
	test_socket();
	return check_status();
}
