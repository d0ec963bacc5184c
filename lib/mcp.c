/*
 * mcp.c: JSON-RPC envelopes, the MCP lifecycle and tools methods, and the
 * response stream (JSON body or SSE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "http.h"
#include "js.h"
#include "log.h"
#include "mcp.h"
#include "runs.h"
#include "sandbox.h"
#include "tools.h"

/* Every tool the server offers; tools/list lists them in this order. */
static const struct tool *const tools[] = {
	&tool_execute,
	&tool_get_result,
	&tool_share_file,
	&tool_upload_link,
	&tool_view_image,
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static const char *const versions[] = {
	"2025-11-25", "2025-06-18", "2025-03-26",
};

static const char instructions[] =
    "This server gives you a persistent Linux sandbox: one long-lived Docker "
    "container (Debian, you are root, with internet access) shared by all "
    "your calls.\n"
    "- execute(command, timeout) runs `bash -c command` in /sandbox and "
    "returns stdout, stderr and the exit code. Each call is a fresh bash "
    "process: cd and exported variables do not carry over, so chain steps "
    "with && or write scripts. Long output is cut in the middle.\n"
    "- Files in /sandbox persist between calls; top-level entries unchanged "
    "for a while are removed by a periodic cleanup. Packages installed with "
    "apt-get, pip or npm persist in the container.\n"
    "- At the timeout the command and everything it started are killed. "
    "Detach long-running services with `setsid nohup cmd > log 2>&1 &`.\n"
    "- A command goes on when a call is interrupted (lost connection, "
    "client timeout): get_result() lists recent runs and "
    "get_result(run_id) waits for and returns one's result.\n"
    "- To give the user a file (PDF, image, archive, ...) that is not text, "
    "use share_file(path): it returns a download link to hand to the user.";

bool
mcp_version_supported(const char *v)
{
	size_t i;

	for (i = 0; v != NULL && i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(v, versions[i]) == 0)
			return true;
	return false;
}

const char *
mcp_negotiate(const char *requested)
{
	size_t i;

	for (i = 0; requested != NULL && i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(requested, versions[i]) == 0)
			return versions[i];
	return MCP_VERSION_LATEST;
}

static struct json_object *
id_copy(struct json_object *id)
{
	if (id == NULL)
		return NULL;
	return json_object_get(id);
}

struct json_object *
mcp_error(struct json_object *id, int code, const char *msg)
{
	struct json_object *o = json_object_new_object(), *e;

	js_set_str(o, "jsonrpc", "2.0");
	js_set(o, "id", id_copy(id));
	e = json_object_new_object();
	js_set_int(e, "code", code);
	js_set_str(e, "message", msg);
	js_set(o, "error", e);
	return o;
}

struct json_object *
mcp_result(struct json_object *id, struct json_object *result)
{
	struct json_object *o = json_object_new_object();

	js_set_str(o, "jsonrpc", "2.0");
	js_set(o, "id", id_copy(id));
	js_set(o, "result", result);
	return o;
}

/* JSON-RPC §4: an id is a string or a number; MCP also forbids null. */
static bool
valid_id(struct json_object *id)
{
	return json_object_is_type(id, json_type_string) ||
	    json_object_is_type(id, json_type_int);
}

enum mcp_kind
mcp_classify(struct json_object *msg, struct json_object **error)
{
	struct json_object	*id = NULL, *m;
	const char		*v;
	bool			 has_id, has_result, has_error;

	*error = NULL;
	if (!json_object_is_type(msg, json_type_object)) {
		*error = mcp_error(NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: expected a JSON-RPC object");
		return MCP_INVALID;
	}
	has_id = json_object_object_get_ex(msg, "id", &id);
	if (has_id && !valid_id(id))
		id = NULL;
	if ((v = js_str(msg, "jsonrpc")) == NULL || strcmp(v, "2.0") != 0) {
		*error = mcp_error(id, RPC_INVALID_REQUEST,
		    "Invalid Request: jsonrpc must be \"2.0\"");
		return MCP_INVALID;
	}
	if (json_object_object_get_ex(msg, "method", &m)) {
		struct json_object *p;

		if (!json_object_is_type(m, json_type_string) ||
		    json_object_get_string_len(m) == 0) {
			*error = mcp_error(id, RPC_INVALID_REQUEST,
			    "Invalid Request: method must be a non-empty string");
			return MCP_INVALID;
		}
		if (json_object_object_get_ex(msg, "params", &p) &&
		    !json_object_is_type(p, json_type_object)) {
			*error = mcp_error(id, RPC_INVALID_REQUEST,
			    "Invalid Request: params must be an object");
			return MCP_INVALID;
		}
		if (!has_id)
			return MCP_NOTIFICATION;
		if (id == NULL) {
			*error = mcp_error(NULL, RPC_INVALID_REQUEST,
			    "Invalid Request: id must be a string or an integer");
			return MCP_INVALID;
		}
		return MCP_REQUEST;
	}
	has_result = json_object_object_get_ex(msg, "result", NULL);
	has_error = json_object_object_get_ex(msg, "error", NULL);
	if (has_id && id != NULL && has_result != has_error)
		return MCP_RESPONSE;
	*error = mcp_error(id, RPC_INVALID_REQUEST,
	    "Invalid Request: neither a request, a notification nor a response");
	return MCP_INVALID;
}

struct json_object *
mcp_initialize_result(const struct config *cfg, const char *requested)
{
	struct json_object *r = json_object_new_object(), *caps, *t, *info;

	js_set_str(r, "protocolVersion", mcp_negotiate(requested));
	caps = json_object_new_object();
	t = json_object_new_object();
	js_set_bool(t, "listChanged", false);
	js_set(caps, "tools", t);
	js_set(r, "capabilities", caps);
	info = json_object_new_object();
	js_set_str(info, "name", MCP_SERVER_NAME);
	js_set_str(info, "title", "Code Sandbox");
	js_set_str(info, "version", MCP_SERVER_VERSION);
	js_set(r, "serverInfo", info);
	js_set_str(r, "instructions", instructions);
	(void)cfg;
	return r;
}

static struct json_object *
tools_list(struct mcp_call *c)
{
	struct json_object	*r = json_object_new_object();
	struct json_object	*a = json_object_new_array();
	size_t			 i;

	for (i = 0; i < NTOOLS; i++)
		json_object_array_add(a, tools[i]->describe(c->cfg));
	js_set(r, "tools", a);
	return r;
}

static struct json_object *
tools_call(struct mcp_call *c, struct json_object *msg, struct json_object *id)
{
	struct json_object	*params = js_get(msg, "params", json_type_object);
	struct json_object	*args, *meta, *res;
	struct sandbox		*sb = NULL;
	struct error		 err;
	struct tool_ctx		 tc;
	const char		*name;
	const struct tool	*tool = NULL;
	size_t			 i;

	if ((name = js_str_max(params, "name", 128)) == NULL)
		return mcp_error(id, RPC_INVALID_PARAMS,
		    "Invalid params: name must be a tool name");
	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i]->name, name) == 0)
			tool = tools[i];
	if (tool == NULL)
		return mcp_error(id, RPC_INVALID_PARAMS,
		    "Invalid params: unknown tool (see tools/list)");
	if (json_object_object_get_ex(params, "arguments", &args)) {
		if (!json_object_is_type(args, json_type_object))
			return mcp_error(id, RPC_INVALID_PARAMS,
			    "Invalid params: arguments must be an object");
		json_object_get(args);
	} else
		args = json_object_new_object();

	if (sandbox_open(c->cfg, &sb, &err) == -1) {
		json_object_put(args);
		return mcp_result(id, tool_error("%s", err.msg));
	}
	memset(&tc, 0, sizeof(tc));
	tc.cfg = c->cfg;
	tc.db = c->db;
	tc.sandbox = sb;
	tc.who = c->who;
	tc.session_id = c->session_id;
	tc.stream = c->stream;
	tc.request_id = id;
	if ((meta = js_get(params, "_meta", json_type_object)) != NULL &&
	    json_object_object_get_ex(meta, "progressToken", &tc.progress_token) &&
	    !valid_id(tc.progress_token))
		tc.progress_token = NULL;
	res = tool->call(&tc, args);
	sandbox_close(sb);
	json_object_put(args);
	return res == NULL ? NULL : mcp_result(id, res);
}

