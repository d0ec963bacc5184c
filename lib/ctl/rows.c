/*
 * rows.c: query results as JSON members, the way every sandboxctl command
 * reads the database (ctl/extern.h): a table of column numbers and member
 * names per statement.
 */
#include <stdio.h>

#include "base/js.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"

bool
ctl_rows_have(struct db *db, const char *name)
{
	struct db_q	*q;
	bool		 yes = false;

	if ((q = db_query(db, STMT_TABLE_EXISTS, "t", name)) != NULL) {
		yes = db_step(q) == DB_ROW;
		db_done(q);
	}
	return yes;
}

int
ctl_rows_need(struct ctl *c, const char *table, const char *what)
{
	if (ctl_rows_have(c->db, table))
		return 0;
	fprintf(stderr, "sandboxctl: this database (schema version %d) has no "
	    "%s: that part is not in this build\n", db_version(c->db), what);
	return -1;
}

/* Column col as a JSON value: NULL, integer or string. */
static struct json_object *
col_value(struct db_q *q, int col, bool integer)
{
	if (db_null(q, col))
		return NULL;
	if (integer)
		return json_object_new_int64(db_int(q, col));
	return json_object_new_string(db_text(q, col));
}

void
ctl_rows_set(struct json_object *obj, struct db_q *q, const struct column *cols)
{
	for (; cols->name != NULL; cols++) {
		if (cols->kind == COL_BOOL)
			js_set_bool(obj, cols->name, db_int(q, cols->col) != 0);
		else
			js_set(obj, cols->name, col_value(q, cols->col,
			    cols->kind == COL_INT));
	}
}

/*
 * Statement st with as many of the integers a and b as types says (the
 * rest are passed but not read).
 */
static struct db_q *
query(struct db *db, enum db_stmt st, const char *types, long long a,
    long long b)
{
	return db_query(db, st, types, a, b);
}

void
ctl_rows_counts(struct db *db, enum db_stmt st, const char *types,
    long long arg, struct json_object *obj, const struct column *cols)
{
	struct db_q *q;

	if ((q = query(db, st, types, arg, 0)) == NULL)
		return;
	if (db_step(q) == DB_ROW)
		ctl_rows_set(obj, q, cols);
	db_done(q);
}

long long
ctl_rows_count(struct db *db, enum db_stmt st, const char *types,
    long long arg, int col)
{
	struct db_q	*q;
	long long	 v = 0;

	if ((q = query(db, st, types, arg, 0)) == NULL)
		return 0;
	if (db_step(q) == DB_ROW)
		v = db_int(q, col);
	db_done(q);
	return v;
}

int
ctl_rows_list(struct ctl *c, enum db_stmt st, const char *types, long long a,
    long long b, const struct column *cols, const struct ctl_table *t)
{
	struct json_object	*arr, *o;
	struct db_q		*q;
	enum db_step		 s;
	int			 rc = 1;

	arr = json_object_new_array();
	if ((q = query(c->db, st, types, a, b)) == NULL)
		goto out;
	while ((s = db_step(q)) == DB_ROW) {
		o = json_object_new_object();
		ctl_rows_set(o, q, cols);
		json_object_array_add(arr, o);
	}
	db_done(q);
	if (s == DB_ERROR)
		goto out;
	if (c->json)
		ctl_show_json(arr);
	else
		ctl_table_print(arr, t);
	rc = 0;
out:
	json_object_put(arr);
	return rc;
}
