/*
 * oauth/token.c: the token endpoint (RFC 6749 §3.2, §4.1.3, §6; OAuth 2.1
 * §4.1.3 and §4.3) and token revocation (RFC 7009).
 *
 * Every redemption is a read-modify-write in one IMMEDIATE transaction, so
 * two processes presenting the same code or refresh token at once cannot
 * both succeed.
 *
 * Refresh tokens rotate on every use (OAuth 2.1 §4.3.1). A rotated token
 * presented again:
 *   - within OAUTH_REFRESH_GRACE seconds, once, while the pair its rotation
 *     issued is still unused: that pair is revoked and a new one issued
 *     (the client most likely lost the response); the revoked refresh
 *     token is kept as used, so presenting it later revokes the grant;
 *   - otherwise: it was stolen or replayed, and the whole grant is revoked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/form.h"
#include "base/js.h"
#include "base/log.h"
#include "http/http.h"
#include "oauth/extern.h"
#include "oauth/oauth.h"
#include "store/db.h"
#include "store/db_oauth.h"

#define TOKEN_BODY_MAX	8192

/* A new access token and, when the client may refresh, a refresh token. */
struct pair {
	char	access[TOKEN_MAX];
	char	refresh[TOKEN_MAX];	/* "" when none */
};

/*
 * Store a new pair for grant, issued from parent (a refresh token hash, or
 * NULL from a code). Inside the caller's transaction. 0 or -1.
 */
static int
pair_make(struct db *db, const struct config *cfg, long long grant,
    const char *parent, bool refresh, struct pair *p)
{
	char		hash[CRYPTO_SHA256_HEX];
	long long	now = oauth_now();

	memset(p, 0, sizeof(*p));
	if (oauth_new_token(TOKEN_PREFIX_ACCESS, p->access) == -1)
		return -1;
	oauth_hash(p->access, hash);
	if (db_exec(db, STMT_TOKEN_INSERT, "tittii", hash, grant, "access",
	    parent, now, now + cfg->access_token_ttl) != 1)
		return -1;
	if (!refresh)
		return 0;
	if (oauth_new_token(TOKEN_PREFIX_REFRESH, p->refresh) == -1)
		return -1;
	oauth_hash(p->refresh, hash);
	if (db_exec(db, STMT_TOKEN_INSERT, "tittii", hash, grant, "refresh",
	    parent, now, now + cfg->refresh_token_ttl) != 1)
		return -1;
	return 0;
}

/* RFC 6749 §5.1: the successful response. */
static void
pair_send(struct http_req *r, const struct config *cfg, struct pair *p,
    const char *scope)
{
	struct json_object *o = json_object_new_object();

	js_set_str(o, "access_token", p->access);
	js_set_str(o, "token_type", "Bearer");
	js_set_int(o, "expires_in", cfg->access_token_ttl);
	if (p->refresh[0] != '\0')
		js_set_str(o, "refresh_token", p->refresh);
	js_set_str(o, "scope", scope);
	http_header_add(r, "Pragma", "no-cache");
	http_send_json(r, 200, o);
	json_object_put(o);
	crypto_wipe(p, sizeof(*p));
}

/*
 * §4.1.3: issued to this client, for this redirect_uri, and RFC 7636
 * §4.6: with its verifier. Checked first, so that a code seen used (in a
 * log, a history) revokes nothing in the hands of another client or
 * without its verifier. NULL when it matches, else why not.
 */
static const char *
code_mismatch(const struct db_code *row, const struct oauth_client *c,
    const char *redirect_uri, const char *verifier)
{
	if (strcmp(row->client_id, c->client_id) != 0)
		return "The code was issued to another client.";
	if (*row->redirect_uri != '\0' && (redirect_uri == NULL ||
	    strcmp(redirect_uri, row->redirect_uri) != 0))
		return "redirect_uri does not match the authorization request.";
	if (!oauth_pkce_s256(verifier, row->challenge))
		return "The code_verifier does not match the code_challenge.";
	return NULL;
}

/*
 * A code not yet used: not expired, and RFC 8707 §2.2: for the audience
 * fixed at authorization. NULL when usable, else why not, with *err the
 * error code when not invalid_grant.
 */
static const char *
code_unusable(const struct db_code *row, const char *resource,
    long long now, const char **err)
{
	if (row->expires <= now)
		return "The code has expired.";
	if (resource != NULL && strcmp(resource, row->resource) != 0) {
		log_refusal(LOG_REFUSE_RESOURCE, row->resource, resource);
		*err = "invalid_target";
		return "resource differs from the authorization request.";
	}
	return NULL;
}

