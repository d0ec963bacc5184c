/*
 * tool.c: tools/list and tools/call: the table of tools the server offers,
 * the list serialised once per era, and a call's run in the caller's
 * sandbox with its channel back to the client (the request's stream).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "base/error.h"
#include "base/js.h"
#include "http/sse.h"
#include "mcp/extern.h"
#include "oauth/auth.h"
#include "runs/result.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"

/* Every tool the server offers; tools/list lists them in this order. */
static const struct tool *const tools[] = {
	&tool_execute,
	&tool_get_result,
	&tool_share_file,
	&tool_upload_link,
	&tool_view_image,
	&tool_terminal_start,
	&tool_terminal_send,
	&tool_terminal_read,
	&tool_terminal_close,
	&tool_terminal_link,
	&tool_preview_link,
	&tool_snapshot,
	&tool_snapshots,
	&tool_restore,
	&tool_snapshot_delete,
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

/*
 * tools/list never changes while a process runs (the tools, the settings
 * and the era decide it), so its "tools" array is serialised once per era
 * and each answer carries a placeholder whose serializer (json-c's
 * json_object_set_serializer) copies that text. The text is built under a
 * lock, kept for the process's life and only read afterwards; json-c
 * objects themselves are not shared between threads (their reference
 * counts are not atomic).
 */
struct tools_text {
	const struct config	*cfg;
	const struct mcp_era	*era;
	char			*text;
	size_t			 len;
};

static pthread_mutex_t	 tools_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tools_text tools_cache[2];

static int
tools_serialize(struct json_object *jso, struct printbuf *pb, int level,
    int flags)
{
	const struct tools_text *t = json_object_get_userdata(jso);

	(void)level;
	(void)flags;
	return printbuf_memappend(pb, t->text, (int)t->len);
}

static struct json_object *
tools_build(const struct config *cfg, const struct mcp_msg *m)
{
	struct json_object	*a = json_object_new_array();
	size_t			 i;

	for (i = 0; i < NTOOLS; i++)
		json_object_array_add(a, tools[i]->describe(cfg, &m->era->tools));
	return a;
}

struct json_object *
mcp_tools_list(struct mcp_call *c, const struct mcp_msg *m)
{
	struct json_object	*r = json_object_new_object(), *a;
	struct tools_text	*t = &tools_cache[m->era == &mcp_era_2026];
	const char		*text;
	size_t			 len;

	/* Set once, then never freed or changed: readers need no lock after. */
	pthread_mutex_lock(&tools_lock);
	if (t->text == NULL) {
		a = tools_build(c->cfg, m);
		text = json_object_to_json_string_length(a,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
		    &len);
		if ((t->text = malloc(len + 1)) != NULL) {
			memcpy(t->text, text, len + 1);
			t->len = len;
			t->cfg = c->cfg;
			t->era = m->era;
		}
		json_object_put(a);
	}
	pthread_mutex_unlock(&tools_lock);
	if (t->text == NULL || t->cfg != c->cfg || t->era != m->era)
		a = tools_build(c->cfg, m);	/* another set of settings */
	else {
		a = json_object_new_array();
		json_object_set_serializer(a, tools_serialize, t, NULL);
	}
	js_set(r, "tools", a);
	return mcp_reply(m, r);
}

/* The tool's channel back to the client: the request's stream (sse.h). */
struct channel {
	struct mcp_call		*call;
	const struct mcp_msg	*msg;
};

static void
ch_progress(void *arg, long long n, const char *message)
{
	struct channel		*ch = arg;
	struct json_object	*note, *p;

	if (ch->msg->progress_token == NULL || ch->call->stream == NULL ||
	    !sse_can_stream(ch->call->stream))
		return;
	note = json_object_new_object();
	js_set_str(note, "jsonrpc", "2.0");
	js_set_str(note, "method", "notifications/progress");
	p = json_object_new_object();
	js_set(p, "progressToken", json_object_get(ch->msg->progress_token));
	js_set_int(p, "progress", n);
	if (message != NULL && *message != '\0')
		js_set_str(p, "message", message);
	js_set(note, "params", p);
	sse_event(ch->call->stream, note);
	json_object_put(note);
}

static int
ch_alive(void *arg, long interval_ms)
{
	struct channel	*ch = arg;
	struct sse	*st = ch->call->stream;

	if (st == NULL || sse_finished(st))
		return 0;
	return sse_keepalive(st, interval_ms, ch->msg->era->tools.keepalive);
}

static bool
ch_gone(void *arg)
{
	struct channel *ch = arg;

	return ch->call->stream != NULL && sse_gone(ch->call->stream);
}

static int
ch_answer(void *arg, struct json_object *result)
{
	struct channel		*ch = arg;
	struct json_object	*resp;
	int			 rc;

	if (ch->call->stream == NULL) {
		json_object_put(result);
		return -1;
	}
	resp = mcp_reply(ch->msg, result);
	rc = sse_finish_detach(ch->call->stream, resp);
	json_object_put(resp);
	return rc;
}

/* The tool a tools/call names, or NULL with *error a new error response. */
static const struct tool *
tool_of(const struct mcp_msg *m, struct json_object **args,
    struct json_object **error)
{
	const struct tool	*tool = NULL;
	const char		*name;
	size_t			 i;

	*args = NULL;
	if ((name = js_str_max(m->params, "name", 128)) == NULL) {
		*error = mcp_error(m->id, RPC_INVALID_PARAMS,
		    "Invalid params: name must be a tool name");
		return NULL;
	}
	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i]->name, name) == 0)
			tool = tools[i];
	if (tool == NULL) {
		*error = mcp_error(m->id, RPC_INVALID_PARAMS,
		    "Invalid params: unknown tool (see tools/list)");
		return NULL;
	}
	if (json_object_object_get_ex(m->params, "arguments", args)) {
		if (!json_object_is_type(*args, json_type_object)) {
			*args = NULL;
			*error = mcp_error(m->id, RPC_INVALID_PARAMS,
			    "Invalid params: arguments must be an object");
			return NULL;
		}
		json_object_get(*args);
	} else
		*args = json_object_new_object();
	return tool;
}

