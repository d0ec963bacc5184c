/*
 * sandbox/exec.c: running commands in the sandbox; see sandbox.h.
 *
 * How a command runs (sandbox_exec), fastest first:
 *   1. Over the supervisor's channel (sandbox/chan.h): one attached exec
 *      per process carries the start, the live output and the end of every
 *      command; no engine call per command.
 *   2. When no channel can be had: the same supervisor (sandbox/sup.h) in
 *      one engine exec per command ("supervisor run"). Both keep the run's
 *      record in the container, so a result outlives the server process
 *      and the channel (sandbox_collect).
 *   3. When the supervisor cannot run there (another architecture, its
 *      upload refused): the bash wrapper below.
 *
 * The wrapper. Docker has no API to kill an exec and aborting the HTTP
 * stream leaves the process running, so the deadline is enforced inside
 * the container by a small bash wrapper (SCRIPT_WRAPPER below), which works the
 * same with a remote engine:
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
 * wording only). Every helper exec has a deadline of HELPER_MS: a hostile
 * container (say, a /bin/bash that hangs) is reported, not suffered. As a
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
#include <unistd.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/js.h"
#include "base/log.h"
#include "base/output.h"
#include "engine/docker.h"
#include "sandbox/chan.h"
#include "sandbox/extern.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"
#include "sandbox/sup.h"
#include "sandbox/scripts.h"
#include "supervisor/frames.h"

#define TIMEOUT_MAX	(30L * 86400)
#define ARG_CHUNK	(96 * 1024)	/* < MAX_ARG_STRLEN (128 KiB) */
#define BACKSTOP_KILL_MS 5000		/* after the deadline: kill from C */
#define BACKSTOP_STOP_MS 15000		/* after the deadline: stop reading */
#define SMALL_OUT_MAX	4096
#define HELPER_MS	10000		/* deadline of a kill or marker helper */
#define COLLECT_MS	30000		/* deadline of collecting a record */



static const char *const EXEC_ENV[] = {
	"HOME=/root", "LANG=C.UTF-8", "TERM=dumb", "PAGER=cat",
	"GIT_PAGER=cat", "PYTHONUNBUFFERED=1",
	"DEBIAN_FRONTEND=noninteractive",
	/* PEP 668: as in the image (Dockerfile.local), for any image. */
	"PIP_BREAK_SYSTEM_PACKAGES=1", NULL
};

/* An exec id from the engine: hex digits only. */
static bool
valid_exec_id(const char *s)
{
	size_t n = s == NULL ? 0 : strlen(s);

	return n > 0 && n <= 128 && strspn(s, "0123456789abcdef") == n;
}

static int
exec_create(struct sandbox *sb, struct json_object *cmd, bool with_env,
    char **id, struct error *err)
{
	return sandbox_exec_create(sb, cmd, with_env ? EXEC_ENV_RUN :
	    EXEC_ENV_NONE, id, err);
}

