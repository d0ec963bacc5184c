/*
 * docker.c: a small Docker Engine API client over libcurl; see docker.h.
 *
 * Two kinds of transfer: JSON calls on one easy handle that keeps its
 * connection to the engine between calls, and exec streams, each on a fresh
 * handle (driven by a multi handle, for the once-a-second tick) because the
 * engine hijacks that connection and closes it at the end. Every handle connects within CONNECT_TIMEOUT_MS so an unreachable
 * engine fails fast with a message naming DOCKER_HOST.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "docker.h"
#include "js.h"
#include "clock.h"

#define API_VERSION		"v1.41"
#define CONNECT_TIMEOUT_MS	5000L
#define REQUEST_TIMEOUT_MS	(DOCKER_REQUEST_TIMEOUT_S * 1000L)
#define ERROR_BODY_MAX		(64u << 10)	/* a refused exec start's body */
#define TICK_MS			1000

struct docker {
	char	*host;		/* DOCKER_HOST as given */
	char	*base;		/* scheme://authority/v1.41 */
	char	*socket;	/* unix socket path, or NULL for TCP */
	char	*ca, *cert, *key; /* TLS client files, or NULL */
	CURL	*api;		/* JSON calls; created on first use */
	long	 tick_ms;	/* exec streams' tick; 0: TICK_MS */
};

/* A response body growing up to a fixed maximum. */
struct body {
	char	*buf;
	size_t	 len, cap, max;
	bool	 too_big;
};

static char *
join(const char *a, const char *b)
{
	size_t	 n = strlen(a) + strlen(b) + 1;
	char	*s;

	if ((s = malloc(n)) != NULL)
		snprintf(s, n, "%s%s", a, b);
	return s;
}

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

/* libcurl calls this about once a second in every transfer: abort on stop. */
static int
xfer_info(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
    curl_off_t ulnow)
{
	(void)arg, (void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return stopping() ? 1 : 0;
}

int
docker_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void
docker_global_cleanup(void)
{
	curl_global_cleanup();
}

int
docker_open(const char *host, bool tls_verify, const char *cert_path,
    struct docker **out, struct error *err)
{
	struct docker	*d;
	const char	*hp;
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
		if ((d->socket = strdup(host + 7)) == NULL ||
		    (d->base = strdup("http://localhost/" API_VERSION)) == NULL)
			goto oom;
	} else if (strncmp(host, "tcp://", 6) == 0) {
		hp = host + 6;
		/* host:port only: no path, userinfo, or spaces. */
		n = strlen(hp);
		if (n == 0 || n > 261 || strpbrk(hp, "/@?# \t\\") != NULL) {
			error_set(err, "DOCKER_HOST: expected tcp://host:port");
			goto out;
		}
		if (tls_verify) {
			if (cert_path == NULL || *cert_path == '\0') {
				error_set(err, "DOCKER_CERT_PATH: required with "
				    "DOCKER_TLS_VERIFY");
				goto out;
			}
			if ((d->base = join("https://", hp)) == NULL)
				goto oom;
			n = strlen(cert_path) + 16;
			if ((d->ca = malloc(n)) == NULL ||
			    (d->cert = malloc(n)) == NULL ||
			    (d->key = malloc(n)) == NULL)
				goto oom;
			snprintf(d->ca, n, "%s/ca.pem", cert_path);
			snprintf(d->cert, n, "%s/cert.pem", cert_path);
			snprintf(d->key, n, "%s/key.pem", cert_path);
		} else if ((d->base = join("http://", hp)) == NULL)
			goto oom;
		{
			char *b = join(d->base, "/" API_VERSION);

			if (b == NULL)
				goto oom;
			free(d->base);
			d->base = b;
		}
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
	docker_close(d);
	return rc;
}

void
docker_close(struct docker *d)
{
	if (d == NULL)
		return;
	if (d->api != NULL)
		curl_easy_cleanup(d->api);
	free(d->host);
	free(d->base);
	free(d->socket);
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

/* Options every handle gets: where the engine is, and how long to try. */
static int
setup_handle(struct docker *d, CURL *h, const char *path, char *errbuf)
{
	char	*url;
	int	 bad = 0;

	if ((url = join(d->base, path)) == NULL)
		return -1;
	bad |= curl_easy_setopt(h, CURLOPT_URL, url) != CURLE_OK;
	free(url);
	bad |= curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
	    CONNECT_TIMEOUT_MS) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, xfer_info) != CURLE_OK;
	if (d->socket != NULL) {
		bad |= curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH,
		    d->socket) != CURLE_OK;
		/* A local socket: no http_proxy from the environment applies. */
		bad |= curl_easy_setopt(h, CURLOPT_PROXY, "") != CURLE_OK;
	}
	if (d->ca != NULL) {
		bad |= curl_easy_setopt(h, CURLOPT_CAINFO, d->ca) != CURLE_OK;
		bad |= curl_easy_setopt(h, CURLOPT_SSLCERT, d->cert) != CURLE_OK;
		bad |= curl_easy_setopt(h, CURLOPT_SSLKEY, d->key) != CURLE_OK;
		bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L) != CURLE_OK;
		bad |= curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L) != CURLE_OK;
	}
	return bad ? -1 : 0;
}

