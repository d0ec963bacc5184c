/*
 * db.c: the SQLite file. The only file that includes <sqlite3.h>.
 *
 * Every statement the programs run is in the table below, indexed by
 * enum db_stmt, and is prepared once per connection. Connections use WAL (so
 * readers never wait for a writer), a busy timeout (so writers from several
 * processes queue instead of failing), and foreign keys.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "base/log.h"
#include "store/db.h"
#include "store/schema.h"

#define BUSY_TIMEOUT_MS	5000

static const char *const sql[STMT__MAX] = {
	[STMT_SESSION_INSERT] =
	    "INSERT INTO session (id_hash, protocol_version, client_info, "
	    "created, last_used, owner) VALUES (?, ?, ?, ?, ?, ?)",
	/* Another owner's session is unknown (sql/012-owners.sql). */
	[STMT_SESSION_GET] =
	    "SELECT protocol_version, last_used FROM session "
	    "WHERE id_hash = ? AND last_used >= ? AND owner = ?",
	[STMT_SESSION_TOUCH] =
	    "UPDATE session SET last_used = ? WHERE id_hash = ? AND last_used < ?",
	[STMT_SESSION_DELETE] =
	    "DELETE FROM session WHERE id_hash = ? AND owner = ?",
	[STMT_SESSION_PRUNE] =
	    "DELETE FROM session WHERE last_used < ?",

	/* runs */
	[STMT_RUN_INSERT] =
	    "INSERT INTO run (id, session_hash, request_id, client_id, "
	    "client_name, command, timeout, started, owner, container_id, "
	    "container_started) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[STMT_RUN_FINISH] =
	    "UPDATE run SET finished = ?, state = ?, exit_code = ?, "
	    "duration_ms = ?, stdout_bytes = ?, stderr_bytes = ?, result = ? "
	    "WHERE id = ?",
	[STMT_RUN_ERROR] =
	    "UPDATE run SET error = ? WHERE id = ?",
	[STMT_RUN_CANCEL] =
	    "UPDATE run SET cancel_requested = 1 WHERE session_hash = ? AND "
	    "request_id = ? AND state = 'running' RETURNING id",
	[STMT_RUN_CANCELLED] =
	    "SELECT cancel_requested FROM run WHERE id = ?",
	[STMT_RUN_GET] =
	    "SELECT state, result FROM run WHERE id = ?",
	[STMT_RUN_RECENT] =
	    "SELECT id, state, started, exit_code, substr(command, 1, 200) "
	    "FROM run ORDER BY started DESC, rowid DESC LIMIT ?",
	/* tasks and handles */
	[STMT_TASK_MARK] =
	    "UPDATE run SET handle = ?, updated = ? WHERE id = ?",
	[STMT_TASK_GET] =
	    "SELECT owner, state, started, finished, handle, result, "
	    "last_line, updated, timeout FROM run WHERE id = ?",
	[STMT_TASK_NOTE] =
	    "UPDATE run SET last_line = ?, updated = ? WHERE id = ?",
	[STMT_TASK_CANCEL] =
	    "UPDATE run SET cancel_requested = 1 WHERE id = ? AND "
	    "state = 'running' RETURNING id",
	/* A row left 'running' by a killed worker stops counting after its timeout. */
	[STMT_RUN_COUNT_ACTIVE] =
	    "SELECT count(*), coalesce(sum(owner = ?), 0) FROM run "
	    "WHERE state = 'running' AND started + timeout + 60 > ?",
	[STMT_RUN_INFO] =
	    "SELECT state, timeout, started, cancel_requested, container_id, "
	    "container_started FROM run WHERE id = ?",
	[STMT_RUN_UNFINISHED] =
	    "SELECT id, owner FROM run WHERE state = 'running' "
	    "ORDER BY owner, started LIMIT ?",
	[STMT_RUN_RELEASED] =
	    "SELECT id FROM run WHERE state = 'running' AND owner = ? "
	    "AND handle IS NOT NULL ORDER BY started LIMIT ?",
	[STMT_RECONCILE_LEASE_TAKE] =
	    "UPDATE reconcile_lease SET last_run = ?1, lease_until = ?2, "
	    "holder = ?3 WHERE id = 1 AND lease_until <= ?1 "
	    "AND last_run <= ?1 - ?4",
	[STMT_RECONCILE_LEASE_RELEASE] =
	    "UPDATE reconcile_lease SET lease_until = 0, holder = NULL "
	    "WHERE id = 1 AND holder = ?",
	/* oauth */
	[STMT_CLIENT_INSERT] =
	    "INSERT INTO oauth_client (client_id, secret_hash, auth_method, name, "
	    "redirect_uris, metadata, refresh, cimd, created) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[STMT_CLIENT_UPSERT_CIMD] =
	    "INSERT INTO oauth_client (client_id, secret_hash, auth_method, name, "
	    "redirect_uris, metadata, refresh, cimd, created) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
	    "ON CONFLICT (client_id) DO UPDATE SET auth_method = excluded.auth_method, "
	    "name = excluded.name, redirect_uris = excluded.redirect_uris, "
	    "metadata = excluded.metadata, refresh = excluded.refresh, "
	    "created = excluded.created WHERE oauth_client.cimd = 1",
	[STMT_CLIENT_GET] =
	    "SELECT secret_hash, auth_method, name, redirect_uris, refresh, cimd, "
	    "created, approved FROM oauth_client WHERE client_id = ?",
	[STMT_CLIENT_USED] =
	    "UPDATE oauth_client SET last_used = ? WHERE client_id = ?",
	[STMT_CLIENT_PRUNE] =
	    "DELETE FROM oauth_client WHERE last_used IS NULL AND created < ?",
	[STMT_CLIENT_COUNT_UNUSED] =
	    "SELECT count(*) FROM oauth_client WHERE last_used IS NULL",
	[STMT_REQUEST_INSERT] =
	    "INSERT INTO oauth_request (id_hash, csrf_hash, client_id, redirect_uri, "
	    "redirect_to, challenge, state, scope, resource, expires) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	[STMT_REQUEST_GET] =
	    "SELECT csrf_hash, client_id, redirect_uri, redirect_to, challenge, "
	    "state, scope, resource FROM oauth_request "
	    "WHERE id_hash = ? AND expires > ?",
	[STMT_REQUEST_DELETE] =
	    "DELETE FROM oauth_request WHERE id_hash = ?",
	[STMT_REQUEST_PRUNE] =
	    "DELETE FROM oauth_request WHERE expires <= ?",
	[STMT_THROTTLE_GET] =
	    "SELECT failures, last_failure, blocked_until FROM oauth_throttle "
	    "WHERE addr = ?",
	[STMT_THROTTLE_FAIL] =
	    "INSERT OR REPLACE INTO oauth_throttle (addr, failures, last_failure, "
	    "blocked_until) VALUES (?, ?, ?, ?)",
	[STMT_THROTTLE_CLEAR] =
	    "DELETE FROM oauth_throttle WHERE addr = ?",
	[STMT_THROTTLE_PRUNE] =
	    "DELETE FROM oauth_throttle WHERE last_failure < ?",
	[STMT_CODE_INSERT] =
	    "INSERT INTO oauth_code (code_hash, client_id, redirect_uri, challenge, "
	    "scope, resource, expires) VALUES (?, ?, ?, ?, ?, ?, ?)",
	[STMT_CODE_GET] =
	    "SELECT client_id, redirect_uri, challenge, scope, resource, expires, "
	    "used, grant_id FROM oauth_code WHERE code_hash = ?",
	[STMT_CODE_USE] =
	    "UPDATE oauth_code SET used = 1, grant_id = ? WHERE code_hash = ? "
	    "AND used = 0",
	[STMT_CODE_PRUNE] =
	    "DELETE FROM oauth_code WHERE expires < ?",
	[STMT_GRANT_INSERT] =
	    "INSERT INTO oauth_grant (client_id, scope, resource, created, last_used) "
	    "VALUES (?, ?, ?, ?, ?)",
	[STMT_GRANT_DELETE] =
	    "DELETE FROM oauth_grant WHERE id = ?",
	[STMT_GRANT_TOUCH] =
	    "UPDATE oauth_grant SET last_used = ? WHERE id = ? AND last_used < ?",
	[STMT_GRANT_PRUNE] =
	    "DELETE FROM oauth_grant WHERE created < ? AND NOT EXISTS "
	    "(SELECT 1 FROM oauth_token t WHERE t.grant_id = oauth_grant.id)",
	[STMT_TOKEN_INSERT] =
	    "INSERT INTO oauth_token (token_hash, grant_id, kind, parent, created, "
	    "expires) VALUES (?, ?, ?, ?, ?, ?)",
	[STMT_TOKEN_GET] =
	    "SELECT t.kind, t.grant_id, t.expires, t.rotated, t.grace_used, "
	    "g.client_id, g.scope, g.resource FROM oauth_token t "
	    "JOIN oauth_grant g ON g.id = t.grant_id WHERE t.token_hash = ?",
	[STMT_TOKEN_AUTH] =
	    "SELECT t.expires, g.id, g.resource, c.client_id, c.name, g.owner, "
	    "g.last_used FROM oauth_token t JOIN oauth_grant g ON g.id = t.grant_id "
	    "JOIN oauth_client c ON c.client_id = g.client_id "
	    "WHERE t.token_hash = ? AND t.kind = 'access'",
	[STMT_TOKEN_ROTATE] =
	    "UPDATE oauth_token SET rotated = ? WHERE token_hash = ? "
	    "AND rotated IS NULL",
	[STMT_TOKEN_GRACE] =
	    "UPDATE oauth_token SET grace_used = 1 WHERE token_hash = ? "
	    "AND grace_used = 0",
	[STMT_TOKEN_CHILD_ROTATED] =
	    "SELECT count(*) FROM oauth_token WHERE parent = ? "
	    "AND kind = 'refresh' AND rotated IS NOT NULL",
	[STMT_TOKEN_DELETE_CHILDREN] =
	    "DELETE FROM oauth_token WHERE parent = ? AND kind = 'access'",
	/* rotated = 1 (1970): long past the grace, so presenting it revokes. */
	[STMT_TOKEN_RETIRE_CHILDREN] =
	    "UPDATE oauth_token SET rotated = 1, grace_used = 1 "
	    "WHERE parent = ? AND kind = 'refresh'",
	[STMT_TOKEN_DELETE] =
	    "DELETE FROM oauth_token WHERE token_hash = ?",
	[STMT_TOKEN_PRUNE] =
	    "DELETE FROM oauth_token WHERE expires < ?",
	/* links */
	[STMT_LINK_INSERT] =
	    "INSERT INTO link (id, path, size, created, expires, client_id, owner, "
	    "archive) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	[STMT_LINK_GET] =
	    "SELECT path, size, created, expires, revoked, owner, archive FROM link "
	    "WHERE id = ?",
	[STMT_LINK_COUNT] =
	    "UPDATE link SET downloads = downloads + 1, last_download = ?1 "
	    "WHERE id = ?2",
	[STMT_LINK_REVOKE] =
	    "UPDATE link SET revoked = ?1 WHERE id = ?2 AND revoked IS NULL",
	[STMT_LINK_PRUNE] =
	    "DELETE FROM link WHERE expires < ?",
	/* ops */
	[STMT_TABLE_EXISTS] =
	    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
	[STMT_CLEANUP_LEASE_GET] =
	    "SELECT last_run, lease_until, holder FROM cleanup_lease WHERE id = 1",
	[STMT_CLEANUP_LEASE_TAKE] =
	    "UPDATE cleanup_lease SET last_run = ?1, lease_until = ?2, "
	    "holder = ?3 WHERE id = 1 AND lease_until <= ?1 "
	    "AND (?4 OR last_run <= ?1 - ?5)",
	[STMT_CLEANUP_LEASE_RELEASE] =
	    "UPDATE cleanup_lease SET lease_until = 0, holder = NULL "
	    "WHERE id = 1 AND holder = ?",
	[STMT_CLEANUP_INSERT] =
	    "INSERT INTO cleanup_run (started, trigger, file_ttl) VALUES (?, ?, ?)",
	[STMT_CLEANUP_FINISH] =
	    "UPDATE cleanup_run SET finished = ?, state = ?, removed = ?, "
	    "kept = ?, failed = ?, bytes = ?, runs_pruned = ?, "
	    "results_cleared = ?, names = ?, message = ? WHERE id = ?",
	[STMT_CLEANUP_STALE] =
	    "UPDATE cleanup_run SET state = 'interrupted', finished = ? "
	    "WHERE state = 'running' AND id != ?",
	[STMT_CLEANUP_LIST] =
	    "SELECT id, started, finished, trigger, state, removed, kept, "
	    "failed, bytes, runs_pruned, results_cleared, names, message "
	    "FROM cleanup_run ORDER BY id DESC LIMIT ?",
	[STMT_CLEANUP_PRUNE] =
	    "DELETE FROM cleanup_run WHERE started < ?",
	/* A row still running is pruned only 30 days (the longest timeout) late. */
	[STMT_RUN_PRUNE] =
	    "DELETE FROM run WHERE coalesce(finished, started + 2592000) < ?",
	[STMT_RUN_CLEAR_RESULTS] =
	    "UPDATE run SET result = NULL WHERE result IS NOT NULL "
	    "AND finished IS NOT NULL AND finished < ?",
	[STMT_AUDIT_LIST] =
	    "SELECT id, started, client_id, client_name, state, exit_code, "
	    "duration_ms, stdout_bytes, stderr_bytes, substr(command, 1, ?), "
	    "finished, error, owner FROM run ORDER BY started DESC, rowid DESC LIMIT ?",
	[STMT_COUNT_SESSIONS] =
	    "SELECT coalesce(sum(last_used >= ?), 0), count(*) FROM session",
	[STMT_COUNT_RUNS] =
	    "SELECT count(*), coalesce(sum(state = 'running'), 0), min(started) "
	    "FROM run",
	[STMT_COUNT_LINKS] =
	    "SELECT count(*), coalesce(sum(revoked IS NULL AND expires > ?), 0) "
	    "FROM link",
	[STMT_COUNT_CLIENTS] =
	    "SELECT count(*) FROM oauth_client",
	[STMT_COUNT_GRANTS] =
	    "SELECT count(DISTINCT grant_id) FROM oauth_token "
	    "WHERE rotated IS NULL AND expires > ?",
	[STMT_OPS_CLIENT_LIST] =
	    "SELECT c.client_id, c.name, c.auth_method, c.cimd, c.created, "
	    "c.last_used, (SELECT count(*) FROM oauth_grant g "
	    "WHERE g.client_id = c.client_id) FROM oauth_client c "
	    "ORDER BY c.created, c.client_id",
	[STMT_OPS_CLIENT_DELETE] =
	    "DELETE FROM oauth_client WHERE client_id = ?",
	[STMT_OPS_GRANT_LIST] =
	    "SELECT g.id, g.client_id, c.name, g.created, g.last_used, "
	    "count(t.token_hash), max(t.expires), g.owner FROM oauth_grant g "
	    "JOIN oauth_client c ON c.client_id = g.client_id "
	    "LEFT JOIN oauth_token t ON t.grant_id = g.id AND t.rotated IS NULL "
	    "AND t.expires > ?1 GROUP BY g.id ORDER BY g.created, g.id",
	[STMT_OPS_GRANT_DELETE] =
	    "DELETE FROM oauth_grant WHERE id = ?",
	[STMT_OPS_GRANT_DELETE_CLIENT] =
	    "DELETE FROM oauth_grant WHERE client_id = ?",
	[STMT_OPS_GRANT_DELETE_ALL] =
	    "DELETE FROM oauth_grant",
	/* Download links, then upload links ("upload to DIR", the cap). */
	[STMT_OPS_LINK_LIST] =
	    "SELECT id, CASE WHEN revoked IS NOT NULL THEN 'revoked' "
	    "WHEN expires <= ?1 THEN 'expired' ELSE 'active' END, path, size, "
	    "client_id, created, expires, downloads, last_download, owner FROM link "
	    "UNION ALL "
	    "SELECT id, CASE WHEN revoked IS NOT NULL THEN 'revoked' "
	    "WHEN expires <= ?1 THEN 'expired' ELSE 'active' END, "
	    "'upload to ' || dir, max_bytes, client_id, created, expires, "
	    "uploads, last_upload, owner FROM upload_link "
	    "ORDER BY 6 DESC, 1 LIMIT ?2",
	/* owners (lib/oauth/owners.c) */
	[STMT_OWNER_KEY_INSERT] =
	    "INSERT INTO owner_key (owner, key_hash, created) VALUES (?, ?, ?)",
	[STMT_OWNER_KEY_FIND] =
	    "SELECT id, owner, key_hash FROM owner_key WHERE key_hash = ? "
	    "AND revoked IS NULL",
	[STMT_OWNER_KEY_USED] =
	    "UPDATE owner_key SET last_used = ? WHERE id = ?",
	[STMT_OWNER_KEY_LIVE] =
	    "SELECT id FROM owner_key WHERE owner = ? AND revoked IS NULL",
	[STMT_OWNER_KEY_REVOKE] =
	    "UPDATE owner_key SET revoked = ? WHERE owner = ? AND revoked IS NULL",
	[STMT_OWNER_KEY_LIST] =
	    "SELECT k.owner, CASE WHEN k.revoked IS NULL THEN 'valid' "
	    "ELSE 'revoked' END, k.created, k.last_used, k.revoked, "
	    "(SELECT count(DISTINCT t.grant_id) FROM oauth_token t "
	    "JOIN oauth_grant g ON g.id = t.grant_id WHERE g.owner = k.owner "
	    "AND t.rotated IS NULL AND t.expires > ?1), "
	    "(SELECT s.running FROM sandbox s WHERE s.owner = k.owner) "
	    "FROM owner_key k WHERE k.revoked IS NULL OR NOT EXISTS "
	    "(SELECT 1 FROM owner_key l WHERE l.owner = k.owner AND "
	    "(l.revoked IS NULL OR l.id > k.id)) ORDER BY k.owner",
	[STMT_OWNER_GRANTS_DELETE] =
	    "DELETE FROM oauth_grant WHERE owner = ?",
	[STMT_OWNER_CODES_DELETE] =
	    "DELETE FROM oauth_code WHERE owner = ?",
	[STMT_OWNER_SESSIONS_DELETE] =
	    "DELETE FROM session WHERE owner = ?",
	[STMT_CODE_SET_OWNER] =
	    "UPDATE oauth_code SET owner = ? WHERE code_hash = ?",
	[STMT_GRANT_OWNER_FROM_CODE] =
	    "UPDATE oauth_grant SET owner = (SELECT owner FROM oauth_code "
	    "WHERE code_hash = ?) WHERE id = ?",
	[STMT_RUN_GET_OWNED] =
	    "SELECT state, result FROM run WHERE id = ? AND owner = ?",
	[STMT_RUN_RECENT_OWNED] =
	    "SELECT id, state, started, exit_code, substr(command, 1, 200) "
	    "FROM run WHERE owner = ? ORDER BY started DESC, rowid DESC LIMIT ?",
	[STMT_LINK_REVOKE_OWNED] =
	    "UPDATE link SET revoked = ?1 WHERE id = ?2 AND owner = ?3 "
	    "AND revoked IS NULL",
	/* sandboxes per owner (lib/sandbox/sandboxes.c) */
	[STMT_SANDBOX_GET] =
	    "SELECT running, last_used FROM sandbox WHERE owner = ?",
	[STMT_SANDBOX_USE] =
	    "INSERT INTO sandbox (owner, container, volume, created, last_used, "
	    "running) VALUES (?1, ?2, ?3, ?4, ?4, 1) ON CONFLICT (owner) DO "
	    "UPDATE SET container = excluded.container, volume = excluded.volume, "
	    "last_used = excluded.last_used, running = 1",
	[STMT_SANDBOX_TOUCH] =
	    "UPDATE sandbox SET last_used = ? WHERE owner = ?",
	[STMT_SANDBOX_RUNNING_OTHERS] =
	    "SELECT count(*) FROM sandbox WHERE running = 1 AND owner != ?",
	/* A command counts while its row says running and its timeout (plus
	   a minute) has not passed: a worker that died leaves no hold. */
	[STMT_SANDBOX_IDLE] =
	    "SELECT s.owner, s.container FROM sandbox s WHERE s.running = 1 "
	    "AND s.last_used < ?2 AND s.owner != ?3 AND NOT EXISTS "
	    "(SELECT 1 FROM run r WHERE r.owner = s.owner AND "
	    "r.state = 'running' AND r.started + r.timeout + 60 > ?1) "
	    "ORDER BY s.last_used, s.owner",
	[STMT_SANDBOX_STOPPED] =
	    "UPDATE sandbox SET running = 0, stopped = ?, stop_reason = ? "
	    "WHERE owner = ?",
	[STMT_SANDBOX_LIST] =
	    "SELECT s.owner, s.container, s.volume, s.running, s.last_used, "
	    "s.stopped, s.stop_reason, (SELECT count(*) FROM run r WHERE "
	    "r.owner = s.owner AND r.state = 'running' AND "
	    "r.started + r.timeout + 60 > ?1) FROM sandbox s "
	    "ORDER BY s.last_used DESC, s.owner",
	[STMT_SANDBOX_RUNNING] =
	    "SELECT owner FROM sandbox WHERE running = 1 ORDER BY owner",
	[STMT_SANDBOX_DELETE] =
	    "DELETE FROM sandbox WHERE owner = ?",
	[STMT_CLIENT_APPROVE] =
	    "UPDATE oauth_client SET approved = ? WHERE client_id = ? "
	    "AND approved IS NULL",
	[STMT_CLIENT_CAP] =
	    "DELETE FROM oauth_client WHERE client_id IN (SELECT client_id FROM "
	    "oauth_client WHERE last_used IS NULL AND approved IS NULL AND "
	    "cimd = 0 ORDER BY created DESC LIMIT -1 OFFSET ?)",
	[STMT_REQUEST_CAP] =
	    "DELETE FROM oauth_request WHERE id_hash IN (SELECT id_hash FROM "
	    "oauth_request ORDER BY expires DESC LIMIT -1 OFFSET ?)",
	[STMT_SIGNIN_INSERT] =
	    "INSERT INTO signin_attempt (at, addr, client_id, client_name, "
	    "redirect_host, result) VALUES (?, ?, ?, ?, ?, ?)",
	/* A flood of throttled tries is one row a minute per address. */
	[STMT_SIGNIN_THROTTLED] =
	    "INSERT INTO signin_attempt (at, addr, client_id, client_name, "
	    "redirect_host, result) SELECT ?1, ?2, ?3, ?4, ?5, 'throttled' "
	    "WHERE NOT EXISTS (SELECT 1 FROM signin_attempt WHERE at > ?1 - 60 "
	    "AND addr = ?2 AND result = 'throttled')",
	/* By age, and past the newest 100,000 rows whatever their age. */
	[STMT_SIGNIN_PRUNE] =
	    "DELETE FROM signin_attempt WHERE at < ? OR id <= (SELECT id FROM "
	    "signin_attempt ORDER BY id DESC LIMIT 1 OFFSET 100000)",
	[STMT_SIGNIN_LIST] =
	    "SELECT at, addr, result, client_id, client_name, redirect_host "
	    "FROM signin_attempt ORDER BY id DESC LIMIT ?",
	/* One statement: concurrent hits are serialised by SQLite. */
	[STMT_RATE_HIT] =
	    "INSERT INTO rate_window (key, since, count) VALUES (?1, ?2, 1) "
	    "ON CONFLICT (key) DO UPDATE SET count = CASE WHEN since = ?2 "
	    "THEN count + 1 ELSE 1 END, since = ?2 RETURNING count",
	[STMT_RATE_PRUNE] =
	    "DELETE FROM rate_window WHERE since < ?",
	[STMT_OPS_THROTTLE_LIST] =
	    "SELECT addr, failures, last_failure, blocked_until FROM "
	    "oauth_throttle WHERE blocked_until > ? ORDER BY blocked_until DESC",
	[STMT_OPS_THROTTLE_CLEAR_ALL] =
	    "DELETE FROM oauth_throttle",
	[STMT_UPLINK_INSERT] =
	    "INSERT INTO upload_link (id, dir, max_bytes, overwrite, created, "
	    "expires, client_id, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
	[STMT_UPLINK_GET] =
	    "SELECT dir, max_bytes, used_bytes, overwrite, created, expires, "
	    "revoked, client_id, owner FROM upload_link WHERE id = ?",
	[STMT_UPLINK_RESERVE] =
	    "UPDATE upload_link SET used_bytes = used_bytes + ?1 WHERE id = ?2 "
	    "AND used_bytes + ?1 <= max_bytes AND revoked IS NULL",
	[STMT_UPLINK_RELEASE] =
	    "UPDATE upload_link SET used_bytes = max(0, used_bytes - ?1) "
	    "WHERE id = ?2",
	[STMT_UPLINK_COUNT] =
	    "UPDATE upload_link SET uploads = uploads + 1, last_upload = ?1 "
	    "WHERE id = ?2",
	[STMT_UPLINK_REVOKE] =
	    "UPDATE upload_link SET revoked = ?1 WHERE id = ?2 AND revoked IS NULL",
	[STMT_UPLINK_PRUNE] =
	    "DELETE FROM upload_link WHERE expires < ?",
	[STMT_UPLOAD_INSERT] =
	    "INSERT INTO upload (link_id, client_id, remote_addr, method, name, "
	    "started) VALUES (?, ?, ?, ?, ?, ?)",
	[STMT_UPLOAD_FINISH] =
	    "UPDATE upload SET finished = ?, state = ?, stored = ?, size = ?, "
	    "message = ? WHERE id = ?",
};

