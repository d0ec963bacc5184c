/*
 * tools/execute.c: execute(command, timeout) runs a bash command in /sandbox.
 *
 * A non-zero exit code is an ordinary result; isError marks a command that
 * could not run, a bad argument, or a timeout (spec: tools "Error Handling").
 * While the command runs, a client that accepts SSE gets a ping every
 * SANDBOX_PING_INTERVAL seconds so that proxies keep the stream open.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "base/output.h"
#include "base/secret.h"
#include "http/http.h"
#include "oauth/auth.h"
#include "runs/result.h"
#include "runs/runs.h"
#include "runs/tasks.h"
#include "sandbox/pace.h"
#include "sandbox/sandbox.h"
#include "sandbox/secrets.h"
#include "tools/tools.h"

#define COMMAND_MAX	(256 * 1024)
/*
 * stdin: bytes given at most this many (the command, its prologue and the
 * bytes in base64 stay under the supervisor's command limit).
 */
#define STDIN_MAX	(512 * 1024)
#define DEFAULT_TIMEOUT	3600
#define PROGRESS_KEEP	1024	/* output bytes remembered for progress */
#define PROGRESS_LINES	3	/* lines of output in a progress message */
#define PROGRESS_MESSAGE_MAX 400
#define PROGRESS_EVERY_MS 1000	/* progress at most about once a second */
/*
 * 2026, until the answer: a tick and a keep-alive this often. A web server
 * that notices a client gone only when a write to it fails (Caddy: the
 * second or third write after the close) so passes the close on within a
 * second, and http_gone sees its closed connection at the next tick.
 */
#define CLOSE_CHECK_MS	250
#define CANCEL_CHECK_MS	1000	/* the run table's cancellation mark, this often */
#define NOTE_EVERY_MS	3000	/* a task's newest output line, stored this often */

static struct json_object *
describe(const struct config *cfg, const struct tool_mode *mode)
{
	struct json_object	*t, *props, *p, *types;
	char			 desc[1700];

	snprintf(desc, sizeof(desc),
	    "Run a bash command in /sandbox inside a persistent Linux container "
	    "(Debian, root, internet access) and return its stdout, stderr and "
	    "exit code. Each call is a fresh `bash -c`: cd and exported "
	    "variables do not carry over, files in /sandbox and installed "
	    "packages do. Output above %ld bytes per stream is cut in the "
	    "middle (beginning and end kept). At the timeout the command and "
	    "all its children are killed; detach long-running services with "
	    "`setsid nohup cmd > log 2>&1 &`. Standard input is empty unless "
	    "`stdin` (text) or `stdin_base64` (bytes) gives it: it is fed to "
	    "the command, then closed. For a program that asks questions as "
	    "it goes or draws a screen (a REPL, an editor, a password prompt), "
	    "use terminal_start instead. %s",
	    cfg->max_output_bytes, mode->interrupted);
	t = tool_new("execute", "Run a bash command in the sandbox", desc);

	props = json_object_new_object();
	js_set(props, "command", tool_prop("string", "The bash command or script to run."));
	p = tool_prop("integer", "Seconds before the command and its children are killed.");
	js_set_int(p, "default", DEFAULT_TIMEOUT);
	js_set_int(p, "minimum", 1);
	js_set_int(p, "maximum", cfg->max_timeout);
	js_set(props, "timeout", p);
	js_set(props, "stdin", tool_prop("string", "Text fed to the command's "
	    "standard input, then closed (at most 512 KiB)."));
	js_set(props, "stdin_base64", tool_prop("string", "Bytes (standard "
	    "base64) fed to standard input, for input that is not UTF-8; not "
	    "with stdin."));
	js_set(t, "inputSchema", tool_object(props, true, "command", NULL));

	props = json_object_new_object();
	types = json_object_new_array();
	json_object_array_add(types, json_object_new_string("integer"));
	json_object_array_add(types, json_object_new_string("null"));
	p = tool_prop(NULL, "Exit status; null when it is not known.");
	js_set(p, "type", types);
	js_set(props, "exit_code", p);
	js_set(props, "stdout", tool_prop("string", "Standard output (valid UTF-8; invalid bytes shown as U+FFFD)."));
	js_set(props, "stderr", tool_prop("string", "Standard error (same)."));
	js_set(props, "run_id", tool_prop("string", "Names this run for get_result."));
	js_set(props, "timed_out", tool_prop("boolean", "Killed at the timeout."));
	js_set(props, "cancelled", tool_prop("boolean", "Killed by a cancellation."));
	js_set(props, "oom_killed", tool_prop("boolean", "Killed by the sandbox's memory limit."));
	js_set(props, "stdout_truncated_bytes", tool_prop("integer", "Bytes cut from the middle of stdout."));
	js_set(props, "stderr_truncated_bytes", tool_prop("integer", "Bytes cut from the middle of stderr."));
	js_set(props, "duration_ms", tool_prop("integer", "Wall-clock run time."));
	js_set(props, "running", tool_prop("boolean", "Still running: this is a "
	    "handle, call get_result(run_id) for the result."));
	js_set(props, "notice", tool_prop("string", "Something the model should know: the sandbox was recreated, or its disk is full or over its limit."));
	js_set(t, "outputSchema", tool_object(props, false, "exit_code", "stdout",
	    "stderr", "timed_out", NULL));
	tool_annotate(t, false, true, false, true);
	return t;
}

