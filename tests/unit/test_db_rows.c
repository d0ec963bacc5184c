/*
 * test_db_rows: every statement of enum db_stmt has its SQL, once, and
 * compiles against the schema (db_check, which also holds each listing's
 * row shape to its SELECT); the typed row readers keep the bounds and the
 * NULL/empty distinctions their callers rely on; a listing's row reads as
 * JSON members named, typed and ordered as sandboxctl prints them.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/js.h"
#include "check.h"
#include "store/db.h"
#include "oauth/owners.h"
#include "store/db_links.h"
#include "store/db_oauth.h"
#include "store/db_runs.h"
#include "store/db_session.h"

static void
links(struct db *db)
{
	struct db_link	 l;
	struct db_uplink u;
	char		*path;

	CHECK(db_link_get(db, "nope", &l) == LOOKUP_NONE, "no link: none");
	CHECK(db_exec(db, STMT_LINK_INSERT, "ttiiittt", "a", "/data/x", 3LL,
	    10LL, 20LL, "c", "alice", "zip") == 1, "a link is stored");
	CHECK(db_link_get(db, "a", &l) == LOOKUP_FOUND &&
	    strcmp(l.path, "/data/x") == 0 && l.size == 3 && l.created == 10 &&
	    l.expires == 20 && !l.revoked && strcmp(l.owner, "alice") == 0 &&
	    strcmp(l.archive, "zip") == 0, "a link reads back");
	CHECK(db_exec(db, STMT_LINK_INSERT, "ttiiittt", "b", "/data/y", 3LL,
	    10LL, 20LL, "c", "bob", "rar") == 1 &&
	    db_link_get(db, "b", &l) == LOOKUP_FOUND && l.archive[0] == '\0',
	    "an unknown archive kind reads as a file");
	/* A path of DB_PATH_MAX fits; one more byte is no link. */
	if ((path = malloc(DB_PATH_MAX + 2)) == NULL)
		return;
	memset(path, 'p', DB_PATH_MAX + 1);
	path[0] = '/';
	path[DB_PATH_MAX] = '\0';
	CHECK(db_exec(db, STMT_LINK_INSERT, "ttiiittt", "c", path, 1LL, 1LL,
	    2LL, "c", "bob", NULL) == 1 &&
	    db_link_get(db, "c", &l) == LOOKUP_FOUND &&
	    strlen(l.path) == DB_PATH_MAX, "a path of DB_PATH_MAX reads");
	path[DB_PATH_MAX] = 'p';
	path[DB_PATH_MAX + 1] = '\0';
	CHECK(db_exec(db, STMT_LINK_INSERT, "ttiiittt", "d", path, 1LL, 1LL,
	    2LL, "c", "bob", NULL) == 1 &&
	    db_link_get(db, "d", &l) == LOOKUP_NONE, "a longer path is no link");
	free(path);
	CHECK(db_exec(db, STMT_UPLINK_INSERT, "ttiiiitt", "u", "/data/in",
	    100LL, 1LL, 10LL, 20LL, "c", "alice") == 1 &&
	    db_uplink_get(db, "u", &u) == LOOKUP_FOUND &&
	    strcmp(u.dir, "/data/in") == 0 && u.max_bytes == 100 &&
	    u.used_bytes == 0 && u.overwrite && !u.revoked &&
	    strcmp(u.client_id, "c") == 0 && strcmp(u.owner, "alice") == 0,
	    "an upload link reads back");
	CHECK(db_uplink_get(db, "none", &u) == LOOKUP_NONE,
	    "no upload link: none");
}

