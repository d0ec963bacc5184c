/*
 * fuzz_image.c: the picture signature and size reader view_image runs on
 * bytes read from the container (image_info).
 *
 *   clang -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Ilib tests/fuzz/fuzz_image.c lib/tools/image.c
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tools/image.h"

int	LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	unsigned long		w, h;
	enum image_format	f = image_info(d, n, &w, &h);

	if (f != IMAGE_UNKNOWN && image_mime(f) == NULL)
		abort();
	return 0;
}
