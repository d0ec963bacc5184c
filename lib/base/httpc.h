/*
 * httpc.h: a small HTTP/1.1 client (RFC 9112) for peers trusted by name
 * but hostile by content: the Docker engine (lib/engine/docker.c), and the
 * web servers of Client ID Metadata Documents (lib/oauth/cimd.c).
 *
 * Only what the Engine API (and a Client ID Metadata Document fetch) need:
 * one request at a time per connection,
 * responses framed by Content-Length, chunked transfer coding or the end of
 * the connection, keep-alive reuse of one idle connection per endpoint, and
 * the raw byte stream that follows a hijacked (101 Switching Protocols or
 * raw-stream 200) answer. Transports: a unix socket, TCP, and TLS over TCP
 * with a CA file and a client certificate (OpenSSL libssl, the only other
 * file besides crypto.c that includes OpenSSL headers: the transport is
 * this file's concern).
 *
 * Every byte read is hostile: a response head is at most HTTPC_HEAD_MAX
 * bytes and HTTPC_HEADERS_MAX header lines, the status line is strict, no
 * NUL or control byte is accepted in the head, Content-Length and chunk
 * sizes are range-checked, and a response may not carry both framings.
 *
 * Nothing here waits past the time it is given: every function that may
 * block takes a wait in milliseconds (how long to wait for the socket this
 * time) or a monotonic deadline (clock.h); callers loop in slices of a
 * second at most so they can ask their stop flag, tick or stall deadline.
 *
 * Threads: a struct httpc (an endpoint) and its connections belong to one
 * thread, except that one thread may call httpc_recv while others call
 * httpc_write on the same connection (a hijacked stream).
 */
#ifndef CS_HTTPC_H
#define CS_HTTPC_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define HTTPC_HEAD_MAX		(16u << 10)	/* a response head, blank line included */
#define HTTPC_HEADERS_MAX	100		/* header lines in one head */
#define HTTPC_CHUNK_LINE_MAX	1024		/* a chunk-size line, extensions included */
#define HTTPC_TRAILER_MAX	(16u << 10)	/* all trailer lines of a chunked body */
#define HTTPC_INTERIM_MAX	8		/* 1xx answers before the final one */

struct httpc;
struct httpc_conn;

/*
 * An endpoint: the unix socket path (host and port NULL), or host and port
 * over TCP; over TLS when ca is not NULL, verifying the peer's certificate
 * against the CA file ca and its name or address against host, with the
 * client certificate cert and key (PEM files). Nothing is connected yet;
 * the files are read here. 0 and *out (free with httpc_free), or -1.
 */
int	httpc_new(const char *unix_path, const char *host, const char *port,
	    const char *ca, const char *cert, const char *key,
	    struct httpc **out, struct error *);
/*
 * An HTTPS origin reached at one numeric address (addr, checked by the
 * caller: no name lookup happens here) on port: the certificate is
 * verified against the system's CA store and host (sent as SNI; a name or
 * an address literal); no client certificate. For a fetch of a URL from
 * outside (lib/oauth/cimd.c). 0 and *out, or -1.
 */
int	httpc_new_https(const char *host, const char *addr, const char *port,
	    struct httpc **out, struct error *);
void	httpc_free(struct httpc *);

/*
 * The program's stop flag, asked about once a second while connecting (the
 * other waits are the callers' slices). Set it once, before threads start.
 */
void	httpc_set_stop(bool (*stopping)(void));

/* The Host header's value for requests to this endpoint. */
const char *httpc_authority(const struct httpc *);

/*
 * A connection for one request: the endpoint's idle connection when one is
 * kept and reuse is true (*reused is then set), else a new one connected
 * by deadline (monotonic ms) with a read buffer of bufsize bytes (at least
 * HTTPC_HEAD_MAX). On failure err->kind is ERR_UNAVAILABLE (nothing reached) and
 * the message gives the system's reason, naming the socket.
 */
struct httpc_conn *httpc_conn_get(struct httpc *, bool reuse, size_t bufsize,
	    long long deadline_ms, bool *reused, struct error *);
/*
 * Done with c: kept as the endpoint's idle connection when keep is true,
 * no other is kept and its buffer is the default size, else closed.
 */
void	httpc_conn_put(struct httpc *, struct httpc_conn *, bool keep);
void	httpc_conn_close(struct httpc_conn *);

/*
 * Send from buf[0..len), waiting for the socket at most wait_ms: the count
 * sent (0 when the socket took nothing in time), or -1 when the connection
 * broke. With readable not NULL, also returns 0 with *readable set as soon
 * as the peer has sent something (an early answer to a request whose body
 * is still going out).
 */
long	httpc_write(struct httpc_conn *, const void *buf, size_t len,
	    int wait_ms, bool *readable);

/*
 * Read into the connection's buffer, waiting at most wait_ms for bytes:
 * 1 when bytes came, 0 when none came in time, -1 at the end of the
 * connection or on an error, -2 when the buffer is full (a head too long).
 */
int	httpc_fill(struct httpc_conn *, int wait_ms);

/*
 * Read what is there (buffered bytes first), waiting at most wait_ms:
 * the count (> 0), 0 when nothing came, -1 when the connection ended or
 * broke. For a hijacked stream, after its head.
 */
