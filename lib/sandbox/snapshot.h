/*
 * snapshot.h: snapshots of a sandbox, and restoring one (the tools
 * snapshot, snapshots, restore, snapshot_delete; sandboxctl snapshots).
 *
 * A snapshot holds both halves of a sandbox's state:
 *   - the container's own layer (packages from apt-get, pip, npm -g), as
 *     the engine's commit of the container: an image SANDBOX_SNAP_REPO:ID,
 *     the container paused only while the engine commits;
 *   - /sandbox as an archive (owners, modes, times, symbolic links as
 *     they are, never followed), written to SANDBOX_SNAPSHOT_DIR/ID.tar on
 *     the server's host, outside every container: GNU tar's incremental
 *     form made in a helper of the operator's image (snapshot_tar.c), the
 *     first of a volume whole with its state (ID.snar), the next ones
 *     what changed since it; or, where the image has no GNU tar, the
 *     engine's archive of all of it. The data passes through the engine's
 *     API only, so a remote engine works the same.
 * A snapshot belongs to its sandbox (the container's name): in person
 * scope to that person alone (another's id is "not found"), in shared
 * scope to every key holder. SANDBOX_SNAPSHOTS and SANDBOX_SNAPSHOT_BYTES
 * bound what one sandbox keeps.
 *
 * A restore reads the archives back as hostile (tar_check: names, types,
 * walk order, link targets, sizes), fills a new volume of the next
 * generation through a helper container (the base's archive, then the
 * difference), then replaces the
 * container by one made from the snapshot's image with today's settings
 * (limits, capabilities, network, labels), mounting the new volume; the
 * switch (SANDBOX_SNAPSHOT_DIR/CONTAINER.current) is written only once the
 * new container runs. Until then any failure puts the old container back
 * as it was; the old volume and container go only after the switch.
 */
#ifndef CS_SNAPSHOT_H
#define CS_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct config;
struct db;
struct json_object;
struct sandbox;

#define SNAPSHOT_ID_MAX		32	/* "snap-" and 16 hex digits, with NUL */
#define SNAPSHOT_NOTE_MAX	500	/* bytes of a note */

/* Who asks, for the rows and the restore log. */
struct snapshot_who {
	const char	*owner;		/* the owner (NULL: the operator) */
	const char	*client;	/* the client's name, or "sandboxctl" */
};

/*
 * Take a snapshot of sb's sandbox (its container must exist; it is
 * started if stopped). On 0, id holds the new snapshot's id and *info
 * (may be NULL) a new object {snapshot_id, created, note, sandbox_bytes,
 * layer_bytes, took_ms}. -1 with a message naming the limit passed
 * (ERR_DENIED), or what failed.
 */
int	snapshot_take(const struct config *, struct db *, struct sandbox *,
	    const struct snapshot_who *, const char *note,
	    char id[SNAPSHOT_ID_MAX], struct json_object **info,
	    struct error *);

/* sb's snapshots, newest first: a new array of objects, or NULL. */
struct json_object *snapshot_list(struct db *, struct sandbox *);

/* Count and bytes of sb's snapshots, and the limits. 0 or -1. */
int	snapshot_usage(struct db *, struct sandbox *, long long *count,
	    long long *bytes);

/* Delete one of sb's snapshots. -1 with ERR_NOT_FOUND when it is not sb's. */
int	snapshot_delete(const struct config *, struct db *, struct sandbox *,
	    const char *id, struct error *);

/*
 * A restore's way to let go of its client before it ends (2026-07-28: a
 * Task, or a run_id handle) and to keep a 2025 stream alive. Once the
 * restore has passed its refusals, tick is called between its steps and
 * as its archive streams (at least every few seconds). It returns NULL to
 * go on, or the id of a run the caller made to hold the restore's result,
 * when it wants to answer now: the restore's row then names that run
 * (snapshot_run_state), answer is called once, and tick no more.
 */
struct snapshot_watch {
	const char	*(*tick)(void *arg);
	void		 (*answer)(void *arg);
	/*
	 * Once answered: has its client cancelled it (tasks/cancel)? Asked
	 * as tick is; until the restore's switch a cancelled restore puts
	 * the sandbox back as it was and fails. May be NULL.
	 */
	bool		 (*cancelled)(void *arg);
	void		*arg;
};

/*
 * Restore sb's sandbox to snapshot id. While commands of this sandbox run
 * it is refused (ERR_CONFLICT, naming them) unless force: then they are
 * killed first and their results say so. The restore is logged with who
 * asked; watch may be NULL. 0, or -1 with the sandbox as it was before.
 */
int	snapshot_restore(const struct config *, struct db *, struct sandbox *,
	    const struct snapshot_who *, const char *id, bool force,
	    const struct snapshot_watch *watch, struct error *);

/*
 * Is run_id the run of a restore that let go of its client (its row names
 * it)? SNAPSHOT_RUN_NONE: no, a command's. SNAPSHOT_RUN_LIVE: the restore
 * goes on (or ended under 30 s ago: its worker finishes the run).
 * SNAPSHOT_RUN_GONE: its process stopped before finishing the run.
 */
enum snapshot_run {
	SNAPSHOT_RUN_ERROR = -1,
	SNAPSHOT_RUN_NONE = 0,
	SNAPSHOT_RUN_LIVE = 1,
	SNAPSHOT_RUN_GONE = 2,
};
enum snapshot_run snapshot_run_state(struct db *, const char *run_id);

/*
 * Every snapshot of the sandbox whose container is named container (its
 * images, archives and rows) and its switch file go: for sandboxes
 * remove. The count removed, or -1.
 */
long	snapshot_remove_all(const struct config *, struct db *,
	    struct sandbox *, struct error *);

#endif
