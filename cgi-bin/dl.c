/*
 * dl: the /dl endpoint, serving shared files to whoever holds a link
 * (share_file makes them). All the logic is in lib/dl.c; links.h describes
 * the URL and its signature.
 */
#include <stdio.h>

#include <curl/curl.h>

#include "config.h"
#include "dl.h"
#include "http.h"
#include "log.h"

int
main(int argc, char *argv[])
{
	struct config	*cfg;
	struct error	 err;
	int		 rc;

	log_init(argv[0]);
	if (config_load(&cfg, &err) == -1) {
		fprintf(stderr, "%s: %s\n", argv[0], err.msg);
		return 1;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		fprintf(stderr, "%s: cannot initialise libcurl\n", argv[0]);
		config_free(cfg);
		return 1;
	}
	rc = http_serve(dl_handle, cfg, (int)cfg->threads);
	curl_global_cleanup();
	config_free(cfg);
	return rc;
}
