/* test_jsonrpc.c: JSON-RPC envelopes, bounded parsing, version negotiation. */
#include <string.h>

#include "base/js.h"
#include "check.h"
#include "mcp/mcp.h"

static enum mcp_kind
classify(const char *text, int *code)
{
	struct json_object	*m, *e = NULL, *err;
	struct error		 pe;
	enum mcp_kind		 k;

	*code = 0;
	if ((m = js_parse(text, strlen(text), JS_MAX_DEPTH, &pe)) == NULL) {
		*code = RPC_PARSE_ERROR;
		return MCP_INVALID;
	}
	k = mcp_classify(m, &e);
	if (e != NULL && (err = js_get(e, "error", json_type_object)) != NULL) {
		long long c;

		if (js_int(err, "code", &c) == 0)
			*code = (int)c;
	}
	json_object_put(e);
	json_object_put(m);
	return k;
}

int
main(void)
{
	struct error		 e;
	struct json_object	*o;
	int			 code;
	char			 deep[200];
	size_t			 i;

	CHECK(classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &code) == MCP_REQUEST,
	    "request");
	CHECK(classify("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\",\"params\":{}}", &code) == MCP_REQUEST,
	    "request with string id");
	CHECK(classify("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &code) == MCP_NOTIFICATION,
	    "notification");
	CHECK(classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", &code) == MCP_RESPONSE,
	    "response");
	CHECK(classify("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", &code) == MCP_INVALID &&
	    code == RPC_INVALID_REQUEST, "wrong jsonrpc version");
	CHECK(classify("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", &code) == MCP_INVALID,
	    "null id refused");
	CHECK(classify("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", &code) == MCP_INVALID,
	    "fractional id refused");
	CHECK(classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}", &code) == MCP_INVALID,
	    "array params refused");
	CHECK(classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", &code) == MCP_INVALID,
	    "non-string method refused");
	CHECK(classify("[]", &code) == MCP_INVALID, "array is not a message");
	CHECK(classify("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x", &code) == MCP_INVALID &&
	    code == RPC_PARSE_ERROR, "trailing garbage is a parse error");
	{
		const char *t = "{\"a\":\"\\u0000\"}";
		struct json_object *z = js_parse(t, strlen(t), JS_MAX_DEPTH, &e);

		CHECK(z != NULL && js_str_max(z, "a", 10) == NULL, "escaped NUL parses, refused as a string");
		json_object_put(z);
	}
	CHECK(js_parse("{\"a\":1}\0", 8, JS_MAX_DEPTH, &e) == NULL, "raw NUL refused");
	for (i = 0; i < 100; i++)
		deep[i] = '[';
	for (i = 100; i < 200; i++)
		deep[i] = ']';
	CHECK(js_parse(deep, sizeof(deep), JS_MAX_DEPTH, &e) == NULL, "deep nesting refused");
	CHECK(js_parse("\"\xff\"", 3, JS_MAX_DEPTH, &e) == NULL, "invalid UTF-8 refused");
	o = js_parse("{\"n\":9223372036854775808}", 25, JS_MAX_DEPTH, &e);
	{
		long long n;
		CHECK(o != NULL && js_int(o, "n", &n) == -1, "out-of-range integer refused");
	}
	json_object_put(o);

	CHECK(strcmp(mcp_negotiate("2025-06-18"), "2025-06-18") == 0, "negotiate 2025-06-18");
	CHECK(strcmp(mcp_negotiate("2025-03-26"), "2025-03-26") == 0, "negotiate 2025-03-26");
	CHECK(strcmp(mcp_negotiate("2024-11-05"), MCP_VERSION_LATEST) == 0, "unknown -> latest");
	CHECK(strcmp(mcp_negotiate(NULL), MCP_VERSION_LATEST) == 0, "none -> latest");
	CHECK(!mcp_version_supported("2099-01-01"), "unsupported version");

	o = mcp_error(NULL, RPC_PARSE_ERROR, "Parse error");
	CHECK(strcmp(js_text(o, &i), "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}") == 0,
	    "error response with null id");
	json_object_put(o);
	return check_status();
}