/* Read the timeout argument: an integer (or an integral number). */
static int
get_timeout(struct json_object *args, const struct config *cfg, long *out,
    char *why, size_t whysz)
{
	struct json_object	*v;
	double			 d;

	*out = DEFAULT_TIMEOUT;
	if (!json_object_object_get_ex(args, "timeout", &v) ||
	    json_object_is_type(v, json_type_null))
		goto check;
	if (json_object_is_type(v, json_type_int)) {
		long long n = json_object_get_int64(v);

		if (n < 1 || n > cfg->max_timeout)
			goto range;
		*out = (long)n;
	} else if (json_object_is_type(v, json_type_double)) {
		d = json_object_get_double(v);
		if (!isfinite(d) || d != floor(d) || d < 1 || d > (double)cfg->max_timeout)
			goto range;
		*out = (long)d;
	} else {
		snprintf(why, whysz, "timeout must be a whole number of seconds "
		    "from 1 to %ld (default %d)", cfg->max_timeout, DEFAULT_TIMEOUT);
		return -1;
	}
check:
	if (*out > cfg->max_timeout)
		*out = cfg->max_timeout;
	return 0;
range:
	snprintf(why, whysz, "timeout must be from 1 to %ld seconds (default %d)",
	    cfg->max_timeout, DEFAULT_TIMEOUT);
	return -1;
}

/*
 * What a running command's ticks need. Progress (spec: utilities/progress)
 * goes out about once a second while output arrives and at least once per
 * ping interval, carrying the newest output lines; pings keep proxies from
 * closing the stream; a cancellation marked by another request (perhaps in
 * another process) is acted on here within a second.
 */
struct watch {
	struct tool_ctx	*tc;
	const char	*run_id;
	long long	 started;		/* ms, monotonic */
	long long	 last_progress;		/* ms, monotonic */
	long long	 last_note;		/* ms: a task's newest line stored */
	long long	 last_cancel_check;	/* ms */
	long long	 progress;
	char		 recent[PROGRESS_KEEP];	/* newest output bytes */
	size_t		 recent_len;
	bool		 fresh;			/* output since the last progress */
	bool		 note_fresh;		/* output since the last stored line */
	bool		 cancel_seen;
	bool		 handed;		/* answered with a task or handle */
	bool		 dropped;		/* 2026: the client closed the stream: cancelled */
	struct mask	*mask;			/* the secrets' values, or NULL */
};

static char	*recent_lines(const struct watch *);
static void	 note_line(struct watch *, long long);

/* Send a progress notification now, with the newest lines if any are new. */
static void
send_progress(struct watch *w, long long now)
{
	char *msg;

	if (!w->tc->mode.progress || !w->tc->chan.streams ||
	    tool_client_gone(w->tc))
		return;
	msg = w->fresh ? recent_lines(w) : NULL;
	tool_progress(w->tc, ++w->progress, msg);
	free(msg);
	w->fresh = false;
	w->last_progress = now;
}

