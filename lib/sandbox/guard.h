/*
 * sandbox/guard.h: checks around each command that the sandbox is what the
 * settings say: its configuration (sandbox/cspec.h), its egress policy
 * (netpolicy.h: the canary), and its disk use.
 *
 * Disk. /sandbox is bounded by SANDBOX_DISK_LIMIT in one of two modes,
 * found from the file system the container sees at /sandbox:
 *   filesystem  it is no bigger than the limit (a fixed-size image made by
 *               containers/sandbox-disk.sh on a loop device): the kernel
 *               answers ENOSPC when it is full, nothing to watch;
 *   watchdog    anything bigger (a plain volume on the host's disk): its
 *               size is sampled (du) at most every few seconds while a
 *               command runs and every 30 s otherwise, more sparingly when
 *               sampling is slow; past the limit the running command is
 *               stopped and new ones are refused, saying why.
 * The mode and size are measured on the host (statfs and a walk of the
 * volume's Mountpoint, disk_usage.h) when the engine is local and the
 * Mountpoint readable; otherwise by df and du in the container, whose
 * answer never switches an established watchdog off, and whose failures,
 * 3 in a row, count as over the limit.
 * The container's own writable layer (SizeRw: packages, files outside
 * /sandbox) is watched the same way against SANDBOX_LAYER_LIMIT.
 * Samples and canary results are shared by the threads of a process and
 * kept per container (by name, then by Id and start time): one person's
 * samples never stand for another's, and a new or restarted container is
 * checked afresh.
 */
#ifndef CS_SANDBOX_GUARD_H
#define CS_SANDBOX_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct sandbox;
struct docker;
struct cspec;
struct json_object;
struct exec_result;

/*
 * Before a command: the container exists and runs (sandbox_ensure), its
 * limits match (updated in place), an older version's container is
 * recreated on the same volume (*notice then says so: malloc'd, the caller
 * frees; NULL otherwise), the policy's canary passed (at most once a
 * minute), and the disk is under its limits. Returns 0, or -1 with err
 * saying why the command is refused and what the operator can do.
 */
int	guard_before_exec(struct sandbox *, struct docker *,
	    const struct cspec *, char **notice, struct error *);

/* What the check while a command runs decided. */
enum guard_verdict {
	GUARD_GO_ON = 0,
	GUARD_STOP = 1,		/* a watched size passed its limit */
};

/*
 * While a command runs (called about once a second): GUARD_STOP when it
 * must be stopped because a watched size passed its limit (why says which),
 * else GUARD_GO_ON.
 */
enum guard_verdict guard_during_exec(struct sandbox *, struct docker *,
	    const struct cspec *, char *why, size_t n);

/*
 * After a command: a note for its result when /sandbox's file system is
 * full (ENOSPC in the output) in filesystem mode; malloc'd or NULL.
 */
char	*guard_after_exec(const struct cspec *, const char *out,
	    const char *err);

/*
 * Remove the container (not its volume) and make it again from the
 * settings: sandboxctl recreate. 0 or -1.
 */
int	guard_recreate(struct sandbox *, struct docker *,
	    const struct cspec *, struct error *);

/*
 * Add to a status object (sandbox_status): "egress" {policy, network,
 * bridge, gateway, allow, ipv6, canary {ok, detail}, rules {present,
 * detail}}, "disk" {mode, sandbox {used_bytes, limit_bytes,
 * fs_size_bytes, measured, error}, layer {used_bytes, limit_bytes}} and
 * "spec" {version, wanted_version, verdict, differences}. Measures afresh.
 */
void	guard_status(struct sandbox *, struct docker *, const struct cspec *,
	    struct json_object *st);

/*
 * The container may have changed (recreated, stopped): the next
 * guard_before_exec of that container asks the engine again instead of trusting the verdict
 * it reached in the last couple of seconds.
 */
void	guard_stale(const char *container);

/*
 * A serving program (app_main_net) refreshes the verdicts beside its
 * requests from now on: a verdict still trusted but past half its bound is
 * refreshed by a thread of its own while the request goes on with it.
 * Other programs (sandboxctl, plain CGI) refresh within the request.
 */
void	guard_beside(void);

/*
 * The process stops: no more refreshes beside the requests start, and the
 * running ones (their engine calls end when the process stops) are waited
 * for.
 */
void	guard_shutdown(void);

/*
 * The Id and StartedAt (72 bytes each) of container as the check of the
 * last couple of seconds found it. 0, or -1 when there is none that fresh.
 */
int	guard_identity(const char *container, char *id, char *started);

/*
 * The sandbox network's gateway as the last canary of this process found
 * it (where the egress proxy listens), into gw (16 bytes): 0, or -1 when
 * no canary has found one yet.
 */
int	guard_gateway(char gw[16]);

#endif
