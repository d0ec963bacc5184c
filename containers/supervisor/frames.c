/*
 * frames.c: the supervisor's frames; see frames.h. Built into the
 * supervisor and into the server's library: one parser for both ends.
 */
#include <stdlib.h>
#include <string.h>

#include "supervisor/frames.h"

void
supf_init(struct supf *f, uint32_t max)
{
	memset(f, 0, sizeof(*f));
	f->max = max > SUPF_RECORD_MAX ? SUPF_RECORD_MAX : max;
}

void
supf_free(struct supf *f)
{
	free(f->buf);
	f->buf = NULL;
	f->cap = 0;
}

bool
supf_at_boundary(const struct supf *f)
{
	return !f->bad && f->hdr_len == 0 && f->type == 0;
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static unsigned long long
get64(const unsigned char *p)
{
	return (unsigned long long)get32(p) << 32 | get32(p + 4);
}

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void
put64(unsigned char *p, unsigned long long v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

void
supf_header(int type, uint32_t len, unsigned char *out)
{
	out[0] = (unsigned char)type;
	out[1] = out[2] = out[3] = 0;
	put32(out + 4, len);
}

/* Is len a valid payload length for type? */
static bool
length_ok(const struct supf *f, int type, uint32_t len)
{
	switch (type) {
	case 'S':
		return len == 0;
	case 'R':
		return len == SUPF_RESULT_LEN;
	case 'X':
		return len >= 1 && len <= SUPF_MESSAGE_MAX;
	case 'o': case 'e':
		return len >= 1 && len <= f->max && len <= SUPF_LIVE_MAX;
	case 'H': case 'T': case 'h': case 't':
		return len <= f->max;
	/* The channel's (frames.h). */
	case 'V':
		return len == 4;
	case 'M':
		return len >= 3 && len <= f->max && len <= SUPF_CHAN_OUT_MAX;
	case 'E': case 'K': case 'Q':
		return len >= 3 && len <= 2 + SUPF_ID_MAX;
	case 'k': case 'q':
		return len >= 2 && len <= 1 + SUPF_ID_MAX;
	case 'A':
		return len >= 2 && len <= f->max && len <= SUPF_ATTRS_MAX;
	case 'p':
		return len >= 3 && len <= f->max && len <= SUPF_CHAN_IN_MAX;
	case 'L':
		return len <= f->max && len <= SUPF_LIVE_MAX;
	case 'C':
		return len >= 2 && len <= f->max && len <= SUPF_CELLS_MAX;
	case 'W':
		return len >= SUPF_SCREEN_HEAD_V1 && len <= f->max &&
		    len <= SUPF_SCREEN_MAX;
	case 'r':
		return len >= 11 && len <= f->max && len <= SUPF_CHAN_IN_MAX;
	/* The mux's (frames.h). */
	case 'c':
		return len == 6 || len == 6 + SUPF_MUX_KEY;
	case 'd': case 'D':
		return len >= 5 && len <= f->max && len <= SUPF_MUX_MAX;
	case 'x': case 'Z':
		return len == 4;
	case 'g': case 'G':
		return len == 8;
	case 'N':
		return len == 5;
	default:
		return false;
	}
}

static int
fail(struct supf *f)
{
	f->bad = true;
	supf_free(f);
	return -1;
}

int
supf_feed(struct supf *f, const void *data, size_t len, supf_fn fn, void *arg)
{
	const unsigned char	*p = data;
	size_t			 n;

	if (f->bad)
		return -1;
	while (len > 0 || (f->type != 0 && f->have == f->want)) {
		if (f->type == 0) {
			n = SUPF_HEADER - f->hdr_len;
			if (n > len)
				n = len;
			memcpy(f->hdr + f->hdr_len, p, n);
			f->hdr_len += n;
			p += n;
			len -= n;
			if (f->hdr_len < SUPF_HEADER)
				break;
			f->hdr_len = 0;
			if (f->hdr[1] != 0 || f->hdr[2] != 0 || f->hdr[3] != 0 ||
			    !length_ok(f, f->hdr[0], get32(f->hdr + 4)))
				return fail(f);
			f->type = f->hdr[0];
			f->want = get32(f->hdr + 4);
			f->have = 0;
			/* One buffer, grown to the largest frame seen so far. */
			if (f->want > f->cap) {
				unsigned char *nb = realloc(f->buf, f->want);

				if (nb == NULL)
					return fail(f);
				f->buf = nb;
				f->cap = f->want;
			}
			continue;
		}
		n = f->want - f->have;
		if (n > len)
			n = len;
		if (n > 0) {
			memcpy(f->buf + f->have, p, n);
			f->have += (uint32_t)n;
			p += n;
			len -= n;
		}
		if (f->have < f->want)
			break;
		{
			int type = f->type;

			f->type = 0;
			/* Never a NULL payload, even an empty one. */
			if (fn != NULL && fn(arg, type, f->buf != NULL ? f->buf :
			    (const unsigned char *)"", f->want) == -1)
				return fail(f);
		}
	}
	return 0;
}

uint32_t
supf_get32(const unsigned char *p)
{
	return get32(p);
}

void
supf_put32(unsigned char *p, uint32_t v)
{
	put32(p, v);
}

static bool
id_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}

int
supf_tag_split(const unsigned char *p, size_t len, char *id,
    const unsigned char **rest, size_t *rest_len)
{
	size_t n, i;

	id[0] = '\0';
	if (len < 1 || (n = p[0]) < 1 || n > SUPF_ID_MAX || n > len - 1)
		return -1;
	for (i = 0; i < n; i++) {
		if (!id_char(p[1 + i]))
			return -1;
		id[i] = (char)p[1 + i];
	}
	id[n] = '\0';
	*rest = p + 1 + n;
	*rest_len = len - 1 - n;
	return 0;
}

size_t
supf_tag_header(int type, const char *id, size_t body_len, unsigned char *out)
{
	size_t n = strlen(id), i;

	if (n < 1 || n > SUPF_ID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!id_char((unsigned char)id[i]))
			return 0;
	supf_header(type, (uint32_t)(1 + n + body_len), out);
	out[SUPF_HEADER] = (unsigned char)n;
	memcpy(out + SUPF_HEADER + 1, id, n);
	return SUPF_HEADER + 1 + n;
}

int
supf_result_decode(const unsigned char *p, size_t len, struct supf_result *r)
{
	memset(r, 0, sizeof(*r));
	if (len != SUPF_RESULT_LEN || p[0] != 1 || p[3] != 0 ||
	    get32(p + 4) != 0 || p[1] < SUPF_EXITED || p[1] > SUPF_KILLED)
		return -1;
	r->how = (enum supf_how)p[1];
	r->code = p[2];
	r->duration_ms = get64(p + 8);
	r->out_total = get64(p + 16);
	r->err_total = get64(p + 24);
	r->oom_before = get64(p + 32);
	r->oom_after = get64(p + 40);
	return 0;
}

void
supf_result_encode(const struct supf_result *r, unsigned char *out)
{
	memset(out, 0, SUPF_RESULT_LEN);
	out[0] = 1;
	out[1] = (unsigned char)r->how;
	out[2] = (unsigned char)r->code;
	put64(out + 8, r->duration_ms);
	put64(out + 16, r->out_total);
	put64(out + 24, r->err_total);
	put64(out + 32, r->oom_before);
	put64(out + 40, r->oom_after);
}

int
supf_screen_decode(const unsigned char *p, size_t len, struct supf_screen *s)
{
	const unsigned char	*t, *end;
	size_t			 lines = 0, head;

	head = len > 0 && p[0] == 1 ? SUPF_SCREEN_HEAD_V1 : SUPF_SCREEN_HEAD;
	if (len < head || len > SUPF_SCREEN_MAX || p[0] < 1 || p[0] > 2 ||
	    p[1] > 2 || p[3] != 0)
		return -1;
	memset(s, 0, sizeof(*s));
	if (head == SUPF_SCREEN_HEAD)
		s->gen = get32(p + 16);
	s->state = p[1];
	s->code = p[2];
	s->rows = p[4] << 8 | p[5];
	s->cols = p[6] << 8 | p[7];
	s->cursor_row = p[8] << 8 | p[9];
	s->cursor_col = p[10] << 8 | p[11];
	if (get32(p + 12) > SUPF_TERM_SB_MAX)
		return -1;
	s->scrollback = get32(p + 12);
	if (s->rows < 1 || s->rows > SUPF_TERM_ROWS_MAX || s->cols < 1 ||
	    s->cols > SUPF_TERM_COLS_MAX || s->cursor_row >= s->rows ||
	    s->cursor_col > s->cols || (s->state == 0 && s->code != 0))
		return -1;
	t = p + head;
	end = p + len;
	s->text = (const char *)t;
	s->text_len = (size_t)(end - t);
	for (; t < end; t++) {
		if (*t == '\n')
			lines++;
		else if (*t < 0x20 || *t == 0x7f)
			return -1;
	}
	if (lines != s->scrollback + (size_t)s->rows ||
	    (s->text_len > 0 && end[-1] != '\n'))
		return -1;
	return 0;
}

int
supf_attrs_decode(const unsigned char *p, size_t len, int rows, int cols,
    struct supf_run **runs, size_t *nruns)
{
	struct supf_run	*out = NULL;
	size_t		 o = 2, n, i, cap = 0, count = 0;
	int		 r, end;
	uint32_t	 fg, bg;

	*runs = NULL;
	*nruns = 0;
	if (len < 2 || len > SUPF_ATTRS_MAX || rows < 1 ||
	    rows > SUPF_TERM_ROWS_MAX || cols < 1 || cols > SUPF_TERM_COLS_MAX ||
	    (p[0] << 8 | p[1]) != rows)
		return -1;
	for (r = 0; r < rows; r++) {
		if (len - o < 2)
			goto bad;
		n = (size_t)(p[o] << 8 | p[o + 1]);
		o += 2;
		if (n > (size_t)cols || (len - o) / SUPF_RUN_LEN < n)
			goto bad;
		if (count + n > cap) {
			struct supf_run *nr;

			cap = (count + n) * 2 + 16;
			if ((nr = realloc(out, cap * sizeof(*out))) == NULL)
				goto bad;
			out = nr;
		}
		for (end = 0, i = 0; i < n; i++, o += SUPF_RUN_LEN) {
			struct supf_run *x = &out[count++];

			x->row = r;
			x->col = p[o] << 8 | p[o + 1];
			x->len = p[o + 2] << 8 | p[o + 3];
			fg = get32(p + o + 4);
			bg = get32(p + o + 8);
			x->attrs = p[o + 12];
			if (x->col < end || x->len < 1 || x->col + x->len > cols ||
			    (fg > 0xffffff && fg != SUPF_COLOR_DEFAULT) ||
			    (bg > 0xffffff && bg != SUPF_COLOR_DEFAULT) ||
			    x->attrs > 15)
				goto bad;
			x->fg = fg;
			x->bg = bg;
			end = x->col + x->len;
		}
	}
	if (o != len)
		goto bad;
	*runs = out;
	*nruns = count;
	return 0;
bad:
	free(out);
	return -1;
}

int
supf_cells_decode(const unsigned char *p, size_t len, int rows, int cols,
    struct supf_cell **cells, size_t *ncells)
{
	struct supf_cell	*out = NULL, *c;
	size_t			 o = 2, n, i, count = 0;
	int			 r, end;

	*cells = NULL;
	*ncells = 0;
	if (len < 2 || len > SUPF_CELLS_MAX || rows < 1 ||
	    rows > SUPF_TERM_ROWS_MAX || cols < 1 || cols > SUPF_TERM_COLS_MAX ||
	    (p[0] << 8 | p[1]) != rows)
		return -1;
	/* Every cell fits: len bounds the count before anything is kept. */
	if ((out = calloc(len / SUPF_CELL_LEN + 1, sizeof(*out))) == NULL)
		return -1;
	for (r = 0; r < rows; r++) {
		if (len - o < 2)
			goto bad;
		n = (size_t)(p[o] << 8 | p[o + 1]);
		o += 2;
		if (n > (size_t)cols || (len - o) / SUPF_CELL_LEN < n)
			goto bad;
		for (end = 0, i = 0; i < n; i++, o += SUPF_CELL_LEN) {
			c = &out[count++];
			c->row = r;
			c->col = p[o] << 8 | p[o + 1];
			c->width = p[o + 2];
			c->chars = p[o + 3];
			if (c->col < end || c->width < 1 || c->width > 2 ||
			    c->chars < 1 || c->chars > SUPF_CELL_CHARS_MAX ||
			    c->col + c->width > cols)
				goto bad;
			end = c->col + c->width;
		}
	}
	if (o != len)
		goto bad;
	if (count == 0) {
		free(out);
		out = NULL;
	}
	*cells = out;
	*ncells = count;
	return 0;
bad:
	free(out);
	return -1;
}

int
supf_id_next(const unsigned char **p, const unsigned char *end, char *id)
{
	const unsigned char	*nl;
	size_t			 n;

	if (*p >= end)
		return 0;
	if ((nl = memchr(*p, '\n', (size_t)(end - *p))) == NULL)
		return -1;
	n = (size_t)(nl - *p);
	if (n == 0 || n > SUPF_ID_MAX || strspn((const char *)*p,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
	    < n)
		return -1;
	memcpy(id, *p, n);
	id[n] = '\0';
	*p = nl + 1;
	return 1;
}
