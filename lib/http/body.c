/*
 * body.c: reading the request body, whole (http_body) or in pieces
 * (http_read), under a deadline, and the connection's read deadline that
 * enforces it.
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <fcgiapp.h>

#include "base/log.h"
#include "http/extern.h"
#include "http/http.h"

static atomic_int	 body_deadline = HTTP_BODY_DEADLINE;

long
body_deadline_ms(void)
{
	return (long)atomic_load(&body_deadline) * 1000;
}

int
body_set_rcvtimeo(int fd, long ms)
{
	struct timeval	tv;

	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

void
body_rcvtimeo(struct http_req *r, long ms)
{
	if (r->fcgx.out == NULL || r->fcgx.ipcFd < 0 || r->rcvtimeo_ms == ms)
		return;
	if (body_set_rcvtimeo(r->fcgx.ipcFd, ms) == 0)
		r->rcvtimeo_ms = ms;
}

/*
 * A streamed body (uploads) may take as long as it takes to arrive, but
 * each read waits at most SANDBOX_BODY_DEADLINE seconds for the next
 * bytes: a stalled upload ends (0, short of its length) and frees the
 * worker. The wait is set again before every read, so it is an inactivity
 * deadline, not a total one as http_body's.
 */
long
http_read(struct http_req *r, void *buf, size_t len)
{
	int	n;

	if (len > INT_MAX)
		len = INT_MAX;
	/* The same wait each time: set once on the connection. */
	body_rcvtimeo(r, (long)atomic_load(&body_deadline) * 1000);
	n = FCGX_GetStr(buf, (int)len, r->in);
	return n > 0 ? n : 0;
}

enum http_length
http_content_length(struct http_req *r, unsigned long long *len)
{
	const char		*cl = http_param(r, "CONTENT_LENGTH");
	unsigned long long	 v = 0;
	size_t			 i;

	*len = 0;
	if (cl == NULL || *cl == '\0' || strcmp(cl, "-1") == 0)
		return HTTP_LENGTH_UNKNOWN;
	for (i = 0; cl[i] != '\0'; i++) {
		if (cl[i] < '0' || cl[i] > '9' || i >= 18)
			return HTTP_LENGTH_MALFORMED;
		v = v * 10 + (unsigned)(cl[i] - '0');
	}
	*len = v;
	return HTTP_LENGTH_KNOWN;
}

int
http_body_read(const char *cl, size_t max, http_read_fn rd, void *arg,
    char **body, size_t *len, int *status)
{
	char		*buf, *end;
	long long	 want = -1;
	size_t		 have = 0, cap;
	int		 n;

	*body = NULL;
	*len = 0;
	if (max >= INT_MAX)
		max = INT_MAX - 1;
	/* Caddy passes a chunked body as CONTENT_LENGTH -1: length unknown. */
	if (cl != NULL && *cl != '\0' && strcmp(cl, "-1") != 0) {
		errno = 0;
		want = strtoll(cl, &end, 10);
		if (errno != 0 || *end != '\0' || want < -1 ||
		    !(*cl >= '0' && *cl <= '9')) {
			*status = 400;
			return -1;
		}
		if (want > (long long)max) {
			*status = 413;
			return -1;
		}
	}
	cap = want >= 0 ? (size_t)want + 1 : (max < 65536 ? max + 1 : 65536);
	if ((buf = malloc(cap)) == NULL) {
		*status = 500;
		return -1;
	}
	for (;;) {
		if (have + 1 >= cap) {
			char *nb;

			if (want >= 0 || cap > max + 1) {
				/*
				 * Known length: all of it is read. Unknown
				 * (a chunked body): the buffer holds max + 1
				 * bytes, so a body over max was refused.
				 */
				break;
			}
			cap = cap * 2 > max + 1 ? max + 2 : cap * 2;
			if ((nb = realloc(buf, cap)) == NULL) {
				free(buf);
				*status = 500;
				return -1;
			}
			buf = nb;
		}
		n = rd(arg, buf + have, (int)(cap - 1 - have));
		if (n < 0) {
			/* Cut, or stalled past the deadline. */
			free(buf);
			*status = 408;
			return -1;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have > max) {
			free(buf);
			*status = 413;
			return -1;
		}
	}
	if (want >= 0 && (long long)have != want) {
		free(buf);
		*status = 400;
		return -1;
	}
	buf[have] = '\0';
	*body = buf;
	*len = have;
	return 0;
}

/* The FastCGI body reader: each read bounded by what is left of the deadline. */
struct body_src {
	struct http_req	*r;
	struct timespec	 deadline;
};

static int
body_src_read(void *arg, char *buf, int n)
{
	struct body_src	*b = arg;
	struct timespec	 now;
	long long	 left_ms;
	int		 got;

	clock_gettime(CLOCK_MONOTONIC, &now);
	left_ms = (long long)(b->deadline.tv_sec - now.tv_sec) * 1000 +
	    (b->deadline.tv_nsec - now.tv_nsec) / 1000000;
	if (left_ms <= 0)
		return -1;
	/*
	 * Set again only when the wait already set would overshoot what is
	 * left by more than a second: one system call for most bodies.
	 */
	if (b->r->rcvtimeo_ms == 0 || b->r->rcvtimeo_ms > left_ms + 1000)
		body_rcvtimeo(b->r, (long)left_ms);
	got = FCGX_GetStr(buf, n, b->r->in);
	if (got <= 0 && FCGX_GetError(b->r->in) != 0)
		return -1;
	return got;
}

void
http_set_body_deadline(int seconds)
{
	if (seconds > 0)
		atomic_store(&body_deadline, seconds);
}

int
http_body(struct http_req *r, size_t max, const char **body, size_t *len,
    int *status)
{
	struct body_src	 src;
	char		*buf, c;
	int		 rc;

	*body = NULL;
	*len = 0;
	src.r = r;
	clock_gettime(CLOCK_MONOTONIC, &src.deadline);
	src.deadline.tv_sec += atomic_load(&body_deadline);
	rc = http_body_read(http_param(r, "CONTENT_LENGTH"), max, body_src_read,
	    &src, &buf, len, status);
	/*
	 * FastCGI: read on to the end of the input stream (the empty
	 * FCGI_STDIN record, FastCGI 1.0 §5.3), which is almost always in
	 * libfcgi's buffer already. The connection can then be closed
	 * without lingering (finish below). More bytes than CONTENT_LENGTH
	 * are refused.
	 */
	if (rc == 0 && r->fcgx.out != NULL && !r->in->isClosed &&
	    body_src_read(&src, &c, 1) > 0) {
		free(buf);
		*status = 400;
		rc = -1;
	}
	if (rc == -1) {
		if (*status == 408)
			log_warn("request body cut: stalled or incomplete after "
			    "%d s at most", atomic_load(&body_deadline));
		return -1;
	}
	r->body = buf;
	*body = buf;
	return 0;
}
