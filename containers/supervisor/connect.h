/*
 * connect.h: a connection to a TCP port in the container (connect.c), for
 * the mux's streams (mux.c).
 */
#ifndef CS_SUPERVISOR_CONNECT_H
#define CS_SUPERVISOR_CONNECT_H

#include <stddef.h>

/*
 * A blocking socket connected to port in the container: 127.0.0.1, then
 * ::1, then the container's own addresses (a server bound to one of
 * them), 2 s each at most. -1 when nothing listens.
 */
int	connect_port(long port);

/*
 * Hand fd to the server over the lane socket at path (lib/sandbox/
 * portlane.h): one message, the key's klen bytes and fd. 0 once sent (fd
 * is still ours to close), or -1 (no lane: the mux carries the stream).
 */
int	connect_give(const char *path, const unsigned char *key, size_t klen,
	    int fd);

#endif
