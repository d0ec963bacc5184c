/*
 * tools/view_image.c: view_image(path) returns a picture in the sandbox as
 * MCP image content (spec: server/tools "Image Content": base64 data and a
 * mimeType), so the model sees the chart it drew.
 *
 * A PNG, JPEG, GIF or WebP file (image.h, by its signature) of at most
 * SANDBOX_IMAGE_MAX_BYTES whose sides are at most SANDBOX_IMAGE_MAX_DIM
 * pixels is returned as it is, read through the archive stream (files.h)
 * into a buffer of that size. A larger one is scaled down inside the
 * container with ImageMagick (the sandbox image has it), to PNG or, when
 * PNG stays too large or the source is JPEG, to JPEG, halving the budget
 * for sides until it fits; the result says so. Clients drop tool results
 * that are too large, hence the byte budget. Anything else is an isError
 * result suggesting share_file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "links/links.h"
#include "runs/result.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "tools/image.h"
#include "tools/tools.h"

#define SCALE_DEADLINE_S	120

static struct json_object *
describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props;
	char			 desc[1024];

	snprintf(desc, sizeof(desc),
	    "Look at an image file in the sandbox: returns it as an image you "
	    "can see (PNG, JPEG, GIF or WebP), e.g. a chart you just drew, a "
	    "screenshot, a photo the user uploaded. Images larger than %lld "
	    "bytes or %ld pixels on a side are scaled down to fit (the result "
	    "says so). For other files, or to give the user the full-size "
	    "file, use share_file.", cfg->image_max_bytes, cfg->image_max_pixels);
	t = tool_new("view_image", "Look at an image in the sandbox", desc);
	props = json_object_new_object();
	js_set(props, "path", tool_prop("string", "The image file: absolute, or "
	    "relative to /sandbox (e.g. \"out/chart.png\")."));
	js_set(t, "inputSchema", tool_object(props, true, "path", NULL));
	tool_annotate(t, true, false, true, false);
	return t;
}

/* The file's bytes, up to cap; more is a stop. */
struct grab {
	unsigned char	*buf;
	size_t		 len, cap;
	bool		 truncated;
};

static int
grab_begin(void *arg, const struct file_entry *e)
{
	(void)arg;
	(void)e;
	return 0;
}

static int
grab_data(void *arg, const void *p, size_t n)
{
	struct grab *g = arg;

	if (n > g->cap - g->len) {
		memcpy(g->buf + g->len, p, g->cap - g->len);
		g->len = g->cap;
		g->truncated = true;
		return -1;
	}
	memcpy(g->buf + g->len, p, n);
	g->len += n;
	return 0;
}

/*
 * $1 file, $2 longest side, $3 byte budget, $4 output kinds to try.
 * Prints "ok KIND W H" and, on the next line, the result in base64; or one
 * word saying why not.
 */
static const char scale_script[] =
    "f=$1 d=$2 budget=$3 kinds=$4\n"
    "command -v convert >/dev/null 2>&1 || { echo noconvert; exit 0; }\n"
    "t=$(mktemp -d /tmp/.cs-view-XXXXXX) || exit 1\n"
    "trap 'rm -rf \"$t\"' EXIT\n"
    "while [ \"$d\" -ge 16 ]; do\n"
    "  for k in $kinds; do\n"
    "    if [ $k = png ]; then\n"
    "      timeout 60 convert \"$f[0]\" -auto-orient -resize \"${d}x${d}>\" -strip \"png:$t/o\"\n"
    "    else\n"
    "      timeout 60 convert \"$f[0]\" -auto-orient -resize \"${d}x${d}>\" -strip "
    "-background white -flatten -quality 80 \"jpeg:$t/o\"\n"
    "    fi 2>/dev/null || { echo failed; exit 0; }\n"
    "    if [ \"$(stat -c %s \"$t/o\")\" -le \"$budget\" ]; then\n"
    "      echo \"ok $k $(identify -format '%w %h' \"$t/o\" 2>/dev/null)\"\n"
    "      base64 -w0 \"$t/o\"; exit 0\n"
    "    fi\n"
    "  done\n"
    "  d=$((d * 3 / 4))\n"
    "done\n"
    "echo toobig\n";

struct deadline {
	time_t end;
};

