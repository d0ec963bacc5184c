/*
 * previews.c: see previews.h for the URL, the origin and the signature.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/url.h"
#include "links/previews.h"
#include "store/db.h"
#include "store/db_links.h"

_Static_assert(DB_CLIENT_MAX == LINK_CLIENT_MAX && DB_OWNER_MAX == OWNER_MAX,
    "a stored preview fits a preview_row");

static const char sig_label[] = "code-sandbox preview link v1";
static const char b32[] = "abcdefghijklmnopqrstuvwxyz234567";

#define PRUNE_AFTER	(30LL * 86400)

bool
previews_https(const struct config *cfg)
{
	return strncmp(cfg->preview_url, "https://", 8) == 0;
}

const char *
previews_cookie(const struct config *cfg)
{
	return previews_https(cfg) ? PREVIEW_COOKIE_HTTPS : PREVIEW_COOKIE_HTTP;
}

int
previews_origin(const struct config *cfg, const char *id, char *out, size_t n,
    struct error *err)
{
	const char	*w = cfg->preview_url, *star, *rest;
	char		 probe[PREVIEW_ORIGIN_MAX];
	struct url	 u;
	long		 port = cfg->port;

	if (w[0] != '\0') {
		star = strstr(w, "://");
		if (star == NULL || star[3] != '*' || star[4] != '.' ||
		    strchr(star + 4, '*') != NULL)
			return error_set(err, "the SANDBOX_PREVIEW_URL setting "
			    "must be an origin whose host starts with \"*.\" "
			    "(https://*.preview.example.net)");
		rest = star + 4;
		if (snprintf(probe, sizeof(probe), "%.*s%s%s", (int)(star + 3 - w),
		    w, id, rest) >= (int)sizeof(probe) || (size_t)snprintf(out,
		    n, "%s", probe) >= n || url_split_origin(probe, &u) == -1)
			return error_set(err, "the SANDBOX_PREVIEW_URL setting "
			    "is not an origin (scheme://*.DOMAIN[:PORT], no "
			    "path): https://*.preview.example.net");
		return 0;
	}
	if (!config_host_is_loopback(cfg))
		return error_set(err, "previews need the SANDBOX_PREVIEW_URL "
		    "setting on a server that is not on loopback: a domain "
		    "of their own (not under the server's), with a wildcard "
		    "DNS record (*.preview.example.net) and a wildcard "
		    "certificate for it, routed by the web server to the "
		    "preview program (docs/links.md, \"Previews\")");
	if (url_split_origin(cfg->public_origin, &u) == 0 && u.port != NULL)
		port = strtol(u.port, NULL, 10);
	if ((size_t)snprintf(out, n, "http://%s.preview.localhost:%ld", id,
	    port) >= n)
		return error_set(err, "the preview's origin is too long");
	return 0;
}

int
previews_host_id(const char *host, size_t len, char id[PREVIEW_ID_LEN + 1])
{
	size_t i;

	if (len <= PREVIEW_ID_LEN || host[PREVIEW_ID_LEN] != '.')
		return -1;
	for (i = 0; i < PREVIEW_ID_LEN; i++)
		if (host[i] == '\0' || strchr(b32, host[i]) == NULL)
			return -1;
	memcpy(id, host, PREVIEW_ID_LEN);
	id[PREVIEW_ID_LEN] = '\0';
	return 0;
}

bool
previews_path_ok(const char *path)
{
	size_t i, n = strlen(path);

	if (n == 0 || n > PREVIEW_PATH_MAX || path[0] != '/' ||
	    (n > 1 && path[1] == '/'))
		return false;
	for (i = 0; i < n; i++)
		if (!url_char((unsigned char)path[i]) || path[i] == '#')
			return false;
	return true;
}

void
previews_sign(const uint8_t key[LINK_KEY_LEN], const char *id, long port,
    const char *owner, char sig[LINK_SIG_LEN + 1])
{
	uint8_t	 mac[CRYPTO_SHA256_LEN];
	char	 msg[sizeof(sig_label) + PREVIEW_ID_LEN + 12 + OWNER_MAX + 8];
	int	 n;

	n = snprintf(msg, sizeof(msg), "%s%c%s%c%ld%c%s", sig_label, 0, id, 0,
	    port, 0, owner);
	if (n < 0 || (size_t)n >= sizeof(msg))
		crypto_random(mac, sizeof(mac));	/* never matches */
	else
		crypto_hmac_sha256(key, LINK_KEY_LEN, msg, (size_t)n, mac);
	crypto_b64url_encode(mac, sizeof(mac), sig);
	crypto_wipe(mac, sizeof(mac));
	crypto_wipe(msg, sizeof(msg));
}

