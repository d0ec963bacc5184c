/*
 * sandbox/guard.c: configuration drift around commands, the checks'
 * verdicts kept for a while and refreshed beside the requests, and the
 * guard's view for status; see sandbox/guard.h. The egress canary is
 * sandbox/guard_egress.c, the disk watchdog sandbox/guard_disk.c.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "base/thread.h"
#include "http/http.h"
#include "engine/docker.h"
#include "sandbox/cspec.h"
#include "sandbox/extern.h"
#include "sandbox/guard.h"
#include "sandbox/netpolicy.h"
#include "sandbox/sandbox.h"

#define RECREATE_NOTICE \
	"Note: the sandbox container was recreated for this version of the " \
	"server. Files in /sandbox are kept; packages and files installed " \
	"outside /sandbox are gone (install them again)."

/*
 * A container found as specified and running is trusted that long without
 * asking the engine again (an inspect per command costs a round trip and
 * more CPU than the rest of a command): only the engine's side changes it
 * (the model cannot), and a container that went away meanwhile fails the
 * exec (404, 409) or closes the channel, which calls guard_stale.
 */
#define FRESH_MS		2000

int
guard_identity(const char *container, char *id, char *started)
{
	struct guard_cache	*gc;
	int			 rc = -1;

	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(container);
	if (gc->fresh_at != 0 &&
	    clock_ms() - gc->fresh_at < FRESH_MS &&
	    strcmp(gc->fresh, container) == 0 &&
	    gc->fresh_id[0] != '\0') {
		memcpy(id, gc->fresh_id, sizeof(gc->fresh_id));
		memcpy(started, gc->fresh_started,
		    sizeof(gc->fresh_started));
		rc = 0;
	}
	pthread_mutex_unlock(&guard_mu);
	return rc;
}

void
guard_stale(const char *container)
{
	struct guard_cache	*gc;

	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(container);
	gc->fresh_at = 0;
	pthread_mutex_unlock(&guard_mu);
}

/* The container inspected, made and started first when needed. */
static int
inspect_running(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    struct json_object **resp, struct error *err)
{
	struct json_object	*state;
	long			 status;
	bool			 running = false, paused = false;
	int			 attempt;

	for (attempt = 0; ; attempt++) {
		if (guard_inspect(d, cs, false, &status, resp, err) == -1)
			return -1;
		if (*resp != NULL) {
			state = js_get(*resp, "State", json_type_object);
			js_bool(state, "Running", &running);
			js_bool(state, "Paused", &paused);
			if (running && !paused)
				return 0;
		}
		json_object_put(*resp);
		*resp = NULL;
		if (attempt > 0)
			return error_kind(err, ERR_UNAVAILABLE, "container %s does not "
			    "stay running", cspec_container(cs));
		if (sandbox_ensure(sb, err) == -1) {
			/* The engine makes the container, then fails its start. */
			if (cspec_egress(cs) == EGRESS_INTERNET && err != NULL &&
			    strstr(err->msg, "network") != NULL &&
			    strstr(err->msg, "not found") != NULL)
				error_kind(err, ERR_UNAVAILABLE, "the sandbox's network %s is "
				    "missing: run containers/netpolicy.sh apply as "
				    "root (it makes the network and its firewall "
				    "rules)", cspec_network(cs));
			return -1;
		}
	}
}

static int
remove_container(struct docker *d, const char *id, struct error *err)
{
	struct json_object	*resp = NULL;
	char			 path[160];
	long			 status;
	int			 rc = -1;

	/* By Id: a concurrent recreation's new container is never hit. */
	snprintf(path, sizeof(path), "/containers/%s?force=true&v=false", id);
	if (docker_request(d, "DELETE", path, NULL, &status, &resp, err) == -1)
		goto out;
	if (status != 204 && status != 404 && status != 409) {
		error_kind(err, ERR_UPSTREAM, "cannot remove the container: HTTP %ld: "
		    "%.200s", status, docker_message(resp));
		goto out;
	}
	rc = 0;
out:
	json_object_put(resp);
	return rc;
}

