/* test_form.c: urlencoded forms, base64url, constant-time helpers. */
#include <string.h>

#include "base/crypto.h"
#include "base/form.h"
#include "check.h"

int
main(void)
{
	struct form	*f;
	struct error	 e;
	char		 buf[64];
	unsigned char	 raw[16];
	const char	*s;

	s = "a=1&b=hello+world&c=%2F%41&d=&e";
	f = form_parse(s, strlen(s), &e);
	CHECK(f != NULL, "form parses");
	if (f != NULL) {
		CHECK(strcmp(form_get(f, "a"), "1") == 0, "plain value");
		CHECK(strcmp(form_get(f, "b"), "hello world") == 0, "plus is space");
		CHECK(strcmp(form_get(f, "c"), "/A") == 0, "percent escapes");
		CHECK(strcmp(form_get(f, "d"), "") == 0, "empty value");
		CHECK(strcmp(form_get(f, "e"), "") == 0, "name without =");
		CHECK(form_get(f, "z") == NULL, "absent name");
		form_free(f);
	}
	CHECK(form_parse("a=%4", 4, &e) == NULL, "short escape refused");
	CHECK(form_parse("a=%zz", 5, &e) == NULL, "bad hex refused");
	CHECK(form_parse("a=%00", 5, &e) == NULL, "NUL refused");
	CHECK(form_parse("a=1&a=2", 7, &e) == NULL, "repeated name refused");

	CHECK(form_encode("a b/c~", buf, sizeof(buf)) == 10 &&
	    strcmp(buf, "a%20b%2Fc~") == 0, "encode");
	CHECK(form_encode("abcdef", buf, 4) == -1, "encode overflow refused");
	CHECK(form_encode_keep("a b!", "!", buf, sizeof(buf)) == 6 &&
	    strcmp(buf, "a%20b!") == 0, "encode keeping extra characters");
	CHECK(form_decode("a+b%2Fc", 7, false, buf, sizeof(buf)) == 5 &&
	    strcmp(buf, "a+b/c") == 0, "decode without plus as space");
	CHECK(form_decode("a+b", 3, true, buf, sizeof(buf)) == 3 &&
	    strcmp(buf, "a b") == 0, "decode with plus as space");
	CHECK(form_decode("abc", 3, false, buf, 3) == -1, "decode overflow refused");
	CHECK(form_decode("a%", 2, false, buf, sizeof(buf)) == -1, "decode cut escape refused");

	CHECK(crypto_b64url_encode("\xfb\xff", 2, buf) == 3 && strcmp(buf, "-_8") == 0,
	    "base64url alphabet");
	CHECK(crypto_b64url_decode("-_8", 3, raw, sizeof(raw)) == 2 &&
	    raw[0] == 0xfb && raw[1] == 0xff, "base64url round trip");
	CHECK(crypto_b64url_decode("-_9", 3, raw, sizeof(raw)) == -1,
	    "non-canonical base64url refused");
	CHECK(crypto_b64url_decode("a+b", 3, raw, sizeof(raw)) == -1,
	    "standard alphabet refused in base64url");
	CHECK(crypto_b64_decode("aGk=", 4, raw, sizeof(raw)) == 2 &&
	    memcmp(raw, "hi", 2) == 0, "base64 with padding");
	CHECK(crypto_token(buf, sizeof(buf), 32) == 0 && strlen(buf) == 43, "token length");
	CHECK(crypto_str_equal("secret", "secret") && !crypto_str_equal("secret", "secreT") &&
	    !crypto_str_equal("secret", "secret2"), "constant-time string compare");
	return check_status();
}
