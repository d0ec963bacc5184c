/*
 * links/extern.h: what the parts of /up share (upload.c, upload_page.c).
 */
#ifndef CS_UPLOAD_EXTERN_H
#define CS_UPLOAD_EXTERN_H

#include <stdbool.h>
#include <stddef.h>

struct http_req;
struct uplink_row;

/* One file of a form post, as the answer page names it. */
struct upload_result {
	const char		*sent;		/* the name as sent */
	unsigned long long	 size;
	const char		*stored;	/* the path it was stored at */
	bool			 ok;
};

/*
 * Send a page with status: the upload page for row (res NULL), "no file
 * was chosen" (res not NULL, n 0), or the n results of a form post.
 */
/* b bytes as people read them into buf: "2 GiB", "1.5 MiB", "300 bytes". */
void	upload_page_size(char *buf, size_t n, long long b);
void	upload_page(struct http_req *, const struct uplink_row *, int status,
	    const struct upload_result *res, size_t n);

#endif
