/*
 * links.c: see links.h for the URL and signature design.
 *
 * Why the path is signed but not in the URL: the row in the database says
 * what a link serves, and the signature ties the URL to that row, so neither
 * a changed URL nor a changed row (short of the key) serves another file.
 * Operators may shorten a link's life or revoke it in the database; the
 * earlier of the URL's and the row's expiry applies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/crypto.h"
#include "base/form.h"
#include "base/log.h"
#include "links/links.h"
#include "sandbox/files.h"
#include "store/db.h"
#include "store/db_links.h"

_Static_assert(DB_PATH_MAX == LINK_PATH_MAX && DB_OWNER_MAX == OWNER_MAX &&
    sizeof(((struct db_link *)0)->archive) ==
    sizeof(((struct link_row *)0)->archive), "a stored link fits a link_row");

static const char legacy_label[] = "code-sandbox download links v1";
static const char key_label[] = "code-sandbox links v2";
static const char sig_label[] = "code-sandbox link v1";

/* Links that expired this long ago are deleted when a new one is made. */
#define PRUNE_AFTER	(30LL * 86400)
/* The links' secret: 32 random bytes, as base64url text. */
#define SECRET_BYTES	32
#define SECRET_LEN	43

void
links_legacy_key(const char *api_key, uint8_t key[LINK_KEY_LEN])
{
	crypto_hmac_sha256(api_key, strlen(api_key), legacy_label,
	    sizeof(legacy_label) - 1, key);
}

/*
 * The links' secret into out: read, or made once (RAND_bytes) and read
 * back, so that programs starting together agree on the first one stored
 * (INSERT OR IGNORE). Read on every use, not kept: deleting the row
 * invalidates every link at once, without a restart. 0, or -1 (logged).
 */
static int
links_secret(struct db *db, char out[SECRET_LEN + 1])
{
	char			 fresh[SECRET_LEN + 1];
	enum lookup_result	 lr;
	int			 rc = -1;

	lr = db_get_text(db, STMT_LINK_SECRET_GET, out, SECRET_LEN + 1, "");
	if (lr == LOOKUP_NONE) {
		if (crypto_token(fresh, sizeof(fresh), SECRET_BYTES) == -1) {
			log_warn("links: no randomness for the links' secret");
			return -1;
		}
		if (db_exec(db, STMT_LINK_SECRET_ADD, "ti", fresh,
		    (long long)time(NULL)) < 0)
			goto out;
		lr = db_get_text(db, STMT_LINK_SECRET_GET, out, SECRET_LEN + 1,
		    "");
	}
	if (lr != LOOKUP_FOUND)
		goto out;
	if (strlen(out) != SECRET_LEN) {
		log_warn("links: the links' secret in the database is not "
		    "%d characters; delete the row to make a new one",
		    SECRET_LEN);
		goto out;
	}
	rc = 0;
out:
	crypto_wipe(fresh, sizeof(fresh));
	if (rc == -1)
		crypto_wipe(out, SECRET_LEN + 1);
	return rc;
}

int
links_key(struct db *db, const char *api_key, bool legacy,
    uint8_t key[LINK_KEY_LEN])
{
	char	 secret[SECRET_LEN + 1], *msg;
	size_t	 n;

	if (legacy) {
		links_legacy_key(api_key, key);
		return 0;
	}
	if (links_secret(db, secret) == -1)
		return -1;
	/* label NUL api_key: the API key is mixed in, so rotating it still
	   invalidates every link; the secret is what an attacker lacks. */
	n = sizeof(key_label) + strlen(api_key);
	if ((msg = malloc(n)) == NULL) {
		crypto_wipe(secret, sizeof(secret));
		return -1;
	}
	memcpy(msg, key_label, sizeof(key_label));
	memcpy(msg + sizeof(key_label), api_key, strlen(api_key));
	crypto_hmac_sha256(secret, SECRET_LEN, msg, n, key);
	crypto_wipe(msg, n);
	free(msg);
	crypto_wipe(secret, sizeof(secret));
	return 0;
}

/*
 * The signed message: label, id, expires and path, each followed by NUL.
 * None of them may contain NUL, so the encoding is unambiguous.
 */
