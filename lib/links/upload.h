/*
 * upload.h: the /up endpoint, storing files in the sandbox for whoever
 * holds an upload link (uplinks.h; the upload_link tool makes them).
 *
 * Every request is checked from the URL and the database alone
 * (uplinks_check) before Docker is touched.
 *
 *   GET  /up/ID/EXP/SIG/        the upload page: self-contained HTML, a
 *                               strict Content-Security-Policy (nothing but
 *                               its own nonce'd style and script, requests
 *                               to this origin); a plain form without
 *                               JavaScript, a drop zone and a progress bar
 *                               per file with it (one PUT per file)
 *   POST /up/ID/EXP/SIG/        the page's form (multipart/form-data,
 *                               RFC 7578): every file part is spooled to an
 *                               unnamed file in SANDBOX_SPOOL_DIR within the
 *                               link's remaining bytes, then all are stored;
 *                               answered with a page naming what was stored
 *   PUT  /up/ID/EXP/SIG/NAME    one file (curl -T FILE URL/NAME): with a
 *                               Content-Length the body streams straight
 *                               into the container (a tar header needs the
 *                               size first); without one (chunked) it is
 *                               spooled first. 201 with a text line naming
 *                               the stored path.
 *
 * Storing a file: its bytes go in a tar stream to the engine's archive
 * upload (files_put, sandbox/files.h) into a hidden folder
 * DIR/.cs-up-RANDOM, then a script in the container hard-links it to
 * DIR/NAME (link(2) never replaces a name, so an existing file is kept and
 * the new one gets "NAME (2)", "NAME (3)", ...; a link made with overwrite
 * renames over it instead) and removes the hidden folder. So no half file
 * is ever visible under its name, and an interrupted upload leaves nothing
 * (hidden folders older than a day are removed by the next upload).
 *
 * Caps: the link's total (max_bytes) is reserved in the database before a
 * byte is stored; a body over what is left is 413 and nothing is written.
 * Every file sent is a row in the upload table (sql/010-uploads.sql): link,
 * sender's address, name, stored path, size, times, outcome.
 */
#ifndef CS_UPLOAD_H
#define CS_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>

struct config;
struct error;
struct db;
struct http_req;

#define UPLOAD_NAME_MAX		200	/* bytes of a stored name, before " (N)" */
#define UPLOAD_FILES_MAX	100	/* files in one form post */

/* Answer one /up request. */
void	upload_handle(struct http_req *, const struct config *, struct db *);

/*
 * The name a file is stored under, from the name it was sent with
 * (in[0..len); percent-decoded first with form_decode_char when percent is
 * set, as in a URL). Strict decoding: a NUL byte, "%00", or a '%' without
 * two hexadecimal digits after it refuses the name (-1, err says which, with
 * status 400). Then it is sanitised: '/', '\\', other control characters
 * (newline among them) and bytes that are not valid UTF-8 become '_', a
 * leading '.' becomes '_' (no hidden files, never "." or ".."), the result
 * is cut to UPLOAD_NAME_MAX bytes on a character boundary, and an empty
 * name becomes "upload". Writes it NUL-terminated to out (at least
 * UPLOAD_NAME_MAX + 1 bytes) and returns its length.
 */
long	upload_name(const char *in, size_t len, bool percent, char *out,
	    struct error *err);

#endif