struct json_object *
mcp_tools_call(struct mcp_call *c, const struct mcp_msg *m)
{
	struct json_object	*args, *res;
	struct sandbox		*sb = NULL;
	struct error		 err;
	struct tool_ctx		 tc;
	struct channel		 ch = { c, m };
	const struct tool	*tool;

	if ((tool = tool_of(m, &args, &res)) == NULL)
		return res;
	/* The caller's own sandbox in person scope, claimed (sandboxes.h). */
	if ((tool->no_sandbox ? sandbox_open(c->cfg, auth_owner(c->who), &sb,
	    &err) : sandboxes_open(c->cfg, c->db, auth_owner(c->who), &sb,
	    &err)) == -1) {
		json_object_put(args);
		return mcp_reply(m, result_error("%s", err.msg));
	}
	memset(&tc, 0, sizeof(tc));
	tc.cfg = c->cfg;
	tc.db = c->db;
	tc.sandbox = sb;
	tc.who = c->who;
	tc.session_id = c->session_id;
	tc.request_id = m->id;
	tc.mode = m->era->tools;
	tc.mode.tasks = m->tasks;
	tc.mode.progress = m->progress_token != NULL;
	tc.chan.progress = ch_progress;
	tc.chan.alive = ch_alive;
	tc.chan.gone = ch_gone;
	tc.chan.answer = ch_answer;
	tc.chan.arg = &ch;
	tc.chan.streams = c->stream != NULL && sse_can_stream(c->stream);
	res = tool->call(&tc, args);
	if (!tool->no_sandbox)
		sandboxes_touch(c->cfg, c->db, auth_owner(c->who));
	sandbox_close(sb);
	json_object_put(args);
	if (res == NULL)
		return NULL;
	if (c->stream != NULL && sse_finished(c->stream)) {
		/* Answered already (a task or handle); the result is kept in the run. */
		json_object_put(res);
		return NULL;
	}
	return mcp_reply(m, res);
}
