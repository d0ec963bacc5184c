/*
 * folder.c: see folder.h.
 *
 * The archive is made by SCRIPT_ARCHIVE (sandbox/scripts.c) in the
 * container and read off the exec's output stream; the observer is the
 * sandbox's own type, so a caller outside the area never sees the engine's
 * exec callbacks.
 */
#include <stddef.h>

#include "engine/docker.h"
#include "sandbox/folder.h"
#include "sandbox/sandbox.h"
#include "sandbox/scripts.h"

int
folder_stream(struct sandbox *sb, const char *path, const char *format,
    bool head, const struct exec_observer *obs, bool *stopped,
    int *exit_code, struct error *err)
{
	struct docker_exec_cb	 cb = { obs->output, obs->tick, obs->arg };
	const char		*args[4];

	args[0] = path;
	args[1] = format;
	args[2] = head ? "head" : "get";
	args[3] = NULL;
	return sandbox_script_stream(sb, SCRIPT_ARCHIVE, args, &cb, stopped,
	    exit_code, err);
}
