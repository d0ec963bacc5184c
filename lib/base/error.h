/*
 * error.h: the one error convention of lib/.
 *
 * A function that can fail returns 0 on success and -1 on failure, and when
 * the caller passed a non-NULL struct error, fills it with one readable line
 * (no trailing newline) that is safe to show a user: it never contains a
 * secret. Library code never exits and never prints on its own.
 */
#ifndef CS_ERROR_H
#define CS_ERROR_H

#include <stddef.h>

struct error {
	int	 status;	/* optional hint: an HTTP status, 0 if none */
	char	 msg[512];
};

/* Fill e (if not NULL) with a formatted message; always returns -1. */
int	error_set(struct error *e, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Same, with an HTTP status hint. */
int	error_status(struct error *e, int status, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
/* Clear e (if not NULL). */
void	error_clear(struct error *e);

#endif