long	httpc_recv(struct httpc_conn *, void *buf, size_t len, int wait_ms);

/* Break the connection both ways: a reader waiting in it returns soon. */
void	httpc_shutdown(struct httpc_conn *);

/* How a response's body is framed (RFC 9112 §6.3). */
enum httpc_framing {
	HTTPC_NONE,		/* no body: HEAD, 1xx, 204, 304 */
	HTTPC_LENGTH,		/* Content-Length bytes */
	HTTPC_CHUNKED,		/* Transfer-Encoding: chunked */
	HTTPC_CLOSE		/* until the connection ends */
};

struct httpc_head {
	int			 status;	/* 100-999 */
	int			 minor;		/* HTTP/1.minor */
	enum httpc_framing	 framing;
	unsigned long long	 length;	/* for HTTPC_LENGTH */
	bool			 has_length;	/* a Content-Length was given */
	bool			 chunked;	/* Transfer-Encoding: chunked was given */
	bool			 close;		/* the connection cannot be kept after it */
	bool			 close_hdr;	/* Connection: close, or HTTP/1.0 */
	bool			 json;		/* Content-Type application/json */
};

/* Each header line (without its CRLF), for a caller that wants one. */
typedef int (*httpc_header_fn)(void *arg, const char *line, size_t len);

/*
 * Parse a response head from buf[0..len) (hostile bytes; RFC 9112 §4 and
 * §5): "HTTP/1.0" or "HTTP/1.1", one space, three digits, a space and a
 * reason or nothing, CRLF; then header lines of a token, ':' and a value
 * without control bytes (but HTAB), each ending CRLF (no folding); then
 * CRLF. Returns the head's length once its blank line is in buf (h filled;
 * fn, when not NULL, called with each header line; -2 when fn returned
 * -1), 0 when more is needed, -1 when malformed (more than HTTPC_HEAD_MAX bytes
 * or HTTPC_HEADERS_MAX lines, a bad or repeated Content-Length, a transfer
 * coding other than chunked, both framings). The framing is that of an
 * answer to GET or POST; httpc_framing adjusts it.
 */
long	httpc_head_parse(const char *buf, size_t len, struct httpc_head *h,
	    httpc_header_fn fn, void *arg);

/* RFC 9112 §6.3: h's framing as the answer to a request (HEAD or not). */
void	httpc_framing(struct httpc_head *h, bool head_request);

/*
 * Read a response head from c, waiting for each piece at most wait_ms:
 * 1 and h (the head consumed from the buffer, the body's first bytes left
 * there), 0 when nothing complete came in time (call again), -1 when the
 * connection ended first (err->kind ERR_UPSTREAM; *empty set when not one byte
 * came, as on a kept connection the peer had closed) or the head is
 * malformed, -2 when fn returned -1. Interim 1xx answers other than 101 are
 * skipped (at most HTTPC_INTERIM_MAX). Never waits past wait_ms, however
 * the bytes come.
 */
int	httpc_read_head(struct httpc_conn *, struct httpc_head *h,
	    bool head_request, httpc_header_fn fn, void *arg, int wait_ms,
	    bool *empty, struct error *);

/*
 * The chunked transfer coding's decoder (RFC 9112 §7.1), separate so it
 * can be fuzzed. Sizes are hexadecimal, at most 15 digits; extensions are
 * skipped; trailers are read and dropped; lines end CRLF.
 */
struct httpc_chunked {
	int			 state;
	unsigned long long	 left;		/* data bytes still to come in this chunk */
	size_t			 line;		/* bytes of the current size or trailer line */
	size_t			 trailer;	/* bytes of trailers so far */
	bool			 digits;	/* a size digit was seen */
	bool			 ext;		/* in an extension */
};

void	httpc_chunked_init(struct httpc_chunked *);
/*
 * Decode from buf[0..len): *used is how many bytes were consumed; when a
 * data piece is among them, *data points at it (into buf) and *dlen is
 * its length. Returns 1 (a data piece), 0 (framing consumed: call again
 * with the rest, or with more bytes when all was used), 2 (the body is
 * complete: bytes after *used belong to the next response), or -1
 * (malformed: a bad or too large size, a line too long, a missing CRLF).
 */
int	httpc_chunked_step(struct httpc_chunked *, const char *buf, size_t len,
	    size_t *used, const char **data, size_t *dlen);

/*
 * The body of a response, in pieces that point into the connection's
 * buffer (no copy): a reader for the head h read from c.
 */
struct httpc_body {
	struct httpc_conn	*c;
	enum httpc_framing	 framing;
	unsigned long long	 left;		/* HTTPC_LENGTH */
	struct httpc_chunked	 ch;
	bool			 done;
};

void	httpc_body_init(struct httpc_body *, struct httpc_conn *,
	    const struct httpc_head *);
/*
 * The next piece, waiting for the socket at most wait_ms: 1 with *p and
 * *n (valid until the next call), 0 when nothing came in time, 2 at the
 * end of the body (the connection then stands after it), -1 when the
 * connection ended early or the framing is malformed (err->kind ERR_UPSTREAM).
 */
int	httpc_body_next(struct httpc_body *, const char **p, size_t *n,
	    int wait_ms, struct error *);

#endif
