/*
 * docker.c: a small Docker Engine API client; see docker.h.
 *
 * The HTTP/1.1 underneath is libcurl's (lib/base/xfer.h); this file knows
 * the Engine API: the version prefix, which calls keep their connection,
 * how long each kind of call may wait, and how the engine's answers are
 * checked and read.
 *
 * Three kinds of wait (struct docker_waiter): a JSON call has an absolute
 * deadline; a raw stream (the archive API) a stall deadline that moves
 * whenever bytes move; an exec stream none of its own, only the caller's
 * tick. All of them wait in slices of at most a second and ask the stop
 * flag between slices, so no call keeps a worker from honouring SIGTERM.
 *
 * JSON calls share one kept connection per struct docker (libcurl notices
 * a kept connection the engine closed meanwhile and sends the call once
 * more on a new one); streams and hijacked connections each get a fresh
 * one, closed at their end (docker_exec.c, docker_attach.c,
 * docker_archive.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/js.h"
#include "base/url.h"
#include "base/xfer.h"
#include "engine/docker.h"
#include "engine/extern.h"

#define API_VERSION		"v1.41"
#define REQUEST_TIMEOUT_MS	(DOCKER_REQUEST_TIMEOUT_S * 1000L)

static bool (*stop_flag)(void);

void
docker_set_stop(bool (*stopping)(void))
{
	stop_flag = stopping;
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
	return xfer_global_init();
}

void
docker_global_cleanup(void)
{
	xfer_global_cleanup();
}

/* s joined to the end of a new string of prefix: NULL when out of memory. */
static char *
joined(const char *prefix, const char *s)
{
	size_t	 n = strlen(prefix) + strlen(s) + 1;
	char	*p;

	if ((p = malloc(n)) != NULL)
		snprintf(p, n, "%s%s", prefix, s);
	return p;
}

/* The TCP endpoint of DOCKER_HOST tcp://host:port: base URL and authority. */
static int
open_tcp(struct docker *d, const char *host, bool tls_verify,
    const char *cert_path, struct error *err)
{
	struct url	 u;
	char		*hp = NULL, auth[300];
	size_t		 n = strlen(host);
	bool		 v6;
	int		 rc = -1;

	/* host:port only, checked by the one URL parser (url.h). */
	if (n == 0 || n > 261 || (hp = joined("http://", host)) == NULL ||
	    url_split_origin(hp, &u) == -1 || u.hostlen == 0) {
		error_set(err, "DOCKER_HOST: expected tcp://host:port");
		goto out;
	}
	/* An IPv6 literal goes in brackets, as a URL wants it. */
	v6 = memchr(u.host, ':', u.hostlen) != NULL;
	snprintf(auth, sizeof(auth), "%s%.*s%s:%.*s", v6 ? "[" : "",
	    (int)u.hostlen, u.host, v6 ? "]" : "",
	    u.port != NULL ? (int)u.portlen : 4, u.port != NULL ? u.port :
	    tls_verify ? "2376" : "2375");
	if ((d->authority = strdup(auth)) == NULL)
		goto oom;
	n = strlen(auth) + 32;
	if ((d->base = malloc(n)) == NULL)
		goto oom;
	snprintf(d->base, n, "%s://%s/" API_VERSION, tls_verify ? "https" :
	    "http", auth);
	if (tls_verify) {
		if (cert_path == NULL || *cert_path == '\0') {
			error_set(err, "DOCKER_CERT_PATH: required with "
			    "DOCKER_TLS_VERIFY");
			goto out;
		}
		if ((d->ca = joined(cert_path, "/ca.pem")) == NULL ||
		    (d->cert = joined(cert_path, "/cert.pem")) == NULL ||
		    (d->key = joined(cert_path, "/key.pem")) == NULL)
			goto oom;
		/* The files are read at each connection: say now if one is missing. */
		for (const char *f = d->ca; f != NULL; f = f == d->ca ? d->cert :
		    f == d->cert ? d->key : NULL) {
			FILE *fp;

			if ((fp = fopen(f, "r")) == NULL) {
				error_set(err, "DOCKER_CERT_PATH: cannot read %.300s "
				    "(the Docker engine's TLS files)", f);
				goto out;
			}
			fclose(fp);
		}
	}
	rc = 0;
	goto out;
oom:
	error_set(err, "out of memory");
out:
	free(hp);
	return rc;
}

