/*
 * Range and If-None-Match headers of /dl (lib/links/dl.c): the first 8 bytes
 * are the file size, the rest the header value.
 */
#include "fuzz.h"
#include "links/dl.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long long	 fsize = 0, first, len;
	char			*s;
	size_t			 i;

	if (size < 8)
		return 0;
	for (i = 0; i < 8; i++)
		fsize = fsize << 8 | data[i];
	fsize >>= data[0] & 63;
	if ((s = fuzz_str(data + 8, size - 8)) == NULL)
		return 0;
	if (dl_range_parse(s, fsize, &first, &len) == DL_RANGE_OK &&
	    (len == 0 || first >= fsize || len > fsize - first))
		abort();	/* the contract: a satisfiable range inside the file */
	(void)dl_etag_match(s, "\"abc-123\"");
	free(s);
	return 0;
}
