/*
 * dl.c: the /dl endpoint; see dl.h for the headers and rules.
 *
 * Order of work for a request, so that nothing reaches Docker unless the
 * link is good:
 *   1. method (GET, HEAD; else 405);
 *   2. the link, from the URL and the database (links_check: 400, 403,
 *      404, 410);
 *   3. HEAD: the engine's stat of the file; GET: the archive stream, whose
 *      tar header gives the size and mtime the response is decided on
 *      (200, 206, 304, 416) before the first data byte is read, so the
 *      headers always describe the bytes that follow, even if the file
 *      changed since it was shared;
 *   4. the data, passed on as it arrives, skipping to and stopping at the
 *      requested range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/form.h"
#include "base/log.h"
#include "http/http.h"
#include "links/dl.h"
#include "links/links.h"
#include "links/mime.h"
#include "links/termlink.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"
#include "store/db.h"

#define HEADER_MAX	1024	/* Range, If-None-Match, If-Range values looked at */
#define DL_COALESCE_MIN	(64 * 1024)	/* bodies above this are coalesced */

/* One response being decided and sent. */
struct dl {
	struct http_req		*r;
	const struct config	*cfg;
	struct db		*db;
	struct link_row		 row;
	const char		*name;
	const struct mime_type	*mime;
	bool			 head;

	/* Set by respond(): what the body carries. */
	int			 status;
	unsigned long long	 skip;		/* data bytes to drop first */
	unsigned long long	 left;		/* data bytes still to send */
	bool			 complete;	/* every byte of the body was sent */
};

enum dl_range
dl_range_parse(const char *hdr, unsigned long long size,
    unsigned long long *first, unsigned long long *len)
{
	unsigned long long	 a = 0, b = 0;
	const char		*p;
	bool			 has_a = false, has_b = false;
	int			 digits;

	if (hdr == NULL || strlen(hdr) > HEADER_MAX ||
	    strncasecmp(hdr, "bytes=", 6) != 0)
		return DL_RANGE_NONE;
	p = hdr + 6;
	while (*p == ' ' || *p == '\t')
		p++;
	for (digits = 0; *p >= '0' && *p <= '9'; p++, digits++) {
		if (digits >= 19)
			return DL_RANGE_NONE;
		a = a * 10 + (unsigned)(*p - '0');
		has_a = true;
	}
	if (*p++ != '-')
		return DL_RANGE_NONE;
	for (digits = 0; *p >= '0' && *p <= '9'; p++, digits++) {
		if (digits >= 19)
			return DL_RANGE_NONE;
		b = b * 10 + (unsigned)(*p - '0');
		has_b = true;
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '\0')		/* several ranges, or junk */
		return DL_RANGE_NONE;
	if (!has_a && !has_b)
		return DL_RANGE_NONE;
	if (!has_a) {
		/* Suffix: the last b bytes (§14.1.3); "-0" selects nothing. */
		if (b == 0 || size == 0)
			return DL_RANGE_UNSATISFIABLE;
		if (b > size)
			b = size;
		*first = size - b;
		*len = b;
		return DL_RANGE_OK;
	}
	if (has_b && b < a)
		return DL_RANGE_NONE;	/* invalid: ignored (§14.1.1) */
	if (a >= size)
		return DL_RANGE_UNSATISFIABLE;
	if (!has_b || b >= size)
		b = size - 1;
	*first = a;
	*len = b - a + 1;
	return DL_RANGE_OK;
}

