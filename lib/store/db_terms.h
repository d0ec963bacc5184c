/*
 * store/db_terms.h: the rows of the terminal table (sql/021-terminals.sql).
 */
#ifndef CS_STORE_DB_TERMS_H
#define CS_STORE_DB_TERMS_H

#include <stdbool.h>

#include "store/db.h"

struct db_term {
	char		owner[128];
	long long	created, last_used;
	bool		closed;
};

/* Terminal id's row: LOOKUP_FOUND with *t, LOOKUP_NONE, LOOKUP_ERROR. */
enum lookup_result db_term_get(struct db *, const char *id, struct db_term *t);

struct json_object;

/* How many terminals owner has open (used since min_last_used); -1 on error. */
long long db_term_open_count(struct db *, const char *owner,
	    long long min_last_used);

/*
 * The open terminals created before max_created, as [id, owner] arrays
 * appended to the json-c array out, by owner. 0, or -1 on error.
 */
int	db_term_open_list(struct db *, long long max_created,
	    struct json_object *out);

#endif