static void
on_output(void *arg, int stream, const char *buf, size_t len)
{
	struct watch	*w = arg;
	long long	 now;

	(void)stream;
	if (len >= sizeof(w->recent)) {
		memcpy(w->recent, buf + len - sizeof(w->recent), sizeof(w->recent));
		w->recent_len = sizeof(w->recent);
	} else {
		size_t keep = sizeof(w->recent) - len;

		if (w->recent_len > keep) {
			memmove(w->recent, w->recent + w->recent_len - keep, keep);
			w->recent_len = keep;
		}
		memcpy(w->recent + w->recent_len, buf, len);
		w->recent_len += len;
	}
	w->fresh = w->note_fresh = true;
	if (w->handed)
		return;
	/* Output after a quiet second goes out at once; more waits for a tick. */
	if ((now = clock_ms()) - w->last_progress >= PROGRESS_EVERY_MS)
		send_progress(w, now);
}

/* The newest few lines of output, valid UTF-8, for a progress message. */
static char *
recent_lines(const struct watch *w)
{
	size_t	 end = w->recent_len, start, lines = 0;

	while (end > 0 && (w->recent[end - 1] == '\n' || w->recent[end - 1] == '\r'))
		end--;
	for (start = end; start > 0; start--)
		if (w->recent[start - 1] == '\n' && ++lines == PROGRESS_LINES)
			break;
	if (end - start > PROGRESS_MESSAGE_MAX)
		start = end - PROGRESS_MESSAGE_MAX;
	/*
	 * Masked: a value cut at the window's start can leave a piece, so a
	 * window that starts mid-line starts at its next line.
	 */
	if (mask_count(w->mask) > 0) {
		char	*m, *r;
		size_t	 n;

		if (start > 0 && w->recent[start - 1] != '\n')
			while (start < end && w->recent[start++] != '\n')
				;
		if ((m = mask_apply(w->mask, w->recent + start, end - start,
		    &n)) == NULL)
			return NULL;
		r = utf8_repair(m, n, NULL);
		free(m);
		return r;
	}
	return utf8_repair(w->recent + start, end - start, NULL);
}

/*
 * 2026: the command outlived the inline wait. A request that declared the
 * Tasks extension gets a CreateTaskResult, others a result naming the
 * run_id; the row says so before the answer goes out, and from then on the
 * command is no longer tied to the stream.
 */
static void
hand_off(struct watch *w)
{
	struct tool_ctx		*tc = w->tc;
	struct json_object	*res = NULL, *sc;
	char			 text[512];
	long long		 secs = (clock_ms() - w->started) / 1000;

	if (tc->mode.tasks) {
		snprintf(text, sizeof(text), "Running for %llds (run_id %s).",
		    secs, w->run_id);
		if (tasks_mark(tc->db, w->run_id, "task", text, &res) == -1) {
			log_warn("run %s: cannot make it a task", w->run_id);
			return;
		}
	} else {
		if (tasks_mark(tc->db, w->run_id, "handle", NULL, NULL) == -1) {
			log_warn("run %s: cannot record its handle", w->run_id);
			return;
		}
		snprintf(text, sizeof(text), "Still running after %llds (run_id "
		    "%s); it goes on in the sandbox. Call get_result(run_id=\"%s\") "
		    "to wait for its result.", secs, w->run_id, w->run_id);
		sc = json_object_new_object();
		js_set_str(sc, "run_id", w->run_id);
		js_set(sc, "exit_code", NULL);
		js_set_str(sc, "stdout", "");
		js_set_str(sc, "stderr", "");
		js_set_bool(sc, "timed_out", false);
		js_set_bool(sc, "running", true);
		res = result_new(text, sc, false);
	}
	w->handed = true;
	/* The newest line now: a released worker sees no more output. */
	w->last_note = 0;
	note_line(w, clock_ms());
	tool_answer(tc, res);
}

