/*
 * tools/terminal.c: terminal_start, terminal_send, terminal_read and
 * terminal_close: interactive programs on a PTY in the sandbox, under the
 * supervisor (sandbox/term.h), each terminal a row of its owner's
 * (sql/021-terminals.sql).
 *
 * What the model gets is the screen a person would see (text lines and
 * the cursor, rendered by the supervisor's terminal emulator), never raw
 * escape codes, and at most MAX_OUTPUT_BYTES of scrollback.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "links/links.h"
#include "oauth/auth.h"
#include "runs/result.h"
#include "sandbox/term.h"
#include "sandbox/terms.h"
#include "store/db.h"
#include "store/db_terms.h"
#include "tools/tools.h"

#define QUIET_MS	150	/* output quiet this long: the screen is read */
#define WAIT_DEFAULT	10000
#define START_WAIT	5000
#define SB_DEFAULT	100
#define TOUCH_EVERY_S	10	/* last_used written at most this often */

static const char *const key_names[] = {
	"Enter", "Tab", "Escape", "Backspace", "Ctrl-C", "Ctrl-D", "Ctrl-Z",
	"Up", "Down", "Left", "Right", "PageUp", "PageDown", "Home", "End",
	"Delete", "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10",
	"F11", "F12", NULL,
};

static const char prefer[] =
    "Prefer execute for commands that need no answer as they run: it "
    "returns whole stdout, stderr and the exit code. ";

static struct json_object *
id_prop(void)
{
	return tool_prop("string", "The terminal_id terminal_start returned.");
}

static struct json_object *
wait_prop(void)
{
	struct json_object *p = tool_prop("integer", "Most milliseconds to "
	    "wait for the output to settle (it is read once quiet for 150 ms; "
	    "terminal_send with less than 150 answers as soon as the screen "
	    "changed).");

	js_set_int(p, "default", WAIT_DEFAULT);
	js_set_int(p, "minimum", 0);
	js_set_int(p, "maximum", TERM_WAIT_MAX);
	return p;
}

/* The output schema all four share. */
static struct json_object *
screen_schema(void)
{
	struct json_object *props = json_object_new_object(), *p, *types;

	js_set(props, "terminal_id", tool_prop("string", "Names the terminal "
	    "for the other terminal tools."));
	js_set(props, "screen", tool_prop("string", "The screen's text, one "
	    "line per row (blank rows at the bottom left out)."));
	js_set(props, "scrollback", tool_prop("string", "Lines that scrolled "
	    "off the top, oldest first (terminal_read)."));
	js_set(props, "cursor_row", tool_prop("integer", "The cursor's row, from 0."));
	js_set(props, "cursor_col", tool_prop("integer", "The cursor's column, from 0."));
	js_set(props, "rows", tool_prop("integer", "The screen's rows."));
	js_set(props, "cols", tool_prop("integer", "The screen's columns."));
	js_set(props, "exited", tool_prop("boolean", "The program has ended."));
	types = json_object_new_array();
	json_object_array_add(types, json_object_new_string("integer"));
	json_object_array_add(types, json_object_new_string("null"));
	p = tool_prop(NULL, "Its exit status (128+N for signal N) once exited, "
	    "else null.");
	js_set(p, "type", types);
	js_set(props, "exit_code", p);
	js_set(props, "closed", tool_prop("boolean", "terminal_close ended it."));
	return tool_object(props, false, "terminal_id", "screen", "exited",
	    NULL);
}

static struct json_object *
describe_start(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props, *p;
	char			 desc[1200];

	(void)mode;
	snprintf(desc, sizeof(desc),
	    "Start an interactive program on a terminal (a PTY, TERM="
	    "xterm-256color, in /sandbox) and return its first screen: for "
	    "REPLs, editors, TUIs, installers and prompts that wait for "
	    "answers. Then type with terminal_send, look with terminal_read, "
	    "end it with terminal_close. %sThe terminal lives in the sandbox "
	    "and outlives this conversation's requests; it closes itself after "
	    "%ld s without input or output. At most %ld open per user.",
	    prefer, cfg->terminal_idle, cfg->terminal_max);
	t = tool_new("terminal_start", "Start a program on a terminal", desc);
	props = json_object_new_object();
	p = tool_prop("string", "The bash command to run on the terminal.");
	js_set_str(p, "default", "bash");
	js_set(props, "command", p);
	p = tool_prop("integer", "Columns.");
	js_set_int(p, "default", 120);
	js_set_int(p, "minimum", 20);
	js_set_int(p, "maximum", TERM_COLS_MAX);
	js_set(props, "cols", p);
	p = tool_prop("integer", "Rows.");
	js_set_int(p, "default", 40);
	js_set_int(p, "minimum", 5);
	js_set_int(p, "maximum", TERM_ROWS_MAX);
	js_set(props, "rows", p);
	js_set(props, "wait_ms", wait_prop());
	js_set(t, "inputSchema", tool_object(props, true, NULL));
	js_set(t, "outputSchema", screen_schema());
	tool_annotate(t, false, true, false, true);
	return t;
}

