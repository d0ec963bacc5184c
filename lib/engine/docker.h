/*
 * docker.h: a small Docker Engine API client (API v1.41) over libcurl
 * (lib/base/xfer.h).
 *
 * The engine is named like the docker CLI names it: DOCKER_HOST is
 * unix:///path/docker.sock or tcp://host:port; with DOCKER_TLS_VERIFY the
 * TCP connection is HTTPS with ca.pem, cert.pem and key.pem from
 * DOCKER_CERT_PATH.
 *
 * Threads: a struct docker holds its own connections (one kept for JSON
 * calls); use one per thread. The program's main must call
 * docker_global_init once, before any thread starts (it sets libcurl up
 * and makes a write to a closed connection an error, not SIGPIPE), and
 * docker_global_cleanup at the end (app_main_net does both).
 *
 * Every byte from the engine is bounded and parsed as hostile (libcurl's
 * HTTP/1.1, and docker_head_line's checks on each line of an answer's
 * head); every call has a server-side deadline, as each function says.
 */
#ifndef CS_DOCKER_H
#define CS_DOCKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct json_object;
struct docker;

/* The absolute deadline of one JSON call (docker_request). */
#define DOCKER_REQUEST_TIMEOUT_S	60

/* Largest JSON response body accepted from the engine. */
#define DOCKER_MAX_RESPONSE	(4u << 20)

/* The process-wide set-up and tear-down. 0 or -1. */
int	docker_global_init(void);
void	docker_global_cleanup(void);

/*
 * The program's stop flag (for the FastCGI programs, http_stopping): every
 * transfer on every client asks it about once a second and ends at once,
 * as a failure, when it says true; so no call into the engine keeps a
 * worker from honouring SIGTERM. Set it once, before threads start; NULL
 * (the default) never stops.
 */
void	docker_set_stop(bool (*stopping)(void));

/*
 * A client for the engine at host (DOCKER_HOST syntax). With tls_verify,
 * a tcp:// host is reached over HTTPS with the client certificates in
 * cert_path. Nothing is connected yet. Returns 0 and *out (free with
 * docker_close), or -1.
 */
int	docker_open(const char *host, bool tls_verify, const char *cert_path,
	    struct docker **out, struct error *);
void	docker_close(struct docker *);

/* The DOCKER_HOST this client talks to, for messages. */
const char *docker_host(const struct docker *);

/*
 * One API call: method ("GET", "POST", "DELETE", "HEAD") on path (starting
 * with '/', without the version prefix, already URL-safe), with body sent
 * as JSON when not NULL. Waits at most DOCKER_REQUEST_TIMEOUT_S in all
 * (an absolute deadline, connection included), less when the stop flag
 * rises. On 0, *status is the HTTP
 * status and *resp (if resp is not NULL) a new reference to the parsed JSON
 * body or NULL when the body was empty or not JSON; the caller puts it.
 * Returns -1 when no answer came (engine unreachable, timeout, a body
 * larger than DOCKER_MAX_RESPONSE, bad JSON in a 2xx answer), with a message
 * naming DOCKER_HOST.
 */
int	docker_request(struct docker *, const char *method, const char *path,
	    struct json_object *body, long *status, struct json_object **resp,
	    struct error *);

/* The "message" of an engine error body, or "" (never NULL). */
const char *docker_message(struct json_object *resp);

/*
 * The checks on each line of an answer's head that libcurl leaves to us
 * (RFC 9112 §4, §5, §6.3; hostile bytes): a status line "HTTP/1.0" or
 * "HTTP/1.1", a space, three digits, then a space and a reason or nothing;
 * header lines without control bytes (but HTAB); every line ending CRLF; at
 * most DOCKER_HEAD_MAX bytes of heads in all, DOCKER_INTERIM_MAX interim
 * (1xx) answers before the final one; a Content-Length given once, as
 * digits, and never beside Transfer-Encoding: chunked.
 */
#define DOCKER_HEAD_MAX		(16u << 10)
#define DOCKER_INTERIM_MAX	8

struct docker_head {
	long	status;		/* of the answer being read; 0 before one */
	int	interim;	/* 1xx answers so far */
	size_t	bytes;		/* head bytes so far */
	bool	length;		/* a Content-Length was given */
	bool	chunked;	/* Transfer-Encoding: chunked was given */
	bool	json;		/* Content-Type: application/json */
	bool	ended;		/* the final answer's head is complete */
};

/*
 * One line of a head (with its CRLF, as libcurl's header callback hands
 * it). 1 when it is a header line of the final answer (*vlen: its length
 * without CRLF), 0 for a line to pass over (a status line, a blank line, an
 * interim answer's line), -1 when malformed (*why says how).
 */
