/*
 * fuzz_uplink_url.c: the /up request path parser (uplinks_parse), then
 * the stored name derived from it, as upload_handle does for a PUT.
 *
 *   clang -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Ilib tests/fuzz/fuzz_uplink_url.c lib/links/upload.c lib/links/uplinks.c build/libcodesandbox.a $(pkg-config --libs fcgi json-c libssl libcrypto sqlite3) -lm
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "links/uplinks.h"
#include "links/upload.h"

int	LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char			path[8192], name[UPLOAD_NAME_MAX + 1];
	struct uplink_url	u;
	struct error		err;

	if (n >= sizeof(path))
		return 0;
	memcpy(path, d, n);
	path[n] = '\0';
	if (uplinks_parse(path, &u, &err) == 0)
		(void)upload_name(u.name, u.name_len, true, name, NULL);
	return 0;
}
