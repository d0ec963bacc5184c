/*
 * rpc.c: JSON-RPC 2.0 envelopes: building responses and errors, and
 * checking that a message is a request, a notification or a response.
 */
#include <string.h>

#include "base/js.h"
#include "mcp/extern.h"

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
mcp_error_data(struct json_object *id, int code, const char *msg,
    struct json_object *data)
{
	struct json_object *o = mcp_error(id, code, msg);

	js_set(js_get(o, "error", json_type_object), "data", data);
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

bool
mcp_id_valid(struct json_object *id)
{
	return json_object_is_type(id, json_type_string) ||
	    json_object_is_type(id, json_type_int);
}

/* The kind of a message that names a method (valid id or none). */
static enum mcp_kind
classify_call(struct json_object *msg, struct json_object *m,
    struct json_object *id, bool has_id, struct json_object **error)
{
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
	if (has_id && !mcp_id_valid(id))
		id = NULL;
	if ((v = js_str(msg, "jsonrpc")) == NULL || strcmp(v, "2.0") != 0) {
		*error = mcp_error(id, RPC_INVALID_REQUEST,
		    "Invalid Request: jsonrpc must be \"2.0\"");
		return MCP_INVALID;
	}
	if (json_object_object_get_ex(msg, "method", &m))
		return classify_call(msg, m, id, has_id, error);
	has_result = json_object_object_get_ex(msg, "result", NULL);
	has_error = json_object_object_get_ex(msg, "error", NULL);
	if (has_id && id != NULL && has_result != has_error)
		return MCP_RESPONSE;
	*error = mcp_error(id, RPC_INVALID_REQUEST,
	    "Invalid Request: neither a request, a notification nor a response");
	return MCP_INVALID;
}

struct json_object *
mcp_msg_id(struct json_object *msg)
{
	struct json_object *id;

	if (json_object_is_type(msg, json_type_object) &&
	    json_object_object_get_ex(msg, "id", &id) && mcp_id_valid(id))
		return id;
	return NULL;
}
