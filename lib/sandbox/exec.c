/*
 * sandbox/exec.c: running a command in the sandbox (sandbox_exec); see
 * sandbox.h. The one-shot engine execs it is made of are sandbox.c's; a
 * run's record is read by sandbox/collect.c, a run killed by
 * sandbox/kill.c.
 *
 * How a command runs, fastest first (one function per path below, then
 * one verdict on how it ended):
 *   1. Over the supervisor's channel (sandbox/chan.h): one attached exec
 *      per process carries the start, the live output and the end of every
 *      command; no engine call per command.
 *   2. When no channel can be had: the same supervisor (sandbox/sup.h) in
 *      one engine exec per command ("supervisor run"). Both keep the run's
 *      record in the container, so a result outlives the server process
 *      and the channel (sandbox_collect).
 *   3. When the supervisor cannot run there (another architecture, its
 *      upload refused): the bash wrapper.
 *
 * The wrapper. Docker has no API to kill an exec and aborting the HTTP
 * stream leaves the process running, so the deadline is enforced inside
 * the container by a small bash wrapper (SCRIPT_WRAPPER, sandbox/scripts.c),
 * which works the same with a remote engine:
 *
 *   exec Cmd: bash -c SCRIPT_WRAPPER code-sandbox TIMEOUT RUN_ID COMMAND...
 *
 *   1. The wrapper turns on job control (set -m) so the command, run as
 *      `bash -c COMMAND` in the background with stdin from /dev/null, leads
 *      its own process group P. Everything the command starts stays in P
 *      unless it calls setsid (the documented way to detach a service).
 *   2. It writes P to /run/code-sandbox/RUN_ID: sandbox_kill reads it there.
 *   3. A watchdog (its own group W) sleeps TIMEOUT seconds, creates
 *      RUN_ID.timeout, then kills group P with SIGKILL: children and
 *      grandchildren included.
 *   4. The wrapper waits for the command, kills W, removes the pid file and
 *      exits with the command's status. If members of P are still alive
 *      (`cmd &` left behind) a small reaper kills P at the original
 *      deadline, so "everything it started is killed at the timeout" holds
 *      without making the call wait for them.
 *
 * A command killed by the watchdog or by sandbox_kill always ends with
 * status 137 (SIGKILL). What that means is the server's to say, from its
 * own record: a timeout when its own clock shows the deadline passed, a
 * cancellation when the run table holds one (the caller checks), never
 * from a file the container could write. A small helper exec then removes
 * the run's files and reports the memory-limit kill count (the message's
 * wording only). Every helper exec has a deadline of SANDBOX_HELPER_MS: a
 * hostile container (say, a /bin/bash that hangs) is reported, not
 * suffered. As a
 * backstop for a watchdog that could not run (say the pids limit was hit),
 * the C side kills the group itself a few seconds after the deadline and
 * stops reading a little later: no call waits past the deadline plus
 * BACKSTOP_STOP_MS.
 *
 * Docker closes an exec's stream at most about 2 s after its process exits
 * even when a detached process still holds the pipe, so a call never waits
 * for a daemon it started.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/output.h"
#include "engine/docker.h"
#include "sandbox/chan.h"
#include "sandbox/extern.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"
#include "sandbox/scripts.h"
#include "sandbox/sup.h"
#include "supervisor/frames.h"

#define ARG_CHUNK	(96 * 1024)	/* < MAX_ARG_STRLEN (128 KiB) */
#define BACKSTOP_KILL_MS 5000		/* after the deadline: kill from C */
#define BACKSTOP_STOP_MS 15000		/* after the deadline: stop reading */

