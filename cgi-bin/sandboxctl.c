/*
 * sandboxctl: the operator's command (not an endpoint; see sandboxctl.8).
 *
 *   sandboxctl [-e envfile] [--json] status
 *   sandboxctl ... audit [--limit N]
 *   sandboxctl ... cleanup
 *   sandboxctl ... clients list | clients revoke CLIENT_ID
 *   sandboxctl ... tokens list | tokens revoke GRANT_ID | --client ID | --all
 *   sandboxctl ... links list [--limit N] | links revoke LINK_ID
 *   sandboxctl ... rotate-key [--revoke-tokens] [--show-key]
 *   sandboxctl ... keys list | add NAME | rotate NAME | revoke NAME
 *   sandboxctl ... sandboxes list | stop OWNER | stop-idle | remove OWNER
 *
 * It reads the same settings as the programs (config_load) and works on the
 * same SQLite file and Docker engine. Every command builds one JSON object;
 * --json prints it, otherwise it is shown as text for people, with every
 * value that came from clients (names, commands, paths) escaped so that it
 * cannot drive the terminal. Exit status: 0 done, 1 failed, 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clientaddr.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "oauth/owners.h"
#include "ops/cleanup.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"
#include "store/db.h"

#define LIMIT_DEFAULT	20
#define LIMIT_MAX	10000
#define COMMAND_SHOWN	4096	/* audit --json: the whole stored command */
#define ENVFILE_MAX	(1024 * 1024)
#define KEY_BYTES	32
/* The installed settings file (the units' EnvironmentFile). */
#ifndef SYSCONF_ENV_FILE
#define SYSCONF_ENV_FILE	"/etc/code-sandbox/env"
#endif

struct ctl {
	struct config	*cfg;
	struct db	*db;
	bool		 json;
	long		 limit;
	int		 argc;
	char		**argv;
};

static void
usage_to(FILE *f)
{
	fprintf(f,
	    "usage: sandboxctl [-e envfile] [--json] command\n"
	    "  status                       engine, image, container, volume, database\n"
	    "  check                        the settings only (before serving)\n"
	    "  audit [--limit N]            recent commands, newest first\n"
	    "  cleanup                      run the FILE_TTL clean-up now\n"
	    "  clients list | clients revoke CLIENT_ID\n"
	    "  tokens list | tokens revoke GRANT_ID | --client CLIENT_ID | --all\n"
	    "  links list [--limit N] | links revoke LINK_ID\n"
	    "  rotate-key [--revoke-tokens] [--show-key]\n"
	    "  keys list | keys add NAME | keys rotate NAME | keys revoke NAME\n"
	    "  sandboxes list | sandboxes stop OWNER | sandboxes stop-idle |\n"
	    "      sandboxes remove OWNER (deletes the volume)\n"
	    "  recreate [OWNER]             make the container again (keeps /sandbox)\n"
	    "  signins [--limit N]          sign-in attempts, newest first\n"
	    "  unblock [ADDRESS]            lift the wrong-key wait (all, or one address)\n"
	    "settings: -e FILE, else $SANDBOX_ENV_FILE, else " SYSCONF_ENV_FILE "\n"
	    "when installed (run from an sbin folder), else ./.env\n"
	    "status exits 1 when the engine, the image or the database is not "
	    "usable, or the sandbox's checks refuse commands\n");
}

/* A usage mistake: the usage on stderr. */
static void
usage(void)
{
	usage_to(stderr);
}

/*
 * The settings file when neither -e nor SANDBOX_ENV_FILE names one: the
 * installed one when this program runs from an sbin folder (make install),
 * else .env in the working folder (the source tree). NULL: keep the default.
 */
static const char *
default_env_file(void)
{
	static char	 exe[PATH_MAX];
	ssize_t		 n;
	char		*slash;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return NULL;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return NULL;
	*slash = '\0';
	slash = strrchr(exe, '/');
	if (slash == NULL || strcmp(slash, "/sbin") != 0)
		return NULL;
	return SYSCONF_ENV_FILE;
}

/* Text from the database or a client, made safe for a terminal. */
static const char *
esc(char *buf, size_t n, const char *s)
{
	if (s == NULL)
		return "-";
	return log_escape(buf, n, s, strlen(s));
}

static const char *
when(char *buf, size_t n, long long t)
{
	struct tm	tm;
	time_t		tt = (time_t)t;

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL)
		return "-";
	strftime(buf, n, "%Y-%m-%d %H:%M:%SZ", &tm);
	return buf;
}

static void
print_json(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_NOSLASHESCAPE));
}

static bool
table_exists(struct db *db, const char *name)
{
	struct db_q	*q;
	bool		 yes = false;

	if ((q = db_query(db, STMT_TABLE_EXISTS, "t", name)) != NULL) {
		yes = db_step(q) == DB_ROW;
		db_done(q);
	}
	return yes;
}

static int
need_table(struct ctl *c, const char *table, const char *what)
{
	if (table_exists(c->db, table))
		return 0;
	fprintf(stderr, "sandboxctl: this database (schema version %d) has no "
	    "%s: that part is not in this build\n", db_version(c->db), what);
	return -1;
}

/* Column col as a JSON value: NULL, integer or string. */
static struct json_object *
col_value(struct db_q *q, int col, bool integer)
{
	if (db_null(q, col))
		return NULL;
	if (integer)
		return json_object_new_int64(db_int(q, col));
	return json_object_new_string(db_text(q, col));
}

enum col_kind {
	COL_TEXT,	/* string, or null */
	COL_INT,	/* integer, or null */
	COL_BOOL	/* true unless 0 or NULL */
};

/* A result column shown as a JSON member; arrays of them end with NULL. */
struct column {
	const char	*name;
	int		 col;
	enum col_kind	 kind;
};

/* Set obj's members, in the order of cols, from q's current row. */
static void
set_columns(struct json_object *obj, struct db_q *q, const struct column *cols)
{
	for (; cols->name != NULL; cols++) {
		if (cols->kind == COL_BOOL)
			js_set_bool(obj, cols->name, db_int(q, cols->col) != 0);
		else
			js_set(obj, cols->name, col_value(q, cols->col,
			    cols->kind == COL_INT));
	}
}

/*
 * Statement st with as many of the integers a and b as types says (the
 * rest are passed but not read).
 */
static struct db_q *
query(struct db *db, enum db_stmt st, const char *types, long long a,
    long long b)
{
	return db_query(db, st, types, a, b);
}

/* Run a one-row count query into obj as the members cols names. */
static void
counts(struct db *db, enum db_stmt st, const char *types, long long arg,
    struct json_object *obj, const struct column *cols)
{
	struct db_q *q;

	if ((q = query(db, st, types, arg, 0)) == NULL)
		return;
	if (db_step(q) == DB_ROW)
		set_columns(obj, q, cols);
	db_done(q);
}

