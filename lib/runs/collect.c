/*
 * runs/collect.c: finishing a run from the supervisor's record, whichever
 * process asks (get_result, the reconciler); see runs.h.
 *
 * The server's own record decides what it says: the run table's
 * cancel_requested for a cancellation, its start time and timeout for a
 * timeout, the container's identity stored with the run (its Id and
 * StartedAt, sql/016) against the engine's now for "killed with the
 * container". The record in the container only gives the output, the exit
 * status and the duration.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "oauth/owners.h"
#include "runs/result.h"
#include "runs/runs.h"
#include "base/secret.h"
#include "sandbox/sandbox.h"
#include "sandbox/secrets.h"
#include "sandbox/snapshot.h"
#include "store/db.h"
#include "store/db_runs.h"

_Static_assert(DB_RUN_ID_MAX == RUN_ID_MAX && DB_OWNER_MAX == OWNER_MAX &&
    DB_IDENT_MAX == SANDBOX_IDENT_MAX, "a stored run fits the collector's copy");

#define LOST_GRACE_S	60	/* past its deadline, a run with no record is lost */
#define BACKSTOP_S	10	/* past its deadline, a running run is killed */
#define START_GRACE_S	10	/* a new run, or a container start, to its supervisor */
#define RECONCILE_EVERY_S 50
#define RECONCILE_LEASE_S 300
#define RECONCILE_MAX	50	/* runs looked at per pass */

struct info {
	char		state[32];
	long long	timeout;
	long long	started;
	bool		cancel;
	char		cid[SANDBOX_IDENT_MAX];		/* "" when not stored */
	char		cstarted[SANDBOX_IDENT_MAX];
};

static int
run_info(struct db *db, const char *run_id, struct info *in)
{
	struct db_run_info	r;
	enum lookup_result	rc;

	_Static_assert(sizeof(in->state) == sizeof(r.state) &&
	    sizeof(in->cid) == sizeof(r.container_id), "the row fits struct info");
	memset(in, 0, sizeof(*in));
	if ((rc = db_run_info(db, run_id, &r)) == LOOKUP_FOUND) {
		memcpy(in->state, r.state, sizeof(in->state));
		in->timeout = r.timeout;
		in->started = r.started;
		in->cancel = r.cancel;
		memcpy(in->cid, r.container_id, sizeof(in->cid));
		memcpy(in->cstarted, r.container_started, sizeof(in->cstarted));
	}
	return rc;
}

/*
 * The run of a restore that answered its client early, whose process
 * stopped before it finished the run: said honestly.
 */
static int
finish_restore_gone(struct db *db, const char *run_id)
{
	struct json_object	*res;
	struct json_object	*sc = json_object_new_object();
	int			 rc;

	js_set_str(sc, "run_id", run_id);
	js_set_bool(sc, "restored", false);
	res = result_new("The restore stopped before it ended: the server's "
	    "process that ran it was stopped. If it stopped before its "
	    "switch, the sandbox is as it was before; commands and "
	    "snapshots() show which. Restore again to be sure.", sc, true);
	rc = runs_finish(db, run_id, "error", -1, 0, 0, 0, res);
	json_object_put(res);
	return rc;
}

/* A run with no record: lost, said honestly. */
static int
finish_lost(struct db *db, const char *run_id, bool with_container)
{
	struct json_object	*res;
	struct json_object	*sc = json_object_new_object();
	int			 rc;

	js_set_str(sc, "run_id", run_id);
	js_set(sc, "exit_code", NULL);
	js_set_bool(sc, "killed_with_container", with_container);
	res = result_new(with_container ? "Killed with the container: the "
	    "sandbox container stopped or restarted while this command ran, "
	    "and nothing of it was kept (no output, no exit code)." : "This command ended "
	    "without a result: the supervisor that ran it was killed before it "
	    "could keep one (no output, no exit code).", sc, true);
	rc = runs_finish(db, run_id, "error", -1, 0, 0, 0, res);
	json_object_put(res);
	return rc;
}

