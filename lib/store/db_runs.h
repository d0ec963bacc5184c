/*
 * store/db_runs.h: the rows of the run records, Tasks and handles
 * (sql/004-runs.sql, sql/007-tasks.sql, sql/016-run-container.sql), read in
 * store/db_runs.c beside their SQL.
 *
 * The list readers step a query the caller started with db_query (the
 * statement and its parameters named there) and decode one row each call;
 * the caller ends it with db_done, as for any query.
 */
#ifndef CS_STORE_DB_RUNS_H
#define CS_STORE_DB_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "store/db.h"

#define DB_RUN_ID_MAX	64	/* runs.h's RUN_ID_MAX */
#define DB_IDENT_MAX	72	/* sandbox.h's SANDBOX_IDENT_MAX */

struct json_object;

/*
 * Whether run_id's cancellation was asked (STMT_RUN_CANCELLED) into
 * *cancel. LOOKUP_FOUND, LOOKUP_NONE or LOOKUP_ERROR (logged); *cancel is
 * false unless found and asked.
 */
enum lookup_result db_run_cancelled(struct db *, const char *run_id,
	    bool *cancel);

/*
 * The run run_id of owner (STMT_RUN_GET_OWNED): its state into state
 * (size n, cut short to fit) and its result, parsed, into *result (NULL
 * when the column is NULL or is not JSON; the caller puts it). Returns
 * LOOKUP_FOUND, LOOKUP_NONE (unknown or another owner's) or LOOKUP_ERROR.
 */
enum lookup_result db_run_get_owned(struct db *, const char *run_id,
	    const char *owner, char *state, size_t n,
	    struct json_object **result);

/*
 * A row of STMT_RUN_RECENT and STMT_RUN_RECENT_OWNED. The strings are the
 * statement's (NULL for NULL), valid until the next step or db_done.
 */
struct db_run_recent {
	const char	*id;
	const char	*state;
	long long	 started;
	bool		 exit_set;	/* exit_code is not NULL */
	long long	 exit_code;
	const char	*command;	/* its first 200 characters */
};

/* The next row into r: DB_ROW, DB_DONE or DB_ERROR (logged). */
enum db_step	db_run_recent_next(struct db_q *, struct db_run_recent *r);

/*
 * The next id of STMT_RUN_RELEASED into id (cut short to fit; "" for
 * NULL): DB_ROW, DB_DONE or DB_ERROR.
 */
enum db_step	db_run_id_next(struct db_q *, char id[DB_RUN_ID_MAX + 1]);

/* A row of STMT_RUN_UNFINISHED, cut short to fit ("" for NULL). */
struct db_run_unfinished {
	char		id[DB_RUN_ID_MAX + 1];
	char		owner[DB_OWNER_MAX];
};

/* The next row into r: DB_ROW, DB_DONE or DB_ERROR. */
enum db_step	db_run_unfinished_next(struct db_q *,
		    struct db_run_unfinished *r);

/* What collecting a run needs of its row (STMT_RUN_INFO). */
struct db_run_info {
	char		state[32];		/* cut short to fit */
	long long	timeout;
	long long	started;
	bool		cancel;			/* cancellation asked */
	char		container_id[DB_IDENT_MAX];	/* "" when not stored */
	char		container_started[DB_IDENT_MAX];
};

/*
 * The run run_id into in. LOOKUP_FOUND, LOOKUP_NONE or LOOKUP_ERROR
 * (logged); in is zeroed unless found.
 */
enum lookup_result db_run_info(struct db *, const char *run_id,
	    struct db_run_info *in);

/*
 * The running rows, all and owner's, whose timeout (plus a minute) has not
 * passed at now (STMT_RUN_COUNT_ACTIVE). 0, or -1 (logged).
 */
int	db_run_count_active(struct db *, const char *owner, long long now,
	    long long *all, long long *mine);

/*
 * A Task or handle row (STMT_TASK_GET). The strings are malloc'd copies,
 * NULL for NULL, freed by db_task_clear.
 */
struct db_task {
	char		*owner;
	char		*state;
	long long	 started;
	bool		 finished_set;	/* finished is not NULL */
	long long	 finished;
	char		*handle;	/* "task", a handle's kind, or NULL */
	char		*result;	/* JSON text; NULL once dropped */
	char		*last_line;	/* latest output seen, or NULL */
	bool		 updated_set;	/* updated is not NULL */
	long long	 updated;
	long long	 timeout;
};

/*
 * The row of id into t. LOOKUP_FOUND, LOOKUP_NONE, or LOOKUP_ERROR (logged,
 * or out of memory). Free with db_task_clear (also after NONE and ERROR).
 */
enum lookup_result db_task_get(struct db *, const char *id, struct db_task *t);
void	db_task_clear(struct db_task *);

#endif
