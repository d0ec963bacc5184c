/*
 * sandbox/terms.c: terminal rows reconciled with the sandboxes; see
 * sandbox/terms.h. The truth is the supervisor's: a terminal is alive
 * when its daemon takes a connection (term_list); a container that is
 * gone or stopped holds no terminal.
 */
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "base/log.h"
#include "sandbox/sandbox.h"
#include "sandbox/term.h"
#include "sandbox/terms.h"
#include "store/db.h"
#include "store/db_terms.h"

#define GRACE_S		30	/* from a row to its daemon listening: a start */

/*
 * The terminals alive in owner's sandbox into the array alive. 0, or -1
 * when the sandbox could not be asked.
 */
static int
alive_in(const struct config *cfg, const char *owner,
    struct json_object *alive)
{
	struct sandbox	*sb;
	struct error	 err;
	long long	 started;
	bool		 running = false;
	int		 rc = 0;

	if (sandbox_open(cfg, owner, &sb, &err) == -1) {
		log_warn("terminals of %s not checked: %s", owner, err.msg);
		return -1;
	}
	if (sandbox_started_at(sb, &started, &running, &err) == -1 &&
	    err.kind != ERR_NOT_FOUND) {
		log_warn("terminals of %s not checked: %s", owner, err.msg);
		rc = -1;
	} else if (running && term_list(sb, alive, &err) == -1) {
		log_warn("terminals of %s not checked: %s", owner, err.msg);
		rc = -1;
	}
	sandbox_close(sb);
	return rc;
}

static bool
listed(struct json_object *ids, const char *id)
{
	size_t i, n = json_object_array_length(ids);

	for (i = 0; i < n; i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(
		    ids, i)), id) == 0)
			return true;
	return false;
}

long
terms_reconcile(const struct config *cfg, struct db *db, const char *owner,
    long *unchecked)
{
	struct json_object	*rows, *alive = NULL, *row;
	const char		*id, *who, *asked = NULL;
	long long		 now = (long long)time(NULL);
	size_t			 i, n;
	long			 closed = 0, skipped = 0;
	bool			 ok = false;

	if ((rows = json_object_new_array()) == NULL ||
	    db_term_open_list(db, now - GRACE_S, rows) == -1) {
		json_object_put(rows);
		return -1;
	}
	n = json_object_array_length(rows);
	for (i = 0; i < n; i++) {
		row = json_object_array_get_idx(rows, i);
		id = json_object_get_string(json_object_array_get_idx(row, 0));
		who = json_object_get_string(json_object_array_get_idx(row, 1));
		if (owner != NULL && strcmp(who, owner) != 0)
			continue;
		/* Rows come by owner: one question per sandbox's owner. */
		if (asked == NULL || strcmp(asked, who) != 0) {
			json_object_put(alive);
			alive = json_object_new_array();
			ok = alive_in(cfg, who, alive) == 0;
			asked = who;
		}
		if (!ok) {
			skipped++;
			continue;
		}
		if (listed(alive, id))
			continue;
		if (db_exec(db, STMT_TERM_CLOSE, "int", now, id) == 1) {
			closed++;
			log_info("terminal %s of %s is gone from its sandbox "
			    "(closed when idle, or the sandbox restarted): "
			    "closed", id, who);
		}
	}
	json_object_put(alive);
	json_object_put(rows);
	if (unchecked != NULL)
		*unchecked = skipped;
	return closed;
}
