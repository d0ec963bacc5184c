/*
 * sandbox/cspec.c: the sandbox container's wanted shape and drift; see
 * sandbox/cspec.h.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "sandbox/cspec.h"
#include "sandbox/portlane.h"

struct cspec {
	char		*image;
	char		*container;
	char		*volume;
	char		*network;	/* SANDBOX_NETWORK */
	char		*network_mode;	/* what the policy wants */
	char		*runtime;	/* "" for the engine's default */
	char		*egress_allow;
	char		*over_file;	/* SANDBOX_DB + ".CONTAINER.over-limit" */
	char		 lane[PATH_MAX]; /* its previews' folder, or "" */
	char		 lane_name[PORTLANE_NAME]; /* that folder's name */
	enum egress	 egress;
	long long	 memory;
	long long	 nano_cpus;
	long long	 pids_limit;
	long long	 disk_limit;
	long long	 layer_limit;
};

static const char *const kept_caps[] = { CSPEC_CAPS, NULL };

int
cspec_new(const struct config *c, const char *container, const char *volume,
    struct cspec **out, struct error *err)
{
	struct cspec *cs;

	*out = NULL;
	if ((cs = calloc(1, sizeof(*cs))) == NULL)
		return error_set(err, "out of memory");
	cs->egress = netpolicy_egress(c);
	if ((cs->image = strdup(c->image)) == NULL ||
	    (cs->container = strdup(container)) == NULL ||
	    (cs->volume = strdup(volume)) == NULL ||
	    (cs->network = strdup(c->network)) == NULL ||
	    (cs->network_mode = strdup(netpolicy_network_mode(c))) == NULL ||
	    (cs->runtime = strdup(c->runtime)) == NULL ||
	    (cs->egress_allow = strdup(c->egress_allow)) == NULL ||
	    asprintf(&cs->over_file, "%s.%s.over-limit", c->db_path != NULL ?
	    c->db_path : "state.db", container) == -1) {
		cs->over_file = NULL;
		cspec_free(cs);
		return error_set(err, "out of memory");
	}
	cs->memory = c->memory_bytes;
	cs->nano_cpus = c->nano_cpus;
	cs->pids_limit = c->pids_limit;
	cs->disk_limit = c->disk_limit;
	cs->layer_limit = c->layer_limit;
	if (portlane_folder(c, container, cs->lane, sizeof(cs->lane)) == -1)
		cs->lane[0] = '\0';
	portlane_name(container, cs->lane_name);
	*out = cs;
	return 0;
}

void
cspec_free(struct cspec *cs)
{
	if (cs == NULL)
		return;
	free(cs->image);
	free(cs->container);
	free(cs->volume);
	free(cs->network);
	free(cs->network_mode);
	free(cs->runtime);
	free(cs->egress_allow);
	free(cs->over_file);
	free(cs);
}

enum egress cspec_egress(const struct cspec *cs) { return cs->egress; }
const char *cspec_network(const struct cspec *cs) { return cs->network; }
long long cspec_disk_limit(const struct cspec *cs) { return cs->disk_limit; }
long long cspec_layer_limit(const struct cspec *cs) { return cs->layer_limit; }
const char *cspec_container(const struct cspec *cs) { return cs->container; }
const char *cspec_volume(const struct cspec *cs) { return cs->volume; }
const char *cspec_egress_allow(const struct cspec *cs) { return cs->egress_allow; }
const char *cspec_runtime(const struct cspec *cs) { return cs->runtime; }
const char *cspec_over_file(const struct cspec *cs) { return cs->over_file; }

static struct json_object *
str_array(const char *const *v)
{
	struct json_object *a = json_object_new_array();

	for (; a != NULL && *v != NULL; v++)
		json_object_array_add(a, json_object_new_string(*v));
	return a;
}

/* The previews' folder, read-only (sandbox/portlane.h), when there is one. */
static void
fill_lane(const struct cspec *cs, struct json_object *host)
{
	struct json_object	*mounts, *m;
	struct error		 err;

	mounts = js_get(host, "Mounts", json_type_array);
	if (cs->lane[0] == '\0' || mounts == NULL)
		return;
	if (portlane_prepare(cs->lane, &err) == -1) {
		log_warn("container %s: previews go through the engine: %s",
		    cs->container, err.msg);
		return;
	}
	m = json_object_new_object();
	js_set_str(m, "Type", "bind");
	js_set_str(m, "Source", cs->lane);
	js_set_str(m, "Target", PORTLANE_TARGET);
	js_set_bool(m, "ReadOnly", true);
	json_object_array_add(mounts, m);
}

