/*
 * era.c: the two protocol eras, one table each (at the end of this file),
 * the versions they speak, and telling them apart from a POST body.
 */
#include <string.h>

#include "base/js.h"
#include "mcp/extern.h"

#define LIST_TTL_MS	3600000	/* tools/list and server/discover stay fresh an hour */

/* Versions this server speaks, newest first (server/discover supportedVersions). */
static const char *const versions[] = {
	MCP_VERSION_MODERN, "2025-11-25", "2025-06-18", "2025-03-26",
};
#define NVERSIONS (sizeof(versions) / sizeof(versions[0]))

bool
mcp_version_supported(const char *v)
{
	size_t i;

	/* The 2025 versions: initialize and sessions. */
	for (i = 1; v != NULL && i < NVERSIONS; i++)
		if (strcmp(v, versions[i]) == 0)
			return true;
	return false;
}

const char *
mcp_negotiate(const char *requested)
{
	size_t i;

	for (i = 1; requested != NULL && i < NVERSIONS; i++)
		if (strcmp(requested, versions[i]) == 0)
			return versions[i];
	return MCP_VERSION_LATEST;
}

bool
mcp_era_sessions(const struct mcp_era *era)
{
	return era->sessions;
}

struct json_object *
mcp_versions_array(void)
{
	struct json_object	*a = json_object_new_array();
	size_t			 i;

	for (i = 0; i < NVERSIONS; i++)
		json_object_array_add(a, json_object_new_string(versions[i]));
	return a;
}

struct json_object *
mcp_unsupported_version(struct json_object *id, const char *requested)
{
	struct json_object *data = json_object_new_object();

	js_set(data, "supported", mcp_versions_array());
	js_set_str(data, "requested", requested);
	return mcp_error_data(id, RPC_UNSUPPORTED_VERSION,
	    "Unsupported protocol version", data);
}

struct json_object *
mcp_meta_get(struct json_object *msg, const char *key, enum json_type type)
{
	return js_get(js_get(js_get(msg, "params", json_type_object), "_meta",
	    json_type_object), key, type);
}

const char *
mcp_header_trim(const char *v, char *buf, size_t bufsz)
{
	size_t n;

	if (v == NULL)
		return NULL;
	v += strspn(v, " \t");
	n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n >= bufsz)
		return NULL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return buf;
}

const struct mcp_era *
mcp_era_of(struct json_object *body, const struct mcp_http_meta *h,
    struct json_object **error)
{
	const char	*hv;
	char		 buf[64];

	*error = NULL;
	/* A _meta version in the body decides (it is cross-checked later). */
	if (mcp_meta_get(body, MCP_META_VERSION, json_type_string) != NULL)
		return &mcp_era_2026;
	hv = mcp_header_trim(h->version, buf, sizeof(buf));
	if (hv == NULL && h->version == NULL)
		return &mcp_era_2025;
	if (hv != NULL && mcp_version_supported(hv))
		return &mcp_era_2025;
	if (hv != NULL && strcmp(hv, MCP_VERSION_MODERN) == 0)
		return &mcp_era_2026;
	*error = mcp_unsupported_version(mcp_msg_id(body), hv != NULL ? hv : "");
	return NULL;
}

int
mcp_http_status(const struct mcp_era *era, struct json_object *response)
{
	struct json_object	*e = js_get(response, "error", json_type_object);
	long long		 code;

	if (e == NULL || js_int(e, "code", &code) == -1)
		return 200;
	return era->error_status((int)code);
}

/* The eras. */

static void
dress_2025(const struct mcp_method *method, struct json_object *result)
{
	(void)method;
	(void)result;
}

/* 2025: errors of dispatch ride on 200, as they always did. */
static int
status_2025(int code)
{
	(void)code;
	return 200;
}

/*
 * 2026 basic/index: every result has resultType ("task" is set by the
 * Tasks extension's CreateTaskResult) and SHOULD name the server;
 * server/utilities/caching: cacheable results carry ttlMs and cacheScope
 * (the same for every caller: public).
 */
static void
dress_2026(const struct mcp_method *method, struct json_object *result)
{
	struct json_object *meta;

	if (js_str(result, "resultType") == NULL)
		js_set_str(result, "resultType", "complete");
	if ((meta = js_get(result, "_meta", json_type_object)) == NULL) {
		meta = json_object_new_object();
		js_set(result, "_meta", meta);
	}
	js_set(meta, MCP_META_SERVER, mcp_server_info());
	if (method != NULL && (method->flags & M_CACHEABLE)) {
		js_set_int(result, "ttlMs", LIST_TTL_MS);
		js_set_str(result, "cacheScope", "public");
	}
}

/* 2026 streamable-http: 404 for unknown methods, 400 for the new codes. */
static int
status_2026(int code)
{
	switch (code) {
	case RPC_METHOD_NOT_FOUND:
		return 404;
	case RPC_HEADER_MISMATCH:
	case RPC_MISSING_CAPABILITY:
	case RPC_UNSUPPORTED_VERSION:
	case RPC_INVALID_REQUEST:
	case RPC_PARSE_ERROR:
		return 400;
	case RPC_INTERNAL_ERROR:
		return 500;
	default:
		return 200;
	}
}

const struct mcp_era mcp_era_2025 = {
	.name = "2025",
	.sessions = true,
	.methods = mcp_methods_2025,
	.notify = mcp_notify_2025,
	.dress = dress_2025,
	.error_status = status_2025,
	.tools = {
		.stateless = false,
		.keepalive = "ping",
		.interrupted = "If the call is interrupted (lost connection, "
		    "client timeout) the command still runs to its end: "
		    "get_result() finds it.",
	},
	.interrupted = "- A command goes on when a call is interrupted (lost "
	    "connection, client timeout): get_result() lists recent runs and "
	    "get_result(run_id) waits for and returns one's result.",
};

const struct mcp_era mcp_era_2026 = {
	.name = "2026",
	.sessions = false,
	.methods = mcp_methods_2026,
	.notify = mcp_notify_2026,
	.dress = dress_2026,
	.error_status = status_2026,
	.tools = {
		.stateless = true,
		.keepalive = NULL,
		.interrupted = "A call cancelled before its answer (the client "
		    "closes the connection) kills the command. A command still "
		    "running after a short wait is answered with its run_id "
		    "(or as a task) and goes on: get_result(run_id) returns its "
		    "result.",
	},
	.interrupted = "- A call cancelled before its answer kills its "
	    "command. A command still running after a short wait is answered "
	    "with its run_id (or as a task, when the client supports tasks) "
	    "and goes on: get_result(run_id) waits for and returns its result; "
	    "get_result() lists recent runs.",
};
