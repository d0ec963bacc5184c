/*
 * oauth.c: what the OAuth programs share: tokens and their hashes,
 * redirect URIs, PKCE, client authentication, the client's address, the
 * error answer and CORS. extern.h lists the other files.
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

/* extern.h's room for a client_id is oauth.h's bound. */
_Static_assert(OAUTH_CLIENT_ID_SIZE == OAUTH_MAX_CLIENT_ID + 1,
    "OAUTH_CLIENT_ID_SIZE is not OAUTH_MAX_CLIENT_ID + 1");

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
	if (oauth_client_load(db, id, c) != LOOKUP_FOUND)
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

bool
oauth_cors(struct http_req *r)
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