static void
runs(struct db *db)
{
	struct db_task		 t;
	struct db_run_info	 in;
	bool			 cancel = true;

	CHECK(db_exec(db, STMT_RUN_INSERT, "ttttttiitnn", "r1", "s", "1", "c",
	    "n", "true", 60LL, 100LL, "alice") == 1, "a run is stored");
	CHECK(db_run_info(db, "r1", &in) == LOOKUP_FOUND &&
	    strcmp(in.state, "running") == 0 && in.timeout == 60 &&
	    in.started == 100 && !in.cancel && in.container_id[0] == '\0' &&
	    in.container_started[0] == '\0', "a run's info: NULL container is \"\"");
	CHECK(db_run_cancelled(db, "r1", &cancel) == LOOKUP_FOUND && !cancel,
	    "not cancelled");
	CHECK(db_run_cancelled(db, "r0", &cancel) == LOOKUP_NONE && !cancel,
	    "no run: none, not cancelled");
	CHECK(db_task_get(db, "r1", &t) == LOOKUP_FOUND &&
	    strcmp(t.owner, "alice") == 0 && t.handle == NULL &&
	    t.result == NULL && t.last_line == NULL && !t.finished_set &&
	    !t.updated_set, "a task row keeps its NULLs");
	db_task_clear(&t);
	CHECK(db_exec(db, STMT_TASK_MARK, "tit", "task", 5LL, "r1") == 1 &&
	    db_exec(db, STMT_TASK_NOTE, "tit", "", 6LL, "r1") == 1 &&
	    db_task_get(db, "r1", &t) == LOOKUP_FOUND &&
	    strcmp(t.handle, "task") == 0 && t.last_line != NULL &&
	    t.last_line[0] == '\0' && t.updated_set && t.updated == 6,
	    "an empty last line is not a NULL one");
	db_task_clear(&t);
	CHECK(db_task_get(db, "r0", &t) == LOOKUP_NONE && t.owner == NULL,
	    "no task: none");
	db_task_clear(&t);
}

static void
owner_keys(struct db *db)
{
	struct db_owner_key	 k;
	const char		*h64 = "0123456789abcdef0123456789abcdef"
				    "0123456789abcdef0123456789abcdef";

	CHECK(strcmp(DB_OWNER_DEFAULT, OWNER_OPERATOR) == 0,
	    "a NULL owner reads as the operator");
	CHECK(db_exec(db, STMT_OWNER_KEY_INSERT, "tti", "alice", h64, 1LL) == 1 &&
	    db_owner_key_find(db, h64, &k) == LOOKUP_FOUND &&
	    strcmp(k.owner, "alice") == 0 && strcmp(k.key_hash, h64) == 0,
	    "a key reads back");
	CHECK(db_exec(db, STMT_OWNER_KEY_INSERT, "tti", "bob", "abc", 1LL) == 1 &&
	    db_owner_key_find(db, "abc", &k) == LOOKUP_NONE &&
	    k.owner[0] == '\0', "a stored hash not of 64 digits finds nothing");
}

/* The first row of st as db_row_json's members, plain JSON (static), or "". */
static const char *
first_row(struct db *db, enum db_stmt st, const char *types, long long a,
    long long b)
{
	static char		 buf[1024];
	struct json_object	*o = json_object_new_object();
	struct db_q		*q;

	buf[0] = '\0';
	if ((q = db_query(db, st, types, a, b)) != NULL) {
		if (db_step(q) == DB_ROW && db_row_json(q, o) == 0)
			snprintf(buf, sizeof(buf), "%s",
			    json_object_to_json_string_ext(o,
			    JSON_C_TO_STRING_PLAIN));
		db_done(q);
	}
	json_object_put(o);
	return buf;
}

/* After runs and owner_keys: the operator's listings by member name. */
static void
listings(struct db *db)
{
	struct json_object	*o = json_object_new_object();
	struct db_q		*q;

	CHECK(strcmp(first_row(db, STMT_AUDIT_LIST, "ii", 2, 10),
	    "{\"id\":\"r1\",\"started\":100,\"finished\":null,"
	    "\"client_id\":\"c\",\"client_name\":\"n\",\"state\":\"running\","
	    "\"exit_code\":null,\"duration_ms\":null,\"stdout_bytes\":null,"
	    "\"stderr_bytes\":null,\"command\":\"tr\",\"error\":null,"
	    "\"owner\":\"alice\"}") == 0,
	    "an audit row: its members in order, NULLs as null");
	CHECK(strcmp(first_row(db, STMT_OWNER_KEY_LIST, "i", 0, 0),
	    "{\"owner\":\"alice\",\"state\":\"valid\",\"created\":1,"
	    "\"last_used\":null,\"revoked\":null,\"grants\":0,"
	    "\"sandbox_running\":false}") == 0,
	    "a key row: a NULL flag is false");
	CHECK(strcmp(first_row(db, STMT_COUNT_RUNS, "", 0, 0),
	    "{\"total\":1,\"running\":1,\"oldest\":100}") == 0,
	    "the run counts by name");
	/* A statement without a shape sets nothing. */
	if ((q = db_query(db, STMT_RUN_GET, "t", "r1")) != NULL) {
		CHECK(db_step(q) == DB_ROW && db_row_json(q, o) == -1 &&
		    json_object_object_length(o) == 0,
		    "no row shape: -1, nothing set");
		db_done(q);
	}
	json_object_put(o);
}

