/*
 * authorize: /authorize, the authorization endpoint and its sign-in
 * page (RFC 6749 §4.1.1, RFC 7636, RFC 8707, RFC 9207).
 *
 * A thin FastCGI program: the logic is in lib/oauth_authorize.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include <curl/curl.h>

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
	oauth_authorize(r, cfg, db);
}

int
main(void)
{
	struct config	*cfg;
	struct error	 err;
	int		 rc;

	if (config_load(&cfg, &err) == -1) {
		fprintf(stderr, "authorize: %s\n", err.msg);
		return 1;
	}
	log_init("authorize");
	/* Client ID Metadata Documents are fetched with libcurl (cimd.c). */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		fprintf(stderr, "authorize: cannot initialise libcurl\n");
		return 1;
	}
	rc = http_serve(handle, cfg, (int)cfg->threads);
	curl_global_cleanup();
	config_free(cfg);
	return rc;
}