/* 16 random bytes as 26 characters of lowercase base32. */
static int
make_id(char id[PREVIEW_ID_LEN + 1])
{
	unsigned char	b[16];
	unsigned int	acc = 0, bits = 0;
	size_t		i, o = 0;

	if (crypto_random(b, sizeof(b)) == -1)
		return -1;
	for (i = 0; i < sizeof(b); i++) {
		acc = (acc << 8) | b[i];
		bits += 8;
		while (bits >= 5) {
			id[o++] = b32[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	if (bits > 0)
		id[o++] = b32[(acc << (5 - bits)) & 31];
	id[o] = '\0';
	return o == PREVIEW_ID_LEN ? 0 : -1;
}

char *
previews_create(struct db *db, const struct config *cfg, long port,
    const char *path, const char *client_id, const char *owner, long long now,
    long ttl, struct preview_row *row, struct error *err)
{
	uint8_t	 key[LINK_KEY_LEN];
	char	 sig[LINK_SIG_LEN + 1], origin[PREVIEW_ORIGIN_MAX];
	char	*url = NULL, seen[32];
	size_t	 n;

	memset(row, 0, sizeof(*row));
	if (db_get_text(db, STMT_PREVIEW_SEEN_GET, seen, sizeof(seen), "") ==
	    LOOKUP_ERROR) {
		error_set(err, "the database cannot be read");
		return NULL;
	}
	if (seen[0] == '\0' || strtoll(seen, NULL, 10) < now - PREVIEW_SEEN_S) {
		error_set(err, "this server does not serve previews: no "
		    "preview program has run here in the last %d s. The web "
		    "server in front must route preview hosts to it "
		    "(lighttpd, Caddy, nginx and Apache with mod_proxy can; "
		    "plain CGI and .htaccess-only hosting cannot): see the "
		    "front table in docs/links.md", PREVIEW_SEEN_S);
		return NULL;
	}
	if (!previews_path_ok(path) || strlen(client_id) > LINK_CLIENT_MAX ||
	    strlen(owner) >= OWNER_MAX) {
		error_set(err, "bad path");
		return NULL;
	}
	if (make_id(row->id) == -1) {
		error_set(err, "cannot make a link id: no randomness");
		return NULL;
	}
	if (previews_origin(cfg, row->id, origin, sizeof(origin), err) == -1)
		return NULL;
	row->port = port;
	memcpy(row->path, path, strlen(path) + 1);
	memcpy(row->client_id, client_id, strlen(client_id) + 1);
	memcpy(row->owner, owner, strlen(owner) + 1);
	row->created = now;
	row->expires = now + ttl;
	if (links_key(db, cfg->api_key, false, key) == -1) {
		error_set(err, "cannot sign the link: the links' secret is "
		    "unavailable");
		return NULL;
	}
	previews_sign(key, row->id, port, owner, sig);
	crypto_wipe(key, sizeof(key));
	n = strlen(origin) + sizeof(PREVIEW_PREFIX) + LINK_SIG_LEN +
	    strlen(path) + 1;
	if ((url = malloc(n)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	snprintf(url, n, "%s" PREVIEW_PREFIX "%s%s", origin, sig, path);
	if (db_exec(db, STMT_PREVIEW_INSERT, "tittiii", row->id, (long long)port,
	    path, owner, client_id, now, row->expires) != 1) {
		error_set(err, "cannot record the link in the database");
		free(url);
		url = NULL;
		goto out;
	}
	db_exec(db, STMT_PREVIEW_PRUNE, "i", now - PRUNE_AFTER);
out:
	crypto_wipe(sig, sizeof(sig));
	return url;
}

int
previews_check(struct db *db, const char *api_key, const char *id,
    const char *sig, size_t siglen, long long now, struct preview_row *row,
    struct error *err)
{
	struct db_preview	 p;
	uint8_t			 key[LINK_KEY_LEN];
	char			 want[LINK_SIG_LEN + 1];
	bool			 found = false, ok;
	enum lookup_result	 lr;

	memset(row, 0, sizeof(*row));
	if ((lr = db_preview_get(db, id, &p)) == LOOKUP_ERROR)
		return error_kind(err, ERR_INTERNAL, "The preview cannot be "
		    "checked now.");
	if (lr == LOOKUP_FOUND && strlen(p.path) <= PREVIEW_PATH_MAX) {
		found = true;
		snprintf(row->id, sizeof(row->id), "%s", id);
		row->port = (long)p.port;
		memcpy(row->path, p.path, strlen(p.path) + 1);
		memcpy(row->owner, p.owner, sizeof(row->owner));
		memcpy(row->client_id, p.client_id, sizeof(row->client_id));
		row->created = p.created;
		row->expires = p.expires;
		row->revoked = p.revoked;
	}
	/* Signed and compared whether or not the id was found. */
	if (links_key(db, api_key, false, key) == -1)
		return error_kind(err, ERR_INTERNAL, "The preview cannot be "
		    "checked now.");
	previews_sign(key, id, found ? row->port : 0, found ? row->owner : "",
	    want);
	crypto_wipe(key, sizeof(key));
	ok = siglen == LINK_SIG_LEN && crypto_equal(want, sig, LINK_SIG_LEN);
	crypto_wipe(want, sizeof(want));
	if (!found || !ok)
		return error_kind(err, ERR_DENIED, "This preview link is not "
		    "valid.");
	if (now >= row->expires)
		return error_kind(err, ERR_GONE, "This preview link has expired.");
	if (row->revoked)
		return error_kind(err, ERR_GONE, "This preview link has been "
		    "revoked.");
	return links_owner_live(db, row->owner, err);
}

void
previews_beat(struct db *db, long long now)
{
	db_exec(db, STMT_PREVIEW_SEEN, "i", now);
}