/*
 * List the rows of st as an array of objects with the members cols names:
 * printed as JSON with --json, else shown to people by show. Exit status.
 */
static int
list_rows(struct ctl *c, enum db_stmt st, const char *types, long long a,
    long long b, const struct column *cols,
    void (*show)(struct json_object *arr))
{
	struct json_object	*arr, *o;
	struct db_q		*q;
	enum db_step		 s;
	int			 rc = 1;

	arr = json_object_new_array();
	if ((q = query(c->db, st, types, a, b)) == NULL)
		goto out;
	while ((s = db_step(q)) == DB_ROW) {
		o = json_object_new_object();
		set_columns(o, q, cols);
		json_object_array_add(arr, o);
	}
	db_done(q);
	if (s == DB_ERROR)
		goto out;
	if (c->json)
		print_json(arr);
	else
		show(arr);
	rc = 0;
out:
	json_object_put(arr);
	return rc;
}

/*
 * The answer to revoking one row by id (n rows changed, or -1): "no
 * <missing> ID" on standard error, or "<noun> ID <done>". Exit status.
 */
static int
revoked_one(long n, const char *missing, const char *noun, const char *id,
    const char *done)
{
	char b[160];

	if (n == -1)
		return 1;
	if (n == 0) {
		fprintf(stderr, "sandboxctl: no %s %s\n", missing,
		    esc(b, sizeof(b), id));
		return 1;
	}
	printf("%s %s %s\n", noun, esc(b, sizeof(b), id), done);
	return 0;
}

static int
parse_long(const char *s, long min, long max, long *out)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v < min || v > max)
		return -1;
	*out = (long)v;
	return 0;
}

static long long
member_int(struct json_object *o, const char *key)
{
	long long v;

	return js_int(o, key, &v) == 0 ? v : -1;
}

static const char *
member_str(struct json_object *o, const char *key)
{
	const char *s = js_str(o, key);

	return s != NULL ? s : "-";
}

static void
human_bytes(char *buf, size_t n, long long b)
{
	if (b < 0)
		snprintf(buf, n, "-");
	else if (b >= 1LL << 30)
		snprintf(buf, n, "%.1f GiB", (double)b / (1LL << 30));
	else if (b >= 1LL << 20)
		snprintf(buf, n, "%.1f MiB", (double)b / (1LL << 20));
	else if (b >= 1LL << 10)
		snprintf(buf, n, "%.1f KiB", (double)b / (1LL << 10));
	else
		snprintf(buf, n, "%lld B", b);
}

/* The sandboxes per person (sandboxes_list), for people. */
static void
show_sandboxes(struct json_object *arr)
{
	struct json_object	*o;
	char			 b1[64], b2[64];
	size_t			 i, n = arr == NULL ? 0 :
				    json_object_array_length(arr);

	printf("sandboxes  %zu (one per person, SANDBOX_SCOPE=person)\n", n);
	for (i = 0; i < n; i++) {
		o = json_object_array_get_idx(arr, i);
		printf("  %-16s %s: %s, %lld command%s, last used %s%s%s\n",
		    esc(b1, sizeof(b1), member_str(o, "owner")),
		    member_str(o, "container"), member_str(o, "engine_state"),
		    member_int(o, "commands"),
		    member_int(o, "commands") == 1 ? "" : "s",
		    when(b2, sizeof(b2), member_int(o, "last_used")),
		    js_str(o, "stop_reason") != NULL ? ", stopped: " : "",
		    js_str(o, "stop_reason") != NULL ?
		    js_str(o, "stop_reason") : "");
	}
}

/*
 * What of the sandbox guard's checks stops commands (sandbox/guard.h),
 * appended to the problems in broken.
 */
static void
guard_problems(struct json_object *st, char *broken, size_t n)
{
	struct json_object	*eg, *o;
	const char		*v;
	bool			 yes;
	size_t			 len;

	eg = js_get(st, "egress", json_type_object);
	len = strlen(broken);
	if (js_str(eg, "network_error") != NULL)
		snprintf(broken + len, n - len, "%ssandbox network missing",
		    len ? ", " : "");
	len = strlen(broken);
	o = js_get(eg, "rules", json_type_object);
	if (js_bool(o, "present", &yes) == 0 && !yes)
		snprintf(broken + len, n - len, "%sfirewall rules missing",
		    len ? ", " : "");
	len = strlen(broken);
	o = js_get(eg, "canary", json_type_object);
	if (js_bool(o, "ok", &yes) == 0 && !yes)
		snprintf(broken + len, n - len, "%segress policy not in force",
		    len ? ", " : "");
	len = strlen(broken);
	v = js_str(js_get(st, "spec", json_type_object), "verdict");
	if (v != NULL && strncmp(v, "refused", 7) == 0)
		snprintf(broken + len, n - len, "%scontainer not as configured",
		    len ? ", " : "");
}

/* The egress policy, disk limits and configuration drift (sandbox/guard.h). */
static void
show_guard(struct json_object *st)
{
	struct json_object	*eg, *disk, *spec, *o;
	char			 b1[320], b2[64], b3[64];
	bool			 yes;

	eg = js_get(st, "egress", json_type_object);
	disk = js_get(st, "disk", json_type_object);
	spec = js_get(st, "spec", json_type_object);
	if (eg != NULL) {
		printf("egress     policy %s", member_str(eg, "policy"));
		if (js_str(eg, "network") != NULL)
			printf(", network %s, bridge %s, gateway %s",
			    member_str(eg, "network"), member_str(eg, "bridge"),
			    member_str(eg, "gateway"));
		if (js_str(eg, "allow") != NULL && *js_str(eg, "allow") != '\0')
			printf(", allowed %s", esc(b1, sizeof(b1),
			    js_str(eg, "allow")));
		printf("\n");
		if (js_str(eg, "network_error") != NULL)
			printf("  ERROR    %s\n", member_str(eg, "network_error"));
		if ((o = js_get(eg, "rules", json_type_object)) != NULL) {
			if (js_bool(o, "present", &yes) == -1)
				printf("  rules    ? %s\n", esc(b1, sizeof(b1),
				    member_str(o, "detail")));
			else
				printf("  rules    %s%s\n", yes ? "" : "ERROR: ",
				    esc(b1, sizeof(b1), member_str(o, "detail")));
		}
		if ((o = js_get(eg, "canary", json_type_object)) != NULL) {
			yes = false;
			js_bool(o, "ok", &yes);
			printf("  canary   %s: %s\n", yes ? "ok" :
			    "FAILED (commands are refused)",
			    esc(b1, sizeof(b1), member_str(o, "detail")));
		}
	}
	if (disk != NULL) {
		printf("disk       mode %s\n", member_str(disk, "mode"));
		if ((o = js_get(disk, "sandbox", json_type_object)) != NULL) {
			human_bytes(b2, sizeof(b2), member_int(o, "used_bytes"));
			human_bytes(b3, sizeof(b3), member_int(o, "limit_bytes"));
			printf("  sandbox  %s of %s\n", b2, b3);
		}
		if ((o = js_get(disk, "layer", json_type_object)) != NULL) {
			human_bytes(b2, sizeof(b2), member_int(o, "used_bytes"));
			human_bytes(b3, sizeof(b3), member_int(o, "limit_bytes"));
			printf("  layer    %s of %s\n", b2, b3);
		}
	}
	if (spec != NULL) {
		printf("config     version %s (this server makes %lld), runtime "
		    "%s: %s\n", member_str(spec, "version"),
		    member_int(spec, "wanted_version"),
		    member_str(spec, "runtime"), member_str(spec, "verdict"));
		if (js_str(spec, "differences") != NULL)
			printf("  differs  %s\n", esc(b1, sizeof(b1),
			    member_str(spec, "differences")));
	}
}

