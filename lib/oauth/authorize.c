/*
 * oauth/authorize.c: the authorization endpoint (RFC 6749 §4.1.1, OAuth 2.1
 * §4.1, RFC 7636 PKCE, RFC 8707 resource, RFC 9207 iss).
 *
 * GET validates the request in the order RFC 6749 §4.1.2.1 demands: until
 * the client and its redirect URI are known good, errors are shown on a page
 * and never redirected (no open redirector); after that they go back to the
 * client, but only through a redirect URI the owner signed the client in
 * through before (RFC 9700 §4.11.2: anyone can register a redirect URI;
 * a URI never approved, or approved before the client's redirect_uris
 * changed, gets its errors shown on a page). A redirect host that is not loopback
 * nor in SANDBOX_REDIRECT_HOSTS is named in a warning above the key field,
 * or refused outright with SANDBOX_REDIRECT_UNKNOWN=refuse. A valid request is stored (oauth_request) under a random id that
 * the sign-in form carries, with a CSRF cookie whose hash is stored too, so
 * the POST can neither be forged cross-site nor change what was validated.
 *
 * POST checks the API key (constant time), throttled per client address
 * (clientaddr.h: through trusted proxies; IPv6 by /64): each try is
 * counted as a failure in the same transaction that checks the address may
 * try (so parallel guesses cannot slip through), and cleared when the key
 * is right. Each wrong key doubles the wait before the next try (1 s, 2 s,
 * 4 s, ..., at most 15 min; failures older than an hour are forgotten); a
 * wrong key never delays another address. Every submission is recorded in
 * signin_attempt (sandboxctl signins). Success makes
 * a single-use code valid for OAUTH_CODE_TTL seconds, stored hashed and
 * bound to client, redirect URI, challenge, scope and resource.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/clientaddr.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/form.h"
#include "base/js.h"
#include "base/log.h"
#include "http/http.h"
#include "oauth/cimd.h"
#include "oauth/extern.h"
#include "oauth/oauth.h"
#include "oauth/owners.h"
#include "oauth/signin.h"
#include "store/db.h"
#include "store/db_oauth.h"

#define QUERY_MAX	8192	/* the whole query string of a GET */
#define POST_MAX	4096	/* the sign-in form: request id, key, action */
#define KEY_MAX		512	/* SANDBOX_API_KEY is at most 512 characters */
#define LOCATION_MAX	8192
/* Open sign-in pages per client address (IPv6 by /64). */
#define PENDING_PER_ADDR	20

/* An authorization request as validated (and stored while the page shows). */
struct authz {
	const char	*client_id;
	const char	*redirect_uri;	/* as sent, "" when omitted */
	const char	*redirect_to;	/* where to send the browser back */
	const char	*challenge;
	const char	*state;		/* NULL when not sent */
	const char	*scope;
	const char	*resource;
};

/* A cached metadata document is fetched again after this long. */
#define CIMD_CACHE_TTL	3600

/*
 * Find the client for an authorization request: a registered one, or, for
 * an https client_id, its Client ID Metadata Document (cimd.c, cached).
 * Returns 0 with c filled, or -1 with a message for the error page in err.
 */
static int
client_find(struct db *db, const struct config *cfg,
    const char *client_id, const char *akey, struct oauth_client *c,
    struct error *err)
{
	enum lookup_result rc;
	enum cimd_fetched frc;

