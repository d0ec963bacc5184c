/*
 * store/extern.h: what the files of store/ share, and nothing outside
 * store/ includes.
 *
 * Each db_AREA.c holds the SQL of its area's statements, as a table of
 * struct db_sql ending with { STMT__MAX, NULL }, and the readers that decode
 * their rows; db.c gathers the tables (db_sql_tables) into the one array it
 * prepares from. The operator's listings are not decoded into structs but
 * shown as JSON (db_row.c): their area file declares each one's columns,
 * names and kinds, beside its SQL, in a table of struct db_shape.
 */
#ifndef CS_STORE_EXTERN_H
#define CS_STORE_EXTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "store/db.h"

struct db_sql {
	enum db_stmt	 id;
	const char	*sql;
};

extern const struct db_sql db_sql_session[];
extern const struct db_sql db_sql_runs[];
extern const struct db_sql db_sql_oauth[];
extern const struct db_sql db_sql_links[];
extern const struct db_sql db_sql_sandbox[];
extern const struct db_sql db_sql_ops[];
extern const struct db_sql db_sql_terms[];
extern const struct db_sql db_sql_secrets[];
extern const struct db_sql db_sql_snap[];

/* How db_row_json shows a column. */
enum db_col_kind {
	DB_COL_TEXT,	/* a string, or null */
	DB_COL_INT,	/* an integer, or null */
	DB_COL_BOOL	/* true unless 0 or NULL */
};

/* A listing's column: its JSON member name and kind. */
struct db_col {
	const char		*name;
	enum db_col_kind	 kind;
};

/*
 * The row of a listing: its columns in the order of its SELECT, the array
 * ending with a NULL name. The tables end with { STMT__MAX, NULL }.
 */
struct db_shape {
	enum db_stmt		 id;
	const struct db_col	*cols;
};

extern const struct db_shape db_shape_oauth[];
extern const struct db_shape db_shape_ops[];
extern const struct db_shape db_shape_terms[];
extern const struct db_shape db_shape_snap[];

/*
 * The number of columns the row shape of statement id names, or -1 when
 * it has none (db_check compares it with the columns of the SELECT).
 */
int	 db_row_width(enum db_stmt id);

/* The statement q runs. */
enum db_stmt db_q_id(struct db_q *q);

/* Columns of the current row by number: for the readers of store/ only. */
const char	*db_text(struct db_q *, int col);	/* NULL for NULL */
long long	 db_int(struct db_q *, int col);
const void	*db_blob(struct db_q *, int col, size_t *len);
bool		 db_null(struct db_q *, int col);

/*
 * Step q once and map the step to a lookup: LOOKUP_FOUND with a row,
 * LOOKUP_NONE without one, LOOKUP_ERROR on an error or when q is NULL (a
 * failed db_query). The caller still calls db_done(q).
 */
enum lookup_result db_first_row(struct db_q *q);

/*
 * A malloc'd copy of text column col, NULL for NULL; *oom set when out of
 * memory (and NULL returned).
 */
char	*db_col_dup(struct db_q *q, int col, bool *oom);

/* Copy text column col into out (size n, cut short to fit); "" for NULL. */
void	 db_col_copy(struct db_q *q, int col, char *out, size_t n);

/*
 * Copy text column col into out (size n) only when it is not NULL and
 * fits whole (strlen < n). Returns true when copied.
 */
bool	 db_col_fits(struct db_q *q, int col, char *out, size_t n);

#endif