static bool
utf8_valid(const unsigned char *s)
{
	while (*s != '\0') {
		unsigned c = *s, n, i, cp;

		if (c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, cp = c & 0x07;
		else
			return false;
		for (i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		s += n + 1;
	}
	return true;
}

long
dl_disposition(const char *type, const char *name, char *out, size_t outsz)
{
	const unsigned char	*p;
	size_t			 o;
	bool			 changed = false;
	int			 n;

	n = snprintf(out, outsz, "%s; filename=\"", type);
	if (n < 0 || (size_t)n >= outsz)
		return -1;
	o = (size_t)n;
	for (p = (const unsigned char *)name; *p != '\0'; p++) {
		char c = (char)*p;

		if (*p < 0x20 || *p > 0x7e || c == '"' || c == '\\' || c == '%') {
			c = '_';
			changed = true;
		}
		if (o + 1 >= outsz)
			return -1;
		out[o++] = c;
	}
	if (o + 2 >= outsz)
		return -1;
	out[o++] = '"';
	out[o] = '\0';
	if (!changed || !utf8_valid((const unsigned char *)name))
		return (long)o;

	/* RFC 8187 §3.2.1: attr-char kept, everything else %XX. */
	n = snprintf(out + o, outsz - o, "; filename*=UTF-8''");
	if (n < 0 || (size_t)n >= outsz - o)
		return -1;
	o += (size_t)n;
	if ((n = form_encode_keep(name, "!#$&+-.^_`|~", out + o, outsz - o)) < 0)
		return -1;
	return (long)(o + (size_t)n);
}

bool
dl_etag_match(const char *hdr, const char *etag)
{
	const char	*p = hdr, *tag;
	size_t		 n, elen;

	if (hdr == NULL || strlen(hdr) > HEADER_MAX)
		return false;
	/* Weak comparison (RFC 9110 §8.8.3.2): ignore W/ on either side. */
	if (strncmp(etag, "W/", 2) == 0)
		etag += 2;
	elen = strlen(etag);
	while (*p != '\0') {
		p += strspn(p, " \t,");
		if (*p == '\0')
			break;
		if (*p == '*')
			return true;
		tag = p;
		if (strncmp(tag, "W/", 2) == 0)
			tag += 2;
		if (*tag != '"')
			return false;
		n = strcspn(tag + 1, "\"");
		if (tag[1 + n] != '"')
			return false;
		if (n + 2 == elen && memcmp(tag, etag, elen) == 0)
			return true;
		p = tag + n + 2;
	}
	return false;
}

static void
http_date(long long t, char *out, size_t outsz)
{
	struct tm	tm;
	time_t		tt = (time_t)t;

	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(out, outsz, "%a, %d %b %Y %H:%M:%S GMT", &tm) == 0)
		snprintf(out, outsz, "Thu, 01 Jan 1970 00:00:00 GMT");
}

/*
 * Decide and start the response for a file of size bytes modified at mtime:
 * 304, 416, 206 or 200, with its headers. Returns 1 when a body follows
 * (d->skip and d->left say which bytes), 0 when the response is complete.
 */
static int
respond(struct dl *d, unsigned long long size, long long mtime)
{
	struct http_req		*r = d->r;
	unsigned long long	 first = 0, len = size;
	char			 etag[80], lastmod[40], buf[1024], hash[CRYPTO_SHA256_HEX];
	char			 disp[DL_DISPOSITION_MAX];
	const char		*range, *ifrange;
	enum dl_range		 rr = DL_RANGE_NONE;

	crypto_sha256_hex(d->row.path, strlen(d->row.path), hash);
	snprintf(etag, sizeof(etag), "\"%llx-%llx-%.12s\"", size,
	    (unsigned long long)mtime, hash);
	http_date(mtime, lastmod, sizeof(lastmod));

	/* A 304 carries the validators and caching a 200 would (§15.4.5). */
	http_header_add(r, "ETag", etag);
	http_header_add(r, "Last-Modified", lastmod);
	if (dl_etag_match(http_header(r, "If-None-Match"), etag)) {
		http_header_add(r, "Cache-Control", "private, no-cache");
		http_status(r, 304);
		http_flush(r);
		return 0;
	}

	range = http_header(r, "Range");
	ifrange = http_header(r, "If-Range");
	if (range != NULL && ifrange != NULL) {
		/* §13.1.5: a strong ETag or the exact Last-Modified date. */
		if (ifrange[0] == '"' ? strcmp(ifrange, etag) != 0 :
		    strcmp(ifrange, lastmod) != 0)
			range = NULL;
	}
	if (range != NULL)
		rr = dl_range_parse(range, size, &first, &len);
	http_header_add(r, "Accept-Ranges", "bytes");
	if (rr == DL_RANGE_UNSATISFIABLE) {
		/* A short text page, with its own no-store and nosniff. */
		snprintf(buf, sizeof(buf), "bytes */%llu", size);
		http_header_add(r, "Content-Range", buf);
		http_send_error(r, 416, "The requested range is not in the file.");
		return 0;
	}

	http_header_add(r, "Cache-Control", "private, no-cache");
	http_header_add(r, "X-Content-Type-Options", "nosniff");
	http_header_add(r, "Referrer-Policy", "no-referrer");
	if (!mime_is_pdf(d->mime))
		http_header_add(r, "Content-Security-Policy", "sandbox");
	http_header_add(r, "Content-Type", d->mime->type);
	if (dl_disposition(d->mime->disposition == MIME_INLINE ? "inline" :
	    "attachment", d->name, disp, sizeof(disp)) >= 0)
		http_header_add(r, "Content-Disposition", disp);
	if (rr == DL_RANGE_OK) {
		d->status = 206;
		snprintf(buf, sizeof(buf), "bytes %llu-%llu/%llu", first,
		    first + len - 1, size);
		http_header_add(r, "Content-Range", buf);
	} else {
		d->status = 200;
		first = 0;
		len = size;
	}
	http_status(r, d->status);
	snprintf(buf, sizeof(buf), "%llu", len);
	http_header_add(r, "Content-Length", buf);
	d->skip = first;
	d->left = len;
	if (d->head || len == 0) {
		http_flush(r);
		d->complete = true;
		return 0;
	}
	links_count_download(d->db, d->row.id, (long long)time(NULL));
	/*
	 * The engine's pieces leave as a few large records (http.h). A small
	 * body still goes out with the headers and the end records in one
	 * write, through libfcgi's buffer.
	 */
	if (len > DL_COALESCE_MIN)
		(void)http_coalesce(r);
	return 1;
}

static int
sink_begin(void *arg, const struct file_entry *e)
{
	struct dl *d = arg;

	/* Nothing more to read when the answer has no body. */
	return respond(d, e->size, e->mtime) == 1 ? 0 : -1;
}

static int
sink_data(void *arg, const void *buf, size_t len)
{
	struct dl	*d = arg;
	const char	*p = buf;
	size_t		 n;

	if (d->skip > 0) {
		n = d->skip < len ? (size_t)d->skip : len;
		d->skip -= n;
		p += n;
		len -= n;
	}
	if (len == 0)
		return 0;
	n = d->left < len ? (size_t)d->left : len;
	if (http_write(d->r, p, n) == -1)
		return -1;	/* the client went away */
	d->left -= n;
	if (d->left == 0) {
		d->complete = true;
		return -1;	/* the range is sent: stop reading */
	}
	return 0;
}

/* A file that is gone, or that is no longer a regular file, is 404. */
static void
fail(struct dl *d, const struct error *err)
{
	char esc[256];

	if (http_started(d->r)) {
		/* Mid-body: the short Content-Length tells the client. */
		log_warn("dl: link %s: %s after the response started", d->row.id,
		    log_escape(esc, sizeof(esc), err->msg, strlen(err->msg)));
		return;
	}
	/* The file's own headers may be set already: an error page has others. */
	http_headers_clear(d->r);
	switch (err->kind) {
	case ERR_NOT_FOUND:
		http_send_error(d->r, 404, "The shared file is no longer there.");
		break;
	case ERR_UNAVAILABLE:
		log_warn("dl: %s", err->msg);
		http_send_error(d->r, 503, "The sandbox cannot be reached now; "
		    "try again later.");
		break;
	default:
		log_warn("dl: link %s: %s", d->row.id,
		    log_escape(esc, sizeof(esc), err->msg, strlen(err->msg)));
		http_send_error(d->r, 502, "The file cannot be read now.");
		break;
	}
}

void
dl_handle(struct http_req *r, const struct config *cfg, struct db *db)
{
	struct dl		 d;
	struct error		 err;
	struct sandbox		*sb = NULL;
	struct file_stat	 st;
	struct file_sink	 sink = { sink_begin, sink_data, NULL };
	const char		*method = http_method(r);
	enum stream_end		 rc;

	memset(&d, 0, sizeof(d));
	error_clear(&err);
	d.r = r;
	d.cfg = cfg;
	d.db = db;
	d.head = strcmp(method, "HEAD") == 0;
	sink.arg = &d;

	/* The pages of a terminal link (termlink.h). */
	if (termlink_route(r, cfg, db))
		return;
	if (!d.head && strcmp(method, "GET") != 0) {
		http_header_add(r, "Allow", "GET, HEAD");
		http_send_error(r, 405, "Only GET and HEAD are allowed here.");
		return;
	}
	if (links_check(d.db, d.cfg->api_key, http_path(r), (long long)time(NULL),
	    &d.row, &err) == -1) {
		http_send_error(r, error_http_status(err.kind), err.msg);
		return;
	}
	if (strcmp(d.row.archive, LINK_KIND_TERMINAL) == 0) {
		termlink_open(r, cfg, &d.row, http_path(r));
		return;
	}
	if (d.row.archive[0] != '\0') {
		/* A folder, as one archive made as it streams. */
		dl_archive(r, cfg, db, &d.row, d.head);
		return;
	}
	d.name = files_basename(d.row.path);
	d.mime = mime_lookup(d.name);

	/* The file is in the sandbox of who shared it (sandboxes.h). */
	if (sandbox_open(d.cfg, d.row.owner, &sb, &err) == -1) {
		err.kind = ERR_UNAVAILABLE;
		fail(&d, &err);
		goto out;
	}
	if (d.head) {
		if (files_stat(sb, d.row.path, &st, &err) == -1)
			fail(&d, &err);
		else if (st.kind != FILE_REGULAR) {
			err.kind = ERR_NOT_FOUND;
			fail(&d, &err);
		} else
			respond(&d, st.size, st.mtime);
		goto out;
	}
	rc = files_stream(sb, d.row.path, &sink, &err);
	if (rc == STREAM_FAILED)
		fail(&d, &err);
	else if (rc == STREAM_STOPPED && !d.complete && !http_gone(r) &&
	    !http_started(r)) {
		/* Stopped before any answer: cannot happen, but answer. */
		http_send_error(r, 500, "The file could not be sent.");
	}
	if (d.complete || rc == STREAM_DONE)
		http_flush(r);
out:
	sandbox_close(sb);
}
