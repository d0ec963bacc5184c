/*
 * store/db_oauth.c: the SQL of the OAuth tables, the sign-in log and
 * throttle, and the personal keys (sql/002-oauth.sql, sql/009-signin.sql,
 * sql/012-owners.sql), the readers of their rows and the row shapes of the
 * keys and sign-ins listings (db_row.c). The OAuth endpoints read these
 * rows as they are; oauth/store.c and oauth/owners.c add what some need.
 */
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_oauth.h"
#include "store/extern.h"

const struct db_sql db_sql_oauth[] = {
	{ STMT_CLIENT_INSERT,
	    "INSERT INTO oauth_client (client_id, secret_hash, auth_method, name, "
	    "redirect_uris, metadata, refresh, cimd, created) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	{ STMT_CLIENT_UPSERT_CIMD,
	    "INSERT INTO oauth_client (client_id, secret_hash, auth_method, name, "
	    "redirect_uris, metadata, refresh, cimd, created) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
	    "ON CONFLICT (client_id) DO UPDATE SET auth_method = excluded.auth_method, "
	    "name = excluded.name, redirect_uris = excluded.redirect_uris, "
	    "metadata = excluded.metadata, refresh = excluded.refresh, "
	    "created = excluded.created WHERE oauth_client.cimd = 1" },
	{ STMT_CLIENT_GET,
	    "SELECT secret_hash, auth_method, name, redirect_uris, refresh, cimd, "
	    "created, approved FROM oauth_client WHERE client_id = ?" },
	{ STMT_CLIENT_USED,
	    "UPDATE oauth_client SET last_used = ? WHERE client_id = ?" },
	{ STMT_CLIENT_PRUNE,
	    "DELETE FROM oauth_client WHERE last_used IS NULL AND created < ?" },
	{ STMT_CLIENT_COUNT_UNUSED,
	    "SELECT count(*) FROM oauth_client WHERE last_used IS NULL" },
	{ STMT_REQUEST_INSERT,
	    "INSERT INTO oauth_request (id_hash, csrf_hash, client_id, redirect_uri, "
	    "redirect_to, challenge, state, scope, resource, expires) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	{ STMT_REQUEST_GET,
	    "SELECT csrf_hash, client_id, redirect_uri, redirect_to, challenge, "
	    "state, scope, resource FROM oauth_request "
	    "WHERE id_hash = ? AND expires > ?" },
	{ STMT_REQUEST_DELETE,
	    "DELETE FROM oauth_request WHERE id_hash = ?" },
	{ STMT_REQUEST_PRUNE,
	    "DELETE FROM oauth_request WHERE expires <= ?" },
	{ STMT_THROTTLE_GET,
	    "SELECT failures, last_failure, blocked_until FROM oauth_throttle "
	    "WHERE addr = ?" },
	{ STMT_THROTTLE_FAIL,
	    "INSERT OR REPLACE INTO oauth_throttle (addr, failures, last_failure, "
	    "blocked_until) VALUES (?, ?, ?, ?)" },
	{ STMT_THROTTLE_CLEAR,
	    "DELETE FROM oauth_throttle WHERE addr = ?" },
	{ STMT_THROTTLE_PRUNE,
	    "DELETE FROM oauth_throttle WHERE last_failure < ?" },
	{ STMT_CODE_INSERT,
	    "INSERT INTO oauth_code (code_hash, client_id, redirect_uri, challenge, "
	    "scope, resource, expires) VALUES (?, ?, ?, ?, ?, ?, ?)" },
	{ STMT_CODE_GET,
	    "SELECT client_id, redirect_uri, challenge, scope, resource, expires, "
	    "used, grant_id FROM oauth_code WHERE code_hash = ?" },
	{ STMT_CODE_USE,
	    "UPDATE oauth_code SET used = 1, grant_id = ? WHERE code_hash = ? "
	    "AND used = 0" },
	{ STMT_CODE_PRUNE,
	    "DELETE FROM oauth_code WHERE expires < ?" },
	{ STMT_GRANT_INSERT,
	    "INSERT INTO oauth_grant (client_id, scope, resource, created, last_used) "
	    "VALUES (?, ?, ?, ?, ?)" },
	{ STMT_GRANT_DELETE,
	    "DELETE FROM oauth_grant WHERE id = ?" },
	{ STMT_GRANT_TOUCH,
	    "UPDATE oauth_grant SET last_used = ? WHERE id = ? AND last_used < ?" },
	{ STMT_GRANT_PRUNE,
	    "DELETE FROM oauth_grant WHERE created < ? AND NOT EXISTS "
	    "(SELECT 1 FROM oauth_token t WHERE t.grant_id = oauth_grant.id)" },
	{ STMT_TOKEN_INSERT,
	    "INSERT INTO oauth_token (token_hash, grant_id, kind, parent, created, "
	    "expires) VALUES (?, ?, ?, ?, ?, ?)" },
	{ STMT_TOKEN_GET,
	    "SELECT t.kind, t.grant_id, t.expires, t.rotated, t.grace_used, "
	    "g.client_id, g.scope, g.resource FROM oauth_token t "
	    "JOIN oauth_grant g ON g.id = t.grant_id WHERE t.token_hash = ?" },
	{ STMT_TOKEN_AUTH,
	    "SELECT t.expires, g.id, g.resource, c.client_id, c.name, g.owner, "
	    "g.last_used FROM oauth_token t JOIN oauth_grant g ON g.id = t.grant_id "
	    "JOIN oauth_client c ON c.client_id = g.client_id "
	    "WHERE t.token_hash = ? AND t.kind = 'access'" },
	{ STMT_TOKEN_ROTATE,
	    "UPDATE oauth_token SET rotated = ? WHERE token_hash = ? "
	    "AND rotated IS NULL" },
	{ STMT_TOKEN_GRACE,
	    "UPDATE oauth_token SET grace_used = 1 WHERE token_hash = ? "
	    "AND grace_used = 0" },
	{ STMT_TOKEN_CHILD_ROTATED,
	    "SELECT count(*) FROM oauth_token WHERE parent = ? "
	    "AND kind = 'refresh' AND rotated IS NOT NULL" },
	{ STMT_TOKEN_DELETE_CHILDREN,
	    "DELETE FROM oauth_token WHERE parent = ? AND kind = 'access'" },
	/* rotated = 1 (1970): long past the grace, so presenting it revokes. */
	{ STMT_TOKEN_RETIRE_CHILDREN,
	    "UPDATE oauth_token SET rotated = 1, grace_used = 1 "
	    "WHERE parent = ? AND kind = 'refresh'" },
	{ STMT_TOKEN_DELETE,
	    "DELETE FROM oauth_token WHERE token_hash = ?" },
	{ STMT_TOKEN_PRUNE,
	    "DELETE FROM oauth_token WHERE expires < ?" },
	{ STMT_OWNER_KEY_INSERT,
	    "INSERT INTO owner_key (owner, key_hash, created) VALUES (?, ?, ?)" },
	{ STMT_OWNER_KEY_FIND,
	    "SELECT id, owner, key_hash FROM owner_key WHERE key_hash = ? "
	    "AND revoked IS NULL" },
	{ STMT_OWNER_KEY_USED,
	    "UPDATE owner_key SET last_used = ? WHERE id = ?" },
	{ STMT_OWNER_KEY_LIVE,
	    "SELECT id FROM owner_key WHERE owner = ? AND revoked IS NULL" },
	{ STMT_OWNER_KEY_REVOKE,
	    "UPDATE owner_key SET revoked = ? WHERE owner = ? AND revoked IS NULL" },
	{ STMT_OWNER_KEY_LIST,
	    "SELECT k.owner, CASE WHEN k.revoked IS NULL THEN 'valid' "
	    "ELSE 'revoked' END, k.created, k.last_used, k.revoked, "
	    "(SELECT count(DISTINCT t.grant_id) FROM oauth_token t "
	    "JOIN oauth_grant g ON g.id = t.grant_id WHERE g.owner = k.owner "
	    "AND t.rotated IS NULL AND t.expires > ?1), "
	    "(SELECT s.running FROM sandbox s WHERE s.owner = k.owner) "
	    "FROM owner_key k WHERE k.revoked IS NULL OR NOT EXISTS "
	    "(SELECT 1 FROM owner_key l WHERE l.owner = k.owner AND "
	    "(l.revoked IS NULL OR l.id > k.id)) ORDER BY k.owner" },
	{ STMT_OWNER_GRANTS_DELETE,
	    "DELETE FROM oauth_grant WHERE owner = ?" },
	{ STMT_OWNER_CODES_DELETE,
	    "DELETE FROM oauth_code WHERE owner = ?" },
	{ STMT_OWNER_SESSIONS_DELETE,
	    "DELETE FROM session WHERE owner = ?" },
	{ STMT_OWNER_LINKS_REVOKE,
	    "UPDATE link SET revoked = ?1 WHERE owner = ?2 AND revoked IS NULL" },
	{ STMT_OWNER_UPLINKS_REVOKE,
	    "UPDATE upload_link SET revoked = ?1 WHERE owner = ?2 "
	    "AND revoked IS NULL" },
	{ STMT_CODE_SET_OWNER,
	    "UPDATE oauth_code SET owner = ? WHERE code_hash = ?" },
	{ STMT_GRANT_OWNER_FROM_CODE,
	    "UPDATE oauth_grant SET owner = (SELECT owner FROM oauth_code "
	    "WHERE code_hash = ?) WHERE id = ?" },
	{ STMT_CLIENT_APPROVE,
	    "UPDATE oauth_client SET approved = ? WHERE client_id = ? "
	    "AND approved IS NULL" },
	{ STMT_APPROVAL_ADD,
	    "INSERT OR IGNORE INTO oauth_approval (client_id, redirect_uri, "
	    "approved) VALUES (?, ?, ?)" },
	{ STMT_APPROVAL_GET,
	    "SELECT approved FROM oauth_approval WHERE client_id = ? AND "
	    "redirect_uri = ?" },
	/* Past the cap, the oldest of the biggest bucket (sql/019). */
	{ STMT_CLIENT_CAP,
	    "WITH unused AS (SELECT client_id, reg_addr, created FROM "
	    "oauth_client WHERE last_used IS NULL AND approved IS NULL AND "
	    "cimd = 0), big AS (SELECT reg_addr FROM unused GROUP BY reg_addr "
	    "ORDER BY count(*) DESC LIMIT 1) "
	    "DELETE FROM oauth_client WHERE client_id IN (SELECT client_id "
	    "FROM unused WHERE reg_addr IS (SELECT reg_addr FROM big) "
	    "ORDER BY created LIMIT max(0, (SELECT count(*) FROM unused) - ?1))" },
	{ STMT_REQUEST_CAP,
	    "WITH big AS (SELECT addr FROM oauth_request GROUP BY addr "
	    "ORDER BY count(*) DESC LIMIT 1) "
	    "DELETE FROM oauth_request WHERE id_hash IN (SELECT id_hash FROM "
	    "oauth_request WHERE addr IS (SELECT addr FROM big) ORDER BY expires "
	    "LIMIT max(0, (SELECT count(*) FROM oauth_request) - ?1))" },
	{ STMT_REQUEST_CAP_ADDR,
	    "DELETE FROM oauth_request WHERE id_hash IN (SELECT id_hash FROM "
	    "oauth_request WHERE addr = ?1 ORDER BY expires DESC "
	    "LIMIT -1 OFFSET ?2)" },
	{ STMT_REQUEST_SET_ADDR,
	    "UPDATE oauth_request SET addr = ? WHERE id_hash = ?" },
	{ STMT_CLIENT_SET_ADDR,
	    "UPDATE oauth_client SET reg_addr = ? WHERE client_id = ?" },
	{ STMT_SIGNIN_INSERT,
	    "INSERT INTO signin_attempt (at, addr, client_id, client_name, "
	    "redirect_host, result) VALUES (?, ?, ?, ?, ?, ?)" },
	/* A flood of throttled tries is one row a minute per address. */
	{ STMT_SIGNIN_THROTTLED,
	    "INSERT INTO signin_attempt (at, addr, client_id, client_name, "
	    "redirect_host, result) SELECT ?1, ?2, ?3, ?4, ?5, 'throttled' "
	    "WHERE NOT EXISTS (SELECT 1 FROM signin_attempt WHERE at > ?1 - 60 "
	    "AND addr = ?2 AND result = 'throttled')" },
	/* By age, and past the newest 100,000 rows whatever their age. */
	{ STMT_SIGNIN_PRUNE,
	    "DELETE FROM signin_attempt WHERE at < ? OR id <= (SELECT id FROM "
	    "signin_attempt ORDER BY id DESC LIMIT 1 OFFSET 100000)" },
	{ STMT_SIGNIN_LIST,
	    "SELECT at, addr, result, client_id, client_name, redirect_host "
	    "FROM signin_attempt ORDER BY id DESC LIMIT ?" },
	/* One statement: concurrent hits are serialised by SQLite. */
	{ STMT_RATE_HIT,
	    "INSERT INTO rate_window (key, since, count) VALUES (?1, ?2, 1) "
	    "ON CONFLICT (key) DO UPDATE SET count = CASE WHEN since = ?2 "
	    "THEN count + 1 ELSE 1 END, since = ?2 RETURNING count" },
	{ STMT_RATE_PRUNE,
	    "DELETE FROM rate_window WHERE since < ?" },
	{ STMT__MAX, NULL }
};

