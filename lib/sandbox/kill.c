/*
 * sandbox/kill.c: killing a run's process tree: through its supervisor
 * (over the channel, else an exec of its own), else the wrapper's killer
 * script; see sandbox_kill in sandbox.h.
 */
#include <stdbool.h>

#include "sandbox/chan.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"
#include "sandbox/scripts.h"
#include "sandbox/sup.h"

int
sandbox_kill_run(struct sandbox *sb, const char *run_id, const char *marker,
    struct error *err)
{
	const char *const	 args[] = { run_id, marker, NULL };
	char			 sup[SUP_PATH_MAX];
	struct small_out	 o;
	struct error		 e;
	int			 code;

	/* A run under the supervisor: its kill (exit 1: no such run here). */
	if (sup_ensure(sb, sup, &e) == 0) {
		const char *const sargs[] = { sup, "kill", run_id, NULL };

		/* Over the channel when there is one, else an exec. */
		if (sb->channel && chan_ask(sb, sup, 'k', run_id) == 0)
			return 0;
		if (sandbox_helper(sb, NULL, sargs, &o, &code, &e) == 0 &&
		    code == 0)
			return 0;
	}
	if (sandbox_helper(sb, SCRIPT_KILLER, args, &o, &code, &e) == -1) {
		/* No container running: nothing of the run can be alive. */
		if (e.kind == ERR_NOT_FOUND || e.kind == ERR_CONFLICT)
			return 0;
		return error_kind(err, e.kind, "%s", e.msg);
	}
	if (code != 0)
		return error_set(err, "the kill helper failed with status %d", code);
	return 0;
}

int
sandbox_kill(struct sandbox *sb, const char *run_id, struct error *err)
{
	if (run_id == NULL || !sandbox_valid_run_id(run_id))
		return error_set(err, "invalid run id");
	return sandbox_kill_run(sb, run_id, "cancel", err);
}
