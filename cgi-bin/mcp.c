/*
 * mcp: the /mcp endpoint, MCP's Streamable HTTP transport
 * (spec 2025-11-25 basic/transports).
 *
 * POST carries one JSON-RPC message (a batch only under 2025-03-26); GET is
 * 405 (no server-initiated stream); DELETE ends a session. The checks run in
 * the order below, each answering with the status the spec names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "app.h"
#include "auth.h"
#include "cleanup.h"
#include "config.h"
#include "db.h"
#include "http.h"
#include "js.h"
#include "log.h"
#include "mcp.h"
#include "session.h"

#define BODY_MAX	(1024 * 1024)	/* commands are capped lower, in the tool */
#define BATCH_MAX	32

/* Send a JSON-RPC error as a whole HTTP response. */
static void
rpc_fail(struct http_req *r, int status, struct json_object *id, int code,
    const char *msg)
{
	struct json_object *e = mcp_error(id, code, msg);

	http_send_json(r, status, e);
	json_object_put(e);
}

/*
 * Origin (transports "Security Warning", DNS rebinding): a browser origin
 * must be the public URL's origin, one listed in SANDBOX_ALLOWED_ORIGINS, or
 * a loopback origin when the server itself is bound to loopback. Requests
 * without Origin (server-side clients) pass.
 */
static bool
origin_allowed(const struct config *cfg, const char *origin)
{
	const char	*p, *host;
	size_t		 n = strlen(origin);

	if (strcasecmp(origin, cfg->public_origin) == 0)
		return true;
	if (n == 0)
		return false;
	for (p = cfg->allowed_origins; *p != '\0'; p += strcspn(p, " ")) {
		p += strspn(p, " ");
		if (*p != '\0' && strlen(p) >= n && strncasecmp(p, origin, n) == 0 &&
		    (p[n] == ' ' || p[n] == '\0'))
			return true;
	}
	if (!config_host_is_loopback(cfg))
		return false;
	if (strncmp(origin, "http://", 7) == 0)
		host = origin + 7;
	else if (strncmp(origin, "https://", 8) == 0)
		host = origin + 8;
	else
		return false;
	n = strcspn(host, ":");
	if (host[n] != '\0' && host[n] != ':')
		return false;
	return (n == 9 && strncasecmp(host, "localhost", 9) == 0) ||
	    (n == 9 && strncmp(host, "127.0.0.1", 9) == 0) ||
	    (n == 5 && strncmp(host, "[::1]", 5) == 0);
}

/* Does an Accept header list type (or a wildcard covering it)? */
static bool
accepts(const char *accept, const char *type)
{
	const char	*p = accept;
	size_t		 tn = strlen(type);

	while (*p != '\0') {
		size_t n;

		p += strspn(p, " ,");
		n = strcspn(p, ",;");
		while (n > 0 && p[n - 1] == ' ')
			n--;
		if ((n == tn && strncasecmp(p, type, n) == 0) ||
		    (n == 3 && strncmp(p, "*/*", 3) == 0) ||
		    (n == strcspn(type, "/") + 2 && strncasecmp(p, type, n - 1) == 0 &&
		    p[n - 1] == '*'))
			return true;
		p += strcspn(p, ",");
	}
	return false;
}

static bool
is_json_content_type(const char *ct)
{
	size_t n;

	if (ct == NULL)
		return false;
	n = strcspn(ct, "; ");
	return n == 16 && strncasecmp(ct, "application/json", 16) == 0;
}

static void
do_initialize(struct http_req *r, const struct config *cfg, struct db *db,
    struct json_object *msg, bool json_ok, bool sse_ok)
{
	struct json_object	*params, *id = NULL, *res, *ci;
	struct mcp_stream	*st;
	struct error		 err;
	const char		*requested, *version;
	char			 sid[64], info[256];

