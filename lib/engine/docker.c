/*
 * docker.c: a small Docker Engine API client; see docker.h.
 *
 * The HTTP/1.1 underneath is httpc.c's; this file knows the Engine API:
 * the version prefix, which calls keep their connection, how long each
 * kind of call may wait, and how the engine's answers are read.
 *
 * Three kinds of wait (struct waiter): a JSON call has an absolute
 * deadline; a raw stream (the archive API) a stall deadline that moves
 * whenever bytes move; an exec stream none of its own, only the caller's
 * tick. All of them wait in slices of at most a second and ask the stop
 * flag between slices, so no call keeps a worker from honouring SIGTERM.
 *
 * JSON calls share one kept connection per struct docker (a keep-alive
 * connection the engine closed meanwhile is noticed by an answer that
 * never starts, and the call is sent once more on a new one); streams and
 * hijacked connections each get a fresh one, closed at their end.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/httpc.h"
#include "base/js.h"
#include "base/url.h"
#include "engine/docker.h"

#define API_VERSION		"v1.41"
#define CONNECT_TIMEOUT_MS	5000L
#define REQUEST_TIMEOUT_MS	(DOCKER_REQUEST_TIMEOUT_S * 1000L)
#define ERROR_BODY_MAX		(64u << 10)	/* an error answer's body */
#define TICK_MS			1000
#define SLICE_MS		1000
/* Raw streams read and write in large pieces, for throughput. */
#define RAW_BUFFER_SIZE		(256u << 10)
#define PUT_PIECE		(64u << 10)
#define EXEC_BUFFER_SIZE	(64u << 10)
/* A body this small goes out in one write with its head. */
#define INLINE_BODY_MAX		(16u << 10)

struct docker {
	char		*host;		/* DOCKER_HOST as given */
	struct httpc	*ep;		/* the engine's endpoint, its idle connection */
	long		 tick_ms;	/* exec streams' tick; 0: TICK_MS */
};

/* A response body growing up to a fixed maximum. */
struct body {
	char	*buf;
	size_t	 len, cap, max;
	bool	 too_big;
};

static bool (*stop_flag)(void);

void
docker_set_stop(bool (*stopping)(void))
{
	stop_flag = stopping;
	httpc_set_stop(stopping);
}

static bool
stopping(void)
{
	return stop_flag != NULL && stop_flag();
}

bool
docker_stopping(void)
{
	return stopping();
}

int
docker_global_init(void)
{
	/* A write to a connection the engine closed is an error, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void
docker_global_cleanup(void)
{
}

int
docker_open(const char *host, bool tls_verify, const char *cert_path,
    struct docker **out, struct error *err)
{
	struct docker	*d;
	struct url	 u;
	char		*hp = NULL, *name = NULL, *port = NULL;
	char		*ca = NULL, *cert = NULL, *key = NULL;
	size_t		 n;
	int		 rc = -1;

	*out = NULL;
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return error_set(err, "out of memory");
	if ((d->host = strdup(host)) == NULL)
		goto oom;
	if (strncmp(host, "unix://", 7) == 0) {
		if (host[7] != '/' || strlen(host + 7) > 107) {
			error_set(err, "DOCKER_HOST: bad unix socket path");
			goto out;
		}
		if (httpc_new(host + 7, NULL, NULL, NULL, NULL, NULL, &d->ep,
		    err) == -1)
			goto out;
	} else if (strncmp(host, "tcp://", 6) == 0) {
		/* host:port only, checked by the one URL parser (url.h). */
		n = strlen(host + 6);
		if (n == 0 || n > 261 || (hp = malloc(n + 8)) == NULL) {
			error_set(err, "DOCKER_HOST: expected tcp://host:port");
			goto out;
		}
		snprintf(hp, n + 8, "http://%s", host + 6);
		if (url_split_origin(hp, &u) == -1 || u.hostlen == 0) {
			error_set(err, "DOCKER_HOST: expected tcp://host:port");
			goto out;
		}
		if ((name = strndup(u.host, u.hostlen)) == NULL ||
		    (port = u.port != NULL ? strndup(u.port, u.portlen) :
		    strdup(tls_verify ? "2376" : "2375")) == NULL)
			goto oom;
		if (tls_verify) {
			if (cert_path == NULL || *cert_path == '\0') {
				error_set(err, "DOCKER_CERT_PATH: required with "
				    "DOCKER_TLS_VERIFY");
				goto out;
			}
			n = strlen(cert_path) + 16;
			if ((ca = malloc(n)) == NULL ||
			    (cert = malloc(n)) == NULL ||
			    (key = malloc(n)) == NULL)
				goto oom;
			snprintf(ca, n, "%s/ca.pem", cert_path);
			snprintf(cert, n, "%s/cert.pem", cert_path);
			snprintf(key, n, "%s/key.pem", cert_path);
		}
		if (httpc_new(NULL, name, port, ca, cert, key, &d->ep, err) == -1)
			goto out;
	} else {
		error_set(err, "DOCKER_HOST: expected unix:///path or tcp://host:port");
		goto out;
	}
	*out = d;
	d = NULL;
	rc = 0;
	goto out;
