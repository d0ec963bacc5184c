/*
 * unix_listen.h: the unit tests' one listening unix socket, for tests that
 * play a peer (the engine, an HTTP origin, a web server) on this machine.
 */
#ifndef UNIX_LISTEN_H
#define UNIX_LISTEN_H

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A unix socket listening at path (a stale one removed first); -1 on failure. */
static inline int
unix_listen(const char *path)
{
	struct sockaddr_un	 sa;
	int			 fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -1;
	unlink(path);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(fd, 16) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif
