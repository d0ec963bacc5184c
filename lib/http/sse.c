/* sse.c: see sse.h. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/js.h"
#include "http/http.h"
#include "http/sse.h"

#define SSE_HEADERS	4

struct sse {
	struct http_req	*req;
	bool		 json_ok, sse_ok;
	bool		 streaming;	/* the event stream has begun */
	bool		 finished;	/* the final message went out */
	long long	 last_comment;	/* ms, monotonic */
	char		*hname[SSE_HEADERS], *hvalue[SSE_HEADERS];
	size_t		 nheaders;
};

struct sse *
sse_new(struct http_req *req, bool json_ok, bool sse_ok)
{
	struct sse *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->req = req;
	s->json_ok = json_ok;
	s->sse_ok = sse_ok;
	s->last_comment = clock_ms();
	return s;
}

void
sse_free(struct sse *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nheaders; i++) {
		free(s->hname[i]);
		free(s->hvalue[i]);
	}
	free(s);
}

void
sse_header(struct sse *s, const char *name, const char *value)
{
	if (s->nheaders == SSE_HEADERS || value == NULL)
		return;
	if ((s->hname[s->nheaders] = strdup(name)) == NULL)
		return;
	if ((s->hvalue[s->nheaders] = strdup(value)) == NULL) {
		free(s->hname[s->nheaders]);
		return;
	}
	s->nheaders++;
}

static void
add_headers(struct sse *s)
{
	size_t i;

	for (i = 0; i < s->nheaders; i++)
		http_header_add(s->req, s->hname[i], s->hvalue[i]);
}

bool
sse_can_stream(const struct sse *s)
{
	return s != NULL && s->sse_ok && !s->finished;
}

bool
sse_gone(const struct sse *s)
{
	return s->finished ? false : http_gone(s->req);
}

bool
sse_finished(const struct sse *s)
{
	return s->finished;
}

int
sse_begin(struct sse *s)
{
	if (!s->sse_ok || s->finished)
		return 0;
	if (s->streaming)
		return http_gone(s->req) ? -1 : 0;
	s->streaming = true;
	http_status(s->req, 200);
	http_header_add(s->req, "Content-Type", "text/event-stream");
	http_header_add(s->req, "Cache-Control", "no-cache, no-store");
	/* Ask nginx-like proxies in front not to buffer the stream. */
	http_header_add(s->req, "X-Accel-Buffering", "no");
	add_headers(s);
	return http_flush(s->req);
}

static int
write_event(struct sse *s, struct json_object *msg)
{
	const char	*text;
	size_t		 len;

	if (s->streaming == false && sse_begin(s) == -1)
		return -1;
	/* JSON text has no raw newlines (json-c escapes them): one data line. */
	text = js_text(msg, &len);
	if (http_puts(s->req, "event: message\ndata: ") == -1 ||
	    http_write(s->req, text, len) == -1 ||
	    http_puts(s->req, "\n\n") == -1)
		return -1;
	return http_flush(s->req);
}

int
sse_event(struct sse *s, struct json_object *msg)
{
	if (!s->sse_ok || s->finished)
		return 0;
	return write_event(s, msg);
}

int
sse_comment(struct sse *s, const char *text)
{
	if (!s->sse_ok || s->finished)
		return 0;
	if (sse_begin(s) == -1 || http_puts(s->req, ":") == -1 ||
	    (text != NULL && (http_puts(s->req, " ") == -1 ||
	    http_puts(s->req, text) == -1)) || http_puts(s->req, "\n\n") == -1)
		return -1;
	s->last_comment = clock_ms();
	return http_flush(s->req);
}

int
sse_keepalive(struct sse *s, long interval_ms, const char *text)
{
	if (s->finished)
		return 0;
	if (http_gone(s->req))
		return -1;
	if (!s->sse_ok)
		return 0;
	if (sse_begin(s) == -1)
		return -1;
	if (clock_ms() - s->last_comment < interval_ms)
		return 0;
	return sse_comment(s, text);
}

int
sse_finish(struct sse *s, struct json_object *msg)
{
	int rc;

	if (s->finished)
		return 0;
	if (s->streaming || !s->json_ok)
		rc = write_event(s, msg);
	else {
		add_headers(s);
		rc = http_send_json(s->req, 200, msg);
	}
	s->finished = true;
	return rc;
}

int
sse_finish_detach(struct sse *s, struct json_object *msg)
{
	int rc;

	if (s->finished)
		return 0;
	rc = sse_finish(s, msg);
	http_end(s->req);
	return rc;
}

void
sse_end_empty(struct sse *s)
{
	if (s->finished)
		return;
	s->finished = true;
	if (s->streaming)
		http_flush(s->req);
	else {
		add_headers(s);
		http_send(s->req, 204, NULL, "", 0);
	}
}
