/*
 * cimd.c: Client ID Metadata Documents (MCP authorization 2025-11-25
 * "Client ID Metadata Documents"; draft-ietf-oauth-client-id-metadata-document).
 *
 * A client_id that is an https URL names a JSON document describing the
 * client. Fetching a URL chosen by whoever sends an authorization request is
 * a server-side request forgery risk, so the fetch is boxed in:
 *   - https only, on the URL's own port; no redirects; no proxy;
 *   - the host is resolved here, every address must be public (not
 *     loopback, private, link-local, shared, multicast, reserved,
 *     documentation) or one the operator allows for an internal client
 *     registry (SANDBOX_CIMD_ALLOW_ADDRS, off by default; TLS to those is
 *     verified against SANDBOX_CIMD_CA when set, never the system's store
 *     and that CA mixed), and the connection goes to the address checked
 *     (CURLOPT_RESOLVE, and a socket opener that refuses any other: no
 *     second lookup), with TLS verified against the
 *     system's CA store and the URL's host name (SNI);
 *   - the name lookup gets CIMD_DNS_MS (getaddrinfo_a, cancelled past it);
 *     the fetch 5 s in all, 16 KiB at most;
 *   - fetches are counted per minute, overall and per host
 *     (SANDBOX_CIMD_FETCHES_PER_MINUTE, a fifth of it per host), so that
 *     requests naming many documents cannot keep workers busy fetching;
 *     misses are counted per client address first (a fifth too), and
 *     the overall and per-host budgets count only fetches made, so one
 *     address cannot block every first-time client.
 * The validated document is cached in oauth_client (cimd = 1) and fetched
 * again after an hour (oauth.c).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/clientaddr.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "base/url.h"
#include "base/xfer.h"
#include "http/http.h"
#include "oauth/cimd.h"
#include "oauth/extern.h"
#include "oauth/oauth.h"
#include "store/db.h"

#define CIMD_TIMEOUT_MS		5000
#define CIMD_CONNECT_MS		3000
#define CIMD_DNS_MS		2000

bool
cimd_is_url(const char *id)
{
	const char	*path, *p;
	char		 why[128];

	/* §3: https, a path, no fragment, no user info, no dot segments. */
	if (strlen(id) > OAUTH_MAX_CLIENT_ID || strncmp(id, "https://", 8) != 0 ||
	    !oauth_redirect_valid(id, why, sizeof(why)))
		return false;
	if ((path = strchr(id + 8, '/')) == NULL || path[1] == '\0' ||
	    strchr(id, '?') != NULL)
		return false;
	for (p = path; *p != '\0'; p++)
		if (p[0] == '/' && p[1] == '.' && (p[2] == '/' || p[2] == '\0' ||
		    (p[2] == '.' && (p[3] == '/' || p[3] == '\0'))))
			return false;
	return true;
}

static bool
v4_public(const uint8_t a[4])
{
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 |
	    (uint32_t)a[2] << 8 | a[3];
	static const struct { uint32_t net; int bits; } deny[] = {
		{ 0x00000000, 8 },	/* "this" network */
		{ 0x0a000000, 8 },	/* private */
		{ 0x64400000, 10 },	/* shared (CGNAT) */
		{ 0x7f000000, 8 },	/* loopback */
		{ 0xa9fe0000, 16 },	/* link-local, cloud metadata */
		{ 0xac100000, 12 },	/* private */
		{ 0xc0000000, 24 },	/* IETF protocol assignments */
		{ 0xc0000200, 24 },	/* documentation */
		{ 0xc0586300, 24 },	/* 6to4 relay */
		{ 0xc0a80000, 16 },	/* private */
		{ 0xc6120000, 15 },	/* benchmarking */
		{ 0xc6336400, 24 },	/* documentation */
		{ 0xcb007100, 24 },	/* documentation */
		{ 0xe0000000, 4 },	/* multicast */
		{ 0xf0000000, 4 },	/* reserved, broadcast */
	};
	size_t i;

	for (i = 0; i < sizeof(deny) / sizeof(deny[0]); i++)
		if ((v & (0xffffffffu << (32 - deny[i].bits))) == deny[i].net)
			return false;
	return true;
}

