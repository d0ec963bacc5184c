/*
 * http.c: requests and responses over libfcgi, and the accept loop.
 *
 * Concurrency: up to nthreads threads serve requests, so a long streamed
 * response or a wait on the engine blocks only its own thread. At most one
 * thread waits in accept() at a time, and the thread that ends a request
 * takes the next itself when none waits: under load the next connection is
 * then already queued, and the same warm thread takes it without sleeping,
 * where a crowd of threads in accept() cost a sleep and a wake-up (two
 * thread switches) per request. The other idle threads wait on a condition.
 * The turn covers accept() alone; libfcgi then reads the web server's
 * records from the connection given to it, under the body deadline (a
 * connection the web server keeps waits for its next request without
 * one). A TCP listener gets libfcgi's own treatment: TCP_NODELAY, and the
 * FCGI_WEB_SERVER_ADDRS list.
 *
 * The signal thread watches the pool between signals. When for a whole
 * tick (POOL_TICK_NS) no thread has waited in accept() and either no
 * connection was taken or connections queue behind slow requests, every
 * thread is held: it lets a waiting thread take accept(), or starts one
 * more, until nthreads; one a tick (pool_watch). An idle server so keeps one thread (its
 * stack, its database connection, its malloc arena); a request that takes
 * longer than a tick lets the next one in after at most two. It sleeps
 * while a thread waits in accept() and nothing comes (the thread that
 * takes a connection wakes it with SIG_TAKEN) and while no thread can be
 * let in.
 *
 * Signals: SIGTERM, SIGINT and SIGHUP are blocked everywhere and taken by
 * that thread, which sets the stop flag, wakes the waiting threads, and
 * interrupts (SIG_WAKE, pool_wake) the one in accept() and those reading
 * a request's records (struct slot); libfcgi's own handler would let a
 * streaming request run forever. The listening socket is never shut down:
 * under systemd it outlives the process and serves the next start. An
 * accept() that fails for good stops the server the same way, and
 * http_serve returns 1 (a supervisor starts it again).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "base/clock.h"
#include "base/js.h"
#include "base/log.h"
#include "http/http.h"

#define MAX_HEADERS	32

struct slot;

struct http_req {
	FCGX_Request	 fcgx;
	struct slot	*slot;		/* its worker's (NULL: plain CGI) */
	size_t		 out_bytes;	/* through libfcgi's buffer */
	bool		 sndtimeo;	/* DIRECT_STALL_S set as send timeout */
	FCGX_Stream	*in, *out;
	FCGX_ParamArray	 envp;
	int		 status;
	char		*hname[MAX_HEADERS];
	char		*hvalue[MAX_HEADERS];
	size_t		 nheaders;
	bool		 started;
	bool		 gone;
	bool		 ended;		/* handed back early (http_end) */
	bool		 direct;	/* large writes began (put_direct) */
	long		 rcvtimeo_ms;	/* SO_RCVTIMEO set on the connection; 0 none */
	char		*bulk;		/* held body bytes (http_coalesce) */
	size_t		 bulk_len;
	char		*body;
	char		*path;
};

static atomic_bool	 stopping;
static atomic_bool	 serving_cgi = true;	/* until http_serve knows */
static atomic_int	 body_deadline = HTTP_BODY_DEADLINE;

#define THREAD_STACK	(512 * 1024)

#define POOL_TICK_NS	(1000 * 1000)	/* 1 ms */
#define POOL_QUICK	4		/* connections a thread takes a tick */
#define SIG_TAKEN	SIGUSR1		/* to the watch: a connection was taken */
#define SIG_WAKE	SIGUSR2		/* to a worker: leave a blocking call */
#define STOP_WAKE_NS	(10 * 1000 * 1000)	/* between two SIG_WAKEs */
#define STOP_WAKES	500		/* at most, on a stop: 5 s */
#define LINGER_MS	2000		/* a lingering close, in all */
#define STOP_WRITES	100		/* wakes before a write is cut: 1 s */

/*
 * A worker's place: the connection whose records it is reading (-1 none).
 * On SIGTERM the worker is woken from its read (SIG_WAKE), so that a web
 * server that sends nothing, or keeps an idle connection, does not hold
 * the stop back. The thread is signalled, never the descriptor shut down:
 * libfcgi may have closed it, and the number be another connection's.
 */
struct slot {
	struct serve_ctx	*ctx;
	int			 fd;
	atomic_bool		 writing;	/* in a write of libfcgi's */
};

/* The pool; every field under pool_lock. */
struct serve_ctx {
	http_handler	 handler;
	void		*arg;
	pthread_mutex_t	 pool_lock;
	pthread_cond_t	 turn;		/* an idle thread may take accept() */
	pthread_t	 watch;		/* the signal and watch thread */
	sigset_t	 sigs;		/* what it takes */
	pthread_t	*tids;
	int		 max;		/* nthreads */
	int		 started;	/* tids[0..started) to join */
	int		 waiting;	/* idle threads waiting for turn */
	bool		 accepting;	/* a thread is in accept() */
	pthread_t	 acceptor;	/* which, while accepting */
	bool		 calling;	/* a thread was let in, not yet there */
	bool		 watch_asleep;	/* the watch waits for SIG_TAKEN */
	bool		 failed;	/* accept() failed for good */
	bool		 tcp;		/* the listening socket is TCP */
	bool		 allow_set;	/* FCGI_WEB_SERVER_ADDRS is set */
	struct in_addr	 allow[16];	/* its IPv4 addresses */
	int		 nallow;
	struct slot	*slots;		/* one a worker: tids[i], slots[i] */
	time_t		 spawn_failed;	/* when a thread last failed to start */
	unsigned long	 taken;		/* connections accepted, ever */
};

