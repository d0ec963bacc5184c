/*
 * httpc.c: a small HTTP/1.1 client; see httpc.h.
 *
 * Sockets are nonblocking from the start; every wait is a poll() bounded
 * by the time the caller gave, in slices of at most a second so the stop
 * flag (httpc_set_stop) is asked while connecting. A connection owns one
 * read buffer: the head is parsed in place and body pieces are handed out
 * as pointers into it, so the bytes are copied once, by the kernel. The
 * head and the chunked coding are parsed in httpc_parse.c, on bytes alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "base/clock.h"
#include "base/httpc.h"

#define CONN_BUF_DEFAULT	HTTPC_HEAD_MAX
#define SLICE_MS		1000

struct httpc {
	char		*unix_path;	/* or NULL for TCP */
	char		*host, *port;
	char		*addr;		/* the pinned numeric address, or NULL */
	bool		 tls;
	char		*authority;	/* the Host header */
	char		*ca, *cert, *key; /* TLS files, or NULL */
	SSL_CTX		*ctx;		/* made at the first TLS connection */
	struct httpc_conn *idle;	/* one kept connection */
};

struct httpc_conn {
	int		 fd;
	SSL		*ssl;
	pthread_mutex_t	 lock;		/* serialises SSL calls (reader and senders) */
	char		*buf;
	size_t		 cap, r, w;	/* unread bytes are buf[r..w) */
	unsigned long long got, mark;	/* bytes read in all; at the request's start */
	bool		 eof;		/* the peer ended the connection cleanly */
};

static bool (*stop_fn)(void);

void
httpc_set_stop(bool (*stopping)(void))
{
	stop_fn = stopping;
}

static bool
stopping(void)
{
	return stop_fn != NULL && stop_fn();
}

static char *
dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*oom = true;
	return d;
}

int
httpc_new(const char *unix_path, const char *host, const char *port,
    const char *ca, const char *cert, const char *key, struct httpc **out,
    struct error *err)
{
	struct httpc	*h;
	bool		 oom = false, v6;
	size_t		 n;

	*out = NULL;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return error_set(err, "out of memory");
	h->unix_path = dup_or_null(unix_path, &oom);
	h->host = dup_or_null(host, &oom);
	h->port = dup_or_null(port, &oom);
	h->ca = dup_or_null(ca, &oom);
	h->cert = dup_or_null(cert, &oom);
	h->key = dup_or_null(key, &oom);
	h->tls = ca != NULL;
	if (host != NULL && port != NULL) {
		v6 = strchr(host, ':') != NULL;
		n = strlen(host) + strlen(port) + 4;
		if ((h->authority = malloc(n)) != NULL)
			snprintf(h->authority, n, "%s%s%s:%s", v6 ? "[" : "",
			    host, v6 ? "]" : "", port);
	} else
		h->authority = strdup("localhost");
	if (oom || h->authority == NULL ||
	    (unix_path == NULL && (host == NULL || port == NULL))) {
		httpc_free(h);
		return error_set(err, "out of memory");
	}
	*out = h;
	return 0;
}

int
httpc_new_https(const char *host, const char *addr, const char *port,
    struct httpc **out, struct error *err)
{
	struct httpc	*h;
	bool		 v6 = strchr(host, ':') != NULL;
	size_t		 n;

	*out = NULL;
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return error_set(err, "out of memory");
	h->tls = true;
	h->host = strdup(host);
	h->addr = strdup(addr);
	h->port = strdup(port);
	/* RFC 9110 §7.2: the default port is left out of Host. */
	n = strlen(host) + strlen(port) + 4;
	if ((h->authority = malloc(n)) != NULL)
		snprintf(h->authority, n, "%s%s%s%s%s", v6 ? "[" : "", host,
		    v6 ? "]" : "", strcmp(port, "443") == 0 ? "" : ":",
		    strcmp(port, "443") == 0 ? "" : port);
	if (h->host == NULL || h->addr == NULL || h->port == NULL ||
	    h->authority == NULL) {
		httpc_free(h);
		return error_set(err, "out of memory");
	}
	*out = h;
	return 0;
}

