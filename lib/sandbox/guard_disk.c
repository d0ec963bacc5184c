/*
 * sandbox/guard_disk.c: the disk watchdog around commands: /sandbox and the
 * container's own layer sampled, on the host when it can be, and measured
 * against their limits; see sandbox/guard.h. The lower of the guard's two
 * files: it also holds what they share (the cache, guard_inspect), and
 * sandbox/guard.c builds on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "sandbox/cspec.h"
#include "sandbox/disk_usage.h"
#include "sandbox/extern.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"
#include "sandbox/scripts.h"

#define DISK_EVERY_MS		30000	/* between commands */
#define DISK_RUN_EVERY_MS	5000	/* while a command runs */
#define LAYER_EVERY_MS		60000
#define LAYER_RUN_EVERY_MS	30000
#define SLOW_FACTOR		50	/* a sample taking t waits >= 50 t */
/*
 * Failed disk samples in a row (watchdog mode, or the mode not yet known)
 * after which /sandbox counts as over its limit: a container that breaks
 * its own measuring never keeps a stale "under".
 */
#define DISK_FAILS_MAX		3

/* Shared by the threads of the process (sandbox/extern.h). */
pthread_mutex_t		 guard_mu = PTHREAD_MUTEX_INITIALIZER;
/* One entry per container, the least recently used given to a new one. */
#define GUARD_SLOTS		64
static struct guard_cache guard_slots[GUARD_SLOTS];
static unsigned long long guard_tick;

struct guard_cache *
guard_slot(const char *container)
{
	struct guard_cache	*gc, *old = &guard_slots[0];
	size_t			 i;

	for (i = 0; i < GUARD_SLOTS; i++) {
		gc = &guard_slots[i];
		if (gc->used != 0 && strcmp(gc->container, container) == 0) {
			gc->used = ++guard_tick;
			return gc;
		}
		if (gc->used < old->used)
			old = gc;
	}
	memset(old, 0, sizeof(*old));
	snprintf(old->container, sizeof(old->container), "%s", container);
	old->used = ++guard_tick;
	return old;
}

void
guard_slot_reset(struct guard_cache *gc)
{
	struct guard_cache keep = *gc;

	memset(gc, 0, sizeof(*gc));
	memcpy(gc->container, keep.container, sizeof(gc->container));
	memcpy(gc->watched_id, keep.watched_id, sizeof(gc->watched_id));
	gc->used = keep.used;
}

