/*
 * sandbox/status.c: the sandbox for operators: what the engine says about
 * it (sandboxctl status) and making its container again (sandboxctl
 * recreate); see sandbox.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/js.h"
#include "engine/docker.h"
#include "sandbox/extern.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"
#include "sandbox/scripts.h"

/* Volume usage: bytes used under /sandbox (du, one file system), then the
 * file system's available and total bytes (df). */
#define USAGE_DEADLINE_S	10

/* GET /what[/name]/json-ish path; *resp the body of a 200, NULL for a 404. */
static int
get_json(struct sandbox *sb, const char *path, struct json_object **resp,
    struct error *err)
{
	static const long	ok[] = { 200, 404, 0 };
	long			status;

	if ((status = sandbox_call(sb, "GET", NULL, ok, resp, "cannot read",
	    err, "%s", path)) == -1)
		return -1;
	if (status != 200) {
		json_object_put(*resp);
		*resp = NULL;
	}
	return 0;
}

static long long
parse_count(const char **p)
{
	char		*end;
	long long	 v;

	while (**p == ' ')
		(*p)++;
	v = strtoll(*p, &end, 10);
	if (end == *p)
		return -1;
	*p = end;
	return v;
}

static void
copy_member(struct json_object *to, const char *key, struct json_object *from,
    const char *fkey)
{
	struct json_object *v;

	if (from != NULL && json_object_object_get_ex(from, fkey, &v))
		js_set(to, key, json_object_get(v));
}

/* The container's part of the status (cont): 0, or -1 (err). */
static int
status_container(struct sandbox *sb, struct json_object *cont, bool *running,
    struct error *err)
{
	struct json_object	*resp = NULL, *state, *host;
	char			 path[600];

	snprintf(path, sizeof(path), "/containers/%s/json", sb->container);
	if (get_json(sb, path, &resp, err) == -1)
		return -1;
	js_set_bool(cont, "exists", resp != NULL);
	if (resp != NULL) {
		state = js_get(resp, "State", json_type_object);
		host = js_get(resp, "HostConfig", json_type_object);
		js_bool(state, "Running", running);
		copy_member(cont, "id", resp, "Id");
		copy_member(cont, "image", js_get(resp, "Config",
		    json_type_object), "Image");
		copy_member(cont, "state", state, "Status");
		copy_member(cont, "running", state, "Running");
		copy_member(cont, "started_at", state, "StartedAt");
		copy_member(cont, "finished_at", state, "FinishedAt");
		copy_member(cont, "oom_killed", state, "OOMKilled");
		copy_member(cont, "exit_code", state, "ExitCode");
		copy_member(cont, "restart_count", resp, "RestartCount");
		copy_member(cont, "memory", host, "Memory");
		copy_member(cont, "nano_cpus", host, "NanoCpus");
		copy_member(cont, "pids_limit", host, "PidsLimit");
		copy_member(cont, "shm_size", host, "ShmSize");
	}
	json_object_put(resp);
	return 0;
}

/*
 * The volume's usage (vol), by du and df in the running container: a
 * script that passes its deadline is reported, not waited for.
 */
static void
status_usage(struct sandbox *sb, struct json_object *vol)
{
	const char *const	 noargs[] = { NULL };
	char			 usage[128];
	const char		*p;
	struct error		 e;
	int			 code;

	/* du may take a while on a large volume; never more than this. */
	error_clear(&e);
	if (sandbox_script(sb, SCRIPT_USAGE, noargs, usage, sizeof(usage),
	    NULL, NULL, USAGE_DEADLINE_S, &code, &e) == 0 && code == 0) {
		long long used, avail, total;

		p = usage;
		used = parse_count(&p);
		avail = parse_count(&p);
		total = parse_count(&p);
		if (used >= 0)
			js_set_int(vol, "used_bytes", used);
		if (avail >= 0)
			js_set_int(vol, "fs_available_bytes", avail);
		if (total >= 0)
			js_set_int(vol, "fs_size_bytes", total);
	} else if (e.kind == ERR_TIMEOUT)
		js_set_str(vol, "usage_error", e.msg);
}

int
sandbox_status(struct sandbox *sb, struct json_object **out, struct error *err)
{
	struct json_object	*st, *engine, *image, *cont, *vol, *resp = NULL;
	struct error		 e;
	char			 path[600];
	bool			 running = false;

	*out = NULL;
	if ((st = json_object_new_object()) == NULL)
		return error_set(err, "out of memory");
	engine = json_object_new_object();
	image = json_object_new_object();
	cont = json_object_new_object();
	vol = json_object_new_object();
	js_set(st, "engine", engine);
	js_set(st, "image", image);
	js_set(st, "container", cont);
	js_set(st, "volume", vol);

	js_set_str(engine, "host", docker_host(sb->docker));
	if (get_json(sb, "/version", &resp, &e) == -1) {
		js_set_bool(engine, "reachable", false);
		js_set_str(engine, "error", e.msg);
		*out = st;
		return 0;
	}
	js_set_bool(engine, "reachable", true);
	copy_member(engine, "version", resp, "Version");
	copy_member(engine, "api_version", resp, "ApiVersion");
	copy_member(engine, "os", resp, "Os");
	copy_member(engine, "kernel", resp, "KernelVersion");
	json_object_put(resp);

	js_set_str(image, "name", sb->image);
	snprintf(path, sizeof(path), "/images/%s/json", sb->image);
	if (get_json(sb, path, &resp, err) == -1)
		goto fail;
	js_set_bool(image, "present", resp != NULL);
	copy_member(image, "id", resp, "Id");
	copy_member(image, "created", resp, "Created");
	copy_member(image, "size", resp, "Size");
	json_object_put(resp);
	resp = NULL;

	js_set_str(cont, "name", sb->container);
	if (status_container(sb, cont, &running, err) == -1)
		goto fail;

	js_set_str(vol, "name", sb->volume);
	snprintf(path, sizeof(path), "/volumes/%s", sb->volume);
	if (get_json(sb, path, &resp, err) == -1)
		goto fail;
	js_set_bool(vol, "exists", resp != NULL);
	copy_member(vol, "created", resp, "CreatedAt");
	json_object_put(resp);
	resp = NULL;
	if (running)
		status_usage(sb, vol);
	guard_status(sb, sb->docker, sb->spec, st);
	*out = st;
	return 0;
fail:
	json_object_put(resp);
	json_object_put(st);
	return -1;
}

int
sandbox_recreate(struct sandbox *sb, struct error *err)
{
	return guard_recreate(sb, sb->docker, sb->spec, err);
}