static struct json_object *
describe_send(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props, *p, *items, *names;
	char			 desc[1000];
	int			 i;

	(void)cfg;
	(void)mode;
	snprintf(desc, sizeof(desc),
	    "Type on a terminal: input is text typed as is (a newline is "
	    "Enter), then keys are named keys pressed in order. Returns the "
	    "screen once the output has been quiet for 150 ms (or at wait_ms), "
	    "and whether the program exited, with its exit code. With wait_ms "
	    "under 150 it returns as soon as the screen changed (an echo, a "
	    "key's effect), for quick keystrokes. %s",
	    prefer);
	t = tool_new("terminal_send", "Type on a terminal", desc);
	props = json_object_new_object();
	js_set(props, "terminal_id", id_prop());
	js_set(props, "input", tool_prop("string", "Text to type (at most "
	    "16384 bytes); \"\\n\" is Enter."));
	items = tool_prop("string", NULL);
	names = json_object_new_array();
	for (i = 0; key_names[i] != NULL; i++)
		json_object_array_add(names, json_object_new_string(key_names[i]));
	js_set(items, "enum", names);
	p = tool_prop("array", "Named keys pressed after the input.");
	js_set(p, "items", items);
	js_set_int(p, "maxItems", 64);
	js_set(props, "keys", p);
	js_set(props, "wait_ms", wait_prop());
	js_set(t, "inputSchema", tool_object(props, true, "terminal_id", NULL));
	js_set(t, "outputSchema", screen_schema());
	tool_annotate(t, false, true, false, true);
	return t;
}

static struct json_object *
describe_read(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object *t, *props, *p;

	(void)cfg;
	(void)mode;
	t = tool_new("terminal_read", "Read a terminal's screen",
	    "The terminal's screen now, and the last lines that scrolled off "
	    "its top, without typing anything.");
	props = json_object_new_object();
	js_set(props, "terminal_id", id_prop());
	p = tool_prop("integer", "Lines of scrollback to add.");
	js_set_int(p, "default", SB_DEFAULT);
	js_set_int(p, "minimum", 0);
	js_set_int(p, "maximum", TERM_SB_MAX);
	js_set(props, "scrollback", p);
	js_set(t, "inputSchema", tool_object(props, true, "terminal_id", NULL));
	js_set(t, "outputSchema", screen_schema());
	tool_annotate(t, true, false, true, true);
	return t;
}

static struct json_object *
describe_close(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object *t, *props;

	(void)cfg;
	(void)mode;
	t = tool_new("terminal_close", "Close a terminal",
	    "End a terminal: its program and every process it started on it "
	    "are killed. Returns the last screen.");
	props = json_object_new_object();
	js_set(props, "terminal_id", id_prop());
	js_set(t, "inputSchema", tool_object(props, true, "terminal_id", NULL));
	js_set(t, "outputSchema", screen_schema());
	tool_annotate(t, false, true, true, true);
	return t;
}

/* Only names in allowed (NULL-terminated) as arguments. */
static struct json_object *
check_args(struct json_object *args, const char *tool,
    const char *const allowed[])
{
	int i;

	json_object_object_foreach(args, key, val) {
		(void)val;
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (allowed[i] == NULL)
			return result_error("Unknown argument \"%.64s\" of %s.",
			    key, tool);
	}
	return NULL;
}

/* An integer argument within [min, max], def when absent. */
static int
get_int(struct json_object *args, const char *name, long def, long min,
    long max, long *out, char *why, size_t whysz)
{
	struct json_object	*v;
	long long		 n;

	*out = def;
	if (!json_object_object_get_ex(args, name, &v) ||
	    json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_int) ||
	    (n = json_object_get_int64(v)) < min || n > max) {
		snprintf(why, whysz, "%s must be a whole number from %ld to %ld "
		    "(default %ld).", name, min, max, def);
		return -1;
	}
	*out = (long)n;
	return 0;
}

