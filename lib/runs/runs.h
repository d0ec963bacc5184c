/*
 * runs.h: the `run` table (sql/004-runs.sql): every execute call, so that a
 * result outlives the request that asked for it (get_result), a cancellation
 * arriving on another request (perhaps in another process) finds its command,
 * and operators have an audit log.
 */
#ifndef CS_RUNS_H
#define CS_RUNS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct auth_info;
struct db;
struct json_object;
struct sandbox;

#define RUN_ID_MAX	64
#define RUN_COMMAND_LOG	4096	/* bytes of the command kept in the row */

/*
 * Record a command that starts now, in sb's container (its identity,
 * sandbox_identity, is stored with it; sb may be NULL). 0 or -1 (logged).
 */
int	runs_start(struct db *, struct sandbox *sb, const char *run_id,
	    const char *session_id, struct json_object *request_id,
	    const struct auth_info *, const char *command, long timeout);

/*
 * Record how it ended: state is "exit", "timeout", "cancel", "error" or
 * "detached"; exit_code < 0 stores NULL; result (may be NULL) is the
 * CallToolResult kept for get_result. 0 or -1.
 */
int	runs_finish(struct db *, const char *run_id, const char *state,
	    int exit_code, long long duration_ms, unsigned long long out_bytes,
	    unsigned long long err_bytes, struct json_object *result);

/*
 * notifications/cancelled: mark the running command that request_id of
 * session_id started. Returns LOOKUP_FOUND and its run id in run_id (size
 * n), LOOKUP_NONE when no such command is running, LOOKUP_ERROR on error.
 */
/* Keep why a run could not run (one line for the operator). 0 or -1. */
int	runs_set_error(struct db *, const char *run_id, const char *why);

enum lookup_result runs_request_cancel(struct db *, const char *session_id,
	    struct json_object *request_id, char *run_id, size_t n);

/* Has a cancellation been asked for this run? */
bool	runs_cancel_requested(struct db *, const char *run_id);

/*
 * Why the server stopped a run it cancelled itself (a restore with force):
 * a new note for the result (free it), or NULL.
 */
char	*runs_stop_reason(struct db *, const char *run_id);

/*
 * A run of owner (owners.h): its state ("running", ...) into state (size
 * n) and, once finished, its kept result as a new object in *result (NULL
 * if pruned). Returns LOOKUP_FOUND, LOOKUP_NONE when there is no such run
 * of this owner, LOOKUP_ERROR on error.
 */
enum lookup_result runs_get(struct db *, const char *owner, const char *run_id,
	    char *state, size_t n, struct json_object **result);

/* Owner's latest runs, newest first, as a new array of small objects. */
struct json_object *runs_recent(struct db *, const char *owner, int limit);

/* What runs_collect found. */
enum run_collect {
	RUN_COLLECT_FAILED = -1,
	RUN_COLLECT_RUNNING = 0,
	RUN_COLLECT_FINISHED = 1,
};

/*
 * Finish a "running" run from the supervisor's record in the container,
 * whichever process started it (runs/collect.c): RUN_COLLECT_FINISHED when
 * it is finished (now or before; also when there is no such run),
 * RUN_COLLECT_RUNNING while it still runs (or a run without a record may
 * yet start), RUN_COLLECT_FAILED on error. A run with no record is
 * finished as lost once past its deadline, or at once when the container
 * restarted after it began ("killed with the container").
 */
enum run_collect runs_collect(struct db *, struct sandbox *,
	    const char *run_id);

/*
 * The reconciler: about once a minute across all processes (a lease in
 * sql/015-reconcile.sql), collect the runs still marked running, so none
 * stays running once its command has ended, whatever happened to the
 * worker that started it.
 */
struct config;
void	runs_reconcile(const struct config *);

#endif
