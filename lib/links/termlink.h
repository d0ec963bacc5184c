/*
 * termlink.h: the terminal link (terminal_link): a person opens a
 * terminal of the sandbox in a browser, on the same screen the model
 * drives, and types into it themselves.
 *
 * The link is a download link of kind LINK_KIND_TERMINAL (links.h: its
 * row, signature, expiry, revocation and owner checks are those of every
 * link; sandboxctl links lists and revokes it), expiring after
 * TERMINAL_LINK_TTL:
 *
 *     PUBLIC_URL/dl/<id>/<expires>/<sig>/<terminal id>.term
 *
 * Opening it sets a cookie holding the link's signed parts (HttpOnly,
 * SameSite=Strict, Path=/dl/t/<id>/, Secure on https) and redirects to the
 * clean path, so the token leaves the address bar and the history:
 *
 *     GET  /dl/t/<id>/        the page (strict CSP: its own script and
 *                             style by nonce, connections to itself only)
 *     GET  /dl/t/<id>/events  server-sent events: the screen the
 *                             supervisor's emulator renders, as JSON, when
 *                             it changes
 *     POST /dl/t/<id>/keys    keystrokes (the body's bytes, as typed)
 *
 * Every request checks the cookie as the link itself is checked
 * (links_check), then the terminal's row: open, and its owner the link's.
 * What the person types goes to the PTY only: it is not logged, not
 * stored, and no tool returns it (a program that echoes shows it on the
 * screen, as on any terminal; one that does not, shows nothing).
 */
#ifndef CS_TERMLINK_H
#define CS_TERMLINK_H

#include <stdbool.h>

struct config;
struct db;
struct http_req;
struct link_row;

/* A checked link of kind LINK_KIND_TERMINAL at reqpath: cookie and redirect. */
void	termlink_open(struct http_req *, const struct config *,
	    const struct link_row *, const char *reqpath);

/* A request under /dl/t/: answered (true), else false. */
bool	termlink_route(struct http_req *, const struct config *, struct db *);

#endif
