/*
 * status.c: status, the engine, image, container, volume, guards and
 * database at a glance, and a health check: what stops every execute makes
 * status fail (ctl/extern.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/config.h"
#include "base/js.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"
#include "sandbox/proxy.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"
#include "sandbox/terms.h"

/* Append ", what" (or "what" first) to the problems in broken. */
static void
problem(char *broken, size_t n, const char *what)
{
	size_t len = strlen(broken);

	snprintf(broken + len, n - len, "%s%s", len ? ", " : "", what);
}

/* The database's part of status st: its file and the counts of its tables. */
static void
status_database(struct ctl *c, struct json_object *st)
{
	struct json_object	*dbo, *o;
	struct stat		 sbuf;
	long long		 now = (long long)time(NULL);

	dbo = json_object_new_object();
	js_set(st, "database", dbo);
	js_set_str(dbo, "path", c->cfg->db_path);
	js_set_int(dbo, "schema_version", db_version(c->db));
	if (stat(c->cfg->db_path, &sbuf) == 0)
		js_set_int(dbo, "size_bytes", (long long)sbuf.st_size);
	o = json_object_new_object();
	ctl_rows_one(c->db, STMT_COUNT_SESSIONS, "i", now - c->cfg->session_ttl,
	    o);
	js_set(dbo, "sessions", o);
	if (ctl_rows_have(c->db, "run")) {
		o = json_object_new_object();
		ctl_rows_one(c->db, STMT_COUNT_RUNS, "", 0, o);
		js_set(dbo, "runs", o);
	}
	if (ctl_rows_have(c->db, "link")) {
		o = json_object_new_object();
		ctl_rows_one(c->db, STMT_COUNT_LINKS, "i", now, o);
		js_set(dbo, "links", o);
	}
	if (ctl_rows_have(c->db, "terminal")) {
		o = json_object_new_object();
		/* Open means alive in its sandbox (sandbox/terms.h). */
		terms_reconcile(c->cfg, c->db, NULL, NULL);
		ctl_rows_one(c->db, STMT_COUNT_TERMINALS, "", 0, o);
		js_set(dbo, "terminals", o);
	}
	if (ctl_rows_have(c->db, "preview")) {
		o = json_object_new_object();
		ctl_rows_one(c->db, STMT_COUNT_PREVIEWS, "i", now, o);
		js_set(dbo, "previews", o);
	}
	if (ctl_rows_have(c->db, "oauth_client")) {
		o = json_object_new_object();
		ctl_rows_one(c->db, STMT_COUNT_CLIENTS, "", 0, o);
		ctl_rows_one(c->db, STMT_COUNT_GRANTS, "i", now, o);
		js_set(dbo, "oauth_clients", o);
	}
	if (ctl_rows_have(c->db, "sandbox") &&
	    (o = sandboxes_list(c->cfg, c->db)) != NULL)
		js_set(st, "sandboxes", o);
	if (ctl_rows_have(c->db, "snapshot")) {
		struct json_object	*a = json_object_new_array(), *so;
		struct db_q		*q;

		if ((q = db_query(c->db, STMT_SNAP_PER_SANDBOX, "")) != NULL) {
			while (db_step(q) == DB_ROW) {
				so = json_object_new_object();
				if (db_row_json(q, so) == -1) {
					json_object_put(so);
					break;
				}
				json_object_array_add(a, so);
			}
			db_done(q);
		}
		js_set(dbo, "snapshots", a);
	}
	o = json_object_new_object();
	if (ctl_rows_one(c->db, STMT_CLEANUP_LIST, "i", 1, o))
		js_set(dbo, "last_cleanup", o);
	else
		json_object_put(o);
}

/*
 * What stops commands, into broken (n bytes, "" when healthy): the engine,
 * the image, the database, and the sandbox guard's checks (sandbox/guard.h).
 */
