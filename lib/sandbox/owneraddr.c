/* owneraddr.c: see owneraddr.h. */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/config.h"
#include "base/js.h"
#include "engine/docker.h"
#include "sandbox/netpolicy.h"
#include "sandbox/owneraddr.h"
#include "store/db.h"
#include "store/db_sandbox.h"

bool
owneraddr_wanted(const struct config *cfg)
{
	return cfg->per_person && cfg->proxy &&
	    netpolicy_egress(cfg) == EGRESS_INTERNET;
}

/* "a.b.c.d/n" into its base (host order) and n; -1 if it is not one. */
static int
cidr(const char *s, uint32_t *base, int *bits)
{
	char		 a[OWNERADDR_MAX], *end;
	const char	*slash;
	struct in_addr	 in;
	long		 n;

	if (s == NULL || (slash = strchr(s, '/')) == NULL ||
	    (size_t)(slash - s) >= sizeof(a))
		return -1;
	memcpy(a, s, (size_t)(slash - s));
	a[slash - s] = '\0';
	n = strtol(slash + 1, &end, 10);
	if (inet_pton(AF_INET, a, &in) != 1 || *end != '\0' ||
	    end == slash + 1 || n < 1 || n > 32)
		return -1;
	*base = ntohl(in.s_addr);
	*bits = (int)n;
	return 0;
}

int
owneraddr_pick(const char *subnet, const char *range, long long slot,
    char out[OWNERADDR_MAX], struct error *err)
{
	uint32_t	 net, lower, half, a;
	int		 bits, rbits;
	struct in_addr	 in;

	out[0] = '\0';
	if (cidr(subnet, &net, &bits) == -1 || bits > 29)
		return error_kind(err, ERR_UNAVAILABLE, "the sandbox network's "
		    "subnet %.40s is not an IPv4 range of 8 addresses or more",
		    subnet != NULL ? subnet : "(none)");
	half = (uint32_t)1 << (31 - bits);
	net &= ~((half << 1) - 1);
	if (cidr(range, &lower, &rbits) == -1 || rbits != bits + 1 ||
	    lower != net)
		return error_kind(err, ERR_UNAVAILABLE, "the sandbox network "
		    "(%.40s) was not made with its dynamic range as its lower "
		    "half: make it again with containers/netpolicy.sh (remove, "
		    "then apply) for owners' own secrets", subnet);
	/* The upper half, short of its last address (the broadcast). */
	if (slot < 1 || (unsigned long long)slot > half - 2)
		return error_kind(err, ERR_UNAVAILABLE, "no address left for "
		    "another owner on the sandbox network (%.40s)", subnet);
	a = net + half + (uint32_t)slot;
	in.s_addr = htonl(a);
	if (inet_ntop(AF_INET, &in, out, OWNERADDR_MAX) == NULL)
		return error_set(err, "owner address: inet_ntop failed");
	return 0;
}

int
owneraddr_get(const struct config *cfg, struct db *db, struct docker *d,
    const char *owner, char out[OWNERADDR_MAX], struct error *err)
{
	struct json_object	*resp = NULL, *ipam, *conf, *c0;
	char			 path[300];
	long			 status;
	long long		 slot;
	int			 rc = -1;

	out[0] = '\0';
	if (db_owner_slot(db, owner, &slot) == -1)
		return error_set(err, "cannot give owner %.64s a network slot",
		    owner);
	if (snprintf(path, sizeof(path), "/networks/%s", cfg->network) >=
	    (int)sizeof(path))
		return error_set(err, "SANDBOX_NETWORK too long");
	if (docker_request(d, "GET", path, NULL, &status, &resp, err) == -1)
		return -1;
	if (status != 200) {
		error_kind(err, ERR_UNAVAILABLE, "the sandbox network %.64s: "
		    "HTTP %ld: %.200s", cfg->network, status,
		    docker_message(resp));
		goto out;
	}
	if ((ipam = js_get(resp, "IPAM", json_type_object)) == NULL ||
	    (conf = js_get(ipam, "Config", json_type_array)) == NULL ||
	    json_object_array_length(conf) < 1 ||
	    (c0 = json_object_array_get_idx(conf, 0)) == NULL ||
	    !json_object_is_type(c0, json_type_object)) {
		error_kind(err, ERR_UNAVAILABLE, "the sandbox network %.64s "
		    "has no IPv4 range", cfg->network);
		goto out;
	}
	rc = owneraddr_pick(js_str_max(c0, "Subnet", 64),
	    js_str_max(c0, "IPRange", 64), slot, out, err);
out:
	json_object_put(resp);
	return rc;
}
