/*
 * fuzz.h: what the libFuzzer targets share. Each tests/fuzz/fuzz_NAME.c
 * defines LLVMFuzzerTestOneInput calling the production parser on the
 * bytes given; seeds are in tests/fuzz/corpus/NAME/. `make fuzz` builds and
 * runs every one (tests/fuzz/run.sh).
 */
#ifndef CS_FUZZ_H
#define CS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int	LLVMFuzzerInitialize(int *argc, char ***argv);

/* A NUL-terminated copy of the input (free it). */
static inline char *
fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s != NULL) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

/*
 * Split the input at the first NUL byte, for targets taking two strings:
 * *a is the part before it, *b the rest (both NUL-terminated copies in one
 * allocation: free *a).
 */
static inline void
fuzz_split(const uint8_t *data, size_t size, char **a, char **b)
{
	char	*s = fuzz_str(data, size);
	size_t	 n;

	*a = *b = s;
	if (s == NULL)
		return;
	n = strlen(s);
	*b = n < size ? s + n + 1 : s + n;
}

#endif