static void
status_problems(struct ctl *c, struct json_object *st, char *broken, size_t n)
{
	struct json_object	*eg, *o;
	const char		*v;
	bool			 yes;

	broken[0] = '\0';
	yes = false;
	js_bool(js_get(st, "engine", json_type_object), "reachable", &yes);
	if (!yes)
		problem(broken, n, "engine unreachable");
	yes = false;
	js_bool(js_get(st, "image", json_type_object), "present", &yes);
	if (!yes)
		problem(broken, n, "image missing");
	if (db_version(c->db) <= 0)
		problem(broken, n, "database unusable");
	eg = js_get(st, "egress", json_type_object);
	if (js_str(eg, "network_error") != NULL)
		problem(broken, n, "sandbox network missing");
	o = js_get(eg, "rules", json_type_object);
	if (js_bool(o, "present", &yes) == 0 && !yes)
		problem(broken, n, "firewall rules missing");
	o = js_get(eg, "canary", json_type_object);
	if (js_bool(o, "ok", &yes) == 0 && !yes)
		problem(broken, n, "egress policy not in force");
	o = js_get(st, "proxy", json_type_object);
	if (o != NULL && js_bool(o, "running", &yes) == 0 && !yes)
		problem(broken, n, "egress proxy not running");
	v = js_str(js_get(st, "spec", json_type_object), "verdict");
	if (v != NULL && strncmp(v, "refused", 7) == 0)
		problem(broken, n, "container not as configured");
}

/* The egress policy's part of status, for people. */
static void
show_egress(struct json_object *eg)
{
	struct json_object	*o;
	char			 b1[320];
	bool			 yes;

	printf("egress     policy %s", ctl_show_str(eg, "policy"));
	if (js_str(eg, "network") != NULL)
		printf(", network %s, bridge %s, gateway %s",
		    ctl_show_str(eg, "network"), ctl_show_str(eg, "bridge"),
		    ctl_show_str(eg, "gateway"));
	if (js_str(eg, "allow") != NULL && *js_str(eg, "allow") != '\0')
		printf(", allowed %s", ctl_show_esc(b1, sizeof(b1),
		    js_str(eg, "allow")));
	printf("\n");
	if (js_str(eg, "network_error") != NULL)
		printf("  ERROR    %s\n", ctl_show_str(eg, "network_error"));
	if ((o = js_get(eg, "rules", json_type_object)) != NULL) {
		if (js_bool(o, "present", &yes) == -1)
			printf("  rules    ? %s\n", ctl_show_esc(b1, sizeof(b1),
			    ctl_show_str(o, "detail")));
		else
			printf("  rules    %s%s\n", yes ? "" : "ERROR: ",
			    ctl_show_esc(b1, sizeof(b1),
			    ctl_show_str(o, "detail")));
	}
	if ((o = js_get(eg, "canary", json_type_object)) != NULL) {
		yes = false;
		js_bool(o, "ok", &yes);
		printf("  canary   %s: %s\n", yes ? "ok" :
		    "FAILED (commands are refused)",
		    ctl_show_esc(b1, sizeof(b1), ctl_show_str(o, "detail")));
	}
}

/* "  PART     USED of LIMIT" for one of the disk's parts, when there. */
static void
show_disk_part(struct json_object *disk, const char *part)
{
	struct json_object	*o;
	char			 b2[64], b3[64];

	if ((o = js_get(disk, part, json_type_object)) == NULL)
		return;
	ctl_show_bytes(b2, sizeof(b2), ctl_show_int(o, "used_bytes"));
	ctl_show_bytes(b3, sizeof(b3), ctl_show_int(o, "limit_bytes"));
	printf("  %-8s %s of %s\n", part, b2, b3);
}

/* The egress policy, disk limits and configuration drift (sandbox/guard.h). */
static void
show_guard(struct json_object *st)
{
	struct json_object	*eg, *disk, *spec;
	char			 b1[320];

	eg = js_get(st, "egress", json_type_object);
	disk = js_get(st, "disk", json_type_object);
	spec = js_get(st, "spec", json_type_object);
	if (eg != NULL)
		show_egress(eg);
	if (disk != NULL) {
		printf("disk       mode %s\n", ctl_show_str(disk, "mode"));
		show_disk_part(disk, "sandbox");
		show_disk_part(disk, "layer");
	}
	if (spec != NULL) {
		printf("config     version %s (this server makes %lld), runtime "
		    "%s: %s\n", ctl_show_str(spec, "version"),
		    ctl_show_int(spec, "wanted_version"),
		    ctl_show_str(spec, "runtime"), ctl_show_str(spec, "verdict"));
		if (js_str(spec, "differences") != NULL)
			printf("  differs  %s\n", ctl_show_esc(b1, sizeof(b1),
			    ctl_show_str(spec, "differences")));
	}
}

