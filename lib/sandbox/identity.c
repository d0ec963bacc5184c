/*
 * sandbox/identity.c: which container a handle's name stands for now: its
 * Id and start time (sandbox_identity, from the guard's last check when
 * fresh) and when it last started (sandbox_started_at); see sandbox.h.
 */
#include <stdbool.h>
#include <string.h>

#include <json-c/json.h>

#include "base/js.h"
#include "sandbox/extern.h"
#include "sandbox/files.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"

/* A valid Id (64 hex digits) and a plausible StartedAt, copied. */
static int
ident_copy(const char *id, const char *at, char *idout, char *atout)
{
	if (id == NULL || strlen(id) != 64 || strspn(id,
	    "0123456789abcdef") != 64 || at == NULL || strlen(at) < 10 ||
	    strlen(at) >= SANDBOX_IDENT_MAX || strspn(at,
	    "0123456789-:.TZ+") != strlen(at))
		return -1;
	memcpy(idout, id, 65);
	memcpy(atout, at, strlen(at) + 1);
	return 0;
}

int
sandbox_identity(struct sandbox *sb, bool may_cache, char *id, char *started,
    struct error *err)
{
	static const long	 ok[] = { 200, 0 };
	struct json_object	*resp = NULL;
	int			 rc = -1;

	id[0] = started[0] = '\0';
	if (may_cache && guard_identity(sb->container, id, started) == 0)
		return 0;
	if (sandbox_call(sb, "GET", NULL, ok, &resp, "cannot inspect the "
	    "container", err, "/containers/%s/json", sb->container) == -1)
		return -1;
	if (ident_copy(js_str(resp, "Id"), js_str(js_get(resp, "State",
	    json_type_object), "StartedAt"), id, started) == -1)
		error_kind(err, ERR_UPSTREAM, "the engine gave no valid Id and StartedAt");
	else
		rc = 0;
	json_object_put(resp);
	return rc;
}

int
sandbox_started_at(struct sandbox *sb, long long *when, bool *running,
    struct error *err)
{
	static const long	 ok[] = { 200, 0 };
	struct json_object	*resp = NULL, *state;
	const char		*t;
	int			 rc = -1;

	*when = 0;
	if (running != NULL)
		*running = false;
	if (sandbox_call(sb, "GET", NULL, ok, &resp, "cannot inspect the "
	    "container", err, "/containers/%s/json", sb->container) == -1)
		return -1;
	state = js_get(resp, "State", json_type_object);
	if (running != NULL)
		js_bool(state, "Running", running);
	t = js_str(state, "StartedAt");
	if (t == NULL || files_parse_time(t, when) == -1)
		error_kind(err, ERR_UPSTREAM, "the engine gave no valid StartedAt");
	else
		rc = 0;
	json_object_put(resp);
	return rc;
}