bool
http_stopping(void)
{
	return atomic_load(&stopping);
}

bool
http_serving_cgi(void)
{
	return atomic_load(&serving_cgi);
}

const char *
http_param(struct http_req *r, const char *name)
{
	return FCGX_GetParam(name, r->envp);
}

const char *
http_method(struct http_req *r)
{
	const char *m = http_param(r, "REQUEST_METHOD");

	return m != NULL ? m : "GET";
}

const char *
http_path(struct http_req *r)
{
	const char	*uri;
	size_t		 n;

	if (r->path != NULL)
		return r->path;
	if ((uri = http_param(r, "REQUEST_URI")) == NULL) {
		/* Plain CGI servers may not pass REQUEST_URI. */
		const char *sn = http_param(r, "SCRIPT_NAME");
		const char *pi = http_param(r, "PATH_INFO");
		size_t a = sn ? strlen(sn) : 0, b = pi ? strlen(pi) : 0;

		if ((r->path = malloc(a + b + 1)) == NULL)
			return "/";
		memcpy(r->path, sn ? sn : "", a);
		memcpy(r->path + a, pi ? pi : "", b);
		r->path[a + b] = '\0';
		return r->path;
	}
	n = strcspn(uri, "?#");
	if ((r->path = strndup(uri, n)) == NULL)
		return "/";
	return r->path;
}

const char *
http_query(struct http_req *r)
{
	const char *q = http_param(r, "QUERY_STRING");

	return q != NULL ? q : "";
}

const char *
http_header(struct http_req *r, const char *name)
{
	char	 key[128];
	size_t	 i, o;

	if (strcasecmp(name, "Content-Type") == 0)
		return http_param(r, "CONTENT_TYPE");
	if (strcasecmp(name, "Content-Length") == 0)
		return http_param(r, "CONTENT_LENGTH");
	memcpy(key, "HTTP_", 5);
	for (i = 0, o = 5; name[i] != '\0' && o < sizeof(key) - 1; i++, o++)
		key[o] = name[i] == '-' ? '_' : (char)toupper((unsigned char)name[i]);
	key[o] = '\0';
	return http_param(r, key);
}

const char *
http_remote_addr(struct http_req *r)
{
	const char *a = http_param(r, "REMOTE_ADDR");

	return a != NULL ? a : "";
}

/*
 * The connection's read deadline (SO_RCVTIMEO), a system call only when it
 * changes. FastCGI only: in plain CGI there is no socket.
 */
static int
set_rcvtimeo(int fd, long ms)
{
	struct timeval	tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static void
rcvtimeo(struct http_req *r, long ms)
{
	if (r->fcgx.out == NULL || r->fcgx.ipcFd < 0 || r->rcvtimeo_ms == ms)
		return;
	if (set_rcvtimeo(r->fcgx.ipcFd, ms) == 0)
		r->rcvtimeo_ms = ms;
}

/*
 * A streamed body (uploads) may take as long as it takes to arrive, but
 * each read waits at most SANDBOX_BODY_DEADLINE seconds for the next
 * bytes: a stalled upload ends (0, short of its length) and frees the
 * worker. The wait is set again before every read, so it is an inactivity
 * deadline, not a total one as http_body's.
 */
long
http_read(struct http_req *r, void *buf, size_t len)
{
	int	n;

	if (len > INT_MAX)
		len = INT_MAX;
	/* The same wait each time: set once on the connection. */
	rcvtimeo(r, (long)atomic_load(&body_deadline) * 1000);
	n = FCGX_GetStr(buf, (int)len, r->in);
	return n > 0 ? n : 0;
}

int
http_content_length(struct http_req *r, unsigned long long *len)
{
	const char		*cl = http_param(r, "CONTENT_LENGTH");
	unsigned long long	 v = 0;
	size_t			 i;

	*len = 0;
	if (cl == NULL || *cl == '\0' || strcmp(cl, "-1") == 0)
		return 1;
	for (i = 0; cl[i] != '\0'; i++) {
		if (cl[i] < '0' || cl[i] > '9' || i >= 18)
			return -1;
		v = v * 10 + (unsigned)(cl[i] - '0');
	}
	*len = v;
	return 0;
}

int
http_body_read(const char *cl, size_t max, http_read_fn rd, void *arg,
    char **body, size_t *len, int *status)
{
	char		*buf, *end;
	long long	 want = -1;
	size_t		 have = 0, cap;
	int		 n;

	*body = NULL;
	*len = 0;
	if (max >= INT_MAX)
		max = INT_MAX - 1;
	/* Caddy passes a chunked body as CONTENT_LENGTH -1: length unknown. */
	if (cl != NULL && *cl != '\0' && strcmp(cl, "-1") != 0) {
		errno = 0;
		want = strtoll(cl, &end, 10);
		if (errno != 0 || *end != '\0' || want < -1 ||
		    !(*cl >= '0' && *cl <= '9')) {
			*status = 400;
			return -1;
		}
		if (want > (long long)max) {
			*status = 413;
			return -1;
		}
	}
	cap = want >= 0 ? (size_t)want + 1 : (max < 65536 ? max + 1 : 65536);
	if ((buf = malloc(cap)) == NULL) {
		*status = 500;
		return -1;
	}
	for (;;) {
		if (have + 1 >= cap) {
			char *nb;

			if (want >= 0 || cap > max + 1) {
				/*
				 * Known length: all of it is read. Unknown
				 * (a chunked body): the buffer holds max + 1
				 * bytes, so a body over max was refused.
				 */
				break;
			}
			cap = cap * 2 > max + 1 ? max + 2 : cap * 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				*status = 500;
				return -1;
			}
			buf = nb;
		}
		n = rd(arg, buf + have, (int)(cap - 1 - have));
		if (n < 0) {
			/* Cut, or stalled past the deadline. */
			free(buf);
			*status = 408;
			return -1;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have > max) {
			free(buf);
			*status = 413;
			return -1;
		}
	}
	if (want >= 0 && (long long)have != want) {
		free(buf);
		*status = 400;
		return -1;
	}
	buf[have] = '\0';
	*body = buf;
	*len = have;
	return 0;
}

