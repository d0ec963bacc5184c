/*
 * store/db_secrets.h: the rows of the secrets (sql/022-secrets.sql,
 * STMT_SECRET_*), read in store/db_secrets.c beside their SQL.
 */
#ifndef CS_STORE_DB_SECRETS_H
#define CS_STORE_DB_SECRETS_H

#include <stddef.h>

#include "store/db.h"

/*
 * A row of STMT_SECRET_LIST. The strings and the sealed bytes are the
 * statement's (owner and basic_user NULL for NULL), valid until the next
 * step or db_done.
 */
struct db_secret {
	const char	*name;
	const char	*hosts;
	const char	*owner;
	const char	*header;
	const char	*tmpl;
	const char	*basic_user;
	const void	*sealed;
	size_t		 sealed_len;
	long long	 created;
};

/* The next row of STMT_SECRET_LIST into s: DB_ROW, DB_DONE or DB_ERROR. */
enum db_step	db_secret_next(struct db_q *, struct db_secret *s);

#endif
