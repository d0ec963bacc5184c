/*
 * cimd.h: Client ID Metadata Documents (cimd.c; MCP authorization
 * "Client ID Metadata Documents", draft-ietf-oauth-client-id-metadata-document).
 */
#ifndef CS_CIMD_H
#define CS_CIMD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct config;
struct db;
struct json_object;

/* An https client_id naming a Client ID Metadata Document? */
bool	cimd_is_url(const char *client_id);

/*
 * Fetch and validate the Client ID Metadata Document at url and store it
 * in oauth_client (cimd = 1) through db. Returns CIMD_STORED, CIMD_FAILED
 * with a message for a person in err, or CIMD_RATE_LIMITED with one
 * (nothing fetched: too many fetches this minute, overall or from this
 * host, or too many misses from akey, the client's address as
 * oauth_client_addr keys it).
 */
enum cimd_fetched {
	CIMD_RATE_LIMITED = -2,
	CIMD_FAILED = -1,
	CIMD_STORED = 0,
};
enum cimd_fetched cimd_fetch(struct db *, const struct config *,
	    const char *url, const char *akey, struct error *err);

/*
 * Validate a fetched document (draft-ietf-oauth-client-id-metadata-document
 * §4): a JSON object whose client_id equals url, with valid redirect_uris,
 * and no secret-based authentication. Returns 0 with the values to store
 * (*name may be NULL; *redirect_uris and *metadata are new references), or
 * -1 with err.
 */
int	cimd_validate(const char *url, const char *doc, size_t len, char **name,
	    struct json_object **redirect_uris, struct json_object **metadata,
	    bool *refresh, struct error *err);

/*
 * GET https://host:port/path from the address addr (numeric, checked
 * public or allowed by the caller: no name lookup happens, and no
 * connection goes to any other address): 200 only, no redirect followed,
 * no proxy, at most CIMD_MAX_BYTES, all within 5 s, TLS verified against
 * host and the CA file ca, or with ca NULL the system's CA store
 * (SSL_CERT_FILE when set, as OpenSSL takes it). 0 with doc filled, or -1
 * with a message for a person in err.
 */
#define CIMD_MAX_BYTES		16384

struct cimd_doc {
	char	buf[CIMD_MAX_BYTES + 1];
	size_t	len;
	bool	too_big;
};

int	cimd_fetch_at(const char *host, const char *addr, const char *port,
	    const char *path, const char *ca, struct cimd_doc *doc,
	    struct error *err);

/*
 * Is this address one a server may fetch from: not loopback, private,
 * link-local, shared, multicast, reserved or documentation space? family is
 * AF_INET or AF_INET6, addr a struct in_addr or in6_addr.
 */
bool	cimd_addr_public(int family, const void *addr);

#endif
