/*
 * mcp.c: JSON-RPC envelopes, the two protocol eras (one table each, at the
 * end of this file), and the methods they serve.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "http/sse.h"
#include "mcp/mcp.h"
#include "oauth/auth.h"
#include "oauth/owners.h"
#include "runs/result.h"
#include "runs/runs.h"
#include "runs/tasks.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"
#include "tools/tools.h"

#define META_VERSION	"io.modelcontextprotocol/protocolVersion"
#define META_CAPS	"io.modelcontextprotocol/clientCapabilities"
#define META_SERVER	"io.modelcontextprotocol/serverInfo"
#define HEADER_MAX	1024	/* longest Mcp-Name we decode */
#define LIST_TTL_MS	3600000	/* tools/list and server/discover stay fresh an hour */

/* A method of one era. */
struct mcp_method {
	const char	*name;
	struct json_object *(*run)(struct mcp_call *, const struct mcp_msg *);
	unsigned	 flags;
};
#define M_CACHEABLE	0x1	/* 2026 server/utilities/caching: ttlMs, cacheScope */
#define M_TASKS		0x2	/* needs the Tasks extension declared (-32021) */

/*
 * One era's rules: everything that differs between 2025 and 2026 is a
 * member here, so no other code asks which era it is in.
 */
struct mcp_era {
	const char		*name;
	bool			 sessions;	/* initialize, Mcp-Session-Id, batches */
	const struct mcp_method	*methods;
	size_t			 nmethods;
	/* A client notification (no answer). */
	void			(*notify)(struct mcp_call *, const struct mcp_msg *);
	/* Dress a result of method (never NULL) before it is sent. */
	void			(*dress)(const struct mcp_method *, struct json_object *result);
	/* The HTTP status of an error response from dispatch. */
	int			(*error_status)(int code);
	/* What a tool call may do with its stream, and what tools say about it. */
	struct tool_mode	 tools;
	/* What the instructions say about an interrupted call. */
	const char		*interrupted;
};

/* Every tool the server offers; tools/list lists them in this order. */
static const struct tool *const tools[] = {
	&tool_execute,
	&tool_get_result,
	&tool_share_file,
	&tool_upload_link,
	&tool_view_image,
};

#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

/* Versions this server speaks, newest first (server/discover supportedVersions). */
static const char *const versions[] = {
	MCP_VERSION_MODERN, "2025-11-25", "2025-06-18", "2025-03-26",
};
#define NVERSIONS (sizeof(versions) / sizeof(versions[0]))

static const char instructions_head[] =
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
    "Detach long-running services with `setsid nohup cmd > log 2>&1 &`.\n";
static const char instructions_tail[] =
    "- To give the user a file (PDF, image, archive, ...) that is not text, "
    "use share_file(path): it returns a download link to hand to the user.";

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