/* The shared container and its volume (person scope has neither). */
static void
show_container(struct json_object *con, struct json_object *vol)
{
	char	b2[64], b3[64];
	bool	yes = false;

	js_bool(con, "exists", &yes);
	if (js_get(con, "exists", json_type_boolean) == NULL)
		;
	else if (!yes)
		printf("container  %s: absent (created on the next call)\n",
		    ctl_show_str(con, "name"));
	else {
		ctl_show_bytes(b2, sizeof(b2), ctl_show_int(con, "memory"));
		printf("container  %s: %s since %s, memory %s, CPUs %.2f, "
		    "pids %lld, restarts %lld%s\n", ctl_show_str(con, "name"),
		    ctl_show_str(con, "state"), ctl_show_str(con, "started_at"),
		    b2, (double)ctl_show_int(con, "nano_cpus") / 1e9,
		    ctl_show_int(con, "pids_limit"),
		    ctl_show_int(con, "restart_count"),
		    json_object_get_boolean(js_get(con, "oom_killed",
		    json_type_boolean)) ? ", last stopped by OOM" : "");
	}
	if (js_get(vol, "used_bytes", json_type_int) != NULL) {
		ctl_show_bytes(b2, sizeof(b2), ctl_show_int(vol, "used_bytes"));
		ctl_show_bytes(b3, sizeof(b3),
		    ctl_show_int(vol, "fs_available_bytes"));
		printf("volume     %s: %s used in /sandbox, %s free on its file "
		    "system\n", ctl_show_str(vol, "name"), b2, b3);
	} else if (js_get(vol, "exists", json_type_boolean) != NULL)
		printf("volume     %s: %s\n", ctl_show_str(vol, "name"),
		    json_object_get_boolean(js_get(vol, "exists",
		    json_type_boolean)) ? "exists (usage needs a running "
		    "container)" : "absent");
}

/* The settings, the engine, the image and the sandboxes, for people. */
static void
show_sandbox(struct ctl *c, struct json_object *st)
{
	struct json_object	*eng, *img;
	char			 b1[256];
	bool			 yes = false;

	eng = js_get(st, "engine", json_type_object);
	img = js_get(st, "image", json_type_object);
	printf("settings   %s\n", ctl_show_esc(b1, sizeof(b1), c->cfg->env_file));
	printf("public URL %s/mcp\n", ctl_show_esc(b1, sizeof(b1),
	    c->cfg->public_url));
	js_bool(eng, "reachable", &yes);
	if (yes)
		printf("engine     %s: Docker %s (API %s)\n",
		    ctl_show_esc(b1, sizeof(b1), ctl_show_str(eng, "host")),
		    ctl_show_str(eng, "version"),
		    ctl_show_str(eng, "api_version"));
	else
		printf("engine     UNREACHABLE: %s\n", ctl_show_str(eng, "error"));
	yes = false;
	js_bool(img, "present", &yes);
	if (js_get(img, "present", json_type_boolean) != NULL)
		printf("image      %s: %s\n", ctl_show_str(img, "name"), yes ?
		    "present" : "MISSING (containers/build-image.sh builds it)");
	/* Person scope: no shared container; the sandboxes are listed. */
	if (c->cfg->per_person)
		ctl_sandboxes_show(js_get(st, "sandboxes", json_type_array));
	else
		show_container(js_get(st, "container", json_type_object),
		    js_get(st, "volume", json_type_object));
}