static int
update_limits(struct docker *d, const struct cspec *cs, struct error *err)
{
	struct json_object	*body = cspec_update_body(cs), *resp = NULL;
	char			 path[192];
	long			 status;
	int			 rc = -1;

	snprintf(path, sizeof(path), "/containers/%s/update",
	    cspec_container(cs));
	if (docker_request(d, "POST", path, body, &status, &resp, err) == -1)
		goto out;
	if (status != 200) {
		error_kind(err, ERR_UPSTREAM, "cannot update the limits of container "
		    "%s: HTTP %ld: %.200s", cspec_container(cs), status,
		    docker_message(resp));
		goto out;
	}
	rc = 0;
out:
	json_object_put(body);
	json_object_put(resp);
	return rc;
}

/* The container's checked Id (hex), or NULL. */
static const char *
container_id(struct json_object *c)
{
	const char *id = js_str_max(c, "Id", 128);

	if (id == NULL || id[0] == '\0' ||
	    strspn(id, "0123456789abcdef") != strlen(id))
		return NULL;
	return id;
}

int
guard_recreate(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    struct error *err)
{
	struct json_object	*c = NULL;
	const char		*id;
	long			 status;
	int			 rc = -1;

	if (guard_inspect(d, cs, false, &status, &c, err) == -1)
		goto out;
	if (c != NULL) {
		if ((id = container_id(c)) == NULL) {
			error_kind(err, ERR_UPSTREAM, "the engine gave no container Id");
			goto out;
		}
		if (remove_container(d, id, err) == -1)
			goto out;
		log_info("removed container %s (%.12s) to recreate it",
		    cspec_container(cs), id);
	}
	pthread_mutex_lock(&guard_mu);
	guard_slot_reset(guard_slot(cspec_container(cs)));
	pthread_mutex_unlock(&guard_mu);
	rc = sandbox_ensure(sb, err);
out:
	json_object_put(c);
	return rc;
}

/*
 * The container compared with its spec before anything starts it (a
 * weaker one never runs): changed limits updated in place, an older
 * version recreated on the same volume (*notice says so), a weaker one
 * refused; then inspected running, made and started first when needed.
 * 0 with *c (the caller puts it, also on failure) and *v, or -1.
 */
static int
spec_check(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    struct json_object **c, enum cspec_verdict *v, char **notice,
    struct error *err)
{
	char	 diff[400];
	bool	 running, paused = false;
	long	 status;

	*v = CSPEC_OK;
	if (guard_inspect(d, cs, false, &status, c, err) == -1)
		return -1;
	*v = *c == NULL ? CSPEC_OK : cspec_compare(cs, *c, diff, sizeof(diff));
	switch (*v) {
	case CSPEC_OK:
		break;
	case CSPEC_UPDATE:
		log_info("container %s: %s: updating in place",
		    cspec_container(cs), diff);
		if (update_limits(d, cs, err) == -1)
			return -1;
		break;
	case CSPEC_RECREATE:
		log_info("container %s: %s: recreating it on the same volume",
		    cspec_container(cs), diff);
		json_object_put(*c);
		*c = NULL;
		if (guard_recreate(sb, d, cs, err) == -1)
			return -1;
		if ((*notice = strdup(RECREATE_NOTICE)) == NULL)
			return error_set(err, "out of memory");
		break;
	case CSPEC_REFUSE:
		return sandbox_refusal(cs, diff, err);
	}
	if (*c != NULL) {
		running = false;
		js_bool(js_get(*c, "State", json_type_object), "Running",
		    &running);
		js_bool(js_get(*c, "State", json_type_object), "Paused",
		    &paused);
		if (!running || paused || *v == CSPEC_UPDATE) {
			json_object_put(*c);
			*c = NULL;
		}
	}
	if (*c == NULL && inspect_running(sb, d, cs, c, err) == -1)
		return -1;
	return 0;
}

