/*
 * error.h: the one error convention of lib/.
 *
 * A function that can fail returns 0 on success and -1 on failure, and when
 * the caller passed a non-NULL struct error, fills it with one readable line
 * (no trailing newline) that is safe to show a user: it never contains a
 * secret, and with the kind of failure. Library code never exits and never
 * prints on its own.
 *
 * A lookup (is this row, file or container there?) returns an enum
 * lookup_result instead: found, not found, or an error, never a bare 1/0/-1.
 *
 * The kinds are the library's own words. HTTP statuses and JSON-RPC errors
 * are chosen from them only where a program answers (error_http_status);
 * an HTTP status read from the engine or a fetched server becomes a kind
 * where it is read (error_kind_of_http).
 */
#ifndef CS_ERROR_H
#define CS_ERROR_H

#include <stddef.h>

enum error_kind {
	ERR_NONE = 0,		/* no kind given: a failure of the server's own */
	ERR_INVALID,		/* the caller's input is malformed */
	ERR_DENIED,		/* not allowed to this caller */
	ERR_NOT_FOUND,		/* no such thing (a file, a container, a link) */
	ERR_CONFLICT,		/* the thing is not in a state for this (a stopped container) */
	ERR_GONE,		/* it was there and has ended (an expired or revoked link) */
	ERR_TOO_LARGE,		/* over a size limit */
	ERR_INTERNAL,		/* the server's or the engine's own failure (out of memory, a spool file) */
	ERR_UPSTREAM,		/* the engine or a fetched server failed or answered badly */
	ERR_UNAVAILABLE,	/* the engine cannot be reached, or the server is stopping */
	ERR_TIMEOUT,		/* a server-side deadline passed */
	ERR_NO_SPACE,		/* out of space for what was asked (a full disk) */
	ERR_REFUSED,		/* the engine refused it for good (another architecture) */
};

enum lookup_result {
	LOOKUP_ERROR = -1,	/* the struct error says why */
	LOOKUP_NONE = 0,
	LOOKUP_FOUND = 1,
};

struct error {
	enum error_kind	 kind;
	char		 msg[512];
};

/* Fill e (if not NULL) with a formatted message of kind ERR_NONE; always returns -1. */
int	error_set(struct error *e, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Same, with a kind. */
int	error_kind(struct error *e, enum error_kind kind, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Clear e (if not NULL). */
void	error_clear(struct error *e);

/* The HTTP status a program answers for a kind (ERR_NONE: 500). */
int	error_http_status(enum error_kind);
/* The kind of an HTTP status another server answered (any other: ERR_UPSTREAM). */
enum error_kind error_kind_of_http(long status);

#endif