	json_object_object_get_ex(msg, "id", &id);
	params = js_get(msg, "params", json_type_object);
	if ((requested = js_str_max(params, "protocolVersion", 64)) == NULL) {
		rpc_fail(r, 400, id, RPC_INVALID_PARAMS,
		    "Invalid params: protocolVersion is required");
		return;
	}
	version = mcp_negotiate(requested);
	info[0] = '\0';
	if ((ci = js_get(params, "clientInfo", json_type_object)) != NULL) {
		const char *n = js_str_max(ci, "name", 100);
		const char *v = js_str_max(ci, "version", 50);

		snprintf(info, sizeof(info), "%s%s%s", n ? n : "?",
		    v ? " " : "", v ? v : "");
	}
	if (session_create(db, cfg->session_ttl, version, info, sid, sizeof(sid), &err) == -1) {
		log_warn("initialize: %s", err.msg);
		rpc_fail(r, 500, id, RPC_INTERNAL_ERROR, "Internal error");
		return;
	}
	res = mcp_result(id, mcp_initialize_result(cfg, requested));
	if ((st = mcp_stream_new(r, json_ok, sse_ok, sid)) != NULL) {
		mcp_stream_finish(st, res);
		mcp_stream_free(st);
	}
	json_object_put(res);
}

static void
do_post(struct http_req *r, const struct config *cfg, struct db *db,
    const struct auth_info *who)
{
	const char		*accept = http_header(r, "Accept");
	const char		*sid = http_header(r, "Mcp-Session-Id");
	const char		*hver = http_header(r, "MCP-Protocol-Version");
	const char		*body;
	size_t			 len;
	int			 status;
	bool			 json_ok, sse_ok;
	struct json_object	*msg = NULL, *err_resp = NULL, *resp = NULL;
	struct mcp_stream	*st = NULL;
	struct mcp_call		 call;
	struct error		 err;
	enum mcp_kind		 kind;
	char			 version[32];

	if (accept == NULL || *accept == '\0')
		accept = "*/*";
	json_ok = accepts(accept, "application/json");
	sse_ok = accepts(accept, "text/event-stream");
	if (!json_ok && !sse_ok) {
		http_send_error(r, 406, "Accept must include application/json "
		    "and text/event-stream.");
		return;
	}
	if (!is_json_content_type(http_header(r, "Content-Type"))) {
		http_send_error(r, 415, "Content-Type must be application/json.");
		return;
	}
	if (http_body(r, BODY_MAX, &body, &len, &status) == -1) {
		http_send_error(r, status, status == 413 ?
		    "The request body is too large." : "Bad request body.");
		return;
	}
	if ((msg = js_parse(body, len, JS_MAX_DEPTH, &err)) == NULL) {
		rpc_fail(r, 400, NULL, RPC_PARSE_ERROR, "Parse error");
		return;
	}

	/* initialize opens a session; it is never part of a batch. */
	if (json_object_is_type(msg, json_type_object) &&
	    mcp_classify(msg, &err_resp) == MCP_REQUEST &&
	    strcmp(js_str(msg, "method"), "initialize") == 0) {
		do_initialize(r, cfg, db, msg, json_ok, sse_ok);
		goto out;
	}
	json_object_put(err_resp);
	err_resp = NULL;

	/* Everything else needs a session (transports "Session Management"). */
	if (sid == NULL) {
		rpc_fail(r, 400, NULL, RPC_SERVER_ERROR,
		    "Bad Request: Mcp-Session-Id header is required "
		    "(send initialize first)");
		goto out;
	}
	switch (session_lookup(db, sid, cfg->session_ttl, version, sizeof(version))) {
	case 1:
		break;
	case 0:
		rpc_fail(r, 404, NULL, RPC_SERVER_ERROR,
		    "Session not found: initialize a new session");
		goto out;
	default:
		rpc_fail(r, 500, NULL, RPC_INTERNAL_ERROR, "Internal error");
		goto out;
	}
	/*
	 * MCP-Protocol-Version: absent means the negotiated version; a
	 * supported one is accepted even if it differs; others are 400.
	 */
	if (hver != NULL && !mcp_version_supported(hver)) {
		rpc_fail(r, 400, NULL, RPC_SERVER_ERROR,
		    "Bad Request: unsupported MCP-Protocol-Version");
		goto out;
	}

	memset(&call, 0, sizeof(call));
	call.cfg = cfg;
	call.db = db;
	call.who = who;
	call.version = version;
	call.session_id = sid;

	if (json_object_is_type(msg, json_type_array)) {
		/* Batches exist only in 2025-03-26 (JSON-RPC §6). */
		size_t i, n = json_object_array_length(msg);
		struct json_object *out;

		if (strcmp(version, "2025-03-26") != 0 || n == 0 || n > BATCH_MAX) {
			rpc_fail(r, 400, NULL, RPC_INVALID_REQUEST, n == 0 ?
			    "Invalid Request: empty batch" : n > BATCH_MAX ?
			    "Invalid Request: more than 32 messages in a batch" :
			    "Invalid Request: batches are not supported in this "
			    "protocol version");
			goto out;
		}
		out = json_object_new_array();
		for (i = 0; i < n; i++) {
			struct json_object *m = json_object_array_get_idx(msg, i);
			struct json_object *e = NULL, *one = NULL, *mid = NULL;

			kind = mcp_classify(m, &e);
			if (kind == MCP_INVALID)
				one = e;
			else if (kind == MCP_REQUEST &&
			    strcmp(js_str(m, "method"), "initialize") == 0) {
				json_object_object_get_ex(m, "id", &mid);
				one = mcp_error(mid, RPC_INVALID_REQUEST,
				    "Invalid Request: initialize cannot be batched");
			} else if (kind != MCP_RESPONSE)
				one = mcp_handle(&call, m);	/* NULL for notifications */
			if (one != NULL)
				json_object_array_add(out, one);
		}
		if (json_object_array_length(out) == 0)
			http_send(r, 202, NULL, "", 0);
		else
			http_send_json(r, 200, out);
		json_object_put(out);
		goto out;
	}

	kind = mcp_classify(msg, &err_resp);
	if (kind == MCP_INVALID) {
		http_send_json(r, 400, err_resp);
		goto out;
	}
	if (kind != MCP_REQUEST) {
		/* Notifications and responses: 202 Accepted, no body. */
		if (kind == MCP_NOTIFICATION)
			mcp_handle(&call, msg);
		http_send(r, 202, NULL, "", 0);
		goto out;
	}
	if ((st = mcp_stream_new(r, json_ok, sse_ok, NULL)) == NULL) {
		http_send_error(r, 500, "Out of memory.");
		goto out;
	}
	call.stream = st;
	resp = mcp_handle(&call, msg);
	if (resp != NULL)
		mcp_stream_finish(st, resp);
	else
		mcp_stream_end_empty(st);
out:
	mcp_stream_free(st);
	json_object_put(resp);
	json_object_put(err_resp);
	json_object_put(msg);
}