int
docker_open(const char *host, bool tls_verify, const char *cert_path,
    struct docker **out, struct error *err)
{
	struct docker	*d;
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
		if ((d->unix_path = strdup(host + 7)) == NULL ||
		    (d->authority = strdup("docker")) == NULL ||
		    (d->base = strdup("http://docker/" API_VERSION)) == NULL)
			goto oom;
	} else if (strncmp(host, "tcp://", 6) == 0) {
		if (open_tcp(d, host + 6, tls_verify, cert_path, err) == -1)
			goto out;
	} else {
		error_set(err, "DOCKER_HOST: expected unix:///path or tcp://host:port");
		goto out;
	}
	if ((d->json = curl_easy_init()) == NULL ||
	    (d->multi = curl_multi_init()) == NULL)
		goto oom;
	/* One connection kept for JSON calls. */
	curl_multi_setopt(d->multi, CURLMOPT_MAXCONNECTS, 1L);
	*out = d;
	d = NULL;
	rc = 0;
	goto out;
oom:
	error_set(err, "out of memory");
out:
	docker_close(d);
	return rc;
}

void
docker_close(struct docker *d)
{
	if (d == NULL)
		return;
	if (d->json != NULL)
		curl_easy_cleanup(d->json);
	if (d->multi != NULL)
		curl_multi_cleanup(d->multi);
	free(d->host);
	free(d->base);
	free(d->authority);
	free(d->unix_path);
	free(d->ca);
	free(d->cert);
	free(d->key);
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

/* A header's name, case aside: the value after its colon, or NULL. */
static const char *
header_value(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);

	if (len <= n || line[n] != ':' || strncasecmp(line, name, n) != 0)
		return NULL;
	line += n + 1;
	while (*line == ' ' || *line == '\t')
		line++;
	return line;
}

