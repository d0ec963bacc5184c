/*
 * sandboxes.h: which sandbox an owner uses, and when sandboxes stop.
 *
 * SANDBOX_SCOPE=shared (the default): everyone uses the one container
 * SANDBOX_CONTAINER with the volume SANDBOX_VOLUME, as before owners
 * existed. SANDBOX_SCOPE=person: each owner (owners.h) has a container and
 * a volume of their own, named SANDBOX_CONTAINER-H and SANDBOX_VOLUME-H
 * where H is the first 12 hex digits of the SHA-256 of the owner id (a
 * name an owner cannot choose, and that tells the engine's other users
 * nothing). They are created on first use (sandbox.c), stopped after
 * SANDBOX_IDLE_STOP seconds without a tool call that uses it (execute,
 * share_file; not get_result) and without a running
 * command, and started again on the next call with their files and
 * installed packages (the container is stopped, never removed). With
 * SANDBOX_MAX_SANDBOXES, starting one more stops the least recently used
 * idle one first, and refuses when every running one is busy. A volume
 * is only ever removed by sandboxes_remove (sandboxctl sandboxes remove).
 *
 * The `sandbox` table (sql/012-owners.sql) keeps one row per owner in
 * person scope: its names, last use, and whether the server left it
 * running; the commands running in it are the run rows of its owner.
 */
#ifndef CS_SANDBOXES_H
#define CS_SANDBOXES_H

#include <stddef.h>

#include "base/error.h"
#include "sandbox/sandbox.h"

struct config;
struct db;
struct json_object;

#define SANDBOXES_NAME_MAX	SANDBOX_NAME_MAX

/*
 * The container and volume names of owner's sandbox (NULL owner: the
 * shared names). Always succeeds; the names are [A-Za-z0-9_.-].
 */
void	sandboxes_names(const struct config *, const char *owner,
	    char container[SANDBOXES_NAME_MAX], char volume[SANDBOXES_NAME_MAX]);

/*
 * Before a tool call of owner in person scope (nothing in shared scope):
 * stop sandboxes idle for SANDBOX_IDLE_STOP, then, if owner's sandbox is
 * not running and SANDBOX_MAX_SANDBOXES are, stop the least recently used
 * idle one; mark owner's running and used now. 0, or -1 with a message for
 * the model (every running sandbox is busy, or owner has no valid key any
 * more: owners_live). The container itself is created or started by
 * sandbox_ensure, through the handle of sandboxes_open.
 */
int	sandboxes_claim(const struct config *, struct db *, const char *owner,
	    struct error *);

/*
 * sandboxes_claim, then sandbox_open: the one handle that may start or
 * create owner's container in person scope (sandbox_ensure). Every caller
 * that needs the container running (tool calls, folder downloads, upload
 * links, sandboxctl recreate) opens it so, and calls sandboxes_touch when
 * done. 0, or -1 with a message for a person.
 */
int	sandboxes_open(const struct config *, struct db *, const char *owner,
	    struct sandbox **, struct error *);

/* After a tool call: owner's sandbox was used now (person scope). */
void	sandboxes_touch(const struct config *, struct db *, const char *owner);

/*
 * Stop every sandbox idle for SANDBOX_IDLE_STOP (up to 64 a pass; a tool
 * call stops at most 2 on its way). Returns how many.
 */
int	sandboxes_stop_idle(const struct config *, struct db *);

/*
 * Stop owner's container (files and packages stay), for reason ("idle",
 * "cap", "revoked", "operator"). A missing or stopped one is fine. 0, or
 * -1 with err.
 */
int	sandboxes_stop(const struct config *, struct db *, const char *owner,
	    const char *reason, struct error *);

/*
 * Remove owner's container and volume, and their snapshots (*removed: how
 * many), and forget the sandbox: everything in it is gone. Only for an
 * operator's explicit command. 0 or -1 with err.
 */
int	sandboxes_remove(const struct config *, struct db *, const char *owner,
	    long *removed,
	    struct error *);

/*
 * Every sandbox, for operators: a new JSON array of { owner, container,
 * volume, running (as the server left it), engine_state (what the engine
 * says now: "running", "exited", "absent", or "unknown" when it cannot be
 * asked), last_used, stopped, stop_reason, commands }. In shared scope,
 * the one shared sandbox (owner null). The server's view is brought in
 * line with the engine's (a container stopped or removed behind the
 * server's back no longer counts against SANDBOX_MAX_SANDBOXES). NULL on a
 * database error.
 */
struct json_object *sandboxes_list(const struct config *, struct db *);

#endif
