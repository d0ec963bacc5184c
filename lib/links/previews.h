/*
 * previews.h: signed, expiring, revocable preview links (preview_link, the
 * preview program lib/preview/): a browser opens the HTTP server listening
 * on a port of the owner's sandbox, on an origin of the link's own.
 *
 * A link is
 *
 *     ORIGIN/.preview/<sig>PATH
 *
 *   ORIGIN  SANDBOX_PREVIEW_URL with its '*' replaced by the id
 *           (https://<id>.preview.example.net), or, without that setting
 *           on a loopback server, http://<id>.preview.localhost:PORT (the
 *           server's port). Every link is its own origin: what a preview
 *           serves (written by the model) can neither script the server's
 *           pages nor read or set their cookies, nor another preview's.
 *   id      26 characters of [a-z2-7]: 16 random bytes in lowercase
 *           base32 (a DNS label); the key of the row (table preview).
 *   sig     43 characters: base64url of
 *               HMAC-SHA256(link_key, "code-sandbox preview link v1" NUL id
 *                           NUL port NUL owner)
 *           under the download links' key (links_key), with the port and
 *           the owner as stored with the link. The expiry is the row's
 *           alone (no URL carries it), so an operator may shorten it.
 *   PATH    where the link lands, "/" or more (RFC 3986 characters).
 *
 * The first request carries sig in its path; the answer sets a cookie for
 * that host alone holding sig (PREVIEW_COOKIE; "__Host-" prefixed, Secure,
 * on https) and redirects to PATH, so the app's absolute paths work.
 * Every later request is checked by its cookie the same way: signature
 * (constant time, also for an unknown id), expiry, revocation, and
 * whether the owner still has access (links_owner_live).
 */
#ifndef CS_PREVIEWS_H
#define CS_PREVIEWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "links/links.h"
#include "oauth/owners.h"

struct config;
struct db;

#define PREVIEW_ID_LEN		26	/* base32 of 16 bytes */
#define PREVIEW_PATH_MAX	2048
#define PREVIEW_ORIGIN_MAX	300
#define PREVIEW_PREFIX		"/.preview/"
#define PREVIEW_COOKIE_HTTPS	"__Host-cs-preview"
#define PREVIEW_COOKIE_HTTP	"cs-preview"
/* The preview program says it runs this often; links are made this long after. */
#define PREVIEW_BEAT_S		30
#define PREVIEW_SEEN_S		90

struct preview_row {
	char		id[PREVIEW_ID_LEN + 1];
	long		port;
	char		path[PREVIEW_PATH_MAX + 1];
	char		owner[OWNER_MAX];
	char		client_id[LINK_CLIENT_MAX + 1];
	long long	created, expires;
	bool		revoked;
};

/*
 * The origin of preview id into out (PREVIEW_ORIGIN_MAX bytes), as above.
 * 0, or -1 with a message for the model naming what is missing (the
 * setting, its DNS record and certificate) or wrong.
 */
int	previews_origin(const struct config *, const char *id, char *out,
	    size_t n, struct error *err);
/* Are previews served over https (their cookie is then "__Host-" and Secure)? */
bool	previews_https(const struct config *);
/* The cookie's name for this configuration. */
const char *previews_cookie(const struct config *);

/*
 * The id in a Host header's value: its first label when it has the id's
 * shape (lowercase; a port after the host is fine). Returns 0 with id
 * filled, or -1.
 */
int	previews_host_id(const char *host, size_t len,
	    char id[PREVIEW_ID_LEN + 1]);

/* May path be a preview's landing path ("/" then RFC 3986 characters)? */
bool	previews_path_ok(const char *path);

void	previews_sign(const uint8_t key[LINK_KEY_LEN], const char *id,
	    long port, const char *owner, char sig[LINK_SIG_LEN + 1]);

/*
 * Record a new preview of port (refused, saying why, when no preview
 * program has said it runs within PREVIEW_SEEN_S: previews_beat) (path its landing path) for client_id of
 * owner, expiring ttl seconds after now. Fills row and returns the link
 * (free it), or NULL with err.
 */
char	*previews_create(struct db *, const struct config *, long port,
	    const char *path, const char *client_id, const char *owner,
	    long long now, long ttl, struct preview_row *row, struct error *err);

/*
 * Is sig (siglen bytes, from a path or a cookie) valid for preview id now?
 * 0 with row filled, or -1 with err->kind ERR_DENIED (not valid), ERR_GONE
 * (expired, revoked, the owner without access) or ERR_INTERNAL, and a
 * short message for the person.
 */
int	previews_check(struct db *, const char *api_key, const char *id,
	    const char *sig, size_t siglen, long long now,
	    struct preview_row *row, struct error *err);

/* The preview program runs (every PREVIEW_BEAT_S). */
void	previews_beat(struct db *, long long now);

#endif
