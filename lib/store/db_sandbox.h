/*
 * store/db_sandbox.h: the rows of the sandboxes per owner
 * (sql/012-owners.sql, STMT_SANDBOX_*), read in store/db_sandbox.c beside
 * their SQL.
 *
 * The list readers step a query the caller started with db_query (the
 * statement and its parameters named there) and decode one row each call;
 * the caller ends it with db_done, as for any query.
 */
#ifndef CS_STORE_DB_SANDBOX_H
#define CS_STORE_DB_SANDBOX_H

#include <stdbool.h>

#include "store/db.h"

/*
 * The next row of STMT_SANDBOX_IDLE whose owner fits owner (not NULL,
 * shorter than DB_OWNER_MAX; rows that do not are passed over). Returns
 * DB_ROW with owner set, DB_DONE, or DB_ERROR (logged).
 */
enum db_step	db_sandbox_idle_next(struct db_q *, char owner[DB_OWNER_MAX]);

/*
 * The next row of STMT_SANDBOX_RUNNING: *owner is its owner (NULL for
 * NULL), valid until the next step or db_done. DB_ROW, DB_DONE or DB_ERROR.
 */
enum db_step	db_sandbox_running_next(struct db_q *, const char **owner);

/*
 * A row of STMT_SANDBOX_LIST. The strings are the statement's (NULL for
 * NULL), valid until the next step or db_done.
 */
struct db_sandbox {
	const char	*owner;
	const char	*container;
	const char	*volume;
	bool		 running;
	long long	 last_used;
	bool		 stopped_set;	/* stopped is not NULL */
	long long	 stopped;
	const char	*stop_reason;
	long long	 commands;	/* running in it, within their timeout */
};

/* The next row of STMT_SANDBOX_LIST into s: DB_ROW, DB_DONE or DB_ERROR. */
enum db_step	db_sandbox_list_next(struct db_q *, struct db_sandbox *s);

/*
 * owner's slot on the sandbox network (sql/026-owner-addr.sql), given on
 * first use and the owner's for good: 0 with *slot > 0, or -1 (logged).
 */
int		db_owner_slot(struct db *, const char *owner, long long *slot);

#endif
