/*
 * fuzz_term_screen.c: libFuzzer target for a terminal's screen frame, the
 * one frame "supervisor term-send" writes from the sandbox container
 * (containers/supervisor/frames.h, 'W'), as lib/sandbox/term.c reads it:
 * supf_feed with the screen limit, then supf_screen_decode and the UTF-8
 * repair of its text, and an 'A' frame (colours) after it through
 * supf_attrs_decode, a 'C' frame (wide cells) through supf_cells_decode,
 * and term-list's 'L' frame through supf_id_next. The input is fed whole
 * and again split at a point taken from its first byte; both feeds must
 * agree, and a decoded screen must keep its bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "base/output.h"
#include "supervisor/frames.h"

struct tally {
	unsigned long	frames, screens, lines, runs;
	int		rows, cols;	/* of the last screen */
};

static int
on_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	struct tally		*t = arg;
	struct supf_screen	 s;
	char			*text;
	size_t			 i, lines = 0;

	t->frames++;
	if (type == 'A') {
		struct supf_run	*runs;
		size_t		 n, k;

		/* As lib/sandbox/term.c: for the screen before it. */
		if (t->rows == 0 || supf_attrs_decode(p, len, t->rows, t->cols,
		    &runs, &n) == -1)
			return 0;
		for (k = 0; k < n; k++)
			if (runs[k].row >= t->rows || runs[k].col +
			    runs[k].len > t->cols || runs[k].len < 1)
				abort();
		free(runs);
		t->runs += n;
		return 0;
	}
	if (type == 'C') {
		struct supf_cell	*cells;
		size_t			 n, k;
		int			 end = 0, row = -1;

		/* As lib/sandbox/term.c: the wide and combined cells. */
		if (t->rows == 0 || supf_cells_decode(p, len, t->rows,
		    t->cols, &cells, &n) == -1)
			return 0;
		for (k = 0; k < n; k++) {
			if (cells[k].row != row)
				end = 0;
			row = cells[k].row;
			if (row >= t->rows || cells[k].col < end ||
			    cells[k].col + cells[k].width > t->cols ||
			    cells[k].width < 1 || cells[k].width > 2 ||
			    cells[k].chars < 1 ||
			    cells[k].chars > SUPF_CELL_CHARS_MAX)
				abort();
			end = cells[k].col + cells[k].width;
		}
		free(cells);
		return 0;
	}
	if (type == 'L') {
		const unsigned char	*q = p;
		char			 id[SUPF_ID_MAX + 1];

		/* As lib/sandbox/term.c: term-list's ids. */
		while (supf_id_next(&q, p + len, id) == 1)
			if (strlen(id) < 1 || strlen(id) > SUPF_ID_MAX ||
			    q > p + len)
				abort();
		return 0;
	}
	if (type != 'W' || supf_screen_decode(p, len, &s) == -1)
		return 0;
	t->rows = s.rows;
	t->cols = s.cols;
	if (s.rows < 1 || s.rows > SUPF_TERM_ROWS_MAX || s.cols < 1 ||
	    s.cols > SUPF_TERM_COLS_MAX || s.cursor_row >= s.rows ||
	    s.scrollback > SUPF_TERM_SB_MAX ||
	    s.text + s.text_len != (const char *)p + len)
		abort();
	for (i = 0; i < s.text_len; i++)
		lines += s.text[i] == '\n';
	if (lines != s.scrollback + (size_t)s.rows)
		abort();
	if ((text = utf8_repair(s.text, s.text_len, NULL)) == NULL)
		abort();
	free(text);
	t->screens++;
	t->lines += lines;
	return 0;
}

static int
feed(const uint8_t *data, size_t size, size_t cut, struct tally *t)
{
	struct supf	f;
	int		rc;

	supf_init(&f, SUPF_SCREEN_MAX);
	rc = supf_feed(&f, data, cut, on_frame, t);
	if (rc == 0)
		rc = supf_feed(&f, data + cut, size - cut, on_frame, t);
	(void)supf_at_boundary(&f);
	supf_free(&f);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tally	whole = { 0, 0, 0, 0, 0, 0 }, split = { 0, 0, 0, 0, 0, 0 };
	size_t		cut = size > 0 ? data[0] % (size + 1) : 0;
	int		a, b;

	a = feed(data, size, size, &whole);
	b = feed(data, size, cut, &split);
	if (a != b || (a == 0 && (whole.frames != split.frames ||
	    whole.screens != split.screens || whole.lines != split.lines ||
	    whole.runs != split.runs)))
		abort();
	return 0;
}