static void
sign_raw(const uint8_t key[LINK_KEY_LEN], const char *id, long long expires,
    const char *path, const char *archive, uint8_t mac[CRYPTO_SHA256_LEN])
{
	char	 exp[24];
	char	*msg;
	size_t	 n, lid, lexp, lpath, larch, o = 0;

	lid = strlen(id);
	lexp = (size_t)snprintf(exp, sizeof(exp), "%lld", expires);
	lpath = strlen(path);
	/* A folder's archive kind follows the path (links_create_archive). */
	larch = archive != NULL && archive[0] != '\0' ? strlen(archive) + 1 : 0;
	n = sizeof(sig_label) + lid + 1 + lexp + 1 + lpath + 1 + larch;
	if ((msg = malloc(n)) == NULL) {
		/* Cannot sign: a MAC over nothing never matches a real one. */
		crypto_random(mac, CRYPTO_SHA256_LEN);
		return;
	}
	memcpy(msg + o, sig_label, sizeof(sig_label));
	o += sizeof(sig_label);
	memcpy(msg + o, id, lid + 1);
	o += lid + 1;
	memcpy(msg + o, exp, lexp + 1);
	o += lexp + 1;
	memcpy(msg + o, path, lpath + 1);
	o += lpath + 1;
	if (larch > 0) {
		memcpy(msg + o, archive, larch);
		o += larch;
	}
	crypto_hmac_sha256(key, LINK_KEY_LEN, msg, o, mac);
	free(msg);
}

static void
sign_kind(const uint8_t key[LINK_KEY_LEN], const char *id, long long expires,
    const char *path, const char *archive, char sig[LINK_SIG_LEN + 1])
{
	uint8_t mac[CRYPTO_SHA256_LEN];

	sign_raw(key, id, expires, path, archive, mac);
	crypto_b64url_encode(mac, sizeof(mac), sig);
}

void
links_sign(const uint8_t key[LINK_KEY_LEN], const char *id, long long expires,
    const char *path, char sig[LINK_SIG_LEN + 1])
{
	sign_kind(key, id, expires, path, NULL, sig);
}

bool
links_verify(const uint8_t key[LINK_KEY_LEN], const char *id, long long expires,
    const char *path, const char *sig)
{
	char	 want[LINK_SIG_LEN + 1];
	bool	 ok;

	links_sign(key, id, expires, path, want);
	/*
	 * Compare the text, in constant time: a link's signature has one
	 * spelling, so a non-canonical base64url twin is refused too.
	 */
	ok = strlen(sig) == LINK_SIG_LEN &&
	    crypto_equal(want, sig, LINK_SIG_LEN);
	crypto_wipe(want, sizeof(want));
	return ok;
}

static bool
is_b64url(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}

int
links_parse_signed(const char *const seg[3], const char *const end[3],
    char id[LINK_ID_LEN + 1], long long *expires, char sig[LINK_SIG_LEN + 1],
    struct error *err)
{
	size_t	n, i;

	n = (size_t)(end[0] - seg[0]);
	if (n != LINK_ID_LEN || !is_b64url(seg[0], n))
		return error_kind(err, ERR_INVALID, "The link is malformed (id).");
	memcpy(id, seg[0], n);
	id[n] = '\0';

	*expires = 0;
	n = (size_t)(end[1] - seg[1]);
	if (n > 12 || seg[1][0] == '0')
		return error_kind(err, ERR_INVALID, "The link is malformed (expiry).");
	for (i = 0; i < n; i++) {
		if (seg[1][i] < '0' || seg[1][i] > '9')
			return error_kind(err, ERR_INVALID,
			    "The link is malformed (expiry).");
		*expires = *expires * 10 + (seg[1][i] - '0');
	}

	n = (size_t)(end[2] - seg[2]);
	if (n != LINK_SIG_LEN || !is_b64url(seg[2], n))
		return error_kind(err, ERR_INVALID, "The link is malformed (signature).");
	memcpy(sig, seg[2], n);
	sig[n] = '\0';
	return 0;
}

