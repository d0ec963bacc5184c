/*
 * fuzz_upload_name.c: the name an uploaded file is stored under
 * (upload_name), from any bytes, with and without percent-decoding. The
 * result must be a non-empty C string of at most UPLOAD_NAME_MAX bytes with
 * no '/', '\\', control character, or leading '.'.
 *
 *   clang -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Ilib tests/fuzz/fuzz_upload_name.c lib/upload.c build/libcodesandbox.a $(pkg-config --libs fcgi json-c libcurl libcrypto sqlite3) -lm
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "upload.h"

int	LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char	out[UPLOAD_NAME_MAX + 1];
	size_t	len, i;
	int	p;

	for (p = 0; p < 2; p++) {
		len = upload_name((const char *)d, n, p, out);
		if (len == 0 || len > UPLOAD_NAME_MAX || strlen(out) != len ||
		    out[0] == '.')
			abort();
		for (i = 0; i < len; i++)
			if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f ||
			    out[i] == '/' || out[i] == '\\')
				abort();
	}
	return 0;
}
