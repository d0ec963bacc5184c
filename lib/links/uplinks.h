/*
 * uplinks.h: signed, expiring, revocable upload links (upload_link, /up).
 *
 * A link is
 *
 *     PUBLIC_URL/up/<id>/<expires>/<sig>/
 *
 * with the same id and expiry syntax as download links (links.h), and
 *
 *   sig  43 characters: base64url of
 *            HMAC-SHA256(link_key, "code-sandbox upload link v1" NUL id NUL
 *                        expires NUL dir NUL max_bytes NUL overwrite)
 *        where dir is the folder files land in (absolute, in the
 *        container), max_bytes the total the link accepts and overwrite
 *        "1" or "0", all as stored with the link: whatever decides where
 *        bytes go and how many is signed, so neither a changed URL nor a
 *        changed row (short of the key) widens a link. link_key is the
 *        download links' key (links_key: the links' secret and the API
 *        key), so rotating the API key invalidates upload links too.
 *
 * GET of the link is the upload page; POST to it a multipart form; PUT to
 * the link followed by a file name ("/up/<id>/<expires>/<sig>/report.pdf")
 * stores one file under that name.
 *
 * Checking a request (uplinks_check) uses only the URL and the database,
 * in the order of links_check: shape (404), syntax (400), signature (403,
 * computed also for an unknown id), expiry (410), revocation (410), the
 * owner's access (410, links_owner_live). Only then may the caller touch
 * Docker.
 */
#ifndef CS_UPLINKS_H
#define CS_UPLINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "links/links.h"
#include "oauth/owners.h"

struct db;

#define UPLINK_NAME_MAX	255	/* a file name in the URL, decoded */

/* An upload link as the database has it. */
struct uplink_row {
	char		id[LINK_ID_LEN + 1];
	char		dir[LINK_PATH_MAX + 1];
	long long	max_bytes;
	long long	used_bytes;	/* when read */
	bool		overwrite;
	long long	created, expires;
	bool		revoked;
	char		client_id[LINK_CLIENT_MAX + 1];
	char		owner[OWNER_MAX];	/* whose sandbox it stores into */
};

/* The parts of an /up request path. */
struct uplink_url {
	char		id[LINK_ID_LEN + 1];
	long long	expires;
	char		sig[LINK_SIG_LEN + 1];
	char		name[UPLINK_NAME_MAX * 3 + 1];	/* as in the URL, still
							   percent-encoded; "" if none */
	size_t		name_len;
};

/*
 * Parse "/up/<id>/<expires>/<sig>/" or ".../<sig>/<name>" (the name kept
 * as sent, for upload_name to decode and sanitise). Returns 0, or -1 with
 * err->kind ERR_NOT_FOUND (not that shape) or ERR_INVALID (a malformed part).
 */
int	uplinks_parse(const char *path, struct uplink_url *, struct error *);

/* The signature of an upload link, as base64url text. */
void	uplinks_sign(const uint8_t key[LINK_KEY_LEN], const char *id,
	    long long expires, const char *dir, long long max_bytes,
	    bool overwrite, char sig[LINK_SIG_LEN + 1]);

/*
 * Record a new upload link into dir (absolute, normalised) accepting
 * max_bytes in all, for client_id of owner (whose sandbox it stores
 * into), expiring ttl seconds after now. Fills row and returns the link's
 * URL (ends in '/'; free it), or NULL with err.
 */
char	*uplinks_create(struct db *, const char *api_key, const char *public_url,
	    const char *dir, long long max_bytes, bool overwrite,
	    const char *client_id, const char *owner, long long now, long ttl,
	    struct uplink_row *row, struct error *err);

/*
 * Decide whether the request path names a live upload link (the order is
 * above). Returns 0 with *row and *u filled, or -1 with err->kind (ERR_INVALID,
 * ERR_DENIED, ERR_NOT_FOUND, ERR_GONE or ERR_INTERNAL) and a short message for the person.
 */
int	uplinks_check(struct db *, const char *api_key, const char *reqpath,
	    long long now, struct uplink_row *row, struct uplink_url *u,
	    struct error *err);

/*
 * Reserve bytes of the link's cap for an upload (one statement, so two
 * uploads at once cannot both fit). UPLINKS_RESERVED, UPLINKS_NO_ROOM when
 * it does not fit (or the link was revoked meanwhile), or
 * UPLINKS_RESERVE_ERROR on a database error. uplinks_release gives back
 * what an upload did not store.
 */
enum uplinks_reserve {
	UPLINKS_RESERVE_ERROR = -1,
	UPLINKS_NO_ROOM = 0,
	UPLINKS_RESERVED = 1,
};
enum uplinks_reserve uplinks_reserve(struct db *, const char *id,
	    long long bytes);
void	uplinks_release(struct db *, const char *id, long long bytes);
/* Count one file stored through link id. */
void	uplinks_count(struct db *, const char *id);

#endif
