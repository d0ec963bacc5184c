/*
 * wellknown.c: the metadata documents under /.well-known/: the protected
 * resource (RFC 9728) and the authorization server (RFC 8414).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "http/http.h"
#include "oauth/extern.h"
#include "oauth/oauth.h"

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

void
oauth_wellknown(struct http_req *r, const struct config *cfg)
{
	const char		*path = http_path(r), *wk;
	struct json_object	*o = NULL;

	if (oauth_cors(r))
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
