/*
 * connect.h: a connection to a TCP port in the container (connect.c), for
 * the mux's streams (mux.c).
 */
#ifndef CS_SUPERVISOR_CONNECT_H
#define CS_SUPERVISOR_CONNECT_H

/*
 * A blocking socket connected to port in the container: 127.0.0.1, then
 * ::1, then the container's own addresses (a server bound to one of
 * them), 2 s each at most. -1 when nothing listens.
 */
int	connect_port(long port);

#endif
