/*
 * preview/phead.c: see preview/phead.h.
 */
#include <string.h>
#include <strings.h>

#include "preview/phead.h"

static const char *const hop[] = { "connection", "keep-alive",
	"proxy-connection", "te", "trailer", "upgrade", "transfer-encoding",
	NULL };

static bool
tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || (c != '\0' &&
	    strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* A field value's byte (RFC 9110 5.5: VCHAR, SP, HTAB, obs-text). */
static bool
vchar(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

static bool
eq(const char *a, size_t alen, const char *b)
{
	return alen == strlen(b) && strncasecmp(a, b, alen) == 0;
}

/* The end of the head in buf: the byte after its blank line, or 0. */
static size_t
head_end(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static int
bad(const char **why, const char *msg)
{
	*why = msg;
	return -1;
}

/* The start line, buf[0..n) without its line end. */
static int
start_line(const char *s, size_t n, bool response, struct phead *h,
    const char **why)
{
	const char	*sp1, *sp2;
	size_t		 i;

	if ((sp1 = memchr(s, ' ', n)) == NULL)
		return bad(why, "a start line without a space");
	h->part[0] = s;
	h->part_len[0] = (size_t)(sp1 - s);
	sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - s));
	h->part[1] = sp1 + 1;
	h->part_len[1] = (size_t)((sp2 != NULL ? sp2 : s + n) - (sp1 + 1));
	h->part[2] = sp2 != NULL ? sp2 + 1 : s + n;
	h->part_len[2] = sp2 != NULL ? (size_t)(s + n - (sp2 + 1)) : 0;
	if (response) {
		if (h->part_len[0] != 8 || strncmp(s, "HTTP/1.", 7) != 0 ||
		    (s[7] != '0' && s[7] != '1'))
			return bad(why, "not an HTTP/1.x answer");
		if (h->part_len[1] != 3)
			return bad(why, "a status that is not 3 digits");
		for (i = 0, h->status = 0; i < 3; i++) {
			if (h->part[1][i] < '0' || h->part[1][i] > '9')
				return bad(why, "a status that is not 3 digits");
			h->status = h->status * 10 + (h->part[1][i] - '0');
		}
		if (h->status < 100)
			return bad(why, "a status under 100");
		for (i = 0; i < h->part_len[2]; i++)
			if (!vchar((unsigned char)h->part[2][i]))
				return bad(why, "a control byte in the reason");
		return 0;
	}
	if (sp2 == NULL || h->part_len[0] == 0 || h->part_len[1] == 0)
		return bad(why, "a request line without method, target and "
		    "version");
	for (i = 0; i < h->part_len[0]; i++)
		if (!tchar((unsigned char)s[i]))
			return bad(why, "a bad method");
	for (i = 0; i < h->part_len[1]; i++)
		if ((unsigned char)h->part[1][i] <= 0x20 ||
		    (unsigned char)h->part[1][i] >= 0x7f)
			return bad(why, "a bad request target");
	if (h->part_len[2] != 8 || strncmp(h->part[2], "HTTP/1.", 7) != 0 ||
	    (h->part[2][7] != '0' && h->part[2][7] != '1'))
		return bad(why, "not HTTP/1.x");
	return 0;
}

long
phead_parse(const char *buf, size_t len, bool response, struct phead *h,
    const char **why)
{
	const char	*p, *eol, *end, *colon, *v, *ve, *c;
	size_t		 hl, n, i;

	memset(h, 0, sizeof(*h));
	*why = NULL;
	if (len > PHEAD_MAX)
		len = PHEAD_MAX;
	if ((hl = head_end(buf, len)) == 0) {
		if (len >= PHEAD_MAX)
			return bad(why, "a head longer than 16 KiB");
		/* Nothing but a line end would make it a head: check early. */
		if (memchr(buf, '\0', len) != NULL)
			return bad(why, "a NUL byte");
		return 0;
	}
	end = buf + hl;
	p = buf;
	/* Tolerate one empty line before a request (RFC 9112 2.2). */
	if (!response && p[0] == '\n')
		p++;
	else if (!response && p + 1 < end && p[0] == '\r' && p[1] == '\n')
		p += 2;
	for (i = 0; p < end; i++) {
		const char *line = p;

		eol = memchr(p, '\n', (size_t)(end - p));
		n = (size_t)(eol - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		p = eol + 1;
		if (memchr(line, '\r', n) != NULL || memchr(line, '\0', n) != NULL)
			return bad(why, "a control byte in a line");
		if (i == 0) {
			if (n == 0)
				return bad(why, "an empty start line");
			if (start_line(line, n, response, h, why) == -1)
				return -1;
			continue;
		}
		if (n == 0)
			break;		/* the blank line */
		if (line[0] == ' ' || line[0] == '\t')
			return bad(why, "a folded field line");
		if (h->nfield == PHEAD_FIELDS)
			return bad(why, "more than 100 fields");
		if ((colon = memchr(line, ':', n)) == NULL || colon == line)
			return bad(why, "a field line without a name");
		for (v = line; v < colon; v++)
			if (!tchar((unsigned char)*v))
				return bad(why, "a bad field name");
		v = colon + 1;
		ve = line + n;
		while (v < ve && (*v == ' ' || *v == '\t'))
			v++;
		while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
			ve--;
		for (c = v; c < ve; c++)
			if (!vchar((unsigned char)*c))
				return bad(why, "a control byte in a field");
		h->field[h->nfield].name = line;
		h->field[h->nfield].name_len = (size_t)(colon - line);
		h->field[h->nfield].value = v;
		h->field[h->nfield].value_len = (size_t)(ve - v);
		h->nfield++;
	}
	if (i == 0)
		return bad(why, "no start line");
	return (long)hl;
}

const struct phead_field *
phead_get(const struct phead *h, const char *name)
{
	size_t i;

	for (i = 0; i < h->nfield; i++)
		if (eq(h->field[i].name, h->field[i].name_len, name))
			return &h->field[i];
	return NULL;
}

/* Does the list s[0..n) hold token (comma-separated, any case)? */
static bool
list_has(const char *s, size_t n, const char *token)
{
	const char	*p = s, *e = s + n, *c, *a, *b;

	while (p < e) {
		c = memchr(p, ',', (size_t)(e - p));
		if (c == NULL)
			c = e;
		a = p;
		b = c;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (eq(a, (size_t)(b - a), token))
			return true;
		p = c + 1;
	}
	return false;
}

bool
phead_has_token(const struct phead *h, const char *name, const char *token)
{
	size_t i;

	for (i = 0; i < h->nfield; i++)
		if (eq(h->field[i].name, h->field[i].name_len, name) &&
		    list_has(h->field[i].value, h->field[i].value_len, token))
			return true;
	return false;
}

bool
phead_is_upgrade(const struct phead *h)
{
	return phead_has_token(h, "upgrade", "websocket") &&
	    phead_has_token(h, "connection", "upgrade");
}

/* Is field f hop-by-hop here: a fixed one, or one Connection names? */
static bool
is_hop(const struct phead *h, const struct phead_field *f)
{
	char	name[64];
	int	i;

	for (i = 0; hop[i] != NULL; i++)
		if (eq(f->name, f->name_len, hop[i]))
			return true;
	if (f->name_len >= sizeof(name))
		return false;
	memcpy(name, f->name, f->name_len);
	name[f->name_len] = '\0';
	return phead_has_token(h, "connection", name);
}

/* A bounded writer. */
struct out {
	char	*buf;
	size_t	 n, len;
	bool	 full;
};

static void
put(struct out *o, const char *s, size_t n)
{
	if (o->full || n > o->n - o->len) {
		o->full = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void
puts0(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void
put_field(struct out *o, const struct phead_field *f)
{
	put(o, f->name, f->name_len);
	put(o, ": ", 2);
	put(o, f->value, f->value_len);
	put(o, "\r\n", 2);
}

/* A piece of a ';'-separated value, trimmed. */
struct piece {
	const char	*s;
	size_t		 n;
};

static size_t
pieces(const char *s, size_t n, struct piece *pc, size_t max)
{
	const char	*p = s, *e = s + n, *c, *a, *b;
	size_t		 k = 0;

	while (p <= e && k < max) {
		c = memchr(p, ';', (size_t)(e - p));
		if (c == NULL)
			c = e;
		a = p;
		b = c;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a) {
			pc[k].s = a;
			pc[k].n = (size_t)(b - a);
			k++;
		}
		p = c + 1;
	}
	return k;
}

/* Is piece p the pair "name=..." (or "name" alone)? */
static bool
named(const struct piece *p, const char *name, bool any_case)
{
	size_t	n = strlen(name);
	size_t	i = n;

	if (p->n < n || (any_case ? strncasecmp(p->s, name, n) :
	    strncmp(p->s, name, n)) != 0)
		return false;
	while (i < p->n && (p->s[i] == ' ' || p->s[i] == '\t'))
		i++;
	return i == p->n || p->s[i] == '=';
}

#define PIECES	64

long
phead_cookie(const struct phead *h, const char *name, char *out, size_t n)
{
	struct piece	pc[PIECES];
	const char	*v;
	size_t		i, j, k, l;

	for (i = 0; i < h->nfield; i++) {
		if (!eq(h->field[i].name, h->field[i].name_len, "cookie"))
			continue;
		k = pieces(h->field[i].value, h->field[i].value_len, pc, PIECES);
		for (j = 0; j < k; j++) {
			if (!named(&pc[j], name, false) ||
			    (v = memchr(pc[j].s, '=', pc[j].n)) == NULL)
				continue;
			v++;
			l = pc[j].n - (size_t)(v - pc[j].s);
			if (l >= n)
				return -1;
			memcpy(out, v, l);
			out[l] = '\0';
			return (long)l;
		}
	}
	return -1;
}

long
phead_request(const struct phead *h, const char *target, const char *cookie,
    char *buf, size_t n)
{
	struct out		 o = { buf, n, 0, false };
	struct piece		 pc[PIECES];
	const struct phead_field *f;
	size_t			 i, j, k, kept;
	bool			 up = phead_is_upgrade(h);

	put(&o, h->part[0], h->part_len[0]);
	put(&o, " ", 1);
	if (target != NULL)
		puts0(&o, target);
	else
		put(&o, h->part[1], h->part_len[1]);
	puts0(&o, " HTTP/1.1\r\n");
	for (i = 0; i < h->nfield; i++) {
		f = &h->field[i];
		if (is_hop(h, f))
			continue;
		if (!eq(f->name, f->name_len, "cookie")) {
			put_field(&o, f);
			continue;
		}
		/* The preview's cookie is for the preview program alone. */
		k = pieces(f->value, f->value_len, pc, PIECES);
		for (j = 0, kept = 0; j < k; j++) {
			if (named(&pc[j], cookie, false))
				continue;
			puts0(&o, kept++ == 0 ? "Cookie: " : "; ");
			put(&o, pc[j].s, pc[j].n);
		}
		if (kept > 0)
			put(&o, "\r\n", 2);
	}
	puts0(&o, up ? "Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n" :
	    "Connection: close\r\n\r\n");
	return o.full ? -1 : (long)o.len;
}

/* A Set-Cookie value without its Domain attribute; false: drop the field. */
static bool
set_cookie(struct out *o, const struct phead_field *f, const char *cookie)
{
	struct piece	pc[PIECES];
	size_t		j, k;

	k = pieces(f->value, f->value_len, pc, PIECES);
	if (k == 0 || named(&pc[0], cookie, false))
		return false;
	puts0(o, "Set-Cookie: ");
	put(o, pc[0].s, pc[0].n);
	for (j = 1; j < k; j++) {
		if (named(&pc[j], "domain", true))
			continue;
		put(o, "; ", 2);
		put(o, pc[j].s, pc[j].n);
	}
	put(o, "\r\n", 2);
	return true;
}

long
phead_response(const struct phead *h, const char *cookie, char *buf, size_t n,
    const char **why)
{
	struct out		 o = { buf, n, 0, false };
	const struct phead_field *f, *up;
	size_t			 i, j, lengths = 0;
	bool			 chunked = false;

	*why = NULL;
	for (i = 0; i < h->nfield; i++) {
		f = &h->field[i];
		if (eq(f->name, f->name_len, "content-length")) {
			if (f->value_len == 0 || f->value_len > 18)
				return bad(why, "a bad Content-Length");
			for (j = 0; j < f->value_len; j++)
				if (f->value[j] < '0' || f->value[j] > '9') {
					*why = "a bad Content-Length";
					return -1;
				}
			lengths++;
		}
		if (eq(f->name, f->name_len, "transfer-encoding")) {
			if (chunked || !eq(f->value, f->value_len, "chunked")) {
				*why = "a Transfer-Encoding other than chunked";
				return -1;
			}
			chunked = true;
		}
	}
	if (lengths > 1 || (lengths == 1 && chunked)) {
		*why = "two framings (lengths, or a length and chunked)";
		return -1;
	}
	puts0(&o, "HTTP/1.1 ");
	put(&o, h->part[1], h->part_len[1]);
	put(&o, " ", 1);
	put(&o, h->part[2], h->part_len[2]);
	put(&o, "\r\n", 2);
	for (i = 0; i < h->nfield; i++) {
		f = &h->field[i];
		if (eq(f->name, f->name_len, "transfer-encoding") &&
		    h->status >= 200) {
			put_field(&o, f);	/* the body is passed on as is */
			continue;
		}
		if (is_hop(h, f))
			continue;
		if (eq(f->name, f->name_len, "set-cookie")) {
			set_cookie(&o, f, cookie);
			continue;
		}
		put_field(&o, f);
	}
	if (h->status == 101) {
		if ((up = phead_get(h, "upgrade")) == NULL) {
			*why = "a 101 answer without Upgrade";
			return -1;
		}
		puts0(&o, "Connection: Upgrade\r\n");
		put_field(&o, up);
	} else if (h->status >= 200)
		puts0(&o, "Connection: close\r\n");
	put(&o, "\r\n", 2);
	if (o.full) {
		*why = "a head too long";
		return -1;
	}
	return (long)o.len;
}