void
httpc_free(struct httpc *h)
{
	if (h == NULL)
		return;
	httpc_conn_close(h->idle);
	if (h->ctx != NULL)
		SSL_CTX_free(h->ctx);
	free(h->unix_path);
	free(h->host);
	free(h->port);
	free(h->addr);
	free(h->authority);
	free(h->ca);
	free(h->cert);
	free(h->key);
	free(h);
}

const char *
httpc_authority(const struct httpc *h)
{
	return h->authority;
}

/* Wait for events on fd at most ms: 1 ready (or failed), 0 not yet, -1 error. */
static int
wait_fd(int fd, short events, long long ms)
{
	struct pollfd	pfd = { .fd = fd, .events = events };
	int		n;

	if (ms < 0)
		ms = 0;
	if (ms > SLICE_MS * 60)
		ms = SLICE_MS * 60;
	n = poll(&pfd, 1, (int)ms);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	return n > 0 ? 1 : 0;
}

/* The most recent OpenSSL error, worded, or what the system said. */
static const char *
tls_reason(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	if (e == 0)
		return errno != 0 ? strerror(errno) : "TLS failure";
	ERR_error_string_n(e, buf, len);
	return buf;
}

static int
tls_context(struct httpc *h, struct error *err)
{
	char	 why[256];
	SSL_CTX	*ctx;

	if (h->ctx != NULL)
		return 0;
	ERR_clear_error();
	errno = 0;
	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		return error_kind(err, ERR_UNAVAILABLE, "TLS: %s", tls_reason(why, sizeof(why)));
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (h->ca == NULL) {
		if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
			error_kind(err, ERR_UNAVAILABLE, "TLS: cannot read the system's "
			    "CA certificates: %s", tls_reason(why, sizeof(why)));
			goto fail;
		}
	} else if (SSL_CTX_load_verify_locations(ctx, h->ca, NULL) != 1) {
		error_kind(err, ERR_UNAVAILABLE, "TLS: cannot read the CA file %s: %s",
		    h->ca, tls_reason(why, sizeof(why)));
		goto fail;
	}
	if (h->cert == NULL)
		goto done;
	if (SSL_CTX_use_certificate_chain_file(ctx, h->cert) != 1) {
		error_kind(err, ERR_UNAVAILABLE, "TLS: cannot read the client certificate "
		    "%s: %s", h->cert, tls_reason(why, sizeof(why)));
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, h->key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		error_kind(err, ERR_UNAVAILABLE, "TLS: cannot use the client key %s: %s",
		    h->key, tls_reason(why, sizeof(why)));
		goto fail;
	}
done:
	h->ctx = ctx;
	return 0;
fail:
	SSL_CTX_free(ctx);
	return -1;
}

static struct httpc_conn *
conn_new(int fd, size_t bufsize)
{
	struct httpc_conn *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if ((c->buf = malloc(bufsize)) == NULL) {
		free(c);
		return NULL;
	}
	c->cap = bufsize;
	c->fd = fd;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void
httpc_conn_close(struct httpc_conn *c)
{
	if (c == NULL)
		return;
	if (c->ssl != NULL)
		SSL_free(c->ssl);
	if (c->fd != -1)
		close(c->fd);
	pthread_mutex_destroy(&c->lock);
	free(c->buf);
	free(c);
}

/* A unix socket: connect never blocks there, but may find the backlog full. */
static int
connect_unix(struct httpc *h, long long deadline, struct error *err)
{
	struct sockaddr_un	 sun;
	int			 fd, e;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(h->unix_path) >= sizeof(sun.sun_path)) {
		error_kind(err, ERR_UNAVAILABLE, "the unix socket path %s is too long",
		    h->unix_path);
		return -1;
	}
	memcpy(sun.sun_path, h->unix_path, strlen(h->unix_path) + 1);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd == -1)
			break;
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			return fd;
		e = errno;
		close(fd);
		errno = e;
		if (e != EAGAIN && e != EINTR)
			break;
		/* The backlog is full: try again shortly, until the deadline. */
		if (stopping() || clock_ms() >= deadline) {
			errno = e == EINTR ? EAGAIN : e;
			break;
		}
		poll(NULL, 0, 20);
	}
	error_kind(err, ERR_UNAVAILABLE, "cannot connect to the unix socket %s: %s",
	    h->unix_path, strerror(errno));
	return -1;
}

