/*
 * store/db_runs.c: the SQL of the run records, Tasks and handles, and the
 * reconciler's lease (sql/004-runs.sql, sql/007-tasks.sql,
 * sql/015-reconcile.sql), and the readers of their rows.
 */
#include <stdlib.h>
#include <string.h>

#include "base/js.h"
#include "store/db.h"
#include "store/db_runs.h"
#include "store/extern.h"

const struct db_sql db_sql_runs[] = {
	{ STMT_RUN_INSERT,
	    "INSERT INTO run (id, session_hash, request_id, client_id, "
	    "client_name, command, timeout, started, owner, container_id, "
	    "container_started) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	{ STMT_RUN_FINISH,
	    "UPDATE run SET finished = ?, state = ?, exit_code = ?, "
	    "duration_ms = ?, stdout_bytes = ?, stderr_bytes = ?, result = ? "
	    "WHERE id = ?" },
	{ STMT_RUN_ERROR,
	    "UPDATE run SET error = ? WHERE id = ?" },
	{ STMT_RUN_CANCEL,
	    "UPDATE run SET cancel_requested = 1 WHERE session_hash = ? AND "
	    "request_id = ? AND state = 'running' RETURNING id" },
	{ STMT_RUN_CANCELLED,
	    "SELECT cancel_requested FROM run WHERE id = ?" },
	{ STMT_RUN_GET,
	    "SELECT state, result FROM run WHERE id = ?" },
	{ STMT_RUN_RECENT,
	    "SELECT id, state, started, exit_code, substr(command, 1, 200) "
	    "FROM run ORDER BY started DESC, rowid DESC LIMIT ?" },
	{ STMT_TASK_MARK,
	    "UPDATE run SET handle = ?, updated = ? WHERE id = ?" },
	{ STMT_TASK_GET,
	    "SELECT owner, state, started, finished, handle, result, "
	    "last_line, updated, timeout FROM run WHERE id = ?" },
	{ STMT_TASK_NOTE,
	    "UPDATE run SET last_line = ?, updated = ? WHERE id = ?" },
	{ STMT_TASK_CANCEL,
	    "UPDATE run SET cancel_requested = 1 WHERE id = ? AND "
	    "state = 'running' RETURNING id" },
	/*
	 * A row left 'running' by a killed worker stops counting after its
	 * timeout. A restore under way counts as one (sql/025-restore-lease.sql;
	 * one that answered early is counted by its run already).
	 */
	{ STMT_RUN_COUNT_ACTIVE,
	    "SELECT (SELECT count(*) FROM run WHERE state = 'running' AND "
	    "started + timeout + 60 > ?2) + r.n, "
	    "(SELECT count(*) FROM run WHERE state = 'running' AND owner = ?1 "
	    "AND started + timeout + 60 > ?2) + r.mine "
	    "FROM (SELECT count(*) AS n, coalesce(sum(asked_by = ?1), 0) AS mine "
	    "FROM snapshot_restore WHERE state = 'running' AND deadline > ?2 "
	    "AND run_id IS NULL) AS r" },
	{ STMT_RUN_INFO,
	    "SELECT state, timeout, started, cancel_requested, container_id, "
	    "container_started FROM run WHERE id = ?" },
	{ STMT_RUN_UNFINISHED,
	    "SELECT id, owner FROM run WHERE state = 'running' "
	    "ORDER BY owner, started LIMIT ?" },
	{ STMT_RUN_RELEASED,
	    "SELECT id FROM run WHERE state = 'running' AND owner = ? "
	    "AND handle IS NOT NULL ORDER BY started LIMIT ?" },
	{ STMT_RECONCILE_LEASE_TAKE,
	    "UPDATE reconcile_lease SET last_run = ?1, lease_until = ?2, "
	    "holder = ?3 WHERE id = 1 AND lease_until <= ?1 "
	    "AND last_run <= ?1 - ?4" },
	{ STMT_RECONCILE_LEASE_RELEASE,
	    "UPDATE reconcile_lease SET lease_until = 0, holder = NULL "
	    "WHERE id = 1 AND holder = ?" },
	/* A row still running is pruned only 30 days (the longest timeout) late. */
	{ STMT_RUN_PRUNE,
	    "DELETE FROM run WHERE coalesce(finished, started + 2592000) < ?" },
	{ STMT_RUN_CLEAR_RESULTS,
	    "UPDATE run SET result = NULL WHERE result IS NOT NULL "
	    "AND finished IS NOT NULL AND finished < ?" },
	{ STMT_RUN_GET_OWNED,
	    "SELECT state, result FROM run WHERE id = ? AND owner = ?" },
	{ STMT_RUN_RECENT_OWNED,
	    "SELECT id, state, started, exit_code, substr(command, 1, 200) "
	    "FROM run WHERE owner = ? ORDER BY started DESC, rowid DESC LIMIT ?" },
	{ STMT__MAX, NULL }
};

