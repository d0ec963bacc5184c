/*
 * tools/share_file.c: share_file(path) makes a download link to a file in
 * the sandbox (links.h for the URL, dl.h for how it is served).
 *
 * The path is taken relative to /sandbox unless absolute, normalised
 * lexically (".", "..", repeated slashes), and its final symbolic links are
 * followed through the engine's stat, so the link names the file itself.
 * Anything but an existing regular file is an isError result that says
 * what to do instead.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/js.h"
#include "links/links.h"
#include "links/mime.h"
#include "oauth/auth.h"
#include "runs/result.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "tools/tools.h"

#define SYMLINK_HOPS	8

static struct json_object *
describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props;
	char			 desc[1024];

	snprintf(desc, sizeof(desc),
	    "Make a download link to a file in the sandbox, for the user to open "
	    "or download in a browser without signing in: charts, PDFs, "
	    "spreadsheets, archives, audio, video. The link works for %ld "
	    "seconds unless revoked; anyone holding it can download the file "
	    "as it is at download time. Give the user the URL as it is. A "
	    "folder is downloaded as one archive made at download time "
	    "(archive: \"tar.gz\", the default, or \"zip\").",
	    cfg->link_ttl);
	t = tool_new("share_file", "Share a sandbox file as a download link", desc);

	props = json_object_new_object();
	js_set(props, "path", tool_prop("string", "The file: absolute, or relative "
	    "to /sandbox (e.g. \"out/chart.png\")."));
	js_set(props, "archive", tool_prop("string", "For a folder: \"tar.gz\" "
	    "(default) or \"zip\"."));
	js_set(t, "inputSchema", tool_object(props, true, "path", NULL));

	props = json_object_new_object();
	js_set(props, "url", tool_prop("string", "The download link."));
	js_set(props, "path", tool_prop("string", "The file shared (absolute, symbolic links resolved)."));
	js_set(props, "name", tool_prop("string", "The file name the browser saves it as."));
	js_set(props, "size", tool_prop("integer", "Size in bytes now (0 for a folder: its archive is made at download time)."));
	js_set(props, "archive", tool_prop("string", "For a folder: the archive format its link serves."));
	js_set(props, "content_type", tool_prop("string", "Media type the link serves it as."));
	js_set(props, "expires", tool_prop("string", "When the link stops working (ISO 8601, UTC)."));
	js_set(props, "expires_at", tool_prop("integer", "The same, in unix seconds."));
	js_set(props, "link_id", tool_prop("string", "The link's id, for revocation by an operator."));
	js_set(t, "outputSchema", tool_object(props, false, "url", "path", "name",
	    "size", "content_type", "expires", "expires_at", "link_id", NULL));
	tool_annotate(t, false, false, false, true);
	return t;
}

int
tool_path_normalise(const char *base, const char *path, char *out, size_t outsz,
    const char **why)
{
	const char	*parts[2], *p, *end;
	size_t		 i, o = 0, n;

	if (strlen(path) > FILES_PATH_MAX || strlen(base) > FILES_PATH_MAX) {
		*why = "the path is too long";
		return -1;
	}
	/* The base's parts first, unless path is absolute; then path's. */
	parts[0] = path[0] == '/' ? "" : base;
	parts[1] = path;
	out[0] = '\0';
	for (i = 0; i < 2; i++) {
		for (p = parts[i]; *p != '\0'; p = *end == '\0' ? end : end + 1) {
			end = strchrnul(p, '/');
			n = (size_t)(end - p);
			if (n == 0 || (n == 1 && p[0] == '.'))
				continue;
			if (n == 2 && p[0] == '.' && p[1] == '.') {
				if (o == 0) {
					*why = "the path goes above /";
					return -1;
				}
				while (o > 0 && out[o - 1] != '/')
					o--;
				out[--o] = '\0';	/* and the '/' before the part */
				continue;
			}
			if (o + 1 + n + 1 > outsz) {
				*why = "the path is too long";
				return -1;
			}
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
			out[o] = '\0';
		}
	}
	if (o == 0) {
		out[0] = '/';
		out[1] = '\0';
	}
	return 0;
}

/* "3.4 MB" */
static void
human_size(unsigned long long n, char *out, size_t outsz)
{
	static const char *const unit[] = { "KB", "MB", "GB", "TB" };
	double	v = (double)n;
	int	i = -1;

	if (n < 1000) {
		snprintf(out, outsz, "%llu bytes", n);
		return;
	}
	while (v >= 1000 && i < 3) {
		v /= 1000;
		i++;
	}
	snprintf(out, outsz, "%.1f %s", v, unit[i]);
}

