/* result.c: see result.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/js.h"
#include "base/secret.h"
#include "runs/result.h"
#include "sandbox/sandbox.h"

struct json_object *
result_new(const char *text, struct json_object *structured, bool is_error)
{
	struct json_object *r = json_object_new_object(), *content, *block;

	content = json_object_new_array();
	block = json_object_new_object();
	js_set_str(block, "type", "text");
	js_set_str(block, "text", text);
	json_object_array_add(content, block);
	js_set(r, "content", content);
	if (structured != NULL)
		js_set(r, "structuredContent", structured);
	js_set_bool(r, "isError", is_error);
	return r;
}

struct json_object *
result_error(const char *fmt, ...)
{
	char	msg[1024];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return result_new(msg, NULL, true);
}

/* The text shown to a model: the same facts as structuredContent. */
static char *
render(const struct exec_result *r, long timeout, const char *run_id)
{
	char	*text = NULL, head[512];
	size_t	 n;
	FILE	*f;

	if ((f = open_memstream(&text, &n)) == NULL)
		return NULL;
	if (r->detached && r->supervised && r->engine_lost)
		snprintf(head, sizeof(head), "The connection to the Docker "
		    "engine broke while this command ran; its result is kept in "
		    "the sandbox if the container survived: call get_result with "
		    "this run_id for it. Output so far:");
	else if (r->detached && r->supervised)
		snprintf(head, sizeof(head), "The server is restarting and stopped "
		    "watching this command; it goes on in the sandbox and its "
		    "result is kept: call get_result with this run_id for it. "
		    "Output so far:");
	else if (r->detached)
		snprintf(head, sizeof(head), "The server is restarting and stopped "
		    "watching this command; it goes on in the sandbox but its "
		    "result will not be captured. Output so far:");
	else if (r->killed)
		snprintf(head, sizeof(head), "Cancelled after %.1f s: the command "
		    "and everything it started were killed.",
		    (double)r->duration_ms / 1000);
	else if (r->timed_out)
		snprintf(head, sizeof(head), "Timed out after %ld s: the command "
		    "and everything it started were killed. Output so far:", timeout);
	else if (r->with_container)
		snprintf(head, sizeof(head), "Killed with the container: the "
		    "sandbox container stopped or restarted while this command "
		    "ran (after %.1f s). Output so far:",
		    (double)r->duration_ms / 1000);
	else if (r->oom_killed)
		snprintf(head, sizeof(head), "Killed (exit code %d) after %.1f s: "
		    "out of memory, the sandbox's memory limit was reached.",
		    r->exit_code, (double)r->duration_ms / 1000);
	else if (r->exit_code >= 0)
		snprintf(head, sizeof(head), "Exit code %d after %.1f s.",
		    r->exit_code, (double)r->duration_ms / 1000);
	else
		snprintf(head, sizeof(head), "Ended without a result after "
		    "%.1f s: how this command ended is not known (no exit code "
		    "was kept). Output so far:", (double)r->duration_ms / 1000);
	fprintf(f, "%s (run_id %s)\n", head, run_id);
	if (r->notice != NULL)
		fprintf(f, "%s\n", r->notice);
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


struct json_object *
result_exec(const struct exec_result *in, long timeout,
    const char *run_id, const struct mask *mask, const char **state)
{
	struct json_object	*sc, *out;
	struct exec_result	 copy;
	const struct exec_result *res = in;
	char			*text, *o = NULL, *e = NULL, *nt = NULL;

	/* The secrets' values masked before anything is kept or sent. */
	if (mask_count(mask) > 0) {
		copy = *in;
		if ((o = mask_apply_cut(mask, in->out.text, in->out.len,
		    &copy.out.len)) == NULL ||
		    (e = mask_apply_cut(mask, in->err.text, in->err.len,
		    &copy.err.len)) == NULL ||
		    (in->notice != NULL && (nt = mask_apply(mask, in->notice,
		    strlen(in->notice), &(size_t){ 0 })) == NULL)) {
			free(o);
			free(e);
			return NULL;
		}
		copy.out.text = o;
		copy.err.text = e;
		if (nt != NULL)
			copy.notice = nt;
		res = &copy;
	}

	sc = json_object_new_object();
	js_set_str(sc, "run_id", run_id);
	js_set(sc, "exit_code", res->exit_code >= 0 ?
	    json_object_new_int(res->exit_code) : NULL);
	js_set_strn(sc, "stdout", res->out.text, res->out.len);
	js_set_strn(sc, "stderr", res->err.text, res->err.len);
	js_set_bool(sc, "timed_out", res->timed_out);
	js_set_bool(sc, "cancelled", res->killed);
	js_set_bool(sc, "oom_killed", res->oom_killed);
	js_set_int(sc, "stdout_truncated_bytes", (long long)res->out.cut);
	js_set_int(sc, "stderr_truncated_bytes", (long long)res->err.cut);
	js_set_int(sc, "duration_ms", res->duration_ms);
	if (res->notice != NULL)
		js_set_str(sc, "notice", res->notice);
	if ((text = render(res, timeout, run_id)) == NULL) {
		json_object_put(sc);
		free(o);
		free(e);
		free(nt);
		return NULL;
	}
	/* An outcome not known (no exit code) is never told as a success. */
	out = result_new(text, sc, res->timed_out || res->detached ||
	    res->killed || res->with_container || res->disk_stopped ||
	    res->exit_code < 0);
	free(text);
	free(o);
	free(e);
	free(nt);
	*state = res->detached ? "detached" : res->killed ? "cancel" :
	    res->timed_out ? "timeout" : "exit";
	return out;
}