int
links_parse(const char *path, struct link_url *u, struct error *err)
{
	const char	*seg[4], *end[4], *p;
	size_t		 i;
	long		 len;

	memset(u, 0, sizeof(*u));
	if (strncmp(path, "/dl/", 4) != 0)
		return error_kind(err, ERR_NOT_FOUND, "There is no such link.");
	p = path + 4;
	for (i = 0; i < 4; i++) {
		seg[i] = p;
		end[i] = strchrnul(p, '/');
		if (end[i] == p)
			return error_kind(err, ERR_NOT_FOUND, "There is no such link.");
		if (*end[i] == '/' && i == 3)
			return error_kind(err, ERR_NOT_FOUND, "There is no such link.");
		if (*end[i] == '\0' && i < 3)
			return error_kind(err, ERR_NOT_FOUND, "There is no such link.");
		p = end[i] + 1;
	}

	if (links_parse_signed(seg, end, u->id, &u->expires, u->sig, err) == -1)
		return -1;

	/* The name, percent-decoded (RFC 3986 §2.1). */
	if ((len = form_decode(seg[3], (size_t)(end[3] - seg[3]), false, u->name,
	    sizeof(u->name))) == -1 || memchr(u->name, '/', (size_t)len) != NULL)
		return error_kind(err, ERR_INVALID, "The link is malformed (name).");
	u->name_len = (size_t)len;
	return 0;
}

char *
links_url(const char *public_url, const char *id, long long expires,
    const char *sig, const char *path)
{
	char	 name[LINK_NAME_MAX * 3 + 1];
	char	*url;
	size_t	 n;

	if (form_encode(files_basename(path), name, sizeof(name)) < 0)
		return NULL;
	n = strlen(public_url) + strlen(id) + strlen(sig) + strlen(name) + 48;
	if ((url = malloc(n)) == NULL)
		return NULL;
	snprintf(url, n, "%s/dl/%s/%lld/%s/%s", public_url, id, expires, sig, name);
	return url;
}

static char *
create_kind(struct db *db, const char *api_key, const char *public_url,
    const char *path, const char *archive, long long size,
    const char *client_id, const char *owner, long long now, long ttl,
    struct link_row *row,
    struct error *err)
{
	uint8_t	 key[LINK_KEY_LEN];
	char	 sig[LINK_SIG_LEN + 1], name[LINK_NAME_MAX + 1];
	char	*url = NULL;
	size_t	 blen;

	memset(row, 0, sizeof(*row));
	blen = strlen(files_basename(path));
	if (path[0] != '/' || strlen(path) > LINK_PATH_MAX || blen == 0 ||
	    blen + (archive != NULL ? strlen(archive) + 1 : 0) > LINK_NAME_MAX) {
		error_set(err, "cannot share %s: the path is too long", path);
		return NULL;
	}
	if (crypto_token(row->id, sizeof(row->id), LINK_ID_BYTES) == -1) {
		error_set(err, "cannot make a link id: no randomness");
		return NULL;
	}
	memcpy(row->path, path, strlen(path) + 1);
	if (archive != NULL)
		snprintf(row->archive, sizeof(row->archive), "%s", archive);
	row->size = size;
	row->created = now;
	row->expires = now + ttl;