/*
 * Container c was found as specified and running: trusted for FRESH_MS,
 * with its identity (guard_identity).
 */
static void
fresh_note(const struct cspec *cs, struct json_object *c, long long when)
{
	struct guard_cache	*gc;
	const char *id = js_str_max(c, "Id", 64);
	const char *at = js_str_max(js_get(c, "State", json_type_object),
	    "StartedAt", 64);

	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	snprintf(gc->fresh, sizeof(gc->fresh), "%s",
	    cspec_container(cs));
	gc->fresh_at = when;
	gc->fresh_id[0] = gc->fresh_started[0] = '\0';
	if (id != NULL && at != NULL && strlen(id) == 64 &&
	    strspn(id, "0123456789abcdef") == 64 &&
	    strspn(at, "0123456789-:.TZ+") == strlen(at)) {
		snprintf(gc->fresh_id, sizeof(gc->fresh_id),
		    "%s", id);
		snprintf(gc->fresh_started,
		    sizeof(gc->fresh_started), "%s", at);
	}
	pthread_mutex_unlock(&guard_mu);
}

/*
 * Refreshes beside the requests: a thread with its own handle (the
 * request's is the request's) inspects the container, runs the canary
 * when it is near due and samples the disk when near due; what it finds
 * replaces the verdict (a failure ends the trust at once: the next request
 * checks inline, as after any change). It never makes, starts or updates
 * a container. Counted, so the process waits for them when it stops.
 */
static pthread_mutex_t	 bg_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 bg_cv = PTHREAD_COND_INITIALIZER;
static int		 bg_running;
static bool		 bg_stop;
static bool		 bg_enabled;	/* a serving program's (guard_beside) */

struct refresh_job {
	const struct config	*cfg;
	char			*owner;
	char			 container[128];
};

/* May one start now? Not in plain CGI, nor when stopping. */
static bool
refresh_may_start(void)
{
	bool ok;

	if (http_serving_cgi())
		return false;
	pthread_mutex_lock(&bg_mu);
	ok = bg_enabled && !bg_stop;
	pthread_mutex_unlock(&bg_mu);
	return ok;
}

/* One refresh of sb's container. */
static void
refresh(struct sandbox *sb)
{
	const struct cspec	*cs = sb->spec;
	struct json_object	*c = NULL;
	struct error		 e;
	char			 diff[400], key[192], detail[200];
	bool			 running = false, paused = false, ok;
	long			 status;
	long long		 at = clock_ms();

	if (guard_inspect(sb->docker, cs, false, &status, &c, &e) == -1 ||
	    c == NULL) {
		guard_stale(cspec_container(cs));
		goto out;
	}
	js_bool(js_get(c, "State", json_type_object), "Running", &running);
	js_bool(js_get(c, "State", json_type_object), "Paused", &paused);
	if (!running || paused || cspec_compare(cs, c, diff,
	    sizeof(diff)) != CSPEC_OK) {
		guard_stale(cspec_container(cs));
		goto out;
	}
	if (cspec_egress(cs) != EGRESS_OPEN) {
		guard_cache_key(c, key, sizeof(key));
		if (guard_canary_verdict(sb, cs, c, key, CANARY_EVERY_MS -
		    AHEAD_CANARY_MS, &ok, detail, sizeof(detail), &e) == -1 ||
		    !ok) {
			guard_stale(cspec_container(cs));
			goto out;
		}
	}
	fresh_note(cs, c, at);
	guard_disk_ahead(sb, sb->docker, cs);
out:
	json_object_put(c);
}