enum run_collect
runs_collect(struct db *db, struct sandbox *sb, const char *run_id)
{
	struct exec_result	 res;
	struct json_object	*out;
	struct mask		*mask = NULL;
	struct info		 in;
	struct error		 err;
	char			 cid[SANDBOX_IDENT_MAX];
	char			 cstarted[SANDBOX_IDENT_MAX];
	const char		*state;
	long long		 now = (long long)time(NULL), restarted;
	bool			 running;
	int			 rc;

	if ((rc = run_info(db, run_id, &in)) != 1)	/* none: nothing to do */
		return rc == 0 ? RUN_COLLECT_FINISHED : RUN_COLLECT_FAILED;
	if (strcmp(in.state, "running") != 0)
		return RUN_COLLECT_FINISHED;
	/* A restore's run has no record in the container: its worker ends it. */
	switch (snapshot_run_state(db, run_id)) {
	case SNAPSHOT_RUN_ERROR:
		return RUN_COLLECT_FAILED;
	case SNAPSHOT_RUN_LIVE:
		return RUN_COLLECT_RUNNING;
	case SNAPSHOT_RUN_GONE:
		return finish_restore_gone(db, run_id) == -1 ?
		    RUN_COLLECT_FAILED : RUN_COLLECT_FINISHED;
	case SNAPSHOT_RUN_NONE:
		break;
	}
	switch (sandbox_collect(sb, run_id, (long)in.timeout, &res, &err)) {
	case SANDBOX_RUNNING:
		/*
		 * Past its deadline: the supervisor kills at the timeout, so
		 * this is a backstop (as sandbox_exec's for a watched run,
		 * which a task or handle no longer has).
		 */
		if (now >= in.started + in.timeout + BACKSTOP_S) {
			log_warn("run %s still running %lld s after its "
			    "deadline; killing it", run_id,
			    now - in.started - in.timeout);
			if (sandbox_kill(sb, run_id, &err) == -1)
				log_warn("run %s: %s", run_id, err.msg);
		}
		return RUN_COLLECT_RUNNING;
	case SANDBOX_LOST:
		/*
		 * The container it started in: is it still this one? Rows
		 * from before sql/016 compare clocks, both in whole seconds
		 * (a restart in the run's second counts). The row is written
		 * before the command's first exec, which may start the
		 * container itself: a run without a record in a container
		 * started only START_GRACE_S ago may not have reached its
		 * supervisor yet.
		 */
		if (in.cid[0] != '\0' && in.cstarted[0] != '\0') {
			if (sandbox_identity(sb, false, cid, cstarted, &err) == 0 &&
			    (strcmp(cid, in.cid) != 0 ||
			    strcmp(cstarted, in.cstarted) != 0)) {
				if (sandbox_started_at(sb, &restarted, NULL,
				    &err) == 0 && now < restarted + START_GRACE_S)
					return RUN_COLLECT_RUNNING;
				return finish_lost(db, run_id, true) == -1 ?
				    RUN_COLLECT_FAILED : RUN_COLLECT_FINISHED;
			}
		} else if (sandbox_started_at(sb, &restarted, NULL, &err) == 0 &&
		    restarted >= in.started) {
			if (now < restarted + START_GRACE_S)
				return RUN_COLLECT_RUNNING;
			return finish_lost(db, run_id, true) == -1 ?
			    RUN_COLLECT_FAILED : RUN_COLLECT_FINISHED;
		}
		/* Perhaps not started yet, or no supervisor. */
		if (now < in.started + in.timeout + LOST_GRACE_S)
			return RUN_COLLECT_RUNNING;
		return finish_lost(db, run_id, false) == -1 ?
		    RUN_COLLECT_FAILED : RUN_COLLECT_FINISHED;
	case SANDBOX_DONE:
		break;
	default:
		/*
		 * No container, or one that does not run: nothing of the run
		 * can be alive, and its record (if any) waits for a start the
		 * operator may not want. Said as it is.
		 */
		if (err.kind == ERR_NOT_FOUND || (err.kind == ERR_CONFLICT &&
		    sandbox_started_at(sb, &restarted, &running, &err) == 0 &&
		    !running)) {
			/* A new run's first exec may be making it now. */
			if (now < in.started + START_GRACE_S)
				return RUN_COLLECT_RUNNING;
			return finish_lost(db, run_id, true) == -1 ?
			    RUN_COLLECT_FAILED : RUN_COLLECT_FINISHED;
		}
		log_warn("run %s: cannot collect: %s", run_id, err.msg);
		return RUN_COLLECT_FAILED;
	}
	/* The server's record decides: its clock, its cancellation mark. */
	if (res.timed_out && now - in.started < in.timeout)
		res.timed_out = false;
	if (in.cancel && res.exit_code == 137)
		res.killed = true;
	if (in.cancel) {
		char *why = runs_stop_reason(db, run_id);

		if (why != NULL) {
			free(res.notice);
			res.notice = why;
		}
	}
	if (secrets_mask_load(sandbox_config(sb), db, &mask, &err) == -1) {
		log_warn("run %s: cannot collect: %s", run_id, err.msg);
		exec_result_free(&res);
		return RUN_COLLECT_FAILED;
	}
	out = result_exec(&res, (long)in.timeout, run_id, mask, &state);
	mask_free(mask);
	if (out == NULL) {
		exec_result_free(&res);
		return RUN_COLLECT_FAILED;
	}
	rc = runs_finish(db, run_id, state, res.exit_code, res.duration_ms,
	    res.out.total, res.err.total, out);
	if (rc == 0)
		log_info("run %s collected from its record: %s", run_id, state);
	json_object_put(out);
	exec_result_free(&res);
	return rc == -1 ? RUN_COLLECT_FAILED : RUN_COLLECT_FINISHED;
}