	if (*client_id == '\0' || strlen(client_id) > OAUTH_MAX_CLIENT_ID)
		return error_set(err, "The client_id is missing or too long.");
	rc = oauth_client_load(db, client_id, c);
	if (rc == LOOKUP_ERROR)
		return error_set(err, "The client registry cannot be read.");
	if (rc == LOOKUP_FOUND &&
	    (!c->cimd || c->created > oauth_now() - CIMD_CACHE_TTL))
		return 0;
	if (!cimd_is_url(client_id)) {
		oauth_client_clear(c);
		return error_set(err, "This client is not registered (or its "
		    "registration expired): reconnect to register again.");
	}
	/* draft-ietf-oauth-client-id-metadata-document §4: fetch, cache. */
	frc = cimd_fetch(db, cfg, client_id, akey, err);
	/* Rate limited: a stale cached copy still serves (no lock-out). */
	if (frc == CIMD_RATE_LIMITED && rc == LOOKUP_FOUND)
		return 0;
	oauth_client_clear(c);
	if (frc != CIMD_STORED)
		return -1;
	if (oauth_client_load(db, client_id, c) != LOOKUP_FOUND)
		return error_set(err, "The client metadata document could not "
		    "be stored.");
	return 0;
}

/* Append &name=value (percent-encoded) to a URL being built. -1 if full. */
static int
add_param(char *url, size_t sz, const char *name, const char *value)
{
	char	enc[LOCATION_MAX];
	size_t	len = strlen(url);
	int	n;

	if (value == NULL)
		return 0;
	if (form_encode(value, enc, sizeof(enc)) < 0)
		return -1;
	n = snprintf(url + len, sz - len, "%c%s=%s",
	    strchr(url, '?') != NULL ? '&' : '?', name, enc);
	return n < 0 || (size_t)n >= sz - len ? -1 : 0;
}

/*
 * Send the browser back to the client (RFC 6749 §4.1.2 and §4.1.2.1) with
 * the given parameters, state, and iss (RFC 9207 §2). 303 so that a POST
 * becomes a GET.
 */
static void
redirect_back(struct http_req *r, const struct config *cfg, const char *to,
    const char *code, const char *error, const char *desc, const char *state)
{
	char url[LOCATION_MAX];

	if (snprintf(url, sizeof(url), "%s", to) >= (int)sizeof(url) ||
	    add_param(url, sizeof(url), "code", code) == -1 ||
	    add_param(url, sizeof(url), "error", error) == -1 ||
	    add_param(url, sizeof(url), "error_description", desc) == -1 ||
	    add_param(url, sizeof(url), "state", state) == -1 ||
	    add_param(url, sizeof(url), "iss", cfg->public_origin) == -1) {
		signin_error(r, 400, "Request too large", "The response to the "
		    "application does not fit in a URL.");
		return;
	}
	http_header_add(r, "Location", url);
	http_header_add(r, "Cache-Control", "no-store");
	http_header_add(r, "Referrer-Policy", "no-referrer");
	http_send(r, 303, "text/plain; charset=utf-8", "", 0);
}

