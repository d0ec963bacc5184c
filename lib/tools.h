/*
 * tools.h: the MCP tools (spec: server/tools).
 *
 * Each tool lives in its own file, lib/tool_NAME.c, and is listed once in
 * the table in mcp.c. A tool describes itself (the tools/list entry, with
 * inputSchema, outputSchema and annotations) and runs a call.
 */
#ifndef CS_TOOLS_H
#define CS_TOOLS_H

#include <stdbool.h>

struct auth_info;
struct config;
struct db;
struct json_object;
struct mcp_stream;
struct sandbox;

/* What a running tool may use. */
struct tool_ctx {
	const struct config	*cfg;
	struct db		*db;
	struct sandbox		*sandbox;
	const struct auth_info	*who;
	const char		*session_id;	/* Mcp-Session-Id */
	/*
	 * The request's stream when the client accepts SSE, else NULL: a tool
	 * may send progress notifications and pings on it (mcp.h).
	 */
	struct mcp_stream	*stream;
	struct json_object	*progress_token;	/* _meta.progressToken or NULL */
	struct json_object	*request_id;		/* the JSON-RPC id */
};

struct tool {
	const char		*name;
	/* A new tools/list entry. */
	struct json_object	*(*describe)(const struct config *);
	/*
	 * Run the call. args is the "arguments" object (never NULL). Returns a
	 * new CallToolResult (content, structuredContent, isError). Failures,
	 * including bad argument values, are results with isError true and a
	 * message a model can act on (spec: tools "Error Handling"). NULL:
	 * the request was cancelled and gets no response.
	 */
	struct json_object	*(*call)(struct tool_ctx *, struct json_object *args);
};

/*
 * The CallToolResult of a finished command, and the run table's state for
 * it ("exit", "timeout", "cancel", "detached"): what execute returns, and
 * what is stored when a run is collected later (runs_collect). NULL when
 * out of memory.
 */
struct exec_result;
struct json_object	*tool_execute_result(const struct exec_result *,
			    long timeout, const char *run_id, const char **state);

extern const struct tool tool_execute;
extern const struct tool tool_get_result;
extern const struct tool tool_share_file;

/* Building tools/list entries (spec: server/tools "Tool"). */
/* A new entry with name, title and description. */
struct json_object	*tool_new(const char *name, const char *title,
			    const char *description);
/* A JSON Schema property {type, description}; either may be NULL. */
struct json_object	*tool_prop(const char *type, const char *description);
/*
 * An object schema taking props, with the NULL-terminated required names;
 * closed: no other properties allowed.
 */
struct json_object	*tool_object(struct json_object *props, bool closed, ...)
			    __attribute__((sentinel));
/* Set the entry's annotations (its title is copied into them). */
void			 tool_annotate(struct json_object *tool, bool read_only,
			    bool destructive, bool idempotent, bool open_world);

/* A CallToolResult with one text block, structuredContent (taken, may be NULL) and isError. */
struct json_object	*tool_result(const char *text, struct json_object *structured,
			    bool is_error);
/* An isError result with a formatted message. */
struct json_object	*tool_error(const char *fmt, ...)
			    __attribute__((format(printf, 1, 2)));

#endif
