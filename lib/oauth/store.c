/*
 * oauth/store.c: the OAuth tables (sql/002-oauth.sql, sql/009-signin.sql)
 * as the endpoints' records: the rows are decoded in store/db_oauth.c,
 * beside their SQL; here they get their meaning (the fields a request
 * needs, a client's redirect URIs parsed). The endpoints (oauth.c,
 * oauth/authorize.c, oauth/token.c) and the bearer check of /mcp (auth.c)
 * use these and never read a column.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	db_exec(db, STMT_THROTTLE_PRUNE, "i", now - 86400);
	db_exec(db, STMT_RATE_PRUNE, "i", now - 7200);
}

/* Authorization requests, codes and tokens. */

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

enum lookup_result
oauth_pending_load(struct db *db, const char *id_hash, long long now,
    struct oauth_pending *p)
{
	struct db_request r;
	enum lookup_result rc;

	memset(p, 0, sizeof(*p));
	if ((rc = db_request_get(db, id_hash, now, &r)) == LOOKUP_FOUND) {
		p->csrf_hash = r.csrf_hash;
		p->client_id = r.client_id;
		p->redirect_uri = r.redirect_uri;
		p->redirect_to = r.redirect_to;
		p->challenge = r.challenge;
		p->state = r.state;
		p->scope = r.scope;
		p->resource = r.resource;
		if (p->csrf_hash == NULL || p->client_id == NULL ||
		    p->redirect_uri == NULL || p->redirect_to == NULL ||
		    p->challenge == NULL || p->scope == NULL || p->resource == NULL)
			rc = LOOKUP_ERROR;
	}
	if (rc != LOOKUP_FOUND)
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

enum lookup_result
oauth_code_load(struct db *db, const char *code_hash, struct oauth_code_row *c)
{
	struct db_code	 r;
	enum lookup_result rc;

	memset(c, 0, sizeof(*c));
	if ((rc = db_code_get(db, code_hash, &r)) == LOOKUP_FOUND) {
		c->client_id = r.client_id;
		c->redirect_uri = r.redirect_uri;
		c->challenge = r.challenge;
		c->scope = r.scope;
		c->resource = r.resource;
		c->expires = r.expires;
		c->used = r.used;
		c->grant_id = r.grant_id;
		if (c->client_id == NULL || c->redirect_uri == NULL ||
		    c->challenge == NULL || c->scope == NULL || c->resource == NULL)
			rc = LOOKUP_ERROR;
	}
	if (rc != LOOKUP_FOUND)
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

enum lookup_result
oauth_token_load(struct db *db, const char *token_hash, struct oauth_token_row *t)
{
	struct db_token	 r;
	enum lookup_result rc;

	memset(t, 0, sizeof(*t));
	if ((rc = db_token_get(db, token_hash, &r)) == LOOKUP_FOUND) {
		t->refresh = r.refresh;
		t->grant_id = r.grant_id;
		t->expires = r.expires;
		t->rotated = r.rotated;
		t->grace_used = r.grace_used;
		t->client_id = r.client_id;
		t->scope = r.scope;
		t->resource = r.resource;
		if (t->client_id == NULL || t->scope == NULL ||
		    t->resource == NULL)
			rc = LOOKUP_ERROR;
	}
	if (rc != LOOKUP_FOUND)
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

enum lookup_result
oauth_access_load(struct db *db, const char *token_hash,
    struct oauth_access_row *a)
{
	struct db_access r;
	enum lookup_result rc;

	memset(a, 0, sizeof(*a));
	if ((rc = db_access_get(db, token_hash, &r)) == LOOKUP_FOUND) {
		a->expires = r.expires;
		a->grant_id = r.grant_id;
		a->resource = r.resource;
		a->client_id = r.client_id;
		a->client_name = r.client_name;
		a->owner = r.owner;
		a->last_used = r.last_used;
		if (a->resource == NULL || a->client_id == NULL)
			rc = LOOKUP_ERROR;
	}
	if (rc != LOOKUP_FOUND)
		oauth_access_clear(a);
	return rc;
}

long long
oauth_token_children_used(struct db *db, const char *parent_hash)
{
	return db_token_children_used(db, parent_hash);
}

/* Sign-in throttle (oauth_throttle). */

#define THROTTLE_MAX	900	/* longest wait after wrong keys, seconds */
#define THROTTLE_FORGET	3600	/* failures older than this start over */

/*
 * Check and count one try of the address key, in one transaction, before
 * the key is compared: OAUTH_THROTTLE_TRY when it may try now (the try is
 * already counted as a failure: *wait is what a wrong key costs),
 * OAUTH_THROTTLE_WAIT when it must wait *wait more seconds,
 * OAUTH_THROTTLE_ERROR on a database error (busy past the timeout).
 * A right key clears the count (STMT_THROTTLE_CLEAR).
 */
enum oauth_throttle
oauth_throttle_take(struct db *db, const char *key, long long now, long long *wait)
{
	struct db_throttle th;
	long long	 failures = 0;
	enum oauth_throttle rc = OAUTH_THROTTLE_ERROR;

	*wait = 0;
	if (db_begin(db) == -1)
		return OAUTH_THROTTLE_ERROR;
	switch (db_throttle_get(db, key, &th)) {
	case LOOKUP_FOUND:
		if (th.blocked_until > now) {
			*wait = th.blocked_until - now;
			rc = OAUTH_THROTTLE_WAIT;
		} else if (th.last_failure >= now - THROTTLE_FORGET)
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
	    now + *wait) != 1 || db_commit(db) == -1)
		goto out;
	return OAUTH_THROTTLE_TRY;
out:
	db_rollback(db);
	return OAUTH_THROTTLE_ERROR;
}
