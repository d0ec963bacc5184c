/*
 * mime.h: a file's media type from its name, and how /dl may present it.
 *
 * Shared files are made by whatever runs in the sandbox, so /dl must never
 * let one run script on the server's origin (where the sign-in page lives).
 * Each type is classed:
 *   - MIME_INLINE: shown by the browser without running page script
 *     (images other than SVG, audio, video, PDF, plain text and data);
 *   - MIME_ATTACHMENT: everything else, including every type a browser
 *     would render as a page (HTML, XHTML, SVG, XML, ...) and unknown
 *     extensions (application/octet-stream).
 * /dl adds Content-Security-Policy: sandbox to all but PDF (browsers' PDF
 * viewers refuse to run in a sandboxed document), and nosniff to all.
 */
#ifndef CS_MIME_H
#define CS_MIME_H

#include <stdbool.h>

enum mime_disposition {
	MIME_INLINE,
	MIME_ATTACHMENT,
};

struct mime_type {
	const char		*ext;		/* lowercase, without the dot */
	const char		*type;		/* Content-Type value, with charset for text */
	enum mime_disposition	 disposition;
};

/*
 * The type for a file name, by its last extension compared without case;
 * application/octet-stream (attachment) when unknown. Never NULL; static.
 */
const struct mime_type	*mime_lookup(const char *name);

/* May the browser's PDF viewer need to run (no CSP sandbox)? */
bool			 mime_is_pdf(const struct mime_type *);

#endif
