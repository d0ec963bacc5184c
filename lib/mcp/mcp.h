/*
 * mcp.h: the Model Context Protocol over JSON-RPC 2.0, independent of HTTP,
 * in both of its eras on one endpoint:
 *
 * - 2025 ("legacy", spec 2025-11-25, 2025-06-18, 2025-03-26): initialize
 *   opens a session; later requests name it (Mcp-Session-Id).
 * - 2026 ("modern", spec 2026-07-28): stateless; every request carries its
 *   version and the client's capabilities in params._meta, mirrored in
 *   HTTP headers (basic/versioning, basic/transports/streamable-http).
 *
 * Everything that differs between the eras lives in one table per era in
 * mcp.c (struct mcp_era): the methods served, how results are dressed, the
 * HTTP status of an error, what a tool call may do with its stream. A
 * message is read and classified once (mcp_read) into a struct mcp_msg
 * that names its era; the rest of the code follows the table.
 *
 * cgi-bin/mcp.c is the transport: it checks HTTP, finds the 2025 session,
 * and hands each message to mcp_handle with a struct sse (sse.h) for the
 * answer.
 */
#ifndef CS_MCP_H
#define CS_MCP_H

#include <stdbool.h>

struct auth_info;
struct config;
struct db;
struct http_req;
struct json_object;
struct sse;

#define MCP_VERSION_LATEST	"2025-11-25"	/* answered to unknown initialize versions */
#define MCP_VERSION_MODERN	"2026-07-28"
#define MCP_SERVER_NAME		"code-sandbox"
#define MCP_SERVER_VERSION	"0.1.0"
#define MCP_TASKS_EXTENSION	"io.modelcontextprotocol/tasks"

/* JSON-RPC 2.0 error codes (§5.1) and MCP's own (2026-07-28 basic/index "Error Codes"). */
#define RPC_PARSE_ERROR		-32700
#define RPC_INVALID_REQUEST	-32600
#define RPC_METHOD_NOT_FOUND	-32601
#define RPC_INVALID_PARAMS	-32602
#define RPC_INTERNAL_ERROR	-32603
#define RPC_SERVER_ERROR	-32000	/* implementation-defined (2025 transport errors) */
#define RPC_HEADER_MISMATCH	-32020
#define RPC_MISSING_CAPABILITY	-32021
#define RPC_UNSUPPORTED_VERSION	-32022

enum mcp_kind {
	MCP_INVALID = -1,
	MCP_REQUEST,		/* method and id */
	MCP_NOTIFICATION,	/* method, no id */
	MCP_RESPONSE,		/* result or error from the client */
};

/* One era's rules (mcp.c). */
struct mcp_era;
extern const struct mcp_era mcp_era_2025, mcp_era_2026;

/* What the transport saw beside the body, for the 2026 cross-checks. */
struct mcp_http_meta {
	const char	*version;	/* MCP-Protocol-Version, or NULL */
	const char	*method;	/* Mcp-Method, or NULL */
	const char	*name;		/* Mcp-Name, or NULL */
};

/* One message, read once. Pointers borrow from the parsed body. */
struct mcp_msg {
	enum mcp_kind		 kind;
	const struct mcp_era	*era;
	struct json_object	*id;		/* requests (and responses) */
	const char		*method;	/* requests and notifications */
	struct json_object	*params;	/* NULL when absent */
	struct json_object	*progress_token; /* params._meta.progressToken, valid or NULL */
	const char		*version;	/* 2026: the _meta protocol version */
	bool			 tasks;		/* 2026: the request declared the Tasks extension */
};

/* Is v a 2025-era protocol version this server speaks (initialize, sessions)? */
bool		 mcp_version_supported(const char *v);
/* The version to answer initialize with (spec 2025-11-25: lifecycle "Version Negotiation"). */
const char	*mcp_negotiate(const char *requested);

/*
 * Check one message's JSON-RPC envelope. On MCP_INVALID, *error is a new
 * error response (-32600, with the id when one could be read).
 */
enum mcp_kind	 mcp_classify(struct json_object *msg, struct json_object **error);

/*
 * The era of a POST body (a message or a batch), from the body's _meta
 * version first and the MCP-Protocol-Version header second
 * (2026-07-28 basic/versioning "Backward Compatibility"). NULL: neither
 * era (an unsupported version): *error is a new -32022 response.
 */
const struct mcp_era *mcp_era_of(struct json_object *body,
		    const struct mcp_http_meta *, struct json_object **error);

/* Does this era keep sessions (initialize, Mcp-Session-Id, batches, GET/DELETE)? */
bool		 mcp_era_sessions(const struct mcp_era *);

/*
 * Read one message of the given era: envelope, then (2026) the _meta and
 * header checks of streamable-http "Server Validation", in the order the
 * spec and the conformance suite expect. Returns 0 with *m filled, or -1
 * with *error a new error response and *status its HTTP status.
 */
int		 mcp_read(const struct mcp_era *, struct json_object *msg,
		    const struct mcp_http_meta *, struct mcp_msg *m,
		    struct json_object **error, int *status);

/* New JSON-RPC responses; id is copied (NULL or absent -> null). */
struct json_object *mcp_error(struct json_object *id, int code, const char *msg);
struct json_object *mcp_result(struct json_object *id, struct json_object *result);

/* The HTTP status a response goes out with in this era (200 for results). */
int		 mcp_http_status(const struct mcp_era *, struct json_object *response);

/* Everything one message is handled with. */
struct mcp_call {
	const struct config	*cfg;
	struct db		*db;
	const struct auth_info	*who;
	const char		*version;	/* 2025: the session's protocol version */
	const char		*session_id;	/* 2025: Mcp-Session-Id */
	struct sse		*stream;	/* the answer; NULL for batches and notifications */
};

/*
 * Handle a request or notification other than initialize. Returns a new
 * response for a request, NULL for a notification, for a request that was
 * cancelled (2025 utilities/cancellation: no response is sent), or for one
 * whose answer the handler already sent on the stream (a command that went
 * on as a task or handle).
 */
struct json_object *mcp_handle(struct mcp_call *, const struct mcp_msg *);

/*
 * The result of initialize for a client asking for `requested`
 * (spec 2025-11-25: lifecycle "Initialization").
 */
struct json_object *mcp_initialize_result(const struct config *, const char *requested,
	    const char *owner);

/* Answer one request to /mcp (transport.c). */
void		 mcp_transport(struct http_req *, const struct config *, struct db *);

#endif
