/*
 * Forms and query strings (form_parse), percent-decoding (form_decode) and
 * cookies (form_cookie): the input before the first NUL is the form, the
 * rest a Cookie header (lib/base/form.c).
 */
#include "base/form.h"
#include "fuzz.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct form	*f;
	struct error	 err;
	char		*a, *b, out[512];

	fuzz_split(data, size, &a, &b);
	if (a == NULL)
		return 0;
	if ((f = form_parse(a, strlen(a), &err)) != NULL) {
		(void)form_get(f, "client_id");
		(void)form_get(f, "redirect_uri");
		form_free(f);
	}
	(void)form_decode(a, strlen(a), true, out, sizeof(out));
	(void)form_cookie(b, "cs_signin_0123456789ab", out, sizeof(out));
	(void)form_cookie(b, "a", out, 4);
	free(a);
	return 0;
}