/* The newest output line of a task, for tasks/get's statusMessage. */
static void
note_line(struct watch *w, long long now)
{
	char *line;

	if (!w->note_fresh || now - w->last_note < NOTE_EVERY_MS)
		return;
	if ((line = recent_lines(w)) != NULL) {
		char *nl = strrchr(line, '\n');

		tasks_note(w->tc->db, w->run_id, nl != NULL ? nl + 1 : line);
		free(line);
	}
	w->note_fresh = false;
	w->last_note = now;
}

/* 2026: closing the stream before the answer cancels the command. */
static void
drop(struct watch *w)
{
	struct error err;

	if (w->dropped)
		return;
	w->dropped = w->cancel_seen = true;
	if (sandbox_kill(w->tc->sandbox, w->run_id, &err) == -1)
		log_warn("cancel run %s: %s", w->run_id, err.msg);
}

static int
on_tick(void *arg)
{
	struct watch		*w = arg;
	struct tool_ctx		*tc = w->tc;
	struct error		 err;
	long long		 now = clock_ms();
	bool			 stateless = tc->mode.stateless;

	/* Stopping: stop reading; the command goes on in the container. */
	if (http_stopping())
		return EXEC_TICK_STOP;
	if (!w->cancel_seen && now - w->last_cancel_check >= CANCEL_CHECK_MS) {
		w->last_cancel_check = now;
		if (runs_cancel_requested(tc->db, w->run_id)) {
			w->cancel_seen = true;
			if (sandbox_kill(tc->sandbox, w->run_id, &err) == -1)
				log_warn("cancel run %s: %s", w->run_id, err.msg);
		}
	}
	/*
	 * Answered with a task or handle: the worker lets go, and the run
	 * goes on under the supervisor, whose record tasks/get, get_result
	 * or the reconciler collect (runs_collect); tasks/cancel kills it
	 * itself. A run without a supervisor is watched to its end here.
	 */
	if (w->handed) {
		note_line(w, now);
		return EXEC_TICK_RELEASE;
	}
	/* A client that went away: 2025 lets the command go on. */
	if (tool_client_gone(tc)) {
		if (stateless)
			drop(w);
		return EXEC_TICK_GO_ON;
	}
	if (tc->chan.streams &&
	    ((w->fresh && now - w->last_progress >= PROGRESS_EVERY_MS / 2) ||
	    now - w->last_progress >= tc->cfg->ping_interval * 1000))
		send_progress(w, now);
	if (tool_alive(tc, stateless ? CLOSE_CHECK_MS :
	    tc->cfg->ping_interval * 1000) == -1) {
		if (stateless)
			drop(w);
		return EXEC_TICK_GO_ON;
	}
	if (stateless && now - w->started >= tc->cfg->inline_wait * 1000)
		hand_off(w);
	return w->handed ? EXEC_TICK_RELEASE : EXEC_TICK_GO_ON;
}

/*
 * stdin or stdin_base64: the bytes reach the command through a file made
 * by a one-line prologue (so every way a command runs, with or without
 * the supervisor, gets them alike): the bytes in base64 decoded into a
 * temporary file, opened as fd 0 and unlinked, then the command on the
 * next line. *full is that text (NULL with no stdin). 0, or -1 with why.
 */
