/*
 * tools/snapshot.c: the snapshot tools: snapshot(note), snapshots(),
 * restore(snapshot_id, force) and snapshot_delete(snapshot_id), over
 * sandbox/snapshot.h. A snapshot holds /sandbox and the packages installed
 * in the container; restore brings both back exactly. On 2026-07-28 a
 * restore outliving SANDBOX_INLINE_WAIT answers with a task (when the
 * request declared Tasks) or a run_id handle, and goes on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "oauth/auth.h"
#include "runs/result.h"
#include "runs/runs.h"
#include "runs/tasks.h"
#include "sandbox/snapshot.h"
#include "tools/tools.h"

/* Only the arguments named are accepted. */
static struct json_object *
unknown_arg(struct json_object *args, const char *tool, const char *a,
    const char *b)
{
	json_object_object_foreach(args, key, val) {
		(void)val;
		if ((a == NULL || strcmp(key, a) != 0) &&
		    (b == NULL || strcmp(key, b) != 0))
			return result_error("Unknown argument \"%.64s\" of %s.",
			    key, tool);
	}
	return NULL;
}

static struct snapshot_who
who_of(const struct tool_ctx *tc)
{
	struct snapshot_who w;

	w.owner = auth_owner(tc->who);
	w.client = tc->who != NULL ? tc->who->client_name : NULL;
	return w;
}

/* snapshot_id from args, or NULL with *res an error result. */
static const char *
id_arg(struct json_object *args, struct json_object **res)
{
	const char *id = js_str_max(args, "snapshot_id", SNAPSHOT_ID_MAX);

	*res = NULL;
	if (id == NULL || *id == '\0')
		*res = result_error("snapshot_id must be a snapshot id string "
		    "(snapshots() lists them).");
	return id;
}

/* --- snapshot(note) --- */

static struct json_object *
snap_describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props, *out;
	char			 desc[700];

	(void)mode;
	snprintf(desc, sizeof(desc), "Take a snapshot of the sandbox: every "
	    "file in /sandbox (with owners, modes, times and links) and every "
	    "package installed in the container (apt-get, pip, npm -g). "
	    "Take one before a risky step (a big rm, an upgrade, a migration): "
	    "restore(snapshot_id) brings the sandbox back to exactly this "
	    "state. Returns snapshot_id. At most %ld snapshots are kept per "
	    "sandbox; snapshot_delete removes one.", cfg->snapshot_max);
	t = tool_new("snapshot", "Snapshot the sandbox (files and packages)",
	    desc);
	props = json_object_new_object();
	js_set(props, "note", tool_prop("string", "A few words on what this "
	    "state is (\"before upgrading numpy\")."));
	js_set(t, "inputSchema", tool_object(props, true, NULL));
	props = json_object_new_object();
	js_set(props, "snapshot_id", tool_prop("string", "The new snapshot's id."));
	js_set(props, "sandbox_bytes", tool_prop("integer", "/sandbox's share on the host."));
	js_set(props, "layer_bytes", tool_prop("integer", "The installed packages' share."));
	js_set(props, "took_ms", tool_prop("integer", "How long it took."));
	js_set(props, "kept_as", tool_prop("string", "How /sandbox is kept: "
	    "\"full\", \"diff\" (what changed since a full one) or "
	    "\"engine\"."));
	out = tool_object(props, false, "snapshot_id", NULL);
	js_set(t, "outputSchema", out);
	tool_annotate(t, false, false, false, false);
	return t;
}