bool
cimd_addr_public(int family, const void *addr)
{
	const uint8_t *a = addr;

	if (family == AF_INET)
		return v4_public(a);
	if (family != AF_INET6)
		return false;
	/* ::ffff:a.b.c.d and 64:ff9b::a.b.c.d carry an IPv4 address. */
	if (memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0 ||
	    memcmp(a, "\0\x64\xff\x9b\0\0\0\0\0\0\0\0", 12) == 0)
		return v4_public(a + 12);
	/* Only global unicast 2000::/3, less its special blocks. */
	if ((a[0] & 0xe0) != 0x20)
		return false;
	if ((a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x00 && a[3] == 0x00) ||	/* Teredo */
	    (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8) ||	/* documentation */
	    (a[0] == 0x20 && a[1] == 0x02) ||					/* 6to4 */
	    (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x00 && (a[3] & 0xf0) == 0x10)) /* ORCHID */
		return false;
	return true;
}

int
cimd_validate(const char *url, const char *doc, size_t len, char **name,
    struct json_object **redirect_uris, struct json_object **metadata,
    bool *refresh, struct error *err)
{
	struct json_object	*o, *uris, *g, *meta = NULL;
	const char		*s;
	char			 why[256];
	size_t			 i, n;
	bool			 code = false;
	int			 rc = -1;

	*name = NULL;
	*redirect_uris = *metadata = NULL;
	*refresh = false;
	if ((o = js_parse(doc, len, 8, err)) == NULL)
		return -1;
	if (!json_object_is_type(o, json_type_object)) {
		error_set(err, "The client metadata document is not a JSON object.");
		goto out;
	}
	/* §4.1: client_id must equal the document's URL exactly. */
	if ((s = js_str(o, "client_id")) == NULL || strcmp(s, url) != 0) {
		error_set(err, "The client metadata document's client_id is "
		    "not its own URL.");
		goto out;
	}
	/* §4.1: no shared secrets for a document anyone can read. */
	if (json_object_object_get_ex(o, "client_secret", NULL) ||
	    json_object_object_get_ex(o, "client_secret_expires_at", NULL) ||
	    ((s = js_str(o, "token_endpoint_auth_method")) != NULL &&
	    strcmp(s, "none") != 0)) {
		error_set(err, "The client metadata document asks for secret "
		    "or key based authentication; only \"none\" is supported.");
		goto out;
	}
	if ((uris = js_get(o, "redirect_uris", json_type_array)) == NULL ||
	    (n = json_object_array_length(uris)) == 0 ||
	    n > OAUTH_MAX_REDIRECT_URIS) {
		error_set(err, "The client metadata document has no usable "
		    "redirect_uris.");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(uris, i);

		if (!json_object_is_type(v, json_type_string) ||
		    !oauth_redirect_valid(json_object_get_string(v), why, sizeof(why))) {
			error_set(err, "The client metadata document has an "
			    "invalid redirect URI.");
			goto out;
		}
	}
	if ((g = js_get(o, "grant_types", json_type_array)) != NULL) {
		for (i = 0, n = json_object_array_length(g); i < n && i < 16; i++) {
			s = json_object_get_string(json_object_array_get_idx(g, i));
			if (s != NULL && strcmp(s, "authorization_code") == 0)
				code = true;
			if (s != NULL && strcmp(s, "refresh_token") == 0)
				*refresh = true;
		}
		if (!code) {
			error_set(err, "The client metadata document does not "
			    "use the authorization_code grant.");
			goto out;
		}
	}
	meta = json_object_new_object();
	js_set_str(meta, "client_id", url);
	if ((s = js_str_max(o, "client_name", OAUTH_MAX_NAME)) != NULL) {
		for (const char *p = s; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				goto noname;
		js_set_str(meta, "client_name", s);
		if ((*name = strdup(s)) == NULL) {
			error_set(err, "out of memory");
			goto out;
		}
	}
noname:
	js_set(meta, "redirect_uris", json_object_get(uris));
	js_set_str(meta, "token_endpoint_auth_method", "none");
	*redirect_uris = json_object_get(uris);
	*metadata = meta;
	meta = NULL;
	rc = 0;
out:
	json_object_put(meta);
	json_object_put(o);
	return rc;
}

/* A name lookup in flight: on the heap, since it may outlive the caller. */
struct lookup {
	struct gaicb	 cb;
	struct addrinfo	 hints;
	char		 host[256];
	char		 port[8];
};

/*
 * getaddrinfo with a deadline (getaddrinfo has none): 0 with *res (free
 * with freeaddrinfo), or -1. A lookup that can be neither finished nor
 * cancelled in time is left to finish on its own: its few hundred bytes
 * are not freed (rare, and bounded by the fetch rate).
 */
static int
lookup(const char *host, const char *port, struct addrinfo **res)
{
	struct lookup		*l;
	struct gaicb		*list[1];
	struct timespec		 ts = { CIMD_DNS_MS / 1000, (CIMD_DNS_MS % 1000) * 1000000L };
	int			 e;

	*res = NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL)
		return -1;
	snprintf(l->host, sizeof(l->host), "%s", host);
	snprintf(l->port, sizeof(l->port), "%s", port);
	l->hints.ai_family = AF_UNSPEC;
	l->hints.ai_socktype = SOCK_STREAM;
	l->cb.ar_name = l->host;
	l->cb.ar_service = l->port;
	l->cb.ar_request = &l->hints;
	list[0] = &l->cb;
	if (getaddrinfo_a(GAI_NOWAIT, list, 1, NULL) != 0) {
		free(l);
		return -1;
	}
	/* One wait: gai_suspend returns early only when the lookup ends. */
	while ((e = gai_suspend((const struct gaicb *const *)list, 1, &ts)) == EAI_INTR)
		;
	if ((e = gai_error(&l->cb)) == EAI_INPROGRESS) {
		if (gai_cancel(&l->cb) == EAI_NOTCANCELED) {
			log_warn("cimd: the lookup of %s outlived its deadline", l->host);
			return -1;	/* l stays with the resolver thread */
		}
		e = gai_error(&l->cb);
	}
	if (e == 0)
		*res = l->cb.ar_result;
	else if (l->cb.ar_result != NULL)
		freeaddrinfo(l->cb.ar_result);
	free(l);
	return e == 0 ? 0 : -1;
}

