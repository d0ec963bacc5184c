/*
 * clientaddr.h: who is asking, for throttles and the sign-in audit.
 *
 * The client address is the peer's (REMOTE_ADDR), except when the peer is
 * a trusted proxy (SANDBOX_TRUSTED_PROXIES): then it is the nearest address
 * in the forwarding header (SANDBOX_CLIENT_ADDR_HEADER, X-Forwarded-For by
 * default) read from the right that is not itself a trusted proxy. Entries
 * left of that one were written by the client and are ignored (RFC 7239 §8.1
 * on the same problem with Forwarded).
 *
 * Throttles key IPv6 addresses by their /64: one host usually holds the
 * whole /64 (RFC 6177, RFC 7217) and can rotate through it at will.
 */
#ifndef CS_CLIENTADDR_H
#define CS_CLIENTADDR_H

#include <stdbool.h>
#include <stddef.h>

/* Room for any address or key written here, NUL included. */
#define CLIENTADDR_MAX	64

/*
 * Is addr (an IPv4 or IPv6 literal) in list, a space- or comma-separated
 * list of addresses and CIDR blocks ("127.0.0.1 10.0.0.0/8 ::1 fd00::/8")?
 * Malformed entries match nothing.
 */
bool	clientaddr_in_list(const char *addr, const char *list);

/*
 * Is list a valid SANDBOX_TRUSTED_PROXIES value (every entry an address or
 * CIDR block)? On false, the first bad entry is named in why.
 */
bool	clientaddr_list_valid(const char *list, char *why, size_t whysz);

/*
 * The client address of a request whose peer is peer and whose forwarding
 * header holds fwd (NULL if absent), given the trusted list. Writes a
 * canonical address (inet_ntop form) into out[CLIENTADDR_MAX]. An entry of
 * fwd may be an address, "a.b.c.d:port", "[v6]" or "[v6]:port"; the first
 * malformed one stops the walk (the last good address is used). Returns 0,
 * or -1 when even peer is not an address (out is then peer, cut short).
 */
int	clientaddr_resolve(const char *peer, const char *fwd, const char *trusted,
	    char out[CLIENTADDR_MAX]);

/*
 * The throttle key of an address: IPv4 (and IPv4-mapped IPv6) as is, other
 * IPv6 as its /64 ("2001:db8:1:2::/64"). Anything else is copied, cut to
 * fit. Writes out[CLIENTADDR_MAX].
 */
void	clientaddr_key(const char *addr, char out[CLIENTADDR_MAX]);

#endif
