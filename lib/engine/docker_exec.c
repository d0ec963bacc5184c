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

/*
 * An exec stream's decoder, where its output goes, and the engine's error
 * answer when it refused the start (libcurl's write callback).
 */
struct exec_out {
	struct docker_xfer		*x;
	struct docker_frames		 frames;
	const struct docker_exec_cb	*cb;
	struct docker_body		 refusal;
	bool				 malformed;
};

static size_t
exec_write(char *p, size_t size, size_t n, void *arg)
{
	struct exec_out	*xo = arg;
	long		 status = docker_xfer_status(xo->x);

	if (status != 200 && status != 101)
		return docker_body_write(p, size, n, &xo->refusal);
	if (docker_frames_feed(&xo->frames, p, size * n, stream_output,
	    (void *)xo->cb) == -1) {
		xo->malformed = true;
		return 0;
	}
	return size * n;
}

int
docker_exec_start(struct docker *d, const char *id,
    const struct docker_exec_cb *cb, bool *stopped, struct error *err)
{
	static const char	 start_body[] = "{\"Detach\":false,\"Tty\":false}";
	struct docker_xfer	 x;
	struct exec_out		 xo = { .cb = cb,
				    .refusal = { .max = DOCKER_ERROR_BODY_MAX } };
	struct docker_waiter	 w;
	char			 path[160];
	long			 status;
	int			 ret = -1;

	*stopped = false;
	docker_waiter_tick(&w, d, cb);
	docker_frames_init(&xo.frames);
	xo.x = &x;
	if (strlen(id) > 100) {
		error_set(err, "exec id too long");
		return -1;
	}
	snprintf(path, sizeof(path), "/exec/%s/start", id);
	/* The engine hijacks this connection: a fresh one, never kept. */
	if (docker_xfer_open(&x, d, true, "POST", path, "application/json",
	    err) == -1)
		goto out;
	if (docker_xfer_memory(&x, "POST", start_body,
	    sizeof(start_body) - 1) == -1 ||
	    curl_easy_setopt(x.e, CURLOPT_BUFFERSIZE, (long)EXEC_BUFFER_SIZE) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_WRITEFUNCTION, exec_write) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_WRITEDATA, &xo) != CURLE_OK) {
		error_set(err, "out of memory");
		goto out;
	}
	/* The multiplexed stream, until the engine closes it. */
	switch (docker_xfer_run(&x, &w, &status, err)) {
	case DOCKER_RUN_STOPPED:
		/* By the tick or the stop flag: that is a stop. */
		*stopped = true;
		ret = 0;
		goto out;
	case DOCKER_RUN_FAILED:
		if (xo.malformed)
			error_kind(err, ERR_UPSTREAM, "Docker engine at %s "
			    "(DOCKER_HOST): malformed exec output stream", d->host);
		else if (xo.refusal.too_big)
			docker_refused(err, docker_xfer_status(&x), &xo.refusal,
			    "Docker engine refused to start the exec");
		goto out;
	case DOCKER_RUN_DONE:
		break;
	}
	if (status != 200 && status != 101) {
		docker_refused(err, status, &xo.refusal, "Docker engine refused "
		    "to start the exec");
		goto out;
	}
	if (!docker_frames_at_boundary(&xo.frames)) {
		error_kind(err, ERR_UPSTREAM, "Docker engine at %s (DOCKER_HOST): "
		    "exec output stream cut short", d->host);
		goto out;
	}
	ret = 0;
out:
	docker_xfer_done(&x);
	free(xo.refusal.buf);
	return ret;
}
