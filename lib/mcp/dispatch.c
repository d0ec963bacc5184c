/*
 * dispatch.c: the methods each era serves (the tables at the end of this
 * file), the 2025 notifications, and mcp_handle, which runs one message.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/js.h"
#include "base/log.h"
#include "mcp/extern.h"
#include "oauth/auth.h"
#include "runs/runs.h"
#include "runs/tasks.h"
#include "sandbox/sandbox.h"

struct json_object *
mcp_reply(const struct mcp_msg *m, struct json_object *result)
{
	m->era->dress(mcp_method_of(m), result);
	return mcp_result(m->id, result);
}

const struct mcp_method *
mcp_method_of(const struct mcp_msg *m)
{
	const struct mcp_method *method;

	for (method = m->era->methods; method->name != NULL; method++)
		if (strcmp(method->name, m->method) == 0)
			return method;
	return NULL;
}

static struct json_object *
m_ping(struct mcp_call *c, const struct mcp_msg *m)
{
	(void)c;
	return mcp_reply(m, json_object_new_object());
}

static struct json_object *
m_initialized_again(struct mcp_call *c, const struct mcp_msg *m)
{
	(void)c;
	return mcp_error(m->id, RPC_INVALID_REQUEST,
	    "Invalid Request: the session is already initialized");
}

/* server/discover (2026-07-28 server/discover). */
static struct json_object *
m_discover(struct mcp_call *c, const struct mcp_msg *m)
{
	struct json_object	*r = json_object_new_object(), *caps, *ext;
	char			*text;

	js_set(r, "supportedVersions", mcp_versions_array());
	caps = json_object_new_object();
	js_set(caps, "tools", json_object_new_object());
	ext = json_object_new_object();
	js_set(ext, MCP_TASKS_EXTENSION, json_object_new_object());
	js_set(caps, "extensions", ext);
	js_set(r, "capabilities", caps);
	if ((text = mcp_instructions(c->cfg, c->db, m->era,
	    auth_owner(c->who))) != NULL)
		js_set_str(r, "instructions", text);
	free(text);
	return mcp_reply(m, r);
}

/* tasks/get, tasks/cancel, tasks/update (Tasks extension). */
static struct json_object *
m_tasks(struct mcp_call *c, const struct mcp_msg *m)
{
	struct json_object	*res = NULL;
	const char		*task_id = js_str_max(m->params, "taskId", RUN_ID_MAX);
	char			 why[128];
	enum lookup_result	 rc;

	if (task_id == NULL)
		return mcp_error(m->id, RPC_INVALID_PARAMS,
		    "Invalid params: taskId must be a task id string");
	if (strcmp(m->method, "tasks/get") == 0)
		rc = tasks_get(c->db, c->cfg, c->who, task_id, &res, why, sizeof(why));
	else if (strcmp(m->method, "tasks/cancel") == 0)
		rc = tasks_cancel(c->db, c->cfg, c->who, task_id, why, sizeof(why));
	else
		rc = tasks_update(c->db, c->who, task_id, why, sizeof(why));
	if (rc == LOOKUP_ERROR)
		return mcp_error(m->id, RPC_INTERNAL_ERROR, "Internal error");
	if (rc == LOOKUP_NONE)
		return mcp_error(m->id, RPC_INVALID_PARAMS, why);
	return mcp_reply(m, res != NULL ? res : json_object_new_object());
}

/*
 * notifications/cancelled (2025 basic/utilities/cancellation): stop the
 * command the named request of this session started. It may run in another
 * process: the run table finds it, and the kill works inside the container.
 * The request's own worker also sees the mark within a second.
 */
void
mcp_notify_2025(struct mcp_call *c, const struct mcp_msg *m)
{
	struct json_object	*rid;
	struct sandbox		*sb = NULL;
	struct error		 err;
	char			 run_id[RUN_ID_MAX + 1];

	if (strcmp(m->method, "notifications/cancelled") != 0)
		return;
	if (m->params == NULL ||
	    !json_object_object_get_ex(m->params, "requestId", &rid) ||
	    !mcp_id_valid(rid))
		return;
	if (runs_request_cancel(c->db, c->session_id, rid, run_id,
	    sizeof(run_id)) != LOOKUP_FOUND)
		return;
	if (sandbox_open(c->cfg, auth_owner(c->who), &sb, &err) == -1 ||
	    sandbox_kill(sb, run_id, &err) == -1)
		log_warn("cancel run %s: %s", run_id, err.msg);
	sandbox_close(sb);
}

/* 2026 streamable-http: a notification POST is accepted and has no effect. */
void
mcp_notify_2026(struct mcp_call *c, const struct mcp_msg *m)
{
	(void)c;
	(void)m;
}

/* Tasks extension "Protocol Errors": the -32021 naming the extension. */
static struct json_object *
missing_tasks(const struct mcp_msg *m)
{
	struct json_object *data, *caps, *ext;

	data = json_object_new_object();
	caps = json_object_new_object();
	ext = json_object_new_object();
	js_set(ext, MCP_TASKS_EXTENSION, json_object_new_object());
	js_set(caps, "extensions", ext);
	js_set(data, "requiredCapabilities", caps);
	return mcp_error_data(m->id, RPC_MISSING_CAPABILITY,
	    "Missing required client capability: the "
	    MCP_TASKS_EXTENSION " extension", data);
}

struct json_object *
mcp_handle(struct mcp_call *c, const struct mcp_msg *m)
{
	const struct mcp_method *method;

	if (m->kind == MCP_NOTIFICATION) {
		m->era->notify(c, m);
		return NULL;
	}
	if (m->kind != MCP_REQUEST)
		return NULL;
	if ((method = mcp_method_of(m)) == NULL)
		return mcp_error(m->id, RPC_METHOD_NOT_FOUND, "Method not found");
	/* Checked before the task is looked up. */
	if ((method->flags & M_TASKS) && !m->tasks)
		return missing_tasks(m);
	return method->run(c, m);
}

const struct mcp_method mcp_methods_2025[] = {
	{ "ping",		m_ping,			0 },
	{ "tools/list",		mcp_tools_list,		0 },
	{ "tools/call",		mcp_tools_call,		0 },
	{ "initialize",		m_initialized_again,	0 },
	{ NULL,			NULL,			0 },
};

/* initialize, ping, logging/setLevel, tasks/result, tasks/list: gone (404). */
const struct mcp_method mcp_methods_2026[] = {
	{ "server/discover",	m_discover,		M_CACHEABLE },
	{ "tools/list",		mcp_tools_list,		M_CACHEABLE },
	{ "tools/call",		mcp_tools_call,		0 },
	{ "tasks/get",		m_tasks,		M_TASKS },
	{ "tasks/cancel",	m_tasks,		M_TASKS },
	{ "tasks/update",	m_tasks,		M_TASKS },
	{ NULL,			NULL,			0 },
};
