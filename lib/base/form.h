/*
 * form.h: application/x-www-form-urlencoded and query strings.
 *
 * A parsed form owns decoded copies of every name and value. Parsing refuses
 * malformed percent escapes, embedded NUL, more than FORM_MAX_FIELDS fields,
 * and repeated names (OAuth: RFC 6749 §3.1 parameters must not repeat).
 */
#ifndef CS_FORM_H
#define CS_FORM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define FORM_MAX_FIELDS	64

struct form;

/* Parse s[0..len). Returns a new form or NULL with err set. */
struct form	*form_parse(const char *s, size_t len, struct error *err);
void		 form_free(struct form *);
/* Decoded value of name, or NULL if absent. */
const char	*form_get(const struct form *, const char *name);

/*
 * Percent-encode s for a URL query component (RFC 3986 unreserved kept)
 * into out (size outsz). Returns the length, or -1 if it does not fit.
 */
long		 form_encode(const char *s, char *out, size_t outsz);
/* The same, keeping letters, digits and the characters of keep. */
long		 form_encode_keep(const char *s, const char *keep, char *out,
		    size_t outsz);

/* The value of one hexadecimal digit c, or -1. */
int		 form_hexval(int c);

/*
 * The one percent-decoder (RFC 3986 §2.1), for forms, query strings, URLs
 * and upload names: the character of s[0..len) at *i, which must be below
 * len: a '%' and two hexadecimal digits, '+' as a space when
 * plus_is_space, or the byte itself. Moves *i past it. Returns the byte
 * (0 to 255; 0 for "%00" or a NUL byte, which callers refuse), or -1 on a
 * malformed escape ('%' without two hexadecimal digits after it).
 */
int		 form_decode_char(const char *s, size_t len, size_t *i,
		    bool plus_is_space);

/*
 * Percent-decode s[0..len) into out (size outsz), NUL-terminated, with
 * form_decode_char. Returns the length, or -1 on a bad escape, a NUL or a
 * result that does not fit.
 */
long		 form_decode(const char *s, size_t len, bool plus_is_space,
		    char *out, size_t outsz);

/*
 * The value of cookie name in a Cookie header (RFC 6265 §5.4: "name=value"
 * pairs separated by "; "), copied into out (size outsz). Returns 0, or -1
 * when absent, when the header is over 8 KiB or the value does not fit.
 */
int		 form_cookie(const char *header, const char *name, char *out,
		    size_t outsz);

#endif
