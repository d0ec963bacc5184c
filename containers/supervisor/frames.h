/*
 * frames.h: the frames between the supervisor (supervisor.c), which runs
 * the sandbox's commands inside the container, and the server.
 *
 * The supervisor writes frames on its stdout, which the server reads
 * through the engine's exec stream; a run's record file in the container
 * holds the same frames. Everything the server reads here comes from a
 * container whose root user may be hostile: it is parsed by supf_feed
 * alone, with every length checked against a bound before a byte is kept.
 *
 * A frame is an 8-byte header and a payload:
 *
 *   byte 0     type (one of the letters below)
 *   bytes 1-3  zero
 *   bytes 4-7  payload length, big-endian, at most the parser's limit
 *              (SUPF_LIVE_MAX for a live stream, SUPF_RECORD_MAX for a record)
 *
 * Types:
 *   'S'  started: the command is about to start (payload: 0 bytes). Before
 *        it, nothing of the command ran: a stream that ends without it may
 *        be retried.
 *   'o'  stdout bytes as produced (live stream only), 1..SUPF_LIVE_MAX
 *   'e'  stderr bytes as produced (live stream only)
 *   'H'  head of stdout as kept (record), 'T' its tail;
 *   'h'  head of stderr as kept (record), 't' its tail.
 *   'R'  result, SUPF_RESULT_LEN bytes, big-endian:
 *          0  u8   version (1)
 *          1  u8   how: SUPF_EXITED (code = exit status), SUPF_SIGNALLED
 *                  (code = signal), SUPF_DEADLINE (killed at its timeout),
 *                  SUPF_KILLED (killed on request)
 *          2  u8   code
 *          3  u8   0
 *          4  u32  0
 *          8  u64  duration in ms
 *         16  u64  bytes written on stdout
 *         24  u64  bytes written on stderr
 *         32  u64  the container's memory-limit kill count at the start
 *         40  u64  the same at the end
 *        The last frame of a finished run.
 *   'X'  the supervisor could not run the command: a message, 1..1024 bytes.
 *
 * A live stream is S, then o and e frames in order, then R (or X at any
 * point). A record is H, T, h, t (each possibly empty, then left out), R.
 *
 * The channel ("supervisor channel"): one exec per server process whose
 * stdin and stdout carry the frames of many runs at once. A tagged payload
 * starts with the run id: one byte n (1..SUPF_ID_MAX), then n bytes of
 * [A-Za-z0-9_-] (supf_tag_split checks both).
 *
 * Server to supervisor (stdin):
 *   'r'  start a run: tag, u32 timeout in seconds, u32 output limit in
 *        bytes, then the command (1..SUPF_COMMAND_MAX bytes, no NUL).
 *   'k'  kill a run's process group: tag only.
 *   'q'  ask how a run stands: tag only.
 *   'p'  a terminal request: tag (a request id), then the arguments of
 *        "supervisor term-start", "term-send", "term-watch", "term-list"
 *        or "term-close" (term_cmd.c), each ended by NUL; answered like
 *        a run, its answer (a 'W' frame and what follows it, an 'L' or
 *        an 'X' frame) in 'M' frames, then 'E' with term_cmd.c's status.
 * Supervisor to server (stdout):
 *   'V'  ready: u32 channel version (1); the first frame.
 *   'M'  tag, then 1..SUPF_LIVE_MAX bytes of that run's live stream (the
 *        frames above, cut anywhere: the server parses them per run).
 *   'E'  tag, u8 status: that run's live stream ended, and with it the
 *        process that ran it, with this exit status (as "run" exits).
 *   'K'  tag, u8: the answer to 'k' (as "kill" exits).
 *   'Q'  tag, u8: the answer to 'q' (as "collect" exits, without the
 *        record: 0 finished, 3 running, 4 ended without a record, 5 none).
 * The channel carries the fast path only: every run still keeps its
 * record, so a run survives the channel, and the channel the run.
 *
 * The mux ("supervisor mux", mux.c): one exec per preview program and
 * container whose stdin and stdout carry many TCP connections to ports in
 * the container at once, each a stream named by a u32 id the server
 * chooses. Every payload starts with that id (big-endian). Each direction
 * of a stream starts with SUPF_MUX_WINDOW bytes of credit: a side sends
 * 'd' or 'D' bytes only within the credit the other granted, so neither
 * side ever holds more than that per stream, whatever the other does.
 * Server to supervisor (stdin):
 *   'c'  open: id, u16 port[, SUPF_MUX_KEY bytes of key]. Answered by
 *        'N'. With a key and "--lane PATH", the connection is handed over
 *        on the lane (lib/sandbox/portlane.h) once made, and answered 'L';
 *        the server sends no 'd' for such a stream before the answer.
 *   'd'  id, then 1..SUPF_MUX_DATA bytes for the app. They may follow
 *        'c' at once (a request sent without waiting for 'N'): the
 *        supervisor holds them until the connection is made, and drops
 *        them if it is not ('N' '-').
 *   'x'  id: close the stream both ways (the server is done with it).
 *   'g'  id, u32 n: the server took n more of the stream's bytes.
 * Supervisor to server (stdout):
 *   'V'  ready: u32 SUPF_MUX_VERSION; the first frame.
 *   'N'  id, u8: '+' connected, '-' nothing listens on the port, 'L'
 *        connected and handed over on the lane (the supervisor has
 *        forgotten the stream: no frame of it follows).
 *   'D'  id, then 1..SUPF_MUX_DATA bytes from the app.
 *   'Z'  id: the stream ended (the app closed it, or it broke), after its
 *        last 'D'; the supervisor has forgotten it.
 *   'G'  id, u32 n: the app took n more of the server's bytes.
 * Frames for an id the receiver does not know (one just closed) are
 * dropped; bytes past the credit, or credit past SUPF_MUX_WINDOW, are a
 * broken channel.
 *
 * Terminals (term.c): "supervisor term-start", "term-send", "term-watch"
 * and "term-close" each write one frame on stdout, 'X' (a message) or:
 *   'W'  a terminal's screen, SUPF_SCREEN_HEAD bytes, big-endian:
 *          0  u8   version (2; a version 1 head ends at byte 16, with
 *                  no generation)
 *          1  u8   state: 0 the program runs, 1 it exited (code = its
 *                  status), 2 a signal ended it (code = the signal)
 *          2  u8   code
 *          3  u8   0
 *          4  u16  rows        6  u16  columns
 *          8  u16  cursor row 10  u16  cursor column (0-based)
 *         12  u32  lines of scrollback that follow
 *         16  u32  the screen's generation: it changes whenever the
 *                  screen does (term-watch waits for another)
 *        then UTF-8 text: the scrollback lines (oldest first), then one
 *        line per row, each ended by '\n' (no other control character).
 *   'L'  from "term-list": the ids of the terminals whose daemon answers,
 *        each ended by '\n' (at most SUPF_LIVE_MAX bytes).
 *   'A'  after a 'W' when asked ("term-send ... attrs"): the screen's
 *        colours and attributes: u16 rows, then per row u16 n and n runs
 *        of SUPF_RUN_LEN bytes: u16 column, u16 length, u32 foreground,
 *        u32 background (0xRRGGBB, or SUPF_COLOR_DEFAULT), u8 attributes
 *        (SUPF_ATTR_*); runs in order, apart, within the row's columns.
 *   'C'  after an 'A': the cells of the screen that are not one column
 *        and one code point of the row's text (wide characters, which
 *        take two columns, and characters with combining marks): u16
 *        rows, then per row u16 n and n cells of SUPF_CELL_LEN bytes: u16
 *        column, u8 width (1 or 2), u8 code points (1 to
 *        SUPF_CELL_CHARS_MAX) it gives in the row's line of the 'W' text;
 *        cells in order, apart, within the row's columns. Every other
 *        cell is one column and one code point (a blank, a space).
 */
