/*
 * result.h: CallToolResult values (MCP "Tools", CallToolResult): what a
 * tool call answers, and what a run's row keeps for get_result. Built here,
 * below the tools, so the run-record layer (runs_collect) finishes a run
 * without calling into a tool.
 */
#ifndef CS_RESULT_H
#define CS_RESULT_H

#include <stdbool.h>

struct exec_result;
struct json_object;
struct mask;

/* A CallToolResult with one text block, structuredContent (taken, may be NULL) and isError. */
struct json_object	*result_new(const char *text, struct json_object *structured,
			    bool is_error);

/* An isError result with a formatted message. */
struct json_object	*result_error(const char *fmt, ...)
			    __attribute__((format(printf, 1, 2)));

/*
 * The CallToolResult of a finished command, and the run table's state for
 * it ("exit", "timeout", "cancel", "detached"): what execute returns, and
 * what is stored when a run is collected later (runs_collect). Every
 * secret's value in the output or the notice is masked first (mask, may
 * be NULL; base/secret.h). NULL when out of memory.
 */
struct json_object	*result_exec(const struct exec_result *,
			    long timeout, const char *run_id,
			    const struct mask *mask, const char **state);

#endif
