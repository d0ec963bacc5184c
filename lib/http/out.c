/*
 * out.c: the response's bytes to the web server. Small writes go through
 * libfcgi's stream buffer; large ones (put_direct) and coalesced ones
 * (http_coalesce) as FCGI_STDOUT records written straight from the
 * caller's buffer; every write has a stall deadline, and a stop cuts a
 * blocked one. The end of a request (out_finish) closes the connection
 * plainly or with a bounded lingering close.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "base/clock.h"
#include "http/extern.h"
#include "http/http.h"

#define LINGER_MS	2000		/* a lingering close, in all */

/*
 * Large writes over FastCGI skip libfcgi's 8 KiB stream buffer: what it
 * holds is flushed, then the bytes go out as FCGI_STDOUT records (FastCGI
 * 1.0 §3.3: a 16-bit content length) of up to RECORD_MAX bytes, up to
 * RECORDS_PER_CALL records to a writev call, straight from the caller's
 * buffer. Smaller writes (headers, SSE events) still go through the buffer.
 *
 * The record size suits both web servers' reading of the records
 * (the figures are in docs/performance.md, "Downloads"):
 *   - lighttpd (1.4, http_chunk.c) keeps at most 64 KiB of a response in
 *     memory, appending each record it completes; a record that does not
 *     fit beside what it holds goes to a temporary file, and so does all
 *     that follows until its queue drains. With 64 KiB records nearly every
 *     record did; with 32 KiB records almost none do.
 *   - Caddy's FastCGI transport reads each record's 8-byte header with a
 *     read of its own, then copies the content through a 32 KiB buffer:
 *     about 3 system calls a record, so 16 KiB records cost it twice as
 *     many as 32 KiB ones; 64 KiB ones measured no better.
 *
 * The connection's send buffer is then made small (DIRECT_SNDBUF), for
 * lighttpd: it reads up to 64 KiB less what it holds, so a large send
 * buffer lets a read complete more than the window and the download goes
 * through temporary files, at a cost in lighttpd's CPU. With 32 KiB
 * asked (the kernel doubles it) each read stays within the window; a
 * smaller one doubles lighttpd's reads, and costs lighttpd and dl more
 * CPU. Caddy ("Caddy/" in SERVER_SOFTWARE, which its FastCGI
 * transport always sends) holds no window: with the kernel's default send
 * buffer it finds whole records at each read rather than waiting on half
 * ones, and spends less CPU, its own and dl's, than with the small
 * buffer. Any other server gets the small buffer, which is safe with
 * every way of buffering. (lighttpd's SERVER_SOFTWARE is its server.tag,
 * which the operator sets, so it is not looked for.)
 */
/*
 * A write that makes no progress for DIRECT_STALL_S seconds ends the
 * response: lighttpd cuts a client that reads nothing for as long
 * (server.max-write-idle), Caddy never would. On SIGTERM a blocked write
 * gives up within DIRECT_WAIT seconds. 0, or -1 with the request marked
 * gone.
 */
#define DIRECT_STALL_S	600
#define DIRECT_WAIT	1
#define DIRECT_MIN	8192
#define DIRECT_SNDBUF	32768
#define RECORD_MAX	32768
#define RECORDS_PER_CALL 16
#define FCGI_STDOUT_TYPE 6

/*
 * libfcgi's own writes (its buffer, the end records) have no deadline: a
 * web server that stops reading (Caddy, whose client stopped) would hold
 * the worker for ever. Past SNDTIMEO_AFTER bytes of a response (less fits
 * the connection's send buffer and never blocks) the connection gets
 * DIRECT_STALL_S as its send timeout, and a write stalled that long fails;
 * and while in such a write the thread is marked, for a stop to interrupt
 * it after a grace (pool_wake).
 */
#define SNDTIMEO_AFTER	(32 * 1024)

static void
stall_deadline(struct http_req *r)
{
	struct timeval stall = { DIRECT_STALL_S, 0 };

	/* FastCGI only: plain CGI writes to its stdout, no socket of ours. */
	if (r->sndtimeo || r->fcgx.out == NULL || r->fcgx.ipcFd < 0)
		return;
	r->sndtimeo = true;
	(void)setsockopt(r->fcgx.ipcFd, SOL_SOCKET, SO_SNDTIMEO, &stall,
	    sizeof(stall));
}