/*
 * A transport failure, worded for the person running the server. On a unix
 * socket libcurl words a failed connect as "localhost port 80": name the
 * socket and the system's reason instead.
 */
static int
transport_error(struct docker *d, CURL *h, CURLcode rc, const char *errbuf,
    struct error *err)
{
	const char	*why = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
	char		 sock[256];
	long		 oserr = 0;

	if (d->socket != NULL && rc == CURLE_COULDNT_CONNECT) {
		if (curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &oserr) != CURLE_OK)
			oserr = 0;
		snprintf(sock, sizeof(sock), "cannot connect to the unix socket "
		    "%s: %s", d->socket, oserr != 0 ? strerror((int)oserr) :
		    "connection refused or no such socket");
		why = sock;
	}

	if (rc == CURLE_ABORTED_BY_CALLBACK && stopping())
		return error_status(err, 503, "the server is stopping");
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CACERT_BADFILE:
		return error_status(err, 503, "cannot reach the Docker engine "
		    "at %s (DOCKER_HOST): %s", d->host, why);
	default:
		return error_status(err, 502, "Docker engine at %s (DOCKER_HOST): "
		    "%s", d->host, why);
	}
}

static size_t
body_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct body	*b = arg;
	size_t		 n = size * nmemb, cap;
	char		*p;

	if (n > b->max - b->len) {
		b->too_big = true;
		return 0;		/* aborts the transfer */
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap == 0 ? 4096 : b->cap;
		while (cap < b->len + n + 1)
			cap *= 2;
		if (cap > b->max + 1)
			cap = b->max + 1;
		if ((p = realloc(b->buf, cap)) == NULL)
			return 0;
		b->buf = p;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, ptr, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return n;
}

/* Does the response say it is JSON? */
static bool
is_json(CURL *h)
{
	char *ct = NULL;

	if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) != CURLE_OK ||
	    ct == NULL)
		return false;
	return strncmp(ct, "application/json", 16) == 0;
}

int
docker_request(struct docker *d, const char *method, const char *path,
    struct json_object *body, long *status, struct json_object **resp,
    struct error *err)
{
	struct curl_slist	*hdrs = NULL, *h2;
	struct body		 b = { .max = DOCKER_MAX_RESPONSE };
	struct json_object	*obj = NULL;
	struct error		 perr;
	char			 errbuf[CURL_ERROR_SIZE] = "";
	const char		*text = "";
	size_t			 tlen = 0;
	CURLcode		 rc;
	int			 ret = -1, bad = 0;