struct db_q {
	struct db	*db;
	sqlite3_stmt	*st;
	enum db_stmt	 id;
};

struct db {
	sqlite3		*h;
	struct db_q	 q[STMT__MAX];
	char		*path;
};

static int
bindv(struct db_q *q, const char *types, va_list ap)
{
	int i, rc = SQLITE_OK;

	for (i = 1; types != NULL && *types != '\0' && rc == SQLITE_OK; types++, i++) {
		switch (*types) {
		case 't': {
			const char *s = va_arg(ap, const char *);

			rc = s == NULL ? sqlite3_bind_null(q->st, i) :
			    sqlite3_bind_text(q->st, i, s, -1, SQLITE_TRANSIENT);
			break;
		}
		case 'i':
			rc = sqlite3_bind_int64(q->st, i, va_arg(ap, long long));
			break;
		case 'b': {
			const void *p = va_arg(ap, const void *);
			size_t n = va_arg(ap, size_t);

			rc = sqlite3_bind_blob64(q->st, i, p, n, SQLITE_TRANSIENT);
			break;
		}
		case 'n':
			rc = sqlite3_bind_null(q->st, i);
			break;
		default:
			log_warn("db: bad bind type '%c' for statement %d", *types, q->id);
			return -1;
		}
	}
	if (rc != SQLITE_OK) {
		log_warn("db: bind %d of statement %d: %s", i - 1, q->id,
		    sqlite3_errmsg(q->db->h));
		return -1;
	}
	return 0;
}

