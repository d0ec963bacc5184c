/*
 * tools.h: the MCP tools (spec: server/tools).
 *
 * Each tool lives in its own file, lib/tools/NAME.c, and is listed once in
 * the table in lib/mcp/tool.c. A tool describes itself (the tools/list entry, with
 * inputSchema, outputSchema and annotations) and runs a call.
 */
#ifndef CS_TOOLS_H
#define CS_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

struct auth_info;
struct config;
struct db;
struct json_object;
struct sandbox;

/*
 * What the caller's protocol era lets a call do (filled from the era's
 * table in lib/mcp/era.c), and what tools say about it in their descriptions.
 */
struct tool_mode {
	/*
	 * 2026-07-28: closing the response stream cancels the call
	 * (basic/patterns/cancellation); a command outliving a short wait is
	 * answered with a handle (a task, or its run_id) and goes on.
	 */
	bool		 stateless;
	bool		 tasks;		/* the request declared the Tasks extension */
	bool		 progress;	/* the request asked for progress notifications */
	const char	*keepalive;	/* text of keep-alive comments (NULL: a bare ":") */
	const char	*interrupted;	/* what happens to an interrupted call, for descriptions */
};

/*
 * How a running tool talks back to its client, without knowing the
 * transport: the protocol layer (lib/mcp/tool.c) provides these over the request's
 * stream.
 */
struct tool_channel {
	/* notifications/progress n, when the request asked for progress. */
	void	(*progress)(void *arg, long long n, const char *message);
	/*
	 * Keep the answer alive: the stream has begun and a comment goes out
	 * when interval_ms have passed since the last. 0, or -1 once the
	 * client is gone.
	 */
	int	(*alive)(void *arg, long interval_ms);
	/* Has the client gone away? */
	bool	(*gone)(void *arg);
	/*
	 * Send result (a new result object, taken) as the answer now; the
	 * request is over and the tool goes on without a client. 0 or -1.
	 */
	int	(*answer)(void *arg, struct json_object *result);
	void	*arg;
	bool	 streams;	/* messages may go out before the answer (SSE) */
};

/* What a running tool may use. */
struct tool_ctx {
	const struct config	*cfg;
	struct db		*db;
	struct sandbox		*sandbox;
	const struct auth_info	*who;
	const char		*session_id;	/* 2025: Mcp-Session-Id */
	struct json_object	*request_id;	/* the JSON-RPC id */
	struct tool_mode	 mode;
	struct tool_channel	 chan;
};

struct tool {
	const char		*name;
	/* A new tools/list entry, worded for the caller's era. */
	struct json_object	*(*describe)(const struct config *,
				    const struct tool_mode *);
	/*
	 * Run the call. args is the "arguments" object (never NULL). Returns a
	 * new CallToolResult (content, structuredContent, isError). Failures,
	 * including bad argument values, are results with isError true and a
	 * message a model can act on (spec: tools "Error Handling"). NULL:
	 * the request was cancelled and gets no response.
	 */
	struct json_object	*(*call)(struct tool_ctx *, struct json_object *args);
	/*
	 * Reads only the database (get_result): the call neither starts the
	 * caller's sandbox nor counts as its use (sandboxes.h).
	 */
	bool			 no_sandbox;
};

extern const struct tool tool_execute;
extern const struct tool tool_get_result;
extern const struct tool tool_share_file;
extern const struct tool tool_upload_link;
extern const struct tool tool_view_image;
extern const struct tool tool_terminal_start;
extern const struct tool tool_terminal_send;
extern const struct tool tool_terminal_read;
extern const struct tool tool_terminal_close;
extern const struct tool tool_terminal_link;
extern const struct tool tool_preview_link;
extern const struct tool tool_snapshot;
extern const struct tool tool_snapshots;
extern const struct tool tool_restore;
extern const struct tool tool_snapshot_delete;

/* Building tools/list entries (spec: server/tools "Tool"). */
/* A new entry with name, title and description. */
struct json_object	*tool_new(const char *name, const char *title,
			    const char *description);
/* A JSON Schema property {type, description}; either may be NULL. */
struct json_object	*tool_prop(const char *type, const char *description);
/*
 * An object schema taking props, with the NULL-terminated required names;
 * closed: no other properties allowed (an int: the parameter before "..."
 * must not be one that promotes, C11 §7.16.1.4).
 */
struct json_object	*tool_object(struct json_object *props, int closed, ...)
			    __attribute__((sentinel));
/* Set the entry's annotations (its title is copied into them). */
void			 tool_annotate(struct json_object *tool, bool read_only,
			    bool destructive, bool idempotent, bool open_world);

/* The channel, NULL-safe: progress, keep-alive, client gone, early answer. */
void			 tool_progress(struct tool_ctx *, long long n, const char *message);
int			 tool_alive(struct tool_ctx *, long interval_ms);
bool			 tool_client_gone(struct tool_ctx *);
int			 tool_answer(struct tool_ctx *, struct json_object *result);
/*
 * Normalise path (relative to base unless absolute) into out: one '/'
 * between parts, no "." or ".." parts. Returns 0, or -1 with why set when
 * it goes above "/" or is too long.
 */
int			 tool_path_normalise(const char *base, const char *path,
			    char *out, size_t outsz, const char **why);

#endif
