/*
 * multipart.c: see multipart.h.
 *
 * The body is read as if preceded by CRLF, so every delimiter, the first
 * included, is "\r\n--" boundary (RFC 2046 §5.1.1: the CRLF before a
 * delimiter belongs to it). A boundary holds no CR, so within the
 * delimiter CR occurs only first: when a partial match fails, the bytes
 * matched so far are plain data (they are the delimiter's own first bytes,
 * sent from the delimiter text) and only the failing byte may start a new
 * match. One pass, no buffering of data.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "links/multipart.h"

enum state {
	S_PREAMBLE,	/* before the first delimiter */
	S_AFTER,	/* after a delimiter: "--", or padding and CRLF */
	S_AFTER_DASH,	/* one '-' seen after a delimiter */
	S_AFTER_CR,	/* CR seen after a delimiter (and padding) */
	S_HEADERS,	/* a part's header block */
	S_DATA,		/* a part's content */
	S_FINAL,	/* DONE, STOPPED or ERROR */
};

struct multipart {
	struct multipart_cb	 cb;
	char			 delim[4 + MULTIPART_BOUNDARY_MAX + 1];
	size_t			 dlen;
	size_t			 match;		/* delimiter bytes matched */
	enum state		 st;
	enum multipart_rc	 final;
	char			 hdr[MULTIPART_HEADER_MAX];
	size_t			 hlen;
	unsigned		 parts;
	struct multipart_part	 part;
};

/* RFC 2046 bchars: DIGIT ALPHA ' ( ) + _ , - . / : = ? and space (not last). */
static bool
bchar(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || strchr("'()+_,-./:=? ", c) != NULL;
}

int
multipart_boundary(const char *ct, char out[MULTIPART_BOUNDARY_MAX + 1])
{
	const char	*p;
	size_t		 n = 0;

	if (ct == NULL || strncasecmp(ct, "multipart/form-data", 19) != 0)
		return -1;
	p = ct + 19;
	/* Parameters: ; name=value, value a token or a quoted string. */
	while (*p != '\0') {
		const char *name;
		size_t nlen;

		p += strspn(p, " \t");
		if (*p != ';')
			return -1;
		p++;
		p += strspn(p, " \t");
		name = p;
		nlen = strcspn(p, "= \t;");
		p += nlen;
		if (*p != '=')
			return -1;
		p++;
		n = 0;
		if (*p == '"') {
			for (p++; *p != '"'; p++) {
				if (*p == '\0' || *p == '\\' ||
				    n >= MULTIPART_BOUNDARY_MAX)
					return -1;
				out[n++] = *p;
			}
			p++;
		} else {
			for (; *p != '\0' && *p != ';' && *p != ' ' &&
			    *p != '\t'; p++) {
				if (n >= MULTIPART_BOUNDARY_MAX)
					return -1;
				out[n++] = *p;
			}
		}
		out[n] = '\0';
		if (nlen == 8 && strncasecmp(name, "boundary", 8) == 0) {
			size_t i;

			if (n == 0 || out[n - 1] == ' ')
				return -1;
			for (i = 0; i < n; i++)
				if (!bchar(out[i]))
					return -1;
			return 0;
		}
	}
	return -1;
}

struct multipart *
multipart_new(const char *boundary, const struct multipart_cb *cb)
{
	struct multipart	*m;
	size_t			 n = strlen(boundary);

	if (n == 0 || n > MULTIPART_BOUNDARY_MAX)
		return NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return NULL;
	m->cb = *cb;
	memcpy(m->delim, "\r\n--", 4);
	memcpy(m->delim + 4, boundary, n + 1);
	m->dlen = n + 4;
	/* As if the body began with CRLF: the first delimiter needs no CRLF. */
	m->match = 2;
	m->st = S_PREAMBLE;
	return m;
}

void
multipart_free(struct multipart *m)
{
	free(m);
}

static enum multipart_rc
fail(struct multipart *m, struct error *err, const char *msg)
{
	m->st = S_FINAL;
	m->final = MULTIPART_ERROR;
	error_kind(err, ERR_INVALID, "malformed form data: %s", msg);
	return MULTIPART_ERROR;
}

static enum multipart_rc
stop(struct multipart *m)
{
	m->st = S_FINAL;
	m->final = MULTIPART_STOPPED;
	return MULTIPART_STOPPED;
}

/*
 * A Content-Disposition parameter value at p (quoted string or token) into
 * out. Returns the position after it, or NULL when malformed or too long.
 */