int
sandbox_exec_create(struct sandbox *sb, struct json_object *cmd, int how,
    char **id, struct error *err)
{
	static const long	 ok[] = { 201, 0 };
	struct json_object	*body, *resp = NULL;
	const char		*s;
	int			 rc = -1;

	*id = NULL;
	body = json_object_new_object();
	js_set_bool(body, "AttachStdin", how == EXEC_ENV_CHANNEL);
	js_set_bool(body, "AttachStdout", true);
	js_set_bool(body, "AttachStderr", true);
	js_set_bool(body, "Tty", false);
	js_set(body, "Cmd", json_object_get(cmd));
	js_set_str(body, "WorkingDir", "/sandbox");
	if (how != EXEC_ENV_NONE)
		js_set(body, "Env", sandbox_str_array(EXEC_ENV));
	/* 404/409: no such container, or it is stopped, paused, restarting. */
	if (sandbox_call(sb, "POST", body, ok, &resp, "cannot run a command",
	    err, "/containers/%s/exec", sb->container) == -1)
		goto out;
	if (!valid_exec_id(s = js_str(resp, "Id"))) {
		error_kind(err, ERR_UPSTREAM, "Docker engine answered exec create "
		    "without a valid Id");
		goto out;
	}
	if ((*id = strdup(s)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	rc = 0;
out:
	json_object_put(body);
	json_object_put(resp);
	return rc;
}

/* GET /exec/ID/json: whether it runs and its exit code. */
static int
exec_inspect(struct sandbox *sb, const char *id, bool *running,
    int *exit_code, struct error *err)
{
	static const long	 ok[] = { 200, 0 };
	struct json_object	*resp = NULL;
	long long		 code;
	int			 rc = -1;

	*running = false;
	*exit_code = -1;
	if (sandbox_call(sb, "GET", NULL, ok, &resp, "cannot inspect a command",
	    err, "/exec/%s/json", id) == -1)
		goto out;
	js_bool(resp, "Running", running);
	if (!*running && js_int(resp, "ExitCode", &code) == 0 &&
	    code >= 0 && code <= 255)
		*exit_code = (int)code;
	rc = 0;
out:
	json_object_put(resp);
	return rc;
}

/*
 * The exit code once the engine has recorded it: the stream can end a
 * moment before the exit is processed, so ask again for up to two seconds.
 */
static int
exec_wait_exit(struct sandbox *sb, const char *id, int *exit_code,
    struct error *err)
{
	struct timespec	 pause = { 0, 5 * 1000000 };
	long long	 until = clock_ms() + 2000;
	bool		 running;

	for (;;) {
		if (exec_inspect(sb, id, &running, exit_code, err) == -1)
			return -1;
		if (!running)
			return 0;
		if (clock_ms() >= until)
			break;
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < 80 * 1000000)
			pause.tv_nsec *= 2;
	}
	*exit_code = -1;
	return 0;
}

/* Output of a small helper exec, kept in a fixed buffer. */
struct small_out {
	char		buf[SMALL_OUT_MAX];
	size_t		len;
	long long	deadline_ms;
};

/* A helper's tick: its absolute deadline. */
static int
small_tick(void *arg)
{
	struct small_out *o = arg;

	return clock_ms() >= o->deadline_ms;
}

static void
small_output(void *arg, int stream, const char *buf, size_t len)
{
	struct small_out *o = arg;
	size_t n;

	if (stream != 1)
		return;
	n = sizeof(o->buf) - 1 - o->len;
	if (n > len)
		n = len;
	memcpy(o->buf + o->len, buf, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/*
 * Run bash -c script with args in the container, reporting output to cb.
 * -1 with err->kind ERR_NOT_FOUND/ERR_CONFLICT when the container does not run.
 */
static int
run_cmd(struct sandbox *sb, struct json_object *cmd,
    const struct docker_exec_cb *cb, bool *stopped, int *exit_code,
    struct error *err)
{
	char	*id = NULL;
	int	 rc = -1;

	*exit_code = -1;
	*stopped = false;
	if (exec_create(sb, cmd, false, &id, err) == -1)
		goto out;
	if (docker_exec_start(sb->docker, id, cb, stopped, err) == -1)
		goto out;
	if (!*stopped && exec_wait_exit(sb, id, exit_code, err) == -1)
		goto out;
	rc = 0;
out:
	free(id);
	return rc;
}

/* run_cmd of bash -c script with args. */
static int
run_script(struct sandbox *sb, const char *script, const char *const args[],
    const struct docker_exec_cb *cb, bool *stopped, int *exit_code,
    struct error *err)
{
	struct json_object	*cmd;
	int			 rc;

	cmd = json_object_new_array();
	json_object_array_add(cmd, json_object_new_string("bash"));
	json_object_array_add(cmd, json_object_new_string("-c"));
	json_object_array_add(cmd, json_object_new_string(script));
	json_object_array_add(cmd, json_object_new_string("code-sandbox"));
	for (; *args != NULL; args++)
		json_object_array_add(cmd, json_object_new_string(*args));
	rc = run_cmd(sb, cmd, cb, stopped, exit_code, err);
	json_object_put(cmd);
	return rc;
}

/*
 * run_script collecting stdout in o (cut at its size), within HELPER_MS;
 * with script NULL, args is the command itself (the supervisor's).
 */
static int
run_helper(struct sandbox *sb, const char *script, const char *const args[],
    struct small_out *o, int *exit_code, struct error *err)
{
	struct docker_exec_cb	 cb = { small_output, small_tick, o };
	bool			 stopped;

	o->len = 0;
	o->buf[0] = '\0';
	o->deadline_ms = clock_ms() + HELPER_MS;
	if (script == NULL) {
		struct json_object	*cmd = sandbox_str_array(args);
		int			 rc;

		rc = run_cmd(sb, cmd, &cb, &stopped, exit_code, err);
		json_object_put(cmd);
		if (rc == -1)
			return -1;
	} else if (run_script(sb, script, args, &cb, &stopped, exit_code,
	    err) == -1)
		return -1;
	/* A hostile container can make bash hang: report it, never suffer it. */
	if (stopped) {
		sb->script_hung = true;
		return error_kind(err, ERR_TIMEOUT, "a helper command in the sandbox "
		    "did not finish within %d s (is /bin/bash intact?)",
		    HELPER_MS / 1000);
	}
	return 0;
}

/* Output of sandbox_script: stdout into the caller's buffer. */
struct script_out {
	char		*buf;
	size_t		 len, size;
	bool		 cut;
	bool		(*cancel)(void *);
	void		*arg;
	long long	 deadline_ms;
};

static void
script_output(void *arg, int stream, const char *buf, size_t len)
{
	struct script_out	*o = arg;
	size_t			 n;

	if (stream != 1)
		return;
	n = o->size - 1 - o->len;
	if (n > len)
		n = len;
	else if (n < len)
		o->cut = true;
	memcpy(o->buf + o->len, buf, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static int
script_tick(void *arg)
{
	struct script_out *o = arg;

	return clock_ms() >= o->deadline_ms ||
	    (o->cancel != NULL && o->cancel(o->arg));
}

int
sandbox_script(struct sandbox *sb, const char *script, const char *const args[],
    char *out, size_t outsz, bool (*cancel)(void *), void *arg,
    long deadline_s, int *exit_code, struct error *err)
{
	struct script_out	 o = { out, 0, outsz, false, cancel, arg,
				     clock_ms() + deadline_s * 1000 };
	struct docker_exec_cb	 cb = { script_output, script_tick, &o };
	bool			 stopped;

	*exit_code = -1;
	if (outsz < 2)
		return error_set(err, "sandbox_script: output buffer too small");
	out[0] = '\0';
	if (run_script(sb, script, args, &cb, &stopped, exit_code, err) == -1)
		return -1;
	if (stopped && clock_ms() >= o.deadline_ms) {
		sb->script_hung = true;
		return error_kind(err, ERR_TIMEOUT, "a script in the sandbox did not "
		    "finish within %ld s (is /bin/bash intact?)", deadline_s);
	}
	if (stopped)
		return error_set(err, "stopped before the script ended");
	if (o.cut)
		log_warn("sandbox script output cut at %zu bytes", outsz - 1);
	return 0;
}

int
sandbox_script_stream(struct sandbox *sb, const char *script,
    const char *const args[], const struct docker_exec_cb *cb, bool *stopped,
    int *exit_code, struct error *err)
{
	return run_script(sb, script, args, cb, stopped, exit_code, err);
}

/* Kill run_id's group, leaving marker "cancel", "timeout" or "disk". */
static int
kill_run(struct sandbox *sb, const char *run_id, const char *marker,
    struct error *err)
{
	const char *const	 args[] = { run_id, marker, NULL };
	char			 sup[SUP_PATH_MAX];
	struct small_out	 o;
	struct error		 e;
	int			 code;

	/* A run under the supervisor: its kill (exit 1: no such run here). */
	if (sup_ensure(sb, sup, &e) == 0) {
		const char *const sargs[] = { sup, "kill", run_id, NULL };

		/* Over the channel when there is one, else an exec. */
		if (sb->channel && chan_ask(sb, sup, 'k', run_id) == 0)
			return 0;
		if (run_helper(sb, NULL, sargs, &o, &code, &e) == 0 &&
		    code == 0)
			return 0;
	}
	if (run_helper(sb, SCRIPT_KILLER, args, &o, &code, &e) == -1) {
		/* No container running: nothing of the run can be alive. */
		if (e.kind == ERR_NOT_FOUND || e.kind == ERR_CONFLICT)
			return 0;
		return error_kind(err, e.kind, "%s", e.msg);
	}
	if (code != 0)
		return error_set(err, "the kill helper failed with status %d", code);
	return 0;
}

int
sandbox_kill(struct sandbox *sb, const char *run_id, struct error *err)
{
	if (run_id == NULL || !sandbox_valid_run_id(run_id))
		return error_set(err, "invalid run id");
	return kill_run(sb, run_id, "cancel", err);
}

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
	    r->sb->spec, r->disk_why, sizeof(r->disk_why)) == 1) {
		r->disk_stopped = true;
		log_warn("run %s: stopping it: %s", r->run_id, r->disk_why);
		if (kill_run(r->sb, r->run_id, "disk", &e) == -1)
			log_warn("run %s: %s", r->run_id, e.msg);
	}
	/* Backstop only: the supervisor or watchdog ends the command. */
	if (late >= BACKSTOP_KILL_MS && !r->backstop_killed) {
		r->backstop_killed = true;
		log_warn("run %s still running %lld ms after its deadline; "
		    "killing it from outside", r->run_id, late);
		if (kill_run(r->sb, r->run_id, "timeout", &e) == -1)
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

static int
stream_fill(struct exec_stream *s, const struct capture *c)
{
	if ((s->text = capture_text(c, &s->len, &s->cut)) == NULL)
		return -1;
	s->total = capture_total(c);
	return 0;
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
	if (exec_create(r->sb, cmd, true, id, err) == -1)
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
	struct docker_exec_cb	 cb = { NULL, small_tick, &o };
	struct error		 e;
	bool			 stopped;
	int			 code = -1;

	o.deadline_ms = clock_ms() + HELPER_MS;
	if ((cmd = sandbox_str_array(argv)) == NULL)
		return true;
	if (run_cmd(sb, cmd, &cb, &stopped, &code, &e) == -1 || stopped)
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

int
sandbox_exec(struct sandbox *sb, const char *command, long timeout_s,
    const char *run_id, const struct exec_observer *obs,
    struct exec_result *res, struct error *err)
{
	const char *const	 margs[] = { run_id, NULL };
	struct small_out	 marks;
	struct run		 r;
	struct error		 local, serr;
	char			*id = NULL, sup[SUP_PATH_MAX], esc[256];
	const char		*use;
	bool			 stopped = false, ensured = false;
	bool			 reinstalled = false, no_chan = false;
	bool			 via_chan = false, chan_lost = false;
	int			 chan_code = -1, crc;
	long long		 oom0 = -1, oom1;
	int			 code, rc = -1;

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
	if (timeout_s < 1 || timeout_s > TIMEOUT_MAX)
		return error_set(err, "timeout must be 1 to %ld seconds",
		    TIMEOUT_MAX);
	r.sb = sb;
	r.obs = obs;
	r.run_id = run_id;
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

	/*
	 * A missing or stopped container shows as 404 or 409 on exec create
	 * or start, before the command ran: repair it and try once more. A
	 * supervisor that did not start the command (no 'S' frame: its copy
	 * is gone with a recreated container, or was tampered with) is
	 * uploaded anew, once; nothing of the command ran yet.
	 */
	for (;;) {
		use = sup_ensure(sb, sup, &serr) == 0 ? sup : NULL;
		oom0 = use != NULL ? sup_host_oom_count(sb) : -1;
		if (use == NULL && (serr.kind == ERR_NOT_FOUND || serr.kind == ERR_CONFLICT) &&
		    !ensured) {
			ensured = true;
			guard_stale();
			if (sandbox_ensure(sb, err) == -1)
				goto out;
			continue;
		}
		if (use != NULL && !no_chan && sb->channel) {
			/* The fast path: the channel, no exec of its own. */
			crc = run_chan(&r, use, command, timeout_s, &chan_code,
			    err);
			if (crc == CHAN_NONE) {
				no_chan = true;
				continue;
			}
			via_chan = true;
			if (crc == CHAN_STOPPED) {
				stopped = true;
				break;
			}
			if (crc == CHAN_LOST) {
				if (!r.started && !run_known(sb, use, run_id) &&
				    capture_total(r.out) + capture_total(r.err) == 0) {
					/* Nothing of it ran: the one-shot path. */
					no_chan = true;
					via_chan = false;
					continue;
				}
				log_warn("run %s: %s; waiting for its record",
				    run_id, err->msg);
				chan_lost = true;
				break;
			}
			if (!r.started) {
				error_set(err, "the supervisor could not start "
				    "the command: %s", r.sup_error[0] ?
				    r.sup_error : "no answer");
				goto out;
			}
			break;
		}
		if (run_once(&r, use, command, timeout_s, &id, &stopped,
		    err) == -1) {
			if (r.sup && r.started) {
				/*
				 * The engine connection broke while the
				 * supervisor ran the command: its record
				 * will say how it ended (or that it died
				 * with the container); collect it later.
				 */
				log_warn("run %s: %s; its result will be "
				    "collected from its record", run_id,
				    err->msg);
				res->engine_lost = true;
				r.detached = true;
				break;
			}
			if (ensured || (err->kind != ERR_NOT_FOUND && err->kind != ERR_CONFLICT) ||
			    capture_total(r.out) + capture_total(r.err) > 0)
				goto out;
			ensured = true;
			guard_stale();
			log_info("container %s not running (%s); ensuring it",
			    sb->container, err->msg);
			if (sandbox_ensure(sb, err) == -1)
				goto out;
			continue;
		}
		if (use == NULL || r.started || r.detached || stopped)
			break;
		sup_forget(use);
		if (reinstalled) {
			error_set(err, "the supervisor could not start the "
			    "command: %s", r.sup_error[0] ? r.sup_error :
			    "no answer");
			goto out;
		}
		reinstalled = true;
		log_warn("run %s: the supervisor did not start (%s); "
		    "uploading it again", run_id, log_escape(esc, sizeof(esc),
		    r.sup_error, strlen(r.sup_error)));
	}
	res->duration_ms = clock_ms() - r.start_ms;
	if (stopped && !r.backstop_stopped)
		r.detached = true;	/* the stop flag, seen by the client */
	res->supervised = r.sup && (r.started || chan_lost);
	if (chan_lost) {
		if (await_record(&r, timeout_s, res, err) == -1)
			goto out;
		if (res->out.text == NULL)
			res->duration_ms = clock_ms() - r.start_ms;
		if (res->exit_code == 137 && res->duration_ms >= timeout_s * 1000)
			res->timed_out = true;
		if (res->out.text != NULL)
			goto filled;
		goto fill;
	}
	if (r.detached) {
		/* Still running in the container; its end is not ours to see. */
		res->detached = true;
		goto fill;
	}
	if (r.backstop_killed || r.backstop_stopped)
		res->timed_out = true;

	if (r.sup) {
		/* The supervisor's result frame, else the exec's exit code. */
		if (r.have_result)
			res->exit_code = r.result.how == SUPF_EXITED ?
			    r.result.code : 128 + r.result.code;
		else if (via_chan)
			res->exit_code = chan_code;
		else if (exec_wait_exit(sb, id, &res->exit_code, &local) == -1) {
			/*
			 * The stream ended without a result and the engine
			 * does not answer: it went away under the command.
			 * The record (or its absence) will tell.
			 */
			log_warn("run %s: the engine went away: %s", run_id,
			    local.msg);
			res->engine_lost = res->detached = true;
			goto fill;
		} else if (container_changed(&r))
			/* No result: the supervisor died. With the container? */
			res->with_container = true;
		if (!r.have_result && via_chan && container_changed(&r))
			res->with_container = true;
		if (res->exit_code == 137 && res->duration_ms >= timeout_s * 1000)
			res->timed_out = true;
		/*
		 * Out of memory: the host's cgroup count when the engine is
		 * local, else the supervisor's (which only words the message).
		 */
		oom1 = oom0 >= 0 ? sup_host_oom_count(sb) : -1;
		if (res->exit_code == 137 && (oom1 >= 0 ? oom1 > oom0 :
		    r.have_result && r.result.oom_after > r.result.oom_before))
			res->oom_killed = true;
		goto fill;
	}

	/* The command ran: an engine hiccup now only loses the exit code. */
	if (exec_wait_exit(sb, id, &res->exit_code, &local) == -1)
		log_warn("run %s: exit code unknown: %s", run_id, local.msg);
	if (res->exit_code == 137) {
		/*
		 * Killed. A timeout is the server's own verdict, from its own
		 * clock: the deadline had passed. A cancellation is the
		 * caller's, from its run table. Nothing the container writes
		 * decides either; the helper only cleans up and reports the
		 * memory-limit count, which only words the message.
		 */
		if (res->duration_ms >= timeout_s * 1000)
			res->timed_out = true;
		if (run_helper(sb, SCRIPT_MARKERS, margs, &marks, &code, &local) == 0) {
			if (strstr(marks.buf, "oom\n") != NULL)
				res->oom_killed = true;
		} else
			log_warn("run %s: %s", run_id, local.msg);
	}
fill:
	if (stream_fill(&res->out, r.out) == -1 ||
	    stream_fill(&res->err, r.err) == -1) {
		error_set(err, "out of memory");
		exec_result_free(res);
		res->exit_code = -1;
		goto out;
	}
filled:
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
	free(id);
	return rc;
}

/* A run's record as it arrives from "supervisor collect". */
struct record {
	struct supf		 frames;
	unsigned char		*part[4];	/* H T h t */
	size_t			 len[4];
	struct supf_result	 result;
	bool			 have_result;
	bool			 bad;
	long long		 deadline_ms;
};

static int
record_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	static const char	 types[] = "HTht";
	struct record		*rec = arg;
	const char		*t;
	int			 i;

	if (rec->have_result)
		return -1;	/* R is last */
	if (type == 'R') {
		if (supf_result_decode(p, len, &rec->result) == -1)
			return -1;
		rec->have_result = true;
		return 0;
	}
	if ((t = strchr(types, type)) == NULL || type == '\0')
		return -1;
	i = (int)(t - types);
	if (rec->part[i] != NULL || len == 0)
		return -1;	/* each part at most once, never empty */
	if ((rec->part[i] = malloc(len)) == NULL)
		return -1;
	memcpy(rec->part[i], p, len);
	rec->len[i] = len;
	return 0;
}

static void
record_output(void *arg, int stream, const char *buf, size_t len)
{
	struct record *rec = arg;

	if (stream == 1 && !rec->bad &&
	    supf_feed(&rec->frames, buf, len, record_frame, rec) == -1)
		rec->bad = true;
}

static int
record_tick(void *arg)
{
	struct record *rec = arg;

	return clock_ms() >= rec->deadline_ms;
}

/* A capture holding a record's head and tail of a stream of total bytes. */
static struct capture *
record_capture(size_t max, const unsigned char *head, size_t hlen,
    const unsigned char *tail, size_t tlen, unsigned long long total)
{
	struct capture *c;

	if ((c = capture_new(max)) == NULL)
		return NULL;
	capture_add(c, head, hlen);
	if (total > hlen + tlen)
		capture_skip(c, total - hlen - tlen);
	capture_add(c, tail, tlen);
	return c;
}

int
sandbox_collect(struct sandbox *sb, const char *run_id, long timeout_s,
    struct exec_result *res, struct error *err)
{
	struct record		 rec;
	struct docker_exec_cb	 cb = { record_output, record_tick, &rec };
	struct json_object	*cmd = NULL;
	struct capture		*out = NULL, *errc = NULL;
	char			 sup[SUP_PATH_MAX];
	const char		*argv[4];
	bool			 stopped;
	int			 code, i, rc = -1;

	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	memset(&rec, 0, sizeof(rec));
	if (run_id == NULL || !sandbox_valid_run_id(run_id))
		return error_set(err, "invalid run id");
	if (sup_ensure(sb, sup, err) == -1)
		return -1;
	/*
	 * While it runs (a task polled, say), the channel answers without an
	 * exec of its own; the record itself comes through one.
	 */
	switch (sb->channel ? chan_ask(sb, sup, 'q', run_id) : -1) {
	case 3:
		return SANDBOX_RUNNING;
	case 4:
	case 5:
		return SANDBOX_LOST;
	default:
		break;
	}
	/* Each part is at most half the limit; a little slack for others'. */
	supf_init(&rec.frames, (uint32_t)(sb->max_output + 16));
	rec.deadline_ms = clock_ms() + COLLECT_MS;
	argv[0] = sup;
	argv[1] = "collect";
	argv[2] = run_id;
	argv[3] = NULL;
	if ((cmd = sandbox_str_array(argv)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	if (run_cmd(sb, cmd, &cb, &stopped, &code, err) == -1)
		goto out;
	if (stopped) {
		error_kind(err, ERR_TIMEOUT, "collecting run %s took longer than %d s",
		    run_id, COLLECT_MS / 1000);
		goto out;
	}
	switch (code) {
	case 3:
		rc = SANDBOX_RUNNING;
		goto out;
	case 4:
	case 5:
		rc = SANDBOX_LOST;
		goto out;
	case 0:
		break;
	default:
		error_kind(err, ERR_UPSTREAM, "collecting run %s: the supervisor "
		    "ended with status %d", run_id, code);
		goto out;
	}
	if (rec.bad || !rec.have_result || !supf_at_boundary(&rec.frames)) {
		/* Its copy replaced? The next collection uploads a fresh one. */
		sup_forget(sup);
		error_kind(err, ERR_UPSTREAM, "run %s: malformed record", run_id);
		goto out;
	}
	if ((out = record_capture(sb->max_output, rec.part[0], rec.len[0],
	    rec.part[1], rec.len[1], rec.result.out_total)) == NULL ||
	    (errc = record_capture(sb->max_output, rec.part[2], rec.len[2],
	    rec.part[3], rec.len[3], rec.result.err_total)) == NULL ||
	    stream_fill(&res->out, out) == -1 ||
	    stream_fill(&res->err, errc) == -1) {
		exec_result_free(res);
		error_set(err, "out of memory");
		goto out;
	}
	res->supervised = true;
	res->exit_code = rec.result.how == SUPF_EXITED ? rec.result.code :
	    128 + rec.result.code;
	res->duration_ms = rec.result.duration_ms > (unsigned long long)
	    TIMEOUT_MAX * 1000 ? TIMEOUT_MAX * 1000 :
	    (long long)rec.result.duration_ms;
	if (res->exit_code == 137 && res->duration_ms >= timeout_s * 1000)
		res->timed_out = true;
	if (res->exit_code == 137 &&
	    rec.result.oom_after > rec.result.oom_before)
		res->oom_killed = true;
	rc = SANDBOX_DONE;
out:
	json_object_put(cmd);
	capture_free(out);
	capture_free(errc);
	for (i = 0; i < 4; i++)
		free(rec.part[i]);
	supf_free(&rec.frames);
	return rc;
}

void
exec_result_free(struct exec_result *res)
{
	if (res == NULL)
		return;
	free(res->out.text);
	free(res->err.text);
	free(res->notice);
	res->notice = NULL;
	res->out.text = res->err.text = NULL;
	res->out.len = res->err.len = 0;
}

