/* session.c: see session.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/crypto.h"
#include "mcp/session.h"
#include "store/db.h"
#include "store/db_session.h"

/* Don't rewrite last_used more often than this: reads stay reads. */
#define TOUCH_EVERY	60

int
session_id_valid(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++, n++)
		if ((unsigned char)*s < 0x21 || (unsigned char)*s > 0x7e ||
		    n >= SESSION_ID_MAX)
			return 0;
	return n > 0;
}

int
session_create(struct db *db, long ttl, const char *version,
    const char *client_info, const char *owner, char *id, size_t idsz,
    struct error *err)
{
	char		hash[CRYPTO_SHA256_HEX];
	long long	now = (long long)time(NULL);

	db_exec(db, STMT_SESSION_PRUNE, "i", now - ttl);
	if (crypto_token(id, idsz, 32) == -1)
		return error_set(err, "cannot make a session id");
	crypto_sha256_hex(id, strlen(id), hash);
	if (db_exec(db, STMT_SESSION_INSERT, "tttiit", hash, version,
	    client_info, now, now, owner) != 1)
		return error_set(err, "cannot store the session");
	return 0;
}

enum lookup_result
session_lookup(struct db *db, const char *id, long ttl, const char *owner,
    char *version, size_t vsz)
{
	char		 hash[CRYPTO_SHA256_HEX];
	long long	 now = (long long)time(NULL), last = now;
	enum lookup_result rc;

	if (!session_id_valid(id))
		return LOOKUP_NONE;
	crypto_sha256_hex(id, strlen(id), hash);
	rc = db_session_get(db, hash, now - ttl, owner, version, vsz, &last);
	/* A write only when the touch is due: most requests stay reads. */
	if (rc == LOOKUP_FOUND && last < now - TOUCH_EVERY)
		db_exec(db, STMT_SESSION_TOUCH, "iti", now, hash,
		    now - TOUCH_EVERY);
	return rc;
}

enum lookup_result
session_delete(struct db *db, const char *id, const char *owner)
{
	char hash[CRYPTO_SHA256_HEX];
	long n;

	if (!session_id_valid(id))
		return LOOKUP_NONE;
	crypto_sha256_hex(id, strlen(id), hash);
	if ((n = db_exec(db, STMT_SESSION_DELETE, "tt", hash, owner)) < 0)
		return LOOKUP_ERROR;
	return n > 0 ? LOOKUP_FOUND : LOOKUP_NONE;
}
