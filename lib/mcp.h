/*
 * mcp.h: the Model Context Protocol over JSON-RPC 2.0 (spec 2025-11-25,
 * also 2025-06-18 and 2025-03-26), independent of HTTP.
 *
 * cgi-bin/mcp.c is the Streamable HTTP transport: it checks the request,
 * finds the session, and hands each JSON-RPC message to mcp_handle. A
 * request's answer goes out through a struct mcp_stream, which sends one
 * application/json body, or, once a tool sends a notification or a ping
 * before its result, a text/event-stream (spec: transports "Sending Messages
 * to the Server").
 */
#ifndef CS_MCP_H
#define CS_MCP_H

#include <stdbool.h>

struct auth_info;
struct config;
struct db;
struct http_req;
struct json_object;

#define MCP_VERSION_LATEST	"2025-11-25"
#define MCP_SERVER_NAME		"code-sandbox"
#define MCP_SERVER_VERSION	"0.1.0"

/* JSON-RPC 2.0 error codes (§5.1) and the transport's own. */
#define RPC_PARSE_ERROR		-32700
#define RPC_INVALID_REQUEST	-32600
#define RPC_METHOD_NOT_FOUND	-32601
#define RPC_INVALID_PARAMS	-32602
#define RPC_INTERNAL_ERROR	-32603
#define RPC_SERVER_ERROR	-32000

enum mcp_kind {
	MCP_INVALID = -1,
	MCP_REQUEST,		/* method and id */
	MCP_NOTIFICATION,	/* method, no id */
	MCP_RESPONSE,		/* result or error from the client */
};

/* Is v a protocol version this server speaks? */
bool		 mcp_version_supported(const char *v);
/* Versions a client may send: the one to answer (spec: lifecycle "Version Negotiation"). */
const char	*mcp_negotiate(const char *requested);

/*
 * Check one message's JSON-RPC envelope. On MCP_INVALID, *error is a new
 * error response (-32600, with the id when one could be read).
 */
enum mcp_kind	 mcp_classify(struct json_object *msg, struct json_object **error);

/* New JSON-RPC responses; id is copied (NULL or absent -> null). */
struct json_object *mcp_error(struct json_object *id, int code, const char *msg);
struct json_object *mcp_result(struct json_object *id, struct json_object *result);

/* A response being sent for one HTTP request. */
struct mcp_stream;

/*
 * Start the answer to one request. sse_ok: the client accepts
 * text/event-stream; json_ok: it accepts application/json. When only SSE is
 * accepted the stream starts at the first message.
 */
struct mcp_stream *mcp_stream_new(struct http_req *, bool json_ok, bool sse_ok,
		    const char *session_id);
void		 mcp_stream_free(struct mcp_stream *);
/* Can this stream carry messages before the result (the client accepts SSE)? */
bool		 mcp_stream_can_stream(const struct mcp_stream *);
/* Send a notification now (switches to SSE). 0, or -1 once the client is gone. */
int		 mcp_stream_notify(struct mcp_stream *, struct json_object *msg);
/* An SSE comment (": ping") to keep proxies from closing an idle stream. */
int		 mcp_stream_ping(struct mcp_stream *);
/* Begin the SSE response now, before a long wait. No-op without SSE. */
int		 mcp_stream_begin(struct mcp_stream *);
/* A ping when interval seconds have passed since the last one (begins SSE). */
int		 mcp_stream_keepalive(struct mcp_stream *, long interval);
/* notifications/progress for token (spec: basic/utilities/progress). */
int		 mcp_stream_progress(struct mcp_stream *, struct json_object *token,
		    long long progress, const char *message);
/* End a response that carries no result: a cancelled request (204 or an empty SSE end). */
void		 mcp_stream_end_empty(struct mcp_stream *);
/* Send the final response (as JSON, or as the last SSE event). */
int		 mcp_stream_finish(struct mcp_stream *, struct json_object *response);
/* Has the client gone away? */
bool		 mcp_stream_gone(const struct mcp_stream *);

/* Everything one message is handled with. */
struct mcp_call {
	const struct config	*cfg;
	struct db		*db;
	const struct auth_info	*who;
	const char		*version;	/* the session's protocol version */
	const char		*session_id;	/* Mcp-Session-Id */
	struct mcp_stream	*stream;
};

/*
 * Handle a request or notification other than initialize. Returns a new
 * response for a request, NULL for a notification or for a request that was
 * cancelled (spec: utilities/cancellation: no response is sent).
 */
struct json_object *mcp_handle(struct mcp_call *, struct json_object *msg);

/*
 * The result of initialize for a client asking for `requested`
 * (spec: lifecycle "Initialization").
 */
struct json_object *mcp_initialize_result(const struct config *, const char *requested,
	    const char *owner);

#endif