static const char *
param_value(const char *p, const char *end, char *out, size_t outsz)
{
	size_t n = 0;

	if (p < end && *p == '"') {
		for (p++; p < end && *p != '"'; p++) {
			if (*p == '\\' && p + 1 < end)
				p++;
			if (n + 1 >= outsz)
				return NULL;
			out[n++] = *p;
		}
		if (p >= end)
			return NULL;
		p++;
	} else {
		for (; p < end && *p != ';' && *p != ' ' && *p != '\t'; p++) {
			if (n + 1 >= outsz)
				return NULL;
			out[n++] = *p;
		}
	}
	out[n] = '\0';
	return p;
}

/* "form-data; name=...; filename=..." */
static int
parse_disposition(struct multipart_part *part, const char *p, const char *end)
{
	char		 scratch[MULTIPART_PARAM_MAX + 1];
	const char	*name;
	size_t		 nlen;

	if ((size_t)(end - p) < 9 || strncasecmp(p, "form-data", 9) != 0)
		return -1;
	p += 9;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		if (*p++ != ';')
			return -1;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		name = p;
		while (p < end && *p != '=' && *p != ';' && *p != ' ')
			p++;
		nlen = (size_t)(p - name);
		if (p == end || *p != '=')
			return -1;
		p++;
		if (nlen == 4 && strncasecmp(name, "name", 4) == 0)
			p = param_value(p, end, part->name, sizeof(part->name));
		else if (nlen == 8 && strncasecmp(name, "filename", 8) == 0) {
			p = param_value(p, end, part->filename,
			    sizeof(part->filename));
			part->has_filename = true;
		} else
			p = param_value(p, end, scratch, sizeof(scratch));
		if (p == NULL)
			return -1;
	}
	return 0;
}

/* The header block m->hdr[0..hlen), lines ending in CRLF, the last empty. */
static int
parse_headers(struct multipart *m)
{
	const char	*p = m->hdr, *end = m->hdr + m->hlen, *eol, *colon, *v;
	bool		 disposition = false;
	size_t		 n;

	memset(&m->part, 0, sizeof(m->part));
	while (p < end) {
		for (eol = p; eol + 1 < end && !(eol[0] == '\r' && eol[1] == '\n');
		    eol++)
			;
		if (eol + 1 >= end)
			return -1;
		if (eol == p)
			break;		/* the empty line */
		if (memchr(p, '\0', (size_t)(eol - p)) != NULL ||
		    (colon = memchr(p, ':', (size_t)(eol - p))) == NULL)
			return -1;
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		n = (size_t)(colon - p);
		if (n == 19 && strncasecmp(p, "Content-Disposition", 19) == 0) {
			if (disposition || parse_disposition(&m->part, v, eol) == -1)
				return -1;
			disposition = true;
		} else if (n == 12 && strncasecmp(p, "Content-Type", 12) == 0) {
			n = (size_t)(eol - v);
			if (n >= sizeof(m->part.content_type))
				n = sizeof(m->part.content_type) - 1;
			memcpy(m->part.content_type, v, n);
			m->part.content_type[n] = '\0';
		}
		p = eol + 2;
	}
	/* RFC 7578 §4.2: each part has a form-data disposition. */
	return disposition ? 0 : -1;
}

/*
 * A partial delimiter match failed at buf[i]: its matched first bytes were
 * data. Bytes of this buffer since run, less the partial match, go first.
 * MULTIPART_MORE, or STOPPED by the callback.
 */
static enum multipart_rc
data_unmatched(struct multipart *m, const char *buf, size_t run, size_t i)
{
	size_t inbuf = i - run, held = m->match;

	if (held > inbuf)
		held = inbuf;
	if (m->st == S_DATA && m->cb.data != NULL) {
		if (inbuf - held > 0 && m->cb.data(m->cb.arg, buf + run,
		    inbuf - held) == -1)
			return stop(m);
		if (m->cb.data(m->cb.arg, m->delim, m->match) == -1)
			return stop(m);
	}
	return MULTIPART_MORE;
}

/*
 * The delimiter ends at buf[i]: the data before its bytes in this buffer,
 * then the part's end. MULTIPART_MORE, or STOPPED by a callback.
 */
static enum multipart_rc
data_delimited(struct multipart *m, const char *buf, size_t run, size_t i)
{
	size_t inbuf = i - run, dbytes;

	dbytes = inbuf + 1 > m->dlen ? inbuf + 1 - m->dlen : 0;
	if (m->st == S_DATA) {
		if (dbytes > 0 && m->cb.data != NULL &&
		    m->cb.data(m->cb.arg, buf + run, dbytes) == -1)
			return stop(m);
		if (m->cb.end != NULL && m->cb.end(m->cb.arg) == -1)
			return stop(m);
	}
	m->match = 0;
	m->st = S_AFTER;
	return MULTIPART_MORE;
}