/* State of one sandbox_exec while its stream is read. */
struct run {
	struct sandbox			*sb;
	const struct exec_observer	*obs;
	const char			*run_id;
	struct capture			*out, *err;
	long long			 start_ms;
	long long			 deadline_ms;	/* start + timeout */
	bool				 backstop_killed;
	bool				 backstop_stopped;
	bool				 detached;
	/* Under the supervisor: its frames on stdout (frames.h). */
	bool				 sup;
	struct supf			 frames;
	bool				 started;	/* 'S' seen */
	bool				 have_result;	/* 'R' seen */
	bool				 bad_frames;
	struct supf_result		 result;
	char				 sup_error[256]; /* 'X', or its stderr */
	long long			 start_wall;	/* unix seconds */
	char				 cid[SANDBOX_IDENT_MAX];
	char				 cstarted[SANDBOX_IDENT_MAX];
	bool				 disk_stopped;	/* by the disk watchdog */
	char				 disk_why[300];
	/* How the paths went (exec_paths), for the verdict. */
	const char			*command;
	long				 timeout_s;
	char				*id;		/* a one-shot path's exec */
	bool				 stopped;	/* the tick ended the read */
	bool				 ensured;	/* sandbox_ensure was tried */
	bool				 reinstalled;	/* supervisor uploaded anew */
	bool				 no_chan;	/* no channel for this run */
	bool				 via_chan;	/* it ran over the channel */
	bool				 chan_lost;	/* which died under it */
	bool				 engine_lost;	/* the engine went, mid-run */
	int				 chan_code;	/* exit code by the channel */
	long long			 oom0;		/* host's OOM count; -1 */
};

static void
run_output(void *arg, int stream, const char *buf, size_t len)
{
	struct run *r = arg;

	capture_add(stream == 2 ? r->err : r->out, buf, len);
	if (r->obs != NULL && r->obs->output != NULL)
		r->obs->output(r->obs->arg, stream, buf, len);
}

/* One frame from the supervisor: hostile input, checked by supf_feed. */
static int
run_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	struct run *r = arg;

	switch (type) {
	case 'S':
		if (r->started)
			return -1;
		r->started = true;
		return 0;
	case 'o':
	case 'e':
		if (!r->started || r->have_result)
			return -1;
		run_output(r, type == 'o' ? 1 : 2, (const char *)p, len);
		return 0;
	case 'R':
		if (!r->started || r->have_result ||
		    supf_result_decode(p, len, &r->result) == -1)
			return -1;
		r->have_result = true;
		return 0;
	case 'X':
		snprintf(r->sup_error, sizeof(r->sup_error), "%.*s",
		    (int)(len > 200 ? 200 : len), (const char *)p);
		return 0;
	default:
		return -1;	/* record frames have no place in a live stream */
	}
}

static void
sup_output(void *arg, int stream, const char *buf, size_t len)
{
	struct run	*r = arg;
	size_t		 n;

	if (stream == 2) {
		/* The supervisor's own complaints, for the error message. */
		if (r->sup_error[0] == '\0') {
			n = len < sizeof(r->sup_error) - 1 ? len :
			    sizeof(r->sup_error) - 1;
			memcpy(r->sup_error, buf, n);
			r->sup_error[n] = '\0';
		}
		return;
	}
	if (!r->bad_frames && supf_feed(&r->frames, buf, len, run_frame,
	    r) == -1) {
		r->bad_frames = true;
		log_warn("run %s: malformed frames from the supervisor",
		    r->run_id);
	}
}

static int
run_tick(void *arg)
{
	struct run	*r = arg;
	struct error	 e;
	long long	 late = clock_ms() - r->deadline_ms;
	int		 t;

	t = r->obs != NULL && r->obs->tick != NULL ?
	    r->obs->tick(r->obs->arg) : EXEC_TICK_GO_ON;
	/* Released: the supervisor's record keeps the result, if there is one. */
	if (t == EXEC_TICK_RELEASE && !(r->sup && r->started))
		t = EXEC_TICK_GO_ON;
	if (t != EXEC_TICK_GO_ON) {
		r->detached = true;
		return 1;
	}
	if (!r->disk_stopped && guard_during_exec(r->sb, r->sb->docker,
	    r->sb->spec, r->disk_why, sizeof(r->disk_why)) == GUARD_STOP) {
		r->disk_stopped = true;
		log_warn("run %s: stopping it: %s", r->run_id, r->disk_why);
		if (sandbox_kill_run(r->sb, r->run_id, "disk", &e) == -1)
			log_warn("run %s: %s", r->run_id, e.msg);
	}
	/* Backstop only: the supervisor or watchdog ends the command. */
	if (late >= BACKSTOP_KILL_MS && !r->backstop_killed) {
		r->backstop_killed = true;
		log_warn("run %s still running %lld ms after its deadline; "
		    "killing it from outside", r->run_id, late);
		if (sandbox_kill_run(r->sb, r->run_id, "timeout", &e) == -1)
			log_warn("run %s: %s", r->run_id, e.msg);
	}
	if (late >= BACKSTOP_STOP_MS) {
		log_warn("run %s: output stream still open %lld ms after the "
		    "deadline; no longer reading it", r->run_id, late);
		r->backstop_stopped = true;
		return 1;
	}
	return 0;
}