static void
do_delete(struct http_req *r, const struct config *cfg, struct db *db)
{
	const char *sid = http_header(r, "Mcp-Session-Id");

	if (sid == NULL) {
		http_send_error(r, 400, "Mcp-Session-Id header is required.");
		return;
	}
	switch (session_delete(db, sid)) {
	case 1:
		http_send(r, 204, NULL, "", 0);
		break;
	case 0:
		http_send_error(r, 404, "Session not found.");
		break;
	default:
		http_send_error(r, 500, "Internal error.");
		break;
	}
}

static void
handle(struct http_req *r, const struct config *cfg, struct db *db)
{
	const char		*method = http_method(r);
	const char		*origin = http_header(r, "Origin");
	struct auth_info	 who;

	if (strcmp(http_path(r), "/mcp") != 0) {
		http_send_error(r, 404, "Not found.");
		return;
	}
	if (origin != NULL && !origin_allowed(cfg, origin)) {
		log_refusal(LOG_REFUSE_ORIGIN, cfg->public_origin, origin);
		http_send_error(r, 403, "Origin not allowed.");
		return;
	}
	if (auth_bearer(r, cfg, db, &who) == -1)
		return;
	cleanup_maybe(cfg);	/* FILE_TTL pass, hourly, in the background */
	if (strcmp(method, "POST") == 0)
		do_post(r, cfg, db, &who);
	else if (strcmp(method, "DELETE") == 0)
		do_delete(r, cfg, db);
	else {
		/* No server-initiated stream (transports "Listening for Messages"). */
		http_header_add(r, "Allow", "POST, DELETE");
		http_send_error(r, 405, "Use POST for requests and DELETE to end "
		    "a session.");
	}
}

int
main(void)
{
	return app_main("mcp", handle);
}
