/*
 * Request bodies, of known length and chunked (unknown length): the first
 * byte picks the Content-Length case and the size of each read, the rest
 * is the body as it arrives (http_body_read, lib/http/body.c).
 */
#include <stdio.h>

#include "fuzz.h"
#include "http/http.h"

struct src {
	const uint8_t	*p;
	size_t		 left;
	size_t		 step;
};

static int
rd(void *arg, char *buf, int n)
{
	struct src	*s = arg;
	size_t		 k = s->step < (size_t)n ? s->step : (size_t)n;

	if (k > s->left)
		k = s->left;
	memcpy(buf, s->p, k);
	s->p += k;
	s->left -= k;
	return (int)k;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct src	 s;
	char		 cl[32], *body = NULL;
	const char	*clp = NULL;
	size_t		 len;
	int		 status;

	if (size < 1)
		return 0;
	s.p = data + 1;
	s.left = size - 1;
	s.step = 1 + (data[0] & 0x1f) * 7;
	switch (data[0] >> 5) {
	case 0: clp = NULL; break;			/* chunked: read to EOF */
	case 1: clp = ""; break;
	case 2: snprintf(cl, sizeof(cl), "%zu", s.left); clp = cl; break;
	case 3: snprintf(cl, sizeof(cl), "%zu", s.left + 1); clp = cl; break;
	case 4: snprintf(cl, sizeof(cl), "%zu", s.left / 2); clp = cl; break;
	case 5: clp = "-1"; break;
	case 6: clp = "99999999999999999999"; break;
	default: clp = " 12"; break;
	}
	if (http_body_read(clp, 4096, rd, &s, &body, &len, &status) == 0) {
		if (body[len] != '\0' || len > 4096)
			abort();
		free(body);
	}
	return 0;
}
