/*
 * db.h: the SQLite file (sessions, OAuth state, links, audit).
 *
 * Only db.c includes <sqlite3.h>. All SQL lives in store/, one table per
 * area (db_oauth.c, db_links.c, db_runs.c, db_sandbox.c, db_session.c,
 * db_ops.c), indexed by enum db_stmt; callers bind values with a type string:
 *   't' const char * (text, NULL binds NULL)   'i' long long
 *   'b' const void *, size_t (blob)             'n' NULL
 * The schema is sql/NNN-*.sql, compiled in and applied on open in order of
 * NNN, each file in one transaction that sets PRAGMA user_version to NNN.
 *
 * A struct db is one connection, used by one thread at a time. db_thread
 * gives each thread its own connection, opened on first use.
 *
 * Rows are decoded in store/, beside their SQL, into the typed structs of
 * the area headers (store/db_oauth.h, db_links.h, db_runs.h, db_sandbox.h,
 * db_session.h, db_ops.h), and the operator's listings into JSON objects
 * whose members store/ names (db_row_json): outside store/, no column is
 * read by number.
 */
#ifndef CS_DB_H
#define CS_DB_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/*
 * Bounds of the typed rows (the area headers), the same as their users':
 * owners.h's OWNER_MAX, links.h's LINK_PATH_MAX and LINK_CLIENT_MAX (each
 * user checks it is so at compile time).
 */
#define DB_OWNER_MAX	64		/* an owner id, with its NUL */
#define DB_PATH_MAX	4096		/* a shared file's or folder's path */
#define DB_CLIENT_MAX	127		/* a link's client_id */
/* An owner column read as NULL: the schema's DEFAULT (sql/012-owners.sql). */
#define DB_OWNER_DEFAULT "operator"

