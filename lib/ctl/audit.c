/* audit.c: audit [--limit N], recent commands newest first (ctl/extern.h). */
#include <stdio.h>
#include <string.h>

#include "base/js.h"
#include "base/log.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"

#define COMMAND_SHOWN	4096	/* --json: the whole stored command */

/* The exit code, "-" while none. */
static const char *
exit_cell(struct json_object *o, const char *member, char *buf, size_t n)
{
	if (ctl_show_int(o, member) < 0)
		return "-";
	snprintf(buf, n, "%lld", ctl_show_int(o, member));
	return buf;
}

/* Milliseconds as seconds, "-" while none. */
static const char *
seconds_cell(struct json_object *o, const char *member, char *buf, size_t n)
{
	long long ms = ctl_show_int(o, member);

	if (ms < 0)
		return "-";
	snprintf(buf, n, "%.1f", (double)ms / 1000);
	return buf;
}

/* The command escaped and cut to the cell, "" when none. */
static const char *
command_cell(struct json_object *o, const char *member, char *buf, size_t n)
{
	const char *cmd = js_str(o, member);

	return cmd != NULL ? log_escape(buf, n, cmd, strlen(cmd)) : "";
}

/* Under a failed run: why. */
static void
show_error(struct json_object *o)
{
	char b[400];

	if (js_str(o, "error") != NULL)
		printf("%-20s %-8s %s\n", "", "  why:", ctl_show_esc(b,
		    sizeof(b), js_str(o, "error")));
}

int
ctl_audit(struct ctl *c)
{
	static const struct ctl_table_col shown[] = {
		{ "STARTED (UTC)", -20, 0, "started", ctl_table_when, 0 },
		{ "STATE", -8, 0, "state", ctl_table_str, 0 },
		{ "EXIT", 5, 0, "exit_code", exit_cell, 0 },
		{ "SECONDS", 9, 0, "duration_ms", seconds_cell, 0 },
		{ "OWNER", -12, 2, "owner", ctl_table_str, 0 },
		{ "CLIENT", -20, 0, NULL, ctl_table_client, 24 },
		{ "COMMAND", 0, 0, "command", command_cell, 100 },
		{ NULL, 0, 0, NULL, NULL, 0 }
	};
	static const struct ctl_table table = { shown, show_error };

	return ctl_rows_list(c, STMT_AUDIT_LIST, "ii", COMMAND_SHOWN, c->limit,
	    &table);
}
