/*
 * oauth_store.c: the OAuth tables (sql/002-oauth.sql, sql/009-signin.sql)
 * as typed records: every column of these tables that the programs read is
 * read here, by name, next to the statement that returns it (the SQL is in
 * db.c's table). The endpoints (oauth.c, oauth_authorize.c, oauth_token.c)
 * use these and never read a column by number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "js.h"
#include "oauth.h"
#include "oauth_extern.h"

/* The client store. */

void
oauth_client_clear(struct oauth_client *c)
{
	free(c->name);
	json_object_put(c->redirect_uris);
	memset(c, 0, sizeof(*c));
}

int
oauth_client_load(struct db *db, const char *client_id, struct oauth_client *c)
{
	struct db_q	*q;
	const char	*s;
	int		 rc = -1;

	memset(c, 0, sizeof(*c));
	if (strlen(client_id) > OAUTH_MAX_CLIENT_ID)
		return 0;
	if ((q = db_query(db, STMT_CLIENT_GET, "t", client_id)) == NULL)
		return -1;
	switch (db_step(q)) {
	case DB_DONE:
		rc = 0;
		goto out;
	case DB_ERROR:
		goto out;
	case DB_ROW:
		break;
	}
	snprintf(c->client_id, sizeof(c->client_id), "%s", client_id);
	if ((s = db_text(q, 0)) != NULL)
		snprintf(c->secret_hash, sizeof(c->secret_hash), "%s", s);
	snprintf(c->auth_method, sizeof(c->auth_method), "%s", db_text(q, 1));
	if ((s = db_text(q, 2)) != NULL && (c->name = strdup(s)) == NULL)
		goto out;
	s = db_text(q, 3);
	c->redirect_uris = s != NULL ? js_parse(s, strlen(s), 4, NULL) : NULL;
	if (c->redirect_uris == NULL ||
	    !json_object_is_type(c->redirect_uris, json_type_array))
		goto out;
	c->refresh = db_int(q, 4) != 0;
	c->cimd = db_int(q, 5) != 0;
	c->created = db_int(q, 6);
	c->approved = db_null(q, 7) ? 0 : db_int(q, 7);
	rc = 1;
out:
	db_done(q);
	if (rc != 1) {
		free(c->name);
		json_object_put(c->redirect_uris);
		memset(c, 0, sizeof(*c));
	}
	return rc;
}

long long
oauth_rate_hit(struct db *db, const char *key, long window)
{
	struct db_q	*q;
	long long	 now = oauth_now(), n = -1;

	if ((q = db_query(db, STMT_RATE_HIT, "ti", key, now - now % window)) == NULL)
		return -1;
	if (db_step(q) == DB_ROW)
		n = db_int(q, 0);
	db_done(q);
	return n;
}

void
oauth_prune(struct db *db)
{
	long long now = oauth_now();

	db_exec(db, STMT_CODE_PRUNE, "i", now - 600);
	db_exec(db, STMT_REQUEST_PRUNE, "i", now);
	db_exec(db, STMT_TOKEN_PRUNE, "i", now);
	db_exec(db, STMT_GRANT_PRUNE, "i", now - 600);
	db_exec(db, STMT_THROTTLE_PRUNE, "i", now - 86400);
	db_exec(db, STMT_RATE_PRUNE, "i", now - 7200);
}
