/*
 * multipart.h: a push parser for multipart/form-data request bodies
 * (RFC 7578, on the syntax of RFC 2046 §5.1.1), for the upload page's form.
 *
 * Feed it the body in pieces of any size (down to one byte); it reports
 * each part's headers, then its data as it arrives, then the part's end.
 * It holds at most one part's header block (MULTIPART_HEADER_MAX) and the
 * boundary, so a body of any size is parsed in constant memory. Data is
 * never copied: the callbacks get pointers into the fed buffer (or into
 * the delimiter text, for bytes that looked like a delimiter but were not).
 *
 * Only what a form needs is read from a part's headers: the name and
 * filename parameters of Content-Disposition (quoted strings with
 * backslash escapes, or tokens; filename* is ignored, as RFC 7578 §4.2
 * says senders must not use it) and Content-Type. Anything malformed is
 * an error; the caller answers 400.
 */
#ifndef CS_MULTIPART_H
#define CS_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define MULTIPART_BOUNDARY_MAX	70	/* RFC 2046 §5.1.1 */
#define MULTIPART_HEADER_MAX	8192	/* one part's header block */
#define MULTIPART_PARAM_MAX	1024	/* a name or filename, decoded */
#define MULTIPART_PARTS_MAX	1000	/* parts in one body */

struct multipart_part {
	char	name[MULTIPART_PARAM_MAX + 1];		/* "" if none */
	char	filename[MULTIPART_PARAM_MAX + 1];	/* "" if none */
	bool	has_filename;				/* a file field */
	char	content_type[128];			/* "" if none */
};

/*
 * begin is called at each part's start, data with its content in pieces
 * (never len 0), end at its end. Any may return -1 to stop the parse
 * (multipart_feed then returns MULTIPART_STOPPED). Members may be NULL.
 */
struct multipart_cb {
	int	(*begin)(void *arg, const struct multipart_part *);
	int	(*data)(void *arg, const char *buf, size_t len);
	int	(*end)(void *arg);
	void	*arg;
};

enum multipart_rc {
	MULTIPART_ERROR = -1,
	MULTIPART_MORE = 0,	/* feed more */
	MULTIPART_DONE = 1,	/* the closing delimiter was seen */
	MULTIPART_STOPPED = 2,	/* a callback returned -1 */
};

/*
 * The boundary parameter of a Content-Type value
 * ("multipart/form-data; boundary=..." quoted or not) into out. Returns 0,
 * or -1 when the type is not multipart/form-data or the boundary is
 * missing, empty, longer than 70 or holds characters RFC 2046 does not
 * allow.
 */
int	multipart_boundary(const char *content_type,
	    char out[MULTIPART_BOUNDARY_MAX + 1]);

struct multipart;

/* A parser for boundary (as multipart_boundary gives it). NULL if out of memory. */
struct multipart	*multipart_new(const char *boundary, const struct multipart_cb *);
void			 multipart_free(struct multipart *);

/*
 * Feed the next len bytes. Returns MULTIPART_MORE while more is needed, or
 * a final state; once final, later calls return it again. Bytes after the
 * closing delimiter (the epilogue) are ignored.
 */
enum multipart_rc	 multipart_feed(struct multipart *, const char *buf,
			    size_t len, struct error *);
/* At the end of the body: MULTIPART_DONE, or MULTIPART_ERROR if it was cut. */
enum multipart_rc	 multipart_end(struct multipart *, struct error *);

#endif
