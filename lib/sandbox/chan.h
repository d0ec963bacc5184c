/*
 * sandbox/chan.h: the channel to the supervisor, the fast path of running
 * commands (sandbox/exec.c).
 *
 * One attached exec of "supervisor channel" per server process and
 * container, over a hijacked engine connection (docker_exec_attach): no
 * container network is crossed, and it works with a local or a remote
 * engine. Its frames are documented in containers/supervisor/frames.h. All
 * the process's threads share it: a reader thread hands each run's bytes
 * to the thread waiting for that run; writes are serialised. Every wait
 * has a deadline and looks at the stop flag at least once a second.
 *
 * The channel only carries the fast path: each run keeps its record in the
 * container, so when the channel dies (the supervisor killed, the
 * container or the engine restarted) the runs in flight are collected from
 * their records (runs_collect), and the next command opens a new channel.
 * When none can be had the caller runs the command through an engine exec
 * of its own (the one-shot path).
 */
#ifndef CS_SANDBOX_CHAN_H
#define CS_SANDBOX_CHAN_H

#include <stddef.h>

#include "base/error.h"

struct sandbox;

enum chan_end {
	CHAN_NONE = -1,		/* no channel: nothing was sent, fall back */
	CHAN_ENDED = 0,		/* the run's stream ended; *exit_code set */
	/*
	 * The channel died while the run was on it, or the run's live output
	 * has a gap (its caller was busy in tick under a flood): its result is
	 * in its record (sandbox_collect).
	 */
	CHAN_LOST = 1,
	CHAN_STOPPED = 2,	/* tick or the stop flag ended the wait */
};

struct chan_cb {
	/* The run's live stream (frames.h), in pieces, in order. */
	void	(*bytes)(void *arg, const char *buf, size_t len);
	/* About once a second; non-zero stops waiting (CHAN_STOPPED). */
	int	(*tick)(void *arg);
	void	*arg;
};

/*
 * Start run_id (`bash -c command` under the supervisor at sup, with its
 * timeout and output limit) on the channel, opening it if needed, and
 * wait for its stream to end, calling cb on the calling thread. Returns
 * one of enum chan_end.
 */
int	chan_run(struct sandbox *, const char *sup, const char *run_id,
	    long timeout_s, size_t max_output, const char *command,
	    const struct chan_cb *, int *exit_code, struct error *);

/*
 * A terminal request (frames.h 'p'): args, len bytes, is the NUL-ended
 * arguments of "supervisor term-*"; its stdout comes to cb->bytes as a
 * run's stream does, and the wait ends as chan_run's (req_id: a fresh id
 * of run id syntax, for this request alone).
 */
int	chan_term(struct sandbox *, const char *sup, const char *req_id,
	    const void *args, size_t len, const struct chan_cb *,
	    int *exit_code, struct error *);

/*
 * Ask the supervisor over the channel: type 'k' (kill run_id's group) or
 * 'q' (how it stands). The answer code (frames.h: 'K', 'Q'), or -1 when
 * there is no channel or it did not answer within a few seconds.
 */
int	chan_ask(struct sandbox *, const char *sup, int type,
	    const char *run_id);

/*
 * At exit, after the workers: end every channel and join its reader, so
 * no reader outlives the process's clean-up (the TLS library's per-thread
 * state of a reader still running at exit would be lost, and reported as a
 * leak).
 */
void	chan_shutdown(void);

#endif