/*
 * Security review item 8: a registration flood from one address cannot
 * evict a person's fresh, unused client: past the cap, the oldest of the
 * address with the most never-used clients go.
 */
static void
registration_buckets(struct db *db)
{
	char	id[32], v[8];
	int	i;

	CHECK(db_exec(db, STMT_CLIENT_INSERT, "ttttttiii", "fresh", NULL,
	    "none", "a person", "[]", "{}", 0LL, 0LL, 100LL) == 1 &&
	    db_exec(db, STMT_CLIENT_SET_ADDR, "tt", "198.51.100.7", "fresh") == 1,
	    "a person's client, registered first");
	for (i = 0; i < 12; i++) {
		snprintf(id, sizeof(id), "flood-%d", i);
		db_exec(db, STMT_CLIENT_CAP, "i", 9LL);
		db_exec(db, STMT_CLIENT_INSERT, "ttttttiii", id, NULL, "none",
		    "flood", "[]", "{}", 0LL, 0LL, 101LL + i);
		db_exec(db, STMT_CLIENT_SET_ADDR, "tt", i < 10 ? "203.0.113.1" :
		    "203.0.113.2", id);
	}
	CHECK(db_get_text(db, STMT_CLIENT_GET, v, sizeof(v), "t", "fresh") ==
	    LOOKUP_FOUND && db_get_text(db, STMT_CLIENT_GET, v, sizeof(v), "t",
	    "flood-0") == LOOKUP_NONE && db_get_text(db, STMT_CLIENT_GET, v,
	    sizeof(v), "t", "flood-11") == LOOKUP_FOUND,
	    "a registration flood cannot evict a fresh client; it evicts its "
	    "own oldest (security review item 8)");
}

/*
 * A restore's lease (sql/025-restore-lease.sql): one holder per container
 * while its deadline is ahead; a lapsed one is marked failed and frees it.
 */