/*
 * Resolve host and choose the address to pin: every address must be
 * public or in allow (so that no answer in the set points inside
 * elsewhere). Writes the first address, numeric, into pin: the one
 * connected to; *internal: it is not public (allowed). 0 or -1 with err.
 */
static int
resolve_public(const char *host, const char *port, const char *allow,
    char *pin, size_t pinsz, bool *internal, struct error *err)
{
	struct addrinfo	*res = NULL, *ai;
	char		 addr[INET6_ADDRSTRLEN];
	int		 rc = -1;

	*internal = false;
	if (lookup(host, port, &res) == -1 || res == NULL)
		return error_set(err, "The client metadata document's host "
		    "does not resolve (within %d s).", CIMD_DNS_MS / 1000);
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		const void *a = ai->ai_family == AF_INET ?
		    (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr :
		    (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;

		if (cimd_addr_public(ai->ai_family, a))
			continue;
		if (allow[0] == '\0' || inet_ntop(ai->ai_family, a, addr,
		    sizeof(addr)) == NULL || !clientaddr_in_list(addr, allow)) {
			error_set(err, "The client metadata document's host "
			    "is not on a public address.");
			goto out;
		}
		if (ai == res)
			*internal = true;
	}
	if (inet_ntop(res->ai_family, res->ai_family == AF_INET ?
	    (const void *)&((struct sockaddr_in *)res->ai_addr)->sin_addr :
	    (const void *)&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr,
	    addr, sizeof(addr)) == NULL)
		goto out;
	snprintf(pin, pinsz, "%s", addr);
	rc = 0;
out:
	freeaddrinfo(res);
	return rc;
}

/* The fetch's state for libcurl's callbacks: the body, the pinned address. */
struct fetch {
	struct cimd_doc		*body;
	int			 family;
	unsigned char		 addr[16];
};

static size_t
fetch_write(char *p, size_t size, size_t n, void *arg)
{
	struct cimd_doc	*body = ((struct fetch *)arg)->body;

	if (size * n > CIMD_MAX_BYTES - body->len) {
		body->too_big = true;
		return 0;
	}
	memcpy(body->buf + body->len, p, size * n);
	body->len += size * n;
	return size * n;
}

/*
 * libcurl's socket opener: only the pinned address is connected to, whatever
 * libcurl was told (CURLOPT_RESOLVE pins it; this makes sure).
 */
static curl_socket_t
fetch_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	const struct fetch	*f = arg;
	const void		*ip;

	if (purpose != CURLSOCKTYPE_IPCXN || a->family != f->family)
		return CURL_SOCKET_BAD;
	ip = a->family == AF_INET ?
	    (const void *)&((struct sockaddr_in *)&a->addr)->sin_addr :
	    (const void *)&((struct sockaddr_in6 *)&a->addr)->sin6_addr;
	if (memcmp(ip, f->addr, a->family == AF_INET ? 4 : 16) != 0)
		return CURL_SOCKET_BAD;
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* libcurl's progress callback: a worker told to stop ends the fetch. */
static int
fetch_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c,
    curl_off_t d)
{
	(void)arg, (void)a, (void)b, (void)c, (void)d;
	return http_stopping() ? 1 : 0;
}