	*status = 0;
	if (resp != NULL)
		*resp = NULL;
	if (d->api == NULL && (d->api = curl_easy_init()) == NULL)
		return error_set(err, "out of memory");
	/* Reset keeps the connection cache: the engine connection is reused. */
	curl_easy_reset(d->api);
	if (setup_handle(d, d->api, path, errbuf) == -1) {
		error_set(err, "cannot set up a Docker API request");
		goto out;
	}
	if (body != NULL)
		text = js_text(body, &tlen);
	if ((h2 = curl_slist_append(hdrs, "Expect:")) == NULL)
		goto oom;
	hdrs = h2;
	if (body != NULL) {
		if ((h2 = curl_slist_append(hdrs,
		    "Content-Type: application/json")) == NULL)
			goto oom;
		hdrs = h2;
	}
	bad |= curl_easy_setopt(d->api, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK;
	bad |= curl_easy_setopt(d->api, CURLOPT_TIMEOUT_MS,
	    REQUEST_TIMEOUT_MS) != CURLE_OK;
	bad |= curl_easy_setopt(d->api, CURLOPT_WRITEFUNCTION, body_write) != CURLE_OK;
	bad |= curl_easy_setopt(d->api, CURLOPT_WRITEDATA, &b) != CURLE_OK;
	if (strcmp(method, "GET") == 0)
		bad |= curl_easy_setopt(d->api, CURLOPT_HTTPGET, 1L) != CURLE_OK;
	else if (strcmp(method, "HEAD") == 0)
		bad |= curl_easy_setopt(d->api, CURLOPT_NOBODY, 1L) != CURLE_OK;
	else {
		if (strcmp(method, "POST") != 0)
			bad |= curl_easy_setopt(d->api, CURLOPT_CUSTOMREQUEST,
			    method) != CURLE_OK;
		if (strcmp(method, "POST") == 0 || body != NULL) {
			bad |= curl_easy_setopt(d->api, CURLOPT_POSTFIELDSIZE,
			    (long)tlen) != CURLE_OK;
			bad |= curl_easy_setopt(d->api, CURLOPT_POSTFIELDS,
			    text) != CURLE_OK;
		}
	}
	if (bad) {
		error_set(err, "cannot set up a Docker API request");
		goto out;
	}
	rc = curl_easy_perform(d->api);
	if (b.too_big) {
		error_status(err, 502, "Docker engine at %s (DOCKER_HOST): "
		    "response larger than %u bytes", d->host, DOCKER_MAX_RESPONSE);
		goto out;
	}
	if (rc != CURLE_OK) {
		transport_error(d, d->api, rc, errbuf, err);
		goto out;
	}
	curl_easy_getinfo(d->api, CURLINFO_RESPONSE_CODE, status);
	if (b.len > 0 && is_json(d->api)) {
		obj = js_parse(b.buf, b.len, JS_MAX_DEPTH, &perr);
		if (obj == NULL && *status >= 200 && *status < 300) {
			error_status(err, 502, "Docker engine at %s (DOCKER_HOST): "
			    "%s", d->host, perr.msg);
			goto out;
		}
	}
	if (resp != NULL) {
		*resp = obj;
		obj = NULL;
	}
	ret = 0;
	goto out;
oom:
	error_set(err, "out of memory");
out:
	json_object_put(obj);
	curl_slist_free_all(hdrs);
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

/* One exec stream in progress. */
struct stream {
	CURL				*h;
	const struct docker_exec_cb	*cb;
	struct docker_frames		 frames;
	struct body			 error_body;	/* when refused */
	long				 status;
	bool				 stopped;
	bool				 bad_stream;
	struct timespec			 last_tick;
	long				 tick_ms;
};

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

static size_t
stream_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct stream	*s = arg;
	size_t		 n = size * nmemb;

	if (s->status == 0)
		curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &s->status);
	if (s->status != 200)
		return body_write(ptr, size, nmemb, &s->error_body);
	if (docker_frames_feed(&s->frames, ptr, n, stream_output,
	    (void *)s->cb) == -1) {
		s->bad_stream = true;
		return 0;
	}
	return n;
}

static long long
ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - t->tv_sec) * 1000 +
	    (now.tv_nsec - t->tv_nsec) / 1000000;
}

/*
 * Run the transfer on a multi handle so that the tick runs on our clock,
 * about once a second whatever the output does, and outside any curl
 * callback (a tick may run other transfers). Returns the transfer's result.
 */
static CURLcode
stream_run(struct stream *s)
{
	CURLM		*m;
	CURLMsg		*msg;
	CURLcode	 rc = CURLE_FAILED_INIT;
	long long	 wait;
	int		 running = 1, left;

	if ((m = curl_multi_init()) == NULL)
		return CURLE_OUT_OF_MEMORY;
	if (curl_multi_add_handle(m, s->h) != CURLM_OK) {
		curl_multi_cleanup(m);
		return CURLE_FAILED_INIT;
	}
	for (;;) {
		if (curl_multi_perform(m, &running) != CURLM_OK)
			break;
		if (running == 0)
			break;
		wait = s->tick_ms - ms_since(&s->last_tick);
		if (wait <= 0) {
			clock_gettime(CLOCK_MONOTONIC, &s->last_tick);
			if ((s->cb->tick != NULL &&
			    s->cb->tick(s->cb->arg) != 0) || stopping()) {
				s->stopped = true;
				break;
			}
			wait = s->tick_ms;
		}
		if (curl_multi_poll(m, NULL, 0, (int)wait, NULL) != CURLM_OK)
			break;
	}
	while ((msg = curl_multi_info_read(m, &left)) != NULL)
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == s->h)
			rc = msg->data.result;
	curl_multi_remove_handle(m, s->h);
	curl_multi_cleanup(m);
	return rc;
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