static void
restore_lease(struct db *db)
{
	char		 id[64];
	long long	 all1, all2, mine1, mine2, alice1, alice2;

	CHECK(db_exec(db, STMT_SNAP_RESTORE_BEGIN, "ttttii", "snap-1", "c1",
	    "alice", "cl", 1000LL, 1150LL) == 1, "a restore takes the lease");
	CHECK(db_exec(db, STMT_SNAP_RESTORE_BEGIN, "ttttii", "snap-2", "c1",
	    "bob", "cl", 1100LL, 1250LL) == 0, "a second one does not");
	CHECK(db_exec(db, STMT_SNAP_RESTORE_BEGIN, "ttttii", "snap-3", "c2",
	    "bob", "cl", 1100LL, 1250LL) == 1, "another sandbox's does");
	CHECK(db_get_text(db, STMT_SNAP_RESTORING, id, sizeof(id), "ti", "c1",
	    1100LL) == LOOKUP_FOUND && strcmp(id, "snap-1") == 0,
	    "the holder's snapshot is known");
	CHECK(db_exec(db, STMT_SNAP_RESTORE_LAPSE, "it", 1100LL, "c1") == 0,
	    "a held lease does not lapse");
	CHECK(db_exec(db, STMT_SNAP_RESTORE_RENEW, "ii", 1300LL, 1LL) == 1,
	    "the holder moves it on");
	CHECK(db_get_text(db, STMT_SNAP_RESTORING, id, sizeof(id), "ti", "c1",
	    1200LL) == LOOKUP_FOUND, "still held past the first deadline");
	/* The holder was killed: nothing moves it on past 1300. */
	CHECK(db_get_text(db, STMT_SNAP_RESTORING, id, sizeof(id), "ti", "c1",
	    1300LL) == LOOKUP_NONE, "a lapsed lease holds nothing");
	CHECK(db_exec(db, STMT_SNAP_RESTORE_LAPSE, "it", 1300LL, "c1") == 1,
	    "a lapsed one is marked failed");
	CHECK(db_get_text(db, STMT_SNAP_RESTORING, id, sizeof(id), "ti", "c2",
	    1200LL) == LOOKUP_FOUND, "another sandbox's still holds");
	CHECK(db_exec(db, STMT_SNAP_RESTORE_BEGIN, "ttttii", "snap-2", "c1",
	    "bob", "cl", 1300LL, 1450LL) == 1, "then the next one takes it");
	CHECK(db_exec(db, STMT_SNAP_RESTORE_RENEW, "ii", 2000LL, 1LL) == 0,
	    "a failed row is not moved on");
	/* A restore under way counts against the running caps, once. */
	CHECK(db_run_count_active(db, "bob", 1350LL, &all1, &mine1) == 0 &&
	    db_run_count_active(db, "alice", 1350LL, &all2, &alice1) == 0,
	    "running rows are counted");
	/* A restore that answered early names its run (row 3: snap-2). */
	CHECK(db_get_text(db, STMT_SNAP_RUN_STATE, id, sizeof(id), "ti", "r1",
	    1400LL) == LOOKUP_NONE, "a command's run is no restore's");
	CHECK(db_exec(db, STMT_SNAP_RESTORE_RUN, "ti", "r1", 3LL) == 1,
	    "the restore names its run");
	CHECK(db_run_count_active(db, "bob", 1350LL, &all2, &mine2) == 0 &&
	    all1 == all2 + 1 && mine1 == mine2 + 1 &&
	    db_run_count_active(db, "alice", 1350LL, &all2, &alice2) == 0 &&
	    alice1 == alice2, "a restore under way counts as a running command "
	    "of who asked, until its run (counted itself) holds it");
	CHECK(db_get_text(db, STMT_SNAP_RUN_STATE, id, sizeof(id), "ti", "r1",
	    1400LL) == LOOKUP_FOUND && strcmp(id, "live") == 0,
	    "its run is live while the lease holds");
	CHECK(db_get_text(db, STMT_SNAP_RUN_STATE, id, sizeof(id), "ti", "r1",
	    1450LL) == LOOKUP_FOUND && strcmp(id, "gone") == 0,
	    "and gone once the lease lapsed");
	CHECK(db_exec(db, STMT_SNAP_RESTORE_END, "itti", 1440LL, "done",
	    NULL, 3LL) == 1, "the restore ends");
	CHECK(db_get_text(db, STMT_SNAP_RUN_STATE, id, sizeof(id), "ti", "r1",
	    1460LL) == LOOKUP_FOUND && strcmp(id, "live") == 0,
	    "just ended: its worker is about to finish the run");
	CHECK(db_get_text(db, STMT_SNAP_RUN_STATE, id, sizeof(id), "ti", "r1",
	    1480LL) == LOOKUP_FOUND && strcmp(id, "gone") == 0,
	    "ended long ago without finishing the run: gone");
}

int
main(void)
{
	char		 dbpath[] = "/tmp/test_db_rows.XXXXXX";
	struct db	*db = NULL;
	struct error	 err;
	char		 version[8];
	long long	 last = 0;
	int		 fd;

	if ((fd = mkstemp(dbpath)) == -1) {
		CHECK(0, "temporary database");
		return check_status();
	}
	close(fd);
	if (db_open(dbpath, &db, &err) == -1) {
		CHECK(0, err.msg);
		goto out;
	}
	CHECK(db_check(db) == 0, "every statement has its SQL and prepares");
	CHECK(db_get_text(db, STMT_TABLE_EXISTS, version, sizeof(version), "t",
	    "link") == LOOKUP_FOUND && strcmp(version, "1") == 0 &&
	    db_get_text(db, STMT_TABLE_EXISTS, version, sizeof(version), "t",
	    "nope") == LOOKUP_NONE, "db_get_text: found and none");
	CHECK(db_exec(db, STMT_SESSION_INSERT, "ttsiit", "h", "2025-06-18-long",
	    "{}", 5LL, 5LL, "alice") == -1, "a bad bind type fails");
	CHECK(db_exec(db, STMT_SESSION_INSERT, "tttiit", "h", "2025-06-18-long",
	    "{}", 5LL, 5LL, "alice") == 1 &&
	    db_session_get(db, "h", 0, "alice", version, sizeof(version),
	    &last) == LOOKUP_FOUND && strcmp(version, "2025-06") == 0 &&
	    last == 5, "a session's version is cut to the caller's size");
	CHECK(db_session_get(db, "h", 0, "bob", version, sizeof(version),
	    &last) == LOOKUP_NONE, "another owner's session: none");
	links(db);
	runs(db);
	owner_keys(db);
	listings(db);
	registration_buckets(db);
	restore_lease(db);
out:
	db_close(db);
	unlink(dbpath);
	return check_status();
}
