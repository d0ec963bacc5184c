/*
 * owners.h: who a sign-in belongs to (sql/012-owners.sql).
 *
 * An owner id is a short name: "operator" for the server's SANDBOX_API_KEY,
 * or the name of a personal key the operator issued with sandboxctl keys
 * (letters a-z, digits, '.', '_', '-'; at most OWNER_MAX - 1 bytes). The
 * sign-in (oauth/authorize.c) maps the typed key to its owner with
 * owners_check_key and records the owner on the code, hence on the grant
 * and every token from it; auth.c reads it back with the token, and every
 * session, run and link records it. A personal key is 256 random bits,
 * shown once (add, rotate) and stored only as its SHA-256.
 */
#ifndef CS_OWNERS_H
#define CS_OWNERS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct config;
struct db;

#define OWNER_MAX	64		/* an owner id, with its NUL */
#define OWNER_OPERATOR	"operator"	/* the owner of SANDBOX_API_KEY */
#define OWNER_KEY_MAX	80		/* a personal key, with its NUL */
#define OWNER_KEY_PREFIX "cspk_"

/* Is s a name a personal key may have (not "operator")? */
bool	owners_name_valid(const char *s);

/*
 * The owner of a key typed on the sign-in page: SANDBOX_API_KEY gives
 * "operator", a valid personal key its name. Both are compared in constant
 * time (the personal key by its hash, looked up by that hash). Returns
 * LOOKUP_FOUND with owner filled, LOOKUP_NONE when the key opens nothing,
 * LOOKUP_ERROR on a database error.
 */
enum lookup_result owners_check_key(const struct config *, struct db *,
	    const char *key, char owner[OWNER_MAX]);

/*
 * Issue a key for name (add: none may be valid for it yet; rotate: the
 * valid one is revoked, and every sign-in of the owner ended, in the same
 * transaction). The key is written to key (shown once; the caller wipes
 * it). 0, or -1 with a message for the operator.
 */
int	owners_key_add(struct db *, const char *name, char key[OWNER_KEY_MAX],
	    struct error *);
int	owners_key_rotate(struct db *, const char *name,
	    char key[OWNER_KEY_MAX], struct error *);

/*
 * Revoke name's key and end its sign-ins at once: its grants (so every
 * token), codes and sessions are deleted, and its download and upload
 * links revoked, in one transaction. LOOKUP_FOUND when a valid key was
 * revoked, LOOKUP_NONE when name had none, LOOKUP_ERROR with a message
 * for the operator. The caller stops its sandbox.
 */
enum lookup_result owners_key_revoke(struct db *, const char *name,
	    struct error *);

/*
 * Does owner still have access: "operator" always (SANDBOX_API_KEY), a
 * personal owner while it has a valid key. Links and the start of a
 * sandbox ask this, so nothing of a revoked owner serves or runs even if
 * a row was missed. LOOKUP_FOUND, LOOKUP_NONE, or LOOKUP_ERROR.
 */
enum lookup_result owners_live(struct db *, const char *owner);

#endif