int
docker_exec_start(struct docker *d, const char *id,
    const struct docker_exec_cb *cb, bool *stopped, struct error *err)
{
	static const char	 start_body[] = "{\"Detach\":false,\"Tty\":false}";
	struct stream		 s;
	struct curl_slist	*hdrs = NULL, *h2;
	struct json_object	*obj;
	struct error		 perr;
	char			 errbuf[CURL_ERROR_SIZE] = "", *path = NULL;
	size_t			 n;
	CURLcode		 rc;
	int			 ret = -1, bad = 0;

	*stopped = false;
	memset(&s, 0, sizeof(s));
	s.cb = cb;
	s.tick_ms = d->tick_ms > 0 ? d->tick_ms : TICK_MS;
	s.error_body.max = ERROR_BODY_MAX;
	docker_frames_init(&s.frames);
	clock_gettime(CLOCK_MONOTONIC, &s.last_tick);

	n = strlen(id) + 16;
	if ((path = malloc(n)) == NULL)
		goto oom;
	snprintf(path, n, "/exec/%s/start", id);
	if ((s.h = curl_easy_init()) == NULL)
		goto oom;
	if (setup_handle(d, s.h, path, errbuf) == -1) {
		error_set(err, "cannot set up a Docker exec stream");
		goto out;
	}
	if ((h2 = curl_slist_append(hdrs, "Content-Type: application/json")) == NULL)
		goto oom;
	hdrs = h2;
	if ((h2 = curl_slist_append(hdrs, "Expect:")) == NULL)
		goto oom;
	hdrs = h2;
	/* The engine hijacks this connection: never reuse it. */
	bad |= curl_easy_setopt(s.h, CURLOPT_FORBID_REUSE, 1L) != CURLE_OK;
	/* The stop flag is seen by stream_run: it stops, not fails, the read. */
	bad |= curl_easy_setopt(s.h, CURLOPT_NOPROGRESS, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(s.h, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK;
	bad |= curl_easy_setopt(s.h, CURLOPT_POSTFIELDSIZE,
	    (long)(sizeof(start_body) - 1)) != CURLE_OK;
	bad |= curl_easy_setopt(s.h, CURLOPT_POSTFIELDS, start_body) != CURLE_OK;
	bad |= curl_easy_setopt(s.h, CURLOPT_WRITEFUNCTION, stream_write) != CURLE_OK;
	bad |= curl_easy_setopt(s.h, CURLOPT_WRITEDATA, &s) != CURLE_OK;
	if (bad) {
		error_set(err, "cannot set up a Docker exec stream");
		goto out;
	}
	rc = stream_run(&s);
	if (s.status == 0)
		curl_easy_getinfo(s.h, CURLINFO_RESPONSE_CODE, &s.status);
	if (s.stopped) {
		*stopped = true;
		ret = 0;
		goto out;
	}
	if (s.bad_stream) {
		error_status(err, 502, "Docker engine at %s (DOCKER_HOST): "
		    "malformed exec output stream", d->host);
		goto out;
	}
	if (s.status != 0 && s.status != 200) {
		obj = s.error_body.len > 0 ? js_parse(s.error_body.buf,
		    s.error_body.len, JS_MAX_DEPTH, &perr) : NULL;
		error_status(err, (int)s.status, "Docker engine refused to start "
		    "the exec (HTTP %ld): %.200s", s.status, docker_message(obj));
		json_object_put(obj);
		goto out;
	}
	if (rc != CURLE_OK) {
		transport_error(d, s.h, rc, errbuf, err);
		goto out;
	}
	ret = 0;
	goto out;
oom:
	error_set(err, "out of memory");
out:
	if (s.h != NULL)
		curl_easy_cleanup(s.h);
	curl_slist_free_all(hdrs);
	free(s.error_body.buf);
	free(path);
	return ret;
}

/*
 * Raw streaming transfers (docker_raw), for the archive API. Kept apart
 * from the JSON calls: a fresh handle per transfer, no overall timeout, a
 * large receive buffer for throughput, and the body handed on as it comes.
 */

#define RAW_BUFFER_SIZE	(256L * 1024)

struct raw {
	CURL				*h;
	const struct docker_raw_cb	*cb;
	struct body			 error_body;
	long				 status;
	bool				 stopped;
};

static long
raw_status(struct raw *r)
{
	if (r->status == 0)
		curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &r->status);
	return r->status;
}

static size_t
raw_header(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct raw	*r = arg;
	size_t		 n = size * nmemb;

	/* A status line starts a new response (after a 100 Continue). */
	if (n >= 5 && memcmp(ptr, "HTTP/", 5) == 0)
		r->status = 0;
	if (r->cb->header != NULL && r->cb->header(r->cb->arg, ptr, n) == -1) {
		r->stopped = true;
		return 0;
	}
	return n;
}

static size_t
raw_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct raw	*r = arg;
	size_t		 n = size * nmemb;
	long		 st = raw_status(r);

	if (st < 200 || st > 299)
		return body_write(ptr, size, nmemb, &r->error_body);
	if (r->cb->body != NULL && r->cb->body(r->cb->arg, ptr, n) == -1) {
		r->stopped = true;
		return 0;
	}
	return n;
}