/*
 * The terminal_id argument, when it names a terminal of the caller's:
 * NULL with *id set (and *last_used, when not NULL, from its row), or the
 * error result.
 */
static struct json_object *
own_terminal(struct tool_ctx *tc, struct json_object *args, const char **id,
    long long *last_used)
{
	struct json_object	*v;
	struct db_term		 row;
	enum lookup_result	 rc;

	if (!json_object_object_get_ex(args, "terminal_id", &v) ||
	    !json_object_is_type(v, json_type_string))
		return result_error("terminal_id is required: the id "
		    "terminal_start returned.");
	*id = json_object_get_string(v);
	if (!term_valid_id(*id))
		return result_error("terminal_id is not a terminal id.");
	if ((rc = db_term_get(tc->db, *id, &row)) == LOOKUP_ERROR)
		return result_error("Internal error: the terminal's record "
		    "cannot be read.");
	/* Another owner's id reads as no terminal at all. */
	if (rc == LOOKUP_NONE || strcmp(row.owner, auth_owner(tc->who)) != 0)
		return result_error("No terminal %s here: start one with "
		    "terminal_start.", *id);
	if (row.closed)
		return result_error("Terminal %s is closed: start another with "
		    "terminal_start.", *id);
	if (last_used != NULL)
		*last_used = row.last_used;
	return NULL;
}

/* Blank rows at the end of the screen left out. */
static size_t
trim_blank(const char *s, size_t len)
{
	while (len > 0 && s[len - 1] == '\n')
		len--;
	return len == 0 ? 0 : len + 1;
}

/* The result of a screen: text for the model, and structuredContent. */
static struct json_object *
screen_result(struct tool_ctx *tc, const char *id, struct term_screen *s,
    bool closed)
{
	struct json_object	*sc, *res;
	const char		*screen, *sb = NULL;
	size_t			 sblen = 0, slen, i, lines = 0;
	char			*text, head[200];
	size_t			 cap;

	/* The scrollback is the text's first lines. */
	screen = s->text;
	for (i = 0; i < s->text_len && lines < s->scrollback; i++)
		if (s->text[i] == '\n')
			lines++;
	if (s->scrollback > 0) {
		sb = s->text;
		sblen = i;
		screen = s->text + i;
	}
	slen = trim_blank(screen, s->text_len - (size_t)(screen - s->text));
	/* The same bound as execute's output: the oldest scrollback goes. */
	while (sblen > (size_t)tc->cfg->max_output_bytes) {
		const char *nl = memchr(sb, '\n', sblen);

		if (nl == NULL)
			break;
		sblen -= (size_t)(nl + 1 - sb);
		sb = nl + 1;
	}
	sc = json_object_new_object();
	js_set_str(sc, "terminal_id", id);
	js_set(sc, "screen", json_object_new_string_len(screen, (int)slen));
	if (sb != NULL)
		js_set(sc, "scrollback", json_object_new_string_len(sb,
		    (int)sblen));
	js_set_int(sc, "cursor_row", s->cursor_row);
	js_set_int(sc, "cursor_col", s->cursor_col);
	js_set_int(sc, "rows", s->rows);
	js_set_int(sc, "cols", s->cols);
	js_set_bool(sc, "exited", s->state != 0);
	if (s->state == 0)
		js_set(sc, "exit_code", NULL);
	else
		js_set_int(sc, "exit_code", s->state == 1 ? s->code :
		    128 + s->code);
	js_set_bool(sc, "closed", closed);
	if (closed)
		snprintf(head, sizeof(head), "Terminal %s closed.", id);
	else if (s->state == 0)
		snprintf(head, sizeof(head), "Terminal %s, cursor at row %d, "
		    "column %d:", id, s->cursor_row, s->cursor_col);
	else
		snprintf(head, sizeof(head), "Terminal %s: the program exited "
		    "with code %d. Its last screen:", id, s->state == 1 ?
		    s->code : 128 + s->code);
	cap = strlen(head) + sblen + slen + 64;
	if ((text = malloc(cap)) == NULL) {
		json_object_put(sc);
		return result_error("Internal error: out of memory.");
	}
	snprintf(text, cap, "%s\n%s%.*s%.*s", head, sb != NULL && sblen > 0 ?
	    "" : "", (int)sblen, sb != NULL ? sb : "", (int)slen, screen);
	res = result_new(text, sc, false);
	free(text);
	return res;
}