/* The FastCGI body reader: each read bounded by what is left of the deadline. */
struct body_src {
	struct http_req	*r;
	struct timespec	 deadline;
};

static int
body_src_read(void *arg, char *buf, int n)
{
	struct body_src	*b = arg;
	struct timespec	 now;
	long long	 left_ms;
	int		 got;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left_ms = (long long)(b->deadline.tv_sec - now.tv_sec) * 1000 +
	    (b->deadline.tv_nsec - now.tv_nsec) / 1000000;
	if (left_ms <= 0)
		return -1;
	/*
	 * Set again only when the wait already set would overshoot what is
	 * left by more than a second: one system call for most bodies.
	 */
	if (b->r->rcvtimeo_ms == 0 || b->r->rcvtimeo_ms > left_ms + 1000)
		rcvtimeo(b->r, (long)left_ms);
	got = FCGX_GetStr(buf, n, b->r->in);
	if (got <= 0 && FCGX_GetError(b->r->in) != 0)
		return -1;
	return got;
}

void
http_set_body_deadline(int seconds)
{
	if (seconds > 0)
		atomic_store(&body_deadline, seconds);
}

int
http_body(struct http_req *r, size_t max, const char **body, size_t *len,
    int *status)
{
	struct body_src	 src;
	char		*buf, c;
	int		 rc;

	*body = NULL;
	*len = 0;
	src.r = r;
	clock_gettime(CLOCK_MONOTONIC, &src.deadline);
	src.deadline.tv_sec += atomic_load(&body_deadline);
	rc = http_body_read(http_param(r, "CONTENT_LENGTH"), max, body_src_read,
	    &src, &buf, len, status);
	/*
	 * FastCGI: read on to the end of the input stream (the empty
	 * FCGI_STDIN record, FastCGI 1.0 §5.3), which is almost always in
	 * libfcgi's buffer already. The connection can then be closed
	 * without lingering (finish below). More bytes than CONTENT_LENGTH
	 * are refused.
	 */
	if (rc == 0 && r->fcgx.out != NULL && !r->in->isClosed &&
	    body_src_read(&src, &c, 1) > 0) {
		free(buf);
		*status = 400;
		rc = -1;
	}
	if (rc == -1) {
		if (*status == 408)
			log_warn("request body cut: stalled or incomplete after "
			    "%d s at most", atomic_load(&body_deadline));
		return -1;
	}
	r->body = buf;
	*body = buf;
	return 0;
}

void
http_status(struct http_req *r, int status)
{
	r->status = status;
}

static bool
header_safe(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '\r' || *s == '\n')
			return false;
	return true;
}

void
http_headers_clear(struct http_req *r)
{
	size_t i;

	if (r->started)
		return;
	for (i = 0; i < r->nheaders; i++) {
		free(r->hname[i]);
		free(r->hvalue[i]);
	}
	r->nheaders = 0;
}

void
http_header_add(struct http_req *r, const char *name, const char *value)
{
	if (r->started || r->nheaders >= MAX_HEADERS) {
		log_warn("header %s dropped (%s)", name,
		    r->started ? "already sent" : "too many");
		return;
	}
	if (!header_safe(name) || !header_safe(value)) {
		log_warn("header %s dropped: CR or LF in value", name);
		return;
	}
	r->hname[r->nheaders] = strdup(name);
	r->hvalue[r->nheaders] = strdup(value);
	if (r->hname[r->nheaders] == NULL || r->hvalue[r->nheaders] == NULL) {
		free(r->hname[r->nheaders]);
		free(r->hvalue[r->nheaders]);
		return;
	}
	r->nheaders++;
}