/*
 * Redeem the code, in the transaction begun: a grant owned by who signed
 * in, the code marked used, a token pair into *p, the client marked used,
 * committed. The grant's id, or -1 on a database error.
 */
static long long
code_redeem(struct db *db, const struct config *cfg,
    const struct oauth_client *c, const struct db_code *row,
    const char *hash, long long now, struct pair *p)
{
	long long	grant;

	if (db_exec(db, STMT_GRANT_INSERT, "tttii", c->client_id, row->scope,
	    row->resource, now, now) != 1)
		return -1;
	grant = db_last_id(db);
	/* The grant, and so every token from it, belongs to who signed in. */
	if (db_exec(db, STMT_GRANT_OWNER_FROM_CODE, "ti", hash, grant) != 1 ||
	    db_exec(db, STMT_CODE_USE, "it", grant, hash) != 1 ||
	    pair_make(db, cfg, grant, NULL, c->refresh, p) == -1 ||
	    db_exec(db, STMT_CLIENT_USED, "it", now, c->client_id) != 1 ||
	    db_commit(db) == -1)
		return -1;
	return grant;
}

/*
 * The step both grants start with: the presented secret within bounds
 * (unknown is the answer to one too long to be ours), its stored hash into
 * hash, the transaction begun. Returns 0, or -1 having answered.
 */
static int
grant_begin(struct http_req *r, struct db *db, const char *secret,
    const char *unknown, char hash[CRYPTO_SHA256_HEX])
{
	if (strlen(secret) >= TOKEN_MAX) {
		oauth_error(r, 400, "invalid_grant", unknown);
		return -1;
	}
	oauth_hash(secret, hash);
	if (db_begin(db) == -1) {
		db_rollback(db);
		oauth_error(r, 500, "server_error", "The database failed.");
		return -1;
	}
	return 0;
}

/* RFC 6749 §4.1.3: exchange an authorization code. */
static void
grant_code(struct http_req *r, const struct config *cfg, struct db *db,
    const struct form *f, const struct oauth_client *c)
{
	const char	*code = form_get(f, "code");
	const char	*verifier = form_get(f, "code_verifier");
	struct db_code		 row;
	struct pair		 p;
	char			 hash[CRYPTO_SHA256_HEX];
	const char		*why = NULL, *err = "invalid_grant";
	long long		 now = oauth_now(), grant;

	memset(&p, 0, sizeof(p));
	memset(&row, 0, sizeof(row));
	if (code == NULL || verifier == NULL) {
		oauth_error(r, 400, "invalid_request", "code and code_verifier "
		    "are required.");
		return;
	}
	if (grant_begin(r, db, code, "Unknown code.", hash) == -1)
		return;
	switch (db_code_get(db, hash, &row)) {
	case LOOKUP_ERROR:
		goto dberr;
	case LOOKUP_NONE:
		why = "Unknown or expired code.";
		goto fail;
	case LOOKUP_FOUND:
		break;
	}
	if ((why = code_mismatch(&row, c, form_get(f, "redirect_uri"),
	    verifier)) != NULL)
		goto fail;
	/* §4.1.2: a code used twice revokes what it issued. */
	if (row.used) {
		if (row.grant_id != 0 &&
		    db_exec(db, STMT_GRANT_DELETE, "i", row.grant_id) == -1)
			goto dberr;
		if (db_commit(db) == -1)
			goto dberr;
		log_warn("token: code reused by client %s; grant %lld revoked",
		    c->client_id, row.grant_id);
		oauth_error(r, 400, "invalid_grant", "This code was already "
		    "used; the tokens issued from it are revoked.");
		goto out;
	}
	if ((why = code_unusable(&row, form_get(f, "resource"), now,
	    &err)) != NULL)
		goto fail;
	if ((grant = code_redeem(db, cfg, c, &row, hash, now, &p)) == -1)
		goto dberr;
	log_info("token: client %s redeemed a code (grant %lld)", c->client_id,
	    grant);
	pair_send(r, cfg, &p, row.scope);
	goto out;
fail:
	db_rollback(db);
	oauth_error(r, 400, err, why);
	goto out;
dberr:
	db_rollback(db);
	oauth_error(r, 500, "server_error", "The database failed.");
out:
	crypto_wipe(&p, sizeof(p));
	db_code_clear(&row);
}

