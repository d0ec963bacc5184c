/*
 * uplinks.c: see uplinks.h for the URL and signature design. The shape
 * follows links.c (download links); the signed message differs in label
 * and in what it covers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/crypto.h"
#include "links/uplinks.h"
#include "store/db.h"
#include "store/db_links.h"

_Static_assert(DB_PATH_MAX == LINK_PATH_MAX && DB_CLIENT_MAX == LINK_CLIENT_MAX &&
    DB_OWNER_MAX == OWNER_MAX, "a stored upload link fits an uplink_row");

static const char sig_label[] = "code-sandbox upload link v1";

/* Links that expired this long ago are deleted when a new one is made. */
#define PRUNE_AFTER	(30LL * 86400)

void
uplinks_sign(const uint8_t key[LINK_KEY_LEN], const char *id, long long expires,
    const char *dir, long long max_bytes, bool overwrite,
    char sig[LINK_SIG_LEN + 1])
{
	uint8_t	 mac[CRYPTO_SHA256_LEN];
	char	 exp[24], max[24];
	char	*msg = NULL;
	size_t	 n, o = 0, l[6];
	const char *part[6];
	int	 i;

	snprintf(exp, sizeof(exp), "%lld", expires);
	snprintf(max, sizeof(max), "%lld", max_bytes);
	part[0] = sig_label;
	part[1] = id;
	part[2] = exp;
	part[3] = dir;
	part[4] = max;
	part[5] = overwrite ? "1" : "0";
	/* Each part followed by NUL: none holds NUL, so this is unambiguous. */
	for (n = 0, i = 0; i < 6; i++) {
		l[i] = strlen(part[i]);
		n += l[i] + 1;
	}
	if ((msg = malloc(n)) == NULL) {
		/* Cannot sign: a MAC over nothing never matches a real one. */
		crypto_random(mac, sizeof(mac));
	} else {
		for (i = 0; i < 6; i++) {
			memcpy(msg + o, part[i], l[i] + 1);
			o += l[i] + 1;
		}
		crypto_hmac_sha256(key, LINK_KEY_LEN, msg, o, mac);
		free(msg);
	}
	crypto_b64url_encode(mac, sizeof(mac), sig);
	crypto_wipe(mac, sizeof(mac));
}

int
uplinks_parse(const char *path, struct uplink_url *u, struct error *err)
{
	const char	*seg[3], *end[3], *p, *name;
	size_t		 i;
	long		 len;

	memset(u, 0, sizeof(*u));
	if (strncmp(path, "/up/", 4) != 0)
		return error_kind(err, ERR_NOT_FOUND, "There is no such link.");
	p = path + 4;
	for (i = 0; i < 3; i++) {
		seg[i] = p;
		end[i] = strchrnul(p, '/');
		if (end[i] == p || *end[i] != '/')
			return error_kind(err, ERR_NOT_FOUND, "There is no such link.");
		p = end[i] + 1;
	}
	name = p;
	if (strchr(name, '/') != NULL)
		return error_kind(err, ERR_NOT_FOUND, "There is no such link.");

	if (links_parse_signed(seg, end, u->id, &u->expires, u->sig, err) == -1)
		return -1;

	/* The file name, as sent: upload_name decodes and sanitises it. */
	if ((len = (long)strlen(name)) > UPLINK_NAME_MAX * 3)
		return error_kind(err, ERR_INVALID, "The file name is longer than %d "
		    "bytes.", UPLINK_NAME_MAX);
	memcpy(u->name, name, (size_t)len + 1);
	u->name_len = (size_t)len;
	return 0;
}

char *
uplinks_create(struct db *db, const char *api_key, const char *public_url,
    const char *dir, long long max_bytes, bool overwrite, const char *client_id,
    const char *owner, long long now, long ttl, struct uplink_row *row,
    struct error *err)
{
	uint8_t	 key[LINK_KEY_LEN];
	char	 sig[LINK_SIG_LEN + 1];
	char	*url = NULL;
	size_t	 n;

	memset(row, 0, sizeof(*row));
	if (dir[0] != '/' || strlen(dir) > LINK_PATH_MAX ||
	    strlen(client_id) > LINK_CLIENT_MAX) {
		error_set(err, "the folder path is too long");
		return NULL;
	}
	if (crypto_token(row->id, sizeof(row->id), LINK_ID_BYTES) == -1) {
		error_set(err, "cannot make a link id: no randomness");
		return NULL;
	}
	memcpy(row->dir, dir, strlen(dir) + 1);
	memcpy(row->client_id, client_id, strlen(client_id) + 1);
	row->max_bytes = max_bytes;
	row->overwrite = overwrite;
	row->created = now;
	row->expires = now + ttl;