static struct db_q *
prepare(struct db *db, enum db_stmt id)
{
	struct db_q *q;

	if ((unsigned)id >= STMT__MAX || sql[id] == NULL) {
		log_warn("db: no statement %d", id);
		return NULL;
	}
	q = &db->q[id];
	if (q->st == NULL &&
	    sqlite3_prepare_v3(db->h, sql[id], -1, SQLITE_PREPARE_PERSISTENT,
	    &q->st, NULL) != SQLITE_OK) {
		log_warn("db: prepare statement %d: %s", id, sqlite3_errmsg(db->h));
		return NULL;
	}
	q->db = db;
	q->id = id;
	return q;
}

/* Prepare (cached) and bind; NULL on error (logged, statement reset). */
static struct db_q *
queryv(struct db *db, enum db_stmt id, const char *types, va_list ap)
{
	struct db_q *q;

	if ((q = prepare(db, id)) == NULL)
		return NULL;
	if (bindv(q, types, ap) == -1) {
		db_done(q);
		return NULL;
	}
	return q;
}

struct db_q *
db_query(struct db *db, enum db_stmt id, const char *types, ...)
{
	struct db_q	*q;
	va_list		 ap;

	va_start(ap, types);
	q = queryv(db, id, types, ap);
	va_end(ap);
	return q;
}

