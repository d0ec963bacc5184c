/*
 * sandbox/portconn.h: a TCP connection to a port inside the sandbox
 * container, for preview links (lib/preview/).
 *
 * Each connection is its own engine exec of the supervisor ("supervisor
 * connect PORT", containers/supervisor), attached over a hijacked engine
 * connection (docker_exec_attach): it works with a local or a remote
 * engine, needs no route from the host to the container, and leaves the
 * egress policy as it is. The supervisor connects to the port (loopback
 * first, then the container's own addresses) and then carries bytes
 * unchanged both ways. Its stdout arrives in the engine's frames, decoded
 * here (hostile bytes: docker_frames); its stderr is dropped.
 */
#ifndef CS_SANDBOX_PORTCONN_H
#define CS_SANDBOX_PORTCONN_H

#include <stddef.h>

#include "base/error.h"

struct sandbox;
struct portconn;

/*
 * Connect to port in the container of sb. 0 and *out, or -1 with
 * err->kind ERR_NOT_FOUND when nothing listens there, or another kind
 * (the container not running: ERR_CONFLICT; the engine: ERR_UPSTREAM)
 * with a message for a person. Within about 10 s.
 */
int	portconn_open(struct sandbox *, long port, struct portconn **out,
	    struct error *);
/* Send all len bytes within wait_ms. 0, or -1 when the connection broke. */
int	portconn_send(struct portconn *, const void *buf, size_t len,
	    int wait_ms);
/*
 * The app's bytes into buf: > 0 the count, 0 when none came within
 * wait_ms, -1 when the connection ended (the app closed it, the
 * supervisor or the engine went) or the engine's frames were malformed.
 */
long	portconn_recv(struct portconn *, void *buf, size_t len, int wait_ms);
/* Break it both ways: a thread in portconn_recv returns soon. */
void	portconn_shutdown(struct portconn *);
void	portconn_close(struct portconn *);

#endif