static void
writing(struct http_req *r, bool on)
{
	if (r->slot != NULL)
		atomic_store(&r->slot->writing, on);
}

/* libfcgi's FCGX_FFlush, marked: 0, or -1 with the request gone. */
static int
fcgi_flush(struct http_req *r)
{
	int rc;

	writing(r, true);
	rc = FCGX_FFlush(r->out);
	writing(r, false);
	if (rc != 0) {
		r->gone = true;
		return -1;
	}
	return 0;
}

static int
put_direct(struct http_req *r, const char *p, size_t len)
{
	unsigned char	 hdr[RECORDS_PER_CALL][8];
	struct iovec	 iov[RECORDS_PER_CALL * 2];
	struct timeval	 wait = { DIRECT_WAIT, 0 };
	struct timeval	 stall = { DIRECT_STALL_S, 0 };
	time_t		 last = time(NULL);
	int		 rc;

	if (fcgi_flush(r) == -1)
		return -1;
	/*
	 * A blocked write wakes every DIRECT_WAIT seconds to look at the stop
	 * flag and the stall deadline. Only here: libfcgi's own writes (the
	 * end records) would take an error for so short a timeout, so theirs
	 * is DIRECT_STALL_S again after (stall_deadline).
	 */
	(void)setsockopt(r->fcgx.ipcFd, SOL_SOCKET, SO_SNDTIMEO, &wait,
	    sizeof(wait));
	if (!r->direct) {
		const char	*sw = http_param(r, "SERVER_SOFTWARE");
		int		 sz = DIRECT_SNDBUF;

		r->direct = true;
		if (sw == NULL || strncmp(sw, "Caddy/", 6) != 0)
			(void)setsockopt(r->fcgx.ipcFd, SOL_SOCKET, SO_SNDBUF,
			    &sz, sizeof(sz));
	}
	while (len > 0) {
		size_t	 i, n = 0, k;
		int	 niov = 0, first = 0;
		ssize_t	 w;

		for (i = 0; i < RECORDS_PER_CALL && n < len; i++) {
			k = len - n > RECORD_MAX ? RECORD_MAX : len - n;
			hdr[i][0] = 1;				/* FCGI_VERSION_1 */
			hdr[i][1] = FCGI_STDOUT_TYPE;
			hdr[i][2] = (unsigned char)((r->fcgx.requestId >> 8) & 0xff);
			hdr[i][3] = (unsigned char)(r->fcgx.requestId & 0xff);
			hdr[i][4] = (unsigned char)(k >> 8);
			hdr[i][5] = (unsigned char)(k & 0xff);
			hdr[i][6] = 0;				/* no padding */
			hdr[i][7] = 0;
			iov[niov].iov_base = hdr[i];
			iov[niov++].iov_len = 8;
			iov[niov].iov_base = (void *)(p + n);
			iov[niov++].iov_len = k;
			n += k;
		}
		/* All of these records, resuming after a short write. */
		while (first < niov) {
			w = writev(r->fcgx.ipcFd, iov + first, niov - first);
			if (w == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				/* A second without progress (DIRECT_WAIT). */
				if (http_stopping() ||
				    time(NULL) - last >= DIRECT_STALL_S)
					goto stalled;
				continue;
			}
			if (w == -1 && errno == EINTR)
				continue;
			if (w <= 0)
				goto fail;
			last = time(NULL);
			while (first < niov && (size_t)w >= iov[first].iov_len)
				w -= (ssize_t)iov[first++].iov_len;
			if (first < niov) {
				iov[first].iov_base = (char *)iov[first].iov_base + w;
				iov[first].iov_len -= (size_t)w;
			}
		}
		p += n;
		len -= n;
	}
	rc = 0;
	goto out;
stalled:
	/*
	 * The web server takes nothing (its client stalled) and we stop, or
	 * the stall outlived DIRECT_STALL_S: the connection is cut both ways,
	 * so libfcgi's end records fail at once rather than wait too, and the
	 * web server ends the response short.
	 */
	(void)shutdown(r->fcgx.ipcFd, SHUT_RDWR);
fail:
	r->gone = true;
	rc = -1;
out:
	(void)setsockopt(r->fcgx.ipcFd, SOL_SOCKET, SO_SNDTIMEO, &stall,
	    sizeof(stall));
	r->sndtimeo = true;
	return rc;
}

