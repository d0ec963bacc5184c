/*
 * oauth/store.c: the OAuth tables (sql/002-oauth.sql, sql/009-signin.sql)
 * where a row needs more than store/db_oauth.c decodes beside the SQL: a
 * client's redirect URIs parsed, the sign-in throttle's arithmetic, the
 * prune ages. The other rows (requests, codes, tokens, access tokens) the
 * endpoints (oauth/authorize.c, oauth/token.c) and the bearer check of
 * /mcp (auth.c) read with store/db_oauth.h as they are; none reads a
 * column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/js.h"
#include "oauth/extern.h"
#include "oauth/oauth.h"
#include "store/db.h"
#include "store/db_oauth.h"

/* The client store. */

void
oauth_client_clear(struct oauth_client *c)
{
	free(c->name);
	json_object_put(c->redirect_uris);
	memset(c, 0, sizeof(*c));
}

enum lookup_result
oauth_client_load(struct db *db, const char *client_id, struct oauth_client *c)
{
	struct db_client r;
	const char	*s;
	enum lookup_result rc = LOOKUP_ERROR;

	memset(c, 0, sizeof(*c));
	memset(&r, 0, sizeof(r));
	if (strlen(client_id) > OAUTH_MAX_CLIENT_ID)
		return LOOKUP_NONE;
	switch (db_client_get(db, client_id, &r)) {
	case LOOKUP_NONE:
		rc = LOOKUP_NONE;
		goto out;
	case LOOKUP_ERROR:
		goto out;
	case LOOKUP_FOUND:
		break;
	}
	snprintf(c->client_id, sizeof(c->client_id), "%s", client_id);
	memcpy(c->secret_hash, r.secret_hash, sizeof(c->secret_hash));
	memcpy(c->auth_method, r.auth_method, sizeof(c->auth_method));
	c->name = r.name;
	r.name = NULL;
	s = r.redirect_uris;
	c->redirect_uris = s != NULL ? js_parse(s, strlen(s), 4, NULL) : NULL;
	if (c->redirect_uris == NULL ||
	    !json_object_is_type(c->redirect_uris, json_type_array))
		goto out;
	c->refresh = r.refresh;
	c->cimd = r.cimd;
	c->created = r.created;
	c->approved = r.approved;
	rc = LOOKUP_FOUND;
out:
	db_client_clear(&r);
	if (rc != LOOKUP_FOUND) {
		free(c->name);
		json_object_put(c->redirect_uris);
		memset(c, 0, sizeof(*c));
	}
	return rc;
}

long long
oauth_rate_hit(struct db *db, const char *key, long window)
{
	long long	 now = oauth_now();

	return db_rate_hit(db, key, now - now % window);
}

void
oauth_prune(struct db *db)
{
	long long now = oauth_now();

	db_exec(db, STMT_CODE_PRUNE, "i", now - 600);
	db_exec(db, STMT_REQUEST_PRUNE, "i", now);
	db_exec(db, STMT_TOKEN_PRUNE, "i", now);
	db_exec(db, STMT_GRANT_PRUNE, "i", now - 600);
	db_exec(db, STMT_THROTTLE_PRUNE, "i", (now - 86400) * 1000);
	db_exec(db, STMT_RATE_PRUNE, "i", now - 7200);
}

/* Sign-in throttle (oauth_throttle). */

#define THROTTLE_MAX	900	/* longest wait after wrong keys, seconds */
#define THROTTLE_FORGET	3600	/* failures older than this start over */

/*
 * Check and count one try of the address key, in one transaction, before
 * the key is compared: OAUTH_THROTTLE_TRY when it may try now (the try is
 * already counted as a failure: *wait is what a wrong key costs, seconds),
 * OAUTH_THROTTLE_WAIT when it must wait *wait more seconds (rounded up),
 * OAUTH_THROTTLE_ERROR on a database error (busy past the timeout).
 * A right key clears the count (STMT_THROTTLE_CLEAR). The row's times are
 * milliseconds (sql/024-throttle-ms.sql).
 */
enum oauth_throttle
oauth_throttle_take(struct db *db, const char *key, long long *wait)
{
	struct db_throttle th;
	long long	 failures = 0, now = clock_wall_ms();
	enum oauth_throttle rc = OAUTH_THROTTLE_ERROR;

	*wait = 0;
	if (db_begin(db) == -1)
		return OAUTH_THROTTLE_ERROR;
	switch (db_throttle_get(db, key, &th)) {
	case LOOKUP_FOUND:
		if (th.blocked_until > now) {
			*wait = (th.blocked_until - now + 999) / 1000;
			rc = OAUTH_THROTTLE_WAIT;
		} else if (th.last_failure >= now - THROTTLE_FORGET * 1000)
			failures = th.failures;
		break;
	case LOOKUP_NONE:
		break;
	case LOOKUP_ERROR:
		goto out;
	}
	if (rc == OAUTH_THROTTLE_WAIT) {
		db_rollback(db);
		return OAUTH_THROTTLE_WAIT;
	}
	failures++;
	*wait = failures > 10 ? THROTTLE_MAX : 1LL << (failures - 1);
	if (*wait > THROTTLE_MAX)
		*wait = THROTTLE_MAX;
	if (db_exec(db, STMT_THROTTLE_FAIL, "tiii", key, failures, now,
	    now + *wait * 1000) != 1 || db_commit(db) == -1)
		goto out;
	return OAUTH_THROTTLE_TRY;
out:
	db_rollback(db);
	return OAUTH_THROTTLE_ERROR;
}
