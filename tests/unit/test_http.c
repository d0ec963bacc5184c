/* test_http.c: reading a request body (http_body_read), as the programs do. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "http/http.h"

struct src {
	const char	*p;
	size_t		 left;
};

/* Hands out at most 3 bytes a call, as a slow client would. */
static int
rd(void *arg, char *buf, int n)
{
	struct src	*s = arg;
	size_t		 k = s->left < 3 ? s->left : 3;

	if ((size_t)n < k)
		k = (size_t)n;
	memcpy(buf, s->p, k);
	s->p += k;
	s->left -= k;
	return (int)k;
}

/* Read body under content_length with cap max: the status, 0 when read. */
static int
read_body(const char *cl, const char *body, size_t max, char **out)
{
	struct src	 s = { body, strlen(body) };
	size_t		 len;
	int		 status = 0;

	*out = NULL;
	if (http_body_read(cl, max, rd, &s, out, &len, &status) == 0)
		return 0;
	return status;
}

int
main(void)
{
	char *b;

	CHECK(read_body("5", "hello", 16, &b) == 0 && strcmp(b, "hello") == 0,
	    "a body of the length given");
	free(b);
	CHECK(read_body(NULL, "hello", 16, &b) == 0 && strcmp(b, "hello") == 0,
	    "no length: read to the end");
	free(b);
	CHECK(read_body("-1", "chunked", 16, &b) == 0 &&
	    strcmp(b, "chunked") == 0, "-1 (Caddy's chunked body): read to the end");
	free(b);
	CHECK(read_body("-1", "0123456789abcdefXYZ", 16, &b) == 413,
	    "-1 and over the cap: 413, not cut short");
	CHECK(read_body("17", "0123456789abcdefX", 16, &b) == 413,
	    "a length over the cap: 413");
	CHECK(read_body("abc", "x", 16, &b) == 400, "a length that is no number: 400");
	CHECK(read_body("-2", "x", 16, &b) == 400, "a negative length: 400");
	CHECK(read_body("+5", "hello", 16, &b) == 400, "a signed length: 400");
	return check_status();
}