/*
 * Coalescing (http_coalesce): the caller's pieces are gathered in r->bulk
 * and leave as one put_direct of up to COALESCE_MAX bytes, so the number of
 * writes and records does not depend on how the bytes came in (the engine
 * sends a download in chunks of 32 KiB). A piece of half the buffer or
 * more, with nothing held, leaves from the caller's buffer without a copy.
 * The copy is worth it behind lighttpd too, whose connection has a small
 * send buffer: sending each 32 KiB piece as its own write, without the
 * copy, cost lighttpd and dl more CPU per GB (docs/performance.md).
 */
#define COALESCE_MAX	(256 * 1024)

static bool
can_direct(const struct http_req *r)
{
	return r->out != NULL && r->out == r->fcgx.out && r->fcgx.ipcFd >= 0;
}

int
out_flush_held(struct http_req *r)
{
	size_t n = r->bulk_len;

	if (n == 0)
		return 0;
	r->bulk_len = 0;
	if (r->gone || !can_direct(r) || put_direct(r, r->bulk, n) == -1) {
		r->gone = true;
		return -1;
	}
	return 0;
}

static int
put_bulk(struct http_req *r, const char *p, size_t len)
{
	if (r->bulk_len > 0 && r->bulk_len + len > COALESCE_MAX &&
	    out_flush_held(r) == -1)
		return -1;
	if (r->bulk_len == 0 && len >= COALESCE_MAX / 2)
		return put_direct(r, p, len);
	memcpy(r->bulk + r->bulk_len, p, len);
	r->bulk_len += len;
	return r->bulk_len == COALESCE_MAX ? out_flush_held(r) : 0;
}

int
http_coalesce(struct http_req *r)
{
	if (r->bulk != NULL)
		return 0;
	if (r->gone || !can_direct(r) ||
	    (r->bulk = malloc(COALESCE_MAX)) == NULL)
		return -1;
	r->bulk_len = 0;
	return 0;
}

static int
put(struct http_req *r, const void *buf, size_t len)
{
	const char *p = buf;

	if (r->gone)
		return -1;
	if (r->bulk != NULL && can_direct(r))
		return put_bulk(r, p, len);
	if (len >= DIRECT_MIN && can_direct(r))
		return put_direct(r, p, len);
	while (len > 0) {
		int	chunk = len > 65536 ? 65536 : (int)len;
		/* libfcgi writes only when its buffer runs out. */
		bool	fills = r->out->stop - r->out->wrNext < chunk, ok;

		r->out_bytes += (size_t)chunk;
		if (r->out_bytes > SNDTIMEO_AFTER)
			stall_deadline(r);
		if (fills)
			writing(r, true);
		ok = FCGX_PutStr(p, chunk, r->out) == chunk;
		if (fills)
			writing(r, false);
		if (!ok) {
			r->gone = true;
			return -1;
		}
		p += chunk;
		len -= (size_t)chunk;
	}
	return 0;
}

int
out_start(struct http_req *r)
{
	char	 line[64];
	size_t	 i;

	if (r->started)
		return r->gone ? -1 : 0;
	r->started = true;
	snprintf(line, sizeof(line), "Status: %d %s\r\n", r->status,
	    http_reason(r->status));
	if (put(r, line, strlen(line)) == -1)
		return -1;
	for (i = 0; i < r->nheaders; i++) {
		if (put(r, r->hname[i], strlen(r->hname[i])) == -1 ||
		    put(r, ": ", 2) == -1 ||
		    put(r, r->hvalue[i], strlen(r->hvalue[i])) == -1 ||
		    put(r, "\r\n", 2) == -1)
			return -1;
	}
	return put(r, "\r\n", 2);
}

int
http_write(struct http_req *r, const void *buf, size_t len)
{
	if (out_start(r) == -1)
		return -1;
	return put(r, buf, len);
}

