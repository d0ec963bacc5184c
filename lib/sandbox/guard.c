/*
 * sandbox/guard.c: configuration drift, egress canary and disk watchdog
 * around commands; see sandbox/guard.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "sandbox/cspec.h"
#include "sandbox/disk_usage.h"
#include "sandbox/guard.h"
#include "sandbox/netpolicy.h"
#include "sandbox/sandbox.h"
#include "sandbox/scripts.h"

#define CANARY_EVERY_MS		60000	/* re-run the canary after this */
#define DISK_EVERY_MS		30000	/* between commands */
#define DISK_RUN_EVERY_MS	5000	/* while a command runs */
#define LAYER_EVERY_MS		60000
#define LAYER_RUN_EVERY_MS	30000
/*
 * The canary and a disk sample run through the container's bash, which the
 * model may have replaced by one that hangs: each has this deadline, and
 * after one passed it the handle runs no more of them (sandbox_script_hung):
 * the last verdicts stand, and a hang costs a call at most this once.
 */
#define SCRIPT_DEADLINE_S	6
#define SLOW_FACTOR		50	/* a sample taking t waits >= 50 t */
/*
 * Failed disk samples in a row (watchdog mode, or the mode not yet known)
 * after which /sandbox counts as over its limit: a container that breaks
 * its own measuring never keeps a stale "under".
 */
#define DISK_FAILS_MAX		3
#define RECREATE_NOTICE \
	"Note: the sandbox container was recreated for this version of the " \
	"server. Files in /sandbox are kept; packages and files installed " \
	"outside /sandbox are gone (install them again)."

/* Shared by the threads of the process; see the header. */
/*
 * A container found as specified and running is trusted that long without
 * asking the engine again (an inspect per command costs a round trip and
 * more CPU than the rest of a command): only the engine's side changes it
 * (the model cannot), and a container that went away meanwhile fails the
 * exec (404, 409) or closes the channel, which calls guard_stale.
 */
#define FRESH_MS		2000
static pthread_mutex_t	 mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t	 canary_mu = PTHREAD_MUTEX_INITIALIZER; /* one canary at a time */
static struct {
	char		 key[192];	/* container Id and StartedAt */
	long long	 canary_at;	/* monotonic ms; 0: not yet */
	bool		 canary_ok;
	char		 canary_detail[200];
	long long	 disk_at, disk_cost;
	bool		 disk_watch;	/* watchdog mode */
	bool		 disk_known;	/* the mode was found */
	int		 disk_fails;	/* failed samples in a row */
	char		 disk_why[200];	/* why the last one failed */
	long long	 fs_size, sandbox_used;
	long long	 layer_at, layer_cost;
	long long	 layer_used;
	char		 fresh[128];	/* container found as specified */
	long long	 fresh_at;	/* monotonic ms; 0: not now */
	char		 fresh_id[72], fresh_started[72];	/* its identity */
} cache;
/*
 * The container Id last found in watchdog mode: its mounts are fixed, so
 * its /sandbox stays watched across restarts (which clear the cache).
 */
static char		 watched_id[80];

