/*
 * tools/preview_link.c: preview_link(port, path) makes a link through which
 * the user opens, in a browser, the HTTP server listening on that port in
 * the caller's sandbox (links/previews.h for the link, lib/preview/ for how
 * it is served). It answers at once, whether or not something listens yet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "links/previews.h"
#include "oauth/auth.h"
#include "runs/result.h"
#include "tools/tools.h"

static struct json_object *
describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props;
	char			 desc[1200];

	snprintf(desc, sizeof(desc),
	    "Make a link through which the user opens, in their browser, the "
	    "web server (HTTP or WebSocket) listening on a port of the "
	    "sandbox: a web app, a dev server, a notebook you started. Start "
	    "the server first and leave it running in the background (e.g. "
	    "`setsid nohup python3 -m http.server 8000 > /tmp/http.log 2>&1 "
	    "&`); it may listen on 127.0.0.1. Check it answers with `curl -sI "
	    "localhost:PORT` in the sandbox, then give the user the URL. The "
	    "link works for %ld seconds; each link is its own origin (absolute "
	    "paths such as /static/app.js work).", cfg->link_ttl);
	t = tool_new("preview_link", "Show the user a web app running in the "
	    "sandbox", desc);

	props = json_object_new_object();
	js_set(props, "port", tool_prop("integer", "The TCP port the server "
	    "listens on in the sandbox (1-65535)."));
	js_set(props, "path", tool_prop("string", "Where the link lands "
	    "(default \"/\"), e.g. \"/index.html?x=1\"."));
	js_set(t, "inputSchema", tool_object(props, true, "port", NULL));

	props = json_object_new_object();
	js_set(props, "url", tool_prop("string", "The link to give the user."));
	js_set(props, "port", tool_prop("integer", "The port it shows."));
	js_set(props, "expires", tool_prop("string", "When the link stops working (ISO 8601, UTC)."));
	js_set(props, "expires_at", tool_prop("integer", "The same, in unix seconds."));
	js_set(props, "link_id", tool_prop("string", "The link's id, for revocation by an operator."));
	js_set(t, "outputSchema", tool_object(props, false, "url", "port",
	    "expires", "expires_at", "link_id", NULL));
	tool_annotate(t, false, false, false, true);
	return t;
}

static struct json_object *
call(struct tool_ctx *tc, struct json_object *args)
{
	const struct config	*cfg = tc->cfg;
	struct json_object	*sc, *v;
	struct preview_row	 row;
	struct error		 err;
	const char		*path = "/", *client;
	char			*url, text[PREVIEW_PATH_MAX + 1536], expires[32];
	long long		 port = 0;

	if (js_int(args, "port", &port) == -1 || port < 1 || port > 65535)
		return result_error("port must be an integer from 1 to 65535.");
	if (json_object_object_get_ex(args, "path", &v) &&
	    ((path = js_str_max(args, "path", PREVIEW_PATH_MAX)) == NULL ||
	    !previews_path_ok(path)))
		return result_error("path must start with \"/\" and hold only "
		    "URL characters (percent-encode others), at most %d bytes.",
		    PREVIEW_PATH_MAX);
	client = tc->who != NULL && tc->who->client_id[0] != '\0' ?
	    tc->who->client_id : "unknown";
	if ((url = previews_create(tc->db, cfg, (long)port, path, client,
	    auth_owner(tc->who), (long long)time(NULL), cfg->link_ttl, &row,
	    &err)) == NULL)
		return result_error("Cannot make a preview link: %s.", err.msg);
	log_info("preview %s of port %lld made for %s", row.id, port,
	    auth_owner(tc->who));
	clock_iso8601(row.expires, expires, sizeof(expires));
	snprintf(text, sizeof(text), "Preview of port %lld in the sandbox, "
	    "valid until %s:\n%s\n\nGive the user this URL to open in their "
	    "browser. It shows whatever listens on port %lld then (a page "
	    "saying nothing listens, if nothing does): check with `curl -sI "
	    "localhost:%lld` in the sandbox, and keep the server running in "
	    "the background.", port, expires, url, port, port);
	sc = json_object_new_object();
	js_set_str(sc, "url", url);
	js_set_int(sc, "port", port);
	js_set_str(sc, "expires", expires);
	js_set_int(sc, "expires_at", row.expires);
	js_set_str(sc, "link_id", row.id);
	free(url);
	return result_new(text, sc, false);
}

const struct tool tool_preview_link = {
	.name = "preview_link",
	.describe = describe,
	.call = call,
	.no_sandbox = true,
};
