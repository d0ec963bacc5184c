/*
 * app_net.c: app_main_net (app.h), the main of the programs that reach
 * the Docker engine (its client, lib/engine/docker.c over libcurl), or fetch
 * a client's metadata document (lib/oauth/cimd.c).
 */
#include "app/app.h"
#include "engine/docker.h"
#include "http/http.h"
#include "ops/cleanup.h"
#include "sandbox/chan.h"
#include "sandbox/guard.h"

static int
net_init(void)
{
	if (docker_global_init() == -1)
		return -1;
	/* No call into the engine keeps a worker from honouring SIGTERM. */
	docker_set_stop(http_stopping);
	guard_beside();		/* the guard's refreshes beside the requests */
	return 0;
}

static void
net_fini(void)
{
	cleanup_shutdown();	/* a background clean-up pass uses cfg and the engine */
	guard_shutdown();	/* so does a refresh beside the requests */
	chan_shutdown();	/* the channels' readers, before the process's clean-up */
	docker_global_cleanup();
}

int
app_main_net(const char *name, app_handler handler)
{
	static const struct app_net net = { net_init, net_fini };

	return app_run(name, handler, &net);
}
