/*
 * store/db_session.h: the rows of the MCP sessions (sql/001-core.sql,
 * STMT_SESSION_*), read in store/db_session.c beside their SQL.
 */
#ifndef CS_STORE_DB_SESSION_H
#define CS_STORE_DB_SESSION_H

#include <stddef.h>

#include "base/error.h"

struct db;

/*
 * The session id_hash of owner, used at or after min_last_used
 * (STMT_SESSION_GET): copies its protocol version into version (size vsz,
 * "" for NULL, cut short to fit) and its last use into *last_used. Returns
 * LOOKUP_FOUND, LOOKUP_NONE (unknown, expired or another owner's) or
 * LOOKUP_ERROR (logged).
 */
enum lookup_result db_session_get(struct db *, const char *id_hash,
	    long long min_last_used, const char *owner, char *version,
	    size_t vsz, long long *last_used);

#endif