int
docker_head_line(struct docker_head *h, const char *line, size_t len,
    size_t *vlen, const char **why)
{
	const char	*v, *end;
	size_t		 i;

	*vlen = 0;
	if ((h->bytes += len) > DOCKER_HEAD_MAX)
		return (*why = "answer head too long", -1);
	if (len < 2 || line[len - 2] != '\r' || line[len - 1] != '\n')
		return (*why = "malformed answer head (a line without CRLF)", -1);
	len -= 2;
	for (i = 0; i < len; i++)
		if (((unsigned char)line[i] < 0x20 && line[i] != '\t') ||
		    line[i] == 0x7f)
			return (*why = "malformed answer head (a control byte)", -1);
	if (h->ended)
		return 0;	/* a chunked body's trailer: dropped */
	if (h->status == 0) {
		/* A status line: HTTP/1.x SP 3DIGIT [SP reason]. */
		if (len < 12 || (memcmp(line, "HTTP/1.0 ", 9) != 0 &&
		    memcmp(line, "HTTP/1.1 ", 9) != 0) ||
		    line[9] < '1' || line[9] > '9' ||
		    line[10] < '0' || line[10] > '9' ||
		    line[11] < '0' || line[11] > '9' ||
		    (len > 12 && line[12] != ' '))
			return (*why = "malformed answer head (the status line)", -1);
		h->status = (line[9] - '0') * 100 + (line[10] - '0') * 10 +
		    (line[11] - '0');
		if (h->status < 200 && ++h->interim > DOCKER_INTERIM_MAX)
			return (*why = "too many interim answers", -1);
		h->length = h->chunked = h->json = false;
		return 0;
	}
	if (len == 0) {
		/* The blank line: a 1xx answer is followed by another head. */
		if (h->status >= 200)
			h->ended = true;
		h->status = h->ended ? h->status : 0;
		return 0;
	}
	if (line[0] == ' ' || line[0] == '\t' || memchr(line, ':', len) == NULL)
		return (*why = "malformed answer head (a header line)", -1);
	if (h->status < 200)
		return 0;
	end = line + len;
	if ((v = header_value(line, len, "Content-Length")) != NULL) {
		const char *d0 = v;

		if (h->length || v == end)
			return (*why = "malformed answer head (Content-Length)", -1);
		for (; v < end && *v != ' ' && *v != '\t'; v++)
			if (*v < '0' || *v > '9')
				return (*why = "malformed answer head "
				    "(Content-Length)", -1);
		/* At most 18 digits: libcurl would read a longer one as none. */
		if (v - d0 > 18)
			return (*why = "malformed answer head (Content-Length "
			    "too large)", -1);
		h->length = true;
	} else if ((v = header_value(line, len, "Transfer-Encoding")) != NULL) {
		if ((size_t)(end - v) < 7 || strncasecmp(v, "chunked", 7) != 0)
			return (*why = "malformed answer head (a transfer "
			    "coding other than chunked)", -1);
		h->chunked = true;
	} else if ((v = header_value(line, len, "Content-Type")) != NULL)
		h->json = (size_t)(end - v) >= 16 &&
		    strncasecmp(v, "application/json", 16) == 0;
	if (h->length && h->chunked)
		return (*why = "malformed answer head (both a length and "
		    "chunks)", -1);
	*vlen = len;
	return 1;
}

/* libcurl's header callback: each line checked, the final ones passed on. */
static size_t
header_cb(char *line, size_t size, size_t n, void *arg)
{
	struct docker_xfer	*x = arg;
	const char		*why = NULL;
	size_t			 len;
	int			 rc;

	rc = docker_head_line(&x->head, line, size * n, &len, &why);
	if (rc == -1) {
		x->why = why;
		return 0;
	}
	if (rc == 1 && x->header != NULL && x->header(x->header_arg, line,
	    len) == -1) {
		x->stopped = true;
		return 0;
	}
	return size * n;
}

/* Keep n more bytes of the body b; false when past its maximum or out of memory. */
static bool
body_add(struct docker_body *b, const char *p, size_t n)
{
	size_t	 cap;
	char	*nb;

	if (n > b->max - b->len) {
		b->too_big = true;
		return false;
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap == 0 ? 4096 : b->cap;
		while (cap < b->len + n + 1)
			cap *= 2;
		if (cap > b->max + 1)
			cap = b->max + 1;
		if ((nb = realloc(b->buf, cap)) == NULL)
			return false;
		b->buf = nb;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return true;
}

size_t
docker_body_write(char *p, size_t size, size_t n, void *arg)
{
	return body_add(arg, p, size * n) ? size * n : 0;
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
 * call must end: time is up or the stop flag rose (w->why set), or the
 * tick said stop (w->stopped set). A tick runs here, outside any callback
 * of the transfer (xfer_run calls it between turns).
 */
static int
waiter_slice(void *arg)
{
	struct docker_waiter	*w = arg;
	long long		 now = clock_ms(), left;

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
			return error_kind(&w->why, ERR_UNAVAILABLE, "the server is "
			    "stopping");
		if (now >= w->deadline)
			return error_kind(&w->why, ERR_UNAVAILABLE, "cannot reach the "
			    "Docker engine at %s (DOCKER_HOST): %s %ld s",
			    w->d->host, w->stall_ms > 0 ? "nothing moved for" :
			    "no complete answer within", w->stall_ms > 0 ?
			    w->stall_ms / 1000 : REQUEST_TIMEOUT_MS / 1000);
		left = w->deadline - now;
	}
	if (left > DOCKER_SLICE_MS)
		left = DOCKER_SLICE_MS;
	return left < 1 ? 1 : (int)left;
}

/* The engine's address, its TLS files, the timeouts: on a reset handle. */
static int
engine_options(struct docker *d, CURL *e, char *errbuf)
{
	if (xfer_defaults(e, errbuf) == -1 ||
	    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, DOCKER_CONNECT_MS) != CURLE_OK ||
	    /* The path as built: no squashing of dot segments. */
	    curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L) != CURLE_OK ||
	    /*
	     * A name lookup abandoned (the stop flag, a deadline) is left to
	     * finish on its own: libcurl would wait for it otherwise.
	     */
	    curl_easy_setopt(e, CURLOPT_QUICK_EXIT, 1L) != CURLE_OK)
		return -1;
	if (d->unix_path != NULL &&
	    curl_easy_setopt(e, CURLOPT_UNIX_SOCKET_PATH, d->unix_path) != CURLE_OK)
		return -1;
	/* The engine's CA alone: not the system's store beside it. */
	if (d->ca != NULL &&
	    (curl_easy_setopt(e, CURLOPT_CAINFO, d->ca) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_CAPATH, NULL) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_SSLCERT, d->cert) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_SSLKEY, d->key) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK))
		return -1;
	return 0;
}

