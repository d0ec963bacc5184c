/*
 * tools/upload_link.c: upload_link(folder, max_bytes, overwrite) makes a
 * link through which the user (or a script) puts files into the sandbox
 * (uplinks.h for the URL, upload.h for how it is served).
 *
 * The folder is taken relative to /sandbox unless absolute and normalised
 * like share_file's path; it need not exist yet (the first upload makes
 * it). The cap is the SANDBOX_UPLOAD_MAX_BYTES setting, or less if asked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/js.h"
#include "links/uplinks.h"
#include "oauth/auth.h"
#include "runs/result.h"
#include "sandbox/files.h"
#include "tools/tools.h"

#define DEFAULT_FOLDER	"/sandbox/uploads"

static struct json_object *
describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props;
	char			 desc[1200];

	snprintf(desc, sizeof(desc),
	    "Make an upload link so the user can put files INTO the sandbox: "
	    "attachments, datasets, documents, images, archives of any size "
	    "(chat attachments do not reach this sandbox; use this instead of "
	    "asking for base64). Give the user the URL: they open it in a "
	    "browser and choose or drop files, or run `curl -T FILE URL/NAME`. "
	    "Files land in the folder (default %s) under their own names; an "
	    "existing file is never replaced (the new one gets \"name (2).ext\") "
	    "unless overwrite is true. The link works for %ld seconds and "
	    "accepts at most max_bytes in all (at most %lld). Afterwards, list "
	    "the folder with execute to see what arrived.",
	    DEFAULT_FOLDER, cfg->link_ttl, cfg->upload_max_bytes);
	t = tool_new("upload_link", "Let the user upload files into the sandbox",
	    desc);

	props = json_object_new_object();
	js_set(props, "folder", tool_prop("string", "Where the files go: "
	    "absolute, or relative to /sandbox. Default " DEFAULT_FOLDER "."));
	js_set(props, "max_bytes", tool_prop("integer", "Most bytes the link "
	    "accepts in all (default and maximum: the server's setting)."));
	js_set(props, "overwrite", tool_prop("boolean", "Replace files of the "
	    "same name (default false: keep both)."));
	js_set(t, "inputSchema", tool_object(props, true, NULL));

	props = json_object_new_object();
	js_set(props, "url", tool_prop("string", "The upload page; PUT to url + NAME."));
	js_set(props, "folder", tool_prop("string", "Where uploaded files land."));
	js_set(props, "max_bytes", tool_prop("integer", "Bytes the link accepts in all."));
	js_set(props, "overwrite", tool_prop("boolean", "Whether same-named files are replaced."));
	js_set(props, "expires", tool_prop("string", "When the link stops working (ISO 8601, UTC)."));
	js_set(props, "expires_at", tool_prop("integer", "The same, in unix seconds."));
	js_set(props, "link_id", tool_prop("string", "The link's id, for revocation by an operator."));
	js_set(t, "outputSchema", tool_object(props, false, "url", "folder",
	    "max_bytes", "overwrite", "expires", "expires_at", "link_id", NULL));
	tool_annotate(t, false, false, false, true);
	return t;
}

static struct json_object *
call(struct tool_ctx *tc, struct json_object *args)
{
	const struct config	*cfg = tc->cfg;
	struct json_object	*sc, *v;
	struct uplink_row	 row;
	struct error		 err;
	const char		*arg = DEFAULT_FOLDER, *why = NULL, *client;
	char			 dir[FILES_PATH_MAX + 1], expires[32];
	char			*url = NULL, text[3 * FILES_PATH_MAX + 2048];
	long long		 max = cfg->upload_max_bytes;
	bool			 overwrite = false;

	if (json_object_object_get_ex(args, "folder", &v)) {
		if ((arg = js_str_max(args, "folder", FILES_PATH_MAX)) == NULL ||
		    arg[0] == '\0')
			return result_error("folder must be a non-empty path of at "
			    "most %d bytes, without NUL characters.",
			    FILES_PATH_MAX);
	}
	if (json_object_object_get_ex(args, "max_bytes", &v) &&
	    (js_int(args, "max_bytes", &max) == -1 || max < 1 ||
	    max > cfg->upload_max_bytes))
		return result_error("max_bytes must be an integer from 1 to %lld.",
		    cfg->upload_max_bytes);
	if (json_object_object_get_ex(args, "overwrite", &v) &&
	    js_bool(args, "overwrite", &overwrite) == -1)
		return result_error("overwrite must be true or false.");
	if (tool_path_normalise("/sandbox", arg, dir, sizeof(dir), &why) == -1)
		return result_error("Bad folder \"%.300s\": %s. Use an absolute path "
		    "or one relative to /sandbox.", arg, why);

	client = tc->who != NULL && tc->who->client_id[0] != '\0' ?
	    tc->who->client_id : "unknown";
	if ((url = uplinks_create(tc->db, cfg->api_key, cfg->public_url, dir, max,
	    overwrite, client, auth_owner(tc->who), (long long)time(NULL),
	    cfg->link_ttl, &row, &err)) == NULL)
		return result_error("Cannot make an upload link: %s", err.msg);
	clock_iso8601(row.expires, expires, sizeof(expires));
	snprintf(text, sizeof(text), "Upload link into %s, valid until %s, up to "
	    "%lld bytes in all:\n%s\n\nGive the user this URL: they open it in a "
	    "browser and choose or drop files (or run: curl -T FILE %sNAME). "
	    "When they say they are done, list %s to see what arrived.",
	    dir, expires, max, url, url, dir);

	sc = json_object_new_object();
	js_set_str(sc, "url", url);
	js_set_str(sc, "folder", dir);
	js_set_int(sc, "max_bytes", max);
	js_set_bool(sc, "overwrite", overwrite);
	js_set_str(sc, "expires", expires);
	js_set_int(sc, "expires_at", row.expires);
	js_set_str(sc, "link_id", row.id);
	free(url);
	return result_new(text, sc, false);
}

const struct tool tool_upload_link = {
	.name = "upload_link",
	.describe = describe,
	.call = call,
};
