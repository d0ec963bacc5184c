/*
 * test_term_cells.c: the supervisor's screen of a terminal as libvterm
 * holds it (containers/supervisor/term_screen.c, linked with Debian's
 * libvterm as the supervisor is): wide characters (two columns) and a
 * combining accent give one code point of text per character, and the
 * 'C' payload says which cells are not one column and one code point, as
 * the terminal link's page needs to put each character in its columns;
 * then the server's decoder of that payload (supf_cells_decode) and what
 * it refuses.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "supervisor/term_screen.c"

/* A bare terminal as the daemon sets one up, without its PTY. */
static void
term_open(struct term *t, int rows, int cols)
{
	VTermScreenCallbacks cbs;

	memset(t, 0, sizeof(*t));
	t->rows = rows;
	t->cols = cols;
	t->vt = vterm_new(rows, cols);
	vterm_set_utf8(t->vt, 1);
	t->scr = vterm_obtain_screen(t->vt);
	memset(&cbs, 0, sizeof(cbs));
	cbs.sb_pushline = term_on_pushline;
	vterm_screen_set_callbacks(t->scr, &cbs, t);
	vterm_screen_reset(t->scr, 1);
}

int
main(void)
{
	static const char	 out[] = "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"
	    "e\xcc\x81|^\r\n........^";
	static struct term	 t;
	struct buf		 b = { NULL, 0, 0, false };
	struct supf_screen	 s;
	struct supf_cell	*c = NULL;
	size_t			 n = 0;
	unsigned char		 bad[64];

	term_open(&t, 3, 20);
	vterm_input_write(t.vt, out, sizeof(out) - 1);

	term_screen_payload(&t, 0, &b);
	CHECK(!b.bad && supf_screen_decode((unsigned char *)b.p, b.len,
	    &s) == 0, "the screen decodes");
	CHECK(s.text_len > 0 && strncmp(s.text, "\xe6\x97\xa5\xe6\x9c\xac"
	    "\xe8\xaa\x9e" "e\xcc\x81|^\n........^\n", s.text_len - 1) == 0,
	    "its text holds each character once, the accent after its e");

	b.len = 0;
	term_cells_payload(&t, &b);
	CHECK(!b.bad && supf_cells_decode((unsigned char *)b.p, b.len, 3, 20,
	    &c, &n) == 0, "the cells decode");
	CHECK(n == 4, "four cells are not one column and one code point");
	CHECK(n == 4 && c[0].row == 0 && c[0].col == 0 && c[0].width == 2 &&
	    c[0].chars == 1 && c[1].col == 2 && c[1].width == 2 &&
	    c[2].col == 4 && c[2].width == 2, "the wide characters: columns "
	    "0, 2 and 4, two columns each");
	CHECK(n == 4 && c[3].col == 6 && c[3].width == 1 && c[3].chars == 2,
	    "the e and its accent: column 6, one column, two code points");
	free(c);
	c = NULL;

	/* What the server refuses: a hostile container wrote it. */
	memcpy(bad, b.p, b.len < sizeof(bad) ? b.len : sizeof(bad));
	CHECK(b.len <= sizeof(bad), "the payload is small");
	if (b.len <= sizeof(bad)) {
		size_t len = b.len;

		CHECK(supf_cells_decode(bad, len, 2, 20, &c, &n) == -1,
		    "another row count is refused");
		CHECK(supf_cells_decode(bad, len, 3, 6, &c, &n) == -1,
		    "a cell past the row's columns is refused");
		CHECK(supf_cells_decode(bad, len - 1, 3, 20, &c, &n) == -1,
		    "a cut payload is refused");
		bad[2 + 2 + 4 + 1] = 1;	/* the second cell at column 1 */
		CHECK(supf_cells_decode(bad, len, 3, 20, &c, &n) == -1,
		    "overlapping cells are refused");
		memcpy(bad, b.p, len);
		bad[2 + 2 + 2] = 3;	/* three columns */
		CHECK(supf_cells_decode(bad, len, 3, 20, &c, &n) == -1,
		    "a width of 3 is refused");
		memcpy(bad, b.p, len);
		bad[2 + 2 + 3] = 0;	/* no code point */
		CHECK(supf_cells_decode(bad, len, 3, 20, &c, &n) == -1,
		    "a cell of no code point is refused");
		memcpy(bad, b.p, len);
		bad[2 + 2 + 3] = SUPF_CELL_CHARS_MAX + 1;
		CHECK(supf_cells_decode(bad, len, 3, 20, &c, &n) == -1,
		    "too many code points in a cell are refused");
	}
	CHECK(supf_cells_decode((const unsigned char *)"\0\1\0\0", 4, 1, 20,
	    &c, &n) == 0 && n == 0 && c == NULL, "a row without such cells");

	free(b.p);
	vterm_free(t.vt);
	return check_status();
}