/* After a call: the row's last use, or its close when the terminal is gone. */
static struct json_object *
term_failed(struct tool_ctx *tc, const char *id, struct error *err)
{
	if (err->kind == ERR_NOT_FOUND) {
		db_exec(tc->db, STMT_TERM_CLOSE, "int", (long long)time(NULL),
		    id);
		return result_error("Terminal %s has ended (closed after %ld s "
		    "idle, or the sandbox restarted): start another with "
		    "terminal_start.", id, tc->cfg->terminal_idle);
	}
	return result_error("The terminal could not be reached: %s", err->msg);
}

static struct json_object *
call_start(struct tool_ctx *tc, struct json_object *args)
{
	static const char *const allowed[] = { "command", "cols", "rows",
	    "wait_ms", NULL };
	struct json_object	*res, *v;
	struct term_screen	 s;
	struct error		 err;
	const char		*command = "bash", *owner = auth_owner(tc->who);
	char			 id[40], why[200];
	long			 cols, rows, wait;
	long long		 now = (long long)time(NULL), n;

	if ((res = check_args(args, "terminal_start", allowed)) != NULL)
		return res;
	if (json_object_object_get_ex(args, "command", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) == 0)
			return result_error("command must be a non-empty string.");
		command = json_object_get_string(v);
		if ((size_t)json_object_get_string_len(v) != strlen(command))
			return result_error("command contains a NUL character.");
		if (json_object_get_string_len(v) > 64 * 1024)
			return result_error("command is longer than 65536 bytes: "
			    "write it to a file in /sandbox and run the file.");
	}
	if (get_int(args, "cols", 120, 20, TERM_COLS_MAX, &cols, why,
	    sizeof(why)) == -1 || get_int(args, "rows", 40, 5,
	    TERM_ROWS_MAX, &rows, why, sizeof(why)) == -1 ||
	    get_int(args, "wait_ms", START_WAIT, 0, TERM_WAIT_MAX, &wait,
	    why, sizeof(why)) == -1)
		return result_error("%s", why);
	if (tc->cfg->terminal_max == 0)
		return result_error("Terminals are turned off on this server "
		    "(TERMINAL_MAX=0): use execute.");
	n = db_term_open_count(tc->db, owner, now - tc->cfg->terminal_idle);
	/* At the cap: some may have closed themselves since. */
	if (n >= tc->cfg->terminal_max && terms_reconcile(tc->cfg, tc->db,
	    owner, NULL) > 0)
		n = db_term_open_count(tc->db, owner, now -
		    tc->cfg->terminal_idle);
	if (n < 0)
		return result_error("Internal error: the terminals' records "
		    "cannot be read.");
	if (n >= tc->cfg->terminal_max)
		return result_error("Not started: %lld terminals are open, the "
		    "most one user may have. Close one with terminal_close.", n);
	memcpy(id, "t-", 2);
	if (crypto_token(id + 2, sizeof(id) - 2, 12) == -1)
		return result_error("Internal error: no randomness for an id.");
	if (db_exec(tc->db, STMT_TERM_INSERT, "ttttiiii", id, owner,
	    tc->who != NULL ? tc->who->client_id : "api-key", command,
	    (long long)cols, (long long)rows, now, now) != 1)
		return result_error("Internal error: the terminal cannot be "
		    "recorded.");
	if (term_start(tc->sandbox, id, (int)cols, (int)rows,
	    tc->cfg->terminal_idle, command, QUIET_MS, wait, &s, &err) == -1) {
		db_exec(tc->db, STMT_TERM_CLOSE, "int", now, id);
		return result_error("The terminal could not start: %s", err.msg);
	}
	log_info("terminal %s started by %s", id, owner);
	/* Rows past the audit's retention go, as runs' do. */
	db_exec(tc->db, STMT_TERM_PRUNE, "i", now -
	    tc->cfg->audit_retention);
	res = screen_result(tc, id, &s, false);
	term_screen_free(&s);
	return res;
}

