/*
 * term_screen.c: a terminal's screen as the server reads it: the text of
 * libvterm's cells as UTF-8, the scrollback ring, and the payloads of the
 * 'W' (screen) and 'A' (colours and attributes) frames (frames.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "supervisor/frames.h"
#include "supervisor/term_int.h"

/* UTF-8 of one code point into p (4 bytes); its length. */
static size_t
utf8_put(uint32_t c, char *p)
{
	if (c < 0x80) {
		p[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		p[0] = (char)(0xc0 | c >> 6);
		p[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c >= 0xd800 && c <= 0xdfff)
		c = 0xfffd;
	if (c < 0x10000) {
		p[0] = (char)(0xe0 | c >> 12);
		p[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		p[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c > 0x10ffff)
		return utf8_put(0xfffd, p);
	p[0] = (char)(0xf0 | c >> 18);
	p[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	p[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	p[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * The text of cells as UTF-8 into buf (size at least 4 * 6 * ncells + 1),
 * trailing spaces cut; its length.
 */
static size_t
cells_text(const VTermScreenCell *cells, int ncells, char *buf)
{
	size_t	n = 0, end = 0;
	int	i, k;

	for (i = 0; i < ncells; i++) {
		const VTermScreenCell *c = &cells[i];

		if (c->chars[0] == (uint32_t)-1)
			continue;	/* the right half of a wide character */
		if (c->chars[0] == 0) {
			buf[n++] = ' ';
			continue;
		}
		for (k = 0; k < VTERM_MAX_CHARS_PER_CELL && c->chars[k] != 0;
		    k++)
			n += utf8_put(c->chars[k] < 0x20 ? ' ' : c->chars[k],
			    buf + n);
		end = n;
		if (c->width > 1)
			i += c->width - 1;
	}
	buf[end] = '\0';
	return end;
}

int
term_on_pushline(int cols, const VTermScreenCell *cells, void *user)
{
	struct term	*t = user;
	char		*buf, *line;
	size_t		 n;
	int		 slot;

	if ((buf = malloc((size_t)cols * 4 * VTERM_MAX_CHARS_PER_CELL + 1)) ==
	    NULL)
		return 0;
	n = cells_text(cells, cols, buf);
	if (n > SB_LINE_MAX) {
		n = SB_LINE_MAX;
		while (n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80)
			n--;
		buf[n] = '\0';
	}
	line = realloc(buf, n + 1);
	if (line == NULL)
		line = buf;
	if (t->sb_count == SB_LINES) {
		free(t->sb[t->sb_first]);
		t->sb[t->sb_first] = line;
		t->sb_first = (t->sb_first + 1) % SB_LINES;
	} else {
		slot = (t->sb_first + t->sb_count) % SB_LINES;
		t->sb[slot] = line;
		t->sb_count++;
	}
	return 1;
}

void
term_buf_add(struct buf *b, const void *p, size_t len)
{
	char *n;

	if (b->bad)
		return;
	if (b->len + len > b->cap) {
		size_t cap = b->cap * 2 + len + 256;

		if (cap > SUPF_SCREEN_MAX + 64 || (n = realloc(b->p, cap)) ==
		    NULL) {
			b->bad = true;
			return;
		}
		b->p = n;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
}

/* The screen as a 'W' frame's payload into b (frames.h). */
void
term_screen_payload(struct term *t, uint32_t scrollback, struct buf *b)
{
	VTermScreenCell	*cells;
	VTermPos	 pos, cur;
	unsigned char	 h[SUPF_SCREEN_HEAD];
	char		*line;
	size_t		 n;
	uint32_t	 nsb, i;
	int		 r, c;

	nsb = scrollback < (uint32_t)t->sb_count ? scrollback :
	    (uint32_t)t->sb_count;
	vterm_state_get_cursorpos(vterm_obtain_state(t->vt), &cur);
	memset(h, 0, sizeof(h));
	h[0] = 2;
	if (t->exited) {
		h[1] = WIFEXITED(t->status) ? 1 : 2;
		h[2] = (unsigned char)(WIFEXITED(t->status) ?
		    WEXITSTATUS(t->status) : WTERMSIG(t->status));
	}
	h[4] = (unsigned char)(t->rows >> 8);
	h[5] = (unsigned char)t->rows;
	h[6] = (unsigned char)(t->cols >> 8);
	h[7] = (unsigned char)t->cols;
	h[8] = (unsigned char)(cur.row >> 8);
	h[9] = (unsigned char)cur.row;
	h[10] = (unsigned char)(cur.col >> 8);
	h[11] = (unsigned char)cur.col;
	supf_put32(h + 12, nsb);
	supf_put32(h + 16, t->gen);
	term_buf_add(b, h, sizeof(h));
	for (i = 0; i < nsb; i++) {
		const char *s = t->sb[(t->sb_first + t->sb_count - nsb + i) %
		    SB_LINES];

		term_buf_add(b, s, strlen(s));
		term_buf_add(b, "\n", 1);
	}
	cells = calloc((size_t)t->cols, sizeof(*cells));
	line = malloc((size_t)t->cols * 4 * VTERM_MAX_CHARS_PER_CELL + 1);
	if (cells == NULL || line == NULL) {
		b->bad = true;
		free(cells);
		free(line);
		return;
	}
	for (r = 0; r < t->rows; r++) {
		pos.row = r;
		for (c = 0; c < t->cols; c++) {
			pos.col = c;
			vterm_screen_get_cell(t->scr, pos, &cells[c]);
		}
		n = cells_text(cells, t->cols, line);
		term_buf_add(b, line, n);
		term_buf_add(b, "\n", 1);
	}
	free(cells);
	free(line);
}

/* A cell's colour: SUPF_COLOR_DEFAULT, else 0xRRGGBB. */
static uint32_t
cell_color(const VTermScreen *scr, VTermColor c, bool fg)
{
	if (fg ? VTERM_COLOR_IS_DEFAULT_FG(&c) : VTERM_COLOR_IS_DEFAULT_BG(&c))
		return SUPF_COLOR_DEFAULT;
	vterm_screen_convert_color_to_rgb(scr, &c);
	return (uint32_t)c.rgb.red << 16 | (uint32_t)c.rgb.green << 8 |
	    c.rgb.blue;
}

static int
cell_flags(const VTermScreenCell *c)
{
	return (c->attrs.bold ? SUPF_ATTR_BOLD : 0) |
	    (c->attrs.underline ? SUPF_ATTR_UNDERLINE : 0) |
	    (c->attrs.italic ? SUPF_ATTR_ITALIC : 0) |
	    (c->attrs.reverse ? SUPF_ATTR_REVERSE : 0);
}

static void
put16(unsigned char *p, int v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

/*
 * The screen's colours and attributes as an 'A' payload (frames.h): per
 * row, the runs of cells that are not all default.
 */
void
term_attrs_payload(struct term *t, struct buf *b)
{
	VTermScreenCell	 c;
	VTermPos	 pos;
	unsigned char	 run[SUPF_RUN_LEN], h[2];
	uint32_t	 fg = 0, bg = 0, rfg = 0, rbg = 0;
	size_t		 count_at;
	int		 r, col, start, flags = 0, rflags = 0, nruns;

	put16(h, t->rows);
	term_buf_add(b, h, 2);
	for (r = 0; r < t->rows; r++) {
		count_at = b->len;
		term_buf_add(b, "\0\0", 2);
		nruns = 0;
		start = -1;
		pos.row = r;
		for (col = 0; col <= t->cols; col++) {
			if (col < t->cols) {
				pos.col = col;
				vterm_screen_get_cell(t->scr, pos, &c);
				fg = cell_color(t->scr, c.fg, true);
				bg = cell_color(t->scr, c.bg, false);
				flags = cell_flags(&c);
				if (start >= 0 && fg == rfg && bg == rbg &&
				    flags == rflags)
					continue;
			}
			if (start >= 0 && (rfg != SUPF_COLOR_DEFAULT ||
			    rbg != SUPF_COLOR_DEFAULT || rflags != 0)) {
				put16(run, start);
				put16(run + 2, col - start);
				supf_put32(run + 4, rfg);
				supf_put32(run + 8, rbg);
				run[12] = (unsigned char)rflags;
				term_buf_add(b, run, sizeof(run));
				nruns++;
			}
			if (col < t->cols) {
				start = col;
				rfg = fg;
				rbg = bg;
				rflags = flags;
			}
		}
		if (!b->bad)
			put16((unsigned char *)b->p + count_at, nruns);
	}
}

/*
 * The cells that are not one column and one code point of the text
 * (cells_text) as a 'C' payload (frames.h): wide characters and
 * characters with combining marks, so the page can put every character
 * in its columns.
 */
void
term_cells_payload(struct term *t, struct buf *b)
{
	VTermScreenCell	 c;
	VTermPos	 pos;
	unsigned char	 cell[SUPF_CELL_LEN], h[2];
	size_t		 count_at;
	int		 r, col, k, nchars, width;

	put16(h, t->rows);
	term_buf_add(b, h, 2);
	for (r = 0; r < t->rows; r++) {
		count_at = b->len;
		term_buf_add(b, "\0\0", 2);
		k = 0;
		pos.row = r;
		for (col = 0; col < t->cols; col += width) {
			pos.col = col;
			vterm_screen_get_cell(t->scr, pos, &c);
			width = c.width >= 1 && c.width <= 2 &&
			    col + c.width <= t->cols ? c.width : 1;
			if (c.chars[0] == 0 || c.chars[0] == (uint32_t)-1)
				continue;
			for (nchars = 0; nchars < VTERM_MAX_CHARS_PER_CELL &&
			    nchars < SUPF_CELL_CHARS_MAX && c.chars[nchars] != 0;
			    nchars++)
				;
			if (width == 1 && nchars == 1)
				continue;
			put16(cell, col);
			cell[2] = (unsigned char)width;
			cell[3] = (unsigned char)nchars;
			term_buf_add(b, cell, sizeof(cell));
			k++;
		}
		if (!b->bad)
			put16((unsigned char *)b->p + count_at, k);
	}
}
