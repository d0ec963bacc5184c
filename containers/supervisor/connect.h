/*
 * connect.h: "supervisor connect PORT" (connect.c).
 */
#ifndef CS_SUPERVISOR_CONNECT_H
#define CS_SUPERVISOR_CONNECT_H

/*
 * Connect to PORT in the container (127.0.0.1, ::1, then its own
 * addresses), write '+' or '-' on stdout, then carry bytes both ways until
 * either side ends. The exit status.
 */
int	connect_main(long port);

#endif
