/*
 * run.h: durable runs (run.c): "supervisor run", "kill" and "collect",
 * and the checks of their arguments. A run's record outlives the exec and
 * the channel that started it.
 */
#ifndef CS_SUPERVISOR_RUN_H
#define CS_SUPERVISOR_RUN_H

#include <stdbool.h>

#define RUN_TIMEOUT_MAX	(30L * 86400)		/* seconds */
#define RUN_OUTPUT_MAX	(10L * 1000 * 1000)	/* bytes kept of each stream */

/* A run id: 1 to 64 of [A-Za-z0-9_-]. */
bool	run_valid_id(const char *);

/*
 * Run `bash -c` the chunks joined (from a file when there are several)
 * as "supervisor run" does; the command's exit status (128+N for signal
 * N), and never returns when it could not start (125).
 */
int	run_main(const char *id, long timeout, long max, int nchunks,
	    char **chunks);

/* SIGKILL run id's process group: 0, or 1 when there is no such run. */
int	run_kill(const char *id);

/*
 * How run id stands: 0 with *fd its record open, 3 running, 4 ended
 * without a record, 5 no such run.
 */
int	run_state(const char *id, int *fd);

/* Copy run id's record to stdout: 0, or run_state's 3, 4 or 5. */
int	run_collect(const char *id);

#endif
