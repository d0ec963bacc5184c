/*
 * rows.c: query results as JSON objects, the way every sandboxctl command
 * reads the database (ctl/extern.h). The members are named and typed in
 * store/, beside each statement's SQL (db_row_json); here they are only
 * gathered, printed and read by name.
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

bool
ctl_rows_one(struct db *db, enum db_stmt st, const char *types,
    long long arg, struct json_object *obj)
{
	struct db_q	*q;
	bool		 row = false;

	if ((q = query(db, st, types, arg, 0)) == NULL)
		return false;
	if (db_step(q) == DB_ROW)
		row = db_row_json(q, obj) == 0;
	db_done(q);
	return row;
}

long long
ctl_rows_count(struct db *db, enum db_stmt st, const char *types,
    long long arg, const char *member)
{
	struct json_object	*o = json_object_new_object();
	long long		 v = 0;

	/* No row, an error or NULL: 0. */
	if (ctl_rows_one(db, st, types, arg, o) && js_int(o, member, &v) == -1)
		v = 0;
	json_object_put(o);
	return v;
}

int
ctl_rows_list(struct ctl *c, enum db_stmt st, const char *types, long long a,
    long long b, const struct ctl_table *t)
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
		db_row_json(q, o);
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