/*
 * Large writes over FastCGI skip libfcgi's 8 KiB stream buffer: what it
 * holds is flushed, then the bytes go out as FCGI_STDOUT records (FastCGI
 * 1.0 §3.3: a 16-bit content length) of up to RECORD_MAX bytes, up to
 * RECORDS_PER_CALL records to a writev call, straight from the caller's
 * buffer. Smaller writes (headers, SSE events) still go through the buffer.
 *
 * The record size suits both web servers' reading of the records:
 *   - lighttpd (1.4, http_chunk.c) keeps at most 64 KiB of a response in
 *     memory, appending each record it completes; a record that does not
 *     fit beside what it holds goes to a temporary file, and so does all
 *     that follows until its queue drains. With 64 KiB records nearly every
 *     record did (3832 temporary files per GB); with 32 KiB records, 0 to
 *     3 MB of 500 MB (tests/bench/dl.mjs).
 *   - Caddy's FastCGI transport reads each record's 8-byte header with a
 *     read of its own, then copies the content through a 32 KiB buffer:
 *     about 3 system calls a record, so 16 KiB records (the pieces libcurl
 *     gave) cost it twice as many as 32 KiB ones; 64 KiB ones measured no
 *     better (caddy 1640 against 1380 ms of CPU per GB).
 *
 * The connection's send buffer is then made small (DIRECT_SNDBUF), for
 * lighttpd: it reads up to 64 KiB less what it holds, so a large send
 * buffer lets a read complete more than the window and the download goes
 * through temporary files (measured with 300 MB: 35 temporary files rather
 * than 2556, and about 40% less of lighttpd's CPU per GB). With 32 KiB
 * asked (the kernel doubles it) each read stays within the window; a
 * smaller one doubles lighttpd's reads (and measured 1.4x lighttpd's and
 * dl's CPU per GB). Caddy ("Caddy/" in SERVER_SOFTWARE, which its FastCGI
 * transport always sends) holds no window: with the kernel's default send
 * buffer it finds whole records at each read rather than waiting on half
 * ones, and spent 0.7x the CPU per GB (caddy 780 against 1120 ms, dl 540
 * against 660). Any other server gets the small buffer, which is safe with
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
 * copy, cost lighttpd and dl 1.18x the CPU per GB (tests/bench/dl.mjs).
 */
#define COALESCE_MAX	(256 * 1024)

static bool
can_direct(const struct http_req *r)
{
	return r->out != NULL && r->out == r->fcgx.out && r->fcgx.ipcFd >= 0;
}

static int
bulk_flush(struct http_req *r)
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
	    bulk_flush(r) == -1)
		return -1;
	if (r->bulk_len == 0 && len >= COALESCE_MAX / 2)
		return put_direct(r, p, len);
	memcpy(r->bulk + r->bulk_len, p, len);
	r->bulk_len += len;
	return r->bulk_len == COALESCE_MAX ? bulk_flush(r) : 0;
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

static int
start(struct http_req *r)
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
	if (start(r) == -1)
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
	if (start(r) == -1 || bulk_flush(r) == -1)
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
static void
finish(struct http_req *r)
{
	char		 trash[16384];
	struct pollfd	 p;
	long long	 until;
	int		 left;

	r->out_bytes = 0;
	/* A kept connection reads the next request without a deadline. */
	if (r->fcgx.keepConnection) {
		rcvtimeo(r, 0);
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
	if (!r->gone && bulk_flush(r) == 0)
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
	finish(r);
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

int
http_send(struct http_req *r, int status, const char *ctype, const void *body,
    size_t len)
{
	char n[32];

	http_status(r, status);
	if (ctype != NULL)
		http_header_add(r, "Content-Type", ctype);
	snprintf(n, sizeof(n), "%zu", len);
	http_header_add(r, "Content-Length", n);
	if (strcmp(http_method(r), "HEAD") == 0)
		return start(r);
	return http_write(r, body, len);
}

int
http_send_json(struct http_req *r, int status, struct json_object *obj)
{
	const char	*text;
	size_t		 len;

	text = js_text(obj, &len);
	http_header_add(r, "Cache-Control", "no-store");
	return http_send(r, status, "application/json", text, len);
}

int
http_send_error(struct http_req *r, int status, const char *detail)
{
	char	 buf[1024];
	int	 n;

	n = snprintf(buf, sizeof(buf), "%d %s\n%s%s", status, http_reason(status),
	    detail != NULL ? detail : "", detail != NULL ? "\n" : "");
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	http_header_add(r, "Cache-Control", "no-store");
	http_header_add(r, "X-Content-Type-Options", "nosniff");
	return http_send(r, status, "text/plain; charset=utf-8", buf, (size_t)n);
}

const char *
http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 302: return "Found";
	case 303: return "See Other";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 416: return "Range Not Satisfiable";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Unknown";
	}
}

