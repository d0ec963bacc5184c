/*
 * store/db_snap.c: the SQL of snapshots and their restores (lib/sandbox/
 * snapshot*.c; sql/023-snapshots.sql) and the readers of their rows.
 */
#include <string.h>

#include "store/db.h"
#include "store/db_snap.h"
#include "store/extern.h"

const struct db_sql db_sql_snap[] = {
	{ STMT_SNAP_INSERT,
	    "INSERT INTO snapshot (id, container, owner, created, note, image, "
	    "archive_bytes, layer_bytes, took_ms, form, base, volume) "
	    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)" },
	{ STMT_SNAP_GET,
	    "SELECT image, archive_bytes, created, note, form, coalesce(base, ''), "
	    "hidden "
	    "FROM snapshot WHERE id = ? AND container = ?" },
	{ STMT_SNAP_LIST,
	    "SELECT id, created, note, archive_bytes, layer_bytes, took_ms, "
	    "owner, form FROM snapshot WHERE container = ? AND hidden = 0 "
	    "ORDER BY created DESC, rowid DESC" },
	{ STMT_SNAP_TOTAL,
	    "SELECT coalesce(sum(hidden = 0), 0), "
	    "coalesce(sum(archive_bytes + layer_bytes), 0) "
	    "FROM snapshot WHERE container = ?" },
	{ STMT_SNAP_DELETE,
	    "DELETE FROM snapshot WHERE id = ? AND container = ?" },
	{ STMT_SNAP_PER_SANDBOX,
	    "SELECT container, max(owner), sum(hidden = 0), sum(archive_bytes), "
	    "sum(layer_bytes) "
	    "FROM snapshot GROUP BY container ORDER BY container" },
	{ STMT_SNAP_IDS,
	    "SELECT id, image FROM snapshot WHERE container = ?" },
	{ STMT_SNAP_RESTORE_BEGIN,
	    "INSERT INTO snapshot_restore (snapshot_id, container, asked_by, "
	    "client, started, deadline) SELECT ?1, ?2, ?3, ?4, ?5, ?6 "
	    "WHERE NOT EXISTS (SELECT 1 FROM snapshot_restore WHERE "
	    "container = ?2 AND state = 'running' AND deadline > ?5)" },
	{ STMT_SNAP_RESTORE_END,
	    "UPDATE snapshot_restore SET finished = ?, state = ?, message = ? "
	    "WHERE id = ?" },
	{ STMT_RUN_ACTIVE_IN,
	    "SELECT id FROM run WHERE state = 'running' AND container_id = ? "
	    "AND started + timeout + 60 > ? ORDER BY started" },
	{ STMT_RUN_STOPPED_BY,
	    "UPDATE run SET cancel_requested = 1, error = ? WHERE id = ? "
	    "AND state = 'running'" },
	{ STMT_RUN_STOP_REASON,
	    "SELECT error FROM run WHERE id = ? AND cancel_requested = 1 "
	    "AND error IS NOT NULL" },
	{ STMT_SNAP_RESTORE_RENEW,
	    "UPDATE snapshot_restore SET deadline = ? WHERE id = ? AND "
	    "state = 'running'" },
	{ STMT_SNAP_RESTORE_LAPSE,
	    "UPDATE snapshot_restore SET state = 'failed', finished = ?1, "
	    "message = 'the restoring process stopped before the end (its "
	    "lease lapsed)' WHERE container = ?2 AND state = 'running' AND "
	    "deadline <= ?1" },
	{ STMT_SNAP_RESTORING,
	    "SELECT snapshot_id FROM snapshot_restore WHERE container = ? AND "
	    "state = 'running' AND deadline > ? ORDER BY id DESC LIMIT 1" },
	{ STMT_SNAP_RESTORE_RUN,
	    "UPDATE snapshot_restore SET run_id = ? WHERE id = ?" },
	{ STMT_SNAP_RUN_STATE,
	    "SELECT CASE WHEN state = 'running' AND deadline > ?2 THEN 'live' "
	    "WHEN state <> 'running' AND finished > ?2 - 30 THEN 'live' "
	    "ELSE 'gone' END FROM snapshot_restore WHERE run_id = ?1 "
	    "ORDER BY id DESC LIMIT 1" },
	{ STMT_SNAP_NEWEST,
	    "SELECT s.id, s.form, coalesce(s.base, ''), s.archive_bytes, "
	    "coalesce(b.archive_bytes, 0) FROM snapshot s "
	    "LEFT JOIN snapshot b ON b.id = s.base "
	    "WHERE s.container = ?1 AND s.volume = ?2 AND s.hidden = 0 AND "
	    "s.form IN ('full', 'diff') ORDER BY s.created DESC, s.rowid DESC "
	    "LIMIT 1" },
	{ STMT_SNAP_HIDE,
	    "UPDATE snapshot SET hidden = 1, image = '' "
	    "WHERE id = ? AND container = ?" },
	{ STMT_SNAP_DIFFS,
	    "SELECT count(*) FROM snapshot WHERE base = ?" },
	{ STMT__MAX, NULL }
};

