/*
 * sandbox/ensure.c: the container's lifecycle: the volume made, the
 * container created from its spec (sandbox/cspec.h) and started, never
 * recreated here, never started when it is weaker than the settings want;
 * see sandbox_ensure in sandbox.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "sandbox/cspec.h"
#include "sandbox/extern.h"
#include "sandbox/owneraddr.h"
#include "sandbox/sandbox.h"

int
sandbox_refusal(const struct cspec *cs, const char *diff, struct error *err)
{
	return error_kind(err, ERR_DENIED, "The sandbox container %s is not as "
	    "configured: %s. Commands are refused. The operator can recreate "
	    "it with `sandboxctl recreate` (files in /sandbox are kept; "
	    "packages installed outside it are not).", cspec_container(cs),
	    diff);
}

/*
 * Before an existing container is started (inspect is its GET
 * /containers/NAME/json): true, with err set, when it is weaker than
 * wanted and must not run.
 */
static bool
refuses(const struct cspec *cs, struct json_object *inspect,
    struct error *err)
{
	char diff[400];

	if (cspec_compare(cs, inspect, diff, sizeof(diff)) != CSPEC_REFUSE)
		return false;
	sandbox_refusal(cs, diff, err);
	return true;
}

int
sandbox_volume_create(struct sandbox *sb, struct error *err)
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

/*
 * An owner's container gets the owner's own address on the network
 * (owneraddr.h), so the proxy can add that owner's secrets to it alone.
 * When there is none (an older network), the engine picks one, and the
 * owner's secrets are not added (the proxy's configuration says so).
 */
static void
fixed_address(struct sandbox *sb, struct json_object *body)
{
	struct json_object	*nc, *eps, *ep, *ipam;
	struct error		 err;
	char			 addr[OWNERADDR_MAX];

	if (sb->db == NULL || sb->owner == NULL)
		return;
	if (owneraddr_get(sb->cfg, sb->db, sb->docker, sb->owner, addr,
	    &err) == -1) {
		log_warn("container %s: no fixed address: %s", sb->container,
		    err.msg);
		return;
	}
	ipam = json_object_new_object();
	js_set_str(ipam, "IPv4Address", addr);
	ep = json_object_new_object();
	js_set(ep, "IPAMConfig", ipam);
	eps = json_object_new_object();
	js_set(eps, cspec_network(sb->spec), ep);
	nc = json_object_new_object();
	js_set(nc, "EndpointsConfig", eps);
	js_set(body, "NetworkingConfig", nc);
}

/* POST /containers/create; 0 when created or already there (409). */
int
sandbox_create_container(struct sandbox *sb, struct error *err)
{
	static const char *const cmd[] = { "sleep", "infinity", NULL };
	static const char *const secopt[] = { "no-new-privileges", NULL };
	static const long	 ok[] = { 201, 400, 404, 409, 0 };
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
	fixed_address(sb, body);

again:
	if ((status = sandbox_call(sb, "POST", body, ok, &resp, "cannot create "
	    "the container", err, "/containers/create?name=%s",
	    sb->container)) == -1)
		goto out;
	switch (status) {
	case 400:
		/* The engine does not see the previews' folder: without it. */
		if (strstr(docker_message(resp), "mount") != NULL &&
		    cspec_drop_lane(body)) {
			log_warn("container %s: the engine does not see the "
			    "previews folder (%.200s); previews go through the "
			    "engine (SANDBOX_PREVIEW_SOCKETS=off says so)",
			    sb->container, docker_message(resp));
			json_object_put(resp);
			resp = NULL;
			goto again;
		}
		error_kind(err, ERR_UPSTREAM, "cannot create the container: "
		    "HTTP 400: %.200s", docker_message(resp));
		goto out;
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

int
sandbox_start_container(struct sandbox *sb, bool paused, struct error *err)
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

/*
 * In person scope a container is started or created only through a
 * handle of sandboxes_open, so every start is counted against
 * SANDBOX_MAX_SANDBOXES and idle-stopped later (sandboxes.h): true, with
 * err set, for any other handle.
 */
static bool
unclaimed(struct sandbox *sb, struct error *err)
{
	if (!sb->per_person || sb->claimed)
		return false;
	error_kind(err, ERR_UNAVAILABLE, "the sandbox container %s is not "
	    "running, and this request may not start it", sb->container);
	return true;
}

static int
ensure_once(struct sandbox *sb, struct error *err)
{
	static const long	 ok[] = { 200, 404, 0 };
	struct json_object	*resp = NULL, *state;
	long			 status;
	bool			 running = false, paused = false;
	int			 rc = -1;

	if (sandbox_volume_create(sb, err) == -1)
		goto out;
	if ((status = sandbox_call(sb, "GET", NULL, ok, &resp, "cannot inspect "
	    "the container", err, "/containers/%s/json", sb->container)) == -1)
		goto out;
	if (status == 404) {
		if (unclaimed(sb, err) || sandbox_create_container(sb, err) == -1)
			goto out;
	} else {
		/* A weaker container is never started (sandbox/guard.h). */
		if (refuses(sb->spec, resp, err))
			goto out;
		state = js_get(resp, "State", json_type_object);
		js_bool(state, "Running", &running);
		js_bool(state, "Paused", &paused);
	}
	if (running && !paused)
		rc = 0;
	else if (!unclaimed(sb, err))
		rc = sandbox_start_container(sb, paused, err);
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
