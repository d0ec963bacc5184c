/*
 * transport.c: the /mcp endpoint, MCP's Streamable HTTP transport, for the
 * 2025 versions (spec 2025-11-25 basic/transports: sessions) and for
 * 2026-07-28 (basic/transports/streamable-http: stateless) on the same URL.
 *
 * POST carries one JSON-RPC message (a batch only under 2025-03-26); its
 * era is decided once (mcp_era_of) and followed from there. GET is 405 (no
 * server-initiated stream in either era); DELETE ends a 2025 session. The
 * checks run in the order below, each answering with the status the spec
 * names. This is the one file of lib/mcp/ that chooses HTTP statuses, and
 * the one that turns a struct error into an answer (answer_error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/config.h"
#include "base/error.h"
#include "base/js.h"
#include "base/log.h"
#include "http/http.h"
#include "http/sse.h"
#include "mcp/extern.h"
#include "mcp/session.h"
#include "oauth/auth.h"
#include "ops/cleanup.h"

#define BODY_MAX	(1024 * 1024)	/* commands are capped lower, in the tool */
#define BATCH_MAX	32

/* One POST being answered. */
struct post {
	struct http_req		*r;
	const struct config	*cfg;
	struct db		*db;
	const struct auth_info	*who;
	struct mcp_http_meta	 hm;
	bool			 json_ok;	/* Accept names JSON */
	bool			 sse_ok;	/* Accept names an event stream */
};

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
 * Answer a failure of the server's own as a JSON-RPC error: the kind
 * chooses the HTTP status; what the client reads is the spec's
 * "Internal error" for the server's own failures (the reason is logged),
 * else the error's line.
 */
static void
answer_error(struct http_req *r, struct json_object *id, const char *what,
    const struct error *err)
{
	int status = error_http_status(err->kind);

	log_warn("%s: %s", what, err->msg);
	if (status >= 500)
		rpc_fail(r, status, id, RPC_INTERNAL_ERROR, "Internal error");
	else
		rpc_fail(r, status, id, RPC_SERVER_ERROR, err->msg);
}

