/*
 * test_result.c: a finished command's CallToolResult (lib/runs/result.c):
 * isError and the text's first line for each way a command ends.
 * Prints "ok - name" or "not ok - name" per check; exits 1 on any failure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "runs/result.h"
#include "sandbox/sandbox.h"
#include "check.h"

/* The result of res: isError into *is_error, the state, the text's start. */
static bool
ends(struct exec_result *res, bool want_error, const char *want_state,
    const char *want_text)
{
	struct json_object	*out, *content, *v;
	const char		*state = NULL, *text;
	bool			 ok;

	res->out.text = (char *)"";
	res->err.text = (char *)"";
	if ((out = result_exec(res, 30, "r-test", NULL, &state)) == NULL)
		return false;
	content = json_object_object_get(out, "content");
	text = json_object_get_string(json_object_object_get(
	    json_object_array_get_idx(content, 0), "text"));
	ok = json_object_object_get_ex(out, "isError", &v) &&
	    json_object_get_boolean(v) == want_error &&
	    strcmp(state, want_state) == 0 && text != NULL &&
	    strncmp(text, want_text, strlen(want_text)) == 0;
	if (!ok)
		printf("# %s\n", json_object_to_json_string(out));
	json_object_put(out);
	return ok;
}

int
main(void)
{
	struct exec_result r;

	memset(&r, 0, sizeof(r));
	r.exit_code = 0;
	CHECK(ends(&r, false, "exit", "Exit code 0 "), "exit code 0: a result");
	r.exit_code = 3;
	CHECK(ends(&r, false, "exit", "Exit code 3 "),
	    "a non-zero exit code: an ordinary result, not an error");
	r.exit_code = -1;
	CHECK(ends(&r, true, "exit", "Ended without a result"),
	    "no exit code kept: an error result that says how it ended is not known");
	r.with_container = true;
	CHECK(ends(&r, true, "exit", "Killed with the container"),
	    "ended with the container: an error result");
	memset(&r, 0, sizeof(r));
	r.exit_code = 137;
	r.timed_out = true;
	CHECK(ends(&r, true, "timeout", "Timed out after 30 s"),
	    "timed out: an error result");
	return check_status();
}