oom:
	error_set(err, "out of memory");
out:
	free(hp);
	free(name);
	free(port);
	free(ca);
	free(cert);
	free(key);
	docker_close(d);
	return rc;
}

void
docker_close(struct docker *d)
{
	if (d == NULL)
		return;
	httpc_free(d->ep);
	free(d->host);
	free(d);
}

const char *
docker_host(const struct docker *d)
{
	return d->host;
}

const char *
docker_message(struct json_object *resp)
{
	const char *m = js_str(resp, "message");

	return m == NULL ? "" : m;
}

/* The engine could not be reached: a message naming DOCKER_HOST. */
static int
unreachable(struct docker *d, const struct error *why, struct error *err)
{
	return error_kind(err, ERR_UNAVAILABLE, "cannot reach the Docker engine at %s "
	    "(DOCKER_HOST): %s", d->host, why->msg);
}

/* The engine's answer broke off or made no sense. */
static int
broken(struct docker *d, const struct error *why, struct error *err)
{
	return error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): %s",
	    d->host, why->msg);
}

/*
 * Keep n more bytes of the body b (a struct body, as body_each hands it);
 * -1 when it would pass its maximum or memory ran out.
 */
static int
body_add(void *arg, const char *p, size_t n)
{
	struct body	*b = arg;
	size_t		 cap;
	char		*nb;

	if (n > b->max - b->len) {
		b->too_big = true;
		return -1;
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap == 0 ? 4096 : b->cap;
		while (cap < b->len + n + 1)
			cap *= 2;
		if (cap > b->max + 1)
			cap = b->max + 1;
		if ((nb = realloc(b->buf, cap)) == NULL)
			return -1;
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return 0;
}

/*
 * How long one call may wait: an absolute deadline (stall_ms 0), a stall
 * deadline pushed back by each piece moved (stall_ms > 0), or the tick of
 * an exec stream (cb not NULL).
 */
struct waiter {
	struct docker			*d;
	long long			 deadline;
	long				 stall_ms;
	const struct docker_exec_cb	*cb;
	long long			 next_tick;
	bool				 stopped;	/* the tick or the stop flag ended it */
};

static void
waiter_deadline(struct waiter *w, struct docker *d, long ms, bool stall)
{
	memset(w, 0, sizeof(*w));
	w->d = d;
	w->deadline = clock_ms() + ms;
	w->stall_ms = stall ? ms : 0;
}

static void
waiter_tick(struct waiter *w, struct docker *d, const struct docker_exec_cb *cb)
{
	memset(w, 0, sizeof(*w));
	w->d = d;
	w->cb = cb;
	w->next_tick = clock_ms() + docker_tick_ms(d);
}

static void
waiter_moved(struct waiter *w)
{
	if (w->stall_ms > 0)
		w->deadline = clock_ms() + w->stall_ms;
}

/*
 * The next wait in milliseconds (1 to SLICE_MS), or -1 when the call must
 * end: time is up or the stop flag rose (err set), or the tick said stop
 * (w->stopped set). A tick runs here, outside any read.
 */
static int
waiter_slice(struct waiter *w, struct error *err)
{
	long long now = clock_ms(), left;

	if (w->cb != NULL) {
		if (now >= w->next_tick) {
			w->next_tick = now + docker_tick_ms(w->d);
			if ((w->cb->tick != NULL && w->cb->tick(w->cb->arg) != 0) ||
			    stopping()) {
				w->stopped = true;
				return -1;
			}
		}
		left = w->next_tick - now;
	} else {
		if (stopping())
			return error_kind(err, ERR_UNAVAILABLE, "the server is stopping");
		if (now >= w->deadline)
			return error_kind(err, ERR_UNAVAILABLE, "cannot reach the Docker "
			    "engine at %s (DOCKER_HOST): %s %ld s", w->d->host,
			    w->stall_ms > 0 ? "nothing moved for" :
			    "no complete answer within", w->stall_ms > 0 ?
			    w->stall_ms / 1000 : REQUEST_TIMEOUT_MS / 1000);
		left = w->deadline - now;
	}
	if (left > SLICE_MS)
		left = SLICE_MS;
	return left < 1 ? 1 : (int)left;
}

/* A connection for one call, connecting within CONNECT_TIMEOUT_MS. */
static struct httpc_conn *
conn_get(struct docker *d, bool reuse, size_t bufsize, bool *reused,
    struct error *err)
{
	struct httpc_conn	*c;
	struct error		 e;

	if ((c = httpc_conn_get(d->ep, reuse, bufsize, clock_ms() +
	    CONNECT_TIMEOUT_MS, reused, &e)) == NULL) {
		if (stopping())
			error_kind(err, ERR_UNAVAILABLE, "the server is stopping");
		else if (e.kind == ERR_UNAVAILABLE)
			unreachable(d, &e, err);
		else
			error_set(err, "%s", e.msg);
	}
	return c;
}

/*
 * The request head (RFC 9112 §3) for method on the API path, with room
 * for extra bytes after it; NULL when path holds a byte that cannot go in
 * a request line (the callers build paths of safe bytes; this is the
 * last guard against a request split in two).
 */
static char *
request_head(struct docker *d, const char *method, const char *path,
    const char *ctype, bool has_len, unsigned long long clen,
    const char *extra, size_t room, size_t *hlen)
{
	char	*buf, cl[48] = "";
	size_t	 n;
	int	 k;

	for (const char *p = path; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return NULL;
	if (has_len)
		snprintf(cl, sizeof(cl), "Content-Length: %llu\r\n", clen);
	n = strlen(method) + strlen(path) + strlen(httpc_authority(d->ep)) +
	    (ctype != NULL ? strlen(ctype) : 0) + strlen(cl) +
	    (extra != NULL ? strlen(extra) : 0) + 128;
	if ((buf = malloc(n + room)) == NULL)
		return NULL;
	k = snprintf(buf, n, "%s /" API_VERSION "%s HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: code-sandbox\r\n%s%s%s%s%s\r\n", method, path,
	    httpc_authority(d->ep), ctype != NULL ? "Content-Type: " : "",
	    ctype != NULL ? ctype : "", ctype != NULL ? "\r\n" : "", cl,
	    extra != NULL ? extra : "");
	if (k < 0 || (size_t)k >= n) {
		free(buf);
		return NULL;
	}
	*hlen = (size_t)k;
	return buf;
}

/*
 * Send all len bytes within w. 0, or -1 (err set, or w->stopped). With
 * early not NULL, stops with *early set when the engine answers before
 * all was sent.
 */
static int
send_all(struct httpc_conn *c, const char *p, size_t len, struct waiter *w,
    bool *early, struct error *err)
{
	struct error	e;
	long		n;
	int		slice;
	bool		readable = false;

	while (len > 0) {
		if ((slice = waiter_slice(w, err)) == -1)
			return -1;
		n = httpc_write(c, p, len, slice, early != NULL ? &readable : NULL);
		if (n < 0) {
			error_set(&e, "the connection broke while sending");
			return broken(w->d, &e, err);
		}
		if (readable) {
			*early = true;
			return 0;
		}
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			waiter_moved(w);
		}
	}
	return 0;
}

/*
 * Read the response head within w: 1, or 0 when the connection closed
 * before a byte of it came (*empty: worth one more try on a new one), or
 * -1 (err set, or w->stopped), or -2 when fn stopped it.
 */
static int
read_head(struct httpc_conn *c, struct httpc_head *h, bool head_request,
    httpc_header_fn fn, void *arg, struct waiter *w, bool *empty,
    struct error *err)
{
	struct error	e;
	int		slice, rc;

	*empty = false;
	for (;;) {
		if ((slice = waiter_slice(w, err)) == -1)
			return -1;
		rc = httpc_read_head(c, h, head_request, fn, arg, slice, empty, &e);
		if (rc == 1 || rc == -2)
			return rc;
		if (rc == -1)
			return *empty ? 0 : broken(w->d, &e, err);
	}
}

/*
 * Each piece of the body of h, read from c, to fn (which returns -1 to stop
 * reading), every wait a slice of w, each piece pushing back a stall
 * deadline. 0 at the end of the body, 1 when fn stopped, -1 when a wait
 * ended (waiter_slice: err set, or w->stopped) or the body broke off (err).
 */
static int
body_each(struct httpc_conn *c, const struct httpc_head *h, struct waiter *w,
    int (*fn)(void *arg, const char *p, size_t n), void *arg,
    struct error *err)
{
	struct httpc_body	 hb;
	struct error		 e;
	const char		*p;
	size_t			 n;
	int			 slice, rc;

	httpc_body_init(&hb, c, h);
	for (;;) {
		if ((slice = waiter_slice(w, err)) == -1)
			return -1;
		rc = httpc_body_next(&hb, &p, &n, slice, &e);
		if (rc == 2)
			return 0;
		if (rc == -1)
			return broken(w->d, &e, err);
		if (rc == 1) {
			waiter_moved(w);
			if (fn(arg, p, n) == -1)
				return 1;
		}
	}
}

/* Read the whole body into b within w: 0, or -1 (err set, or w->stopped). */
static int
read_body(struct httpc_conn *c, const struct httpc_head *h, struct body *b,
    struct waiter *w, struct error *err)
{
	if (h->framing == HTTPC_LENGTH && h->length > b->max) {
		b->too_big = true;
		return error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): "
		    "response larger than %zu bytes", w->d->host, b->max);
	}
	switch (body_each(c, h, w, body_add, b, err)) {
	case 0:
		return 0;
	case 1:
		return b->too_big ? error_kind(err, ERR_UPSTREAM, "Docker engine at %s "
		    "(DOCKER_HOST): response larger than %zu bytes", w->d->host,
		    b->max) : error_set(err, "out of memory");
	default:
		return -1;
	}
}

