/* cleanup.c: cleanup, the FILE_TTL clean-up pass now (ctl/extern.h). */
#include <stdio.h>
#include <string.h>

#include "base/js.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"
#include "ops/cleanup.h"

/* The report as JSON. */
static void
print_report(const struct cleanup_report *r)
{
	struct json_object *o = json_object_new_object();

	js_set_bool(o, "ran", r->ran);
	if (r->ran) {
		js_set_int(o, "id", r->id);
		js_set_str(o, "state", r->state);
		js_set_int(o, "removed", r->removed);
		js_set_int(o, "kept", r->kept);
		js_set_int(o, "failed", r->failed);
		js_set_int(o, "bytes", r->bytes);
		js_set_int(o, "runs_pruned", r->runs_pruned);
		js_set_int(o, "results_cleared", r->results_cleared);
		if (r->message[0] != '\0')
			js_set_str(o, "message", r->message);
		if (r->names != NULL)
			js_set(o, "names", json_tokener_parse(r->names));
	}
	ctl_show_json(o);
	json_object_put(o);
}

int
ctl_cleanup(struct ctl *c)
{
	struct cleanup_report	 r;
	struct error		 err;
	char			 b[64];

	if (cleanup_run(c->cfg, "sandboxctl", true, &r, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	if (c->json)
		print_report(&r);
	else if (!r.ran)
		printf("another clean-up pass is running; nothing done\n");
	else {
		ctl_show_bytes(b, sizeof(b), r.bytes);
		printf("clean-up %s: removed %ld entries (%s), kept %ld, failed "
		    "%ld; audit log: %ld rows pruned, %ld results cleared\n",
		    r.state, r.removed, b, r.kept, r.failed, r.runs_pruned,
		    r.results_cleared);
		if (r.message[0] != '\0')
			printf("  %s\n", r.message);
	}
	cleanup_report_free(&r);
	return r.ran && strcmp(r.state, "error") == 0 ? 1 : 0;
}