/* Send a response of era with the HTTP status the era gives it. */
static void
send_response(struct http_req *r, const struct mcp_era *era,
    struct json_object *resp)
{
	http_send_json(r, mcp_http_status(era, resp), resp);
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

/* A struct mcp_call for one message of p. */
static void
call_init(struct mcp_call *call, const struct post *p, const char *version,
    const char *session_id)
{
	memset(call, 0, sizeof(*call));
	call->cfg = p->cfg;
	call->db = p->db;
	call->who = p->who;
	call->version = version;
	call->session_id = session_id;
}

/* 2025 initialize: a new session, named in the answer's Mcp-Session-Id. */
static void
do_initialize(const struct post *p, struct json_object *msg)
{
	struct json_object	*params, *id = NULL, *res, *ci;
	struct sse		*st;
	struct error		 err;
	const char		*requested, *version;
	char			 sid[64], info[256];

	json_object_object_get_ex(msg, "id", &id);
	params = js_get(msg, "params", json_type_object);
	if ((requested = js_str_max(params, "protocolVersion", 64)) == NULL) {
		rpc_fail(p->r, 400, id, RPC_INVALID_PARAMS,
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
	if (session_create(p->db, p->cfg->session_ttl, version, info,
	    auth_owner(p->who), sid, sizeof(sid), &err) == -1) {
		answer_error(p->r, id, "initialize", &err);
		return;
	}
	res = mcp_result(id, mcp_initialize_result(p->cfg, p->db, requested,
	    auth_owner(p->who)));
	if ((st = sse_new(p->r, p->json_ok, p->sse_ok)) != NULL) {
		sse_header(st, "Mcp-Session-Id", sid);
		sse_finish(st, res);
		sse_free(st);
	}
	json_object_put(res);
}

/*
 * Answer one request, notification or response read as m: 202 for what
 * is not a request, else the response on its own stream.
 */
static void
answer_one(const struct post *p, struct mcp_call *call, const struct mcp_msg *m)
{
	struct json_object	*resp;
	struct sse		*st;

	if (m->kind != MCP_REQUEST) {
		/* Notifications and responses: 202 Accepted, no body. */
		if (m->kind == MCP_NOTIFICATION)
			mcp_handle(call, m);
		http_send(p->r, 202, NULL, "", 0);
		return;
	}
	if ((st = sse_new(p->r, p->json_ok, p->sse_ok)) == NULL) {
		http_send_error(p->r, 500, "Out of memory.");
		return;
	}
	call->stream = st;
	resp = mcp_handle(call, m);
	if (resp == NULL)
		sse_end_empty(st);
	else if (!http_started(p->r) && mcp_http_status(m->era, resp) != 200)
		send_response(p->r, m->era, resp);
	else
		sse_finish(st, resp);
	call->stream = NULL;
	sse_free(st);
	json_object_put(resp);
}

/*
 * A 2026-07-28 request (stateless): no session is minted or read, no
 * batch; mcp_read makes the header and _meta checks.
 */
static void
do_modern(const struct post *p, struct json_object *msg)
{
	struct json_object	*err_resp = NULL;
	struct mcp_call		 call;
	struct mcp_msg		 m;
	int			 status;

	if (json_object_is_type(msg, json_type_array)) {
		rpc_fail(p->r, 400, NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: batches are not part of protocol version "
		    MCP_VERSION_MODERN);
		return;
	}
	if (mcp_read(&mcp_era_2026, msg, &p->hm, &m, &err_resp, &status) == -1) {
		http_send_json(p->r, status, err_resp);
		json_object_put(err_resp);
		return;
	}
	call_init(&call, p, m.version, NULL);
	answer_one(p, &call, &m);
}

/*
 * The 2025 session a request names (transports "Session Management"):
 * 0 with its negotiated version in version, or -1 when answered.
 */
static int
session_of(const struct post *p, const char *sid, char *version, size_t vsz)
{
	if (sid == NULL) {
		rpc_fail(p->r, 400, NULL, RPC_SERVER_ERROR,
		    "Bad Request: Mcp-Session-Id header is required "
		    "(send initialize first)");
		return -1;
	}
	switch (session_lookup(p->db, sid, p->cfg->session_ttl,
	    auth_owner(p->who), version, vsz)) {
	case LOOKUP_FOUND:
		return 0;
	case LOOKUP_NONE:
		rpc_fail(p->r, 404, NULL, RPC_SERVER_ERROR,
		    "Session not found: initialize a new session");
		return -1;
	default:
		rpc_fail(p->r, 500, NULL, RPC_INTERNAL_ERROR, "Internal error");
		return -1;
	}
}

/* A 2025 batch (JSON-RPC §6), which exists only in 2025-03-26. */
static void
do_batch(const struct post *p, struct mcp_call *call, const struct mcp_era *era,
    struct json_object *msg)
{
	size_t			 i, n = json_object_array_length(msg);
	struct json_object	*out;
	struct mcp_msg		 m;
	int			 status;

	if (strcmp(call->version, "2025-03-26") != 0 || n == 0 || n > BATCH_MAX) {
		rpc_fail(p->r, 400, NULL, RPC_INVALID_REQUEST, n == 0 ?
		    "Invalid Request: empty batch" : n > BATCH_MAX ?
		    "Invalid Request: more than 32 messages in a batch" :
		    "Invalid Request: batches are not supported in this "
		    "protocol version");
		return;
	}
	out = json_object_new_array();
	for (i = 0; i < n; i++) {
		struct json_object *one = NULL;

		if (mcp_read(era, json_object_array_get_idx(msg, i), &p->hm,
		    &m, &one, &status) == 0) {
			if (m.kind == MCP_REQUEST &&
			    strcmp(m.method, "initialize") == 0)
				one = mcp_error(m.id, RPC_INVALID_REQUEST,
				    "Invalid Request: initialize cannot be batched");
			else if (m.kind != MCP_RESPONSE)
				one = mcp_handle(call, &m);	/* NULL for notifications */
		}
		if (one != NULL)
			json_object_array_add(out, one);
	}
	if (json_object_array_length(out) == 0)
		http_send(p->r, 202, NULL, "", 0);
	else
		http_send_json(p->r, 200, out);
	json_object_put(out);
}

/* A 2025 body: initialize opens a session, everything else names one. */
static void
do_legacy(const struct post *p, const struct mcp_era *era,
    struct json_object *msg)
{
	const char		*sid = http_header(p->r, "Mcp-Session-Id");
	struct json_object	*err_resp = NULL;
	struct mcp_call		 call;
	struct mcp_msg		 m;
	int			 status;
	char			 version[32];

	/* initialize is never part of a batch. */
	if (json_object_is_type(msg, json_type_object) &&
	    mcp_classify(msg, &err_resp) == MCP_REQUEST &&
	    strcmp(js_str(msg, "method"), "initialize") == 0) {
		do_initialize(p, msg);
		return;
	}
	json_object_put(err_resp);
	err_resp = NULL;
	if (session_of(p, sid, version, sizeof(version)) == -1)
		return;
	/*
	 * MCP-Protocol-Version: absent means the negotiated version; another
	 * supported one is accepted (mcp_era_of refused the others).
	 */
	call_init(&call, p, version, sid);
	if (json_object_is_type(msg, json_type_array)) {
		do_batch(p, &call, era, msg);
		return;
	}
	if (mcp_read(era, msg, &p->hm, &m, &err_resp, &status) == -1) {
		http_send_json(p->r, status, err_resp);
		json_object_put(err_resp);
		return;
	}
	answer_one(p, &call, &m);
}

/*
 * The HTTP checks of a POST, in the spec's order (Accept, Content-Type,
 * the body, JSON), filling p. The parsed body, or NULL when answered.
 */
static struct json_object *
post_read(struct post *p)
{
	const char		*accept = http_header(p->r, "Accept");
	const char		*body;
	size_t			 len;
	int			 status;
	struct json_object	*msg;
	struct error		 err;

	if (accept == NULL || *accept == '\0')
		accept = "*/*";
	p->json_ok = accepts(accept, "application/json");
	p->sse_ok = accepts(accept, "text/event-stream");
	if (!p->json_ok && !p->sse_ok) {
		http_send_error(p->r, 406, "Accept must include application/json "
		    "and text/event-stream.");
		return NULL;
	}
	if (!is_json_content_type(http_header(p->r, "Content-Type"))) {
		http_send_error(p->r, 415, "Content-Type must be application/json.");
		return NULL;
	}
	if (http_body(p->r, BODY_MAX, &body, &len, &status) == -1) {
		http_send_error(p->r, status, status == 413 ?
		    "The request body is too large." : "Bad request body.");
		return NULL;
	}
	if ((msg = js_parse(body, len, JS_MAX_DEPTH, &err)) == NULL) {
		rpc_fail(p->r, 400, NULL, RPC_PARSE_ERROR, "Parse error");
		return NULL;
	}
	p->hm.version = http_header(p->r, "MCP-Protocol-Version");
	p->hm.method = http_header(p->r, "Mcp-Method");
	p->hm.name = http_header(p->r, "Mcp-Name");
	return msg;
}

static void
do_post(struct http_req *r, const struct config *cfg, struct db *db,
    const struct auth_info *who)
{
	struct post		 p;
	struct json_object	*msg, *err_resp = NULL;
	const struct mcp_era	*era;

	memset(&p, 0, sizeof(p));
	p.r = r;
	p.cfg = cfg;
	p.db = db;
	p.who = who;
	if ((msg = post_read(&p)) == NULL)
		return;
	/* Which era: the body's _meta first, the header second (mcp.h). */
	if ((era = mcp_era_of(msg, &p.hm, &err_resp)) == NULL)
		http_send_json(r, 400, err_resp);
	else if (!mcp_era_sessions(era))
		do_modern(&p, msg);
	else
		do_legacy(&p, era, msg);
	json_object_put(err_resp);
	json_object_put(msg);
}

static void
do_delete(struct http_req *r, struct db *db, const struct auth_info *who)
{
	const char *sid = http_header(r, "Mcp-Session-Id");

	if (sid == NULL) {
		/*
		 * Nothing to end: 2026-07-28 has no sessions and answers DELETE
		 * with 405 (streamable-http "Earlier Streamable HTTP Revisions").
		 */
		http_header_add(r, "Allow", "POST, DELETE");
		http_send_error(r, 405, "DELETE ends a 2025 session: it needs "
		    "the Mcp-Session-Id header.");
		return;
	}
	switch (session_delete(db, sid, auth_owner(who))) {
	case LOOKUP_FOUND:
		http_send(r, 204, NULL, "", 0);
		break;
	case LOOKUP_NONE:
		http_send_error(r, 404, "Session not found.");
		break;
	default:
		http_send_error(r, 500, "Internal error.");
		break;
	}
}

void
mcp_transport(struct http_req *r, const struct config *cfg, struct db *db)
{
	const char		*method = http_method(r);
	const char		*origin = http_header(r, "Origin");
	struct auth_info	 who;

	if (strcmp(http_path(r), "/mcp") != 0) {
		http_send_error(r, 404, "Not found.");
		return;
	}
	if (origin != NULL && !config_origin_allowed(cfg, origin)) {
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
		do_delete(r, db, &who);
	else {
		/* No server-initiated stream (transports "Listening for Messages"). */
		http_header_add(r, "Allow", "POST, DELETE");
		http_send_error(r, 405, "Use POST for requests and DELETE to end "
		    "a session.");
	}
}
