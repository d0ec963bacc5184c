/*
 * sandbox/portlane.h: the local engine's lane for preview connections
 * (sandbox/portconn.h), so that an app's bytes need not pass through the
 * engine's exec stream.
 *
 * With SANDBOX_PREVIEW_SOCKETS set (by default with a local engine), each
 * container is made with a folder of the host bound read-only at
 * PORTLANE_TARGET (portlane_folder: one per container, mode 0711). The
 * preview program listens on a SOCK_SEQPACKET socket of its own in that
 * folder and names it to "supervisor mux --lane PATH". For a stream opened
 * with a key, the supervisor connects to the port as always, then sends one
 * message on that socket: the 16-byte key and the connected TCP socket
 * (SCM_RIGHTS), and answers 'L' on the mux. The preview program then reads
 * and writes the app's connection itself: the supervisor carries no byte.
 *
 * Trust: the container may send anything on its socket. Only its own
 * folder is in it, so it can only answer its own streams; a message is
 * taken only if it is exactly one key and one descriptor, and the
 * descriptor a connected TCP socket (IPv4 or IPv6); anything else is
 * closed unread. The key, random per stream, ties it to the stream that
 * asked. The socket lives in the container's network namespace, so the
 * egress policy holds for it as for the supervisor's.
 */
#ifndef CS_SANDBOX_PORTLANE_H
#define CS_SANDBOX_PORTLANE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct config;

#define PORTLANE_TARGET		"/run/code-sandbox-previews"
#define PORTLANE_KEY		16
#define PORTLANE_PATH_MAX	108	/* sun_path */

/*
 * The host folder of container's lane into out (n bytes): the setting's
 * folder, then 32 hex digits of the name's SHA-256 (portlane_name). 0, or
 * -1 when lanes are off or it does not fit.
 */
int	portlane_folder(const struct config *, const char *container,
	    char *out, size_t n);
#define PORTLANE_NAME	33
void	portlane_name(const char *container, char out[PORTLANE_NAME]);

/*
 * Make the folder (and the setting's, mode 0711) if missing: a directory
 * of ours, not a link. 0, or -1 with err set.
 */
int	portlane_prepare(const char *folder, struct error *);

/* Remove the folder of a container removed for good, with its sockets. */
void	portlane_remove(const char *folder);

/*
 * Listen in folder (which must exist) on a socket named for this process
 * and a random suffix (bound through /proc/self/fd, so the folder's path
 * may be longer than a socket's); its path inside the container into
 * inner (n bytes). The listening
 * descriptor, or -1 (no lane: the caller goes through the engine).
 * portlane_unlisten closes it and removes the socket.
 */
int	portlane_listen(const char *folder, char *inner, size_t n);
void	portlane_unlisten(int fd, const char *folder, const char *inner);

/*
 * Close a descriptor the container handed over: abortively (SO_LINGER 0),
 * so that a linger time it set cannot hold this close.
 */
void	portlane_close(int fd);

/*
 * Take one message from a connection accepted on the lane (within
 * wait_ms): 0 with the key and *fd, a connected TCP socket (close-on-exec,
 * non-blocking) now ours; -1 for anything else, whatever it carried
 * closed.
 */
int	portlane_take(int conn, unsigned char key[PORTLANE_KEY], int *fd,
	    int wait_ms);

#endif
