/*
 * The chunked transfer coding's decoder (httpc_chunked_step, lib/base/httpc_parse.c):
 * the input decoded whole and decoded in pieces of a size taken from its
 * first byte gives the same data and the same verdict; data pieces point
 * inside the bytes given and never past them.
 */
#include "base/httpc.h"
#include "fuzz.h"

/* Decode buf in pieces of step bytes into out; the verdict. */
static int
decode(const char *buf, size_t len, size_t step, char *out, size_t *olen)
{
	struct httpc_chunked	 ch;
	const char		*d;
	size_t			 off = 0, end = 0, used, dl;
	int			 rc;

	httpc_chunked_init(&ch);
	*olen = 0;
	while (end < len) {
		end = end + step < len ? end + step : len;
		while (off < end) {
			rc = httpc_chunked_step(&ch, buf + off, end - off, &used,
			    &d, &dl);
			if (used > end - off)
				abort();
			if (rc == 1) {
				if (d < buf + off || d + dl > buf + off + used ||
				    dl == 0)
					abort();
				memcpy(out + *olen, d, dl);
				*olen += dl;
			}
			off += used;
			if (rc == -1 || rc == 2)
				return rc;
			if (rc == 0 && off < end && used == 0)
				abort();	/* no progress */
		}
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	*a, *b;
	size_t	 alen, blen, step;
	int	 ra, rb;

	if (size < 1)
		return 0;
	step = 1 + data[0] % 17;
	data++, size--;
	if ((a = malloc(size + 1)) == NULL || (b = malloc(size + 1)) == NULL) {
		free(a);
		return 0;
	}
	ra = decode((const char *)data, size, size > 0 ? size : 1, a, &alen);
	rb = decode((const char *)data, size, step, b, &blen);
	if (ra != rb || alen != blen || memcmp(a, b, alen) != 0)
		abort();
	free(a);
	free(b);
	return 0;
}