void
runs_reconcile(const struct config *cfg)
{
	struct db	*db = NULL;
	struct sandbox	*sb = NULL;
	struct db_q	*q;
	struct db_run_unfinished row;
	struct error	 e;
	char		 holder[64], ids[RECONCILE_MAX][RUN_ID_MAX + 1];
	char		 owners[RECONCILE_MAX][OWNER_MAX];
	long long	 now = (long long)time(NULL);
	int		 n = 0, i, done = 0;

	if (db_open(cfg->db_path, &db, &e) == -1) {
		log_warn("reconcile: %s", e.msg);
		return;
	}
	snprintf(holder, sizeof(holder), "%ld/%lx", (long)getpid(),
	    (unsigned long)pthread_self());
	if (db_exec(db, STMT_RECONCILE_LEASE_TAKE, "iiti", now,
	    now + RECONCILE_LEASE_S, holder, (long long)RECONCILE_EVERY_S) != 1)
		goto out;
	if ((q = db_query(db, STMT_RUN_UNFINISHED, "i",
	    (long long)RECONCILE_MAX)) != NULL) {
		while (n < RECONCILE_MAX && db_run_unfinished_next(q, &row) ==
		    DB_ROW) {
			memcpy(ids[n], row.id, sizeof(ids[0]));
			memcpy(owners[n], row.owner, sizeof(owners[0]));
			n++;
		}
		db_done(q);
	}
	/* Each run from its owner's sandbox (sandboxes.h); rows come by owner. */
	for (i = 0; i < n; i++) {
		if (i == 0 || strcmp(owners[i], owners[i - 1]) != 0) {
			sandbox_close(sb);
			sb = NULL;
			if (sandbox_open(cfg, owners[i][0] != '\0' ? owners[i] :
			    NULL, &sb, &e) == -1) {
				log_warn("reconcile: %s", e.msg);
				continue;
			}
		}
		if (sb != NULL &&
		    runs_collect(db, sb, ids[i]) == RUN_COLLECT_FINISHED)
			done++;
	}
	if (done > 0)
		log_info("reconcile: finished %d of %d unfinished runs", done, n);
	db_exec(db, STMT_RECONCILE_LEASE_RELEASE, "t", holder);
out:
	sandbox_close(sb);
	db_close(db);
}
