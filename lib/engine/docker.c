/*
 * docker.c: a small Docker Engine API client; see docker.h.
 *
 * The HTTP/1.1 underneath is httpc.c's; this file knows the Engine API:
 * the version prefix, which calls keep their connection, how long each
 * kind of call may wait, and how the engine's answers are read.
 *
 * Three kinds of wait (struct docker_waiter): a JSON call has an absolute
 * deadline; a raw stream (the archive API) a stall deadline that moves
 * whenever bytes move; an exec stream none of its own, only the caller's
 * tick. All of them wait in slices of at most a second and ask the stop
 * flag between slices, so no call keeps a worker from honouring SIGTERM.
 *
 * JSON calls share one kept connection per struct docker (a keep-alive
 * connection the engine closed meanwhile is noticed by an answer that
 * never starts, and the call is sent once more on a new one); streams and
 * hijacked connections each get a fresh one, closed at their end
 * (docker_exec.c, docker_attach.c, docker_archive.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/httpc.h"
#include "base/js.h"
#include "base/url.h"
#include "engine/docker.h"
#include "engine/extern.h"

#define API_VERSION		"v1.41"
#define CONNECT_TIMEOUT_MS	5000L
#define REQUEST_TIMEOUT_MS	(DOCKER_REQUEST_TIMEOUT_S * 1000L)
/* A body this small goes out in one write with its head. */
#define INLINE_BODY_MAX		(16u << 10)

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

/* The connection closed before the answer's head: -1 with err. */
int
docker_closed_early(const struct docker *d, struct error *err)
{
	return error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): "
	    "the connection closed before an answer", d->host);
}

/*
 * Keep n more bytes of the body b (a struct docker_body, as
 * docker_body_each hands it); -1 when it would pass its maximum or memory
 * ran out.
 */
static int
body_add(void *arg, const char *p, size_t n)
{
	struct docker_body	*b = arg;
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

void
docker_waiter_deadline(struct docker_waiter *w, struct docker *d, long ms,
    bool stall)
{
	memset(w, 0, sizeof(*w));
	w->d = d;
	w->deadline = clock_ms() + ms;
	w->stall_ms = stall ? ms : 0;
}

void
docker_waiter_tick(struct docker_waiter *w, struct docker *d,
    const struct docker_exec_cb *cb)
{
	memset(w, 0, sizeof(*w));
	w->d = d;
	w->cb = cb;
	w->next_tick = clock_ms() + docker_tick_ms(d);
}

void
docker_waiter_moved(struct docker_waiter *w)
{
	if (w->stall_ms > 0)
		w->deadline = clock_ms() + w->stall_ms;
}

/*
 * The next wait in milliseconds (1 to DOCKER_SLICE_MS), or -1 when the
 * call must end: time is up or the stop flag rose (err set), or the tick
 * said stop (w->stopped set). A tick runs here, outside any read.
 */
static int
waiter_slice(struct docker_waiter *w, struct error *err)
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
	if (left > DOCKER_SLICE_MS)
		left = DOCKER_SLICE_MS;
	return left < 1 ? 1 : (int)left;
}

/* A connection for one call, connecting within CONNECT_TIMEOUT_MS. */
struct httpc_conn *
docker_connect(struct docker *d, bool reuse, size_t bufsize, bool *reused,
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
 * last guard against a request split in two). See extern.h.
 */
char *
docker_request_head(struct docker *d, const char *method, const char *path,
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
int
docker_send_all(struct httpc_conn *c, const char *p, size_t len,
    struct docker_waiter *w, bool *early, struct error *err)
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
			docker_waiter_moved(w);
		}
	}
	return 0;
}

/*
 * Read the response head within w: DOCKER_HEAD_READ, or DOCKER_HEAD_CLOSED
 * when the connection closed before a byte of it came (*empty: worth one
 * more try on a new one), or DOCKER_HEAD_FAILED (err set, or w->stopped),
 * or DOCKER_HEAD_STOPPED when fn stopped it.
 */
enum docker_head
docker_read_head(struct httpc_conn *c, struct httpc_head *h, bool head_request,
    httpc_header_fn fn, void *arg, struct docker_waiter *w, bool *empty,
    struct error *err)
{
	struct error	e;
	int		slice, rc;

	*empty = false;
	for (;;) {
		if ((slice = waiter_slice(w, err)) == -1)
			return DOCKER_HEAD_FAILED;
		/* httpc.h: 1 a head, 0 again, -1 ended or malformed, -2 fn. */
		rc = httpc_read_head(c, h, head_request, fn, arg, slice, empty, &e);
		if (rc == 1)
			return DOCKER_HEAD_READ;
		if (rc == -2)
			return DOCKER_HEAD_STOPPED;
		if (rc == -1) {
			if (*empty)
				return DOCKER_HEAD_CLOSED;
			broken(w->d, &e, err);
			return DOCKER_HEAD_FAILED;
		}
	}
}

