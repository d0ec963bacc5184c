/*
 * extern.h: what the files of lib/mcp/ share, and nothing outside the
 * folder includes.
 *
 *   rpc.c        JSON-RPC envelopes and errors, ids
 *   era.c        the two eras' tables, telling them apart, versions
 *   read.c       reading one message (the 2026 _meta and header checks)
 *   init.c       initialize, server/discover's instructions, serverInfo
 *   dispatch.c   the methods of each era and mcp_handle
 *   tool.c       tools/list and tools/call (the tool table, the channel)
 *   transport.c  the Streamable HTTP transport of /mcp (mcp_transport)
 *   session.c    2025 sessions in the database (session.h)
 *
 * The transport is the only file that chooses HTTP statuses and turns a
 * struct error into a JSON-RPC error; the others build JSON-RPC messages.
 */
#ifndef CS_MCP_EXTERN_H
#define CS_MCP_EXTERN_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "mcp/mcp.h"
#include "tools/tools.h"

struct auth_info;
struct config;
struct db;
struct sse;

#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CAPS	"io.modelcontextprotocol/clientCapabilities"
#define MCP_META_SERVER	"io.modelcontextprotocol/serverInfo"

/* Everything one message is handled with. */
struct mcp_call {
	const struct config	*cfg;
	struct db		*db;
	const struct auth_info	*who;
	const char		*version;	/* 2025: the session's protocol version */
	const char		*session_id;	/* 2025: Mcp-Session-Id */
	struct sse		*stream;	/* the answer; NULL for batches and notifications */
};

/* A method of one era; a table ends with a NULL name. */
struct mcp_method {
	const char	*name;
	struct json_object *(*run)(struct mcp_call *, const struct mcp_msg *);
	unsigned	 flags;
};
#define M_CACHEABLE	0x1	/* 2026 server/utilities/caching: ttlMs, cacheScope */
#define M_TASKS		0x2	/* needs the Tasks extension declared (-32021) */

/*
 * One era's rules: everything that differs between 2025 and 2026 is a
 * member here, so no other code asks which era it is in (era.c).
 */
struct mcp_era {
	const char		*name;
	bool			 sessions;	/* initialize, Mcp-Session-Id, batches */
	const struct mcp_method	*methods;	/* dispatch.c */
	/* A client notification (no answer). */
	void			(*notify)(struct mcp_call *, const struct mcp_msg *);
	/* Dress a result of method (never NULL) before it is sent. */
	void			(*dress)(const struct mcp_method *, struct json_object *result);
	/* The HTTP status of an error response from dispatch. */
	int			(*error_status)(int code);
	/* What a tool call may do with its stream, and what tools say about it. */
	struct tool_mode	 tools;
	/* What the instructions say about an interrupted call. */
	const char		*interrupted;
};

/* rpc.c */

/* A new result response; id is copied (NULL or absent -> null), result taken. */
struct json_object *mcp_result(struct json_object *id, struct json_object *result);
/* A new error response with data (taken). */
struct json_object *mcp_error_data(struct json_object *id, int code,
		    const char *msg, struct json_object *data);
/* JSON-RPC §4: is id a string or an integer (MCP also forbids null)? */
bool		 mcp_id_valid(struct json_object *id);
/* The id of a message when it is a valid one, else NULL (borrowed). */
struct json_object *mcp_msg_id(struct json_object *msg);

/* era.c */

/* A new array of the versions this server speaks, newest first. */
struct json_object *mcp_versions_array(void);
/* A new UnsupportedProtocolVersionError response (2026-07-28 basic/versioning). */
struct json_object *mcp_unsupported_version(struct json_object *id,
		    const char *requested);
/* params._meta[key] of a message with the type asked for, or NULL (borrowed). */
struct json_object *mcp_meta_get(struct json_object *msg, const char *key,
		    enum json_type);
/*
 * A header value without the spaces and tabs around it, copied into buf;
 * NULL when v is NULL or does not fit.
 */
const char	*mcp_header_trim(const char *v, char *buf, size_t bufsz);
/* Does this era keep sessions (initialize, Mcp-Session-Id, batches, DELETE)? */
bool		 mcp_era_sessions(const struct mcp_era *);
/* The HTTP status a response goes out with in this era (200 for results). */
int		 mcp_http_status(const struct mcp_era *, struct json_object *response);

/* init.c */

/* A new serverInfo object. */
struct json_object *mcp_server_info(void);
/*
 * The instructions for an era, naming owner (may be NULL) when signed in,
 * and the secrets (names and hosts, never values) its sandbox's requests
 * carry (db may be NULL: none named). A new string the caller frees, or
 * NULL when out of memory.
 */
char		*mcp_instructions(const struct config *, struct db *,
		    const struct mcp_era *, const char *owner);
/*
 * The result of initialize for a client asking for `requested`
 * (spec 2025-11-25: lifecycle "Initialization"). A new object.
 */
struct json_object *mcp_initialize_result(const struct config *, struct db *,
		    const char *requested, const char *owner);

/* dispatch.c */

extern const struct mcp_method mcp_methods_2025[], mcp_methods_2026[];

/*
 * Handle a request or notification other than initialize. Returns a new
 * response for a request, NULL for a notification, for a request that was
 * cancelled (2025 utilities/cancellation: no response is sent), or for one
 * whose answer the handler already sent on the stream (a command that went
 * on as a task or handle).
 */
struct json_object *mcp_handle(struct mcp_call *, const struct mcp_msg *);
/* The method table entry of the message's method in its era, or NULL. */
const struct mcp_method *mcp_method_of(const struct mcp_msg *);
/* A new response carrying result (taken), dressed for the era of m. */
struct json_object *mcp_reply(const struct mcp_msg *, struct json_object *result);
/* 2025 notifications/cancelled; 2026 ignores notifications. */
void		 mcp_notify_2025(struct mcp_call *, const struct mcp_msg *);
void		 mcp_notify_2026(struct mcp_call *, const struct mcp_msg *);

/* tool.c */

/* tools/list and tools/call: new responses (tools/call: NULL when answered already). */
struct json_object *mcp_tools_list(struct mcp_call *, const struct mcp_msg *);
struct json_object *mcp_tools_call(struct mcp_call *, const struct mcp_msg *);

#endif
