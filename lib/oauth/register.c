/*
 * register.c: dynamic client registration (RFC 7591), before any
 * authentication: the body is small, every value checked, and the
 * registrations per address and hour bounded.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/clientaddr.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "base/url.h"
#include "http/http.h"
#include "oauth/extern.h"
#include "oauth/oauth.h"
#include "store/db.h"

/* Registration bodies are read before any authentication: keep them small. */
#define REGISTER_MAX_BODY	16384
/*
 * Never-used registrations kept: past it the oldest of the address with
 * the most go (a flood of registrations cannot stop new ones, and evicts
 * its own before a person's fresh client; per-address rates bound each
 * source).
 */
#define MAX_UNUSED_CLIENTS	10000

/* Dynamic client registration (RFC 7591). */

static void
register_error(struct http_req *r, const char *error, const char *desc)
{
	struct json_object *o = json_object_new_object();

	/* RFC 7591 §3.2.2. */
	js_set_str(o, "error", error);
	js_set_str(o, "error_description", desc);
	http_send_json(r, 400, o);
	json_object_put(o);
}

/* An optional string member that must be an http(s) URL, echoed if valid. */
static int
copy_url(struct json_object *req, struct json_object *meta, const char *key)
{
	struct json_object	*v;
	const char		*s;
	size_t			 i;

	if (!json_object_object_get_ex(req, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if ((s = js_str_max(req, key, OAUTH_MAX_URI)) == NULL ||
	    (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0))
		return -1;
	for (i = 0; s[i] != '\0'; i++)
		if (!url_char((unsigned char)s[i]))
			return -1;
	js_set_str(meta, key, s);
	return 0;
}

/* An optional plain string member, echoed if valid. */
static int
copy_str(struct json_object *req, struct json_object *meta, const char *key,
    size_t max)
{
	struct json_object	*v;
	const char		*s;

	if (!json_object_object_get_ex(req, key, &v) || json_object_is_type(v, json_type_null))
		return 0;
	if ((s = js_str_max(req, key, max)) == NULL)
		return -1;
	for (const char *p = s; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return -1;
	js_set_str(meta, key, s);
	return 0;
}

/*
 * Validate redirect_uris (RFC 7591 §2; MCP requires at least one). On
 * success *out is a new array of the URIs. -1 with a description in why.
 */
static int
check_redirects(struct json_object *req, struct json_object **out, char *why,
    size_t whysz)
{
	struct json_object	*a = js_get(req, "redirect_uris", json_type_array);
	size_t			 i, n;

	*out = NULL;
	if (a == NULL || (n = json_object_array_length(a)) == 0) {
		snprintf(why, whysz, "redirect_uris must be a non-empty array");
		return -1;
	}
	if (n > OAUTH_MAX_REDIRECT_URIS) {
		snprintf(why, whysz, "at most %d redirect_uris", OAUTH_MAX_REDIRECT_URIS);
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(a, i);
		const char *s;

		if (!json_object_is_type(v, json_type_string) ||
		    (s = json_object_get_string(v)) == NULL ||
		    strlen(s) != (size_t)json_object_get_string_len(v)) {
			snprintf(why, whysz, "redirect_uris must hold strings");
			return -1;
		}
		if (!oauth_redirect_valid(s, why, whysz))
			return -1;
	}
	*out = json_object_get(a);
	return 0;
}

/*
 * grant_types (RFC 7591 §2, default ["authorization_code"]): keep the
 * supported ones; authorization_code is required. response_types must be
 * ["code"] (its default).
 */
static int
check_grants(struct json_object *req, struct json_object *meta, bool *refresh,
    char *why, size_t whysz)
{
	struct json_object	*g, *rt, *out;
	bool			 code = false, seen_code = false;
	size_t			 i, n;

	*refresh = false;
	if ((g = js_get(req, "grant_types", json_type_array)) == NULL) {
		if (json_object_object_get_ex(req, "grant_types", &g) &&
		    !json_object_is_type(g, json_type_null)) {
			snprintf(why, whysz, "grant_types must be an array");
			return -1;
		}
		code = true;
	} else {
		for (i = 0, n = json_object_array_length(g); i < n && i < 16; i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(g, i));

			if (s != NULL && strcmp(s, "authorization_code") == 0)
				code = true;
			else if (s != NULL && strcmp(s, "refresh_token") == 0)
				*refresh = true;
		}
	}
	if (!code) {
		snprintf(why, whysz, "grant_types must include authorization_code");
		return -1;
	}
	if ((rt = js_get(req, "response_types", json_type_array)) != NULL) {
		for (i = 0, n = json_object_array_length(rt); i < n && i < 16; i++) {
			const char *s = json_object_get_string(json_object_array_get_idx(rt, i));

			if (s != NULL && strcmp(s, "code") == 0)
				seen_code = true;
		}
		if (!seen_code) {
			snprintf(why, whysz, "response_types must include code");
			return -1;
		}
	}
	out = json_object_new_array();
	json_object_array_add(out, json_object_new_string("authorization_code"));
	if (*refresh)
		json_object_array_add(out, json_object_new_string("refresh_token"));
	js_set(meta, "grant_types", out);
	out = json_object_new_array();
	json_object_array_add(out, json_object_new_string("code"));
	js_set(meta, "response_types", out);
	return 0;
}

/* The registration body in *body and *len: 0, or -1 having answered. */
static int
register_read(struct http_req *r, const char **body, size_t *len)
{
	const char		*ctype;
	int			 status;

	if (strcmp(http_method(r), "POST") != 0) {
		http_header_add(r, "Allow", "POST, OPTIONS");
		http_send_error(r, 405, "Use POST with a JSON body (RFC 7591).");
		return -1;
	}
	ctype = http_header(r, "Content-Type");
	if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0) {
		register_error(r, "invalid_client_metadata",
		    "The body must be application/json.");
		return -1;
	}
	if (http_body(r, REGISTER_MAX_BODY, body, len, &status) == -1) {
		http_send_error(r, status, "The registration body is too large "
		    "or malformed.");
		return -1;
	}
	return 0;
}

/*
 * token_endpoint_auth_method (RFC 7591 §2, default client_secret_basic)
 * into meta: 0, or -1 with why.
 */
static int
register_auth_method(struct json_object *req, struct json_object *meta,
    char *why, size_t whysz)
{
	const char	*method;

	method = js_str(req, "token_endpoint_auth_method");
	if (method == NULL && json_object_object_get_ex(req,
	    "token_endpoint_auth_method", NULL) &&
	    !json_object_is_type(json_object_object_get(req,
	    "token_endpoint_auth_method"), json_type_null)) {
		snprintf(why, whysz, "token_endpoint_auth_method must be a string.");
		return -1;
	}
	if (method == NULL)
		method = "client_secret_basic";
	if (strcmp(method, "none") != 0 &&
	    strcmp(method, "client_secret_post") != 0 &&
	    strcmp(method, "client_secret_basic") != 0) {
		snprintf(why, whysz, "token_endpoint_auth_method must be "
		    "client_secret_post, client_secret_basic or none.");
		return -1;
	}
	js_set_str(meta, "token_endpoint_auth_method", method);
	return 0;
}

/*
 * MCP authorization 2026-07-28 and OpenID Connect Registration §2:
 * application_type is native or web (default web); stored with the
 * metadata and echoed. 0, or -1 with why.
 */
static int
register_app_type(struct json_object *req, struct json_object *meta,
    char *why, size_t whysz)
{
	const char		*at = js_str(req, "application_type");
	struct json_object	*v;

	if (at == NULL && json_object_object_get_ex(req,
	    "application_type", &v) && !json_object_is_type(v,
	    json_type_null)) {
		snprintf(why, whysz, "application_type must be a string.");
		return -1;
	}
	if (at != NULL && strcmp(at, "native") != 0 &&
	    strcmp(at, "web") != 0) {
		snprintf(why, whysz, "application_type must be native or web.");
		return -1;
	}
	if (at != NULL)
		js_set_str(meta, "application_type", at);
	return 0;
}

/*
 * The client's metadata from req, checked, into meta and *uris (a new
 * array): 0, or -1 with the RFC 7591 error code in *error and why.
 */
static int
register_metadata(struct json_object *req, struct json_object *meta,
    struct json_object **uris, bool *refresh, const char **error, char *why,
    size_t whysz)
{
	*error = "invalid_client_metadata";
	if (check_redirects(req, uris, why, whysz) == -1) {
		*error = "invalid_redirect_uri";
		return -1;
	}
	js_set(meta, "redirect_uris", json_object_get(*uris));
	if (register_auth_method(req, meta, why, whysz) == -1 ||
	    check_grants(req, meta, refresh, why, whysz) == -1)
		return -1;
	if (copy_str(req, meta, "client_name", OAUTH_MAX_NAME) == -1 ||
	    copy_str(req, meta, "scope", OAUTH_MAX_SCOPE) == -1 ||
	    copy_str(req, meta, "software_id", 256) == -1 ||
	    copy_str(req, meta, "software_version", 256) == -1 ||
	    copy_url(req, meta, "client_uri") == -1 ||
	    copy_url(req, meta, "logo_uri") == -1 ||
	    copy_url(req, meta, "tos_uri") == -1 ||
	    copy_url(req, meta, "policy_uri") == -1) {
		snprintf(why, whysz, "client_name, scope, software_id and "
		    "software_version must be short strings; client_uri, "
		    "logo_uri, tos_uri and policy_uri http(s) URLs.");
		return -1;
	}
	return register_app_type(req, meta, why, whysz);
}

int
oauth_register_check(const char *body, size_t len, struct json_object **meta,
    struct json_object **uris, bool *refresh, const char **error, char *why,
    size_t whysz)
{
	struct json_object	*req;
	struct error		 err;
	int			 rc;

	*meta = *uris = NULL;
	*refresh = false;
	*error = "invalid_client_metadata";
	if ((req = js_parse(body, len, 8, &err)) == NULL) {
		snprintf(why, whysz, "%s", err.msg);
		return -1;
	}
	if (!json_object_is_type(req, json_type_object)) {
		snprintf(why, whysz, "The body must be a JSON object.");
		json_object_put(req);
		return -1;
	}
	*meta = json_object_new_object();
	if ((rc = register_metadata(req, *meta, uris, refresh, error, why,
	    whysz)) == -1) {
		json_object_put(*meta);
		json_object_put(*uris);
		*meta = *uris = NULL;
	}
	json_object_put(req);
	return rc;
}

/* Registrations per client address and hour (a setting): 0, or -1 having answered. */
static int
register_rate(struct http_req *r, const struct config *cfg, struct db *db)
{
	char		addr[CLIENTADDR_MAX], akey[CLIENTADDR_MAX];
	char		rkey[CLIENTADDR_MAX + 16];
	long long	hits;

	oauth_client_addr(r, cfg, addr, akey);
	snprintf(rkey, sizeof(rkey), "register:%s", akey);
	if ((hits = oauth_rate_hit(db, rkey, 3600)) == -1) {
		/* The database is locked past its busy timeout, or read-only. */
		http_header_add(r, "Retry-After", "5");
		http_send_error(r, 503, "The server is busy and stored nothing; "
		    "try again in a few seconds.");
		return -1;
	}
	if (hits > cfg->register_per_hour) {
		char esc[CLIENTADDR_MAX * 2];

		if (hits == cfg->register_per_hour + 1)
			log_warn("register: %s registered %ld clients this hour; "
			    "refusing more", log_escape(esc, sizeof(esc), addr,
			    strlen(addr)), cfg->register_per_hour);
		http_header_add(r, "Retry-After", "3600");
		http_send_error(r, 429, "Too many registrations from this address; "
		    "try again later.");
		return -1;
	}
	return 0;
}

/*
 * Store the client, with a new id and, when confidential, secret, and
 * answer 201 with every registered value (RFC 7591 §3.2.1).
 */
static void
register_store(struct http_req *r, const struct config *cfg, struct db *db,
    struct json_object *meta, struct json_object *uris, bool refresh,
    long long now)
{
	char			 addr[CLIENTADDR_MAX], akey[CLIENTADDR_MAX];
	struct json_object	*resp = NULL;
	const char		*name = js_str(meta, "client_name");
	const char		*method = js_str(meta, "token_endpoint_auth_method");
	char			 client_id[TOKEN_MAX], secret[TOKEN_MAX];
	char			 secret_hash[CRYPTO_SHA256_HEX];
	bool			 confidential = strcmp(method, "none") != 0;

	secret[0] = '\0';
	/* Stay cheap under repeated connects: drop stale never-used clients. */
	db_exec(db, STMT_CLIENT_PRUNE, "i", now - OAUTH_UNUSED_CLIENT_TTL);
	db_exec(db, STMT_CLIENT_CAP, "i", (long long)MAX_UNUSED_CLIENTS - 1);

	if (oauth_new_token(TOKEN_PREFIX_CLIENT, client_id) == -1 ||
	    (confidential && oauth_new_token(TOKEN_PREFIX_SECRET, secret) == -1)) {
		http_send_error(r, 500, "No randomness available.");
		goto out;
	}
	if (confidential)
		oauth_hash(secret, secret_hash);
	if (db_exec(db, STMT_CLIENT_INSERT, "ttttttiii", client_id,
	    confidential ? secret_hash : NULL, method, name,
	    js_text(uris, NULL), js_text(meta, NULL), (long long)refresh, 0LL,
	    now) != 1) {
		http_send_error(r, 500, "The client could not be stored.");
		goto out;
	}
	/* Its bucket: a flood evicts its own registrations first (sql/019). */
	oauth_client_addr(r, cfg, addr, akey);
	db_exec(db, STMT_CLIENT_SET_ADDR, "tt", akey, client_id);
	resp = json_object_get(meta);
	js_set_str(resp, "client_id", client_id);
	js_set_int(resp, "client_id_issued_at", now);
	if (confidential) {
		js_set_str(resp, "client_secret", secret);
		js_set_int(resp, "client_secret_expires_at", 0);
	}
	{
		char esc[96];

		log_info("registered client %s (%s) as %s", client_id,
		    log_escape(esc, sizeof(esc), name != NULL ? name : "",
		    name != NULL ? strlen(name) : 0), method);
	}
	http_send_json(r, 201, resp);
out:
	crypto_wipe(secret, sizeof(secret));
	json_object_put(resp);
}

void
oauth_register(struct http_req *r, const struct config *cfg, struct db *db)
{
	struct json_object	*meta = NULL, *uris = NULL;
	const char		*body, *error;
	char			 why[256];
	size_t			 len;
	long long		 now = oauth_now();
	bool			 refresh;

	if (oauth_cors(r))
		return;
	if (register_read(r, &body, &len) == -1)
		return;
	if (oauth_register_check(body, len, &meta, &uris, &refresh, &error, why,
	    sizeof(why)) == -1) {
		register_error(r, error, why);
		return;
	}
	if (register_rate(r, cfg, db) == 0)
		register_store(r, cfg, db, meta, uris, refresh, now);
	json_object_put(uris);
	json_object_put(meta);
}
