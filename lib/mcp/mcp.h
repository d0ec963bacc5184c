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
 * era.c (struct mcp_era, extern.h): the methods served, how results are
 * dressed, the HTTP status of an error, what a tool call may do with its
 * stream. A message is read and classified once (mcp_read) into a struct
 * mcp_msg that names its era; the rest of the code follows the table.
 *
 * mcp_transport (transport.c) is the /mcp endpoint's Streamable HTTP
 * transport: it checks HTTP, finds the 2025 session, hands each message to
 * the methods with a struct sse (sse.h) for the answer, and is the one
 * place that chooses HTTP statuses.
 */
#ifndef CS_MCP_H
#define CS_MCP_H

#include <stdbool.h>

struct config;
struct db;
struct http_req;
struct json_object;

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

/* One era's rules (era.c). */
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

/*
 * Read one message of the given era: envelope, then (2026) the _meta and
 * header checks of streamable-http "Server Validation", in the order the
 * spec and the conformance suite expect. Returns 0 with *m filled, or -1
 * with *error a new error response and *status its HTTP status.
 */
int		 mcp_read(const struct mcp_era *, struct json_object *msg,
		    const struct mcp_http_meta *, struct mcp_msg *m,
		    struct json_object **error, int *status);

/* A new JSON-RPC error response; id is copied (NULL or absent -> null). */
struct json_object *mcp_error(struct json_object *id, int code, const char *msg);

/*
 * Answer one request to /mcp: POST carries JSON-RPC messages, DELETE ends
 * a 2025 session, anything else is 405. Checks Origin and the bearer token
 * first, and answers every request itself.
 */
void		 mcp_transport(struct http_req *, const struct config *, struct db *);

#endif
