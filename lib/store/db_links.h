/*
 * store/db_links.h: the rows of the download and upload links
 * (sql/003-links.sql, sql/010-uploads.sql), read in store/db_links.c beside
 * their SQL.
 */
#ifndef CS_STORE_DB_LINKS_H
#define CS_STORE_DB_LINKS_H

#include <stdbool.h>

#include "base/error.h"
#include "store/db.h"

/* A download link (STMT_LINK_GET). */
struct db_link {
	char		path[DB_PATH_MAX + 1];
	long long	size;
	long long	created, expires;
	bool		revoked;		/* revoked is not NULL */
	char		owner[DB_OWNER_MAX];	/* cut short to fit; NULL: DB_OWNER_DEFAULT */
	char		archive[8];		/* "tar.gz" or "zip", "term" (a
						   terminal link), else "" */
	bool		legacy_key;		/* signed under the API key alone */
};

/*
 * The link id into l. Returns LOOKUP_FOUND, LOOKUP_NONE when there is no
 * such row or its path is NULL or longer than DB_PATH_MAX (a row that
 * cannot be served is no link), or LOOKUP_ERROR (logged).
 */
enum lookup_result db_link_get(struct db *, const char *id, struct db_link *l);

/* An upload link (STMT_UPLINK_GET). */
struct db_uplink {
	char		dir[DB_PATH_MAX + 1];
	long long	max_bytes;
	long long	used_bytes;
	bool		overwrite;
	long long	created, expires;
	bool		revoked;		/* revoked is not NULL */
	char		client_id[DB_CLIENT_MAX + 1];
	char		owner[DB_OWNER_MAX];	/* cut short to fit; NULL: DB_OWNER_DEFAULT */
	bool		legacy_key;		/* signed under the API key alone */
};

/*
 * The upload link id into u. Returns LOOKUP_FOUND, LOOKUP_NONE when there
 * is no such row or its dir or client_id is NULL or too long for u, or
 * LOOKUP_ERROR (logged).
 */
enum lookup_result db_uplink_get(struct db *, const char *id,
	    struct db_uplink *u);

/* A preview link (STMT_PREVIEW_GET). */
struct db_preview {
	long long	port;
	char		path[DB_PATH_MAX + 1];
	char		owner[DB_OWNER_MAX];	/* cut short to fit */
	char		client_id[DB_CLIENT_MAX + 1];
	long long	created, expires;
	bool		revoked;		/* revoked is not NULL */
};

/*
 * The preview link id into p. LOOKUP_FOUND, LOOKUP_NONE when there is no
 * such row (or its path or client_id do not fit), or LOOKUP_ERROR (logged).
 */
enum lookup_result db_preview_get(struct db *, const char *id,
	    struct db_preview *p);

#endif