/* An error response with data (taken). */
static struct json_object *
error_data(struct json_object *id, int code, const char *msg,
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

/* The id of a message when it is a valid one, else NULL. */
static struct json_object *
msg_id(struct json_object *msg)
{
	struct json_object *id;

	if (json_object_is_type(msg, json_type_object) &&
	    json_object_object_get_ex(msg, "id", &id) && valid_id(id))
		return id;
	return NULL;
}

static struct json_object *
versions_array(void)
{
	struct json_object	*a = json_object_new_array();
	size_t			 i;

	for (i = 0; i < NVERSIONS; i++)
		json_object_array_add(a, json_object_new_string(versions[i]));
	return a;
}

/* UnsupportedProtocolVersionError (2026-07-28 basic/versioning). */
static struct json_object *
unsupported_version(struct json_object *id, const char *requested)
{
	struct json_object *data = json_object_new_object();

	js_set(data, "supported", versions_array());
	js_set_str(data, "requested", requested);
	return error_data(id, RPC_UNSUPPORTED_VERSION,
	    "Unsupported protocol version", data);
}

/* params._meta[key] of a message, with the type asked for. */
static struct json_object *
meta_get(struct json_object *msg, const char *key, enum json_type type)
{
	return js_get(js_get(js_get(msg, "params", json_type_object), "_meta",
	    json_type_object), key, type);
}

/* A header value without the spaces and tabs around it, into buf. */
static const char *
trimmed(const char *v, char *buf, size_t bufsz)
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
	if (meta_get(body, META_VERSION, json_type_string) != NULL)
		return &mcp_era_2026;
	hv = trimmed(h->version, buf, sizeof(buf));
	if (hv == NULL && h->version == NULL)
		return &mcp_era_2025;
	if (hv != NULL && mcp_version_supported(hv))
		return &mcp_era_2025;
	if (hv != NULL && strcmp(hv, MCP_VERSION_MODERN) == 0)
		return &mcp_era_2026;
	*error = unsupported_version(msg_id(body), hv != NULL ? hv : "");
	return NULL;
}

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
	    META_VERSION);
	caps = meta_get(msg, META_CAPS, json_type_object);
	if (m->version == NULL || caps == NULL) {
		*error = mcp_error(m->id, RPC_INVALID_PARAMS, "Invalid params: "
		    "_meta must carry io.modelcontextprotocol/protocolVersion and "
		    "io.modelcontextprotocol/clientCapabilities");
		return -1;
	}
	/* streamable-http "Protocol Version Header". */
	if ((hv = trimmed(h->version, vbuf, sizeof(vbuf))) == NULL ||
	    strcmp(hv, m->version) != 0) {
		*error = mcp_error(m->id, RPC_HEADER_MISMATCH, "Header mismatch: "
		    "MCP-Protocol-Version must equal the _meta protocol version");
		return -1;
	}
	if (strcmp(m->version, MCP_VERSION_MODERN) != 0) {
		*error = unsupported_version(m->id, m->version);
		return -1;
	}
	/* "Standard Request Headers": values are case-sensitive. */
	if ((hm = trimmed(h->method, mbuf, sizeof(mbuf))) == NULL ||
	    strcmp(hm, m->method) != 0) {
		*error = mcp_error(m->id, RPC_HEADER_MISMATCH, "Header mismatch: "
		    "Mcp-Method must equal the request's method");
		return -1;
	}
	src = name_source(m->method, m->params, &required);
	if (required && (src != NULL || h->name != NULL) &&
	    (h->name == NULL || src == NULL ||
	    trimmed(h->name, raw, sizeof(raw)) == NULL ||
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
	m->id = msg_id(msg);
	m->method = js_str(msg, "method");
	m->params = js_get(msg, "params", json_type_object);
	meta = js_get(m->params, "_meta", json_type_object);
	if (meta != NULL &&
	    json_object_object_get_ex(meta, "progressToken", &m->progress_token) &&
	    !valid_id(m->progress_token))
		m->progress_token = NULL;
	/* Only requests describe themselves in 2026; notifications are ignored. */
	if (era->sessions || m->kind != MCP_REQUEST)
		return 0;
	return read_modern(msg, h, m, error, status);
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

/*
 * Instructions for an era: what is true for its callers. Whose key signed
 * in is said here, after sign-in, never on the sign-in page (which must
 * not tell a guesser whose key they hold). owner may be NULL.
 */
static char *
instructions(const struct config *cfg, const struct mcp_era *era,
    const char *owner)
{
	char		 who[OWNER_MAX + 256] = "";
	char		*s;
	size_t		 n;

	if (owner != NULL)
		snprintf(who, sizeof(who), "- You are signed in as \"%s\"%s.%s\n",
		    owner, strcmp(owner, OWNER_OPERATOR) == 0 ?
		    " (the server's own key)" : " (a personal key)",
		    cfg->per_person ? " This sandbox is yours alone; it stops "
		    "when idle and starts again, with its files and packages, "
		    "on the next call." : "");
	n = sizeof(instructions_head) + strlen(era->interrupted) +
	    sizeof(instructions_tail) + strlen(who) + 1;
	if ((s = malloc(n)) == NULL)
		return NULL;
	snprintf(s, n, "%s%s\n%s%s", instructions_head, era->interrupted,
	    instructions_tail, who);
	return s;
}

static struct json_object *
server_info(void)
{
	struct json_object *info = json_object_new_object();

	js_set_str(info, "name", MCP_SERVER_NAME);
	js_set_str(info, "title", "Code Sandbox");
	js_set_str(info, "version", MCP_SERVER_VERSION);
	return info;
}

struct json_object *
mcp_initialize_result(const struct config *cfg, const char *requested,
    const char *owner)
{
	struct json_object	*r = json_object_new_object(), *caps, *t;
	char			*text;

	js_set_str(r, "protocolVersion", mcp_negotiate(requested));
	caps = json_object_new_object();
	t = json_object_new_object();
	js_set_bool(t, "listChanged", false);
	js_set(caps, "tools", t);
	js_set(r, "capabilities", caps);
	js_set(r, "serverInfo", server_info());
	if ((text = instructions(cfg, &mcp_era_2025, owner)) != NULL)
		js_set_str(r, "instructions", text);
	free(text);
	return r;
}

/* A response carrying result, dressed for the era of m. */
static struct json_object *
reply(const struct mcp_msg *m, const struct mcp_method *method,
    struct json_object *result)
{
	m->era->dress(method, result);
	return mcp_result(m->id, result);
}

/* The method table entry of the method being run (for dress). */
static const struct mcp_method *
method_of(const struct mcp_msg *m)
{
	size_t i;

	for (i = 0; i < m->era->nmethods; i++)
		if (strcmp(m->era->methods[i].name, m->method) == 0)
			return &m->era->methods[i];
	return NULL;
}

static struct json_object *
m_ping(struct mcp_call *c, const struct mcp_msg *m)
{
	(void)c;
	return reply(m, method_of(m), json_object_new_object());
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

	(void)c;
	js_set(r, "supportedVersions", versions_array());
	caps = json_object_new_object();
	js_set(caps, "tools", json_object_new_object());
	ext = json_object_new_object();
	js_set(ext, MCP_TASKS_EXTENSION, json_object_new_object());
	js_set(caps, "extensions", ext);
	js_set(r, "capabilities", caps);
	if ((text = instructions(c->cfg, m->era, auth_owner(c->who))) != NULL)
		js_set_str(r, "instructions", text);
	free(text);
	return reply(m, method_of(m), r);
}

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

static struct json_object *
m_tools_list(struct mcp_call *c, const struct mcp_msg *m)
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
	return reply(m, method_of(m), r);
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
	resp = reply(ch->msg, method_of(ch->msg), result);
	rc = sse_finish_detach(ch->call->stream, resp);
	json_object_put(resp);
	return rc;
}

static struct json_object *
m_tools_call(struct mcp_call *c, const struct mcp_msg *m)
{
	struct json_object	*args, *res;
	struct sandbox		*sb = NULL;
	struct error		 err;
	struct tool_ctx		 tc;
	struct channel		 ch = { c, m };
	const char		*name;
	const struct tool	*tool = NULL;
	size_t			 i;

	if ((name = js_str_max(m->params, "name", 128)) == NULL)
		return mcp_error(m->id, RPC_INVALID_PARAMS,
		    "Invalid params: name must be a tool name");
	for (i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i]->name, name) == 0)
			tool = tools[i];
	if (tool == NULL)
		return mcp_error(m->id, RPC_INVALID_PARAMS,
		    "Invalid params: unknown tool (see tools/list)");
	if (json_object_object_get_ex(m->params, "arguments", &args)) {
		if (!json_object_is_type(args, json_type_object))
			return mcp_error(m->id, RPC_INVALID_PARAMS,
			    "Invalid params: arguments must be an object");
		json_object_get(args);
	} else
		args = json_object_new_object();

	/* The caller's own sandbox in person scope (sandboxes.h). */
	if ((!tool->no_sandbox && sandboxes_claim(c->cfg, c->db,
	    auth_owner(c->who), &err) == -1) ||
	    sandbox_open(c->cfg, auth_owner(c->who), &sb, &err) == -1) {
		json_object_put(args);
		return reply(m, method_of(m), result_error("%s", err.msg));
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
	return reply(m, method_of(m), res);
}

