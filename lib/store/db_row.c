/*
 * store/db_row.c: a listing's row as JSON members (db_row_json), named and
 * typed by the row shape its area file declares beside its SQL (db_ops.c,
 * db_oauth.c). sandboxctl shows these rows as they are, so a JSON object
 * is all it needs of them; no column number leaves store/.
 */
#include <stddef.h>

#include "base/js.h"
#include "base/log.h"
#include "store/db.h"
#include "store/extern.h"

/* The areas' shape tables (extern.h). */
static const struct db_shape *const shape_tables[] = {
	db_shape_oauth, db_shape_ops, db_shape_terms, db_shape_snap,
};

/*
 * The columns of statement id's row, or NULL. A linear search: there are
 * a dozen listings, each read once a row by an operator's command.
 */
static const struct db_col *
shape(enum db_stmt id)
{
	const struct db_shape	*t;
	size_t			 i;

	for (i = 0; i < sizeof(shape_tables) / sizeof(shape_tables[0]); i++)
		for (t = shape_tables[i]; t->cols != NULL; t++)
			if (t->id == id)
				return t->cols;
	return NULL;
}

int
db_row_width(enum db_stmt id)
{
	const struct db_col	*c;
	int			 n = 0;

	if ((c = shape(id)) == NULL)
		return -1;
	while (c[n].name != NULL)
		n++;
	return n;
}

int
db_row_json(struct db_q *q, struct json_object *obj)
{
	const struct db_col	*c;
	int			 col;

	if ((c = shape(db_q_id(q))) == NULL) {
		log_warn("db: statement %d has no row shape", db_q_id(q));
		return -1;
	}
	for (col = 0; c->name != NULL; c++, col++) {
		if (c->kind == DB_COL_BOOL)
			js_set_bool(obj, c->name, db_int(q, col) != 0);
		else if (db_null(q, col))
			js_set(obj, c->name, NULL);
		else if (c->kind == DB_COL_INT)
			js_set_int(obj, c->name, db_int(q, col));
		else
			js_set_str(obj, c->name, db_text(q, col));
	}
	return 0;
}
