/* The clean-up script's output, written inside the container (lib/ops/cleanup.c). */
#include "base/log.h"
#include "fuzz.h"
#include "ops/cleanup.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_silence();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cleanup_report	 r;
	char			*s = fuzz_str(data, size);

	if (s == NULL)
		return 0;
	memset(&r, 0, sizeof(r));
	(void)cleanup_parse(s, &r);
	cleanup_report_free(&r);
	free(s);
	return 0;
}
