/*
 * sandbox.h: the one long-lived sandbox container, and the door to it for
 * the other folders (the files of sandbox/ and what they share:
 * sandbox/extern.h).
 *
 * A struct sandbox is a Docker engine client (lib/engine/) plus the settings
 * that name the image, container and volume; use one per thread.
 * sandbox_ensure makes sure the volume and the container exist and run,
 * creating what is missing and starting a stopped container, never
 * recreating one that exists (and never starting one weaker than the
 * settings want). sandbox_exec runs one command in /sandbox, after the
 * checks of sandbox/guard.h: limits updated in place, an older version's
 * container recreated, a weaker one refused, the egress canary, the disk
 * limits.
 */
#ifndef CS_SANDBOX_H
#define CS_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct config;
struct json_object;
struct sandbox;

#define SANDBOX_NAME_MAX	160	/* a container or volume name, with NUL */

/* What an exec_observer's tick answers. */
#define EXEC_TICK_GO_ON		0
#define EXEC_TICK_STOP		1
#define EXEC_TICK_RELEASE	2

/* Called while a command runs; any member may be NULL. */
struct exec_observer {
	/* New output (stream 1 stdout, 2 stderr) as it arrives, raw bytes. */
	void	(*output)(void *arg, int stream, const char *buf, size_t len);
	/*
	 * About once a second while the command runs (more often after
	 * docker_set_tick on the handle's client). EXEC_TICK_STOP stops
	 * reading (the server is stopping): the command goes on in the
	 * container and the result says detached. EXEC_TICK_RELEASE stops
	 * reading only when the supervisor runs the command and keeps its
	 * record (the result says detached and supervised; runs_collect
	 * finishes it later); otherwise reading goes on.
	 */
	int	(*tick)(void *arg);
	void	*arg;
};

struct exec_stream {
	char			*text;	/* valid UTF-8, NUL-terminated; middle cut if too long */
	size_t			 len;
	unsigned long long	 total;	/* bytes the command wrote */
	unsigned long long	 cut;	/* bytes left out of text's middle */
};

struct exec_result {
	struct exec_stream	 out, err;
	int			 exit_code;	/* -1 when unknown */
	bool			 timed_out;	/* killed, and the server's deadline had passed */
	/*
	 * Killed by sandbox_kill (cancelled): never set by sandbox_exec; the
	 * caller decides it from its own record (runs_cancel_requested).
	 */
	bool			 killed;
	bool			 detached;	/* stopped reading; it may still run */
	/*
	 * Ended by SIGKILL (137) while the container's count of processes
	 * killed by its memory limit (SANDBOX_MEMORY) went up: out of memory.
	 */
	bool			 oom_killed;
	/* Stopped because /sandbox or the container's layer passed its limit. */
	bool			 disk_stopped;
	/* A note for the model (recreated container, full disk), or NULL. */
	char			*notice;
	long long		 duration_ms;
	/*
	 * Ran under the supervisor: its record stays in the container, so a
	 * detached run can still be collected (sandbox_collect).
	 */
	bool			 supervised;
	/* Detached because the engine connection broke mid-command. */
	bool			 engine_lost;
	/* Ended because the container stopped or restarted under it. */
	bool			 with_container;
};

/*
 * A client for owner's sandbox (owners.h; NULL: the shared one). In
 * SANDBOX_SCOPE=person each owner has their own container and volume
 * (sandboxes_names); in shared scope every owner gets the shared names.
 */
/* The settings a handle was opened with. */
const struct config *sandbox_config(const struct sandbox *);

int	sandbox_open(const struct config *, const char *owner, struct sandbox **,
	    struct error *);
void	sandbox_close(struct sandbox *);

/*
 * The handle's engine client and the container's name: the one door to the
 * engine for file access (files.h) and /dl, so a request opens one client.
 */
struct docker	*sandbox_docker(struct sandbox *);
const char	*sandbox_container(const struct sandbox *);

/*
 * Which container this is: its Id (64 hex digits) into id and its
 * State.StartedAt as the engine wrote it into started (each
 * SANDBOX_IDENT_MAX bytes). A re-created container has another Id, a
 * restarted one another start time: a run stores both when it starts
 * (runs_start) and is known to have died with its container when they
 * changed. With may_cache, the answer of the last couple of seconds' check
 * (sandbox/guard.c) serves when there is one, so no engine call is made
 * per command. 0, or -1 (err->kind ERR_NOT_FOUND when there is no
 * container).
 */
#define SANDBOX_IDENT_MAX	72
int	sandbox_identity(struct sandbox *, bool may_cache, char *id,
	    char *started, struct error *);

