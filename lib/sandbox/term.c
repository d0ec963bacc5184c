/*
 * sandbox/term.c: terminals under the supervisor; see sandbox/term.h and
 * containers/supervisor/term.c. Each call runs the supervisor's term-start,
 * term-send or term-close, over the channel (a 'p' frame) or, without one,
 * in an engine exec of its own; its stdout is one frame, 'W' (a screen,
 * then 'A', its colours, when asked) or 'X' (why not). Those bytes come
 * from a container whose root may be hostile: at most TERM_OUT_MAX bytes
 * are kept, the frames are parsed by supf_feed, supf_screen_decode and
 * supf_attrs_decode, and every call has a deadline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/output.h"
#include "engine/docker.h"
#include "base/crypto.h"
#include "sandbox/chan.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"
#include "sandbox/sup.h"
#include "sandbox/term.h"
#include "supervisor/frames.h"

#if TERM_ROWS_MAX != SUPF_TERM_ROWS_MAX || TERM_COLS_MAX != SUPF_TERM_COLS_MAX || \
    TERM_INPUT_MAX != SUPF_TERM_INPUT_MAX || TERM_WAIT_MAX != SUPF_TERM_WAIT_MAX || \
    TERM_SB_MAX != SUPF_TERM_SB_MAX
#error "sandbox/term.h and supervisor/frames.h disagree"
#endif
#if TERM_COLOR_DEFAULT != SUPF_COLOR_DEFAULT || TERM_ATTR_REVERSE != SUPF_ATTR_REVERSE
#error "sandbox/term.h and supervisor/frames.h disagree on colours"
#endif

#define TERM_SLACK_MS	10000	/* beyond the wait: the exec's own time */
/* The most a request's stdout may hold: a screen, its colours, its cells. */
#define TERM_OUT_MAX	(3 * SUPF_HEADER + SUPF_SCREEN_MAX + SUPF_ATTRS_MAX + \
			    SUPF_CELLS_MAX)

struct term_out {
	unsigned char	*buf;
	size_t		 len, cap;
	bool		 over;
	long long	 deadline_ms;
};

static void
term_output(void *arg, int stream, const char *p, size_t len)
{
	struct term_out	*o = arg;
	unsigned char	*n;
	size_t		 cap;

	if (stream != 1 || o->over)
		return;
	if (o->len + len > TERM_OUT_MAX) {
		o->over = true;
		return;
	}
	if (o->len + len > o->cap) {
		cap = o->cap * 2 + len + 4096;
		if (cap > TERM_OUT_MAX)
			cap = TERM_OUT_MAX;
		if ((n = realloc(o->buf, cap)) == NULL) {
			o->over = true;
			return;
		}
		o->buf = n;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, p, len);
	o->len += len;
}

static int
term_tick(void *arg)
{
	struct term_out *o = arg;

	return clock_ms() >= o->deadline_ms;
}

struct term_parse {
	struct term_screen	*out;
	struct json_object	*list;		/* term-list's ids, when asked */
	char			 msg[SUPF_MESSAGE_MAX + 1];
	int			 frames;
	bool			 screen, bad;
};

static int
term_attrs(struct term_parse *tp, const unsigned char *p, size_t len)
{
	struct supf_run	*r;
	size_t		 n, i;

	if (supf_attrs_decode(p, len, tp->out->rows, tp->out->cols, &r,
	    &n) == -1)
		return -1;
	if (n > 0 && (tp->out->runs = calloc(n, sizeof(*tp->out->runs))) ==
	    NULL) {
		free(r);
		return -1;
	}
	for (i = 0; i < n; i++) {
		tp->out->runs[i].row = r[i].row;
		tp->out->runs[i].col = r[i].col;
		tp->out->runs[i].len = r[i].len;
		tp->out->runs[i].fg = r[i].fg;
		tp->out->runs[i].bg = r[i].bg;
		tp->out->runs[i].attrs = r[i].attrs;
	}
	tp->out->nruns = n;
	free(r);
	return 0;
}

