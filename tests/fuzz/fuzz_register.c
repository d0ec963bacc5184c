/*
 * /register's bodies (RFC 7591), parsed and checked as the endpoint does
 * (oauth_register_check, lib/oauth/register.c): the whole input is the
 * body. A body it accepts must give the metadata the endpoint stores.
 */
#include <json-c/json.h>

#include "base/js.h"
#include "fuzz.h"
#include "oauth/extern.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object	*meta, *uris;
	const char		*error;
	char			 why[256];
	bool			 refresh;

	if (oauth_register_check((const char *)data, size, &meta, &uris,
	    &refresh, &error, why, sizeof(why)) == 0) {
		if (js_str(meta, "token_endpoint_auth_method") == NULL ||
		    json_object_array_length(uris) == 0)
			abort();
		(void)js_text(meta, NULL);
		json_object_put(uris);
		json_object_put(meta);
	} else if (error == NULL || why[0] == '\0' || memchr(why, '\0', sizeof(why)) == NULL)
		abort();
	return 0;
}
