/*
 * engine/extern.h: what the parts of the Docker Engine API client share
 * (docker.c, the client, its transfers and JSON answers; docker_exec.c,
 * the exec start and its multiplexed stream; docker_attach.c, the hijacked
 * exec connection; docker_archive.c, the raw archive streams). Not for
 * other modules: they use engine/docker.h.
 */
#ifndef CS_ENGINE_EXTERN_H
#define CS_ENGINE_EXTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/xfer.h"
#include "engine/docker.h"

/* Every wait is cut into slices of at most this, to ask the stop flag. */
#define DOCKER_SLICE_MS		1000
/* Connecting to the engine, each time. */
#define DOCKER_CONNECT_MS	5000L
/* Largest error answer's body read (the engine's JSON message). */
#define DOCKER_ERROR_BODY_MAX	(64u << 10)

struct docker {
	char		*host;		/* DOCKER_HOST as given */
	char		*base;		/* URL of the API: scheme, authority, version */
	char		*authority;	/* the Host header's value */
	char		*unix_path;	/* the engine's socket, or NULL (TCP) */
	char		*ca, *cert, *key; /* TLS files, or NULL (no TLS) */
	CURL		*json;		/* the JSON calls' handle ... */
	CURLM		*multi;		/* ... and where their connection is kept */
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
	struct error			 why;		/* why the time ran out */
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
 * One transfer: the handle (the client's kept one, or a fresh one with its
 * own multi handle, for a stream), its request headers, and what its
 * header callback saw of the answer (docker_head_line).
 */
struct docker_xfer {
	struct docker		*d;
	CURL			*e;
	CURLM			*m;
	bool			 fresh;		/* e and m are this transfer's own */
	struct curl_slist	*hdrs;
	struct docker_head	 head;
	/* Each header line of the final answer (without CRLF): -1 stops. */
	int			(*header)(void *arg, const char *line, size_t len);
	void			*header_arg;
	bool			 stopped;	/* header or a body callback stopped it */
	const char		*why;		/* the head was malformed: how */
	CURLcode		 res;		/* libcurl's result, once run */
	char			 errbuf[CURL_ERROR_SIZE];
};

/*
 * Set x up for method on the API path (without the version prefix; bytes
 * that cannot go in a request line are refused) on the kept handle, or a
 * fresh one (fresh: streams, so their callbacks may make JSON calls),
 * with a Content-Type when ctype is not NULL. A request body, if any, is
 * the caller's to add (docker_xfer_memory, or CURLOPT_UPLOAD). 0, or -1
 * with err; docker_xfer_done in either case.
 */
int	docker_xfer_open(struct docker_xfer *, struct docker *, bool fresh,
	    const char *method, const char *path, const char *ctype,
	    struct error *);
/* A request body of len bytes at buf (kept by the caller until the end). */
int	docker_xfer_memory(struct docker_xfer *, const char *method,
	    const void *buf, size_t len);
/* Release what docker_xfer_open took (a fresh handle, the headers). */
void	docker_xfer_done(struct docker_xfer *);

/* How docker_xfer_run ended. */
enum docker_run {
	DOCKER_RUN_FAILED = -1,	/* err set (engine unreachable, answer broken, time up) */
	DOCKER_RUN_DONE = 0,	/* the answer came whole */
	DOCKER_RUN_STOPPED = 1,	/* a callback, the tick or the stop flag stopped it */
};

/*
 * Run x within w. DOCKER_RUN_DONE with *status the HTTP status,
 * DOCKER_RUN_STOPPED (x->stopped or w->stopped; *status that of the answer
 * stopped, 0 when its head had not come), or DOCKER_RUN_FAILED with
 * err naming DOCKER_HOST (ERR_UNAVAILABLE when nothing was reached or time
 * ran out, ERR_UPSTREAM when the answer broke off or made no sense).
 */
enum docker_run docker_xfer_run(struct docker_xfer *, struct docker_waiter *,
	    long *status, struct error *);

/* The answer's status so far (0 before its head). */
long	docker_xfer_status(struct docker_xfer *);

/* A fresh handle on the engine, its options set; NULL when out of memory. */
CURL	*docker_fresh_handle(struct docker *, char *errbuf);

/*
 * err for an engine that could not be reached: ERR_UNAVAILABLE, naming
 * DOCKER_HOST and, when the connection was refused, the socket or address
 * and the system's reason. Returns -1.
 */
int	docker_unreachable(struct docker *, CURL *, CURLcode,
	    const char *errbuf, struct error *);

/* A libcurl write callback keeping the body in a struct docker_body. */
size_t	docker_body_write(char *p, size_t size, size_t n, void *arg);

/*
 * err for a non-2xx answer whose body b is the engine's JSON error:
 * "WHAT (HTTP n): message", its kind from the status.
 */
void	docker_refused(struct error *, long status,
	    const struct docker_body *b, const char *what);

/*
 * tar.c's field readers, shared with tar_check.c: a numeric header field
 * (octal, or GNU base-256), a header's checksum, a pax record's decimal,
 * the zero block; padding is tar_padding (tar.h).
 */
int	tar_number(const unsigned char *f, size_t n, unsigned long long *out);
bool	tar_checksum_ok(const unsigned char *h);
bool	tar_zero_block(const unsigned char *h);
int	tar_decimal(const char *s, size_t n, unsigned long long *out);

#endif
