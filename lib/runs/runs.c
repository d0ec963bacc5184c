/* runs.c: see runs.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "oauth/auth.h"
#include "runs/runs.h"
#include "sandbox/sandbox.h"
#include "store/db.h"
#include "store/db_runs.h"

/* A session is named by the hash of its id, as in the session table. */
static void
session_hash(const char *session_id, char out[CRYPTO_SHA256_HEX])
{
	if (session_id == NULL) {
		out[0] = '\0';
		return;
	}
	crypto_sha256_hex(session_id, strlen(session_id), out);
}

/* A JSON-RPC id as canonical JSON text ("7" or "\"abc\""). */
static const char *
id_text(struct json_object *id, size_t *len)
{
	if (id == NULL)
		return NULL;
	return js_text(id, len);
}

int
runs_start(struct db *db, struct sandbox *sb, const char *run_id,
    const char *session_id, struct json_object *request_id,
    const struct auth_info *who, const char *command, long timeout)
{
	char		 hash[CRYPTO_SHA256_HEX], cmd[RUN_COMMAND_LOG + 1];
	char		 cid[SANDBOX_IDENT_MAX], cstart[SANDBOX_IDENT_MAX];
	struct error	 e;
	const char	*rid;
	size_t		 n;

	/* Usually from the last seconds' check: no engine call. */
	if (sb == NULL || sandbox_identity(sb, true, cid, cstart, &e) == -1)
		cid[0] = cstart[0] = '\0';
	session_hash(session_id, hash);
	rid = id_text(request_id, &n);
	n = strlen(command);
	if (n > RUN_COMMAND_LOG) {
		n = RUN_COMMAND_LOG;
		/* Cut on a character boundary: the column is text. */
		while (n > 0 && ((unsigned char)command[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(cmd, command, n);
	cmd[n] = '\0';
	if (db_exec(db, STMT_RUN_INSERT, "ttttttiittt", run_id,
	    hash[0] ? hash : NULL, rid, who->client_id,
	    who->client_name[0] ? who->client_name : NULL, cmd,
	    (long long)timeout, (long long)time(NULL), auth_owner(who),
	    cid[0] ? cid : NULL, cstart[0] ? cstart : NULL) != 1)
		return -1;
	return 0;
}

int
runs_finish(struct db *db, const char *run_id, const char *state,
    int exit_code, long long duration_ms, unsigned long long out_bytes,
    unsigned long long err_bytes, struct json_object *result)
{
	const char	*text = NULL;
	size_t		 len;
	long		 n;

	if (result != NULL)
		text = js_text(result, &len);
	if (exit_code < 0)
		n = db_exec(db, STMT_RUN_FINISH, "itniiitt", (long long)time(NULL),
		    state, duration_ms, (long long)out_bytes,
		    (long long)err_bytes, text, run_id);
	else
		n = db_exec(db, STMT_RUN_FINISH, "itiiiitt", (long long)time(NULL),
		    state, (long long)exit_code, duration_ms,
		    (long long)out_bytes, (long long)err_bytes, text, run_id);
	return n == 1 ? 0 : -1;
}

int
runs_set_error(struct db *db, const char *run_id, const char *why)
{
	return db_exec(db, STMT_RUN_ERROR, "tt", why, run_id) == 1 ? 0 : -1;
}

enum lookup_result
runs_request_cancel(struct db *db, const char *session_id,
    struct json_object *request_id, char *run_id, size_t n)
{
	char		 hash[CRYPTO_SHA256_HEX];
	const char	*rid;
	size_t		 len;

	session_hash(session_id, hash);
	if ((rid = id_text(request_id, &len)) == NULL)
		return LOOKUP_NONE;
	return db_get_text(db, STMT_RUN_CANCEL, run_id, n, "tt", hash, rid);
}

bool
runs_cancel_requested(struct db *db, const char *run_id)
{
	bool		 yes;

	(void)db_run_cancelled(db, run_id, &yes);
	return yes;
}

char *
runs_stop_reason(struct db *db, const char *run_id)
{
	char why[256];

	if (db_get_text(db, STMT_RUN_STOP_REASON, why, sizeof(why), "t",
	    run_id) != LOOKUP_FOUND || why[0] == '\0')
		return NULL;
	return strdup(why);
}

enum lookup_result
runs_get(struct db *db, const char *owner, const char *run_id, char *state,
    size_t n, struct json_object **result)
{
	return db_run_get_owned(db, run_id, owner, state, n, result);
}

struct json_object *
runs_recent(struct db *db, const char *owner, int limit)
{
	struct json_object	*a = json_object_new_array(), *o;
	struct db_q		*q;
	struct db_run_recent	 r;
	time_t			 now = time(NULL);

	if ((q = db_query(db, STMT_RUN_RECENT_OWNED, "ti", owner,
	    (long long)limit)) == NULL)
		return a;
	while (db_run_recent_next(q, &r) == DB_ROW) {
		o = json_object_new_object();
		js_set_str(o, "run_id", r.id);
		js_set_str(o, "state", r.state);
		js_set_int(o, "started_seconds_ago", (long long)now - r.started);
		if (r.exit_set)
			js_set_int(o, "exit_code", r.exit_code);
		js_set_str(o, "command", r.command);
		json_object_array_add(a, o);
	}
	db_done(q);
	return a;
}
