/*
 * fuzz_upload_name.c: the name an uploaded file is stored under
 * (upload_name), from any bytes, with and without percent-decoding. It is
 * refused (400) exactly when the input holds a NUL, "%00" or (decoding) a
 * '%' without two hexadecimal digits; otherwise the result must be a
 * non-empty C string of at most UPLOAD_NAME_MAX bytes with no '/', '\\',
 * control character, or leading '.'.
 *
 *   clang -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Ilib tests/fuzz/fuzz_upload_name.c lib/links/upload.c build/libcodesandbox.a $(pkg-config --libs fcgi json-c libssl libcrypto sqlite3) -lm
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "links/upload.h"

int	LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

/* Should upload_name refuse d[0..n)? Checked without the decoder. */
static int
refused(const uint8_t *d, size_t n, int percent)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (d[i] == 0)
			return 1;
		if (!percent || d[i] != '%')
			continue;
		if (n - i < 3 || !isxdigit(d[i + 1]) || !isxdigit(d[i + 2]) ||
		    (d[i + 1] == '0' && d[i + 2] == '0'))
			return 1;
		i += 2;
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char		out[UPLOAD_NAME_MAX + 1];
	struct error	err;
	long		len;
	size_t		i;
	int		p;

	for (p = 0; p < 2; p++) {
		error_clear(&err);
		len = upload_name((const char *)d, n, p, out, &err);
		if (len == -1) {
			if (!refused(d, n, p) || err.kind != ERR_INVALID ||
			    err.msg[0] == '\0')
				abort();
			continue;
		}
		if (refused(d, n, p) || len == 0 || len > UPLOAD_NAME_MAX ||
		    strlen(out) != (size_t)len || out[0] == '.')
			abort();
		for (i = 0; i < (size_t)len; i++)
			if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f ||
			    out[i] == '/' || out[i] == '\\')
				abort();
	}
	return 0;
}
