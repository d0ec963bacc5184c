/*
 * fuzz_multipart.c: the /up form parser (multipart.c) as production uses
 * it: the first line of the input is the Content-Type value (through
 * multipart_boundary), the rest the body, fed in pieces whose sizes come
 * from the input's first byte, through each part's end callback; the
 * callbacks check that they come in order (begin, data, end).
 *
 *   clang -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Ilib tests/fuzz/fuzz_multipart.c lib/links/multipart.c lib/base/error.c
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "links/multipart.h"

/* Whether a part has begun and not ended; the parts ended. */
struct order {
	int	in_part;
	size_t	ended;
};

static int
begin(void *arg, const struct multipart_part *p)
{
	struct order	*o = arg;

	if (o->in_part)
		abort();
	o->in_part = 1;
	return strlen(p->filename) > MULTIPART_PARAM_MAX ? -1 : 0;
}

static int
data(void *arg, const char *buf, size_t len)
{
	struct order	*o = arg;
	volatile char	 c;

	if (!o->in_part || len == 0)
		abort();
	c = buf[0];
	c = buf[len - 1];
	(void)c;
	return 0;
}

static int
end(void *arg)
{
	struct order	*o = arg;

	if (!o->in_part)
		abort();
	o->in_part = 0;
	/* Stop at the fourth part's end: the stop path is fuzzed too. */
	return ++o->ended == 4 ? -1 : 0;
}

int	LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char			 ct[256], boundary[MULTIPART_BOUNDARY_MAX + 1];
	const uint8_t		*nl;
	struct order		 o = { 0, 0 };
	struct multipart_cb	 cb = { begin, data, end, &o };
	struct multipart	*m;
	struct error		 err;
	size_t			 step, i, clen;

	if (n < 2)
		return 0;
	step = (size_t)d[0] % 64 + 1;
	d++, n--;
	if ((nl = memchr(d, '\n', n)) == NULL || (clen = (size_t)(nl - d)) >= sizeof(ct))
		return 0;
	memcpy(ct, d, clen);
	ct[clen] = '\0';
	if (multipart_boundary(ct, boundary) == -1)
		return 0;
	if ((m = multipart_new(boundary, &cb)) == NULL)
		return 0;
	d = nl + 1;
	n -= clen + 1;
	for (i = 0; i < n; i += step)
		if (multipart_feed(m, (const char *)d + i, n - i < step ? n - i : step,
		    &err) != MULTIPART_MORE)
			break;
	/* A body that ended well ended its last part. */
	if (multipart_end(m, &err) == MULTIPART_DONE && o.in_part)
		abort();
	multipart_free(m);
	return 0;
}