/* The database's part of status, for people. */
static void
show_database(struct ctl *c, struct json_object *dbo)
{
	struct json_object	*o;
	char			 b1[256], b2[64];

	ctl_show_bytes(b2, sizeof(b2), ctl_show_int(dbo, "size_bytes"));
	printf("database   %s: schema %lld, %s\n", ctl_show_esc(b1, sizeof(b1),
	    c->cfg->db_path), ctl_show_int(dbo, "schema_version"), b2);
	o = js_get(dbo, "sessions", json_type_object);
	printf("  sessions %lld live, %lld stored\n", ctl_show_int(o, "live"),
	    ctl_show_int(o, "total"));
	if ((o = js_get(dbo, "runs", json_type_object)) != NULL)
		printf("  runs     %lld in the audit log, %lld running\n",
		    ctl_show_int(o, "total"), ctl_show_int(o, "running"));
	if ((o = js_get(dbo, "links", json_type_object)) != NULL)
		printf("  links    %lld active of %lld\n",
		    ctl_show_int(o, "active"), ctl_show_int(o, "total"));
	if ((o = js_get(dbo, "terminals", json_type_object)) != NULL)
		printf("  terminals %lld open of %lld\n",
		    ctl_show_int(o, "open"), ctl_show_int(o, "total"));
	if ((o = js_get(dbo, "previews", json_type_object)) != NULL)
		printf("  previews %lld active links, %lld open connections\n",
		    ctl_show_int(o, "previews_active"),
		    ctl_show_int(o, "preview_connections"));
	if ((o = js_get(dbo, "oauth_clients", json_type_object)) != NULL)
		printf("  oauth    %lld clients, %lld grants with live tokens\n",
		    ctl_show_int(o, "total"), ctl_show_int(o, "live"));
	if ((o = js_get(dbo, "snapshots", json_type_array)) != NULL) {
		size_t i, n = json_object_array_length(o);

		printf("  snapshots %zu sandbox%s with snapshots (limits %ld and "
		    "%lld bytes each; /sandbox kept as what changed since a "
		    "full archive, or whole where the image has no GNU tar)\n",
		    n, n == 1 ? "" : "es",
		    c->cfg->snapshot_max, c->cfg->snapshot_bytes);
		for (i = 0; i < n; i++) {
			struct json_object *so = json_object_array_get_idx(o, i);

			ctl_show_bytes(b2, sizeof(b2),
			    ctl_show_int(so, "sandbox_bytes") +
			    ctl_show_int(so, "layer_bytes"));
			printf("    %-16s %s: %lld snapshot%s, %s\n",
			    ctl_show_esc(b1, sizeof(b1), ctl_show_str(so,
			    "owner")), ctl_show_str(so, "container"),
			    ctl_show_int(so, "count"),
			    ctl_show_int(so, "count") == 1 ? "" : "s", b2);
		}
	}
	if ((o = js_get(dbo, "last_cleanup", json_type_object)) != NULL)
		printf("  cleanup  last %s: %s, %lld entries removed%s%s\n",
		    ctl_show_when(b2, sizeof(b2), ctl_show_int(o, "started")),
		    ctl_show_str(o, "state"), ctl_show_int(o, "removed"),
		    js_str(o, "message") != NULL ? ": " : "",
		    js_str(o, "message") != NULL ? ctl_show_esc(b1, sizeof(b1),
		    js_str(o, "message")) : "");
	else
		printf("  cleanup  never ran\n");
}

/* The egress proxy (SANDBOX_PROXY), for people. */
static void
show_proxy(struct json_object *p)
{
	bool	 running = false, ca = false;

	if (p == NULL)
		return;
	js_bool(p, "running", &running);
	js_bool(p, "ca", &ca);
	printf("proxy      %s on port %lld, %lld secret(s), CA %s%s%s\n",
	    running ? "running" : "NOT RUNNING (containers/proxy.sh, "
	    "code-sandbox-proxy.service)", ctl_show_int(p, "port"),
	    ctl_show_int(p, "secrets"), ca ? "made" : "missing",
	    js_str(p, "hosts") != NULL ? ", only hosts: " : "",
	    js_str(p, "hosts") != NULL ? js_str(p, "hosts") : "");
}

int
ctl_status(struct ctl *c)
{
	struct json_object	*st = NULL;
	struct sandbox		*sb = NULL;
	struct error		 err;
	char			 broken[256];
	int			 rc = 1;

	if (sandbox_open(c->cfg, NULL, &sb, &err) == -1 ||
	    sandbox_status(sb, &st, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		goto out;
	}
	js_set_str(st, "env_file", c->cfg->env_file);
	js_set_str(st, "public_url", c->cfg->public_url);
	status_database(c, st);
	if (c->cfg->proxy)
		js_set(st, "proxy", proxy_status(c->cfg, c->db));
	status_problems(c, st, broken, sizeof(broken));
	js_set_bool(st, "healthy", broken[0] == '\0');
	if (broken[0] != '\0')
		js_set_str(st, "problems", broken);
	rc = broken[0] == '\0' ? 0 : 1;
	if (c->json) {
		ctl_show_json(st);
		goto out;
	}
	show_sandbox(c, st);
	show_guard(st);
	show_database(c, js_get(st, "database", json_type_object));
	show_proxy(js_get(st, "proxy", json_type_object));
	if (broken[0] != '\0')
		printf("status     BROKEN: %s\n", broken);
	else
		printf("status     ok\n");
out:
	json_object_put(st);
	sandbox_close(sb);
	return rc;
}