/*
 * The rows of the operator's listings above (db_row_json): each column's
 * member name and kind, in the order of its SELECT.
 */
static const struct db_col owner_key_list_cols[] = {
	{ "owner", DB_COL_TEXT }, { "state", DB_COL_TEXT },
	{ "created", DB_COL_INT }, { "last_used", DB_COL_INT },
	{ "revoked", DB_COL_INT }, { "grants", DB_COL_INT },
	{ "sandbox_running", DB_COL_BOOL }, { NULL, 0 }
};
static const struct db_col signin_list_cols[] = {
	{ "at", DB_COL_INT }, { "address", DB_COL_TEXT },
	{ "result", DB_COL_TEXT }, { "client_id", DB_COL_TEXT },
	{ "client_name", DB_COL_TEXT }, { "redirect_host", DB_COL_TEXT },
	{ NULL, 0 }
};

const struct db_shape db_shape_oauth[] = {
	{ STMT_OWNER_KEY_LIST, owner_key_list_cols },
	{ STMT_SIGNIN_LIST, signin_list_cols },
	{ STMT__MAX, NULL }
};

void
db_client_clear(struct db_client *c)
{
	free(c->name);
	free(c->redirect_uris);
	memset(c, 0, sizeof(*c));
}

enum lookup_result
db_client_get(struct db *db, const char *client_id, struct db_client *c)
{
	struct db_q		*q;
	bool			 oom = false;
	enum lookup_result	 rc;

	memset(c, 0, sizeof(*c));
	q = db_query(db, STMT_CLIENT_GET, "t", client_id);
	/* STMT_CLIENT_GET: secret_hash, auth_method, name, redirect_uris,
	   refresh, cimd, created, approved. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		db_col_copy(q, 0, c->secret_hash, sizeof(c->secret_hash));
		db_col_copy(q, 1, c->auth_method, sizeof(c->auth_method));
		c->name = db_col_dup(q, 2, &oom);
		c->redirect_uris = db_col_dup(q, 3, &oom);
		c->refresh = db_int(q, 4) != 0;
		c->cimd = db_int(q, 5) != 0;
		c->created = db_int(q, 6);
		c->approved = db_null(q, 7) ? 0 : db_int(q, 7);
		if (oom)
			rc = LOOKUP_ERROR;
	}
	db_done(q);
	if (rc != LOOKUP_FOUND)
		db_client_clear(c);
	return rc;
}

void
db_request_clear(struct db_request *p)
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
db_request_get(struct db *db, const char *id_hash, long long now,
    struct db_request *p)
{
	struct db_q		*q;
	bool			 oom = false;
	enum lookup_result	 rc;

	memset(p, 0, sizeof(*p));
	q = db_query(db, STMT_REQUEST_GET, "ti", id_hash, now);
	/* STMT_REQUEST_GET: csrf_hash, client_id, redirect_uri, redirect_to,
	   challenge, state, scope, resource. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		p->csrf_hash = db_col_dup(q, 0, &oom);
		p->client_id = db_col_dup(q, 1, &oom);
		p->redirect_uri = db_col_dup(q, 2, &oom);
		p->redirect_to = db_col_dup(q, 3, &oom);
		p->challenge = db_col_dup(q, 4, &oom);
		p->state = db_col_dup(q, 5, &oom);
		p->scope = db_col_dup(q, 6, &oom);
		p->resource = db_col_dup(q, 7, &oom);
		if (oom || p->csrf_hash == NULL || p->client_id == NULL ||
		    p->redirect_uri == NULL || p->redirect_to == NULL ||
		    p->challenge == NULL || p->scope == NULL || p->resource == NULL)
			rc = LOOKUP_ERROR;
	}
	db_done(q);
	if (rc != LOOKUP_FOUND)
		db_request_clear(p);
	return rc;
}

void
db_code_clear(struct db_code *c)
{
	free(c->client_id);
	free(c->redirect_uri);
	free(c->challenge);
	free(c->scope);
	free(c->resource);
	memset(c, 0, sizeof(*c));
}

enum lookup_result
db_code_get(struct db *db, const char *code_hash, struct db_code *c)
{
	struct db_q		*q;
	bool			 oom = false;
	enum lookup_result	 rc;

	memset(c, 0, sizeof(*c));
	q = db_query(db, STMT_CODE_GET, "t", code_hash);
	/* STMT_CODE_GET: client_id, redirect_uri, challenge, scope, resource,
	   expires, used, grant_id. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		c->client_id = db_col_dup(q, 0, &oom);
		c->redirect_uri = db_col_dup(q, 1, &oom);
		c->challenge = db_col_dup(q, 2, &oom);
		c->scope = db_col_dup(q, 3, &oom);
		c->resource = db_col_dup(q, 4, &oom);
		c->expires = db_int(q, 5);
		c->used = db_int(q, 6) != 0;
		c->grant_id = db_null(q, 7) ? 0 : db_int(q, 7);
		if (oom || c->client_id == NULL || c->redirect_uri == NULL ||
		    c->challenge == NULL || c->scope == NULL || c->resource == NULL)
			rc = LOOKUP_ERROR;
	}
	db_done(q);
	if (rc != LOOKUP_FOUND)
		db_code_clear(c);
	return rc;
}

void
db_token_clear(struct db_token *t)
{
	free(t->client_id);
	free(t->scope);
	free(t->resource);
	memset(t, 0, sizeof(*t));
}

enum lookup_result
db_token_get(struct db *db, const char *token_hash, struct db_token *t)
{
	struct db_q		*q;
	const char		*kind;
	bool			 oom = false;
	enum lookup_result	 rc;

	memset(t, 0, sizeof(*t));
	q = db_query(db, STMT_TOKEN_GET, "t", token_hash);
	/* STMT_TOKEN_GET: kind, grant_id, expires, rotated, grace_used,
	   client_id, scope, resource. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		kind = db_text(q, 0);
		t->refresh = kind != NULL && strcmp(kind, "refresh") == 0;
		t->grant_id = db_int(q, 1);
		t->expires = db_int(q, 2);
		t->rotated = db_null(q, 3) ? 0 : db_int(q, 3);
		t->grace_used = db_int(q, 4) != 0;
		t->client_id = db_col_dup(q, 5, &oom);
		t->scope = db_col_dup(q, 6, &oom);
		t->resource = db_col_dup(q, 7, &oom);
		if (oom || t->client_id == NULL || t->scope == NULL ||
		    t->resource == NULL)
			rc = LOOKUP_ERROR;
	}
	db_done(q);
	if (rc != LOOKUP_FOUND)
		db_token_clear(t);
	return rc;
}

void
db_access_clear(struct db_access *a)
{
	free(a->resource);
	free(a->client_id);
	free(a->client_name);
	free(a->owner);
	memset(a, 0, sizeof(*a));
}

enum lookup_result
db_access_get(struct db *db, const char *token_hash, struct db_access *a)
{
	struct db_q		*q;
	bool			 oom = false;
	enum lookup_result	 rc;

	memset(a, 0, sizeof(*a));
	q = db_query(db, STMT_TOKEN_AUTH, "t", token_hash);
	/* STMT_TOKEN_AUTH: expires, grant_id, resource, client_id, client
	   name, owner, the grant's last_used. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		a->expires = db_int(q, 0);
		a->grant_id = db_int(q, 1);
		a->resource = db_col_dup(q, 2, &oom);
		a->client_id = db_col_dup(q, 3, &oom);
		a->client_name = db_col_dup(q, 4, &oom);
		a->owner = db_col_dup(q, 5, &oom);
		a->last_used = db_int(q, 6);
		if (oom || a->resource == NULL || a->client_id == NULL)
			rc = LOOKUP_ERROR;
	}
	db_done(q);
	if (rc != LOOKUP_FOUND)
		db_access_clear(a);
	return rc;
}

long long
db_token_children_used(struct db *db, const char *parent_hash)
{
	struct db_q	*q = db_query(db, STMT_TOKEN_CHILD_ROTATED, "t", parent_hash);
	long long	 n = -1;

	/* STMT_TOKEN_CHILD_ROTATED: count. */
	switch (db_first_row(q)) {
	case LOOKUP_FOUND:
		n = db_int(q, 0);
		break;
	case LOOKUP_NONE:
		n = 0;
		break;
	case LOOKUP_ERROR:
		break;
	}
	db_done(q);
	return n;
}