/* A fresh handle on the engine with its options (docker_attach.c too). */
CURL *
docker_fresh_handle(struct docker *d, char *errbuf)
{
	CURL	*e;

	if ((e = curl_easy_init()) == NULL)
		return NULL;
	if (engine_options(d, e, errbuf) == -1) {
		curl_easy_cleanup(e);
		return NULL;
	}
	return e;
}

int
docker_xfer_open(struct docker_xfer *x, struct docker *d, bool fresh,
    const char *method, const char *path, const char *ctype,
    struct error *err)
{
	struct curl_slist	*l;
	char			*url = NULL, hdr[160];
	int			 rc = -1;

	memset(x, 0, sizeof(*x));
	x->d = d;
	x->fresh = fresh;
	/* The callers build paths of safe bytes: this is the last guard. */
	for (const char *p = path; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return error_set(err, "cannot build a Docker API request "
			    "for %.100s", path);
	if (fresh) {
		if ((x->e = docker_fresh_handle(d, x->errbuf)) == NULL ||
		    (x->m = curl_multi_init()) == NULL)
			goto oom;
	} else {
		x->e = d->json;
		x->m = d->multi;
		curl_easy_reset(x->e);
		if (engine_options(d, x->e, x->errbuf) == -1)
			goto oom;
	}
	if ((url = joined(d->base, path)) == NULL ||
	    curl_easy_setopt(x->e, CURLOPT_URL, url) != CURLE_OK)
		goto oom;
	/* No Expect: 100-continue wait before a body. */
	if ((l = curl_slist_append(NULL, "Expect:")) == NULL)
		goto oom;
	x->hdrs = l;
	/* No type given: none sent (not libcurl's form type for a POST). */
	snprintf(hdr, sizeof(hdr), "Content-Type:%s%s", ctype != NULL ? " " : "",
	    ctype != NULL ? ctype : "");
	if ((l = curl_slist_append(x->hdrs, hdr)) == NULL)
		goto oom;
	x->hdrs = l;
	if (curl_easy_setopt(x->e, CURLOPT_HTTPHEADER, x->hdrs) != CURLE_OK ||
	    curl_easy_setopt(x->e, CURLOPT_HEADERFUNCTION, header_cb) != CURLE_OK ||
	    curl_easy_setopt(x->e, CURLOPT_HEADERDATA, x) != CURLE_OK)
		goto oom;
	if (strcmp(method, "HEAD") == 0)
		rc = curl_easy_setopt(x->e, CURLOPT_NOBODY, 1L) == CURLE_OK ? 0 : -1;
	else if (strcmp(method, "GET") == 0)
		rc = 0;
	else if (strcmp(method, "POST") == 0)
		/* A POST says its (empty) length unless a body comes. */
		rc = docker_xfer_memory(x, method, "", 0);
	else
		rc = curl_easy_setopt(x->e, CURLOPT_CUSTOMREQUEST, method) ==
		    CURLE_OK ? 0 : -1;
	if (rc == -1)
		goto oom;
	free(url);
	return 0;
oom:
	free(url);
	return error_set(err, "out of memory");
}

int
docker_xfer_memory(struct docker_xfer *x, const char *method, const void *buf,
    size_t len)
{
	if (curl_easy_setopt(x->e, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)len) != CURLE_OK ||
	    curl_easy_setopt(x->e, CURLOPT_POSTFIELDS, buf) != CURLE_OK)
		return -1;
	if (strcmp(method, "POST") != 0 &&
	    curl_easy_setopt(x->e, CURLOPT_CUSTOMREQUEST, method) != CURLE_OK)
		return -1;
	return 0;
}

