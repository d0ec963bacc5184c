/*
 * store/db_terms.c: the SQL of the terminals (sql/021-terminals.sql) and
 * the readers of their rows.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "store/db.h"
#include "store/db_terms.h"
#include "store/extern.h"

const struct db_sql db_sql_terms[] = {
	{ STMT_TERM_INSERT,
	    "INSERT INTO terminal (id, owner, client_id, command, cols, rows, "
	    "created, last_used) VALUES (?, ?, ?, substr(?, 1, 4096), ?, ?, "
	    "?, ?)" },
	{ STMT_TERM_GET,
	    "SELECT owner, created, last_used, closed IS NOT NULL FROM terminal "
	    "WHERE id = ?" },
	{ STMT_TERM_TOUCH,
	    "UPDATE terminal SET last_used = ? WHERE id = ?" },
	{ STMT_TERM_CLOSE,
	    "UPDATE terminal SET closed = ?1, exit_code = ?2 WHERE id = ?3 AND "
	    "closed IS NULL" },
	{ STMT_TERM_OPEN_COUNT,
	    "SELECT count(*) FROM terminal WHERE owner = ? AND closed IS NULL "
	    "AND last_used >= ?" },
	{ STMT_TERM_LIST,
	    "SELECT id, CASE WHEN closed IS NOT NULL THEN 'closed' "
	    "ELSE 'open' END, owner, "
	    "client_id, created, last_used, exit_code, "
	    "substr(replace(command, char(10), ' '), 1, 200) FROM terminal "
	    "ORDER BY created DESC, id LIMIT ?" },
	{ STMT_COUNT_TERMINALS,
	    "SELECT count(*), coalesce(sum(closed IS NULL), 0) FROM terminal" },
	{ STMT_TERM_OWNER,
	    "SELECT owner FROM terminal WHERE id = ? AND closed IS NULL" },
	{ STMT_TERM_PRUNE,
	    "DELETE FROM terminal WHERE last_used < ?" },
	{ STMT_TERM_OPEN_ALL,
	    "SELECT id, owner FROM terminal WHERE closed IS NULL AND "
	    "created < ? ORDER BY owner, id" },
	{ STMT__MAX, NULL },
};

static const struct db_col term_list_cols[] = {
	{ "id", DB_COL_TEXT }, { "state", DB_COL_TEXT },
	{ "owner", DB_COL_TEXT }, { "client_id", DB_COL_TEXT },
	{ "created", DB_COL_INT }, { "last_used", DB_COL_INT },
	{ "exit_code", DB_COL_INT }, { "command", DB_COL_TEXT },
	{ NULL, 0 }
};
static const struct db_col count_terms_cols[] = {
	{ "total", DB_COL_INT }, { "open", DB_COL_INT }, { NULL, 0 }
};

const struct db_shape db_shape_terms[] = {
	{ STMT_TERM_LIST, term_list_cols },
	{ STMT_COUNT_TERMINALS, count_terms_cols },
	{ STMT__MAX, NULL }
};

enum lookup_result
db_term_get(struct db *db, const char *id, struct db_term *t)
{
	struct db_q	*q;
	enum lookup_result rc;

	memset(t, 0, sizeof(*t));
	q = db_query(db, STMT_TERM_GET, "t", id);
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		db_col_copy(q, 0, t->owner, sizeof(t->owner));
		t->created = db_int(q, 1);
		t->last_used = db_int(q, 2);
		t->closed = db_int(q, 3) != 0;
	}
	db_done(q);
	return rc;
}

long long
db_term_open_count(struct db *db, const char *owner, long long min_last_used)
{
	struct db_q	*q;
	long long	 n = -1;

	if ((q = db_query(db, STMT_TERM_OPEN_COUNT, "ti", owner,
	    min_last_used)) == NULL)
		return -1;
	if (db_step(q) == DB_ROW)
		n = db_int(q, 0);
	db_done(q);
	return n;
}

int
db_term_open_list(struct db *db, long long max_created,
    struct json_object *out)
{
	struct json_object	*pair;
	struct db_q		*q;
	enum db_step		 st;

	if ((q = db_query(db, STMT_TERM_OPEN_ALL, "i", max_created)) == NULL)
		return -1;
	while ((st = db_step(q)) == DB_ROW) {
		pair = json_object_new_array();
		json_object_array_add(pair, json_object_new_string(
		    db_text(q, 0) != NULL ? db_text(q, 0) : ""));
		json_object_array_add(pair, json_object_new_string(
		    db_text(q, 1) != NULL ? db_text(q, 1) : ""));
		json_object_array_add(out, pair);
	}
	db_done(q);
	return st == DB_DONE ? 0 : -1;
}