/* Reset per-request state after the handler ran. */
static void
req_reset(struct http_req *r)
{
	r->started = false;
	http_headers_clear(r);
	free(r->body);
	free(r->path);
	r->body = r->path = NULL;
	free(r->bulk);
	r->bulk = NULL;
	r->bulk_len = 0;
	r->status = 200;
	r->started = r->gone = r->ended = r->direct = false;
}

/*
 * What is still buffered is not flushed here: FCGX_Finish_r (FastCGI) or
 * serve_cgi does it, so a response that fits libfcgi's buffer leaves in
 * one write with the end-of-stream and FCGI_END_REQUEST records. The web
 * server has the whole answer at once, and does not close the connection
 * (having read Content-Length bytes) before the end records come.
 */
static void
run_handler(struct serve_ctx *ctx, struct http_req *r)
{
	ctx->handler(r, ctx->arg);
	if (!r->ended && !r->started)
		http_send_error(r, 500, "The handler sent no response.");
	if (!r->ended)
		(void)bulk_flush(r);	/* held bytes (http_coalesce) */
	req_reset(r);
}

/*
 * Wait for this thread's turn at accept(): now when no other thread is
 * there, else when the watch lets one in or the server stops.
 */
static void
take_turn(struct serve_ctx *ctx)
{
	pthread_mutex_lock(&ctx->pool_lock);
	while (ctx->accepting && !http_stopping()) {
		ctx->waiting++;
		pthread_cond_wait(&ctx->turn, &ctx->pool_lock);
		ctx->waiting--;
	}
	ctx->accepting = true;
	ctx->acceptor = pthread_self();
	ctx->calling = false;
	pthread_mutex_unlock(&ctx->pool_lock);
}

/* Leave accept(); a connection taken wakes the watch if it sleeps. */
static void
end_turn(struct serve_ctx *ctx, bool took)
{
	pthread_mutex_lock(&ctx->pool_lock);
	ctx->accepting = false;
	if (took)
		ctx->taken++;
	if (ctx->watch_asleep && !http_stopping()) {
		ctx->watch_asleep = false;
		pthread_kill(ctx->watch, SIG_TAKEN);
	}
	pthread_mutex_unlock(&ctx->pool_lock);
}

/*
 * A TCP listener, as libfcgi's own accept does it: no Nagle delay on the
 * replies, and only the web servers that FCGI_WEB_SERVER_ADDRS lists (IPv4
 * addresses, comma-separated; unset, any) may connect.
 */
static void
listener_init(struct serve_ctx *ctx)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	const char		*list = getenv("FCGI_WEB_SERVER_ADDRS");
	char			 one[INET_ADDRSTRLEN];
	int			 room = (int)(sizeof(ctx->allow) / sizeof(ctx->allow[0]));

	if (getsockname(0, (struct sockaddr *)&ss, &len) == -1 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return;
	ctx->tcp = true;
	ctx->allow_set = list != NULL && *list != '\0';
	/* An entry that is not an IPv4 address lets nobody in (libfcgi's way). */
	while (ctx->allow_set && *list != '\0') {
		size_t n = strcspn(list, ",");

		if (n < sizeof(one) && ctx->nallow < room) {
			memcpy(one, list, n);
			one[n] = '\0';
			if (inet_pton(AF_INET, one, &ctx->allow[ctx->nallow]) == 1)
				ctx->nallow++;
			else
				log_warn("FCGI_WEB_SERVER_ADDRS: \"%s\" is not an "
				    "IPv4 address: no web server matches it", one);
		} else
			log_warn("FCGI_WEB_SERVER_ADDRS: an entry of %zu bytes, "
			    "or past the %d kept, matches no web server", n, room);
		list += n + (list[n] == ',');
	}
}

/*
 * With FCGI_WEB_SERVER_ADDRS set, only an IPv4 peer on the list, or the
 * same address mapped into IPv6 (a dual-stack listener); an IPv6 peer is
 * on no IPv4 list.
 */
