/*
 * sandbox/cspec.h: what the sandbox container should look like, and how an
 * existing one differs from that (configuration drift).
 *
 * A container is made from the image with the volume at /sandbox (and,
 * with a local engine, its previews' folder read-only at PORTLANE_TARGET,
 * sandbox/portlane.h), the
 * memory, CPU and pids limits, no-new-privileges, an init process, the
 * egress policy's network (netpolicy.h), the OCI runtime of
 * SANDBOX_RUNTIME, and a reduced capability set: every capability is
 * dropped, then CSPEC_CAPS are added back. Those are what a root workflow
 * in the sandbox needs, found by tests (tests/e2e/capabilities.test.mjs):
 *
 *   CHOWN DAC_OVERRIDE FOWNER   apt-get and dpkg (apt-get update fails
 *                               without DAC_OVERRIDE; its chmods without
 *                               FOWNER), chown
 *   FSETID                      dpkg keeps set-group-id bits of packaged
 *                               files owned by groups root is not in
 *   SETUID SETGID               su to a user, apt's _apt sandbox user
 *   KILL                        killing another user's process
 *
 * and Docker's default set minus those (NET_RAW, MKNOD, SYS_CHROOT,
 * SETFCAP, SETPCAP, AUDIT_WRITE, NET_BIND_SERVICE) is gone: raw sockets,
 * device nodes, chroot, file capabilities. Ports above 1024 need no
 * capability (Docker also opens every port to root in the container).
 *
 * Containers carry the label code-sandbox.version=CSPEC_VERSION. On reuse
 * (cspec_compare): an older version is recreated on the same volume;
 * changed limits are applied in place; anything weaker than wanted
 * (privileged, extra capabilities, no-new-privileges off, seccomp,
 * AppArmor or systempaths unconfined, other mounts, a Docker socket,
 * another network, host namespaces (cgroup too: containers are made with
 * a private one, which is not Docker's default on cgroup v1), devices,
 * another runtime) is refused, naming the difference.
 */
#ifndef CS_CONTAINER_SPEC_H
#define CS_CONTAINER_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "sandbox/netpolicy.h"

struct config;
struct json_object;
struct cspec;

/* Bumped when containers made before would be weaker than new ones. */
#define CSPEC_VERSION		3	/* 3: a private cgroup namespace */
#define CSPEC_LABEL_VERSION	"code-sandbox.version"
/* The capabilities kept, as Docker names them (CapAdd after CapDrop ALL). */
#define CSPEC_CAPS	"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", \
			"SETGID", "SETUID"

enum cspec_verdict {
	CSPEC_OK,	/* as wanted */
	CSPEC_UPDATE,	/* limits differ: update in place */
	CSPEC_RECREATE,	/* made by an older version: recreate, keep the volume */
	CSPEC_REFUSE,	/* weaker than wanted: refuse service */
};

/* The spec from the settings, for the container and volume named (an
 * owner's, sandboxes.h). 0 and *out (cspec_free), or -1. */
int	cspec_new(const struct config *, const char *container,
	    const char *volume, struct cspec **out, struct error *);
void	cspec_free(struct cspec *);

/*
 * Add the spec's labels and HostConfig members (CapDrop, CapAdd,
 * NetworkMode, Runtime) to a POST /containers/create body that already
 * has a Labels and a HostConfig object.
 */
void	cspec_fill_create(const struct cspec *, struct json_object *body);

/*
 * Compare a container (GET /containers/NAME/json, hostile input: only
 * read through typed getters) with the spec. diff gets the differences as
 * one readable line ("" when none), cut to n.
 */
enum cspec_verdict cspec_compare(const struct cspec *,
	    struct json_object *inspect, char *diff, size_t n);

/*
 * Take the previews' folder out of a create body again (an engine that does
 * not see the folder: one running elsewhere than this server, which a unix
 * socket passed into the server's own container can be). True when it was
 * there.
 */
bool	cspec_drop_lane(struct json_object *body);

/* The body of POST /containers/NAME/update with the spec's limits. */
struct json_object *cspec_update_body(const struct cspec *);

/* Settings the guard needs, read-only. */
enum egress	 cspec_egress(const struct cspec *);
const char	*cspec_network(const struct cspec *);	/* SANDBOX_NETWORK */
long long	 cspec_disk_limit(const struct cspec *);
long long	 cspec_layer_limit(const struct cspec *);
const char	*cspec_container(const struct cspec *);
const char	*cspec_volume(const struct cspec *);	/* mounted at /sandbox */
const char	*cspec_egress_allow(const struct cspec *);
const char	*cspec_runtime(const struct cspec *);
/*
 * A file beside SANDBOX_DB that exists while some process of the server
 * found a disk limit passed: every process then samples afresh.
 */
const char	*cspec_over_file(const struct cspec *);

#endif