static bool
past(void *arg)
{
	const struct deadline *d = arg;

	return time(NULL) >= d->end;
}

/* The image result: one image block, one text block. */
static struct json_object *
image_result(const unsigned char *data, size_t len, enum image_format fmt,
    const char *text)
{
	struct json_object	*res, *content, *block;
	char			*b64;
	size_t			 n, i;

	if ((b64 = malloc(crypto_b64url_len(len) + 4)) == NULL)
		return result_error("out of memory");
	/* MCP image data is standard base64 (RFC 4648 §4), padded. */
	n = crypto_b64url_encode(data, len, b64);
	for (i = 0; i < n; i++)
		if (b64[i] == '-')
			b64[i] = '+';
		else if (b64[i] == '_')
			b64[i] = '/';
	while (n % 4 != 0)
		b64[n++] = '=';
	b64[n] = '\0';
	res = result_new(text, NULL, false);
	if (json_object_object_get_ex(res, "content", &content)) {
		block = json_object_new_object();
		js_set_str(block, "type", "image");
		js_set_strn(block, "data", b64, n);
		js_set_str(block, "mimeType", image_mime(fmt));
		json_object_array_add(content, block);
	}
	free(b64);
	return res;
}

#define PATH_ROOM	(FILES_PATH_MAX + 1)

/* The path argument, normalised into path: NULL, or an error result. */
static struct json_object *
view_arg(struct json_object *args, char path[PATH_ROOM])
{
	const char	*arg, *why = NULL;

	if ((arg = js_str_max(args, "path", FILES_PATH_MAX)) == NULL ||
	    arg[0] == '\0')
		return result_error("path is required: the image file, absolute or "
		    "relative to /sandbox (e.g. \"out/chart.png\").");
	if (tool_path_normalise("/sandbox", arg, path, PATH_ROOM, &why) == -1)
		return result_error("Bad path \"%.300s\": %s.", arg, why);
	return NULL;
}

/* path a regular file, its stat in *st: NULL, or an error result. */
static struct json_object *
view_stat(struct tool_ctx *tc, const char *path, struct file_stat *st)
{
	struct error	err;

	if (files_stat(tc->sandbox, path, st, &err) == -1)
		return err.kind == ERR_NOT_FOUND ? result_error("No file at %s (a "
		    "relative path is taken from /sandbox).", path) :
		    result_error("Cannot read %s: %s", path, err.msg);
	if (st->kind != FILE_REGULAR)
		return result_error("%s is not a regular file%s.", path,
		    st->kind == FILE_SYMLINK ? " but a symbolic link: give the "
		    "file it points to (readlink -f)" : "");
	return NULL;
}

/*
 * Too large: scaled in the container (scale_script) within dl, the image
 * it sends back decoded into g's buffer. The tool's result.
 */
