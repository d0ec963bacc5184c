/*
 * token: /token (RFC 6749 §3.2) and /revoke (RFC 7009): one program, two
 * routes. The logic is in lib/oauth/token.c.
 */
#include <string.h>

#include "app/app.h"
#include "http/http.h"
#include "oauth/oauth.h"

static void
handle(struct http_req *r, const struct config *cfg, struct db *db)
{
	const char	*path = http_path(r);
	size_t		 n = strlen(path);

	if (n >= 7 && strcmp(path + n - 7, "/revoke") == 0)
		oauth_revoke(r, cfg, db);
	else
		oauth_token(r, cfg, db);
}

int
main(void)
{
	return app_main("token", handle);
}
