/*
 * Masking of secrets' values in output from the container (lib/base/
 * secret.c): the input before the first NUL is a value (used when it is
 * 8 to 64 letters and digits), the rest the text, masked whole and fed as a
 * stream in pieces the first byte sizes. Neither result may hold the value.
 * The option checkers of sandboxctl secrets run on the text too.
 */
#include <ctype.h>
#include <stdio.h>

#include "base/secret.h"
#include "fuzz.h"

static int
alnum(const char *s)
{
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s))
			return 0;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mask		*m;
	struct mask_stream	*ms;
	struct error		 err;
	char			*a, *b, *out, *all, *piece, hosts[SECRET_HOSTS_MAX];
	char			 name[SECRET_HEADER_MAX], tmpl[SECRET_TEMPLATE_MAX];
	const char		*value = "Fixed0Value0Token";
	size_t			 n, len, at, step, total;

	fuzz_split(data, size, &a, &b);
	if (a == NULL)
		return 0;
	if (strlen(a) >= 8 && strlen(a) <= 64 && alnum(a))
		value = a;
	len = strlen(b);
	(void)secret_hosts_check(b, hosts, sizeof(hosts), &err);
	(void)secret_header_check(b, name, tmpl, &err);
	(void)secret_value_check(b, len, &err);
	if ((m = mask_new()) == NULL || mask_add(m, "S", value,
	    strlen(value)) == -1)
		goto done;
	if ((out = mask_apply(m, b, len, &n)) != NULL) {
		if (memmem(out, n, value, strlen(value)) != NULL)
			abort();
		free(out);
	}
	if ((out = mask_apply_cut(m, b, len, &n)) != NULL) {
		if (memmem(out, n, value, strlen(value)) != NULL)
			abort();
		free(out);
	}
	if ((ms = mask_stream_new(m)) != NULL &&
	    (all = malloc(len * 2 + 64 + len / 8 * 16)) != NULL) {
		step = size > 0 ? (size_t)(data[0] % 17) + 1 : 1;
		total = 0;
		for (at = 0; at < len; at += step) {
			size_t k = len - at < step ? len - at : step;

			if (mask_stream_feed(ms, b + at, k, &piece, &n) == -1)
				break;
			memcpy(all + total, piece, n);
			total += n;
			free(piece);
		}
		if (mask_stream_end(ms, &piece, &n) == 0) {
			memcpy(all + total, piece, n);
			total += n;
			free(piece);
		}
		if (memmem(all, total, value, strlen(value)) != NULL)
			abort();
		free(all);
	}
	mask_stream_free(ms);
done:
	mask_free(m);
	free(a);
	return 0;
}
