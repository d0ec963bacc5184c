/* test_cleanup: reading the clean-up script's output. */
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "check.h"
#include "ops/cleanup.h"

static struct json_object *
names(const struct cleanup_report *r)
{
	return r->names != NULL ? json_tokener_parse(r->names) : NULL;
}

int
main(void)
{
	struct cleanup_report	 r;
	struct json_object	*n;

	memset(&r, 0, sizeof(r));
	CHECK(cleanup_parse("R 4096 old\nR 12 $'a\\nb'\nF stuck\nT 2 3 1 4108\n",
	    &r) == 0, "a full summary parses");
	CHECK(r.removed == 2 && r.kept == 3 && r.failed == 1 && r.bytes == 4108,
	    "counts come from the T line");
	n = names(&r);
	CHECK(n != NULL && json_object_array_length(n) == 2, "two names kept");
	CHECK(n != NULL && strcmp(json_object_get_string(
	    json_object_array_get_idx(n, 1)), "$'a\\nb'") == 0,
	    "a shell-quoted name is kept as printed");
	json_object_put(n);
	cleanup_report_free(&r);

	memset(&r, 0, sizeof(r));
	CHECK(cleanup_parse("R 1 x\n", &r) == -1, "no T line: the script did not finish");
	cleanup_report_free(&r);

	memset(&r, 0, sizeof(r));
	CHECK(cleanup_parse("T 1 2 x 4\n", &r) == -1, "a malformed T line is refused");
	cleanup_report_free(&r);

	memset(&r, 0, sizeof(r));
	CHECK(cleanup_parse("T -1 0 0 0\n", &r) == -1, "negative counts are refused");
	cleanup_report_free(&r);

	memset(&r, 0, sizeof(r));
	CHECK(cleanup_parse("garbage\nR\nR x y\nT 0 5 0 0", &r) == 0 &&
	    r.kept == 5 && r.removed == 0, "junk lines are skipped, last line without newline");
	n = names(&r);
	CHECK(n != NULL && json_object_array_length(n) == 0, "no names when none removed");
	json_object_put(n);
	cleanup_report_free(&r);

	/*
	 * An R line with no number must not take one from the next line:
	 * the name would then end before it starts. The output is the
	 * container's (its root may replace bash), so it is untrusted; on
	 * the heap at its exact size so that an over-read is caught.
	 */
	{
		static const char text[] = "R \n42 x\nR 7\n5 y\nT 0 0 0 0\n";
		char *buf = malloc(sizeof(text));

		memcpy(buf, text, sizeof(text));
		memset(&r, 0, sizeof(r));
		CHECK(cleanup_parse(buf, &r) == 0, "R lines without a number "
		    "on their own line are skipped");
		n = names(&r);
		CHECK(n != NULL && json_object_array_length(n) == 0,
		    "no name is taken from across a line end");
		json_object_put(n);
		cleanup_report_free(&r);
		free(buf);
	}
	return check_status();
}
