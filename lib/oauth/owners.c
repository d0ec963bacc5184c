/* owners.c: see owners.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/log.h"
#include "oauth/owners.h"
#include "store/db.h"
#include "store/db_oauth.h"

_Static_assert(DB_OWNER_MAX == OWNER_MAX, "a stored owner fits OWNER_MAX");

#define KEY_BYTES	32	/* 256 random bits */
#define KEY_TYPED_MAX	512	/* longer typed keys are refused unread */

bool
owners_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= OWNER_MAX || strcmp(s, OWNER_OPERATOR) == 0 ||
	    strchr("._-", s[0]) != NULL)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

enum lookup_result
owners_check_key(const struct config *cfg, struct db *db, const char *key,
    char owner[OWNER_MAX])
{
	char		 hash[CRYPTO_SHA256_HEX];
	struct db_owner_key k;
	bool		 operator;
	long long	 id = 0;
	enum lookup_result rc = LOOKUP_NONE;

	owner[0] = '\0';
	if (key == NULL || strlen(key) > KEY_TYPED_MAX)
		return LOOKUP_NONE;
	operator = crypto_str_equal(key, cfg->api_key);
	/* Hashed either way: the time taken does not tell which key matched. */
	crypto_sha256_hex(key, strlen(key), hash);
	if (operator) {
		snprintf(owner, OWNER_MAX, "%s", OWNER_OPERATOR);
		return LOOKUP_FOUND;
	}
	if (strncmp(key, OWNER_KEY_PREFIX, strlen(OWNER_KEY_PREFIX)) != 0)
		return LOOKUP_NONE;
	switch (db_owner_key_find(db, hash, &k)) {
	case LOOKUP_FOUND:
		/* The index found it; the stored hash is compared in full. */
		if (crypto_equal(hash, k.key_hash, CRYPTO_SHA256_HEX - 1) &&
		    owners_name_valid(k.owner)) {
			id = k.id;
			memcpy(owner, k.owner, OWNER_MAX);
			rc = LOOKUP_FOUND;
		}
		break;
	case LOOKUP_NONE:
		break;
	case LOOKUP_ERROR:
		rc = LOOKUP_ERROR;
		break;
	}
	if (rc == LOOKUP_FOUND)
		db_exec(db, STMT_OWNER_KEY_USED, "ii", (long long)time(NULL), id);
	return rc;
}

/* Delete every sign-in of owner; in the caller's transaction. 0 or -1. */
static int
end_signins(struct db *db, const char *owner)
{
	if (db_exec(db, STMT_OWNER_GRANTS_DELETE, "t", owner) < 0 ||
	    db_exec(db, STMT_OWNER_CODES_DELETE, "t", owner) < 0 ||
	    db_exec(db, STMT_OWNER_SESSIONS_DELETE, "t", owner) < 0)
		return -1;
	return 0;
}

/* Make a key, store its hash for name, optionally replacing the valid one. */
static int
issue(struct db *db, const char *name, bool rotate, char key[OWNER_KEY_MAX],
    struct error *err)
{
	char		hash[CRYPTO_SHA256_HEX], live[32];
	size_t		plen = strlen(OWNER_KEY_PREFIX);
	long long	now = (long long)time(NULL);
	enum lookup_result found;

	key[0] = '\0';
	if (!owners_name_valid(name))
		return error_set(err, "%s: a key's name uses a-z, 0-9, '.', '_' "
		    "and '-' (at most %d, not starting with a sign) and is not "
		    "\"%s\"", name, OWNER_MAX - 1, OWNER_OPERATOR);
	memcpy(key, OWNER_KEY_PREFIX, plen);
	if (crypto_token(key + plen, OWNER_KEY_MAX - plen, KEY_BYTES) == -1)
		return error_set(err, "no randomness available");
	crypto_sha256_hex(key, strlen(key), hash);
	if (db_begin(db) == -1)
		goto dberr;
	if ((found = db_get_text(db, STMT_OWNER_KEY_LIVE, live, sizeof(live),
	    "t", name)) == LOOKUP_ERROR)
		goto rollback;
	if (!rotate && found == LOOKUP_FOUND) {
		db_rollback(db);
		crypto_wipe(key, OWNER_KEY_MAX);
		return error_set(err, "%s already has a valid key (rotate or "
		    "revoke it)", name);
	}
	if (rotate && found == LOOKUP_NONE) {
		db_rollback(db);
		crypto_wipe(key, OWNER_KEY_MAX);
		return error_set(err, "%s has no valid key (add one)", name);
	}
	if (rotate && (db_exec(db, STMT_OWNER_KEY_REVOKE, "it", now, name) != 1 ||
	    end_signins(db, name) == -1))
		goto rollback;
	if (db_exec(db, STMT_OWNER_KEY_INSERT, "tti", name, hash, now) != 1 ||
	    db_commit(db) == -1)
		goto rollback;
	return 0;
rollback:
	db_rollback(db);
dberr:
	crypto_wipe(key, OWNER_KEY_MAX);
	return error_set(err, "the key store cannot be written");
}

int
owners_key_add(struct db *db, const char *name, char key[OWNER_KEY_MAX],
    struct error *err)
{
	return issue(db, name, false, key, err);
}

int
owners_key_rotate(struct db *db, const char *name, char key[OWNER_KEY_MAX],
    struct error *err)
{
	return issue(db, name, true, key, err);
}

enum lookup_result
owners_key_revoke(struct db *db, const char *name, struct error *err)
{
	long long	now = (long long)time(NULL);
	long		n;

	if (!owners_name_valid(name)) {
		error_set(err, "%s: not the name of a personal key", name);
		return LOOKUP_ERROR;
	}
	if (db_begin(db) == -1) {
		error_set(err, "the key store cannot be written");
		return LOOKUP_ERROR;
	}
	/* Its links go with it: none serves or stores after the commit. */
	if ((n = db_exec(db, STMT_OWNER_KEY_REVOKE, "it", now, name)) < 0 ||
	    end_signins(db, name) == -1 ||
	    db_exec(db, STMT_OWNER_LINKS_REVOKE, "it", now, name) < 0 ||
	    db_exec(db, STMT_OWNER_UPLINKS_REVOKE, "it", now, name) < 0 ||
	    db_commit(db) == -1) {
		db_rollback(db);
		error_set(err, "the key store cannot be written");
		return LOOKUP_ERROR;
	}
	return n > 0 ? LOOKUP_FOUND : LOOKUP_NONE;
}

enum lookup_result
owners_live(struct db *db, const char *owner)
{
	char id[32];

	if (strcmp(owner, OWNER_OPERATOR) == 0)
		return LOOKUP_FOUND;
	if (!owners_name_valid(owner))
		return LOOKUP_NONE;
	return db_get_text(db, STMT_OWNER_KEY_LIVE, id, sizeof(id), "t", owner);
}