int
guard_identity(const char *container, char *id, char *started)
{
	int rc = -1;

	pthread_mutex_lock(&mu);
	if (cache.fresh_at != 0 && clock_ms() - cache.fresh_at < FRESH_MS &&
	    strcmp(cache.fresh, container) == 0 && cache.fresh_id[0] != '\0') {
		memcpy(id, cache.fresh_id, sizeof(cache.fresh_id));
		memcpy(started, cache.fresh_started, sizeof(cache.fresh_started));
		rc = 0;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

void
guard_stale(void)
{
	pthread_mutex_lock(&mu);
	cache.fresh_at = 0;
	pthread_mutex_unlock(&mu);
}

static void
human(char *b, size_t n, long long v)
{
	if (v >= 1LL << 30)
		snprintf(b, n, "%.1f GiB", (double)v / (1LL << 30));
	else if (v >= 1LL << 20)
		snprintf(b, n, "%.1f MiB", (double)v / (1LL << 20));
	else
		snprintf(b, n, "%lld KiB", v / 1024);
}

/* GET /containers/NAME/json[?size=1]: 0 with *status, *resp (200 only). */
static int
inspect(struct docker *d, const struct cspec *cs, bool size, long *status,
    struct json_object **resp, struct error *err)
{
	char path[256];

	*resp = NULL;
	snprintf(path, sizeof(path), "/containers/%s/json%s",
	    cspec_container(cs), size ? "?size=1" : "");
	if (docker_request(d, "GET", path, NULL, status, resp, err) == -1)
		return -1;
	if (*status != 200 && *status != 404) {
		error_kind(err, ERR_UPSTREAM, "cannot inspect container %s: HTTP %ld: "
		    "%.200s", cspec_container(cs), *status,
		    docker_message(*resp));
		json_object_put(*resp);
		*resp = NULL;
		return -1;
	}
	if (*status != 200) {
		json_object_put(*resp);
		*resp = NULL;
	}
	return 0;
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
		if (inspect(d, cs, false, &status, resp, err) == -1)
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

/* Container Id and StartedAt: what the cached samples belong to. */
static void
cache_key(struct json_object *c, char *key, size_t n)
{
	const char *id = js_str_max(c, "Id", 80);
	const char *at = js_str_max(js_get(c, "State", json_type_object),
	    "StartedAt", 64);

	snprintf(key, n, "%s@%s", id != NULL ? id : "?", at != NULL ? at : "?");
}

/* Forget samples of another container; the caller holds mu. */
static void
cache_use(const char *key)
{
	if (strcmp(cache.key, key) == 0)
		return;
	memset(&cache, 0, sizeof(cache));
	snprintf(cache.key, sizeof(cache.key), "%s", key);
}

/* The gateway of the policy's network, a checked IPv4 address, or "". */
static void
gateway_of(struct json_object *c, const char *network, char *gw, size_t n)
{
	struct json_object *nets, *net;
	const char *s;

	gw[0] = '\0';
	nets = js_get(js_get(c, "NetworkSettings", json_type_object),
	    "Networks", json_type_object);
	net = js_get(nets, network, json_type_object);
	if ((s = js_str_max(net, "Gateway", 15)) != NULL &&
	    config_valid_ipv4(s, false))
		snprintf(gw, n, "%s", s);
}

/*
 * Run the canary now: 1 when the policy holds, 0 when it does not, -1 when
 * the canary could not run (the engine's error in detail).
 */
static int
run_canary(struct sandbox *sb, const struct cspec *cs, struct json_object *c,
    char *detail, size_t n)
{
	char		 gw[16], out[512];
	const char	*args[3];
	struct error	 e;
	int		 code;

	gw[0] = '\0';
	if (cspec_egress(cs) == EGRESS_INTERNET) {
		gateway_of(c, cspec_network(cs), gw, sizeof(gw));
		if (gw[0] == '\0') {
			snprintf(detail, n, "the container has no gateway on "
			    "network %s", cspec_network(cs));
			return 0;
		}
	}
	args[0] = netpolicy_name(cspec_egress(cs));
	args[1] = gw;
	args[2] = NULL;
	if (sandbox_script_hung(sb)) {
		snprintf(detail, n, "the canary could not run: a script in the "
		    "sandbox did not finish (is /bin/bash intact?)");
		return -1;
	}
	if (sandbox_script(sb, SCRIPT_CANARY, args, out, sizeof(out), NULL,
	    NULL, SCRIPT_DEADLINE_S, &code, &e) == -1) {
		snprintf(detail, n, "the canary could not run: %.150s", e.msg);
		return -1;
	}
	return netpolicy_canary_parse(out, detail, n) ? 1 : 0;
}

/*
 * The volume at /sandbox opened on the host, when the engine is local (a
 * unix socket) and its Mountpoint (GET /volumes/NAME) is readable here:
 * a directory descriptor, or -1 with why. The path is the engine's; what
 * lies below it is the container's. A volume mounted from elsewhere (the
 * local driver with options, another driver) counts only when its mount is
 * seen here (another device than its parent's), not the bare directory.
 */
static int
host_volume(struct docker *d, const struct cspec *cs, char *why, size_t n)
{
	struct json_object	*v = NULL, *opts;
	struct stat		 st, up;
	struct error		 e;
	const char		*mp, *driver;
	char			 path[192];
	long			 status;
	int			 fd = -1, pfd;

	if (strncmp(docker_host(d), "unix://", 7) != 0) {
		snprintf(why, n, "the engine is not on this host");
		return -1;
	}
	snprintf(path, sizeof(path), "/volumes/%s", cspec_volume(cs));
	if (docker_request(d, "GET", path, NULL, &status, &v, &e) == -1) {
		snprintf(why, n, "%.150s", e.msg);
		return -1;
	}
	mp = js_str_max(v, "Mountpoint", 1024);
	if (status != 200 || mp == NULL || mp[0] != '/') {
		snprintf(why, n, "the engine gives no Mountpoint of volume %s",
		    cspec_volume(cs));
		goto out;
	}
	if ((fd = open(mp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		snprintf(why, n, "%.100s: %s", mp, strerror(errno));
		goto out;
	}
	opts = js_get(v, "Options", json_type_object);
	driver = js_str_max(v, "Driver", 64);
	if ((opts != NULL && json_object_object_length(opts) > 0) ||
	    driver == NULL || strcmp(driver, "local") != 0) {
		pfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd == -1 || fstat(fd, &st) == -1 ||
		    fstat(pfd, &up) == -1 || st.st_dev == up.st_dev) {
			snprintf(why, n, "the mount of volume %s is not seen "
			    "here", cspec_volume(cs));
			close(fd);
			fd = -1;
		}
		if (pfd != -1)
			close(pfd);
	}
out:
	json_object_put(v);
	return fd;
}

/*
 * Sample /sandbox: 0 with the mode and sizes, or -1 with why. *host says
 * they were measured on the host (the mode in *watch then holds even when
 * the walk failed), not by a script in the container.
 */
static int
sample_disk(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    bool *watch, long long *fs_size, long long *used, bool *host, char *why,
    size_t n)
{
	char		 max[32], out[256], mode[16], no[200];
	const char	*args[] = { max, NULL };
	const char	*p;
	char		*end;
	struct statfs	 sf;
	struct error	 e;
	int		 code, fd, rc;
	long long	 lim = cspec_disk_limit(cs);
	/* A fixed-size image of the limit shows a little less than it. */
	long long	 most = lim + lim / 20 + (16LL << 20);

	*host = false;
	*watch = false;
	if ((fd = host_volume(d, cs, no, sizeof(no))) != -1) {
		if (fstatfs(fd, &sf) == -1) {
			snprintf(why, n, "statfs of its volume: %s",
			    strerror(errno));
			close(fd);
			return -1;
		}
		*host = true;
		*fs_size = (long long)sf.f_blocks * (long long)sf.f_frsize;
		*watch = *fs_size > most;
		rc = 0;
		if (!*watch)
			*used = (long long)(sf.f_blocks - sf.f_bfree) *
			    (long long)sf.f_frsize;
		else if ((rc = disk_usage(fd, clock_ms() +
		    SCRIPT_DEADLINE_S * 1000LL, used, &e)) == -1)
			snprintf(why, n, "its volume on the host: %.150s",
			    e.msg);
		close(fd);
		return rc;
	}
	if (sandbox_script_hung(sb)) {
		snprintf(why, n, "a script in the sandbox did not finish (is "
		    "/bin/bash intact?)");
		return -1;
	}
	snprintf(max, sizeof(max), "%lld", most);
	if (sandbox_script(sb, SCRIPT_DISK, args, out, sizeof(out), NULL, NULL,
	    SCRIPT_DEADLINE_S, &code, &e) == -1) {
		snprintf(why, n, "%.150s", e.msg);
		return -1;
	}
	if (code != 0) {
		snprintf(why, n, "df and du in the sandbox exited with %d", code);
		return -1;
	}
	snprintf(why, n, "df and du in the sandbox gave no sizes");
	p = out;
	if (strncmp(p, "filesystem ", 11) == 0)
		snprintf(mode, sizeof(mode), "filesystem");
	else if (strncmp(p, "watchdog ", 9) == 0)
		snprintf(mode, sizeof(mode), "watchdog");
	else
		return -1;
	p += strlen(mode) + 1;
	*fs_size = strtoll(p, &end, 10);
	if (end == p)
		return -1;
	p = end;
	*used = strtoll(p, &end, 10);
	if (end == p || *used < 0)
		return -1;
	*watch = strcmp(mode, "watchdog") == 0;
	why[0] = '\0';
	return 0;
}

/* SizeRw of the container: 0 or -1. */
static int
sample_layer(struct docker *d, const struct cspec *cs, long long *used)
{
	struct json_object	*c = NULL;
	struct error		 e;
	long			 status;
	int			 rc = -1;

	if (inspect(d, cs, true, &status, &c, &e) == 0 && c != NULL &&
	    js_int(c, "SizeRw", used) == 0 && *used >= 0)
		rc = 0;
	json_object_put(c);
	return rc;
}

/* Create (over) or remove the file telling other processes a limit is passed. */
static void
mark_over(const char *path, bool over)
{
	int fd;

	if (!over) {
		if (unlink(path) == -1 && errno != ENOENT)
			log_warn("%s: %s", path, strerror(errno));
		return;
	}
	if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == -1)
		log_warn("%s: %s", path, strerror(errno));
	else
		close(fd);
}

/*
 * Refresh stale disk samples (every, layer_every: the wanted age) and say
 * in why whether a limit is passed: 1 over, 0 under or unknown.
 */
static int
check_disk(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    long long every, long long layer_every, char *why, size_t n)
{
	long long	 t, fs = 0, used = 0, layer = 0, at, cost;
	bool		 watch = false, need_disk, need_layer, shared_over, host;
	char		 a[32], b[32], failed[200], id[80];
	int		 over = 0, sampled = 0, r;

	/* Another process saw a limit passed: its verdict holds here too. */
	shared_over = access(cspec_over_file(cs), F_OK) == 0;
	pthread_mutex_lock(&mu);
	t = clock_ms();
	/* Over a limit: sample each time, so removing files lifts it at once. */
	need_disk = cache.disk_at == 0 || t - cache.disk_at >=
	    (every > SLOW_FACTOR * cache.disk_cost ? every :
	    SLOW_FACTOR * cache.disk_cost) ||
	    (cache.disk_watch && cache.sandbox_used > cspec_disk_limit(cs)) ||
	    cache.disk_fails >= DISK_FAILS_MAX || shared_over;
	need_layer = cache.layer_at == 0 || t - cache.layer_at >=
	    (layer_every > SLOW_FACTOR * cache.layer_cost ? layer_every :
	    SLOW_FACTOR * cache.layer_cost) ||
	    cache.layer_used > cspec_layer_limit(cs) || shared_over;
	/* One sampler at a time: others use what is there. */
	if (need_disk)
		cache.disk_at = t;
	if (need_layer)
		cache.layer_at = t;
	pthread_mutex_unlock(&mu);

	if (need_disk) {
		at = clock_ms();
		r = sample_disk(sb, d, cs, &watch, &fs, &used, &host, failed,
		    sizeof(failed));
		cost = clock_ms() - at;
		pthread_mutex_lock(&mu);
		snprintf(id, sizeof(id), "%.*s", (int)strcspn(cache.key, "@"),
		    cache.key);
		if (r == 0 && !host && !watch && (cache.disk_watch ||
		    (id[0] != '\0' && strcmp(id, watched_id) == 0))) {
			/* The container's word never switches the watchdog off. */
			snprintf(failed, sizeof(failed), "the sandbox claims a "
			    "fixed-size file system, but /sandbox is watched");
			r = -1;
			watch = true;
		}
		if (r == 0 || host) {
			cache.disk_watch = watch;
			cache.disk_known = true;
			if (watch && id[0] != '\0' && strcmp(id, "?") != 0)
				snprintf(watched_id, sizeof(watched_id), "%s",
				    id);
		}
		if (r == 0) {
			sampled++;
			cache.fs_size = fs;
			cache.sandbox_used = used;
			cache.disk_cost = cost;
			cache.disk_fails = 0;
		} else {
			if ((cache.disk_watch || !cache.disk_known) &&
			    cache.disk_fails < DISK_FAILS_MAX)
				cache.disk_fails++;
			snprintf(cache.disk_why, sizeof(cache.disk_why), "%s",
			    failed);
			/* Its bash hangs: try again only after SLOW_FACTOR times. */
			if (!host && sandbox_script_hung(sb))
				cache.disk_cost = SCRIPT_DEADLINE_S * 1000LL;
		}
		pthread_mutex_unlock(&mu);
	}
	if (need_layer) {
		at = clock_ms();
		if (sample_layer(d, cs, &layer) == 0) {
			sampled++;
			cost = clock_ms() - at;
			pthread_mutex_lock(&mu);
			cache.layer_used = layer;
			cache.layer_cost = cost;
			pthread_mutex_unlock(&mu);
		}
	}
	pthread_mutex_lock(&mu);
	if (cache.disk_watch && cache.sandbox_used > cspec_disk_limit(cs)) {
		human(a, sizeof(a), cache.sandbox_used);
		human(b, sizeof(b), cspec_disk_limit(cs));
		snprintf(why, n, "/sandbox holds %s, more than its limit of %s "
		    "(SANDBOX_DISK_LIMIT, watched)", a, b);
		over = 1;
	} else if (cache.disk_fails >= DISK_FAILS_MAX &&
	    (cache.disk_watch || !cache.disk_known)) {
		human(b, sizeof(b), cspec_disk_limit(cs));
		snprintf(why, n, "the size of /sandbox could not be measured: "
		    "%s (%d samples in a row), so it counts as over its limit "
		    "of %s (SANDBOX_DISK_LIMIT, watched)", cache.disk_why,
		    cache.disk_fails, b);
		over = 1;
	} else if (cache.layer_used > cspec_layer_limit(cs)) {
		human(a, sizeof(a), cache.layer_used);
		human(b, sizeof(b), cspec_layer_limit(cs));
		snprintf(why, n, "the container's own layer (packages, files "
		    "outside /sandbox) holds %s, more than its limit of %s "
		    "(SANDBOX_LAYER_LIMIT)", a, b);
		over = 1;
	}
	pthread_mutex_unlock(&mu);
	if (over && !shared_over)
		mark_over(cspec_over_file(cs), true);
	else if (!over && shared_over && sampled == 2)
		mark_over(cspec_over_file(cs), false);
	return over;
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

/* The error of a container weaker than wanted. Returns -1. */
static int
refusal(const struct cspec *cs, const char *diff, struct error *err)
{
	return error_kind(err, ERR_DENIED, "The sandbox container %s is not as "
	    "configured: %s. Commands are refused. The operator can recreate "
	    "it with `sandboxctl recreate` (files in /sandbox are kept; "
	    "packages installed outside it are not).", cspec_container(cs),
	    diff);
}

bool
guard_refuses(const struct cspec *cs, struct json_object *inspect,
    struct error *err)
{
	char diff[400];

	if (cspec_compare(cs, inspect, diff, sizeof(diff)) != CSPEC_REFUSE)
		return false;
	refusal(cs, diff, err);
	return true;
}

int
guard_recreate(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    struct error *err)
{
	struct json_object	*c = NULL;
	const char		*id;
	long			 status;
	int			 rc = -1;

	if (inspect(d, cs, false, &status, &c, err) == -1)
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
	pthread_mutex_lock(&mu);
	memset(&cache, 0, sizeof(cache));
	pthread_mutex_unlock(&mu);
	rc = sandbox_ensure(sb, err);
out:
	json_object_put(c);
	return rc;
}

/*
 * The egress verdict when the canary is due: 0 with *ok and detail, or -1
 * (err) when it could not run and no verdict stands. One canary at a time
 * in a process: simultaneous ones draw the host's ICMP answers past its
 * rate limit and read "dropped"; a thread that waited takes the fresh
 * verdict.
 */
static int
canary_verdict(struct sandbox *sb, const struct cspec *cs,
    struct json_object *c, const char *key, bool *ok, char *detail, size_t n,
    struct error *err)
{
	bool	due, had;
	int	r, rc = 0;

	pthread_mutex_lock(&canary_mu);
	pthread_mutex_lock(&mu);
	cache_use(key);
	had = cache.canary_at != 0;
	due = !had || clock_ms() - cache.canary_at >= CANARY_EVERY_MS ||
	    !cache.canary_ok;
	*ok = cache.canary_ok;
	snprintf(detail, n, "%s", cache.canary_detail);
	pthread_mutex_unlock(&mu);
	if (!due)
		goto out;
	r = run_canary(sb, cs, c, detail, n);
	if (r == -1 && sandbox_script_hung(sb) && had) {
		/*
		 * A bash that hangs: the last verdict stands (the rules are
		 * the host's, not the container's), asked again in a while.
		 */
		log_warn("egress canary of container %s: %s; keeping the last "
		    "verdict", cspec_container(cs), detail);
		r = *ok ? 1 : 0;
		pthread_mutex_lock(&mu);
		snprintf(detail, n, "%s", cache.canary_detail);
		pthread_mutex_unlock(&mu);
	} else if (r == -1) {
		error_kind(err, ERR_UNAVAILABLE, "%s", detail);
		rc = -1;
		goto out;
	}
	*ok = r == 1;
	pthread_mutex_lock(&mu);
	cache.canary_at = clock_ms();
	cache.canary_ok = *ok;
	snprintf(cache.canary_detail, sizeof(cache.canary_detail), "%s",
	    detail);
	pthread_mutex_unlock(&mu);
	if (!*ok)
		log_warn("egress canary of container %s: %s",
		    cspec_container(cs), detail);
out:
	pthread_mutex_unlock(&canary_mu);
	return rc;
}

int
guard_before_exec(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    char **notice, struct error *err)
{
	struct json_object	*c = NULL;
	enum cspec_verdict	 v = CSPEC_OK;
	char			 diff[400], key[192], detail[200], why[300];
	bool			 canary_due, ok, running, paused = false;
	bool			 fresh;
	long			 status;
	int			 rc = -1;

	*notice = NULL;
	pthread_mutex_lock(&mu);
	fresh = cache.fresh_at != 0 && clock_ms() - cache.fresh_at < FRESH_MS &&
	    strcmp(cache.fresh, cspec_container(cs)) == 0 &&
	    (cspec_egress(cs) == EGRESS_OPEN || (cache.canary_ok &&
	    clock_ms() - cache.canary_at < CANARY_EVERY_MS));
	pthread_mutex_unlock(&mu);
	if (fresh)
		goto disk;
	/* Compare before starting anything: a weaker container never runs. */
	if (inspect(d, cs, false, &status, &c, err) == -1)
		goto out;
	v = c == NULL ? CSPEC_OK : cspec_compare(cs, c, diff, sizeof(diff));
	switch (v) {
	case CSPEC_OK:
		break;
	case CSPEC_UPDATE:
		log_info("container %s: %s: updating in place",
		    cspec_container(cs), diff);
		if (update_limits(d, cs, err) == -1)
			goto out;
		break;
	case CSPEC_RECREATE:
		log_info("container %s: %s: recreating it on the same volume",
		    cspec_container(cs), diff);
		json_object_put(c);
		c = NULL;
		if (guard_recreate(sb, d, cs, err) == -1)
			goto out;
		if ((*notice = strdup(RECREATE_NOTICE)) == NULL) {
			error_set(err, "out of memory");
			goto out;
		}
		break;
	case CSPEC_REFUSE:
		refusal(cs, diff, err);
		goto out;
	}
	if (c != NULL) {
		running = false;
		js_bool(js_get(c, "State", json_type_object), "Running",
		    &running);
		js_bool(js_get(c, "State", json_type_object), "Paused", &paused);
		if (!running || paused || v == CSPEC_UPDATE) {
			json_object_put(c);
			c = NULL;
		}
	}
	if (c == NULL && inspect_running(sb, d, cs, &c, err) == -1)
		goto out;

	if (cspec_egress(cs) != EGRESS_OPEN) {
		cache_key(c, key, sizeof(key));
		pthread_mutex_lock(&mu);
		cache_use(key);
		canary_due = cache.canary_at == 0 ||
		    clock_ms() - cache.canary_at >= CANARY_EVERY_MS ||
		    !cache.canary_ok;
		ok = cache.canary_ok;
		snprintf(detail, sizeof(detail), "%s", cache.canary_detail);
		pthread_mutex_unlock(&mu);
		if (canary_due && canary_verdict(sb, cs, c, key, &ok, detail,
		    sizeof(detail), err) == -1)
			goto out;
		if (!ok) {
			error_kind(err, ERR_UNAVAILABLE, "The sandbox's egress policy "
			    "(%s) is not in force: %s. Commands are refused "
			    "until the operator installs the firewall rules: "
			    "containers/netpolicy.sh apply (as root; systemd: "
			    "code-sandbox-firewall.service), then `sandboxctl "
			    "status`.", netpolicy_name(cspec_egress(cs)),
			    detail);
			goto out;
		}
	} else {
		cache_key(c, key, sizeof(key));
		pthread_mutex_lock(&mu);
		cache_use(key);
		pthread_mutex_unlock(&mu);
	}

disk:
	if (check_disk(sb, d, cs, DISK_EVERY_MS, LAYER_EVERY_MS, why,
	    sizeof(why)) == 1) {
		error_kind(err, ERR_NO_SPACE, "Refused: %s. Remove files to make room "
		    "(the operator can run `docker exec %s rm ...`, or raise the "
		    "limit); `sandboxctl status` shows the sizes.", why,
		    cspec_container(cs));
		goto out;
	}
	if (!fresh && v == CSPEC_OK && *notice == NULL) {
		const char *id = js_str_max(c, "Id", 64);
		const char *at = js_str_max(js_get(c, "State",
		    json_type_object), "StartedAt", 64);

		pthread_mutex_lock(&mu);
		snprintf(cache.fresh, sizeof(cache.fresh), "%s",
		    cspec_container(cs));
		cache.fresh_at = clock_ms();
		cache.fresh_id[0] = cache.fresh_started[0] = '\0';
		if (id != NULL && at != NULL && strlen(id) == 64 &&
		    strspn(id, "0123456789abcdef") == 64 &&
		    strspn(at, "0123456789-:.TZ+") == strlen(at)) {
			snprintf(cache.fresh_id, sizeof(cache.fresh_id), "%s", id);
			snprintf(cache.fresh_started,
			    sizeof(cache.fresh_started), "%s", at);
		}
		pthread_mutex_unlock(&mu);
	}
	rc = 0;
out:
	if (rc == -1) {
		free(*notice);
		*notice = NULL;
	}
	json_object_put(c);
	return rc;
}

int
guard_during_exec(struct sandbox *sb, struct docker *d,
    const struct cspec *cs, char *why, size_t n)
{
	bool watch;

	pthread_mutex_lock(&mu);
	watch = cache.disk_watch;
	pthread_mutex_unlock(&mu);
	return check_disk(sb, d, cs, watch ? DISK_RUN_EVERY_MS : DISK_EVERY_MS,
	    LAYER_RUN_EVERY_MS, why, n);
}

char *
guard_after_exec(const struct cspec *cs, const char *out, const char *err)
{
	char	 note[256], b[32];
	bool	 watch;

	if (strstr(err, "No space left on device") == NULL &&
	    strstr(out, "No space left on device") == NULL)
		return NULL;
	pthread_mutex_lock(&mu);
	watch = cache.disk_watch;
	pthread_mutex_unlock(&mu);
	human(b, sizeof(b), cspec_disk_limit(cs));
	if (watch)
		snprintf(note, sizeof(note), "Note: a file system in the sandbox "
		    "is full (No space left on device).");
	else
		snprintf(note, sizeof(note), "Note: /sandbox is full: its file "
		    "system holds at most %s (SANDBOX_DISK_LIMIT). Remove files "
		    "to make room.", b);
	return strdup(note);
}

void
guard_status(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    struct json_object *st)
{
	struct json_object	*eg, *disk, *sand, *layer, *spec, *can, *rules;
	struct json_object	*c = NULL, *net = NULL;
	const char		*bridge = NULL, *s;
	enum cspec_verdict	 v;
	char			 diff[400], detail[300], gw[16], path[192];
	char			 why[200];
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

	if (cspec_egress(cs) == EGRESS_INTERNET) {
		js_set_str(eg, "network", cspec_network(cs));
		js_set_str(eg, "ipv6", "off: the network has no IPv6 and the "
		    "host rejects IPv6 from its bridge");
		snprintf(path, sizeof(path), "/networks/%s", cspec_network(cs));
		if (docker_request(d, "GET", path, NULL, &status, &net,
		    &e) == 0 && status == 200) {
			bridge = js_str_max(js_get(net, "Options",
			    json_type_object),
			    "com.docker.network.bridge.name", 15);
			if (bridge != NULL && bridge[0] != '\0' &&
			    strspn(bridge, "abcdefghijklmnopqrstuvwxyz0123456789-")
			    == strlen(bridge))
				js_set_str(eg, "bridge", bridge);
			else
				bridge = NULL;
		} else
			js_set_str(eg, "network_error", "the network is missing: "
			    "run containers/netpolicy.sh apply as root");
		rules = json_object_new_object();
		js_set(eg, "rules", rules);
		if (bridge == NULL) {
			js_set(rules, "present", NULL);
			js_set_str(rules, "detail", "no bridge to check");
		} else {
			r = netpolicy_rules_present(bridge, detail,
			    sizeof(detail));
			js_set(rules, "present", r == -1 ? NULL :
			    json_object_new_boolean(r == 1));
			js_set_str(rules, "detail", detail);
		}
	}

	if (inspect(d, cs, true, &status, &c, &e) == -1 || c == NULL) {
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
	r = sample_disk(sb, d, cs, &watch, &fs, &used, &host, why,
	    sizeof(why));
	if (r == 0 || host)
		js_set_str(disk, "mode", watch ? "watchdog" : "filesystem");
	if (r == 0) {
		js_set_int(sand, "used_bytes", used);
		js_set_int(sand, "fs_size_bytes", fs);
	} else
		js_set_str(sand, "error", why);
	js_set_str(sand, "measured", host ? "on the host" : "by a script in "
	    "the container (its root can falsify it)");
	if (cspec_egress(cs) != EGRESS_OPEN) {
		can = json_object_new_object();
		js_set(eg, "canary", can);
		gateway_of(c, cspec_network(cs), gw, sizeof(gw));
		if (gw[0] != '\0')
			js_set_str(eg, "gateway", gw);
		js_set_bool(can, "ok", run_canary(sb, cs, c, detail,
		    sizeof(detail)) == 1);
		js_set_str(can, "detail", detail);
	}
out:
	json_object_put(c);
	json_object_put(net);
}
