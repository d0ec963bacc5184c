/*
 * preview/preview.h: the preview program, which serves preview links
 * (links/previews.h) to browsers through the web server in front.
 *
 * FastCGI has no upgrade, so this program speaks HTTP/1.1 itself, on a
 * unix socket the front proxies every preview host to (lighttpd's
 * mod_proxy with upgrades on, Caddy's reverse_proxy, nginx's proxy_pass,
 * Apache's mod_proxy with upgrade=websocket). The socket is its fd 0 when
 * that is a listening socket (as lighttpd and spawn-fcgi start FastCGI
 * programs), else the path given as its argument.
 *
 * Each connection from the front carries one request (the answer says
 * "Connection: close"), or one WebSocket after its handshake, on a thread
 * of its own:
 *   - the request head is read within PREVIEW_HEAD_S seconds (16 KiB at
 *     most, preview/phead.h); the Host's first label names the link;
 *   - a path "/.preview/<sig>..." is checked and answered with the
 *     preview's cookie and a redirect to the clean path; any other
 *     request needs that cookie: 403 without, 410 for an expired or
 *     revoked link;
 *   - the owner's open connections are counted (SANDBOX_PREVIEW_CONNECTIONS
 *     at most: 429 past it) in the preview table, across processes;
 *   - a connection is made to the port through the supervisor
 *     (sandbox/portconn.h; 502 naming the port when nothing listens);
 *   - the request head goes on rewritten (phead_request), then the bytes
 *     that follow, both ways, through buffers of 64 KiB, the app's answer
 *     head parsed as hostile and rewritten (phead_response) first;
 *   - PREVIEW_IDLE_S seconds with no byte either way end it, as does
 *     SIGTERM (within a second).
 */
#ifndef CS_PREVIEW_PREVIEW_H
#define CS_PREVIEW_PREVIEW_H

#define PREVIEW_HEAD_S		30
#define PREVIEW_IDLE_S		300
#define PREVIEW_CONNS_MAX	1024	/* open at once in one process */

/* The program's main: 0 after SIGTERM, 1 when it cannot start. */
int	preview_main(int argc, char **argv);

#endif
