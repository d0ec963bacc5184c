/*
 * wellknown: /.well-known/ metadata: RFC 9728 protected resource metadata
 * and RFC 8414 authorization server metadata. The logic is in lib/oauth/oauth.c.
 */
#include "app/app.h"
#include "oauth/oauth.h"

static void
handle(struct http_req *r, const struct config *cfg, struct db *db)
{
	(void)db;
	oauth_wellknown(r, cfg);
}

int
main(void)
{
	return app_main("wellknown", handle);
}
