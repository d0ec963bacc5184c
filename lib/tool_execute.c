/*
 * tool_execute.c: execute(command, timeout) runs a bash command in /sandbox.
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

#include "config.h"
#include "crypto.h"
#include "js.h"
#include "mcp.h"
#include "sandbox.h"
#include "tools.h"

#define COMMAND_MAX	(256 * 1024)
#define DEFAULT_TIMEOUT	3600

static struct json_object *
prop(const char *type, const char *description)
{
	struct json_object *p = json_object_new_object();

	js_set_str(p, "type", type);
	if (description != NULL)
		js_set_str(p, "description", description);
	return p;
}

static struct json_object *
describe(const struct config *cfg)
{
	struct json_object *t, *in, *props, *req, *out, *oprops, *ann, *p, *types;
	char desc[1024];

	t = json_object_new_object();
	js_set_str(t, "name", "execute");
	js_set_str(t, "title", "Run a bash command in the sandbox");
	snprintf(desc, sizeof(desc),
	    "Run a bash command in /sandbox inside a persistent Linux container "
	    "(Debian, root, internet access) and return its stdout, stderr and "
	    "exit code. Each call is a fresh `bash -c`: cd and exported "
	    "variables do not carry over, files in /sandbox and installed "
	    "packages do. Output above %ld bytes per stream is cut in the "
	    "middle (beginning and end kept). At the timeout the command and "
	    "all its children are killed; detach long-running services with "
	    "`setsid nohup cmd > log 2>&1 &`.", cfg->max_output_bytes);
	js_set_str(t, "description", desc);

	in = json_object_new_object();
	js_set_str(in, "type", "object");
	props = json_object_new_object();
	js_set(props, "command", prop("string", "The bash command or script to run."));
	p = prop("integer", "Seconds before the command and its children are killed.");
	js_set_int(p, "default", DEFAULT_TIMEOUT);
	js_set_int(p, "minimum", 1);
	js_set_int(p, "maximum", cfg->max_timeout);
	js_set(props, "timeout", p);
	js_set(in, "properties", props);
	req = json_object_new_array();
	json_object_array_add(req, json_object_new_string("command"));
	js_set(in, "required", req);
	js_set_bool(in, "additionalProperties", false);
	js_set(t, "inputSchema", in);

	out = json_object_new_object();
	js_set_str(out, "type", "object");
	oprops = json_object_new_object();
	types = json_object_new_array();
	json_object_array_add(types, json_object_new_string("integer"));
	json_object_array_add(types, json_object_new_string("null"));
	p = json_object_new_object();
	js_set(p, "type", types);
	js_set_str(p, "description", "Exit status; null when it is not known.");
	js_set(oprops, "exit_code", p);
	js_set(oprops, "stdout", prop("string", "Standard output (valid UTF-8; invalid bytes shown as U+FFFD)."));
	js_set(oprops, "stderr", prop("string", "Standard error (same)."));
	js_set(oprops, "timed_out", prop("boolean", "Killed at the timeout."));
	js_set(oprops, "stdout_truncated_bytes", prop("integer", "Bytes cut from the middle of stdout."));
	js_set(oprops, "stderr_truncated_bytes", prop("integer", "Bytes cut from the middle of stderr."));
	js_set(oprops, "duration_ms", prop("integer", "Wall-clock run time."));
	js_set(out, "properties", oprops);
	req = json_object_new_array();
	json_object_array_add(req, json_object_new_string("exit_code"));
	json_object_array_add(req, json_object_new_string("stdout"));
	json_object_array_add(req, json_object_new_string("stderr"));
	json_object_array_add(req, json_object_new_string("timed_out"));
	js_set(out, "required", req);
	js_set(t, "outputSchema", out);

	ann = json_object_new_object();
	js_set_str(ann, "title", "Run a bash command in the sandbox");
	js_set_bool(ann, "readOnlyHint", false);
	js_set_bool(ann, "destructiveHint", true);
	js_set_bool(ann, "idempotentHint", false);
	js_set_bool(ann, "openWorldHint", true);
	js_set(t, "annotations", ann);
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

struct watch {
	struct tool_ctx	*tc;
	time_t		 last_ping;
};

static void
on_tick(void *arg)
{
	struct watch	*w = arg;
	time_t		 now = time(NULL);

	if (w->tc->stream == NULL || !mcp_stream_can_stream(w->tc->stream) ||
	    mcp_stream_gone(w->tc->stream))
		return;
	if (now - w->last_ping >= w->tc->cfg->ping_interval) {
		/* A client that went away is noticed here; the command goes on. */
		mcp_stream_ping(w->tc->stream);
		w->last_ping = now;
	}
}

