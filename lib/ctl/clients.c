/* clients.c: clients list | clients revoke CLIENT_ID (ctl/extern.h). */
#include "ctl/ctl.h"
#include "ctl/extern.h"

int
ctl_clients_list(struct ctl *c)
{
	static const struct ctl_table_col shown[] = {
		{ "CREATED (UTC)", -20, 0, "created", ctl_table_when, 0 },
		{ "LAST USED", -20, 0, "last_used", ctl_table_when, 0 },
		{ "GRANTS", 6, 0, "grants", ctl_table_int, 0 },
		{ "NAME", -24, 2, "name", ctl_table_esc, 25 },
		{ "CLIENT ID", 0, 0, "client_id", ctl_table_esc, 160 },
		{ NULL, 0, 0, NULL, NULL, 0 }
	};
	static const struct ctl_table table = { shown, NULL };

	return ctl_rows_list(c, STMT_OPS_CLIENT_LIST, "", 0, 0, &table);
}

int
ctl_clients_revoke(struct ctl *c)
{
	if (c->argc != 2)
		return ctl_misuse();
	return ctl_show_revoked(db_exec(c->db, STMT_OPS_CLIENT_DELETE, "t",
	    c->argv[1]), "client", "client", c->argv[1],
	    "removed with its grants and tokens");
}