static int
connect_tcp(struct httpc *h, long long deadline, struct error *err)
{
	struct addrinfo	 hints, *res = NULL, *ai;
	socklen_t	 sl;
	int		 fd = -1, e = 0, rc, one = 1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (h->addr != NULL ? AI_NUMERICHOST : 0);
	if ((rc = getaddrinfo(h->addr != NULL ? h->addr : h->host, h->port,
	    &hints, &res)) != 0) {
		error_kind(err, ERR_UNAVAILABLE, "cannot resolve %s: %s", h->host,
		    gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd == -1) {
			e = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		e = errno;
		if (e == EINPROGRESS) {
			for (;;) {
				if (stopping() || clock_ms() >= deadline) {
					e = ETIMEDOUT;
					break;
				}
				if ((rc = wait_fd(fd, POLLOUT, deadline -
				    clock_ms() > SLICE_MS ? SLICE_MS :
				    deadline - clock_ms())) == -1) {
					e = errno;
					break;
				}
				if (rc == 0)
					continue;
				sl = sizeof(e);
				if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) == -1)
					e = errno;
				break;
			}
			if (e == 0)
				break;
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1) {
		error_kind(err, ERR_UNAVAILABLE, "cannot connect to %s: %s", h->authority,
		    strerror(e != 0 ? e : ECONNREFUSED));
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	return fd;
}

/* The TLS handshake on c, verifying the engine's name or address. */
static int
tls_start(struct httpc *h, struct httpc_conn *c, long long deadline,
    struct error *err)
{
	unsigned char	 addr[16];
	char		 why[256];
	long		 v;
	int		 rc, e;
	short		 ev;

	ERR_clear_error();
	if ((c->ssl = SSL_new(h->ctx)) == NULL || SSL_set_fd(c->ssl, c->fd) != 1)
		return error_kind(err, ERR_UNAVAILABLE, "TLS: %s", tls_reason(why, sizeof(why)));
	if (inet_pton(AF_INET, h->host, addr) == 1 ||
	    inet_pton(AF_INET6, h->host, addr) == 1) {
		if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl),
		    h->host) != 1)
			return error_kind(err, ERR_UNAVAILABLE, "TLS: bad address %s", h->host);
	} else if (SSL_set1_host(c->ssl, h->host) != 1 ||
	    SSL_set_tlsext_host_name(c->ssl, h->host) != 1)
		return error_kind(err, ERR_UNAVAILABLE, "TLS: bad host name %s", h->host);
	for (;;) {
		ERR_clear_error();
		errno = 0;
		if ((rc = SSL_connect(c->ssl)) == 1)
			return 0;
		e = SSL_get_error(c->ssl, rc);
		if (e == SSL_ERROR_WANT_READ)
			ev = POLLIN;
		else if (e == SSL_ERROR_WANT_WRITE)
			ev = POLLOUT;
		else {
			v = SSL_get_verify_result(c->ssl);
			if (v != X509_V_OK)
				return error_kind(err, ERR_UNAVAILABLE, "TLS: the "
				    "certificate of %s: %s", h->host,
				    X509_verify_cert_error_string(v));
			return error_kind(err, ERR_UNAVAILABLE, "TLS handshake: %s",
			    tls_reason(why, sizeof(why)));
		}
		if (stopping() || clock_ms() >= deadline)
			return error_kind(err, ERR_UNAVAILABLE, "TLS handshake: no answer "
			    "in time");
		if (wait_fd(c->fd, ev, deadline - clock_ms() > SLICE_MS ?
		    SLICE_MS : deadline - clock_ms()) == -1)
			return error_kind(err, ERR_UNAVAILABLE, "TLS handshake: %s",
			    strerror(errno));
	}
}

