/*
 * store/db_oauth.h: the rows of the OAuth tables and the personal keys
 * (sql/002-oauth.sql, sql/009-signin.sql, sql/012-owners.sql), read in
 * store/db_oauth.c beside their SQL.
 *
 * Each lookup returns LOOKUP_FOUND with the row, LOOKUP_NONE when there is
 * none, LOOKUP_ERROR on a database error (logged), when out of memory,
 * or when a column a caller relies on (marked "never NULL") is NULL.
 * Strings marked malloc'd are copies (NULL for NULL), freed by the
 * matching clear, which may be called after any result.
 */
#ifndef CS_STORE_DB_OAUTH_H
#define CS_STORE_DB_OAUTH_H

#include <stdbool.h>

#include "base/crypto.h"
#include "base/error.h"
#include "store/db.h"

/* A registered client (STMT_CLIENT_GET). */
struct db_client {
	char		 secret_hash[CRYPTO_SHA256_HEX];	/* "" for NULL */
	char		 auth_method[24];	/* cut short to fit */
	char		*name;			/* malloc'd */
	char		*redirect_uris;		/* malloc'd: a JSON array as stored */
	bool		 refresh;
	bool		 cimd;
	long long	 created;
	long long	 approved;		/* 0 for NULL */
};
enum lookup_result db_client_get(struct db *, const char *client_id,
	    struct db_client *);
void	db_client_clear(struct db_client *);

/*
 * An authorization request waiting on its sign-in page (STMT_REQUEST_GET):
 * all malloc'd, all never NULL but state.
 */
struct db_request {
	char		*csrf_hash;
	char		*client_id;
	char		*redirect_uri;		/* as sent, "" when omitted */
	char		*redirect_to;
	char		*challenge;
	char		*state;			/* NULL when not sent */
	char		*scope;
	char		*resource;
};
/* The request id_hash, if it expires after now. */
enum lookup_result db_request_get(struct db *, const char *id_hash,
	    long long now, struct db_request *);
void	db_request_clear(struct db_request *);

/* An authorization code (STMT_CODE_GET): the strings never NULL. */
struct db_code {
	char		*client_id;		/* malloc'd */
	char		*redirect_uri;		/* malloc'd; "" when none sent */
	char		*challenge;		/* malloc'd */
	char		*scope;			/* malloc'd */
	char		*resource;		/* malloc'd */
	long long	 expires;
	bool		 used;
	long long	 grant_id;		/* what its use issued; 0: none */
};
enum lookup_result db_code_get(struct db *, const char *code_hash,
	    struct db_code *);
void	db_code_clear(struct db_code *);

/* A token with its grant (STMT_TOKEN_GET): the strings never NULL. */
struct db_token {
	bool		 refresh;		/* kind is 'refresh' */
	long long	 grant_id;
	long long	 expires;
	long long	 rotated;		/* when it was used; 0: current */
	bool		 grace_used;
	char		*client_id;		/* malloc'd */
	char		*scope;			/* malloc'd */
	char		*resource;		/* malloc'd */
};
enum lookup_result db_token_get(struct db *, const char *token_hash,
	    struct db_token *);
void	db_token_clear(struct db_token *);

/*
 * An access token as the bearer check of /mcp needs it, with its grant and
 * client (STMT_TOKEN_AUTH).
 */
struct db_access {
	long long	 expires;
	long long	 grant_id;
	char		*resource;		/* malloc'd, never NULL: the audience */
	char		*client_id;		/* malloc'd, never NULL */
	char		*client_name;		/* malloc'd; NULL: the client gave none */
	char		*owner;			/* malloc'd; NULL: the operator */
	long long	 last_used;		/* the grant's, for the once-a-minute touch */
};
enum lookup_result db_access_get(struct db *, const char *token_hash,
	    struct db_access *);
void	db_access_clear(struct db_access *);

/*
 * How many refresh tokens issued from parent_hash were used
 * (STMT_TOKEN_CHILD_ROTATED): the count, or -1 on an error.
 */
long long db_token_children_used(struct db *, const char *parent_hash);

/* The sign-in throttle of one address key (STMT_THROTTLE_GET). */
struct db_throttle {
	long long	 failures;
	long long	 last_failure;
	long long	 blocked_until;
};
enum lookup_result db_throttle_get(struct db *, const char *key,
	    struct db_throttle *);

/*
 * Count one hit of key in the window starting at since (STMT_RATE_HIT):
 * the hits in this window including this one, or -1 on an error.
 */
long long db_rate_hit(struct db *, const char *key, long long since);

/*
 * The valid personal key whose hash is key_hash (STMT_OWNER_KEY_FIND). A
 * row whose owner does not fit owner, or whose stored hash is not 64
 * digits, is LOOKUP_NONE; the caller still compares the hash in full.
 */
struct db_owner_key {
	long long	 id;
	char		 owner[DB_OWNER_MAX];
	char		 key_hash[CRYPTO_SHA256_HEX];
};
enum lookup_result db_owner_key_find(struct db *, const char *key_hash,
	    struct db_owner_key *);

#endif