static struct json_object *
call_send(struct tool_ctx *tc, struct json_object *args)
{
	static const char *const allowed[] = { "terminal_id", "input", "keys",
	    "wait_ms", NULL };
	struct json_object	*res, *v, *k;
	struct term_screen	 s;
	struct error		 err;
	const char		*id, *input = "";
	char			 keys[64 * 12], why[200];
	size_t			 inlen = 0, klen = 0, i, n;
	long long		 last_used = 0, now, touch;
	long			 wait;
	int			 j;

	if ((res = check_args(args, "terminal_send", allowed)) != NULL ||
	    (res = own_terminal(tc, args, &id, &last_used)) != NULL)
		return res;
	if (json_object_object_get_ex(args, "input", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_string))
			return result_error("input must be a string.");
		input = json_object_get_string(v);
		inlen = (size_t)json_object_get_string_len(v);
		if (inlen > TERM_INPUT_MAX)
			return result_error("input is longer than %u bytes: "
			    "send it in parts.", TERM_INPUT_MAX);
	}
	keys[0] = '\0';
	if (json_object_object_get_ex(args, "keys", &v) &&
	    !json_object_is_type(v, json_type_null)) {
		if (!json_object_is_type(v, json_type_array) ||
		    (n = json_object_array_length(v)) > 64)
			return result_error("keys must be a list of at most 64 "
			    "key names (Enter, Tab, Escape, Ctrl-C, Up, F1...).");
		for (i = 0; i < n; i++) {
			k = json_object_array_get_idx(v, i);
			for (j = 0; key_names[j] != NULL; j++)
				if (json_object_is_type(k, json_type_string) &&
				    strcmp(json_object_get_string(k),
				    key_names[j]) == 0)
					break;
			if (key_names[j] == NULL)
				return result_error("keys[%zu] is not a key "
				    "name: use Enter, Tab, Escape, Backspace, "
				    "Ctrl-C, Ctrl-D, Ctrl-Z, Up, Down, Left, "
				    "Right, PageUp, PageDown, Home, End, "
				    "Delete or F1-F12.", i);
			klen += (size_t)snprintf(keys + klen, sizeof(keys) -
			    klen, "%s%s", klen > 0 ? "," : "", key_names[j]);
		}
	}
	if (get_int(args, "wait_ms", WAIT_DEFAULT, 0, TERM_WAIT_MAX,
	    &wait, why, sizeof(why)) == -1)
		return result_error("%s", why);
	/*
	 * Its last use, for the idle count: written every tenth of
	 * TERMINAL_IDLE (TOUCH_EVERY_S at most), not on every keystroke.
	 */
	now = (long long)time(NULL);
	touch = tc->cfg->terminal_idle / 10;
	if (touch > TOUCH_EVERY_S)
		touch = TOUCH_EVERY_S;
	if (now - last_used >= touch || now < last_used)
		db_exec(tc->db, STMT_TERM_TOUCH, "it", now, id);
	/* A wait shorter than the quiet window: the first change will do. */
	if (term_send(tc->sandbox, id, input, inlen, keys, QUIET_MS, wait, 0,
	    wait < QUIET_MS ? TERM_CHANGED : 0, &s, &err) == -1)
		return term_failed(tc, id, &err);
	res = screen_result(tc, id, &s, false);
	term_screen_free(&s);
	return res;
}

static struct json_object *
call_read(struct tool_ctx *tc, struct json_object *args)
{
	static const char *const allowed[] = { "terminal_id", "scrollback",
	    NULL };
	struct json_object	*res;
	struct term_screen	 s;
	struct error		 err;
	const char		*id;
	char			 why[200];
	long			 sb;

	if ((res = check_args(args, "terminal_read", allowed)) != NULL ||
	    (res = own_terminal(tc, args, &id, NULL)) != NULL)
		return res;
	if (get_int(args, "scrollback", SB_DEFAULT, 0, TERM_SB_MAX, &sb,
	    why, sizeof(why)) == -1)
		return result_error("%s", why);
	if (term_send(tc->sandbox, id, "", 0, NULL, 0, 0, (unsigned)sb, 0,
	    &s, &err) == -1)
		return term_failed(tc, id, &err);
	res = screen_result(tc, id, &s, false);
	term_screen_free(&s);
	return res;
}

static struct json_object *
call_close(struct tool_ctx *tc, struct json_object *args)
{
	static const char *const allowed[] = { "terminal_id", NULL };
	struct json_object	*res;
	struct term_screen	 s;
	struct error		 err;
	const char		*id;

	if ((res = check_args(args, "terminal_close", allowed)) != NULL ||
	    (res = own_terminal(tc, args, &id, NULL)) != NULL)
		return res;
	if (term_close(tc->sandbox, id, &s, &err) == -1) {
		if (err.kind != ERR_NOT_FOUND)
			return result_error("The terminal could not be closed: "
			    "%s", err.msg);
		db_exec(tc->db, STMT_TERM_CLOSE, "int", (long long)time(NULL),
		    id);
		return result_error("Terminal %s had ended already.", id);
	}
	if (s.state != 0)
		db_exec(tc->db, STMT_TERM_CLOSE, "iit", (long long)time(NULL),
		    (long long)(s.state == 1 ? s.code : 128 + s.code), id);
	else
		db_exec(tc->db, STMT_TERM_CLOSE, "int", (long long)time(NULL),
		    id);
	log_info("terminal %s closed", id);
	res = screen_result(tc, id, &s, true);
	term_screen_free(&s);
	return res;
}

