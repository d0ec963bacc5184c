/*
 * Client ID Metadata Documents as fetched (cimd_validate, lib/oauth/cimd.c) and
 * client_id URLs (cimd_is_url): the input before the first NUL is the
 * document's URL, the rest the document.
 */
#include <json-c/json.h>

#include "fuzz.h"
#include "oauth/cimd.h"
#include "oauth/extern.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object	*uris, *meta;
	struct error		 err;
	char			*url, *doc, *name;
	bool			 refresh;

	fuzz_split(data, size, &url, &doc);
	if (url == NULL)
		return 0;
	(void)cimd_is_url(url);
	if (cimd_validate(url, doc, strlen(doc), &name, &uris, &meta, &refresh,
	    &err) == 0) {
		free(name);
		json_object_put(uris);
		json_object_put(meta);
	}
	free(url);
	return 0;
}