/*
 * One call with a body held in memory (NULL: none; with_len says whether
 * a Content-Length goes out anyway), its answer read into b whole, within
 * the absolute deadline of a JSON call, on the kept connection.
 */
static int
call(struct docker *d, const char *method, const char *path,
    const char *ctype, const void *body, size_t blen, bool with_len,
    struct httpc_head *h, struct body *b, struct error *err)
{
	struct httpc_conn	*c = NULL;
	struct waiter		 w;
	char			*req = NULL;
	size_t			 hlen, room;
	bool			 head_request = strcmp(method, "HEAD") == 0;
	bool			 reused, empty, sent_failed;
	int			 ret = -1, rc, attempt;

	waiter_deadline(&w, d, REQUEST_TIMEOUT_MS, false);
	room = blen <= INLINE_BODY_MAX ? blen : 0;
	if ((req = request_head(d, method, path, ctype, with_len || blen > 0,
	    blen, NULL, room, &hlen)) == NULL) {
		error_set(err, "cannot build a Docker API request for %.100s",
		    path);
		goto out;
	}
	if (room > 0) {
		memcpy(req + hlen, body, blen);
		hlen += blen;
	}
	for (attempt = 0; attempt < 2; attempt++) {
		if ((c = conn_get(d, attempt == 0, 0, &reused, err)) == NULL)
			goto out;
		rc = send_all(c, req, hlen, &w, NULL, err);
		if (rc == 0 && room == 0 && blen > 0)
			rc = send_all(c, body, blen, &w, NULL, err);
		sent_failed = rc == -1 && err->kind == ERR_UPSTREAM;
		if (rc == 0)
			rc = read_head(c, h, head_request, NULL, NULL, &w,
			    &empty, err);
		if (rc == 1)
			break;
		/*
		 * A kept connection the engine had closed (the request could
		 * not be sent, or not one byte came back): once more, anew.
		 */
		if (reused && !stopping() && (rc == 0 || sent_failed)) {
			httpc_conn_close(c);
			c = NULL;
			continue;
		}
		if (rc == 0) {
			error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): "
			    "the connection closed before an answer", d->host);
		}
		goto out;
	}
	if (c == NULL)
		goto out;
	if (read_body(c, h, b, &w, err) == -1)
		goto out;
	httpc_conn_put(d->ep, c, !h->close);
	c = NULL;
	ret = 0;
