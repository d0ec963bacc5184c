/*
 * oauth.c: what the OAuth programs share, the metadata documents
 * (RFC 9728, RFC 8414) and dynamic client registration (RFC 7591).
 *
 * The authorization endpoint is in oauth/authorize.c, the token and
 * revocation endpoints in oauth/token.c, the sign-in page in signin.c and
 * Client ID Metadata Documents in cimd.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/form.h"
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
 * Never-used registrations kept: past it the oldest go (a flood of
 * registrations cannot stop new ones; per-address rates bound each source).
 */
#define MAX_UNUSED_CLIENTS	10000

long long
oauth_now(void)
{
	return (long long)time(NULL);
}

void
oauth_hash(const char *token, char out[CRYPTO_SHA256_HEX])
{
	crypto_sha256_hex(token, strlen(token), out);
}

int
oauth_new_token(const char *prefix, char out[TOKEN_MAX])
{
	size_t n = strlen(prefix);

	if (n + crypto_b64url_len(TOKEN_BYTES) + 1 > TOKEN_MAX)
		return -1;
	memcpy(out, prefix, n);
	return crypto_token(out + n, TOKEN_MAX - n, TOKEN_BYTES);
}

/* Redirect URIs: validation and matching (url.c parses). */

bool
oauth_redirect_valid(const char *uri, char *why, size_t whysz)
{
	struct url u;

	if (strlen(uri) > OAUTH_MAX_URI) {
		snprintf(why, whysz, "a redirect URI is longer than %d bytes",
		    OAUTH_MAX_URI);
		return false;
	}
	/* OAuth 2.1 §2.3.1 (RFC 6749 §3.1.2): no fragment component. */
	if (strchr(uri, '#') != NULL) {
		snprintf(why, whysz, "redirect URIs must not contain a fragment");
		return false;
	}
	if (url_split(uri, &u) == -1) {
		snprintf(why, whysz, "a redirect URI must be an absolute https "
		    "URL, or http on a loopback host, without user info");
		return false;
	}
	/* OAuth 2.1 §1.5 and MCP authorization: TLS, except loopback. */
	if (!u.https && !url_host_is_loopback(&u)) {
		snprintf(why, whysz, "http redirect URIs are allowed only on a "
		    "loopback host (localhost, 127.0.0.1, [::1])");
		return false;
	}
	return true;
}

bool
oauth_redirect_match(const char *registered, const char *given)
{
	struct url r, g;

	if (strcmp(registered, given) == 0)
		return true;
	/* RFC 8252 §7.3: any port for loopback IP redirect URIs. */
	if (url_split(registered, &r) == -1 || url_split(given, &g) == -1)
		return false;
	if (r.https || g.https || !url_host_is_loopback(&r))
		return false;
	return r.bracketed == g.bracketed && r.hostlen == g.hostlen &&
	    strncmp(r.host, g.host, r.hostlen) == 0 &&
	    strcmp(r.rest, g.rest) == 0;
}

int
oauth_redirect_origin(const char *uri, char *out, size_t outsz, char *host,
    size_t hostsz)
{
	struct url	u;
	int			n;

	if (url_split(uri, &u) == -1)
		return -1;
	n = snprintf(out, outsz, "%.*s", (int)(u.rest - uri), uri);
	if (n < 0 || (size_t)n >= outsz)
		return -1;
	if (host != NULL) {
		const char *h = u.host - (u.bracketed ? 1 : 0);

		n = snprintf(host, hostsz, "%.*s", (int)(u.rest - h), h);
		if (n < 0 || (size_t)n >= hostsz)
			return -1;
	}
	return 0;
}

/* PKCE (RFC 7636). */

static bool
pkce_chars(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s), i;

	if (n < min || n > max)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && strchr("-._~", s[i]) == NULL)
			return false;
	return true;
}

bool
oauth_pkce_challenge_valid(const char *challenge)
{
	size_t i;

	/* §4.2: S256 gives BASE64URL of 32 bytes, 43 characters. */
	if (strlen(challenge) != 43)
		return false;
	for (i = 0; i < 43; i++)
		if (!isalnum((unsigned char)challenge[i]) &&
		    challenge[i] != '-' && challenge[i] != '_')
			return false;
	return true;
}

bool
oauth_pkce_s256(const char *verifier, const char *challenge)
{
	uint8_t	md[CRYPTO_SHA256_LEN];
	char	enc[48];

	/* §4.1: code_verifier = 43*128unreserved. */
	if (!pkce_chars(verifier, 43, 128) || !oauth_pkce_challenge_valid(challenge))
		return false;
	/* §4.6: BASE64URL-ENCODE(SHA256(ASCII(code_verifier))) == code_challenge. */
	crypto_sha256(verifier, strlen(verifier), md);
	crypto_b64url_encode(md, sizeof(md), enc);
	return crypto_equal(enc, challenge, 43);
}

