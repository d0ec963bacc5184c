/*
 * cleanup.h: the periodic clean-up pass (FILE_TTL) and audit log pruning.
 *
 * A pass deletes each top-level entry of /sandbox in which nothing changed
 * (newest mtime anywhere inside, symlinks not followed, other file systems
 * not entered) for FILE_TTL seconds, prunes `run` rows older than
 * SANDBOX_AUDIT_RETENTION and drops stored results older than a day. Each
 * pass is a row in cleanup_run. The cleanup_lease row in SQLite makes sure
 * at most one pass runs at a time across all processes and that automatic
 * passes start at most once per SANDBOX_CLEANUP_INTERVAL.
 */
#ifndef CS_CLEANUP_H
#define CS_CLEANUP_H

#include <stdbool.h>

#include "base/error.h"

struct config;

#define CLEANUP_NAMES_MAX	100	/* removed names kept per pass */

struct cleanup_report {
	long long	 id;		/* cleanup_run row, 0 when none was made */
	bool		 ran;		/* false: not due, or another pass runs */
	char		 state[16];	/* "ok", "skipped", "error" */
	long		 removed, kept, failed;
	long long	 bytes;
	long		 runs_pruned, results_cleared;
	char		 message[256];	/* why skipped or failed, else "" */
	char		*names;		/* JSON array text of removed names, or NULL */
};

/*
 * Run one pass now in this thread, unless another pass holds the lease
 * (then report->ran is false). With force the interval is ignored (for
 * `sandboxctl cleanup`), never a running pass. trigger is "auto" or
 * "sandboxctl". Returns 0 (also when skipped or not run; see report), or
 * -1 when the database could not be used. Free with cleanup_report_free.
 */
int	cleanup_run(const struct config *, const char *trigger, bool force,
	    struct cleanup_report *, struct error *);
void	cleanup_report_free(struct cleanup_report *);

/*
 * Read the clean-up script's output ("R BYTES NAME", "F NAME" lines and a
 * last "T REMOVED KEPT FAILED BYTES") into r's counts and r->names (a JSON
 * array text of the R names, replacing nothing: r->names must be NULL), and
 * log each removal. Returns 0, or -1 without a valid T line (the script did
 * not finish).
 */
int	cleanup_parse(const char *out, struct cleanup_report *r);

/*
 * From a request handler: if a pass may be due, start one in a background
 * thread and return at once. Cheap: the database is looked at at most once
 * a minute per process. Does nothing in plain CGI mode (run
 * `sandboxctl cleanup` from cron there). cfg must outlive cleanup_shutdown.
 */
void	cleanup_maybe(const struct config *cfg);

/* Before exit: ask a running background pass to stop and wait for it. */
void	cleanup_shutdown(void);

#endif