out:
	httpc_conn_close(c);
	free(req);
	return ret;
}

int
docker_request(struct docker *d, const char *method, const char *path,
    struct json_object *body, long *status, struct json_object **resp,
    struct error *err)
{
	struct httpc_head	 h;
	struct body		 b = { .max = DOCKER_MAX_RESPONSE };
	struct json_object	*obj = NULL;
	struct error		 perr;
	const char		*text = NULL;
	size_t			 tlen = 0;
	int			 ret = -1;

	*status = 0;
	if (resp != NULL)
		*resp = NULL;
	if (body != NULL)
		text = js_text(body, &tlen);
	if (call(d, method, path, body != NULL ? "application/json" : NULL,
	    text, tlen, strcmp(method, "POST") == 0, &h, &b, err) == -1)
		goto out;
	*status = h.status;
	if (b.len > 0 && h.json) {
		obj = js_parse(b.buf, b.len, JS_MAX_DEPTH, &perr);
		if (obj == NULL && *status >= 200 && *status < 300) {
			error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): "
			    "%s", d->host, perr.msg);
			goto out;
		}
	}
	if (resp != NULL) {
		*resp = obj;
		obj = NULL;
	}
	ret = 0;
out:
	json_object_put(obj);
	free(b.buf);
	return ret;
}