enum db_stmt {
	/* sessions (MCP transport "Session Management") */
	STMT_SESSION_INSERT,	/* id_hash, protocol_version, client_info, now, now, owner */
	STMT_SESSION_GET,	/* id_hash, min_last_used, owner -> protocol_version,
				   last_used */
	STMT_SESSION_TOUCH,	/* now, id_hash */
	STMT_SESSION_DELETE,	/* id_hash, owner */
	STMT_SESSION_PRUNE,	/* min_last_used */
	/* runs (sql/004-runs.sql) */
	STMT_RUN_INSERT,	/* id, session_hash, request_id, client_id, client_name, command, timeout, started, owner, container_id, container_started */
	STMT_RUN_ERROR,		/* error, id */
	STMT_RUN_FINISH,	/* finished, state, exit_code, duration_ms, stdout_bytes, stderr_bytes, result, id */
	STMT_RUN_CANCEL,	/* session_hash, request_id -> id */
	STMT_RUN_CANCELLED,	/* id -> cancel_requested */
	STMT_RUN_GET,		/* id -> state, result */
	STMT_RUN_RECENT,	/* limit -> id, state, started, exit_code, command */
	/* tasks and handles (sql/007-tasks.sql) */
	STMT_TASK_MARK,		/* handle, now, id */
	STMT_TASK_GET,		/* id -> client_id, state, started, finished, handle,
				   result, last_line, updated, timeout */
	STMT_TASK_NOTE,		/* last_line, now, id */
	STMT_TASK_CANCEL,	/* id -> id (marks a running command) */
	STMT_RUN_COUNT_ACTIVE,	/* client_id, now -> running, running for client_id */
	STMT_RUN_INFO,		/* id -> state, timeout, started, cancel_requested, container_id, container_started */
	STMT_RUN_UNFINISHED,	/* limit -> id, owner of 'running' rows, by owner */
	STMT_RUN_RELEASED,	/* owner, limit -> id of owner's 'running' tasks
				   and handles, oldest first */
	/* reconciler (sql/015-reconcile.sql) */
	STMT_RECONCILE_LEASE_TAKE, /* now, lease_until, holder, interval */
	STMT_RECONCILE_LEASE_RELEASE, /* holder */
	/* oauth (sql/002-oauth.sql) */
	STMT_CLIENT_INSERT,	/* client_id, secret_hash, auth_method, name,
				   redirect_uris, metadata, refresh, cimd, created */
	STMT_CLIENT_UPSERT_CIMD, /* same as INSERT; replaces a cached document */
	STMT_CLIENT_GET,	/* client_id -> secret_hash, auth_method, name,
				   redirect_uris, refresh, cimd, created, approved */
	STMT_CLIENT_USED,	/* now, client_id */
	STMT_CLIENT_PRUNE,	/* min_created: never-used clients older go */
	STMT_CLIENT_COUNT_UNUSED, /* -> count */
	STMT_REQUEST_INSERT,	/* id_hash, csrf_hash, client_id, redirect_uri,
				   redirect_to, challenge, state, scope, resource, expires */
	STMT_REQUEST_GET,	/* id_hash, now -> csrf_hash, client_id, redirect_uri,
				   redirect_to, challenge, state, scope, resource */
	STMT_REQUEST_DELETE,	/* id_hash */
	STMT_REQUEST_PRUNE,	/* now */
	STMT_THROTTLE_GET,	/* addr -> failures, last_failure, blocked_until (ms) */
	STMT_THROTTLE_FAIL,	/* addr, failures, now, blocked_until */
	STMT_THROTTLE_CLEAR,	/* addr */
	STMT_THROTTLE_PRUNE,	/* min_last_failure (ms) */
	STMT_CODE_INSERT,	/* code_hash, client_id, redirect_uri, challenge,
				   scope, resource, expires */
	STMT_CODE_GET,		/* code_hash -> client_id, redirect_uri, challenge,
				   scope, resource, expires, used, grant_id */
	STMT_CODE_USE,		/* grant_id, code_hash */
	STMT_CODE_PRUNE,	/* min_expires */
	STMT_GRANT_INSERT,	/* client_id, scope, resource, now, now */
	STMT_GRANT_DELETE,	/* id */
	STMT_GRANT_TOUCH,	/* now, id, now - 60 */
	STMT_GRANT_PRUNE,	/* min_created: grants without tokens go */
	STMT_TOKEN_INSERT,	/* token_hash, grant_id, kind, parent, now, expires */
	STMT_TOKEN_GET,		/* token_hash -> kind, grant_id, expires, rotated,
				   grace_used, client_id, scope, resource */
	STMT_TOKEN_AUTH,	/* token_hash -> expires, grant_id, resource,
				   client_id, client name, owner, the grant's
				   last_used (access tokens only) */
	STMT_TOKEN_ROTATE,	/* now, token_hash */
	STMT_TOKEN_GRACE,	/* token_hash */
	STMT_TOKEN_CHILD_ROTATED, /* parent -> count of its refresh tokens used */
	STMT_TOKEN_DELETE_CHILDREN, /* parent: the access tokens issued from it */
	STMT_TOKEN_RETIRE_CHILDREN, /* parent: its refresh tokens count as reused */
	STMT_TOKEN_DELETE,	/* token_hash */
	STMT_TOKEN_PRUNE,	/* now */
	/* links (share_file, /dl; sql/003-links.sql) */
	STMT_LINK_INSERT,	/* id, path, size, created, expires, client_id, owner, archive */
	STMT_LINK_GET,		/* id -> path, size, created, expires, revoked, owner, archive,
				   legacy_key */
	STMT_LINK_COUNT,	/* now, id: one more download */
	STMT_LINK_REVOKE,	/* now, id */
	STMT_LINK_PRUNE,	/* min_expires: forget links expired before */
	/* ops: clean-up, audit log, sandboxctl */
	STMT_TABLE_EXISTS,	/* name -> 1 when the table exists */
	STMT_CLEANUP_LEASE_GET,	/* -> last_run, lease_until, holder */
	STMT_CLEANUP_LEASE_TAKE, /* now, lease_until, holder, force, interval */
	STMT_CLEANUP_LEASE_RELEASE, /* holder */
	STMT_CLEANUP_INSERT,	/* started, trigger, file_ttl */
	STMT_CLEANUP_FINISH,	/* finished, state, removed, kept, failed, bytes,
				   runs_pruned, results_cleared, names, message, id */
	STMT_CLEANUP_STALE,	/* now, id: older 'running' rows are interrupted */
	STMT_CLEANUP_LIST,	/* limit -> started, state, removed, bytes,
				   message, newest first */
	STMT_CLEANUP_PRUNE,	/* min_started */
	STMT_RUN_PRUNE,		/* min_finished */
	STMT_RUN_CLEAR_RESULTS,	/* min_finished */
	STMT_AUDIT_LIST,	/* command_max, limit -> id, started, finished,
				   client_id, client_name, state, exit_code,
				   duration_ms, stdout_bytes, stderr_bytes,
				   command, error, owner */
	STMT_COUNT_SESSIONS,	/* min_last_used -> live, all */
	STMT_COUNT_RUNS,	/* -> all, running, oldest started */
	STMT_COUNT_LINKS,	/* now -> all, active */
	STMT_COUNT_CLIENTS,	/* -> all */
	STMT_COUNT_GRANTS,	/* now -> grants with a live token */
	STMT_OPS_CLIENT_LIST,	/* -> client_id, name, auth_method, cimd, created,
				   last_used, grants */
	STMT_OPS_CLIENT_DELETE,	/* client_id */
	STMT_OPS_GRANT_LIST,	/* now -> id, client_id, client_name, created,
				   last_used, live tokens, latest expiry, owner */
	STMT_OPS_GRANT_DELETE,	/* id */
	STMT_OPS_GRANT_DELETE_CLIENT, /* client_id */
	STMT_OPS_GRANT_DELETE_ALL,
	STMT_OPS_LINK_LIST,	/* now, limit -> id, state, path, size, client_id,
				   created, expires, downloads, last_download, owner;
				   upload links too: path "upload to DIR",
				   size the cap, downloads the files stored */
	/* owners and sandboxes per owner (sql/012-owners.sql) */
	STMT_OWNER_KEY_INSERT,	/* owner, key_hash, now */
	STMT_OWNER_KEY_FIND,	/* key_hash -> id, owner, key_hash (valid keys) */
	STMT_OWNER_KEY_USED,	/* now, id */
	STMT_OWNER_KEY_LIVE,	/* owner -> id of its valid key */
	STMT_OWNER_KEY_REVOKE,	/* now, owner */
	STMT_OWNER_KEY_LIST,	/* now -> owner, state, created, last_used,
				   revoked, live grants, sandbox running */
	STMT_OWNER_GRANTS_DELETE, /* owner: every token of its sign-ins */
	STMT_OWNER_CODES_DELETE, /* owner */
	STMT_OWNER_SESSIONS_DELETE, /* owner */
	STMT_OWNER_LINKS_REVOKE, /* now, owner: its live download links */
	STMT_OWNER_UPLINKS_REVOKE, /* now, owner: its live upload links */
	STMT_CODE_SET_OWNER,	/* owner, code_hash */
	STMT_GRANT_OWNER_FROM_CODE, /* code_hash, grant id */
	STMT_RUN_GET_OWNED,	/* id, owner -> state, result */
	STMT_RUN_RECENT_OWNED,	/* owner, limit -> as STMT_RUN_RECENT */
	STMT_LINK_REVOKE_OWNED,	/* now, id, owner */
	STMT_SANDBOX_GET,	/* owner -> running, last_used */
	STMT_SANDBOX_USE,	/* owner, container, volume, now: running, used now */
	STMT_SANDBOX_TOUCH,	/* now, owner */
	STMT_SANDBOX_RUNNING_OTHERS, /* owner -> count of other running ones */
	STMT_SANDBOX_IDLE,	/* now, min_last_used, owner to skip -> owner,
				   container: running, no command, LRU first */
	STMT_SANDBOX_STOPPED,	/* now, reason, owner */
	STMT_SANDBOX_LIST,	/* now -> owner, container, volume, running,
				   last_used, stopped, stop_reason, commands */
	STMT_SANDBOX_RUNNING,	/* -> owner of each running sandbox */
	STMT_SANDBOX_DELETE,	/* owner */
	/* sign-in hardening (sql/009-signin.sql) */
	STMT_CLIENT_APPROVE,	/* now, client_id: first approval only */
	STMT_CLIENT_CAP,	/* keep: past it, never-used clients of the biggest bucket go */
	STMT_REQUEST_CAP,	/* keep: past it, pending requests of the biggest bucket go */
	STMT_SIGNIN_INSERT,	/* at, addr, client_id, client_name, redirect_host, result */
	STMT_SIGNIN_THROTTLED,	/* at, addr, client_id, client_name, redirect_host */
	STMT_SIGNIN_PRUNE,	/* min_at */
	STMT_SIGNIN_LIST,	/* limit -> at, addr, result, client_id, client_name,
				   redirect_host */
	STMT_RATE_HIT,		/* key, window start -> count in this window */
	STMT_RATE_PRUNE,	/* min_since */
	STMT_OPS_THROTTLE_CLEAR_ALL,
	/* upload links (upload_link, /up; sql/010-uploads.sql) */
	STMT_UPLINK_INSERT,	/* id, dir, max_bytes, overwrite, created, expires,
				   client_id, owner */
	STMT_UPLINK_GET,	/* id -> dir, max_bytes, used_bytes, overwrite,
				   created, expires, revoked, client_id, owner,
				   legacy_key */
	STMT_UPLINK_RESERVE,	/* bytes, id: 1 row changed when it fits the cap */
	STMT_UPLINK_RELEASE,	/* bytes, id */
	STMT_UPLINK_COUNT,	/* now, id: one more file stored */
	STMT_UPLINK_REVOKE,	/* now, id */
	STMT_UPLINK_PRUNE,	/* min_expires */
	STMT_UPLOAD_INSERT,	/* link_id, client_id, remote_addr, method, name, started */
	STMT_UPLOAD_FINISH,	/* finished, state, stored, size, message, id */
	/* the links' secret (sql/017-link-secret.sql) */
	STMT_LINK_SECRET_ADD,	/* value, now: made once, never replaced */
	STMT_LINK_SECRET_GET,	/* -> value */
	/* approval per redirect URI (sql/018-redirect-approval.sql) */
	STMT_APPROVAL_ADD,	/* client_id, redirect_uri, now */
	STMT_APPROVAL_GET,	/* client_id, redirect_uri -> approved */
	/* per-address buckets (sql/019-signin-buckets.sql) */
	STMT_REQUEST_CAP_ADDR,	/* addr, keep: all but its newest keep go */
	STMT_REQUEST_SET_ADDR,	/* addr, id_hash */
	STMT_CLIENT_SET_ADDR,	/* addr, client_id */
	/* terminals (db_terms.c) */
	STMT_TERM_INSERT,	/* id, owner, client_id, command, cols, rows, now, now */
	STMT_TERM_GET,		/* id -> owner, created, last_used, closed */
	STMT_TERM_TOUCH,	/* now, id */
	STMT_TERM_CLOSE,	/* now, exit_code, id */
	STMT_TERM_OPEN_COUNT,	/* owner, min_last_used -> count */
	STMT_TERM_LIST,		/* limit (sandboxctl terminals) */
	STMT_COUNT_TERMINALS,	/* -> total, open */
	STMT_TERM_OWNER,	/* id -> owner, while open */
	/* preview links (preview_link, the preview program; sql/020-previews.sql) */
	STMT_PREVIEW_INSERT,	/* id, port, path, owner, client_id, created, expires */
	STMT_PREVIEW_GET,	/* id -> port, path, owner, client_id, created,
				   expires, revoked */
	STMT_PREVIEW_REVOKE,	/* now, id */
	STMT_PREVIEW_PRUNE,	/* min_expires */
	STMT_PREVIEW_OPEN,	/* now, id, owner, cap: 1 row changed when owner's
				   open connections are under cap */
	STMT_PREVIEW_CLOSE,	/* id */
	STMT_PREVIEW_RESET,	/* every open_now to 0 (the program's start) */
	STMT_COUNT_PREVIEWS,	/* now -> active links, open connections */
	STMT_PREVIEW_SEEN,	/* now: a preview program runs */
	STMT_PREVIEW_SEEN_GET,	/* -> when one last said so */
	/* secrets (sql/022-secrets.sql) */
	STMT_SECRET_ADD,	/* name, hosts, owner, header, template, basic_user,
				   sealed, now */
	STMT_SECRET_DELETE,	/* name */
	STMT_SECRET_LIST,	/* -> name, hosts, owner, header, template,
				   basic_user, sealed, created (by name) */
	/* snapshots (sql/023-snapshots.sql) */
	STMT_SNAP_INSERT,	/* id, container, owner, created, note, image,
				   archive_bytes, layer_bytes, took_ms, form,
				   base, volume */
	STMT_SNAP_GET,		/* id, container -> image, archive_bytes, created,
				   note, form, base, hidden */
	STMT_SNAP_LIST,		/* container -> id, created, note, archive_bytes,
				   layer_bytes, took_ms, owner, newest first */
	STMT_SNAP_TOTAL,	/* container -> count, bytes */
	STMT_SNAP_DELETE,	/* id, container */
	STMT_SNAP_PER_SANDBOX,	/* -> container, owner, count, archive bytes, layer bytes */
	STMT_SNAP_IDS,		/* container -> id, image */
	STMT_SNAP_RESTORE_BEGIN, /* snapshot_id, container, asked_by, client, now,
				   deadline: no row while another restore of it
				   holds its lease */
	STMT_SNAP_RESTORE_END,	/* now, state, message, id */
	STMT_RUN_ACTIVE_IN,	/* container_id, now -> id of running runs in it */
	STMT_RUN_STOPPED_BY,	/* error, id: cancel requested, with the reason */
	STMT_RUN_STOP_REASON,	/* id -> error, when cancel was requested */
	STMT_TERM_PRUNE,	/* min_last_used: older rows go */
	STMT_SNAP_RESTORE_RENEW, /* deadline, id: the restore's lease moved on */
	STMT_SNAP_RESTORE_LAPSE, /* now, container: running rows past their
				   lease marked failed */
	STMT_SNAP_RESTORING,	/* container, now -> snapshot_id of the restore
				   holding its lease */
	STMT_SNAP_RESTORE_RUN,	/* run_id, id: the run holding its result */
	STMT_SNAP_RUN_STATE,	/* run_id, now -> "live" (going on, or ended
				   under 30 s ago) or "gone" */
	STMT_TERM_OPEN_ALL,	/* max_created -> id, owner of open rows */
	STMT_OWNER_SLOT_ADD,	/* owner: the next free slot, unless it has one */
	STMT_OWNER_SLOT_GET,	/* owner -> slot */
	/* snapshots kept as differences (sql/027-snapshot-forms.sql) */
	STMT_SNAP_NEWEST,	/* container, volume -> id, form, base, bytes,
				   base's bytes of its newest GNU tar snapshot */
	STMT_SNAP_HIDE,		/* id, container: a deleted base kept */
	STMT_SNAP_DIFFS,	/* base -> count of its differences */
	STMT__MAX
};

