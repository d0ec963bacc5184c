/*
 * store/db_secrets.c: the SQL of the secrets (sql/022-secrets.sql) and the
 * reader of their rows.
 */
#include <string.h>

#include "store/db.h"
#include "store/db_secrets.h"
#include "store/extern.h"

const struct db_sql db_sql_secrets[] = {
	{ STMT_SECRET_ADD,
	    "INSERT INTO secret (name, hosts, owner, header, template, "
	    "basic_user, sealed, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)" },
	{ STMT_SECRET_DELETE,
	    "DELETE FROM secret WHERE name = ?" },
	{ STMT_SECRET_LIST,
	    "SELECT name, hosts, owner, header, template, basic_user, sealed, "
	    "created FROM secret ORDER BY name" },
	{ STMT__MAX, NULL }
};

enum db_step
db_secret_next(struct db_q *q, struct db_secret *s)
{
	enum db_step	 st;

	memset(s, 0, sizeof(*s));
	if ((st = db_step(q)) != DB_ROW)
		return st;
	s->name = db_text(q, 0);
	s->hosts = db_text(q, 1);
	s->owner = db_text(q, 2);
	s->header = db_text(q, 3);
	s->tmpl = db_text(q, 4);
	s->basic_user = db_text(q, 5);
	s->sealed = db_blob(q, 6, &s->sealed_len);
	s->created = db_int(q, 7);
	if (s->name == NULL || s->hosts == NULL || s->header == NULL ||
	    s->tmpl == NULL || s->sealed == NULL)
		return DB_ERROR;
	return DB_ROW;
}
