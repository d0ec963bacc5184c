/*
 * JSON-RPC messages: parsed as /mcp parses them (lib/mcp/transport.c, at
 * JS_MAX_DEPTH), then classified (lib/mcp/rpc.c).
 */
#include <json-c/json.h>

#include "base/js.h"
#include "fuzz.h"
#include "mcp/mcp.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object	*msg, *err = NULL;
	size_t			 i, n;

	if ((msg = js_parse((const char *)data, size, JS_MAX_DEPTH, NULL)) == NULL)
		return 0;
	if (json_object_is_type(msg, json_type_array)) {
		for (i = 0, n = json_object_array_length(msg); i < n && i < 64; i++) {
			(void)mcp_classify(json_object_array_get_idx(msg, i), &err);
			json_object_put(err);
			err = NULL;
		}
	} else {
		(void)mcp_classify(msg, &err);
		json_object_put(err);
	}
	json_object_put(msg);
	return 0;
}
