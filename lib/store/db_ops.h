/*
 * store/db_ops.h: the rows of the clean-up's bookkeeping (sql/005-ops.sql),
 * read in store/db_ops.c beside their SQL. The operator's listings
 * (STMT_OPS_*, STMT_AUDIT_LIST, STMT_COUNT_*) are also there, with the
 * shapes db_row_json (store/db.h) shows their rows by.
 */
#ifndef CS_STORE_DB_OPS_H
#define CS_STORE_DB_OPS_H

#include "base/error.h"

struct db;

/* The clean-up lease (STMT_CLEANUP_LEASE_GET), the columns read. */
struct db_cleanup_lease {
	long long	last_run;
	long long	lease_until;
};

/*
 * The clean-up lease into l. LOOKUP_FOUND, LOOKUP_NONE (no row yet) or
 * LOOKUP_ERROR (logged).
 */
enum lookup_result db_cleanup_lease_get(struct db *,
	    struct db_cleanup_lease *l);

#endif
