/*
 * docker_attach.c: a hijacked exec connection (docker_exec_attach); see
 * docker.h.
 *
 * libcurl connects (CURLOPT_CONNECT_ONLY: unix socket, TCP or TLS, as
 * every call), then the connection is ours: the request goes out with
 * curl_easy_send, the answer's head is read with curl_easy_recv and
 * checked here (docker_attach_head), and after it the connection is a
 * plain byte stream both ways. Reads and writes never block past the
 * time given: libcurl's send and receive never wait, and the waits are
 * poll() on its socket. A mutex serialises libcurl's calls (TLS state is
 * one per connection), so one thread may read while another writes.
 */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/clock.h"
#include "engine/docker.h"
#include "engine/extern.h"

#define ATTACH_SETUP_MS		10000
#define ATTACH_HEAD_MAX		(16u << 10)

struct docker_conn {
	CURL		*e;
	curl_socket_t	 fd;
	pthread_mutex_t	 lock;
	/* Stream bytes that came in with the answer's head, not yet read. */
	char		*early;
	size_t		 early_len, early_off;
	/* libcurl's error buffer: it writes there for as long as e lives. */
	char		 errbuf[CURL_ERROR_SIZE];
};

/* Wait at most wait_ms for fd to be ready for events: true when it is. */
static bool
ready(curl_socket_t fd, short events, int wait_ms)
{
	struct pollfd	pfd = { .fd = fd, .events = events };

	return poll(&pfd, 1, wait_ms) > 0;
}

int
docker_conn_send(struct docker_conn *dc, const void *buf, size_t len,
    long long deadline_ms, struct error *err)
{
	const char	*p = buf;
	long long	 left;
	size_t		 n;
	CURLcode	 rc;

	while (len > 0) {
		if (docker_stopping())
			return error_kind(err, ERR_UNAVAILABLE, "the server is stopping");
		if ((left = deadline_ms - clock_ms()) <= 0)
			return error_kind(err, ERR_TIMEOUT, "the exec connection "
			    "took no data for too long");
		n = 0;
		pthread_mutex_lock(&dc->lock);
		rc = curl_easy_send(dc->e, p, len, &n);
		pthread_mutex_unlock(&dc->lock);
		if (rc == CURLE_AGAIN) {
			ready(dc->fd, POLLOUT, left > DOCKER_SLICE_MS ?
			    DOCKER_SLICE_MS : (int)left);
			continue;
		}
		if (rc != CURLE_OK)
			return error_kind(err, ERR_UPSTREAM, "the exec connection broke");
		p += n;
		len -= n;
	}
	return 0;
}

/* One receive without waiting: the count, 0 for nothing yet, -1 at the end. */
static long
recv_now(struct docker_conn *dc, void *buf, size_t len)
{
	size_t		n = 0;
	CURLcode	rc;

	pthread_mutex_lock(&dc->lock);
	rc = curl_easy_recv(dc->e, buf, len, &n);
	pthread_mutex_unlock(&dc->lock);
	if (rc == CURLE_AGAIN)
		return 0;
	if (rc != CURLE_OK || n == 0)
		return -1;
	return (long)n;
}

long
docker_conn_recv(struct docker_conn *dc, void *buf, size_t len, int wait_ms)
{
	long	n;

	if (dc->early_off < dc->early_len) {
		n = (long)(dc->early_len - dc->early_off < len ?
		    dc->early_len - dc->early_off : len);
		memcpy(buf, dc->early + dc->early_off, (size_t)n);
		dc->early_off += (size_t)n;
		return n;
	}
	/* What TLS holds already is read before any wait on the socket. */
	if ((n = recv_now(dc, buf, len)) != 0)
		return n;
	if (!ready(dc->fd, POLLIN, wait_ms))
		return 0;
	return recv_now(dc, buf, len);
}

void
docker_conn_pump(struct docker_conn *dc, struct docker_frames *df,
    size_t chunk, docker_frame_fn fn, void *arg, const bool *stop)
{
	char	*buf;
	long	 n;

	if ((buf = malloc(chunk)) == NULL)
		return;
	for (;;) {
		n = docker_conn_recv(dc, buf, chunk, 1000);
		if (n == 0) {
			if (docker_stopping())
				break;
			continue;
		}
		if (n < 0 || docker_frames_feed(df, buf, (size_t)n, fn,
		    arg) == -1 || *stop)
			break;
	}
	free(buf);
}

void
docker_conn_shutdown(struct docker_conn *dc)
{
	if (dc->fd != CURL_SOCKET_BAD)
		shutdown(dc->fd, SHUT_RDWR);
}

void
docker_conn_close(struct docker_conn *dc)
{
	if (dc == NULL)
		return;
	if (dc->e != NULL)
		curl_easy_cleanup(dc->e);
	pthread_mutex_destroy(&dc->lock);
	free(dc->early);
	free(dc);
}

