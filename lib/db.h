/*
 * db.h: the SQLite file (sessions, OAuth state, links, audit).
 *
 * Only db.c includes <sqlite3.h>. All SQL lives in the statement table in
 * db.c, indexed by enum db_stmt; callers bind values with a type string:
 *   't' const char * (text, NULL binds NULL)   'i' long long
 *   'b' const void *, size_t (blob)             'n' NULL
 * The schema is sql/NNN-*.sql, compiled in and applied on open in order of
 * NNN, each file in one transaction that sets PRAGMA user_version to NNN.
 *
 * A struct db is one connection, used by one thread at a time. db_thread
 * gives each thread its own connection, opened on first use.
 */
#ifndef CS_DB_H
#define CS_DB_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

enum db_stmt {
	/* sessions (MCP transport "Session Management") */
	STMT_SESSION_INSERT,	/* id_hash, protocol_version, client_info, now, now */
	STMT_SESSION_GET,	/* id_hash, min_last_used -> protocol_version */
	STMT_SESSION_TOUCH,	/* now, id_hash */
	STMT_SESSION_DELETE,	/* id_hash */
	STMT_SESSION_PRUNE,	/* min_last_used */
	/* links (share_file, /dl; sql/003-links.sql) */
	STMT_LINK_INSERT,	/* id, path, size, created, expires, client_id */
	STMT_LINK_GET,		/* id -> path, size, created, expires, revoked */
	STMT_LINK_COUNT,	/* now, id: one more download */
	STMT_LINK_REVOKE,	/* now, id */
	STMT_LINK_PRUNE,	/* min_expires: forget links expired before */
	STMT__MAX
};

enum db_step {
	DB_ERROR = -1,
	DB_DONE = 0,
	DB_ROW = 1,
};

struct db;
struct db_q;

/* Open (creating if needed) and migrate. 0 or -1 with err. */
int	db_open(const char *path, struct db **, struct error *);
void	db_close(struct db *);
/* This thread's connection to path, opened on first use. NULL with err. */
struct db *db_thread(const char *path, struct error *);
/* The schema version of an open database (PRAGMA user_version). */
int	db_version(struct db *);

/*
 * Run a statement that returns no rows. Returns the number of rows changed
 * (>= 0), or -1 on error (logged).
 */
long	db_exec(struct db *, enum db_stmt, const char *types, ...);

/*
 * Start a query: prepare (cached) and bind. Returns NULL on error (logged).
 * Step with db_step, read columns while it returns DB_ROW, then always
 * db_done (also after an error). One query per connection at a time per
 * statement.
 */
struct db_q	*db_query(struct db *, enum db_stmt, const char *types, ...);
enum db_step	 db_step(struct db_q *);
const char	*db_text(struct db_q *, int col);	/* NULL for NULL */
long long	 db_int(struct db_q *, int col);
const void	*db_blob(struct db_q *, int col, size_t *len);
bool		 db_null(struct db_q *, int col);
void		 db_done(struct db_q *);

/* Transactions: BEGIN IMMEDIATE, so read-modify-write never upgrades late. */
int	db_begin(struct db *);
int	db_commit(struct db *);
void	db_rollback(struct db *);

/* rowid of the last insert on this connection. */
long long db_last_id(struct db *);

#endif
