/*
 * oauth/store.c: the OAuth tables (sql/002-oauth.sql, sql/009-signin.sql)
 * as typed records: every column of these tables that the programs read is
 * read here, by name, next to the statement that returns it (the SQL is in
 * db.c's table). The endpoints (oauth.c, oauth/authorize.c, oauth/token.c)
 * and the bearer check of /mcp (auth.c) use these and never read a column
 * by number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/js.h"
#include "oauth/extern.h"
#include "oauth/oauth.h"
#include "store/db.h"

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

/* Authorization requests, codes and tokens. */

/* A malloc'd copy of column col, NULL for NULL; *oom set when out of memory. */
static char *
col_dup(struct db_q *q, int col, bool *oom)
{
	const char	*s = db_text(q, col);
	char		*d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*oom = true;
	return d;
}

/* Step q once: 1 with a row, 0 without, -1 on an error. */
static int
first_row(struct db_q *q)
{
	if (q == NULL)
		return -1;
	switch (db_step(q)) {
	case DB_ROW:
		return 1;
	case DB_DONE:
		return 0;
	default:
		return -1;
	}
}

void
oauth_pending_clear(struct oauth_pending *p)
{
	free(p->csrf_hash);
	free(p->client_id);
	free(p->redirect_uri);
	free(p->redirect_to);
	free(p->challenge);
	free(p->state);
	free(p->scope);
	free(p->resource);
	memset(p, 0, sizeof(*p));
}

int
oauth_pending_load(struct db *db, const char *id_hash, long long now,
    struct oauth_pending *p)
{
	struct db_q	*q;
	bool		 oom = false;
	int		 rc;

	memset(p, 0, sizeof(*p));
	/* STMT_REQUEST_GET: csrf_hash, client_id, redirect_uri, redirect_to,
	   challenge, state, scope, resource. */
	q = db_query(db, STMT_REQUEST_GET, "ti", id_hash, now);
	if ((rc = first_row(q)) == 1) {
		p->csrf_hash = col_dup(q, 0, &oom);
		p->client_id = col_dup(q, 1, &oom);
		p->redirect_uri = col_dup(q, 2, &oom);
		p->redirect_to = col_dup(q, 3, &oom);
		p->challenge = col_dup(q, 4, &oom);
		p->state = col_dup(q, 5, &oom);
		p->scope = col_dup(q, 6, &oom);
		p->resource = col_dup(q, 7, &oom);
		if (oom || p->csrf_hash == NULL || p->client_id == NULL ||
		    p->redirect_uri == NULL || p->redirect_to == NULL ||
		    p->challenge == NULL || p->scope == NULL || p->resource == NULL)
			rc = -1;
	}
	db_done(q);
	if (rc != 1)
		oauth_pending_clear(p);
	return rc;
}

void
oauth_code_clear(struct oauth_code_row *c)
{
	free(c->client_id);
	free(c->redirect_uri);
	free(c->challenge);
	free(c->scope);
	free(c->resource);
	memset(c, 0, sizeof(*c));
}

int
oauth_code_load(struct db *db, const char *code_hash, struct oauth_code_row *c)
{
	struct db_q	*q;
	bool		 oom = false;
	int		 rc;

	memset(c, 0, sizeof(*c));
	/* STMT_CODE_GET: client_id, redirect_uri, challenge, scope, resource,
	   expires, used, grant_id. */
	q = db_query(db, STMT_CODE_GET, "t", code_hash);
	if ((rc = first_row(q)) == 1) {
		c->client_id = col_dup(q, 0, &oom);
		c->redirect_uri = col_dup(q, 1, &oom);
		c->challenge = col_dup(q, 2, &oom);
		c->scope = col_dup(q, 3, &oom);
		c->resource = col_dup(q, 4, &oom);
		c->expires = db_int(q, 5);
		c->used = db_int(q, 6) != 0;
		c->grant_id = db_null(q, 7) ? 0 : db_int(q, 7);
		if (oom || c->client_id == NULL || c->redirect_uri == NULL ||
		    c->challenge == NULL || c->scope == NULL || c->resource == NULL)
			rc = -1;
	}
	db_done(q);
	if (rc != 1)
		oauth_code_clear(c);
	return rc;
}

void
oauth_token_clear(struct oauth_token_row *t)
{
	free(t->client_id);
	free(t->scope);
	free(t->resource);
	memset(t, 0, sizeof(*t));
}