int
http_puts(struct http_req *r, const char *s)
{
	return http_write(r, s, strlen(s));
}

int
http_flush(struct http_req *r)
{
	if (out_start(r) == -1 || out_flush_held(r) == -1)
		return -1;
	return fcgi_flush(r);
}

/* libfcgi's FCGX_Finish_r (the end records, maybe the close), marked. */
static void
fcgi_finish(struct http_req *r)
{
	writing(r, true);
	FCGX_Finish_r(&r->fcgx);
	writing(r, false);
	r->rcvtimeo_ms = 0;
}

/*
 * End the FastCGI request. A connection is closed with a lingering close,
 * so that input still unread cannot reset it before the web server has
 * read the response. When the input was read to its end, nothing more can
 * come, and a plain close does: three system calls and a wait less per
 * request (libfcgi closes plainly a request marked detached, fcgiapp.h,
 * and clears the mark with it).
 */
void
out_finish(struct http_req *r)
{
	char		 trash[16384];
	struct pollfd	 p;
	long long	 until;
	int		 left;

	r->out_bytes = 0;
	/* A kept connection reads the next request without a deadline. */
	if (r->fcgx.keepConnection) {
		body_rcvtimeo(r, 0);
		fcgi_finish(r);
		return;
	}
	if (r->fcgx.in != NULL && r->fcgx.in->isClosed &&
	    FCGX_GetError(r->fcgx.in) == 0) {
		r->fcgx.detached = 1;
		fcgi_finish(r);
		return;
	}
	/*
	 * Input left unread (an answer given before the body's end): the
	 * lingering close is ours, LINGER_MS in all and cut by a stop.
	 * libfcgi's waits 2 s a read for as long as bytes trickle in, which
	 * a client behind a web server that forwards the body as it comes
	 * (Caddy) could make last for ever. The connection is kept open past
	 * FCGX_Finish_r (its end records sent) by marking it kept; after a
	 * write error libfcgi closes it, plainly (detached).
	 */
	r->fcgx.keepConnection = 1;
	r->fcgx.detached = 1;
	fcgi_finish(r);
	r->fcgx.detached = 0;
	if (r->fcgx.ipcFd < 0)
		return;
	p.fd = r->fcgx.ipcFd;
	p.events = POLLIN;
	until = clock_ms() + LINGER_MS;
	if (shutdown(p.fd, SHUT_WR) == 0)
		while (!http_stopping() && (left = (int)(until - clock_ms())) > 0 &&
		    poll(&p, 1, left) == 1 && read(p.fd, trash, sizeof(trash)) > 0)
			;
	close(p.fd);
	r->fcgx.ipcFd = -1;
}

void
http_end(struct http_req *r)
{
	if (r->ended)
		return;
	if (!r->started)
		http_send_error(r, 500, "The handler sent no response.");
	if (!r->gone && out_flush_held(r) == 0)
		(void)fcgi_flush(r);
	if (r->fcgx.out == NULL) {
		int fd;

		/*
		 * Plain CGI: the response ends when the web server sees the end
		 * of our stdout, so it goes to /dev/null from here on.
		 */
		if ((fd = open("/dev/null", O_WRONLY)) != -1) {
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
		r->ended = r->gone = true;
		return;
	}
	/*
	 * The web server gets the end of the response now; the request's
	 * streams and parameters are freed, so every later read or write of
	 * this request finds nothing (gone, no headers).
	 */
	out_finish(r);
	r->ended = r->gone = true;
	r->envp = NULL;
	r->in = r->out = NULL;
}

/*
 * Besides a failed write, a web server that closed the FastCGI connection
 * (both ways: POLLHUP) has dropped the request: lighttpd does so as soon
 * as the client goes, Caddy once a write to the client failed. Seen here
 * without waiting for a write of our own to fail.
 */
bool
http_gone(struct http_req *r)
{
	struct pollfd p;

	if (!r->gone && r->fcgx.out != NULL && r->fcgx.ipcFd >= 0) {
		p.fd = r->fcgx.ipcFd;
		p.events = 0;
		p.revents = 0;
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR)))
			r->gone = true;
	}
	return r->gone;
}

bool
http_started(struct http_req *r)
{
	return r->started;
}
