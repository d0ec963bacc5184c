/*
 * wellknown: /.well-known/ metadata: RFC 9728 protected resource
 * metadata and RFC 8414 authorization server metadata.
 *
 * A thin FastCGI program: the logic is in lib/oauth.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "db.h"
#include "error.h"
#include "http.h"
#include "log.h"
#include "oauth.h"

static void
handle(struct http_req *r, void *arg)
{
	const struct config	*cfg = arg;
	oauth_wellknown(r, cfg);
}

int
main(void)
{
	struct config	*cfg;
	struct error	 err;
	int		 rc;

	if (config_load(&cfg, &err) == -1) {
		fprintf(stderr, "wellknown: %s\n", err.msg);
		return 1;
	}
	log_init("wellknown");
	rc = http_serve(handle, cfg, (int)cfg->threads);
	config_free(cfg);
	return rc;
}
