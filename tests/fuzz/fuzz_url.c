/*
 * URLs from outside (lib/base/url.c: URLs and Origin values, and the redirect
 * URI rules of lib/oauth/oauth.c):
 * the input before the first NUL is a registered redirect URI, the rest
 * the one a request names.
 */
#include "base/url.h"
#include "fuzz.h"
#include "oauth/oauth.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct url	 u;
	char		*reg, *given, why[256], origin[URL_MAX + 1], host[URL_MAX + 1];

	fuzz_split(data, size, &reg, &given);
	if (reg == NULL)
		return 0;
	if (url_split(reg, &u) == 0) {
		(void)url_host_is_loopback(&u);
		(void)url_host_in_list(&u, "claude.ai claude.com");
	}
	if (url_split_origin(reg, &u) == 0 && (*u.rest != '\0' ||
	    url_split(reg, &u) != 0))
		abort();
	if (oauth_redirect_valid(reg, why, sizeof(why)))
		(void)oauth_redirect_origin(reg, origin, sizeof(origin), host,
		    sizeof(host));
	(void)oauth_redirect_match(reg, given);
	free(reg);
	return 0;
}