static struct json_object *
snap_call(struct tool_ctx *tc, struct json_object *args)
{
	struct json_object	*res, *info = NULL;
	struct snapshot_who	 w = who_of(tc);
	struct error		 err;
	const char		*note = "";
	char			 id[SNAPSHOT_ID_MAX], text[400];

	if ((res = unknown_arg(args, "snapshot", "note", NULL)) != NULL)
		return res;
	if (json_object_object_get_ex(args, "note", NULL) &&
	    (note = js_str_max(args, "note", SNAPSHOT_NOTE_MAX)) == NULL)
		return result_error("note must be a string of at most %d bytes.",
		    SNAPSHOT_NOTE_MAX);
	if (snapshot_take(tc->cfg, tc->db, tc->sandbox, &w, note, id, &info,
	    &err) == -1)
		return result_error("No snapshot taken: %s", err.msg);
	snprintf(text, sizeof(text), "Snapshot %s taken (/sandbox %lld bytes, "
	    "packages %lld bytes, %lld ms). restore(\"%s\") brings the sandbox "
	    "back to this state.", id,
	    (long long)json_object_get_int64(json_object_object_get(info,
	    "sandbox_bytes")), (long long)json_object_get_int64(
	    json_object_object_get(info, "layer_bytes")),
	    (long long)json_object_get_int64(json_object_object_get(info,
	    "took_ms")), id);
	return result_new(text, info, false);
}

const struct tool tool_snapshot = { "snapshot", snap_describe, snap_call,
    false };

/* --- snapshots() --- */

static struct json_object *
list_describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object *t;

	(void)cfg;
	(void)mode;
	t = tool_new("snapshots", "List the sandbox's snapshots",
	    "List this sandbox's snapshots, newest first, with snapshot_id, "
	    "when each was taken, its size and note.");
	js_set(t, "inputSchema", tool_object(json_object_new_object(), true,
	    NULL));
	tool_annotate(t, true, false, true, false);
	return t;
}

static struct json_object *
list_call(struct tool_ctx *tc, struct json_object *args)
{
	struct json_object	*res, *a, *sc;
	char			*text = NULL;
	size_t			 i, n, len;
	long long		 count, bytes;
	FILE			*f;

	if ((res = unknown_arg(args, "snapshots", NULL, NULL)) != NULL)
		return res;
	if ((a = snapshot_list(tc->db, tc->sandbox)) == NULL)
		return result_error("Internal error: cannot read the snapshots.");
	if (snapshot_usage(tc->db, tc->sandbox, &count, &bytes) == -1)
		count = bytes = 0;
	if ((f = open_memstream(&text, &len)) == NULL) {
		json_object_put(a);
		return result_error("Internal error: out of memory.");
	}
	n = json_object_array_length(a);
	fprintf(f, n == 0 ? "No snapshots yet (snapshot(note) takes one).\n" :
	    "Snapshots, newest first (restore(snapshot_id) brings one back):\n");
	for (i = 0; i < n; i++) {
		struct json_object	*o = json_object_array_get_idx(a, i);
		long long		 created = 0, sb = 0, lb = 0;
		const char		*note = js_str(o, "note");

		js_int(o, "created", &created);
		js_int(o, "sandbox_bytes", &sb);
		js_int(o, "layer_bytes", &lb);
		fprintf(f, "- %s  taken at unix time %lld, %lld bytes%s%s\n",
		    js_str(o, "snapshot_id"), created, sb + lb,
		    note != NULL && *note != '\0' ? ": " : "",
		    note != NULL ? note : "");
	}
	fprintf(f, "%lld of %ld snapshots, %lld of %lld bytes in use.\n",
	    count, tc->cfg->snapshot_max, bytes, tc->cfg->snapshot_bytes);
	fclose(f);
	sc = json_object_new_object();
	js_set(sc, "snapshots", a);
	js_set_int(sc, "count", count);
	js_set_int(sc, "bytes", bytes);
	js_set_int(sc, "max_count", tc->cfg->snapshot_max);
	js_set_int(sc, "max_bytes", tc->cfg->snapshot_bytes);
	res = result_new(text, sc, false);
	free(text);
	return res;
}

const struct tool tool_snapshots = { "snapshots", list_describe, list_call,
    true };

/* --- restore(snapshot_id, force) --- */

