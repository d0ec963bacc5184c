/*
 * auth.c: bearer authentication of /mcp requests.
 *
 * Until OAuth is in place the only credential is SANDBOX_API_KEY itself,
 * compared in constant time.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "auth.h"
#include "config.h"
#include "crypto.h"
#include "http.h"

/* RFC 9728 §5.1: point the client at the protected resource metadata. */
static int
unauthorized(struct http_req *r, const struct config *cfg, bool sent_token)
{
	char hdr[3072];

	snprintf(hdr, sizeof(hdr), "Bearer resource_metadata=\"%s/.well-known/"
	    "oauth-protected-resource/mcp\"%s", cfg->public_url,
	    sent_token ? ", error=\"invalid_token\"" : "");
	http_header_add(r, "WWW-Authenticate", hdr);
	http_send_error(r, 401, sent_token ? "The access token is not valid." :
	    "An access token is required.");
	return -1;
}

int
auth_bearer(struct http_req *r, const struct config *cfg, struct db *db,
    struct auth_info *who)
{
	const char *h = http_header(r, "Authorization");
	const char *tok;

	memset(who, 0, sizeof(*who));
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return unauthorized(r, cfg, false);
	tok = h + 7;
	while (*tok == ' ')
		tok++;
	if (*tok == '\0' || strlen(tok) > 4096)
		return unauthorized(r, cfg, true);
	if (crypto_str_equal(tok, cfg->api_key)) {
		snprintf(who->client_id, sizeof(who->client_id), "api-key");
		snprintf(who->client_name, sizeof(who->client_name), "API key");
		return 0;
	}
	return unauthorized(r, cfg, true);
}