/* A folder: a link that streams it as one archive (dl_archive.c). */
static struct json_object *
share_folder(struct tool_ctx *tc, struct json_object *args, const char *path)
{
	const struct config	*cfg = tc->cfg;
	struct json_object	*sc, *v;
	struct link_row		 row;
	struct error		 err;
	const char		*archive = "tar.gz", *client;
	char			*url, expires[32], text[3 * FILES_PATH_MAX + 512];
	char			 name[LINK_NAME_MAX + 16];

	if (json_object_object_get_ex(args, "archive", &v) &&
	    ((archive = js_str_max(args, "archive", 8)) == NULL ||
	    (strcmp(archive, "tar.gz") != 0 && strcmp(archive, "zip") != 0)))
		return result_error("archive must be \"tar.gz\" or \"zip\".");
	if (strcmp(path, "/") == 0)
		return result_error("\"/\" cannot be shared; share a folder in it.");
	client = tc->who != NULL && tc->who->client_id[0] != '\0' ?
	    tc->who->client_id : "unknown";
	if ((url = links_create_archive(tc->db, cfg->api_key, cfg->public_url,
	    path, archive, client, auth_owner(tc->who), (long long)time(NULL),
	    cfg->link_ttl, &row, &err)) == NULL)
		return result_error("Cannot share %s: %s", path, err.msg);
	clock_iso8601(row.expires, expires, sizeof(expires));
	snprintf(text, sizeof(text), "Download link for the folder %s as one "
	    ".%s archive (made when downloaded, so it holds the folder as it is "
	    "then), valid until %s (%ld seconds):\n%s\n\nGive the user this URL "
	    "as it is: anyone who has it can download the folder until then.",
	    path, archive, expires, cfg->link_ttl, url);
	sc = json_object_new_object();
	js_set_str(sc, "url", url);
	js_set_str(sc, "path", path);
	snprintf(name, sizeof(name), "%s.%s", files_basename(path), archive);
	js_set_str(sc, "name", name);
	js_set_int(sc, "size", 0);
	js_set_str(sc, "content_type", strcmp(archive, "zip") == 0 ?
	    "application/zip" : "application/gzip");
	js_set_str(sc, "archive", archive);
	js_set_str(sc, "expires", expires);
	js_set_int(sc, "expires_at", row.expires);
	js_set_str(sc, "link_id", row.id);
	free(url);
	return result_new(text, sc, false);
}

#define PATH_ROOM	(FILES_PATH_MAX + 1)

/* The path argument, checked, normalised into path: NULL, or an error result. */
static struct json_object *
share_arg(struct json_object *args, char path[PATH_ROOM])
{
	struct json_object	*v;
	const char		*arg, *why = NULL;

	if (!json_object_object_get_ex(args, "path", &v) ||
	    !json_object_is_type(v, json_type_string))
		return result_error("path is required: a string naming a file, "
		    "absolute or relative to /sandbox (e.g. \"out/report.pdf\").");
	if ((arg = js_str_max(args, "path", FILES_PATH_MAX)) == NULL ||
	    arg[0] == '\0')
		return result_error("path must be a non-empty file path of at most "
		    "%d bytes, without NUL characters.", FILES_PATH_MAX);
	if (tool_path_normalise("/sandbox", arg, path, PATH_ROOM, &why) == -1)
		return result_error("Bad path \"%.300s\": %s. Use an absolute path "
		    "or one relative to /sandbox.", arg, why);
	if (strcmp(path, "/") == 0)
		return result_error("\"/\" is a directory: archive what you need "
		    "first (tar czf /sandbox/out.tgz -C / dir) and share the archive.");
	return NULL;
}

/*
 * Follow the final symbolic links, so the link names the file: NULL with
 * path the file's and *st its, or an error result.
 */
static struct json_object *
share_follow(struct tool_ctx *tc, char path[PATH_ROOM], struct file_stat *st)
{
	struct error	 err;
	const char	*why = NULL;
	char		 next[PATH_ROOM], dir[PATH_ROOM];
	int		 hops;

	for (hops = 0;; hops++) {
		if (files_stat(tc->sandbox, path, st, &err) == -1) {
			const char *name = files_basename(path);

			if (err.kind == ERR_NOT_FOUND)
				return result_error("No file at %s%s (a relative "
				    "path is taken from /sandbox). Check the name "
				    "with execute, e.g. ls -la %.*s", path, hops == 0 ?
				    "" : " (where a symbolic link points)",
				    (int)(name - path > 1 ? name - path - 1 : 1), path);
			return result_error("Cannot share %s: %s", path, err.msg);
		}
		if (st->kind != FILE_SYMLINK)
			return NULL;
		if (hops == SYMLINK_HOPS || st->link_target[0] == '\0')
			return result_error("%s is a symbolic link that cannot be "
			    "followed (a loop, or more than %d links). Share the "
			    "file it points to.", path, SYMLINK_HOPS);
		snprintf(dir, sizeof(dir), "%s", path);
		*strrchr(dir, '/') = '\0';
		if (tool_path_normalise(dir[0] == '\0' ? "/" : dir, st->link_target,
		    next, sizeof(next), &why) == -1)
			return result_error("%s is a symbolic link to a bad path: %s.",
			    path, why);
		memcpy(path, next, PATH_ROOM);
	}
}

