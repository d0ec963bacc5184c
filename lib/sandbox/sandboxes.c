/*
 * sandbox/sandboxes.c: the per-owner registry of sandboxes, built on the
 * handle (sandbox.h); see sandboxes.h.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "oauth/owners.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"
#include "sandbox/owneraddr.h"
#include "sandbox/portlane.h"
#include "sandbox/sandboxes.h"
#include "sandbox/snapshot.h"
#include "store/db.h"
#include "store/db_sandbox.h"

_Static_assert(DB_OWNER_MAX == OWNER_MAX, "a stored owner fits OWNER_MAX");

#define STOP_GRACE_S	3	/* SIGTERM, then SIGKILL after this (engine) */
#define IDLE_MAX	64	/* sandboxes stopped in one pass */
#define IDLE_PER_CALL	2	/* ... and on the way of a tool call */

void
sandboxes_names(const struct config *cfg, const char *owner,
    char container[SANDBOXES_NAME_MAX], char volume[SANDBOXES_NAME_MAX])
{
	/* The handle's own (sandbox.c), so both name a sandbox alike. */
	sandbox_names(cfg, owner, container, volume);
}

/*
 * One engine call on a named object of owner's sandbox, through its
 * sandbox handle (the one door to the engine, sandbox.h); ok lists the
 * statuses that count as done (0-terminated). 0 or -1 with err.
 */
static int
engine(const struct config *cfg, const char *owner, const char *method,
    const char *path, const long *ok, const char *what, struct error *err)
{
	struct sandbox		*sb = NULL;
	struct json_object	*resp = NULL;
	long			 status = 0;
	int			 rc = -1;

	if (sandbox_open(cfg, owner, &sb, err) == -1)
		goto out;
	if (docker_request(sandbox_docker(sb), method, path, NULL, &status,
	    &resp, err) == -1)
		goto out;
	for (; *ok != 0; ok++)
		if (status == *ok) {
			rc = 0;
			goto out;
		}
	error_set(err, "cannot %s: the engine answered %ld%s%.200s", what,
	    status, docker_message(resp) != NULL ? ": " : "",
	    docker_message(resp) != NULL ? docker_message(resp) : "");
out:
	json_object_put(resp);
	sandbox_close(sb);
	return rc;
}

int
sandboxes_stop(const struct config *cfg, struct db *db, const char *owner,
    const char *reason, struct error *err)
{
	static const long ok[] = { 204, 304, 404, 0 };	/* stopped, was, none */
	char	container[SANDBOXES_NAME_MAX], volume[SANDBOXES_NAME_MAX];
	char	path[SANDBOXES_NAME_MAX + 64], what[SANDBOXES_NAME_MAX + 32];

	sandboxes_names(cfg, owner, container, volume);
	/* Marked first: a call arriving meanwhile starts it again. */
	db_exec(db, STMT_SANDBOX_STOPPED, "itt", (long long)time(NULL), reason,
	    owner);
	snprintf(path, sizeof(path), "/containers/%s/stop?t=%d", container,
	    STOP_GRACE_S);
	snprintf(what, sizeof(what), "stop container %s", container);
	if (engine(cfg, owner, "POST", path, ok, what, err) == -1)
		return -1;
	log_info("sandboxes: stopped container %s of %s (%s)", container, owner,
	    reason);
	return 0;
}

int
sandboxes_remove(const struct config *cfg, struct db *db, const char *owner,
    long *removed, struct error *err)
{
	static const long gone[] = { 204, 404, 0 };
	char	container[SANDBOXES_NAME_MAX], volume[SANDBOXES_NAME_MAX];
	char	path[SANDBOXES_NAME_MAX + 64], what[SANDBOXES_NAME_MAX + 32];

	*removed = 0;
	if (!cfg->per_person)
		return error_set(err, "SANDBOX_SCOPE is shared: there are no "
		    "sandboxes per person to remove");
	sandboxes_names(cfg, owner, container, volume);
	db_exec(db, STMT_SANDBOX_STOPPED, "itt", (long long)time(NULL),
	    "operator", owner);
	snprintf(path, sizeof(path), "/containers/%s?force=1", container);
	snprintf(what, sizeof(what), "remove container %s", container);
	if (engine(cfg, owner, "DELETE", path, gone, what, err) == -1)
		return -1;
	{
		char lane[PATH_MAX];

		if (portlane_folder(cfg, container, lane, sizeof(lane)) == 0)
			portlane_remove(lane);
	}
	snprintf(path, sizeof(path), "/volumes/%s", volume);
	snprintf(what, sizeof(what), "remove volume %s", volume);
	if (engine(cfg, owner, "DELETE", path, gone, what, err) == -1)
		return -1;
	/* Their snapshots too (and the switch file of the last restore). */
	{
		struct sandbox	*sb;
		struct error	 e;

		if (sandbox_open(cfg, owner, &sb, &e) == 0) {
			if ((*removed = snapshot_remove_all(cfg, db, sb,
			    &e)) == -1)
				log_warn("sandboxes: snapshots of %s: %s",
				    owner, e.msg);
			sandbox_close(sb);
		}
	}
	db_exec(db, STMT_SANDBOX_DELETE, "t", owner);
	log_info("sandboxes: removed container %s, volume %s and %ld "
	    "snapshot(s) of %s", container, volume, *removed < 0 ? 0 :
	    *removed, owner);
	return 0;
}