static struct json_object *
restore_describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object *t, *props;
	char		    desc[600];

	(void)cfg;
	snprintf(desc, sizeof(desc), "Bring the sandbox back to exactly the "
	    "state of a snapshot: /sandbox holds the snapshot's files (what was "
	    "added since is gone, what was removed is back) and the container "
	    "its installed packages. Refused while commands run in the "
	    "sandbox, unless force is true: they are then stopped first. %s",
	    mode->stateless ? "Answers when done; a restore that takes longer "
	    "than a few seconds answers with a task, or a run_id: "
	    "get_result(run_id) waits for its result." : "Answers when done.");
	t = tool_new("restore", "Restore the sandbox to a snapshot", desc);
	props = json_object_new_object();
	js_set(props, "snapshot_id", tool_prop("string", "From snapshot() or "
	    "snapshots()."));
	js_set(props, "force", tool_prop("boolean", "Stop commands still "
	    "running in the sandbox first (default false)."));
	js_set(t, "inputSchema", tool_object(props, true, "snapshot_id", NULL));
	tool_annotate(t, false, true, true, false);
	return t;
}

#define RESTORE_RUN_TIMEOUT_S	3600	/* the run row's; its worker ends it */

/* A restore under way, for its watch (snapshot.h). */
struct restore_watch {
	struct tool_ctx	*tc;
	const char	*id;		/* the snapshot */
	long long	 started;	/* clock_ms */
	char		 run_id[RUN_ID_MAX + 1];
	bool		 handed;	/* answered with a task or handle */
	bool		 cancelled;	/* tasks/cancel asked it to stop */
};

/*
 * 2025: the stream kept alive. 2026: past SANDBOX_INLINE_WAIT, a run made
 * to hold the result, so the client is answered now (restore_answer).
 */
static const char *
restore_tick(void *arg)
{
	struct restore_watch	*w = arg;
	struct tool_ctx		*tc = w->tc;
	char			 what[64];

	if (!tc->mode.stateless) {
		tool_alive(tc, tc->cfg->ping_interval * 1000);
		return NULL;
	}
	if (clock_ms() - w->started < tc->cfg->inline_wait * 1000)
		return NULL;
	if (crypto_token(w->run_id, sizeof(w->run_id), 12) == -1)
		return NULL;
	snprintf(what, sizeof(what), "restore %s", w->id);
	if (runs_start(tc->db, NULL, w->run_id, tc->session_id, tc->request_id,
	    tc->who, what, RESTORE_RUN_TIMEOUT_S) == -1) {
		log_warn("restore %s: its run is not recorded", w->id);
		return NULL;
	}
	return w->run_id;
}

/* The CreateTaskResult, or a result naming run_id, as the answer now. */
static void
restore_answer(void *arg)
{
	struct restore_watch	*w = arg;
	struct tool_ctx		*tc = w->tc;
	struct json_object	*res = NULL, *sc;
	char			 text[400];
	long long		 secs = (clock_ms() - w->started) / 1000;

	snprintf(text, sizeof(text), "Restoring to snapshot %s for %llds "
	    "(run_id %s).", w->id, secs, w->run_id);
	if (!tc->mode.tasks || tasks_mark(tc->db, w->run_id, "task", text,
	    &res) == -1) {
		if (tasks_mark(tc->db, w->run_id, "handle", NULL, NULL) == -1)
			log_warn("restore %s: cannot record its handle", w->id);
		snprintf(text, sizeof(text), "Still restoring to snapshot %s "
		    "after %llds (run_id %s); it goes on. Call get_result("
		    "run_id=\"%s\") to wait for its result.", w->id, secs,
		    w->run_id, w->run_id);
		sc = json_object_new_object();
		js_set_str(sc, "snapshot_id", w->id);
		js_set_str(sc, "run_id", w->run_id);
		js_set_bool(sc, "restored", false);
		js_set_bool(sc, "running", true);
		res = result_new(text, sc, false);
	}
	w->handed = true;
	tool_answer(tc, res);
}

/* Once handed: a tasks/cancel marks its run (runs_cancel_requested). */
static bool
restore_cancelled(void *arg)
{
	struct restore_watch *w = arg;

	if (w->handed && !w->cancelled &&
	    runs_cancel_requested(w->tc->db, w->run_id))
		w->cancelled = true;
	return w->cancelled;
}

