/* tasks.c: see tasks.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "oauth/auth.h"
#include "runs/runs.h"
#include "runs/tasks.h"
#include "sandbox/sandbox.h"
#include "sandbox/snapshot.h"
#include "store/db.h"
#include "store/db_runs.h"

_Static_assert(DB_RUN_ID_MAX == RUN_ID_MAX, "a stored run id fits RUN_ID_MAX");

#define LINE_MAX_BYTES	200
#define ADMIT_COLLECT_MAX 64	/* runs collected at the cap, at most */

/* The Task fields every answer carries (tasks.md "Tasks"). */
static void
task_fields(struct json_object *o, const char *id, const char *status,
    const char *message, long long created, long long updated)
{
	char t[32];

	js_set_str(o, "taskId", id);
	js_set_str(o, "status", status);
	if (message != NULL)
		js_set_str(o, "statusMessage", message);
	clock_iso8601(created, t, sizeof(t));
	js_set_str(o, "createdAt", t);
	clock_iso8601(updated, t, sizeof(t));
	js_set_str(o, "lastUpdatedAt", t);
	js_set_int(o, "ttlMs", (long long)TASK_KEEP_S * 1000);
	js_set_int(o, "pollIntervalMs", TASK_POLL_MS);
}

int
tasks_mark(struct db *db, const char *run_id, const char *handle,
    const char *status_message, struct json_object **out)
{
	long long now = (long long)time(NULL);

	if (out != NULL)
		*out = NULL;
	if (db_exec(db, STMT_TASK_MARK, "tit", handle, now, run_id) != 1)
		return -1;
	if (out != NULL) {
		*out = json_object_new_object();
		js_set_str(*out, "resultType", "task");
		task_fields(*out, run_id, "working", status_message, now, now);
	}
	return 0;
}