/*
 * Cmd for a run: the supervisor's "run" (sup not NULL) or the wrapper,
 * then the command split in chunks on character boundaries.
 */
static struct json_object *
run_cmd_new(const char *sup, const char *command, long timeout_s,
    const char *run_id, size_t max_output)
{
	struct json_object	*cmd;
	char			 t[32], m[32];
	size_t			 len = strlen(command), n;

	snprintf(t, sizeof(t), "%ld", timeout_s);
	snprintf(m, sizeof(m), "%zu", max_output);
	if ((cmd = json_object_new_array()) == NULL)
		return NULL;
	if (sup != NULL) {
		json_object_array_add(cmd, json_object_new_string(sup));
		json_object_array_add(cmd, json_object_new_string("run"));
		json_object_array_add(cmd, json_object_new_string(run_id));
		json_object_array_add(cmd, json_object_new_string(t));
		json_object_array_add(cmd, json_object_new_string(m));
	} else {
		json_object_array_add(cmd, json_object_new_string("bash"));
		json_object_array_add(cmd, json_object_new_string("-c"));
		json_object_array_add(cmd, json_object_new_string(SCRIPT_WRAPPER));
		json_object_array_add(cmd, json_object_new_string("code-sandbox"));
		json_object_array_add(cmd, json_object_new_string(t));
		json_object_array_add(cmd, json_object_new_string(run_id));
	}
	do {
		n = len;
		if (n > ARG_CHUNK) {
			n = ARG_CHUNK;
			/* Never split a UTF-8 character: JSON needs whole ones. */
			while (n > 0 && ((unsigned char)command[n] & 0xc0) == 0x80)
				n--;
			if (n == 0)
				n = ARG_CHUNK;
		}
		json_object_array_add(cmd, json_object_new_string_len(command,
		    (int)n));
		command += n;
		len -= n;
	} while (len > 0);
	return cmd;
}

/* Start the run's exec and read its stream to the end. */
static int
run_once(struct run *r, const char *sup, const char *command, long timeout_s,
    char **id, bool *stopped, struct error *err)
{
	struct docker_exec_cb	 cb = { NULL, run_tick, NULL };
	struct json_object	*cmd;
	int			 rc = -1;

	cb.output = sup != NULL ? sup_output : run_output;
	cb.arg = r;
	r->sup = sup != NULL;
	r->started = r->have_result = r->bad_frames = false;
	r->sup_error[0] = '\0';
	supf_free(&r->frames);
	supf_init(&r->frames, SUPF_LIVE_MAX);
	free(*id);
	*id = NULL;
	if ((cmd = run_cmd_new(sup, command, timeout_s, r->run_id,
	    r->sb->max_output)) == NULL)
		return error_set(err, "out of memory");
	if (sandbox_exec_create(r->sb, cmd, EXEC_ENV_RUN, id, err) == -1)
		goto out;
	r->start_ms = clock_ms();
	r->start_wall = (long long)time(NULL);
	r->deadline_ms = r->start_ms + timeout_s * 1000;
	if (docker_exec_start(r->sb->docker, *id, &cb, stopped, err) == -1)
		goto out;
	rc = 0;
out:
	json_object_put(cmd);
	return rc;
}

