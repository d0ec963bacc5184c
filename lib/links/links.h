/*
 * links.h: signed, expiring, revocable download links (share_file, /dl).
 *
 * A link is
 *
 *     PUBLIC_URL/dl/<id>/<expires>/<sig>/<name>
 *
 *   id       22 characters: 16 random bytes, base64url without padding; the
 *            key of the link's row in the database (table link).
 *   expires  unix seconds, decimal, no leading zeros.
 *   sig      43 characters: base64url of
 *                HMAC-SHA256(link_key, "code-sandbox link v1" NUL id NUL
 *                            expires NUL path)
 *            where path is the file's absolute path in the container, as
 *            stored with the link (so the URL does not carry it), and
 *            link_key = HMAC-SHA256(secret, "code-sandbox links v2" NUL
 *                                   SANDBOX_API_KEY)
 *            where secret is 32 random bytes the programs make once and
 *            keep in the database (server_secret, sql/017-link-secret.sql).
 *            A link holder has every signed input but the key: with the
 *            secret in it, guesses of an operator-chosen API key cannot be
 *            tested offline. Rotating the API key, or deleting the secret,
 *            invalidates every link. Links made before the secret existed
 *            (legacy_key = 1) keep the old key, HMAC-SHA256(SANDBOX_API_KEY,
 *            "code-sandbox download links v1"), until they expire.
 *   name     the file's base name, percent-encoded (RFC 3986 unreserved
 *            characters kept). Not a secret and not signed by itself: it is
 *            derived from the signed path and must equal its base name, so a
 *            link cannot be made to present another name.
 *
 * Checking a request (links_check) uses only the URL and the database, in
 * this order: shape (404 for a path that is not four segments under /dl/,
 * 400 for a segment of the wrong syntax), signature (403; computed and
 * compared in constant time also when the id is unknown), name (403),
 * expiry (410), revocation (410), and whether its owner still has access
 * (owners_live: a revoked personal key's links answer 410 even if a row
 * was missed). Only then may the caller touch Docker.
 */
#ifndef CS_LINKS_H
#define CS_LINKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "oauth/owners.h"

struct db;

#define LINK_ID_BYTES	16
#define LINK_ID_LEN	22	/* base64url of 16 bytes */
#define LINK_SIG_LEN	43	/* base64url of 32 bytes */
#define LINK_KEY_LEN	32
#define LINK_PATH_MAX	4096	/* a shared file's absolute path */
#define LINK_NAME_MAX	255	/* a base name, in bytes */
#define LINK_CLIENT_MAX	127

/* The parts of a /dl request path. */
struct link_url {
	char		id[LINK_ID_LEN + 1];
	long long	expires;
	char		sig[LINK_SIG_LEN + 1];
	char		name[LINK_NAME_MAX + 1];	/* percent-decoded */
	size_t		name_len;
};

/* A link as the database has it. */
struct link_row {
	char		id[LINK_ID_LEN + 1];
	char		path[LINK_PATH_MAX + 1];
	long long	size;		/* at share time */
	long long	created, expires;
	bool		revoked;
	char		owner[OWNER_MAX];	/* who shared it (owners.h) */
	char		archive[8];	/* "tar.gz" or "zip": a folder as one archive; "" for a file */
};

/*
 * The key links are signed with (above), into key: the links' secret
 * (made on first use) and the API key; legacy: the API key alone, for
 * rows made before the secret. 0, or -1 when the secret can be neither
 * read nor made (logged).
 */
int	links_key(struct db *, const char *api_key, bool legacy,
	    uint8_t key[LINK_KEY_LEN]);
/* The key of links made before the secret: the API key alone. */
void	links_legacy_key(const char *api_key, uint8_t key[LINK_KEY_LEN]);

/* The signature of a link, as base64url text (LINK_SIG_LEN + NUL). */
void	links_sign(const uint8_t key[LINK_KEY_LEN], const char *id,
	    long long expires, const char *path, char sig[LINK_SIG_LEN + 1]);

/* Does sig sign (id, expires, path)? Constant time in sig's content. */
bool	links_verify(const uint8_t key[LINK_KEY_LEN], const char *id,
	    long long expires, const char *path, const char *sig);

/*
 * Parse a request path "/dl/<id>/<expires>/<sig>/<name>". Returns 0, or -1
 * with err->kind ERR_NOT_FOUND (not that shape) or ERR_INVALID (a malformed part).
 */
int	links_parse(const char *path, struct link_url *, struct error *);

/*
 * The signed parts every link URL starts with (download and upload links):
 * seg[i]..end[i] are the id, the expiry and the signature. Fills id,
 * *expires and sig; 0, or -1 with err->kind ERR_INVALID naming the bad part.
 */
int	links_parse_signed(const char *const seg[3], const char *const end[3],
	    char id[LINK_ID_LEN + 1], long long *expires,
	    char sig[LINK_SIG_LEN + 1], struct error *err);

/*
 * The URL of a link: public_url + "/dl/" ... (see above). Returns a new
 * string (free it), or NULL when out of memory.
 */
char	*links_url(const char *public_url, const char *id, long long expires,
	    const char *sig, const char *path);

/*
 * Revoke owner's link id (another owner's link is not found). LOOKUP_FOUND
 * when revoked now, LOOKUP_NONE when no such live link of owner,
 * LOOKUP_ERROR on error.
 */
enum lookup_result links_revoke(struct db *, const char *id, const char *owner,
	    long long now);

/*
 * Record a new link to path (absolute, normalised) for client_id of owner, with
 * size the file's size now, expiring ttl seconds after now. Fills row and
 * returns the link's URL (free it), or NULL with err.
 */
char	*links_create(struct db *, const char *api_key, const char *public_url,
	    const char *path, long long size, const char *client_id,
	    const char *owner, long long now, long ttl, struct link_row *row,
	    struct error *err);

/*
 * The same for a folder served as one archive (archive "tar.gz" or "zip",
 * streamed by /dl as it is made): the URL's name is the folder's base name
 * plus "." archive, and the signed message gets archive and a NUL after
 * the path, so a file link's signature never serves a folder and the kind
 * cannot be changed.
 */
char	*links_create_archive(struct db *, const char *api_key,
	    const char *public_url, const char *path, const char *archive,
	    const char *client_id, const char *owner, long long now, long ttl,
	    struct link_row *row, struct error *err);

/*
 * A terminal link (terminal_link, links/termlink.h): a link of kind
 * LINK_KIND_TERMINAL (in the archive column, signed like a folder's kind)
 * to the path "/terminal/ID", so its signature never serves a file.
 */
#define LINK_KIND_TERMINAL	"term"
char	*links_create_terminal(struct db *, const char *api_key,
	    const char *public_url, const char *terminal_id,
	    const char *client_id, const char *owner, long long now, long ttl,
	    struct link_row *row, struct error *err);

/*
 * Decide whether the request path names a live link, from the URL and the
 * database alone (the order is above). Returns 0 with *row filled, or -1
 * with err->kind (ERR_INVALID, ERR_DENIED, ERR_NOT_FOUND, ERR_GONE or ERR_INTERNAL) and a short message for the
 * person who followed the link.
 */
int	links_check(struct db *, const char *api_key, const char *reqpath,
	    long long now, struct link_row *row, struct error *err);

/*
 * The last step of both checks: 0 when owner (a link's) still has access
 * (owners_live), else -1 with err->kind ERR_GONE, or ERR_INTERNAL.
 */
int	links_owner_live(struct db *, const char *owner, struct error *err);

/* Count one download of link id. */
void	links_count_download(struct db *, const char *id, long long now);

#endif
