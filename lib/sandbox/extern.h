/*
 * sandbox/extern.h: what the sandbox files share (sandbox.c, the container's
 * lifecycle; sandbox/run.c, running commands; sandbox/status.c, status for
 * sandboxctl). Not for other modules: they use sandbox.h.
 */
#ifndef CS_SANDBOX_INT_H
#define CS_SANDBOX_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct cspec;
struct docker;
struct json_object;

struct sandbox {
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
};

/* A run id, interpolated into paths in the container: [A-Za-z0-9_-]{1,64}. */
bool		sandbox_valid_run_id(const char *);

/* A new JSON array of the strings of a NULL-terminated vector. */
struct json_object *sandbox_str_array(const char *const *);

/*
 * One engine call, the request/status-check/error epilogue every caller
 * shares: method on the path made from fmt (the names in it are validated
 * URL-safe), with body as JSON when not NULL. ok lists the statuses the
 * caller handles, ended by 0. Returns that status, with *resp (resp may be
 * NULL) a new reference to the JSON body or NULL; the caller puts it.
 * Otherwise -1: no answer (err as docker_request's), or another status,
 * err then "WHAT (METHOD PATH): HTTP n: the engine's message" with
 * err->kind ERR_NOT_FOUND and ERR_CONFLICT (container missing, not running) and ERR_UPSTREAM
 * for the rest. Every call has the engine client's absolute deadline.
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
 * it (EXEC_ENV_NONE). *id is malloc'd. -1 with err->kind ERR_NOT_FOUND/ERR_CONFLICT when
 * the container is missing or does not run.
 */
enum { EXEC_ENV_NONE, EXEC_ENV_RUN, EXEC_ENV_CHANNEL };
int		sandbox_exec_create(struct sandbox *, struct json_object *cmd,
		    int how, char **id, struct error *);

#endif
