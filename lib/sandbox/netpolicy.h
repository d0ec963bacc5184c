/*
 * netpolicy.h: the sandbox's egress policy (SANDBOX_EGRESS).
 *
 *   internet  the container is on its own bridge network (SANDBOX_NETWORK,
 *             no inter-container traffic, IPv4 only) whose traffic the
 *             host's firewall filters: public addresses are reachable,
 *             link-local, loopback, the host's own addresses, private
 *             ranges, CGNAT and multicast are rejected, except DNS to the
 *             resolvers and SANDBOX_EGRESS_ALLOW. The network and rules are
 *             made by containers/netpolicy.sh as root; the server never
 *             changes the firewall, it checks the rules work (the canary).
 *   none      no network at all (NetworkMode none).
 *   open      Docker's default bridge, no filtering (the old behaviour).
 *
 * The canary runs in the sandbox: a UDP datagram to the network's
 * gateway (an address of the host) must be rejected by the rule
 * (icmp-admin-prohibited: EHOSTUNREACH, "No route to host"); the host's
 * own answer (port unreachable), or none at all, means the rules are not
 * there or not ours, and the server then refuses to run commands. The
 * container can forge that answer: a server that can read the host's
 * firewall (root) checks the bridge's rules first (netpolicy_rules_present),
 * and their absence refuses commands whatever the canary says.
 */
#ifndef CS_NETPOLICY_H
#define CS_NETPOLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct config;

enum egress { EGRESS_INTERNET, EGRESS_NONE, EGRESS_OPEN };

enum egress	 netpolicy_egress(const struct config *);
const char	*netpolicy_name(enum egress);
/* The container's HostConfig.NetworkMode: SANDBOX_NETWORK, "none" or "bridge". */
const char	*netpolicy_network_mode(const struct config *);

/*
 * Read the canary's output: true when it says blocked. detail gets the
 * rest of the line, control characters replaced, cut to its size.
 */
bool		 netpolicy_canary_parse(const char *out, char *detail, size_t n);

/* What a look at the host's firewall found. */
enum netpolicy_rules {
	NETPOLICY_RULES_UNKNOWN = -1,	/* cannot tell */
	NETPOLICY_RULES_MISSING = 0,
	NETPOLICY_RULES_PRESENT = 1,
};

/*
 * Are the rules for bridge present in this host's firewall? Runs
 * `iptables -w 5 -S` (needs root and the engine on this host) with a
 * deadline. NETPOLICY_RULES_PRESENT, _MISSING, or _UNKNOWN when it cannot
 * tell; detail says which.
 */
enum netpolicy_rules netpolicy_rules_present(const char *bridge, char *detail,
		    size_t n);

/*
 * The same over the text of `iptables -S` (separate so it can be tested).
 * NETPOLICY_RULES_PRESENT when both jumps and both chains with their REJECT
 * are there, else NETPOLICY_RULES_MISSING.
 */
enum netpolicy_rules netpolicy_rules_in(const char *text, const char *bridge,
		    char *detail, size_t n);

#endif
