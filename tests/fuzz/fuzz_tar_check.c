/*
 * A snapshot's /sandbox archive read back on restore (lib/engine/
 * tar_check.c): the first byte sets the size of each piece fed (its low
 * bit: GNU tar's incremental form, tar_check_incremental), the rest is
 * the stream, checked against the root "sandbox".
 */
#include "engine/tar.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tar_check	*c;
	struct error		 err;
	unsigned long long	 bytes;
	size_t			 step, off;
	long			 entries;
	int			 rc = 0;

	if (size < 1 || (c = tar_check_new("sandbox")) == NULL)
		return 0;
	if (data[0] & 1)
		tar_check_incremental(c);
	step = 1 + (size_t)(data[0] >> 1) * 13;
	for (off = 1; off < size && rc == 0; off += step)
		rc = tar_check_feed(c, data + off, size - off < step ?
		    size - off : step, &err);
	(void)tar_check_end(c, &entries, &bytes, &err);
	tar_check_free(c);
	return 0;
}
