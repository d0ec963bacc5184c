/* links.c: links list [--limit N] | links revoke LINK_ID (ctl/extern.h). */
#include <time.h>

#include "ctl/ctl.h"
#include "ctl/extern.h"

int
ctl_links_list(struct ctl *c)
{
	static const struct ctl_table_col shown[] = {
		{ "ID", -22, 0, "id", ctl_table_esc, 40 },
		{ "STATE", -7, 0, "state", ctl_table_str, 0 },
		{ "CREATED (UTC)", -20, 0, "created", ctl_table_when, 0 },
		{ "EXPIRES", -20, 0, "expires", ctl_table_when, 0 },
		{ "DLS", 5, 0, "downloads", ctl_table_int, 0 },
		{ "SIZE", 10, 0, "size", ctl_table_bytes, 0 },
		{ "PATH", 0, 2, "path", ctl_table_esc, 160 },
		{ NULL, 0, 0, NULL, NULL, 0 }
	};
	static const struct ctl_table table = { shown, NULL };

	return ctl_rows_list(c, STMT_OPS_LINK_LIST, "ii", (long long)time(NULL),
	    c->limit, &table);
}

int
ctl_links_revoke(struct ctl *c)
{
	long n;

	if (c->argc != 2)
		return ctl_misuse();
	/*
	 * A download link, else an upload link, else a preview link (ids
	 * never collide: random).
	 */
	n = db_exec(c->db, STMT_LINK_REVOKE, "it", (long long)time(NULL),
	    c->argv[1]);
	if (n == 0)
		n = db_exec(c->db, STMT_UPLINK_REVOKE, "it",
		    (long long)time(NULL), c->argv[1]);
	if (n == 0)
		n = db_exec(c->db, STMT_PREVIEW_REVOKE, "it",
		    (long long)time(NULL), c->argv[1]);
	return ctl_show_revoked(n, "live link", "link", c->argv[1], "revoked");
}
