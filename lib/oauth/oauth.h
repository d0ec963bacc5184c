/*
 * oauth.h: the OAuth 2.1 authorization server that protects /mcp.
 *
 * Four programs share this module and the SQLite file (sql/002-oauth.sql):
 *   wellknown  /.well-known/...  RFC 9728 and RFC 8414 metadata
 *   register   /register        RFC 7591 dynamic client registration
 *   authorize  /authorize       RFC 6749 §4.1.1 with PKCE (RFC 7636), the sign-in page
 *   token      /token, /revoke  RFC 6749 §4.1.3 and §6, RFC 7009
 * Each handler answers the request it is given, whatever happens.
 *
 * Tokens and secrets are opaque random strings (RAND_bytes, base64url) with
 * a short prefix naming their kind; the database stores their SHA-256 only.
 * The pure helpers at the end are exported for the unit tests.
 */
#ifndef CS_OAUTH_H
#define CS_OAUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct config;
struct db;
struct http_req;

/* The one scope this server knows: full use of the sandbox. */
#define OAUTH_SCOPE		"mcp"
/* Authorization codes live this long (RFC 6749 §4.1.2: "short lifetime"). */
#define OAUTH_CODE_TTL		60
/* A sign-in page may be submitted for this long after it was shown. */
#define OAUTH_REQUEST_TTL	600
/* A rotated refresh token may be presented once more within this grace. */
#define OAUTH_REFRESH_GRACE	60
/* Registrations never used are removed after this long. */
#define OAUTH_UNUSED_CLIENT_TTL	86400
/* Bounds on client-supplied values (before any authentication). */
#define OAUTH_MAX_REDIRECT_URIS	8
#define OAUTH_MAX_URI		1024
#define OAUTH_MAX_CLIENT_ID	512
#define OAUTH_MAX_NAME		200
#define OAUTH_MAX_STATE		1024
#define OAUTH_MAX_SCOPE		1024

/* Request handlers. */
void	oauth_wellknown(struct http_req *, const struct config *);
void	oauth_register(struct http_req *, const struct config *, struct db *);
void	oauth_authorize(struct http_req *, const struct config *, struct db *);
void	oauth_token(struct http_req *, const struct config *, struct db *);
void	oauth_revoke(struct http_req *, const struct config *, struct db *);

/*
 * Is uri acceptable as a redirect URI (RFC 6749 §3.1.2, OAuth 2.1 §2.3.1,
 * RFC 8252 §7.3, MCP authorization "Communication Security")? https with a
 * host, or http on a loopback host (localhost, 127.0.0.0/8, [::1]); no
 * fragment, no user info, no other scheme; printable URI characters only;
 * at most OAUTH_MAX_URI bytes. Returns true, or false with a reason in why.
 */
bool	oauth_redirect_valid(const char *uri, char *why, size_t whysz);

/*
 * Does the redirect_uri of an authorization request match a registered one?
 * Exact string comparison (OAuth 2.1 §2.3.1), except that for http loopback
 * URIs the port is ignored (RFC 8252 §7.3).
 */
bool	oauth_redirect_match(const char *registered, const char *given);

/*
 * Write scheme://host[:port] of a valid redirect URI into out (the origin
 * for the sign-in page's form-action), and host[:port] into host if not
 * NULL. Returns 0, or -1 when it does not parse or fit.
 */
int	oauth_redirect_origin(const char *uri, char *out, size_t outsz,
	    char *host, size_t hostsz);

/*
 * PKCE (RFC 7636 §4.1, §4.6): is verifier well formed (43-128 characters of
 * [A-Za-z0-9-._~]) and BASE64URL(SHA256(verifier)) equal to challenge?
 * Compared in constant time.
 */
bool	oauth_pkce_s256(const char *verifier, const char *challenge);

/* Is challenge a well-formed S256 code_challenge (43 base64url characters)? */
bool	oauth_pkce_challenge_valid(const char *challenge);

/*
 * Parse an "Authorization: Basic ..." header into client id and secret
 * (RFC 6749 §2.3.1: each form-urlencoded before base64). Returns 0, or -1
 * when the header is not Basic, malformed, or a part does not fit.
 */
int	oauth_basic_parse(const char *header, char *id, size_t idsz,
	    char *secret, size_t secretsz);

#endif
