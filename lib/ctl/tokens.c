/*
 * tokens.c: tokens list | tokens revoke GRANT_ID | --client CLIENT_ID |
 * --all, the OAuth grants and their tokens (ctl/extern.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl/ctl.h"
#include "ctl/extern.h"

int
ctl_tokens_list(struct ctl *c)
{
	static const struct ctl_table_col shown[] = {
		{ "GRANT", 6, 0, "grant_id", ctl_table_int, 0 },
		{ "SIGNED IN", -20, 0, "signed_in", ctl_table_when, 0 },
		{ "LAST USED", -20, 0, "last_used", ctl_table_when, 0 },
		{ "EXPIRES", -20, 0, "expires", ctl_table_when, 0 },
		{ "LIVE", 5, 0, "live_tokens", ctl_table_int, 0 },
		{ "OWNER", -12, 2, "owner", ctl_table_str, 0 },
		{ "CLIENT", 0, 0, NULL, ctl_table_client, 160 },
		{ NULL, 0, 0, NULL, NULL, 0 }
	};
	static const struct ctl_table table = { shown, NULL };

	return ctl_rows_list(c, STMT_OPS_GRANT_LIST, "i", (long long)time(NULL),
	    0, &table);
}

int
ctl_tokens_revoke(struct ctl *c)
{
	long n, id;

	if (c->argc == 2 && strcmp(c->argv[1], "--all") == 0)
		n = db_exec(c->db, STMT_OPS_GRANT_DELETE_ALL, "");
	else if (c->argc == 3 && strcmp(c->argv[1], "--client") == 0)
		n = db_exec(c->db, STMT_OPS_GRANT_DELETE_CLIENT, "t",
		    c->argv[2]);
	else if (c->argc == 2 && ctl_parse_long(c->argv[1], 1, LONG_MAX,
	    &id) == 0)
		n = db_exec(c->db, STMT_OPS_GRANT_DELETE, "i", (long long)id);
	else
		return ctl_misuse();
	if (n == -1)
		return 1;
	printf("%ld grants revoked with all their tokens; their clients "
	    "must sign in again\n", n);
	return 0;
}
