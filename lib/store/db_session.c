/*
 * store/db_session.c: the SQL of the MCP sessions (MCP transport "Session
 * Management"; sql/001-core.sql) and the reader of their rows.
 */
#include "store/db.h"
#include "store/db_session.h"
#include "store/extern.h"

const struct db_sql db_sql_session[] = {
	{ STMT_SESSION_INSERT,
	    "INSERT INTO session (id_hash, protocol_version, client_info, "
	    "created, last_used, owner) VALUES (?, ?, ?, ?, ?, ?)" },
	/* Another owner's session is unknown (sql/012-owners.sql). */
	{ STMT_SESSION_GET,
	    "SELECT protocol_version, last_used FROM session "
	    "WHERE id_hash = ? AND last_used >= ? AND owner = ?" },
	{ STMT_SESSION_TOUCH,
	    "UPDATE session SET last_used = ? WHERE id_hash = ? AND last_used < ?" },
	{ STMT_SESSION_DELETE,
	    "DELETE FROM session WHERE id_hash = ? AND owner = ?" },
	{ STMT_SESSION_PRUNE,
	    "DELETE FROM session WHERE last_used < ?" },
	{ STMT__MAX, NULL }
};

enum lookup_result
db_session_get(struct db *db, const char *id_hash, long long min_last_used,
    const char *owner, char *version, size_t vsz, long long *last_used)
{
	struct db_q		*q;
	enum lookup_result	 rc;

	q = db_query(db, STMT_SESSION_GET, "tit", id_hash, min_last_used, owner);
	/* STMT_SESSION_GET: protocol_version, last_used. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		db_col_copy(q, 0, version, vsz);
		*last_used = db_int(q, 1);
	}
	db_done(q);
	return rc;
}
