/*
 * sandbox/extern.h: what the files of sandbox/ share, and nothing else
 * includes. Other folders use the public headers: sandbox.h (the one door),
 * sandboxes.h, files.h and the guards' headers.
 *
 * The files build on each other in one direction:
 *
 *   sandbox.c      the core: the handle, one engine call (sandbox_call),
 *                  one-shot execs, scripts and helpers, exec_result_free;
 *                  calls no other file of the folder but the leaves
 *                  (cspec.c, netpolicy.c, disk_usage.c, scripts.c)
 *   ensure.c       the container's lifecycle (sandbox_ensure)
 *   guard_disk.c   the disk watchdog, and the guard's shared cache
 *   guard_egress.c the egress canary
 *   guard.c        configuration drift around commands (sandbox/guard.h)
 *   files.c        one file through the archive API (files.h)
 *   identity.c     which container runs now (sandbox_identity)
 *   sup.c          the supervisor's upload (sandbox/sup.h)
 *   chan.c         the supervisor's channel (sandbox/chan.h)
 *   kill.c         killing a run (sandbox_kill)
 *   collect.c      a run's result from its record (sandbox_collect)
 *   exec.c         running a command (sandbox_exec)
 *   status.c       status and recreate, for operators
 *   snapshot.c     what the snapshot files share; rows, listing, deleting
 *   snapshot_flat.c  a snapshot's image kept to a bounded depth
 *   snapshot_take.c  taking a snapshot (snapshot.h)
 *   snapshot_restore.c  restoring one (snapshot.h)
 *   snapshot_tar.c   /sandbox's archives made and extracted by GNU tar
 *   sandboxes.c    the per-owner registry (sandboxes.h)
 *
 * This header includes no header of the folder, so it closes no circle.
 */
#ifndef CS_SANDBOX_EXTERN_H
#define CS_SANDBOX_EXTERN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct capture;
struct config;
struct cspec;
struct db;
struct docker;
struct docker_exec_cb;
struct exec_stream;
struct json_object;
struct snapshot_who;

struct sandbox {
	const struct config *cfg;	/* the process's settings it came from */
	char		*owner;		/* sandbox_open's owner, or NULL */
	struct docker	*docker;	/* the one engine client of this handle */
	struct cspec	*spec;		/* what the container should be */
	char		*image;
	char		*container;
	char		*volume;
	long long	 memory_bytes;
	long long	 nano_cpus;
	long		 pids_limit;
	long long	 shm_bytes;	/* /dev/shm (SANDBOX_SHM_SIZE) */
	size_t		 max_output;
	bool		 script_hung;	/* a script passed its deadline */
	bool		 channel;	/* SANDBOX_CHANNEL: commands over it */
	bool		 per_person;	/* SANDBOX_SCOPE=person */
	/*
	 * Opened by sandboxes_open, after sandboxes_claim: only such a handle
	 * starts or creates a container in person scope (sandbox_ensure).
	 */
	bool		 claimed;
	/*
	 * Set with claimed when owners get fixed addresses (owneraddr.h):
	 * the connection the owner's address is looked up in at create.
	 */
	struct db	*db;
};

/* The repository of snapshots' images (snapshot*.c): REPO:SNAPSHOT_ID. */
#define SANDBOX_SNAP_REPO	"code-sandbox-snap"

/* The longest timeout of a command, and the cap of a recorded duration. */
#define SANDBOX_TIMEOUT_MAX	(30L * 86400)

/* --- sandbox.c: the core --- */

/* A run id, interpolated into paths in the container: [A-Za-z0-9_-]{1,64}. */
bool		sandbox_valid_run_id(const char *);

/* A new JSON array of the strings of a NULL-terminated vector. */
struct json_object *sandbox_str_array(const char *const *);

/*
 * The container and volume names of owner's sandbox (sandboxes.h: NULL
 * owner, or shared scope, the shared names; in person scope the names with
 * the owner's hash), each into SANDBOX_NAME_MAX bytes. Always succeeds.
 */
void		sandbox_names(const struct config *, const char *owner,
		    char *container, char *volume);