static void *
refresh_thread(void *arg)
{
	struct refresh_job	*j = arg;
	struct sandbox		*sb = NULL;
	struct error		 e;

	if (sandbox_open(j->cfg, j->owner, &sb, &e) == 0 &&
	    strcmp(sb->container, j->container) == 0)
		refresh(sb);
	sandbox_close(sb);
	pthread_mutex_lock(&guard_mu);
	guard_slot(j->container)->refreshing = false;
	pthread_mutex_unlock(&guard_mu);
	free(j->owner);
	free(j);
	pthread_mutex_lock(&bg_mu);
	bg_running--;
	pthread_cond_broadcast(&bg_cv);
	pthread_mutex_unlock(&bg_mu);
	return NULL;
}

/* Start a refresh of sb's container beside the request (its flag set). */
static void
refresh_beside(struct sandbox *sb)
{
	struct refresh_job	*j;
	pthread_attr_t		 attr;
	pthread_t		 t;
	bool			 started = false;

	if ((j = calloc(1, sizeof(*j))) != NULL &&
	    (sb->owner == NULL || (j->owner = strdup(sb->owner)) != NULL)) {
		j->cfg = sb->cfg;
		snprintf(j->container, sizeof(j->container), "%s",
		    sb->container);
		pthread_mutex_lock(&bg_mu);
		if (!bg_stop) {
			pthread_attr_init(&attr);
			pthread_attr_setdetachstate(&attr,
			    PTHREAD_CREATE_DETACHED);
			pthread_attr_setstacksize(&attr, 512 * 1024);
			if (thread_start(&t, &attr, refresh_thread, j, "cs-guard") == 0) {
				bg_running++;
				started = true;
			}
			pthread_attr_destroy(&attr);
		}
		pthread_mutex_unlock(&bg_mu);
	}
	if (started)
		return;
	if (j != NULL) {
		free(j->owner);
		free(j);
	}
	pthread_mutex_lock(&guard_mu);
	guard_slot(sb->container)->refreshing = false;
	pthread_mutex_unlock(&guard_mu);
}

void
guard_beside(void)
{
	pthread_mutex_lock(&bg_mu);
	bg_enabled = true;
	pthread_mutex_unlock(&bg_mu);
}

void
guard_shutdown(void)
{
	pthread_mutex_lock(&bg_mu);
	bg_stop = true;
	while (bg_running > 0)
		pthread_cond_wait(&bg_cv, &bg_mu);
	pthread_mutex_unlock(&bg_mu);
}

int
guard_before_exec(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    char **notice, struct error *err)
{
	struct guard_cache	*gc;
	struct json_object	*c = NULL;
	enum cspec_verdict	 v = CSPEC_OK;
	char			 why[300];
	bool			 fresh, ahead = false;
	long long		 now, checked_at;
	int			 rc = -1;

	*notice = NULL;
	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	now = checked_at = clock_ms();
	fresh = gc->fresh_at != 0 &&
	    now - gc->fresh_at < FRESH_MS &&
	    strcmp(gc->fresh, cspec_container(cs)) == 0 &&
	    (cspec_egress(cs) == EGRESS_OPEN || (gc->canary_ok &&
	    now - gc->canary_at < CANARY_EVERY_MS));
	/*
	 * A verdict still within its bound but past half of it (the canary's:
	 * within AHEAD_CANARY_MS of its end) is refreshed beside this request,
	 * which goes on with it: no request waits for a refresh while commands
	 * keep coming, and a failing one is seen no later than before.
	 */
	if (fresh && !gc->refreshing && (now - gc->fresh_at >= FRESH_MS / 2 ||
	    (cspec_egress(cs) != EGRESS_OPEN &&
	    now - gc->canary_at >= CANARY_EVERY_MS - AHEAD_CANARY_MS)) &&
	    refresh_may_start()) {
		gc->refreshing = true;
		ahead = true;
	}
	pthread_mutex_unlock(&guard_mu);
	if (!fresh && (spec_check(sb, d, cs, &c, &v, notice, err) == -1 ||
	    guard_egress_check(sb, cs, c, err) == -1))
		goto out;
	if (guard_disk_check(sb, d, cs, why, sizeof(why))) {
		error_kind(err, ERR_NO_SPACE, "Refused: %s. Remove files to make "
		    "room (the operator can run `docker exec %s rm ...`, or "
		    "raise the limit); `sandboxctl status` shows the sizes.",
		    why, cspec_container(cs));
		goto out;
	}
	if (!fresh && v == CSPEC_OK && *notice == NULL)
		fresh_note(cs, c, checked_at);
	if (ahead)
		refresh_beside(sb);
	rc = 0;
out:
	if (rc == -1) {
		free(*notice);
		*notice = NULL;
	}
	json_object_put(c);
	return rc;
}