/* tasks/get, tasks/cancel, tasks/update (Tasks extension). */
static struct json_object *
m_tasks(struct mcp_call *c, const struct mcp_msg *m)
{
	struct json_object	*res = NULL;
	const char		*task_id = js_str_max(m->params, "taskId", RUN_ID_MAX);
	char			 why[128];
	int			 rc;

	if (task_id == NULL)
		return mcp_error(m->id, RPC_INVALID_PARAMS,
		    "Invalid params: taskId must be a task id string");
	if (strcmp(m->method, "tasks/get") == 0)
		rc = tasks_get(c->db, c->cfg, c->who, task_id, &res, why, sizeof(why));
	else if (strcmp(m->method, "tasks/cancel") == 0)
		rc = tasks_cancel(c->db, c->cfg, c->who, task_id, why, sizeof(why));
	else
		rc = tasks_update(c->db, c->who, task_id, why, sizeof(why));
	if (rc == -1)
		return mcp_error(m->id, RPC_INTERNAL_ERROR, "Internal error");
	if (rc == 0)
		return mcp_error(m->id, RPC_INVALID_PARAMS, why);
	return reply(m, method_of(m), res != NULL ? res : json_object_new_object());
}

/*
 * notifications/cancelled (2025 basic/utilities/cancellation): stop the
 * command the named request of this session started. It may run in another
 * process: the run table finds it, and the kill works inside the container.
 * The request's own worker also sees the mark within a second.
 */