/*
 * One engine call, the request/status-check/error epilogue every caller
 * shares: method on the path made from fmt (the names in it are validated
 * URL-safe), with body as JSON when not NULL. ok lists the statuses the
 * caller handles, ended by 0. Returns that status, with *resp (resp may be
 * NULL) a new reference to the JSON body or NULL; the caller puts it.
 * Otherwise -1: no answer (err as docker_request's), or another status,
 * err then "WHAT (METHOD PATH): HTTP n: the engine's message" with
 * err->kind ERR_NOT_FOUND and ERR_CONFLICT (container missing, not
 * running) and ERR_UPSTREAM for the rest. Every call has the engine
 * client's absolute deadline.
 */
long		sandbox_call(struct sandbox *, const char *method,
		    struct json_object *body, const long *ok,
		    struct json_object **resp, const char *what,
		    struct error *err, const char *fmt, ...)
		    __attribute__((format(printf, 8, 9)));

/*
 * POST /containers/NAME/exec of cmd, attached (stdout, stderr, no TTY),
 * in /sandbox: with the commands' environment (EXEC_ENV_RUN), and stdin
 * too (EXEC_ENV_CHANNEL, the supervisor's channel), or as the engine has
 * it (EXEC_ENV_NONE). *id is malloc'd. -1 with err->kind
 * ERR_NOT_FOUND/ERR_CONFLICT when the container is missing or does not run.
 */
enum { EXEC_ENV_NONE, EXEC_ENV_RUN, EXEC_ENV_CHANNEL, EXEC_ENV_INPUT };
int		sandbox_exec_create(struct sandbox *, struct json_object *cmd,
		    int how, char **id, struct error *);

/*
 * The exit code of exec id once the engine has recorded it: the stream can
 * end a moment before the exit is processed, so it asks again for up to
 * two seconds (then *exit_code -1). 0, or -1 when the engine does not
 * answer.
 */
int		sandbox_exec_wait(struct sandbox *, const char *id,
		    int *exit_code, struct error *);

/*
 * Create and start an exec of cmd (EXEC_ENV_NONE), reporting its output to
 * cb, then wait for its exit code unless cb's tick stopped it (*stopped).
 * 0, or -1 with err->kind ERR_NOT_FOUND/ERR_CONFLICT when the container
 * does not run.
 */
int		sandbox_run_cmd(struct sandbox *, struct json_object *cmd,
		    const struct docker_exec_cb *cb, bool *stopped,
		    int *exit_code, struct error *);

/* Every helper exec's deadline (a kill, the markers, a run's folder). */
#define SANDBOX_HELPER_MS	10000

/* Output of a small helper exec: stdout kept in a fixed buffer. */
#define SMALL_OUT_MAX	4096
struct small_out {
	char		buf[SMALL_OUT_MAX];
	size_t		len;
	long long	deadline_ms;
};

/* A docker_exec_cb tick over a struct small_out: its deadline passed. */
int		sandbox_small_tick(void *);

/*
 * Run `bash -c script code-sandbox args...` (script NULL: args is the
 * command itself, the supervisor's), stdout into o, within
 * SANDBOX_HELPER_MS. 0 with *exit_code, or -1; a helper that passes its
 * deadline marks the handle's scripts hung (ERR_TIMEOUT: a hostile
 * container is reported, not suffered).
 */
int		sandbox_helper(struct sandbox *, const char *script,
		    const char *const args[], struct small_out *o,
		    int *exit_code, struct error *);

/* --- ensure.c --- */

/*
 * The error of a container weaker than its spec wants (diff says how),
 * naming what the operator can do. Returns -1.
 */
int		sandbox_refusal(const struct cspec *, const char *diff,
		    struct error *);

/*
 * The steps of sandbox_ensure, for a restore (snapshot_restore.c): the handle's
 * volume made (idempotent), its container created from sb->image with
 * sb->volume at /sandbox and today's spec (0 also when it exists), and
 * started or unpaused. 0 or -1.
 */
int		sandbox_volume_create(struct sandbox *, struct error *);
int		sandbox_create_container(struct sandbox *, struct error *);
int		sandbox_start_container(struct sandbox *, bool paused,
		    struct error *);

