/*
 * httpc_parse.c: the response head and the chunked coding, parsed from
 * bytes alone (no connection), for httpc.c and the fuzz targets; see
 * httpc.h. Every byte is hostile: the limits are httpc.h's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/form.h"
#include "base/httpc.h"

/* Parsing the response head (RFC 9112 §4, §5; RFC 9110 §5.6.2). */

static bool
tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* A field value or reason byte: visible, space, HTAB or obs-text. */
static bool
vchar(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool
name_is(const char *p, size_t n, const char *name)
{
	return strlen(name) == n && strncasecmp(p, name, n) == 0;
}

/* Does the comma-separated list v[0..n) hold the token tok? */
static bool
list_has(const char *v, size_t n, const char *tok)
{
	size_t	i = 0, s, e, tl = strlen(tok);

	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		s = i;
		while (i < n && v[i] != ',')
			i++;
		e = i;
		while (e > s && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - s == tl && strncasecmp(v + s, tok, tl) == 0)
			return true;
	}
	return false;
}

/* One header line p[0..n) (no CRLF) into h: 0, or -1 when malformed. */
static int
header_line(const char *p, size_t n, struct httpc_head *h)
{
	const char		*v;
	size_t			 i = 0, vn;
	unsigned long long	 cl = 0;

	while (i < n && tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i == n || p[i] != ':')
		return -1;
	v = p + i + 1;
	vn = n - i - 1;
	for (size_t k = 0; k < vn; k++)
		if (!vchar((unsigned char)v[k]))
			return -1;
	while (vn > 0 && (*v == ' ' || *v == '\t'))
		v++, vn--;
	while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
		vn--;
	if (name_is(p, i, "Content-Length")) {
		if (h->has_length || vn == 0 || vn > 19)
			return -1;
		for (size_t k = 0; k < vn; k++) {
			if (v[k] < '0' || v[k] > '9')
				return -1;
			cl = cl * 10 + (unsigned long long)(v[k] - '0');
		}
		if (cl > (unsigned long long)INT64_MAX)
			return -1;
		h->has_length = true;
		h->length = cl;
	} else if (name_is(p, i, "Transfer-Encoding")) {
		if (h->chunked || !name_is(v, vn, "chunked"))
			return -1;
		h->chunked = true;
	} else if (name_is(p, i, "Connection")) {
		if (list_has(v, vn, "close"))
			h->close_hdr = true;
	} else if (name_is(p, i, "Content-Type")) {
		h->json = vn >= 16 && strncasecmp(v, "application/json", 16) == 0 &&
		    (vn == 16 || v[16] == ';' || v[16] == ' ');
	}
	return 0;
}

long
httpc_head_parse(const char *buf, size_t len, struct httpc_head *h,
    httpc_header_fn fn, void *arg)
{
	const char	*e;
	size_t		 lim = len < HTTPC_HEAD_MAX ? len : HTTPC_HEAD_MAX;
	size_t		 end, pos, eol, nlines = 0;

	memset(h, 0, sizeof(*h));
	/* The blank line ending the head; no NUL before it. */
	if ((e = memchr(buf, '\0', lim)) != NULL)
		lim = (size_t)(e - buf);
	e = lim >= 4 ? memmem(buf, lim, "\r\n\r\n", 4) : NULL;
	if (e == NULL)
		return len >= HTTPC_HEAD_MAX || lim < len ? -1 : 0;
	end = (size_t)(e - buf) + 4;

	/* status-line = HTTP-version SP status-code SP [ reason-phrase ] */
	eol = (size_t)((const char *)memmem(buf, end, "\r\n", 2) - buf);
	if (eol < 12 || memcmp(buf, "HTTP/1.", 7) != 0 ||
	    (buf[7] != '0' && buf[7] != '1') || buf[8] != ' ')
		return -1;
	for (pos = 9; pos < 12; pos++)
		if (buf[pos] < '0' || buf[pos] > '9')
			return -1;
	if (buf[9] == '0' || (eol > 12 && buf[12] != ' '))
		return -1;
	for (pos = 13; pos < eol; pos++)
		if (!vchar((unsigned char)buf[pos]))
			return -1;
	h->minor = buf[7] - '0';
	h->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');

	/* field-line = field-name ":" OWS field-value OWS, one per CRLF */
	for (pos = eol + 2; pos < end - 2; pos = eol + 2) {
		eol = (size_t)((const char *)memmem(buf + pos, end - pos, "\r\n",
		    2) - buf);
		if (++nlines > HTTPC_HEADERS_MAX ||
		    header_line(buf + pos, eol - pos, h) == -1)
			return -1;
		if (fn != NULL && fn(arg, buf + pos, eol - pos) == -1)
			return -2;
	}
	/* RFC 9112 §6.3: both framings at once is an attack; refuse it. */
	if (h->chunked && h->has_length)
		return -1;
	if (h->minor == 0)
		h->close_hdr = true;
	httpc_framing(h, false);
	return (long)end;
}

