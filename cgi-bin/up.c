/*
 * up: /up, storing files in the sandbox for whoever holds an upload link
 * (upload_link makes them). The logic is in lib/links/upload.c; uplinks.h
 * describes the URL and its signature.
 */
#include "app/app.h"
#include "links/upload.h"

int
main(void)
{
	return app_main_net("up", upload_handle);
}
