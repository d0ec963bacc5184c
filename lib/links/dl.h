/*
 * dl.h: the /dl endpoint, serving a shared file to whoever holds its link.
 *
 * A request is checked from the URL and the database alone (links.h)
 * before Docker is touched; then the file is streamed from the container's
 * archive stream (files.h) with the headers below. Only GET and HEAD.
 *
 *   Content-Type              from the name's extension (mime.h)
 *   Content-Disposition       inline or attachment (mime.h), with filename
 *                             and, for other than plain ASCII, filename*
 *                             (RFC 6266 §4.3, RFC 8187 UTF-8 encoding)
 *   Content-Length, Accept-Ranges: bytes, Content-Range (206, 416)
 *   ETag                      "size-mtime-pathhash", strong (RFC 9110 §8.8.3)
 *   Last-Modified             the file's mtime (RFC 9110 §8.8.2)
 *   Cache-Control             private, no-cache: a browser may keep the file
 *                             but asks again, so revocation and expiry hold
 *   X-Content-Type-Options    nosniff
 *   Content-Security-Policy   sandbox (all but PDF): no script on this origin
 *   Referrer-Policy           no-referrer: the link is a bearer secret
 *
 * Conditional and range requests (RFC 9110 §13, §14): If-None-Match (304),
 * one byte range per request (206; several ranges are answered 200 with the
 * whole file, which §14.2 allows), If-Range by ETag or date, 416 with
 * Content-Range: bytes * /size when no byte of the range exists.
 */
#ifndef CS_DL_H
#define CS_DL_H

#include <stdbool.h>
#include <stddef.h>

struct config;
struct db;
struct http_req;

/* Answer one /dl request. */
void	dl_handle(struct http_req *, const struct config *, struct db *);

/*
 * Answer a GET or HEAD of a folder's link (row->archive set): the folder
 * as one archive, streamed as it is made (dl_archive.c).
 */
struct link_row;
void	dl_archive(struct http_req *, const struct config *, struct db *,
	    const struct link_row *, bool head);

enum dl_range {
	DL_RANGE_NONE,		/* no usable Range: send the whole file */
	DL_RANGE_OK,		/* *first and *len set */
	DL_RANGE_UNSATISFIABLE,	/* 416 */
};

/*
 * Parse a Range header value against a file of size bytes (RFC 9110
 * §14.1.2): "bytes=first-last", "bytes=first-" and "bytes=-suffix". A
 * malformed value, another unit or several ranges give DL_RANGE_NONE.
 */
enum dl_range	dl_range_parse(const char *hdr, unsigned long long size,
		    unsigned long long *first, unsigned long long *len);

/*
 * The Content-Disposition value for a file name (bytes, as in the
 * container): type ("inline" or "attachment"); filename="..." with every
 * byte outside printable ASCII, '"', '\\' and '%' replaced by '_'; and
 * filename*=UTF-8''... (percent-encoded) when that changed anything. A name
 * that is not valid UTF-8 gets only the ASCII fallback. Returns the length,
 * or -1 if it does not fit in outsz. DL_DISPOSITION_MAX holds the value
 * for any name of up to 255 bytes (LINK_NAME_MAX): the name once as is and
 * once percent-encoded.
 */
#define DL_DISPOSITION_MAX	(255 * 4 + 64)
long		dl_disposition(const char *type, const char *name, char *out,
		    size_t outsz);

/* Does an If-None-Match value match etag (weak comparison, "*" matches)? */
bool		dl_etag_match(const char *hdr, const char *etag);

#endif
