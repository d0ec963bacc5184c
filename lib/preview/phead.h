/*
 * preview/phead.h: HTTP/1.1 heads on a preview's way: the request head the
 * web server sends the preview program, and the response head of the app
 * in the sandbox (hostile bytes: written by whatever the model runs).
 *
 * phead_parse reads one head (start line, fields, blank line) of at most
 * PHEAD_MAX bytes and PHEAD_FIELDS fields: lines end in CRLF (a bare LF is
 * taken), no NUL or other control byte but tab in a value, field names of
 * RFC 9110 token characters, no line folding. Nothing is copied: the parts
 * point into the caller's buffer.
 *
 * phead_request and phead_response write the head passed on (to the app,
 * to the web server): hop-by-hop fields dropped (Connection, Keep-Alive,
 * Proxy-Connection, TE, Trailer, Upgrade; the Upgrade of a WebSocket
 * handshake kept), "Connection: close" (or "Connection: Upgrade") added,
 * the preview's own cookie taken out of Cookie, and from the app's
 * Set-Cookie its Domain attribute removed (cookies stay host-only) and a
 * cookie named like the preview's dropped. A response with two lengths,
 * a length that is not digits, or a length and chunked framing is refused.
 */
#ifndef CS_PREVIEW_PHEAD_H
#define CS_PREVIEW_PHEAD_H

#include <stdbool.h>
#include <stddef.h>

#define PHEAD_MAX	(16u * 1024)
#define PHEAD_FIELDS	100

struct phead_field {
	const char	*name, *value;
	size_t		 name_len, value_len;
};

struct phead {
	/* Request: method, target, version. Response: version, status, reason. */
	const char		*part[3];
	size_t			 part_len[3];
	int			 status;	/* response: 100..999 */
	struct phead_field	 field[PHEAD_FIELDS];
	size_t			 nfield;
};

/*
 * Parse the head at buf[0..len) as a request (response false) or a
 * response. Returns the head's length with h filled, 0 when more bytes are
 * needed (and len < PHEAD_MAX), or -1 when malformed or too long (*why
 * says what).
 */
long	phead_parse(const char *buf, size_t len, bool response,
	    struct phead *h, const char **why);

/* The value of field name (case-insensitive), the first; NULL if none. */
const struct phead_field *phead_get(const struct phead *, const char *name);
/* Does a field name hold token (a comma-separated list, case-insensitive)? */
bool	phead_has_token(const struct phead *, const char *name,
	    const char *token);
/* Is h a WebSocket handshake (Upgrade: websocket, Connection: upgrade)? */
bool	phead_is_upgrade(const struct phead *);

/*
 * The value of cookie name in h's Cookie fields into out (n bytes). The
 * length, or -1 when there is none or it does not fit.
 */
long	phead_cookie(const struct phead *, const char *name, char *out,
	    size_t n);

/*
 * The request head for the app into out (n bytes), with target instead of
 * h's (NULL: h's), cookie the preview's cookie name. The length, or -1
 * when it does not fit.
 */
long	phead_request(const struct phead *, const char *target,
	    const char *cookie, char *out, size_t n);
/*
 * The response head for the web server into out (n bytes). The length,
 * or -1 when it does not fit or the app's framing is refused (*why).
 */
long	phead_response(const struct phead *, const char *cookie, char *out,
	    size_t n, const char **why);

#endif