	if (links_key(db, api_key, false, key) == -1) {
		error_set(err, "cannot sign the link: the links' secret is "
		    "unavailable");
		return NULL;
	}
	sign_kind(key, row->id, row->expires, path, archive, sig);
	crypto_wipe(key, sizeof(key));
	/* links_url names the path's base name: for a folder, add the kind. */
	snprintf(name, sizeof(name), "/%s%s%s", files_basename(path),
	    archive != NULL ? "." : "", archive != NULL ? archive : "");
	if ((url = links_url(public_url, row->id, row->expires, sig, name)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	snprintf(row->owner, sizeof(row->owner), "%s", owner);
	if (db_exec(db, STMT_LINK_INSERT, "ttiiittt", row->id, path, size, now,
	    row->expires, client_id, owner, archive) != 1) {
		error_set(err, "cannot record the link in the database");
		free(url);
		url = NULL;
		goto out;
	}
	db_exec(db, STMT_LINK_PRUNE, "i", now - PRUNE_AFTER);
out:
	crypto_wipe(sig, sizeof(sig));
	return url;
}

char *
links_create(struct db *db, const char *api_key, const char *public_url,
    const char *path, long long size, const char *client_id,
    const char *owner, long long now, long ttl, struct link_row *row,
    struct error *err)
{
	return create_kind(db, api_key, public_url, path, NULL, size, client_id,
	    owner, now, ttl, row, err);
}

char *
links_create_archive(struct db *db, const char *api_key,
    const char *public_url, const char *path, const char *archive,
    const char *client_id, const char *owner, long long now, long ttl,
    struct link_row *row, struct error *err)
{
	if (strcmp(archive, "tar.gz") != 0 && strcmp(archive, "zip") != 0) {
		error_set(err, "unknown archive kind");
		return NULL;
	}
	return create_kind(db, api_key, public_url, path, archive, 0, client_id,
	    owner, now, ttl, row, err);
}

char *
links_create_terminal(struct db *db, const char *api_key,
    const char *public_url, const char *terminal_id, const char *client_id,
    const char *owner, long long now, long ttl, struct link_row *row,
    struct error *err)
{
	char path[LINK_PATH_MAX];

	snprintf(path, sizeof(path), "/terminal/%s", terminal_id);
	return create_kind(db, api_key, public_url, path, LINK_KIND_TERMINAL, 0,
	    client_id, owner, now, ttl, row, err);
}

int
links_owner_live(struct db *db, const char *owner, struct error *err)
{
	switch (owners_live(db, owner)) {
	case LOOKUP_FOUND:
		return 0;
	case LOOKUP_NONE:
		return error_kind(err, ERR_GONE, "This link has been revoked.");
	default:
		return error_kind(err, ERR_INTERNAL,
		    "The link cannot be checked now.");
	}
}

int
links_check(struct db *db, const char *api_key, const char *reqpath,
    long long now, struct link_row *row, struct error *err)
{
	struct link_url	 u;
	struct db_link	 l;
	uint8_t		 key[LINK_KEY_LEN];
	char		 want[LINK_SIG_LEN + 1];
	bool		 found = false, sig_ok;
	const char	*s;
	size_t		 n;
	enum lookup_result lr;

	memset(row, 0, sizeof(*row));
	if (links_parse(reqpath, &u, err) == -1)
		return -1;

	if ((lr = db_link_get(db, u.id, &l)) == LOOKUP_ERROR)
		return error_kind(err, ERR_INTERNAL, "The link cannot be checked now.");
	if (lr == LOOKUP_FOUND) {
		memcpy(row->path, l.path, sizeof(row->path));
		row->size = l.size;
		row->created = l.created;
		row->expires = l.expires;
		row->revoked = l.revoked;
		memcpy(row->owner, l.owner, sizeof(row->owner));
		memcpy(row->archive, l.archive, sizeof(row->archive));
		found = true;
	}
	memcpy(row->id, u.id, sizeof(row->id));

	/*
	 * Sign and compare whether or not the id was found, so an unknown id
	 * costs the same as a wrong signature. A link made before the links'
	 * secret keeps its API-key signature until it expires.
	 */
	if (links_key(db, api_key, found && l.legacy_key, key) == -1)
		return error_kind(err, ERR_INTERNAL, "The link cannot be checked now.");
	sign_kind(key, u.id, u.expires, found ? row->path : "",
	    found ? row->archive : NULL, want);
	crypto_wipe(key, sizeof(key));
	sig_ok = crypto_equal(want, u.sig, LINK_SIG_LEN);
	crypto_wipe(want, sizeof(want));
	if (!found || !sig_ok)
		return error_kind(err, ERR_DENIED, "This link is not valid.");

	/* The name: the base name, and for a folder its archive kind. */
	s = files_basename(row->path);
	n = strlen(s);
	if (u.name_len < n || memcmp(s, u.name, n) != 0 ||
	    (row->archive[0] == '\0' ? u.name_len != n :
	    u.name_len != n + 1 + strlen(row->archive) || u.name[n] != '.' ||
	    memcmp(u.name + n + 1, row->archive, strlen(row->archive)) != 0))
		return error_kind(err, ERR_DENIED, "This link is not valid.");
	if (now >= u.expires || now >= row->expires)
		return error_kind(err, ERR_GONE, "This link has expired.");
	if (row->revoked)
		return error_kind(err, ERR_GONE, "This link has been revoked.");
	return links_owner_live(db, row->owner, err);
}

void
links_count_download(struct db *db, const char *id, long long now)
{
	if (db_exec(db, STMT_LINK_COUNT, "it", now, id) != 1)
		log_warn("links: cannot count a download of link %s", id);
}

enum lookup_result
links_revoke(struct db *db, const char *id, const char *owner, long long now)
{
	long n;

	if ((n = db_exec(db, STMT_LINK_REVOKE_OWNED, "itt", now, id, owner)) < 0)
		return LOOKUP_ERROR;
	return n > 0 ? LOOKUP_FOUND : LOOKUP_NONE;
}