/* Printable ASCII only (RFC 6749 Appendix A: state is VSCHAR). */
static bool
vschar(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

/* The name of the CSRF cookie of one request: different tabs don't clash. */
static void
cookie_name(const char *id_hash, char out[32])
{
	snprintf(out, 32, "cs_signin_%.12s", id_hash);
}

static void
show_page(struct http_req *r, const struct config *cfg, int status,
    const struct oauth_client *c, const char *client_id,
    const char *redirect_to, const char *request_id, const char *message)
{
	char		origin[OAUTH_MAX_URI + 1], host[OAUTH_MAX_URI + 1];
	struct signin	s;

	if (oauth_redirect_origin(redirect_to, origin, sizeof(origin), host,
	    sizeof(host)) == -1) {
		signin_error(r, 400, "Invalid redirect URI", "The redirect URI "
		    "cannot be parsed.");
		return;
	}
	memset(&s, 0, sizeof(s));
	s.unknown_host = !oauth_redirect_known(cfg, redirect_to, host,
	    sizeof(host));
	s.client_name = c != NULL ? c->name : NULL;
	s.client_id = client_id;
	s.redirect_host = host;
	s.form_origin = origin;
	s.request_id = request_id;
	s.message = message;
	signin_page(r, status, &s);
}

/*
 * Has the owner signed in this client through this redirect URI before
 * (sql/018-redirect-approval.sql)? Approval of another of its URIs, or
 * from before its redirect_uris changed, does not count.
 */
static bool
approved_for(struct db *db, const struct oauth_client *c, const char *to)
{
	char v[32];

	return db_get_text(db, STMT_APPROVAL_GET, v, sizeof(v), "tt",
	    c->client_id, to) == LOOKUP_FOUND;
}

/*
 * An error after the client and redirect URI were validated: sent back to
 * the client (RFC 6749 §4.1.2.1) when the owner approved it before for
 * this redirect URI, shown on a page otherwise (RFC 9700 §4.11.2).
 */
static void
authz_error(struct http_req *r, const struct config *cfg, struct db *db,
    const struct oauth_client *c, const char *to, const char *error,
    const char *desc, const char *state)
{
	char detail[512];

	if (approved_for(db, c, to)) {
		redirect_back(r, cfg, to, NULL, error, desc, state);
		return;
	}
	snprintf(detail, sizeof(detail), "%s (%s)", desc, error);
	signin_error(r, 400, "Invalid sign-in request", detail);
}

/* The authorization request's query, parsed; NULL having answered. */
static struct form *
get_form(struct http_req *r)
{
	struct form	*f;
	struct error	 err;
	const char	*q = http_query(r);

	if (strlen(q) > QUERY_MAX) {
		signin_error(r, 414, "Request too large", "The authorization "
		    "request is too long.");
		return NULL;
	}
	if ((f = form_parse(q, strlen(q), &err)) == NULL) {
		signin_error(r, 400, "Invalid request", err.msg);
		return NULL;
	}
	return f;
}

/*
 * RFC 6749 §4.1.2.1: the client, its redirect URI and the state first,
 * their errors shown, never redirected. 0 with c loaded and a's client,
 * redirect and state set, or -1 having answered.
 */
static int
get_client(struct http_req *r, const struct config *cfg, struct db *db,
    struct form *f, const char *akey, struct oauth_client *c, struct authz *a)
{
	struct error	 err;
	const char	*given;

	a->client_id = form_get(f, "client_id");
	if (a->client_id == NULL || client_find(db, cfg, a->client_id, akey, c,
	    &err) == -1) {
		signin_error(r, 400, "Unknown application", a->client_id == NULL ?
		    "The request names no client_id." : err.msg);
		return -1;
	}
	given = form_get(f, "redirect_uri");
	if ((a->redirect_to = oauth_client_redirect(c, given)) == NULL) {
		signin_error(r, 400, "Invalid redirect URI", given == NULL ?
		    "The request names no redirect_uri and the application "
		    "registered more than one." : "This redirect URI is not "
		    "registered for the application.");
		return -1;
	}
	a->redirect_uri = given != NULL ? given : "";
	a->state = form_get(f, "state");
	if (a->state != NULL && (strlen(a->state) > OAUTH_MAX_STATE ||
	    !vschar(a->state))) {
		authz_error(r, cfg, db, c, a->redirect_to, "invalid_request",
		    "state is too long or not printable ASCII.", NULL);
		return -1;
	}
	return 0;
}

/*
 * The rest of the request, whose errors go back to the client (§4.1.2.1):
 * response_type, PKCE, scope and resource into a. 0, or -1 having answered.
 */
static int
get_params(struct http_req *r, const struct config *cfg, struct db *db,
    struct form *f, const struct oauth_client *c, struct authz *a)
{
	const char	*rtype, *method, *scope;

	if ((rtype = form_get(f, "response_type")) == NULL) {
		authz_error(r, cfg, db, c, a->redirect_to, "invalid_request",
		    "response_type is missing.", a->state);
		return -1;
	}
	if (strcmp(rtype, "code") != 0) {
		authz_error(r, cfg, db, c, a->redirect_to,
		    "unsupported_response_type", "Only response_type=code.", a->state);
		return -1;
	}
	/* OAuth 2.1 §4.1.1 and MCP: PKCE is mandatory, S256 only (RFC 7636 §4.3). */
	a->challenge = form_get(f, "code_challenge");
	method = form_get(f, "code_challenge_method");
	if (a->challenge == NULL) {
		authz_error(r, cfg, db, c, a->redirect_to, "invalid_request",
		    "PKCE is required: send code_challenge with "
		    "code_challenge_method=S256.", a->state);
		return -1;
	}
	if (method == NULL || strcmp(method, "S256") != 0) {
		authz_error(r, cfg, db, c, a->redirect_to, "invalid_request",
		    "code_challenge_method must be S256.", a->state);
		return -1;
	}
	if (!oauth_pkce_challenge_valid(a->challenge)) {
		authz_error(r, cfg, db, c, a->redirect_to, "invalid_request",
		    "code_challenge must be 43 base64url characters.", a->state);
		return -1;
	}
	/* Unknown scope values are ignored (Claude sends "claudeai"). */
	scope = form_get(f, "scope");
	if (scope != NULL && strlen(scope) > OAUTH_MAX_SCOPE) {
		authz_error(r, cfg, db, c, a->redirect_to, "invalid_scope",
		    "scope is too long.", a->state);
		return -1;
	}
	a->scope = OAUTH_SCOPE;
	/* RFC 8707 §2: the only resource here is this server's MCP endpoint. */
	a->resource = form_get(f, "resource");
	if (a->resource == NULL)
		a->resource = cfg->mcp_url;
	else if (strcmp(a->resource, cfg->mcp_url) != 0) {
		log_refusal(LOG_REFUSE_RESOURCE, cfg->mcp_url, a->resource);
		authz_error(r, cfg, db, c, a->redirect_to, "invalid_target",
		    "resource must be this server's MCP URL.", a->state);
		return -1;
	}
	return 0;
}

/* With SANDBOX_REDIRECT_UNKNOWN=refuse, an unknown redirect host: -1 having answered. */
static int
get_host(struct http_req *r, const struct config *cfg, const struct authz *a)
{
	char	host[OAUTH_MAX_URI + 1];
	char	detail[OAUTH_MAX_URI + 160];

	if (!cfg->redirect_refuse || oauth_redirect_known(cfg, a->redirect_to,
	    host, sizeof(host)))
		return 0;
	snprintf(detail, sizeof(detail), "This server does not sign in "
	    "applications that send you to %s (SANDBOX_REDIRECT_HOSTS).", host);
	signin_error(r, 403, "Unknown redirect host", detail);
	return -1;
}

/*
 * Store the validated request under a new id, with the hash of a new CSRF
 * cookie, and show the sign-in page carrying the id.
 */
static void
get_store(struct http_req *r, const struct config *cfg, struct db *db,
    const struct oauth_client *c, const struct authz *a, const char *akey,
    long long now)
{
	char	id[TOKEN_MAX], csrf[TOKEN_MAX], idh[CRYPTO_SHA256_HEX];
	char	csrfh[CRYPTO_SHA256_HEX], cname[32], cookie[256];

	csrf[0] = cookie[0] = '\0';
	db_exec(db, STMT_REQUEST_PRUNE, "i", now);
	if (oauth_new_token("", id) == -1 || oauth_new_token("", csrf) == -1) {
		signin_error(r, 500, "Server error", "No randomness available.");
		goto out;
	}
	oauth_hash(id, idh);
	oauth_hash(csrf, csrfh);
	if (db_exec(db, STMT_REQUEST_INSERT, "ttttttttti", idh, csrfh,
	    a->client_id, a->redirect_uri, a->redirect_to, a->challenge, a->state,
	    a->scope, a->resource, now + OAUTH_REQUEST_TTL) != 1) {
		signin_error(r, 500, "Server error", "The request could not be stored.");
		goto out;
	}
	/*
	 * Per address at most PENDING_PER_ADDR open pages, and overall
	 * SANDBOX_PENDING_SIGNINS: past it the oldest of the address with the
	 * most go, so a flood of GETs evicts its own pages, not a person's.
	 */
	db_exec(db, STMT_REQUEST_SET_ADDR, "tt", akey, idh);
	db_exec(db, STMT_REQUEST_CAP_ADDR, "ti", akey, (long long)PENDING_PER_ADDR);
	db_exec(db, STMT_REQUEST_CAP, "i", (long long)cfg->pending_max);
	/* The form's POST must carry this cookie: a cross-site form cannot. */
	cookie_name(idh, cname);
	snprintf(cookie, sizeof(cookie), "%s=%s; Path=/; Max-Age=%d; HttpOnly; "
	    "SameSite=Strict%s", cname, csrf, OAUTH_REQUEST_TTL,
	    strncmp(cfg->public_url, "https:", 6) == 0 ? "; Secure" : "");
	http_header_add(r, "Set-Cookie", cookie);
	show_page(r, cfg, 200, c, a->client_id, a->redirect_to, id, NULL);
out:
	crypto_wipe(csrf, sizeof(csrf));
	crypto_wipe(cookie, sizeof(cookie));
}

/* GET: validate, store the request, show the sign-in page. */
static void
authorize_get(struct http_req *r, const struct config *cfg, struct db *db)
{
	struct form		*f;
	struct oauth_client	 c;
	struct authz		 a;
	char			 addr[CLIENTADDR_MAX], akey[CLIENTADDR_MAX];
	long long		 now = oauth_now();

	memset(&c, 0, sizeof(c));
	memset(&a, 0, sizeof(a));
	oauth_client_addr(r, cfg, addr, akey);
	if ((f = get_form(r)) == NULL)
		return;
	if (get_client(r, cfg, db, f, akey, &c, &a) == -1 ||
	    get_params(r, cfg, db, f, &c, &a) == -1 || get_host(r, cfg, &a) == -1)
		goto out;
	get_store(r, cfg, db, &c, &a, akey, now);
out:
	oauth_client_clear(&c);
	form_free(f);
}

/* One row of the sign-in audit (sql/009-signin.sql). Failures are logged only. */
static void
audit(struct db *db, const char *addr, const char *client_id,
    const struct oauth_client *c, const char *redirect_to, const char *result)
{
	char host[OAUTH_MAX_URI + 1];

	host[0] = '\0';
	if (redirect_to != NULL)
		(void)oauth_redirect_known(NULL, redirect_to, host, sizeof(host));
	if (strcmp(result, "throttled") == 0)
		db_exec(db, STMT_SIGNIN_THROTTLED, "itttt", oauth_now(), addr,
		    client_id != NULL ? client_id : "", c != NULL ? c->name :
		    NULL, host[0] != '\0' ? host : NULL);
	else
		db_exec(db, STMT_SIGNIN_INSERT, "itttt" "t", oauth_now(), addr,
		    client_id != NULL ? client_id : "", c != NULL ? c->name :
		    NULL, host[0] != '\0' ? host : NULL, result);
}

/* A sign-in form being checked (POST), and what its steps learn. */
struct post {
	struct http_req		*r;
	const struct config	*cfg;
	struct db		*db;
	long long		 now;
	char			 addr[CLIENTADDR_MAX], akey[CLIENTADDR_MAX];
	struct form		*f;
	const char		*id;		/* the request id it carries */
	char			 idh[CRYPTO_SHA256_HEX];
	struct db_request	 pend;		/* the stored request */
	struct oauth_client	 c;
	long long		 wait;		/* what a wrong key costs */
	char			 owner[OWNER_MAX];
};

static void
post_audit(struct post *p, const char *result)
{
	audit(p->db, p->addr, p->pend.client_id, &p->c, p->pend.redirect_to,
	    result);
}

/* Fetch metadata (sent by browsers): refuse cross-site form posts. -1 answered. */
static int
post_same_site(struct post *p)
{
	const char	*site = http_header(p->r, "Sec-Fetch-Site");
	const char	*origin = http_header(p->r, "Origin");

	if ((site != NULL && strcmp(site, "same-origin") != 0 &&
	    strcmp(site, "none") != 0) ||
	    (origin != NULL && strcmp(origin, "null") != 0 &&
	    strcmp(origin, p->cfg->public_origin) != 0)) {
		if (origin != NULL)
			log_refusal(LOG_REFUSE_ORIGIN, p->cfg->public_origin, origin);
		signin_error(p->r, 403, "Refused", "The sign-in form was posted "
		    "from another site.");
		return -1;
	}
	return 0;
}

/* The form, parsed into p->f: 0, or -1 having answered. */
static int
post_form(struct post *p)
{
	struct error	 err;
	const char	*body, *ctype = http_header(p->r, "Content-Type");
	size_t		 len;
	int		 status;

	if (ctype == NULL || strncasecmp(ctype,
	    "application/x-www-form-urlencoded", 33) != 0) {
		signin_error(p->r, 415, "Invalid request", "Expected a form.");
		return -1;
	}
	if (http_body(p->r, POST_MAX, &body, &len, &status) == -1) {
		signin_error(p->r, status, "Invalid request", "The form is too "
		    "large or malformed.");
		return -1;
	}
	if ((p->f = form_parse(body, len, &err)) == NULL) {
		signin_error(p->r, 400, "Invalid request", err.msg);
		return -1;
	}
	return 0;
}

/* The stored request the form names, into p->pend: 0, or -1 having answered. */
static int
post_request(struct post *p)
{
	p->id = form_get(p->f, "request");
	if (p->id == NULL || strlen(p->id) >= TOKEN_MAX) {
		signin_error(p->r, 400, "Invalid request", "The form is incomplete.");
		return -1;
	}
	oauth_hash(p->id, p->idh);
	switch (db_request_get(p->db, p->idh, p->now, &p->pend)) {
	case LOOKUP_ERROR:
		signin_error(p->r, 500, "Server error", "The database cannot be read.");
		return -1;
	case LOOKUP_NONE:
		signin_error(p->r, 400, "Sign-in expired", "This sign-in page has "
		    "expired or was already used.");
		return -1;
	case LOOKUP_FOUND:
		break;
	}
	return 0;
}

/* The CSRF cookie set with this request's page: 0, or -1 having answered. */
static int
post_csrf(struct post *p)
{
	char	cname[32], csrf[TOKEN_MAX], csrfh[CRYPTO_SHA256_HEX];
	int	rc = -1;

	csrf[0] = '\0';
	cookie_name(p->idh, cname);
	if (form_cookie(http_header(p->r, "Cookie"), cname, csrf,
	    sizeof(csrf)) == -1) {
		signin_error(p->r, 403, "Refused", "The sign-in cookie is missing: "
		    "cookies must be enabled, and the form posted from its page.");
		goto out;
	}
	oauth_hash(csrf, csrfh);
	if (p->pend.csrf_hash == NULL ||
	    !crypto_equal(csrfh, p->pend.csrf_hash, CRYPTO_SHA256_HEX - 1)) {
		signin_error(p->r, 403, "Refused", "The sign-in cookie does not "
		    "match this page.");
		goto out;
	}
	rc = 0;
out:
	crypto_wipe(csrf, sizeof(csrf));
	return rc;
}

/* The request's client, into p->c: 0, or -1 having answered. */
static int
post_client(struct post *p)
{
	if (oauth_client_load(p->db, p->pend.client_id, &p->c) != LOOKUP_FOUND) {
		signin_error(p->r, 400, "Unknown application", "The application's "
		    "registration is gone.");
		return -1;
	}
	return 0;
}

/* RFC 6749 §4.1.2.1: the person said no. True when so (answered). */
static bool
post_denied(struct post *p)
{
	const char *action = form_get(p->f, "action");

	if (action == NULL || strcmp(action, "deny") != 0)
		return false;
	db_exec(p->db, STMT_REQUEST_DELETE, "t", p->idh);
	post_audit(p, "denied");
	if (approved_for(p->db, &p->c, p->pend.redirect_to))
		redirect_back(p->r, p->cfg, p->pend.redirect_to, NULL,
		    "access_denied", "The sign-in was cancelled.", p->pend.state);
	else
		signin_error(p->r, 200, "Sign-in cancelled", "You cancelled "
		    "the sign-in; the application was not given access.");
	return true;
}

/* With SANDBOX_REDIRECT_UNKNOWN=refuse, an unknown redirect host: -1 having answered. */
static int
post_host(struct post *p)
{
	char	host[OAUTH_MAX_URI + 1];

	if (!p->cfg->redirect_refuse || oauth_redirect_known(p->cfg,
	    p->pend.redirect_to, host, sizeof(host)))
		return 0;
	post_audit(p, "refused_host");
	signin_error(p->r, 403, "Unknown redirect host", "This server does "
	    "not sign in applications that send you to this host "
	    "(SANDBOX_REDIRECT_HOSTS).");
	return -1;
}

/*
 * Growing delays per address, checked and counted before the key is:
 * 0 with p->wait when it may try now, or -1 having answered.
 */
static int
post_throttle(struct post *p)
{
	char	esc[128], retry[32];

	switch (oauth_throttle_take(p->db, p->akey, &p->wait)) {
	case OAUTH_THROTTLE_ERROR:
		/* No audit row: the database is what failed (logged by db.c). */
		log_warn("authorize: the throttle of %s cannot be checked; "
		    "refusing the try", log_escape(esc, sizeof(esc), p->akey,
		    strlen(p->akey)));
		http_header_add(p->r, "Retry-After", "5");
		show_page(p->r, p->cfg, 503, &p->c, p->pend.client_id,
		    p->pend.redirect_to, p->id, "The server is busy and could "
		    "not check the key; nothing was changed. Try again in a few "
		    "seconds.");
		return -1;
	case OAUTH_THROTTLE_WAIT:
		post_audit(p, "throttled");
		snprintf(retry, sizeof(retry), "%lld", p->wait);
		http_header_add(p->r, "Retry-After", retry);
		snprintf(esc, sizeof(esc), "Too many wrong keys: wait %lld "
		    "second%s, then try again.", p->wait, p->wait == 1 ? "" : "s");
		show_page(p->r, p->cfg, 429, &p->c, p->pend.client_id,
		    p->pend.redirect_to, p->id, esc);
		return -1;
	case OAUTH_THROTTLE_TRY:
		break;
	}
	return 0;
}

/* The API key, and whose it is (p->owner): 0, or -1 having answered. */
static int
post_key(struct post *p)
{
	const char	*key = form_get(p->f, "key");
	char		 a[CLIENTADDR_MAX * 2], esc[128];
	enum lookup_result found = LOOKUP_NONE;

	if (key != NULL && strlen(key) <= KEY_MAX &&
	    (found = owners_check_key(p->cfg, p->db, key, p->owner)) ==
	    LOOKUP_FOUND)
		return 0;
	if (found == LOOKUP_ERROR) {
		post_audit(p, "error");
		signin_error(p->r, 500, "Server error", "The key store "
		    "cannot be read.");
		return -1;
	}
	post_audit(p, "wrong_key");
	log_warn("authorize: wrong API key from %s for client %s; next "
	    "try in %lld s", log_escape(a, sizeof(a), p->addr, strlen(p->addr)),
	    p->pend.client_id, p->wait);
	snprintf(esc, sizeof(esc), "Wrong key. You can try again in %lld "
	    "second%s.", p->wait, p->wait == 1 ? "" : "s");
	show_page(p->r, p->cfg, 403, &p->c, p->pend.client_id,
	    p->pend.redirect_to, p->id, esc);
	return -1;
}

/*
 * In one transaction, the request used up (a second POST of the same page
 * fails), the code stored for the owner and the client approved: 0, or -1.
 */
static int
post_store_code(struct post *p, const char *codeh)
{
	struct db_request *q = &p->pend;

	if (db_begin(p->db) == -1)
		return -1;
	if (db_exec(p->db, STMT_REQUEST_DELETE, "t", p->idh) != 1 ||
	    db_exec(p->db, STMT_CODE_INSERT, "tttttti", codeh, q->client_id,
	    q->redirect_uri, q->challenge, q->scope, q->resource,
	    p->now + OAUTH_CODE_TTL) != 1 ||
	    db_exec(p->db, STMT_CODE_SET_OWNER, "tt", p->owner, codeh) != 1 ||
	    db_exec(p->db, STMT_CLIENT_APPROVE, "it", p->now, q->client_id) < 0 ||
	    db_exec(p->db, STMT_APPROVAL_ADD, "tti", q->client_id,
	    q->redirect_to, p->now) < 0 ||
	    db_commit(p->db) == -1) {
		db_rollback(p->db);
		return -1;
	}
	return 0;
}

/*
 * The key was right: RFC 6749 §4.1.2 and §10.5, a random, short-lived,
 * single-use code, sent back to the client.
 */
static void
post_grant(struct post *p)
{
	char	code[TOKEN_MAX], codeh[CRYPTO_SHA256_HEX];

	code[0] = '\0';
	db_exec(p->db, STMT_THROTTLE_CLEAR, "t", p->akey);
	if (oauth_new_token("", code) == -1) {
		signin_error(p->r, 500, "Server error", "No randomness available.");
		goto out;
	}
	oauth_hash(code, codeh);
	if (post_store_code(p, codeh) == -1) {
		post_audit(p, "error");
		signin_error(p->r, 503, "Server error", "The sign-in could not be "
		    "stored; nothing was changed. Try again in a few seconds.");
		goto out;
	}
	post_audit(p, "ok");
	log_info("authorize: signed in client %s for %s", p->pend.client_id,
	    p->owner);
	redirect_back(p->r, p->cfg, p->pend.redirect_to, code, NULL, NULL,
	    p->pend.state);
out:
	crypto_wipe(code, sizeof(code));
}

/* POST: the sign-in form. */
static void
authorize_post(struct http_req *r, const struct config *cfg, struct db *db)
{
	struct post	p;

	memset(&p, 0, sizeof(p));
	p.r = r;
	p.cfg = cfg;
	p.db = db;
	p.now = oauth_now();
	oauth_client_addr(r, cfg, p.addr, p.akey);
	if (post_same_site(&p) == -1 || post_form(&p) == -1)
		goto out;
	if (post_request(&p) == -1 || post_csrf(&p) == -1 ||
	    post_client(&p) == -1 || post_denied(&p) || post_host(&p) == -1 ||
	    post_throttle(&p) == -1 || post_key(&p) == -1)
		goto out;
	post_grant(&p);
out:
	oauth_client_clear(&p.c);
	db_request_clear(&p.pend);
	form_free(p.f);
}

void
oauth_authorize(struct http_req *r, const struct config *cfg, struct db *db)
{
	const char *m = http_method(r);

	if (strcmp(m, "GET") == 0)
		authorize_get(r, cfg, db);
	else if (strcmp(m, "POST") == 0)
		authorize_post(r, cfg, db);
	else {
		http_header_add(r, "Allow", "GET, POST");
		http_send_error(r, 405, "Use GET (or POST the sign-in form).");
	}
}