int	docker_head_line(struct docker_head *, const char *line, size_t len,
	    size_t *vlen, const char **why);

/* Called while an exec runs; members may be NULL. */
struct docker_exec_cb {
	/* Payload bytes of stream 1 (stdout) or 2 (stderr), as they arrive. */
	void	(*output)(void *arg, int stream, const char *buf, size_t len);
	/*
	 * About once a second, also when no output arrives; called between
	 * reads, outside any output callback, so it may make other requests on
	 * this struct docker. Returning non-zero stops reading:
	 * docker_exec_start then returns 0 with *stopped set. The tick is
	 * where a caller puts its deadline: an exec stream has none of its
	 * own, since a command may be silent for as long as its timeout. The
	 * stop flag (docker_set_stop) stops it the same way.
	 */
	int	(*tick)(void *arg);
	void	*arg;
};

/*
 * Ticks of this client's exec streams every ms milliseconds from now on
 * (0: about once a second, the default), for a caller that must act sooner
 * than that, such as noticing a client that went away.
 */
void	docker_set_tick(struct docker *, long ms);
/* The tick now in force, in milliseconds (for streams read elsewhere). */
long	docker_tick_ms(const struct docker *);

/*
 * POST /exec/id/start (attached, no TTY) and read the multiplexed stream
 * until the engine closes it, with no overall time limit (the caller's tick
 * decides). Output of stream 0 is reported as 1, of stream 3 (engine
 * errors) as 2. Returns 0, setting *stopped when the tick ended it early; or
 * -1 (err->kind ERR_NOT_FOUND or ERR_CONFLICT, from the HTTP status, when
 * the engine refused the start).
 */
int	docker_exec_start(struct docker *, const char *id,
	    const struct docker_exec_cb *, bool *stopped, struct error *);

/*
 * The decoder of the engine's multiplexed raw stream, separate so it can be
 * tested alone. Each frame is an 8-byte header [stream, 0, 0, 0, length as
 * big-endian uint32] and length payload bytes; the bytes may arrive split
 * anywhere. Streams 0 (stdin echo), 1 (stdout), 2 (stderr), 3 (engine
 * error) are valid.
 */
struct docker_frames {
	unsigned char	 hdr[8];
	size_t		 hdr_len;	/* header bytes seen of the current frame */
	uint32_t	 left;		/* payload bytes still to come */
	int		 stream;	/* stream of the current payload */
	bool		 bad;		/* a malformed header was seen; stays set */
};

typedef void (*docker_frame_fn)(void *arg, int stream, const char *buf,
	    size_t len);

void	docker_frames_init(struct docker_frames *);
/*
 * Decode buf[0..len), calling fn with each payload piece (never with
 * len 0). Returns 0, or -1 once a header is malformed (unknown stream, non
 * zero padding); every later call then returns -1 without calling fn.
 */
int	docker_frames_feed(struct docker_frames *, const char *buf, size_t len,
	    docker_frame_fn fn, void *arg);
/* True when the stream may end here: no partial header or payload pending. */
bool	docker_frames_at_boundary(const struct docker_frames *);

/*
 * Raw streaming transfers (the archive API, sandbox/files.c).
 *
 * docker_raw sends method ("GET" or "HEAD") on path and passes on the
 * response as it arrives: each header line of the final response (without
 * its CRLF) to cb->header, and the body of a 2xx response to cb->body in
 * pieces of up to 256 KiB, as they come off the socket (a
 * non-2xx body, the engine's JSON error, is read into err instead). Either
 * callback may return -1 to stop the transfer: docker_raw then returns 0
 * with *stopped set. There is no overall time limit (a body may take as
 * long as it takes to stream); a transfer that moves nothing for
 * DOCKER_RAW_STALL_S seconds (its inactivity deadline) is dropped, and the
 * stop flag ends it within a second. Each call uses a fresh connection,
 * so the callbacks may use this struct docker's JSON calls.
 *
 * Returns 0 with *status the HTTP status, or -1 when no answer came
 * (err as for docker_request). For a non-2xx status, err also holds the
 * engine's message (err->kind from the HTTP status, error_kind_of_http).
 */
#define DOCKER_RAW_STALL_S	60

struct docker_raw_cb {
	int	(*header)(void *arg, const char *line, size_t len);
	int	(*body)(void *arg, const char *buf, size_t len);
	void	*arg;
};

int	docker_raw(struct docker *, const char *method, const char *path,
	    const struct docker_raw_cb *, long *status, bool *stopped,
	    struct error *);

