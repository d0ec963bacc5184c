/*
 * oauth/extern.h: what the files of the OAuth folder share; other folders
 * use its public headers (oauth.h, auth.h, cimd.h, signin.h, owners.h).
 * It includes no header of this folder (the structures it needs are
 * declared, not included), so the files meet here only:
 *   store.c                  the OAuth tables as typed rows, the throttle
 *                            and rate counters
 *   oauth.c                  shared rules: tokens, redirect URIs, PKCE,
 *                            client authentication and address, errors
 *   wellknown.c              the metadata documents (RFC 9728, RFC 8414)
 *   register.c               dynamic client registration (RFC 7591)
 *   cimd.c (cimd.h)          Client ID Metadata Documents
 *   signin.c (signin.h)      the sign-in page
 *   authorize.c, token.c     the endpoints, using all of the above
 * They call each other through it, not in one direction only (store.c
 * takes the time from oauth.c, which loads clients through store.c);
 * outside the folder only its unit test and fuzz target include it.
 */
#ifndef CS_OAUTH_EXTERN_H
#define CS_OAUTH_EXTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/clientaddr.h"
#include "base/crypto.h"
#include "base/error.h"

struct config;
struct db;
struct form;
struct http_req;
struct json_object;

/* Token prefixes: readable in logs of secret scanners, never stored. */
#define TOKEN_PREFIX_ACCESS	"csat_"
#define TOKEN_PREFIX_REFRESH	"csrt_"
#define TOKEN_PREFIX_SECRET	"cscs_"
#define TOKEN_PREFIX_CLIENT	"csc_"
/* Random bytes in a token, secret, code or request id: 256 bits. */
#define TOKEN_BYTES		32
/* Room for a prefix and base64url of TOKEN_BYTES, plus NUL. */
#define TOKEN_MAX		64

/*
 * Room for a client_id: OAUTH_MAX_CLIENT_ID (oauth.h) + 1, as a number so
 * that this header needs no other of the folder; oauth.c checks that the
 * two agree.
 */
#define OAUTH_CLIENT_ID_SIZE	513

/* A client as stored (sql/002-oauth.sql oauth_client). */
struct oauth_client {
	char			 client_id[OAUTH_CLIENT_ID_SIZE];
	char			 secret_hash[CRYPTO_SHA256_HEX];	/* "" when public */
	char			 auth_method[24];
	char			*name;		/* may be NULL */
	struct json_object	*redirect_uris;	/* array of strings */
	bool			 refresh;	/* may use refresh_token */
	bool			 cimd;
	long long		 created;
	long long		 approved;	/* first sign-in; 0: never approved */
};

/*
 * Load a client by id into c. Returns LOOKUP_FOUND, LOOKUP_NONE, or
 * LOOKUP_ERROR on a database error. Free with oauth_client_clear (whatever
 * it returned).
 */
enum lookup_result oauth_client_load(struct db *, const char *client_id,
	    struct oauth_client *c);
void	oauth_client_clear(struct oauth_client *);

/*
 * The other OAuth rows (requests, codes, tokens) are store/db_oauth.h's
 * (struct db_request, db_code, db_token), read as they are.
 */

/*
 * Check and count one sign-in try of the throttle key (an address, an IPv6
 * /64), in one transaction, before the key is compared: OAUTH_THROTTLE_TRY
 * when it may try now (the try is already counted as a failure: *wait is
 * what a wrong key costs; STMT_THROTTLE_CLEAR forgets it when the key is
 * right), OAUTH_THROTTLE_WAIT when it must wait *wait more seconds,
 * OAUTH_THROTTLE_ERROR on a database error. Each failure doubles the wait
 * (1 s, 2 s, ... at most 15 min; forgotten after an hour), kept to the
 * millisecond so a try just past a second boundary still waits.
 */
enum oauth_throttle {
	OAUTH_THROTTLE_ERROR = -1,
	OAUTH_THROTTLE_WAIT = 0,
	OAUTH_THROTTLE_TRY = 1,
};
enum oauth_throttle oauth_throttle_take(struct db *, const char *key,
	    long long *wait);

/*
 * The registered redirect URI given matches, or the one to use when given
 * is NULL and exactly one is registered (RFC 6749 §3.1.2.3). NULL if none.
 */
const char *oauth_client_redirect(const struct oauth_client *, const char *given);

/* Make a token: prefix + base64url of TOKEN_BYTES random bytes. 0 or -1. */
int	oauth_new_token(const char *prefix, char out[TOKEN_MAX]);

/* Hex SHA-256 of a token, as stored. */
void	oauth_hash(const char *token, char out[CRYPTO_SHA256_HEX]);

/* Current time, unix seconds. */
long long oauth_now(void);

/* RFC 6749 §5.2 error: JSON body, no-store. */
void	oauth_error(struct http_req *, int status, const char *error,
	    const char *description);

/*
 * Authenticate the client of a token or revocation request (RFC 6749 §2.3,
 * RFC 7009 §2.1) by its registered method: client_secret_basic in the
 * Authorization header, client_secret_post or none in the form. Returns 0
 * with c loaded, or -1 having answered 401 invalid_client (with
 * WWW-Authenticate when Basic was tried) or 400 invalid_request.
 */
int	oauth_client_auth(struct http_req *, struct db *, const struct form *,
	    struct oauth_client *c);

/*
 * The address of the client of r (clientaddr.h: the peer, or through
 * SANDBOX_TRUSTED_PROXIES the forwarding header) and its throttle key.
 */
void	oauth_client_addr(struct http_req *, const struct config *,
	    char addr[CLIENTADDR_MAX], char key[CLIENTADDR_MAX]);

/*
 * Count one hit of key in the current window of window seconds (one
 * statement: concurrent hits are all counted). Returns the hits in this
 * window including this one, or -1 on a database error.
 */
long long oauth_rate_hit(struct db *, const char *key, long window);

/*
 * Is the redirect URI's host one the sign-in page names without a warning
 * (loopback, or in SANDBOX_REDIRECT_HOSTS; cfg NULL: loopback only)?
 * Writes host[:port] into host.
 */
bool	oauth_redirect_known(const struct config *, const char *uri, char *host,
	    size_t hostsz);

/*
 * CORS for browser-based clients, which read the metadata and call
 * /register and /token: the allow-origin header, and an OPTIONS preflight
 * answered (204). True when r was answered.
 */
bool	oauth_cors(struct http_req *);

/*
 * A /register body (RFC 7591) parsed and checked: 0 with the metadata to
 * store and echo in *meta (its token_endpoint_auth_method always set), the
 * redirect URIs in *uris (both new: put them) and *refresh; or -1 with the
 * RFC 7591 §3.2.2 error code in *error (a static string) and a
 * description in why.
 */
int	oauth_register_check(const char *body, size_t len,
	    struct json_object **meta, struct json_object **uris, bool *refresh,
	    const char **error, char *why, size_t whysz);

/* Delete what has expired (codes, requests, tokens, empty grants, throttles). */
void	oauth_prune(struct db *);

#endif