static const struct db_col cols_list[] = {
	{ "snapshot_id", DB_COL_TEXT }, { "created", DB_COL_INT },
	{ "note", DB_COL_TEXT }, { "sandbox_bytes", DB_COL_INT },
	{ "layer_bytes", DB_COL_INT }, { "took_ms", DB_COL_INT },
	{ "owner", DB_COL_TEXT }, { "kept_as", DB_COL_TEXT },
	{ NULL, DB_COL_TEXT }
};

static const struct db_col cols_per_sandbox[] = {
	{ "container", DB_COL_TEXT }, { "owner", DB_COL_TEXT },
	{ "count", DB_COL_INT },
	{ "sandbox_bytes", DB_COL_INT }, { "layer_bytes", DB_COL_INT },
	{ NULL, DB_COL_TEXT }
};

const struct db_shape db_shape_snap[] = {
	{ STMT_SNAP_LIST, cols_list },
	{ STMT_SNAP_PER_SANDBOX, cols_per_sandbox },
	{ STMT__MAX, NULL }
};

enum lookup_result
db_snap_get(struct db *db, const char *id, const char *container,
    struct db_snap *s)
{
	struct db_q		*q;
	enum lookup_result	 r;

	memset(s, 0, sizeof(*s));
	if ((q = db_query(db, STMT_SNAP_GET, "tt", id, container)) == NULL)
		return LOOKUP_ERROR;
	/* STMT_SNAP_GET: image, archive_bytes, created, note, form, base, hidden. */
	if ((r = db_first_row(q)) == LOOKUP_FOUND) {
		if (!db_col_fits(q, 0, s->image, sizeof(s->image)) ||
		    !db_col_fits(q, 4, s->form, sizeof(s->form)) ||
		    !db_col_fits(q, 5, s->base, sizeof(s->base)))
			r = LOOKUP_ERROR;
		s->archive_bytes = db_int(q, 1);
		s->created = db_int(q, 2);
		db_col_copy(q, 3, s->note, sizeof(s->note));
		s->hidden = db_int(q, 6) != 0;
	}
	db_done(q);
	return r;
}

int
db_snap_total(struct db *db, const char *container, long long *count,
    long long *bytes)
{
	struct db_q	*q;
	int		 rc = -1;

	*count = *bytes = 0;
	if ((q = db_query(db, STMT_SNAP_TOTAL, "t", container)) == NULL)
		return -1;
	/* STMT_SNAP_TOTAL: count, bytes. */
	if (db_first_row(q) == LOOKUP_FOUND) {
		*count = db_int(q, 0);
		*bytes = db_int(q, 1);
		rc = 0;
	}
	db_done(q);
	return rc;
}

enum db_step
db_snap_ids_next(struct db_q *q, char id[DB_SNAP_ID_MAX],
    char image[DB_SNAP_IMAGE_MAX])
{
	enum db_step	st;

	/* STMT_SNAP_IDS: id, image; rows that do not fit are passed over. */
	while ((st = db_step(q)) == DB_ROW)
		if (db_col_fits(q, 0, id, DB_SNAP_ID_MAX) &&
		    db_col_fits(q, 1, image, DB_SNAP_IMAGE_MAX))
			break;
	return st;
}

enum db_step
db_snap_run_next(struct db_q *q, char id[72])
{
	enum db_step	st;

	/* STMT_RUN_ACTIVE_IN: id. */
	while ((st = db_step(q)) == DB_ROW)
		if (db_col_fits(q, 0, id, 72))
			break;
	return st;
}

enum lookup_result
db_snap_newest(struct db *db, const char *container, const char *volume,
    struct db_snap_newest *n)
{
	struct db_q		*q;
	enum lookup_result	 r;

	memset(n, 0, sizeof(*n));
	if ((q = db_query(db, STMT_SNAP_NEWEST, "tt", container, volume)) ==
	    NULL)
		return LOOKUP_ERROR;
	/* STMT_SNAP_NEWEST: id, form, base, bytes, base's bytes. */
	if ((r = db_first_row(q)) == LOOKUP_FOUND) {
		if (!db_col_fits(q, 0, n->id, sizeof(n->id)) ||
		    !db_col_fits(q, 1, n->form, sizeof(n->form)) ||
		    !db_col_fits(q, 2, n->base, sizeof(n->base)))
			r = LOOKUP_ERROR;
		n->bytes = db_int(q, 3);
		n->base_bytes = db_int(q, 4);
	}
	db_done(q);
	return r;
}