static const char link_limits[] =
    "What it does not protect against: the model is root in the sandbox "
    "and could run a program that captures what the person types (on this "
    "terminal or by reading the PTY); the promise is only that a secret "
    "typed on the page never passes through the chat or the model's "
    "transcript by this route. Anyone holding the URL can type into the "
    "terminal until it expires or is revoked (sandboxctl links revoke).";

static struct json_object *
describe_link(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props;
	char			 desc[1400];

	(void)mode;
	snprintf(desc, sizeof(desc),
	    "A link for the user to open the terminal in their browser and type "
	    "into it themselves, for what they should not paste into the chat "
	    "(a password, a login code). Both see the same screen; what the "
	    "user types is never returned to you: call terminal_read to see the "
	    "screen after they typed (a program that does not echo, like a "
	    "password prompt, shows nothing of it). Valid %ld s. %s",
	    cfg->terminal_link_ttl, link_limits);
	t = tool_new("terminal_link", "A terminal link for the user", desc);
	props = json_object_new_object();
	js_set(props, "terminal_id", id_prop());
	js_set(t, "inputSchema", tool_object(props, true, "terminal_id", NULL));
	props = json_object_new_object();
	js_set(props, "url", tool_prop("string", "The link to give the user."));
	js_set(props, "terminal_id", tool_prop("string", "The terminal."));
	js_set(props, "expires", tool_prop("string", "When the link stops "
	    "working (ISO 8601, UTC)."));
	js_set(t, "outputSchema", tool_object(props, false, "url",
	    "terminal_id", "expires", NULL));
	tool_annotate(t, false, false, false, true);
	return t;
}

static struct json_object *
call_link(struct tool_ctx *tc, struct json_object *args)
{
	static const char *const allowed[] = { "terminal_id", NULL };
	struct json_object	*res, *sc;
	struct link_row		 row;
	struct error		 err;
	const char		*id;
	char			*url, expires[32], *text;
	size_t			 n;

	if ((res = check_args(args, "terminal_link", allowed)) != NULL ||
	    (res = own_terminal(tc, args, &id, NULL)) != NULL)
		return res;
	if ((url = links_create_terminal(tc->db, tc->cfg->api_key,
	    tc->cfg->public_url, id, tc->who != NULL &&
	    tc->who->client_id[0] != '\0' ? tc->who->client_id : "unknown",
	    auth_owner(tc->who), (long long)time(NULL),
	    tc->cfg->terminal_link_ttl, &row, &err)) == NULL)
		return result_error("Cannot make the link: %s", err.msg);
	log_info("terminal link %s to terminal %s made by %s", row.id, id,
	    auth_owner(tc->who));
	clock_iso8601(row.expires, expires, sizeof(expires));
	n = strlen(url) + 600;
	if ((text = malloc(n)) == NULL) {
		free(url);
		return result_error("Internal error: out of memory.");
	}
	snprintf(text, n, "Terminal link for %s, valid until %s (%ld "
	    "seconds):\n%s\n\nGive the user this URL as it is: opening it "
	    "shows the terminal and lets them type into it. Their keystrokes "
	    "are not returned to you; read the screen with terminal_read "
	    "afterwards.", id, expires, tc->cfg->terminal_link_ttl, url);
	sc = json_object_new_object();
	js_set_str(sc, "url", url);
	js_set_str(sc, "terminal_id", id);
	js_set_str(sc, "expires", expires);
	res = result_new(text, sc, false);
	free(text);
	free(url);
	return res;
}

const struct tool tool_terminal_link = {
	.name = "terminal_link",
	.describe = describe_link,
	.call = call_link,
};

const struct tool tool_terminal_start = {
	.name = "terminal_start",
	.describe = describe_start,
	.call = call_start,
};

const struct tool tool_terminal_send = {
	.name = "terminal_send",
	.describe = describe_send,
	.call = call_send,
};

const struct tool tool_terminal_read = {
	.name = "terminal_read",
	.describe = describe_read,
	.call = call_read,
};

const struct tool tool_terminal_close = {
	.name = "terminal_close",
	.describe = describe_close,
	.call = call_close,
};