int
docker_raw(struct docker *d, const char *method, const char *path,
    const struct docker_raw_cb *cb, long *status, bool *stopped,
    struct error *err)
{
	struct raw		 r;
	struct json_object	*obj;
	struct error		 perr;
	char			 errbuf[CURL_ERROR_SIZE] = "";
	CURLcode		 rc;
	int			 ret = -1, bad = 0;

	*status = 0;
	*stopped = false;
	memset(&r, 0, sizeof(r));
	r.cb = cb;
	r.error_body.max = ERROR_BODY_MAX;
	if ((r.h = curl_easy_init()) == NULL)
		return error_set(err, "out of memory");
	if (setup_handle(d, r.h, path, errbuf) == -1) {
		error_set(err, "cannot set up a Docker API transfer");
		goto out;
	}
	if (strcmp(method, "HEAD") == 0)
		bad |= curl_easy_setopt(r.h, CURLOPT_NOBODY, 1L) != CURLE_OK;
	else
		bad |= curl_easy_setopt(r.h, CURLOPT_HTTPGET, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(r.h, CURLOPT_BUFFERSIZE, RAW_BUFFER_SIZE) != CURLE_OK;
	bad |= curl_easy_setopt(r.h, CURLOPT_LOW_SPEED_LIMIT, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(r.h, CURLOPT_LOW_SPEED_TIME,
	    (long)DOCKER_RAW_STALL_S) != CURLE_OK;
	bad |= curl_easy_setopt(r.h, CURLOPT_HEADERFUNCTION, raw_header) != CURLE_OK;
	bad |= curl_easy_setopt(r.h, CURLOPT_HEADERDATA, &r) != CURLE_OK;
	bad |= curl_easy_setopt(r.h, CURLOPT_WRITEFUNCTION, raw_write) != CURLE_OK;
	bad |= curl_easy_setopt(r.h, CURLOPT_WRITEDATA, &r) != CURLE_OK;
	if (bad) {
		error_set(err, "cannot set up a Docker API transfer");
		goto out;
	}
	rc = curl_easy_perform(r.h);
	*status = raw_status(&r);
	if (r.stopped) {
		*stopped = true;
		ret = 0;
		goto out;
	}
	if (rc != CURLE_OK) {
		transport_error(d, r.h, rc, errbuf, err);
		goto out;
	}
	if (*status < 200 || *status > 299) {
		obj = r.error_body.len > 0 ? js_parse(r.error_body.buf,
		    r.error_body.len, JS_MAX_DEPTH, &perr) : NULL;
		error_status(err, (int)*status, "Docker engine (HTTP %ld): %.200s",
		    *status, docker_message(obj));
		json_object_put(obj);
	}
	ret = 0;
out:
	curl_easy_cleanup(r.h);
	free(r.error_body.buf);
	return ret;
}

/*
 * Streaming upload (docker_put_stream): PUT with the body pulled from the
 * caller's read callback as curl wants it, so nothing is buffered beyond
 * curl's own upload buffer.
 */
struct put {
	const struct docker_put_cb	*cb;
	struct body			 error_body;
	bool				 aborted;
};

static size_t
put_read(char *buf, size_t size, size_t nitems, void *arg)
{
	struct put	*p = arg;
	long		 n;

	n = p->cb->read(p->cb->arg, buf, size * nitems);
	if (n < 0) {
		p->aborted = true;
		return CURL_READFUNC_ABORT;
	}
	return (size_t)n;
}

static size_t
put_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct put *p = arg;

	return body_write(ptr, size, nmemb, &p->error_body);
}

int
docker_put_stream(struct docker *d, const char *path, const char *ctype,
    unsigned long long length, const struct docker_put_cb *cb, long *status,
    bool *aborted, struct error *err)
{
	struct put		 p;
	struct curl_slist	*hdrs = NULL, *h2;
	struct json_object	*obj;
	struct error		 perr;
	char			 errbuf[CURL_ERROR_SIZE] = "", ct[128];
	CURL			*h;
	CURLcode		 rc;
	int			 ret = -1, bad = 0;

	*status = 0;
	*aborted = false;
	memset(&p, 0, sizeof(p));
	p.cb = cb;
	p.error_body.max = ERROR_BODY_MAX;
	if ((h = curl_easy_init()) == NULL)
		return error_set(err, "out of memory");
	snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
	if ((hdrs = curl_slist_append(NULL, ct)) == NULL ||
	    (h2 = curl_slist_append(hdrs, "Expect:")) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	hdrs = h2;
	if (setup_handle(d, h, path, errbuf) == -1) {
		error_set(err, "cannot set up a Docker API transfer");
		goto out;
	}
	bad |= curl_easy_setopt(h, CURLOPT_UPLOAD, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE,
	    (curl_off_t)length) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_READFUNCTION, put_read) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_READDATA, &p) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_UPLOAD_BUFFERSIZE, RAW_BUFFER_SIZE) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME,
	    (long)DOCKER_RAW_STALL_S) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, put_write) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, &p) != CURLE_OK;
	if (bad) {
		error_set(err, "cannot set up a Docker API transfer");
		goto out;
	}
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	if (p.aborted) {
		*aborted = true;
		ret = 0;
		goto out;
	}
	if (rc != CURLE_OK) {
		transport_error(d, h, rc, errbuf, err);
		goto out;
	}
	if (*status < 200 || *status > 299) {
		obj = p.error_body.len > 0 ? js_parse(p.error_body.buf,
		    p.error_body.len, JS_MAX_DEPTH, &perr) : NULL;
		error_status(err, (int)*status, "Docker engine (HTTP %ld): %.200s",
		    *status, docker_message(obj));
		json_object_put(obj);
	}
	ret = 0;
