/*
 * auth.h: who is calling /mcp.
 *
 * auth_bearer checks the request's Authorization header. On success it fills
 * struct auth_info; otherwise it has already answered the request with 401
 * and the WWW-Authenticate header the MCP authorization spec requires
 * (RFC 9728 §5.1: resource_metadata, and error="invalid_token" when a token
 * was sent).
 */
#ifndef CS_AUTH_H
#define CS_AUTH_H

#include <stdbool.h>

#include "oauth/owners.h"

struct config;
struct db;
struct http_req;

struct auth_info {
	char	client_id[128];	/* OAuth client, or "api-key" */
	char	client_name[128];
	char	owner[OWNER_MAX];	/* whose sign-in: "operator" or a key's name */
};

/*
 * The owner of an authenticated request (from its access token's grant;
 * "operator" for SANDBOX_API_KEY as a bearer). Everything a request makes
 * or may see is keyed on it. Never NULL; "operator" when who is NULL.
 */
const char *auth_owner(const struct auth_info *who);

/* 0 when the request may proceed, -1 when a 401 was sent. */
int	auth_bearer(struct http_req *, const struct config *, struct db *,
	    struct auth_info *);

#endif