/*
 * The volume and image a restore switched the sandbox of container to
 * (snapshot_restore.c writes them, SANDBOX_SNAPSHOT_DIR/CONTAINER.current): each
 * copied into its buffer (SANDBOX_NAME_MAX bytes) when the file is there
 * and valid (the volume named base-s..., the image a snapshot's); else
 * they are left as they are. Reads at most a few hundred bytes.
 */
void		sandbox_current(const struct config *, const char *container,
		    const char *base_volume, char *volume, char *image);

/* --- guard_disk.c, for itself and guard.c --- */

/*
 * The guard's samples and verdicts, shared by the threads of a process
 * under guard_mu, one entry per container name (guard_slot), so one
 * person's samples and verdicts never stand for another's; within it, kept
 * for one instance of the container (key: its Id and start time).
 * guard.c keeps the spec verdicts, guard_egress.c the canary's,
 * guard_disk.c the samples.
 * Zeroed for a new instance (and by guard_recreate), but for watched_id.
 */
struct guard_cache {
	char		 container[128];	/* the entry's container name */
	unsigned long long used;	/* last use, for reuse of the oldest */
	/*
	 * The container Id last found in watchdog mode: its mounts are fixed,
	 * so its /sandbox stays watched across restarts (which clear the rest).
	 */
	char		 watched_id[80];
	char		 key[192];	/* container Id and StartedAt */
	long long	 canary_at;	/* monotonic ms; 0: not yet */
	bool		 canary_ok;
	char		 canary_detail[200];
	long long	 disk_at, disk_cost;
	bool		 disk_watch;	/* watchdog mode */
	bool		 disk_known;	/* the mode was found */
	int		 disk_fails;	/* failed samples in a row */
	char		 disk_why[200];	/* why the last one failed */
	long long	 fs_size, sandbox_used;
	long long	 layer_at, layer_cost;
	long long	 layer_used;
	bool		 refreshing;	/* a refresh beside the requests runs */
	char		 fresh[128];	/* container found as specified */
	long long	 fresh_at;	/* monotonic ms; 0: not now */
	char		 fresh_id[72], fresh_started[72];	/* its identity */
};
extern pthread_mutex_t		guard_mu;

/*
 * The entry of container, made (taking the least recently used one) when
 * there is none; the caller holds guard_mu, and looks it up again after
 * letting go of it.
 */
/*
 * A supervisor's stderr on a channel: logged escaped, a line per 10 s at
 * most (*said_ms, the last one, kept by the caller).
 */
void		chan_log_stderr(const char *container, const char *what,
		    long long *said_ms, const void *buf, size_t len);

struct guard_cache *guard_slot(const char *container);

/* Zero an entry for a new instance of its container; guard_mu held. */
void		guard_slot_reset(struct guard_cache *);

/*
 * The canary and a disk sample run through the container's bash, which the
 * model may have replaced by one that hangs: each has this deadline, and
 * after one passed it the handle runs no more of them (sandbox_script_hung):
 * the last verdicts stand, and a hang costs a call at most this once.
 */
#define GUARD_SCRIPT_DEADLINE_S	6

/*
 * GET /containers/NAME/json[?size=1] of cs's container: 0 with *status and
 * *resp (the body of a 200; NULL for a 404), or -1 (another status).
 */
int		guard_inspect(struct docker *, const struct cspec *, bool size,
		    long *status, struct json_object **resp, struct error *);

/*
 * Sample /sandbox: 0 with the mode and sizes, or -1 with why. *host says
 * they were measured on the host, or by the engine for a plain local
 * volume this host cannot read (why then says "by the engine"; the mode in
 * *watch holds even when the measure failed), not by a script in the
 * container.
 */
int		guard_sample_disk(struct sandbox *, struct docker *,
		    const struct cspec *, bool *watch, long long *fs_size,
		    long long *used, bool *host, char *why, size_t n);

/*
 * Between commands: the disk samples refreshed when stale; true when a
 * limit is passed (why says which), else false (under, or unknown).
 */
bool		guard_disk_check(struct sandbox *, struct docker *,
		    const struct cspec *, char *why, size_t n);

/*
 * Beside the requests (guard.c's refresh): the disk samples refreshed a
 * while before guard_disk_check would find them stale, so no request
 * waits for one while commands keep coming.
 */
