/*
 * sandbox/term.h: terminals in the sandbox, each a PTY and a screen under
 * the supervisor (containers/supervisor/term.c), reached with one engine
 * exec of the supervisor per call, so a terminal outlives the server's
 * workers. What comes back is one hostile frame, parsed within bounds
 * (supf_screen_decode).
 */
#ifndef CS_SANDBOX_TERM_H
#define CS_SANDBOX_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct json_object;
struct sandbox;

/* The bounds of a terminal (containers/supervisor/frames.h). */
#define TERM_ROWS_MAX	200
#define TERM_COLS_MAX	500
#define TERM_INPUT_MAX	16384
#define TERM_WAIT_MAX	60000	/* ms */
#define TERM_SB_MAX	1000	/* scrollback lines */

struct term_run {
	int		 row, col, len;
	unsigned long	 fg, bg;	/* 0xRRGGBB, or TERM_COLOR_DEFAULT */
	int		 attrs;		/* TERM_ATTR_* */
};
struct term_cell {
	int		 row, col;
	int		 width;		/* columns: 1 or 2 */
	int		 chars;		/* code points of the text it gives */
};
#define TERM_COLOR_DEFAULT	0x01000000ul
#define TERM_ATTR_BOLD		1
#define TERM_ATTR_UNDERLINE	2
#define TERM_ATTR_ITALIC	4
#define TERM_ATTR_REVERSE	8

struct term_screen {
	int		 state;		/* 0 runs, 1 exited, 2 ended by a signal */
	int		 code;		/* exit status or signal */
	int		 rows, cols, cursor_row, cursor_col;
	unsigned	 scrollback;	/* lines of text before the screen's */
	unsigned long	 gen;		/* changes whenever the screen does */
	char		*text;		/* valid UTF-8, NUL-terminated */
	size_t		 text_len;
	/* Colours and attributes, when asked (term_send's attrs): runs of
	 * cells that are not all default (supervisor/frames.h 'A'). */
	struct term_run	*runs;
	size_t		 nruns;
	/* With them, the cells that are not one column and one code point
	 * of the text: wide characters, combining marks ('C'). */
	struct term_cell *cells;
	size_t		 ncells;
};

/* A terminal id: letters, digits, '-', '_', 1 to 64 bytes. */
int	term_valid_id(const char *);

/*
 * Start terminal id running `bash -c command` on a cols x rows PTY; it
 * ends idle_s seconds after its last input or output. *out is the first
 * screen, once the program was quiet quiet_ms (at most wait_ms).
 */
int	term_start(struct sandbox *, const char *id, int cols, int rows,
	    long idle_s, const char *command, long quiet_ms, long wait_ms,
	    struct term_screen *out, struct error *);
/* term_send's and term_watch's flags. */
#define TERM_ATTRS	1	/* the colours too */
#define TERM_CHANGED	2	/* answer once the screen changed, not quiet */

/*
 * Type input (len bytes; "\n" is Enter) and then keys (names joined by
 * commas, or NULL), and read the screen with up to scrollback lines of
 * what scrolled off, once the output was quiet quiet_ms (with
 * TERM_CHANGED: as soon as the screen changed after the input) or at
 * wait_ms; with TERM_ATTRS its colours. ERR_NOT_FOUND when the terminal
 * is gone.
 */
int	term_send(struct sandbox *, const char *id, const char *input,
	    size_t len, const char *keys, long quiet_ms, long wait_ms,
	    unsigned scrollback, int flags, struct term_screen *out,
	    struct error *);
/*
 * The screen as soon as it is no longer generation gen (a screen's
 * gen), after a coalescing window of a few ms, or at wait_ms: screens
 * pushed on change, one long-poll each.
 */
int	term_watch(struct sandbox *, const char *id, unsigned long gen,
	    long wait_ms, int flags, struct term_screen *out, struct error *);
/* End the terminal and every process of its session. */
int	term_close(struct sandbox *, const char *id, struct term_screen *out,
	    struct error *);
/*
 * The ids of the terminals alive in the sandbox (their daemon answers),
 * appended to the json-c array ids. 0, or -1.
 */
int	term_list(struct sandbox *, struct json_object *ids, struct error *);
void	term_screen_free(struct term_screen *);

#endif
