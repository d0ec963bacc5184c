/*
 * token: /token (RFC 6749 §3.2) and /revoke (RFC 7009).
 *
 * A thin FastCGI program: the logic is in lib/oauth_token.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	struct db		*db;
	struct error		 err;

	if ((db = db_thread(cfg->db_path, &err)) == NULL) {
		log_warn("%s", err.msg);
		http_send_error(r, 503, "The database cannot be opened.");
		return;
	}
	/* One program, two routes: the web server sends both here. */
	{
		const char	*path = http_path(r);
		size_t		 n = strlen(path);

		if (n >= 7 && strcmp(path + n - 7, "/revoke") == 0)
			oauth_revoke(r, cfg, db);
		else
			oauth_token(r, cfg, db);
	}
}

int
main(void)
{
	struct config	*cfg;
	struct error	 err;
	int		 rc;

	if (config_load(&cfg, &err) == -1) {
		fprintf(stderr, "token: %s\n", err.msg);
		return 1;
	}
	log_init("token");
	rc = http_serve(handle, cfg, (int)cfg->threads);
	config_free(cfg);
	return rc;
}
