/*
 * owneraddr.h: each owner's fixed address on the sandbox network, so the
 * egress proxy adds an owner's secrets to that owner's sandbox only
 * (docs/secrets.md, SANDBOX_SCOPE=person).
 *
 * On one shared network the proxy tells sandboxes apart by their source
 * address only, and Docker gives a freed address to the next container:
 * an address rule for a stopped sandbox would then hand its owner's
 * credential to another. So containers/netpolicy.sh makes the network
 * with Docker's dynamic range (IPRange) as the lower half of its subnet,
 * and each owner gets a slot of the upper half, which Docker never hands
 * out by itself: the owner's container is created with the address at
 * that slot (NetworkingConfig), and the slot is the owner's for good
 * (sql/026-owner-addr.sql). A sandbox cannot take another address: it has
 * neither NET_ADMIN nor NET_RAW (sandbox/cspec.h).
 */
#ifndef CS_OWNERADDR_H
#define CS_OWNERADDR_H

#include <stdbool.h>

#include "base/error.h"

struct config;
struct db;
struct docker;

#define OWNERADDR_MAX	16	/* "255.255.255.255" and its NUL */

/* Do owners get fixed addresses (person scope, internet, the proxy on)? */
bool	owneraddr_wanted(const struct config *);

/*
 * The address at slot (1 and up) of the upper half of subnet ("a.b.c.d/n"),
 * when range is its lower half, as Docker reports them (IPAM.Config):
 * 0 with out set, or -1 with err (ERR_UNAVAILABLE: the network has no
 * such range, or the half is full).
 */
int	owneraddr_pick(const char *subnet, const char *range, long long slot,
	    char out[OWNERADDR_MAX], struct error *);

/*
 * owner's address on the network of the settings (SANDBOX_NETWORK): its
 * slot, given on first use, on the network as the engine reports it now.
 * 0 with out set, or -1 with err.
 */
int	owneraddr_get(const struct config *, struct db *, struct docker *,
	    const char *owner, char out[OWNERADDR_MAX], struct error *);

#endif
