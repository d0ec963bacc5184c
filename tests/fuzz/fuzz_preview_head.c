/*
 * The heads on a preview's way (lib/preview/phead.c): the input parsed as
 * an app's answer head and, when it is one, rewritten for the web server
 * (phead_response); and parsed as a request head, rewritten for the app
 * (phead_request), its preview cookie read (phead_cookie). Also the
 * preview id of a Host value (previews_host_id).
 */
#include "links/previews.h"
#include "preview/phead.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char	 out[PHEAD_MAX + 512];
	struct phead	 h;
	const char	*why;
	char		 id[PREVIEW_ID_LEN + 1], sig[64];

	if (phead_parse((const char *)data, size, true, &h, &why) > 0)
		(void)phead_response(&h, "cs-preview", out, sizeof(out), &why);
	if (phead_parse((const char *)data, size, false, &h, &why) > 0) {
		(void)phead_request(&h, NULL, "cs-preview", out, sizeof(out));
		(void)phead_cookie(&h, "cs-preview", sig, sizeof(sig));
		(void)phead_is_upgrade(&h);
	}
	(void)previews_host_id((const char *)data, size, id);
	return 0;
}