/* Client authentication. */

int
oauth_basic_parse(const char *header, char *id, size_t idsz, char *secret,
    size_t secretsz)
{
	char		 raw[1024];
	const char	*p, *colon;
	long		 n;
	size_t		 len;
	int		 rc = -1;

	if (strncasecmp(header, "Basic ", 6) != 0)
		return -1;
	for (p = header + 6; *p == ' '; p++)
		;
	len = strlen(p);
	while (len > 0 && p[len - 1] == ' ')
		len--;
	if (len == 0 || len > 1360)
		return -1;
	if ((n = crypto_b64_decode(p, len, raw, sizeof(raw) - 1)) < 0)
		return -1;
	raw[n] = '\0';
	if (memchr(raw, '\0', (size_t)n) != NULL ||
	    (colon = memchr(raw, ':', (size_t)n)) == NULL)
		goto out;
	/* RFC 6749 §2.3.1: both parts form-urlencoded (UTF-8). */
	if (form_decode(raw, (size_t)(colon - raw), true, id, idsz) == -1 ||
	    form_decode(colon + 1, (size_t)(raw + n - colon - 1), true, secret,
	    secretsz) == -1)
		goto out;
	rc = *id == '\0' ? -1 : 0;
out:
	crypto_wipe(raw, sizeof(raw));
	return rc;
}

void
oauth_error(struct http_req *r, int status, const char *error,
    const char *description)
{
	struct json_object *o = json_object_new_object();

	js_set_str(o, "error", error);
	if (description != NULL)
		js_set_str(o, "error_description", description);
	/* RFC 6749 §5.1 and §5.2: never cached. */
	http_header_add(r, "Pragma", "no-cache");
	http_send_json(r, status, o);
	json_object_put(o);
}

const char *
oauth_client_redirect(const struct oauth_client *c, const char *given)
{
	size_t i, n = json_object_array_length(c->redirect_uris);

	if (given == NULL)
		return n == 1 ?
		    json_object_get_string(json_object_array_get_idx(c->redirect_uris, 0)) :
		    NULL;
	for (i = 0; i < n; i++) {
		const char *reg = json_object_get_string(
		    json_object_array_get_idx(c->redirect_uris, i));

		if (reg != NULL && oauth_redirect_match(reg, given))
			return given;
	}
	return NULL;
}

int
oauth_client_auth(struct http_req *r, struct db *db, const struct form *f,
    struct oauth_client *c)
{
	const char	*hdr = http_header(r, "Authorization");
	const char	*fid = form_get(f, "client_id");
	const char	*fsecret = form_get(f, "client_secret");
	char		 id[OAUTH_MAX_CLIENT_ID + 1], secret[256], hash[CRYPTO_SHA256_HEX];
	const char	*method;
	bool		 basic = false;
	int		 rc = -1;

	memset(c, 0, sizeof(*c));
	secret[0] = '\0';
	if (hdr != NULL && strncasecmp(hdr, "Basic ", 6) == 0) {
		basic = true;
		method = "client_secret_basic";
		/* RFC 6749 §2.3: one method per request. */
		if (fsecret != NULL ||
		    oauth_basic_parse(hdr, id, sizeof(id), secret, sizeof(secret)) == -1 ||
		    (fid != NULL && strcmp(fid, id) != 0))
			goto fail;
	} else {
		if (fid == NULL || *fid == '\0') {
			oauth_error(r, 400, "invalid_request", "client_id is missing.");
			return -1;
		}
		if (strlen(fid) > OAUTH_MAX_CLIENT_ID)
			goto fail;
		snprintf(id, sizeof(id), "%s", fid);
		if (fsecret != NULL) {
			method = "client_secret_post";
			if (strlen(fsecret) >= sizeof(secret))
				goto fail;
			snprintf(secret, sizeof(secret), "%s", fsecret);
		} else
			method = "none";
	}
	if (oauth_client_load(db, id, c) != 1)
		goto fail;
	/* RFC 7591 §2: the registered token_endpoint_auth_method is the one. */
	if (strcmp(c->auth_method, method) != 0)
		goto fail;
	if (strcmp(method, "none") != 0) {
		oauth_hash(secret, hash);
		if (c->secret_hash[0] == '\0' ||
		    !crypto_equal(hash, c->secret_hash, CRYPTO_SHA256_HEX - 1))
			goto fail;
	}
	rc = 0;
	goto out;
fail:
	oauth_client_clear(c);
	/* RFC 6749 §5.2: 401 and a matching challenge when Basic was tried. */
	if (basic)
		http_header_add(r, "WWW-Authenticate", "Basic realm=\"code-sandbox\"");
	oauth_error(r, 401, "invalid_client", "Client authentication failed: "
	    "unknown client, wrong secret, or not the registered method.");
out:
	crypto_wipe(secret, sizeof(secret));
	return rc;
}