/*
 * When the container last started (unix seconds, the engine's clock; a
 * run that started before it died with the container) and whether it runs
 * now (running may be NULL). 0, or -1 (err->kind ERR_NOT_FOUND when
 * there is no container).
 */
int	sandbox_started_at(struct sandbox *, long long *when, bool *running,
	    struct error *);

/*
 * Volume and container exist and run. 0, or -1 with a message for a
 * person. In person scope only a handle of sandboxes_open (sandboxes.h)
 * may create or start the container: another finds a stopped one refused
 * (ERR_UNAVAILABLE), so no start escapes the cap and the idle stop.
 */
int	sandbox_ensure(struct sandbox *, struct error *);

/*
 * Run `bash -c command` in /sandbox as a fresh process, killing its whole
 * process tree after timeout_s seconds. run_id (letters, digits, '-', '_',
 * at most 64) names the run for sandbox_kill. Output is kept per stream up
 * to the MAX_OUTPUT_BYTES setting (head and tail), so memory stays bounded.
 * Returns 0 with *res filled (a non-zero exit code is still 0), or -1 when
 * the command could not run. Free res with exec_result_free.
 */
int	sandbox_exec(struct sandbox *, const char *command, long timeout_s,
	    const char *run_id, const struct exec_observer *,
	    struct exec_result *res, struct error *);
void	exec_result_free(struct exec_result *);

enum sandbox_collect {
	SANDBOX_RUNNING = 0,	/* its supervisor still runs it */
	SANDBOX_DONE = 1,	/* *res filled from the record */
	SANDBOX_LOST = 2,	/* no record: its supervisor ended without one
				   (killed, the container restarted), or it
				   never ran under a supervisor */
};

/*
 * Collect run_id from the supervisor's record in the container, whichever
 * process started it. On SANDBOX_DONE, *res is as sandbox_exec fills it
 * (timed_out when killed after running timeout_s seconds by the record;
 * killed never set); free it with exec_result_free. -1 when it cannot be
 * known now (engine unreachable, no supervisor in this process).
 */
int	sandbox_collect(struct sandbox *, const char *run_id, long timeout_s,
	    struct exec_result *res, struct error *err);

/*
 * Run `bash -c script code-sandbox args...` in the running container (no
 * wrapper; the container is not started or created) and put its stdout,
 * cut to outsz - 1 bytes, NUL-terminated, in out. cancel (may be NULL) is
 * asked about once a second; true stops reading (the script goes on in the
 * container), as does the deadline, deadline_s seconds after the start
 * (then -1 with err->kind ERR_TIMEOUT: a hostile container is reported, not
 * suffered). Returns 0 with *exit_code set, or -1
 * (err->kind ERR_NOT_FOUND/ERR_CONFLICT when the container is missing or not running).
 */
int	sandbox_script(struct sandbox *, const char *script,
	    const char *const args[], char *out, size_t outsz,
	    bool (*cancel)(void *), void *arg, long deadline_s, int *exit_code,
	    struct error *);

/*
 * Whether a script or helper of this handle passed its deadline (a bash
 * that hangs): later checks through bash on the same handle are skipped
 * rather than suffered again (sandbox/guard.h).
 */
bool	sandbox_script_hung(const struct sandbox *);

/*
 * The same, passing stdout and stderr to cb as they arrive (cb->output:
 * stream 1 or 2) and asking cb->tick about once a second (non-zero stops
 * reading: *stopped is set and the script goes on in the container), so
 * any amount of output passes in constant memory. *exit_code is -1 when
 * stopped.
 */
struct docker_exec_cb;
int	sandbox_script_stream(struct sandbox *, const char *script,
	    const char *const args[], const struct docker_exec_cb *cb,
	    bool *stopped, int *exit_code, struct error *);
/*
 * What the engine says about the sandbox, for operators: a new JSON object
 * { engine: {host, reachable, version, api_version, error?},
 *   image: {name, present, id, created, size},
 *   container: {name, exists, state, running, started_at, oom_killed,
 *     restart_count, memory, nano_cpus, pids_limit, ...},
 *   volume: {name, exists, used_bytes, fs_available_bytes, fs_size_bytes} }
 * An unreachable engine is a result (reachable false), not an error. 0 with
 * *out (the caller puts it), or -1.
 */
int	sandbox_status(struct sandbox *, struct json_object **out,
	    struct error *);

/*
 * Remove the container (not the volume) and make it again from the
 * settings (sandboxctl recreate): files in /sandbox are kept, packages
 * installed in the container's own layer are not. 0 or -1.
 */
int	sandbox_recreate(struct sandbox *, struct error *);

/* Kill the process tree of a running command. 0 (also when it already ended) or -1. */
int	sandbox_kill(struct sandbox *, const char *run_id, struct error *);

#endif