long
docker_attach_head(const char *p, size_t len, size_t *head_len)
{
	const char	*end;
	size_t		 i;

	*head_len = 0;
	/* "HTTP/1.x NNN" and a space or the line's end. */
	for (i = 0; i < len && i < 13; i++) {
		if ((i < 9 && p[i] != "HTTP/1.x "[i] && i != 7) ||
		    (i == 7 && p[i] != '0' && p[i] != '1') ||
		    (i >= 9 && i <= 11 && (p[i] < '0' || p[i] > '9')) ||
		    (i == 12 && p[i] != ' ' && p[i] != '\r'))
			return -1;
	}
	if (len > 9 && p[9] == '0')
		return -1;
	if ((end = memmem(p, len, "\r\n\r\n", 4)) == NULL) {
		if (len >= ATTACH_HEAD_MAX || memchr(p, '\0', len) != NULL)
			return -1;
		return 0;
	}
	if ((size_t)(end - p) < 12 || memchr(p, '\0', (size_t)(end - p)) != NULL)
		return -1;
	*head_len = (size_t)(end - p) + 4;
	return (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
}

/* Stop a connect when the server is stopping (libcurl's progress callback). */
static int
connect_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c,
    curl_off_t e)
{
	(void)arg, (void)a, (void)b, (void)c, (void)e;
	return docker_stopping() ? 1 : 0;
}

/* The request: POST /exec/ID/start asking for the raw stream (Upgrade: tcp). */
static int
attach_request(struct docker *d, const char *id, char *buf, size_t size)
{
	static const char	body[] = "{\"Detach\":false,\"Tty\":false}";
	int			n;

	for (const char *p = id; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f ||
		    *p == '/')
			return -1;
	n = snprintf(buf, size, "POST /v1.41/exec/%s/start HTTP/1.1\r\n"
	    "Host: %s\r\nUser-Agent: code-sandbox\r\n"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n"
	    "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n%s", id,
	    d->authority, sizeof(body) - 1, body);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

int
docker_exec_attach(struct docker *d, const char *id, struct docker_conn **out,
    struct error *err)
{
	struct docker_conn	*dc = NULL;
	char			 req[1024];
	char			*head = NULL;
	size_t			 hlen = 0, hl;
	long long		 deadline = clock_ms() + ATTACH_SETUP_MS, left;
	long			 n, status;
	int			 rlen, ret = -1;
	CURLcode		 rc;

	*out = NULL;
	if ((rlen = attach_request(d, id, req, sizeof(req))) == -1) {
		error_set(err, "exec id too long or malformed");
		return -1;
	}
	if ((dc = calloc(1, sizeof(*dc))) == NULL) {
		error_set(err, "out of memory");
		return -1;
	}
	dc->fd = CURL_SOCKET_BAD;
	pthread_mutex_init(&dc->lock, NULL);
	if ((head = malloc(ATTACH_HEAD_MAX)) == NULL ||
	    (dc->e = docker_fresh_handle(d, dc->errbuf)) == NULL ||
	    curl_easy_setopt(dc->e, CURLOPT_URL, d->base) != CURLE_OK ||
	    curl_easy_setopt(dc->e, CURLOPT_CONNECT_ONLY, 1L) != CURLE_OK ||
	    curl_easy_setopt(dc->e, CURLOPT_NOPROGRESS, 0L) != CURLE_OK ||
	    curl_easy_setopt(dc->e, CURLOPT_XFERINFOFUNCTION,
	    connect_progress) != CURLE_OK) {
		error_set(err, "out of memory");
		goto out;
	}
	/* Connecting has DOCKER_CONNECT_MS (the handle's options). */
	if ((rc = curl_easy_perform(dc->e)) != CURLE_OK) {
		if (docker_stopping())
			error_kind(err, ERR_UNAVAILABLE, "the server is stopping");
		else
			docker_unreachable(d, dc->e, rc, dc->errbuf, err);
		goto out;
	}
	if (curl_easy_getinfo(dc->e, CURLINFO_ACTIVESOCKET, &dc->fd) != CURLE_OK ||
	    dc->fd == CURL_SOCKET_BAD) {
		error_kind(err, ERR_UPSTREAM, "Docker engine at %s: no connection",
		    d->host);
		goto out;
	}
	if (docker_conn_send(dc, req, (size_t)rlen, deadline, err) == -1)
		goto out;
	/* The answer's head; what follows it is the stream. */
	for (;;) {
		if (docker_stopping()) {
			error_kind(err, ERR_UNAVAILABLE, "the server is stopping");
			goto out;
		}
		if ((left = deadline - clock_ms()) <= 0) {
			error_kind(err, ERR_TIMEOUT, "Docker engine at %s: no answer "
			    "to exec start within %d s", d->host,
			    ATTACH_SETUP_MS / 1000);
			goto out;
		}
		n = docker_conn_recv(dc, head + hlen, ATTACH_HEAD_MAX - hlen,
		    left > DOCKER_SLICE_MS ? DOCKER_SLICE_MS : (int)left);
		if (n < 0) {
			error_kind(err, ERR_UPSTREAM, "Docker engine at %s: the "
			    "connection closed before an answer", d->host);
			goto out;
		}
		hlen += (size_t)n;
		if ((status = docker_attach_head(head, hlen, &hl)) == -1) {
			error_kind(err, ERR_UPSTREAM, "Docker engine at %s: a "
			    "malformed answer to exec start", d->host);
			goto out;
		}
		if (status > 0)
			break;
	}
	if (status != 101 && status != 200) {
		error_kind(err, status == 404 || status == 409 ?
		    error_kind_of_http(status) : ERR_UPSTREAM, "Docker engine "
		    "refused to start the exec (HTTP %ld)", status);
		goto out;
	}
	if (hl < hlen) {
		memmove(head, head + hl, hlen - hl);
		dc->early = head;
		dc->early_len = hlen - hl;
		head = NULL;
	}
	*out = dc;
	dc = NULL;
	ret = 0;
out:
	free(head);
	docker_conn_close(dc);
	return ret;
}