enum db_step {
	DB_ERROR = -1,
	DB_DONE = 0,
	DB_ROW = 1,
};

struct db;
struct db_q;
struct json_object;

/* Open (creating if needed) and migrate. 0 or -1 with err. */
int	db_open(const char *path, struct db **, struct error *);
/* The page cache of connections opened from now on (SANDBOX_DB_CACHE, KiB). */
void	db_set_cache_kib(long);
/* This connection's page cache in KiB, or -1. */
long	db_cache_kib(struct db *);
void	db_close(struct db *);
/* This thread's connection to path, opened on first use. NULL with err. */
struct db *db_thread(const char *path, struct error *);
/* The schema version of an open database (PRAGMA user_version). */
int	db_version(struct db *);

/*
 * Run a statement that returns no rows. Returns the number of rows changed
 * (>= 0), or -1 on error (logged).
 */
long	db_exec(struct db *, enum db_stmt, const char *types, ...);

/*
 * Start a query: prepare (cached) and bind. Returns NULL on error (logged).
 * Step with db_step, read the row (a reader of store/, db_row_json) while
 * it returns DB_ROW, then always db_done (also after an error). One query
 * per connection at a time per statement.
 */
struct db_q	*db_query(struct db *, enum db_stmt, const char *types, ...);
enum db_step	 db_step(struct db_q *);
void		 db_done(struct db_q *);