void		guard_disk_ahead(struct sandbox *, struct docker *,
		    const struct cspec *);
/* --- guard_egress.c, for guard.c --- */

#define CANARY_EVERY_MS		60000	/* re-run the canary after this */
#define AHEAD_CANARY_MS		15000	/* beside the requests, that much sooner */

/* Container c's Id and StartedAt: what the cached samples belong to. */
void		guard_cache_key(struct json_object *c, char *key, size_t n);

/*
 * The egress verdict when the canary is due (older than every): 0 with
 * *ok and detail, or -1 (err) when it could not run and no verdict
 * stands. One canary at a time in a process.
 */
int		guard_canary_verdict(struct sandbox *, const struct cspec *,
		    struct json_object *c, const char *key, long long every,
		    bool *ok, char *detail, size_t n, struct error *);

/*
 * The egress policy in force for the running container c: the canary's
 * verdict, the canary run when due. 0, or -1 with err saying why commands
 * are refused.
 */
int		guard_egress_check(struct sandbox *, const struct cspec *,
		    struct json_object *c, struct error *);

/*
 * The status's egress parts (eg): the internet policy's network, its
 * bridge and firewall rules; and the canary run now in container c.
 */
void		guard_egress_status_network(struct docker *,
		    const struct cspec *, struct json_object *eg);
void		guard_egress_status_canary(struct sandbox *,
		    const struct cspec *, struct json_object *c,
		    struct json_object *eg);

/* --- kill.c --- */

/* Kill run_id's group, leaving marker "cancel", "timeout" or "disk". 0 or -1. */
int		sandbox_kill_run(struct sandbox *, const char *run_id,
		    const char *marker, struct error *);

/* --- collect.c --- */

/* s from capture c: its text (malloc'd), length, cut and total. 0 or -1. */
int		sandbox_stream_fill(struct exec_stream *s,
		    const struct capture *c);

/* --- snapshot.c, for the snapshot files --- */

/* A snapshot id: "snap-" and 16 lowercase hex digits. */
bool		snapshot_valid_id(const char *);

/*
 * A file or folder made in SANDBOX_SNAPSHOT_DIR takes the owner of dir (the
 * folder it is in), so sandboxctl run as root and the programs run as
 * their user share what either made. 0, or -1 with errno.
 */
int		snapshot_own_like(int fd, const char *dir);
/* All of buf to a snapshot file: 0, or -1 with *errnum. */
int		snapshot_write(int fd, const char *buf, size_t len,
		    int *errnum);

/* SANDBOX_SNAPSHOT_DIR/NAME.EXT into out (n bytes). 0, or -1 when too long. */
int		snapshot_path(const struct config *, const char *name,
		    const char *ext, char *out, size_t n);

/* A snapshot's image, or a helper container, removed; a failure is logged. */
void		snapshot_image_remove(struct sandbox *, const char *image);
void		snapshot_container_remove(struct sandbox *, const char *name);

/*
 * A helper container name of image, with no network, labelled
 * code-sandbox=what, and volume (when not NULL) at /sandbox without the
 * image's own /sandbox copied in. Stopped (flags 0), for the archive API
 * (a restore fills the volume, a flattening exports the file system); or
 * SNAP_HELPER_RUN, made to run `sleep` as root for execs (snapshot_tar.c),
 * the volume read-only with SNAP_HELPER_RO. A helper left by an earlier
 * try is removed first. 0, or -1 with err.
 */
#define SNAP_HELPER_RUN	1
#define SNAP_HELPER_RO	2
int		snapshot_helper_create(struct sandbox *, const char *name,
		    const char *image, const char *volume, const char *what,
		    int flags, struct error *err);

/* Snapshot id of sb's sandbox into *s: 0, or -1 with err (ERR_NOT_FOUND). */
struct db_snap;
int		snapshot_find(struct db *, struct sandbox *, const char *id,
		    struct db_snap *s, struct error *err);

/*
 * A restore's hold on its sandbox (sql/025-restore-lease.sql): its row in
 * snapshot_restore, 'running' with a deadline the restore moves on as it
 * goes, so one killed midway holds the sandbox SNAPSHOT_LEASE_S at most.
 * Longer than the longest stretch between renewals: two engine calls of
 * DOCKER_REQUEST_TIMEOUT_S (60 s) or a stalled archive stream.
 */