bool
cspec_drop_lane(struct json_object *body)
{
	struct json_object	*host, *mounts, *m;
	const char		*t;
	size_t			 i, len;

	host = js_get(body, "HostConfig", json_type_object);
	mounts = host == NULL ? NULL : js_get(host, "Mounts", json_type_array);
	len = mounts == NULL ? 0 : json_object_array_length(mounts);
	for (i = 0; i < len; i++) {
		m = json_object_array_get_idx(mounts, i);
		if ((t = js_str(m, "Target")) != NULL &&
		    strcmp(t, PORTLANE_TARGET) == 0) {
			json_object_array_del_idx(mounts, i, 1);
			return true;
		}
	}
	return false;
}

void
cspec_fill_create(const struct cspec *cs, struct json_object *body)
{
	static const char *const drop[] = { "ALL", NULL };
	struct json_object	*labels, *host;
	char			 v[16];

	labels = js_get(body, "Labels", json_type_object);
	host = js_get(body, "HostConfig", json_type_object);
	if (labels == NULL || host == NULL)
		return;
	snprintf(v, sizeof(v), "%d", CSPEC_VERSION);
	js_set_str(labels, CSPEC_LABEL_VERSION, v);
	js_set(host, "CapDrop", str_array(drop));
	js_set(host, "CapAdd", str_array(kept_caps));
	js_set_str(host, "NetworkMode", cs->network_mode);
	js_set_str(host, "CgroupnsMode", "private");
	if (cs->runtime[0] != '\0')
		js_set_str(host, "Runtime", cs->runtime);
	fill_lane(cs, host);
}

struct json_object *
cspec_update_body(const struct cspec *cs)
{
	struct json_object *b = json_object_new_object();

	js_set_int(b, "Memory", cs->memory);
	js_set_int(b, "MemorySwap", cs->memory);
	js_set_int(b, "NanoCpus", cs->nano_cpus);
	js_set_int(b, "PidsLimit", cs->pids_limit);
	return b;
}

/* Differences, appended as "; "-separated phrases, cut at the size. */
struct diff {
	char	*buf;
	size_t	 n, len;
	int	 count;
};