void
docker_xfer_done(struct docker_xfer *x)
{
	if (x->fresh) {
		if (x->e != NULL)
			curl_easy_cleanup(x->e);
		if (x->m != NULL)
			curl_multi_cleanup(x->m);
	} else if (x->e != NULL) {
		/* The kept handle keeps no pointer into this call. */
		curl_easy_setopt(x->e, CURLOPT_HTTPHEADER, NULL);
		curl_easy_setopt(x->e, CURLOPT_POSTFIELDS, NULL);
		curl_easy_setopt(x->e, CURLOPT_ERRORBUFFER, NULL);
		curl_easy_setopt(x->e, CURLOPT_HEADERDATA, NULL);
		curl_easy_setopt(x->e, CURLOPT_WRITEDATA, NULL);
	}
	curl_slist_free_all(x->hdrs);
	memset(x, 0, sizeof(*x));
}

long
docker_xfer_status(struct docker_xfer *x)
{
	long status = 0;

	curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &status);
	return status;
}

enum docker_run
docker_xfer_run(struct docker_xfer *x, struct docker_waiter *w, long *status,
    struct error *err)
{
	struct docker	*d = x->d;
	CURLcode	 res;

	*status = 0;
	switch (xfer_run(x->m, x->e, waiter_slice, w, &x->res)) {
	case XFER_FAILED:
		error_set(err, "out of memory");
		return DOCKER_RUN_FAILED;
	case XFER_STOPPED:
		if (w->stopped) {
			*status = docker_xfer_status(x);
			return DOCKER_RUN_STOPPED;
		}
		*err = w->why;
		return DOCKER_RUN_FAILED;
	case XFER_DONE:
		break;
	}
	res = x->res;
	if (x->why != NULL) {
		error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): "
		    "%s", d->host, x->why);
		return DOCKER_RUN_FAILED;
	}
	if (x->stopped && (res == CURLE_WRITE_ERROR || res == CURLE_ABORTED_BY_CALLBACK)) {
		/* The status of the answer a callback stopped (0 before its head). */
		*status = docker_xfer_status(x);
		return DOCKER_RUN_STOPPED;
	}
	if (stopping() && res != CURLE_OK) {
		error_kind(err, ERR_UNAVAILABLE, "the server is stopping");
		return DOCKER_RUN_FAILED;
	}
	switch (res) {
	case CURLE_OK:
		*status = docker_xfer_status(x);
		return DOCKER_RUN_DONE;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
		if (docker_xfer_status(x) == 0) {
			docker_unreachable(d, x->e, res, x->errbuf, err);
			return DOCKER_RUN_FAILED;
		}
		break;
	case CURLE_GOT_NOTHING:
		error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): "
		    "the connection closed before an answer", d->host);
		return DOCKER_RUN_FAILED;
	default:
		break;
	}
	error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): %s",
	    d->host, xfer_reason(res, x->errbuf));
	return DOCKER_RUN_FAILED;
}

