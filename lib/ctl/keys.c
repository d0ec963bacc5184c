/*
 * keys.c: keys list | add NAME | rotate NAME | revoke NAME, the personal
 * keys (oauth/owners.h). Revoking ends the owner's sign-ins and links at
 * once and stops their sandbox; rotating ends the sign-ins and prints the
 * new key.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"
#include "oauth/owners.h"
#include "sandbox/sandboxes.h"

/* The last sign-in, "never" while none. */
static const char *
last_cell(struct json_object *o, const char *member, char *buf, size_t n)
{
	if (js_get(o, member, json_type_int) == NULL)
		return "never";
	return ctl_show_when(buf, n, ctl_show_int(o, member));
}

static int
keys_list(struct ctl *c)
{
	static const struct ctl_table_col shown[] = {
		{ "OWNER", -24, 0, "owner", ctl_table_esc, 80 },
		{ "STATE", -8, 0, "state", ctl_table_str, 0 },
		{ "CREATED (UTC)", -20, 0, "created", ctl_table_when, 0 },
		{ "LAST SIGN-IN", -20, 0, "last_used", last_cell, 0 },
		{ "LIVE SIGN-INS", 0, 0, "grants", ctl_table_int, 0 },
		{ NULL, 0, 0, NULL, NULL, 0 }
	};
	static const struct ctl_table table = { shown, NULL };

	return ctl_rows_list(c, STMT_OWNER_KEY_LIST, "i", (long long)time(NULL),
	    0, &table);
}

/*
 * keys revoke NAME: its sign-ins and links end, its sandbox stops (person
 * scope) and stays stopped (sandboxes_claim refuses it).
 */
static int
keys_revoke(struct ctl *c, const char *name)
{
	struct error		 err;
	char			 b[80];
	enum lookup_result	 rc;

	if ((rc = owners_key_revoke(c->db, name, &err)) == LOOKUP_ERROR) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	if (rc == LOOKUP_NONE) {
		fprintf(stderr, "sandboxctl: no valid key named %s\n",
		    ctl_show_esc(b, sizeof(b), name));
		return 1;
	}
	printf("key %s revoked; its sign-ins, download links and upload links "
	    "are ended\n", name);
	if (c->cfg->per_person) {
		if (sandboxes_stop(c->cfg, c->db, name, "revoked", &err) == -1) {
			fprintf(stderr, "sandboxctl: %s\n", err.msg);
			return 1;
		}
		printf("its sandbox is stopped (the volume is kept: "
		    "sandboxctl sandboxes remove %s deletes it)\n", name);
	}
	return 0;
}

/* Print a personal key once, for the operator to hand over. */
static void
show_key(struct ctl *c, const char *name, const char *key, const char *what)
{
	if (c->json) {
		struct json_object *o = json_object_new_object();

		js_set_str(o, "owner", name);
		js_set_str(o, "key", key);
		ctl_show_json(o);
		json_object_put(o);
		return;
	}
	printf("%s key of %s (shown only now; only its hash is kept):\n%s\n",
	    what, name, key);
}

int
ctl_keys(struct ctl *c)
{
	struct error	 err;
	char		 key[OWNER_KEY_MAX];
	const char	*verb = c->argc > 0 ? c->argv[0] : "";
	bool		 add = strcmp(verb, "add") == 0;

	if (c->argc == 1 && strcmp(verb, "list") == 0)
		return keys_list(c);
	if (c->argc != 2 || (!add && strcmp(verb, "rotate") != 0 &&
	    strcmp(verb, "revoke") != 0))
		return ctl_misuse();
	if (strcmp(verb, "revoke") == 0)
		return keys_revoke(c, c->argv[1]);
	if ((add ? owners_key_add(c->db, c->argv[1], key, &err) :
	    owners_key_rotate(c->db, c->argv[1], key, &err)) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	show_key(c, c->argv[1], key, add ? "New" :
	    "Rotated (earlier sign-ins ended)");
	crypto_wipe(key, sizeof(key));
	/*
	 * In one shared container, key holders have no confidentiality or
	 * integrity from each other (SECURITY.md): say so where keys are
	 * handed out. On stderr, so the key (or JSON) alone is on stdout.
	 */
	if (add && !c->cfg->per_person)
		fprintf(stderr, "sandboxctl: note: SANDBOX_SCOPE is shared: "
		    "everyone with a key uses one container, as root, so each "
		    "person's model can read and change the others' files, "
		    "commands and output. With personal keys, set "
		    "SANDBOX_SCOPE=person (docs/teams.md).\n");
	return 0;
}