void
httpc_framing(struct httpc_head *h, bool head_request)
{
	if (head_request || (h->status >= 100 && h->status < 200) ||
	    h->status == 204 || h->status == 304)
		h->framing = HTTPC_NONE;
	else
		h->framing = h->chunked ? HTTPC_CHUNKED : h->has_length ?
		    HTTPC_LENGTH : HTTPC_CLOSE;
	/* A hijacked or switched connection is never reused. */
	h->close = h->close_hdr || h->framing == HTTPC_CLOSE || h->status == 101;
}

/* The chunked coding (RFC 9112 §7.1). */

enum {
	CH_SIZE, CH_EXT, CH_SIZE_LF, CH_DATA, CH_DATA_CR, CH_DATA_LF,
	CH_TRAILER, CH_TRAILER_LINE, CH_TRAILER_LF, CH_END_LF, CH_DONE
};

void
httpc_chunked_init(struct httpc_chunked *ch)
{
	memset(ch, 0, sizeof(*ch));
	ch->state = CH_SIZE;
}

/* A chunk-size line, its extensions and its LF: 0, or -1 when malformed. */
static int
chunk_size_byte(struct httpc_chunked *ch, unsigned char c)
{
	int	v;

	switch (ch->state) {
	case CH_SIZE:
		if ((v = form_hexval(c)) >= 0) {
			/* At most 15 digits: no overflow, ever. */
			if (ch->left >> 56 != 0)
				return -1;
			ch->left = ch->left << 4 | (unsigned)v;
			ch->digits = true;
		} else if (!ch->digits)
			return -1;
		else if (c == ';' || c == ' ' || c == '\t')
			ch->state = CH_EXT;
		else if (c == '\r')
			ch->state = CH_SIZE_LF;
		else
			return -1;
		return ++ch->line > HTTPC_CHUNK_LINE_MAX ? -1 : 0;
	case CH_EXT:
		if (c == '\r')
			ch->state = CH_SIZE_LF;
		else if (!vchar(c))
			return -1;
		return ++ch->line > HTTPC_CHUNK_LINE_MAX ? -1 : 0;
	default:	/* CH_SIZE_LF */
		if (c != '\n')
			return -1;
		ch->line = 0;
		ch->digits = false;
		ch->state = ch->left == 0 ? CH_TRAILER : CH_DATA;
		return 0;
	}
}

/* The CRLF after a chunk's data: 0, or -1 when malformed. */
static int
chunk_end_byte(struct httpc_chunked *ch, unsigned char c)
{
	if (ch->state == CH_DATA_CR) {
		if (c != '\r')
			return -1;
		ch->state = CH_DATA_LF;
		return 0;
	}
	if (c != '\n')
		return -1;
	ch->state = CH_SIZE;
	return 0;
}

/* A trailer line (skipped, bounded) or its LF: 0, or -1 when malformed. */
static int
chunk_trailer_byte(struct httpc_chunked *ch, unsigned char c)
{
	switch (ch->state) {
	case CH_TRAILER:
		if (c == '\r')
			ch->state = CH_END_LF;
		else if (!vchar(c))
			return -1;
		else
			ch->state = CH_TRAILER_LINE;
		return ++ch->trailer > HTTPC_TRAILER_MAX ? -1 : 0;
	case CH_TRAILER_LINE:
		if (c == '\r')
			ch->state = CH_TRAILER_LF;
		else if (!vchar(c))
			return -1;
		return ++ch->trailer > HTTPC_TRAILER_MAX ? -1 : 0;
	default:	/* CH_TRAILER_LF */
		if (c != '\n')
			return -1;
		ch->state = CH_TRAILER;
		return 0;
	}
}

/* As much of the current chunk's data as buf[i..len) holds: 1. */
static int
chunk_data(struct httpc_chunked *ch, const char *buf, size_t len, size_t i,
    size_t *used, const char **data, size_t *dlen)
{
	size_t	k = len - i;

	if (k > ch->left)
		k = (size_t)ch->left;
	*data = buf + i;
	*dlen = k;
	ch->left -= k;
	i += k;
	if (ch->left == 0)
		ch->state = CH_DATA_CR;
	*used = i;
	return 1;
}

int
httpc_chunked_step(struct httpc_chunked *ch, const char *buf, size_t len,
    size_t *used, const char **data, size_t *dlen)
{
	size_t		i = 0;
	unsigned char	c;
	int		rc;

	*used = 0;
	*data = NULL;
	*dlen = 0;
	while (i < len) {
		c = (unsigned char)buf[i];
		switch (ch->state) {
		case CH_SIZE:
		case CH_EXT:
		case CH_SIZE_LF:
			rc = chunk_size_byte(ch, c);
			break;
		case CH_DATA:
			return chunk_data(ch, buf, len, i, used, data, dlen);
		case CH_DATA_CR:
		case CH_DATA_LF:
			rc = chunk_end_byte(ch, c);
			break;
		case CH_TRAILER:
		case CH_TRAILER_LINE:
		case CH_TRAILER_LF:
			rc = chunk_trailer_byte(ch, c);
			break;
		case CH_END_LF:
			if (c != '\n')
				return -1;
			ch->state = CH_DONE;
			*used = i + 1;
			return 2;
		default:
			*used = i;
			return 2;
		}
		if (rc == -1)
			return -1;
		i++;
	}
	*used = i;
	return ch->state == CH_DONE ? 2 : 0;
}
