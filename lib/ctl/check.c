/*
 * check.c: check, the settings only. config_load succeeded before this;
 * here the database's folder must be writable, without touching the engine
 * or the database. Run before a web server starts (make run, the lighttpd
 * unit), so that a bad setting stops it with its reason instead of a 503.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/js.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"

int
ctl_check(struct ctl *c)
{
	char	dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", c->cfg->db_path);
	if ((slash = strrchr(dir, '/')) != NULL)
		*(slash == dir ? slash + 1 : slash) = '\0';
	if (access(c->cfg->db_path, F_OK) == 0 ?
	    access(c->cfg->db_path, R_OK | W_OK) == -1 :
	    access(dir, W_OK | X_OK) == -1) {
		fprintf(stderr, "sandboxctl: SANDBOX_DB: cannot write %s (%s): "
		    "the database and its folder must be writable by the user "
		    "the programs run as\n", c->cfg->db_path, strerror(errno));
		return 1;
	}
	if (!c->json) {
		printf("settings   %s: valid\n", c->cfg->env_file);
		printf("public URL %s (clients add %s)\n", c->cfg->public_url,
		    c->cfg->mcp_url);
	} else {
		struct json_object *o = json_object_new_object();

		js_set_str(o, "env_file", c->cfg->env_file);
		js_set_str(o, "public_url", c->cfg->public_url);
		js_set_str(o, "mcp_url", c->cfg->mcp_url);
		js_set_bool(o, "valid", true);
		ctl_show_json(o);
		json_object_put(o);
	}
	return 0;
}
