/*
 * dl: /dl, serving shared files to whoever holds a link (share_file makes
 * them). The logic is in lib/links/dl.c; links.h describes the URL and its
 * signature.
 */
#include "app/app.h"
#include "links/dl.h"

int
main(void)
{
	return app_main_net("dl", dl_handle);
}