static struct json_object *
view_scaled(struct tool_ctx *tc, const char *path, const struct file_stat *st,
    struct grab *g, struct deadline *dl, enum image_format fmt,
    unsigned long w, unsigned long h)
{
	const struct config	*cfg = tc->cfg;
	struct json_object	*res = NULL;
	struct error		 err;
	enum image_format	 outfmt;
	unsigned long		 ow = 0, oh = 0;
	const char		*argv[5];
	char			 dim[24], budget[24];
	char			 text[FILES_PATH_MAX + 512], *out = NULL, *nl;
	size_t			 outsz;
	long			 n;
	int			 code;

	outsz = (size_t)cfg->image_max_bytes / 3 * 4 + 256;
	if ((out = malloc(outsz)) == NULL) {
		res = result_error("out of memory");
		goto out;
	}
	snprintf(dim, sizeof(dim), "%ld", cfg->image_max_pixels);
	snprintf(budget, sizeof(budget), "%lld", cfg->image_max_bytes);
	argv[0] = path;
	argv[1] = dim;
	argv[2] = budget;
	argv[3] = fmt == IMAGE_JPEG ? "jpeg" : "png jpeg";
	argv[4] = NULL;
	dl->end = time(NULL) + SCALE_DEADLINE_S;
	if (sandbox_script(tc->sandbox, scale_script, argv, out, outsz, past, dl,
	    SCALE_DEADLINE_S, &code, &err) == -1 || code != 0) {
		res = result_error("Cannot scale %s: %s. Use share_file to give the "
		    "user the file.", path, code != 0 ? "the script failed" : err.msg);
		goto out;
	}
	if (strncmp(out, "ok ", 3) != 0 || (nl = strchr(out, '\n')) == NULL) {
		res = result_error("%s is too large to show (%llu bytes) and could "
		    "not be scaled down (%s). Use share_file to give the user the "
		    "file.", path, st->size, strncmp(out, "noconvert", 9) == 0 ?
		    "ImageMagick's convert is not in the sandbox image" :
		    strncmp(out, "toobig", 6) == 0 ? "still too large when small" :
		    "ImageMagick could not read it");
		goto out;
	}
	*nl = '\0';
	outfmt = strncmp(out + 3, "png", 3) == 0 ? IMAGE_PNG : IMAGE_JPEG;
	if ((n = crypto_b64_decode(nl + 1, strlen(nl + 1), g->buf, g->cap)) <= 0 ||
	    image_info(g->buf, (size_t)n, &ow, &oh) != outfmt) {
		res = result_error("Scaling %s gave no usable image. Use share_file "
		    "to give the user the file.", path);
		goto out;
	}
	snprintf(text, sizeof(text), "%s: %s, %lu×%lu pixels, %llu bytes; scaled "
	    "down to %s, %lu×%lu pixels, %ld bytes, to fit the limits (%lld bytes, "
	    "%ld pixels a side). Use share_file for the full-size file.", path,
	    image_name(fmt), w, h, st->size, image_name(outfmt), ow, oh, n,
	    cfg->image_max_bytes, cfg->image_max_pixels);
	res = image_result(g->buf, (size_t)n, outfmt, text);
out:
	free(out);
	return res;
}

static struct json_object *
call(struct tool_ctx *tc, struct json_object *args)
{
	const struct config	*cfg = tc->cfg;
	struct json_object	*res = NULL;
	struct file_stat	 st;
	struct error		 err;
	struct grab		 g;
	struct file_sink	 sink = { grab_begin, grab_data, NULL };
	struct deadline		 dl;
	enum image_format	 fmt;
	unsigned long		 w = 0, h = 0;
	char			 path[PATH_ROOM], text[FILES_PATH_MAX + 512];
	enum stream_end		 rc;

	memset(&g, 0, sizeof(g));
	if ((res = view_arg(args, path)) != NULL)
		return res;
	/* The caller's own sandbox, the one door to the engine (sandbox.h). */
	if (tc->sandbox == NULL)
		return result_error("The sandbox is not available to this call.");
	if (sandbox_ensure(tc->sandbox, &err) == -1)
		return result_error("%s", err.msg);
	if ((res = view_stat(tc, path, &st)) != NULL)
		goto out;

	/* The file, or its first budget bytes. */
	g.cap = (size_t)cfg->image_max_bytes;
	if ((g.buf = malloc(g.cap)) == NULL) {
		res = result_error("out of memory");
		goto out;
	}
	sink.arg = &g;
	rc = files_stream(tc->sandbox, path, &sink, &err);
	if (rc == STREAM_FAILED) {
		res = result_error("Cannot read %s: %s", path, err.msg);
		goto out;
	}
	fmt = image_info(g.buf, g.len, &w, &h);
	if (fmt == IMAGE_UNKNOWN) {
		res = result_error("%s is not a PNG, JPEG, GIF or WebP image. Convert "
		    "it first (e.g. convert in.svg out.png), or give the user a "
		    "download link with share_file.", path);
		goto out;
	}
	if (!g.truncated && st.size <= (unsigned long long)g.cap &&
	    g.len == st.size && w > 0 && h > 0 &&
	    w <= (unsigned long)cfg->image_max_pixels &&
	    h <= (unsigned long)cfg->image_max_pixels) {
		snprintf(text, sizeof(text), "%s: %s, %lu×%lu pixels, %zu bytes.",
		    path, image_name(fmt), w, h, g.len);
		res = image_result(g.buf, g.len, fmt, text);
		goto out;
	}
	res = view_scaled(tc, path, &st, &g, &dl, fmt, w, h);
out:
	free(g.buf);
	return res;
}

const struct tool tool_view_image = {
	.name = "view_image",
	.describe = describe,
	.call = call,
};