/* err for a non-2xx answer whose body b is the engine's JSON error. */
static void
engine_refused(struct error *err, long status, const struct body *b,
    const char *what)
{
	struct json_object	*obj;
	struct error		 perr;

	obj = b->len > 0 ? js_parse(b->buf, b->len, JS_MAX_DEPTH, &perr) : NULL;
	error_kind(err, error_kind_of_http(status), "%s (HTTP %ld): %.200s", what, status,
	    docker_message(obj));
	json_object_put(obj);
}

int
docker_upload(struct docker *d, const char *path, const void *buf, size_t len,
    long *status, struct error *err)
{
	struct httpc_head	 h;
	struct body		 b = { .max = ERROR_BODY_MAX };
	int			 ret = -1;

	*status = 0;
	if (call(d, "PUT", path, "application/x-tar", buf, len, true, &h, &b,
	    err) == -1)
		goto out;
	*status = h.status;
	if (*status < 200 || *status > 299)
		engine_refused(err, *status, &b, "Docker engine");
	ret = 0;
out:
	free(b.buf);
	return ret;
}

/* The raw-stream frame decoder. */

void
docker_frames_init(struct docker_frames *f)
{
	memset(f, 0, sizeof(*f));
}

bool
docker_frames_at_boundary(const struct docker_frames *f)
{
	return !f->bad && f->hdr_len == 0 && f->left == 0;
}

int
docker_frames_feed(struct docker_frames *f, const char *buf, size_t len,
    docker_frame_fn fn, void *arg)
{
	size_t n;

	if (f->bad)
		return -1;
	while (len > 0) {
		if (f->left == 0) {
			/* In a header: collect up to 8 bytes. */
			n = sizeof(f->hdr) - f->hdr_len;
			if (n > len)
				n = len;
			memcpy(f->hdr + f->hdr_len, buf, n);
			f->hdr_len += n;
			buf += n;
			len -= n;
			if (f->hdr_len < sizeof(f->hdr))
				break;
			if (f->hdr[0] > 3 || f->hdr[1] != 0 || f->hdr[2] != 0 ||
			    f->hdr[3] != 0) {
				f->bad = true;
				return -1;
			}
			f->stream = f->hdr[0];
			f->left = (uint32_t)f->hdr[4] << 24 |
			    (uint32_t)f->hdr[5] << 16 |
			    (uint32_t)f->hdr[6] << 8 | (uint32_t)f->hdr[7];
			f->hdr_len = 0;
			continue;	/* an empty frame is just skipped */
		}
		n = f->left < len ? f->left : len;
		if (fn != NULL)
			fn(arg, f->stream, buf, n);
		f->left -= (uint32_t)n;
		buf += n;
		len -= n;
	}
	return 0;
}