void
guard_status(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    struct json_object *st)
{
	struct json_object	*eg, *disk, *sand, *layer, *spec;
	struct json_object	*c = NULL;
	const char		*s;
	enum cspec_verdict	 v;
	char			 diff[400], why[200];
	long			 status;
	long long		 fs, used, lu;
	bool			 watch, running = false, host;
	struct error		 e;
	int			 r;

	eg = json_object_new_object();
	disk = json_object_new_object();
	spec = json_object_new_object();
	js_set(st, "egress", eg);
	js_set(st, "disk", disk);
	js_set(st, "spec", spec);
	js_set_str(eg, "policy", netpolicy_name(cspec_egress(cs)));
	js_set_str(eg, "allow", cspec_egress_allow(cs));
	js_set_str(spec, "runtime", cspec_runtime(cs)[0] != '\0' ?
	    cspec_runtime(cs) : "(engine default)");
	js_set_int(spec, "wanted_version", CSPEC_VERSION);

	if (cspec_egress(cs) == EGRESS_INTERNET)
		guard_egress_status_network(d, cs, eg);

	if (guard_inspect(d, cs, true, &status, &c, &e) == -1 || c == NULL) {
		js_set_str(spec, "verdict", c == NULL ? "no container" :
		    "unknown");
		goto out;
	}
	js_bool(js_get(c, "State", json_type_object), "Running", &running);
	if ((s = js_str_max(js_get(js_get(c, "Config", json_type_object),
	    "Labels", json_type_object), CSPEC_LABEL_VERSION, 20)) != NULL)
		js_set_str(spec, "version", s);
	v = cspec_compare(cs, c, diff, sizeof(diff));
	js_set_str(spec, "verdict", v == CSPEC_OK ? "as configured" :
	    v == CSPEC_UPDATE ? "limits differ: updated at the next call" :
	    v == CSPEC_RECREATE ? "older version: recreated at the next call" :
	    "refused: sandboxctl recreate");
	if (diff[0] != '\0')
		js_set_str(spec, "differences", diff);
	layer = json_object_new_object();
	js_set(disk, "layer", layer);
	js_set_int(layer, "limit_bytes", cspec_layer_limit(cs));
	if (js_int(c, "SizeRw", &lu) == 0)
		js_set_int(layer, "used_bytes", lu);
	sand = json_object_new_object();
	js_set(disk, "sandbox", sand);
	js_set_int(sand, "limit_bytes", cspec_disk_limit(cs));
	if (!running) {
		js_set_str(disk, "mode", "unknown (container not running)");
		goto out;
	}
	r = guard_sample_disk(sb, d, cs, &watch, &fs, &used, &host, why,
	    sizeof(why));
	if (r == 0 || host)
		js_set_str(disk, "mode", watch ? "watchdog" : "filesystem");
	if (r == 0) {
		js_set_int(sand, "used_bytes", used);
		js_set_int(sand, "fs_size_bytes", fs);
	} else
		js_set_str(sand, "error", why);
	js_set_str(sand, "measured", host && r == 0 &&
	    strcmp(why, "by the engine") == 0 ? "by the engine" : host ?
	    "on the host" : "by a script in the container (its root can "
	    "falsify it)");
	if (cspec_egress(cs) != EGRESS_OPEN) {
		guard_egress_status_canary(sb, cs, c, eg);
	}
out:
	json_object_put(c);
}

