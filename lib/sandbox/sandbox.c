/*
 * sandbox.c: the one long-lived sandbox container: the handle and the
 * container's lifecycle (volume, create, start); see sandbox.h. Running
 * commands is sandbox/run.c, status for sandboxctl sandbox/status.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "sandbox/cspec.h"
#include "sandbox/extern.h"
#include "sandbox/files.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"

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

int
sandbox_open(const struct config *cfg, const char *owner, struct sandbox **out,
    struct error *err)
{
	struct sandbox	*sb;
	char		 container[SANDBOXES_NAME_MAX], volume[SANDBOXES_NAME_MAX];
	int		 rc = -1;

	*out = NULL;
	/* The one place an owner's sandbox gets its names (sandboxes.h). */
	sandboxes_names(cfg, owner, container, volume);
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
	if ((sb->image = strdup(cfg->image)) == NULL ||
	    (sb->container = strdup(container)) == NULL ||
	    (sb->volume = strdup(volume)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	sb->memory_bytes = cfg->memory_bytes;
	sb->nano_cpus = cfg->nano_cpus;
	sb->pids_limit = cfg->pids_limit;
	sb->shm_bytes = cfg->shm_bytes;
	sb->max_output = (size_t)cfg->max_output_bytes;
	sb->channel = cfg->channel;
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

/* A valid Id (64 hex digits) and a plausible StartedAt, copied. */
static int
ident_copy(const char *id, const char *at, char *idout, char *atout)
{
	if (id == NULL || strlen(id) != 64 || strspn(id,
	    "0123456789abcdef") != 64 || at == NULL || strlen(at) < 10 ||
	    strlen(at) >= SANDBOX_IDENT_MAX || strspn(at,
	    "0123456789-:.TZ+") != strlen(at))
		return -1;
	memcpy(idout, id, 65);
	memcpy(atout, at, strlen(at) + 1);
	return 0;
}

int
sandbox_identity(struct sandbox *sb, bool may_cache, char *id, char *started,
    struct error *err)
{
	static const long	 ok[] = { 200, 0 };
	struct json_object	*resp = NULL;
	int			 rc = -1;

	id[0] = started[0] = '\0';
	if (may_cache && guard_identity(sb->container, id, started) == 0)
		return 0;
	if (sandbox_call(sb, "GET", NULL, ok, &resp, "cannot inspect the "
	    "container", err, "/containers/%s/json", sb->container) == -1)
		return -1;
	if (ident_copy(js_str(resp, "Id"), js_str(js_get(resp, "State",
	    json_type_object), "StartedAt"), id, started) == -1)
		error_kind(err, ERR_UPSTREAM, "the engine gave no valid Id and StartedAt");
	else
		rc = 0;
	json_object_put(resp);
	return rc;
}

int
sandbox_started_at(struct sandbox *sb, long long *when, bool *running,
    struct error *err)
{
	static const long	 ok[] = { 200, 0 };
	struct json_object	*resp = NULL, *state;
	const char		*t;
	int			 rc = -1;

	*when = 0;
	if (running != NULL)
		*running = false;
	if (sandbox_call(sb, "GET", NULL, ok, &resp, "cannot inspect the "
	    "container", err, "/containers/%s/json", sb->container) == -1)
		return -1;
	state = js_get(resp, "State", json_type_object);
	if (running != NULL)
		js_bool(state, "Running", running);
	t = js_str(state, "StartedAt");
	if (t == NULL || files_parse_time(t, when) == -1)
		error_kind(err, ERR_UPSTREAM, "the engine gave no valid StartedAt");
	else
		rc = 0;
	json_object_put(resp);
	return rc;
}

static int
volume_create(struct sandbox *sb, struct error *err)
{
	static const long	 ok[] = { 200, 201, 0 };
	struct json_object	*body, *labels;
	int			 rc = -1;

	body = json_object_new_object();
	labels = json_object_new_object();
	js_set_str(labels, "code-sandbox", "data");
	js_set_str(body, "Name", sb->volume);
	js_set(body, "Labels", labels);
	/* 201 also when the volume exists: the call is idempotent. */
	if (sandbox_call(sb, "POST", body, ok, NULL, "cannot create the "
	    "Docker volume", err, "/volumes/create") == -1)
		goto out;
	rc = 0;
out:
	json_object_put(body);
	return rc;
}

/* POST /containers/create; 0 when created or already there (409). */
static int
container_create(struct sandbox *sb, struct error *err)
{
	static const char *const cmd[] = { "sleep", "infinity", NULL };
	static const char *const secopt[] = { "no-new-privileges", NULL };
	static const long	 ok[] = { 201, 404, 409, 0 };
	struct json_object	*body, *host, *mounts, *mount, *restart, *labels;
	struct json_object	*resp = NULL;
	long			 status;
	int			 rc = -1;

	body = json_object_new_object();
	js_set_str(body, "Image", sb->image);
	js_set(body, "Cmd", sandbox_str_array(cmd));
	js_set_str(body, "WorkingDir", "/sandbox");
	labels = json_object_new_object();
	js_set_str(labels, "code-sandbox", "sandbox");
	js_set(body, "Labels", labels);

	host = json_object_new_object();
	mounts = json_object_new_array();
	mount = json_object_new_object();
	js_set_str(mount, "Type", "volume");
	js_set_str(mount, "Source", sb->volume);
	js_set_str(mount, "Target", "/sandbox");
	json_object_array_add(mounts, mount);
	js_set(host, "Mounts", mounts);
	js_set_int(host, "Memory", sb->memory_bytes);
	js_set_int(host, "MemorySwap", sb->memory_bytes);	/* no swap on top */
	js_set_int(host, "NanoCpus", sb->nano_cpus);
	js_set_int(host, "PidsLimit", sb->pids_limit);
	/* Headless Chromium needs more than Docker's 64 MB default. */
	js_set_int(host, "ShmSize", sb->shm_bytes);
	js_set_bool(host, "Privileged", false);
	js_set(host, "SecurityOpt", sandbox_str_array(secopt));
	restart = json_object_new_object();
	js_set_str(restart, "Name", "unless-stopped");
	js_set(host, "RestartPolicy", restart);
	js_set_bool(host, "Init", true);	/* reaps orphans of detached jobs */
	js_set(body, "HostConfig", host);
	cspec_fill_create(sb->spec, body);

	if ((status = sandbox_call(sb, "POST", body, ok, &resp, "cannot create "
	    "the container", err, "/containers/create?name=%s",
	    sb->container)) == -1)
		goto out;
	switch (status) {
	case 201:
		log_info("created container %s from image %s", sb->container,
		    sb->image);
		break;
	case 409:
		/* Another process created it first: fine, it exists now. */
		break;
	case 404:
		if (strstr(docker_message(resp), "network") != NULL) {
			error_kind(err, ERR_UNAVAILABLE, "the sandbox's network is missing "
			    "(%.200s): run containers/netpolicy.sh apply as root",
			    docker_message(resp));
			goto out;
		}
		error_kind(err, ERR_UNAVAILABLE, "the sandbox image %s is missing: build it "
		    "with containers/build-image.sh (or make run)", sb->image);
		goto out;
	}
	rc = 0;
out:
	json_object_put(resp);
	json_object_put(body);
	return rc;
}

static int
container_start(struct sandbox *sb, bool paused, struct error *err)
{
	/* 204 started, 304 already running; unpause answers 200 or 204. */
	static const long	 start_ok[] = { 204, 304, 0 };
	static const long	 unpause_ok[] = { 200, 204, 304, 0 };
	long			 status;

	if ((status = sandbox_call(sb, "POST", NULL, paused ? unpause_ok :
	    start_ok, NULL, paused ? "cannot unpause the container" :
	    "cannot start the container", err, "/containers/%s/%s",
	    sb->container, paused ? "unpause" : "start")) == -1)
		return -1;
	if (status == 204)
		log_info("%s container %s", paused ? "unpaused" : "started",
		    sb->container);
	return 0;
}

static int
ensure_once(struct sandbox *sb, struct error *err)
{
	static const long	 ok[] = { 200, 404, 0 };
	struct json_object	*resp = NULL, *state;
	long			 status;
	bool			 running = false, paused = false;
	int			 rc = -1;

	if (volume_create(sb, err) == -1)
		goto out;
	if ((status = sandbox_call(sb, "GET", NULL, ok, &resp, "cannot inspect "
	    "the container", err, "/containers/%s/json", sb->container)) == -1)
		goto out;
	if (status == 404) {
		if (container_create(sb, err) == -1)
			goto out;
	} else {
		/* A weaker container is never started (sandbox/guard.h). */
		if (guard_refuses(sb->spec, resp, err))
			goto out;
		state = js_get(resp, "State", json_type_object);
		js_bool(state, "Running", &running);
		js_bool(state, "Paused", &paused);
	}
	if (running && !paused)
		rc = 0;
	else
		rc = container_start(sb, paused, err);
out:
	json_object_put(resp);
	return rc;
}

/*
 * Calls arriving together for a missing or stopped container race: one
 * creates it while another's create answers 409 and its start may still
 * see 404 (or a removal in progress). Those answers are retried a few times
 * with a growing pause; everything else is final.
 */
int
sandbox_ensure(struct sandbox *sb, struct error *err)
{
	int attempt;

	for (attempt = 1; ; attempt++) {
		error_clear(err);
		if (ensure_once(sb, err) == 0)
			return 0;
		if (attempt == 5 || err == NULL ||
		    (err->kind != ERR_NOT_FOUND && err->kind != ERR_CONFLICT))
			return -1;
		usleep(100000 * (useconds_t)attempt);
	}
}


int
sandbox_recreate(struct sandbox *sb, struct error *err)
{
	return guard_recreate(sb, sb->docker, sb->spec, err);
}