enum lookup_result
db_throttle_get(struct db *db, const char *key, struct db_throttle *t)
{
	struct db_q		*q;
	enum lookup_result	 rc;

	memset(t, 0, sizeof(*t));
	q = db_query(db, STMT_THROTTLE_GET, "t", key);
	/* STMT_THROTTLE_GET: failures, last_failure, blocked_until. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		t->failures = db_int(q, 0);
		t->last_failure = db_int(q, 1);
		t->blocked_until = db_int(q, 2);
	}
	db_done(q);
	return rc;
}

long long
db_rate_hit(struct db *db, const char *key, long long since)
{
	struct db_q	*q;
	long long	 n = -1;

	if ((q = db_query(db, STMT_RATE_HIT, "ti", key, since)) == NULL)
		return -1;
	/* STMT_RATE_HIT: the count in this window. */
	if (db_step(q) == DB_ROW)
		n = db_int(q, 0);
	db_done(q);
	return n;
}

enum lookup_result
db_owner_key_find(struct db *db, const char *key_hash, struct db_owner_key *k)
{
	struct db_q		*q;
	enum lookup_result	 rc;

	memset(k, 0, sizeof(*k));
	q = db_query(db, STMT_OWNER_KEY_FIND, "t", key_hash);
	/* STMT_OWNER_KEY_FIND: id, owner, key_hash. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		k->id = db_int(q, 0);
		if (!db_col_fits(q, 1, k->owner, sizeof(k->owner)) ||
		    !db_col_fits(q, 2, k->key_hash, sizeof(k->key_hash)) ||
		    strlen(k->key_hash) != CRYPTO_SHA256_HEX - 1)
			rc = LOOKUP_NONE;
	}
	db_done(q);
	if (rc != LOOKUP_FOUND)
		memset(k, 0, sizeof(*k));
	return rc;
}
