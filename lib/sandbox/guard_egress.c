/*
 * sandbox/guard_egress.c: the egress canary, the guard's check that the
 * egress policy is in force (the host's firewall rules where this process
 * can read them, then a script in the container), and its part of the
 * status; sandbox/guard.c calls it around commands.
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
#include "engine/docker.h"
#include "sandbox/cspec.h"
#include "sandbox/extern.h"
#include "sandbox/guard.h"
#include "sandbox/netpolicy.h"
#include "sandbox/proxy.h"
#include "sandbox/sandbox.h"
#include "sandbox/scripts.h"

static pthread_mutex_t	 canary_mu = PTHREAD_MUTEX_INITIALIZER; /* one canary at a time */
static pthread_mutex_t	 gw_mu = PTHREAD_MUTEX_INITIALIZER;
static char		 gw_last[16];	/* the network's gateway, gw_mu */

/* Container Id and StartedAt: what the cached samples belong to. */
void
guard_cache_key(struct json_object *c, char *key, size_t n)
{
	const char *id = js_str_max(c, "Id", 80);
	const char *at = js_str_max(js_get(c, "State", json_type_object),
	    "StartedAt", 64);

	snprintf(key, n, "%s@%s", id != NULL ? id : "?", at != NULL ? at : "?");
}