#ifndef CS_SUPERVISOR_FRAMES_H
#define CS_SUPERVISOR_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SUPF_HEADER		8
#define SUPF_LIVE_MAX		(64u * 1024)
#define SUPF_RECORD_MAX		(8u * 1024 * 1024)
#define SUPF_RESULT_LEN		48
#define SUPF_MESSAGE_MAX	1024
#define SUPF_ID_MAX		64
#define SUPF_COMMAND_MAX	(1024u * 1024)
#define SUPF_CHAN_VERSION	1
/* Terminals: the bounds of a screen frame and of a request. */
#define SUPF_SCREEN_HEAD	20
#define SUPF_SCREEN_HEAD_V1	16
#define SUPF_SCREEN_MAX		(4u * 1024 * 1024)
#define SUPF_TERM_ROWS_MAX	200
#define SUPF_TERM_COLS_MAX	500
#define SUPF_TERM_INPUT_MAX	16384
#define SUPF_TERM_WAIT_MAX	60000	/* ms */
#define SUPF_TERM_SB_MAX	1000	/* scrollback lines in a frame */
#define SUPF_RUN_LEN		13
#define SUPF_ATTRS_MAX		(2 + SUPF_TERM_ROWS_MAX * (2 + \
				    SUPF_TERM_COLS_MAX * SUPF_RUN_LEN))