/* See extern.h. */
int
docker_unreachable(struct docker *d, CURL *e, CURLcode res,
    const char *errbuf, struct error *err)
{
	long	os = 0;

	curl_easy_getinfo(e, CURLINFO_OS_ERRNO, &os);
	if (res == CURLE_COULDNT_CONNECT && os != 0)
		return error_kind(err, ERR_UNAVAILABLE, "cannot reach the Docker "
		    "engine at %s (DOCKER_HOST): cannot connect to %s%s: %s",
		    d->host, d->unix_path != NULL ? "the unix socket " : "",
		    d->unix_path != NULL ? d->unix_path : d->authority,
		    strerror((int)os));
	return error_kind(err, ERR_UNAVAILABLE, "cannot reach the Docker engine "
	    "at %s (DOCKER_HOST): %s", d->host, xfer_reason(res, errbuf));
}

/*
 * One call with a body held in memory (NULL: none), its answer read into
 * b whole (at most b->max bytes), within the absolute deadline of a JSON
 * call, on the kept connection. 0 with *status, or -1 with err.
 */
static int
call(struct docker *d, const char *method, const char *path,
    const char *ctype, const void *body, size_t blen,
    long *status, struct docker_body *b, bool *json, struct error *err)
{
	struct docker_xfer	 x;
	struct docker_waiter	 w;
	int			 ret = -1;

	docker_waiter_deadline(&w, d, REQUEST_TIMEOUT_MS, false);
	if (docker_xfer_open(&x, d, false, method, path, ctype, err) == -1)
		goto out;
	if ((body != NULL && docker_xfer_memory(&x, method, body, blen) == -1) ||
	    curl_easy_setopt(x.e, CURLOPT_WRITEFUNCTION, docker_body_write) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_WRITEDATA, b) != CURLE_OK ||
	    /* A length past the maximum is refused before the body comes. */
	    (strcmp(method, "HEAD") != 0 &&
	    curl_easy_setopt(x.e, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)b->max) != CURLE_OK)) {
		error_set(err, "out of memory");
		goto out;
	}
	if (docker_xfer_run(&x, &w, status, err) != DOCKER_RUN_DONE) {
		if (b->too_big || x.res == CURLE_FILESIZE_EXCEEDED)
			error_kind(err, ERR_UPSTREAM, "Docker engine at %s "
			    "(DOCKER_HOST): response larger than %zu bytes",
			    d->host, b->max);
		goto out;
	}
	*json = x.head.json;
	ret = 0;
out:
	docker_xfer_done(&x);
	return ret;
}

int
docker_request(struct docker *d, const char *method, const char *path,
    struct json_object *body, long *status, struct json_object **resp,
    struct error *err)
{
	struct docker_body	 b = { .max = DOCKER_MAX_RESPONSE };
	struct json_object	*obj = NULL;
	struct error		 perr;
	const char		*text = NULL;
	size_t			 tlen = 0;
	bool			 json = false;
	int			 ret = -1;

	*status = 0;
	if (resp != NULL)
		*resp = NULL;
	if (body != NULL)
		text = js_text(body, &tlen);
	if (call(d, method, path, body != NULL ? "application/json" : NULL,
	    text, tlen, status, &b, &json, err) == -1)
		goto out;
	if (b.len > 0 && json) {
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
	struct docker_body	 b = { .max = DOCKER_ERROR_BODY_MAX };
	bool			 json;
	int			 ret = -1;

	*status = 0;
	if (call(d, "PUT", path, "application/x-tar", buf, len, status, &b,
	    &json, err) == -1)
		goto out;
	if (*status < 200 || *status > 299)
		docker_refused(err, *status, &b, "Docker engine");
	ret = 0;
out:
	free(b.buf);
	return ret;
}
