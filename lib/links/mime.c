/*
 * mime.c: see mime.h.
 *
 * The table is kept short and common: what a model in the sandbox tends to
 * make (documents, images, audio, video, text, data and archives). Text
 * types carry charset=utf-8: files made in the sandbox are UTF-8 far more
 * often than not, and a wrong guess only garbles the view, it runs nothing.
 */
#include <string.h>
#include <strings.h>

#include "links/mime.h"

#define I	MIME_INLINE
#define A	MIME_ATTACHMENT
#define UTF8	"; charset=utf-8"

static const struct mime_type types[] = {
	/* documents */
	{ "pdf",	"application/pdf", I },
	{ "doc",	"application/msword", A },
	{ "docx",	"application/vnd.openxmlformats-officedocument.wordprocessingml.document", A },
	{ "xls",	"application/vnd.ms-excel", A },
	{ "xlsx",	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", A },
	{ "ppt",	"application/vnd.ms-powerpoint", A },
	{ "pptx",	"application/vnd.openxmlformats-officedocument.presentationml.presentation", A },
	{ "odt",	"application/vnd.oasis.opendocument.text", A },
	{ "ods",	"application/vnd.oasis.opendocument.spreadsheet", A },
	{ "odp",	"application/vnd.oasis.opendocument.presentation", A },
	{ "rtf",	"application/rtf", A },
	{ "epub",	"application/epub+zip", A },
	{ "ps",		"application/postscript", A },
	{ "eps",	"application/postscript", A },

	/* images; SVG is a document that can hold script */
	{ "png",	"image/png", I },
	{ "jpg",	"image/jpeg", I },
	{ "jpeg",	"image/jpeg", I },
	{ "gif",	"image/gif", I },
	{ "webp",	"image/webp", I },
	{ "avif",	"image/avif", I },
	{ "bmp",	"image/bmp", I },
	{ "ico",	"image/vnd.microsoft.icon", I },
	{ "tif",	"image/tiff", A },
	{ "tiff",	"image/tiff", A },
	{ "heic",	"image/heic", A },
	{ "svg",	"image/svg+xml", A },
	{ "svgz",	"image/svg+xml", A },

	/* audio */
	{ "mp3",	"audio/mpeg", I },
	{ "wav",	"audio/wav", I },
	{ "ogg",	"audio/ogg", I },
	{ "oga",	"audio/ogg", I },
	{ "opus",	"audio/opus", I },
	{ "flac",	"audio/flac", I },
	{ "m4a",	"audio/mp4", I },
	{ "aac",	"audio/aac", I },
	{ "weba",	"audio/webm", I },
	{ "mid",	"audio/midi", A },
	{ "midi",	"audio/midi", A },

	/* video */
	{ "mp4",	"video/mp4", I },
	{ "m4v",	"video/mp4", I },
	{ "webm",	"video/webm", I },
	{ "ogv",	"video/ogg", I },
	{ "mov",	"video/quicktime", I },
	{ "mkv",	"video/x-matroska", A },
	{ "avi",	"video/x-msvideo", A },
	{ "mpeg",	"video/mpeg", A },
	{ "mpg",	"video/mpeg", A },

	/* text and source */
	{ "txt",	"text/plain" UTF8, I },
	{ "text",	"text/plain" UTF8, I },
	{ "log",	"text/plain" UTF8, I },
	{ "md",		"text/markdown" UTF8, I },
	{ "markdown",	"text/markdown" UTF8, I },
	{ "rst",	"text/plain" UTF8, I },
	{ "csv",	"text/csv" UTF8, I },
	{ "tsv",	"text/tab-separated-values" UTF8, I },
	{ "css",	"text/css" UTF8, I },
	{ "py",		"text/x-python" UTF8, I },
	{ "c",		"text/x-c" UTF8, I },
	{ "h",		"text/x-c" UTF8, I },
	{ "sh",		"text/x-shellscript" UTF8, I },
	{ "tex",	"text/x-tex" UTF8, I },
	{ "ics",	"text/calendar" UTF8, A },
	{ "vtt",	"text/vtt" UTF8, I },
	{ "srt",	"text/plain" UTF8, I },
	/* script and page types: never rendered on this origin */
	{ "js",		"text/javascript" UTF8, A },
	{ "mjs",	"text/javascript" UTF8, A },
	{ "html",	"text/html" UTF8, A },
	{ "htm",	"text/html" UTF8, A },
	{ "xhtml",	"application/xhtml+xml", A },
	{ "xml",	"application/xml", A },
	{ "xsl",	"application/xml", A },
	{ "xslt",	"application/xslt+xml", A },
	{ "rss",	"application/rss+xml", A },
	{ "atom",	"application/atom+xml", A },
	{ "mht",	"message/rfc822", A },
	{ "mhtml",	"message/rfc822", A },

	/* data */
	{ "json",	"application/json", I },
	{ "geojson",	"application/geo+json", I },
	{ "jsonl",	"application/jsonl", A },
	{ "ndjson",	"application/x-ndjson", A },
	{ "yaml",	"application/yaml", A },
	{ "yml",	"application/yaml", A },
	{ "toml",	"application/toml", A },
	{ "ipynb",	"application/x-ipynb+json", A },
	{ "parquet",	"application/vnd.apache.parquet", A },
	{ "arrow",	"application/vnd.apache.arrow.file", A },
	{ "feather",	"application/vnd.apache.arrow.file", A },
	{ "sqlite",	"application/vnd.sqlite3", A },
	{ "sqlite3",	"application/vnd.sqlite3", A },
	{ "db",		"application/vnd.sqlite3", A },
	{ "h5",		"application/x-hdf5", A },
	{ "hdf5",	"application/x-hdf5", A },
	{ "npy",	"application/octet-stream", A },
	{ "npz",	"application/zip", A },
	{ "wasm",	"application/wasm", A },

	/* archives */
	{ "zip",	"application/zip", A },
	{ "tar",	"application/x-tar", A },
	{ "gz",		"application/gzip", A },
	{ "tgz",	"application/gzip", A },
	{ "bz2",	"application/x-bzip2", A },
	{ "xz",		"application/x-xz", A },
	{ "zst",	"application/zstd", A },
	{ "7z",		"application/x-7z-compressed", A },
	{ "rar",	"application/vnd.rar", A },
	{ "jar",	"application/java-archive", A },
	{ "whl",	"application/zip", A },
	{ "deb",	"application/vnd.debian.binary-package", A },

	/* fonts */
	{ "woff",	"font/woff", A },
	{ "woff2",	"font/woff2", A },
	{ "ttf",	"font/ttf", A },
	{ "otf",	"font/otf", A },
};

static const struct mime_type unknown = {
	"", "application/octet-stream", MIME_ATTACHMENT
};

const struct mime_type *
mime_lookup(const char *name)
{
	const char	*dot = strrchr(name, '.');
	size_t		 i;

	if (dot == NULL || dot == name || dot[1] == '\0')
		return &unknown;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strcasecmp(dot + 1, types[i].ext) == 0)
			return &types[i];
	return &unknown;
}

bool
mime_is_pdf(const struct mime_type *m)
{
	return strcmp(m->type, "application/pdf") == 0;
}
