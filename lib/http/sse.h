/*
 * sse.h: the answer to one HTTP request that carries JSON-RPC, written as
 * one application/json body or, once something must go out before the
 * result, as a text/event-stream (MCP transports, "Sending Messages to the
 * Server"; the SSE format is WHATWG HTML §9.2).
 *
 * This unit knows HTTP and SSE framing, nothing of JSON-RPC or MCP: it
 * writes whatever JSON object it is given as one `data:` line. It never
 * writes `id:` or `retry:` lines (streams are not resumable).
 */
#ifndef CS_SSE_H
#define CS_SSE_H

#include <stdbool.h>

struct http_req;
struct json_object;
struct sse;

/*
 * Start the answer to one request. json_ok/sse_ok: what the client's
 * Accept allows. When only SSE is accepted, the answer is an event stream
 * from the first byte. NULL when out of memory.
 */
struct sse	*sse_new(struct http_req *, bool json_ok, bool sse_ok);
void		 sse_free(struct sse *);

/* A header sent with the answer, whichever form it takes (copied). */
void		 sse_header(struct sse *, const char *name, const char *value);

/* Can messages go out before the final one (the client accepts SSE)? */
bool		 sse_can_stream(const struct sse *);
/* Begin the event stream now (headers out). 0, or -1 once the client is gone. */
int		 sse_begin(struct sse *);
/* One event carrying msg (begins the stream). 0 or -1. */
int		 sse_event(struct sse *, struct json_object *msg);
/* A comment line (": text", or ":" for NULL): keeps proxies from closing the stream. */
int		 sse_comment(struct sse *, const char *text);
/*
 * A comment when at least interval_ms have passed since the last one
 * (begins the stream). 0, or -1 once the client is gone.
 */
int		 sse_keepalive(struct sse *, long interval_ms, const char *text);
/*
 * The final message: the JSON body, or the last event. The request is over
 * afterwards; later calls do nothing. 0 or -1.
 */
int		 sse_finish(struct sse *, struct json_object *msg);
/*
 * Like sse_finish, then hand the request back to the web server at once
 * (http_end), so the caller may go on working with no client attached.
 */
int		 sse_finish_detach(struct sse *, struct json_object *msg);
/* End an answer with no final message (204, or the end of the stream). */
void		 sse_end_empty(struct sse *);
/* Has the final message been sent? */
bool		 sse_finished(const struct sse *);
/* Has the client gone away (a write failed)? */
bool		 sse_gone(const struct sse *);

#endif
