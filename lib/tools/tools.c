/* tools.c: the helpers of tools.h shared by the tools. */
#include <stdarg.h>
#include <stdio.h>

#include "base/js.h"
#include "tools/tools.h"

struct json_object *
tool_new(const char *name, const char *title, const char *description)
{
	struct json_object *t = json_object_new_object();

	js_set_str(t, "name", name);
	js_set_str(t, "title", title);
	js_set_str(t, "description", description);
	return t;
}

struct json_object *
tool_prop(const char *type, const char *description)
{
	struct json_object *p = json_object_new_object();

	if (type != NULL)
		js_set_str(p, "type", type);
	if (description != NULL)
		js_set_str(p, "description", description);
	return p;
}

struct json_object *
tool_object(struct json_object *props, int closed, ...)
{
	struct json_object	*o = json_object_new_object(), *req;
	const char		*name;
	va_list			 ap;

	js_set_str(o, "type", "object");
	js_set(o, "properties", props);
	req = json_object_new_array();
	va_start(ap, closed);
	while ((name = va_arg(ap, const char *)) != NULL)
		json_object_array_add(req, json_object_new_string(name));
	va_end(ap);
	if (json_object_array_length(req) > 0)
		js_set(o, "required", req);
	else
		json_object_put(req);
	if (closed)
		js_set_bool(o, "additionalProperties", false);
	return o;
}

void
tool_annotate(struct json_object *tool, bool read_only, bool destructive,
    bool idempotent, bool open_world)
{
	struct json_object *a = json_object_new_object();

	js_set_str(a, "title", js_str(tool, "title"));
	js_set_bool(a, "readOnlyHint", read_only);
	js_set_bool(a, "destructiveHint", destructive);
	js_set_bool(a, "idempotentHint", idempotent);
	js_set_bool(a, "openWorldHint", open_world);
	js_set(tool, "annotations", a);
}

void
tool_progress(struct tool_ctx *tc, long long n, const char *message)
{
	if (tc->chan.progress != NULL && tc->mode.progress && tc->chan.streams)
		tc->chan.progress(tc->chan.arg, n, message);
}

int
tool_alive(struct tool_ctx *tc, long interval_ms)
{
	if (tc->chan.alive == NULL)
		return 0;
	return tc->chan.alive(tc->chan.arg, interval_ms);
}

bool
tool_client_gone(struct tool_ctx *tc)
{
	return tc->chan.gone != NULL && tc->chan.gone(tc->chan.arg);
}

int
tool_answer(struct tool_ctx *tc, struct json_object *result)
{
	if (tc->chan.answer == NULL) {
		json_object_put(result);
		return -1;
	}
	return tc->chan.answer(tc->chan.arg, result);
}
