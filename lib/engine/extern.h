/*
 * engine/extern.h: what the parts of the Docker Engine API client share
 * (docker.c, the connection, requests and JSON answers; docker_exec.c, the
 * exec start and its multiplexed stream; docker_attach.c, the hijacked exec
 * connection; docker_archive.c, the raw archive streams). Not for other
 * modules: they use engine/docker.h.
 */
#ifndef CS_ENGINE_EXTERN_H
#define CS_ENGINE_EXTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/httpc.h"

struct docker_exec_cb;

/* Every wait is cut into slices of at most this, to ask the stop flag. */
#define DOCKER_SLICE_MS		1000
/* Largest error answer's body read (the engine's JSON message). */
#define DOCKER_ERROR_BODY_MAX	(64u << 10)

struct docker {
	char		*host;		/* DOCKER_HOST as given */
	struct httpc	*ep;		/* the engine's endpoint, its idle connection */
	long		 tick_ms;	/* exec streams' tick; 0: the default */
};

/* A response body growing up to a fixed maximum. */
struct docker_body {
	char	*buf;
	size_t	 len, cap, max;
	bool	 too_big;
};

/*
 * How long one call may wait: an absolute deadline (stall_ms 0), a stall
 * deadline pushed back by each piece moved (stall_ms > 0), or the tick of
 * an exec stream (cb not NULL).
 */
struct docker_waiter {
	struct docker			*d;
	long long			 deadline;
	long				 stall_ms;
	const struct docker_exec_cb	*cb;
	long long			 next_tick;
	bool				 stopped;	/* the tick or the stop flag ended it */
};

/* A waiter with an absolute deadline ms from now, or a stall deadline. */
void	docker_waiter_deadline(struct docker_waiter *, struct docker *,
	    long ms, bool stall);
/* A waiter with no deadline, only cb's tick (an exec stream). */
void	docker_waiter_tick(struct docker_waiter *, struct docker *,
	    const struct docker_exec_cb *cb);
/* Bytes moved: a stall deadline starts again. */
void	docker_waiter_moved(struct docker_waiter *);

/*
 * A connection for one call (reuse: the kept one when there is one), its
 * read buffer bufsize (0: the default), connecting within a few seconds.
 * NULL with err (naming DOCKER_HOST when unreachable).
 */
struct httpc_conn *docker_connect(struct docker *, bool reuse, size_t bufsize,
	    bool *reused, struct error *);

/*
 * The request head (RFC 9112 §3) for method on the API path (without the
 * version prefix), with a Content-Type when ctype is not NULL, a
 * Content-Length when has_len, the header lines extra (may be NULL), and
 * room more bytes free after it; *hlen its length. NULL when out of memory
 * or path holds a byte that cannot go in a request line. The caller frees.
 */
char	*docker_request_head(struct docker *, const char *method,
	    const char *path, const char *ctype, bool has_len,
	    unsigned long long clen, const char *extra, size_t room,
	    size_t *hlen);

/*
 * Send all len bytes within w. 0, or -1 (err set, or w->stopped). With
 * early not NULL, stops with *early set when the engine answers before
 * all was sent.
 */
int	docker_send_all(struct httpc_conn *, const char *p, size_t len,
	    struct docker_waiter *w, bool *early, struct error *);

/* How docker_read_head ended. */
enum docker_head {
	DOCKER_HEAD_STOPPED = -2,	/* fn stopped it */
	DOCKER_HEAD_FAILED = -1,	/* err set, or w->stopped */
	DOCKER_HEAD_CLOSED = 0,		/* closed before a byte of it came */
	DOCKER_HEAD_READ = 1,
};

/*
 * Read the response head within w, header lines to fn (may be NULL):
 * DOCKER_HEAD_READ, or DOCKER_HEAD_CLOSED when the connection closed before
 * a byte of it came (*empty: worth one more try on a new one), or
 * DOCKER_HEAD_FAILED (err set, or w->stopped), or DOCKER_HEAD_STOPPED when
 * fn stopped it.
 */
enum docker_head docker_read_head(struct httpc_conn *, struct httpc_head *,
	    bool head_request, httpc_header_fn fn, void *arg,
	    struct docker_waiter *w, bool *empty, struct error *);

/* How docker_body_each ended. */
enum docker_body_end {
	DOCKER_BODY_FAILED = -1,
	DOCKER_BODY_DONE = 0,
	DOCKER_BODY_STOPPED = 1,
};

/*
 * Each piece of the body of h to fn (which returns -1 to stop reading),
 * every wait a slice of w, each piece pushing back a stall deadline.
 * DOCKER_BODY_DONE at the end of the body, DOCKER_BODY_STOPPED when fn
 * stopped, DOCKER_BODY_FAILED when a wait ended (err set, or w->stopped) or
 * the body broke off (err).
 */
enum docker_body_end docker_body_each(struct httpc_conn *,
	    const struct httpc_head *, struct docker_waiter *w,
	    int (*fn)(void *arg, const char *p, size_t n), void *arg,
	    struct error *);

/* Read the whole body into b within w: 0, or -1 (err set, or w->stopped). */
int	docker_read_body(struct httpc_conn *, const struct httpc_head *,
	    struct docker_body *b, struct docker_waiter *w, struct error *);

/*
 * err for a non-2xx answer whose body b is the engine's JSON error:
 * "WHAT (HTTP n): message", its kind from the status.
 */
void	docker_refused(struct error *, long status,
	    const struct docker_body *b, const char *what);

/* err for an answer that never came: the connection closed first. */
int	docker_closed_early(const struct docker *, struct error *);

#endif