static bool
peer_allowed(struct serve_ctx *ctx, int fd)
{
	struct sockaddr_storage	 ss;
	struct in_addr		 a;
	socklen_t		 len = sizeof(ss);
	int			 i, on = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (!ctx->allow_set)
		return true;
	if (getpeername(fd, (struct sockaddr *)&ss, &len) == -1)
		return false;
	if (ss.ss_family == AF_INET)
		a = ((struct sockaddr_in *)&ss)->sin_addr;
	else if (ss.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&ss)->sin6_addr))
		memcpy(&a, ((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr + 12,
		    sizeof(a));
	else
		return false;
	for (i = 0; i < ctx->nallow; i++)
		if (a.s_addr == ctx->allow[i].s_addr)
			return true;
	return false;
}

/*
 * The next connection from the listening socket (fd 0), taken in this
 * thread's turn; -1 when the server stops. The turn covers accept() alone:
 * the web server's records are read after it, under a read deadline, so a
 * connection that sends nothing holds only its own thread. Running out of
 * descriptors or memory is waited out; any other failure stops the server
 * (a supervisor starts it again).
 */
static int
accept_conn(struct serve_ctx *ctx)
{
	struct timespec	 pause = { 0, 10 * 1000 * 1000 };
	int		 fd = -1, e;

	take_turn(ctx);
	while (!http_stopping()) {
		if ((fd = accept4(0, NULL, NULL, SOCK_CLOEXEC)) != -1) {
			if (!ctx->tcp || peer_allowed(ctx, fd))
				break;
			close(fd);
			fd = -1;
			continue;
		}
		/* accept(2): a connection that failed before it was taken. */
		if ((e = errno) == EINTR || e == ECONNABORTED || e == EPROTO ||
		    e == ECONNRESET || e == ETIMEDOUT || e == EHOSTUNREACH ||
		    e == ENETUNREACH || e == ENETDOWN || e == ENOPROTOOPT ||
		    e == EHOSTDOWN || e == ENONET || e == EPERM)
			continue;
		/* A listening socket left nonblocking: wait, never spin. */
		if (e == EAGAIN || e == EWOULDBLOCK) {
			struct pollfd p = { 0, POLLIN, 0 };

			(void)poll(&p, 1, 1000);
			continue;
		}
		if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
			nanosleep(&pause, NULL);
			continue;
		}
		/*
		 * EINVAL: the socket listens no more. A process beside this
		 * one on the same socket (spawn-fcgi -F) shut it down as it
		 * stopped; this one stops too, as cleanly.
		 */
		pthread_mutex_lock(&ctx->pool_lock);
		if (!http_stopping()) {
			if (e != EINVAL) {
				log_warn("accept: %s; stopping", strerror(e));
				ctx->failed = true;
			}
			pthread_kill(ctx->watch, SIGTERM);
		}
		pthread_mutex_unlock(&ctx->pool_lock);
		break;
	}
	end_turn(ctx, fd != -1);
	return fd;
}

/*
 * The connection this worker reads records from (-1: none), for the stop
 * to interrupt; false when the server stops.
 */
static bool
slot_set(struct slot *sl, int fd)
{
	bool	ok;

	pthread_mutex_lock(&sl->ctx->pool_lock);
	ok = fd == -1 || !http_stopping();
	sl->fd = ok ? fd : -1;
	pthread_mutex_unlock(&sl->ctx->pool_lock);
	return ok;
}

static void *
worker(void *arg)
{
	struct slot		*sl = arg;
	struct serve_ctx	*ctx = sl->ctx;
	struct http_req		*r;
	int			 rc;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		pthread_mutex_lock(&ctx->pool_lock);
		ctx->calling = false;
		pthread_mutex_unlock(&ctx->pool_lock);
		return NULL;
	}
	r->status = 200;
	r->slot = sl;
	/* No listening socket: libfcgi reads the connections given to it. */
	(void)FCGX_InitRequest(&r->fcgx, -1, 0);
	while (!http_stopping()) {
		/*
		 * A connection the web server keeps (FCGI_KEEP_CONN) brings
		 * its next request; else a new one is taken. keepConnection
		 * makes FCGX_Accept_r read it rather than close it; the begin
		 * record then says whether it is kept.
		 */
		if (r->fcgx.ipcFd < 0) {
			long	ms = (long)atomic_load(&body_deadline) * 1000;
			int	fd = accept_conn(ctx);

			if (fd < 0)
				break;
			r->fcgx.ipcFd = fd;
			r->fcgx.keepConnection = 1;
			r->sndtimeo = false;
			r->rcvtimeo_ms = set_rcvtimeo(fd, ms) == 0 ? ms : 0;
		}
		if (!slot_set(sl, r->fcgx.ipcFd))
			break;
		rc = FCGX_Accept_r(&r->fcgx);
		(void)slot_set(sl, -1);
		/* Bad records: libfcgi closed the connection; take another. */
		if (rc < 0) {
			r->rcvtimeo_ms = 0;
			continue;
		}
		r->in = r->fcgx.in;
		r->out = r->fcgx.out;
		r->envp = r->fcgx.envp;
		run_handler(ctx, r);
		finish(r);	/* a no-op after http_end */
	}
	FCGX_Free(&r->fcgx, 1);
	free(r);
	return NULL;
}

/*
 * Start one more worker, unless nthreads run; after a failure, not again
 * for a second. Under pool_lock.
 */
static int
pool_spawn(struct serve_ctx *ctx)
{
	pthread_attr_t	attr;
	time_t		now = time(NULL);
	int		rc = -1;

	if (ctx->started >= ctx->max || http_stopping() ||
	    now - ctx->spawn_failed < 1)
		return -1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	ctx->slots[ctx->started].ctx = ctx;
	ctx->slots[ctx->started].fd = -1;
	if (pthread_create(&ctx->tids[ctx->started], &attr, worker,
	    &ctx->slots[ctx->started]) == 0) {
		ctx->started++;
		rc = 0;
	} else {
		ctx->spawn_failed = now;
		log_warn("cannot start a thread (%d running)", ctx->started);
	}
	pthread_attr_destroy(&attr);
	return rc;
}