	if (links_key(db, api_key, false, key) == -1) {
		error_set(err, "cannot sign the link: the links' secret is "
		    "unavailable");
		return NULL;
	}
	uplinks_sign(key, row->id, row->expires, dir, max_bytes, overwrite, sig);
	crypto_wipe(key, sizeof(key));
	n = strlen(public_url) + LINK_ID_LEN + LINK_SIG_LEN + 48;
	if ((url = malloc(n)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	snprintf(url, n, "%s/up/%s/%lld/%s/", public_url, row->id, row->expires,
	    sig);
	snprintf(row->owner, sizeof(row->owner), "%s", owner);
	if (db_exec(db, STMT_UPLINK_INSERT, "ttiiiitt", row->id, dir, max_bytes,
	    (long long)overwrite, now, row->expires, client_id, owner) != 1) {
		error_set(err, "cannot record the link in the database");
		free(url);
		url = NULL;
		goto out;
	}
	db_exec(db, STMT_UPLINK_PRUNE, "i", now - PRUNE_AFTER);
out:
	crypto_wipe(sig, sizeof(sig));
	return url;
}

int
uplinks_check(struct db *db, const char *api_key, const char *reqpath,
    long long now, struct uplink_row *row, struct uplink_url *u,
    struct error *err)
{
	struct db_uplink l;
	uint8_t		 key[LINK_KEY_LEN];
	char		 want[LINK_SIG_LEN + 1];
	bool		 found = false, sig_ok;
	enum lookup_result lr;

	memset(row, 0, sizeof(*row));
	if (uplinks_parse(reqpath, u, err) == -1)
		return -1;

	if ((lr = db_uplink_get(db, u->id, &l)) == LOOKUP_ERROR)
		return error_kind(err, ERR_INTERNAL, "The link cannot be checked now.");
	if (lr == LOOKUP_FOUND) {
		memcpy(row->dir, l.dir, sizeof(row->dir));
		memcpy(row->client_id, l.client_id, sizeof(row->client_id));
		row->max_bytes = l.max_bytes;
		row->used_bytes = l.used_bytes;
		row->overwrite = l.overwrite;
		row->created = l.created;
		row->expires = l.expires;
		row->revoked = l.revoked;
		memcpy(row->owner, l.owner, sizeof(row->owner));
		found = true;
	}
	memcpy(row->id, u->id, sizeof(row->id));

	/* Sign and compare whether or not the id was found (links_check). */
	if (links_key(db, api_key, found && l.legacy_key, key) == -1)
		return error_kind(err, ERR_INTERNAL, "The link cannot be checked now.");
	uplinks_sign(key, u->id, u->expires, found ? row->dir : "",
	    found ? row->max_bytes : 0, found && row->overwrite, want);
	crypto_wipe(key, sizeof(key));
	sig_ok = crypto_equal(want, u->sig, LINK_SIG_LEN);
	crypto_wipe(want, sizeof(want));
	if (!found || !sig_ok)
		return error_kind(err, ERR_DENIED, "This upload link is not valid.");
	if (now >= u->expires || now >= row->expires)
		return error_kind(err, ERR_GONE, "This upload link has expired.");
	if (row->revoked)
		return error_kind(err, ERR_GONE, "This upload link has been revoked.");
	return links_owner_live(db, row->owner, err);
}

enum uplinks_reserve
uplinks_reserve(struct db *db, const char *id, long long bytes)
{
	long n = db_exec(db, STMT_UPLINK_RESERVE, "it", bytes, id);

	if (n < 0)
		return UPLINKS_RESERVE_ERROR;
	return n > 0 ? UPLINKS_RESERVED : UPLINKS_NO_ROOM;
}

void
uplinks_release(struct db *db, const char *id, long long bytes)
{
	if (bytes > 0)
		db_exec(db, STMT_UPLINK_RELEASE, "it", bytes, id);
}

void
uplinks_count(struct db *db, const char *id)
{
	db_exec(db, STMT_UPLINK_COUNT, "it", (long long)time(NULL), id);
}