/* The link's result: text, structured content and a resource_link block. */
static struct json_object *
share_result(const char *text, const char *url, const char *path,
    const struct file_stat *st, const struct mime_type *mime,
    const char *expires, const struct link_row *row)
{
	struct json_object	*res, *sc, *content, *block;

	sc = json_object_new_object();
	js_set_str(sc, "url", url);
	js_set_str(sc, "path", path);
	js_set_str(sc, "name", files_basename(path));
	js_set_int(sc, "size", (long long)st->size);
	js_set_str(sc, "content_type", mime->type);
	js_set_str(sc, "expires", expires);
	js_set_int(sc, "expires_at", row->expires);
	js_set_str(sc, "link_id", row->id);
	res = result_new(text, sc, false);

	/* A resource_link block (spec: server/tools "Resource Links"). */
	if (json_object_object_get_ex(res, "content", &content)) {
		block = json_object_new_object();
		js_set_str(block, "type", "resource_link");
		js_set_str(block, "uri", url);
		js_set_str(block, "name", files_basename(path));
		js_set_str(block, "mimeType", mime->type);
		js_set_int(block, "size", (long long)st->size);
		js_set_str(block, "description", "Download link, valid until the "
		    "time in the text result.");
		json_object_array_add(content, block);
	}
	return res;
}

/* A signed download link for the regular file at path: the tool's result. */
static struct json_object *
share_link(struct tool_ctx *tc, const char *path, const struct file_stat *st)
{
	const struct config	*cfg = tc->cfg;
	struct json_object	*res = NULL;
	struct link_row		 row;
	struct error		 err;
	const struct mime_type	*mime;
	const char		*client;
	char			 expires[32], size[32];
	char			*url = NULL, *text = NULL;
	size_t			 tlen;
	FILE			*f;

	client = tc->who != NULL && tc->who->client_id[0] != '\0' ?
	    tc->who->client_id : "unknown";
	if ((url = links_create(tc->db, cfg->api_key, cfg->public_url, path,
	    (long long)st->size, client, auth_owner(tc->who),
	    (long long)time(NULL), cfg->link_ttl,
	    &row, &err)) == NULL) {
		res = result_error("Cannot share %s: %s", path, err.msg);
		goto out;
	}
	mime = mime_lookup(files_basename(path));
	clock_iso8601(row.expires, expires, sizeof(expires));
	human_size(st->size, size, sizeof(size));

	if ((f = open_memstream(&text, &tlen)) == NULL) {
		res = result_error("out of memory");
		goto out;
	}
	fprintf(f, "Download link for %s (%s, %s), valid until %s "
	    "(%ld seconds):\n%s\n\nGive the user this URL as it is: anyone "
	    "who has it can open or download the file until then.",
	    path, size, mime->type, expires, cfg->link_ttl, url);
	if (fclose(f) != 0) {
		res = result_error("out of memory");
		goto out;
	}
	res = share_result(text, url, path, st, mime, expires, &row);
out:
	free(text);
	free(url);
	return res;
}

static struct json_object *
call(struct tool_ctx *tc, struct json_object *args)
{
	struct json_object	*res;
	struct file_stat	 st;
	struct error		 err;
	char			 path[PATH_ROOM];

	if ((res = share_arg(args, path)) != NULL)
		return res;
	/* The caller's own sandbox, the one door to the engine (sandbox.h). */
	if (tc->sandbox == NULL)
		return result_error("The sandbox is not available to this call.");
	if (sandbox_ensure(tc->sandbox, &err) == -1)
		return result_error("%s", err.msg);
	if ((res = share_follow(tc, path, &st)) != NULL)
		return res;
	if (st.kind == FILE_DIRECTORY)
		return share_folder(tc, args, path);
	if (st.kind != FILE_REGULAR)
		return result_error("%s is not a regular file (a device, socket or "
		    "pipe); only regular files can be shared. Copy its content "
		    "into a file first.", path);
	return share_link(tc, path, &st);
}

const struct tool tool_share_file = {
	.name = "share_file",
	.describe = describe,
	.call = call,
};