static int
get_stdin(struct json_object *args, const char *command, char **full,
    char *why, size_t whysz)
{
	static const char	 pro1[] = "{ __cs_in=$(mktemp) && printf %s '";
	static const char	 pro2[] = "' | base64 -d >\"$__cs_in\" && "
	    "exec 0<\"$__cs_in\" && rm -f -- \"$__cs_in\"; } || { echo "
	    "'execute: cannot feed stdin' >&2; exit 125; }; unset __cs_in\n";
	struct json_object	*t, *b;
	const char		*in;
	unsigned char		*raw = NULL;
	size_t			 n, b64len, clen;
	long			 got;
	bool			 has_t, has_b;

	*full = NULL;
	has_t = json_object_object_get_ex(args, "stdin", &t) &&
	    !json_object_is_type(t, json_type_null);
	has_b = json_object_object_get_ex(args, "stdin_base64", &b) &&
	    !json_object_is_type(b, json_type_null);
	if (!has_t && !has_b)
		return 0;
	if (has_t && has_b) {
		snprintf(why, whysz, "Give stdin or stdin_base64, not both.");
		return -1;
	}
	if (has_t) {
		if (!json_object_is_type(t, json_type_string)) {
			snprintf(why, whysz, "stdin must be a string.");
			return -1;
		}
		in = json_object_get_string(t);
		n = (size_t)json_object_get_string_len(t);
		if (n > STDIN_MAX) {
			snprintf(why, whysz, "stdin is longer than %d bytes: "
			    "write it to a file in /sandbox and redirect it.",
			    STDIN_MAX);
			return -1;
		}
	} else {
		if (!json_object_is_type(b, json_type_string)) {
			snprintf(why, whysz, "stdin_base64 must be a string "
			    "of standard base64.");
			return -1;
		}
		n = (size_t)json_object_get_string_len(b);
		if (n > (STDIN_MAX / 3 + 1) * 4) {
			snprintf(why, whysz, "stdin_base64 holds more than %d "
			    "bytes: write them to a file in /sandbox and "
			    "redirect it.", STDIN_MAX);
			return -1;
		}
		if ((raw = malloc(n / 4 * 3 + 3)) == NULL) {
			snprintf(why, whysz, "Internal error: out of memory.");
			return -1;
		}
		got = crypto_b64_decode(json_object_get_string(b), n, raw,
		    n / 4 * 3 + 3);
		if (got < 0 || got > STDIN_MAX) {
			free(raw);
			snprintf(why, whysz, "stdin_base64 is not valid "
			    "standard base64 (A-Z a-z 0-9 + /, padded with =).");
			return -1;
		}
		in = (const char *)raw;
		n = (size_t)got;
	}
	if (n == 0) {
		free(raw);
		return 0;
	}
	b64len = crypto_b64_len(n);
	clen = strlen(command);
	if ((*full = malloc(sizeof(pro1) + b64len + sizeof(pro2) + clen +
	    1)) == NULL) {
		free(raw);
		snprintf(why, whysz, "Internal error: out of memory.");
		return -1;
	}
	memcpy(*full, pro1, sizeof(pro1) - 1);
	crypto_b64_encode(in, n, *full + sizeof(pro1) - 1);
	memcpy(*full + sizeof(pro1) - 1 + b64len, pro2, sizeof(pro2) - 1);
	memcpy(*full + sizeof(pro1) - 1 + b64len + sizeof(pro2) - 1, command,
	    clen + 1);
	free(raw);
	return 0;
}