/* A connection waits in the listening socket's queue. */
static bool
backlog(void)
{
	struct pollfd	p = { 0, POLLIN, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/*
 * One tick of the watch, under pool_lock: seen is the count of connections
 * taken at the last tick. No thread is in accept(), and either none was
 * taken since (every thread is held by a request), or connections wait
 * while the threads serving take fewer than POOL_QUICK each a tick (their
 * requests are slow ones, or wait on something): one idle thread is let
 * in, or one more started; one a tick. Threads whose requests are quick
 * keep up with the queue alone, and are not joined by threads that would
 * park and wake for nothing.
 */
static void
pool_watch(struct serve_ctx *ctx, unsigned long seen)
{
	unsigned long	busy = (unsigned long)(ctx->started - ctx->waiting);

	if (ctx->accepting || ctx->calling || (ctx->taken != seen &&
	    (ctx->taken - seen >= POOL_QUICK * busy || !backlog())))
		return;
	if (ctx->waiting > 0) {
		pthread_cond_signal(&ctx->turn);
		ctx->calling = true;
	} else if (pool_spawn(ctx) == 0)
		ctx->calling = true;
}

/*
 * On a stop, under pool_lock: wake the thread in accept() and those
 * reading a request's records (their calls fail with EINTR), again every
 * STOP_WAKE_NS until none is left, STOP_WAKES times at most: a signal that
 * comes just before the call blocks is not the last. The listening socket
 * is left as it is: under systemd it is the socket's, and serves the next
 * start. A thread is signalled only while it is known to be there (the
 * lock held), so it is alive.
 */
static void
pool_wake(struct serve_ctx *ctx)
{
	struct timespec	 gap = { 0, STOP_WAKE_NS };
	bool		 left = true;
	int		 n, i;

	for (n = 0; left && n < STOP_WAKES; n++) {
		left = false;
		if (ctx->accepting) {
			pthread_kill(ctx->acceptor, SIG_WAKE);
			left = true;
		}
		for (i = 0; i < ctx->started; i++)
			if (ctx->slots[i].fd != -1) {
				pthread_kill(ctx->tids[i], SIG_WAKE);
				left = true;
			} else if (atomic_load(&ctx->slots[i].writing)) {
				/* Still in a write after STOP_WRITES: stuck. */
				if (n >= STOP_WRITES)
					pthread_kill(ctx->tids[i], SIG_WAKE);
				left = true;
			}
		if (left) {
			pthread_mutex_unlock(&ctx->pool_lock);
			nanosleep(&gap, NULL);
			pthread_mutex_lock(&ctx->pool_lock);
		}
	}
}

static void
on_wake(int sig)
{
	(void)sig;
}

/*
 * The signal thread, which watches the pool between signals: each tick
 * while no thread waits in accept() and one could be let in, asleep while
 * one waits there and nothing comes, or none can be let in.
 */
static void *
signal_thread(void *arg)
{
	struct serve_ctx	*ctx = arg;
	struct timespec		 tick = { 0, POOL_TICK_NS }, second = { 1, 0 };
	unsigned long		 seen;
	bool			 check = false;
	int			 sig;

	pthread_mutex_lock(&ctx->pool_lock);
	seen = ctx->taken;
	for (;;) {
		/* Every thread in a request, and none to let in or start. */
		bool	held = !ctx->accepting && ctx->waiting == 0;
		bool	quiet = (ctx->accepting && ctx->taken == seen) ||
		    (held && ctx->started >= ctx->max);
		/* A thread failed to start: the next try is a second later. */
		bool	backoff = held && time(NULL) - ctx->spawn_failed < 1;

		if (check && !quiet)
			pool_watch(ctx, seen);
		seen = ctx->taken;
		ctx->watch_asleep = quiet;
		pthread_mutex_unlock(&ctx->pool_lock);
		sig = quiet ? sigwaitinfo(&ctx->sigs, NULL) :
		    sigtimedwait(&ctx->sigs, NULL, backoff ? &second : &tick);
		pthread_mutex_lock(&ctx->pool_lock);
		ctx->watch_asleep = false;
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
			break;
		/* A connection just taken gets a whole tick first. */
		check = sig != SIG_TAKEN;
		if (!check)
			seen = ctx->taken;
	}
	atomic_store(&stopping, true);
	pthread_cond_broadcast(&ctx->turn);
	pool_wake(ctx);
	pthread_mutex_unlock(&ctx->pool_lock);
	return NULL;
}

/*
 * Plain CGI: the request is this process's environment, stdin and stdout.
 * libfcgi's FCGX_Accept does not serve CGI (only its stdio layer does), so
 * the streams here are FCGX_Streams of our own over fds 0 and 1: the public
 * struct with fill and empty procedures, which FCGX_GetStr, FCGX_PutStr and
 * FCGX_FFlush call when a buffer runs out (fcgiapp.h).
 */
struct cgi_stream {
	FCGX_Stream	 s;
	int		 fd;
	unsigned char	 buf[16384];
};

static void
cgi_fill(FCGX_Stream *st)
{
	struct cgi_stream	*c = st->data;
	ssize_t			 n;

	do
		n = read(c->fd, c->buf, sizeof(c->buf));
	while (n == -1 && errno == EINTR);
	if (n <= 0) {
		st->isClosed = 1;
		st->FCGI_errno = n < 0 ? errno : 0;
		n = 0;
	}
	st->rdNext = st->stopUnget = c->buf;
	st->stop = c->buf + n;
}

static void
cgi_empty(FCGX_Stream *st, int do_close)
{
	struct cgi_stream	*c = st->data;
	unsigned char		*p = c->buf;
	ssize_t			 n;

	(void)do_close;
	while (p < st->wrNext) {
		n = write(c->fd, p, (size_t)(st->wrNext - p));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			st->isClosed = 1;
			st->FCGI_errno = errno;
			break;
		}
		p += n;
	}
	st->wrNext = c->buf;
	st->stop = c->buf + sizeof(c->buf);
}

static void
cgi_stream_init(struct cgi_stream *c, int fd, bool reader)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->s.data = c;
	c->s.isReader = reader;
	c->s.fillBuffProc = cgi_fill;
	c->s.emptyBuffProc = cgi_empty;
	c->s.rdNext = c->s.wrNext = c->s.stopUnget = c->buf;
	c->s.stop = reader ? c->buf : c->buf + sizeof(c->buf);
}

