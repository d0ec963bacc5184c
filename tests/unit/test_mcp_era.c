/*
 * test_mcp_era.c: telling the eras apart (mcp_era_of) and the 2026-07-28
 * checks of one request (mcp_read): _meta, MCP-Protocol-Version, Mcp-Method,
 * Mcp-Name (Base64 form), the Tasks extension flag.
 */
#include <string.h>

#include "base/js.h"
#include "check.h"
#include "mcp/mcp.h"

#define META_OK "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
	"\"io.modelcontextprotocol/clientCapabilities\":{}}"
#define META_TASKS "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
	"\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":" \
	"{\"io.modelcontextprotocol/tasks\":{}}}}"

static struct json_object *
parse(const char *text)
{
	struct error e;

	return js_parse(text, strlen(text), JS_MAX_DEPTH, &e);
}

/* The era of text with header version hv: 2025, 2026, or the error code. */
static int
era(const char *text, const char *hv)
{
	struct json_object	*m = parse(text), *err = NULL;
	struct mcp_http_meta	 h = { hv, NULL, NULL };
	const struct mcp_era	*e;
	long long		 code = 0;

	e = mcp_era_of(m, &h, &err);
	if (e == NULL)
		js_int(js_get(err, "error", json_type_object), "code", &code);
	json_object_put(err);
	json_object_put(m);
	return e == &mcp_era_2025 ? 2025 : e == &mcp_era_2026 ? 2026 : (int)code;
}

/* mcp_read of a 2026 request: 0, or the error code (and its HTTP status). */
static int
read26(const char *text, const char *hv, const char *hm, const char *hn,
    int *status, bool *tasks)
{
	struct json_object	*m = parse(text), *err = NULL;
	struct mcp_http_meta	 h = { hv, hm, hn };
	struct mcp_msg		 msg;
	long long		 code = 0;
	int			 rc;

	*status = 0;
	rc = mcp_read(&mcp_era_2026, m, &h, &msg, &err, status);
	if (rc == -1)
		js_int(js_get(err, "error", json_type_object), "code", &code);
	else if (tasks != NULL)
		*tasks = msg.tasks;
	json_object_put(err);
	json_object_put(m);
	return rc == 0 ? 0 : (int)code;
}

int
main(void)
{
	const char	*call = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
			    "\"params\":{\"name\":\"execute\"," META_OK "}}";
	const char	*task = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tasks/get\","
			    "\"params\":{\"taskId\":\"abc\"," META_TASKS "}}";
	const char	*list = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
	int		 st;
	bool		 tasks = false;

	CHECK(era(list, NULL) == 2025, "no _meta, no header: 2025");
	CHECK(era(list, "2025-06-18") == 2025, "a 2025 header: 2025");
	CHECK(era(list, " 2026-07-28 ") == 2026, "the 2026 header alone: 2026");
	CHECK(era(list, "1999-01-01") == RPC_UNSUPPORTED_VERSION, "another header: -32022");
	CHECK(era(call, NULL) == 2026, "a _meta version: 2026, whatever the header");
	CHECK(era("[1,2]", "2025-03-26") == 2025, "a batch under a 2025 header: 2025");

	CHECK(read26(call, "2026-07-28", "tools/call", "execute", &st, NULL) == 0,
	    "a well-formed tools/call");
	CHECK(read26(call, "2026-07-28", " tools/call\t", " execute ", &st, NULL) == 0,
	    "header values are trimmed");
	CHECK(read26(call, "2026-07-28", "tools/call", "=?base64?ZXhlY3V0ZQ==?=", &st, NULL) == 0,
	    "Mcp-Name in the Base64 form");
	CHECK(read26(call, "2026-07-28", "tools/call", "=?base64?ZXhlY3V0ZQ?=", &st, NULL) ==
	    RPC_HEADER_MISMATCH && st == 400, "bad Base64 padding: -32020");
	CHECK(read26(call, "2026-07-28", "tools/call", "=?base64?ZXhl\x01?=", &st, NULL) ==
	    RPC_HEADER_MISMATCH, "a control character: -32020");
	CHECK(read26(call, "2026-07-28", "tools/call", NULL, &st, NULL) == RPC_HEADER_MISMATCH,
	    "Mcp-Name missing: -32020");
	CHECK(read26(call, "2026-07-28", "tools/call", "Execute", &st, NULL) == RPC_HEADER_MISMATCH,
	    "Mcp-Name differs in case: -32020");
	CHECK(read26(call, "2026-07-28", "TOOLS/CALL", "execute", &st, NULL) == RPC_HEADER_MISMATCH,
	    "Mcp-Method is case-sensitive");
	CHECK(read26(call, NULL, "tools/call", "execute", &st, NULL) == RPC_HEADER_MISMATCH,
	    "MCP-Protocol-Version missing: -32020");
	CHECK(read26("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{}}",
	    "2026-07-28", "tools/list", NULL, &st, NULL) == RPC_INVALID_PARAMS && st == 400,
	    "no _meta: -32602, 400");
	CHECK(read26("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":"
	    "{\"io.modelcontextprotocol/protocolVersion\":\"2030-01-01\","
	    "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
	    "2030-01-01", "tools/list", NULL, &st, NULL) == RPC_UNSUPPORTED_VERSION,
	    "an unknown _meta version: -32022");
	CHECK(read26(task, "2026-07-28", "tasks/get", "abc", &st, &tasks) == 0 && tasks,
	    "the Tasks extension is seen");
	CHECK(read26(task, "2026-07-28", "tasks/get", "abd", &st, NULL) == RPC_HEADER_MISMATCH,
	    "Mcp-Name is the taskId on tasks/get");
	CHECK(read26(call, "2026-07-28", "tools/call", "execute", &st, &tasks) == 0 && !tasks,
	    "no extension declared");
	CHECK(read26("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}",
	    "2026-07-28", NULL, NULL, &st, NULL) == 0, "a notification is not checked");
	return check_status();
}