static void
n_cancelled(struct mcp_call *c, const struct mcp_msg *m)
{
	struct json_object	*rid;
	struct sandbox		*sb = NULL;
	struct error		 err;
	char			 run_id[RUN_ID_MAX + 1];

	if (strcmp(m->method, "notifications/cancelled") != 0)
		return;
	if (m->params == NULL ||
	    !json_object_object_get_ex(m->params, "requestId", &rid) ||
	    !valid_id(rid))
		return;
	if (runs_request_cancel(c->db, c->session_id, rid, run_id,
	    sizeof(run_id)) != 1)
		return;
	if (sandbox_open(c->cfg, auth_owner(c->who), &sb, &err) == -1 ||
	    sandbox_kill(sb, run_id, &err) == -1)
		log_warn("cancel run %s: %s", run_id, err.msg);
	sandbox_close(sb);
}

/* 2026 streamable-http: a notification POST is accepted and has no effect. */
static void
n_ignore(struct mcp_call *c, const struct mcp_msg *m)
{
	(void)c;
	(void)m;
}

struct json_object *
mcp_handle(struct mcp_call *c, const struct mcp_msg *m)
{
	const struct mcp_method	*method;
	struct json_object	*data, *caps, *ext;

	if (m->kind == MCP_NOTIFICATION) {
		m->era->notify(c, m);
		return NULL;
	}
	if (m->kind != MCP_REQUEST)
		return NULL;
	if ((method = method_of(m)) == NULL)
		return mcp_error(m->id, RPC_METHOD_NOT_FOUND, "Method not found");
	if ((method->flags & M_TASKS) && !m->tasks) {
		/* Tasks extension "Protocol Errors", checked before the lookup. */
		data = json_object_new_object();
		caps = json_object_new_object();
		ext = json_object_new_object();
		js_set(ext, MCP_TASKS_EXTENSION, json_object_new_object());
		js_set(caps, "extensions", ext);
		js_set(data, "requiredCapabilities", caps);
		return error_data(m->id, RPC_MISSING_CAPABILITY,
		    "Missing required client capability: the "
		    MCP_TASKS_EXTENSION " extension", data);
	}
	return method->run(c, m);
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
	js_set(meta, META_SERVER, server_info());
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

static const struct mcp_method methods_2025[] = {
	{ "ping",		m_ping,			0 },
	{ "tools/list",		m_tools_list,		0 },
	{ "tools/call",		m_tools_call,		0 },
	{ "initialize",		m_initialized_again,	0 },
};

/* initialize, ping, logging/setLevel, tasks/result, tasks/list: gone (404). */
static const struct mcp_method methods_2026[] = {
	{ "server/discover",	m_discover,		M_CACHEABLE },
	{ "tools/list",		m_tools_list,		M_CACHEABLE },
	{ "tools/call",		m_tools_call,		0 },
	{ "tasks/get",		m_tasks,		M_TASKS },
	{ "tasks/cancel",	m_tasks,		M_TASKS },
	{ "tasks/update",	m_tasks,		M_TASKS },
};

const struct mcp_era mcp_era_2025 = {
	.name = "2025",
	.sessions = true,
	.methods = methods_2025,
	.nmethods = sizeof(methods_2025) / sizeof(methods_2025[0]),
	.notify = n_cancelled,
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
	.methods = methods_2026,
	.nmethods = sizeof(methods_2026) / sizeof(methods_2026[0]),
	.notify = n_ignore,
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