int
oauth_token_load(struct db *db, const char *token_hash, struct oauth_token_row *t)
{
	struct db_q	*q;
	const char	*kind;
	bool		 oom = false;
	int		 rc;

	memset(t, 0, sizeof(*t));
	/* STMT_TOKEN_GET: kind, grant_id, expires, rotated, grace_used,
	   client_id, scope, resource. */
	q = db_query(db, STMT_TOKEN_GET, "t", token_hash);
	if ((rc = first_row(q)) == 1) {
		kind = db_text(q, 0);
		t->refresh = kind != NULL && strcmp(kind, "refresh") == 0;
		t->grant_id = db_int(q, 1);
		t->expires = db_int(q, 2);
		t->rotated = db_null(q, 3) ? 0 : db_int(q, 3);
		t->grace_used = db_int(q, 4) != 0;
		t->client_id = col_dup(q, 5, &oom);
		t->scope = col_dup(q, 6, &oom);
		t->resource = col_dup(q, 7, &oom);
		if (oom || t->client_id == NULL || t->scope == NULL ||
		    t->resource == NULL)
			rc = -1;
	}
	db_done(q);
	if (rc != 1)
		oauth_token_clear(t);
	return rc;
}

void
oauth_access_clear(struct oauth_access_row *a)
{
	free(a->resource);
	free(a->client_id);
	free(a->client_name);
	free(a->owner);
	memset(a, 0, sizeof(*a));
}

int
oauth_access_load(struct db *db, const char *token_hash,
    struct oauth_access_row *a)
{
	struct db_q	*q;
	bool		 oom = false;
	int		 rc;

	memset(a, 0, sizeof(*a));
	/* STMT_TOKEN_AUTH: expires, grant_id, resource, client_id, client
	   name, owner, the grant's last_used. */
	q = db_query(db, STMT_TOKEN_AUTH, "t", token_hash);
	if ((rc = first_row(q)) == 1) {
		a->expires = db_int(q, 0);
		a->grant_id = db_int(q, 1);
		a->resource = col_dup(q, 2, &oom);
		a->client_id = col_dup(q, 3, &oom);
		a->client_name = col_dup(q, 4, &oom);
		a->owner = col_dup(q, 5, &oom);
		a->last_used = db_int(q, 6);
		if (oom || a->resource == NULL || a->client_id == NULL)
			rc = -1;
	}
	db_done(q);
	if (rc != 1)
		oauth_access_clear(a);
	return rc;
}

long long
oauth_token_children_used(struct db *db, const char *parent_hash)
{
	struct db_q	*q = db_query(db, STMT_TOKEN_CHILD_ROTATED, "t", parent_hash);
	long long	 n = -1;
	int		 rc;

	if ((rc = first_row(q)) == 1)
		n = db_int(q, 0);
	else if (rc == 0)
		n = 0;
	db_done(q);
	return n;
}

/* Sign-in throttle (oauth_throttle). */

#define THROTTLE_MAX	900	/* longest wait after wrong keys, seconds */
#define THROTTLE_FORGET	3600	/* failures older than this start over */

/*
 * Check and count one try of the address key, in one transaction, before
 * the key is compared: returns 1 when it may try now (the try is already
 * counted as a failure: *wait is what a wrong key costs), 0 when it must
 * wait *wait more seconds, -1 on a database error (busy past the timeout).
 * A right key clears the count (STMT_THROTTLE_CLEAR).
 */
int
oauth_throttle_take(struct db *db, const char *key, long long now, long long *wait)
{
	struct db_q	*q;
	long long	 failures = 0;
	int		 rc = -1;

	*wait = 0;
	if (db_begin(db) == -1)
		return -1;
	if ((q = db_query(db, STMT_THROTTLE_GET, "t", key)) == NULL)
		goto out;
	switch (db_step(q)) {
	case DB_ROW:
		if (db_int(q, 2) > now) {
			*wait = db_int(q, 2) - now;
			rc = 0;
		} else if (db_int(q, 1) >= now - THROTTLE_FORGET)
			failures = db_int(q, 0);
		break;
	case DB_DONE:
		break;
	case DB_ERROR:
		db_done(q);
		goto out;
	}
	db_done(q);
	if (rc == 0) {
		db_rollback(db);
		return 0;
	}
	failures++;
	*wait = failures > 10 ? THROTTLE_MAX : 1LL << (failures - 1);
	if (*wait > THROTTLE_MAX)
		*wait = THROTTLE_MAX;
	if (db_exec(db, STMT_THROTTLE_FAIL, "tiii", key, failures, now,
	    now + *wait) != 1 || db_commit(db) == -1)
		goto out;
	return 1;
out:
	db_rollback(db);
	return -1;
}
