/*
 * snapshots.c: snapshots list [OWNER] | create [OWNER] | restore ID
 * [OWNER] [--force] | delete ID [OWNER] (ctl/extern.h): the operator's
 * side of the snapshot tools (sandbox/snapshot.h). In person scope OWNER
 * names the sandbox; in shared scope there is one and no OWNER.
 */
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "base/config.h"
#include "base/js.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"
#include "oauth/owners.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"
#include "sandbox/snapshot.h"

static int
usage(void)
{
	fprintf(stderr, "usage: sandboxctl snapshots list [OWNER] | create "
	    "[OWNER] | restore ID [OWNER] [--force] | delete ID [OWNER]\n");
	return 2;
}

static void
show_list(struct json_object *a)
{
	char	 b1[64], b2[64], b3[80];
	size_t	 i, n = json_object_array_length(a);

	printf("%zu snapshot%s\n", n, n == 1 ? "" : "s");
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(a, i);

		ctl_show_bytes(b2, sizeof(b2), ctl_show_int(o, "sandbox_bytes"));
		ctl_show_bytes(b3, sizeof(b3), ctl_show_int(o, "layer_bytes"));
		printf("  %s  %s  /sandbox %s, layer %s, by %s: %s\n",
		    ctl_show_str(o, "snapshot_id"),
		    ctl_show_when(b1, sizeof(b1), ctl_show_int(o, "created")),
		    b2, b3, ctl_show_str(o, "owner"), ctl_show_str(o, "note"));
	}
}

int
ctl_snapshots(struct ctl *c)
{
	struct snapshot_who	 who = { "operator", "sandboxctl" };
	struct json_object	*a, *info = NULL;
	struct sandbox		*sb = NULL;
	struct error		 err;
	const char		*verb, *id = NULL, *owner = NULL;
	char			 newid[SNAPSHOT_ID_MAX];
	bool			 force = false;
	int			 i, rest, rc = 1;

	if (c->argc < 1)
		return usage();
	verb = c->argv[0];
	rest = 1;
	if (strcmp(verb, "restore") == 0 || strcmp(verb, "delete") == 0) {
		if (c->argc < 2)
			return usage();
		id = c->argv[1];
		rest = 2;
	} else if (strcmp(verb, "list") != 0 && strcmp(verb, "create") != 0)
		return usage();
	for (i = rest; i < c->argc; i++) {
		if (strcmp(c->argv[i], "--force") == 0 &&
		    strcmp(verb, "restore") == 0)
			force = true;
		else if (owner == NULL && c->argv[i][0] != '-')
			owner = c->argv[i];
		else
			return usage();
	}
	if (c->cfg->per_person && owner == NULL) {
		fprintf(stderr, "sandboxctl: SANDBOX_SCOPE is person: name the "
		    "owner whose sandbox it is (sandboxctl sandboxes list)\n");
		return 2;
	}
	if (!c->cfg->per_person && owner != NULL) {
		fprintf(stderr, "sandboxctl: SANDBOX_SCOPE is shared: there is "
		    "one sandbox, name no owner\n");
		return 2;
	}
	if (owner != NULL && !owners_name_valid(owner) &&
	    strcmp(owner, OWNER_OPERATOR) != 0)
		return usage();
	/* Creating and restoring start the container: claimed (sandboxes.h). */
	if ((strcmp(verb, "create") == 0 || strcmp(verb, "restore") == 0 ?
	    sandboxes_open(c->cfg, c->db, owner, &sb, &err) :
	    sandbox_open(c->cfg, owner, &sb, &err)) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	if (strcmp(verb, "list") == 0) {
		if ((a = snapshot_list(c->db, sb)) == NULL)
			goto out;
		if (c->json)
			ctl_show_json(a);
		else
			show_list(a);
		json_object_put(a);
		rc = 0;
	} else if (strcmp(verb, "create") == 0) {
		if (snapshot_take(c->cfg, c->db, sb, &who, "by the operator",
		    newid, &info, &err) == -1)
			goto fail;
		if (c->json)
			ctl_show_json(info);
		else
			printf("snapshot %s taken\n", newid);
		json_object_put(info);
		rc = 0;
	} else if (strcmp(verb, "restore") == 0) {
		if (snapshot_restore(c->cfg, c->db, sb, &who, id, force, NULL,
		    &err) == -1)
			goto fail;
		printf("restored to snapshot %s\n", id);
		rc = 0;
	} else {
		if (snapshot_delete(c->cfg, c->db, sb, id, &err) == -1)
			goto fail;
		printf("snapshot %s deleted\n", id);
		rc = 0;
	}
	goto out;
fail:
	fprintf(stderr, "sandboxctl: %s\n", err.msg);
out:
	sandbox_close(sb);
	return rc;
}
