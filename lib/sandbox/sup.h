/*
 * sandbox/sup.h: the supervisor (containers/supervisor) in the sandbox
 * container: its bytes, compiled in (the Makefile builds them from the
 * static program), and putting it in place.
 *
 * Each server process uploads its own copy once per container, through the
 * Engine API archive PUT, to a fresh random path under /run/code-sandbox; a
 * copy already in the container is never trusted (its root may have
 * replaced it). Before the first upload the engine's /version says whether the
 * binary can run there (Linux on this build's architecture); when it
 * cannot, or the upload fails, the caller falls back to running commands
 * without it (sandbox/exec.c), and the process asks again a minute later.
 */
#ifndef CS_SANDBOX_SUP_H
#define CS_SANDBOX_SUP_H

#include <stddef.h>

#include "base/error.h"

struct sandbox;

extern const unsigned char	sup_binary[];
extern const size_t		sup_binary_len;

#define SUP_PATH_MAX	96

/*
 * The supervisor's path in the container into path (SUP_PATH_MAX bytes),
 * uploading it first if this process has not. 0 when it is there, -1 when
 * it cannot be had now (err says why; the caller falls back).
 */
int	sup_ensure(struct sandbox *, char *path, struct error *);

/*
 * The count of processes the container's memory limit killed, read from
 * the host's cgroup files (v2 memory.events, v1 memory.oom_control, for
 * the cgroupfs and systemd drivers) of the container the supervisor was
 * installed in; -1 when the engine is not local or the files are not
 * readable. Never from a file inside the container.
 */
long long	sup_host_oom_count(struct sandbox *);

/* The copy at path did not run (the container was recreated?): upload anew next time. */
void	sup_forget(const char *path);

#endif