struct httpc_conn *
httpc_conn_get(struct httpc *h, bool reuse, size_t bufsize,
    long long deadline_ms, bool *reused, struct error *err)
{
	struct httpc_conn	*c = NULL;
	int			 fd;

	*reused = false;
	if (bufsize < CONN_BUF_DEFAULT)
		bufsize = CONN_BUF_DEFAULT;
	if (reuse && h->idle != NULL && bufsize == CONN_BUF_DEFAULT) {
		c = h->idle;
		h->idle = NULL;
		c->mark = c->got;
		*reused = true;
		return c;
	}
	if (h->tls && tls_context(h, err) == -1)
		return NULL;
	fd = h->unix_path != NULL ? connect_unix(h, deadline_ms, err) :
	    connect_tcp(h, deadline_ms, err);
	if (fd == -1)
		return NULL;
	if ((c = conn_new(fd, bufsize)) == NULL) {
		close(fd);
		error_set(err, "out of memory");
		return NULL;
	}
	if (h->tls && tls_start(h, c, deadline_ms, err) == -1) {
		httpc_conn_close(c);
		return NULL;
	}
	return c;
}

void
httpc_conn_put(struct httpc *h, struct httpc_conn *c, bool keep)
{
	if (c == NULL)
		return;
	/* Only a connection standing cleanly between responses is kept. */
	if (keep && h->idle == NULL && c->cap == CONN_BUF_DEFAULT &&
	    c->r == c->w && !c->eof) {
		c->r = c->w = 0;
		h->idle = c;
		return;
	}
	httpc_conn_close(c);
}

/*
 * One read or write on the transport: the count (> 0), 0 at a clean end
 * (reads), -1 on an error, -2 when it would block (*ev: what to wait for).
 */
/* A plain socket's send or recv result: the count, -2 to wait, -1 broken. */
static long
io_plain(ssize_t n)
{
	if (n >= 0)
		return (long)n;
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ?
	    -2 : -1;
}

/*
 * An SSL_read or SSL_write result rc with its SSL_get_error e: the count,
 * 0 at the peer's close_notify (reading), -2 to wait for *ev (TLS may need
 * to read to write and the other way round), -1 broken.
 */
static long
io_tls(int rc, int e, bool reading, short *ev)
{
	switch (e) {
	case SSL_ERROR_NONE:
		return rc;
	case SSL_ERROR_ZERO_RETURN:
		return reading ? 0 : -1;
	case SSL_ERROR_WANT_READ:
		*ev = POLLIN;
		return -2;
	case SSL_ERROR_WANT_WRITE:
		*ev = POLLOUT;
		return -2;
	default:
		return -1;
	}
}

static long
io_read(struct httpc_conn *c, void *buf, size_t len, short *ev)
{
	int	rc, e;

	*ev = POLLIN;
	if (c->ssl == NULL)
		return io_plain(recv(c->fd, buf, len, 0));
	if (len > INT32_MAX)
		len = INT32_MAX;
	pthread_mutex_lock(&c->lock);
	ERR_clear_error();
	rc = SSL_read(c->ssl, buf, (int)len);
	e = rc > 0 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, rc);
	pthread_mutex_unlock(&c->lock);
	return io_tls(rc, e, true, ev);
}