/*
 * docker_put_stream sends PUT path with a body of exactly length bytes of
 * type ctype, pulled from cb->read as the engine takes them (constant
 * memory: the archive upload, PUT /containers/N/archive?path=DIR with an
 * application/x-tar body, Engine API v1.41 "Extract an archive of files or
 * folders to a directory in a container"). read fills at most len bytes
 * and returns how many (0 only at the end), or -1 to abort: the transfer
 * is then dropped and docker_put_stream returns 0 with *aborted set (the
 * engine sees a cut body and extracts nothing more). There is no overall
 * time limit; a transfer that moves nothing for DOCKER_RAW_STALL_S seconds
 * is dropped. Returns 0 with *status, or -1 as docker_raw does.
 */
struct docker_put_cb {
	long	(*read)(void *arg, char *buf, size_t len);
	void	*arg;
};

int	docker_put_stream(struct docker *, const char *path, const char *ctype,
	    unsigned long long length, const struct docker_put_cb *,
	    long *status, bool *aborted, struct error *);

/*
 * The same as a POST (the image import, POST /images/create?fromSrc=-,
 * Engine API v1.41 "Create an image" by import), passing a 2xx answer's
 * body to out->body as it arrives (out may be NULL: passed over), since
 * the engine reports a failed import in that body, not in the status.
 */
int	docker_post_stream(struct docker *, const char *path, const char *ctype,
	    unsigned long long length, const struct docker_put_cb *,
	    const struct docker_raw_cb *out, long *status, bool *aborted,
	    struct error *);

/*
 * PUT len bytes of buf (a small archive held in memory, e.g. the
 * supervisor) on path with Content-Type application/x-tar, within the
 * absolute deadline of a JSON call. 0 with *status (err holds the engine's
 * message for a non-2xx status), or -1 when no answer came.
 */
int	docker_upload(struct docker *, const char *path, const void *buf,
	    size_t len, long *status, struct error *);

/* The stop flag's answer now (false when none was set). */
bool	docker_stopping(void);

/*
 * A hijacked exec connection: POST /exec/ID/start with Connection: Upgrade
 * and Upgrade: tcp (Engine API v1.41, "Start an exec instance"; the engine
 * answers 101 and the connection then carries raw bytes both ways: the
 * exec's stdin one way, its multiplexed stdout and stderr, decoded with
 * docker_frames_*, the other). Works on a unix socket, TCP and TLS alike.
 * The exec must have been created with AttachStdin. Setting up has an
 * absolute deadline of 10 s. 0 and *out, or -1 (err->kind ERR_NOT_FOUND
 * or ERR_CONFLICT when the engine refused: no such exec, container not
 * running).
 *
 * Threads: one thread may call docker_conn_recv while others call
 * docker_conn_send (the caller serialises senders, so frames do not mix).
 */
struct docker_conn;

int	docker_exec_attach(struct docker *, const char *id,
	    struct docker_conn **out, struct error *);
/*
 * The parser of the engine's answer head there (hostile bytes): for the
 * first len bytes of the answer, the HTTP status once its blank line has
 * come (*head_len: the head's length, the stream follows), 0 when more is
 * needed, -1 when malformed (no "HTTP/1.x NNN " status line, a NUL byte).
 */
long	docker_attach_head(const char *buf, size_t len, size_t *head_len);
/*
 * Send all len bytes, waiting for the socket until deadline_ms (monotonic
 * milliseconds, as CLOCK_MONOTONIC) and no later; the stop flag ends it
 * too. 0, or -1.
 */
int	docker_conn_send(struct docker_conn *, const void *buf, size_t len,
	    long long deadline_ms, struct error *);
/*
 * Read what is there, waiting at most wait_ms for something: the count
 * read (> 0), 0 when nothing came, -1 when the connection ended or broke.
 */
long	docker_conn_recv(struct docker_conn *, void *buf, size_t len,
	    int wait_ms);
/*
 * A channel's reader: read the connection (chunk bytes at a time) and feed
 * the engine's frames in it to fn, until the connection ends or breaks,
 * its frames are malformed, fn sets *stop, or the server stops
 * (docker_stopping, seen within a second). Returns when any of those is
 * so; the connection is left as it is.
 */
void	docker_conn_pump(struct docker_conn *, struct docker_frames *,
	    size_t chunk, docker_frame_fn fn, void *arg, const bool *stop);
/* Break the connection (both ways): a reader waiting in it returns soon. */
void	docker_conn_shutdown(struct docker_conn *);
void	docker_conn_close(struct docker_conn *);

#endif