/*
 * Did the run's container go away under it (re-created or restarted)? By
 * its identity when it was known at the start, else by its start time.
 */
static bool
container_changed(struct run *r)
{
	char		cid[SANDBOX_IDENT_MAX], cstarted[SANDBOX_IDENT_MAX];
	long long	restarted;
	struct error	e;

	if (r->cid[0] != '\0')
		return sandbox_identity(r->sb, false, cid, cstarted, &e) == 0 &&
		    (strcmp(cid, r->cid) != 0 ||
		    strcmp(cstarted, r->cstarted) != 0);
	return sandbox_started_at(r->sb, &restarted, NULL, &e) == 0 &&
	    restarted >= r->start_wall;
}

static void
chan_bytes(void *arg, const char *buf, size_t len)
{
	sup_output(arg, 1, buf, len);
}

/* Start the run on the supervisor's channel and wait for its end. */
static int
run_chan(struct run *r, const char *sup, const char *command, long timeout_s,
    int *code, struct error *err)
{
	struct chan_cb cb = { chan_bytes, run_tick, r };

	r->sup = true;
	r->started = r->have_result = r->bad_frames = false;
	r->sup_error[0] = '\0';
	supf_free(&r->frames);
	supf_init(&r->frames, SUPF_LIVE_MAX);
	r->start_ms = clock_ms();
	r->start_wall = (long long)time(NULL);
	r->deadline_ms = r->start_ms + timeout_s * 1000;
	return chan_run(r->sb, sup, r->run_id, timeout_s, r->sb->max_output,
	    command, &cb, code, err);
}

/* The run's folder exists in the container (so the command may have run). */
static bool
run_known(struct sandbox *sb, const char *sup, const char *run_id)
{
	const char *const	 argv[] = { sup, "collect", run_id, NULL };
	struct json_object	*cmd;
	struct small_out	 o;
	struct docker_exec_cb	 cb = { NULL, sandbox_small_tick, &o };
	struct error		 e;
	bool			 stopped;
	int			 code = -1;

	o.deadline_ms = clock_ms() + SANDBOX_HELPER_MS;
	if ((cmd = sandbox_str_array(argv)) == NULL)
		return true;
	if (sandbox_run_cmd(sb, cmd, &cb, &stopped, &code, &e) == -1 ||
	    stopped)
		code = -1;
	json_object_put(cmd);
	return code != 5;	/* 5: no such run; in doubt, it ran */
}

/*
 * The channel died under a started run (its supervisor killed, say): the
 * run goes on, or ended, under its own process, which keeps its record.
 * Wait for that record as the channel would have, then take the result
 * from it. 0 with *res filled (or res->detached when the wait was cut
 * short or the engine went away), -1 on failure.
 */
static int
await_record(struct run *r, long timeout_s, struct exec_result *res,
    struct error *err)
{
	struct timespec		 pause = { 0, 500 * 1000000 };
	struct exec_result	 got;
	struct error		 e;
	int			 rc, failures = 0;

	for (;;) {
		rc = sandbox_collect(r->sb, r->run_id, timeout_s, &got, &e);
		if (rc == SANDBOX_DONE) {
			capture_free(r->out);
			capture_free(r->err);
			r->out = r->err = NULL;
			res->out = got.out;
			res->err = got.err;
			res->exit_code = got.exit_code;
			res->timed_out = got.timed_out;
			res->oom_killed = got.oom_killed;
			res->duration_ms = got.duration_ms;
			free(got.notice);
			return 0;
		}
		if (rc == SANDBOX_LOST) {
			/* Its process died with no record: killed with it? */
			res->with_container = container_changed(r);
			res->exit_code = -1;
			return 0;
		}
		if (rc != SANDBOX_RUNNING && ++failures < 2)
			continue;	/* once more, with a fresh copy if need be */
		if (rc != SANDBOX_RUNNING) {
			log_warn("run %s: %s; its result will be collected "
			    "from its record", r->run_id, e.msg);
			res->engine_lost = res->detached = true;
			return 0;
		}
		if (run_tick(r) != 0) {
			res->detached = !r->backstop_stopped;
			res->timed_out = r->backstop_stopped;
			return 0;
		}
		nanosleep(&pause, NULL);
	}
	(void)err;
}