static void
stream_output(void *arg, int stream, const char *buf, size_t len)
{
	const struct docker_exec_cb *cb = arg;

	/* Stream 0 is stdin echoed on stdout; 3 is the engine's own error. */
	if (stream == 0)
		stream = 1;
	else if (stream == 3)
		stream = 2;
	if (cb->output != NULL)
		cb->output(cb->arg, stream, buf, len);
}

void
docker_set_tick(struct docker *d, long ms)
{
	d->tick_ms = ms > 0 ? ms : 0;
}

long
docker_tick_ms(const struct docker *d)
{
	return d->tick_ms > 0 ? d->tick_ms : TICK_MS;
}

/* An exec stream's decoder and where its output goes (body_each's fn). */
struct exec_out {
	struct docker_frames		 frames;
	const struct docker_exec_cb	*cb;
};

static int
exec_piece(void *arg, const char *p, size_t n)
{
	struct exec_out	*xo = arg;

	return docker_frames_feed(&xo->frames, p, n, stream_output,
	    (void *)xo->cb);
}

int
docker_exec_start(struct docker *d, const char *id,
    const struct docker_exec_cb *cb, bool *stopped, struct error *err)
{
	static const char	 start_body[] = "{\"Detach\":false,\"Tty\":false}";
	struct httpc_conn	*c = NULL;
	struct httpc_head	 h;
	struct exec_out		 xo = { .cb = cb };
	struct body		 eb = { .max = ERROR_BODY_MAX };
	struct waiter		 w;
	char			*path = NULL, *req = NULL;
	size_t			 n, hlen;
	bool			 reused, empty;
	int			 ret = -1, rc;

	*stopped = false;
	waiter_tick(&w, d, cb);
	docker_frames_init(&xo.frames);
	n = strlen(id) + 16;
	if ((path = malloc(n)) == NULL)
		goto oom;
	snprintf(path, n, "/exec/%s/start", id);
	if ((req = request_head(d, "POST", path, "application/json", true,
	    sizeof(start_body) - 1, NULL, sizeof(start_body), &hlen)) == NULL) {
		error_set(err, "cannot build a Docker exec request");
		goto out;
	}
	memcpy(req + hlen, start_body, sizeof(start_body) - 1);
	hlen += sizeof(start_body) - 1;
	/* The engine hijacks this connection: a fresh one, never kept. */
	if ((c = conn_get(d, false, EXEC_BUFFER_SIZE, &reused, err)) == NULL)
		goto out;
	if (send_all(c, req, hlen, &w, NULL, err) == -1 ||
	    (rc = read_head(c, &h, false, NULL, NULL, &w, &empty, err)) == -1)
		goto end;
	if (rc == 0) {
		error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): the "
		    "connection closed before an answer", d->host);
		goto out;
	}
	if (h.status != 200 && h.status != 101) {
		if (read_body(c, &h, &eb, &w, err) == -1 && !eb.too_big)
			goto end;
		engine_refused(err, h.status, &eb, "Docker engine refused to "
		    "start the exec");
		goto out;
	}
	/* The multiplexed stream, until the engine closes it. */
	if (h.status == 101)
		h.framing = HTTPC_CLOSE;
	if ((rc = body_each(c, &h, &w, exec_piece, &xo, err)) == -1)
		goto end;
	if (rc == 1) {
		error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): "
		    "malformed exec output stream", d->host);
		goto out;
	}
	ret = 0;
	goto out;
end:
	/* A wait ended: by the tick or the stop flag, that is a stop. */
	if (w.stopped) {
		*stopped = true;
		ret = 0;
	}
	goto out;
oom:
	error_set(err, "out of memory");
out:
	httpc_conn_close(c);
	free(eb.buf);
	free(req);
	free(path);
	return ret;
}

/* A body nobody reads (docker_raw without a body callback). */
static int
ignore_piece(void *arg, const char *p, size_t n)
{
	(void)arg;
	(void)p;
	(void)n;
	return 0;
}

int
docker_raw(struct docker *d, const char *method, const char *path,
    const struct docker_raw_cb *cb, long *status, bool *stopped,
    struct error *err)
{
	struct httpc_conn	*c = NULL;
	struct httpc_head	 h;
	struct body		 eb = { .max = ERROR_BODY_MAX };
	struct waiter		 w;
	char			*req = NULL;
	size_t			 hlen;
	bool			 reused, empty;
	int			 ret = -1, rc;