/*
 * Data (or preamble) from buf[*i] up to the next delimiter or the end of
 * buf, holding back what may be a delimiter. MULTIPART_MORE with *i past
 * what was taken, or STOPPED by a callback.
 */
static enum multipart_rc
feed_data(struct multipart *m, const char *buf, size_t len, size_t *ip)
{
	size_t	i = *ip, run = i, inbuf, held;
	char	c;

	for (; i < len; i++) {
		c = buf[i];
		if (c == m->delim[m->match]) {
			if (++m->match == m->dlen)
				break;
			continue;
		}
		if (m->match > 0) {
			if (data_unmatched(m, buf, run, i) != MULTIPART_MORE)
				return MULTIPART_STOPPED;
			run = i;
			m->match = 0;
		}
		if (c == m->delim[0])
			m->match = 1;
	}
	if (m->match == m->dlen) {
		*ip = i + 1;
		return data_delimited(m, buf, run, i);
	}
	/* End of buffer: hold back what may be a delimiter. */
	*ip = i;
	inbuf = i - run;
	held = m->match;
	if (held > inbuf)
		held = inbuf;
	if (m->st == S_DATA && inbuf - held > 0 && m->cb.data != NULL &&
	    m->cb.data(m->cb.arg, buf + run, inbuf - held) == -1)
		return stop(m);
	return MULTIPART_MORE;
}

/* One byte of the line after a delimiter: "--" ends the body, CRLF starts a part. */
static enum multipart_rc
feed_delimiter_line(struct multipart *m, char c, struct error *err)
{
	switch (m->st) {
	case S_AFTER:
		if (c == '-')
			m->st = S_AFTER_DASH;
		else if (c == '\r')
			m->st = S_AFTER_CR;
		else if (c != ' ' && c != '\t')
			return fail(m, err, "bad delimiter line");
		return MULTIPART_MORE;
	case S_AFTER_DASH:
		if (c != '-')
			return fail(m, err, "bad delimiter line");
		m->st = S_FINAL;
		m->final = MULTIPART_DONE;
		return MULTIPART_DONE;
	default:	/* S_AFTER_CR */
		if (c != '\n')
			return fail(m, err, "bad delimiter line");
		if (++m->parts > MULTIPART_PARTS_MAX)
			return fail(m, err, "too many parts");
		m->st = S_HEADERS;
		m->hlen = 0;
		return MULTIPART_MORE;
	}
}

/* One byte of a part's header block; at its blank line, the part begins. */
static enum multipart_rc
feed_header(struct multipart *m, char c, struct error *err)
{
	if (m->hlen == sizeof(m->hdr))
		return fail(m, err, "part headers too large");
	m->hdr[m->hlen++] = c;
	if (m->hlen == 2 && m->hdr[0] == '\r' && m->hdr[1] == '\n') {
		/* No headers at all: no disposition. */
		return fail(m, err, "a part without headers");
	}
	if (m->hlen >= 4 && memcmp(m->hdr + m->hlen - 4, "\r\n\r\n", 4) == 0) {
		if (parse_headers(m) == -1)
			return fail(m, err, "bad part headers");
		if (m->cb.begin != NULL && m->cb.begin(m->cb.arg, &m->part) == -1)
			return stop(m);
		m->st = S_DATA;
		m->match = 0;
	}
	return MULTIPART_MORE;
}

enum multipart_rc
multipart_feed(struct multipart *m, const char *buf, size_t len,
    struct error *err)
{
	enum multipart_rc	rc;
	size_t			i = 0;

	while (i < len) {
		switch (m->st) {
		case S_FINAL:
			return m->final;
		case S_PREAMBLE:
		case S_DATA:
			rc = feed_data(m, buf, len, &i);
			break;
		case S_AFTER:
		case S_AFTER_DASH:
		case S_AFTER_CR:
			rc = feed_delimiter_line(m, buf[i++], err);
			break;
		default:	/* S_HEADERS */
			rc = feed_header(m, buf[i++], err);
			break;
		}
		if (rc != MULTIPART_MORE)
			return rc;
	}
	return m->st == S_FINAL ? m->final : MULTIPART_MORE;
}

enum multipart_rc
multipart_end(struct multipart *m, struct error *err)
{
	if (m->st == S_FINAL)
		return m->final;
	return fail(m, err, "the body ends before the closing delimiter");
}