/*
 * The current row of q as members of obj, one a column in the order of the
 * SELECT, named and typed as store/ declares them beside the statement's
 * SQL: a string, an integer, a boolean (true unless 0 or NULL) or null.
 * For the operator's listings (STMT_AUDIT_LIST, STMT_CLEANUP_LIST,
 * STMT_COUNT_*, STMT_OPS_*_LIST, STMT_OWNER_KEY_LIST, STMT_SIGNIN_LIST,
 * STMT_TERM_LIST).
 * Returns 0, or -1 when the statement has no such shape (logged; obj
 * unchanged). The members are obj's.
 */
int	db_row_json(struct db_q *q, struct json_object *obj);

/*
 * Run a query and copy the first column of its first row (text, "" for
 * NULL, cut short to fit) into out (size n). Returns LOOKUP_FOUND with a
 * row, LOOKUP_NONE without one, LOOKUP_ERROR on an error (logged).
 */
enum lookup_result db_get_text(struct db *, enum db_stmt, char *out, size_t n,
	    const char *types, ...);

/*
 * Prepare every statement of enum db_stmt on this connection: each has its
 * SQL, once, and it compiles against the schema. 0, or -1 (logged).
 */
int	db_check(struct db *);

/* Transactions: BEGIN IMMEDIATE, so read-modify-write never upgrades late. */
int	db_begin(struct db *);
int	db_commit(struct db *);
void	db_rollback(struct db *);

/* rowid of the last insert on this connection. */
long long db_last_id(struct db *);

#endif
