/*
 * tools/get_result.c: get_result(run_id, wait) returns an earlier execute
 * call's result, waiting for it while it still runs; with no run_id it lists
 * recent runs. A command outlives the request that started it (a lost
 * connection, a client's timeout), so its result is never lost.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"
#include "base/js.h"
#include "http/http.h"
#include "oauth/auth.h"
#include "runs/result.h"
#include "runs/runs.h"
#include "runs/tasks.h"
#include "tools/tools.h"

#define WAIT_DEFAULT	60
#define WAIT_MAX	600
#define RECENT		10
#define POLL_US		250000
#define COLLECT_EVERY	8	/* polls: about every 2 s */

static long	wait_cap(const struct config *);

static struct json_object *
describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props, *p;
	char			 desc[800], cap[96] = "";

	if (mode->stateless)
		snprintf(cap, sizeof(cap), " (at most %ld s per call)",
		    wait_cap(cfg));
	snprintf(desc, sizeof(desc), "%s Call get_result(run_id) to wait up "
	    "to `wait` seconds%s for that command and get the same result "
	    "execute would have returned; if it is still running you are told "
	    "so and can call again. Call get_result() without run_id to list "
	    "the latest runs with their run_id, state and command. Results are "
	    "kept for a day.", mode->stateless ? "execute answers with a run_id "
	    "when its command outlives a short wait; the command goes on." :
	    "Commands started by execute keep running when a call is "
	    "interrupted (lost connection, client timeout, server restart).",
	    cap);
	t = tool_new("get_result", "Get the result of an earlier execute call",
	    desc);
	props = json_object_new_object();
	js_set(props, "run_id", tool_prop("string", "run_id from an execute "
	    "result or from the list; omit it to list recent runs."));
	p = tool_prop("integer", "Seconds to wait for a running command.");
	js_set_int(p, "default", WAIT_DEFAULT);
	js_set_int(p, "minimum", 0);
	js_set_int(p, "maximum", WAIT_MAX);
	js_set(props, "wait", p);
	js_set(t, "inputSchema", tool_object(props, true, NULL));
	tool_annotate(t, true, false, true, false);
	return t;
}

/*
 * 2026: a call answers within the inline wait, so that no call outlives a
 * client's request timeout (the SDK's default is 60 s).
 */
static long
wait_cap(const struct config *cfg)
{
	long cap = cfg->inline_wait * 3 / 4;

	return cap < 1 ? 1 : cap;
}

static struct json_object *
list_recent(struct tool_ctx *tc)
{
	struct json_object	*runs, *sc;
	char			*text = NULL;
	size_t			 i, n, len;
	FILE			*f;

	/* Tasks and handles no worker watches: their states as they are now. */
	if (tc->sandbox != NULL)
		tasks_collect_released(tc->db, tc->sandbox, auth_owner(tc->who),
		    RECENT);
	runs = runs_recent(tc->db, auth_owner(tc->who), RECENT);
	n = json_object_array_length(runs);

	if ((f = open_memstream(&text, &len)) == NULL) {
		json_object_put(runs);
		return result_error("Internal error: out of memory.");
	}
	fprintf(f, n == 0 ? "No runs yet.\n" : "Latest runs, newest first "
	    "(get_result(run_id) returns one's result):\n");
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(runs, i);
		long long ago = 0, code;

		js_int(o, "started_seconds_ago", &ago);
		fprintf(f, "- %s  %s", js_str(o, "run_id"), js_str(o, "state"));
		if (js_int(o, "exit_code", &code) == 0)
			fprintf(f, " (exit %lld)", code);
		fprintf(f, ", started %llds ago: %s\n", ago, js_str(o, "command"));
	}
	fclose(f);
	sc = json_object_new_object();
	js_set(sc, "runs", runs);
	struct json_object *res = result_new(text, sc, false);
	free(text);
	return res;
}

static struct json_object *
call(struct tool_ctx *tc, struct json_object *args)
{
	struct json_object	*v, *result = NULL;
	const char		*run_id = NULL;
	long long		 wait = WAIT_DEFAULT;
	time_t			 deadline;
	char			 state[32];
	int			 found, polls;

	json_object_object_foreach(args, key, val) {
		(void)val;
		if (strcmp(key, "run_id") != 0 && strcmp(key, "wait") != 0)
			return result_error("Unknown argument \"%.64s\": get_result "
			    "takes run_id (string) and wait (seconds).", key);
	}
	if (json_object_object_get_ex(args, "run_id", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if ((run_id = js_str_max(args, "run_id", RUN_ID_MAX)) == NULL ||
		    *run_id == '\0')
			return result_error("run_id must be a run id string from an "
			    "execute result; call get_result() to list runs.");
	}
	if (json_object_object_get_ex(args, "wait", &v) &&
	    !json_object_is_type(v, json_type_null) &&
	    (js_int(args, "wait", &wait) == -1 || wait < 0 || wait > WAIT_MAX))
		return result_error("wait must be a whole number of seconds from 0 "
		    "to %d.", WAIT_MAX);
	if (run_id == NULL)
		return list_recent(tc);
	if (tc->mode.stateless && wait > wait_cap(tc->cfg))
		wait = wait_cap(tc->cfg);

	deadline = time(NULL) + (time_t)wait;
	for (polls = 0;; polls++) {
		found = runs_get(tc->db, auth_owner(tc->who), run_id, state,
		    sizeof(state), &result);
		if (found != LOOKUP_FOUND)
			return found == LOOKUP_NONE ? result_error("No run %s: call get_result() "
			    "to list recent runs.", run_id) :
			    result_error("Internal error reading run %s.", run_id);
		if (strcmp(state, "running") != 0 || http_stopping())
			break;
		json_object_put(result);
		result = NULL;
		/*
		 * Its worker may be gone (killed, restarted): collect it from
		 * the supervisor's record, now and every COLLECT_EVERY polls.
		 */
		if (polls % COLLECT_EVERY == 0 && tc->sandbox != NULL &&
		    runs_collect(tc->db, tc->sandbox, run_id) ==
		    RUN_COLLECT_FINISHED)
			continue;
		if (time(NULL) >= deadline) {
			found = runs_get(tc->db, auth_owner(tc->who), run_id,
			    state, sizeof(state), &result);
			if (found != LOOKUP_FOUND)
				return result_error("Internal error reading run "
				    "%s.", run_id);
			break;
		}
		if (tool_alive(tc, tc->mode.stateless ? 1000 :
		    tc->cfg->ping_interval * 1000) == -1 && tc->mode.stateless)
			break;	/* cancelled: nothing more is sent */
		usleep(POLL_US);
	}
	if (strcmp(state, "running") == 0) {
		struct json_object *sc = json_object_new_object();

		js_set_str(sc, "run_id", run_id);
		js_set_str(sc, "state", state);
		json_object_put(result);
		return result_new("Still running; call get_result again with "
		    "this run_id to keep waiting.", sc, false);
	}
	if (result == NULL) {
		if (strcmp(state, "detached") == 0)
			return result_error("Run %s was going on while the server "
			    "restarted: it ran on in the sandbox, but its output "
			    "was not captured.", run_id);
		return result_error("The result of run %s is no longer kept "
		    "(state: %s).", run_id, state);
	}
	return result;
}

const struct tool tool_get_result = {
	.name = "get_result",
	.describe = describe,
	.call = call,
	.no_sandbox = true,
};