static long
io_write(struct httpc_conn *c, const void *buf, size_t len, short *ev)
{
	int	rc, e;

	*ev = POLLOUT;
	if (c->ssl == NULL)
		return io_plain(send(c->fd, buf, len, MSG_NOSIGNAL));
	if (len > INT32_MAX)
		len = INT32_MAX;
	pthread_mutex_lock(&c->lock);
	ERR_clear_error();
	rc = SSL_write(c->ssl, buf, (int)len);
	e = rc > 0 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, rc);
	pthread_mutex_unlock(&c->lock);
	return io_tls(rc, e, false, ev);
}

/*
 * Has the peer sent application bytes (or ended the connection)? Over TLS
 * a readable socket may hold only a session ticket, so peek through it.
 */
static bool
peer_sent(struct httpc_conn *c)
{
	struct pollfd	pfd = { .fd = c->fd, .events = POLLIN };
	char		b;
	int		rc, e;

	if (poll(&pfd, 1, 0) != 1)
		return false;
	if (c->ssl == NULL)
		return true;
	pthread_mutex_lock(&c->lock);
	ERR_clear_error();
	rc = SSL_peek(c->ssl, &b, 1);
	e = rc > 0 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, rc);
	pthread_mutex_unlock(&c->lock);
	return e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE;
}

long
httpc_write(struct httpc_conn *c, const void *buf, size_t len, int wait_ms,
    bool *readable)
{
	long long	 deadline = clock_ms() + (wait_ms > 0 ? wait_ms : 0);
	long		 n;
	short		 ev;

	if (readable != NULL && (*readable = peer_sent(c)))
		return 0;
	for (;;) {
		if ((n = io_write(c, buf, len, &ev)) != -2)
			return n;
		if (deadline <= clock_ms())
			return 0;
		if (wait_fd(c->fd, readable != NULL ? ev | POLLIN : ev,
		    deadline - clock_ms() > SLICE_MS ? SLICE_MS :
		    deadline - clock_ms()) == -1)
			return -1;
		if (readable != NULL && (*readable = peer_sent(c)))
			return 0;
	}
}

int
httpc_fill(struct httpc_conn *c, int wait_ms)
{
	long long	deadline = clock_ms() + (wait_ms > 0 ? wait_ms : 0);
	long		n;
	short		ev;

	if (c->r == c->w)
		c->r = c->w = 0;
	else if (c->r > 0 && c->cap - c->w < c->cap / 4) {
		memmove(c->buf, c->buf + c->r, c->w - c->r);
		c->w -= c->r;
		c->r = 0;
	}
	if (c->w == c->cap)
		return -2;
	for (;;) {
		n = io_read(c, c->buf + c->w, c->cap - c->w, &ev);
		if (n > 0) {
			c->w += (size_t)n;
			c->got += (unsigned long long)n;
			return 1;
		}
		if (n == 0) {
			c->eof = true;
			return -1;
		}
		if (n == -1)
			return -1;
		if (clock_ms() >= deadline)
			return 0;
		if (wait_fd(c->fd, ev, deadline - clock_ms()) == -1)
			return -1;
	}
}

long
httpc_recv(struct httpc_conn *c, void *buf, size_t len, int wait_ms)
{
	long long	deadline = clock_ms() + (wait_ms > 0 ? wait_ms : 0);
	size_t		n;
	long		got;
	short		ev;

	if (c->r < c->w) {
		n = c->w - c->r < len ? c->w - c->r : len;
		memcpy(buf, c->buf + c->r, n);
		c->r += n;
		return (long)n;
	}
	for (;;) {
		got = io_read(c, buf, len, &ev);
		if (got > 0)
			return got;
		if (got == 0 || got == -1)
			return -1;
		if (clock_ms() >= deadline)
			return 0;
		if (wait_fd(c->fd, ev, deadline - clock_ms()) == -1)
			return -1;
	}
}

void
httpc_shutdown(struct httpc_conn *c)
{
	shutdown(c->fd, SHUT_RDWR);
}