/* RFC 6749 §6 with rotation (OAuth 2.1 §4.3.1). */
static void
grant_refresh(struct http_req *r, const struct config *cfg, struct db *db,
    const struct form *f, const struct oauth_client *c)
{
	const char	*rt = form_get(f, "refresh_token");
	const char	*resource = form_get(f, "resource");
	struct db_token		 row;
	struct pair		 p;
	char			 hash[CRYPTO_SHA256_HEX];
	const char		*why = NULL, *err = "invalid_grant";
	long long		 now = oauth_now();

	memset(&p, 0, sizeof(p));
	memset(&row, 0, sizeof(row));
	if (rt == NULL) {
		oauth_error(r, 400, "invalid_request", "refresh_token is required.");
		return;
	}
	if (grant_begin(r, db, rt, "Unknown refresh token.", hash) == -1)
		return;
	switch (db_token_get(db, hash, &row)) {
	case LOOKUP_ERROR:
		goto dberr;
	case LOOKUP_NONE:
		why = "Unknown, expired or revoked refresh token.";
		goto fail;
	case LOOKUP_FOUND:
		break;
	}
	if (!row.refresh || strcmp(row.client_id, c->client_id) != 0) {
		why = "Unknown refresh token.";
		goto fail;
	}
	if (row.expires <= now) {
		why = "The refresh token has expired.";
		goto fail;
	}
	/* RFC 8707 §2.2: only this server's MCP URL. */
	if ((resource != NULL && strcmp(resource, row.resource) != 0) ||
	    strcmp(row.resource, cfg->mcp_url) != 0) {
		log_refusal(LOG_REFUSE_RESOURCE, cfg->mcp_url, resource != NULL &&
		    strcmp(resource, row.resource) != 0 ? resource :
		    row.resource);
		err = "invalid_target";
		why = "The resource is not this server's MCP URL.";
		goto fail;
	}
	if (row.rotated != 0) {
		long long used_children;

		if ((used_children = db_token_children_used(db, hash)) == -1)
			goto dberr;
		if (now - row.rotated > OAUTH_REFRESH_GRACE || row.grace_used ||
		    used_children > 0) {
			/* OAuth 2.1 §4.3.1: reuse of a rotated token revokes the grant. */
			if (db_exec(db, STMT_GRANT_DELETE, "i", row.grant_id) == -1 ||
			    db_commit(db) == -1)
				goto dberr;
			log_warn("token: rotated refresh token reused by client %s; "
			    "grant %lld revoked", c->client_id, row.grant_id);
			oauth_error(r, 400, "invalid_grant", "This refresh token "
			    "was already used; the grant is revoked.");
			goto out;
		}
		/*
		 * The grace: replace the pair the lost rotation issued. Its
		 * access token goes; its refresh token stays as used, so that
		 * whoever presents it later revokes the grant.
		 */
		if (db_exec(db, STMT_TOKEN_GRACE, "t", hash) != 1 ||
		    db_exec(db, STMT_TOKEN_DELETE_CHILDREN, "t", hash) == -1 ||
		    db_exec(db, STMT_TOKEN_RETIRE_CHILDREN, "t", hash) == -1)
			goto dberr;
		log_info("token: client %s replayed its previous refresh token "
		    "within the grace", c->client_id);
	} else if (db_exec(db, STMT_TOKEN_ROTATE, "it", now, hash) != 1)
		goto dberr;
	if (pair_make(db, cfg, row.grant_id, hash, true, &p) == -1 ||
	    db_exec(db, STMT_GRANT_TOUCH, "iii", now, row.grant_id, now + 1) == -1 ||
	    db_exec(db, STMT_CLIENT_USED, "it", now, c->client_id) != 1 ||
	    db_commit(db) == -1)
		goto dberr;
	pair_send(r, cfg, &p, row.scope);
	goto out;
fail:
	db_rollback(db);
	oauth_error(r, 400, err, why);
	goto out;
dberr:
	db_rollback(db);
	oauth_error(r, 500, "server_error", "The database failed.");
out:
	crypto_wipe(&p, sizeof(p));
	db_token_clear(&row);
}

/*
 * Common checks of /token and /revoke: POST, a form body within bounds,
 * parsed. Returns the form, or NULL having answered.
 */