void
tasks_note(struct db *db, const char *run_id, const char *line)
{
	char	buf[LINE_MAX_BYTES + 1];
	size_t	n = strlen(line);

	if (n > LINE_MAX_BYTES) {
		n = LINE_MAX_BYTES;
		while (n > 0 && ((unsigned char)line[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(buf, line, n);
	buf[n] = '\0';
	db_exec(db, STMT_TASK_NOTE, "tit", buf, (long long)time(NULL), run_id);
}

/* The row of a task the caller may see. 1, 0 (why set) or -1; t is the caller's to clear. */
static enum lookup_result
lookup(struct db *db, const struct auth_info *who, const char *task_id,
    struct db_task *t, char *why, size_t n)
{
	enum lookup_result	rc;

	if ((rc = db_task_get(db, task_id, t)) == LOOKUP_ERROR)
		return LOOKUP_ERROR;
	/* Another owner's task is as unknown as no task (no oracle). */
	if (rc != LOOKUP_FOUND || t->handle == NULL ||
	    strcmp(t->handle, "task") != 0 ||
	    !crypto_str_equal(t->owner, auth_owner(who))) {
		snprintf(why, n, "Failed to retrieve task: Task not found");
		db_task_clear(t);
		return LOOKUP_NONE;
	}
	return LOOKUP_FOUND;
}

/*
 * A task still running by its row: its worker may be gone (killed, the
 * programs restarted). Collect it from the supervisor's record in the
 * owner's sandbox, as get_result does (runs_collect), so the task ends
 * with its real result; a live worker's run is left to it.
 */
static void
collect(struct db *db, const struct config *cfg, const struct auth_info *who,
    const char *task_id)
{
	struct sandbox	*sb = NULL;
	struct error	 err;

	if (sandbox_open(cfg, auth_owner(who), &sb, &err) == -1)
		log_warn("task %s: %s", task_id, err.msg);
	else
		runs_collect(db, sb, task_id);
	sandbox_close(sb);
}

enum lookup_result
tasks_get(struct db *db, const struct config *cfg, const struct auth_info *who,
    const char *task_id, struct json_object **out, char *why, size_t n)
{
	struct json_object	*o, *result = NULL, *err;
	struct db_task		 t;
	const char		*state, *text, *status;
	char			 msg[LINE_MAX_BYTES + 64];
	long long		 created, updated, now = (long long)time(NULL);
	enum lookup_result	 rc;

	*out = NULL;
	if ((rc = lookup(db, who, task_id, &t, why, n)) != LOOKUP_FOUND)
		return rc;
	if (strcmp(t.state, "running") == 0) {
		db_task_clear(&t);
		collect(db, cfg, who, task_id);
		if ((rc = lookup(db, who, task_id, &t, why, n)) != LOOKUP_FOUND)
			return rc;
	}
	state = t.state;
	created = t.started;
	updated = !t.finished_set ? (!t.updated_set ? created : t.updated) :
	    t.finished;
	text = t.result;
	o = json_object_new_object();
	if (strcmp(state, "running") == 0) {
		status = "working";
		snprintf(msg, sizeof(msg), "Running for %llds.%s%s",
		    now - created, t.last_line == NULL ? "" :
		    " Latest output seen: ", t.last_line == NULL ? "" :
		    t.last_line);
	} else if (text == NULL) {
		/* Finished and its result dropped after TASK_KEEP_S: gone. */
		snprintf(why, n, "Failed to retrieve task: Task has expired");
		db_task_clear(&t);
		json_object_put(o);
		return LOOKUP_NONE;
	} else if ((result = js_parse(text, strlen(text), JS_MAX_DEPTH,
	    NULL)) == NULL) {
		db_task_clear(&t);
		json_object_put(o);
		return LOOKUP_ERROR;
	} else if (strcmp(state, "cancel") == 0) {
		status = "cancelled";
		snprintf(msg, sizeof(msg), "Cancelled as asked: its result "
		    "says what was stopped.");
	} else if (strcmp(state, "detached") == 0) {
		/* Not collected to its end: a fault of the server, not of the command. */
		status = "failed";
		snprintf(msg, sizeof(msg), "The server restarted while the "
		    "command ran; its result was not captured.");
	} else {
		status = "completed";
		snprintf(msg, sizeof(msg), "Finished (%s).", state);
	}
	task_fields(o, task_id, status, msg, created, updated);
	if (strcmp(status, "completed") == 0)
		js_set(o, "result", result);
	else {
		if (strcmp(status, "failed") == 0) {
			err = json_object_new_object();
			js_set_int(err, "code", -32603);
			js_set_str(err, "message", msg);
			js_set(o, "error", err);
		}
		json_object_put(result);
	}
	db_task_clear(&t);
	*out = o;
	return LOOKUP_FOUND;
}

enum lookup_result
tasks_cancel(struct db *db, const struct config *cfg,
    const struct auth_info *who, const char *task_id, char *why, size_t n)
{
	struct db_task	 t;
	struct sandbox	*sb = NULL;
	struct error	 err;
	char		 id[RUN_ID_MAX + 1];
	enum lookup_result rc;
	enum snapshot_run kind;

	if ((rc = lookup(db, who, task_id, &t, why, n)) != LOOKUP_FOUND)
		return rc;
	db_task_clear(&t);
	/* Finished tasks are acknowledged too (cancellation is cooperative). */
	if (db_get_text(db, STMT_TASK_CANCEL, id, sizeof(id), "t",
	    task_id) != LOOKUP_FOUND)
		return LOOKUP_FOUND;
	/*
	 * A restore's worker sees the mark and stops before its switch. A
	 * command's collecting worker sees it within a second and kills too.
	 */
	kind = snapshot_run_state(db, task_id);
	if (kind == SNAPSHOT_RUN_LIVE || kind == SNAPSHOT_RUN_GONE)
		return LOOKUP_FOUND;
	if (sandbox_open(cfg, auth_owner(who), &sb, &err) == -1 ||
	    sandbox_kill(sb, task_id, &err) == -1)
		log_warn("cancel task %s: %s", task_id, err.msg);
	sandbox_close(sb);
	return LOOKUP_FOUND;
}

enum lookup_result
tasks_update(struct db *db, const struct auth_info *who, const char *task_id,
    char *why, size_t n)
{
	struct db_task	t;
	enum lookup_result rc;

	if ((rc = lookup(db, who, task_id, &t, why, n)) != LOOKUP_FOUND)
		return rc;
	db_task_clear(&t);
	return LOOKUP_FOUND;
}

/* Running rows: all, and the owner's. 0 or -1. */
static int
count_running(struct db *db, const char *owner, long long *all,
    long long *mine)
{
	return db_run_count_active(db, owner, (long long)time(NULL), all, mine);
}

void
tasks_collect_released(struct db *db, struct sandbox *sb, const char *owner,
    long long max)
{
	struct db_q	*q;
	char		 ids[ADMIT_COLLECT_MAX][RUN_ID_MAX + 1];
	int		 n = 0, i;

	if (max > ADMIT_COLLECT_MAX)
		max = ADMIT_COLLECT_MAX;
	if ((q = db_query(db, STMT_RUN_RELEASED, "ti", owner, max)) == NULL)
		return;
	while (n < max && db_run_id_next(q, ids[n]) == DB_ROW)
		n++;
	db_done(q);
	for (i = 0; i < n; i++)
		runs_collect(db, sb, ids[i]);
}

enum tasks_admit
tasks_admit(struct db *db, const struct config *cfg, struct sandbox *sb,
    const struct auth_info *who, char *why, size_t n)
{
	const char	*owner = auth_owner(who);
	long long	 all, mine;

	if (count_running(db, owner, &all, &mine) == -1)
		return TASKS_ADMIT_ERROR;
	if (sb != NULL && mine > 0 && (all >= cfg->max_running ||
	    mine >= cfg->max_running_per_owner)) {
		tasks_collect_released(db, sb, owner, mine);
		if (count_running(db, owner, &all, &mine) == -1)
			return TASKS_ADMIT_ERROR;
	}
	if (all >= cfg->max_running) {
		snprintf(why, n, "%lld commands are already running on this "
		    "server (the limit, SANDBOX_MAX_RUNNING)", all);
		return TASKS_ADMIT_FULL;
	}
	if (mine >= cfg->max_running_per_owner) {
		snprintf(why, n, "%lld of your commands are already running "
		    "(the limit per person, SANDBOX_MAX_RUNNING_PER_OWNER)",
		    mine);
		return TASKS_ADMIT_FULL;
	}
	return TASKS_ADMIT_START;
}
