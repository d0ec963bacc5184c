/* Download link paths as /dl receives them (links_parse, lib/links/links.c). */
#include "fuzz.h"
#include "links/links.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct link_url	 u;
	struct error	 err;
	char		*s = fuzz_str(data, size);

	if (s == NULL)
		return 0;
	if (links_parse(s, &u, &err) == 0 && u.name_len > LINK_NAME_MAX)
		abort();
	free(s);
	return 0;
}
