/*
 * store/db_ops.c: the SQL of the clean-up, the audit log and the
 * operator's listings (sql/005-ops.sql; sandboxctl), the listings' row
 * shapes (db_row.c) and the reader of the clean-up lease.
 */
#include <string.h>

#include "store/db.h"
#include "store/db_ops.h"
#include "store/extern.h"

const struct db_sql db_sql_ops[] = {
	{ STMT_TABLE_EXISTS,
	    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?" },
	{ STMT_CLEANUP_LEASE_GET,
	    "SELECT last_run, lease_until, holder FROM cleanup_lease WHERE id = 1" },
	{ STMT_CLEANUP_LEASE_TAKE,
	    "UPDATE cleanup_lease SET last_run = ?1, lease_until = ?2, "
	    "holder = ?3 WHERE id = 1 AND lease_until <= ?1 "
	    "AND (?4 OR last_run <= ?1 - ?5)" },
	{ STMT_CLEANUP_LEASE_RELEASE,
	    "UPDATE cleanup_lease SET lease_until = 0, holder = NULL "
	    "WHERE id = 1 AND holder = ?" },
	{ STMT_CLEANUP_INSERT,
	    "INSERT INTO cleanup_run (started, trigger, file_ttl) VALUES (?, ?, ?)" },
	{ STMT_CLEANUP_FINISH,
	    "UPDATE cleanup_run SET finished = ?, state = ?, removed = ?, "
	    "kept = ?, failed = ?, bytes = ?, runs_pruned = ?, "
	    "results_cleared = ?, names = ?, message = ? WHERE id = ?" },
	{ STMT_CLEANUP_STALE,
	    "UPDATE cleanup_run SET state = 'interrupted', finished = ? "
	    "WHERE state = 'running' AND id != ?" },
	{ STMT_CLEANUP_LIST,
	    "SELECT started, state, removed, bytes, message "
	    "FROM cleanup_run ORDER BY id DESC LIMIT ?" },
	{ STMT_CLEANUP_PRUNE,
	    "DELETE FROM cleanup_run WHERE started < ?" },
	{ STMT_AUDIT_LIST,
	    "SELECT id, started, finished, client_id, client_name, state, "
	    "exit_code, duration_ms, stdout_bytes, stderr_bytes, "
	    "substr(command, 1, ?), error, owner FROM run "
	    "ORDER BY started DESC, rowid DESC LIMIT ?" },
	{ STMT_COUNT_SESSIONS,
	    "SELECT coalesce(sum(last_used >= ?), 0), count(*) FROM session" },
	{ STMT_COUNT_RUNS,
	    "SELECT count(*), coalesce(sum(state = 'running'), 0), min(started) "
	    "FROM run" },
	{ STMT_COUNT_LINKS,
	    "SELECT count(*), coalesce(sum(revoked IS NULL AND expires > ?), 0) "
	    "FROM link" },
	{ STMT_COUNT_CLIENTS,
	    "SELECT count(*) FROM oauth_client" },
	{ STMT_COUNT_GRANTS,
	    "SELECT count(DISTINCT grant_id) FROM oauth_token "
	    "WHERE rotated IS NULL AND expires > ?" },
	{ STMT_OPS_CLIENT_LIST,
	    "SELECT c.client_id, c.name, c.auth_method, c.cimd, c.created, "
	    "c.last_used, (SELECT count(*) FROM oauth_grant g "
	    "WHERE g.client_id = c.client_id) FROM oauth_client c "
	    "ORDER BY c.created, c.client_id" },
	{ STMT_OPS_CLIENT_DELETE,
	    "DELETE FROM oauth_client WHERE client_id = ?" },
	{ STMT_OPS_GRANT_LIST,
	    "SELECT g.id, g.client_id, c.name, g.created, g.last_used, "
	    "count(t.token_hash), max(t.expires), g.owner FROM oauth_grant g "
	    "JOIN oauth_client c ON c.client_id = g.client_id "
	    "LEFT JOIN oauth_token t ON t.grant_id = g.id AND t.rotated IS NULL "
	    "AND t.expires > ?1 GROUP BY g.id ORDER BY g.created, g.id" },
	{ STMT_OPS_GRANT_DELETE,
	    "DELETE FROM oauth_grant WHERE id = ?" },
	{ STMT_OPS_GRANT_DELETE_CLIENT,
	    "DELETE FROM oauth_grant WHERE client_id = ?" },
	{ STMT_OPS_GRANT_DELETE_ALL,
	    "DELETE FROM oauth_grant" },
	/* Download links, then upload links ("upload to DIR", the cap). */
	{ STMT_OPS_LINK_LIST,
	    "SELECT id, CASE WHEN revoked IS NOT NULL THEN 'revoked' "
	    "WHEN expires <= ?1 THEN 'expired' ELSE 'active' END, path, size, "
	    "client_id, created, expires, downloads, last_download, owner FROM link "
	    "UNION ALL "
	    "SELECT id, CASE WHEN revoked IS NOT NULL THEN 'revoked' "
	    "WHEN expires <= ?1 THEN 'expired' ELSE 'active' END, "
	    "'upload to ' || dir, max_bytes, client_id, created, expires, "
	    "uploads, last_upload, owner FROM upload_link "
	    "UNION ALL "
	    "SELECT id, CASE WHEN revoked IS NOT NULL THEN 'revoked' "
	    "WHEN expires <= ?1 THEN 'expired' ELSE 'active' END, "
	    "'preview of port ' || port || ' (' || open_now || ' open)', 0, "
	    "client_id, created, expires, opens, last_open, owner FROM preview "
	    "ORDER BY 6 DESC, 1 LIMIT ?2" },
	{ STMT_COUNT_PREVIEWS,
	    "SELECT coalesce(sum(revoked IS NULL AND expires > ?1), 0), "
	    "coalesce(sum(open_now), 0) FROM preview" },
	{ STMT_OPS_THROTTLE_CLEAR_ALL,
	    "DELETE FROM oauth_throttle" },
	{ STMT__MAX, NULL }
};

/*
 * The rows of the listings above as sandboxctl shows them (db_row_json):
 * each column's member name and kind, in the order of its SELECT (db_check
 * holds each shape to its statement's number of columns).
 */
static const struct db_col cleanup_cols[] = {
	{ "started", DB_COL_INT }, { "state", DB_COL_TEXT },
	{ "removed", DB_COL_INT }, { "bytes", DB_COL_INT },
	{ "message", DB_COL_TEXT }, { NULL, 0 }
};
static const struct db_col count_previews_cols[] = {
	{ "previews_active", DB_COL_INT }, { "preview_connections", DB_COL_INT },
	{ NULL, 0 }
};
static const struct db_col audit_cols[] = {
	{ "id", DB_COL_TEXT }, { "started", DB_COL_INT },
	{ "finished", DB_COL_INT }, { "client_id", DB_COL_TEXT },
	{ "client_name", DB_COL_TEXT }, { "state", DB_COL_TEXT },
	{ "exit_code", DB_COL_INT }, { "duration_ms", DB_COL_INT },
	{ "stdout_bytes", DB_COL_INT }, { "stderr_bytes", DB_COL_INT },
	{ "command", DB_COL_TEXT }, { "error", DB_COL_TEXT },
	{ "owner", DB_COL_TEXT }, { NULL, 0 }
};
static const struct db_col count_sessions_cols[] = {
	{ "live", DB_COL_INT }, { "total", DB_COL_INT }, { NULL, 0 }
};
static const struct db_col count_runs_cols[] = {
	{ "total", DB_COL_INT }, { "running", DB_COL_INT },
	{ "oldest", DB_COL_INT }, { NULL, 0 }
};
static const struct db_col count_links_cols[] = {
	{ "total", DB_COL_INT }, { "active", DB_COL_INT }, { NULL, 0 }
};
static const struct db_col count_clients_cols[] = {
	{ "total", DB_COL_INT }, { NULL, 0 }
};
static const struct db_col count_grants_cols[] = {
	{ "live", DB_COL_INT }, { NULL, 0 }
};
static const struct db_col client_list_cols[] = {
	{ "client_id", DB_COL_TEXT }, { "name", DB_COL_TEXT },
	{ "auth_method", DB_COL_TEXT }, { "metadata_document", DB_COL_BOOL },
	{ "created", DB_COL_INT }, { "last_used", DB_COL_INT },
	{ "grants", DB_COL_INT }, { NULL, 0 }
};
static const struct db_col grant_list_cols[] = {
	{ "grant_id", DB_COL_INT }, { "client_id", DB_COL_TEXT },
	{ "client_name", DB_COL_TEXT }, { "signed_in", DB_COL_INT },
	{ "last_used", DB_COL_INT }, { "live_tokens", DB_COL_INT },
	{ "expires", DB_COL_INT }, { "owner", DB_COL_TEXT }, { NULL, 0 }
};
static const struct db_col link_list_cols[] = {
	{ "id", DB_COL_TEXT }, { "state", DB_COL_TEXT },
	{ "path", DB_COL_TEXT }, { "size", DB_COL_INT },
	{ "client_id", DB_COL_TEXT }, { "created", DB_COL_INT },
	{ "expires", DB_COL_INT }, { "downloads", DB_COL_INT },
	{ "last_download", DB_COL_INT }, { "owner", DB_COL_TEXT },
	{ NULL, 0 }
};

const struct db_shape db_shape_ops[] = {
	{ STMT_CLEANUP_LIST, cleanup_cols },
	{ STMT_AUDIT_LIST, audit_cols },
	{ STMT_COUNT_SESSIONS, count_sessions_cols },
	{ STMT_COUNT_RUNS, count_runs_cols },
	{ STMT_COUNT_LINKS, count_links_cols },
	{ STMT_COUNT_CLIENTS, count_clients_cols },
	{ STMT_COUNT_GRANTS, count_grants_cols },
	{ STMT_OPS_CLIENT_LIST, client_list_cols },
	{ STMT_OPS_GRANT_LIST, grant_list_cols },
	{ STMT_OPS_LINK_LIST, link_list_cols },
	{ STMT_COUNT_PREVIEWS, count_previews_cols },
	{ STMT__MAX, NULL }
};

enum lookup_result
db_cleanup_lease_get(struct db *db, struct db_cleanup_lease *l)
{
	struct db_q		*q;
	enum lookup_result	 rc;

	memset(l, 0, sizeof(*l));
	q = db_query(db, STMT_CLEANUP_LEASE_GET, "");
	/* STMT_CLEANUP_LEASE_GET: last_run, lease_until, holder. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		l->last_run = db_int(q, 0);
		l->lease_until = db_int(q, 1);
	}
	db_done(q);
	return rc;
}