/* What one try of a path came to (exec_paths). */
enum try {
	TRY_DONE,	/* it ran, or runs on detached: to the verdict */
	TRY_AGAIN,	/* nothing of it ran: the loop tries again */
	TRY_FAIL,	/* it could not run; err says why */
};

/*
 * A one-shot exec failed to be created or started. A missing or stopped
 * container shows as 404 or 409 before anything of the command ran: repair
 * it, once, and try again; anything else is final.
 */
static enum try
exec_repair(struct run *r, struct error *err)
{
	if (r->ensured || (err->kind != ERR_NOT_FOUND &&
	    err->kind != ERR_CONFLICT) ||
	    capture_total(r->out) + capture_total(r->err) > 0)
		return TRY_FAIL;
	r->ensured = true;
	guard_stale(r->sb->container);
	log_info("container %s not running (%s); ensuring it",
	    r->sb->container, err->msg);
	return sandbox_ensure(r->sb, err) == -1 ? TRY_FAIL : TRY_AGAIN;
}

/*
 * Path 1, over the supervisor's channel: no exec of its own. No channel,
 * or one that died before anything of the run ran, sends the run down the
 * one-shot paths (no_chan); one that died under a started run leaves its
 * result to its record (chan_lost).
 */
static enum try
exec_chan(struct run *r, const char *sup, struct error *err)
{
	int crc;

	crc = run_chan(r, sup, r->command, r->timeout_s, &r->chan_code, err);
	if (crc == CHAN_NONE) {
		r->no_chan = true;
		return TRY_AGAIN;
	}
	r->via_chan = true;
	if (crc == CHAN_STOPPED) {
		r->stopped = true;
		return TRY_DONE;
	}
	if (crc == CHAN_LOST) {
		if (!r->started && !run_known(r->sb, sup, r->run_id) &&
		    capture_total(r->out) + capture_total(r->err) == 0) {
			/* Nothing of it ran: the one-shot path. */
			r->no_chan = true;
			r->via_chan = false;
			return TRY_AGAIN;
		}
		log_warn("run %s: %s; waiting for its record", r->run_id,
		    err->msg);
		r->chan_lost = true;
		return TRY_DONE;
	}
	if (!r->started) {
		error_set(err, "the supervisor could not start the command: %s",
		    r->sup_error[0] ? r->sup_error : "no answer");
		return TRY_FAIL;
	}
	return TRY_DONE;
}

/*
 * Path 2, the supervisor in one engine exec of its own ("supervisor run").
 * One that did not start the command (no 'S' frame: its copy is gone with
 * a recreated container, or was tampered with) is uploaded anew, once;
 * nothing of the command ran yet.
 */
static enum try
exec_sup(struct run *r, const char *sup, struct error *err)
{
	char esc[256];

	if (run_once(r, sup, r->command, r->timeout_s, &r->id, &r->stopped,
	    err) == -1) {
		if (r->started) {
			/*
			 * The engine connection broke while the supervisor
			 * ran the command: its record will say how it ended
			 * (or that it died with the container); collect it
			 * later.
			 */
			log_warn("run %s: %s; its result will be collected "
			    "from its record", r->run_id, err->msg);
			r->engine_lost = true;
			r->detached = true;
			return TRY_DONE;
		}
		return exec_repair(r, err);
	}
	if (r->started || r->detached || r->stopped)
		return TRY_DONE;
	sup_forget(sup);
	if (r->reinstalled) {
		error_set(err, "the supervisor could not start the command: %s",
		    r->sup_error[0] ? r->sup_error : "no answer");
		return TRY_FAIL;
	}
	r->reinstalled = true;
	log_warn("run %s: the supervisor did not start (%s); uploading it "
	    "again", r->run_id, log_escape(esc, sizeof(esc), r->sup_error,
	    strlen(r->sup_error)));
	return TRY_AGAIN;
}