/*
 * Idle sandboxes other than skip, least recently used first: used before
 * min_used and with no command running. Up to max owners into owners.
 */
static int
idle_list(struct db *db, long long min_used, const char *skip,
    char owners[][OWNER_MAX], int max)
{
	struct db_q	*q;
	int		 n = 0;

	if ((q = db_query(db, STMT_SANDBOX_IDLE, "iit", (long long)time(NULL),
	    min_used, skip != NULL ? skip : "")) == NULL)
		return 0;
	while (n < max && db_sandbox_idle_next(q, owners[n]) == DB_ROW)
		n++;
	db_done(q);
	return n;
}

/* Stop up to max sandboxes idle for SANDBOX_IDLE_STOP; how many stopped. */
static int
stop_idle(const struct config *cfg, struct db *db, int max)
{
	char		owners[IDLE_MAX][OWNER_MAX];
	struct error	err;
	int		i, n, stopped = 0;

	if (!cfg->per_person)
		return 0;
	n = idle_list(db, (long long)time(NULL) - cfg->idle_stop, NULL, owners,
	    max < IDLE_MAX ? max : IDLE_MAX);
	for (i = 0; i < n; i++) {
		if (sandboxes_stop(cfg, db, owners[i], "idle", &err) == -1)
			log_warn("sandboxes: %s", err.msg);
		else
			stopped++;
	}
	return stopped;
}

int
sandboxes_stop_idle(const struct config *cfg, struct db *db)
{
	return stop_idle(cfg, db, IDLE_MAX);
}

int
sandboxes_claim(const struct config *cfg, struct db *db, const char *owner,
    struct error *err)
{
	char		container[SANDBOXES_NAME_MAX], volume[SANDBOXES_NAME_MAX];
	char		running[8], lru[1][OWNER_MAX];
	long long	now = (long long)time(NULL);
	enum lookup_result found;
	int		others;
	struct error	e;

	if (!cfg->per_person)
		return 0;
	/* A revoked owner's sandbox stays stopped, whoever asks. */
	switch (owners_live(db, owner != NULL ? owner : OWNER_OPERATOR)) {
	case LOOKUP_FOUND:
		break;
	case LOOKUP_NONE:
		return error_set(err, "The key of %s has been revoked: its "
		    "sandbox is not started again.", owner);
	default:
		return error_set(err, "The key list cannot be read now; try "
		    "again.");
	}
	/* A few per call, so that no call waits on many engine stops. */
	stop_idle(cfg, db, IDLE_PER_CALL);
	sandboxes_names(cfg, owner, container, volume);
	/*
	 * The cap is decided in one transaction (BEGIN IMMEDIATE), so that two
	 * owners starting at once cannot both take the last place.
	 */
	if (db_begin(db) == -1)
		return error_set(err, "The sandbox list cannot be written now; "
		    "try again.");
	found = db_get_text(db, STMT_SANDBOX_GET, running, sizeof(running), "t",
	    owner);
	lru[0][0] = '\0';
	if (cfg->max_sandboxes > 0 && (found == LOOKUP_NONE ||
	    (found == LOOKUP_FOUND && strcmp(running, "1") != 0))) {
		char n[32];

		others = db_get_text(db, STMT_SANDBOX_RUNNING_OTHERS, n, sizeof(n),
		    "t", owner) == LOOKUP_FOUND ? (int)strtol(n, NULL, 10) : 0;
		if (others >= cfg->max_sandboxes) {
			if (idle_list(db, now + 1, owner, lru, 1) == 0) {
				db_rollback(db);
				return error_set(err, "Every sandbox this server "
				    "may run at once (SANDBOX_MAX_SANDBOXES=%ld) is "
				    "busy with a command. Try again when one "
				    "finishes, or ask the operator to raise the "
				    "limit.", cfg->max_sandboxes);
			}
			/* Taken off the count now; stopped after the commit. */
			db_exec(db, STMT_SANDBOX_STOPPED, "itt", now, "cap", lru[0]);
		}
	}
	if (db_exec(db, STMT_SANDBOX_USE, "ttti", owner, container, volume,
	    now) != 1 || db_commit(db) == -1) {
		db_rollback(db);
		return error_set(err, "The sandbox list cannot be written now; "
		    "try again.");
	}
	if (lru[0][0] != '\0' && sandboxes_stop(cfg, db, lru[0], "cap", &e) == -1)
		log_warn("sandboxes: %s", e.msg);
	return 0;
}

