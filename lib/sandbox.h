/*
 * sandbox.h: the one long-lived sandbox container.
 *
 * A struct sandbox is a Docker engine client (docker.c) plus the settings
 * that name the image, container and volume; use one per thread.
 * sandbox_ensure makes sure the volume and the container exist and run,
 * creating what is missing and starting a stopped container, never
 * recreating one that exists. sandbox_exec runs one command in /sandbox.
 */
#ifndef CS_SANDBOX_H
#define CS_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

struct config;
struct sandbox;

/* Called while a command runs; any member may be NULL. */
struct exec_observer {
	/* New output (stream 1 stdout, 2 stderr) as it arrives, raw bytes. */
	void	(*output)(void *arg, int stream, const char *buf, size_t len);
	/*
	 * About once a second while the command runs. Non-zero stops reading
	 * (the server is stopping): the command goes on in the container and
	 * the result says detached.
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
	bool			 timed_out;	/* killed at the deadline */
	bool			 killed;	/* killed by sandbox_kill (cancelled) */
	bool			 detached;	/* stopped reading; it may still run */
	long long		 duration_ms;
};

int	sandbox_open(const struct config *, struct sandbox **, struct error *);
void	sandbox_close(struct sandbox *);

/* Volume and container exist and run. 0, or -1 with a message for a person. */
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

/* Kill the process tree of a running command. 0 (also when it already ended) or -1. */
int	sandbox_kill(struct sandbox *, const char *run_id, struct error *);

#endif
