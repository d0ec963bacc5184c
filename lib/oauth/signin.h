/* signin.h: the sign-in page of /authorize and its error page (signin.c). */
#ifndef CS_SIGNIN_H
#define CS_SIGNIN_H

#include <stdbool.h>

struct http_req;

/* The sign-in page (signin.c). Values are escaped; message may be NULL. */
struct signin {
	const char	*client_name;	/* may be NULL */
	const char	*client_id;
	const char	*redirect_host;	/* host[:port] of the redirect URI */
	const char	*form_origin;	/* origin the form may redirect to (CSP) */
	const char	*request_id;	/* hidden field binding the form */
	const char	*message;	/* an error to show, or NULL */
	bool		 unknown_host;	/* warn: redirect_host is not a known one */
};
void	signin_page(struct http_req *, int status, const struct signin *);

/* An error page for a request that must not be redirected (RFC 6749 §4.1.2.1). */
void	signin_error(struct http_req *, int status, const char *title,
	    const char *detail);

#endif