out:
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(h);
	free(p.error_body.buf);
	return ret;
}

int
docker_upload(struct docker *d, const char *path, const void *buf, size_t len,
    long *status, struct error *err)
{
	struct curl_slist	*hdrs = NULL, *h2;
	struct body		 b = { .max = ERROR_BODY_MAX };
	struct json_object	*obj;
	struct error		 perr;
	char			 errbuf[CURL_ERROR_SIZE] = "";
	CURL			*h;
	CURLcode		 rc;
	int			 ret = -1, bad = 0;

	*status = 0;
	if ((h = curl_easy_init()) == NULL)
		return error_set(err, "out of memory");
	if (setup_handle(d, h, path, errbuf) == -1)
		goto setup;
	if ((h2 = curl_slist_append(hdrs, "Content-Type: application/x-tar")) == NULL)
		goto oom;
	hdrs = h2;
	if ((h2 = curl_slist_append(hdrs, "Expect:")) == NULL)
		goto oom;
	hdrs = h2;
	bad |= curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT") != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)len) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_POSTFIELDS, buf) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, REQUEST_TIMEOUT_MS) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, body_write) != CURLE_OK;
	bad |= curl_easy_setopt(h, CURLOPT_WRITEDATA, &b) != CURLE_OK;
	if (bad)
		goto setup;
	rc = curl_easy_perform(h);
	if (rc != CURLE_OK && !b.too_big) {
		transport_error(d, h, rc, errbuf, err);
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	if (*status < 200 || *status > 299) {
		obj = b.len > 0 ? js_parse(b.buf, b.len, JS_MAX_DEPTH, &perr) : NULL;
		error_status(err, (int)*status, "Docker engine (HTTP %ld): %.200s",
		    *status, docker_message(obj));
		json_object_put(obj);
	}
	ret = 0;
	goto out;
setup:
	error_set(err, "cannot set up a Docker API transfer");
	goto out;
oom:
	error_set(err, "out of memory");
out:
	curl_easy_cleanup(h);
	curl_slist_free_all(hdrs);
	free(b.buf);
	return ret;
}

/*
 * A hijacked exec connection (docker_attach). libcurl connects (TLS
 * included) in connect-only mode; the HTTP upgrade request and everything
 * after it go through curl_easy_send and curl_easy_recv, which never
 * block: waiting is a poll on the socket, outside the lock that
 * serialises every call on the handle, so one thread may read while
 * others write.
 */
#define ATTACH_HEAD_MAX		(16u << 10)
#define ATTACH_SETUP_MS		10000

struct docker_conn {
	CURL		*h;
	curl_socket_t	 sock;
	pthread_mutex_t	 lock;
	unsigned char	*pending;	/* read past the response head */
	size_t		 pending_len, pending_off;
	bool		 dead;
};

bool
docker_stopping(void)
{
	return stopping();
}

/* Wait for the socket up to ms; 1 ready, 0 not yet, -1 failed. */
static int
conn_wait(struct docker_conn *c, short events, int ms)
{
	struct pollfd	pfd = { .fd = c->sock, .events = events };
	int		n;

	if (ms < 0)
		ms = 0;
	n = poll(&pfd, 1, ms);
	if (n < 0)
		return errno == EINTR ? 0 : -1;
	return n > 0 ? 1 : 0;
}

int
docker_conn_send(struct docker_conn *c, const void *buf, size_t len,
    long long deadline_ms, struct error *err)
{
	const char	*p = buf;
	size_t		 n;
	CURLcode	 rc;

	while (len > 0) {
		pthread_mutex_lock(&c->lock);
		rc = c->dead ? CURLE_SEND_ERROR : curl_easy_send(c->h, p, len, &n);
		pthread_mutex_unlock(&c->lock);
		if (rc == CURLE_OK) {
			p += n;
			len -= n;
			continue;
		}
		if (rc != CURLE_AGAIN)
			return error_status(err, 502, "the exec connection "
			    "broke: %s", curl_easy_strerror(rc));
		if (stopping())
			return error_status(err, 503, "the server is stopping");
		if (clock_ms() >= deadline_ms)
			return error_status(err, 504, "the exec connection "
			    "took no data for too long");
		if (conn_wait(c, POLLOUT, (int)(deadline_ms - clock_ms() > 1000 ?
		    1000 : deadline_ms - clock_ms())) == -1)
			return error_status(err, 502, "the exec connection "
			    "broke");
	}
	return 0;
}

long
docker_conn_recv(struct docker_conn *c, void *buf, size_t len, int wait_ms)
{
	size_t		n;
	CURLcode	rc;
	int		w;

	if (c->pending_off < c->pending_len) {
		n = c->pending_len - c->pending_off;
		if (n > len)
			n = len;
		memcpy(buf, c->pending + c->pending_off, n);
		c->pending_off += n;
		return (long)n;
	}
	for (;;) {
		pthread_mutex_lock(&c->lock);
		rc = c->dead ? CURLE_RECV_ERROR : curl_easy_recv(c->h, buf, len, &n);
		pthread_mutex_unlock(&c->lock);
		if (rc == CURLE_OK)
			return n == 0 ? -1 : (long)n;	/* 0: the engine closed it */
		if (rc != CURLE_AGAIN)
			return -1;
		if (wait_ms <= 0)
			return 0;
		if ((w = conn_wait(c, POLLIN, wait_ms)) != 1)
			return w;
		wait_ms = 0;	/* ready: read once more, then answer */
	}
}

void
docker_conn_shutdown(struct docker_conn *c)
{
	pthread_mutex_lock(&c->lock);
	if (!c->dead && c->sock != CURL_SOCKET_BAD)
		shutdown(c->sock, SHUT_RDWR);
	c->dead = true;
	pthread_mutex_unlock(&c->lock);
}

void
docker_conn_close(struct docker_conn *c)
{
	if (c == NULL)
		return;
	if (c->h != NULL)
		curl_easy_cleanup(c->h);
	pthread_mutex_destroy(&c->lock);
	free(c->pending);
	free(c);
}

long
docker_attach_head(const char *p, size_t len, size_t *head_len)
{
	long	v = 0;
	size_t	i;

	*head_len = 0;
	/* The blank line ending the head; a NUL byte anywhere is refused. */
	for (i = 0; i + 4 <= len; i++) {
		if (p[i] == '\0')
			return -1;
		if (memcmp(p + i, "\r\n\r\n", 4) == 0) {
			*head_len = i + 4;
			break;
		}
	}
	if (*head_len == 0)
		return memchr(p, '\0', len) != NULL ? -1 : 0;
	if (*head_len < 16 || memcmp(p, "HTTP/1.", 7) != 0 ||
	    (p[7] != '0' && p[7] != '1') || p[8] != ' ')
		return -1;
	for (i = 9; i < 12; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	if (v < 100 || (p[12] != ' ' && p[12] != '\r'))
		return -1;
	return v;
}

int
docker_exec_attach(struct docker *d, const char *id, struct docker_conn **out,
    struct error *err)
{
	static const char	 body[] = "{\"Detach\":false,\"Tty\":false}";
	struct docker_conn	*c;
	char			 errbuf[CURL_ERROR_SIZE] = "", req[512];
	char			*head = NULL, host[300];
	const char		*a, *e;
	size_t			 hlen = 0, n;
	long long		 deadline = clock_ms() + ATTACH_SETUP_MS;
	long			 status;
	CURLcode		 rc;
	int			 ret = -1, w;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return error_set(err, "out of memory");
	pthread_mutex_init(&c->lock, NULL);
	c->sock = CURL_SOCKET_BAD;
	if ((c->h = curl_easy_init()) == NULL ||
	    (head = malloc(ATTACH_HEAD_MAX + 1)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	if (setup_handle(d, c->h, "/_ping", errbuf) == -1 ||
	    curl_easy_setopt(c->h, CURLOPT_CONNECT_ONLY, 1L) != CURLE_OK) {
		error_set(err, "cannot set up a Docker exec connection");
		goto out;
	}
	if ((rc = curl_easy_perform(c->h)) != CURLE_OK) {
		transport_error(d, c->h, rc, errbuf, err);
		goto out;
	}
	if (curl_easy_getinfo(c->h, CURLINFO_ACTIVESOCKET, &c->sock) !=
	    CURLE_OK || c->sock == CURL_SOCKET_BAD) {
		error_set(err, "no socket for the Docker exec connection");
		goto out;
	}
	/* The authority of base ("scheme://authority/v1.41"). */
	a = strstr(d->base, "://") + 3;
	e = strchr(a, '/');
	snprintf(host, sizeof(host), "%.*s", (int)(e != NULL ? e - a :
	    (long)strlen(a)), a);
	n = (size_t)snprintf(req, sizeof(req),
	    "POST /" API_VERSION "/exec/%s/start HTTP/1.1\r\n"
	    "Host: %s\r\nContent-Type: application/json\r\n"
	    "Connection: Upgrade\r\nUpgrade: tcp\r\n"
	    "Content-Length: %zu\r\n\r\n%s", id, host, sizeof(body) - 1, body);
	if (n >= sizeof(req)) {
		error_set(err, "exec id too long");
		goto out;
	}
	if (docker_conn_send(c, req, n, deadline, err) == -1)
		goto out;
	/* The response head, to its blank line; what follows is the stream. */
	for (;;) {
		long got;

		if ((status = docker_attach_head(head, hlen, &n)) == -1) {
			error_status(err, 502, "Docker engine at %s: malformed "
			    "answer to exec start", d->host);
			goto out;
		}
		if (status > 0) {
			if (hlen > n) {
				if ((c->pending = malloc(hlen - n)) == NULL) {
					error_set(err, "out of memory");
					goto out;
				}
				memcpy(c->pending, head + n, hlen - n);
				c->pending_len = hlen - n;
			}
			break;
		}
		if (hlen == ATTACH_HEAD_MAX) {
			error_status(err, 502, "Docker engine at %s: exec "
			    "start answer too long", d->host);
			goto out;
		}
		if (stopping()) {
			error_status(err, 503, "the server is stopping");
			goto out;
		}
		w = (int)(deadline - clock_ms());
		if (w <= 0) {
			error_status(err, 504, "Docker engine at %s: no answer "
			    "to exec start within %d s", d->host,
			    ATTACH_SETUP_MS / 1000);
			goto out;
		}
		got = docker_conn_recv(c, head + hlen, ATTACH_HEAD_MAX - hlen,
		    w > 1000 ? 1000 : w);
		if (got < 0) {
			error_status(err, 502, "Docker engine at %s closed the "
			    "exec connection", d->host);
			goto out;
		}
		hlen += (size_t)got;
	}
	if (status != 101 && status != 200) {
		error_status(err, status == 404 || status == 409 ? (int)status :
		    502, "Docker engine refused to start the exec (HTTP %ld)",
		    status);
		goto out;
	}
	*out = c;
	c = NULL;
	ret = 0;
out:
	free(head);
	docker_conn_close(c);
	return ret;
}
