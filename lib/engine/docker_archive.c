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

#include "engine/docker.h"
#include "engine/extern.h"

/* Raw streams read in large pieces, for throughput (libcurl's buffer). */
#define RAW_BUFFER_SIZE		(256L << 10)

/* A raw transfer's answer: its body to the caller, or the engine's error. */
struct raw {
	struct docker_xfer		*x;
	struct docker_waiter		*w;
	const struct docker_raw_cb	*cb;
	struct docker_body		 refusal;
	/* docker_put_stream's body: what is left to send, and why it ended. */
	const struct docker_put_cb	*put;
	unsigned long long		 left;
	bool				 aborted, short_body;
};

static size_t
raw_write(char *p, size_t size, size_t n, void *arg)
{
	struct raw	*r = arg;
	long		 status = docker_xfer_status(r->x);

	docker_waiter_moved(r->w);
	if (status < 200 || status > 299)
		return docker_body_write(p, size, n, &r->refusal);
	if (r->cb != NULL && r->cb->body != NULL &&
	    r->cb->body(r->cb->arg, p, size * n) == -1) {
		r->x->stopped = true;
		return 0;
	}
	return size * n;
}

int
docker_raw(struct docker *d, const char *method, const char *path,
    const struct docker_raw_cb *cb, long *status, bool *stopped,
    struct error *err)
{
	struct docker_xfer	 x;
	struct docker_waiter	 w;
	struct raw		 r = { .x = &x, .w = &w, .cb = cb,
				    .refusal = { .max = DOCKER_ERROR_BODY_MAX } };
	int			 ret = -1;

	*status = 0;
	*stopped = false;
	docker_waiter_deadline(&w, d, DOCKER_RAW_STALL_S * 1000L, true);
	if (docker_xfer_open(&x, d, true, method, path, NULL, err) == -1)
		goto out;
	x.header = cb->header;
	x.header_arg = cb->arg;
	if (curl_easy_setopt(x.e, CURLOPT_BUFFERSIZE, RAW_BUFFER_SIZE) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_WRITEFUNCTION, raw_write) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_WRITEDATA, &r) != CURLE_OK) {
		error_set(err, "out of memory");
		goto out;
	}
	switch (docker_xfer_run(&x, &w, status, err)) {
	case DOCKER_RUN_STOPPED:
		*stopped = true;
		ret = 0;
		goto out;
	case DOCKER_RUN_FAILED:
		goto out;
	case DOCKER_RUN_DONE:
		break;
	}
	if (*status < 200 || *status > 299)
		docker_refused(err, *status, &r.refusal, "Docker engine");
	ret = 0;
out:
	docker_xfer_done(&x);
	free(r.refusal.buf);
	return ret;
}

/* libcurl's read callback: the body as the caller gives it. */
static size_t
put_read(char *buf, size_t size, size_t n, void *arg)
{
	struct raw	*r = arg;
	size_t		 want = size * n;
	long		 got;

	if (r->left == 0)
		return 0;
	if (want > r->left)
		want = (size_t)r->left;
	if ((got = r->put->read(r->put->arg, buf, want)) < 0) {
		r->aborted = true;
		return CURL_READFUNC_ABORT;
	}
	if (got == 0 || (size_t)got > want) {
		r->short_body = true;
		return CURL_READFUNC_ABORT;
	}
	r->left -= (unsigned long long)got;
	docker_waiter_moved(r->w);
	return (size_t)got;
}

static int
send_stream(struct docker *d, const char *method, const char *path,
    const char *ctype, unsigned long long length,
    const struct docker_put_cb *cb, const struct docker_raw_cb *out,
    long *status, bool *aborted, struct error *err)
{
	struct docker_xfer	 x;
	struct docker_waiter	 w;
	struct raw		 r = { .x = &x, .w = &w, .put = cb, .left = length,
				    .cb = out,
				    .refusal = { .max = DOCKER_ERROR_BODY_MAX } };
	int			 ret = -1;

	*status = 0;
	*aborted = false;
	docker_waiter_deadline(&w, d, DOCKER_RAW_STALL_S * 1000L, true);
	if (docker_xfer_open(&x, d, true, method, path, ctype, err) == -1)
		goto out;
	/*
	 * CURLOPT_UPLOAD over http is a PUT with this length, pulled as sent;
	 * another method's word replaces PUT's (the body is sent the same).
	 */
	if (curl_easy_setopt(x.e, CURLOPT_CUSTOMREQUEST,
	    strcmp(method, "PUT") == 0 ? NULL : method) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_UPLOAD, 1L) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_INFILESIZE_LARGE,
	    (curl_off_t)length) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_READFUNCTION, put_read) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_READDATA, &r) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_WRITEFUNCTION, raw_write) != CURLE_OK ||
	    curl_easy_setopt(x.e, CURLOPT_WRITEDATA, &r) != CURLE_OK) {
		error_set(err, "out of memory");
		goto out;
	}
	switch (docker_xfer_run(&x, &w, status, err)) {
	case DOCKER_RUN_STOPPED:
	case DOCKER_RUN_FAILED:
		if (r.aborted) {
			/* The engine sees a cut body and extracts nothing more. */
			*aborted = true;
			ret = 0;
		} else if (r.short_body)
			error_kind(err, ERR_UPSTREAM, "the upload to the Docker "
			    "engine ended before its announced length");
		goto out;
	case DOCKER_RUN_DONE:
		break;
	}
	if (*status < 200 || *status > 299)
		docker_refused(err, *status, &r.refusal, "Docker engine");
	ret = 0;
out:
	docker_xfer_done(&x);
	free(r.refusal.buf);
	return ret;
}

int
docker_put_stream(struct docker *d, const char *path, const char *ctype,
    unsigned long long length, const struct docker_put_cb *cb, long *status,
    bool *aborted, struct error *err)
{
	return send_stream(d, "PUT", path, ctype, length, cb, NULL, status,
	    aborted, err);
}

int
docker_post_stream(struct docker *d, const char *path, const char *ctype,
    unsigned long long length, const struct docker_put_cb *cb,
    const struct docker_raw_cb *out, long *status, bool *aborted,
    struct error *err)
{
	return send_stream(d, "POST", path, ctype, length, cb, out, status,
	    aborted, err);
}
