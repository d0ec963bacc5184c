/*
 * docker_attach.c: a hijacked exec connection (docker_exec_attach); see
 * docker.h.
 *
 * After the engine's answer head, the connection is a plain byte stream
 * both ways. Reads and writes never block past the time given; httpc
 * serialises TLS calls so one thread may read while another writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/httpc.h"
#include "engine/docker.h"
#include "engine/extern.h"

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
		if (docker_stopping())
			return error_kind(err, ERR_UNAVAILABLE, "the server is stopping");
		if ((left = deadline_ms - clock_ms()) <= 0)
			return error_kind(err, ERR_TIMEOUT, "the exec connection "
			    "took no data for too long");
		n = httpc_write(dc->c, p, len, left > DOCKER_SLICE_MS ?
		    DOCKER_SLICE_MS : (int)left, NULL);
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
	if ((req = docker_request_head(d, "POST", path, "application/json",
	    true, sizeof(body) - 1, "Connection: Upgrade\r\nUpgrade: tcp\r\n",
	    sizeof(body), &hlen)) == NULL) {
		error_set(err, "exec id too long or malformed");
		goto out;
	}
	memcpy(req + hlen, body, sizeof(body) - 1);
	hlen += sizeof(body) - 1;
	if ((dc->c = docker_connect(d, false, 0, &reused, err)) == NULL ||
	    docker_conn_send(dc, req, hlen, deadline, err) == -1)
		goto out;
	/* The answer's head; what follows it in the buffer is the stream. */
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
		rc = httpc_read_head(dc->c, &h, false, NULL, NULL,
		    left > DOCKER_SLICE_MS ? DOCKER_SLICE_MS : (int)left, &empty,
		    &e);
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
		    error_kind_of_http(h.status) : ERR_UPSTREAM, "Docker engine "
		    "refused to start the exec (HTTP %d)", h.status);
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
