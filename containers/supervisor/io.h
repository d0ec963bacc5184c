/*
 * io.h: whole reads and writes (io.c), retried on EINTR.
 */
#ifndef CS_SUPERVISOR_IO_H
#define CS_SUPERVISOR_IO_H

#include <stddef.h>

/* Write all of buf to fd; -1 when the other end is gone. */
int	sup_write_all(int fd, const void *buf, size_t len);
/* Read exactly len bytes; -1 at an error or the end before them. */
int	sup_read_full(int fd, void *buf, size_t len);

#endif