static int
term_cells(struct term_parse *tp, const unsigned char *p, size_t len)
{
	struct supf_cell	*c;
	size_t			 n, i;

	if (supf_cells_decode(p, len, tp->out->rows, tp->out->cols, &c,
	    &n) == -1)
		return -1;
	if (n > 0 && (tp->out->cells = calloc(n, sizeof(*tp->out->cells))) ==
	    NULL) {
		free(c);
		return -1;
	}
	for (i = 0; i < n; i++) {
		tp->out->cells[i].row = c[i].row;
		tp->out->cells[i].col = c[i].col;
		tp->out->cells[i].width = c[i].width;
		tp->out->cells[i].chars = c[i].chars;
	}
	tp->out->ncells = n;
	free(c);
	return 0;
}

/* An 'L' payload: ids each ended by '\n', every one checked. */
static int
term_ids(struct term_parse *tp, const unsigned char *p, size_t len)
{
	const unsigned char	*end = p + len;
	char			 id[SUPF_ID_MAX + 1];
	int			 rc;

	if (tp->list == NULL || tp->frames != 1)
		return -1;
	while ((rc = supf_id_next(&p, end, id)) == 1)
		json_object_array_add(tp->list, json_object_new_string(id));
	if (rc == -1)
		return -1;
	tp->screen = true;
	return 0;
}

static int
term_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	struct term_parse	*tp = arg;
	struct supf_screen	 s;
	size_t			 n;

	/* A screen, then with the colours its colours and its cells. */
	if (++tp->frames > 3 || (tp->frames == 2 && (type != 'A' ||
	    !tp->screen)) || (tp->frames == 3 && type != 'C'))
		return -1;
	if (type == 'C')
		return term_cells(tp, p, len);
	if (type == 'L')
		return term_ids(tp, p, len);
	if (tp->list != NULL && type != 'X')
		return -1;
	if (type == 'A')
		return term_attrs(tp, p, len);
	if (type == 'X') {
		n = len < sizeof(tp->msg) - 1 ? len : sizeof(tp->msg) - 1;
		memcpy(tp->msg, p, n);
		tp->msg[n] = '\0';
		return 0;
	}
	if (type != 'W' || supf_screen_decode(p, len, &s) == -1)
		return -1;
	tp->out->state = s.state;
	tp->out->code = s.code;
	tp->out->rows = s.rows;
	tp->out->cols = s.cols;
	tp->out->cursor_row = s.cursor_row;
	tp->out->cursor_col = s.cursor_col;
	tp->out->scrollback = s.scrollback;
	tp->out->gen = s.gen;
	if ((tp->out->text = utf8_repair(s.text, s.text_len, NULL)) == NULL)
		return -1;
	tp->out->text_len = strlen(tp->out->text);
	tp->screen = true;
	return 0;
}

static void
chan_out(void *arg, const char *buf, size_t len)
{
	term_output(arg, 1, buf, len);
}

/*
 * Over the channel (frames.h 'p'): the same arguments, NUL-joined. One of
 * enum chan_end; *code the request's exit status.
 */
static int
term_chan(struct sandbox *sb, const char *sup, const char *const args[],
    struct term_out *o, int *code, struct error *err)
{
	struct chan_cb	 cb = { chan_out, term_tick, o };
	char		 rid[32], *buf;
	size_t		 len = 0, n;
	int		 i, rc;

	for (i = 0; args[i] != NULL; i++)
		len += strlen(args[i]) + 1;
	if (crypto_token(rid + 2, sizeof(rid) - 2, 12) == -1 ||
	    (buf = malloc(len)) == NULL)
		return CHAN_NONE;
	memcpy(rid, "p-", 2);
	for (len = 0, i = 0; args[i] != NULL; i++) {
		n = strlen(args[i]) + 1;
		memcpy(buf + len, args[i], n);
		len += n;
	}
	rc = chan_term(sb, sup, rid, buf, len, &cb, code, err);
	free(buf);
	return rc;
}

