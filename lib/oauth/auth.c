/*
 * auth.c: bearer authentication of /mcp requests (MCP authorization
 * "Access Token Usage"; RFC 6750 §2.1, RFC 9728 §5.1).
 *
 * The credential is an OAuth access token issued by this server's token
 * endpoint (oauth/token.c) for this server's MCP URL: looked up by its
 * SHA-256, unexpired, its grant's resource equal to cfg->mcp_url (RFC 8707:
 * a token for another audience is refused). SANDBOX_API_KEY itself is
 * accepted as a bearer token only when SANDBOX_ALLOW_KEY_BEARER is on,
 * compared in constant time.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/log.h"
#include "http/http.h"
#include "oauth/auth.h"
#include "oauth/oauth.h"
#include "store/db.h"
#include "store/db_oauth.h"

/* Longest Authorization header value looked at (tokens are ~50 bytes). */
#define BEARER_MAX	4096

/* RFC 9728 §5.1: point the client at the protected resource metadata. */
static int
unauthorized(struct http_req *r, const struct config *cfg, bool sent_token)
{
	char hdr[3072];

	snprintf(hdr, sizeof(hdr), "Bearer resource_metadata=\"%s/.well-known/"
	    "oauth-protected-resource/mcp\"%s", cfg->public_url,
	    sent_token ? ", error=\"invalid_token\"" : "");
	http_header_add(r, "WWW-Authenticate", hdr);
	http_send_error(r, 401, sent_token ? "The access token is not valid." :
	    "An access token is required.");
	return -1;
}

/*
 * Look the token up. Returns LOOKUP_FOUND and fills who when it is a live
 * access token for this server, LOOKUP_NONE when not, LOOKUP_ERROR on a
 * database error.
 */
static enum lookup_result
token_lookup(const struct config *cfg, struct db *db, const char *tok,
    struct auth_info *who)
{
	struct db_access	 t;
	char			 hash[CRYPTO_SHA256_HEX];
	long long		 now = (long long)time(NULL);
	enum lookup_result	 rc;

	crypto_sha256_hex(tok, strlen(tok), hash);
	if ((rc = db_access_get(db, hash, &t)) != LOOKUP_FOUND)
		goto out;
	/* RFC 6750 §3.1 invalid_token: expired, or for another resource. */
	rc = LOOKUP_NONE;
	if (t.expires <= now)
		goto out;
	if (strcmp(t.resource, cfg->mcp_url) != 0) {
		log_refusal(LOG_REFUSE_AUDIENCE, cfg->mcp_url, t.resource);
		goto out;
	}
	snprintf(who->client_id, sizeof(who->client_id), "%s", t.client_id);
	snprintf(who->client_name, sizeof(who->client_name), "%s",
	    t.client_name != NULL ? t.client_name : "");
	snprintf(who->owner, sizeof(who->owner), "%s",
	    t.owner != NULL ? t.owner : OWNER_OPERATOR);
	rc = LOOKUP_FOUND;
	/*
	 * For operators (oauth_live_grants.last_used), at most once a minute;
	 * the write only when due, so most requests stay reads.
	 */
	if (t.last_used < now - 60)
		db_exec(db, STMT_GRANT_TOUCH, "iii", now, t.grant_id, now - 60);
out:
	db_access_clear(&t);
	return rc;
}

const char *
auth_owner(const struct auth_info *who)
{
	return who != NULL && who->owner[0] != '\0' ? who->owner : OWNER_OPERATOR;
}

int
auth_bearer(struct http_req *r, const struct config *cfg, struct db *db,
    struct auth_info *who)
{
	const char	*h = http_header(r, "Authorization");
	const char	*tok;
	enum lookup_result rc;

	memset(who, 0, sizeof(*who));
	/* RFC 6750 §2.1: "Bearer" is case-insensitive, then the token. */
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return unauthorized(r, cfg, false);
	tok = h + 7;
	while (*tok == ' ')
		tok++;
	if (*tok == '\0' || strlen(tok) > BEARER_MAX)
		return unauthorized(r, cfg, true);
	if (cfg->allow_key_bearer && crypto_str_equal(tok, cfg->api_key)) {
		snprintf(who->client_id, sizeof(who->client_id), "api-key");
		snprintf(who->client_name, sizeof(who->client_name), "API key");
		snprintf(who->owner, sizeof(who->owner), "%s", OWNER_OPERATOR);
		return 0;
	}
	if (db == NULL)
		return unauthorized(r, cfg, true);
	if ((rc = token_lookup(cfg, db, tok, who)) == LOOKUP_FOUND)
		return 0;
	if (rc == LOOKUP_ERROR) {
		http_send_error(r, 503, "The token store cannot be read; try again.");
		return -1;
	}
	memset(who, 0, sizeof(*who));
	return unauthorized(r, cfg, true);
}
