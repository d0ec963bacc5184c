/*
 * Forwarding headers (clientaddr_resolve, lib/base/clientaddr.c) through a
 * trusted list: the input before the first NUL is the header, the rest the
 * trusted list; the address found is then keyed and looked up.
 */
#include "base/clientaddr.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 out[CLIENTADDR_MAX], key[CLIENTADDR_MAX], why[128];
	char	*fwd, *list;

	fuzz_split(data, size, &fwd, &list);
	if (fwd == NULL)
		return 0;
	(void)clientaddr_list_valid(list, why, sizeof(why));
	if (clientaddr_resolve("127.0.0.1", fwd, list, out) == 0) {
		clientaddr_key(out, key);
		(void)clientaddr_in_list(out, list);
	}
	(void)clientaddr_resolve("::1", fwd, "::1 127.0.0.0/8 10.0.0.0/8 2001:db8::/32", out);
	(void)clientaddr_resolve(fwd, NULL, list, out);
	clientaddr_key(fwd, key);
	free(fwd);
	return 0;
}
