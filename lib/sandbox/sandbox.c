/*
 * sandbox.c: the handle and its engine calls, the core the other files of
 * sandbox/ build on: opening a handle on an owner's container, one engine
 * call with its status check (sandbox_call), and the one-shot engine execs
 * of scripts and helpers (sandbox_script, sandbox_helper); see sandbox.h
 * and sandbox/extern.h. It calls no other file of the folder: the
 * container's lifecycle is sandbox/ensure.c, running commands
 * sandbox/exec.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "sandbox/cspec.h"
#include "sandbox/extern.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"

#define HASH_DIGITS	12	/* 48 bits: no two owners of a server collide */

/* A Docker object name safe to put in a URL path: [A-Za-z0-9_.-]. */
static bool
valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_.-") == n;
}

bool
sandbox_valid_run_id(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 64 && strspn(s,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789_-") == n;
}

struct json_object *
sandbox_str_array(const char *const *v)
{
	struct json_object *a = json_object_new_array();

	for (; a != NULL && *v != NULL; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

void
sandbox_current(const struct config *cfg, const char *container,
    const char *base_volume, char *volume, char *image)
{
	char	 path[4096], buf[2 * SANDBOX_NAME_MAX + 4], *nl, *img;
	size_t	 bl = strlen(base_volume);
	ssize_t	 n;
	int	 fd, w;

	if (cfg->snapshot_dir == NULL)
		return;
	w = snprintf(path, sizeof(path), "%s/%s.current", cfg->snapshot_dir,
	    container);
	if (w < 0 || (size_t)w >= sizeof(path) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/*
	 * "VOLUME\nIMAGE\n", written by snapshot_restore.c; anything else
	 * is ignored.
	 */
	if ((nl = strchr(buf, '\n')) == NULL)
		return;
	*nl = '\0';
	img = nl + 1;
	if ((nl = strchr(img, '\n')) == NULL || nl[1] != '\0')
		return;
	*nl = '\0';
	if (!valid_name(buf) || strncmp(buf, base_volume, bl) != 0 ||
	    strncmp(buf + bl, "-s", 2) != 0 ||
	    strncmp(img, SANDBOX_SNAP_REPO ":", sizeof(SANDBOX_SNAP_REPO)) != 0 ||
	    !valid_name(img + sizeof(SANDBOX_SNAP_REPO)))
		return;
	snprintf(volume, SANDBOX_NAME_MAX, "%s", buf);
	if (image != NULL)
		snprintf(image, SANDBOX_NAME_MAX, "%s", img);
}

/* The names before any restore: the settings', with the owner's hash. */
static void
names_base(const struct config *cfg, const char *owner, char *container,
    char *volume)
{
	char hash[CRYPTO_SHA256_HEX];

	if (!cfg->per_person || owner == NULL) {
		snprintf(container, SANDBOX_NAME_MAX, "%s", cfg->container);
		snprintf(volume, SANDBOX_NAME_MAX, "%s", cfg->volume);
	} else {
		crypto_sha256_hex(owner, strlen(owner), hash);
		snprintf(container, SANDBOX_NAME_MAX, "%s-%.*s", cfg->container,
		    HASH_DIGITS, hash);
		snprintf(volume, SANDBOX_NAME_MAX, "%s-%.*s", cfg->volume,
		    HASH_DIGITS, hash);
	}
}

void
sandbox_names(const struct config *cfg, const char *owner, char *container,
    char *volume)
{
	char base[SANDBOX_NAME_MAX];

	names_base(cfg, owner, container, base);
	snprintf(volume, SANDBOX_NAME_MAX, "%s", base);
	/* After a restore: the volume it switched to (snapshot_restore.c). */
	sandbox_current(cfg, container, base, volume, NULL);
}

int
sandbox_open(const struct config *cfg, const char *owner, struct sandbox **out,
    struct error *err)
{
	struct sandbox	*sb;
	char		 container[SANDBOX_NAME_MAX], volume[SANDBOX_NAME_MAX];
	char		 image[SANDBOX_NAME_MAX], base[SANDBOX_NAME_MAX];
	int		 rc = -1;

	*out = NULL;
	/* The one place an owner's sandbox gets its names (sandboxes.h). */
	names_base(cfg, owner, container, base);
	/* The volume and image a restore left it on, or the settings'. */
	snprintf(volume, sizeof(volume), "%s", base);
	snprintf(image, sizeof(image), "%s", cfg->image);
	sandbox_current(cfg, container, base, volume, image);
	if (!valid_name(container) || !valid_name(volume))
		return error_set(err, "SANDBOX_CONTAINER and SANDBOX_VOLUME: use "
		    "letters, digits, '_', '.' and '-' only");
	if (cfg->max_output_bytes < 0)
		return error_set(err, "MAX_OUTPUT_BYTES: must not be negative");
	if ((sb = calloc(1, sizeof(*sb))) == NULL)
		return error_set(err, "out of memory");
	if (docker_open(cfg->docker_host, cfg->docker_tls_verify,
	    cfg->docker_cert_path, &sb->docker, err) == -1 ||
	    cspec_new(cfg, container, volume, &sb->spec, err) == -1)
		goto out;
	if ((sb->image = strdup(image)) == NULL ||
	    (sb->container = strdup(container)) == NULL ||
	    (sb->volume = strdup(volume)) == NULL ||
	    (owner != NULL && (sb->owner = strdup(owner)) == NULL)) {
		error_set(err, "out of memory");
		goto out;
	}
	sb->memory_bytes = cfg->memory_bytes;
	sb->nano_cpus = cfg->nano_cpus;
	sb->pids_limit = cfg->pids_limit;
	sb->shm_bytes = cfg->shm_bytes;
	sb->max_output = (size_t)cfg->max_output_bytes;
	sb->channel = cfg->channel;
	sb->per_person = cfg->per_person;
	sb->cfg = cfg;
	*out = sb;
	sb = NULL;
	rc = 0;
out:
	sandbox_close(sb);
	return rc;
}

void
sandbox_close(struct sandbox *sb)
{
	if (sb == NULL)
		return;
	docker_close(sb->docker);
	cspec_free(sb->spec);
	free(sb->image);
	free(sb->container);
	free(sb->volume);
	free(sb->owner);
	free(sb);
}

struct docker *
sandbox_docker(struct sandbox *sb)
{
	return sb->docker;
}

bool
sandbox_script_hung(const struct sandbox *sb)
{
	return sb->script_hung;
}

const char *
sandbox_container(const struct sandbox *sb)
{
	return sb->container;
}

long
sandbox_call(struct sandbox *sb, const char *method, struct json_object *body,
    const long *ok, struct json_object **resp, const char *what,
    struct error *err, const char *fmt, ...)
{
	struct json_object	*r = NULL;
	va_list			 ap;
	char			 path[512];
	long			 status;
	int			 n;

	if (resp != NULL)
		*resp = NULL;
	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return error_set(err, "Docker API path too long");
	if (docker_request(sb->docker, method, path, body, &status, &r,
	    err) == -1)
		return -1;
	for (; *ok != 0; ok++)
		if (*ok == status)
			break;
	if (*ok == 0) {
		error_kind(err, status == 404 || status == 409 ?
		    error_kind_of_http(status) : ERR_UPSTREAM, "%s (%s %s): HTTP %ld: %.200s", what,
		    method, path, status, docker_message(r));
		json_object_put(r);
		return -1;
	}
	if (resp != NULL)
		*resp = r;
	else
		json_object_put(r);
	return status;
}

static const char *const EXEC_ENV[] = {
	"HOME=/root", "LANG=C.UTF-8", "TERM=dumb", "PAGER=cat",
	"GIT_PAGER=cat", "PYTHONUNBUFFERED=1",
	"DEBIAN_FRONTEND=noninteractive",
	/* PEP 668: as in the image (Dockerfile.local), for any image. */
	"PIP_BREAK_SYSTEM_PACKAGES=1", NULL
};

/*
 * With the egress proxy (SANDBOX_PROXY): the system store, which holds the
 * proxy's CA (SCRIPT_PROXY_CA), for the tools that keep their own.
 */
static const char *const EXEC_ENV_PROXY[] = {
	"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
	"REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt",
	"PIP_CERT=/etc/ssl/certs/ca-certificates.crt",
	"NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt",
	"NPM_CONFIG_CAFILE=/etc/ssl/certs/ca-certificates.crt",
	"GIT_SSL_CAINFO=/etc/ssl/certs/ca-certificates.crt",
	"no_proxy=localhost,127.0.0.1,::1", "NO_PROXY=localhost,127.0.0.1,::1",
	NULL
};

const struct config *
sandbox_config(const struct sandbox *sb)
{
	return sb->cfg;
}

/* An exec id from the engine: hex digits only. */
static bool
valid_exec_id(const char *s)
{
	size_t n = s == NULL ? 0 : strlen(s);

	return n > 0 && n <= 128 && strspn(s, "0123456789abcdef") == n;
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
	js_set_bool(body, "AttachStdin", how == EXEC_ENV_CHANNEL ||
	    how == EXEC_ENV_INPUT);
	js_set_bool(body, "AttachStdout", true);
	js_set_bool(body, "AttachStderr", true);
	js_set_bool(body, "Tty", false);
	js_set(body, "Cmd", json_object_get(cmd));
	js_set_str(body, "WorkingDir", "/sandbox");
	if (how == EXEC_ENV_RUN || how == EXEC_ENV_CHANNEL) {
		struct json_object *env = sandbox_str_array(EXEC_ENV);
		size_t		    i;

		char		    gw[16], v[96];
		static const char *const names[] = { "http_proxy",
		    "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", NULL };

		if (sb->cfg != NULL && sb->cfg->proxy) {
			for (i = 0; EXEC_ENV_PROXY[i] != NULL; i++)
				json_object_array_add(env,
				    json_object_new_string(EXEC_ENV_PROXY[i]));
			/* The proxy by name: it resolves, the rules apply. */
			for (i = 0; guard_gateway(gw) == 0 && names[i] != NULL;
			    i++) {
				snprintf(v, sizeof(v), "%s=http://%s:%ld",
				    names[i], gw, sb->cfg->proxy_port);
				json_object_array_add(env,
				    json_object_new_string(v));
			}
		}
		js_set(body, "Env", env);
	}
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

int
sandbox_exec_wait(struct sandbox *sb, const char *id, int *exit_code,
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

int
sandbox_small_tick(void *arg)
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

int
sandbox_run_cmd(struct sandbox *sb, struct json_object *cmd,
    const struct docker_exec_cb *cb, bool *stopped, int *exit_code,
    struct error *err)
{
	char	*id = NULL;
	int	 rc = -1;

	*exit_code = -1;
	*stopped = false;
	if (sandbox_exec_create(sb, cmd, EXEC_ENV_NONE, &id, err) == -1)
		goto out;
	if (docker_exec_start(sb->docker, id, cb, stopped, err) == -1)
		goto out;
	if (!*stopped && sandbox_exec_wait(sb, id, exit_code, err) == -1)
		goto out;
	rc = 0;
out:
	free(id);
	return rc;
}

/* sandbox_run_cmd of bash -c script with args. */
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
	rc = sandbox_run_cmd(sb, cmd, cb, stopped, exit_code, err);
	json_object_put(cmd);
	return rc;
}

int
sandbox_helper(struct sandbox *sb, const char *script, const char *const args[],
    struct small_out *o, int *exit_code, struct error *err)
{
	struct docker_exec_cb	 cb = { small_output, sandbox_small_tick, o };
	bool			 stopped;

	o->len = 0;
	o->buf[0] = '\0';
	o->deadline_ms = clock_ms() + SANDBOX_HELPER_MS;
	if (script == NULL) {
		struct json_object	*cmd = sandbox_str_array(args);
		int			 rc;

		rc = sandbox_run_cmd(sb, cmd, &cb, &stopped, exit_code, err);
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
		    SANDBOX_HELPER_MS / 1000);
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
