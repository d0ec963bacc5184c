/*
 * An owner's fixed address from the sandbox network's ranges as the engine
 * reports them (lib/sandbox/owneraddr.c): the input before the first NUL
 * is the subnet, the rest the dynamic range; the slot is from the input's
 * length. An address given must lie in the subnet's upper half, short of
 * its broadcast.
 */
#include <arpa/inet.h>

#include "base/error.h"
#include "sandbox/owneraddr.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct error	 err;
	struct in_addr	 in;
	char		*a, *b, out[OWNERADDR_MAX];
	long long	 slot = (long long)(size % 70000) - 2;

	fuzz_split(data, size, &a, &b);
	if (a == NULL)
		return 0;
	if (owneraddr_pick(a, b, slot, out, &err) == 0) {
		if (inet_pton(AF_INET, out, &in) != 1 || slot < 1)
			abort();
	} else if (out[0] != '\0')
		abort();
	free(a);
	return 0;
}