void
oauth_client_addr(struct http_req *r, const struct config *cfg,
    char addr[CLIENTADDR_MAX], char key[CLIENTADDR_MAX])
{
	const char *fwd = NULL;

	if (cfg->trusted_proxies[0] != '\0')
		fwd = http_header(r, cfg->client_addr_header);
	clientaddr_resolve(http_remote_addr(r), fwd, cfg->trusted_proxies, addr);
	clientaddr_key(addr, key);
}

bool
oauth_redirect_known(const struct config *cfg, const char *uri, char *host,
    size_t hostsz)
{
	struct url	u;
	const char	*h;
	int		n;

	if (url_split(uri, &u) == -1) {
		snprintf(host, hostsz, "?");
		return false;
	}
	h = u.host - (u.bracketed ? 1 : 0);
	n = snprintf(host, hostsz, "%.*s", (int)(u.rest - h), h);
	if (n < 0 || (size_t)n >= hostsz)
		return false;
	return url_host_is_loopback(&u) ||
	    (cfg != NULL && url_host_in_list(&u, cfg->redirect_hosts));
}

/* Metadata (RFC 9728, RFC 8414). */

static struct json_object *
str_array(const char *const *v)
{
	struct json_object *a = json_object_new_array();

	for (; *v != NULL; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

static void
set_url(struct json_object *o, const char *key, const struct config *cfg,
    const char *path)
{
	char url[4096];

	snprintf(url, sizeof(url), "%s%s", cfg->public_url, path);
	js_set_str(o, key, url);
}

static const char *const auth_methods[] = { "client_secret_post",
	"client_secret_basic", "none", NULL };

/* RFC 9728 §2: the protected resource is this server's MCP URL. */
static struct json_object *
resource_metadata(const struct config *cfg)
{
	static const char *const bearer[] = { "header", NULL };
	static const char *const scopes[] = { OAUTH_SCOPE, NULL };
	struct json_object *o = json_object_new_object(), *as;

	js_set_str(o, "resource", cfg->mcp_url);
	as = json_object_new_array();
	json_object_array_add(as, json_object_new_string(cfg->public_origin));
	js_set(o, "authorization_servers", as);
	js_set(o, "bearer_methods_supported", str_array(bearer));
	js_set(o, "scopes_supported", str_array(scopes));
	js_set_str(o, "resource_name", "code-sandbox");
	return o;
}

/* Length of the host name in an authority (host, host:port, [v6]:port). */
static size_t
host_len(const char *auth)
{
	const char *end;

	if (*auth == '[' && (end = strchr(auth, ']')) != NULL)
		return (size_t)(end - auth) + 1;
	return strcspn(auth, ":/");
}

/*
 * RFC 8414 §3.3: a client refuses metadata whose issuer is not the URL it
 * fetched from. A Host header naming another, non-loopback host name (a
 * proxy may send its upstream's loopback address; ports are left out, as
 * a TLS proxy changes them) means SANDBOX_PUBLIC_URL is not the address
 * clients use: say so once.
 */
static void
check_issuer(struct http_req *r, const struct config *cfg)
{
	const char	*host = http_header(r, "Host"), *auth;
	char		 got[300];
	size_t		 n;

	if (host == NULL || strncmp(host, "127.", 4) == 0 ||
	    strncmp(host, "localhost", 9) == 0 || strncmp(host, "[::1]", 5) == 0)
		return;
	auth = strstr(cfg->public_origin, "://");
	auth = auth != NULL ? auth + 3 : cfg->public_origin;
	n = host_len(host);
	if (n == host_len(auth) && strncasecmp(host, auth, n) == 0)
		return;
	snprintf(got, sizeof(got), "requests for host %.256s", host);
	log_refusal(LOG_REFUSE_ISSUER, cfg->public_origin, got);
}

/* RFC 8414 §2: issuer is the public origin exactly (no path, no slash). */
static struct json_object *
server_metadata(const struct config *cfg)
{
	static const char *const rtypes[] = { "code", NULL };
	static const char *const rmodes[] = { "query", NULL };
	static const char *const gtypes[] = { "authorization_code",
		"refresh_token", NULL };
	static const char *const pkce[] = { "S256", NULL };
	/*
	 * MCP authorization 2026-07-28 "Refresh tokens": offline_access is
	 * listed so that clients may ask; refresh tokens are issued by the
	 * client's registered grant_types either way.
	 */
	static const char *const scopes[] = { OAUTH_SCOPE, "offline_access", NULL };
	struct json_object *o = json_object_new_object();

	/* Byte for byte the authorization_servers entry above and every iss. */
	js_set_str(o, "issuer", cfg->public_origin);
	set_url(o, "authorization_endpoint", cfg, "/authorize");
	set_url(o, "token_endpoint", cfg, "/token");
	set_url(o, "registration_endpoint", cfg, "/register");
	set_url(o, "revocation_endpoint", cfg, "/revoke");
	js_set(o, "response_types_supported", str_array(rtypes));
	js_set(o, "response_modes_supported", str_array(rmodes));
	js_set(o, "grant_types_supported", str_array(gtypes));
	/* Without S256 here MCP clients must refuse (MCP authorization §PKCE). */
	js_set(o, "code_challenge_methods_supported", str_array(pkce));
	js_set(o, "token_endpoint_auth_methods_supported", str_array(auth_methods));
	js_set(o, "revocation_endpoint_auth_methods_supported",
	    str_array(auth_methods));
	js_set(o, "scopes_supported", str_array(scopes));
	/* RFC 9207 §3: iss is sent with every authorization response. */
	js_set_bool(o, "authorization_response_iss_parameter_supported", true);
	js_set_bool(o, "client_id_metadata_document_supported", true);
	return o;
}

/* Browser-based clients read metadata and call /register and /token. */
static bool
cors(struct http_req *r)
{
	http_header_add(r, "Access-Control-Allow-Origin", "*");
	if (strcmp(http_method(r), "OPTIONS") != 0)
		return false;
	http_header_add(r, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
	http_header_add(r, "Access-Control-Allow-Headers",
	    "Authorization, Content-Type, MCP-Protocol-Version");
	http_header_add(r, "Access-Control-Max-Age", "600");
	http_send(r, 204, NULL, "", 0);
	return true;
}

void
oauth_wellknown(struct http_req *r, const struct config *cfg)
{
	const char		*path = http_path(r), *wk;
	struct json_object	*o = NULL;

	if (cors(r))
		return;
	if (strcmp(http_method(r), "GET") != 0 && strcmp(http_method(r), "HEAD") != 0) {
		http_header_add(r, "Allow", "GET, HEAD, OPTIONS");
		http_send_error(r, 405, "Use GET.");
		return;
	}
	/* The web server may route a prefixed path here: match from /.well-known/. */
	if ((wk = strstr(path, "/.well-known/")) == NULL) {
		http_send_error(r, 404, NULL);
		return;
	}
	wk += strlen("/.well-known/");
	/* RFC 9728 §3.1: oauth-protected-resource, also with the resource's path. */
	if (strncmp(wk, "oauth-protected-resource", 24) == 0 &&
	    (wk[24] == '\0' || wk[24] == '/'))
		o = resource_metadata(cfg);
	/* RFC 8414 §3.1; some clients try the OpenID Connect name. */
	else if ((strncmp(wk, "oauth-authorization-server", 26) == 0 &&
	    (wk[26] == '\0' || wk[26] == '/')) ||
	    (strncmp(wk, "openid-configuration", 20) == 0 &&
	    (wk[20] == '\0' || wk[20] == '/'))) {
		check_issuer(r, cfg);
		o = server_metadata(cfg);
	}
	if (o == NULL) {
		http_send_error(r, 404, "No such metadata document.");
		return;
	}
	http_send_json(r, 200, o);
	json_object_put(o);
}

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

void
oauth_register(struct http_req *r, const struct config *cfg, struct db *db)
{
	struct json_object	*req = NULL, *meta = NULL, *uris = NULL, *resp = NULL;
	struct error		 err;
	const char		*body, *ctype, *method, *name;
	char			 why[256], client_id[TOKEN_MAX], secret[TOKEN_MAX];
	char			 secret_hash[CRYPTO_SHA256_HEX];
	char			 addr[CLIENTADDR_MAX], akey[CLIENTADDR_MAX];
	char			 rkey[CLIENTADDR_MAX + 16];
	size_t			 len;
	long long		 now = oauth_now(), hits;
	bool			 refresh, confidential;
	int			 status;

	secret[0] = '\0';
	if (cors(r))
		return;
	if (strcmp(http_method(r), "POST") != 0) {
		http_header_add(r, "Allow", "POST, OPTIONS");
		http_send_error(r, 405, "Use POST with a JSON body (RFC 7591).");
		return;
	}
	ctype = http_header(r, "Content-Type");
	if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0) {
		register_error(r, "invalid_client_metadata",
		    "The body must be application/json.");
		return;
	}
	if (http_body(r, REGISTER_MAX_BODY, &body, &len, &status) == -1) {
		http_send_error(r, status, "The registration body is too large "
		    "or malformed.");
		return;
	}
	if ((req = js_parse(body, len, 8, &err)) == NULL ||
	    !json_object_is_type(req, json_type_object)) {
		register_error(r, "invalid_client_metadata", req == NULL ? err.msg :
		    "The body must be a JSON object.");
		goto out;
	}
	meta = json_object_new_object();
	if (check_redirects(req, &uris, why, sizeof(why)) == -1) {
		register_error(r, "invalid_redirect_uri", why);
		goto out;
	}
	js_set(meta, "redirect_uris", json_object_get(uris));
	/* RFC 7591 §2: token_endpoint_auth_method defaults to client_secret_basic. */
	method = js_str(req, "token_endpoint_auth_method");
	if (method == NULL && json_object_object_get_ex(req,
	    "token_endpoint_auth_method", NULL) &&
	    !json_object_is_type(json_object_object_get(req,
	    "token_endpoint_auth_method"), json_type_null)) {
		register_error(r, "invalid_client_metadata",
		    "token_endpoint_auth_method must be a string.");
		goto out;
	}
	if (method == NULL)
		method = "client_secret_basic";
	if (strcmp(method, "none") != 0 && strcmp(method, "client_secret_post") != 0 &&
	    strcmp(method, "client_secret_basic") != 0) {
		register_error(r, "invalid_client_metadata", "token_endpoint_auth_method "
		    "must be client_secret_post, client_secret_basic or none.");
		goto out;
	}
	confidential = strcmp(method, "none") != 0;
	js_set_str(meta, "token_endpoint_auth_method", method);
	if (check_grants(req, meta, &refresh, why, sizeof(why)) == -1) {
		register_error(r, "invalid_client_metadata", why);
		goto out;
	}
	if (copy_str(req, meta, "client_name", OAUTH_MAX_NAME) == -1 ||
	    copy_str(req, meta, "scope", OAUTH_MAX_SCOPE) == -1 ||
	    copy_str(req, meta, "software_id", 256) == -1 ||
	    copy_str(req, meta, "software_version", 256) == -1 ||
	    copy_url(req, meta, "client_uri") == -1 ||
	    copy_url(req, meta, "logo_uri") == -1 ||
	    copy_url(req, meta, "tos_uri") == -1 ||
	    copy_url(req, meta, "policy_uri") == -1) {
		register_error(r, "invalid_client_metadata", "client_name, scope, "
		    "software_id and software_version must be short strings; "
		    "client_uri, logo_uri, tos_uri and policy_uri http(s) URLs.");
		goto out;
	}
	/*
	 * MCP authorization 2026-07-28 and OpenID Connect Registration §2:
	 * application_type is native or web (default web); stored with the
	 * metadata and echoed.
	 */
	{
		const char *at = js_str(req, "application_type");
		struct json_object *v;

		if (at == NULL && json_object_object_get_ex(req,
		    "application_type", &v) && !json_object_is_type(v,
		    json_type_null)) {
			register_error(r, "invalid_client_metadata",
			    "application_type must be a string.");
			goto out;
		}
		if (at != NULL && strcmp(at, "native") != 0 &&
		    strcmp(at, "web") != 0) {
			register_error(r, "invalid_client_metadata",
			    "application_type must be native or web.");
			goto out;
		}
		if (at != NULL)
			js_set_str(meta, "application_type", at);
	}
	name = js_str(meta, "client_name");

	/* Registrations per client address and hour (a setting). */
	oauth_client_addr(r, cfg, addr, akey);
	snprintf(rkey, sizeof(rkey), "register:%s", akey);
	if ((hits = oauth_rate_hit(db, rkey, 3600)) == -1) {
		/* The database is locked past its busy timeout, or read-only. */
		http_header_add(r, "Retry-After", "5");
		http_send_error(r, 503, "The server is busy and stored nothing; "
		    "try again in a few seconds.");
		goto out;
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
		goto out;
	}
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
	/* RFC 7591 §3.2.1: 201, the client's id, and every registered value. */
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
	json_object_put(uris);
	json_object_put(meta);
	json_object_put(req);
}