int
guard_inspect(struct docker *d, const struct cspec *cs, bool size, long *status,
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
 * A volume this host cannot read (the engine elsewhere, or its Mountpoint
 * not readable by this user, as under the units' own user) measured by the
 * engine itself (GET /system/df: each volume's UsageData.Size, which the
 * engine computes as root), never by the container. Only for a plain
 * local volume (driver local, no options): a folder on the engine's disk,
 * so watched. 1 with *used, 0 when the volume is not such a plain one (the
 * container's script then tells the mode), -1 with why.
 */
static int
engine_volume(struct docker *d, const struct cspec *cs, long long *used,
    char *why, size_t n)
{
	struct json_object	*df = NULL, *vols, *v, *opts;
	const char		*name, *driver;
	long			 status;
	long long		 size;
	struct error		 e;
	size_t			 i, len;
	int			 rc = -1;

	if (docker_request(d, "GET", "/system/df", NULL, &status, &df,
	    &e) == -1) {
		snprintf(why, n, "the engine's disk usage: %.150s", e.msg);
		return -1;
	}
	if (status != 200 || (vols = js_get(df, "Volumes",
	    json_type_array)) == NULL) {
		snprintf(why, n, "the engine's disk usage: HTTP %ld", status);
		goto out;
	}
	len = json_object_array_length(vols);
	for (i = 0; i < len; i++) {
		v = json_object_array_get_idx(vols, i);
		name = js_str_max(v, "Name", 256);
		if (name == NULL || strcmp(name, cspec_volume(cs)) != 0)
			continue;
		driver = js_str_max(v, "Driver", 64);
		opts = js_get(v, "Options", json_type_object);
		if (driver == NULL || strcmp(driver, "local") != 0 ||
		    (opts != NULL && json_object_object_length(opts) > 0)) {
			rc = 0;
			goto out;
		}
		if (js_int(js_get(v, "UsageData", json_type_object), "Size",
		    &size) == -1 || size < 0) {
			snprintf(why, n, "the engine gives no size of volume %s",
			    cspec_volume(cs));
			goto out;
		}
		*used = size;
		rc = 1;
		goto out;
	}
	snprintf(why, n, "the engine does not list volume %s",
	    cspec_volume(cs));
out:
	json_object_put(df);
	return rc;
}

/*
 * Sample /sandbox: 0 with the mode and sizes, or -1 with why. *host says
 * they were measured on the host or by the engine (the mode in *watch then
 * holds even when the measure failed; why says "by the engine" for the
 * engine's), not by a script in the container.
 */
int
guard_sample_disk(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    bool *watch, long long *fs_size, long long *used, bool *host, char *why,
    size_t n)
{
	char		 max[32], out[256], mode[16], no[200];
	const char	*args[] = { max, NULL };
	const char	*p;
	char		*end;
	struct statfs	 sf;
	struct error	 e;
	int		 code, fd, rc, r;
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
		    GUARD_SCRIPT_DEADLINE_S * 1000LL, used, &e)) == -1)
			snprintf(why, n, "its volume on the host: %.150s",
			    e.msg);
		close(fd);
		return rc;
	}
	/* Not readable here: the engine's measure, not the container's. */
	if ((r = engine_volume(d, cs, used, why, n)) != 0) {
		*host = true;
		*watch = true;
		*fs_size = 0;
		if (r == 1)
			snprintf(why, n, "by the engine");
		return r == 1 ? 0 : -1;
	}
	if (sandbox_script_hung(sb)) {
		snprintf(why, n, "a script in the sandbox did not finish (is "
		    "/bin/bash intact?)");
		return -1;
	}
	snprintf(max, sizeof(max), "%lld", most);
	if (sandbox_script(sb, SCRIPT_DISK, args, out, sizeof(out), NULL, NULL,
	    GUARD_SCRIPT_DEADLINE_S, &code, &e) == -1) {
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

	if (guard_inspect(d, cs, true, &status, &c, &e) == 0 && c != NULL &&
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
 * Sample /sandbox now and keep the result: the mode found (never switched
 * off by the container's word), the sizes, or one more failure. 1 when
 * sampled, else 0.
 */
static int
disk_sample(struct sandbox *sb, struct docker *d, const struct cspec *cs)
{
	struct guard_cache	*gc;
	long long	 fs = 0, used = 0, at, cost;
	bool		 watch = false, host;
	char		 failed[200], id[80];
	int		 r;

	at = clock_ms();
	r = guard_sample_disk(sb, d, cs, &watch, &fs, &used, &host, failed,
	    sizeof(failed));
	cost = clock_ms() - at;
	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	snprintf(id, sizeof(id), "%.*s", (int)strcspn(gc->key, "@"),
	    gc->key);
	if (r == 0 && !host && !watch && (gc->disk_watch ||
	    (id[0] != '\0' && strcmp(id, gc->watched_id) == 0))) {
		/* The container's word never switches the watchdog off. */
		snprintf(failed, sizeof(failed), "the sandbox claims a "
		    "fixed-size file system, but /sandbox is watched");
		r = -1;
		watch = true;
	}
	if (r == 0 || host) {
		gc->disk_watch = watch;
		gc->disk_known = true;
		if (watch && id[0] != '\0' && strcmp(id, "?") != 0)
			snprintf(gc->watched_id, sizeof(gc->watched_id),
			    "%s", id);
	}
	if (r == 0) {
		gc->fs_size = fs;
		gc->sandbox_used = used;
		gc->disk_cost = cost;
		gc->disk_fails = 0;
	} else {
		if ((gc->disk_watch || !gc->disk_known) &&
		    gc->disk_fails < DISK_FAILS_MAX)
			gc->disk_fails++;
		snprintf(gc->disk_why, sizeof(gc->disk_why),
		    "%s", failed);
		/* Its bash hangs: try again only after SLOW_FACTOR times. */
		if (!host && sandbox_script_hung(sb))
			gc->disk_cost =
			    GUARD_SCRIPT_DEADLINE_S * 1000LL;
	}
	pthread_mutex_unlock(&guard_mu);
	return r == 0;
}

/*
 * Refresh stale disk samples (every, layer_every: the wanted age) and say
 * in why whether a limit is passed: true over, false under or unknown.
 */
static bool
check_disk(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    long long every, long long layer_every, char *why, size_t n)
{
	struct guard_cache	*gc;
	long long	 t, layer = 0, at, cost;
	bool		 need_disk, need_layer, shared_over, over = false;
	char		 a[32], b[32];
	int		 sampled = 0;

	/* Another process saw a limit passed: its verdict holds here too. */
	shared_over = access(cspec_over_file(cs), F_OK) == 0;
	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	t = clock_ms();
	/* Over a limit: sample each time, so removing files lifts it at once. */
	need_disk = gc->disk_at == 0 || t - gc->disk_at >=
	    (every > SLOW_FACTOR * gc->disk_cost ? every :
	    SLOW_FACTOR * gc->disk_cost) ||
	    (gc->disk_watch &&
	    gc->sandbox_used > cspec_disk_limit(cs)) ||
	    gc->disk_fails >= DISK_FAILS_MAX || shared_over;
	need_layer = gc->layer_at == 0 || t - gc->layer_at >=
	    (layer_every > SLOW_FACTOR * gc->layer_cost ? layer_every :
	    SLOW_FACTOR * gc->layer_cost) ||
	    gc->layer_used > cspec_layer_limit(cs) || shared_over;
	/* One sampler at a time: others use what is there. */
	if (need_disk)
		gc->disk_at = t;
	if (need_layer)
		gc->layer_at = t;
	pthread_mutex_unlock(&guard_mu);

	if (need_disk)
		sampled += disk_sample(sb, d, cs);
	if (need_layer) {
		at = clock_ms();
		if (sample_layer(d, cs, &layer) == 0) {
			sampled++;
			cost = clock_ms() - at;
			pthread_mutex_lock(&guard_mu);
			gc = guard_slot(cspec_container(cs));
			gc->layer_used = layer;
			gc->layer_cost = cost;
			pthread_mutex_unlock(&guard_mu);
		}
	}
	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	if (gc->disk_watch &&
	    gc->sandbox_used > cspec_disk_limit(cs)) {
		human(a, sizeof(a), gc->sandbox_used);
		human(b, sizeof(b), cspec_disk_limit(cs));
		snprintf(why, n, "/sandbox holds %s, more than its limit of %s "
		    "(SANDBOX_DISK_LIMIT, watched)", a, b);
		over = true;
	} else if (gc->disk_fails >= DISK_FAILS_MAX &&
	    (gc->disk_watch || !gc->disk_known)) {
		human(b, sizeof(b), cspec_disk_limit(cs));
		snprintf(why, n, "the size of /sandbox could not be measured: "
		    "%s (%d samples in a row), so it counts as over its limit "
		    "of %s (SANDBOX_DISK_LIMIT, watched)", gc->disk_why,
		    gc->disk_fails, b);
		over = true;
	} else if (gc->layer_used > cspec_layer_limit(cs)) {
		human(a, sizeof(a), gc->layer_used);
		human(b, sizeof(b), cspec_layer_limit(cs));
		snprintf(why, n, "the container's own layer (packages, files "
		    "outside /sandbox) holds %s, more than its limit of %s "
		    "(SANDBOX_LAYER_LIMIT)", a, b);
		over = true;
	}
	pthread_mutex_unlock(&guard_mu);
	if (over && !shared_over)
		mark_over(cspec_over_file(cs), true);
	else if (!over && shared_over && sampled == 2)
		mark_over(cspec_over_file(cs), false);
	return over;
}

bool
guard_disk_check(struct sandbox *sb, struct docker *d, const struct cspec *cs,
    char *why, size_t n)
{
	return check_disk(sb, d, cs, DISK_EVERY_MS, LAYER_EVERY_MS, why, n);
}

void
guard_disk_ahead(struct sandbox *sb, struct docker *d, const struct cspec *cs)
{
	char why[300];

	(void)check_disk(sb, d, cs, DISK_EVERY_MS * 2 / 3, LAYER_EVERY_MS * 2 / 3,
	    why, sizeof(why));
}

enum guard_verdict
guard_during_exec(struct sandbox *sb, struct docker *d,
    const struct cspec *cs, char *why, size_t n)
{
	struct guard_cache	*gc;
	bool watch;

	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	watch = gc->disk_watch;
	pthread_mutex_unlock(&guard_mu);
	return check_disk(sb, d, cs, watch ? DISK_RUN_EVERY_MS : DISK_EVERY_MS,
	    LAYER_RUN_EVERY_MS, why, n) ? GUARD_STOP : GUARD_GO_ON;
}

char *
guard_after_exec(const struct cspec *cs, const char *out, const char *err)
{
	struct guard_cache	*gc;
	char	 note[256], b[32];
	bool	 watch;

	if (strstr(err, "No space left on device") == NULL &&
	    strstr(out, "No space left on device") == NULL)
		return NULL;
	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	watch = gc->disk_watch;
	pthread_mutex_unlock(&guard_mu);
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