/*
 * Each piece of the body of h, read from c, to fn (which returns -1 to stop
 * reading), every wait a slice of w, each piece pushing back a stall
 * deadline. DOCKER_BODY_DONE at the end of the body, DOCKER_BODY_STOPPED
 * when fn stopped, DOCKER_BODY_FAILED when a wait ended (waiter_slice: err
 * set, or w->stopped) or the body broke off (err).
 */
enum docker_body_end
docker_body_each(struct httpc_conn *c, const struct httpc_head *h,
    struct docker_waiter *w, int (*fn)(void *arg, const char *p, size_t n),
    void *arg, struct error *err)
{
	struct httpc_body	 hb;
	struct error		 e;
	const char		*p;
	size_t			 n;
	int			 slice, rc;

	httpc_body_init(&hb, c, h);
	for (;;) {
		if ((slice = waiter_slice(w, err)) == -1)
			return DOCKER_BODY_FAILED;
		/* httpc.h: 2 the end, 1 a piece, -1 broken, 0 call again. */
		rc = httpc_body_next(&hb, &p, &n, slice, &e);
		if (rc == 2)
			return DOCKER_BODY_DONE;
		if (rc == -1) {
			broken(w->d, &e, err);
			return DOCKER_BODY_FAILED;
		}
		if (rc == 1) {
			docker_waiter_moved(w);
			if (fn(arg, p, n) == -1)
				return DOCKER_BODY_STOPPED;
		}
	}
}

/* Read the whole body into b within w: 0, or -1 (err set, or w->stopped). */
int
docker_read_body(struct httpc_conn *c, const struct httpc_head *h,
    struct docker_body *b, struct docker_waiter *w, struct error *err)
{
	if (h->framing == HTTPC_LENGTH && h->length > b->max) {
		b->too_big = true;
		return error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): "
		    "response larger than %zu bytes", w->d->host, b->max);
	}
	switch (docker_body_each(c, h, w, body_add, b, err)) {
	case DOCKER_BODY_DONE:
		return 0;
	case DOCKER_BODY_STOPPED:
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
    struct httpc_head *h, struct docker_body *b, struct error *err)
{
	struct httpc_conn	*c = NULL;
	struct docker_waiter	 w;
	char			*req = NULL;
	size_t			 hlen, room;
	bool			 head_request = strcmp(method, "HEAD") == 0;
	bool			 reused, empty, sent_failed;
	int			 ret = -1, rc, attempt;

	docker_waiter_deadline(&w, d, REQUEST_TIMEOUT_MS, false);
	room = blen <= INLINE_BODY_MAX ? blen : 0;
	if ((req = docker_request_head(d, method, path, ctype,
	    with_len || blen > 0, blen, NULL, room, &hlen)) == NULL) {
		error_set(err, "cannot build a Docker API request for %.100s",
		    path);
		goto out;
	}
	if (room > 0) {
		memcpy(req + hlen, body, blen);
		hlen += blen;
	}
	for (attempt = 0; attempt < 2; attempt++) {
		if ((c = docker_connect(d, attempt == 0, 0, &reused, err)) == NULL)
			goto out;
		rc = docker_send_all(c, req, hlen, &w, NULL, err);
		if (rc == 0 && room == 0 && blen > 0)
			rc = docker_send_all(c, body, blen, &w, NULL, err);
		sent_failed = rc == -1 && err->kind == ERR_UPSTREAM;
		if (rc == 0)
			rc = docker_read_head(c, h, head_request, NULL, NULL, &w,
			    &empty, err);
		if (rc == DOCKER_HEAD_READ)
			break;
		/*
		 * A kept connection the engine had closed (the request could
		 * not be sent, or not one byte came back): once more, anew.
		 */
		if (reused && !stopping() && (rc == DOCKER_HEAD_CLOSED ||
		    sent_failed)) {
			httpc_conn_close(c);
			c = NULL;
			continue;
		}
		if (rc == DOCKER_HEAD_CLOSED)
			docker_closed_early(d, err);
		goto out;
	}
	if (c == NULL)
		goto out;
	if (docker_read_body(c, h, b, &w, err) == -1)
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
	struct docker_body	 b = { .max = DOCKER_MAX_RESPONSE };
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
void
docker_refused(struct error *err, long status, const struct docker_body *b,
    const char *what)
{
	struct json_object	*obj;
	struct error		 perr;

	obj = b->len > 0 ? js_parse(b->buf, b->len, JS_MAX_DEPTH, &perr) : NULL;
	error_kind(err, error_kind_of_http(status), "%s (HTTP %ld): %.200s",
	    what, status, docker_message(obj));
	json_object_put(obj);
}

int
docker_upload(struct docker *d, const char *path, const void *buf, size_t len,
    long *status, struct error *err)
{
	struct httpc_head	 h;
	struct docker_body	 b = { .max = DOCKER_ERROR_BODY_MAX };
	int			 ret = -1;

	*status = 0;
	if (call(d, "PUT", path, "application/x-tar", buf, len, true, &h, &b,
	    err) == -1)
		goto out;
	*status = h.status;
	if (*status < 200 || *status > 299)
		docker_refused(err, *status, &b, "Docker engine");
	ret = 0;
out:
	free(b.buf);
	return ret;
}