/* Path 3, the bash wrapper, where the supervisor cannot be had. */
static enum try
exec_wrapper(struct run *r, struct error *err)
{
	if (run_once(r, NULL, r->command, r->timeout_s, &r->id, &r->stopped,
	    err) == -1)
		return exec_repair(r, err);
	return TRY_DONE;
}

/*
 * The command down the fastest path that can be had now, trying again
 * while nothing of it ran (a container to repair, a channel or supervisor
 * that cannot be had, a supervisor to upload anew). 0 when it ran or runs
 * on detached, -1 when it could not run.
 */
static int
exec_paths(struct run *r, struct error *err)
{
	struct error	 serr;
	char		 sup[SUP_PATH_MAX];
	const char	*use;
	enum try	 t;

	for (;;) {
		use = sup_ensure(r->sb, sup, &serr) == 0 ? sup : NULL;
		r->oom0 = use != NULL ? sup_host_oom_count(r->sb) : -1;
		if (use == NULL && (serr.kind == ERR_NOT_FOUND ||
		    serr.kind == ERR_CONFLICT) && !r->ensured) {
			r->ensured = true;
			guard_stale(r->sb->container);
			if (sandbox_ensure(r->sb, err) == -1)
				return -1;
			continue;
		}
		if (use != NULL && !r->no_chan && r->sb->channel)
			t = exec_chan(r, use, err);
		else if (use != NULL)
			t = exec_sup(r, use, err);
		else
			t = exec_wrapper(r, err);
		if (t != TRY_AGAIN)
			return t == TRY_DONE ? 0 : -1;
	}
}

/* Where a result's streams come from (exec_verdict). */
enum fill {
	FILL_CAPTURED,	/* the live output captured while it ran */
	FILL_RECORD,	/* already in *res, from the run's record */
};

/*
 * How the run ended, decided by the server: a timeout by its own clock (the
 * deadline had passed when it was killed), out of memory by the host's
 * count (else the supervisor's, which only words the message), ended with
 * the container when that changed under it; a cancellation is the caller's
 * verdict, from its run table. Nothing the container writes decides
 * either. Returns an enum fill, or -1.
 */
static int
exec_verdict(struct run *r, struct exec_result *res, struct error *err)
{
	const char *const	 margs[] = { r->run_id, NULL };
	struct small_out	 marks;
	struct error		 local;
	long long		 oom1;
	int			 code;

	res->engine_lost = r->engine_lost;
	res->duration_ms = clock_ms() - r->start_ms;
	if (r->stopped && !r->backstop_stopped)
		r->detached = true;	/* the stop flag, seen by the client */
	res->supervised = r->sup && (r->started || r->chan_lost);
	if (r->chan_lost) {
		if (await_record(r, r->timeout_s, res, err) == -1)
			return -1;
		if (res->out.text == NULL)
			res->duration_ms = clock_ms() - r->start_ms;
		if (res->exit_code == 137 &&
		    res->duration_ms >= r->timeout_s * 1000)
			res->timed_out = true;
		return res->out.text != NULL ? FILL_RECORD : FILL_CAPTURED;
	}
	if (r->detached) {
		/* Still running in the container; its end is not ours to see. */
		res->detached = true;
		return FILL_CAPTURED;
	}
	if (r->backstop_killed || r->backstop_stopped)
		res->timed_out = true;

	if (r->sup) {
		/* The supervisor's result frame, else the exec's exit code. */
		if (r->have_result)
			res->exit_code = r->result.how == SUPF_EXITED ?
			    r->result.code : 128 + r->result.code;
		else if (r->via_chan)
			res->exit_code = r->chan_code;
		else if (sandbox_exec_wait(r->sb, r->id, &res->exit_code,
		    &local) == -1) {
			/*
			 * The stream ended without a result and the engine
			 * does not answer: it went away under the command.
			 * The record (or its absence) will tell.
			 */
			log_warn("run %s: the engine went away: %s", r->run_id,
			    local.msg);
			res->engine_lost = res->detached = true;
			return FILL_CAPTURED;
		} else if (container_changed(r))
			/* No result: the supervisor died. With the container? */
			res->with_container = true;
		if (!r->have_result && r->via_chan && container_changed(r))
			res->with_container = true;
		if (res->exit_code == 137 &&
		    res->duration_ms >= r->timeout_s * 1000)
			res->timed_out = true;
		oom1 = r->oom0 >= 0 ? sup_host_oom_count(r->sb) : -1;
		if (res->exit_code == 137 && (oom1 >= 0 ? oom1 > r->oom0 :
		    r->have_result && r->result.oom_after >
		    r->result.oom_before))
			res->oom_killed = true;
		return FILL_CAPTURED;
	}

	/* The command ran: an engine hiccup now only loses the exit code. */
	if (sandbox_exec_wait(r->sb, r->id, &res->exit_code, &local) == -1)
		log_warn("run %s: exit code unknown: %s", r->run_id, local.msg);
	if (res->exit_code == 137) {
		/*
		 * Killed. The helper only cleans up and reports the
		 * memory-limit count, which only words the message.
		 */
		if (res->duration_ms >= r->timeout_s * 1000)
			res->timed_out = true;
		if (sandbox_helper(r->sb, SCRIPT_MARKERS, margs, &marks, &code,
		    &local) == 0) {
			if (strstr(marks.buf, "oom\n") != NULL)
				res->oom_killed = true;
		} else
			log_warn("run %s: %s", r->run_id, local.msg);
	}
	return FILL_CAPTURED;
}

