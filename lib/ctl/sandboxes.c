/*
 * sandboxes.c: sandboxes list | stop OWNER | stop-idle | remove OWNER, the
 * sandboxes per person, and recreate [OWNER] (ctl/extern.h).
 */
#include <stdio.h>
#include <string.h>

#include "base/config.h"
#include "base/js.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"
#include "oauth/owners.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"

void
ctl_sandboxes_show(struct json_object *arr)
{
	struct json_object	*o;
	char			 b1[64], b2[64];
	size_t			 i, n = arr == NULL ? 0 :
				    json_object_array_length(arr);

	printf("sandboxes  %zu (one per person, SANDBOX_SCOPE=person)\n", n);
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(arr, i);
		printf("  %-16s %s: %s, %lld command%s, last used %s%s%s\n",
		    ctl_show_esc(b1, sizeof(b1), ctl_show_str(o, "owner")),
		    ctl_show_str(o, "container"),
		    ctl_show_str(o, "engine_state"),
		    ctl_show_int(o, "commands"),
		    ctl_show_int(o, "commands") == 1 ? "" : "s",
		    ctl_show_when(b2, sizeof(b2), ctl_show_int(o, "last_used")),
		    js_str(o, "stop_reason") != NULL ? ", stopped: " : "",
		    js_str(o, "stop_reason") != NULL ?
		    js_str(o, "stop_reason") : "");
	}
}

/* sandboxes list: in shared scope the one sandbox is named. */
static int
sandboxes_show_list(struct ctl *c)
{
	struct json_object *arr;

	if ((arr = sandboxes_list(c->cfg, c->db)) == NULL)
		return 1;
	if (c->json)
		ctl_show_json(arr);
	else if (c->cfg->per_person)
		ctl_sandboxes_show(arr);
	else
		printf("SANDBOX_SCOPE is shared: one sandbox, %s (see "
		    "sandboxctl status)\n", ctl_show_str(
		    json_object_array_get_idx(arr, 0), "container"));
	json_object_put(arr);
	return 0;
}

/*
 * remove deletes the container AND the volume (every file of that
 * person): the one way a volume is removed.
 */
int
ctl_sandboxes(struct ctl *c)
{
	struct error	 err;
	const char	*verb = c->argc > 0 ? c->argv[0] : "";
	char		 b[80];
	long		 removed = 0;
	int		 n;

	if (c->argc == 1 && strcmp(verb, "list") == 0)
		return sandboxes_show_list(c);
	if (c->argc == 1 && strcmp(verb, "stop-idle") == 0) {
		n = sandboxes_stop_idle(c->cfg, c->db);
		printf("%d idle sandbox%s stopped\n", n, n == 1 ? "" : "es");
		return 0;
	}
	if (c->argc != 2 || (strcmp(verb, "stop") != 0 &&
	    strcmp(verb, "remove") != 0))
		return ctl_misuse();
	if (!c->cfg->per_person) {
		fprintf(stderr, "sandboxctl: SANDBOX_SCOPE is shared: there are "
		    "no sandboxes per person\n");
		return 1;
	}
	if ((strcmp(verb, "stop") == 0 ? sandboxes_stop(c->cfg, c->db,
	    c->argv[1], "operator", &err) : sandboxes_remove(c->cfg, c->db,
	    c->argv[1], &removed, &err)) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	if (strcmp(verb, "stop") == 0)
		printf("sandbox of %s stopped (files kept)\n",
		    ctl_show_esc(b, sizeof(b), c->argv[1]));
	else
		printf("sandbox of %s removed with its volume and %ld "
		    "snapshot%s\n", ctl_show_esc(b, sizeof(b), c->argv[1]),
		    removed, removed == 1 ? "" : "s");
	return 0;
}

/*
 * Remove the sandbox container and make it again from the settings: the
 * way out of a refusal ("not as configured"). The volume stays. In person
 * scope the owner's sandbox is named: recreate OWNER.
 */
int
ctl_sandboxes_recreate(struct ctl *c)
{
	struct sandbox	*sb = NULL;
	struct error	 err;
	const char	*owner = c->argc == 1 ? c->argv[0] : NULL;
	int		 rc = 1;

	if (c->argc > 1 || (owner != NULL && !owners_name_valid(owner) &&
	    strcmp(owner, OWNER_OPERATOR) != 0)) {
		fprintf(stderr, "usage: sandboxctl recreate [OWNER]\n");
		return 2;
	}
	if (c->cfg->per_person && owner == NULL) {
		fprintf(stderr, "sandboxctl: SANDBOX_SCOPE is person: name the "
		    "owner whose sandbox to recreate (sandboxctl sandboxes "
		    "list)\n");
		return 2;
	}
	/* Claimed like any start: counted, idle-stopped (sandboxes.h). */
	if (sandboxes_open(c->cfg, c->db, c->cfg->per_person ? owner : NULL,
	    &sb, &err) == -1 || sandbox_recreate(sb, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		goto out;
	}
	printf("%s recreated; /sandbox kept (packages installed "
	    "outside it are gone)\n", c->cfg->per_person ? owner :
	    c->cfg->container);
	rc = 0;
out:
	sandbox_close(sb);
	return rc;
}