static struct form *
read_form(struct http_req *r)
{
	const char	*ctype, *body;
	struct form	*f;
	struct error	 err;
	size_t		 len;
	int		 status;

	/* Browser-based clients (RFC 6749 §3.2 leaves CORS to the server). */
	http_header_add(r, "Access-Control-Allow-Origin", "*");
	if (strcmp(http_method(r), "OPTIONS") == 0) {
		http_header_add(r, "Access-Control-Allow-Methods", "POST, OPTIONS");
		http_header_add(r, "Access-Control-Allow-Headers",
		    "Authorization, Content-Type");
		http_send(r, 204, NULL, "", 0);
		return NULL;
	}
	if (strcmp(http_method(r), "POST") != 0) {
		http_header_add(r, "Allow", "POST, OPTIONS");
		oauth_error(r, 405, "invalid_request", "Use POST.");
		return NULL;
	}
	ctype = http_header(r, "Content-Type");
	if (ctype == NULL || strncasecmp(ctype,
	    "application/x-www-form-urlencoded", 33) != 0) {
		oauth_error(r, 400, "invalid_request", "The body must be "
		    "application/x-www-form-urlencoded (RFC 6749 §3.2).");
		return NULL;
	}
	if (http_body(r, TOKEN_BODY_MAX, &body, &len, &status) == -1) {
		oauth_error(r, status == 413 ? 413 : 400, "invalid_request",
		    "The body is too large or malformed.");
		return NULL;
	}
	/* RFC 6749 §3.2: parameters must not repeat (form_parse refuses). */
	if ((f = form_parse(body, len, &err)) == NULL) {
		oauth_error(r, 400, "invalid_request", err.msg);
		return NULL;
	}
	return f;
}

void
oauth_token(struct http_req *r, const struct config *cfg, struct db *db)
{
	struct form		*f;
	struct oauth_client	 c;
	const char		*gt;

	memset(&c, 0, sizeof(c));
	if ((f = read_form(r)) == NULL)
		return;
	if ((gt = form_get(f, "grant_type")) == NULL) {
		oauth_error(r, 400, "invalid_request", "grant_type is missing.");
		goto out;
	}
	if (oauth_client_auth(r, db, f, &c) == -1)
		goto out;
	if (strcmp(gt, "authorization_code") == 0)
		grant_code(r, cfg, db, f, &c);
	else if (strcmp(gt, "refresh_token") == 0) {
		if (!c.refresh)
			oauth_error(r, 400, "unauthorized_client", "This client "
			    "did not register the refresh_token grant.");
		else
			grant_refresh(r, cfg, db, f, &c);
	} else
		oauth_error(r, 400, "unsupported_grant_type", "Use "
		    "authorization_code or refresh_token.");
	oauth_prune(db);
out:
	oauth_client_clear(&c);
	form_free(f);
}

void
oauth_revoke(struct http_req *r, const struct config *cfg, struct db *db)
{
	struct form		*f;
	struct oauth_client	 c;
	struct db_token		 row;
	const char		*tok;
	char			 hash[CRYPTO_SHA256_HEX];
	long long		 grant = 0;
	bool			 refresh = false, mine = false;

	(void)cfg;
	memset(&c, 0, sizeof(c));
	memset(&row, 0, sizeof(row));
	if ((f = read_form(r)) == NULL)
		return;
	/* RFC 7009 §2.1: the client authenticates as at the token endpoint. */
	if (oauth_client_auth(r, db, f, &c) == -1)
		goto out;
	if ((tok = form_get(f, "token")) == NULL) {
		oauth_error(r, 400, "invalid_request", "token is missing.");
		goto out;
	}
	if (strlen(tok) < TOKEN_MAX) {
		oauth_hash(tok, hash);
		if (db_token_get(db, hash, &row) == LOOKUP_FOUND) {
			refresh = row.refresh;
			grant = row.grant_id;
			mine = strcmp(row.client_id, c.client_id) == 0;
		}
		db_token_clear(&row);
		/*
		 * §2.1: a refresh token takes its grant's access tokens with
		 * it; an access token goes alone. Another client's token is
		 * left alone, and answered like an unknown one.
		 */
		if (mine && refresh)
			db_exec(db, STMT_GRANT_DELETE, "i", grant);
		else if (mine)
			db_exec(db, STMT_TOKEN_DELETE, "t", hash);
		if (mine)
			log_info("revoke: client %s revoked %s token (grant %lld)",
			    c.client_id, refresh ? "a refresh" : "an access", grant);
	}
	/* §2.2: 200 whether or not the token was known. */
	http_header_add(r, "Cache-Control", "no-store");
	http_send(r, 200, "application/json", "{}", 2);
out:
	oauth_client_clear(&c);
	form_free(f);
}
