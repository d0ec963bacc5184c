/*
 * url.h: the one parser of absolute http(s) URLs from outside (redirect
 * URIs, Client ID Metadata Document URLs, Origin headers) and of the
 * public URL setting, with the one loopback check.
 *
 * Strict on purpose (RFC 3986 §3 without user info): printable URI
 * characters only, well-formed percent escapes, a host of letters, digits,
 * '.', '-' or a bracketed IPv6 literal, an optional port 1-65535, at most
 * URL_MAX bytes. Percent-decoding is form_decode's (form.h).
 */
#ifndef CS_URL_H
#define CS_URL_H

#include <stdbool.h>
#include <stddef.h>

#define URL_MAX	1024

/* Pointers into the string given to url_split, which must outlive them. */
struct url {
	bool		 https;
	const char	*host;		/* without brackets for IPv6 literals */
	size_t		 hostlen;
	bool		 bracketed;
	const char	*port;		/* digits after ':', or NULL */
	size_t		 portlen;
	const char	*rest;		/* path, query, fragment: from the first '/', '?' or '#' */
};

/* RFC 3986 §2: may c appear in a URI (with '%' for escapes)? */
bool	url_char(unsigned char c);

/*
 * Split an absolute http(s) URL into u. Returns 0, or -1 when it is not
 * one: another scheme, no host, user info, a bad port, a bad escape or a
 * character outside RFC 3986, or longer than URL_MAX.
 */
int	url_split(const char *s, struct url *u);

/*
 * Split an origin (RFC 6454 §6.2: scheme "://" host [":" port], nothing
 * after, as browsers send it in Origin) of an http(s) URL into u. Returns
 * 0, or -1 when s is not one (url_split's rules, and u->rest empty).
 */
int	url_split_origin(const char *s, struct url *u);

/* RFC 8252 §7.3 and §8.3: "localhost", 127.0.0.0/8 literals, [::1]. */
bool	url_host_is_loopback(const struct url *u);

/*
 * Is the host of u (compared without case, without port) one of the
 * space-separated host names in list?
 */
bool	url_host_in_list(const struct url *u, const char *list);

#endif
