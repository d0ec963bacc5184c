/*
 * docker_archive.c: the raw streaming transfers of the archive API
 * (docker_raw: GET or HEAD of /containers/N/archive; docker_put_stream: PUT
 * of a tar body pulled as the engine takes it); see docker.h.
 *
 * A raw stream has a stall deadline, not an absolute one: a body may take
 * as long as it takes to move, but one that moves nothing for
 * DOCKER_RAW_STALL_S is dropped. Each transfer has a fresh connection, so
 * the callbacks may use the client's kept one for JSON calls meanwhile.
 */
#include <stdlib.h>
#include <string.h>

#include "base/httpc.h"
#include "engine/docker.h"
#include "engine/extern.h"

/* Raw streams read and write in large pieces, for throughput. */
#define RAW_BUFFER_SIZE		(256u << 10)
#define PUT_PIECE		(64u << 10)

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
	struct docker_body	 eb = { .max = DOCKER_ERROR_BODY_MAX };
	struct docker_waiter	 w;
	char			*req = NULL;
	size_t			 hlen;
	bool			 reused, empty;
	int			 ret = -1, rc;

	*status = 0;
	*stopped = false;
	docker_waiter_deadline(&w, d, DOCKER_RAW_STALL_S * 1000L, true);
	if ((req = docker_request_head(d, method, path, NULL, false, 0, NULL, 0,
	    &hlen)) == NULL) {
		error_set(err, "cannot build a Docker API request for %.100s",
		    path);
		goto out;
	}
	if ((c = docker_connect(d, false, RAW_BUFFER_SIZE, &reused,
	    err)) == NULL || docker_send_all(c, req, hlen, &w, NULL, err) == -1)
		goto out;
	rc = docker_read_head(c, &h, strcmp(method, "HEAD") == 0, cb->header,
	    cb->arg, &w, &empty, err);
	if (rc == DOCKER_HEAD_STOPPED) {
		*stopped = true;
		ret = 0;
		goto out;
	}
	if (rc == DOCKER_HEAD_CLOSED)
		docker_closed_early(d, err);
	if (rc != DOCKER_HEAD_READ)
		goto out;
	*status = h.status;
	if (h.status < 200 || h.status > 299) {
		if (docker_read_body(c, &h, &eb, &w, err) == -1)
			goto out;
		docker_refused(err, h.status, &eb, "Docker engine");
		ret = 0;
		goto out;
	}
	if ((rc = docker_body_each(c, &h, &w, cb->body != NULL ? cb->body :
	    ignore_piece, cb->arg, err)) == DOCKER_BODY_FAILED)
		goto out;
	*stopped = rc == DOCKER_BODY_STOPPED;
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
	struct docker_body	 eb = { .max = DOCKER_ERROR_BODY_MAX };
	struct docker_waiter	 w;
	char			*req = NULL, *piece = NULL;
	unsigned long long	 left = length;
	size_t			 hlen;
	long			 n;
	bool			 reused, empty, early = false;
	int			 ret = -1, rc;

	*status = 0;
	*aborted = false;
	docker_waiter_deadline(&w, d, DOCKER_RAW_STALL_S * 1000L, true);
	if ((req = docker_request_head(d, "PUT", path, ctype, true, length,
	    NULL, 0, &hlen)) == NULL || (piece = malloc(PUT_PIECE)) == NULL) {
		error_set(err, "cannot build a Docker API request for %.100s",
		    path);
		goto out;
	}
	if ((c = docker_connect(d, false, 0, &reused, err)) == NULL ||
	    docker_send_all(c, req, hlen, &w, &early, err) == -1)
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
		docker_waiter_moved(&w);
		if (docker_send_all(c, piece, (size_t)n, &w, &early, err) == -1) {
			/* The engine may have answered, then closed: read it. */
			if (err->kind != ERR_UPSTREAM || docker_stopping())
				goto out;
			early = true;
		}
	}
	if ((rc = docker_read_head(c, &h, false, NULL, NULL, &w, &empty,
	    err)) == DOCKER_HEAD_FAILED)
		goto out;
	if (rc == DOCKER_HEAD_CLOSED) {
		docker_closed_early(d, err);
		goto out;
	}
	*status = h.status;
	if (docker_read_body(c, &h, &eb, &w, err) == -1 && !eb.too_big)
		goto out;
	if (*status < 200 || *status > 299)
		docker_refused(err, *status, &eb, "Docker engine");
	ret = 0;
out:
	httpc_conn_close(c);
	free(eb.buf);
	free(piece);
	free(req);
	return ret;
}