#define SUPF_CELL_LEN		4
#define SUPF_CELL_CHARS_MAX	6	/* code points in one cell (libvterm's) */
#define SUPF_CELLS_MAX		(2 + SUPF_TERM_ROWS_MAX * (2 + \
				    SUPF_TERM_COLS_MAX * SUPF_CELL_LEN))
#define SUPF_COLOR_DEFAULT	0x01000000u
#define SUPF_ATTR_BOLD		1
#define SUPF_ATTR_UNDERLINE	2
#define SUPF_ATTR_ITALIC	4
#define SUPF_ATTR_REVERSE	8
/* The mux's (frames.h, "The mux"). */
#define SUPF_MUX_VERSION	3	/* 2: 'd' may follow 'c' at once; 3: 'L' */
#define SUPF_MUX_KEY		16
#define SUPF_MUX_DATA		(64u * 1024)
#define SUPF_MUX_WINDOW		(512u * 1024)
#define SUPF_MUX_MAX		(4 + SUPF_MUX_DATA)
/* Largest channel payloads: server to supervisor, supervisor to server. */
#define SUPF_CHAN_IN_MAX	(1 + SUPF_ID_MAX + 8 + SUPF_COMMAND_MAX)
#define SUPF_CHAN_OUT_MAX	(1 + SUPF_ID_MAX + SUPF_LIVE_MAX)

enum supf_how {
	SUPF_EXITED = 1,
	SUPF_SIGNALLED = 2,
	SUPF_DEADLINE = 3,
	SUPF_KILLED = 4,
};

struct supf_result {
	enum supf_how		how;
	int			code;
	unsigned long long	duration_ms;
	unsigned long long	out_total, err_total;
	unsigned long long	oom_before, oom_after;
};

/* A push parser: bytes may arrive split anywhere. */
struct supf {
	unsigned char	 hdr[SUPF_HEADER];
	size_t		 hdr_len;
	uint32_t	 max;		/* largest payload accepted */
	int		 type;		/* of the frame being read, 0 between */
	uint32_t	 want;		/* its payload length */
	unsigned char	*buf;		/* its payload so far */
	uint32_t	 cap;		/* bytes allocated at buf */
	uint32_t	 have;
	bool		 bad;
};

/*
 * Called with each whole frame (payload never NULL); return -1 to stop
 * (supf_feed returns -1).
 */
