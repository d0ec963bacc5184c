/*
 * store/db_sandbox.c: the SQL of the sandboxes per owner (lib/sandbox/
 * sandboxes.c; sql/012-owners.sql), each owner's slot on the network
 * (lib/sandbox/owneraddr.c; sql/026-owner-addr.sql) and the readers of
 * their rows.
 */
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/db_sandbox.h"
#include "store/extern.h"

const struct db_sql db_sql_sandbox[] = {
	{ STMT_SANDBOX_GET,
	    "SELECT running, last_used FROM sandbox WHERE owner = ?" },
	{ STMT_SANDBOX_USE,
	    "INSERT INTO sandbox (owner, container, volume, created, last_used, "
	    "running) VALUES (?1, ?2, ?3, ?4, ?4, 1) ON CONFLICT (owner) DO "
	    "UPDATE SET container = excluded.container, volume = excluded.volume, "
	    "last_used = excluded.last_used, running = 1" },
	{ STMT_SANDBOX_TOUCH,
	    "UPDATE sandbox SET last_used = ? WHERE owner = ?" },
	{ STMT_SANDBOX_RUNNING_OTHERS,
	    "SELECT count(*) FROM sandbox WHERE running = 1 AND owner != ?" },
	/* A command counts while its row says running and its timeout (plus
	   a minute) has not passed: a worker that died leaves no hold. */
	{ STMT_SANDBOX_IDLE,
	    "SELECT s.owner, s.container FROM sandbox s WHERE s.running = 1 "
	    "AND s.last_used < ?2 AND s.owner != ?3 AND NOT EXISTS "
	    "(SELECT 1 FROM run r WHERE r.owner = s.owner AND "
	    "r.state = 'running' AND r.started + r.timeout + 60 > ?1) "
	    "ORDER BY s.last_used, s.owner" },
	{ STMT_SANDBOX_STOPPED,
	    "UPDATE sandbox SET running = 0, stopped = ?, stop_reason = ? "
	    "WHERE owner = ?" },
	{ STMT_SANDBOX_LIST,
	    "SELECT s.owner, s.container, s.volume, s.running, s.last_used, "
	    "s.stopped, s.stop_reason, (SELECT count(*) FROM run r WHERE "
	    "r.owner = s.owner AND r.state = 'running' AND "
	    "r.started + r.timeout + 60 > ?1) FROM sandbox s "
	    "ORDER BY s.last_used DESC, s.owner" },
	{ STMT_SANDBOX_RUNNING,
	    "SELECT owner FROM sandbox WHERE running = 1 ORDER BY owner" },
	{ STMT_SANDBOX_DELETE,
	    "DELETE FROM sandbox WHERE owner = ?" },
	/* One statement under the write lock: no two owners get one slot. */
	{ STMT_OWNER_SLOT_ADD,
	    "INSERT OR IGNORE INTO owner_addr (owner, slot) SELECT ?, "
	    "coalesce(max(slot), 0) + 1 FROM owner_addr" },
	{ STMT_OWNER_SLOT_GET,
	    "SELECT slot FROM owner_addr WHERE owner = ?" },
	{ STMT__MAX, NULL }
};

enum db_step
db_sandbox_idle_next(struct db_q *q, char owner[DB_OWNER_MAX])
{
	enum db_step	st;

	/* STMT_SANDBOX_IDLE: owner, container. */
	while ((st = db_step(q)) == DB_ROW)
		if (db_col_fits(q, 0, owner, DB_OWNER_MAX))
			break;
	return st;
}

enum db_step
db_sandbox_running_next(struct db_q *q, const char **owner)
{
	enum db_step	st;

	*owner = NULL;
	/* STMT_SANDBOX_RUNNING: owner. */
	if ((st = db_step(q)) == DB_ROW)
		*owner = db_text(q, 0);
	return st;
}

enum db_step
db_sandbox_list_next(struct db_q *q, struct db_sandbox *s)
{
	enum db_step	st;

	memset(s, 0, sizeof(*s));
	if ((st = db_step(q)) != DB_ROW)
		return st;
	/* STMT_SANDBOX_LIST: owner, container, volume, running, last_used,
	   stopped, stop_reason, commands. */
	s->owner = db_text(q, 0);
	s->container = db_text(q, 1);
	s->volume = db_text(q, 2);
	s->running = db_int(q, 3) != 0;
	s->last_used = db_int(q, 4);
	s->stopped_set = !db_null(q, 5);
	s->stopped = db_int(q, 5);
	s->stop_reason = db_text(q, 6);
	s->commands = db_int(q, 7);
	return st;
}

int
db_owner_slot(struct db *db, const char *owner, long long *slot)
{
	char		 buf[32], *end;

	*slot = 0;
	if (db_exec(db, STMT_OWNER_SLOT_ADD, "t", owner) == -1 ||
	    db_get_text(db, STMT_OWNER_SLOT_GET, buf, sizeof(buf), "t",
	    owner) != LOOKUP_FOUND)
		return -1;
	*slot = strtoll(buf, &end, 10);
	if (*end != '\0' || *slot <= 0)
		return -1;
	return 0;
}