enum db_step
db_step(struct db_q *q)
{
	int rc = sqlite3_step(q->st);

	if (rc == SQLITE_ROW)
		return DB_ROW;
	if (rc == SQLITE_DONE)
		return DB_DONE;
	log_warn("db: step statement %d: %s", q->id, sqlite3_errmsg(q->db->h));
	return DB_ERROR;
}

const char *
db_text(struct db_q *q, int col)
{
	return (const char *)sqlite3_column_text(q->st, col);
}

long long
db_int(struct db_q *q, int col)
{
	return sqlite3_column_int64(q->st, col);
}

const void *
db_blob(struct db_q *q, int col, size_t *len)
{
	const void *p = sqlite3_column_blob(q->st, col);

	*len = (size_t)sqlite3_column_bytes(q->st, col);
	return p;
}

bool
db_null(struct db_q *q, int col)
{
	return sqlite3_column_type(q->st, col) == SQLITE_NULL;
}

void
db_done(struct db_q *q)
{
	if (q == NULL || q->st == NULL)
		return;
	sqlite3_reset(q->st);
	sqlite3_clear_bindings(q->st);
}

long
db_exec(struct db *db, enum db_stmt id, const char *types, ...)
{
	struct db_q	*q;
	va_list		 ap;
	long		 rc = -1;

	va_start(ap, types);
	q = queryv(db, id, types, ap);
	va_end(ap);
	if (q == NULL)
		return -1;
	if (db_step(q) != DB_ERROR)
		rc = sqlite3_changes(db->h);
	db_done(q);
	return rc;
}