/*
 * notifications/cancelled (spec: basic/utilities/cancellation): stop the
 * command the named request of this session started. It may run in another
 * process: the run table finds it, and the kill works inside the container.
 * The request's own worker also sees the mark within a second.
 */
static void
cancelled(struct mcp_call *c, struct json_object *msg)
{
	struct json_object	*params = js_get(msg, "params", json_type_object);
	struct json_object	*rid;
	struct sandbox		*sb = NULL;
	struct error		 err;
	char			 run_id[RUN_ID_MAX + 1];

	if (params == NULL || !json_object_object_get_ex(params, "requestId", &rid) ||
	    !valid_id(rid))
		return;
	if (runs_request_cancel(c->db, c->session_id, rid, run_id,
	    sizeof(run_id)) != 1)
		return;
	if (sandbox_open(c->cfg, &sb, &err) == -1 ||
	    sandbox_kill(sb, run_id, &err) == -1)
		log_warn("cancel run %s: %s", run_id, err.msg);
	sandbox_close(sb);
}

struct json_object *
mcp_handle(struct mcp_call *c, struct json_object *msg)
{
	struct json_object	*id = NULL;
	const char		*method = js_str(msg, "method");

	if (!json_object_object_get_ex(msg, "id", &id)) {
		/* Notifications: nothing to answer (spec: lifecycle, utilities). */
		if (strcmp(method, "notifications/cancelled") == 0)
			cancelled(c, msg);
		return NULL;
	}
	if (strcmp(method, "ping") == 0)
		return mcp_result(id, json_object_new_object());
	if (strcmp(method, "tools/list") == 0)
		return mcp_result(id, tools_list(c));
	if (strcmp(method, "tools/call") == 0)
		return tools_call(c, msg, id);
	if (strcmp(method, "initialize") == 0)
		return mcp_error(id, RPC_INVALID_REQUEST,
		    "Invalid Request: the session is already initialized");
	return mcp_error(id, RPC_METHOD_NOT_FOUND, "Method not found");
}