/*
 * One exec of the supervisor with args after its path; its frame: a
 * screen into out, or with list (term-list) the ids into that array.
 */
static int
term_call(struct sandbox *sb, const char *const args[], long wait_ms,
    struct term_screen *out, struct json_object *list, struct error *err)
{
	struct term_out		 o;
	struct term_parse	 tp;
	struct docker_exec_cb	 cb = { term_output, term_tick, NULL };
	struct json_object	*cmd;
	struct supf		 f;
	char			 sup[SUP_PATH_MAX], esc[256];
	bool			 stopped;
	int			 code, rc, i;

	memset(out, 0, sizeof(*out));
	if (sup_ensure(sb, sup, err) == -1)
		return error_kind(err, ERR_UNAVAILABLE, "terminals need the "
		    "supervisor in the sandbox: %s", err->msg);
	memset(&o, 0, sizeof(o));
	o.deadline_ms = clock_ms() + wait_ms + TERM_SLACK_MS;
	cb.arg = &o;
	stopped = false;
	/* The channel first: no engine call per request. */
	switch (sb->channel ? term_chan(sb, sup, args, &o, &code, err) :
	    CHAN_NONE) {
	case CHAN_ENDED:
		goto parse;
	case CHAN_NONE:
		break;
	case CHAN_STOPPED:
		stopped = true;
		goto parse;
	default:
		free(o.buf);
		return error_kind(err, ERR_UPSTREAM, "the supervisor's channel "
		    "closed before the terminal answered");
	}
	if ((cmd = json_object_new_array()) == NULL)
		return error_kind(err, ERR_INTERNAL, "out of memory");
	json_object_array_add(cmd, json_object_new_string(sup));
	for (i = 0; args[i] != NULL; i++)
		json_object_array_add(cmd, json_object_new_string(args[i]));
	rc = sandbox_run_cmd(sb, cmd, &cb, &stopped, &code, err);
	json_object_put(cmd);
	if (rc == -1) {
		free(o.buf);
		return -1;
	}
parse:
	if (stopped) {
		free(o.buf);
		return error_kind(err, ERR_TIMEOUT, "the terminal did not answer "
		    "within %ld ms", wait_ms + TERM_SLACK_MS);
	}
	memset(&tp, 0, sizeof(tp));
	tp.out = out;
	tp.list = list;
	supf_init(&f, SUPF_SCREEN_MAX);
	rc = o.over ? -1 : supf_feed(&f, o.buf, o.len, term_frame, &tp);
	if (rc == 0 && !supf_at_boundary(&f))
		rc = -1;
	supf_free(&f);
	free(o.buf);
	if (rc == -1 || (!tp.screen && tp.msg[0] == '\0')) {
		term_screen_free(out);
		if (code == 127 || code == 126)
			sup_forget(sup);
		return error_kind(err, ERR_UPSTREAM, "the terminal answered "
		    "with malformed output (exit status %d)", code);
	}
	if (!tp.screen) {
		log_escape(esc, sizeof(esc), tp.msg, strlen(tp.msg));
		return error_kind(err, code == 5 ? ERR_NOT_FOUND :
		    ERR_UPSTREAM, "%s", esc);
	}
	return 0;
}

/* The FLAGS argument of term-send and term-watch (term.c), or NULL. */
static const char *
term_flags(int flags)
{
	switch (flags & (TERM_ATTRS | TERM_CHANGED)) {
	case TERM_ATTRS:
		return "attrs";
	case TERM_CHANGED:
		return "changed";
	case TERM_ATTRS | TERM_CHANGED:
		return "attrs,changed";
	}
	return NULL;
}

