/*
 * ctl/extern.h: what sandboxctl's command files share: the commands
 * themselves (for ctl.c's table), the database rows shown as JSON
 * (rows.c), the one table printer (table.c) and the values shown to
 * people (show.c). Its users include ctl/ctl.h first (struct ctl).
 */
#ifndef CS_CTL_EXTERN_H
#define CS_CTL_EXTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "store/db.h"

struct ctl;
struct json_object;

/* The usage on stderr, for a mistake in the words; returns 2 (exit status). */
int	ctl_misuse(void);

/* rows.c: query results as JSON objects (store/db.h's db_row_json). */

struct ctl_table;

/* Does the database have the table name (an older schema may not)? */
bool	ctl_rows_have(struct db *, const char *name);
/* 0 when it has table, else -1 with "has no <what>" on stderr. */
int	ctl_rows_need(struct ctl *, const char *table, const char *what);
/*
 * The first row of st (with the integer arg when types says so) set into
 * obj as members. True when there was a row.
 */
bool	ctl_rows_one(struct db *, enum db_stmt st, const char *types,
	    long long arg, struct json_object *obj);
/* The integer member of a one-row count query's row, or 0 (none, an error). */
long long ctl_rows_count(struct db *, enum db_stmt st, const char *types,
	    long long arg, const char *member);
/*
 * The rows of st (with as many of the integers a and b as types says) as
 * an array of objects: printed as JSON with --json, else as the table t.
 * Exit status.
 */
int	ctl_rows_list(struct ctl *, enum db_stmt st, const char *types,
	    long long a, long long b, const struct ctl_table *t);

/* table.c: the one table printer. */

/*
 * A cell's text for the member of row o: written into buf (n bytes) or a
 * constant string. The cells below are table.c's; a command may add its own.
 */
typedef const char *(*ctl_cell_fn)(struct json_object *o,
	    const char *member, char *buf, size_t n);

/* A column of a table; arrays of them end with a NULL head. */
struct ctl_table_col {
	const char	*head;		/* the heading */
	int		 width;		/* printf's: negative left-aligns, 0 none */
	int		 gap;		/* spaces before it, 0 for one */
	const char	*member;	/* the row's member it shows */
	ctl_cell_fn	 cell;
	size_t		 size;		/* the cell's buffer, 0 for 160 bytes:
					 * escaped text is cut to fit */
};

struct ctl_table {
	const struct ctl_table_col	*cols;
	/* Lines under a row (an audit row's error), or NULL. */
	void				(*after)(struct json_object *row);
};

/* Print the heading line, then a line per object of the array arr. */
void	ctl_table_print(struct json_object *arr, const struct ctl_table *t);

/* The string, unescaped, or "-". */
const char *ctl_table_str(struct json_object *, const char *, char *, size_t);
/* The string escaped (cut to n), or "-". */
const char *ctl_table_esc(struct json_object *, const char *, char *, size_t);
/* The integer (-1 when absent). */
const char *ctl_table_int(struct json_object *, const char *, char *, size_t);
/* A time in UTC, or "-". */
const char *ctl_table_when(struct json_object *, const char *, char *, size_t);
/* A size in B, KiB, MiB or GiB. */
const char *ctl_table_bytes(struct json_object *, const char *, char *, size_t);
/* The name a client registered (client_name), else its client_id, escaped. */
const char *ctl_table_client(struct json_object *, const char *, char *, size_t);

/* show.c: values shown to people. */

/* Print o as pretty JSON, a line. */
void	ctl_show_json(struct json_object *o);
/* Text from the database or a client made safe for a terminal, "-" for NULL. */
const char *ctl_show_esc(char *buf, size_t n, const char *s);
/* The time t in UTC, "-" when not set. Returns buf or a constant. */
const char *ctl_show_when(char *buf, size_t n, long long t);
/* The size b in B, KiB, MiB or GiB into buf, "-" when negative. */
void	ctl_show_bytes(char *buf, size_t n, long long b);
/* The integer member key of o, -1 when absent. */
long long ctl_show_int(struct json_object *o, const char *key);
/* The string member key of o, "-" when absent. */
const char *ctl_show_str(struct json_object *o, const char *key);
/*
 * The answer to revoking one row by id (n rows changed, or -1): "no
 * <missing> ID" on standard error, or "<noun> ID <done>". Exit status.
 */
int	ctl_show_revoked(long n, const char *missing, const char *noun,
	    const char *id, const char *done);

/* The commands (ctl.c's table): each returns its exit status. */

int	ctl_status(struct ctl *);		/* status.c */
int	ctl_check(struct ctl *);		/* check.c */
int	ctl_audit(struct ctl *);		/* audit.c */
int	ctl_cleanup(struct ctl *);		/* cleanup.c */
int	ctl_clients_list(struct ctl *);		/* clients.c */
int	ctl_clients_revoke(struct ctl *);
int	ctl_tokens_list(struct ctl *);		/* tokens.c */
int	ctl_tokens_revoke(struct ctl *);
int	ctl_links_list(struct ctl *);		/* links.c */
int	ctl_links_revoke(struct ctl *);
int	ctl_terminals_list(struct ctl *);	/* terminals.c */
int	ctl_terminals_close(struct ctl *);
int	ctl_rotate_key(struct ctl *);		/* rotate.c */
int	ctl_keys(struct ctl *);			/* keys.c */
int	ctl_sandboxes(struct ctl *);		/* sandboxes.c */
int	ctl_sandboxes_recreate(struct ctl *);
int	ctl_snapshots(struct ctl *);		/* snapshots.c */
int	ctl_signins_list(struct ctl *);		/* signins.c */
int	ctl_signins_unblock(struct ctl *);
int	ctl_secrets(struct ctl *);		/* secrets.c */
int	ctl_proxy_config(struct ctl *);		/* proxy.c */

/* The sandboxes per person (sandboxes_list's array, or NULL), for people. */
void	ctl_sandboxes_show(struct json_object *arr);

#endif