#define SNAPSHOT_LEASE_S	150
#define SNAPSHOT_LEASE_RENEW_MS	5000	/* renewed at most this often */

struct snapshot_watch;
struct snapshot_lease {
	struct db	*db;
	long long	 row;		/* the restore's row, 0: none held */
	long long	 renewed_ms;	/* clock_ms of the last renewal */
	const struct snapshot_watch *watch; /* the caller's, or NULL */
	bool		 handed;	/* watch answered its client */
	bool		 cancelled;	/* its client cancelled it */
	long long	 asked_ms;	/* clock_ms the watch was last asked */
};

/*
 * Take the lease of container for a restore to snapshot id, first marking
 * failed the rows of restores whose process let their lease lapse. 1 when
 * taken (*l holds it), 0 when another restore holds it, -1 on error.
 */
int		snapshot_lease_begin(struct db *, struct snapshot_lease *l,
		    const char *id, const char *container,
		    const struct snapshot_who *);

/*
 * The restore's heartbeat: the lease moved on when SNAPSHOT_LEASE_RENEW_MS
 * have passed, and the watch's tick called (snapshot.h); NULL-safe.
 */
void		snapshot_lease_renew(struct snapshot_lease *l);

/*
 * Has the restore's client cancelled it since it was answered (the watch's
 * cancelled, asked every SNAPSHOT_CANCEL_ASK_MS at most)? NULL-safe.
 */
#define SNAPSHOT_CANCEL_ASK_MS	200
bool		snapshot_lease_cancelled(struct snapshot_lease *l);

/* The restore's row finished ("done" or "failed" with message). */
void		snapshot_lease_end(struct snapshot_lease *l, bool done,
		    const char *message);

/*
 * Is a restore of container under way (its lease held)? 1 with id its
 * snapshot (SNAPSHOT_ID_MAX bytes), 0 when none is, -1 on error.
 */
int		snapshot_restoring(struct db *, const char *container,
		    char id[32]);

/* --- snapshot_tar.c --- */

/* The largest state file of GNU tar's incremental archives kept. */
#define SNAPSHOT_SNAR_MAX	(64LL * 1024 * 1024)

/*
 * Make helper name run (the operator's image, SANDBOX_IMAGE; volume at
 * /sandbox, read-only when ro). 0 with *gnu when its tar is GNU tar (the
 * helper left running for the calls below), or without (the helper
 * removed: the engine's archive is used instead); -1 with err.
 */
int		snapshot_tar_helper(struct sandbox *, const char *name,
		    const char *volume, bool ro, bool *gnu, struct error *);
/*
 * Archive /sandbox in helper with GNU tar --listed-incremental: against
 * the state in the host file base_snar (NULL: all of it), the archive's
 * bytes to out as they come (out returns -1 to stop: then 0 is returned
 * and out's caller knows why; out NULL: no archive, only the state, for
 * which GNU tar reads no file's contents). With snar_out (a host path)
 * the new state is written there. 0, or -1 with err.
 */
int		snapshot_tar_create(const struct config *, struct sandbox *,
		    const char *helper, const char *base_snar,
		    const char *snar_out,
		    int (*out)(void *, const char *, size_t), void *arg,
		    struct error *);
/*
 * Extract one such archive into helper's /sandbox (files it no longer
 * held removed), its bytes pulled from in: a count, 0 at the end, -1 to
 * stop (then -1 is returned and in's caller knows why). 0, or -1 with err.
 */
int		snapshot_tar_extract(struct sandbox *, const char *helper,
		    long (*in)(void *, char *, size_t), void *arg,
		    struct error *);

/* --- snapshot_flat.c --- */

/*
 * When image (the snapshot id's) has more layers than the sandbox image's
 * and SANDBOX_SNAPSHOT_DEPTH, make it one layer under the same tag. 0
 * (also when nothing was needed), or -1 with the image left as it was.
 */
int		snapshot_flatten(const struct config *, struct sandbox *,
		    const char *id, const char *image, struct error *);

#endif