int
db_get_text(struct db *db, enum db_stmt id, char *out, size_t n,
    const char *types, ...)
{
	struct db_q	*q;
	const char	*v;
	va_list		 ap;
	int		 rc;

	va_start(ap, types);
	q = queryv(db, id, types, ap);
	va_end(ap);
	if (q == NULL)
		return -1;
	switch (db_step(q)) {
	case DB_ROW:
		v = db_text(q, 0);
		snprintf(out, n, "%s", v != NULL ? v : "");
		rc = 1;
		break;
	case DB_DONE:
		rc = 0;
		break;
	default:
		rc = -1;
		break;
	}
	db_done(q);
	return rc;
}

static int
simple(struct db *db, const char *stmt)
{
	char *msg = NULL;

	if (sqlite3_exec(db->h, stmt, NULL, NULL, &msg) != SQLITE_OK) {
		log_warn("db: %s: %s", stmt, msg != NULL ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int
db_begin(struct db *db)
{
	return simple(db, "BEGIN IMMEDIATE");
}

int
db_commit(struct db *db)
{
	return simple(db, "COMMIT");
}

void
db_rollback(struct db *db)
{
	if (!sqlite3_get_autocommit(db->h))
		simple(db, "ROLLBACK");
}

long long
db_last_id(struct db *db)
{
	return sqlite3_last_insert_rowid(db->h);
}

/* A PRAGMA's one integer: 0 with *v, or -1 when it cannot be read. */
static int
pragma_int(struct db *db, const char *pragma, long long *v)
{
	sqlite3_stmt	*st;
	int		 rc = -1;

	if (sqlite3_prepare_v2(db->h, pragma, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int
db_version(struct db *db)
{
	long long	v;

	return pragma_int(db, "PRAGMA user_version", &v) == 0 ? (int)v : -1;
}

long
db_cache_kib(struct db *db)
{
	long long	c;

	if (pragma_int(db, "PRAGMA cache_size", &c) == -1)
		return -1;
	/* Negative: KiB; positive: pages (of 4096 bytes here). */
	return c < 0 ? (long)-c : (long)(c * 4);
}

/*
 * Apply each schema step newer than the file's user_version, each in one
 * IMMEDIATE transaction that re-reads the version first, so several
 * processes opening a new file at once apply each step exactly once.
 */
static int
migrate(struct db *db, struct error *err)
{
	const struct schema_step	*s;
	char				*msg = NULL;

	for (s = schema_steps; s->file != NULL; s++) {
		if (db_version(db) >= s->version)
			continue;
		if (db_begin(db) == -1)
			return error_set(err, "%s: cannot lock the database to "
			    "migrate it", db->path);
		if (db_version(db) >= s->version) {
			db_rollback(db);
			continue;
		}
		if (sqlite3_exec(db->h, s->sql, NULL, NULL, &msg) != SQLITE_OK) {
			error_set(err, "%s: applying %s: %s", db->path, s->file,
			    msg != NULL ? msg : "error");
			sqlite3_free(msg);
			db_rollback(db);
			return -1;
		}
		if (db_commit(db) == -1) {
			db_rollback(db);
			return error_set(err, "%s: cannot commit %s", db->path,
			    s->file);
		}
		log_info("database %s migrated to version %d (%s)", db->path,
		    s->version, s->file);
	}
	return 0;
}

static _Atomic long	cache_kib = 256;

void
db_set_cache_kib(long kib)
{
	if (kib >= 16)
		cache_kib = kib;
}

/*
 * Before the first connection: no allocation statistics. With them on (the
 * default), every sqlite3_malloc takes one process-wide mutex, which the
 * worker threads then queue on (sqlite3_config, SQLITE_CONFIG_MEMSTATUS);
 * nothing here reads them.
 */
static void
sqlite_global_init(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int
db_open(const char *path, struct db **out, struct error *err)
{
	static pthread_once_t	 once = PTHREAD_ONCE_INIT;
	struct db		*db;
	char			 cache[64];
	int			 rc;

	*out = NULL;
	pthread_once(&once, sqlite_global_init);
	if ((db = calloc(1, sizeof(*db))) == NULL ||
	    (db->path = strdup(path)) == NULL) {
		free(db);
		return error_set(err, "out of memory");
	}
	rc = sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		error_set(err, "%s: cannot open database: %s", path,
		    db->h != NULL ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
		goto fail;
	}
	/* No lookaside slab per connection (about 120 KiB each, one a thread). */
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_LOOKASIDE, NULL, 0, 0);
	sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(db->h, 1);
	/* The pragma takes no placeholder: a number from the settings' range. */
	snprintf(cache, sizeof(cache), "PRAGMA cache_size = -%ld",
	    (long)cache_kib);
	if (simple(db, cache) == -1 ||
	    simple(db, "PRAGMA journal_mode = WAL") == -1 ||
	    simple(db, "PRAGMA foreign_keys = ON") == -1 ||
	    simple(db, "PRAGMA synchronous = NORMAL") == -1) {
		error_set(err, "%s: cannot set up the database (permissions?)", path);
		goto fail;
	}
	if (migrate(db, err) == -1)
		goto fail;
	*out = db;
	return 0;
fail:
	db_close(db);
	return -1;
}

void
db_close(struct db *db)
{
	size_t i;

	if (db == NULL)
		return;
	for (i = 0; i < STMT__MAX; i++)
		sqlite3_finalize(db->q[i].st);
	sqlite3_close(db->h);
	free(db->path);
	free(db);
}

static pthread_key_t	thread_key;
static pthread_once_t	thread_once = PTHREAD_ONCE_INIT;

static void
thread_db_free(void *p)
{
	db_close(p);
}

static void
thread_key_init(void)
{
	pthread_key_create(&thread_key, thread_db_free);
}

struct db *
db_thread(const char *path, struct error *err)
{
	struct db *db;

	pthread_once(&thread_once, thread_key_init);
	if ((db = pthread_getspecific(thread_key)) != NULL)
		return db;
	if (db_open(path, &db, err) == -1)
		return NULL;
	pthread_setspecific(thread_key, db);
	return db;
}