static int
serve_cgi(struct serve_ctx *ctx)
{
	extern char		**environ;
	struct http_req		*r;
	struct cgi_stream	*in = NULL, *out = NULL;
	int			 rc = 1;

	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (in = malloc(sizeof(*in))) == NULL ||
	    (out = malloc(sizeof(*out))) == NULL)
		goto out;
	cgi_stream_init(in, STDIN_FILENO, true);
	cgi_stream_init(out, STDOUT_FILENO, false);
	signal(SIGPIPE, SIG_IGN);
	r->status = 200;
	r->in = &in->s;
	r->out = &out->s;
	r->envp = environ;
	run_handler(ctx, r);
	if (!r->ended)
		FCGX_FFlush(r->out);
	rc = 0;
out:
	free(in);
	free(out);
	free(r);
	return rc;
}

int
http_serve(http_handler handler, void *arg, int nthreads)
{
	struct serve_ctx	 ctx;
	struct sigaction	 wake;
	sigset_t		 unblock;
	int			 i, rc = 1;

	memset(&ctx, 0, sizeof(ctx));
	ctx.handler = handler;
	ctx.arg = arg;
	if (FCGX_Init() != 0) {
		log_warn("FCGX_Init failed");
		return 1;
	}
	if (FCGX_IsCGI())
		return serve_cgi(&ctx);
	atomic_store(&serving_cgi, false);

	sigemptyset(&ctx.sigs);
	sigaddset(&ctx.sigs, SIGTERM);
	sigaddset(&ctx.sigs, SIGINT);
	sigaddset(&ctx.sigs, SIGHUP);
	sigaddset(&ctx.sigs, SIG_TAKEN);
	pthread_sigmask(SIG_BLOCK, &ctx.sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Without SA_RESTART: a blocking call it comes in fails (EINTR). */
	memset(&wake, 0, sizeof(wake));
	wake.sa_handler = on_wake;
	sigemptyset(&wake.sa_mask);
	sigaction(SIG_WAKE, &wake, NULL);
	sigemptyset(&unblock);
	sigaddset(&unblock, SIG_WAKE);
	pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);

	ctx.max = nthreads < 1 ? 1 : nthreads;
	listener_init(&ctx);
	pthread_mutex_init(&ctx.pool_lock, NULL);
	pthread_cond_init(&ctx.turn, NULL);
	if ((ctx.tids = calloc((size_t)ctx.max, sizeof(*ctx.tids))) == NULL ||
	    (ctx.slots = calloc((size_t)ctx.max, sizeof(*ctx.slots))) == NULL)
		goto out;
	/*
	 * The first worker, then the watch, under the lock: neither looks at
	 * ctx.watch before it is set.
	 */
	pthread_mutex_lock(&ctx.pool_lock);
	if (pool_spawn(&ctx) == -1 ||
	    pthread_create(&ctx.watch, NULL, signal_thread, &ctx) != 0) {
		if (ctx.started > 0) {
			atomic_store(&stopping, true);
			pthread_cond_broadcast(&ctx.turn);
			pool_wake(&ctx);
		}
		pthread_mutex_unlock(&ctx.pool_lock);
		log_warn("cannot start the first thread or the signal thread");
		for (i = 0; i < ctx.started; i++)
			pthread_join(ctx.tids[i], NULL);
		goto out;
	}
	ctx.calling = true;
	pthread_mutex_unlock(&ctx.pool_lock);
	/*
	 * Only the watch starts threads, and none once the stop flag is set,
	 * which it sets before it ends: after it, tids[0..started) is final.
	 */
	pthread_join(ctx.watch, NULL);
	for (i = 0; i < ctx.started; i++)
		pthread_join(ctx.tids[i], NULL);
	if (ctx.failed)
		goto out;
	rc = 0;
out:
	free(ctx.tids);
	free(ctx.slots);
	pthread_cond_destroy(&ctx.turn);
	pthread_mutex_destroy(&ctx.pool_lock);
	return rc;
}
