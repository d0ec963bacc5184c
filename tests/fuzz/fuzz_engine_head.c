/*
 * The checks on each line of the engine's answer heads (docker_head_line,
 * lib/engine/docker.c), fed the input cut into lines as libcurl's header
 * callback hands them (each up to and with its LF): a header line passed
 * on lies inside its line and never holds its CRLF; an answer's length and
 * chunks never both pass; a status, once read, is 100-999.
 */
#include <string.h>

#include "engine/docker.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct docker_head	 h;
	const char		*p = (const char *)data, *end = p + size, *nl, *why;
	size_t			 len, vlen;
	int			 rc;

	memset(&h, 0, sizeof(h));
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		rc = docker_head_line(&h, p, len, &vlen, &why);
		if (rc == -1) {
			if (why == NULL)
				abort();
			break;
		}
		if (rc == 1 && (vlen + 2 != len || memchr(p, '\r', vlen) != NULL))
			abort();
		if (h.length && h.chunked)
			abort();
		if (h.status != 0 && (h.status < 100 || h.status > 999))
			abort();
		p += len;
	}
	return 0;
}