/* Forget samples of another container; the caller holds mu. */
static void
cache_use(struct guard_cache *gc, const char *key)
{
	if (strcmp(gc->key, key) == 0)
		return;
	guard_slot_reset(gc);
	snprintf(gc->key, sizeof(gc->key), "%s", key);
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
 * The bridge of the internet policy's network, a checked interface name,
 * into bridge (16 bytes): 0, or -1 with why (the network missing, or the
 * engine not answering).
 */
static int
network_bridge(struct docker *d, const struct cspec *cs, char *bridge,
    char *why, size_t n)
{
	struct json_object	*net = NULL;
	const char		*b;
	char			 path[192];
	long			 status;
	struct error		 e;
	int			 rc = -1;

	bridge[0] = '\0';
	snprintf(path, sizeof(path), "/networks/%s", cspec_network(cs));
	if (docker_request(d, "GET", path, NULL, &status, &net, &e) == -1) {
		snprintf(why, n, "%.150s", e.msg);
		goto out;
	}
	if (status != 200) {
		snprintf(why, n, "the network is missing: run "
		    "containers/netpolicy.sh apply as root");
		goto out;
	}
	b = js_str_max(js_get(net, "Options", json_type_object),
	    "com.docker.network.bridge.name", 15);
	if (b == NULL || b[0] == '\0' ||
	    strspn(b, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(b)) {
		snprintf(why, n, "the network names no bridge");
		goto out;
	}
	snprintf(bridge, 16, "%s", b);
	rc = 0;
out:
	json_object_put(net);
	return rc;
}

/*
 * The internet policy's network for a status (eg): its bridge and whether
 * the host's firewall rules for it are present.
 */
void
guard_egress_status_network(struct docker *d, const struct cspec *cs,
    struct json_object *eg)
{
	struct json_object	*rules;
	char			 bridge[16], detail[300], why[200];
	enum netpolicy_rules	 r;

	js_set_str(eg, "network", cspec_network(cs));
	js_set_str(eg, "ipv6", "off: the network has no IPv6 and the "
	    "host rejects IPv6 from its bridge");
	if (network_bridge(d, cs, bridge, why, sizeof(why)) == 0)
		js_set_str(eg, "bridge", bridge);
	else if (strncmp(why, "the network is missing", 22) == 0)
		js_set_str(eg, "network_error", why);
	rules = json_object_new_object();
	js_set(eg, "rules", rules);
	if (bridge[0] == '\0') {
		js_set(rules, "present", NULL);
		js_set_str(rules, "detail", "no bridge to check");
	} else {
		r = netpolicy_rules_present(bridge, detail,
		    sizeof(detail));
		js_set(rules, "present", r == NETPOLICY_RULES_UNKNOWN ? NULL :
		    json_object_new_boolean(r == NETPOLICY_RULES_PRESENT));
		js_set_str(rules, "detail", detail);
	}
}

/*
 * The egress proxy's CA into the container's store (SCRIPT_PROXY_CA), at
 * each canary: a new or recreated container gets it before its first
 * command. A failure is logged; HTTPS to the secrets' hosts then fails in
 * the sandbox (the proxy's certificate is not trusted), nothing else.
 */
static void
install_ca(struct sandbox *sb)
{
	char		 pem[PROXY_CA_MAX], out[64];
	const char	*args[2];
	struct error	 e;
	int		 code;

	if (proxy_ca_read(sb->cfg, pem, sizeof(pem), &e) == -1) {
		log_warn("proxy CA for container %s: %s", sb->container, e.msg);
		return;
	}
	args[0] = pem;
	args[1] = NULL;
	if (sandbox_script(sb, SCRIPT_PROXY_CA, args, out, sizeof(out), NULL,
	    NULL, GUARD_SCRIPT_DEADLINE_S, &code, &e) == -1)
		log_warn("proxy CA for container %s: %s", sb->container, e.msg);
	else if (code != 0)
		log_warn("proxy CA for container %s: could not be installed "
		    "(exit %d)", sb->container, code);
	else if (strncmp(out, "installed", 9) == 0)
		log_info("proxy CA installed in container %s", sb->container);
}

/*
 * Run the canary now: 1 when the policy holds, 0 when it does not, -1 when
 * the canary could not run (the engine's error in detail).
 */
static int
run_canary(struct sandbox *sb, const struct cspec *cs, struct json_object *c,
    char *detail, size_t n)
{
	char		 gw[16], out[512], bridge[16], why[200], port[16];
	const char	*args[5];
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
	if (gw[0] != '\0') {
		pthread_mutex_lock(&gw_mu);
		memcpy(gw_last, gw, sizeof(gw_last));
		pthread_mutex_unlock(&gw_mu);
	}
	args[0] = netpolicy_name(cspec_egress(cs));
	args[1] = gw;
	port[0] = '\0';
	if (sb->cfg != NULL && sb->cfg->proxy &&
	    cspec_egress(cs) == EGRESS_INTERNET)
		snprintf(port, sizeof(port), "%ld", (long)sb->cfg->proxy_port);
	args[2] = port;
	args[3] = port[0] != '\0' && sb->cfg->egress_hosts != NULL &&
	    sb->cfg->egress_hosts[0] != '\0' ? "hosts" : "";
	args[4] = NULL;
	if (sandbox_script_hung(sb)) {
		snprintf(detail, n, "the canary could not run: a script in the "
		    "sandbox did not finish (is /bin/bash intact?)");
		return -1;
	}
	/*
	 * First the host's own firewall, where this process can read it
	 * (root): rules missing there fail the policy whatever the container
	 * prints; the canary is the second check, and the only one otherwise.
	 */
	if (cspec_egress(cs) == EGRESS_INTERNET && geteuid() == 0) {
		if (network_bridge(sb->docker, cs, bridge, why,
		    sizeof(why)) == -1) {
			snprintf(detail, n, "the host's firewall could not be "
			    "checked: %s", why);
			return 0;
		}
		if (netpolicy_rules_present(bridge, why, sizeof(why)) ==
		    NETPOLICY_RULES_MISSING) {
			snprintf(detail, n, "the host's firewall has no rules "
			    "for bridge %s (%.150s)", bridge, why);
			return 0;
		}
	}
	if (sandbox_script(sb, SCRIPT_CANARY, args, out, sizeof(out), NULL,
	    NULL, GUARD_SCRIPT_DEADLINE_S, &code, &e) == -1) {
		snprintf(detail, n, "the canary could not run: %.150s", e.msg);
		return -1;
	}
	if (!netpolicy_canary_parse(out, detail, n))
		return 0;
	if (sb->cfg != NULL && sb->cfg->proxy &&
	    cspec_egress(cs) == EGRESS_INTERNET)
		install_ca(sb);
	return 1;
}

/*
 * The egress verdict when the canary is due: 0 with *ok and detail, or -1
 * (err) when it could not run and no verdict stands. One canary at a time
 * in a process: simultaneous ones draw the host's ICMP answers past its
 * rate limit and read "dropped"; a thread that waited takes the fresh
 * verdict.
 */
int
guard_canary_verdict(struct sandbox *sb, const struct cspec *cs,
    struct json_object *c, const char *key, long long every, bool *ok,
    char *detail, size_t n, struct error *err)
{
	struct guard_cache	*gc;
	bool	due, had;
	int	r, rc = 0;

	pthread_mutex_lock(&canary_mu);
	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	cache_use(gc, key);
	had = gc->canary_at != 0;
	due = !had || clock_ms() - gc->canary_at >= every || !gc->canary_ok;
	*ok = gc->canary_ok;
	snprintf(detail, n, "%s", gc->canary_detail);
	pthread_mutex_unlock(&guard_mu);
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
		pthread_mutex_lock(&guard_mu);
		gc = guard_slot(cspec_container(cs));
		snprintf(detail, n, "%s", gc->canary_detail);
		pthread_mutex_unlock(&guard_mu);
	} else if (r == -1) {
		error_kind(err, ERR_UNAVAILABLE, "%s", detail);
		rc = -1;
		goto out;
	}
	*ok = r == 1;
	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	gc->canary_at = clock_ms();
	gc->canary_ok = *ok;
	snprintf(gc->canary_detail, sizeof(gc->canary_detail),
	    "%s", detail);
	pthread_mutex_unlock(&guard_mu);
	if (!*ok)
		log_warn("egress canary of container %s: %s",
		    cspec_container(cs), detail);
out:
	pthread_mutex_unlock(&canary_mu);
	return rc;
}

/*
 * The egress policy in force for the running container c: the canary's
 * verdict, the canary run when due; the samples kept from now on are c's.
 * 0, or -1 with err saying why commands are refused.
 */
int
guard_egress_check(struct sandbox *sb, const struct cspec *cs,
    struct json_object *c, struct error *err)
{
	struct guard_cache	*gc;
	char	 key[192], detail[200];
	bool	 canary_due, ok;

	guard_cache_key(c, key, sizeof(key));
	if (cspec_egress(cs) == EGRESS_OPEN) {
		pthread_mutex_lock(&guard_mu);
		gc = guard_slot(cspec_container(cs));
		cache_use(gc, key);
		pthread_mutex_unlock(&guard_mu);
		return 0;
	}
	pthread_mutex_lock(&guard_mu);
	gc = guard_slot(cspec_container(cs));
	cache_use(gc, key);
	canary_due = gc->canary_at == 0 ||
	    clock_ms() - gc->canary_at >= CANARY_EVERY_MS ||
	    !gc->canary_ok;
	ok = gc->canary_ok;
	snprintf(detail, sizeof(detail), "%s", gc->canary_detail);
	pthread_mutex_unlock(&guard_mu);
	if (canary_due && guard_canary_verdict(sb, cs, c, key, CANARY_EVERY_MS, &ok,
	    detail, sizeof(detail), err) == -1)
		return -1;
	if (!ok)
		return error_kind(err, ERR_UNAVAILABLE, "The sandbox's egress "
		    "policy (%s) is not in force: %s. Commands are refused "
		    "until the operator installs the firewall rules: "
		    "containers/netpolicy.sh apply (as root; systemd: "
		    "code-sandbox-firewall.service), then `sandboxctl "
		    "status`.", netpolicy_name(cspec_egress(cs)), detail);
	return 0;
}

void
guard_egress_status_canary(struct sandbox *sb, const struct cspec *cs,
    struct json_object *c, struct json_object *eg)
{
	struct json_object	*can;
	char			 detail[300], gw[16];

	can = json_object_new_object();
	js_set(eg, "canary", can);
	gateway_of(c, cspec_network(cs), gw, sizeof(gw));
	if (gw[0] != '\0')
		js_set_str(eg, "gateway", gw);
	js_set_bool(can, "ok", run_canary(sb, cs, c, detail,
	    sizeof(detail)) == 1);
	js_set_str(can, "detail", detail);
}

int
guard_gateway(char gw[16])
{
	int	 rc;

	pthread_mutex_lock(&gw_mu);
	memcpy(gw, gw_last, 16);
	rc = gw[0] != '\0' ? 0 : -1;
	pthread_mutex_unlock(&gw_mu);
	return rc;
}