static struct json_object *
call(struct tool_ctx *tc, struct json_object *args)
{
	struct exec_result	 res;
	struct exec_observer	 obs;
	struct watch		 w;
	struct error		 err;
	struct json_object	*out;
	const char		*command, *state;
	char			 why[256], run_id[32];
	enum tasks_admit	 admit;
	int			 rc;
	long			 timeout;
	bool			 server_stop = false;
	struct json_object	*v;
	char			*full = NULL;	/* command with its stdin prologue */

	json_object_object_foreach(args, key, val) {
		(void)val;
		if (strcmp(key, "command") != 0 && strcmp(key, "timeout") != 0 &&
		    strcmp(key, "stdin") != 0 &&
		    strcmp(key, "stdin_base64") != 0)
			return result_error("Unknown argument \"%.64s\": execute "
			    "takes command (string), timeout (seconds), stdin "
			    "(string) and stdin_base64 (string).", key);
	}
	if (!json_object_object_get_ex(args, "command", &v) ||
	    !json_object_is_type(v, json_type_string))
		return result_error("command is required and must be a string "
		    "holding the bash command to run.");
	command = json_object_get_string(v);
	if (json_object_get_string_len(v) == 0 ||
	    strspn(command, " \t\r\n") == strlen(command))
		return result_error("command is empty: give the bash command to run.");
	if ((size_t)json_object_get_string_len(v) != strlen(command))
		return result_error("command contains a NUL character; write binary "
		    "data with printf escapes instead.");
	if (json_object_get_string_len(v) > COMMAND_MAX)
		return result_error("command is longer than %d bytes: write the "
		    "script to a file in /sandbox in parts and run the file.",
		    COMMAND_MAX);
	if (get_timeout(args, tc->cfg, &timeout, why, sizeof(why)) == -1)
		return result_error("%s.", why);
	if (get_stdin(args, command, &full, why, sizeof(why)) == -1)
		return result_error("%s", why);
	if ((admit = tasks_admit(tc->db, tc->cfg, tc->sandbox, tc->who, why,
	    sizeof(why))) == TASKS_ADMIT_FULL) {
		free(full);
		return result_error("Not started: %s. Wait for one to end "
		    "(get_result) and try again.", why);
	}
	if (crypto_token(run_id, sizeof(run_id), 12) == -1) {
		free(full);
		return result_error("Internal error: no randomness for a run id.");
	}

	memset(&w, 0, sizeof(w));
	/* Output is masked with the secrets' values: none, no command. */
	if (secrets_mask_load(tc->cfg, tc->db, &w.mask, &err) == -1) {
		log_warn("execute: %s", err.msg);
		return result_error("Not started: the server cannot read its "
		    "secrets to keep them out of the output (the operator: "
		    "sandboxctl status, the key file in SANDBOX_SECRETS_KEY).");
	}
	w.tc = tc;
	w.run_id = run_id;
	w.started = clock_ms();
	/* The first output goes out at once. */
	w.last_progress = w.started - PROGRESS_EVERY_MS;
	memset(&obs, 0, sizeof(obs));
	obs.output = on_output;
	obs.tick = on_tick;
	obs.arg = &w;
	if (runs_start(tc->db, tc->sandbox, run_id, tc->session_id, tc->request_id, tc->who,
	    command, timeout) == -1)
		log_warn("run %s: not recorded", run_id);
	/* Headers out now: proxies and clients see the call is alive. */
	tool_alive(tc, tc->cfg->ping_interval * 1000);
	/* 2026: a closed stream cancels; ticks often enough to notice it soon. */
	if (tc->mode.stateless && tc->chan.streams)
		pace_set(tc->sandbox, CLOSE_CHECK_MS);
	rc = sandbox_exec(tc->sandbox, full != NULL ? full : command, timeout,
	    run_id, &obs, &res, &err);
	pace_set(tc->sandbox, 0);
	free(full);
	if (rc == -1) {
		char esc[256];

		mask_free(w.mask);
		out = result_error("The command could not run: %s", err.msg);
		log_warn("run %s: could not run: %s", run_id,
		    log_escape(esc, sizeof(esc), err.msg, strlen(err.msg)));
		runs_finish(tc->db, run_id, "error", -1, 0, 0, 0, out);
		runs_set_error(tc->db, run_id, err.msg);
		return out;
	}
	/* Killed (137) by a cancellation: the run table says so, not the exit. */
	if (!res.killed && !res.detached && res.exit_code == 137 &&
	    (w.cancel_seen || runs_cancel_requested(tc->db, run_id)))
		res.killed = true;
	/*
	 * Stopped by the server itself (a forced restore), not by the
	 * client: it is answered, saying why.
	 */
	if (res.killed || res.with_container) {
		char *reason = runs_stop_reason(tc->db, run_id);

		if (reason != NULL) {
			free(res.notice);
			res.notice = reason;
			server_stop = true;
		}
	}

	if ((out = result_exec(&res, timeout, run_id, w.mask, &state)) == NULL) {
		exec_result_free(&res);
		mask_free(w.mask);
		return result_error("Internal error: out of memory.");
	}
	mask_free(w.mask);
	w.mask = NULL;
	/*
	 * Detached from a run under the supervisor: its record will hold the
	 * real result, which a later get_result or the reconciler collects;
	 * the row stays "running" until then.
	 */
	if (!(res.detached && res.supervised))
		runs_finish(tc->db, run_id, state, res.exit_code,
		    res.duration_ms, res.out.total, res.err.total, out);
	exec_result_free(&res);
	if (res.killed && !server_stop) {
		/* Cancelled: no response (spec: utilities/cancellation). */
		json_object_put(out);
		return NULL;
	}
	return out;
}


const struct tool tool_execute = {
	.name = "execute",
	.describe = describe,
	.call = call,
};