enum lookup_result
db_run_cancelled(struct db *db, const char *run_id, bool *cancel)
{
	struct db_q		*q;
	enum lookup_result	 rc;

	*cancel = false;
	q = db_query(db, STMT_RUN_CANCELLED, "t", run_id);
	/* STMT_RUN_CANCELLED: cancel_requested. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND)
		*cancel = db_int(q, 0) != 0;
	db_done(q);
	return rc;
}

enum lookup_result
db_run_get_owned(struct db *db, const char *run_id, const char *owner,
    char *state, size_t n, struct json_object **result)
{
	struct db_q		*q;
	const char		*text;
	enum lookup_result	 rc;

	*result = NULL;
	q = db_query(db, STMT_RUN_GET_OWNED, "tt", run_id, owner);
	/* STMT_RUN_GET_OWNED: state, result. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		db_col_copy(q, 0, state, n);
		if ((text = db_text(q, 1)) != NULL)
			*result = js_parse(text, strlen(text), JS_MAX_DEPTH, NULL);
	}
	db_done(q);
	return rc;
}

enum db_step
db_run_recent_next(struct db_q *q, struct db_run_recent *r)
{
	enum db_step	st;

	memset(r, 0, sizeof(*r));
	if ((st = db_step(q)) != DB_ROW)
		return st;
	/* STMT_RUN_RECENT(_OWNED): id, state, started, exit_code, command. */
	r->id = db_text(q, 0);
	r->state = db_text(q, 1);
	r->started = db_int(q, 2);
	r->exit_set = !db_null(q, 3);
	r->exit_code = db_int(q, 3);
	r->command = db_text(q, 4);
	return st;
}

enum db_step
db_run_id_next(struct db_q *q, char id[DB_RUN_ID_MAX + 1])
{
	enum db_step	st;

	/* STMT_RUN_RELEASED: id. */
	if ((st = db_step(q)) == DB_ROW)
		db_col_copy(q, 0, id, DB_RUN_ID_MAX + 1);
	return st;
}

enum db_step
db_run_unfinished_next(struct db_q *q, struct db_run_unfinished *r)
{
	enum db_step	st;

	memset(r, 0, sizeof(*r));
	/* STMT_RUN_UNFINISHED: id, owner. */
	if ((st = db_step(q)) == DB_ROW) {
		db_col_copy(q, 0, r->id, sizeof(r->id));
		db_col_copy(q, 1, r->owner, sizeof(r->owner));
	}
	return st;
}

enum lookup_result
db_run_info(struct db *db, const char *run_id, struct db_run_info *in)
{
	struct db_q		*q;
	enum lookup_result	 rc;

	memset(in, 0, sizeof(*in));
	q = db_query(db, STMT_RUN_INFO, "t", run_id);
	/* STMT_RUN_INFO: state, timeout, started, cancel_requested,
	   container_id, container_started. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		db_col_copy(q, 0, in->state, sizeof(in->state));
		in->timeout = db_int(q, 1);
		in->started = db_int(q, 2);
		in->cancel = db_int(q, 3) != 0;
		db_col_copy(q, 4, in->container_id, sizeof(in->container_id));
		db_col_copy(q, 5, in->container_started,
		    sizeof(in->container_started));
	}
	db_done(q);
	return rc;
}

int
db_run_count_active(struct db *db, const char *owner, long long now,
    long long *all, long long *mine)
{
	struct db_q	*q;
	int		 rc = -1;

	q = db_query(db, STMT_RUN_COUNT_ACTIVE, "ti", owner, now);
	/* STMT_RUN_COUNT_ACTIVE: running, running for owner. */
	if (db_first_row(q) == LOOKUP_FOUND) {
		*all = db_int(q, 0);
		*mine = db_int(q, 1);
		rc = 0;
	}
	db_done(q);
	return rc;
}

void
db_task_clear(struct db_task *t)
{
	free(t->owner);
	free(t->state);
	free(t->handle);
	free(t->result);
	free(t->last_line);
	memset(t, 0, sizeof(*t));
}

enum lookup_result
db_task_get(struct db *db, const char *id, struct db_task *t)
{
	struct db_q		*q;
	bool			 oom = false;
	enum lookup_result	 rc;

	memset(t, 0, sizeof(*t));
	q = db_query(db, STMT_TASK_GET, "t", id);
	/* STMT_TASK_GET: owner, state, started, finished, handle, result,
	   last_line, updated, timeout. */
	if ((rc = db_first_row(q)) == LOOKUP_FOUND) {
		t->owner = db_col_dup(q, 0, &oom);
		t->state = db_col_dup(q, 1, &oom);
		t->started = db_int(q, 2);
		t->finished_set = !db_null(q, 3);
		t->finished = db_int(q, 3);
		t->handle = db_col_dup(q, 4, &oom);
		t->result = db_col_dup(q, 5, &oom);
		t->last_line = db_col_dup(q, 6, &oom);
		t->updated_set = !db_null(q, 7);
		t->updated = db_int(q, 7);
		t->timeout = db_int(q, 8);
		if (oom)
			rc = LOOKUP_ERROR;
	}
	db_done(q);
	if (rc != LOOKUP_FOUND)
		db_task_clear(t);
	return rc;
}