	*status = 0;
	*stopped = false;
	waiter_deadline(&w, d, DOCKER_RAW_STALL_S * 1000L, true);
	if ((req = request_head(d, method, path, NULL, false, 0, NULL, 0,
	    &hlen)) == NULL) {
		error_set(err, "cannot build a Docker API request for %.100s",
		    path);
		goto out;
	}
	if ((c = conn_get(d, false, RAW_BUFFER_SIZE, &reused, err)) == NULL ||
	    send_all(c, req, hlen, &w, NULL, err) == -1)
		goto out;
	rc = read_head(c, &h, strcmp(method, "HEAD") == 0, cb->header,
	    cb->arg, &w, &empty, err);
	if (rc == -2) {
		*stopped = true;
		ret = 0;
		goto out;
	}
	if (rc == 0)
		error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): the "
		    "connection closed before an answer", d->host);
	if (rc != 1)
		goto out;
	*status = h.status;
	if (h.status < 200 || h.status > 299) {
		if (read_body(c, &h, &eb, &w, err) == -1)
			goto out;
		engine_refused(err, h.status, &eb, "Docker engine");
		ret = 0;
		goto out;
	}
	if ((rc = body_each(c, &h, &w, cb->body != NULL ? cb->body :
	    ignore_piece, cb->arg, err)) == -1)
		goto out;
	*stopped = rc == 1;
	ret = 0;
out:
	httpc_conn_close(c);
	free(eb.buf);
	free(req);
	return ret;
}

int
docker_put_stream(struct docker *d, const char *path, const char *ctype,
    unsigned long long length, const struct docker_put_cb *cb, long *status,
    bool *aborted, struct error *err)
{
	struct httpc_conn	*c = NULL;
	struct httpc_head	 h;
	struct body		 eb = { .max = ERROR_BODY_MAX };
	struct waiter		 w;
	char			*req = NULL, *piece = NULL;
	unsigned long long	 left = length;
	size_t			 hlen;
	long			 n;
	bool			 reused, empty, early = false;
	int			 ret = -1, rc;

	*status = 0;
	*aborted = false;
	waiter_deadline(&w, d, DOCKER_RAW_STALL_S * 1000L, true);
	if ((req = request_head(d, "PUT", path, ctype, true, length, NULL, 0,
	    &hlen)) == NULL || (piece = malloc(PUT_PIECE)) == NULL) {
		error_set(err, "cannot build a Docker API request for %.100s",
		    path);
		goto out;
	}
	if ((c = conn_get(d, false, 0, &reused, err)) == NULL ||
	    send_all(c, req, hlen, &w, &early, err) == -1)
		goto out;
	/* The body as the caller gives it; the engine may answer early. */
	while (left > 0 && !early) {
		n = cb->read(cb->arg, piece, left < PUT_PIECE ? (size_t)left :
		    PUT_PIECE);
		if (n < 0) {
			*aborted = true;
			ret = 0;
			goto out;
		}
		if (n == 0 || (unsigned long long)n > left) {
			error_kind(err, ERR_UPSTREAM, "the upload to the Docker engine "
			    "ended %s its announced length", n == 0 ? "before" :
			    "past");
			goto out;
		}
		left -= (unsigned long long)n;
		waiter_moved(&w);
		if (send_all(c, piece, (size_t)n, &w, &early, err) == -1) {
			/* The engine may have answered, then closed: read it. */
			if (err->kind != ERR_UPSTREAM || stopping())
				goto out;
			early = true;
		}
	}
	if ((rc = read_head(c, &h, false, NULL, NULL, &w, &empty, err)) == -1)
		goto out;
	if (rc == 0) {
		error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): the "
		    "connection closed before an answer", d->host);
		goto out;
	}
	*status = h.status;
	if (read_body(c, &h, &eb, &w, err) == -1 && !eb.too_big)
		goto out;
	if (*status < 200 || *status > 299)
		engine_refused(err, *status, &eb, "Docker engine");
	ret = 0;
out:
	httpc_conn_close(c);
	free(eb.buf);
	free(piece);
	free(req);
	return ret;
}

/*
 * A hijacked exec connection (docker_exec_attach): after the engine's
 * answer head, the connection is a plain byte stream both ways. Reads and
 * writes never block past the time given; httpc serialises TLS calls so
 * one thread may read while another writes.
 */