int
term_valid_id(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= SUPF_ID_MAX && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

int
term_start(struct sandbox *sb, const char *id, int cols, int rows,
    long idle_s, const char *command, long quiet_ms, long wait_ms,
    struct term_screen *out, struct error *err)
{
	char	c[16], r[16], i[32], q[32], w[32];
	const char *const args[] = { "term-start", id, c, r, i, q, w, command,
	    NULL };

	if (!term_valid_id(id))
		return error_kind(err, ERR_INVALID, "invalid terminal id");
	if (sandbox_ensure(sb, err) == -1)
		return -1;
	snprintf(c, sizeof(c), "%d", cols);
	snprintf(r, sizeof(r), "%d", rows);
	snprintf(i, sizeof(i), "%ld", idle_s);
	snprintf(q, sizeof(q), "%ld", quiet_ms);
	snprintf(w, sizeof(w), "%ld", wait_ms);
	return term_call(sb, args, wait_ms, out, NULL, err);
}

int
term_send(struct sandbox *sb, const char *id, const char *input, size_t len,
    const char *keys, long quiet_ms, long wait_ms, unsigned scrollback,
    int flags, struct term_screen *out, struct error *err)
{
	static const char	 hex[] = "0123456789abcdef";
	char			 q[32], w[32], s[32], *h;
	const char		*args[9];
	size_t			 i;
	int			 rc;

	if (!term_valid_id(id))
		return error_kind(err, ERR_INVALID, "invalid terminal id");
	if (len > SUPF_TERM_INPUT_MAX)
		return error_kind(err, ERR_TOO_LARGE, "input over %u bytes",
		    SUPF_TERM_INPUT_MAX);
	if ((h = malloc(len * 2 + 2)) == NULL)
		return error_kind(err, ERR_INTERNAL, "out of memory");
	for (i = 0; i < len; i++) {
		h[2 * i] = hex[(unsigned char)input[i] >> 4];
		h[2 * i + 1] = hex[(unsigned char)input[i] & 15];
	}
	h[2 * len] = '\0';
	if (len == 0)
		memcpy(h, "-", 2);
	snprintf(q, sizeof(q), "%ld", quiet_ms);
	snprintf(w, sizeof(w), "%ld", wait_ms);
	snprintf(s, sizeof(s), "%u", scrollback);
	args[0] = "term-send";
	args[1] = id;
	args[2] = q;
	args[3] = w;
	args[4] = s;
	args[5] = h;
	args[6] = keys != NULL && keys[0] != '\0' ? keys : "-";
	args[7] = term_flags(flags);
	args[8] = NULL;
	rc = term_call(sb, args, wait_ms, out, NULL, err);
	free(h);
	return rc;
}

int
term_watch(struct sandbox *sb, const char *id, unsigned long gen,
    long wait_ms, int flags, struct term_screen *out, struct error *err)
{
	char	g[32], w[32];
	const char *const args[] = { "term-watch", id, g, w, "0",
	    term_flags(flags), NULL };

	if (!term_valid_id(id))
		return error_kind(err, ERR_INVALID, "invalid terminal id");
	snprintf(g, sizeof(g), "%lu", gen & 0xffffffffUL);
	snprintf(w, sizeof(w), "%ld", wait_ms);
	return term_call(sb, args, wait_ms, out, NULL, err);
}

int
term_close(struct sandbox *sb, const char *id, struct term_screen *out,
    struct error *err)
{
	const char *const args[] = { "term-close", id, NULL };

	if (!term_valid_id(id))
		return error_kind(err, ERR_INVALID, "invalid terminal id");
	return term_call(sb, args, 0, out, NULL, err);
}

int
term_list(struct sandbox *sb, struct json_object *ids, struct error *err)
{
	const char *const	args[] = { "term-list", NULL };
	struct term_screen	s;

	return term_call(sb, args, 0, &s, ids, err);
}

void
term_screen_free(struct term_screen *s)
{
	free(s->text);
	s->text = NULL;
	free(s->runs);
	s->runs = NULL;
	s->nruns = 0;
	free(s->cells);
	s->cells = NULL;
	s->ncells = 0;
}
