/*
 * io.h: the supervisor's small helpers (io.c): whole reads and writes
 * retried on EINTR, stdio on /dev/null, numbers from its arguments, and
 * its last word.
 */
#ifndef CS_SUPERVISOR_IO_H
#define CS_SUPERVISOR_IO_H

#include <stddef.h>

#define SUP_READ_CHUNK	(32 * 1024)	/* one read of a pipe or stdin */

/* Write all of buf to fd; -1 when the other end is gone. */
int	sup_write_all(int fd, const void *buf, size_t len);
/* Read exactly len bytes; -1 at an error or the end before them. */
int	sup_read_full(int fd, void *buf, size_t len);

/* stdin, stdout and stderr on /dev/null (a daemon's, a drain's). */
void	sup_null_stdio(void);

/* s as a decimal number from min (at least 0) to max, or -1. */
long	sup_number(const char *s, long min, long max);

/*
 * End with code, saying why: msg as an 'X' frame on stdout (frames.h, cut
 * to SUPF_MESSAGE_MAX) and on stderr.
 */
void	sup_die(int code, const char *msg) __attribute__((noreturn));

#endif