/* A response off the connection: the bytes are parsed in httpc_parse.c. */

int
httpc_read_head(struct httpc_conn *c, struct httpc_head *h, bool head_request,
    httpc_header_fn fn, void *arg, int wait_ms, bool *empty, struct error *err)
{
	long long	deadline = clock_ms() + (wait_ms > 0 ? wait_ms : 0);
	long		n;
	int		f, interim = 0;

	*empty = false;
	for (;;) {
		if (c->w > c->r) {
			n = httpc_head_parse(c->buf + c->r, c->w - c->r, h, fn, arg);
			if (n == -2)
				return -2;
			if (n == -1)
				return error_kind(err, ERR_UPSTREAM, "malformed response "
				    "head");
			if (n > 0) {
				c->r += (size_t)n;
				if (h->status >= 100 && h->status < 200 &&
				    h->status != 101) {
					/* Interim: the real one follows. */
					if (++interim > HTTPC_INTERIM_MAX)
						return error_kind(err, ERR_UPSTREAM,
						    "too many interim answers");
					continue;
				}
				httpc_framing(h, head_request);
				return 1;
			}
		}
		f = httpc_fill(c, (int)(deadline - clock_ms()));
		/* A peer that keeps sending still gets no more than wait_ms. */
		if (f == 1 && clock_ms() >= deadline)
			return 0;
		if (f == 1)
			continue;
		if (f == 0)
			return 0;
		if (f == -2)
			return error_kind(err, ERR_UPSTREAM, "response head longer "
			    "than %u bytes", HTTPC_HEAD_MAX);
		*empty = c->got == c->mark;
		return error_kind(err, ERR_UPSTREAM, "the connection %s before a "
		    "complete answer", c->eof ? "closed" : "broke");
	}
}

void
httpc_body_init(struct httpc_body *b, struct httpc_conn *c,
    const struct httpc_head *h)
{
	memset(b, 0, sizeof(*b));
	b->c = c;
	b->framing = h->framing;
	b->left = h->length;
	httpc_chunked_init(&b->ch);
}

int
httpc_body_next(struct httpc_body *b, const char **p, size_t *n, int wait_ms,
    struct error *err)
{
	struct httpc_conn	*c = b->c;
	long long		 deadline = clock_ms() + (wait_ms > 0 ? wait_ms : 0);
	size_t			 avail, used, k;
	int			 rc, f;

	for (;;) {
		if (b->done || b->framing == HTTPC_NONE ||
		    (b->framing == HTTPC_LENGTH && b->left == 0)) {
			b->done = true;
			return 2;
		}
		avail = c->w - c->r;
		if (avail > 0) {
			switch (b->framing) {
			case HTTPC_LENGTH:
				k = avail < b->left ? avail : (size_t)b->left;
				*p = c->buf + c->r;
				*n = k;
				c->r += k;
				b->left -= k;
				return 1;
			case HTTPC_CLOSE:
				*p = c->buf + c->r;
				*n = avail;
				c->r = c->w;
				return 1;
			default:
				rc = httpc_chunked_step(&b->ch, c->buf + c->r,
				    avail, &used, p, n);
				c->r += used;
				if (rc == -1)
					return error_kind(err, ERR_UPSTREAM,
					    "malformed chunked body");
				if (rc == 2) {
					b->done = true;
					return 2;
				}
				if (rc == 1)
					return 1;
				if (used < avail)
					continue;
				break;
			}
		}
		f = httpc_fill(c, (int)(deadline - clock_ms()));
		if (f == 1)
			continue;
		if (f == 0)
			return 0;
		if (f == -1 && c->eof && b->framing == HTTPC_CLOSE) {
			b->done = true;
			return 2;
		}
		return error_kind(err, ERR_UPSTREAM, "the connection %s in the middle "
		    "of a response body", c->eof ? "closed" : "broke");
	}
}