static int
cmd_status(struct ctl *c)
{
	static const struct column sess[] = { { "live", 0, COL_INT },
	    { "total", 1, COL_INT }, { NULL, 0, 0 } };
	static const struct column runs[] = { { "total", 0, COL_INT },
	    { "running", 1, COL_INT }, { "oldest", 2, COL_INT },
	    { NULL, 0, 0 } };
	static const struct column links[] = { { "total", 0, COL_INT },
	    { "active", 1, COL_INT }, { NULL, 0, 0 } };
	static const struct column clients[] = { { "total", 0, COL_INT },
	    { NULL, 0, 0 } };
	static const struct column grants[] = { { "live", 0, COL_INT },
	    { NULL, 0, 0 } };
	static const struct column cleanup[] = { { "started", 1, COL_INT },
	    { "state", 4, COL_TEXT }, { "removed", 5, COL_INT },
	    { "bytes", 8, COL_INT }, { "message", 12, COL_TEXT },
	    { NULL, 0, 0 } };
	struct json_object	*st = NULL, *dbo, *o, *eng, *img, *con, *vol;
	struct sandbox		*sb = NULL;
	struct db_q		*q;
	struct error		 err;
	struct stat		 sbuf;
	long long		 now = (long long)time(NULL);
	char			 b1[256], b2[64], b3[64], broken[256];
	bool			 yes;
	int			 rc = 1;

	if (sandbox_open(c->cfg, NULL, &sb, &err) == -1 ||
	    sandbox_status(sb, &st, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		goto out;
	}
	js_set_str(st, "env_file", c->cfg->env_file);
	js_set_str(st, "public_url", c->cfg->public_url);
	dbo = json_object_new_object();
	js_set(st, "database", dbo);
	js_set_str(dbo, "path", c->cfg->db_path);
	js_set_int(dbo, "schema_version", db_version(c->db));
	if (stat(c->cfg->db_path, &sbuf) == 0)
		js_set_int(dbo, "size_bytes", (long long)sbuf.st_size);
	o = json_object_new_object();
	counts(c->db, STMT_COUNT_SESSIONS, "i", now - c->cfg->session_ttl, o, sess);
	js_set(dbo, "sessions", o);
	if (table_exists(c->db, "run")) {
		o = json_object_new_object();
		counts(c->db, STMT_COUNT_RUNS, "", 0, o, runs);
		js_set(dbo, "runs", o);
	}
	if (table_exists(c->db, "link")) {
		o = json_object_new_object();
		counts(c->db, STMT_COUNT_LINKS, "i", now, o, links);
		js_set(dbo, "links", o);
	}
	if (table_exists(c->db, "oauth_client")) {
		o = json_object_new_object();
		counts(c->db, STMT_COUNT_CLIENTS, "", 0, o, clients);
		counts(c->db, STMT_COUNT_GRANTS, "i", now, o, grants);
		js_set(dbo, "oauth_clients", o);
	}
	if (table_exists(c->db, "sandbox") &&
	    (o = sandboxes_list(c->cfg, c->db)) != NULL)
		js_set(st, "sandboxes", o);
	if ((q = db_query(c->db, STMT_CLEANUP_LIST, "i", 1LL)) != NULL) {
		if (db_step(q) == DB_ROW) {
			o = json_object_new_object();
			set_columns(o, q, cleanup);
			js_set(dbo, "last_cleanup", o);
		}
		db_done(q);
	}

	/* A health check: what stops every execute makes status fail. */
	eng = js_get(st, "engine", json_type_object);
	img = js_get(st, "image", json_type_object);
	broken[0] = '\0';
	yes = false;
	js_bool(eng, "reachable", &yes);
	if (!yes)
		snprintf(broken, sizeof(broken), "engine unreachable");
	yes = false;
	js_bool(img, "present", &yes);
	if (!yes)
		snprintf(broken + strlen(broken), sizeof(broken) - strlen(broken),
		    "%simage missing", broken[0] ? ", " : "");
	if (db_version(c->db) <= 0)
		snprintf(broken + strlen(broken), sizeof(broken) - strlen(broken),
		    "%sdatabase unusable", broken[0] ? ", " : "");
	guard_problems(st, broken, sizeof(broken));
	js_set_bool(st, "healthy", broken[0] == '\0');
	if (broken[0] != '\0')
		js_set_str(st, "problems", broken);
	if (c->json) {
		print_json(st);
		rc = broken[0] == '\0' ? 0 : 1;
		goto out;
	}
	con = js_get(st, "container", json_type_object);
	vol = js_get(st, "volume", json_type_object);
	printf("settings   %s\n", esc(b1, sizeof(b1), c->cfg->env_file));
	printf("public URL %s/mcp\n", esc(b1, sizeof(b1), c->cfg->public_url));
	js_bool(eng, "reachable", &yes);
	if (yes)
		printf("engine     %s: Docker %s (API %s)\n",
		    esc(b1, sizeof(b1), member_str(eng, "host")),
		    member_str(eng, "version"), member_str(eng, "api_version"));
	else
		printf("engine     UNREACHABLE: %s\n", member_str(eng, "error"));
	yes = false;
	js_bool(img, "present", &yes);
	if (js_get(img, "present", json_type_boolean) != NULL)
		printf("image      %s: %s\n", member_str(img, "name"), yes ?
		    "present" : "MISSING (containers/build-image.sh builds it)");
	yes = false;
	js_bool(con, "exists", &yes);
	/* Person scope: no shared container; the sandboxes are listed below. */
	if (c->cfg->per_person || js_get(con, "exists", json_type_boolean) == NULL)
		;
	else if (!yes)
		printf("container  %s: absent (created on the next call)\n",
		    member_str(con, "name"));
	else {
		human_bytes(b2, sizeof(b2), member_int(con, "memory"));
		printf("container  %s: %s since %s, memory %s, CPUs %.2f, "
		    "pids %lld, restarts %lld%s\n", member_str(con, "name"),
		    member_str(con, "state"), member_str(con, "started_at"), b2,
		    (double)member_int(con, "nano_cpus") / 1e9,
		    member_int(con, "pids_limit"),
		    member_int(con, "restart_count"),
		    json_object_get_boolean(js_get(con, "oom_killed",
		    json_type_boolean)) ? ", last stopped by OOM" : "");
	}
	if (c->cfg->per_person)
		;
	else if (js_get(vol, "used_bytes", json_type_int) != NULL) {
		human_bytes(b2, sizeof(b2), member_int(vol, "used_bytes"));
		human_bytes(b3, sizeof(b3), member_int(vol, "fs_available_bytes"));
		printf("volume     %s: %s used in /sandbox, %s free on its file "
		    "system\n", member_str(vol, "name"), b2, b3);
	} else if (js_get(vol, "exists", json_type_boolean) != NULL)
		printf("volume     %s: %s\n", member_str(vol, "name"),
		    json_object_get_boolean(js_get(vol, "exists",
		    json_type_boolean)) ? "exists (usage needs a running "
		    "container)" : "absent");
	if (c->cfg->per_person)
		show_sandboxes(js_get(st, "sandboxes", json_type_array));
	show_guard(st);
	human_bytes(b2, sizeof(b2), member_int(dbo, "size_bytes"));
	printf("database   %s: schema %lld, %s\n", esc(b1, sizeof(b1),
	    c->cfg->db_path), member_int(dbo, "schema_version"), b2);
	o = js_get(dbo, "sessions", json_type_object);
	printf("  sessions %lld live, %lld stored\n", member_int(o, "live"),
	    member_int(o, "total"));
	if ((o = js_get(dbo, "runs", json_type_object)) != NULL)
		printf("  runs     %lld in the audit log, %lld running\n",
		    member_int(o, "total"), member_int(o, "running"));
	if ((o = js_get(dbo, "links", json_type_object)) != NULL)
		printf("  links    %lld active of %lld\n", member_int(o, "active"),
		    member_int(o, "total"));
	if ((o = js_get(dbo, "oauth_clients", json_type_object)) != NULL)
		printf("  oauth    %lld clients, %lld grants with live tokens\n",
		    member_int(o, "total"), member_int(o, "live"));
	if ((o = js_get(dbo, "last_cleanup", json_type_object)) != NULL)
		printf("  cleanup  last %s: %s, %lld entries removed%s%s\n",
		    when(b2, sizeof(b2), member_int(o, "started")),
		    member_str(o, "state"), member_int(o, "removed"),
		    js_str(o, "message") != NULL ? ": " : "",
		    js_str(o, "message") != NULL ? esc(b1, sizeof(b1),
		    js_str(o, "message")) : "");
	else
		printf("  cleanup  never ran\n");
	if (broken[0] != '\0')
		printf("status     BROKEN: %s\n", broken);
	else
		printf("status     ok\n");
	rc = broken[0] == '\0' ? 0 : 1;
out:
	json_object_put(st);
	sandbox_close(sb);
	return rc;
}

/* The name a client registered, or its id. */
static const char *
client_label(struct json_object *o)
{
	const char *name = js_str(o, "client_name");

	return name != NULL ? name : js_str(o, "client_id");
}

static void
show_audit(struct json_object *arr)
{
	struct json_object	*o;
	const char		*cmd;
	char			 b1[64], b2[128], b3[160], b4[32], b5[24];
	char			 b6[400];
	long long		 ms;
	size_t			 i;

	printf("%-20s %-8s %5s %9s  %-12s %-20s %s\n", "STARTED (UTC)",
	    "STATE", "EXIT", "SECONDS", "OWNER", "CLIENT", "COMMAND");
	for (i = 0; i < json_object_array_length(arr); i++) {
		o = json_object_array_get_idx(arr, i);
		cmd = js_str(o, "command");
		ms = member_int(o, "duration_ms");
		if (member_int(o, "exit_code") >= 0)
			snprintf(b4, sizeof(b4), "%lld",
			    member_int(o, "exit_code"));
		else
			snprintf(b4, sizeof(b4), "-");
		if (ms >= 0)
			snprintf(b2, sizeof(b2), "%.1f", (double)ms / 1000);
		else
			snprintf(b2, sizeof(b2), "-");
		printf("%-20s %-8s %5s %9s  %-12s %-20s %s\n",
		    when(b1, sizeof(b1), member_int(o, "started")),
		    member_str(o, "state"), b4, b2, member_str(o, "owner"),
		    esc(b5, sizeof(b5), client_label(o)),
		    cmd != NULL ? log_escape(b3, 100, cmd, strlen(cmd)) : "");
		if (js_str(o, "error") != NULL)
			printf("%-20s %-8s %s\n", "", "  why:", esc(b6,
			    sizeof(b6), js_str(o, "error")));
	}
}

static int
cmd_audit(struct ctl *c)
{
	static const struct column cols[] = {
		{ "id", 0, COL_TEXT },
		{ "started", 1, COL_INT },
		{ "finished", 10, COL_INT },
		{ "client_id", 2, COL_TEXT },
		{ "client_name", 3, COL_TEXT },
		{ "state", 4, COL_TEXT },
		{ "exit_code", 5, COL_INT },
		{ "duration_ms", 6, COL_INT },
		{ "stdout_bytes", 7, COL_INT },
		{ "stderr_bytes", 8, COL_INT },
		{ "command", 9, COL_TEXT },
		{ "error", 11, COL_TEXT },
		{ "owner", 12, COL_TEXT },
		{ NULL, 0, 0 }
	};

	return list_rows(c, STMT_AUDIT_LIST, "ii", COMMAND_SHOWN, c->limit,
	    cols, show_audit);
}

static int
cmd_cleanup(struct ctl *c)
{
	struct cleanup_report	 r;
	struct json_object	*o;
	struct error		 err;
	char			 b[64];

	if (cleanup_run(c->cfg, "sandboxctl", true, &r, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	if (c->json) {
		o = json_object_new_object();
		js_set_bool(o, "ran", r.ran);
		if (r.ran) {
			js_set_int(o, "id", r.id);
			js_set_str(o, "state", r.state);
			js_set_int(o, "removed", r.removed);
			js_set_int(o, "kept", r.kept);
			js_set_int(o, "failed", r.failed);
			js_set_int(o, "bytes", r.bytes);
			js_set_int(o, "runs_pruned", r.runs_pruned);
			js_set_int(o, "results_cleared", r.results_cleared);
			if (r.message[0] != '\0')
				js_set_str(o, "message", r.message);
			if (r.names != NULL)
				js_set(o, "names", json_tokener_parse(r.names));
		}
		print_json(o);
		json_object_put(o);
	} else if (!r.ran)
		printf("another clean-up pass is running; nothing done\n");
	else {
		human_bytes(b, sizeof(b), r.bytes);
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

static void
show_clients(struct json_object *arr)
{
	struct json_object	*o;
	char			 b1[160], b2[64], b3[64], b4[32];
	size_t			 i;

	printf("%-20s %-20s %6s  %-24s %s\n", "CREATED (UTC)", "LAST USED",
	    "GRANTS", "NAME", "CLIENT ID");
	for (i = 0; i < json_object_array_length(arr); i++) {
		o = json_object_array_get_idx(arr, i);
		printf("%-20s %-20s %6lld  %-24s %s\n",
		    when(b2, sizeof(b2), member_int(o, "created")),
		    when(b3, sizeof(b3), member_int(o, "last_used")),
		    member_int(o, "grants"), esc(b4, 25, js_str(o, "name")),
		    esc(b1, sizeof(b1), js_str(o, "client_id")));
	}
}

static int
clients_list(struct ctl *c)
{
	static const struct column cols[] = {
		{ "client_id", 0, COL_TEXT },
		{ "name", 1, COL_TEXT },
		{ "auth_method", 2, COL_TEXT },
		{ "metadata_document", 3, COL_BOOL },
		{ "created", 4, COL_INT },
		{ "last_used", 5, COL_INT },
		{ "grants", 6, COL_INT },
		{ NULL, 0, 0 }
	};

	return list_rows(c, STMT_OPS_CLIENT_LIST, "", 0, 0, cols,
	    show_clients);
}

/* clients revoke CLIENT_ID */
static int
clients_revoke(struct ctl *c)
{
	if (c->argc != 2) {
		usage();
		return 2;
	}
	return revoked_one(db_exec(c->db, STMT_OPS_CLIENT_DELETE, "t",
	    c->argv[1]), "client", "client", c->argv[1],
	    "removed with its grants and tokens");
}

static void
show_tokens(struct json_object *arr)
{
	struct json_object	*o;
	char			 b1[160], b2[64], b3[64], b4[64];
	size_t			 i;

	printf("%6s %-20s %-20s %-20s %5s  %-12s %s\n", "GRANT", "SIGNED IN",
	    "LAST USED", "EXPIRES", "LIVE", "OWNER", "CLIENT");
	for (i = 0; i < json_object_array_length(arr); i++) {
		o = json_object_array_get_idx(arr, i);
		printf("%6lld %-20s %-20s %-20s %5lld  %-12s %s\n",
		    member_int(o, "grant_id"),
		    when(b2, sizeof(b2), member_int(o, "signed_in")),
		    when(b3, sizeof(b3), member_int(o, "last_used")),
		    when(b4, sizeof(b4), member_int(o, "expires")),
		    member_int(o, "live_tokens"), member_str(o, "owner"),
		    esc(b1, sizeof(b1), client_label(o)));
	}
}

static int
tokens_list(struct ctl *c)
{
	static const struct column cols[] = {
		{ "grant_id", 0, COL_INT },
		{ "client_id", 1, COL_TEXT },
		{ "client_name", 2, COL_TEXT },
		{ "signed_in", 3, COL_INT },
		{ "last_used", 4, COL_INT },
		{ "live_tokens", 5, COL_INT },
		{ "expires", 6, COL_INT },
		{ "owner", 7, COL_TEXT },
		{ NULL, 0, 0 }
	};

	return list_rows(c, STMT_OPS_GRANT_LIST, "i", (long long)time(NULL),
	    0, cols, show_tokens);
}

/* tokens revoke GRANT_ID | --client CLIENT_ID | --all */
static int
tokens_revoke(struct ctl *c)
{
	long n, id;

	if (c->argc == 2 && strcmp(c->argv[1], "--all") == 0)
		n = db_exec(c->db, STMT_OPS_GRANT_DELETE_ALL, "");
	else if (c->argc == 3 && strcmp(c->argv[1], "--client") == 0)
		n = db_exec(c->db, STMT_OPS_GRANT_DELETE_CLIENT, "t",
		    c->argv[2]);
	else if (c->argc == 2 && parse_long(c->argv[1], 1, LONG_MAX,
	    &id) == 0)
		n = db_exec(c->db, STMT_OPS_GRANT_DELETE, "i", (long long)id);
	else {
		usage();
		return 2;
	}
	if (n == -1)
		return 1;
	printf("%ld grants revoked with all their tokens; their clients "
	    "must sign in again\n", n);
	return 0;
}

static void
show_links(struct json_object *arr)
{
	struct json_object	*o;
	char			 b1[160], b2[64], b3[64], b4[32];
	size_t			 i;

	printf("%-22s %-7s %-20s %-20s %5s %10s  %s\n", "ID", "STATE",
	    "CREATED (UTC)", "EXPIRES", "DLS", "SIZE", "PATH");
	for (i = 0; i < json_object_array_length(arr); i++) {
		o = json_object_array_get_idx(arr, i);
		human_bytes(b4, sizeof(b4), member_int(o, "size"));
		printf("%-22s %-7s %-20s %-20s %5lld %10s  ",
		    esc(b1, 40, js_str(o, "id")), member_str(o, "state"),
		    when(b2, sizeof(b2), member_int(o, "created")),
		    when(b3, sizeof(b3), member_int(o, "expires")),
		    member_int(o, "downloads"), b4);
		printf("%s\n", esc(b1, sizeof(b1), js_str(o, "path")));
	}
}

static int
links_list(struct ctl *c)
{
	static const struct column cols[] = {
		{ "id", 0, COL_TEXT },
		{ "state", 1, COL_TEXT },
		{ "path", 2, COL_TEXT },
		{ "size", 3, COL_INT },
		{ "client_id", 4, COL_TEXT },
		{ "created", 5, COL_INT },
		{ "expires", 6, COL_INT },
		{ "downloads", 7, COL_INT },
		{ "last_download", 8, COL_INT },
		{ "owner", 9, COL_TEXT },
		{ NULL, 0, 0 }
	};

	return list_rows(c, STMT_OPS_LINK_LIST, "ii", (long long)time(NULL),
	    c->limit, cols, show_links);
}

/* links revoke LINK_ID */
static int
links_revoke(struct ctl *c)
{
	long n;

	if (c->argc != 2) {
		usage();
		return 2;
	}
	/* A download link, else an upload link (ids never collide: random). */
	n = db_exec(c->db, STMT_LINK_REVOKE, "it", (long long)time(NULL),
	    c->argv[1]);
	if (n == 0)
		n = db_exec(c->db, STMT_UPLINK_REVOKE, "it",
		    (long long)time(NULL), c->argv[1]);
	return revoked_one(n, "live link", "link", c->argv[1], "revoked");
}

/* Is line an assignment of SANDBOX_API_KEY (as config.c reads the file)? */
static bool
is_key_line(const char *line, size_t len)
{
	static const char name[] = "SANDBOX_API_KEY";
	size_t i = 0;

	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (len - i > 7 && strncmp(line + i, "export ", 7) == 0)
		i += 7;
	if (len - i < sizeof(name) - 1 ||
	    strncmp(line + i, name, sizeof(name) - 1) != 0)
		return false;
	i += sizeof(name) - 1;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	return i < len && line[i] == '=';
}

/*
 * Write the env file again with SANDBOX_API_KEY=key in place of every key
 * line (or appended), through a temporary file in the same folder renamed
 * over it: readers see the old file or the new one, never half of one. The
 * new file is mode 600 and keeps the old owner.
 */
static int
write_key(const char *path, const char *key, struct error *err)
{
	struct stat	 st;
	FILE		*in = NULL, *out = NULL;
	char		*old = NULL, *tmp = NULL, *dir = NULL, *slash;
	size_t		 len = 0, i, start;
	bool		 replaced = false, have_st;
	int		 fd = -1, dfd, rc = -1;

	have_st = stat(path, &st) == 0;
	if ((in = fopen(path, "r")) != NULL) {
		if ((old = malloc(ENVFILE_MAX + 1)) == NULL) {
			error_set(err, "out of memory");
			goto out;
		}
		len = fread(old, 1, ENVFILE_MAX + 1, in);
		if (ferror(in) || len > ENVFILE_MAX) {
			error_set(err, "%s: cannot read it, or larger than 1 MiB",
			    path);
			goto out;
		}
	} else if (errno != ENOENT) {
		error_set(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (asprintf(&tmp, "%s.XXXXXX", path) == -1) {
		tmp = NULL;
		error_set(err, "out of memory");
		goto out;
	}
	if ((fd = mkstemp(tmp)) == -1) {
		error_set(err, "%s: cannot create a temporary file beside it: %s",
		    path, strerror(errno));
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (fchmod(fd, 0600) == -1 || (have_st &&
	    fchown(fd, st.st_uid, st.st_gid) == -1 && errno != EPERM) ||
	    (out = fdopen(fd, "w")) == NULL) {
		error_set(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	for (start = 0, i = 0; i <= len; i++) {
		if (i < len && old[i] != '\n')
			continue;
		if (i > start || i < len) {
			if (is_key_line(old + start, i - start)) {
				if (!replaced)
					fprintf(out, "SANDBOX_API_KEY=%s\n", key);
				replaced = true;
			} else {
				fwrite(old + start, 1, i - start, out);
				fputc('\n', out);
			}
		}
		start = i + 1;
	}
	if (!replaced)
		fprintf(out, "SANDBOX_API_KEY=%s\n", key);
	if (fflush(out) != 0 || fsync(fileno(out)) != 0) {
		error_set(err, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	if (rename(tmp, path) == -1) {
		error_set(err, "%s: cannot replace it: %s", path, strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	/* Make the rename itself durable. */
	if ((dir = strdup(path)) != NULL && (slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if ((dfd = open(*dir != '\0' ? dir : "/", O_RDONLY | O_DIRECTORY)) != -1) {
			fsync(dfd);
			close(dfd);
		}
	}
	rc = 0;
out:
	if (out != NULL)
		fclose(out);
	if (fd != -1)
		close(fd);
	if (tmp != NULL) {
		unlink(tmp);
		free(tmp);
	}
	if (in != NULL)
		fclose(in);
	if (old != NULL) {
		crypto_wipe(old, len);
		free(old);
	}
	free(dir);
	return rc;
}

static long long
count_one(struct db *db, enum db_stmt st, const char *types, long long arg,
    int col)
{
	struct db_q	*q;
	long long	 v = 0;

	if ((q = query(db, st, types, arg, 0)) == NULL)
		return 0;
	if (db_step(q) == DB_ROW)
		v = db_int(q, col);
	db_done(q);
	return v;
}

static int
cmd_rotate_key(struct ctl *c)
{
	struct json_object	*o;
	struct error		 err;
	char			 key[64], b1[512];
	long long		 now = (long long)time(NULL);
	long long		 links = 0, grants = 0, revoked = 0;
	bool			 revoke = false, show = false, oauth, have_links;
	int			 i, rc = 1;

	for (i = 0; i < c->argc; i++) {
		if (strcmp(c->argv[i], "--revoke-tokens") == 0)
			revoke = true;
		else if (strcmp(c->argv[i], "--show-key") == 0)
			show = true;
		else {
			usage();
			return 2;
		}
	}
	if (getenv("SANDBOX_API_KEY") != NULL)
		fprintf(stderr, "sandboxctl: warning: SANDBOX_API_KEY is set in "
		    "the environment, which overrides the settings file: change "
		    "it there too\n");
	oauth = table_exists(c->db, "oauth_grant");
	have_links = table_exists(c->db, "link");
	if (have_links)
		links = count_one(c->db, STMT_COUNT_LINKS, "i", now, 1);
	if (oauth)
		grants = count_one(c->db, STMT_COUNT_GRANTS, "i", now, 0);
	if (crypto_token(key, sizeof(key), KEY_BYTES) == -1) {
		fprintf(stderr, "sandboxctl: no randomness for a key\n");
		return 1;
	}
	if (write_key(c->cfg->env_file, key, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		goto out;
	}
	if (revoke && oauth &&
	    (revoked = db_exec(c->db, STMT_OPS_GRANT_DELETE_ALL, "")) < 0) {
		fprintf(stderr, "sandboxctl: the key changed, but revoking the "
		    "OAuth grants failed\n");
		goto out;
	}
	if (c->json) {
		o = json_object_new_object();
		js_set_str(o, "env_file", c->cfg->env_file);
		if (show)
			js_set_str(o, "key", key);
		js_set_int(o, "links_invalidated", links);
		js_set_int(o, "grants_revoked", revoked);
		js_set_int(o, "grants_still_valid", revoke ? 0 : grants);
		js_set_bool(o, "restart_needed", true);
		print_json(o);
		json_object_put(o);
	} else {
		printf("A new SANDBOX_API_KEY is in %s (mode 600).\n",
		    esc(b1, sizeof(b1), c->cfg->env_file));
		if (show)
			printf("  key: %s\n", key);
		printf("Invalidated:\n"
		    "  - every download link (signed with the key): %lld still "
		    "active until now;\n"
		    "  - signing in: new clients and new sign-ins need the new "
		    "key;\n"
		    "  - the key itself as a bearer token "
		    "(SANDBOX_ALLOW_KEY_BEARER).\n", links);
		if (revoke)
			printf("Revoked: %lld OAuth grants and all their tokens; "
			    "those clients sign in again.\n", revoked);
		else if (oauth)
			printf("Still valid: the OAuth tokens of %lld grants "
			    "(revoke them with rotate-key --revoke-tokens or "
			    "tokens revoke --all).\n", grants);
		printf("Restart the web server or the FastCGI programs: they "
		    "read the key when they start.\n");
	}
	rc = 0;
out:
	crypto_wipe(key, sizeof(key));
	return rc;
}

/* Print a personal key once, for the operator to hand over. */
static void
show_key(struct ctl *c, const char *name, const char *key, const char *what)
{
	if (c->json) {
		struct json_object *o = json_object_new_object();

		js_set_str(o, "owner", name);
		js_set_str(o, "key", key);
		print_json(o);
		json_object_put(o);
		return;
	}
	printf("%s key of %s (shown only now; only its hash is kept):\n%s\n",
	    what, name, key);
}

static void
show_keys(struct json_object *arr)
{
	struct json_object	*o;
	char			 b1[80], b2[64], b3[64];
	size_t			 i;

	printf("%-24s %-8s %-20s %-20s %s\n", "OWNER", "STATE",
	    "CREATED (UTC)", "LAST SIGN-IN", "LIVE SIGN-INS");
	for (i = 0; i < json_object_array_length(arr); i++) {
		o = json_object_array_get_idx(arr, i);
		printf("%-24s %-8s %-20s %-20s %lld\n",
		    esc(b1, sizeof(b1), member_str(o, "owner")),
		    member_str(o, "state"),
		    when(b2, sizeof(b2), member_int(o, "created")),
		    js_get(o, "last_used", json_type_int) != NULL ?
		    when(b3, sizeof(b3), member_int(o, "last_used")) : "never",
		    member_int(o, "grants"));
	}
}

/*
 * keys add NAME | list | rotate NAME | revoke NAME: personal keys
 * (owners.h). Revoking ends the owner's sign-ins at once and stops their
 * sandbox; rotating ends the sign-ins and prints the new key.
 */
static int
cmd_keys(struct ctl *c)
{
	static const struct column cols[] = {
		{ "owner", 0, COL_TEXT },
		{ "state", 1, COL_TEXT },
		{ "created", 2, COL_INT },
		{ "last_used", 3, COL_INT },
		{ "revoked", 4, COL_INT },
		{ "grants", 5, COL_INT },
		{ "sandbox_running", 6, COL_BOOL },
		{ NULL, 0, 0 }
	};
	struct error	 err;
	char		 key[OWNER_KEY_MAX], b[80];
	const char	*verb = c->argc > 0 ? c->argv[0] : "";
	int		 rc;

	if (c->argc == 1 && strcmp(verb, "list") == 0)
		return list_rows(c, STMT_OWNER_KEY_LIST, "i",
		    (long long)time(NULL), 0, cols, show_keys);
	if (c->argc != 2 || (strcmp(verb, "add") != 0 &&
	    strcmp(verb, "rotate") != 0 && strcmp(verb, "revoke") != 0)) {
		usage();
		return 2;
	}
	if (strcmp(verb, "revoke") == 0) {
		if ((rc = owners_key_revoke(c->db, c->argv[1], &err)) == -1) {
			fprintf(stderr, "sandboxctl: %s\n", err.msg);
			return 1;
		}
		if (rc == 0) {
			fprintf(stderr, "sandboxctl: no valid key named %s\n",
			    esc(b, sizeof(b), c->argv[1]));
			return 1;
		}
		printf("key %s revoked; its sign-ins are ended\n", c->argv[1]);
		if (c->cfg->per_person) {
			if (sandboxes_stop(c->cfg, c->db, c->argv[1], "revoked",
			    &err) == -1) {
				fprintf(stderr, "sandboxctl: %s\n", err.msg);
				return 1;
			}
			printf("its sandbox is stopped (the volume is kept: "
			    "sandboxctl sandboxes remove %s deletes it)\n",
			    c->argv[1]);
		}
		return 0;
	}
	if ((strcmp(verb, "add") == 0 ? owners_key_add(c->db, c->argv[1], key,
	    &err) : owners_key_rotate(c->db, c->argv[1], key, &err)) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	show_key(c, c->argv[1], key, strcmp(verb, "add") == 0 ? "New" :
	    "Rotated (earlier sign-ins ended)");
	crypto_wipe(key, sizeof(key));
	return 0;
}

/*
 * sandboxes list | stop OWNER | stop-idle | remove OWNER: the sandboxes
 * per person. remove deletes the container AND the volume (every file of
 * that person): the one way a volume is removed.
 */
static int
cmd_sandboxes(struct ctl *c)
{
	struct json_object	*arr;
	struct error		 err;
	const char		*verb = c->argc > 0 ? c->argv[0] : "";
	char			 b[80];

	if (c->argc == 1 && strcmp(verb, "list") == 0) {
		if ((arr = sandboxes_list(c->cfg, c->db)) == NULL)
			return 1;
		if (c->json)
			print_json(arr);
		else if (c->cfg->per_person)
			show_sandboxes(arr);
		else
			printf("SANDBOX_SCOPE is shared: one sandbox, %s (see "
			    "sandboxctl status)\n", member_str(
			    json_object_array_get_idx(arr, 0), "container"));
		json_object_put(arr);
		return 0;
	}
	if (c->argc == 1 && strcmp(verb, "stop-idle") == 0) {
		int n = sandboxes_stop_idle(c->cfg, c->db);

		printf("%d idle sandbox%s stopped\n", n, n == 1 ? "" : "es");
		return 0;
	}
	if (c->argc != 2 || (strcmp(verb, "stop") != 0 &&
	    strcmp(verb, "remove") != 0)) {
		usage();
		return 2;
	}
	if (!c->cfg->per_person) {
		fprintf(stderr, "sandboxctl: SANDBOX_SCOPE is shared: there are "
		    "no sandboxes per person\n");
		return 1;
	}
	if ((strcmp(verb, "stop") == 0 ? sandboxes_stop(c->cfg, c->db,
	    c->argv[1], "operator", &err) : sandboxes_remove(c->cfg, c->db,
	    c->argv[1], &err)) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	printf("sandbox of %s %s\n", esc(b, sizeof(b), c->argv[1]),
	    strcmp(verb, "stop") == 0 ? "stopped (files kept)" :
	    "removed with its volume");
	return 0;
}

/*
 * Remove the sandbox container and make it again from the settings: the
 * way out of a refusal ("not as configured"). The volume stays. In person
 * scope the owner's sandbox is named: recreate OWNER.
 */
static int
cmd_recreate(struct ctl *c)
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
	if (sandbox_open(c->cfg, c->cfg->per_person ? owner : NULL, &sb,
	    &err) == -1 || sandbox_recreate(sb, &err) == -1) {
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

/*
 * The commands. Those with list and revoke take "list" or "revoke ..."
 * after their name; the others take no words unless options says so.
 */
static void
show_signins(struct json_object *arr)
{
	struct json_object	*o;
	char			 b1[64], b2[160], b3[160], b4[64];
	size_t			 i;

	printf("%-20s %-12s %-24s %-24s %s\n", "AT", "RESULT", "ADDRESS",
	    "REDIRECT HOST", "CLIENT");
	for (i = 0; i < json_object_array_length(arr); i++) {
		o = json_object_array_get_idx(arr, i);
		printf("%-20s %-12s %-24s %-24s %s\n",
		    when(b1, sizeof(b1), member_int(o, "at")),
		    member_str(o, "result"),
		    esc(b4, sizeof(b4), member_str(o, "address")),
		    esc(b3, sizeof(b3), member_str(o, "redirect_host")),
		    esc(b2, sizeof(b2), client_label(o)));
	}
}

/* signins [--limit N]: the sign-in audit (sql/009-signin.sql). */
static int
cmd_signins(struct ctl *c)
{
	static const struct column cols[] = {
		{ "at", 0, COL_INT },
		{ "address", 1, COL_TEXT },
		{ "result", 2, COL_TEXT },
		{ "client_id", 3, COL_TEXT },
		{ "client_name", 4, COL_TEXT },
		{ "redirect_host", 5, COL_TEXT },
		{ NULL, 0, 0 }
	};

	return list_rows(c, STMT_SIGNIN_LIST, "i", c->limit, 0, cols,
	    show_signins);
}

/*
 * unblock [ADDRESS]: an owner locked out by their own typos gets back in
 * at once. Without ADDRESS every wait is lifted.
 */
static int
cmd_unblock(struct ctl *c)
{
	char	key[CLIENTADDR_MAX], b[160];
	long	n;

	if (c->argc > 1) {
		usage();
		return 2;
	}
	if (c->argc == 0) {
		if ((n = db_exec(c->db, STMT_OPS_THROTTLE_CLEAR_ALL, "")) < 0)
			return 1;
		printf("lifted %ld wait%s\n", n, n == 1 ? "" : "s");
		return 0;
	}
	/* The throttle key: the address itself, an IPv6 one by its /64. */
	clientaddr_key(c->argv[0], key);
	if ((n = db_exec(c->db, STMT_THROTTLE_CLEAR, "t", key)) < 0)
		return 1;
	printf("%s: %s\n", esc(b, sizeof(b), key), n > 0 ? "wait lifted" :
	    "no wait recorded");
	return 0;
}

static const struct command {
	const char	*name;
	const char	*table;		/* needed in the database, or NULL */
	const char	*what;		/* what that table holds, for people */
	bool		 options;	/* run reads words of its own */
	int		(*run)(struct ctl *);
	int		(*list)(struct ctl *);
	int		(*revoke)(struct ctl *);
} commands[] = {
	{ "status", NULL, NULL, false, cmd_status, NULL, NULL },
	{ "audit", "run", "audit log (run table)", false, cmd_audit, NULL,
	    NULL },
	{ "cleanup", NULL, NULL, false, cmd_cleanup, NULL, NULL },
	{ "clients", "oauth_client", "OAuth clients", false, NULL,
	    clients_list, clients_revoke },
	{ "tokens", "oauth_grant", "OAuth tokens", false, NULL, tokens_list,
	    tokens_revoke },
	{ "links", "link", "download links", false, NULL, links_list,
	    links_revoke },
	{ "rotate-key", NULL, NULL, true, cmd_rotate_key, NULL, NULL },
	{ "keys", "owner_key", "personal keys", true, cmd_keys, NULL, NULL },
	{ "sandboxes", "sandbox", "sandboxes per person", true, cmd_sandboxes,
	    NULL, NULL },
	{ "recreate", NULL, NULL, true, cmd_recreate, NULL, NULL },
	{ "signins", "signin_attempt", "sign-in audit", false, cmd_signins,
	    NULL, NULL },
	{ "unblock", "oauth_throttle", "sign-in throttle", true, cmd_unblock,
	    NULL, NULL },
	{ NULL, NULL, NULL, false, NULL, NULL, NULL }
};

/*
 * check: the settings are valid (config_load succeeded before this) and the
 * database's folder is writable, without touching the engine or the
 * database; run before a web server starts (make run, the lighttpd unit),
 * so that a bad setting stops it with its reason instead of a 503.
 */
static int
cmd_check(struct ctl *c)
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
		print_json(o);
		json_object_put(o);
	}
	return 0;
}

/* Run the command called name with c's words. Exit status. */
static int
run_command(struct ctl *c, const char *name)
{
	const struct command *cmd;

	for (cmd = commands; cmd->name != NULL; cmd++)
		if (strcmp(cmd->name, name) == 0)
			break;
	if (cmd->name == NULL ||
	    (cmd->list == NULL && !cmd->options && c->argc != 0)) {
		usage();
		return 2;
	}
	if (cmd->table != NULL && need_table(c, cmd->table, cmd->what) == -1)
		return 1;
	if (cmd->list == NULL)
		return cmd->run(c);
	if (c->argc >= 2 && strcmp(c->argv[0], "revoke") == 0)
		return cmd->revoke(c);
	if (c->argc == 1 && strcmp(c->argv[0], "list") == 0)
		return cmd->list(c);
	usage();
	return 2;
}

int
main(int argc, char *argv[])
{
	struct ctl	 c;
	struct error	 err;
	const char	*cmd, *def;
	int		 i, n, rc = 1;

	memset(&c, 0, sizeof(c));
	c.limit = LIMIT_DEFAULT;
	log_init("sandboxctl");
	/* Options anywhere: -e FILE, --json, --limit N; the rest in order. */
	for (i = 1, n = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			c.json = true;
		else if ((strcmp(argv[i], "-e") == 0 ||
		    strcmp(argv[i], "--env-file") == 0) && i + 1 < argc) {
			if (setenv("SANDBOX_ENV_FILE", argv[++i], 1) == -1)
				return 1;
		} else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
			if (parse_long(argv[++i], 1, LIMIT_MAX, &c.limit) == -1) {
				fprintf(stderr, "sandboxctl: --limit: 1 to %d\n",
				    LIMIT_MAX);
				return 2;
			}
		} else if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			usage_to(stdout);
			return 0;
		} else
			argv[++n] = argv[i];
	}
	if (n < 1) {
		usage();
		return 2;
	}
	cmd = argv[1];
	c.argc = n - 1;
	c.argv = argv + 2;
	if ((getenv("SANDBOX_ENV_FILE") == NULL ||
	    *getenv("SANDBOX_ENV_FILE") == '\0') &&
	    (def = default_env_file()) != NULL &&
	    setenv("SANDBOX_ENV_FILE", def, 1) == -1)
		return 1;
	if (config_load(&c.cfg, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	if (strcmp(cmd, "check") == 0) {
		rc = c.argc == 0 ? cmd_check(&c) : (usage(), 2);
		config_free(c.cfg);
		return rc;
	}
	if (docker_global_init() == -1) {
		fprintf(stderr, "sandboxctl: cannot initialise the engine client\n");
		config_free(c.cfg);
		return 1;
	}
	if (db_open(c.cfg->db_path, &c.db, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		goto out;
	}
	rc = run_command(&c, cmd);
out:
	db_close(c.db);
	docker_global_cleanup();
	config_free(c.cfg);
	return rc;
}
