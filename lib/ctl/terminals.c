/*
 * terminals.c: terminals list [--limit N] | terminals close TERMINAL_ID
 * (ctl/extern.h): the terminals the model opened (sql/021-terminals.sql),
 * first reconciled with the sandboxes (a terminal that closed itself when
 * idle reads closed), and ending one, with every process of its session,
 * in its owner's sandbox.
 */
#include <stdio.h>
#include <time.h>

#include "base/config.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"
#include "sandbox/sandbox.h"
#include "sandbox/term.h"
#include "sandbox/terms.h"

int
ctl_terminals_list(struct ctl *c)
{
	static const struct ctl_table_col shown[] = {
		{ "ID", -20, 0, "id", ctl_table_esc, 40 },
		{ "STATE", -7, 0, "state", ctl_table_str, 0 },
		{ "OWNER", -12, 0, "owner", ctl_table_esc, 40 },
		{ "CREATED (UTC)", -20, 0, "created", ctl_table_when, 0 },
		{ "LAST USED", -20, 0, "last_used", ctl_table_when, 0 },
		{ "EXIT", 4, 0, "exit_code", ctl_table_int, 0 },
		{ "COMMAND", 0, 2, "command", ctl_table_esc, 60 },
		{ NULL, 0, 0, NULL, NULL, 0 }
	};
	static const struct ctl_table table = { shown, NULL };
	long			      unchecked = 0;

	/* What the sandboxes hold, not what the last call saw. */
	terms_reconcile(c->cfg, c->db, NULL, &unchecked);
	if (unchecked > 0)
		fprintf(stderr, "sandboxctl: %ld open terminals could not be "
		    "checked in their sandbox (the engine did not answer)\n",
		    unchecked);
	return ctl_rows_list(c, STMT_TERM_LIST, "i", c->limit, 0, &table);
}

int
ctl_terminals_close(struct ctl *c)
{
	struct term_screen	 s;
	struct sandbox		*sb;
	struct error		 err;
	char			 owner[128];
	const char		*id;
	long			 n;

	if (c->argc != 2)
		return ctl_misuse();
	id = c->argv[1];
	if (db_get_text(c->db, STMT_TERM_OWNER, owner, sizeof(owner), "t",
	    id) != LOOKUP_FOUND)
		return ctl_show_revoked(0, "open terminal", "terminal", id,
		    "closed");
	if (sandbox_open(c->cfg, owner, &sb, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	if (term_close(sb, id, &s, &err) == 0)
		term_screen_free(&s);
	else if (err.kind != ERR_NOT_FOUND) {
		fprintf(stderr, "sandboxctl: terminal %s: %s\n", id, err.msg);
		sandbox_close(sb);
		return 1;
	}
	sandbox_close(sb);
	n = db_exec(c->db, STMT_TERM_CLOSE, "int", (long long)time(NULL), id);
	return ctl_show_revoked(n, "open terminal", "terminal", id, "closed");
}
