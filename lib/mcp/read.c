/*
 * read.c: reading one message of an era (mcp_read): its JSON-RPC envelope
 * and, in 2026-07-28, the _meta and HTTP header checks of streamable-http
 * "Server Validation", in the order the spec and the conformance suite
 * expect.
 */
#include <string.h>

#include "base/crypto.h"
#include "base/js.h"
#include "mcp/extern.h"

#define HEADER_MAX	1024	/* longest Mcp-Name we decode */

/*
 * Decode a header value in the Base64 sentinel form "=?base64?...?=" (2026
 * streamable-http "Value Encoding") into out, or copy a plain one. -1 when
 * the value is malformed or holds characters no header may (RFC 9110 §5.5).
 */
static int
header_value(const char *v, char *out, size_t outsz)
{
	size_t	n = strlen(v), i;
	long	m;

	if (n >= 11 && strncmp(v, "=?base64?", 9) == 0 &&
	    strcmp(v + n - 2, "?=") == 0) {
		if ((m = crypto_b64_decode(v + 9, n - 11, out, outsz - 1)) < 0)
			return -1;
		out[m] = '\0';
		return (size_t)m == strlen(out) ? 0 : -1;	/* no NUL inside */
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] == 0x7f) {
			if (v[i] != '\t')
				return -1;
		}
	if (n >= outsz)
		return -1;
	memcpy(out, v, n + 1);
	return 0;
}

/* The body value Mcp-Name mirrors for a method, or NULL when none is required. */
static const char *
name_source(const char *method, struct json_object *params, bool *required)
{
	*required = true;
	if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
		return js_str(params, "name");
	if (strcmp(method, "resources/read") == 0)
		return js_str(params, "uri");
	/* Tasks extension "Streamable HTTP: Routing Headers". */
	if (strcmp(method, "tasks/get") == 0 ||
	    strcmp(method, "tasks/update") == 0 ||
	    strcmp(method, "tasks/cancel") == 0)
		return js_str(params, "taskId");
	*required = false;
	return NULL;
}

/*
 * The 2026 checks of one request (protocol notes "Telling the eras
 * apart", steps 2 to 5): _meta, then the headers against the body.
 */
static int
read_modern(struct json_object *msg, const struct mcp_http_meta *h,
    struct mcp_msg *m, struct json_object **error, int *status)
{
	struct json_object	*caps, *ext;
	const char		*hv, *hm, *src;
	char			 vbuf[64], mbuf[128], nbuf[HEADER_MAX], raw[HEADER_MAX];
	bool			 required;

	*status = 400;
	m->version = js_str(js_get(m->params, "_meta", json_type_object),
	    MCP_META_VERSION);
	caps = mcp_meta_get(msg, MCP_META_CAPS, json_type_object);
	if (m->version == NULL || caps == NULL) {
		*error = mcp_error(m->id, RPC_INVALID_PARAMS, "Invalid params: "
		    "_meta must carry io.modelcontextprotocol/protocolVersion and "
		    "io.modelcontextprotocol/clientCapabilities");
		return -1;
	}
	/* streamable-http "Protocol Version Header". */
	if ((hv = mcp_header_trim(h->version, vbuf, sizeof(vbuf))) == NULL ||
	    strcmp(hv, m->version) != 0) {
		*error = mcp_error(m->id, RPC_HEADER_MISMATCH, "Header mismatch: "
		    "MCP-Protocol-Version must equal the _meta protocol version");
		return -1;
	}
	if (strcmp(m->version, MCP_VERSION_MODERN) != 0) {
		*error = mcp_unsupported_version(m->id, m->version);
		return -1;
	}
	/* "Standard Request Headers": values are case-sensitive. */
	if ((hm = mcp_header_trim(h->method, mbuf, sizeof(mbuf))) == NULL ||
	    strcmp(hm, m->method) != 0) {
		*error = mcp_error(m->id, RPC_HEADER_MISMATCH, "Header mismatch: "
		    "Mcp-Method must equal the request's method");
		return -1;
	}
	src = name_source(m->method, m->params, &required);
	if (required && (src != NULL || h->name != NULL) &&
	    (h->name == NULL || src == NULL ||
	    mcp_header_trim(h->name, raw, sizeof(raw)) == NULL ||
	    header_value(raw, nbuf, sizeof(nbuf)) == -1 ||
	    strcmp(nbuf, src) != 0)) {
		*error = mcp_error(m->id, RPC_HEADER_MISMATCH, "Header mismatch: "
		    "Mcp-Name must equal the request's name, uri or taskId");
		return -1;
	}
	ext = js_get(caps, "extensions", json_type_object);
	m->tasks = js_get(ext, MCP_TASKS_EXTENSION, json_type_object) != NULL;
	return 0;
}

int
mcp_read(const struct mcp_era *era, struct json_object *msg,
    const struct mcp_http_meta *h, struct mcp_msg *m,
    struct json_object **error, int *status)
{
	struct json_object *meta;

	memset(m, 0, sizeof(*m));
	m->era = era;
	*status = 400;
	if ((m->kind = mcp_classify(msg, error)) == MCP_INVALID)
		return -1;
	m->id = mcp_msg_id(msg);
	m->method = js_str(msg, "method");
	m->params = js_get(msg, "params", json_type_object);
	meta = js_get(m->params, "_meta", json_type_object);
	if (meta != NULL &&
	    json_object_object_get_ex(meta, "progressToken", &m->progress_token) &&
	    !mcp_id_valid(m->progress_token))
		m->progress_token = NULL;
	/* Only requests describe themselves in 2026; notifications are ignored. */
	if (era->sessions || m->kind != MCP_REQUEST)
		return 0;
	return read_modern(msg, h, m, error, status);
}
