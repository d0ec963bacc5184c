/* Authorization: Basic client credentials (oauth_basic_parse, lib/oauth/oauth.c). */
#include "fuzz.h"
#include "oauth/oauth.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 id[OAUTH_MAX_CLIENT_ID + 1], secret[256];
	char	*s = fuzz_str(data, size);

	if (s == NULL)
		return 0;
	if (oauth_basic_parse(s, id, sizeof(id), secret, sizeof(secret)) == 0 &&
	    (id[0] == '\0' || strlen(id) >= sizeof(id)))
		abort();
	free(s);
	return 0;
}
