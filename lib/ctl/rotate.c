/*
 * rotate.c: rotate-key [--revoke-tokens] [--show-key], a new
 * SANDBOX_API_KEY written into the settings file (base/envfile.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/envfile.h"
#include "base/js.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"

#define KEY_BYTES	32

/* What the rotation changed, counted before it. */
struct rotated {
	const char	*key;		/* the new key, or NULL: not shown */
	long long	 links;		/* download links still active */
	long long	 grants;	/* grants with live tokens */
	long long	 revoked;	/* grants revoked */
	bool		 revoke;	/* --revoke-tokens */
	bool		 oauth;		/* the database has OAuth grants */
};

static void
print_rotated(struct ctl *c, const struct rotated *r)
{
	struct json_object	*o;
	char			 b1[512];

	if (c->json) {
		o = json_object_new_object();
		js_set_str(o, "env_file", c->cfg->env_file);
		if (r->key != NULL)
			js_set_str(o, "key", r->key);
		js_set_int(o, "links_invalidated", r->links);
		js_set_int(o, "grants_revoked", r->revoked);
		js_set_int(o, "grants_still_valid", r->revoke ? 0 : r->grants);
		js_set_bool(o, "restart_needed", true);
		ctl_show_json(o);
		json_object_put(o);
		return;
	}
	printf("A new SANDBOX_API_KEY is in %s (mode 600).\n",
	    ctl_show_esc(b1, sizeof(b1), c->cfg->env_file));
	if (r->key != NULL)
		printf("  key: %s\n", r->key);
	printf("Invalidated:\n"
	    "  - every download link (signed with the key): %lld still "
	    "active until now;\n"
	    "  - signing in: new clients and new sign-ins need the new "
	    "key;\n"
	    "  - the key itself as a bearer token "
	    "(SANDBOX_ALLOW_KEY_BEARER).\n", r->links);
	if (r->revoke)
		printf("Revoked: %lld OAuth grants and all their tokens; "
		    "those clients sign in again.\n", r->revoked);
	else if (r->oauth)
		printf("Still valid: the OAuth tokens of %lld grants "
		    "(revoke them with rotate-key --revoke-tokens or "
		    "tokens revoke --all).\n", r->grants);
	printf("Restart the web server or the FastCGI programs: they "
	    "read the key when they start.\n");
}

int
ctl_rotate_key(struct ctl *c)
{
	struct rotated	 r;
	struct error	 err;
	char		 key[64];
	long long	 now = (long long)time(NULL);
	bool		 show = false;
	int		 i, rc = 1;

	memset(&r, 0, sizeof(r));
	for (i = 0; i < c->argc; i++) {
		if (strcmp(c->argv[i], "--revoke-tokens") == 0)
			r.revoke = true;
		else if (strcmp(c->argv[i], "--show-key") == 0)
			show = true;
		else
			return ctl_misuse();
	}
	if (getenv("SANDBOX_API_KEY") != NULL)
		fprintf(stderr, "sandboxctl: warning: SANDBOX_API_KEY is set in "
		    "the environment, which overrides the settings file: change "
		    "it there too\n");
	r.oauth = ctl_rows_have(c->db, "oauth_grant");
	if (ctl_rows_have(c->db, "link"))
		r.links = ctl_rows_count(c->db, STMT_COUNT_LINKS, "i", now,
		    "active");
	if (r.oauth)
		r.grants = ctl_rows_count(c->db, STMT_COUNT_GRANTS, "i", now,
		    "live");
	if (crypto_token(key, sizeof(key), KEY_BYTES) == -1) {
		fprintf(stderr, "sandboxctl: no randomness for a key\n");
		return 1;
	}
	if (envfile_set(c->cfg->env_file, "SANDBOX_API_KEY", key, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		goto out;
	}
	if (r.revoke && r.oauth &&
	    (r.revoked = db_exec(c->db, STMT_OPS_GRANT_DELETE_ALL, "")) < 0) {
		fprintf(stderr, "sandboxctl: the key changed, but revoking the "
		    "OAuth grants failed\n");
		goto out;
	}
	r.key = show ? key : NULL;
	print_rotated(c, &r);
	rc = 0;
out:
	crypto_wipe(key, sizeof(key));
	return rc;
}
