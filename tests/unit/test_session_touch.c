/*
 * test_session_touch: a session lookup reads; it writes last_used only when
 * the last write is more than a minute old (lib/mcp/session.c), so the hot path
 * of /mcp takes no write lock on the database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/crypto.h"
#include "base/error.h"
#include "check.h"
#include "mcp/session.h"
#include "store/db.h"

/* PRAGMA data_version: changes when another connection commits. */
static long long
data_version(sqlite3 *h)
{
	sqlite3_stmt	*st = NULL;
	long long	 v = -1;

	if (sqlite3_prepare_v2(h, "PRAGMA data_version", -1, &st, NULL) ==
	    SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The session's last_used, read aside. */
static long long
last_used(sqlite3 *h, const char *id)
{
	char		 hash[CRYPTO_SHA256_HEX];
	sqlite3_stmt	*st = NULL;
	long long	 v = -1;

	crypto_sha256_hex(id, strlen(id), hash);
	if (sqlite3_prepare_v2(h, "SELECT last_used FROM session WHERE id_hash = ?",
	    -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, hash, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int
set_last_used(sqlite3 *h, const char *id, long long v)
{
	char		 hash[CRYPTO_SHA256_HEX];
	sqlite3_stmt	*st = NULL;
	int		 rc = -1;

	crypto_sha256_hex(id, strlen(id), hash);
	if (sqlite3_prepare_v2(h, "UPDATE session SET last_used = ? WHERE id_hash = ?",
	    -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_int64(st, 1, v) == SQLITE_OK &&
	    sqlite3_bind_text(st, 2, hash, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_DONE)
		rc = 0;
	sqlite3_finalize(st);
	return rc;
}

int
main(void)
{
	char		 dbpath[] = "/tmp/test_session_touch.XXXXXX";
	char		 id[80], version[32];
	struct db	*db = NULL;
	struct error	 err;
	sqlite3		*h = NULL;
	long long	 now, before, t0;
	int		 fd;

	if ((fd = mkstemp(dbpath)) == -1) {
		CHECK(0, "temporary database");
		return check_status();
	}
	close(fd);
	if (db_open(dbpath, &db, &err) == -1 ||
	    sqlite3_open(dbpath, &h) != SQLITE_OK) {
		CHECK(0, "open the database");
		goto out;
	}
	sqlite3_busy_timeout(h, 5000);
	CHECK(session_create(db, 3600, "2025-11-25", "test", "operator", id,
	    sizeof(id), &err) == 0, "a session is created");

	/* A recent last_used: the lookup finds it and writes nothing. */
	now = (long long)time(NULL);
	CHECK(set_last_used(h, id, now - 30) == 0, "last_used set 30 s back");
	t0 = last_used(h, id);
	before = data_version(h);
	CHECK(session_lookup(db, id, 3600, "operator", version,
	    sizeof(version)) == LOOKUP_FOUND, "the session is found");
	CHECK(strcmp(version, "2025-11-25") == 0, "with its version");
	CHECK(data_version(h) == before, "a lookup within the minute commits nothing");
	CHECK(last_used(h, id) == t0, "and leaves last_used");

	/* Due: more than a minute old, the lookup marks it used. */
	CHECK(set_last_used(h, id, now - 120) == 0, "last_used set 2 min back");
	before = data_version(h);
	CHECK(session_lookup(db, id, 3600, "operator", version,
	    sizeof(version)) == LOOKUP_FOUND, "the session is still found");
	CHECK(data_version(h) != before, "a lookup after a minute commits");
	CHECK(last_used(h, id) >= now, "and marks it used");

	/* Past the TTL, or another owner's: unknown, and untouched. */
	CHECK(set_last_used(h, id, now - 7200) == 0, "last_used set 2 h back");
	CHECK(session_lookup(db, id, 3600, "operator", version,
	    sizeof(version)) == LOOKUP_NONE, "an expired session is unknown");
	CHECK(last_used(h, id) == now - 7200, "and is not revived");
	CHECK(set_last_used(h, id, now) == 0, "last_used now");
	CHECK(session_lookup(db, id, 3600, "someone", version,
	    sizeof(version)) == LOOKUP_NONE, "another owner's session is unknown");
out:
	sqlite3_close(h);
	db_close(db);
	unlink(dbpath);
	return check_status();
}
