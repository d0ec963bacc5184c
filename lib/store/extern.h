/*
 * store/extern.h: what the files of store/ share, and nothing outside
 * store/ includes.
 *
 * Each db_AREA.c holds the SQL of its area's statements, as a table of
 * struct db_sql ending with { STMT__MAX, NULL }, and the readers that decode
 * their rows; db.c gathers the tables (db_sql_tables) into the one array it
 * prepares from.
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