/* The response stream. */

struct mcp_stream {
	struct http_req	*req;
	bool		 json_ok, sse_ok;
	bool		 sse;		/* the SSE response has begun */
	const char	*session_id;
	time_t		 last_ping;
};

struct mcp_stream *
mcp_stream_new(struct http_req *req, bool json_ok, bool sse_ok,
    const char *session_id)
{
	struct mcp_stream *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->req = req;
	s->json_ok = json_ok;
	s->sse_ok = sse_ok;
	s->session_id = session_id;
	s->last_ping = time(NULL);
	return s;
}

void
mcp_stream_free(struct mcp_stream *s)
{
	free(s);
}

bool
mcp_stream_can_stream(const struct mcp_stream *s)
{
	return s != NULL && s->sse_ok;
}

bool
mcp_stream_gone(const struct mcp_stream *s)
{
	return http_gone(s->req);
}

static int
sse_begin(struct mcp_stream *s)
{
	if (s->sse)
		return 0;
	s->sse = true;
	http_status(s->req, 200);
	http_header_add(s->req, "Content-Type", "text/event-stream");
	http_header_add(s->req, "Cache-Control", "no-cache, no-store");
	/* Ask nginx-like proxies in front not to buffer the stream. */
	http_header_add(s->req, "X-Accel-Buffering", "no");
	if (s->session_id != NULL)
		http_header_add(s->req, "Mcp-Session-Id", s->session_id);
	return http_flush(s->req);
}

static int
sse_event(struct mcp_stream *s, struct json_object *msg)
{
	const char	*text;
	size_t		 len;

	if (sse_begin(s) == -1)
		return -1;
	/* JSON text has no raw newlines (json-c escapes them), so one data line. */
	text = js_text(msg, &len);
	if (http_puts(s->req, "event: message\ndata: ") == -1 ||
	    http_write(s->req, text, len) == -1 ||
	    http_puts(s->req, "\n\n") == -1)
		return -1;
	return http_flush(s->req);
}

int
mcp_stream_notify(struct mcp_stream *s, struct json_object *msg)
{
	if (!s->sse_ok)
		return 0;
	return sse_event(s, msg);
}

int
mcp_stream_ping(struct mcp_stream *s)
{
	if (!s->sse_ok)
		return 0;
	if (sse_begin(s) == -1 || http_puts(s->req, ": ping\n\n") == -1)
		return -1;
	return http_flush(s->req);
}

int
mcp_stream_begin(struct mcp_stream *s)
{
	if (!s->sse_ok)
		return 0;
	return sse_begin(s);
}

int
mcp_stream_keepalive(struct mcp_stream *s, long interval)
{
	time_t now = time(NULL);

	if (!s->sse_ok || http_gone(s->req))
		return http_gone(s->req) ? -1 : 0;
	if (sse_begin(s) == -1)
		return -1;
	if (now - s->last_ping < interval)
		return 0;
	s->last_ping = now;
	return mcp_stream_ping(s);
}

int
mcp_stream_progress(struct mcp_stream *s, struct json_object *token,
    long long progress, const char *message)
{
	struct json_object	*n, *p;
	int			 rc;

	if (!s->sse_ok || token == NULL)
		return 0;
	n = json_object_new_object();
	js_set_str(n, "jsonrpc", "2.0");
	js_set_str(n, "method", "notifications/progress");
	p = json_object_new_object();
	js_set(p, "progressToken", json_object_get(token));
	js_set_int(p, "progress", progress);
	if (message != NULL && *message != '\0')
		js_set_str(p, "message", message);
	js_set(n, "params", p);
	rc = sse_event(s, n);
	json_object_put(n);
	return rc;
}

void
mcp_stream_end_empty(struct mcp_stream *s)
{
	if (s->sse)
		http_flush(s->req);
	else
		http_send(s->req, 204, NULL, "", 0);
}

int
mcp_stream_finish(struct mcp_stream *s, struct json_object *response)
{
	if (s->sse || !s->json_ok)
		return sse_event(s, response);
	if (s->session_id != NULL)
		http_header_add(s->req, "Mcp-Session-Id", s->session_id);
	return http_send_json(s->req, 200, response);
}
