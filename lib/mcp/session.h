/*
 * session.h: MCP sessions (spec: basic/transports "Session Management"),
 * kept in the SQLite file so every worker process shares them.
 *
 * A session id is 32 random bytes, base64url: visible ASCII as the spec
 * requires. Only its SHA-256 is stored.
 */
#ifndef CS_SESSION_H
#define CS_SESSION_H

#include <stddef.h>

#include "base/error.h"

struct db;

#define SESSION_ID_MAX	64	/* longest id accepted from a client */

/*
 * Create a session of owner (owners.h); writes its id (NUL-terminated) into
 * id. Sessions idle for more than ttl seconds are removed on the way. 0 or -1.
 */
int	session_create(struct db *, long ttl, const char *protocol_version,
	    const char *client_info, const char *owner, char *id, size_t idsz,
	    struct error *);

/*
 * Look a session of owner up and mark it used (last_used rewritten at most
 * once a minute: most lookups write nothing). Returns LOOKUP_FOUND and
 * copies its negotiated version into version (size vsz), LOOKUP_NONE when
 * unknown, expired or another owner's, LOOKUP_ERROR on error.
 */
enum lookup_result session_lookup(struct db *, const char *id, long ttl,
	    const char *owner, char *version, size_t vsz);

/*
 * End a session of owner. LOOKUP_FOUND when it existed, LOOKUP_NONE when
 * unknown or another owner's, LOOKUP_ERROR on error.
 */
enum lookup_result session_delete(struct db *, const char *id, const char *owner);

/* Is s a syntactically valid session id (visible ASCII, bounded)? */
int	session_id_valid(const char *s);

#endif
