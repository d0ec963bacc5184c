/*
 * docker_exec.c: the exec start (POST /exec/ID/start, attached, no TTY) and
 * its multiplexed output stream; see docker.h.
 *
 * An exec stream has no deadline of its own: a command may be silent for
 * as long as its timeout, so only the caller's tick (docker_exec_cb), asked
 * between reads, and the stop flag end it early. The engine hijacks the
 * connection, so each stream has a fresh one, never kept.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/httpc.h"
#include "engine/docker.h"
#include "engine/extern.h"

#define TICK_MS			1000	/* the default tick */
#define EXEC_BUFFER_SIZE	(64u << 10)

/* The multiplexed stream's frame decoder. */

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

/* An exec stream's decoder and where its output goes (the body's reader). */
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
	struct docker_body	 eb = { .max = DOCKER_ERROR_BODY_MAX };
	struct docker_waiter	 w;
	char			*path = NULL, *req = NULL;
	size_t			 n, hlen;
	bool			 reused, empty;
	int			 ret = -1, rc;

	*stopped = false;
	docker_waiter_tick(&w, d, cb);
	docker_frames_init(&xo.frames);
	n = strlen(id) + 16;
	if ((path = malloc(n)) == NULL)
		goto oom;
	snprintf(path, n, "/exec/%s/start", id);
	if ((req = docker_request_head(d, "POST", path, "application/json",
	    true, sizeof(start_body) - 1, NULL, sizeof(start_body),
	    &hlen)) == NULL) {
		error_set(err, "cannot build a Docker exec request");
		goto out;
	}
	memcpy(req + hlen, start_body, sizeof(start_body) - 1);
	hlen += sizeof(start_body) - 1;
	/* The engine hijacks this connection: a fresh one, never kept. */
	if ((c = docker_connect(d, false, EXEC_BUFFER_SIZE, &reused,
	    err)) == NULL)
		goto out;
	if (docker_send_all(c, req, hlen, &w, NULL, err) == -1 ||
	    (rc = docker_read_head(c, &h, false, NULL, NULL, &w, &empty,
	    err)) == DOCKER_HEAD_FAILED)
		goto end;
	if (rc == DOCKER_HEAD_CLOSED) {
		docker_closed_early(d, err);
		goto out;
	}
	if (h.status != 200 && h.status != 101) {
		if (docker_read_body(c, &h, &eb, &w, err) == -1 && !eb.too_big)
			goto end;
		docker_refused(err, h.status, &eb, "Docker engine refused to "
		    "start the exec");
		goto out;
	}
	/* The multiplexed stream, until the engine closes it. */
	if (h.status == 101)
		h.framing = HTTPC_CLOSE;
	if ((rc = docker_body_each(c, &h, &w, exec_piece, &xo,
	    err)) == DOCKER_BODY_FAILED)
		goto end;
	if (rc == DOCKER_BODY_STOPPED) {
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