#define ATTACH_SETUP_MS		10000

struct docker_conn {
	struct httpc_conn	*c;
};

int
docker_conn_send(struct docker_conn *dc, const void *buf, size_t len,
    long long deadline_ms, struct error *err)
{
	const char	*p = buf;
	long long	 left;
	long		 n;

	while (len > 0) {
		if (stopping())
			return error_kind(err, ERR_UNAVAILABLE, "the server is stopping");
		if ((left = deadline_ms - clock_ms()) <= 0)
			return error_kind(err, ERR_TIMEOUT, "the exec connection "
			    "took no data for too long");
		n = httpc_write(dc->c, p, len, left > SLICE_MS ? SLICE_MS :
		    (int)left, NULL);
		if (n < 0)
			return error_kind(err, ERR_UPSTREAM, "the exec connection broke");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

long
docker_conn_recv(struct docker_conn *dc, void *buf, size_t len, int wait_ms)
{
	return httpc_recv(dc->c, buf, len, wait_ms);
}

void
docker_conn_shutdown(struct docker_conn *dc)
{
	httpc_shutdown(dc->c);
}

void
docker_conn_close(struct docker_conn *dc)
{
	if (dc == NULL)
		return;
	httpc_conn_close(dc->c);
	free(dc);
}

long
docker_attach_head(const char *p, size_t len, size_t *head_len)
{
	struct httpc_head	h;
	long			n;

	*head_len = 0;
	if ((n = httpc_head_parse(p, len, &h, NULL, NULL)) <= 0)
		return n < 0 ? -1 : 0;
	*head_len = (size_t)n;
	return h.status;
}

int
docker_exec_attach(struct docker *d, const char *id, struct docker_conn **out,
    struct error *err)
{
	static const char	 body[] = "{\"Detach\":false,\"Tty\":false}";
	struct docker_conn	*dc = NULL;
	struct httpc_head	 h;
	struct error		 e;
	char			*req = NULL, *path = NULL;
	size_t			 hlen, n;
	long long		 deadline = clock_ms() + ATTACH_SETUP_MS, left;
	bool			 reused, empty;
	int			 ret = -1, rc;

	*out = NULL;
	n = strlen(id) + 16;
	if ((dc = calloc(1, sizeof(*dc))) == NULL || (path = malloc(n)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	snprintf(path, n, "/exec/%s/start", id);
	if ((req = request_head(d, "POST", path, "application/json", true,
	    sizeof(body) - 1, "Connection: Upgrade\r\nUpgrade: tcp\r\n",
	    sizeof(body), &hlen)) == NULL) {
		error_set(err, "exec id too long or malformed");
		goto out;
	}
	memcpy(req + hlen, body, sizeof(body) - 1);
	hlen += sizeof(body) - 1;
	if ((dc->c = conn_get(d, false, 0, &reused, err)) == NULL ||
	    docker_conn_send(dc, req, hlen, deadline, err) == -1)
		goto out;
	/* The answer's head; what follows it in the buffer is the stream. */
	for (;;) {
		if (stopping()) {
			error_kind(err, ERR_UNAVAILABLE, "the server is stopping");
			goto out;
		}
		if ((left = deadline - clock_ms()) <= 0) {
			error_kind(err, ERR_TIMEOUT, "Docker engine at %s: no answer "
			    "to exec start within %d s", d->host,
			    ATTACH_SETUP_MS / 1000);
			goto out;
		}
		rc = httpc_read_head(dc->c, &h, false, NULL, NULL,
		    left > SLICE_MS ? SLICE_MS : (int)left, &empty, &e);
		if (rc == 1)
			break;
		if (rc == -1) {
			error_kind(err, ERR_UPSTREAM, "Docker engine at %s: %s", d->host,
			    e.msg);
			goto out;
		}
	}
	if (h.status != 101 && h.status != 200) {
		error_kind(err, h.status == 404 || h.status == 409 ?
		    error_kind_of_http(h.status) : ERR_UPSTREAM, "Docker engine refused to start the exec "
		    "(HTTP %d)", h.status);
		goto out;
	}
	*out = dc;
	dc = NULL;
	ret = 0;
out:
	free(req);
	free(path);
	docker_conn_close(dc);
	return ret;
}