int
sandboxes_open(const struct config *cfg, struct db *db, const char *owner,
    struct sandbox **out, struct error *err)
{
	*out = NULL;
	if (sandboxes_claim(cfg, db, owner, err) == -1 ||
	    sandbox_open(cfg, owner, out, err) == -1)
		return -1;
	(*out)->claimed = true;
	if (owner != NULL && owneraddr_wanted(cfg))
		(*out)->db = db;
	return 0;
}

void
sandboxes_touch(const struct config *cfg, struct db *db, const char *owner)
{
	if (cfg->per_person)
		db_exec(db, STMT_SANDBOX_TOUCH, "it", (long long)time(NULL), owner);
}

/* The engine's State.Status of container, or "absent" / "unknown". */
static void
engine_state(struct docker *dk, const char *container, char *out, size_t n)
{
	struct json_object	*resp = NULL, *state;
	struct error		 err;
	char			 path[SANDBOXES_NAME_MAX + 32];
	const char		*v;
	long			 status = 0;

	snprintf(out, n, "unknown");
	snprintf(path, sizeof(path), "/containers/%s/json", container);
	if (dk == NULL ||
	    docker_request(dk, "GET", path, NULL, &status, &resp, &err) == -1)
		goto out;
	if (status == 404)
		snprintf(out, n, "absent");
	else if (status == 200 &&
	    (state = js_get(resp, "State", json_type_object)) != NULL &&
	    (v = js_str_max(state, "Status", 32)) != NULL)
		snprintf(out, n, "%s", v);
out:
	json_object_put(resp);
}

struct json_object *
sandboxes_list(const struct config *cfg, struct db *db)
{
	struct json_object	*arr, *o;
	struct sandbox		*sb = NULL;
	struct docker		*dk = NULL;
	struct db_q		*q;
	struct db_sandbox	 row;
	struct error		 err;
	char			 st[40], c[SANDBOXES_NAME_MAX], v[SANDBOXES_NAME_MAX];
	enum db_step		 step;
	size_t			 i;

	/* One handle's client asks about every container (sandbox.h). */
	if (sandbox_open(cfg, NULL, &sb, &err) == 0)
		dk = sandbox_docker(sb);
	arr = json_object_new_array();
	if (!cfg->per_person) {
		sandboxes_names(cfg, NULL, c, v);
		o = json_object_new_object();
		js_set(o, "owner", NULL);
		js_set_str(o, "container", c);
		js_set_str(o, "volume", v);
		engine_state(dk, c, st, sizeof(st));
		js_set_bool(o, "running", strcmp(st, "running") == 0);
		js_set_str(o, "engine_state", st);
		json_object_array_add(arr, o);
		goto out;
	}
	if ((q = db_query(db, STMT_SANDBOX_LIST, "i",
	    (long long)time(NULL))) == NULL) {
		json_object_put(arr);
		arr = NULL;
		goto out;
	}
	while ((step = db_sandbox_list_next(q, &row)) == DB_ROW) {
		o = json_object_new_object();
		js_set_str(o, "owner", row.owner);
		js_set_str(o, "container", row.container);
		js_set_str(o, "volume", row.volume);
		js_set_bool(o, "running", row.running);
		js_set_int(o, "last_used", row.last_used);
		if (row.stopped_set)
			js_set_int(o, "stopped", row.stopped);
		if (row.stop_reason != NULL)
			js_set_str(o, "stop_reason", row.stop_reason);
		js_set_int(o, "commands", row.commands);
		json_object_array_add(arr, o);
	}
	db_done(q);
	if (step == DB_ERROR) {
		json_object_put(arr);
		arr = NULL;
		goto out;
	}
	/* The engine asked after the query is done: no statement held open. */
	for (i = 0; i < json_object_array_length(arr); i++) {
		bool running = false;

		o = json_object_array_get_idx(arr, i);
		engine_state(dk, js_str(o, "container"), st, sizeof(st));
		js_set_str(o, "engine_state", st);
		js_bool(o, "running", &running);
		if (running && (strcmp(st, "exited") == 0 ||
		    strcmp(st, "absent") == 0 || strcmp(st, "created") == 0)) {
			db_exec(db, STMT_SANDBOX_STOPPED, "itt",
			    (long long)time(NULL), "engine", js_str(o, "owner"));
			js_set_bool(o, "running", false);
		}
	}
out:
	sandbox_close(sb);
	return arr;
}
