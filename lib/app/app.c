/*
 * app.c: see app.h. Nothing here reaches the engine: a program that never
 * calls it is linked without its client (app_net.c).
 */
#include <malloc.h>
#include <stdio.h>

#include "app/app.h"
#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "http/http.h"
#include "store/db.h"

struct app {
	const struct config	*cfg;
	app_handler		 handler;
};

static void
dispatch(struct http_req *r, void *arg)
{
	struct app	*a = arg;
	struct db	*db;
	struct error	 err;

	if ((db = db_thread(a->cfg->db_path, &err)) == NULL) {
		log_warn("%s", err.msg);
		http_send_error(r, 503, "The server's database is unavailable.");
		return;
	}
	a->handler(r, a->cfg, db);
}

int
app_run(const char *name, app_handler handler, const struct app_net *net)
{
	struct config	*cfg;
	struct error	 err;
	struct app	 a;
	int		 rc;

	log_init(name);
	if (config_load(&cfg, &err) == -1) {
		fprintf(stderr, "%s: %s\n", name, err.msg);
		return 1;
	}
	if (net != NULL && net->init() == -1) {
		fprintf(stderr, "%s: cannot initialise the engine client\n", name);
		config_free(cfg);
		return 1;
	}
	/*
	 * glibc gives each thread that allocates under contention an arena
	 * of its own (up to 8 per core) and keeps what it frees there: with a
	 * pool of threads that is most of a process's memory under load.
	 */
	mallopt(M_ARENA_MAX, (int)cfg->malloc_arenas);
	db_set_cache_kib(cfg->db_cache_kib);
	a.cfg = cfg;
	a.handler = handler;
	http_set_body_deadline((int)cfg->body_deadline);
	rc = http_serve(dispatch, &a, (int)cfg->threads);
	if (net != NULL)
		net->fini();
	config_free(cfg);
	return rc;
}

int
app_main(const char *name, app_handler handler)
{
	return app_run(name, handler, NULL);
}