static struct json_object *
restore_call(struct tool_ctx *tc, struct json_object *args)
{
	struct json_object	*res, *sc, *v;
	struct snapshot_who	 w = who_of(tc);
	struct snapshot_watch	 watch = { restore_tick, restore_answer,
	    restore_cancelled, NULL };
	struct restore_watch	 rw;
	struct error		 err;
	const char		*id;
	char			 text[300], why[200];
	bool			 force = false;
	int			 rc;

	if ((res = unknown_arg(args, "restore", "snapshot_id", "force")) != NULL)
		return res;
	if ((id = id_arg(args, &res)) == NULL)
		return res;
	if (json_object_object_get_ex(args, "force", &v) &&
	    !json_object_is_type(v, json_type_null) &&
	    js_bool(args, "force", &force) == -1)
		return result_error("force must be true or false.");
	/* A restore's work counts against the running caps, as a command's. */
	if (tasks_admit(tc->db, tc->cfg, tc->sandbox, tc->who, why,
	    sizeof(why)) == TASKS_ADMIT_FULL)
		return result_error("Not restored: %s. Wait for one to end "
		    "(get_result) and try again.", why);
	if (!tc->mode.stateless)
		tool_alive(tc, tc->cfg->ping_interval * 1000);
	memset(&rw, 0, sizeof(rw));
	rw.tc = tc;
	rw.id = id;
	rw.started = clock_ms();
	watch.arg = &rw;
	rc = snapshot_restore(tc->cfg, tc->db, tc->sandbox, &w, id, force,
	    &watch, &err);
	if (rc == -1 && !rw.cancelled)
		res = result_error("Not restored: %s", err.msg);
	else {
		if (rc == 0)
			snprintf(text, sizeof(text), "The sandbox is restored "
			    "to snapshot %s: /sandbox and the installed "
			    "packages are as they were then.", id);
		else
			snprintf(text, sizeof(text), "Cancelled: the restore "
			    "to snapshot %s stopped before it switched the "
			    "sandbox over; /sandbox and the packages are as "
			    "they were before it.", id);
		sc = json_object_new_object();
		js_set_str(sc, "snapshot_id", id);
		js_set_bool(sc, "restored", rc == 0);
		if (rc == -1)
			js_set_bool(sc, "cancelled", true);
		res = result_new(text, sc, rc == -1);
	}
	/* Answered early: the run keeps the result for tasks/get, get_result. */
	if (rw.handed && runs_finish(tc->db, rw.run_id, rc == 0 ? "exit" :
	    rw.cancelled ? "cancel" : "error", -1, clock_ms() - rw.started, 0,
	    0, res) == -1)
		log_warn("restore %s: its run %s not finished", id, rw.run_id);
	return res;
}

const struct tool tool_restore = { "restore", restore_describe, restore_call,
    false };

/* --- snapshot_delete(snapshot_id) --- */

static struct json_object *
delete_describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object *t, *props;

	(void)cfg;
	(void)mode;
	t = tool_new("snapshot_delete", "Delete a snapshot",
	    "Delete one of this sandbox's snapshots (snapshots() lists them), "
	    "to make room for new ones.");
	props = json_object_new_object();
	js_set(props, "snapshot_id", tool_prop("string", "The snapshot to "
	    "delete."));
	js_set(t, "inputSchema", tool_object(props, true, "snapshot_id", NULL));
	tool_annotate(t, false, true, true, false);
	return t;
}

static struct json_object *
delete_call(struct tool_ctx *tc, struct json_object *args)
{
	struct json_object	*res, *sc;
	struct error		 err;
	const char		*id;
	char			 text[200];

	if ((res = unknown_arg(args, "snapshot_delete", "snapshot_id", NULL)) !=
	    NULL)
		return res;
	if ((id = id_arg(args, &res)) == NULL)
		return res;
	if (snapshot_delete(tc->cfg, tc->db, tc->sandbox, id, &err) == -1)
		return result_error("%s", err.msg);
	snprintf(text, sizeof(text), "Snapshot %s deleted.", id);
	sc = json_object_new_object();
	js_set_str(sc, "snapshot_id", id);
	js_set_bool(sc, "deleted", true);
	return result_new(text, sc, false);
}

const struct tool tool_snapshot_delete = { "snapshot_delete",
    delete_describe, delete_call, true };
