/*
 * term_int.h: what the supervisor's terminal daemon (term.c) and its
 * screen rendering (term_screen.c) share: the terminal's state, with its
 * libvterm screen and scrollback ring, and a growing buffer for the
 * payloads of the 'W' and 'A' frames (frames.h).
 */
#ifndef CS_SUPERVISOR_TERM_INT_H
#define CS_SUPERVISOR_TERM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vterm.h>

#define SB_LINES	1000		/* scrollback kept */
#define SB_LINE_MAX	4096		/* bytes of one kept line */

struct term {
	VTerm		*vt;
	VTermScreen	*scr;
	int		 rows, cols;
	int		 master;
	pid_t		 pid;
	bool		 exited;
	int		 status;
	bool		 eof;		/* the PTY has no writer left */
	char		*sb[SB_LINES];	/* the scrollback ring */
	int		 sb_first, sb_count;
	char		*out;		/* bytes for the PTY, not yet written */
	size_t		 out_len;
	long long	 last_activity, last_output;
	int		 client;	/* the request waiting for quiet, or -1 */
	uint32_t	 client_sb;
	bool		 client_attrs;
	long long	 quiet_ms, deadline, asked;
	bool		 fresh;		/* output since the request */
};


/* A text buffer that grows. */
struct buf {
	char	*p;
	size_t	 len, cap;
	bool	 bad;
};

/* Append to b; past SUPF_SCREEN_MAX (or out of memory) b->bad is set. */
void	term_buf_add(struct buf *b, const void *p, size_t len);
/* libvterm's sb_pushline: keep a line that scrolled off in t's ring. */
int	term_on_pushline(int cols, const VTermScreenCell *cells, void *user);
/* The screen and SCROLLBACK lines of the ring as a 'W' payload into b. */
void	term_screen_payload(struct term *t, uint32_t scrollback, struct buf *b);
/* The screen's colours and attributes as an 'A' payload into b. */
void	term_attrs_payload(struct term *t, struct buf *b);

#endif
