/*
 * The engine's response head (httpc_head_parse, lib/base/httpc_parse.c), fed growing
 * prefixes of the input as it arrives: once a head is complete, every
 * longer prefix gives the same length and status; the framing never
 * claims both a length and chunks; nothing past the input is read.
 */
#include "base/httpc.h"
#include "fuzz.h"

static int
each_line(void *arg, const char *line, size_t len)
{
	const char *end = arg;

	if (line + len > end)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct httpc_head	 h;
	const char		*p = (const char *)data;
	size_t			 n;
	long			 st, first = 0, status = 0;

	for (n = 0; n <= size; n += 1 + n / 8) {
		st = httpc_head_parse(p, n, &h, each_line, (void *)(p + n));
		if (st > 0) {
			if ((size_t)st > n || st < 16 || h.status < 100 ||
			    h.status > 999 || (h.chunked && h.has_length))
				abort();
			if (h.framing == HTTPC_LENGTH && !h.has_length)
				abort();
			if (first == 0) {
				first = st;
				status = h.status;
			} else if (st != first || h.status != status)
				abort();
			httpc_framing(&h, true);
			if (h.framing != HTTPC_NONE)
				abort();
		} else if (first != 0)
			abort();	/* a head, then not one? */
		else if (st != 0 && st != -1)
			abort();
	}
	return 0;
}
