/*
 * signins.c: signins [--limit N], the sign-in audit (sql/009-signin.sql),
 * and unblock [ADDRESS], the wrong-key wait lifted (ctl/extern.h).
 */
#include <stdio.h>

#include "base/clientaddr.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"

int
ctl_signins_list(struct ctl *c)
{
	static const struct ctl_table_col shown[] = {
		{ "AT", -20, 0, "at", ctl_table_when, 0 },
		{ "RESULT", -12, 0, "result", ctl_table_str, 0 },
		{ "ADDRESS", -24, 0, "address", ctl_table_esc, 64 },
		{ "REDIRECT HOST", -24, 0, "redirect_host", ctl_table_esc, 160 },
		{ "CLIENT", 0, 0, NULL, ctl_table_client, 160 },
		{ NULL, 0, 0, NULL, NULL, 0 }
	};
	static const struct ctl_table table = { shown, NULL };

	return ctl_rows_list(c, STMT_SIGNIN_LIST, "i", c->limit, 0, &table);
}

/*
 * An owner locked out by their own typos gets back in at once. Without
 * ADDRESS every wait is lifted.
 */
int
ctl_signins_unblock(struct ctl *c)
{
	char	key[CLIENTADDR_MAX], b[160];
	long	n;

	if (c->argc > 1)
		return ctl_misuse();
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
	printf("%s: %s\n", ctl_show_esc(b, sizeof(b), key), n > 0 ?
	    "wait lifted" : "no wait recorded");
	return 0;
}
