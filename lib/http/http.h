/*
 * http.h: one HTTP request and its response, over FastCGI (or plain CGI).
 *
 * http_serve runs the accept loop of a FastCGI program: a pool of threads,
 * each serving one request at a time, with SIGTERM handled so that the
 * program stops accepting, lets running requests finish and exits. When fd 0
 * is not a socket the same binary serves one plain CGI request.
 *
 * Everything read from a request is untrusted. Header values returned here
 * are as the web server passed them; callers validate before use.
 * Values are valid until the handler returns.
 */
#ifndef CS_HTTP_H
#define CS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;
struct http_req;

/* A request handler. Its return value is ignored; it must answer the request. */
typedef void	(*http_handler)(struct http_req *, void *arg);

/*
 * Serve requests with nthreads threads until SIGTERM/SIGINT. Returns 0 on a
 * clean stop, 1 on a start-up failure or when accept() failed for good
 * (reported on stderr).
 */
int	http_serve(http_handler, void *arg, int nthreads);

/* True once SIGTERM or SIGINT was received: long handlers end early. */
bool	http_stopping(void);

/*
 * True when http_serve serves one plain CGI request (libfcgi's
 * FCGX_IsCGI: fd 0 is not a listening socket; a connected one, as Apache's
 * mod_cgid gives, is CGI too). No background work then: the process ends
 * with the request.
 */
bool	http_serving_cgi(void);

/* Request. */
const char	*http_method(struct http_req *);	/* "GET", "POST", ... */
const char	*http_path(struct http_req *);	/* request path, no query */
const char	*http_query(struct http_req *);	/* raw query string, "" if none */
/* A request header by its HTTP name ("Authorization"); NULL if absent. */
const char	*http_header(struct http_req *, const char *name);
/* A raw CGI parameter ("REMOTE_ADDR", "CONTENT_TYPE"); NULL if absent. */
const char	*http_param(struct http_req *, const char *name);
/* The client's address as the web server saw it ("" if unknown). */
const char	*http_remote_addr(struct http_req *);

/*
 * Read the whole request body, at most max bytes, NUL-terminated. Returns 0
 * with *body (owned by the request; freed after the handler) and *len, or -1
 * with *status set: 413 when larger than max, 400 when malformed or shorter
 * than its Content-Length, 408 when it is not all there within the body
 * deadline (a stalled body frees its worker; lighttpd reads bodies whole
 * first, Caddy passes them on as they come).
 * A body of unknown length (chunked) is read until EOF, still capped.
 */
#define HTTP_BODY_DEADLINE	30	/* seconds, unless set below */
void	http_set_body_deadline(int seconds);	/* before http_serve */
int	http_body(struct http_req *, size_t max, const char **body, size_t *len,
	    int *status);

/*
 * The reader behind http_body, on any source (the fuzz target feeds it):
 * content_length is CONTENT_LENGTH (NULL or "" when unknown), rd reads up
 * to n bytes, returning 0 at the end and -1 on an error or the deadline.
 * Returns 0 with a malloc'd NUL-terminated *body (the caller frees), or -1
 * with *status as http_body.
 */
typedef int	(*http_read_fn)(void *arg, char *buf, int n);
int	http_body_read(const char *content_length, size_t max, http_read_fn rd,
	    void *arg, char **body, size_t *len, int *status);

/*
 * Read the next piece of the request body into buf, for bodies too large
 * to hold (uploads): returns the bytes read (up to len), 0 at the end of
 * the body (or when the client went away: compare with Content-Length).
 * Do not mix with http_body.
 */
long	http_read(struct http_req *, void *buf, size_t len);
/* What the request says of its body's length. */
enum http_length {
	HTTP_LENGTH_MALFORMED = -1,
	HTTP_LENGTH_KNOWN = 0,
	HTTP_LENGTH_UNKNOWN = 1,
};

/*
 * The request's Content-Length: HTTP_LENGTH_KNOWN with *len,
 * HTTP_LENGTH_UNKNOWN (absent, or -1 as Caddy passes a chunked body), or
 * HTTP_LENGTH_MALFORMED.
 */
enum http_length http_content_length(struct http_req *,
	    unsigned long long *len);
/* Response. Status and headers are sent with the first write. */
void	http_status(struct http_req *, int status);
/* Forget the headers added so far (before anything was sent). */
void	http_headers_clear(struct http_req *);
/* Add a header; values with CR, LF or NUL are dropped (and logged). */
void	http_header_add(struct http_req *, const char *name, const char *value);
/* Write body bytes (sending status and headers first). 0, or -1 once the client is gone. */
int	http_write(struct http_req *, const void *buf, size_t len);
int	http_puts(struct http_req *, const char *s);
/* Push buffered bytes to the web server now. 0, or -1 once the client is gone. */
int	http_flush(struct http_req *);
/*
 * The body that follows is large and comes in pieces (a download): up to
 * 256 KiB of it may be held and sent as a few large FastCGI records,
 * whatever the pieces' size. Held bytes leave when the buffer is full, at
 * http_flush, at http_end and when the handler returns; a stream that must
 * reach the client as it is written (SSE) does not use this. 0, or -1 when
 * not served over FastCGI or out of memory (writes then go out as before).
 */
int	http_coalesce(struct http_req *);
/*
 * End the response now and hand the request back to the web server, while
 * the handler goes on working (a command that outlives its request). After
 * it the request has no headers or body and every write fails (gone).
 */
void	http_end(struct http_req *);
/* Has the client gone (a write or flush failed, or the web server closed the connection)? */
bool	http_gone(struct http_req *);
/* Have status and headers been sent? */
bool	http_started(struct http_req *);

/* Whole responses. Content-Length is set, Cache-Control: no-store for JSON. */
int	http_send(struct http_req *, int status, const char *ctype,
	    const void *body, size_t len);
int	http_send_json(struct http_req *, int status, struct json_object *);
/* A short text/plain error page: "<status> <reason>\n<detail>\n". */
int	http_send_error(struct http_req *, int status, const char *detail);

/* The standard reason phrase of a status code. */
const char	*http_reason(int status);

#endif
