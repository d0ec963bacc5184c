/*
 * term_int.h: what the supervisor's terminal daemon (term.c), its
 * commands (term_cmd.c) and its screen rendering (term_screen.c) share:
 * the terminal's state, with its libvterm screen and scrollback ring, the
 * requests on its socket, and a growing buffer for the payloads of the
 * 'W' and 'A' frames (frames.h).
 */
#ifndef CS_SUPERVISOR_TERM_INT_H
#define CS_SUPERVISOR_TERM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vterm.h>

struct sockaddr_un;

#define SB_LINES	1000		/* scrollback kept */
#define SB_LINE_MAX	4096		/* bytes of one kept line */
#define CLIENTS_MAX	8		/* requests waiting at once */
#define TERMS		"/run/code-sandbox/terms"

/*
 * A request on a terminal's socket: REQ_HEAD bytes (u8 op: 'I' type and
 * wait, 'G' watch, 'C' close; u8 flags REQ_*; 2 zero bytes; then u32
 * quiet_ms (for 'G' the generation), wait_ms, scrollback, input length,
 * keys length), then the input, then the keys.
 */
#define REQ_HEAD	24
#define REQ_KEYS_MAX	4096	/* bytes of the keys */
#define REQ_ATTRS	1	/* add the colours ('A') */
#define REQ_CHANGED	2	/* answer once the screen changed */

/*
 * A request waiting for its answer: until the output has been quiet
 * (CL_QUIET), or until the screen is no longer generation gen
 * (CL_CHANGE), or at its deadline.
 */
enum cl_mode { CL_QUIET, CL_CHANGE };
struct client {
	int		 fd;		/* -1: a free slot */
	enum cl_mode	 mode;
	uint32_t	 sb;		/* scrollback lines asked for */
	bool		 attrs;
	bool		 typed;		/* it brought input: wait until written */
	bool		 watch;		/* term-watch: only a change answers */
	long long	 quiet_ms, deadline, since;
	bool		 fresh;		/* output since the request */
	uint32_t	 gen;
	long long	 changed;	/* when gen was first seen to differ */
};

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
	uint32_t	 gen;		/* bumped on every change of the screen */
	struct client	 cl[CLIENTS_MAX];
};


/* A text buffer that grows. */
struct buf {
	char	*p;
	size_t	 len, cap;
	bool	 bad;
};

/* TERMS/ID/sock into sa; -1 when too long. */
int	term_sock_path(const char *id, struct sockaddr_un *sa);
/*
 * The daemon of terminal id (term.c): PTY, child, screen, socket; tells
 * the starter on fd ready (one byte) or why not (a message), then serves.
 */
void	term_daemon(const char *id, const char *dir, int cols, int rows,
	    long idle_s, const char *command, int ready)
	    __attribute__((noreturn));
/* Append to b; past SUPF_SCREEN_MAX (or out of memory) b->bad is set. */
void	term_buf_add(struct buf *b, const void *p, size_t len);
/* libvterm's sb_pushline: keep a line that scrolled off in t's ring. */
int	term_on_pushline(int cols, const VTermScreenCell *cells, void *user);
/* The screen and SCROLLBACK lines of the ring as a 'W' payload into b. */
void	term_screen_payload(struct term *t, uint32_t scrollback, struct buf *b);
/* The screen's colours and attributes as an 'A' payload into b. */
void	term_attrs_payload(struct term *t, struct buf *b);
/* Its wide and combined cells as a 'C' payload into b. */
void	term_cells_payload(struct term *t, struct buf *b);

#endif