int
sandbox_exec(struct sandbox *sb, const char *command, long timeout_s,
    const char *run_id, const struct exec_observer *obs,
    struct exec_result *res, struct error *err)
{
	struct run	 r;
	struct error	 local;
	int		 fill, rc = -1;

	if (err == NULL)
		err = &local;
	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	memset(&r, 0, sizeof(r));
	supf_init(&r.frames, SUPF_LIVE_MAX);
	if (command == NULL || strlen(command) > 1024 * 1024)
		return error_set(err, "command missing or longer than 1 MiB");
	if (run_id == NULL || !sandbox_valid_run_id(run_id))
		return error_set(err, "invalid run id");
	if (timeout_s < 1 || timeout_s > SANDBOX_TIMEOUT_MAX)
		return error_set(err, "timeout must be 1 to %ld seconds",
		    SANDBOX_TIMEOUT_MAX);
	r.sb = sb;
	r.obs = obs;
	r.run_id = run_id;
	r.command = command;
	r.timeout_s = timeout_s;
	r.chan_code = -1;
	r.oom0 = -1;
	if (guard_before_exec(sb, sb->docker, sb->spec, &res->notice,
	    err) == -1)
		goto out;
	/* Which container it runs in: from that check, no engine call. */
	if (sandbox_identity(sb, true, r.cid, r.cstarted, &local) == -1)
		r.cid[0] = r.cstarted[0] = '\0';
	if ((r.out = capture_new(sb->max_output)) == NULL ||
	    (r.err = capture_new(sb->max_output)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	if (exec_paths(&r, err) == -1 ||
	    (fill = exec_verdict(&r, res, err)) == -1)
		goto out;
	if (fill == FILL_CAPTURED &&
	    (sandbox_stream_fill(&res->out, r.out) == -1 ||
	    sandbox_stream_fill(&res->err, r.err) == -1)) {
		error_set(err, "out of memory");
		exec_result_free(res);
		res->exit_code = -1;
		goto out;
	}
	if (r.disk_stopped) {
		res->disk_stopped = true;
		free(res->notice);
		if (asprintf(&res->notice, "Stopped: %s.", r.disk_why) == -1)
			res->notice = NULL;
	} else if (res->notice == NULL)
		res->notice = guard_after_exec(sb->spec, res->out.text,
		    res->err.text);
	rc = 0;
out:
	supf_free(&r.frames);
	capture_free(r.out);
	capture_free(r.err);
	free(r.id);
	return rc;
}
