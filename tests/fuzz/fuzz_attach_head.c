/*
 * The engine's answer head to a hijacked exec start (docker_attach_head,
 * lib/engine/docker_attach.c): fed growing prefixes of the input, as the
 * answer arrives; once it says a status, every longer prefix says the same.
 */
#include "engine/docker.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data;
	size_t		 n, hl, first = 0;
	long		 st, seen = 0;

	for (n = 0; n <= size; n += 1 + n / 8) {
		st = docker_attach_head(p, n, &hl);
		if (st > 0) {
			if (hl > n || hl < 4 || st < 100 || st > 999)
				abort();
			if (seen == 0) {
				seen = st;
				first = hl;
			} else if (st != seen || hl != first)
				abort();
		} else if (seen != 0 && st != -1)
			abort();	/* a status, then "more needed"? */
	}
	return 0;
}
