/*
 * preview: the program serving preview links (preview_link) to browsers,
 * HTTP/1.1 on a unix socket behind the web server. The logic is in
 * lib/preview/; links/previews.h describes the link.
 */
#include "preview/preview.h"

int
main(int argc, char **argv)
{
	return preview_main(argc, argv);
}
