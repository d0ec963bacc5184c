/*
 * fuzz_mcp_read.c: libFuzzer target for the /mcp request reader: the era of a
 * body (mcp_era_of) and the 2025/2026 checks of one message (mcp_read),
 * with the three header values the transport passes.
 *
 * Input: three lines (MCP-Protocol-Version, Mcp-Method, Mcp-Name; an empty
 * line is an absent header), then the body. Built and run by `make fuzz`
 * (seeds in tests/fuzz/corpus/mcp_read/).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/js.h"
#include "fuzz.h"
#include "mcp/mcp.h"

/* The next line of [*p, end) as a new string, NULL when empty. */
static char *
line(const uint8_t **p, const uint8_t *end)
{
	const uint8_t	*nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t		 n = nl != NULL ? (size_t)(nl - *p) : (size_t)(end - *p);
	char		*s = NULL;

	if (n > 0 && (s = malloc(n + 1)) != NULL) {
		memcpy(s, *p, n);
		s[n] = '\0';
	}
	*p += n + (nl != NULL);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t		*p = data, *end = data + size;
	struct mcp_http_meta	 h;
	struct json_object	*body, *err = NULL, *one;
	const struct mcp_era	*era;
	struct mcp_msg		 m;
	struct error		 e;
	char			*hv, *hm, *hn;
	int			 status;
	size_t			 i, n;

	hv = line(&p, end);
	hm = line(&p, end);
	hn = line(&p, end);
	h.version = hv;
	h.method = hm;
	h.name = hn;
	if ((body = js_parse((const char *)p, (size_t)(end - p), JS_MAX_DEPTH, &e)) == NULL)
		goto out;
	if ((era = mcp_era_of(body, &h, &err)) == NULL)
		goto out;
	n = json_object_is_type(body, json_type_array) ?
	    json_object_array_length(body) : 1;
	for (i = 0; i < n && i < 32; i++) {
		one = json_object_is_type(body, json_type_array) ?
		    json_object_array_get_idx(body, i) : body;
		if (mcp_read(era, one, &h, &m, &err, &status) == -1) {
			json_object_put(err);
			err = NULL;
		}
	}
out:
	json_object_put(err);
	json_object_put(body);
	free(hv);
	free(hm);
	free(hn);
	return 0;
}