static void diff_add(struct diff *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

static void
diff_add(struct diff *d, const char *fmt, ...)
{
	va_list	ap;
	int	w;

	d->count++;
	if (d->n == 0 || d->len + 1 >= d->n)
		return;
	if (d->len > 0) {
		w = snprintf(d->buf + d->len, d->n - d->len, "; ");
		d->len += (size_t)w < d->n - d->len ? (size_t)w : d->n - d->len - 1;
	}
	va_start(ap, fmt);
	w = vsnprintf(d->buf + d->len, d->n - d->len, fmt, ap);
	va_end(ap);
	if (w > 0)
		d->len += (size_t)w < d->n - d->len ? (size_t)w : d->n - d->len - 1;
}

/* A string from the engine, bounded, for messages ("?" when not one). */
static const char *
short_str(struct json_object *o, const char *key)
{
	const char *s = js_str_max(o, key, 200);

	return s != NULL ? s : "?";
}

static bool
str_in(const char *s, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return true;
	return false;
}

/* Docker may name capabilities with or without "CAP_", in any case. */
static const char *
cap_name(const char *s, char *buf, size_t n)
{
	size_t i;

	if (strncasecmp(s, "CAP_", 4) == 0)
		s += 4;
	for (i = 0; s[i] != '\0' && i + 1 < n; i++)
		buf[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
	buf[i] = '\0';
	return buf;
}

static void
compare_caps(struct json_object *host, struct diff *d)
{
	struct json_object	*add, *drop, *v;
	char			 b[64];
	size_t			 i, len;
	bool			 all = false;

	drop = js_get(host, "CapDrop", json_type_array);
	len = drop == NULL ? 0 : json_object_array_length(drop);
	for (i = 0; i < len && i < 64; i++) {
		v = json_object_array_get_idx(drop, i);
		if (json_object_is_type(v, json_type_string) &&
		    strcmp(cap_name(json_object_get_string(v), b, sizeof(b)),
		    "ALL") == 0)
			all = true;
	}
	if (!all)
		diff_add(d, "capabilities not dropped (CapDrop lacks ALL: "
		    "Docker's default set, raw sockets included)");
	add = js_get(host, "CapAdd", json_type_array);
	len = add == NULL ? 0 : json_object_array_length(add);
	for (i = 0; i < len && i < 64; i++) {
		v = json_object_array_get_idx(add, i);
		if (!json_object_is_type(v, json_type_string))
			continue;
		cap_name(json_object_get_string(v), b, sizeof(b));
		if (strcmp(b, "ALL") == 0 || !str_in(b, kept_caps))
			diff_add(d, "extra capability %.40s", b);
	}
}

/* src a folder named for this container's previews (portlane_name)? */
static bool
lane_folder(const struct cspec *cs, const char *src)
{
	const char *slash;

	if (src == NULL || (slash = strrchr(src, '/')) == NULL)
		return false;
	return strcmp(slash + 1, cs->lane_name) == 0;
}

static void
compare_mounts(const struct cspec *cs, struct json_object *inspect,
    struct json_object *host, struct diff *d)
{
	struct json_object	*mounts, *m, *binds;
	const char		*src, *dst, *type, *name;
	size_t			 i, len;
	bool			 ours = false, rw;

	mounts = js_get(inspect, "Mounts", json_type_array);
	len = mounts == NULL ? 0 : json_object_array_length(mounts);
	for (i = 0; i < len && i < 64; i++) {
		m = json_object_array_get_idx(mounts, i);
		type = short_str(m, "Type");
		name = js_str(m, "Name");
		src = short_str(m, "Source");
		dst = short_str(m, "Destination");
		if (strcmp(type, "volume") == 0 && name != NULL &&
		    strcmp(name, cs->volume) == 0 &&
		    strcmp(dst, "/sandbox") == 0) {
			ours = true;
			continue;
		}
		/*
		 * A previews' folder of this container, read-only: the one made
		 * now, or under a folder SANDBOX_PREVIEW_SOCKETS named before
		 * (then previews go through the engine until a recreate).
		 */
		if (strcmp(type, "bind") == 0 && lane_folder(cs, js_str(m,
		    "Source")) && strcmp(dst, PORTLANE_TARGET) == 0 &&
		    js_bool(m, "RW", &rw) == 0 && !rw)
			continue;
		if (strstr(src, "docker.sock") != NULL ||
		    strstr(dst, "docker.sock") != NULL)
			diff_add(d, "the Docker socket is mounted (%s at %s)",
			    src, dst);
		else
			diff_add(d, "extra mount %s %s at %s", type, src, dst);
	}
	if (!ours)
		diff_add(d, "the volume %s is not mounted at /sandbox",
		    cs->volume);
	binds = js_get(host, "Binds", json_type_array);
	if (binds != NULL && json_object_array_length(binds) > 0 && len == 0)
		diff_add(d, "host folders bound in");
}

static void
compare_limit(struct json_object *host, const char *key, long long want,
    struct diff *d)
{
	long long have;

	if (js_int(host, key, &have) == -1)
		have = 0;
	if (have != want)
		diff_add(d, "%s %lld, configured %lld", key, have, want);
}

/*
 * Confinement switched off by a security option: seccomp or AppArmor
 * unconfined, or systempaths=unconfined (/proc and /sys unmasked). Docker
 * spells them with '=' or, in older versions, ':'; an engine that leaves
 * MaskedPaths out says nothing either way.
 */
static void
compare_secopts(struct json_object *host, struct diff *d)
{
	static const char *const off[] = { "seccomp", "apparmor", "systempaths" };
	struct json_object	*opts = js_get(host, "SecurityOpt", json_type_array);
	const char		*o;
	size_t			 i, j, n, len;

	n = opts != NULL ? json_object_array_length(opts) : 0;
	for (i = 0; i < n; i++) {
		if ((o = json_object_get_string(json_object_array_get_idx(opts,
		    i))) == NULL)
			continue;
		for (j = 0; j < sizeof(off) / sizeof(off[0]); j++) {
			len = strlen(off[j]);
			if (strncmp(o, off[j], len) == 0 && (o[len] == '=' ||
			    o[len] == ':') && strcmp(o + len + 1, "unconfined") == 0)
				diff_add(d, "%s unconfined", off[j]);
		}
	}
	/* The engine stores systempaths=unconfined as no masked paths. */
	if ((opts = js_get(host, "MaskedPaths", json_type_array)) != NULL &&
	    json_object_array_length(opts) == 0)
		diff_add(d, "systempaths unconfined (no masked paths)");
}

enum cspec_verdict
cspec_compare(const struct cspec *cs, struct json_object *inspect,
    char *buf, size_t n)
{
	struct json_object	*host, *conf, *labels, *devices;
	struct diff		 d = { buf, n, 0, 0 };
	const char		*s, *mode;
	long long		 version = 1;
	char			*end;
	bool			 b;

	if (n > 0)
		buf[0] = '\0';
	host = js_get(inspect, "HostConfig", json_type_object);
	conf = js_get(inspect, "Config", json_type_object);
	labels = js_get(conf, "Labels", json_type_object);
	if (host == NULL || conf == NULL) {
		diff_add(&d, "the engine's description lacks HostConfig or Config");
		return CSPEC_REFUSE;
	}
	if ((s = js_str(labels, "code-sandbox")) == NULL ||
	    strcmp(s, "sandbox") != 0) {
		diff_add(&d, "not made by code-sandbox (no label "
		    "code-sandbox=sandbox)");
		return CSPEC_REFUSE;
	}
	/* Containers of versions before the label are version 1. */
	if ((s = js_str_max(labels, CSPEC_LABEL_VERSION, 20)) != NULL) {
		version = strtoll(s, &end, 10);
		if (*s == '\0' || *end != '\0' || version < 1)
			version = 0;
	}
	if (version != CSPEC_VERSION) {
		diff_add(&d, "made by %s version of code-sandbox (container "
		    "version %lld, this server makes %d)",
		    version < CSPEC_VERSION ? "an older" : "another", version,
		    CSPEC_VERSION);
		return version < CSPEC_VERSION && version >= 1 ?
		    CSPEC_RECREATE : CSPEC_REFUSE;
	}

	if (js_bool(host, "Privileged", &b) == 0 && b)
		diff_add(&d, "privileged");
	compare_caps(host, &d);
	if (!json_object_is_type(json_object_object_get(host, "SecurityOpt"),
	    json_type_array) || strstr(json_object_to_json_string(
	    json_object_object_get(host, "SecurityOpt")),
	    "no-new-privileges") == NULL)
		diff_add(&d, "no-new-privileges is off");
	compare_secopts(host, &d);
	compare_mounts(cs, inspect, host, &d);
	mode = short_str(host, "NetworkMode");
	if (strcmp(mode, cs->network_mode) != 0 &&
	    !(strcmp(cs->network_mode, "bridge") == 0 &&
	    strcmp(mode, "default") == 0))
		diff_add(&d, "network %s, the %s policy wants %s", mode,
		    netpolicy_name(cs->egress), cs->network_mode);
	if (strcmp(short_str(host, "PidMode"), "host") == 0)
		diff_add(&d, "the host's process namespace");
	if (strcmp(short_str(host, "IpcMode"), "host") == 0)
		diff_add(&d, "the host's IPC namespace");
	if (strcmp(short_str(host, "UTSMode"), "host") == 0)
		diff_add(&d, "the host's UTS namespace");
	if (strcmp(short_str(host, "UsernsMode"), "host") == 0)
		diff_add(&d, "the host's user namespace");
	if (strcmp(short_str(host, "CgroupnsMode"), "host") == 0)
		diff_add(&d, "the host's cgroup namespace");
	if ((devices = js_get(host, "Devices", json_type_array)) != NULL &&
	    json_object_array_length(devices) > 0)
		diff_add(&d, "host devices passed in");
	if (cs->runtime[0] != '\0' &&
	    strcmp(short_str(host, "Runtime"), cs->runtime) != 0)
		diff_add(&d, "runtime %s, configured %s",
		    short_str(host, "Runtime"), cs->runtime);
	if (d.count > 0)
		return CSPEC_REFUSE;

	compare_limit(host, "Memory", cs->memory, &d);
	compare_limit(host, "MemorySwap", cs->memory, &d);
	compare_limit(host, "NanoCpus", cs->nano_cpus, &d);
	compare_limit(host, "PidsLimit", cs->pids_limit, &d);
	return d.count > 0 ? CSPEC_UPDATE : CSPEC_OK;
}