/* See cimd.h. */
int
cimd_fetch_at(const char *host, const char *addr, const char *port, const char *path,
    const char *ca, struct cimd_doc *body, struct error *err)
{
	struct fetch		 f = { .body = body };
	struct curl_slist	*hdrs = NULL, *resolve = NULL;
	CURL			*e = NULL;
	char			 url[2400], pin[600], errbuf[CURL_ERROR_SIZE];
	char			 hesc[300];
	const char		*why;
	long			 status = 0;
	int			 k, rc = -1;
	CURLcode		 res;

	if (ca == NULL)
		ca = getenv("SSL_CERT_FILE");
	f.family = strchr(addr, ':') != NULL ? AF_INET6 : AF_INET;
	k = snprintf(url, sizeof(url), "https://%s%s%s:%s%s",
	    f.family == AF_INET6 && host[0] != '[' && strchr(host, ':') != NULL ?
	    "[" : "", host, f.family == AF_INET6 && host[0] != '[' &&
	    strchr(host, ':') != NULL ? "]" : "", port, path);
	if (k < 0 || (size_t)k >= sizeof(url)) {
		error_set(err, "The client_id is too long.");
		return -1;
	}
	snprintf(pin, sizeof(pin), f.family == AF_INET6 ? "%s:%s:[%s]" :
	    "%s:%s:%s", host, port, addr);
	if (inet_pton(f.family, addr, f.addr) != 1 ||
	    (e = curl_easy_init()) == NULL ||
	    (hdrs = curl_slist_append(NULL, "Accept: application/json")) == NULL ||
	    /* A host that is an address literal needs no pin (and takes none). */
	    (strchr(host, ':') == NULL &&
	    (resolve = curl_slist_append(NULL, pin)) == NULL) ||
	    xfer_defaults(e, errbuf) == -1 ||
	    curl_easy_setopt(e, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https") != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_RESOLVE, resolve) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, fetch_socket) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &f) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)CIMD_TIMEOUT_MS) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)CIMD_CONNECT_MS) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)CIMD_MAX_BYTES) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, fetch_write) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_WRITEDATA, &f) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, fetch_progress) != CURLE_OK ||
	    (ca != NULL && *ca != '\0' &&
	    curl_easy_setopt(e, CURLOPT_CAINFO, ca) != CURLE_OK)) {
		error_set(err, "out of memory");
		goto out;
	}
	res = curl_easy_perform(e);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	if (res == CURLE_OK && status != 200) {
		error_set(err, "The client metadata document answered HTTP %ld.",
		    status);
		goto out;
	}
	if (res != CURLE_OK && (body->too_big ||
	    res == CURLE_FILESIZE_EXCEEDED)) {
		/* Only after a verified TLS handshake with the named host. */
		error_set(err, "The client metadata document could not be "
		    "fetched: it is too large.");
		goto out;
	}
	if (res != CURLE_OK) {
		/*
		 * The caller (anyone on the internet) learns only that it
		 * failed: naming a refused connection, a timeout or a TLS
		 * failure would make this a relay for scanning public hosts
		 * and ports. The detail goes to the log, whose lines are
		 * bounded by the fetch rates (cimd_fetch).
		 */
		why = res == CURLE_OPERATION_TIMEDOUT ?
		    "no complete answer within 5 s" : xfer_reason(res, errbuf);
		log_warn("cimd: fetching from %s (%s) failed: %.300s",
		    log_escape(hesc, sizeof(hesc), host, strlen(host)), addr,
		    why);
		error_set(err, "The client metadata document could not be "
		    "fetched.");
		goto out;
	}
	rc = 0;
out:
	if (e != NULL)
		curl_easy_cleanup(e);
	curl_slist_free_all(hdrs);
	curl_slist_free_all(resolve);
	return rc;
}

enum cimd_fetched
cimd_fetch(struct db *db, const struct config *cfg, const char *url,
    const char *akey, struct error *err)
{
	struct cimd_doc		*body = NULL;
	struct json_object	*uris = NULL, *meta = NULL;
	struct url		 u;
	char			 host[256], port[8] = "443", pin[512], *name = NULL;
	char			 key[300];
	const char		*path;
	char			*pathbuf = NULL;
	long			 per_host;
	long long		 n;
	bool			 refresh, internal;
	enum cimd_fetched	 rc = CIMD_FAILED;

	if (!cimd_is_url(url) || url_split(url, &u) == -1) {
		error_set(err, "The client_id is not a valid metadata "
		    "document URL.");
		return CIMD_FAILED;
	}
	if (u.hostlen >= sizeof(host) || u.portlen >= sizeof(port)) {
		error_set(err, "The client_id's host is invalid.");
		return CIMD_FAILED;
	}
	snprintf(host, sizeof(host), "%.*s", (int)u.hostlen, u.host);
	if (u.port != NULL)
		snprintf(port, sizeof(port), "%.*s", (int)u.portlen, u.port);
	/*
	 * Misses per client address (a fifth of the budget), counted first:
	 * one address cannot spend the budget of others. The overall and
	 * per-host budgets count only fetches made, after the host resolved
	 * to public addresses: names that resolve nowhere spend no one's.
	 */
	per_host = cfg->cimd_per_minute / 5 > 0 ? cfg->cimd_per_minute / 5 : 1;
	snprintf(key, sizeof(key), "cimd-miss:%s", akey);
	if ((n = oauth_rate_hit(db, key, 60)) == -1 || n > per_host) {
		error_set(err, "Too many client metadata documents were looked "
		    "up from this address in the last minute; try again in a "
		    "minute.");
		return CIMD_RATE_LIMITED;
	}
	if (resolve_public(host, port, cfg->cimd_allow_addrs, pin, sizeof(pin),
	    &internal, err) == -1)
		return CIMD_FAILED;
	/* Host names compare without case: one counter per host. */
	snprintf(key, sizeof(key), "cimd:%s", host);
	for (char *k = key; *k != '\0'; k++)
		*k = (char)tolower((unsigned char)*k);
	if ((n = oauth_rate_hit(db, "cimd:*", 60)) == -1 ||
	    n > cfg->cimd_per_minute ||
	    (n = oauth_rate_hit(db, key, 60)) == -1 || n > per_host) {
		error_set(err, "Too many client metadata documents were fetched "
		    "in the last minute; try again in a minute.");
		return CIMD_RATE_LIMITED;
	}
	/* The request target: the URL's path (cimd_is_url: no query). */
	path = u.rest;
	if ((pathbuf = strndup(path, strcspn(path, "#"))) == NULL ||
	    (body = calloc(1, sizeof(*body))) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	if (cimd_fetch_at(host, pin, port, pathbuf, internal &&
	    cfg->cimd_ca[0] != '\0' ? cfg->cimd_ca : NULL, body, err) == -1)
		goto out;
	if (cimd_validate(url, body->buf, body->len, &name, &uris, &meta,
	    &refresh, err) == -1)
		goto out;
	if (db_exec(db, STMT_CLIENT_UPSERT_CIMD, "ttttttiii", url, NULL, "none",
	    name, js_text(uris, NULL), js_text(meta, NULL), (long long)refresh,
	    1LL, oauth_now()) != 1) {
		error_set(err, "The client metadata document could not be stored.");
		goto out;
	}
	log_info("cimd: fetched the metadata document of %s", url);
	rc = CIMD_STORED;
out:
	free(name);
	json_object_put(uris);
	json_object_put(meta);
	free(pathbuf);
	free(body);
	return rc;
}