typedef int (*supf_fn)(void *arg, int type, const unsigned char *payload,
	    size_t len);

/* A parser taking payloads of at most max bytes (<= SUPF_RECORD_MAX). */
void	supf_init(struct supf *, uint32_t max);
void	supf_free(struct supf *);
/*
 * Feed len bytes. 0, or -1 once the input is malformed (unknown type,
 * non-zero padding, a length over the limit or wrong for its type), memory
 * ran out, or fn returned -1; the parser then stays failed.
 */
int	supf_feed(struct supf *, const void *buf, size_t len, supf_fn fn,
	    void *arg);
/* No partial frame pending. */
bool	supf_at_boundary(const struct supf *);

/*
 * Split a tagged payload (a channel frame's): the run id into
 * id[SUPF_ID_MAX + 1], NUL-terminated, and what follows it. 0, or -1 when
 * the tag is malformed.
 */
int	supf_tag_split(const unsigned char *p, size_t len, char *id,
	    const unsigned char **rest, size_t *rest_len);
/*
 * Write a tagged frame's header and tag into out (at least SUPF_HEADER +
 * 1 + SUPF_ID_MAX bytes) for type, id and body_len bytes to follow.
 * Returns the bytes written, or 0 when id is not a valid run id.
 */
size_t	supf_tag_header(int type, const char *id, size_t body_len,
	    unsigned char *out);
uint32_t supf_get32(const unsigned char *);
void	supf_put32(unsigned char *, uint32_t);

/* A decoded 'W' payload; text points into it. */
struct supf_screen {
	int		 state;		/* 0 running, 1 exited, 2 signalled */
	int		 code;
	int		 rows, cols, cursor_row, cursor_col;
	unsigned	 scrollback;	/* lines of text before the screen's */
	uint32_t	 gen;		/* the screen's generation (0: version 1) */
	const char	*text;		/* scrollback + rows lines, each '\n'-ended */
	size_t		 text_len;
};

/* One run of an 'A' payload. */
struct supf_run {
	int		row, col, len;
	uint32_t	fg, bg;
	int		attrs;
};

/*
 * Decode an 'A' payload for a screen of rows x cols: *runs (malloc'd, the
 * caller frees; NULL when none) and *nruns. 0, or -1 when invalid.
 */
int	supf_attrs_decode(const unsigned char *p, size_t len, int rows,
	    int cols, struct supf_run **runs, size_t *nruns);

/*
 * The next id of an 'L' payload from *p (up to end) into
 * id[SUPF_ID_MAX + 1], *p moved past it: 1, 0 at the end, -1 when the
 * payload is malformed (an id not '\n'-ended, or not of run id syntax).
 */
int	supf_id_next(const unsigned char **p, const unsigned char *end,
	    char *id);

/* One cell of a 'C' payload. */
struct supf_cell {
	int		row, col, width, chars;
};

/*
 * Decode a 'C' payload for a screen of rows x cols: *cells (malloc'd, the
 * caller frees; NULL when none) and *ncells. 0, or -1 when invalid.
 */
int	supf_cells_decode(const unsigned char *p, size_t len, int rows,
	    int cols, struct supf_cell **cells, size_t *ncells);

/*
 * Decode a 'W' payload, checking every bound (frames.h). 0, or -1 when
 * invalid. The text may still hold invalid UTF-8: the caller repairs it.
 */
int	supf_screen_decode(const unsigned char *p, size_t len,
	    struct supf_screen *);

/* Decode an 'R' payload of SUPF_RESULT_LEN bytes. 0, or -1 when invalid. */
int	supf_result_decode(const unsigned char *p, size_t len,
	    struct supf_result *);
/* Encode one into out[SUPF_RESULT_LEN]. */
void	supf_result_encode(const struct supf_result *, unsigned char *out);
/* A frame header for type and len into out[SUPF_HEADER]. */
void	supf_header(int type, uint32_t len, unsigned char *out);

#endif
