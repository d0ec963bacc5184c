/*
 * sandbox/portconn.h: a TCP connection to a port inside the sandbox
 * container, for preview links (lib/preview/).
 *
 * Every connection to a container is a stream of one long-lived engine
 * exec of the supervisor ("supervisor mux", containers/supervisor/mux.c),
 * attached over a hijacked engine connection (docker_exec_attach) that
 * this process opens once per container and opens again when it dies (the
 * supervisor killed, the container or the engine restarted): it works with
 * a local or a remote engine, needs no route from the host to the
 * container, and leaves the egress policy as it is. The supervisor
 * connects to the port (loopback first, then the container's own
 * addresses) and carries bytes unchanged both ways. Each stream has its
 * own credit both ways (frames.h, "The mux"): a browser that reads nothing
 * stalls only its stream, and holds at most SUPF_MUX_WINDOW bytes here.
 * The supervisor's stdout is hostile bytes (docker_frames, then
 * sandbox/muxin.h); its stderr is logged, escaped and rationed.
 */
#ifndef CS_SANDBOX_PORTCONN_H
#define CS_SANDBOX_PORTCONN_H

#include <stddef.h>

#include "base/error.h"

struct sandbox;
struct portconn;

/*
 * Connect to port in the container of sb and send first's first_len bytes
 * (at most SUPF_MUX_WINDOW; 0 for none): they go right behind the open,
 * without waiting for the connection, and reach the app once it is made.
 * If the channel dies before the answer they are sent again on a new one,
 * so pass only what may reach the app twice (a GET's head).
 * 0 and *out, or -1 with err->kind ERR_NOT_FOUND when nothing listens
 * there (the bytes are dropped), or another kind (the container not
 * running: ERR_CONFLICT; the engine: ERR_UPSTREAM) with a message for a
 * person. Within about 10 s once the channel is open (opening it: its own
 * deadlines, 5 s for the supervisor's answer).
 */
int	portconn_open(struct sandbox *, long port, const void *first,
	    size_t first_len, struct portconn **out, struct error *);
/* Send all len bytes within wait_ms. 0, or -1 when the connection broke. */
int	portconn_send(struct portconn *, const void *buf, size_t len,
	    int wait_ms);
/*
 * The app's bytes into buf: > 0 the count, 0 when none came within
 * wait_ms, -1 when the connection ended (the app closed it, the
 * supervisor or the engine went) or the engine's frames were malformed.
 */
long	portconn_recv(struct portconn *, void *buf, size_t len, int wait_ms);
/*
 * The app's socket itself when the connection was handed over on the
 * lane (sandbox/portlane.h), for splice; else -1. Still the portconn's.
 */
int	portconn_fd(const struct portconn *);
/*
 * Break it both ways: a thread in portconn_recv has what was already
 * queued, then -1.
 */
void	portconn_shutdown(struct portconn *);
/* Close the stream (the supervisor forgets it) and free it. */
void	portconn_close(struct portconn *);
/*
 * At exit, after the connections: end every channel and join its reader,
 * so no reader outlives the process's clean-up.
 */
void	portconn_end(void);

#endif
