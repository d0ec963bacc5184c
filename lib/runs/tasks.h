/*
 * tasks.h: commands that outlive their request on the 2026-07-28 protocol,
 * over the run table (runs.h): the Tasks extension (ext-tasks
 * specification/draft/tasks.md, io.modelcontextprotocol/tasks) and plain
 * handles (a result naming the run_id, for clients without Tasks).
 *
 * A task IS a run: its taskId is the run id (96 random bits, so it cannot
 * be guessed), marked as a task in the same row before the CreateTaskResult
 * is sent, so a tasks/get right after it finds the task ("durably
 * created"). Only the client whose token started the run may see it.
 * Whoever collects the command (today the worker that started it) keeps
 * the row current; tasks/get only reads it.
 */
#ifndef CS_TASKS_H
#define CS_TASKS_H

#include <stddef.h>

#include "base/error.h"

struct auth_info;
struct config;
struct db;
struct json_object;
struct sandbox;

#define TASK_POLL_MS	2000		/* pollIntervalMs */
#define TASK_KEEP_S	86400		/* a finished task's result is kept a day */

/*
 * Mark run_id as a task ("task") or a handle ("handle"). For a task, a new
 * CreateTaskResult (resultType "task", status working) in *out. 0 or -1.
 */
int	tasks_mark(struct db *, const char *run_id, const char *handle,
	    const char *status_message, struct json_object **out);

/* Remember the newest output line of a running command (statusMessage). */
void	tasks_note(struct db *, const char *run_id, const char *line);

/*
 * tasks/get: the task's fields (and result, once completed) as a new
 * object in *out. Returns LOOKUP_FOUND, LOOKUP_NONE when the task is
 * unknown, expired or not the caller's (why says which, for the -32602
 * message), LOOKUP_ERROR on error.
 */
enum lookup_result tasks_get(struct db *, const struct config *,
	    const struct auth_info *, const char *task_id, struct json_object **out,
	    char *why, size_t n);

/* tasks/cancel: kill the command if it still runs. Returns as tasks_get. */
enum lookup_result tasks_cancel(struct db *, const struct config *,
	    const struct auth_info *, const char *task_id, char *why, size_t n);

/* tasks/update: acknowledged (no task of this server asks for input). */
enum lookup_result tasks_update(struct db *, const struct auth_info *,
	    const char *task_id, char *why, size_t n);

/*
 * Finish up to max of owner's tasks and handles (runs no worker watches)
 * whose commands have ended, from the supervisor's records in sb
 * (runs_collect), oldest first.
 */
void	tasks_collect_released(struct db *, struct sandbox *, const char *owner,
	    long long max);

/*
 * The cap on commands running at once (SANDBOX_MAX_RUNNING overall,
 * SANDBOX_MAX_RUNNING_PER_OWNER per owner), counted as the run table's
 * running rows: tasks and handles hold no worker, so threads do not
 * bound them. At the cap, the owner's tasks and handles are first
 * collected from sb (their commands may have ended since anyone asked;
 * sb may be NULL). TASKS_ADMIT_START when one more may start,
 * TASKS_ADMIT_FULL when not (why says which limit), TASKS_ADMIT_ERROR on
 * error (allowed).
 */
enum tasks_admit {
	TASKS_ADMIT_ERROR = -1,
	TASKS_ADMIT_START = 0,
	TASKS_ADMIT_FULL = 1,
};
enum tasks_admit tasks_admit(struct db *, const struct config *,
	    struct sandbox *, const struct auth_info *, char *why, size_t n);

#endif