/* The text shown to a model: the same facts as structuredContent. */
static char *
render(const struct exec_result *r, long timeout)
{
	char	*text = NULL, head[512];
	size_t	 n;
	FILE	*f;

	if ((f = open_memstream(&text, &n)) == NULL)
		return NULL;
	if (r->timed_out)
		snprintf(head, sizeof(head), "Timed out after %ld s: the command "
		    "and everything it started were killed. Output so far:", timeout);
	else if (r->exit_code >= 0)
		snprintf(head, sizeof(head), "Exit code %d after %.1f s.",
		    r->exit_code, (double)r->duration_ms / 1000);
	else
		snprintf(head, sizeof(head), "Exit code unknown after %.1f s.",
		    (double)r->duration_ms / 1000);
	fprintf(f, "%s\n", head);
	fprintf(f, "--- stdout");
	if (r->out.cut > 0)
		fprintf(f, " (%llu of %llu bytes cut from the middle)",
		    r->out.cut, r->out.total);
	fprintf(f, " ---\n%s", r->out.text);
	if (r->out.len > 0 && r->out.text[r->out.len - 1] != '\n')
		fputc('\n', f);
	fprintf(f, "--- stderr");
	if (r->err.cut > 0)
		fprintf(f, " (%llu of %llu bytes cut from the middle)",
		    r->err.cut, r->err.total);
	fprintf(f, " ---\n%s", r->err.text);
	if (r->err.len > 0 && r->err.text[r->err.len - 1] != '\n')
		fputc('\n', f);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static struct json_object *
call(struct tool_ctx *tc, struct json_object *args)
{
	struct exec_result	 res;
	struct exec_observer	 obs;
	struct watch		 w;
	struct error		 err;
	struct json_object	*sc, *out;
	const char		*command;
	char			 why[256], run_id[32], *text;
	long			 timeout;
	struct json_object	*v;

	json_object_object_foreach(args, key, val) {
		(void)val;
		if (strcmp(key, "command") != 0 && strcmp(key, "timeout") != 0)
			return tool_error("Unknown argument \"%.64s\": execute "
			    "takes command (string) and timeout (seconds).", key);
	}
	if (!json_object_object_get_ex(args, "command", &v) ||
	    !json_object_is_type(v, json_type_string))
		return tool_error("command is required and must be a string "
		    "holding the bash command to run.");
	command = json_object_get_string(v);
	if (json_object_get_string_len(v) == 0 ||
	    strspn(command, " \t\r\n") == strlen(command))
		return tool_error("command is empty: give the bash command to run.");
	if ((size_t)json_object_get_string_len(v) != strlen(command))
		return tool_error("command contains a NUL character; write binary "
		    "data with printf escapes instead.");
	if (json_object_get_string_len(v) > COMMAND_MAX)
		return tool_error("command is longer than %d bytes: write the "
		    "script to a file in /sandbox in parts and run the file.",
		    COMMAND_MAX);
	if (get_timeout(args, tc->cfg, &timeout, why, sizeof(why)) == -1)
		return tool_error("%s.", why);
	if (crypto_token(run_id, sizeof(run_id), 12) == -1)
		return tool_error("Internal error: no randomness for a run id.");

	memset(&w, 0, sizeof(w));
	w.tc = tc;
	w.last_ping = time(NULL);
	memset(&obs, 0, sizeof(obs));
	obs.tick = on_tick;
	obs.arg = &w;
	if (sandbox_exec(tc->sandbox, command, timeout, run_id, &obs, &res,
	    &err) == -1)
		return tool_error("The command could not run: %s", err.msg);

	sc = json_object_new_object();
	js_set(sc, "exit_code", res.exit_code >= 0 ?
	    json_object_new_int(res.exit_code) : NULL);
	js_set_strn(sc, "stdout", res.out.text, res.out.len);
	js_set_strn(sc, "stderr", res.err.text, res.err.len);
	js_set_bool(sc, "timed_out", res.timed_out);
	js_set_int(sc, "stdout_truncated_bytes", (long long)res.out.cut);
	js_set_int(sc, "stderr_truncated_bytes", (long long)res.err.cut);
	js_set_int(sc, "duration_ms", res.duration_ms);
	if ((text = render(&res, timeout)) == NULL) {
		json_object_put(sc);
		exec_result_free(&res);
		return tool_error("Internal error: out of memory.");
	}
	out = tool_result(text, sc, res.timed_out);
	free(text);
	exec_result_free(&res);
	return out;
}

const struct tool tool_execute = {
	.name = "execute",
	.describe = describe,
	.call = call,
};
