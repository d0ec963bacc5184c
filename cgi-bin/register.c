/*
 * register: /register, dynamic client registration (RFC 7591).
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
	struct db		*db;
	struct error		 err;

	if ((db = db_thread(cfg->db_path, &err)) == NULL) {
		log_warn("%s", err.msg);
		http_send_error(r, 503, "The database cannot be opened.");
		return;
	}
	oauth_register(r, cfg, db);
}

int
main(void)
{
	struct config	*cfg;
	struct error	 err;
	int		 rc;

	if (config_load(&cfg, &err) == -1) {
		fprintf(stderr, "register: %s\n", err.msg);
		return 1;
	}
	log_init("register");
	rc = http_serve(handle, cfg, (int)cfg->threads);
	config_free(cfg);
	return rc;
}
